//! The cluster flags of every face, defined once: the cluster a command reaches (kubeconfig, context,
//! namespace) and, for a HelmRelease installed elsewhere, its own cluster and identity.

use std::path::PathBuf;

use clap::Args;
use cozyhr::cluster::{Cluster, ClusterOptions};
use cozyhr::desired::target::TargetOptions;

/// The id of `--context` (`--kube-context` under Helm): not `context`, which is `diff`'s lines of
/// context.
pub const CONTEXT_ID: &str = "kube_context";

/// The cluster a command reaches, given before or after the subcommand. kubectl hands these to a plugin
/// unparsed, so each face parses them itself; `helm cozy` spells them as Helm does ([`for_helm`]).
#[derive(Debug, Args, Clone, Default)]
pub struct ClusterFlags {
    /// Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config).
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig context to use.
    #[arg(id = CONTEXT_ID, long = "context", global = true, value_name = "NAME")]
    pub context: Option<String>,

    /// The namespace of the HelmRelease (default: the context's namespace, else "default").
    #[arg(short = 'n', long, global = true, value_name = "NS")]
    pub namespace: Option<String>,
}

/// The cluster flags of `cmd` as `helm cozy` takes them: under Helm, `-n`, `--kube-context` and
/// `--kubeconfig` are consumed by Helm and handed over as HELM_NAMESPACE, HELM_KUBECONTEXT and
/// KUBECONFIG; standalone, it takes them itself, by Helm's names.
pub fn for_helm(cmd: clap::Command) -> clap::Command {
    cmd.mut_arg(CONTEXT_ID, |context| context.long("kube-context").env("HELM_KUBECONTEXT").hide_env(true))
        .mut_arg("namespace", |namespace| namespace.env("HELM_NAMESPACE").hide_env(true))
}

impl ClusterFlags {
    /// What the library connects with. An empty value (`--context ""`, `HELM_NAMESPACE=`) is one not
    /// given, as kubectl reads it.
    pub fn options(&self) -> ClusterOptions {
        ClusterOptions {
            kubeconfig: given_path(&self.kubeconfig),
            context: given(&self.context),
            namespace: given(&self.namespace),
            target: Default::default(),
        }
    }

    /// [`options`](Self::options) with how to reach the HelmRelease's own cluster.
    pub fn options_for(&self, target: &TargetFlags) -> ClusterOptions {
        ClusterOptions { target: target.options(), ..self.options() }
    }

    /// The cluster these flags name, connected ([`ClusterOptions::connect`]).
    pub async fn connect(&self) -> Result<Cluster, cozyhr::Error> {
        self.options().connect().await
    }

    /// The cluster these flags name, connected, with how to reach the HelmRelease's own cluster.
    pub async fn connect_for(&self, target: &TargetFlags) -> Result<Cluster, cozyhr::Error> {
        self.options_for(target).connect().await
    }
}

/// The cluster a HelmRelease installs into when its `spec.kubeConfig` names another one, and as whom
/// cozyhr acts there.
#[derive(Debug, Args, Clone, Default)]
pub struct TargetFlags {
    /// A kubeconfig that reaches, from here, the cluster the HelmRelease's spec.kubeConfig Secret names
    /// (for an address that only works inside the platform); checked to be the same cluster.
    #[arg(id = "target_kubeconfig", long = "target-kubeconfig", value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,

    /// The context of --target-kubeconfig to use (default: its current context).
    #[arg(id = "target_context", long = "target-context", value_name = "NAME", requires = "target_kubeconfig")]
    pub context: Option<String>,

    /// Act with your own rights, not as the HelmRelease's spec.serviceAccountName (which helm-controller,
    /// and by default cozyhr, impersonates).
    #[arg(id = "as_user", long = "as-user")]
    pub as_user: bool,
}

impl TargetFlags {
    /// What the library reaches the release's cluster with; empty values are not given, as above.
    pub fn options(&self) -> TargetOptions {
        TargetOptions {
            kubeconfig: given_path(&self.kubeconfig),
            context: given(&self.context),
            own_rights: self.as_user,
        }
    }
}

/// A value given on the command line, or None for an empty one.
fn given(value: &Option<String>) -> Option<String> {
    value.clone().filter(|v| !v.is_empty())
}

fn given_path(path: &Option<PathBuf>) -> Option<PathBuf> {
    path.clone().filter(|p| !p.as_os_str().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        cluster: ClusterFlags,
        #[command(flatten)]
        target: TargetFlags,
    }

    fn options(args: &[&str]) -> ClusterOptions {
        let cli = Cli::try_parse_from(std::iter::once("cli").chain(args.iter().copied())).expect("parses");
        cli.cluster.options_for(&cli.target)
    }

    #[test]
    fn empty_values_are_not_given() {
        let o = options(&["--context=", "-n", "", "--target-kubeconfig=/t", "--target-context="]);
        assert_eq!((o.context, o.namespace, o.target.context), (None, None, None));
        // clap takes no empty path; a completion line can hold one.
        let empty = ClusterFlags { kubeconfig: Some(PathBuf::new()), ..Default::default() };
        assert_eq!(empty.options().kubeconfig, None);
        let o =
            options(&["--kubeconfig=/k", "--context=c", "-n", "ns", "--target-kubeconfig=/t", "--target-context=t"]);
        assert_eq!(o.kubeconfig.as_deref(), Some(std::path::Path::new("/k")));
        assert_eq!((o.context.as_deref(), o.namespace.as_deref()), (Some("c"), Some("ns")));
        assert_eq!(o.target.context.as_deref(), Some("t"));
    }

    #[test]
    fn helm_spells_the_context_its_way() {
        let cmd = for_helm(Cli::command());
        let context = cmd.get_arguments().find(|a| a.get_id() == CONTEXT_ID).expect("the context flag");
        assert_eq!(context.get_long(), Some("kube-context"));
        let m = cmd.try_get_matches_from(["cli", "--kube-context", "c"]).expect("parses");
        assert_eq!(m.get_one::<String>(CONTEXT_ID).map(String::as_str), Some("c"));
    }
}
