//! `helm cozy apply NAME`: install the local chart as Flux would, without racing Flux; with `--watch`,
//! again on every change.

use std::process::ExitCode;

use cozyhr::apply::install::UpgradeOptions;
use cozyhr::apply::{ApplyRequest, apply};
use cozyhr::cluster::Cluster;
use cozyhr::render::Tools;
use cozyhr::resolve::ChartPlace;
use cozyhr::resolve::{Opened, Resolver};

use cozyhr_shell::{ClusterFlags, Exit};

use crate::cli::ApplyArgs;

pub async fn run(flags: &ClusterFlags, place: &ChartPlace, args: &ApplyArgs) -> anyhow::Result<ExitCode> {
    let place = &args.chart_version.place(place)?;
    if args.set.all && !args.watch && *place == ChartPlace::Source {
        // Without a chart directory, each release with the chart its own source serves.
        let tools = Tools::locate().await?;
        let cluster = flags.connect_for(&args.target).await?;
        let set = cozyhr::sets::release_set::select_any(&cluster, &args.set.selection(&args.names)).await?;
        return run_all(&cluster, cozyhr::sets::release_set::Charts::Sources(&tools), args, &set).await;
    }
    let tools = Tools::locate().await?;
    let opened = if args.plain || args.watch || args.set.all {
        // The chart alone, the loop that follows a directory's files, a chart's set: a directory's.
        let what = if args.plain {
            "apply --plain"
        } else if args.watch {
            "apply --watch"
        } else {
            "apply --all"
        };
        Opened::Ready(Resolver::open(place.directory(what)?, tools)?)
    } else {
        Resolver::open_place(place, tools)?
    };
    let cluster = flags.connect_for(&args.target).await?;
    let mut resolver = super::or_what_is_there(opened.for_release(&cluster, args.name()).await, &cluster, None).await?;
    resolver.other_chart = args.chart_check.policy();
    if args.plain {
        let (user, take) = (args.values.user(), args.take_ownership);
        let out =
            cozyhr::apply::plain::apply_plain(&resolver, &cluster, args.name(), &user, args.dry_run, take).await?;
        cozyhr::support::output::write_stdout(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.set.all {
        let selection = args.set.selection(&args.names);
        let set = cozyhr::sets::release_set::select(&cluster, &resolver.chart.meta.name, &selection).await?;
        return run_all(&cluster, cozyhr::sets::release_set::Charts::Directory(&resolver), args, &set).await;
    }
    super::say_newer_in_repository(&resolver, &cluster, args.name()).await;
    let request = request(&cluster, &resolver, args);
    if args.watch {
        let ended =
            super::or_what_is_there(cozyhr::watch::apply(request).await, &cluster, Some(&resolver.chart)).await?;
        // A second Ctrl-C stopped helm half-way.
        return Ok(if ended.cut_off { Exit::Interrupted.into() } else { ExitCode::SUCCESS });
    }
    super::or_what_is_there(apply(request).await, &cluster, Some(&resolver.chart)).await?;
    Ok(ExitCode::SUCCESS)
}

/// `apply --all`: every HelmRelease of `set` (see cozyhr::sets::release_set), each with its chart from
/// `charts`, then a table of what became of each; exit 1 when any failed.
async fn run_all(
    cluster: &Cluster,
    charts: cozyhr::sets::release_set::Charts<'_>,
    args: &ApplyArgs,
    set: &[cozyhr::flux::HelmRelease],
) -> anyhow::Result<ExitCode> {
    use cozyhr::sets::release_set::apply::{Common, Fate, Plan, apply_all, table};
    let plan = Plan { concurrency: args.set.concurrency(), keep_going: args.keep_going };
    let common = Common { user: args.values.user(), options: options(args), resume: args.resume };
    let rows = apply_all(cluster, charts, &common, set, &plan).await?;
    let color = cozyhr::support::output::ColorChoice::Auto.for_stdout();
    cozyhr::support::output::write_stdout(table(&rows, color))?;
    let failed = rows.iter().filter(|r| matches!(r.result, Fate::Failed(_))).count();
    let skipped = rows.iter().filter(|r| matches!(r.result, Fate::Skipped(_))).count();
    if failed > 0 {
        anyhow::bail!("{failed} of {} releases failed, {skipped} skipped (see the table)", rows.len());
    }
    if !args.resume {
        cozyhr::support::output::progress::success(format!(
            "hand the set back to Flux with: {}",
            hand_back(cluster, charts, args)
        ));
    }
    Ok(ExitCode::SUCCESS)
}

/// The resume that hands the applied set back: by chart from a chart directory, else by the selection.
fn hand_back(cluster: &Cluster, charts: cozyhr::sets::release_set::Charts<'_>, args: &ApplyArgs) -> String {
    let resume = cozyhr::support::output::lifecycle_command("resume");
    let mut hand_back = match charts {
        cozyhr::sets::release_set::Charts::Directory(resolver) => {
            format!("{resume} --all --chart {}", resolver.chart.meta.name)
        }
        cozyhr::sets::release_set::Charts::Sources(_) if !args.names.is_empty() => {
            format!("{resume} {}", args.names.join(" "))
        }
        cozyhr::sets::release_set::Charts::Sources(_) => format!("{resume} --all"),
    };
    if args.set.all_namespaces {
        hand_back.push_str(" -A");
    } else {
        hand_back.push_str(&format!(" -n {}", cluster.namespace));
    }
    if let Some(sel) = &args.set.selector {
        hand_back.push_str(&format!(" -l {sel}"));
    }
    hand_back
}

fn request<'a>(cluster: &'a Cluster, resolver: &'a Resolver, args: &'a ApplyArgs) -> ApplyRequest<'a> {
    ApplyRequest {
        cluster,
        resolver,
        name: args.name(),
        user: args.values.user(),
        options: options(args),
        resume: args.resume,
    }
}

fn options(args: &ApplyArgs) -> UpgradeOptions {
    UpgradeOptions {
        dry_run: args.dry_run,
        wait: args.wait,
        timeout: args.timeout,
        take_ownership: args.take_ownership,
        skip_tests: args.skip_tests,
        keep_failed: args.keep_failed,
    }
}
