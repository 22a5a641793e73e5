//! Cluster access the way kubectl does it: `--kubeconfig` (else `KUBECONFIG`, a list of files merged in
//! order, else `~/.kube/config`, else in-cluster), `--context`, and `-n` (else the context's namespace,
//! else `default`). Exec credential plugins work because kube-rs implements them.

use std::path::PathBuf;

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

use crate::error::{Error, Result};

/// What the user said about which cluster and namespace to use. Both binaries fill this from their flags
/// (helm-cozy also from the environment Helm hands its plugins).
#[derive(Debug, Clone, Default)]
pub struct ClusterOptions {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    pub namespace: Option<String>,
}

/// A connected client plus the namespace the user meant when they did not name one.
#[derive(Clone)]
pub struct Cluster {
    pub client: Client,
    pub namespace: String,
    /// The API server URL, for error messages and the discovery cache.
    pub server: String,
    /// What the user said, so that the helm processes cozyhr starts reach the same cluster.
    pub options: ClusterOptions,
}

impl ClusterOptions {
    /// Resolves the kubeconfig like kubectl and builds one client. Nothing is sent to the server yet.
    pub async fn connect(&self) -> Result<Cluster> {
        let config = self.config().await?;
        let server = config.cluster_url.to_string();
        let namespace = self.namespace.clone().unwrap_or_else(|| config.default_namespace.clone());
        let client = Client::try_from(config).map_err(|e| Error::Kubeconfig(e.to_string()))?;
        Ok(Cluster { client, namespace, server, options: self.clone() })
    }

    /// Whether any cluster is configured at all, as kubectl would find one: a kubeconfig named by flag
    /// or `KUBECONFIG`, `~/.kube/config`, or a Pod's service account. (Reachable is another question.)
    pub fn is_configured(&self) -> bool {
        self.kubeconfig.is_some()
            || std::env::var_os("KUBECONFIG").is_some_and(|v| !v.is_empty())
            || std::env::var_os("HOME").is_some_and(|h| PathBuf::from(h).join(".kube/config").is_file())
            || std::env::var_os("KUBERNETES_SERVICE_HOST").is_some()
    }

    async fn config(&self) -> Result<Config> {
        let options = KubeConfigOptions { context: self.context.clone(), ..Default::default() };
        let kubeconfig = match &self.kubeconfig {
            Some(path) => {
                Kubeconfig::read_from(path).map_err(|e| Error::Kubeconfig(format!("{}: {e}", path.display())))?
            }
            None => match Kubeconfig::read() {
                Ok(kc) => kc,
                // No kubeconfig anywhere: like kubectl, try the in-cluster service account.
                Err(read_err) => {
                    return match Config::incluster() {
                        Ok(cfg) if self.context.is_none() => Ok(cfg),
                        _ => Err(Error::Kubeconfig(format!("{read_err} (set KUBECONFIG or pass --kubeconfig)"))),
                    };
                }
            },
        };
        Config::from_custom_kubeconfig(kubeconfig, &options).await.map_err(|e| Error::Kubeconfig(e.to_string()))
    }
}

impl Cluster {
    /// helm's flags for this cluster: `--kubeconfig` and `--kube-context` where the user named them
    /// (otherwise helm resolves them from the same environment as we did: KUBECONFIG, HELM_KUBECONTEXT).
    pub fn helm_args(&self) -> Vec<std::ffi::OsString> {
        let mut args = Vec::new();
        if let Some(kubeconfig) = &self.options.kubeconfig {
            args.push("--kubeconfig".into());
            args.push(kubeconfig.as_os_str().to_owned());
        }
        if let Some(context) = &self.options.context {
            args.push("--kube-context".into());
            args.push(context.into());
        }
        args
    }

    /// Turns a client error into the library's error with this cluster's address attached.
    pub fn error(&self, err: kube::Error) -> Error {
        Error::from_kube(err, &self.server)
    }
}
