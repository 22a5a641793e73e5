//! `cozyhr`: this binary under the Go cozyhr's name takes the Go cozyhr's command line, so Cozystack's
//! Makefiles and scripts run unchanged (`cozyhr show|diff|apply|delete|suspend|resume|reconcile|get|list
//! -n NS NAME`, `-C DIR`, `--plain`, ...). Each command is the plugins' command of the same job: the chart
//! commands `helm cozy`'s, with their flags (a superset of Go cozyhr's), the lifecycle verbs `kubectl
//! cozyhr`'s (their flags from [`cozyhr_shell::lifecycle`]). What is deliberately different from Go
//! cozyhr is listed in docs/cozystack.md.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use cozyhr_shell::lifecycle::{self, GetArgs, ReconcileArgs, ResumeArgs, SuspendArgs};

use crate::cli::ClusterFlags;

/// The name this command line answers to (the binary's file name when it is run as it).
pub const NAME: &str = "cozyhr";

#[derive(Debug, Parser)]
#[command(
    name = "cozyhr",
    bin_name = "cozyhr",
    version = cozyhr::VERSION,
    about = "Render, diff and apply a chart as Flux would, and steer its HelmRelease (Go cozyhr's command line)",
    propagate_version = true
)]
pub struct Cli {
    #[command(flatten)]
    pub cluster: Globals,

    #[command(subcommand)]
    pub command: Command,
}

/// Go cozyhr's global flags, before or after the command.
#[derive(Debug, Args, Clone)]
pub struct Globals {
    /// Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config).
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig context to use.
    #[arg(id = "kube_context", long = "context", global = true, value_name = "NAME")]
    pub context: Option<String>,

    /// The namespace of the HelmRelease (default: the context's namespace, else "default").
    #[arg(short = 'n', long, global = true, value_name = "NS")]
    pub namespace: Option<String>,

    /// The chart directory (default: the current directory).
    #[arg(short = 'C', long = "working-directory", global = true, value_name = "DIR", default_value = ".")]
    pub chart_dir: PathBuf,
}

impl Globals {
    /// The same cluster flags `helm cozy` takes.
    fn cluster_flags(&self) -> ClusterFlags {
        ClusterFlags {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
            namespace: self.namespace.clone(),
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// `helm cozy`'s commands, with their flags: show, values, diff, apply, delete, completion, version.
    #[command(flatten)]
    Chart(crate::cli::Command),
    /// Suspend HelmReleases: Flux stops acting on them until they are resumed.
    Suspend(SuspendArgs),
    /// Resume HelmReleases and wait until helm-controller has answered.
    Resume(ResumeArgs),
    /// Ask helm-controller to reconcile a HelmRelease now and wait for the result.
    Reconcile(ReconcileArgs),
    /// Get one or many HelmReleases.
    Get(GetArgs),
    /// List HelmReleases.
    #[command(visible_alias = "ls")]
    List(GetArgs),
}

impl Cli {
    /// The command line as it is parsed: `--context` is Go cozyhr's kube context everywhere, so `helm cozy
    /// diff`'s `--context N` (lines of context) is `--diff-context N` here.
    pub fn command() -> clap::Command {
        <Cli as clap::CommandFactory>::command()
            .mut_subcommand("diff", |diff| diff.mut_arg("context", |lines| lines.long("diff-context")))
    }

    /// `helm cozy`'s own checks, on the chart commands' flags.
    pub fn checked(self) -> Result<Cli, clap::Error> {
        let Cli { cluster, command } = self;
        let command = match command {
            Command::Chart(command) => {
                let helm =
                    crate::cli::Cli { cluster: cluster.cluster_flags(), chart_dir: cluster.chart_dir.clone(), command };
                Command::Chart(helm.checked()?.command)
            }
            other => other,
        };
        Ok(Cli { cluster, command })
    }
}

/// Runs `cozyhr ARGS...`.
pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let Cli { cluster, command } = cli;
    let flags = cluster.cluster_flags();
    let connect = || async { anyhow::Ok(flags.options().connect().await?) };
    match command {
        // Under this name, what names the program says this one.
        Command::Chart(crate::cli::Command::Completion(args)) => {
            crate::commands::completion::generate(Cli::command(), NAME, &args)
        }
        Command::Chart(crate::cli::Command::Version(args)) => {
            cozyhr_shell::version::version(NAME, &args, &flags.options(), true).await
        }
        Command::Chart(command) => {
            let helm = crate::cli::Cli { cluster: flags.clone(), chart_dir: cluster.chart_dir, command };
            crate::commands::run(helm).await
        }
        Command::Suspend(args) => lifecycle::suspend(&connect().await?, &args).await,
        Command::Resume(args) => lifecycle::resume(&connect().await?, &args).await,
        Command::Reconcile(args) => lifecycle::reconcile(&connect().await?, &args).await,
        Command::Get(args) | Command::List(args) => lifecycle::get(&connect().await?, &args).await,
    }
}
