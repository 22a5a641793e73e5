//! `helm cozy`: render, diff, apply and delete a chart as Flux would; and the same binary as `cozyhr`, with
//! Go cozyhr's command line (`go_cozyhr`). Thin: flags in `cli`, one module per command, the logic in the
//! `cozyhr` library.

mod cli;
mod commands;
mod go_cozyhr;

use std::process::ExitCode;

/// Which command line a run takes: [`Face::Helm`] or [`Face::Cozyhr`]
/// ([`cozyhr_shell::face::of_helm_plugin`] says which).
pub use cozyhr_shell::Face;

/// Parses the command line of `face` and runs it.
pub fn main(face: Face) -> ExitCode {
    init_logging();
    // This binary is helm cozy unless it runs as cozyhr: kubectl-cozyhr's faces are not its own.
    let face = if face == Face::Cozyhr { Face::Cozyhr } else { Face::Helm };
    // What the library's status lines and suggested commands call this program.
    cozyhr::support::output::set_face(face);
    match face {
        Face::Cozyhr => {
            let cli: go_cozyhr::Cli = cozyhr_shell::parse_as(go_cozyhr::Cli::command(), go_cozyhr::Cli::checked);
            cozyhr_shell::run(go_cozyhr::run(cli))
        }
        _ => {
            let cli: cli::Cli = cozyhr_shell::parse_as(cli::Cli::command(), cli::Cli::checked);
            cozyhr_shell::run(commands::run(cli))
        }
    }
}

/// Quiet unless asked: `helm --debug cozy ...` (Helm hands plugins HELM_DEBUG) logs what cozyhr does with
/// timings to stderr; `RUST_LOG` overrides.
fn init_logging() {
    let debug = std::env::var("HELM_DEBUG").is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"));
    cozyhr_shell::init_logging(if debug { "cozyhr=debug,helm_cozy=debug" } else { "off" }, true);
}
