//! `helm cozy show NAME`: the manifests Flux would install for HelmRelease NAME.

use std::process::ExitCode;

use cozyhr::pipeline::Pipeline;
use cozyhr::source::ReleaseSource;

use cozyhr_shell::ClusterFlags;

use crate::cli::ShowArgs;
use crate::commands::{note_offline_lookup, or_what_is_there};

pub async fn run(flags: &ClusterFlags, chart_dir: &std::path::Path, args: &ShowArgs) -> anyhow::Result<ExitCode> {
    cozyhr::render::check_show_only(&args.show_only)?;
    let mut pipeline = Pipeline::open(chart_dir).await?;
    // show only reads: a chart directory that is not the HelmRelease's is said, not refused.
    pipeline.other_chart = cozyhr::desired::which_chart::OtherChart::Warn;
    let user = args.inputs.values.user();
    let rendered = match args.inputs.release.source(args.plain, flags.options().namespace)? {
        ReleaseSource::Files(files) => {
            note_offline_lookup(&[&pipeline.chart]);
            pipeline.show_from_files(&files, &args.name, &user, &args.inputs.capabilities.view()).await?
        }
        ReleaseSource::Cluster => {
            let cluster = flags.connect_for(&args.inputs.target).await?;
            let shown = pipeline.show(&cluster, &args.name, &user).await;
            or_what_is_there(shown, &cluster, Some(&pipeline.chart)).await?
        }
        ReleaseSource::ChartDefaults => render_plain(flags, &pipeline, args, &user).await?,
    };
    cozyhr::support::output::write_stdout(cozyhr::render::filter_show_only(&rendered, &args.show_only)?)?;
    Ok(ExitCode::SUCCESS)
}

/// `--plain`: the chart alone, with the cluster's capabilities and lookup when one is configured and
/// `--offline` is not given, else with Helm's defaults (said on stderr).
async fn render_plain(
    flags: &ClusterFlags,
    pipeline: &Pipeline,
    args: &ShowArgs,
    user: &cozyhr::desired::UserValues,
) -> anyhow::Result<String> {
    Ok(if args.offline || !flags.options().is_configured() {
        let why = if args.offline { "--offline" } else { "no cluster is configured" };
        cozyhr::support::output::stderr_line(format_args!(
            "{}: {why}: rendering with Helm's defaults (built-in .Capabilities, lookup finds nothing, an install)",
            cozyhr::support::output::chart_command()
        ));
        let namespace = flags.options().namespace.unwrap_or_else(|| "default".into());
        pipeline.render_plain(None, &namespace, &args.name, user).await?
    } else {
        let cluster = flags.connect().await?;
        pipeline.render_plain(Some(&cluster), &cluster.namespace, &args.name, user).await?
    })
}
