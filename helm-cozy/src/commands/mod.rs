//! One module per command.

mod apply;
mod delete;
mod diff;
mod review;
mod show;
mod values;

use std::process::ExitCode;

use cozyhr_shell::Face;
use cozyhr_shell::completion;

use crate::cli::{Cli, Command};

pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let (cluster, place) = (&cli.globals.cluster, &cli.globals.chart_place());
    match &cli.command {
        Command::Show(args) => stop_on_signal(show::run(cluster, place, args)).await,
        Command::Values(args) => stop_on_signal(values::run(cluster, place, args)).await,
        // The watch loop handles Ctrl-C itself: it ends between rounds.
        Command::Diff(args) if args.watch => diff::run(cluster, place, args).await,
        Command::Diff(args) => stop_on_signal(diff::run(cluster, place, args)).await,
        Command::Apply(args) => apply::run(cluster, place, args).await,
        Command::Delete(args) => delete::run(cluster, place, args).await,
        Command::Review(args) => {
            let dir = cli.globals.chart_dir.clone().unwrap_or_else(|| std::path::PathBuf::from("."));
            stop_on_signal(review::run(cluster, &dir, args)).await
        }
        Command::PostRender => {
            cozyhr::render::postrender::main_post_render().await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Completion(args) => completion::generate(Cli::command(), Face::Helm.program(), args),
        Command::Version(args) => {
            cozyhr_shell::version::version(Face::Helm.program(), args, &cluster.options(), true).await
        }
    }
}

/// Runs a command that changes nothing until SIGINT or SIGTERM. On a signal the command is dropped, so
/// its temporary files (values, which may hold Secret data) are removed and its helm child is killed.
async fn stop_on_signal(command: impl Future<Output = anyhow::Result<ExitCode>>) -> anyhow::Result<ExitCode> {
    let interrupted = cozyhr::support::process::interrupted();
    tokio::select! {
        result = command => result,
        signal = interrupted => {
            cozyhr::support::output::stderr_line(format_args!(
                "{}: interrupted by {signal}; nothing was changed",
                cozyhr::support::output::chart_command()
            ));
            Ok(cozyhr_shell::Exit::Interrupted.into())
        }
    }
}

/// A HelmRelease that is not there may be a chart the user meant to render on its own.
fn helmrelease_hint(e: cozyhr::Error) -> anyhow::Error {
    match e {
        cozyhr::Error::NotFound { .. } => {
            anyhow::anyhow!("{e} (to render the chart without a HelmRelease, use --plain)")
        }
        e => e.into(),
    }
}

/// `result`, with what is there said after a HelmRelease that is not (see [`cozyhr::flux::near`]): close
/// names, the namespaces that have it, the HelmReleases of `chart` here; else, from a chart directory,
/// that --plain renders the chart without one.
async fn or_what_is_there<T>(
    result: cozyhr::Result<T>,
    cluster: &cozyhr::cluster::Cluster,
    chart: Option<&cozyhr::source::chart::ChartDir>,
) -> anyhow::Result<T> {
    let (name, namespace) = match result {
        Err(cozyhr::Error::NotFound { kind: "helmrelease", name, namespace }) => (name, namespace),
        other => return Ok(other?),
    };
    let hint = cozyhr::flux::near::hint(cluster, &name, chart.map(|c| c.meta.name.as_str())).await;
    let e = cozyhr::Error::NotFound { kind: "helmrelease", name, namespace };
    match hint {
        Some(hint) => Err(anyhow::anyhow!("{e}; {hint}")),
        None if chart.is_some() => Err(helmrelease_hint(e)),
        None => Err(e.into()),
    }
}

/// Without a cluster `lookup` finds nothing: said once, on stderr, when a chart rendered may call it.
fn note_offline_lookup(charts: &[&cozyhr::source::chart::ChartDir]) {
    if charts.iter().any(|c| c.may_use_lookup()) {
        cozyhr::support::output::stderr_line(format_args!(
            "{}: rendering without a cluster: lookup finds nothing (the chart calls lookup)",
            cozyhr::support::output::chart_command()
        ));
    }
}

/// Says on stderr, in one line, when HelmRelease `name`'s chart is the one its source serves in `cluster`
/// and the source's repository has a newer match for its range (source-controller takes it at its next
/// interval): what is shown, diffed or applied now is not what Flux will install then.
async fn say_newer_in_repository(resolver: &cozyhr::resolve::Resolver, cluster: &cozyhr::cluster::Cluster, name: &str) {
    if let Some(line) = resolver.newer_in_repository(cluster, name).await {
        cozyhr::support::output::stderr_line(format_args!("{}: {line}", cozyhr::support::output::chart_command()));
    }
}
