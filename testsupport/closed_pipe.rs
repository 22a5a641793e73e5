//! Shared by the binaries' hermetic tests: a real binary run with its stdout a pipe whose reader is
//! already gone (`| head` after its first line, `| less` then `q`). Every command that prints must end
//! quietly: exit 0, nothing on stderr. The reader is closed before the child starts, so every write meets
//! the closed pipe whatever the size of the output. No cluster needed.

use std::process::{Command, Stdio};

/// Commands of both binaries that print without a cluster.
pub const PRINTING: &[&[&str]] = &[
    &["version"],
    &["completion", "bash"],
    &["completion", "zsh"],
    &["completion", "fish"],
    &["--help"],
    &["help", "completion"],
];

/// Runs `bin ARGS` into a closed pipe and asserts a quiet end.
pub fn ends_quietly(bin: &str, args: &[&str]) {
    let out = run_with_reader_gone(bin, args, Stream::Stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{bin} {args:?} into a closed pipe: {:?}\n{stderr}", out.status);
    assert!(stderr.is_empty(), "{bin} {args:?} into a closed pipe wrote to stderr:\n{stderr}");
}

/// Commands of both binaries that fail without a cluster, with their stderr a pipe whose reader is gone
/// (`2>&1 | head` after the reader left): the error line cannot be written, and that is no panic.
pub const FAILING: &[&[&str]] =
    &[&["nosuch"], &["version", "--bad-flag"], &["--kubeconfig", "/nonexistent/config", "get"]];

/// Runs `bin ARGS` with stderr into a closed pipe and asserts exit 1, not a panic or an abort.
pub fn fails_plainly_without_stderr(bin: &str, args: &[&str]) {
    let out = run_with_reader_gone(bin, args, Stream::Stderr);
    assert_eq!(out.status.code(), Some(1), "{bin} {args:?} with stderr closed: {:?}", out.status);
}

/// The output stream whose reader is gone.
enum Stream {
    Stdout,
    Stderr,
}

/// Runs `bin ARGS` with stdin closed, `closed` a pipe whose reader is gone and the other stream captured.
/// With stderr closed, KUBECONFIG names no file, so that a command that needs a cluster fails at once.
fn run_with_reader_gone(bin: &str, args: &[&str], closed: Stream) -> std::process::Output {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let mut cmd = Command::new(bin);
    cmd.args(args).env("NO_COLOR", "1").stdin(Stdio::null());
    match closed {
        Stream::Stdout => cmd.stdout(writer).stderr(Stdio::piped()),
        Stream::Stderr => cmd.env("KUBECONFIG", "/nonexistent/config").stdout(Stdio::piped()).stderr(writer),
    };
    cmd.output().expect("run the binary")
}
