//! `helm cozy diff NAME`: what `apply` would change.

use std::process::ExitCode;

use cozyhr::compare::Against;
use cozyhr::diff::{PlanOptions, RenderOptions};
use cozyhr::pipeline::Pipeline;

use crate::cli::{AgainstArg, ClusterFlags, DiffArgs, DiffFormat};
use crate::commands::helmrelease_hint;

/// Exit code for "there are changes" with --detailed-exitcode, as helm-diff and terraform use.
const CHANGES: u8 = 2;

pub async fn run(flags: &ClusterFlags, chart_dir: &std::path::Path, args: &DiffArgs) -> anyhow::Result<ExitCode> {
    let pipeline = Pipeline::open(chart_dir).await?;
    let cluster = flags.options().connect().await?;
    let options = PlanOptions { show_secrets: args.show_secrets, ..PlanOptions::default() };
    let against = match args.against {
        AgainstArg::Live => Against::Live,
        AgainstArg::Release => Against::Release,
    };
    let plan =
        pipeline.diff(&cluster, &args.name, &args.values.user(), against, options).await.map_err(helmrelease_hint)?;
    let color = cozyhr::output::ColorChoice::from(args.color).for_stdout();
    let out = match args.output {
        DiffFormat::Diff => plan.render_diff(RenderOptions::with_context_flag(args.context, color)),
        DiffFormat::Summary => plan.render_summary(color),
        DiffFormat::Json => plan.render_json(RenderOptions::with_context_flag(args.context, false).context),
    };
    cozyhr::output::write_stdout(out)?;
    if !plan.has_changes() && args.output != DiffFormat::Json {
        cozyhr::output::stderr_line(format_args!(
            "No differences: helm cozy apply {} would change nothing.",
            args.name
        ));
    }
    Ok(if args.detailed_exitcode && plan.has_changes() { ExitCode::from(CHANGES) } else { ExitCode::SUCCESS })
}
