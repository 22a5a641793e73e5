//! `helm-cozy` into a closed pipe ends quietly (see testsupport/closed_pipe.rs).

#[path = "../../testsupport/closed_pipe.rs"]
mod closed_pipe;

/// Every subcommand's help, on top of the commands both binaries print without a cluster.
const SUBCOMMAND_HELP: &[&[&str]] = &[
    &["show", "--help"],
    &["values", "--help"],
    &["diff", "--help"],
    &["apply", "--help"],
    &["delete", "--help"],
    &["completion", "--help"],
    &["version", "--help"],
];

#[test]
fn printing_commands_end_quietly_when_the_reader_is_gone() {
    for args in closed_pipe::PRINTING.iter().chain(SUBCOMMAND_HELP) {
        closed_pipe::ends_quietly(env!("CARGO_BIN_EXE_helm-cozy"), args);
    }
}

#[test]
fn failing_commands_end_plainly_when_stderr_is_gone() {
    for args in closed_pipe::FAILING {
        closed_pipe::fails_plainly_without_stderr(env!("CARGO_BIN_EXE_helm-cozy"), args);
    }
}

/// Helm's post-renderer mode, its output cut off (helm stopped reading): exit 0 and nothing on stderr,
/// like every other printing command.
#[test]
fn the_post_renderer_ends_quietly_when_helm_stops_reading() {
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().expect("temporary directory");
    let spec = dir.path().join("spec.json");
    std::fs::write(
        &spec,
        r#"{"hrName":"demo","hrNamespace":"apps","postRenderers":[],"kubectl":"/nonexistent/kubectl"}"#,
    )
    .expect("spec");
    let input = dir.path().join("in.yaml");
    let docs: String = (0..200)
        .map(|i| format!("---\n# Source: demo/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm{i}\ndata:\n  a: b\n"))
        .collect();
    std::fs::write(&input, docs).expect("input");
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_helm-cozy"))
        .arg("__post-render")
        .env("COZYHR_POSTRENDER_SPEC", &spec)
        .stdin(std::fs::File::open(&input).expect("open input"))
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("run helm-cozy __post-render");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "__post-render into a closed pipe: {:?}\n{stderr}", out.status);
    assert!(stderr.is_empty(), "__post-render into a closed pipe wrote to stderr:\n{stderr}");
}
