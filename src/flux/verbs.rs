//! Suspend, resume, reconcile and wait: written once for every [`FluxObject`].
//!
//! Writes are JSON merge patches of exactly the fields the flux CLI touches, so nothing else in the object
//! is lost. Waits watch the object (kube-runtime `await_condition`) instead of polling.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use kube::api::{Api, Patch, PatchParams};
use kube::runtime::wait::await_condition;
use serde_json::json;

use super::condition::Readiness;
use super::object::FluxObject;
use crate::error::{Error, Result};

/// The annotations of Flux's reconcile-request protocol (fluxcd/pkg/apis/meta).
pub const REQUESTED_AT: &str = "reconcile.fluxcd.io/requestedAt";
pub const FORCE_AT: &str = "reconcile.fluxcd.io/forceAt";
pub const RESET_AT: &str = "reconcile.fluxcd.io/resetAt";

/// The field manager our writes are recorded under.
pub const FIELD_MANAGER: &str = "cozyhr";

/// A namespaced handle on one kind, with the error mapping every verb needs.
pub struct Objects<K: FluxObject> {
    pub api: Api<K>,
    pub namespace: String,
    server: String,
}

impl<K: FluxObject> Objects<K> {
    pub fn namespaced(cluster: &crate::cluster::Cluster, namespace: &str) -> Self {
        Objects {
            api: Api::namespaced(cluster.client.clone(), namespace),
            namespace: namespace.to_string(),
            server: cluster.server.clone(),
        }
    }

    /// Maps a client error, naming the object for a 404.
    pub fn error(&self, name: &str, err: kube::Error) -> Error {
        match &err {
            kube::Error::Api(s) if s.code == 404 && s.details.as_ref().is_some_and(|d| d.name.is_empty()) => {
                Error::CrdMissing { kind: K::DISPLAY, group: K::GROUP, version: K::VERSION }
            }
            kube::Error::Api(s) if s.code == 404 => {
                Error::NotFound { kind: K::DISPLAY, name: name.to_string(), namespace: self.namespace.clone() }
            }
            _ => Error::from_kube(err, &self.server),
        }
    }

    pub async fn get(&self, name: &str) -> Result<K> {
        self.api.get(name).await.map_err(|e| self.error(name, e))
    }

    async fn merge_patch(&self, name: &str, patch: serde_json::Value) -> Result<K> {
        let params = PatchParams { field_manager: Some(FIELD_MANAGER.into()), ..Default::default() };
        self.api.patch(name, &params, &Patch::Merge(&patch)).await.map_err(|e| self.error(name, e))
    }

    /// Sets `spec.suspend` (true to suspend, false to resume). Returns the object as written.
    pub async fn set_suspend(&self, name: &str, suspend: bool) -> Result<K> {
        // A GET first gives a "not found" that names the namespace instead of a patch 404.
        self.get(name).await?;
        self.merge_patch(name, json!({ "spec": { "suspend": suspend } })).await
    }

    /// Asks the controller to reconcile now, like `flux reconcile`: requestedAt (and forceAt / resetAt,
    /// which only take effect when equal to requestedAt) set to the current time. Refuses a suspended
    /// object. Returns the request token to wait for.
    pub async fn request_reconcile(&self, name: &str, force: bool, reset: bool) -> Result<String> {
        let obj = self.get(name).await?;
        if obj.suspended() {
            return Err(Error::Suspended {
                kind: K::DISPLAY,
                namespace: self.namespace.clone(),
                name: name.to_string(),
            });
        }
        let token = request_token();
        let mut annotations = serde_json::Map::new();
        annotations.insert(REQUESTED_AT.into(), token.clone().into());
        if force {
            annotations.insert(FORCE_AT.into(), token.clone().into());
        }
        if reset {
            annotations.insert(RESET_AT.into(), token.clone().into());
        }
        self.merge_patch(name, json!({ "metadata": { "annotations": annotations } })).await?;
        Ok(token)
    }

    /// Waits until `accept` says the object has settled, then turns its readiness into a result.
    /// On timeout the error says what was last seen.
    pub async fn wait_settled(
        &self,
        name: &str,
        timeout: Duration,
        what: &str,
        accept: impl Fn(&K) -> bool + Send + 'static,
    ) -> Result<K> {
        let last: Arc<Mutex<Option<K>>> = Arc::default();
        let seen = last.clone();
        let cond = move |obj: Option<&K>| {
            let Some(obj) = obj else { return false };
            if let Ok(mut slot) = seen.lock() {
                *slot = Some(obj.clone());
            }
            accept(obj) && !matches!(obj.readiness(), Readiness::Progressing(_))
        };
        let waited = tokio::time::timeout(timeout, await_condition(self.api.clone(), name, cond)).await;
        let last_seen = |last: &Arc<Mutex<Option<K>>>| match last.lock().ok().and_then(|l| l.clone()) {
            Some(obj) => match obj.readiness() {
                Readiness::Ready(m) | Readiness::Failed(m) | Readiness::Progressing(m) => m,
            },
            None => "nothing (the object was not seen)".into(),
        };
        let obj = match waited {
            Err(_) => {
                return Err(Error::Timeout { what: what.to_string(), after: timeout, last_seen: last_seen(&last) });
            }
            Ok(Err(e)) => return Err(Error::Invalid { what: "watch".into(), reason: e.to_string() }),
            Ok(Ok(None)) => {
                return Err(Error::NotFound { kind: K::DISPLAY, name: name.into(), namespace: self.namespace.clone() });
            }
            Ok(Ok(Some(obj))) => obj,
        };
        match obj.readiness() {
            Readiness::Ready(_) => Ok(obj),
            Readiness::Failed(message) | Readiness::Progressing(message) => Err(Error::NotReady {
                kind: K::DISPLAY,
                namespace: self.namespace.clone(),
                name: name.to_string(),
                message,
            }),
        }
    }

    /// Waits for the controller to handle the reconcile request `token` and settle.
    pub async fn wait_reconciled(&self, name: &str, token: String, timeout: Duration) -> Result<K> {
        self.wait_settled(name, timeout, &format!("{} {name} to reconcile", K::DISPLAY), move |obj| {
            obj.last_handled_reconcile_at() == Some(token.as_str())
        })
        .await
    }

    /// Waits for the controller to observe the object's current generation and settle (after resume).
    pub async fn wait_ready(&self, name: &str, timeout: Duration) -> Result<K> {
        self.wait_settled(name, timeout, &format!("{} {name} to become ready", K::DISPLAY), |_| true).await
    }
}

/// A request token like the flux CLI's: the current time, RFC 3339 with nanoseconds.
pub fn request_token() -> String {
    jiff::Timestamp::now().to_string()
}
