//! `helm cozy diff NAME`: what `apply` would change.

use std::process::ExitCode;

use cozyhr::compare::Against;
use cozyhr::diff::{Plan, PlanOptions, RenderOptions};
use cozyhr::pipeline::{FromFiles, GitDiff, Pipeline};

use crate::cli::{AgainstArg, ClusterFlags, DiffArgs, DiffFormat};
use crate::commands::{helmrelease_hint, note_offline_lookup};

/// Exit code for "there are changes" with --detailed-exitcode, as helm-diff and terraform use.
const CHANGES: u8 = 2;

pub async fn run(flags: &ClusterFlags, chart_dir: &std::path::Path, args: &DiffArgs) -> anyhow::Result<ExitCode> {
    let pipeline = Pipeline::open(chart_dir).await?;
    let options = PlanOptions { show_secrets: args.show_secrets, ..PlanOptions::default() };
    let namespace = flags.options().namespace;
    let user = args.values.user();
    let against = match &args.against {
        AgainstArg::Live => Against::Live,
        AgainstArg::Release => Against::Release,
        AgainstArg::Git(git_ref) => {
            let git = GitDiff {
                git_ref,
                name: &args.name,
                release_files: &args.release.release_file,
                namespace: namespace.as_deref(),
                offline_view: args.capabilities.view(),
                user: &user,
                options,
            };
            // With release files nothing is read from a cluster: both sides render offline.
            let plan = if args.release.release_file.is_empty() {
                if args.capabilities.is_set() {
                    anyhow::bail!(
                        "--kube-version and --api-versions are for rendering without a cluster (with --release-file); without it both sides see the cluster's"
                    );
                }
                let cluster = flags.options().connect().await?;
                pipeline.diff_against_git(Some(&cluster), &git).await.map_err(helmrelease_hint)?
            } else {
                note_offline_lookup(&[&pipeline.chart]);
                pipeline.diff_against_git(None, &git).await?
            };
            return print(&plan, args);
        }
    };
    let files = args.release.read()?;
    let from = files.as_ref().map(|files| FromFiles { files, namespace: namespace.as_deref() });
    if args.capabilities.is_set() {
        anyhow::bail!(
            "--kube-version and --api-versions are for rendering without a cluster: diff --against live|release renders with the cluster's own (use them with --against git:REF)"
        );
    }
    let cluster = flags.options().connect().await?;
    let plan = pipeline
        .diff_with(&cluster, from.as_ref(), &args.name, &user, against, options)
        .await
        .map_err(helmrelease_hint)?;
    print(&plan, args)
}

/// Prints the plan as `-o` asks and gives the exit code.
fn print(plan: &Plan, args: &DiffArgs) -> anyhow::Result<ExitCode> {
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
    Ok(if args.detailed_exitcode && plan.has_changes() { ExitCode::from(CHANGES) } else { ExitCode::SUCCESS })
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
