//! `cozyhr`: this binary under the Go cozyhr's name takes the Go cozyhr's command line, so Cozystack's
//! Makefiles and scripts run unchanged (`cozyhr show|diff|apply|delete|suspend|resume|reconcile|get|list
//! -n NS NAME`, `-C DIR`, `--plain`, ...). Each command is the plugins' command of the same job: the chart
//! commands `helm cozy`'s, with their flags (a superset of Go cozyhr's), the lifecycle verbs `kubectl
//! cozyhr`'s (their flags from [`cozyhr_shell::lifecycle`]). What is deliberately different from Go
//! cozyhr is listed in docs/cozystack.md.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use cozyhr_shell::Face;
use cozyhr_shell::lifecycle::{self, GetArgs, ReconcileArgs, ResumeArgs, SuspendArgs};

use crate::cli::Globals;

#[derive(Debug, Parser)]
#[command(about = "Render, diff and apply a chart as Flux would, and steer its HelmRelease (Go cozyhr's command line)")]
pub struct Cli {
    // Go cozyhr's global flags, before or after the command: the cluster flags by its names, and the chart
    // directory (as `--working-directory`, see `Cli::command`).
    #[command(flatten)]
    pub globals: Globals,

    #[command(subcommand)]
    pub command: Command,
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
    /// The command line as it is parsed: named `cozyhr`, the chart directory `-C/--working-directory`
    /// as Go cozyhr spells it; `--context` is Go cozyhr's kube context everywhere, so `helm cozy diff`'s
    /// and `review`'s `--context N` (lines of context) is `--diff-context N` here.
    pub fn command() -> clap::Command {
        let lines = |cmd: clap::Command| cmd.mut_arg("context", |lines| lines.long("diff-context"));
        let cmd = cozyhr_shell::face::named(<Cli as clap::CommandFactory>::command(), Face::Cozyhr);
        crate::cli::chart_version_flags(cmd)
            .mut_arg("chart_dir", |dir| dir.long("working-directory"))
            .mut_subcommand("diff", lines)
            .mut_subcommand("review", lines)
    }

    /// `helm cozy`'s own checks, on the chart commands' flags.
    pub fn checked(self) -> Result<Cli, clap::Error> {
        match self.command {
            Command::Chart(command) => {
                let helm = crate::cli::Cli { globals: self.globals, command }.checked()?;
                Ok(Cli { globals: helm.globals, command: Command::Chart(helm.command) })
            }
            _ => Ok(self),
        }
    }
}

/// Runs `cozyhr ARGS...`.
pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let Cli { globals, command } = cli;
    match command {
        // Under this name, what names the program says this one.
        Command::Chart(crate::cli::Command::Completion(args)) => {
            cozyhr_shell::completion::generate(Cli::command(), Face::Cozyhr.program(), &args)
        }
        Command::Chart(crate::cli::Command::Version(args)) => {
            cozyhr_shell::version::version(Face::Cozyhr.program(), &args, &globals.cluster.options(), true).await
        }
        Command::Chart(command) => crate::commands::run(crate::cli::Cli { globals, command }).await,
        Command::Suspend(args) => lifecycle::suspend(&globals.cluster.connect().await?, &args).await,
        Command::Resume(args) => lifecycle::resume(&globals.cluster.connect().await?, &args).await,
        Command::Reconcile(args) => lifecycle::reconcile(&globals.cluster.connect().await?, &args).await,
        Command::Get(args) | Command::List(args) => lifecycle::get(&globals.cluster.connect().await?, &args).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each long name is one flag in every command: clap checks it when it builds a command line, which
    /// a debug build does for help and completion, and which `--context` (the kube context here, the
    /// lines of context in diff and review) once failed.
    #[test]
    fn every_command_line_holds_together() {
        Cli::command().debug_assert();
        let diff =
            Cli::command().try_get_matches_from(["cozyhr", "diff", "web", "--context", "c", "--diff-context", "5"]);
        assert!(diff.is_ok(), "{diff:?}");
    }
}
