//! `helm cozy delete NAME`: uninstall the release and keep Flux from reinstalling it.

use std::process::ExitCode;

use cozyhr::resolve::ChartPlace;
use cozyhr_shell::ClusterFlags;

use crate::cli::DeleteArgs;

pub async fn run(cluster: &ClusterFlags, place: &ChartPlace, args: &DeleteArgs) -> anyhow::Result<ExitCode> {
    let helm = cozyhr::render::Helm::locate().await?;
    // Run from a chart directory, delete names a release of that chart (a slip of the directory or the
    // name is refused); from anywhere else no chart is compared.
    let chart = match place {
        ChartPlace::Directory(dir) => cozyhr::source::chart::ChartDir::open(dir).ok(),
        ChartPlace::Source | ChartPlace::Repository { .. } => None,
    };
    let policy = args.chart_check.policy();
    let cluster = cluster.connect_for(&args.target).await?;
    let deleted =
        cozyhr::apply::delete(&cluster, &helm, &args.name, args.timeout, chart.as_ref().map(|c| (c, policy))).await;
    super::or_what_is_there(deleted, &cluster, chart.as_ref()).await?;
    Ok(ExitCode::SUCCESS)
}
