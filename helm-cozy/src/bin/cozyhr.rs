//! The `cozyhr` binary: helm-cozy under the Go cozyhr's name, for installers that install a crate's
//! binaries by their names (`cargo install`, `cargo binstall`). A link named `cozyhr` to `helm-cozy` is
//! the same program.

fn main() -> std::process::ExitCode {
    helm_cozy::main(helm_cozy::Face::Cozyhr)
}
