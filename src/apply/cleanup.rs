//! `cleanupOnFail` after a failed wait. When Helm itself waits and the wait fails, an upgrade or rollback
//! with `--cleanup-on-fail` deletes the objects it created (those of the new manifest that did not exist
//! when it began; what it patched keeps its new spec), with background propagation, before it marks the
//! revision failed. helm-controller's `poller` wait runs inside Helm, so its failed wait cleans up so
//! too. helm cozy runs that wait itself, after Helm has returned, so it does Helm's cleanup itself:
//! [`Created::before`] the action, [`Created::delete`] after a wait that failed. Without a wait of
//! helm cozy's (`disableWait`, the `legacy` strategy) Helm's own flag does it.

use futures::{StreamExt, TryStreamExt};
use kube::api::DeleteParams;
use serde_json::Value;

use crate::cluster::Cluster;
use crate::cluster::live::LiveObjects;
use crate::cluster::manifests::ObjectId;
use crate::support::error::{Error, Result};

/// How many objects are read or deleted at once.
const CONCURRENCY: usize = 16;

/// The objects of the manifest an action is about to apply that do not exist yet: what it creates.
#[derive(Debug, Default)]
pub(super) struct Created {
    objects: Vec<Value>,
}

impl Created {
    /// The objects of `manifest` (hooks aside: Helm creates those only when it runs them) that the
    /// cluster does not hold now. A kind the cluster does not serve yet (its CRD comes with the chart)
    /// holds nothing, so its objects are created too.
    pub async fn before(live: &LiveObjects<'_>, manifest: &str, release_namespace: &str) -> Result<Created> {
        let scoped = live.apis().cluster_scoped();
        let objects = crate::compare::desired_objects(manifest, release_namespace, &scoped)?;
        let (objects, _hooks) = crate::compare::split_hooks(objects);
        let (served, unserved): (Vec<Value>, Vec<Value>) =
            objects.into_iter().map(|m| m.object).partition(|o| live.serves(o));
        let refs: Vec<&Value> = served.iter().collect();
        let found = live.get_all(&refs).await?;
        let mut created: Vec<Value> =
            served.iter().zip(found).filter(|(_, live)| live.is_none()).map(|(o, _)| o.clone()).collect();
        created.extend(unserved);
        Ok(Created { objects: created })
    }

    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// Deletes them as Helm's cleanup does (background propagation; one already gone is no error), with
    /// the cluster's discovery as it is now (the action may have brought CRDs). Returns what was deleted,
    /// by identity, in manifest order.
    pub async fn delete(&self, cluster: &Cluster) -> Result<Vec<String>> {
        let apis = crate::cluster::discovery::discover(cluster).await?;
        let live = LiveObjects::new(cluster, apis);
        let params = DeleteParams::background();
        let deleted = futures::stream::iter(self.objects.iter().map(|o| {
            let (live, params) = (&live, &params);
            async move {
                let id = ObjectId::from_object(o)
                    .map_err(|e| Error::Invalid { what: "an object to clean up".into(), reason: e.to_string() })?;
                let name = o.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
                match live.api_for(o)?.delete(name, params).await {
                    Ok(_) => Ok(Some(id.to_string())),
                    Err(kube::Error::Api(e)) if e.code == 404 => Ok(None),
                    Err(e) => Err(cluster.error(e)),
                }
            }
        }))
        .buffered(CONCURRENCY)
        .try_collect::<Vec<_>>()
        .await?;
        Ok(deleted.into_iter().flatten().collect())
    }
}
