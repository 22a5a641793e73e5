//! `kubectl-cozyhr` into a closed pipe ends quietly (see testsupport/closed_pipe.rs).

#[path = "../../testsupport/closed_pipe.rs"]
mod closed_pipe;

/// Every subcommand's help, on top of the commands both binaries print without a cluster.
const SUBCOMMAND_HELP: &[&[&str]] = &[
    &["get", "--help"],
    &["suspend", "--help"],
    &["resume", "--help"],
    &["reconcile", "--help"],
    &["status", "--help"],
    &["tree", "--help"],
    &["drift", "--help"],
    &["completion", "--help"],
    &["version", "--help"],
];

#[test]
fn printing_commands_end_quietly_when_the_reader_is_gone() {
    for args in closed_pipe::PRINTING.iter().chain(SUBCOMMAND_HELP) {
        closed_pipe::ends_quietly(env!("CARGO_BIN_EXE_kubectl-cozyhr"), args);
    }
}

#[test]
fn failing_commands_end_plainly_when_stderr_is_gone() {
    for args in closed_pipe::FAILING {
        closed_pipe::fails_plainly_without_stderr(env!("CARGO_BIN_EXE_kubectl-cozyhr"), args);
    }
}
