//! `helm cozy apply NAME`: install the local chart as Flux would, without racing Flux.

use std::process::ExitCode;

use cozyhr::apply::{ApplyRequest, apply};
use cozyhr::install::UpgradeOptions;
use cozyhr::pipeline::Pipeline;

use crate::cli::{ApplyArgs, ClusterFlags};

pub async fn run(flags: &ClusterFlags, chart_dir: &std::path::Path, args: &ApplyArgs) -> anyhow::Result<ExitCode> {
    let pipeline = Pipeline::open(chart_dir).await?;
    let cluster = flags.options().connect().await?;
    if args.plain {
        let out = pipeline.apply_plain(&cluster, &args.name, &args.values.user(), args.dry_run).await?;
        cozyhr::output::write_stdout(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    let request = ApplyRequest {
        cluster: &cluster,
        pipeline: &pipeline,
        name: &args.name,
        user: args.values.user(),
        options: UpgradeOptions {
            dry_run: args.dry_run,
            wait: args.wait,
            timeout: args.timeout,
            take_ownership: args.take_ownership,
        },
        resume: args.resume,
    };
    apply(request).await?;
    Ok(ExitCode::SUCCESS)
}
