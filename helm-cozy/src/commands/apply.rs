//! `helm cozy apply NAME`: install the local chart as Flux would, without racing Flux; with `--watch`,
//! again on every change.

use std::process::ExitCode;

use cozyhr::apply::{ApplyRequest, apply};
use cozyhr::cluster::Cluster;
use cozyhr::install::UpgradeOptions;
use cozyhr::pipeline::Pipeline;

use crate::cli::{ApplyArgs, ClusterFlags};

/// Exit status when a second Ctrl-C stopped helm half-way, as shells report a process stopped by SIGINT.
const INTERRUPTED: u8 = 130;

pub async fn run(flags: &ClusterFlags, chart_dir: &std::path::Path, args: &ApplyArgs) -> anyhow::Result<ExitCode> {
    let pipeline = Pipeline::open(chart_dir).await?;
    let cluster = flags.options_for(&args.target).connect().await?;
    if args.plain {
        let out = pipeline.apply_plain(&cluster, &args.name, &args.values.user(), args.dry_run).await?;
        cozyhr::output::write_stdout(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    let request = request(&cluster, &pipeline, args);
    if args.watch {
        let ended = cozyhr::watch::apply(request).await?;
        return Ok(if ended.cut_off { ExitCode::from(INTERRUPTED) } else { ExitCode::SUCCESS });
    }
    apply(request).await?;
    Ok(ExitCode::SUCCESS)
}

fn request<'a>(cluster: &'a Cluster, pipeline: &'a Pipeline, args: &'a ApplyArgs) -> ApplyRequest<'a> {
    ApplyRequest {
        cluster,
        pipeline,
        name: &args.name,
        user: args.values.user(),
        options: UpgradeOptions {
            dry_run: args.dry_run,
            wait: args.wait,
            timeout: args.timeout,
            take_ownership: args.take_ownership,
        },
        resume: args.resume,
    }
}
