//! `helm cozy diff NAME`: what `apply` would change; with `--watch`, again on every change.

use std::process::ExitCode;

use cozyhr::cluster::Cluster;
use cozyhr::compare::Against;
use cozyhr::diff::{Plan, PlanOptions, RenderOptions};
use cozyhr::pipeline::Pipeline;
use cozyhr::watch::{Outcome, Round, Stop, Watches};

use crate::cli::{AgainstArg, ClusterFlags, DiffArgs, DiffFormat};
use crate::commands::helmrelease_hint;

/// Exit code for "there are changes" with --detailed-exitcode, as helm-diff and terraform use.
const CHANGES: u8 = 2;

pub async fn run(flags: &ClusterFlags, chart_dir: &std::path::Path, args: &DiffArgs) -> anyhow::Result<ExitCode> {
    let pipeline = Pipeline::open(chart_dir).await?;
    let cluster = flags.options().connect().await?;
    if args.watch {
        return watch(&pipeline, &cluster, args).await;
    }
    let plan = diff(&pipeline, &cluster, args).await.map_err(helmrelease_hint)?;
    print(&plan, args)?;
    Ok(if args.detailed_exitcode && plan.has_changes() { ExitCode::from(CHANGES) } else { ExitCode::SUCCESS })
}

async fn diff(pipeline: &Pipeline, cluster: &Cluster, args: &DiffArgs) -> cozyhr::Result<Plan> {
    let options = PlanOptions { show_secrets: args.show_secrets, ..PlanOptions::default() };
    let against = match args.against {
        AgainstArg::Live => Against::Live,
        AgainstArg::Release => Against::Release,
    };
    pipeline.diff(cluster, &args.name, &args.values.user(), against, options).await
}

fn print(plan: &Plan, args: &DiffArgs) -> anyhow::Result<()> {
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
    Ok(())
}

/// `--watch`: the diff at the start and after every change, until Ctrl-C (exit 0).
async fn watch(pipeline: &Pipeline, cluster: &Cluster, args: &DiffArgs) -> anyhow::Result<ExitCode> {
    let stop = Stop::listen()?;
    let hr = cozyhr::pipeline::helmrelease(cluster, &args.name).await.map_err(helmrelease_hint)?;
    let mut watches = Watches::start(cluster, pipeline.chart.path(), &args.values.values, &hr)?;
    let mut round = DiffRound { pipeline, cluster, args };
    let ended = cozyhr::watch::run(&mut round, &mut watches, &stop).await;
    cozyhr::output::stderr_line(format_args!(
        "helm cozy: stopped watching after {} round(s) ({}); nothing was changed",
        ended.rounds, ended.signal
    ));
    Ok(ExitCode::SUCCESS)
}

struct DiffRound<'a> {
    pipeline: &'a Pipeline,
    cluster: &'a Cluster,
    args: &'a DiffArgs,
}

impl Round for DiffRound<'_> {
    const CHANGES_CLUSTER: bool = false;

    async fn run(&mut self, _stop: &Stop) -> Outcome {
        let plan = match diff(self.pipeline, self.cluster, self.args).await {
            Ok(plan) => plan,
            Err(e) => return Outcome::Failed(e.to_string()),
        };
        match print(&plan, self.args) {
            Ok(()) => Outcome::Done(format!("diff printed: {}", cozyhr::watch::plan_words(&plan))),
            Err(e) => Outcome::Failed(format!("{e:#}")),
        }
    }
}
