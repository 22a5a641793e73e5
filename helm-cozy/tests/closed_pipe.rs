//! The real binary with its stdout a pipe whose reader is already gone (`| head` after its first line,
//! `| less` then `q`): every command that prints must end quietly, exit 0 and write nothing to stderr.
//! No cluster needed. The reader is closed before the child starts, so every write meets the closed pipe
//! whatever the size of the output.

use std::process::{Command, Stdio};

fn into_closed_pipe(args: &[&str]) {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_helm-cozy"))
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("run the binary");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "helm-cozy {args:?} into a closed pipe: {:?}\n{stderr}", out.status);
    assert!(stderr.is_empty(), "helm-cozy {args:?} into a closed pipe wrote to stderr:\n{stderr}");
}

#[test]
fn printing_commands_end_quietly_when_the_reader_is_gone() {
    for args in [
        &["version"][..],
        &["completion", "bash"],
        &["completion", "zsh"],
        &["completion", "fish"],
        &["--help"],
        &["help", "completion"],
    ] {
        into_closed_pipe(args);
    }
}
