//! `helm cozy diff NAME`: what `apply` would change; with `--watch`, again on every change.

use std::process::ExitCode;

use cozyhr::cluster::Cluster;
use cozyhr::compare::Against;
use cozyhr::diff::{Plan, PlanOptions, RenderOptions};
use cozyhr::pipeline::{DiffAgainst, DiffRequest, Pipeline};
use cozyhr::watch::{Outcome, Round, Stop, Watches};

use crate::cli::{AgainstArg, ClusterFlags, DiffArgs, DiffFormat};
use crate::commands::{helmrelease_hint, note_offline_lookup};

/// Exit code for "there are changes" with --detailed-exitcode, as helm-diff and terraform use.
const CHANGES: u8 = 2;

pub async fn run(flags: &ClusterFlags, chart_dir: &std::path::Path, args: &DiffArgs) -> anyhow::Result<ExitCode> {
    let pipeline = Pipeline::open(chart_dir).await?;
    // --watch excludes release files, offline capabilities and git: refs (see cli.rs).
    if args.watch {
        let cluster = flags.options().connect().await?;
        return watch(&pipeline, &cluster, args).await;
    }
    let namespace = flags.options().namespace;
    let user = args.values.user();
    let request = request(args, &user, namespace.as_deref());
    let cluster = if request.needs_cluster() {
        Some(flags.options().connect().await?)
    } else {
        note_offline_lookup(&[&pipeline.chart]);
        None
    };
    let plan = pipeline.diff_request(cluster.as_ref(), &request).await.map_err(helmrelease_hint)?;
    print(&plan, args)?;
    Ok(exit_code(&plan, args))
}

/// The diff the flags ask for; `namespace` is `-n` when given (else the cluster's).
fn request<'a>(
    args: &'a DiffArgs,
    user: &'a cozyhr::desired::UserValues,
    namespace: Option<&'a str>,
) -> DiffRequest<'a> {
    DiffRequest {
        name: &args.name,
        user,
        against: match &args.against {
            AgainstArg::Live => DiffAgainst::Cluster(Against::Live),
            AgainstArg::Release => DiffAgainst::Cluster(Against::Release),
            AgainstArg::Git(git_ref) => DiffAgainst::Git(git_ref),
        },
        release_files: &args.release.release_file,
        namespace,
        offline_view: args.capabilities.view(),
        options: PlanOptions { show_secrets: args.show_secrets, ..PlanOptions::default() },
    }
}

/// With `--detailed-exitcode`, 2 when the plan changes something.
fn exit_code(plan: &Plan, args: &DiffArgs) -> ExitCode {
    if args.detailed_exitcode && plan.has_changes() { ExitCode::from(CHANGES) } else { ExitCode::SUCCESS }
}

/// Prints the plan as `-o` asks.
fn print(plan: &Plan, args: &DiffArgs) -> anyhow::Result<()> {
    let color = cozyhr::output::ColorChoice::from(args.color).for_stdout();
    let context = RenderOptions::with_context_flag(args.context, false).context;
    let out = match args.output {
        DiffFormat::Diff => plan.render_diff(RenderOptions::with_context_flag(args.context, color)),
        DiffFormat::Summary => plan.render_summary(color),
        DiffFormat::Json => plan.render_json(context),
        DiffFormat::Markdown => plan.render_markdown(&markdown_title(args), context),
    };
    cozyhr::output::write_stdout(out)?;
    if !plan.has_changes() && !matches!(args.output, DiffFormat::Json | DiffFormat::Markdown) {
        match &args.against {
            AgainstArg::Git(git_ref) => {
                cozyhr::output::stderr_line(format_args!("No differences against git:{git_ref}."))
            }
            _ => cozyhr::output::stderr_line(format_args!(
                "No differences: helm cozy apply {} would change nothing.",
                args.name
            )),
        }
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
    // Output cut off by its reader is a normal end, and a quiet one.
    if ended.signal == cozyhr::watch::READER_GONE {
        return Ok(ExitCode::SUCCESS);
    }
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
        let user = self.args.values.user();
        let plan = match self.pipeline.diff_request(Some(self.cluster), &request(self.args, &user, None)).await {
            Ok(plan) => plan,
            Err(e) => return Outcome::Failed(e.to_string()),
        };
        match print(&plan, self.args) {
            Ok(()) => Outcome::Done(format!("diff printed: {}", cozyhr::watch::plan_words(&plan))),
            Err(e) if e.downcast_ref::<cozyhr::output::StdoutError>().is_some_and(|e| e.is_reader_gone()) => {
                Outcome::End(cozyhr::watch::READER_GONE.into())
            }
            Err(e) => Outcome::Failed(format!("{e:#}")),
        }
    }
}

/// What the Markdown's first line says was compared.
fn markdown_title(args: &DiffArgs) -> String {
    let against = match &args.against {
        AgainstArg::Live => "the live objects".to_string(),
        AgainstArg::Release => "the stored Helm release".to_string(),
        AgainstArg::Git(r) => format!("`git:{r}`"),
    };
    format!("`helm cozy diff {}` against {against}", args.name)
}
