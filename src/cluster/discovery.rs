//! What the cluster serves, learnt once per command: the server's version and every API group, version
//! and kind, CRDs included. helm-controller's Helm renders with exactly this (`.Capabilities.KubeVersion`,
//! `.Capabilities.APIVersions`), and diff's live reads need each kind's resource name and scope.
//!
//! Discovery uses the aggregated endpoints (`/api` and `/apis`, two requests whatever the number of
//! CRDs), with the per-group endpoints as a fallback for servers without them. The answer is kept on
//! disk with the documents' ETags ([`DEFAULT_TTL`], `COZYHR_DISCOVERY_TTL`), like kubectl's discovery
//! cache, and each later command revalidates it with `If-None-Match`: two requests answered by an empty
//! 304 while nothing changed, so the edit-diff-apply loop does not transfer and parse the documents again
//! each turn, and a CRD added or removed a moment ago is seen at once.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kube::core::discovery::v2::APIGroupDiscoveryList;
use serde::{Deserialize, Serialize};

use crate::cluster::Cluster;
use crate::cluster::manifests::ClusterScoped;
use crate::support::error::Result;

/// How long a discovery answer is kept for revalidation by later commands; older ones are asked for
/// afresh. (Revalidation by ETag means no CRD is missed however young the entry.)
pub const DEFAULT_TTL: Duration = Duration::from_secs(600);

/// The environment variable that sets the cache's lifetime (a Go duration; `0` turns the cache off).
pub const TTL_ENV: &str = "COZYHR_DISCOVERY_TTL";

/// One kind the cluster serves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServedKind {
    pub group: String,
    pub version: String,
    pub kind: String,
    /// The resource's plural name (`configmaps`).
    pub plural: String,
    pub namespaced: bool,
}

impl ServedKind {
    pub fn api_version(&self) -> String {
        if self.group.is_empty() { self.version.clone() } else { format!("{}/{}", self.group, self.version) }
    }

    /// kube's description of the resource, for a dynamic [`kube::Api`] of it.
    pub fn api_resource(&self) -> kube::discovery::ApiResource {
        kube::discovery::ApiResource {
            group: self.group.clone(),
            version: self.version.clone(),
            api_version: self.api_version(),
            kind: self.kind.clone(),
            plural: self.plural.clone(),
        }
    }
}

/// The cluster's answer to discovery.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterApis {
    /// The server's `gitVersion` (`v1.37.2`), what `.Capabilities.KubeVersion.Version` says on the cluster.
    pub kube_version: String,
    /// Helm's `GetVersionSet`: every served `group/version`, and `group/version/Kind` for each resource and
    /// subresource. Sorted.
    pub api_versions: Vec<String>,
    /// The resources themselves (no subresources).
    pub kinds: Vec<ServedKind>,
}

impl ClusterApis {
    /// The served kind for an `apiVersion` and `kind`.
    pub fn find(&self, api_version: &str, kind: &str) -> Option<&ServedKind> {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        self.kinds.iter().find(|k| k.kind == kind && k.version == version && k.group == group)
    }

    /// Which kinds are cluster-scoped: the cluster's word for every kind it serves, the built-in list for
    /// the others (a kind the cluster does not serve fails later, where it is applied or read).
    pub fn cluster_scoped(&self) -> ClusterScoped {
        let mut scoped = ClusterScoped::builtin();
        for k in self.kinds.iter().filter(|k| !k.namespaced) {
            scoped.insert(k.group.clone(), k.kind.clone());
        }
        scoped
    }

