//! `helm cozy`: render, diff, apply and delete a chart as Flux would. Thin: flags in `cli`, one module per
//! command, the logic in the `cozyhr` library.

mod cli;
mod commands;

fn main() -> std::process::ExitCode {
    let cli: cli::Cli = cozyhr_shell::parse(cli::Cli::checked);
    init_logging();
    cozyhr_shell::run(commands::run(cli))
}

/// Quiet unless asked: `helm --debug cozy ...` (Helm hands plugins HELM_DEBUG) logs what cozyhr does with
/// timings to stderr; `RUST_LOG` overrides.
fn init_logging() {
    let debug = std::env::var("HELM_DEBUG").is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"));
    cozyhr_shell::init_logging(if debug { "cozyhr=debug,helm_cozy=debug" } else { "off" }, true);
}
