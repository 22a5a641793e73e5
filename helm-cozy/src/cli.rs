//! Every flag of `helm cozy`, defined once, with its docs.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "helm-cozy",
    bin_name = "helm cozy",
    version = cozyhr::VERSION,
    about = "Show, diff, apply and delete a chart exactly as Flux helm-controller would install it",
    propagate_version = true
)]
pub struct Cli {
    #[command(flatten)]
    pub cluster: ClusterFlags,

    #[command(subcommand)]
    pub command: Command,
}

/// Under Helm, `-n`, `--kube-context` and `--kubeconfig` are consumed by Helm and handed over as
/// HELM_NAMESPACE, HELM_KUBECONTEXT and KUBECONFIG; standalone, we take them ourselves.
#[derive(Debug, Args, Clone)]
pub struct ClusterFlags {
    /// Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config).
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig context to use.
    #[arg(long = "kube-context", global = true, value_name = "NAME", env = "HELM_KUBECONTEXT", hide_env = true)]
    pub context: Option<String>,

    /// The namespace of the HelmRelease (default: the context's namespace, else "default").
    #[arg(short = 'n', long, global = true, value_name = "NS", env = "HELM_NAMESPACE", hide_env = true)]
    pub namespace: Option<String>,
}

impl ClusterFlags {
    pub fn options(&self) -> cozyhr::cluster::ClusterOptions {
        let nonempty = |s: &Option<String>| s.clone().filter(|s| !s.is_empty());
        cozyhr::cluster::ClusterOptions {
            kubeconfig: self.kubeconfig.clone(),
            context: nonempty(&self.context),
            namespace: nonempty(&self.namespace),
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
