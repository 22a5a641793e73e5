//! The release's own cluster: where helm-controller renders, installs and stores a HelmRelease's release,
//! and as whom.
//!
//! Usually that is the cluster the HelmRelease lives in, with helm-controller's own rights. Two fields
//! change it, and helm cozy follows both exactly because acting on the wrong cluster is the one mistake
//! it must never make:
//! - `spec.kubeConfig.secretRef`: the kubeconfig in that Secret of the HelmRelease's namespace (`key`,
//!   else `value`, else `value.yaml`, as helm-controller reads it) names another cluster. Discovery and
//!   `.Capabilities`, `lookup`, the live objects and dry runs of diff, Helm's storage and the install all
//!   go there; the HelmRelease, its `valuesFrom` sources, its status and Events stay where it lives. Any
//!   failure to read or reach that cluster is an error before anything changes: there is no fallback to
//!   the current context. Such kubeconfigs often name an address that only works inside the platform;
//!   `--target-kubeconfig` (and `--target-context`) point at the same cluster from here, and it is
//!   checked to be the same one (by its certificate authority, else by the stored release).
//! - `spec.serviceAccountName`: helm-controller impersonates `system:serviceaccount:<namespace>:<name>`
//!   (in the release's own cluster). helm cozy does the same when the user may impersonate that account,
//!   and otherwise says in one line that it uses the user's own rights; `--as-user` chooses them.
//!
//! Resolving costs nothing for a release in its own cluster without a service account: no request.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::authorization::v1::{ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec};
use k8s_openapi::api::core::v1::Secret;
use kube::Config;
use kube::api::{Api, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};

pub use crate::cluster::TargetOptions;
use crate::cluster::{Cluster, ClusterOptions};
use crate::flux::HelmRelease;
use crate::support::error::{Result, TargetError};

/// The cluster a release lives in, the way helm cozy reaches it, and as whom it acts there.
#[derive(Clone)]
pub struct Target {
    /// Discovery, lookup, live objects, Helm's storage and helm itself go here.
    pub cluster: Cluster,
    /// The same cluster with the user's own rights, for what is helm cozy's own (its release lock),
    /// not helm-controller's.
    pub own: Cluster,
    pub place: Place,
    pub identity: Identity,
}

/// Where the release's cluster is, from the HelmRelease's point of view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// The cluster the HelmRelease lives in.
    Home,
    /// Another cluster, named by the kubeconfig in Secret `secret` (`namespace/name`).
    Remote {
        secret: String,
        /// The API server helm cozy talks to.
        server: String,
        /// `--target-kubeconfig` (the file and context) when it was given instead of the Secret's address.
        via_flag: Option<String>,
    },
}

/// As whom helm cozy acts in the release's cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identity {
    /// With the user's credentials, as helm-controller acts with its own (no `serviceAccountName`).
    User,
    /// Impersonating the service account (user name `system:serviceaccount:NS:NAME`), as helm-controller does.
    ServiceAccount(String),
    /// helm-controller would impersonate this account, but helm cozy uses the user's own rights:
    /// `--as-user`, or the user may not impersonate it.
    InsteadOf { account: String, chosen: bool },
}

impl Target {
    /// The release's cluster is the HelmRelease's own, reached the same way.
    pub fn home(cluster: &Cluster) -> Target {
        Target { cluster: cluster.clone(), own: cluster.clone(), place: Place::Home, identity: Identity::User }
    }

    /// Whether discovery of the HelmRelease's cluster is discovery of the release's: the same server
    /// (whoever asks, the served APIs are the same).
    pub fn shares_discovery_with_home(&self) -> bool {
        self.place == Place::Home
    }

    /// One line for people on where and as whom the release is rendered and installed, when it is not
    /// simply the current cluster with the user's rights.
    pub fn describe(&self) -> Option<String> {
        let place = match &self.place {
            Place::Home => None,
            Place::Remote { secret, server, via_flag: None } => {
                Some(format!("the release's own cluster at {server} (kubeconfig from Secret {secret})"))
            }
            Place::Remote { secret, server, via_flag: Some(via) } => Some(format!(
                "the release's own cluster at {server} ({via}, checked to be the cluster of Secret {secret})"
            )),
        };
        let who = match &self.identity {
            Identity::User => None,
            Identity::ServiceAccount(sa) => Some(format!("as {sa}, as helm-controller does (spec.serviceAccountName)")),
            Identity::InsteadOf { account, chosen: true } => {
                Some(format!("with your own rights, not as {account} (--as-user)"))
            }
            // Said as a warning of its own when resolved.
            Identity::InsteadOf { .. } => None,
        };
        match (place, who) {
            (None, None) => None,
            (Some(p), None) => Some(format!("working in {p}")),
            (None, Some(w)) => Some(format!("working {w}")),
            (Some(p), Some(w)) => Some(format!("working in {p}, {w}")),
        }
    }
}

