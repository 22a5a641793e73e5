//! Cluster access the way kubectl does it: `--kubeconfig` (else `KUBECONFIG`, a list of files merged in
//! order, else `~/.kube/config`, else in-cluster), `--context`, and `-n` (else the context's namespace,
//! else `default`). Exec credential plugins work because kube-rs implements them.

pub mod connection;
pub mod discovery;
pub mod helmstore;
pub mod kstatus;
pub mod live;
pub mod manifests;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams};
use kube::config::{KubeConfigOptions, Kubeconfig, KubeconfigError};
use kube::{Client, Config};

use crate::support::error::{Error, KubeconfigFrom, Result};

pub use connection::Connection;

/// How long connecting to an API server may take, TCP and TLS handshake together (kube-rs's default is
/// 30 s): an address that accepts connections and never answers (a dead load balancer, a half-open
/// tunnel) fails as soon as client-go's TLS handshake timeout (10 s) would fail it. A request on a
/// connection made is not bounded here (a read timeout would also cut watches that are quiet): the
/// waits are bounded by each command's --timeout.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A client for `config`, its connection bounded by [`CONNECT_TIMEOUT`].
pub(crate) fn client(mut config: Config) -> std::result::Result<Client, kube::Error> {
    config.connect_timeout = Some(CONNECT_TIMEOUT);
    Client::try_from(config)
}

/// What the user said about which cluster and namespace to use. Both binaries fill this from their flags
/// (helm-cozy also from the environment Helm hands its plugins).
#[derive(Debug, Clone, Default)]
pub struct ClusterOptions {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    pub namespace: Option<String>,
    /// How to reach a HelmRelease's own cluster when it is not this one (see [`crate::desired::target`]).
    pub target: TargetOptions,
}

/// What the user said about the release's own cluster (`--target-kubeconfig`, `--target-context`,
/// `--as-user`).
#[derive(Debug, Clone, Default)]
pub struct TargetOptions {
    /// A kubeconfig that reaches, from here, the cluster the HelmRelease's `spec.kubeConfig` names.
    pub kubeconfig: Option<PathBuf>,
    /// The context of that kubeconfig to use (default: its current context).
    pub context: Option<String>,
    /// Keep the user's own rights even where helm-controller impersonates `spec.serviceAccountName`.
    pub own_rights: bool,
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
    /// The user helm cozy impersonates here (a HelmRelease's `spec.serviceAccountName`), for helm too.
    pub impersonating: Option<String>,
    /// A private kubeconfig file that `options.kubeconfig` names for helm (a release's own cluster, from
    /// a Secret): kept while any copy of this cluster lives, removed after.
    _kubeconfig_file: Option<Arc<tempfile::NamedTempFile>>,
}

impl ClusterOptions {
    /// Resolves the kubeconfig like kubectl and builds one client. Nothing is sent to the server yet.
    pub async fn connect(&self) -> Result<Cluster> {
        let config = self.config().await?;
        let server = config.cluster_url.to_string();
        let namespace = self.namespace.clone().unwrap_or_else(|| config.default_namespace.clone());
        let client = client(config).map_err(|e| Error::Kubeconfig(e.to_string()))?;
        Ok(Cluster { client, namespace, server, options: self.clone(), impersonating: None, _kubeconfig_file: None })
    }

    /// Whether any cluster is configured at all, as kubectl would find one: a kubeconfig named by flag
    /// or `KUBECONFIG`, `~/.kube/config`, or a Pod's service account. (Reachable is another question.)
    pub fn is_configured(&self) -> bool {
        self.kubeconfig.is_some()
            || std::env::var_os("KUBECONFIG").is_some_and(|v| !v.is_empty())
            || std::env::var_os("HOME").is_some_and(|h| PathBuf::from(h).join(".kube/config").is_file())
            || std::env::var_os("KUBERNETES_SERVICE_HOST").is_some()
    }

    /// The names of the kubeconfig's contexts (`--kubeconfig`, else `KUBECONFIG`, else `~/.kube/config`),
    /// to offer for `--context`.
    pub fn context_names(&self) -> Result<Vec<String>> {
        let kubeconfig = match &self.kubeconfig {
            Some(path) => Kubeconfig::read_from(path),
            None => Kubeconfig::read(),
        };
        let kubeconfig = kubeconfig.map_err(|e| Error::Kubeconfig(e.to_string()))?;
        Ok(kubeconfig.contexts.into_iter().map(|c| c.name).collect())
    }

    async fn config(&self) -> Result<Config> {
        let options = KubeConfigOptions { context: self.context.clone(), ..Default::default() };
        let (files, from) = match &self.kubeconfig {
            Some(path) => (vec![path.clone()], KubeconfigFrom::Flag),
            None => match kubeconfig_env() {
                Some(files) => (files, KubeconfigFrom::Env),
                None => match std::env::home_dir() {
                    Some(home) => (vec![home.join(".kube/config")], KubeconfigFrom::Default),
                    None => (Vec::new(), KubeconfigFrom::Default),
                },
            },
        };
        let kubeconfig = match read_kubeconfig(&files, from) {
            Ok(kc) => kc,
            // No kubeconfig found (and none named by flag): like kubectl, try the in-cluster service account.
            Err(err) if from != KubeconfigFrom::Flag => {
                return match Config::incluster() {
                    Ok(cfg) if self.context.is_none() => Ok(cfg),
                    _ => Err(err),
                };
            }
            Err(err) => return Err(err),
        };
        check_context(&kubeconfig, self.context.as_deref(), &files)?;
        Config::from_custom_kubeconfig(kubeconfig, &options).await.map_err(|e| Error::Kubeconfig(e.to_string()))
    }
}

