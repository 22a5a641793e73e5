//! The cluster side of a diff: for each desired object, the live object and what the server would make of
//! the desired one (a server-side apply dry run), so server defaulting is not noise and drift shows.

use std::collections::HashMap;
use std::sync::Mutex;

use futures::{StreamExt, TryStreamExt};
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::core::GroupVersionKind;
use kube::discovery::{ApiCapabilities, ApiResource, Scope};
use serde_json::Value;

use crate::cluster::Cluster;
use crate::error::{Error, Result};

/// How many requests to keep in flight: enough to hide latency for large charts without flooding the
/// API server's default per-client rate limits.
const CONCURRENCY: usize = 16;

/// The field manager helm-controller applies with; a dry run as the same manager shows what its apply
/// would change, including fields someone else changed by hand.
pub const FLUX_FIELD_MANAGER: &str = "helm-controller";

/// Per-object result: live state and the server's view of the desired state.
#[derive(Debug, Clone)]
pub struct Observed {
    pub live: Option<Value>,
    pub desired_on_server: Value,
}

/// Discovery results cached per group/version/kind for one process.
pub struct LiveObjects<'a> {
    cluster: &'a Cluster,
    kinds: Mutex<HashMap<GroupVersionKind, (ApiResource, ApiCapabilities)>>,
}

impl<'a> LiveObjects<'a> {
    pub fn new(cluster: &'a Cluster) -> Self {
        LiveObjects { cluster, kinds: Mutex::default() }
    }

    /// The API resource of an object's kind (one discovery request per new group/version).
    pub async fn resource(&self, obj: &Value) -> Result<(ApiResource, ApiCapabilities)> {
        let gvk = gvk_of(obj)?;
        if let Some(hit) = self.kinds.lock().ok().and_then(|k| k.get(&gvk).cloned()) {
            return Ok(hit);
        }
        let found = kube::discovery::pinned_kind(&self.cluster.client, &gvk).await.map_err(|e| match e {
            kube::Error::Discovery(_) => Error::Invalid {
                what: format!("object kind {}/{}", gvk.api_version(), gvk.kind),
                reason: "the cluster does not serve it (is its CRD installed?)".into(),
            },
            e => self.cluster.error(e),
        })?;
        if let Ok(mut k) = self.kinds.lock() {
            k.insert(gvk, found.clone());
        }
        Ok(found)
    }

    fn api(&self, ar: &ApiResource, caps: &ApiCapabilities, namespace: Option<&str>) -> Api<DynamicObject> {
        match (&caps.scope, namespace) {
            (Scope::Namespaced, Some(ns)) => Api::namespaced_with(self.cluster.client.clone(), ns, ar),
            (Scope::Namespaced, None) => Api::default_namespaced_with(self.cluster.client.clone(), ar),
            (Scope::Cluster, _) => Api::all_with(self.cluster.client.clone(), ar),
        }
    }

    /// Whether an object's kind is cluster-scoped.
    pub async fn cluster_scoped(&self, obj: &Value) -> Result<bool> {
        Ok(matches!(self.resource(obj).await?.1.scope, Scope::Cluster))
    }

    /// The live object, if it exists.
    pub async fn get(&self, obj: &Value) -> Result<Option<Value>> {
        let (ar, caps) = self.resource(obj).await?;
        let api = self.api(&ar, &caps, namespace_of(obj));
        let live = api.get_opt(name_of(obj)?).await.map_err(|e| self.cluster.error(e))?;
        live.map(|o| {
            serde_json::to_value(o).map_err(|e| Error::Invalid { what: "live object".into(), reason: e.to_string() })
        })
        .transpose()
    }

    /// Live state plus a forced server-side apply dry run of `desired` as helm-controller's field manager.
    pub async fn observe(&self, desired: &Value) -> Result<Observed> {
        let (ar, caps) = self.resource(desired).await?;
        let api = self.api(&ar, &caps, namespace_of(desired));
        let name = name_of(desired)?;
        let live = api.get_opt(name).await.map_err(|e| self.cluster.error(e))?;
        let params = PatchParams::apply(FLUX_FIELD_MANAGER).force().dry_run();
        let applied = match api.patch(name, &params, &Patch::Apply(desired)).await {
            // The namespace does not exist yet (helm would create it with --create-namespace): nothing
            // for the server to default against, so the object is added as rendered.
            Err(kube::Error::Api(s)) if s.code == 404 && live.is_none() => {
                return Ok(Observed { live: None, desired_on_server: desired.clone() });
            }
            other => other,
        }
        .map_err(|e| match e {
            kube::Error::Api(s) if s.code == 422 || s.code == 400 => Error::Invalid {
                what: format!("{} {}", ar.kind, name),
                reason: format!("the API server rejects it: {}", s.message),
            },
            e => self.cluster.error(e),
        })?;
        let to_value = |o: DynamicObject| {
            serde_json::to_value(o).map_err(|e| Error::Invalid { what: "object".into(), reason: e.to_string() })
        };
        Ok(Observed { live: live.map(to_value).transpose()?, desired_on_server: to_value(applied)? })
    }

    /// [`observe`](Self::observe) for many objects concurrently, results in input order.
    pub async fn observe_all(&self, desired: &[Value]) -> Result<Vec<Observed>> {
        futures::stream::iter(desired.iter().map(|d| self.observe(d))).buffered(CONCURRENCY).try_collect().await
    }

    /// [`get`](Self::get) for many objects concurrently, results in input order.
    pub async fn get_all(&self, objs: &[Value]) -> Result<Vec<Option<Value>>> {
        futures::stream::iter(objs.iter().map(|o| self.get(o))).buffered(CONCURRENCY).try_collect().await
    }
}

fn gvk_of(obj: &Value) -> Result<GroupVersionKind> {
    let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
    if api_version.is_empty() || kind.is_empty() {
        return Err(Error::Invalid {
            what: "manifest object".into(),
            reason: "apiVersion and kind are required".into(),
        });
    }
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    Ok(GroupVersionKind::gvk(group, version, kind))
}

fn name_of(obj: &Value) -> Result<&str> {
    obj.pointer("/metadata/name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .ok_or_else(|| Error::Invalid { what: "manifest object".into(), reason: "metadata.name is required".into() })
}

fn namespace_of(obj: &Value) -> Option<&str> {
    obj.pointer("/metadata/namespace").and_then(Value::as_str).filter(|n| !n.is_empty())
}