/// How long a remote API server may take to answer its first request before it counts as unreachable
/// (the connection itself is bounded by [`crate::cluster::CONNECT_TIMEOUT`]).
const REACH_TIMEOUT: Duration = Duration::from_secs(10);

/// The service account user name helm-controller impersonates for `spec.serviceAccountName`.
pub fn service_account_user(namespace: &str, name: &str) -> String {
    format!("system:serviceaccount:{namespace}:{name}")
}

/// The release's own cluster for `hr`, which lives in `home`, as helm-controller would resolve it (see
/// the module docs). Says on stderr what is not the plain current cluster.
pub async fn resolve(home: &Cluster, hr: &HelmRelease) -> Result<Target> {
    let target = resolve_quietly(home, hr).await?;
    if let Identity::InsteadOf { account, chosen: false } = &target.identity {
        crate::support::output::progress::warning(format!(
            "helm-controller acts as {account} for helmrelease {}/{} (spec.serviceAccountName), but you may not impersonate it: rendering and apply use your own rights, which may see more or less than helm-controller does",
            hr.namespace(),
            hr.name()
        ));
    }
    if let Some(line) = target.describe() {
        crate::support::output::progress::action(line);
    }
    Ok(target)
}

/// [`resolve`] without a word.
pub async fn resolve_quietly(home: &Cluster, hr: &HelmRelease) -> Result<Target> {
    let options = &home.options.target;
    let hr_id = format!("{}/{}", hr.namespace(), hr.name());
    let mut target = match &hr.spec.kube_config {
        None => {
            if let Some(file) = &options.kubeconfig {
                return Err(TargetError::FlagWithoutKubeConfig { hr: hr_id, file: file.clone() }.into());
            }
            Target::home(home)
        }
        Some(kc) => {
            let Some(secret_ref) = &kc.secret_ref else {
                return Err(TargetError::Unsupported { hr: hr_id }.into());
            };
            remote(home, hr, &hr_id, &secret_ref.name, secret_ref.key.as_deref()).await?
        }
    };
    if let Some(sa) = hr.spec.service_account_name.as_deref().filter(|s| !s.is_empty()) {
        let account = service_account_user(hr.namespace(), sa);
        target.identity = if options.own_rights {
            Identity::InsteadOf { account, chosen: true }
        } else if may_impersonate(&target.cluster, hr.namespace(), sa).await {
            target.cluster = target.cluster.impersonating(&account).await?;
            Identity::ServiceAccount(account)
        } else {
            Identity::InsteadOf { account, chosen: false }
        };
    }
    Ok(target)
}

/// The kubeconfig of Secret `name` (in the HelmRelease's namespace), read with the user's credentials,
/// and the cluster it names, reached (or `--target-kubeconfig`'s, checked to be the same).
async fn remote(home: &Cluster, hr: &HelmRelease, hr_id: &str, name: &str, key: Option<&str>) -> Result<Target> {
    let secret_id = format!("{}/{name}", hr.namespace());
    let secret = read_secret(home, hr, hr_id, name, &secret_id).await?;
    let (from_secret, text) = kubeconfig_text(secret, key, hr_id, &secret_id)?;
    let (secret_kc, secret_config) = parse_kubeconfig(home, &text, hr_id, &from_secret).await?;
    let options = &home.options.target;
    let Connection { config, helm_file, helm_path, context, via_flag } = match &options.kubeconfig {
        None => secret_connection(&secret_kc, &secret_config, &text)?,
        Some(path) => flag_connection(path, options).await?,
    };
    let server = config.cluster_url.to_string();
    let given_roots = config.root_cert.clone().unwrap_or_default();
    let client = reach(config, &server, hr_id, &secret_id, via_flag.as_deref()).await?;
    let cluster_options = ClusterOptions {
        kubeconfig: Some(helm_path),
        context: Some(context).filter(|c| !c.is_empty()),
        namespace: Some(hr.namespace().to_string()),
        target: TargetOptions::default(),
    };
    let cluster = Cluster::remote(client, hr.namespace().to_string(), server.clone(), cluster_options, helm_file);
    if let Some(given) = &via_flag {
        let secret_roots = secret_config.root_cert.clone().unwrap_or_default();
        same_cluster(&secret_roots, &given_roots, &cluster, hr).await.map_err(|why| TargetError::NotSame {
            hr: hr_id.into(),
            secret: secret_id.clone(),
            given: given.clone(),
            why,
        })?;
    }
    Ok(Target {
        own: cluster.clone(),
        cluster,
        place: Place::Remote { secret: secret_id, server, via_flag },
        identity: Identity::User,
    })
}