/// The files `KUBECONFIG` lists, as kube-rs reads it (empty entries skipped; None when it lists none).
fn kubeconfig_env() -> Option<Vec<PathBuf>> {
    let value = std::env::var_os("KUBECONFIG")?;
    let files: Vec<PathBuf> = std::env::split_paths(&value).filter(|p| !p.as_os_str().is_empty()).collect();
    (!files.is_empty()).then_some(files)
}

/// Reads and merges `files` in order (the first to set a value wins), naming the file that fails: kube-rs
/// would name it only when it cannot be read, and quoted twice.
fn read_kubeconfig(files: &[PathBuf], from: KubeconfigFrom) -> Result<Kubeconfig> {
    if files.is_empty() {
        return Err(Error::Kubeconfig(
            "HOME is not set, so there is no ~/.kube/config: pass --kubeconfig FILE or set KUBECONFIG".into(),
        ));
    }
    files.iter().try_fold(Kubeconfig::default(), |merged, path| {
        let unreadable = |e: KubeconfigError| {
            let reason = match e {
                KubeconfigError::ReadConfig(io, _) => io.to_string(),
                // A YAML error goes on with a snippet of the file on more lines: its first says where.
                other => other.to_string().lines().next().unwrap_or_default().to_string(),
            };
            Error::KubeconfigUnreadable { path: path.clone(), from, reason }
        };
        Kubeconfig::read_from(path).and_then(|kc| merged.merge(kc)).map_err(unreadable)
    })
}

/// The context to use (`wanted`, else the current one) must be in the kubeconfig; kube-rs would only say
/// "failed to load current context" (or "failed to determine" it), whichever it was.
fn check_context(kubeconfig: &Kubeconfig, wanted: Option<&str>, files: &[PathBuf]) -> Result<()> {
    let files = || files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", ");
    let available = || kubeconfig.contexts.iter().map(|c| c.name.clone()).collect();
    let (name, current) = match (wanted, kubeconfig.current_context.as_deref()) {
        (Some(name), _) => (name, false),
        (None, Some(name)) if !name.is_empty() => (name, true),
        _ => return Err(Error::NoCurrentContext { files: files(), available: available() }),
    };
    if kubeconfig.contexts.iter().any(|c| c.name == name) {
        return Ok(());
    }
    Err(Error::ContextNotFound { context: name.to_string(), current, files: files(), available: available() })
}

impl Cluster {
    /// The same cluster, with `namespace` as the one meant when none is named (for helm too).
    pub fn in_namespace(&self, namespace: &str) -> Cluster {
        let mut c = self.clone();
        c.namespace = namespace.to_string();
        c.options.namespace = Some(namespace.to_string());
        c
    }

    /// A release's own cluster, connected already (see [`crate::desired::target`]): helm reaches it through
    /// `options.kubeconfig` and `options.context`, which `kubeconfig_file` keeps in existence when it is
    /// a private copy.
    pub(crate) fn remote(
        client: Client,
        namespace: String,
        server: String,
        options: ClusterOptions,
        kubeconfig_file: Option<Arc<tempfile::NamedTempFile>>,
    ) -> Cluster {
        Cluster { client, namespace, server, options, impersonating: None, _kubeconfig_file: kubeconfig_file }
    }

    /// This cluster as `user` (impersonation: the `Impersonate-User` header on every request, and
    /// `--kube-as-user` for helm). The service account groups are added by the API server.
    pub(crate) async fn impersonating(&self, user: &str) -> Result<Cluster> {
        // The same kubeconfig and context this cluster was reached with (a remote one's options name its file).
        let mut config = self.options.config().await?;
        config.auth_info.impersonate = Some(user.to_string());
        let client = client(config).map_err(|e| Error::Kubeconfig(e.to_string()))?;
        Ok(Cluster { client, impersonating: Some(user.to_string()), ..self.clone() })
    }

    /// helm's flags for this cluster: `--kubeconfig` and `--kube-context` where the user named them
    /// (otherwise helm resolves them from the same environment as we did: KUBECONFIG, HELM_KUBECONTEXT),
    /// and `--kube-as-user` when impersonating.
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
        if let Some(user) = &self.impersonating {
            args.push("--kube-as-user".into());
            args.push(user.into());
        }
        args
    }

    /// The names of the cluster's namespaces, to offer for `-n`.
    pub async fn namespace_names(&self) -> Result<Vec<String>> {
        let api: Api<Namespace> = Api::all(self.client.clone());
        let list = api.list_metadata(&ListParams::default()).await.map_err(|e| self.error(e))?;
        Ok(list.items.into_iter().filter_map(|n| n.metadata.name).collect())
    }

    /// Turns a client error into the library's error with this cluster's address attached.
    /// The API server's version (`v1.37.2`): the one request that says whether the cluster answers.
    pub async fn server_version(&self) -> Result<String> {
        Ok(self.client.apiserver_version().await.map_err(|e| self.error(e))?.git_version)
    }

    pub fn error(&self, err: kube::Error) -> Error {
        Error::from_kube(err, &self.server)
    }
}
