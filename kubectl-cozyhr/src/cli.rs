//! Every flag of `kubectl cozyhr`, defined once, with its docs.

use clap::{Args, Parser, Subcommand, ValueEnum};
pub use cozyhr_shell::Color;
use cozyhr_shell::completion::CompletionArgs;
use cozyhr_shell::diff::{DiffOutput, DiffPrintFlags};
pub use cozyhr_shell::lifecycle::{GetArgs, ReconcileArgs, ResumeArgs, SuspendArgs};
use cozyhr_shell::{ClusterFlags, DocumentFormat, Face};

/// The command line under the name of `face` ([`Face::Kubectl`] or [`Face::Flux`]): help, errors and
/// `version` say the name it was called by.
pub fn command(face: Face) -> clap::Command {
    cozyhr_shell::face::named(<Cli as clap::CommandFactory>::command(), face)
}

#[derive(Debug, Parser)]
#[command(about = "Inspect and steer Flux HelmReleases: get, suspend, resume, reconcile, status, tree, drift")]
pub struct Cli {
    #[command(flatten)]
    pub cluster: ClusterFlags,

    /// When to colour output: auto (a terminal, and NO_COLOR unset), always or never.
    #[arg(long, global = true, value_enum, default_value_t = Color::Auto, value_name = "WHEN")]
    pub color: Color,

    /// Log verbosity like kubectl's -v: 4 and up logs requests, 6 and up everything.
    #[arg(short = 'v', long = "v", global = true, value_name = "LEVEL")]
    pub verbosity: Option<u8>,

    /// Across all namespaces (also accepted after the subcommand, like kubectl's -A).
    #[arg(short = 'A', long = "all-namespaces", hide = true)]
    pub all_namespaces: bool,

    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// `-A` before the subcommand means what it means after it, as with kubectl, and is a usage error
    /// before a subcommand that does not take it.
    pub fn with_scope_merged(mut self) -> Result<Cli, clap::Error> {
        if self.all_namespaces {
            match &mut self.command {
                Command::Get(a) => a.scope.all_namespaces = true,
                Command::Suspend(a) => a.targets.scope.all_namespaces = true,
                Command::Resume(a) => a.targets.scope.all_namespaces = true,
                other => {
                    let name = format!("{other:?}").split('(').next().unwrap_or_default().to_lowercase();
                    return Err(clap::Error::raw(
                        clap::error::ErrorKind::ArgumentConflict,
                        format!("-A/--all-namespaces does not apply to {name}: name one HelmRelease with -n NAMESPACE"),
                    ));
                }
            }
        }
        Ok(self)
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List HelmReleases, or show the named ones, as a table like `flux get hr` or as YAML/JSON.
    #[command(visible_aliases = ["list", "ls"])]
    Get(GetArgs),
    /// Suspend HelmReleases: Flux stops acting on them until they are resumed.
    Suspend(SuspendArgs),
    /// Resume HelmReleases and wait until helm-controller has reconciled them.
    Resume(ResumeArgs),
    /// Ask helm-controller to reconcile a HelmRelease now and wait for the result.
    Reconcile(ReconcileArgs),
    /// Show one HelmRelease in one screen: conditions, history, failures, dependencies, dependents, events.
    #[command(alias = "describe")]
    Status(StatusArgs),
    /// Show the dependsOn graph around a HelmRelease: what it depends on and what depends on it.
    Tree(TreeArgs),
    /// Show the drift helm-controller's drift detection sees: the stored release against the live objects.
    Drift(DriftArgs),
    /// Print shell completion code (bash, zsh, fish, elvish, powershell).
    Completion(CompletionArgs),
    /// Print the version, and the cluster's helm-controller with the Helm inside it.
    Version(cozyhr_shell::version::VersionArgs),
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The HelmRelease.
    pub name: String,

    #[command(flatten)]
    pub target: cozyhr_shell::TargetFlags,
}

#[derive(Debug, Args)]
pub struct TreeArgs {
    /// The HelmRelease.
    pub name: String,

    /// Output format (default: a tree).
    #[arg(short = 'o', long, value_enum, value_name = "FORMAT")]
    pub output: Option<DocumentFormat>,
}

#[derive(Debug, Args)]
pub struct DriftArgs {
    /// The HelmRelease.
    pub name: String,

    #[command(flatten)]
    pub print: DiffPrintFlags<DriftFormat>,

    #[command(flatten)]
    pub target: cozyhr_shell::TargetFlags,
}

/// `drift -o`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DriftFormat {
    /// A line diff per drifted object, then a summary.
    Diff,
    /// Every object with its state, reason, ignored paths and diff, and the counts.
    Json,
}

impl DiffOutput for DriftFormat {
    const DEFAULT: &'static str = "diff";
    const HELP: &'static str = "Output format";
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn parse(args: &[&str]) -> Cli {
        Cli::try_parse_from(std::iter::once("kubectl-cozyhr").chain(args.iter().copied()))
            .expect("parses")
            .with_scope_merged()
            .expect("-A applies")
    }

    #[test]
    fn flags_before_and_after_the_subcommand_are_the_same() {
        for args in [
            &["-n", "ns", "get", "-A"][..],
            &["get", "-n", "ns", "-A"],
            &["get", "-A", "--namespace=ns"],
            &["-A", "-n", "ns", "get"],
        ] {
            let cli = parse(args);
            assert_eq!(cli.cluster.namespace.as_deref(), Some("ns"), "{args:?}");
            let Command::Get(get) = cli.command else { panic!("not get") };
            assert!(get.scope.all_namespaces);
        }
        let status = Cli::try_parse_from(["kubectl-cozyhr", "-A", "status", "x"]).expect("parses");
        let err = status.with_scope_merged().expect_err("-A does not apply to status").to_string();
        assert!(err.contains("does not apply to status"), "{err}");
        let cli = parse(&["--context", "c", "ls", "--kubeconfig", "/k"]);
        assert_eq!(cli.cluster.options().context.as_deref(), Some("c"));
        assert_eq!(cli.cluster.context.as_deref(), Some("c"));
        assert_eq!(cli.cluster.kubeconfig.as_deref(), Some(std::path::Path::new("/k")));
    }

    #[test]
    fn resume_waits_unless_told_not_to() {
        let Command::Resume(r) = parse(&["resume", "a"]).command else { panic!() };
        assert!(r.wait);
        assert_eq!(r.wait_for.timeout, Duration::from_secs(300));
        let Command::Resume(r) = parse(&["resume", "--wait=false", "a", "--timeout", "30s"]).command else { panic!() };
        assert!(!r.wait);
        assert_eq!(r.wait_for.timeout, Duration::from_secs(30));
        assert!(Cli::try_parse_from(["kubectl-cozyhr", "resume"]).is_err(), "a name or --all is required");
        assert!(Cli::try_parse_from(["kubectl-cozyhr", "suspend", "a", "--all"]).is_err());
    }
}
