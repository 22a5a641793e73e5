//! The small trait the shared verbs are written over. A Flux kind implements it in a few lines.

use std::fmt::Debug;

use k8s_openapi::NamespaceResourceScope;
use kube::Resource;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::condition::{self, Condition, Readiness};
use super::helmrelease::{self, HelmRelease};

pub trait FluxObject:
    Resource<DynamicType = (), Scope = NamespaceResourceScope>
    + Clone
    + Debug
    + DeserializeOwned
    + Serialize
    + Send
    + Sync
    + 'static
{
    /// Human name of the kind in messages, as the flux CLI writes it ("helmrelease").
    const DISPLAY: &'static str;
    /// API group and version, for the "CRD not installed" message.
    const GROUP: &'static str;
    const VERSION: &'static str;

    fn suspended(&self) -> bool;
    fn conditions(&self) -> &[Condition];
    fn observed_generation(&self) -> Option<i64>;
    fn last_handled_reconcile_at(&self) -> Option<&str>;
    /// The revision a table shows: what is applied, else what was last attempted.
    fn revision(&self) -> String;

    /// Where this object stands for someone waiting on it.
    fn readiness(&self) -> Readiness {
        condition::readiness(self.meta().generation, self.observed_generation(), self.conditions())
    }

    /// READY and MESSAGE columns like `flux get`: no Ready condition reads False, "waiting to be reconciled".
    fn ready_summary(&self) -> (String, String) {
        match condition::find(self.conditions(), condition::READY) {
            Some(c) => (c.status.clone(), c.message.clone()),
            None => ("False".into(), "waiting to be reconciled".into()),
        }
    }
}

impl FluxObject for HelmRelease {
    const DISPLAY: &'static str = "helmrelease";
    const GROUP: &'static str = helmrelease::GROUP;
    const VERSION: &'static str = helmrelease::VERSION;

    fn suspended(&self) -> bool {
        self.spec.suspend
    }
    fn conditions(&self) -> &[Condition] {
        self.status.as_ref().map(|s| s.conditions.as_slice()).unwrap_or_default()
    }
    fn observed_generation(&self) -> Option<i64> {
        self.status.as_ref().and_then(|s| s.observed_generation)
    }
    fn last_handled_reconcile_at(&self) -> Option<&str> {
        self.status.as_ref().and_then(|s| s.last_handled_reconcile_at.as_deref())
    }
    fn revision(&self) -> String {
        if let Some(s) = self.latest_snapshot() {
            return s.chart_version.clone();
        }
        self.status.as_ref().and_then(|s| s.last_attempted_revision.clone()).unwrap_or_default()
    }
}