/// Secret `name` of the HelmRelease's namespace (`secret_id`), read with the user's credentials. Missing
/// and forbidden are errors of their own: each asks the user for something else.
async fn read_secret(home: &Cluster, hr: &HelmRelease, hr_id: &str, name: &str, secret_id: &str) -> Result<Secret> {
    let secrets: Api<Secret> = Api::namespaced(home.client.clone(), hr.namespace());
    match secrets.get_opt(name).await {
        Ok(Some(s)) => Ok(s),
        Ok(None) => Err(TargetError::SecretNotFound { hr: hr_id.into(), secret: secret_id.into() }.into()),
        Err(kube::Error::Api(status)) if status.code == 403 => {
            Err(TargetError::SecretForbidden { hr: hr_id.into(), secret: secret_id.into(), reason: status.message }
                .into())
        }
        Err(e) => Err(home.error(e)),
    }
}

/// The kubeconfig's text in `secret`, and where it was found (`key K of Secret S`, for errors): under
/// `key` when the HelmRelease names one, else under `value`, else `value.yaml`, as helm-controller reads
/// it. A missing key lists the keys there are.
fn kubeconfig_text(secret: Secret, key: Option<&str>, hr_id: &str, secret_id: &str) -> Result<(String, String)> {
    let data = secret.data.unwrap_or_default();
    let (key_used, bytes) = match key.filter(|k| !k.is_empty()) {
        Some(k) => (k.to_string(), data.get(k)),
        None => match data.get("value") {
            Some(v) => ("value".to_string(), Some(v)),
            None => ("value.yaml".to_string(), data.get("value.yaml")),
        },
    };
    let Some(bytes) = bytes else {
        return Err(TargetError::KeyMissing {
            hr: hr_id.into(),
            secret: secret_id.into(),
            key: key.filter(|k| !k.is_empty()).map(str::to_string),
            keys: data.keys().cloned().collect(),
        }
        .into());
    };
    let from_secret = format!("key {key_used} of Secret {secret_id}");
    let text = String::from_utf8(bytes.0.clone())
        .map_err(|_| TargetError::BadKubeconfig { what: from_secret.clone(), reason: "it is not UTF-8 text".into() })?;
    Ok((from_secret, text))
}

/// The Secret's kubeconfig (`text`, from `from_secret`) and the connection it describes. One that names
/// a file is refused first when helm-controller refuses it ([`refuse_file_references`]): the release
/// fails there before anything is rendered.
async fn parse_kubeconfig(home: &Cluster, text: &str, hr_id: &str, from_secret: &str) -> Result<(Kubeconfig, Config)> {
    let kubeconfig = Kubeconfig::from_yaml(text)
        .map_err(|e| TargetError::BadKubeconfig { what: from_secret.into(), reason: first_line(&e.to_string()) })?;
    refuse_file_references(home, &kubeconfig, hr_id, from_secret).await?;
    let config = Config::from_custom_kubeconfig(kubeconfig.clone(), &KubeConfigOptions::default())
        .await
        .map_err(|e| TargetError::BadKubeconfig { what: from_secret.into(), reason: first_line(&e.to_string()) })?;
    Ok((kubeconfig, config))
}

/// How helm cozy and helm reach the release's cluster.
struct Connection {
    /// helm cozy's own connection.
    config: Config,
    /// Keeps `helm_path` alive when it is a private copy of the Secret's kubeconfig.
    helm_file: Option<Arc<tempfile::NamedTempFile>>,
    /// The kubeconfig helm is given, and its context.
    helm_path: std::path::PathBuf,
    context: String,
    /// `--target-kubeconfig` and its context, as said to people, when that flag was given.
    via_flag: Option<String>,
}

/// The Secret's kubeconfig as it is (`kubeconfig`, `config`, `text`): helm cozy connects with it, and
/// helm reads the same text from a private file, removed when the command ends.
fn secret_connection(kubeconfig: &Kubeconfig, config: &Config, text: &str) -> Result<Connection> {
    let context = kubeconfig.current_context.clone().unwrap_or_default();
    let file = private_kubeconfig(text)?;
    let path = file.path().to_path_buf();
    Ok(Connection { config: config.clone(), helm_file: Some(file), helm_path: path, context, via_flag: None })
}