    /// Builds the answer from the two aggregated discovery documents.
    fn from_aggregated(kube_version: String, core: APIGroupDiscoveryList, groups: APIGroupDiscoveryList) -> Self {
        let mut api_versions = BTreeSet::new();
        let mut kinds = Vec::new();
        for group in core.items.into_iter().chain(groups.items) {
            let name = group.metadata.and_then(|m| m.name).unwrap_or_default();
            for version in group.versions {
                let Some(v) = version.version else { continue };
                let gv = if name.is_empty() { v.clone() } else { format!("{name}/{v}") };
                api_versions.insert(gv.clone());
                for r in version.resources {
                    let kind = r.response_kind.and_then(|k| k.kind).unwrap_or_default();
                    if !kind.is_empty() {
                        api_versions.insert(format!("{gv}/{kind}"));
                    }
                    for sub in &r.subresources {
                        if let Some(k) = sub.response_kind.as_ref().and_then(|k| k.kind.as_deref()) {
                            api_versions.insert(format!("{gv}/{k}"));
                        }
                    }
                    let (Some(plural), false) = (r.resource, kind.is_empty()) else { continue };
                    kinds.push(ServedKind {
                        group: name.clone(),
                        version: v.clone(),
                        kind,
                        plural,
                        namespaced: r.scope.as_deref() != Some("Cluster"),
                    });
                }
            }
        }
        ClusterApis { kube_version, api_versions: api_versions.into_iter().collect(), kinds }
    }
}

/// Discovery for this command. A cached answer is revalidated: the two discovery documents are asked
/// for with the ETags they had (`If-None-Match`); when neither changed the server answers 304 with no
/// body, and the cached answer is used without transferring or parsing them again. So a CRD added a
/// moment ago is never missed. An entry older than the cache's lifetime (`ttl`) is not revalidated but
/// asked for afresh.
pub async fn discover(cluster: &Cluster) -> Result<ClusterApis> {
    if let Some(entry) = cache::read(&cluster.server, ttl())
        && let Some(apis) = revalidate(cluster, &entry).await?
    {
        tracing::debug!("discovery from the cache, revalidated");
        return Ok(apis);
    }
    refresh(cluster).await
}

/// Asks the cluster, whatever the cache holds, and remembers the answer.
async fn refresh(cluster: &Cluster) -> Result<ClusterApis> {
    let (apis, etags) = ask(cluster).await?;
    if !ttl().is_zero() {
        cache::write(&cluster.server, &apis, etags);
    }
    tracing::debug!(kinds = apis.kinds.len(), "discovery from the cluster");
    Ok(apis)
}

/// The cache lifetime: `COZYHR_DISCOVERY_TTL`, else [`DEFAULT_TTL`].
fn ttl() -> Duration {
    parse_ttl(std::env::var(TTL_ENV).ok().as_deref())
}

/// A TTL setting: a Go duration, `0` for none; anything else (or nothing) is the default.
fn parse_ttl(setting: Option<&str>) -> Duration {
    match setting.map(str::trim) {
        Some("0") => Duration::ZERO,
        Some(v) => crate::support::duration::parse(v).unwrap_or(DEFAULT_TTL),
        None => DEFAULT_TTL,
    }
}

/// The ETags of the `/api` and `/apis` documents an answer was built from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ETags {
    pub core: Option<String>,
    pub groups: Option<String>,
}

/// One aggregated discovery document, asked for with the ETag of the copy we hold.
enum Document {
    Unchanged,
    Changed { list: APIGroupDiscoveryList, etag: Option<String> },
}

async fn document(cluster: &Cluster, path: &str, etag: Option<&str>) -> Result<Document> {
    let mut req = http::Request::get(path).header(http::header::ACCEPT, ACCEPT_AGGREGATED);
    if let Some(etag) = etag {
        req = req.header(http::header::IF_NONE_MATCH, etag);
    }
    let req = req.body(kube::client::Body::empty()).map_err(|e| crate::support::error::Error::Failed(e.to_string()))?;
    let res = cluster.client.send(req).await.map_err(|e| cluster.error(e))?;
    if res.status() == http::StatusCode::NOT_MODIFIED {
        return Ok(Document::Unchanged);
    }
    let status = res.status();
    let etag = res.headers().get(http::header::ETAG).and_then(|v| v.to_str().ok()).map(String::from);
    let body = res.into_body().collect_bytes().await.map_err(|e| cluster.error(e))?;
    if !status.is_success() {
        let said = String::from_utf8_lossy(&body).trim().to_string();
        return Err(if matches!(status.as_u16(), 401 | 403) {
            crate::support::error::Error::Forbidden(format!("API discovery ({path}): {said}"))
        } else {
            crate::support::error::Error::Failed(format!(
                "API discovery ({path}) failed: the API server answered {status}: {said} (is it healthy? kubectl get --raw {path})"
            ))
        });
    }
    // A server without aggregated discovery sends the plain document, which reads as an empty list.
    let list = serde_json::from_slice(&body).unwrap_or_default();
    Ok(Document::Changed { list, etag })
}

