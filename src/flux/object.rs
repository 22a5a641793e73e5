//! The small trait the shared verbs are written over. A Flux kind implements it in a few lines.

use std::fmt::Debug;

use kube::Resource;
use kube::core::NamespaceScope;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::condition::{self, Condition, Readiness, ReconcileStatus};
use super::kind::Kind;

pub trait FluxObject:
    Resource<Scope: NamespaceScope, DynamicType: Clone + Send + Sync>
    + Clone
    + Debug
    + DeserializeOwned
    + Serialize
    + Send
    + Sync
    + 'static
{
    /// Which Flux kind this is. Typed kinds ignore `dt`; the generic [`super::FluxSource`] carries it.
    fn flux_kind(dt: &Self::DynamicType) -> &'static Kind;

    fn suspended(&self) -> bool;
    /// The status fields every Flux kind writes alike, once the controller has written a status.
    fn reconcile_status(&self) -> Option<&ReconcileStatus>;
    fn conditions(&self) -> &[Condition] {
        self.reconcile_status().map(|s| s.conditions.as_slice()).unwrap_or_default()
    }
    fn observed_generation(&self) -> Option<i64> {
        self.reconcile_status().and_then(|s| s.observed_generation)
    }
    fn last_handled_reconcile_at(&self) -> Option<&str> {
        self.reconcile_status().and_then(|s| s.last_handled_reconcile_at.as_deref())
    }
    /// Whether this object deploys the chart named `chart` (only HelmReleases deploy charts: see
    /// [`super::HelmRelease::deploys`]).
    fn deploys_chart(&self, _chart: &str) -> bool {
        false
    }
    /// The generation the controller last attempted, when the kind records it (HelmRelease does).
    fn last_attempted_generation(&self) -> Option<i64> {
        None
    }
    /// The revision a table shows: what is applied, else what was last attempted.
    fn revision(&self) -> String;

    /// Where this object stands for someone waiting on it.
    fn readiness(&self) -> Readiness {
        condition::readiness(self.meta().generation, self.observed_generation(), self.conditions())
    }

    /// For a wait on the current generation (after resume): settled like [`FluxObject::readiness`], or
    /// failed as soon as the controller has attempted this generation and failed, since a failed attempt
    /// never advances observedGeneration; or failed as soon as the controller reports a failure it does
    /// not get out of by itself ([`condition::unrecoverable`]: a missing source, bad values, Stalled),
    /// which it reports without attempting anything.
    fn generation_verdict(&self) -> Readiness {
        let readiness = self.readiness();
        if matches!(readiness, Readiness::Progressing(_))
            && let Some(message) = condition::unrecoverable(self.conditions())
        {
            return Readiness::Failed(message);
        }
        let generation = self.meta().generation.unwrap_or_default();
        if matches!(readiness, Readiness::Progressing(_))
            && self.last_attempted_generation().is_some_and(|g| g >= generation)
            && let failed @ Readiness::Failed(_) = condition::verdict(self.conditions())
        {
            return failed;
        }
        readiness
    }

    /// READY and MESSAGE columns like `flux get`: no Ready condition reads False, "waiting to be reconciled".
    fn ready_summary(&self) -> (String, String) {
        match condition::find(self.conditions(), condition::READY) {
            Some(c) => (c.status.clone(), c.message.clone()),
            None => ("False".into(), "waiting to be reconciled".into()),
        }
    }
}