/// `--target-kubeconfig` at `path`, with `--target-context` or else its current context: used in place of
/// the Secret's address, which often only works inside the platform. helm is given the same file.
async fn flag_connection(path: &std::path::Path, options: &TargetOptions) -> Result<Connection> {
    let given = Kubeconfig::read_from(path).map_err(|e| TargetError::BadKubeconfig {
        what: format!("--target-kubeconfig {}", path.display()),
        reason: first_line(&e.to_string()),
    })?;
    let context = match &options.context {
        Some(c) => c.clone(),
        None => given.current_context.clone().unwrap_or_default(),
    };
    let kc_options = KubeConfigOptions { context: Some(context.clone()), ..Default::default() };
    let config = Config::from_custom_kubeconfig(given, &kc_options).await.map_err(|e| TargetError::BadKubeconfig {
        what: format!("--target-kubeconfig {} (context {context:?})", path.display()),
        reason: first_line(&e.to_string()),
    })?;
    let via = format!("--target-kubeconfig {} context {context}", path.display());
    Ok(Connection { config, helm_file: None, helm_path: path.to_path_buf(), context, via_flag: Some(via) })
}

/// A client for `config`'s `server`, which has answered (within [`REACH_TIMEOUT`]): before anything
/// else is asked or changed, an unreachable server is one line naming the server tried and whence it
/// came (`via_flag`, else the Secret `secret_id`).
async fn reach(
    config: Config,
    server: &str,
    hr_id: &str,
    secret_id: &str,
    via_flag: Option<&str>,
) -> Result<kube::Client> {
    let unreachable = |reason: String| TargetError::Unreachable {
        hr: hr_id.into(),
        server: server.into(),
        from: match via_flag {
            Some(via) => via.to_string(),
            None => format!("the kubeconfig in Secret {secret_id}"),
        },
        reason,
        flag_given: via_flag.is_some(),
    };
    let client = crate::cluster::client(config).map_err(|e| unreachable(first_line(&e.to_string())))?;
    match tokio::time::timeout(REACH_TIMEOUT, client.apiserver_version()).await {
        Err(_) => Err(unreachable(format!("no answer in {}s", REACH_TIMEOUT.as_secs())).into()),
        Ok(Err(e)) => Err(unreachable(crate::support::error::cause(&e)).into()),
        Ok(Ok(_)) => Ok(client),
    }
}

/// helm-controller v1.6.4 and later refuse a kubeconfig that names a file (fluxcd/pkg
/// `runtime/client.ValidateKubeConfig`): the release fails before anything is rendered. Its version is
/// asked only when the kubeconfig names one, which is rare.
async fn refuse_file_references(home: &Cluster, kubeconfig: &Kubeconfig, hr_id: &str, secret: &str) -> Result<()> {
    let Some(reference) = file_reference(kubeconfig) else { return Ok(()) };
    let controller = crate::controller::detect(home).await;
    if !controller.rules().kubeconfig_files_refused {
        return Ok(());
    }
    Err(TargetError::FileReference {
        hr: hr_id.into(),
        secret: secret.into(),
        controller: controller.effective_version().to_string(),
        reference,
    }
    .into())
}

/// The first file a kubeconfig names, said as `ValidateKubeConfig` says it: clusters first, then users
/// (in name order here; Go walks its maps in no fixed order), a user's token file before its client
/// certificate before its client key.
fn file_reference(kubeconfig: &Kubeconfig) -> Option<String> {
    let mut clusters: Vec<_> = kubeconfig.clusters.iter().collect();
    clusters.sort_by(|a, b| a.name.cmp(&b.name));
    let mut users: Vec<_> = kubeconfig.auth_infos.iter().collect();
    users.sort_by(|a, b| a.name.cmp(&b.name));
    let cluster = clusters.into_iter().find_map(|c| {
        let ca = c.cluster.as_ref()?.certificate_authority.as_deref().filter(|f| !f.is_empty())?;
        Some(format!(
            "cluster '{}' references a certificate-authority file ({ca}), only certificate-authority-data is supported",
            c.name
        ))
    });
    cluster.or_else(|| {
        users.into_iter().find_map(|u| {
            let auth = u.auth_info.as_ref()?;
            let named = |f: &Option<String>| f.as_deref().filter(|f| !f.is_empty()).map(str::to_string);
            if let Some(f) = named(&auth.token_file) {
                Some(format!("user '{}' references a tokenFile ({f}), only an inline token is supported", u.name))
            } else if let Some(f) = named(&auth.client_certificate) {
                Some(format!(
                    "user '{}' references a client-certificate file ({f}), only client-certificate-data is supported",
                    u.name
                ))
            } else {
                named(&auth.client_key).map(|f| {
                    format!("user '{}' references a client-key file ({f}), only client-key-data is supported", u.name)
                })
            }
        })
    })
}

