//! `helm cozy diff NAME`: what `apply` would change.

use std::process::ExitCode;

use cozyhr::compare::{self, Against};
use cozyhr::diff::{PlanOptions, RenderOptions};
use cozyhr::live::LiveObjects;

use crate::cli::{AgainstArg, ClusterFlags, DiffArgs, DiffFormat};
use crate::commands::context::Context;

/// Exit code for "there are changes" with --detailed-exitcode, as helm-diff and terraform use.
const CHANGES: u8 = 2;

pub async fn run(cluster: &ClusterFlags, chart_dir: &std::path::Path, args: &DiffArgs) -> anyhow::Result<ExitCode> {
    let ctx = Context::new(chart_dir).await?;
    let cluster = cluster.options().connect().await?;
    let desired = ctx.desired(&cluster, &args.name, &args.values).await?;
    // The stored release is read (and its manifest decoded and parsed) while helm renders.
    let (rendered, previous) = tokio::try_join!(async { ctx.render(&desired).await }, async {
        let previous = compare::previous_release(
            &cluster,
            &desired.storage_namespace,
            &desired.release_name,
            &desired.release_namespace,
        );
        Ok(previous.await?)
    },)?;
    let live = LiveObjects::new(&cluster);
    let options = PlanOptions { show_secrets: args.show_secrets, ..PlanOptions::default() };
    let against = match args.against {
        AgainstArg::Live => Against::Live,
        AgainstArg::Release => Against::Release,
    };
    tracing::debug!("previous release read");
    let plan = match against {
        Against::Live => {
            let objects = compare::desired_objects(&rendered, &desired.release_namespace, Some(&live)).await?;
            tracing::debug!("rendered objects parsed");
            let release = (desired.release_name.as_str(), desired.release_namespace.as_str());
            compare::against_live(&live, release, objects, previous, options).await?
        }
        Against::Release => {
            let objects = compare::desired_objects(&rendered, &desired.release_namespace, None).await?;
            compare::against_release(objects, previous, options)?
        }
    };
    tracing::debug!("plan ready");
    let color = cozyhr::output::ColorChoice::from(args.color).for_stdout();
    let out = match args.output {
        DiffFormat::Diff => plan.render_diff(RenderOptions::with_context_flag(args.context, color)),
        DiffFormat::Summary => plan.render_summary(color),
        DiffFormat::Json => plan.render_json(RenderOptions::with_context_flag(args.context, false).context),
    };
    print!("{out}");
    if !plan.has_changes() && args.output != DiffFormat::Json {
        eprintln!("No differences: helm cozy apply {} would change nothing.", args.name);
    }
    Ok(if args.detailed_exitcode && plan.has_changes() { ExitCode::from(CHANGES) } else { ExitCode::SUCCESS })
}
