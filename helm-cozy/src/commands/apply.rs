//! `helm cozy apply NAME`: install the local chart as Flux would, without racing Flux.

use std::process::ExitCode;

use anyhow::Context as _;
use cozyhr::apply::{ApplyRequest, apply};
use cozyhr::desired::UserValues;
use cozyhr::install::UpgradeOptions;

use crate::cli::{ApplyArgs, ClusterFlags};
use crate::commands::context::Context;

pub async fn run(cluster: &ClusterFlags, chart_dir: &std::path::Path, args: &ApplyArgs) -> anyhow::Result<ExitCode> {
    let ctx = Context::new(chart_dir).await?;
    if args.plain {
        return ctx.apply_plain(cluster, &args.name, &args.values, args.dry_run).await;
    }
    let cluster = cluster.options().connect().await?;
    let request = ApplyRequest {
        cluster: &cluster,
        helm: &ctx.helm,
        chart: &ctx.chart,
        name: &args.name,
        user: UserValues { files: args.values.values.clone(), sets: args.values.set.clone() },
        options: UpgradeOptions {
            dry_run: args.dry_run,
            wait: args.wait,
            timeout: args.timeout,
            take_ownership: args.take_ownership,
        },
        resume: args.resume,
        kubectl: cozyhr::render::locate_kubectl()?,
        self_exe: std::env::current_exe().context("cannot find the helm-cozy executable")?,
    };
    apply(request).await?;
    Ok(ExitCode::SUCCESS)
}
