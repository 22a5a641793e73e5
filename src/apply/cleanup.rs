//! `cleanupOnFail` after a failed wait. When Helm itself waits and the wait fails, an upgrade or rollback
//! with `--cleanup-on-fail` deletes the objects it created (those of the new manifest that did not exist
//! when it began; what it patched keeps its new spec), with background propagation, before it marks the
//! revision failed. helm-controller's `poller` wait runs inside Helm, so its failed wait cleans up so
//! too. helm cozy runs that wait itself, after Helm has returned, so it does Helm's cleanup itself:
//! [`Created::before`] the action, [`Created::clean_up`] after a wait that failed. Without a wait of
//! helm cozy's (`disableWait`, the `legacy` strategy) Helm's own flag does it.

use futures::StreamExt;
use kube::api::DeleteParams;
use serde_json::Value;

use super::request::Voice;
use crate::cluster::Cluster;
use crate::cluster::live::LiveObjects;
use crate::cluster::manifests::{Manifest, ObjectId};
use crate::support::error::Result;
use crate::support::output::progress;

/// How many objects are read or deleted at once.
const CONCURRENCY: usize = 16;

/// The objects of the manifest an action is about to apply that do not exist yet: what it creates.
#[derive(Debug, Default)]
pub(super) struct Created {
    objects: Vec<Manifest>,
}

impl Created {
    /// The objects of `manifest` (hooks aside: Helm creates those only when it runs them) that the
    /// cluster does not hold now. A kind the cluster does not serve yet (its CRD comes with the chart)
    /// holds nothing, so its objects are created too.
    pub async fn before(live: &LiveObjects<'_>, manifest: &str, release_namespace: &str) -> Result<Created> {
        let scoped = live.apis().cluster_scoped();
        let objects = crate::compare::desired_objects(manifest, release_namespace, &scoped)?;
        let (objects, _hooks) = crate::compare::split_hooks(objects);
        let (served, unserved): (Vec<Manifest>, Vec<Manifest>) =
            objects.into_iter().partition(|m| live.serves(&m.object));
        let refs: Vec<&Value> = served.iter().map(|m| &m.object).collect();
        let found = live.get_all(&refs).await?;
        let mut created: Vec<Manifest> =
            served.into_iter().zip(found).filter(|(_, live)| live.is_none()).map(|(m, _)| m).collect();
        created.extend(unserved);
        Ok(Created { objects: created })
    }

    /// Helm's cleanup after the failed wait of `action` (an upgrade or a rollback), said as it goes: each
    /// object deleted with background propagation (one already gone is no error), with the cluster's
    /// discovery as it is now (the action may have brought CRDs). What cannot be deleted is named, with
    /// what to do; the action has failed either way (Helm adds it to the action's error).
    pub async fn clean_up(&self, cluster: &Cluster, action: &str, voice: Voice) {
        if self.objects.is_empty() {
            return;
        }
        let live = match crate::cluster::discovery::discover(cluster).await {
            Ok(apis) => LiveObjects::new(cluster, apis),
            Err(e) => {
                let ids = self.objects.iter().map(|m| m.id.to_string()).collect::<Vec<_>>().join(", ");
                progress::warning(format!(
                    "cleanupOnFail: cannot read the cluster's kinds to delete what the failed {action} created ({e}): delete them by hand: {ids}"
                ));
                return;
            }
        };
        let params = DeleteParams::background();
        let results: Vec<(&ObjectId, Result<bool>)> = futures::stream::iter(self.objects.iter().map(|m| {
            let (live, params) = (&live, &params);
            async move { (&m.id, delete(live, &m.object, params).await) }
        }))
        .buffered(CONCURRENCY)
        .collect()
        .await;
        let deleted: Vec<String> =
            results.iter().filter(|(_, r)| matches!(r, Ok(true))).map(|(id, _)| id.to_string()).collect();
        if voice.says() && !deleted.is_empty() {
            progress::action(format!(
                "cleanupOnFail: deleted what the failed {action} created, as Helm does: {}",
                deleted.join(", ")
            ));
        }
        for (id, result) in &results {
            if let Err(e) = result {
                progress::warning(format!(
                    "cleanupOnFail: cannot delete {id}, which the failed {action} created ({e}): delete it by hand"
                ));
            }
        }
    }
}

/// Deletes one object; false when it was already gone.
async fn delete(live: &LiveObjects<'_>, object: &Value, params: &DeleteParams) -> Result<bool> {
    let name = object.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
    match live.api_for(object)?.delete(name, params).await {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(e)) if e.code == 404 => Ok(false),
        Err(e) => Err(live.cluster().error(e)),
    }
}
