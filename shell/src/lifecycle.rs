//! The lifecycle verbs' flags (`get`, `suspend`, `resume`, `reconcile`), defined once for every face that
//! offers them (`kubectl cozyhr`, `flux cozyhr`, `cozyhr`), and the glue from each to its one library
//! call.

use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, ValueEnum};
use cozyhr::cluster::Cluster;
use cozyhr::flux::bulk::Selection;
use cozyhr::flux::condition::StatusSelector;
use cozyhr::views::get::{Format, Query};

/// Which namespaces a command covers.
#[derive(Debug, Args, Clone, Copy)]
pub struct Scope {
    /// Across all namespaces.
    #[arg(short = 'A', long = "all-namespaces")]
    pub all_namespaces: bool,
}

/// How long to wait for helm-controller.
#[derive(Debug, Args, Clone, Copy)]
pub struct Wait {
    /// How long to wait for the controller (e.g. 30s, 5m, 1h).
    #[arg(long, default_value = "5m", value_parser = cozyhr::support::duration::parse, value_name = "DURATION")]
    pub timeout: Duration,
}

#[derive(Debug, Args)]
pub struct GetArgs {
    /// HelmRelease names (default: all in the namespace).
    pub names: Vec<String>,

    #[command(flatten)]
    pub scope: Scope,

    /// Output format.
    #[arg(short = 'o', long, value_enum, value_name = "FORMAT")]
    pub output: Option<Output>,

    /// Only objects whose labels match this selector (e.g. app=web,tier!=db).
    #[arg(short = 'l', long, value_name = "SELECTOR")]
    pub selector: Option<String>,

    /// Only objects whose condition has this status, like flux's (e.g. ready=false, released=true).
    #[arg(long, value_name = "CONDITION=STATUS")]
    pub status_selector: Option<StatusSelector>,

    /// After listing, keep printing a row for every change until interrupted.
    #[arg(short = 'w', long)]
    pub watch: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// The table with AGE, CHART and SOURCE added.
    Wide,
    Yaml,
    Json,
    /// kind.group/name, one per line.
    Name,
}

/// The objects a bulk verb applies to: names, or `--all`.
#[derive(Debug, Args)]
pub struct Targets {
    /// HelmRelease names.
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub names: Vec<String>,

    /// Every HelmRelease in the namespace (with -A, in all namespaces).
    #[arg(long)]
    pub all: bool,

    /// With --all: only HelmReleases whose labels match this selector (e.g. tier=db,env!=prod).
    #[arg(short = 'l', long, value_name = "SELECTOR", requires = "all")]
    pub selector: Option<String>,

    // Its help names the face's own chart command (`chart_help`).
    #[arg(long, value_name = "NAME", requires = "all", help = chart_help())]
    pub chart: Option<String>,

    #[command(flatten)]
    pub scope: Scope,
}

/// `--chart`'s help. It names the chart command as the face running says it: `cozyhr apply --all` under
/// `cozyhr`, else `helm cozy apply --all`.
fn chart_help() -> String {
    format!(
        "With --all: only HelmReleases that deploy this chart (by the chart name of the release helm-controller last made, else their spec.chart): the set `{} apply --all` applied",
        cozyhr::support::output::chart_command()
    )
}

#[derive(Debug, Args)]
pub struct SuspendArgs {
    #[command(flatten)]
    pub targets: Targets,
}

#[derive(Debug, Args)]
pub struct ResumeArgs {
    #[command(flatten)]
    pub targets: Targets,

    /// Wait for helm-controller to reconcile the resumed releases (--wait=false to return at once).
    #[arg(long, default_value_t = true, num_args = 0..=1, default_missing_value = "true", action = clap::ArgAction::Set, value_name = "BOOL")]
    pub wait: bool,

    #[command(flatten)]
    pub wait_for: Wait,
}

#[derive(Debug, Args)]
pub struct ReconcileArgs {
    /// The HelmRelease.
    pub name: String,

