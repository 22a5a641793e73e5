//! The `helm-cozy` binary: `helm cozy`, or `cozyhr` when run by that name (see the library's docs).

fn main() -> std::process::ExitCode {
    helm_cozy::main(cozyhr_shell::face::of_helm_plugin())
}
