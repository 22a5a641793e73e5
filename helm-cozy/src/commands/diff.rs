//! `helm cozy diff NAME`: what `apply` would change; with `--watch`, again on every change.

use std::process::ExitCode;

use cozyhr::compare::Against;
use cozyhr::compare::request::{DiffAgainst, DiffRequest};
use cozyhr::render::Tools;
use cozyhr::resolve::ChartPlace;
use cozyhr::resolve::ReleaseSource;
use cozyhr::resolve::{Opened, Resolver};

use cozyhr_shell::ClusterFlags;

use crate::cli::{AgainstArg, DiffArgs};
use crate::commands::{note_offline_lookup, or_what_is_there};

pub async fn run(flags: &ClusterFlags, place: &ChartPlace, args: &DiffArgs) -> anyhow::Result<ExitCode> {
    let place = &args.chart_version.place(place)?;
    if args.set.all {
        return run_all(flags, place, args).await;
    }
    let user = args.inputs.values.user();
    let source = args.inputs.release.source(args.plain, flags.options().namespace)?;
    let request = request(args, &user, &source);
    let options = args.layout.render_options();
    // --watch excludes release files, offline capabilities, --plain and git: refs (see cli.rs): it needs
    // a cluster. The chart alone (--plain) is compared with the release stored in the cluster's namespace.
    // The source's chart is the cluster's: what is rendered beside it (a Git side, the chart alone, its
    // --watch) is a directory's.
    let from_source =
        matches!(request.against, DiffAgainst::Cluster(_)) && !matches!(source, ReleaseSource::ChartDefaults);
    let tools = Tools::locate().await?;
    let opened = if from_source && !args.watch {
        Resolver::open_place(place, tools)?
    } else {
        Opened::Ready(Resolver::open(place.directory(what_needs_a_directory(args))?, tools)?)
    };
    let cluster = if matches!(source, ReleaseSource::ChartDefaults) {
        Some(flags.connect().await?)
    } else if request.needs_cluster() {
        Some(flags.connect_for(&args.inputs.target).await?)
    } else {
        None
    };
    let mut resolver = match (&cluster, &source) {
        (Some(cluster), ReleaseSource::Files(files)) => {
            opened.for_release_files(files, args.name(), &cluster.namespace).await?
        }
        (Some(cluster), _) => or_what_is_there(opened.for_release(cluster, args.name()).await, cluster, None).await?,
        (None, _) => opened.for_release_offline()?,
    };
    resolver.other_chart = args.chart_check.policy();
    if cluster.is_none() {
        note_offline_lookup(&[&resolver.chart]);
    }
    let format = args.print.format();
    if args.watch
        && let Some(cluster) = &cluster
    {
        let watched = cozyhr::watch::diff(&resolver, cluster, &request, format, options).await;
        or_what_is_there(watched, cluster, Some(&resolver.chart)).await?;
        return Ok(ExitCode::SUCCESS);
    }
    let diffed = cozyhr::compare::release_diff::diff_request(&resolver, cluster.as_ref(), &request);
    // Beside the diff: whether the source's repository has a newer match than the chart it serves.
    let newer = async {
        if let Some(c) = &cluster {
            super::say_newer_in_repository(&resolver, c, args.name()).await;
        }
    };
    let (plan, ()) = tokio::join!(diffed, newer);
    let plan = match &cluster {
        Some(c) => or_what_is_there(plan, c, Some(&resolver.chart)).await?,
        None => plan?,
    };
    request.print(&plan, format, options, cluster.as_ref()).await?;
    Ok(args.print.exit_code(plan.has_changes()))
}

/// The diff that needs a chart directory, in its flags' words.
fn what_needs_a_directory(args: &DiffArgs) -> &'static str {
    if args.watch {
        "diff --watch"
    } else if args.plain {
        "diff --plain"
    } else if matches!(args.against, AgainstArg::Git(_)) {
        "diff --against git:REF"
    } else {
        "diff --release-file"
    }
}

/// `diff --all`: every HelmRelease of the chart (see cozyhr::sets::release_set), a summary table, then the
/// diffs; without a chart directory, every selected HelmRelease with its own source's chart.
async fn run_all(flags: &ClusterFlags, place: &ChartPlace, args: &DiffArgs) -> anyhow::Result<ExitCode> {
    use cozyhr::sets::release_set::Charts;
    use cozyhr::sets::release_set::diff::{Common, diff_all};
    let cluster = flags.connect_for(&args.inputs.target).await?;
    let selection = args.set.selection(&args.names);
    let user = args.inputs.values.user();
    let against = if args.against == AgainstArg::Release { Against::Release } else { Against::Live };
    let common = Common { user: &user, against, options: args.print.plan_options() };
    let (options, format) = (args.layout.render_options(), args.print.format());
    let tools = Tools::locate().await?;
    let mut resolver = match place {
        ChartPlace::Directory(dir) => Resolver::open(dir, tools)?,
        ChartPlace::Repository { .. } => Resolver::open(place.directory("diff --all")?, tools)?,
        ChartPlace::Source if args.watch => Resolver::open(place.directory("diff --all --watch")?, tools)?,
        ChartPlace::Source => {
            let set = cozyhr::sets::release_set::select_any(&cluster, &selection).await?;
            let entries = diff_all(Charts::Sources(&tools), &cluster, &set, &common, args.set.concurrency()).await;
            return finish_all(&entries, args, format, options);
        }
    };
    resolver.other_chart = args.chart_check.policy();
    if args.watch {
        cozyhr::watch::diff_all(&resolver, &cluster, &selection, &common, args.set.concurrency(), format, options)
            .await?;
        return Ok(ExitCode::SUCCESS);
    }
    let set = cozyhr::sets::release_set::select(&cluster, &resolver.chart.meta.name, &selection).await?;
    let entries = diff_all(Charts::Directory(&resolver), &cluster, &set, &common, args.set.concurrency()).await;
    finish_all(&entries, args, format, options)
}

/// Prints the set's diffs; exit 1 when any failed, else as --detailed-exitcode says.
fn finish_all(
    entries: &[cozyhr::sets::release_set::diff::Entry],
    args: &DiffArgs,
    format: cozyhr::compare::diff::Format,
    options: cozyhr::compare::diff::RenderOptions,
) -> anyhow::Result<ExitCode> {
    use cozyhr::sets::release_set::diff::{any_change, any_error, print};
    print(entries, format, options)?;
    if any_error(entries) {
        let failed = entries.iter().filter(|e| e.outcome.is_err()).count();
        anyhow::bail!("{failed} of {} releases could not be diffed (see their rows above)", entries.len());
    }
    Ok(args.print.exit_code(any_change(entries)))
}

/// The diff the flags ask for, of the release from `source`.
fn request<'a>(
    args: &'a DiffArgs,
    user: &'a cozyhr::desired::UserValues,
    source: &'a ReleaseSource,
) -> DiffRequest<'a> {
    DiffRequest {
        name: args.name(),
        user,
        against: match &args.against {
            AgainstArg::Live => DiffAgainst::Cluster(Against::Live),
            AgainstArg::Release => DiffAgainst::Cluster(Against::Release),
            AgainstArg::Git(git_ref) => DiffAgainst::Git(git_ref),
        },
        source,
        offline_view: args.inputs.capabilities.view(),
        options: args.print.plan_options(),
    }
}
