//! The `helm-cozy` binary: `helm cozy`, or `cozyhr` when run by that name (see the library's docs).

fn main() -> std::process::ExitCode {
    helm_cozy::main(helm_cozy::Face::of_invocation())
}
