//! `helm cozy`: render, diff, apply and delete a chart as Flux would; and the same binary as `cozyhr`, with
//! Go cozyhr's command line (`go_cozyhr`). Thin: flags in `cli`, one module per command, the logic in the
//! `cozyhr` library.

mod cli;
mod commands;
mod go_cozyhr;

use std::process::ExitCode;

/// Which command line a run takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Face {
    /// `helm cozy` (and `helm-cozy`).
    Helm,
    /// `cozyhr`: Go cozyhr's command line.
    Cozyhr,
}

impl Face {
    /// The face of the name this binary was run by (`argv[0]`, not a link's target): `cozyhr` (a link to
    /// this binary, or a copy under that name), else `helm cozy`. `COZYHR_FACE=cozyhr` says the same for
    /// the launcher a release archive carries (scripts/cozyhr-launcher.sh).
    pub fn of_invocation() -> Face {
        let argv0 = std::env::args_os().next().unwrap_or_default();
        let name = std::path::Path::new(&argv0).file_stem().map(|s| s.to_string_lossy().into_owned());
        let by_env = std::env::var_os("COZYHR_FACE").is_some_and(|f| f == go_cozyhr::NAME);
        if by_env || name.as_deref() == Some(go_cozyhr::NAME) { Face::Cozyhr } else { Face::Helm }
    }
}

/// Parses the command line of `face` and runs it.
pub fn main(face: Face) -> ExitCode {
    init_logging();
    // What the library's status lines and suggested commands call this program.
    cozyhr::output::set_face(match face {
        Face::Helm => cozyhr::output::Face::Helm,
        Face::Cozyhr => cozyhr::output::Face::Cozyhr,
    });
    match face {
        Face::Cozyhr => {
            let cli: go_cozyhr::Cli = cozyhr_shell::parse_as(go_cozyhr::Cli::command(), go_cozyhr::Cli::checked);
            cozyhr_shell::run(go_cozyhr::run(cli))
        }
        Face::Helm => {
            let cli: cli::Cli = cozyhr_shell::parse(cli::Cli::checked);
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
