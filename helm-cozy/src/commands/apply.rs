//! `helm cozy apply NAME`: install the local chart as Flux would, without racing Flux; with `--watch`,
//! again on every change.

use std::process::ExitCode;

use cozyhr::apply::{ApplyRequest, apply, apply_round};
use cozyhr::cluster::Cluster;
use cozyhr::compare::Against;
use cozyhr::diff::PlanOptions;
use cozyhr::install::UpgradeOptions;
use cozyhr::pipeline::Pipeline;
use cozyhr::watch::{Outcome, Round, Stop, Watches};

use crate::cli::{ApplyArgs, ClusterFlags};

/// Why the loop ended when the HelmRelease was resumed under it.
const RESUMED: &str = "the HelmRelease was resumed";

/// Exit status when a second Ctrl-C stopped helm half-way, as shells report a process stopped by SIGINT.
const INTERRUPTED: u8 = 130;

pub async fn run(flags: &ClusterFlags, chart_dir: &std::path::Path, args: &ApplyArgs) -> anyhow::Result<ExitCode> {
    let pipeline = Pipeline::open(chart_dir).await?;
    let cluster = flags.options().connect().await?;
    if args.plain {
        let out = pipeline.apply_plain(&cluster, &args.name, &args.values.user(), args.dry_run).await?;
        cozyhr::output::write_stdout(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.watch {
        return watch(&pipeline, &cluster, args).await;
    }
    apply(request(&cluster, &pipeline, args)).await?;
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

/// `--watch`: suspend once, apply at the start and after every change, until Ctrl-C; then say how to
/// hand back.
async fn watch(pipeline: &Pipeline, cluster: &Cluster, args: &ApplyArgs) -> anyhow::Result<ExitCode> {
    let stop = Stop::listen()?;
    let hr = cozyhr::watch::suspend(cluster, &args.name).await?;
    let mut watches = Watches::start(cluster, pipeline.chart.path(), &args.values.values, &hr)?;
    let mut round = ApplyRound { pipeline, cluster, args };
    let ended = cozyhr::watch::run(&mut round, &mut watches, &stop).await;
    drop(watches);
    if ended.signal == RESUMED {
        cozyhr::output::progress::success(format!(
            "helmrelease {} was resumed: Flux reconciles it again, stopped watching",
            args.name
        ));
        return Ok(ExitCode::SUCCESS);
    }
    cozyhr::watch::hand_back(cluster, &args.name).await;
    Ok(if ended.cut_off { ExitCode::from(INTERRUPTED) } else { ExitCode::SUCCESS })
}

struct ApplyRound<'a> {
    pipeline: &'a Pipeline,
    cluster: &'a Cluster,
    args: &'a ApplyArgs,
}

impl Round for ApplyRound<'_> {
    const CHANGES_CLUSTER: bool = true;

    /// The objects that change and the plan line, then the apply itself (a render error stops the round
    /// before anything changes).
    async fn run(&mut self, stop: &Stop) -> Outcome {
        let user = self.args.values.user();
        let plan =
            match self.pipeline.diff(self.cluster, &self.args.name, &user, Against::Live, PlanOptions::default()).await
            {
                Ok(plan) => plan,
                Err(e) => return Outcome::Failed(e.to_string()),
            };
        let color = cozyhr::output::ColorChoice::Auto.for_stdout();
        match cozyhr::output::write_stdout(plan.render_summary(color)) {
            Err(e) if e.is_reader_gone() => return Outcome::End(cozyhr::watch::READER_GONE.into()),
            Err(e) => return Outcome::Failed(e.to_string()),
            Ok(()) => {}
        }
        match apply_round(request(self.cluster, self.pipeline, self.args), stop.second()).await {
            // Resumed under the loop (`kubectl cozyhr resume`): Flux owns it again; the loop ends.
            Ok(cozyhr::apply::Outcome::Resumed) => Outcome::End(RESUMED.into()),
            Ok(_) => Outcome::Done(format!("applied: {}", cozyhr::watch::plan_words(&plan))),
            Err(e) => Outcome::Failed(e.to_string()),
        }
    }
}