/// What the aggregated documents are asked for as (kube's own constant, v2 then v2beta1, else plain).
const ACCEPT_AGGREGATED: &str = kube::core::discovery::v2::ACCEPT_AGGREGATED_DISCOVERY_V2;

/// The cached answer if the cluster says both documents are unchanged.
async fn revalidate(cluster: &Cluster, entry: &cache::Entry) -> Result<Option<ClusterApis>> {
    let (Some(core), Some(groups)) = (entry.etags.core.as_deref(), entry.etags.groups.as_deref()) else {
        return Ok(None);
    };
    let (core, groups) =
        tokio::try_join!(document(cluster, "/api", Some(core)), document(cluster, "/apis", Some(groups)))?;
    Ok(matches!((core, groups), (Document::Unchanged, Document::Unchanged)).then(|| entry.apis.clone()))
}

async fn ask(cluster: &Cluster) -> Result<(ClusterApis, ETags)> {
    let (version, core, groups) = tokio::join!(
        cluster.client.apiserver_version(),
        document(cluster, "/api", None),
        document(cluster, "/apis", None)
    );
    let kube_version = version.map_err(|e| cluster.error(e))?.git_version;
    match (core?, groups?) {
        // The core group always has v1, so an empty core list means "not aggregated".
        (Document::Changed { list: core, etag: core_etag }, Document::Changed { list: groups, etag: groups_etag })
            if !core.items.is_empty() =>
        {
            let etags = ETags { core: core_etag, groups: groups_etag };
            Ok((ClusterApis::from_aggregated(kube_version, core, groups), etags))
        }
        _ => Ok((per_group(cluster, kube_version).await?, ETags::default())),
    }
}

/// Discovery the older way: one request per group version.
async fn per_group(cluster: &Cluster, kube_version: String) -> Result<ClusterApis> {
    use futures::{StreamExt, TryStreamExt};
    let client = &cluster.client;
    let core = client.list_core_api_versions().await.map_err(|e| cluster.error(e))?;
    let groups = client.list_api_groups().await.map_err(|e| cluster.error(e))?;
    let mut gvs: Vec<(String, String)> = core.versions.into_iter().map(|v| (String::new(), v)).collect();
    for g in groups.groups {
        gvs.extend(g.versions.into_iter().map(|v| (g.name.clone(), v.version)));
    }
    let lists: Vec<_> = futures::stream::iter(gvs.iter().map(|(group, version)| async move {
        let list = if group.is_empty() {
            client.list_core_api_resources(version).await
        } else {
            client.list_api_group_resources(&format!("{group}/{version}")).await
        };
        list.map_err(|e| cluster.error(e)).map(|l| (group.clone(), version.clone(), l))
    }))
    .buffered(8)
    .try_collect()
    .await?;
    let mut api_versions = BTreeSet::new();
    let mut kinds = Vec::new();
    for (group, version, list) in lists {
        api_versions.insert(list.group_version.clone());
        for r in list.resources {
            api_versions.insert(format!("{}/{}", list.group_version, r.kind));
            if !r.name.contains('/') {
                kinds.push(ServedKind {
                    group: group.clone(),
                    version: version.clone(),
                    kind: r.kind,
                    plural: r.name,
                    namespaced: r.namespaced,
                });
            }
        }
    }
    Ok(ClusterApis { kube_version, api_versions: api_versions.into_iter().collect(), kinds })
}

