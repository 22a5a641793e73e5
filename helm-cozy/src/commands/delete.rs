//! `helm cozy delete NAME`: uninstall the release and keep Flux from reinstalling it.

use std::process::ExitCode;

use crate::cli::{ClusterFlags, DeleteArgs};
use crate::commands::context::Context;

pub async fn run(cluster: &ClusterFlags, chart_dir: &std::path::Path, args: &DeleteArgs) -> anyhow::Result<ExitCode> {
    let ctx = Context::new(chart_dir).await?;
    let cluster = cluster.options().connect().await?;
    let kubectl = cozyhr::render::locate_kubectl()?;
    cozyhr::apply::delete(&cluster, &ctx.helm, &ctx.chart, &args.name, kubectl, args.timeout).await?;
    Ok(ExitCode::SUCCESS)
}
