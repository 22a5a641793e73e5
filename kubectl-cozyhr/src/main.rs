//! `kubectl cozyhr`: the lifecycle and status of Flux HelmReleases. Thin: flags in `cli`, one module per
//! command, the logic in the `cozyhr` library.

mod cli;
mod commands;

fn main() -> std::process::ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // `kubectl-cozyhr __complete ARGS... WORD` is the entry point of the `kubectl_complete-cozyhr` shim that
    // kubectl (>= 1.26) runs for `kubectl cozyhr <TAB>`. It is handled before clap on purpose: the words
    // being completed are partial and often invalid, and they must never produce a usage error.
    if args.get(1).is_some_and(|a| a == commands::complete::ENTRY) {
        let words = args.iter().skip(2).map(|a| a.to_string_lossy().into_owned()).collect();
        return cozyhr_shell::run(commands::complete::run(words));
    }
    let face = cozyhr_shell::face::of_kubectl_plugin();
    cozyhr::support::output::set_face(face);
    let cli: cli::Cli = cozyhr_shell::parse_as(cli::command(face), cli::Cli::with_scope_merged);
    cozyhr::support::output::set_color(cli.color.into());
    init_logging(cli.verbosity);
    cozyhr_shell::run(commands::run(cli, face))
}

/// `-v LEVEL` like kubectl: nothing by default (failures are reported as one `error:` line, so the
/// client's own error logs would only repeat them), warnings from 1, request logs from 4, everything from
/// 6; `RUST_LOG` overrides.
fn init_logging(level: Option<u8>) {
    let filter = match level.unwrap_or(0) {
        0 => "off",
        1..=3 => "warn",
        4..=5 => "info,kube=debug,cozyhr=debug",
        _ => "trace",
    };
    cozyhr_shell::init_logging(filter, false);
}
