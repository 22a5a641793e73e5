//! `helm-cozy` into a closed pipe ends quietly (see testsupport/closed_pipe.rs).

#[path = "../../testsupport/closed_pipe.rs"]
mod closed_pipe;

#[test]
fn printing_commands_end_quietly_when_the_reader_is_gone() {
    for args in closed_pipe::PRINTING {
        closed_pipe::ends_quietly(env!("CARGO_BIN_EXE_helm-cozy"), args);
    }
}