/// Whether the cluster reached through `--target-kubeconfig` is the one the Secret's kubeconfig names,
/// by what can be known without reaching the Secret's address:
/// - both name a certificate authority: the one helm-controller trusts must be one the given kubeconfig
///   trusts too (the given connection verified the server against it, so the server holds a certificate
///   that authority issued, which is what helm-controller itself takes for "the cluster");
/// - else the release helm-controller last made (the HelmRelease's newest history snapshot) must be in
///   that cluster's Helm storage, at that revision.
///
/// Err says why it is not, or cannot be shown to be, the same.
async fn same_cluster(
    theirs: &[Vec<u8>],
    ours: &[Vec<u8>],
    given: &Cluster,
    hr: &HelmRelease,
) -> std::result::Result<(), String> {
    if !theirs.is_empty() && !ours.is_empty() {
        return if theirs.iter().any(|c| ours.contains(c)) {
            Ok(())
        } else {
            Err("its certificate authority is not the one in the Secret's kubeconfig".into())
        };
    }
    let newest = hr.status.as_ref().and_then(|s| s.history.first());
    let Some(snapshot) = newest else {
        return Err("the Secret's kubeconfig names no certificate authority to compare, and the HelmRelease has no release in its history to look for".into());
    };
    let storage_ns = hr.storage_namespace();
    match crate::cluster::helmstore::history_revisions(given, storage_ns, &snapshot.name).await {
        Ok(revisions) if revisions.contains(&snapshot.version) => Ok(()),
        Ok(_) => Err(format!(
            "its Helm storage in {storage_ns} has no revision {} of release {}, which helm-controller last made",
            snapshot.version, snapshot.name
        )),
        Err(e) => Err(format!("cannot read its Helm storage: {e}")),
    }
}

/// Whether the user may impersonate service account `name` of `namespace` in `cluster` (a
/// SelfSubjectAccessReview; any failure to ask counts as no).
async fn may_impersonate(cluster: &Cluster, namespace: &str, name: &str) -> bool {
    let review = SelfSubjectAccessReview {
        spec: SelfSubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                verb: Some("impersonate".into()),
                resource: Some("serviceaccounts".into()),
                namespace: Some(namespace.into()),
                name: Some(name.into()),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let api: Api<SelfSubjectAccessReview> = Api::all(cluster.client.clone());
    match api.create(&PostParams::default(), &review).await {
        Ok(answer) => answer.status.is_some_and(|s| s.allowed),
        Err(e) => {
            tracing::debug!(error = %e, "cannot ask whether the service account may be impersonated");
            false
        }
    }
}

/// The Secret's kubeconfig in a private file (0600), for helm; removed when the last holder drops it.
fn private_kubeconfig(text: &str) -> Result<Arc<tempfile::NamedTempFile>> {
    use std::io::Write as _;
    let mut file = crate::support::process::private_file("cozyhr-target-", ".kubeconfig")?;
    file.write_all(text.as_bytes())?;
    file.flush()?;
    Ok(Arc::new(file))
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or_default().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_named_by_a_kubeconfig_is_found_as_helm_controller_finds_it() {
        let kc = |yaml: &str| Kubeconfig::from_yaml(yaml).unwrap();
        let inline = kc(
            "clusters:\n- name: c\n  cluster: {server: 'https://x', certificate-authority-data: QQ==}\nusers:\n- name: u\n  user: {token: t}\n",
        );
        assert_eq!(file_reference(&inline), None);
        let ca = kc(
            "clusters:\n- name: c\n  cluster: {server: 'https://x', certificate-authority: /etc/ca.crt}\nusers:\n- name: u\n  user: {tokenFile: /var/run/token}\n",
        );
        assert_eq!(
            file_reference(&ca).as_deref(),
            Some(
                "cluster 'c' references a certificate-authority file (/etc/ca.crt), only certificate-authority-data is supported"
            )
        );
        let token = kc("users:\n- name: u\n  user: {tokenFile: /var/run/token, client-key: /k}\n");
        assert_eq!(
            file_reference(&token).as_deref(),
            Some("user 'u' references a tokenFile (/var/run/token), only an inline token is supported")
        );
        let key = kc("users:\n- name: a\n  user: {token: t}\n- name: b\n  user: {client-key: /k}\n");
        assert!(file_reference(&key).unwrap().starts_with("user 'b' references a client-key file (/k)"));
    }

    #[test]
    fn service_accounts_are_named_as_kubernetes_names_them() {
        assert_eq!(service_account_user("apps", "deployer"), "system:serviceaccount:apps:deployer");
    }
}
