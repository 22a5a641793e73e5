//! `helm cozy show NAME`: the manifests Flux would install for HelmRelease NAME.

use std::process::ExitCode;

use crate::cli::{ClusterFlags, ShowArgs};
use crate::commands::context;

pub async fn run(cluster: &ClusterFlags, chart_dir: &std::path::Path, args: &ShowArgs) -> anyhow::Result<ExitCode> {
    cozyhr::render::check_show_only(&args.show_only)?;
    let ctx = context::Context::new(chart_dir).await?;
    let rendered = if args.plain {
        ctx.render_plain(cluster, &args.name, &args.values, args.offline).await?
    } else {
        let cluster = cluster.options().connect().await?;
        let (desired, seen) = ctx.desired_on_cluster(&cluster, &args.name, &args.values).await?;
        ctx.render(&cluster, &desired, seen).await?
    };
    let out = cozyhr::render::filter_show_only(&rendered, &args.show_only)?;
    cozyhr::output::write_stdout(out)?;
    Ok(ExitCode::SUCCESS)
}