    /// Reconcile the chart source first (HelmChart and its repository, OCIRepository, or the sources of
    /// the ArtifactGenerator behind an ExternalArtifact).
    #[arg(long)]
    pub with_source: bool,

    /// Force a one-off Helm upgrade even when nothing changed (reconcile.fluxcd.io/forceAt).
    #[arg(long)]
    pub force: bool,

    /// Reset the failure counters so that remediation retries start over (reconcile.fluxcd.io/resetAt).
    #[arg(long)]
    pub reset: bool,

    #[command(flatten)]
    pub wait_for: Wait,
}

impl Targets {
    pub fn selection(&self) -> Selection<'_> {
        Selection {
            names: &self.names,
            all: self.all,
            all_namespaces: self.scope.all_namespaces,
            selector: self.selector.as_deref(),
            chart: self.chart.as_deref(),
        }
    }
}

/// `get|list|ls [NAME...]`: a table like `flux get hr`, `-o wide|yaml|json|name`, `-l`,
/// `--status-selector`, `-A`, `-w`. Like kubectl, a missing name is said after what exists is printed,
/// and the exit code is 1.
pub async fn get(cluster: &Cluster, args: &GetArgs) -> anyhow::Result<ExitCode> {
    let format = match args.output {
        None => Format::Table,
        Some(Output::Wide) => Format::Wide,
        Some(Output::Yaml) => Format::Yaml,
        Some(Output::Json) => Format::Json,
        Some(Output::Name) => Format::Name,
    };
    let query = Query {
        names: &args.names,
        all_namespaces: args.scope.all_namespaces,
        selector: args.selector.as_deref(),
        status_selector: args.status_selector.as_ref(),
        format,
        watch: args.watch,
    };
    let all_found = cozyhr::views::get::print(cluster, &query).await?;
    Ok(if all_found { ExitCode::SUCCESS } else { crate::Exit::Failure.into() })
}

/// `suspend NAME...|--all`: `spec.suspend: true`, like `flux suspend hr`.
pub async fn suspend(cluster: &Cluster, args: &SuspendArgs) -> anyhow::Result<ExitCode> {
    cozyhr::flux::bulk::suspend(cluster, &args.targets.selection()).await?;
    Ok(ExitCode::SUCCESS)
}

/// `resume NAME...|--all`: the hand-back in one write, then helm-controller's answer
/// ([`cozyhr::apply::handback::resume`]).
pub async fn resume(cluster: &Cluster, args: &ResumeArgs) -> anyhow::Result<ExitCode> {
    cozyhr::apply::handback::resume(cluster, &args.targets.selection(), args.wait, args.wait_for.timeout).await?;
    Ok(ExitCode::SUCCESS)
}

/// `reconcile NAME [--with-source] [--force] [--reset]`: Flux's requestedAt protocol, waiting for
/// helm-controller's answer ([`cozyhr::flux::reconcile`]).
pub async fn reconcile(cluster: &Cluster, args: &ReconcileArgs) -> anyhow::Result<ExitCode> {
    let request = cozyhr::flux::reconcile::Request {
        name: &args.name,
        with_source: args.with_source,
        force: args.force,
        reset: args.reset,
        timeout: args.wait_for.timeout,
    };
    cozyhr::flux::reconcile::reconcile(cluster, &request).await?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[derive(Debug, clap::Parser)]
    struct Cli {
        #[command(flatten)]
        targets: Targets,
    }

    /// `--chart` names the command that applied the set as the face running says it (in tests, none is
    /// set: `helm cozy`, as under `kubectl cozyhr` and `flux cozyhr`).
    #[test]
    fn chart_names_the_faces_chart_command() {
        let cmd = Cli::command();
        let chart = cmd.get_arguments().find(|a| a.get_id() == "chart").expect("--chart");
        let help = chart.get_help().expect("a help").to_string();
        assert!(help.ends_with("else their spec.chart): the set `helm cozy apply --all` applied"), "{help}");
    }
}
