//! The artifact a HelmRelease's chart source offers in the cluster, and its bytes, fetched the way a user
//! with ordinary rights can: an in-cluster Service address (`*.svc`, as source-controller and
//! source-watcher advertise theirs) through the API server's service proxy with the user's credentials,
//! any other `http://` address directly. The bytes are checked against the artifact's digest.

use http_body_util::BodyExt as _;
use serde_json::Value;

use crate::cluster::Cluster;
use crate::flux::HelmRelease;
use crate::flux::kind::Kind;
use crate::flux::source::FluxSource;
use crate::flux::verbs::Objects;

/// The artifact of a chart source, as its status names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artifact {
    /// `Kind ns/name` of the source object.
    pub source: String,
    pub kind: &'static Kind,
    pub url: String,
    /// `sha256:<hex>` (or another algorithm source-controller writes).
    pub digest: String,
    pub revision: String,
}

impl Artifact {
    /// `Kind ns/name at REVISION`, for messages.
    pub fn describe(&self) -> String {
        format!("{} at {}", self.source, self.revision)
    }

    /// The artifact's bytes, checked against its digest.
    pub async fn bytes(&self, cluster: &Cluster) -> Result<Vec<u8>, String> {
        let bytes = get(cluster, &self.url)
            .await
            .map_err(|why| format!("cannot fetch the chart of {}: {why}", self.describe()))?;
        if !self.matches(&bytes) {
            return Err(format!("the archive fetched for {} is not its digest {}", self.describe(), self.digest));
        }
        Ok(bytes)
    }

    /// Whether `bytes` are this artifact's (its digest; only sha256 is checked here, as Flux writes it).
    pub fn matches(&self, bytes: &[u8]) -> bool {
        crate::go::digest::sha256(bytes) == self.digest
    }
}

/// The artifact `hr`'s chart source offers now: `chartRef`'s object, or the HelmChart helm-controller made
/// for `spec.chart`.
pub async fn artifact(cluster: &Cluster, hr: &HelmRelease) -> Result<Artifact, String> {
    let (kind_name, ns, name) = crate::flux::sources::chart_source(hr).map_err(|e| e.to_string())?;
    let kind = Kind::lookup(&kind_name).ok_or_else(|| format!("a source of kind {kind_name} is not known"))?;
    let source = format!("{kind_name} {ns}/{name}");
    let object = Objects::<FluxSource>::namespaced_with(cluster, &ns, kind)
        .get_opt(&name)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("{source} does not exist"))?;
    let status = object.status.unwrap_or_default();
    let Some(artifact) = status.artifact else {
        return Err(no_artifact(&source, &status.reconcile.conditions));
    };
    let url = artifact.extra.get("url").and_then(Value::as_str).unwrap_or_default().to_string();
    let digest = artifact.digest.clone().unwrap_or_default();
    if url.is_empty() || digest.is_empty() {
        return Err(format!("{source}'s artifact has no URL or digest"));
    }
    Ok(Artifact { source, kind, url, digest, revision: artifact.revision })
}

/// Why a source has no artifact, in its controller's words when it says (a repository that is down, a
/// wrong password, a version no chart has: source-controller's Ready=False message).
fn no_artifact(source: &str, conditions: &[crate::flux::Condition]) -> String {
    match crate::flux::condition::find(conditions, crate::flux::condition::READY).filter(|c| c.status == "False") {
        Some(ready) if !ready.message.is_empty() => {
            format!("{source} has no artifact: {}: {}", ready.reason, ready.message)
        }
        _ => format!("{source} has no artifact yet"),
    }
}

/// `name.namespace` of an in-cluster Service address (`name.namespace.svc[.cluster.local][.]`).
fn service_of(host: &str) -> Option<(&str, &str)> {
    let host = host.trim_end_matches('.');
    let rest = host.strip_suffix(".svc.cluster.local").or_else(|| host.strip_suffix(".svc"))?;
    rest.split_once('.').filter(|(n, ns)| !n.is_empty() && !ns.is_empty() && !ns.contains('.'))
}

/// The bytes at `url`: through the API server's service proxy for a Service address, else by HTTP.
async fn get(cluster: &Cluster, url: &str) -> Result<Vec<u8>, String> {
    let uri: http::Uri = url.parse().map_err(|e| format!("{url}: {e}"))?;
    let host = uri.host().unwrap_or_default();
    let path = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
    if let Some((name, ns)) = service_of(host) {
        let port = uri.port_u16().unwrap_or(80);
        let proxied = format!("/api/v1/namespaces/{ns}/services/http:{name}:{port}/proxy{path}");
        let request = http::Request::get(proxied).body(Vec::new()).map_err(|e| e.to_string())?;
        let response = cluster.client.send(request.map(kube::client::Body::from)).await.map_err(|e| e.to_string())?;
        if !response.status().is_success() {
            return Err(format!("the service proxy answered {} for {url}", response.status()));
        }
        let body = response.into_body().collect().await.map_err(|e| e.to_string())?;
        return Ok(body.to_bytes().to_vec());
    }
    if uri.scheme_str() != Some("http") {
        return Err(format!("{url}: only http:// artifact addresses are fetched"));
    }
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new()).build_http();
    let request =
        http::Request::get(uri).body(http_body_util::Empty::<&'static [u8]>::new()).map_err(|e| e.to_string())?;
    let response = client.request(request).await.map_err(|e| format!("{url}: {}", crate::support::error::cause(&e)))?;
    if !response.status().is_success() {
        return Err(format!("{url} answered {}", response.status()));
    }
    let body = response.into_body().collect().await.map_err(|e| e.to_string())?;
    Ok(body.to_bytes().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_without_an_artifact_says_why_in_its_controllers_words() {
        let failed = crate::flux::Condition {
            type_: "Ready".into(),
            status: "False".into(),
            reason: "ChartPullFailed".into(),
            message: "no 'podinfo' chart with version matching '>=9' found".into(),
            ..Default::default()
        };
        assert_eq!(
            no_artifact("HelmChart apps/apps-podinfo", &[failed]),
            "HelmChart apps/apps-podinfo has no artifact: ChartPullFailed: no 'podinfo' chart with version matching '>=9' found"
        );
        assert_eq!(no_artifact("HelmChart a/b", &[]), "HelmChart a/b has no artifact yet");
    }

    #[test]
    fn service_addresses_go_through_the_proxy() {
        assert_eq!(
            service_of("source-controller.flux-system.svc.cluster.local."),
            Some(("source-controller", "flux-system"))
        );
        assert_eq!(service_of("source-watcher.flux-system.svc"), Some(("source-watcher", "flux-system")));
        assert_eq!(service_of("127.0.0.1"), None);
        assert_eq!(service_of("example.com"), None);
    }
}
