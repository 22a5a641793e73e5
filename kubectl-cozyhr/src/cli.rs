//! Every flag of `kubectl cozyhr`, defined once, with its docs.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "kubectl-cozyhr",
    bin_name = "kubectl cozyhr",
    version = cozyhr::VERSION,
    about = "Inspect and steer Flux HelmReleases: get, suspend, resume, reconcile, status",
    propagate_version = true
)]
pub struct Cli {
    #[command(flatten)]
    pub cluster: ClusterFlags,

    #[command(subcommand)]
    pub command: Command,
}

/// kubectl hands these to a plugin unparsed, so we parse them ourselves, before or after the subcommand.
#[derive(Debug, Args, Clone)]
pub struct ClusterFlags {
    /// Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config).
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig context to use.
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,

    /// The namespace (default: the context's namespace, else "default").
    #[arg(short = 'n', long, global = true, value_name = "NS")]
    pub namespace: Option<String>,
}

impl ClusterFlags {
    pub fn options(&self) -> cozyhr::cluster::ClusterOptions {
        cozyhr::cluster::ClusterOptions {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
            namespace: self.namespace.clone(),
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print shell completion code (bash, zsh, fish, elvish, powershell).
    Completion(CompletionArgs),
    /// Print the version.
    Version,
}

#[derive(Debug, Args)]
pub struct CompletionArgs {
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Parses "5m", "30s", "1h30m", "500ms" like kubectl/flux durations.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    s.parse::<jiff::SignedDuration>()
        .ok()
        .and_then(|d| Duration::try_from(d).ok())
        .ok_or_else(|| format!("{s:?} is not a duration (examples: 30s, 5m, 1h)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_like_go() {
        assert_eq!(parse_duration("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("5m0s").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert!(parse_duration("soon").is_err());
    }
}
