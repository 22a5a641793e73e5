//! `helm cozy diff NAME`: what `apply` would change; with `--watch`, again on every change.

use std::process::ExitCode;

use cozyhr::compare::Against;
use cozyhr::pipeline::{DiffAgainst, DiffRequest, Pipeline};
use cozyhr::source::ReleaseSource;

use cozyhr_shell::ClusterFlags;

use crate::cli::{AgainstArg, DiffArgs};
use crate::commands::{note_offline_lookup, or_what_is_there};

pub async fn run(flags: &ClusterFlags, chart_dir: &std::path::Path, args: &DiffArgs) -> anyhow::Result<ExitCode> {
    let mut pipeline = Pipeline::open(chart_dir).await?;
    pipeline.other_chart = args.chart_check.policy();
    if args.set.all {
        return run_all(flags, &pipeline, args).await;
    }
    let user = args.inputs.values.user();
    let source = args.inputs.release.source(args.plain, flags.options().namespace)?;
    let request = request(args, &user, &source);
    let options = args.layout.render_options();
    // --watch excludes release files, offline capabilities, --plain and git: refs (see cli.rs): it needs
    // a cluster. The chart alone (--plain) is compared with the release stored in the cluster's namespace.
    let cluster = if matches!(source, ReleaseSource::ChartDefaults) {
        Some(flags.connect().await?)
    } else if request.needs_cluster() {
        Some(flags.connect_for(&args.inputs.target).await?)
    } else {
        note_offline_lookup(&[&pipeline.chart]);
        None
    };
    let format = args.print.format();
    if args.watch
        && let Some(cluster) = &cluster
    {
        let watched = cozyhr::watch::diff(&pipeline, cluster, &request, format, options).await;
        or_what_is_there(watched, cluster, Some(&pipeline.chart)).await?;
        return Ok(ExitCode::SUCCESS);
    }
    let plan = pipeline.diff_request(cluster.as_ref(), &request).await;
    let plan = match &cluster {
        Some(c) => or_what_is_there(plan, c, Some(&pipeline.chart)).await?,
        None => plan?,
    };
    request.print(&plan, format, options, cluster.as_ref()).await?;
    Ok(args.print.exit_code(plan.has_changes()))
}

/// `diff --all`: every HelmRelease of the chart (see cozyhr::sets::release_set), a summary table, then the diffs.
async fn run_all(flags: &ClusterFlags, pipeline: &Pipeline, args: &DiffArgs) -> anyhow::Result<ExitCode> {
    use cozyhr::sets::release_set::diff::{Common, any_change, any_error, diff_all, print};
    let cluster = flags.connect_for(&args.inputs.target).await?;
    let selection = args.set.selection(&args.names);
    let user = args.inputs.values.user();
    let against = if args.against == AgainstArg::Release { Against::Release } else { Against::Live };
    let common = Common { user: &user, against, options: args.print.plan_options() };
    let (options, format) = (args.layout.render_options(), args.print.format());
    if args.watch {
        cozyhr::watch::diff_all(pipeline, &cluster, &selection, &common, args.set.concurrency(), format, options)
            .await?;
        return Ok(ExitCode::SUCCESS);
    }
    let set = cozyhr::sets::release_set::select(&cluster, &pipeline.chart.meta.name, &selection).await?;
    let entries = diff_all(pipeline, &cluster, &set, &common, args.set.concurrency()).await;
    print(&entries, format, options)?;
    if any_error(&entries) {
        let failed = entries.iter().filter(|e| e.outcome.is_err()).count();
        anyhow::bail!("{failed} of {} releases could not be diffed (see their rows above)", entries.len());
    }
    Ok(args.print.exit_code(any_change(&entries)))
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
