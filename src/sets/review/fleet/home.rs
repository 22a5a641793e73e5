//! Which of a fleet's clusters the reachable cluster is: the one whose entry Kustomization is there,
//! building the same path (`flux-system/flux-system` at `./clusters/staging`). That cluster's releases
//! render as helm-controller renders them there (its capabilities, lookup, what its Helm storage holds);
//! the others render without a cluster. What was found is said in one line.

use std::collections::BTreeMap;

use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};

use crate::cluster::{Cluster, Connection};
use crate::fleet::kustomization::{self, Kustomization};
use crate::support::output::progress;

/// What charts see without a cluster, as the one line says it.
const OFFLINE: &str = ".Capabilities as --kube-version and --api-versions give them, lookup finding nothing";

/// The fleet cluster `connection` reaches, by name, and the connection; None (said why) when there is none.
pub async fn find(
    connection: Option<&Connection>,
    entries: &BTreeMap<String, Vec<Kustomization>>,
) -> Option<(String, Cluster)> {
    let Some(connection) = connection else {
        progress::action(format!("without a cluster (--offline), every fleet cluster renders with {OFFLINE}"));
        return None;
    };
    let cluster = match connection.get().await {
        Ok(c) => c.clone(),
        Err(e) => {
            progress::warning(format!(
                "no cluster ({e}): every fleet cluster renders with {OFFLINE} (--offline reads no cluster)"
            ));
            return None;
        }
    };
    for (name, ks) in entries {
        for k in ks {
            if runs(&cluster, k).await {
                progress::action(format!(
                    "{name} is the cluster at {} (Kustomization {} builds ./{} there): its releases render with its capabilities and lookups; the other fleet clusters with {OFFLINE}",
                    cluster.server,
                    k.key(),
                    k.path()
                ));
                return Some((name.clone(), cluster));
            }
        }
    }
    progress::action(format!(
        "the cluster at {} runs none of the fleet's clusters (none of their entry Kustomizations is there): every fleet cluster renders with {OFFLINE}",
        cluster.server
    ));
    None
}

/// Whether `cluster` has Kustomization `k`, building the same path.
async fn runs(cluster: &Cluster, k: &Kustomization) -> bool {
    let gvk = GroupVersionKind::gvk(kustomization::GROUP, "v1", kustomization::KIND);
    let api: Api<DynamicObject> =
        Api::namespaced_with(cluster.client.clone(), k.namespace(), &ApiResource::from_gvk(&gvk));
    let Ok(Some(live)) = api.get_opt(&k.metadata.name).await else { return false };
    let path = live.data.pointer("/spec/path").and_then(serde_json::Value::as_str).unwrap_or_default();
    kustomization::clean_path(path) == k.path()
}