/// The on-disk cache: one JSON file per API server under `$XDG_CACHE_HOME/cozyhr/discovery/` (else
/// `~/.cache/cozyhr/discovery/`). Trouble with it only means asking the cluster.
mod cache {
    use super::*;

    #[derive(Serialize, Deserialize)]
    pub struct Entry {
        server: String,
        /// Seconds since the epoch when the cluster answered.
        at: u64,
        pub apis: ClusterApis,
        #[serde(default)]
        pub etags: ETags,
    }

    fn file(server: &str) -> Option<PathBuf> {
        Some(
            crate::support::cache::dir()?
                .join("discovery")
                .join(format!("{}.json", crate::support::cache::key_name(server))),
        )
    }

    fn now() -> u64 {
        SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
    }

    pub fn read(server: &str, ttl: Duration) -> Option<Entry> {
        if ttl.is_zero() {
            return None;
        }
        let text = std::fs::read(file(server)?).ok()?;
        let entry: Entry = serde_json::from_slice(&text).ok()?;
        let age = now().checked_sub(entry.at)?;
        (entry.server == server && age < ttl.as_secs()).then_some(entry)
    }

    pub fn write(server: &str, apis: &ClusterApis, etags: ETags) {
        let Some(path) = file(server) else { return };
        let entry = Entry { server: server.to_string(), at: now(), apis: apis.clone(), etags };
        if let Ok(text) = serde_json::to_vec(&entry) {
            crate::support::cache::write(&path, &text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(json: serde_json::Value) -> APIGroupDiscoveryList {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn version_set_as_helm_builds_it() {
        let core = doc(
            serde_json::json!({"items": [{"metadata": {"name": ""}, "versions": [{"version": "v1", "resources": [
                {"resource": "pods", "responseKind": {"group": "", "version": "v1", "kind": "Pod"}, "scope": "Namespaced",
                 "subresources": [{"subresource": "eviction", "responseKind": {"group": "policy", "version": "v1", "kind": "Eviction"}},
                                  {"subresource": "status", "responseKind": {"group": "", "version": "v1", "kind": "Pod"}}]},
                {"resource": "namespaces", "responseKind": {"group": "", "version": "v1", "kind": "Namespace"}, "scope": "Cluster"}
            ]}]}]}),
        );
        let groups = doc(serde_json::json!({"items": [{"metadata": {"name": "cs.example.io"}, "versions": [
            {"version": "v1", "resources": [{"resource": "widgetclasses", "responseKind": {"group": "cs.example.io", "version": "v1", "kind": "WidgetClass"}, "scope": "Cluster"}]},
            {"version": "v1beta1", "resources": []}
        ]}]}));
        let apis = ClusterApis::from_aggregated("v1.37.2".into(), core, groups);
        assert_eq!(
            apis.api_versions,
            [
                "cs.example.io/v1",
                "cs.example.io/v1/WidgetClass",
                "cs.example.io/v1beta1",
                "v1",
                "v1/Eviction",
                "v1/Namespace",
                "v1/Pod"
            ]
        );
        assert_eq!(apis.kinds.len(), 3);
        let wc = apis.find("cs.example.io/v1", "WidgetClass").unwrap();
        assert!(!wc.namespaced);
        assert_eq!(wc.plural, "widgetclasses");
        assert!(apis.find("v1", "Pod").unwrap().namespaced);
        let scoped = apis.cluster_scoped();
        assert!(scoped.contains("cs.example.io", "WidgetClass"));
        assert!(scoped.contains("", "Namespace"));
        assert!(!scoped.contains("", "Pod"));
    }

    #[test]
    fn ttl_reads_go_durations_and_zero() {
        assert_eq!(parse_ttl(Some("90s")), Duration::from_secs(90));
        assert_eq!(parse_ttl(Some("0")), Duration::ZERO);
        assert_eq!(parse_ttl(Some("0s")), Duration::ZERO);
        assert_eq!(parse_ttl(Some("soon")), DEFAULT_TTL);
        assert_eq!(parse_ttl(None), DEFAULT_TTL);
        assert_eq!(DEFAULT_TTL, Duration::from_secs(600));
    }
}
