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
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let out = Command::new(bin)
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("run the binary");
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
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let out = Command::new(bin)
        .args(args)
        .env("NO_COLOR", "1")
        .env("KUBECONFIG", "/nonexistent/config")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(writer)
        .output()
        .expect("run the binary");
    assert_eq!(out.status.code(), Some(1), "{bin} {args:?} with stderr closed: {:?}", out.status);
}
