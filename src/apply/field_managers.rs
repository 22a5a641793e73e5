//! The field manager of what `apply` sets, made helm-controller's.
//!
//! Helm 4 applies server-side as field manager `helm` (its command fixes the name), helm-controller as
//! `helm-controller`. Server-side apply removes only fields the applying manager owns and no longer sets,
//! so after a hand-back a field the local chart added would stay, `helm`'s, through every later upgrade
//! by helm-controller, and a diff (a dry run as helm-controller) would not show it. So after a
//! server-side apply, the `helm` Apply entry of each of the release's objects is merged into
//! helm-controller's: the fields become helm-controller's, as if it had applied them, and its next
//! apply removes those the source's chart does not set (the same rewrite fluxcd/pkg's
//! `PatchReplaceFieldsManagers` makes for helm-controller's `--override-manager`).

use futures::StreamExt as _;
use kube::api::{Patch, PatchParams};
use serde_json::{Map, Value, json};

use crate::cluster::Cluster;
use crate::cluster::live::{FLUX_FIELD_MANAGER, LiveObjects};
use crate::support::error::{Error, Result};

/// Helm 4's field manager.
pub const HELM_FIELD_MANAGER: &str = "helm";

/// Moves the fields `helm` applied on the objects of `manifest` (defaulted to `namespace`) to
/// helm-controller's field manager; returns how many objects changed.
pub async fn take_over(cluster: &Cluster, manifest: &str, namespace: &str) -> Result<usize> {
    let mut manifests = crate::cluster::manifests::parse_manifests(manifest)
        .map_err(|e| Error::Invalid { what: "the stored release's manifest".into(), reason: e.to_string() })?;
    let apis = crate::cluster::discovery::discover(cluster).await?;
    let scoped = apis.cluster_scoped();
    crate::cluster::manifests::default_namespaces(&mut manifests, namespace, |g, k| scoped.contains(g, k));
    let live = LiveObjects::new(cluster, apis);
    let live = &live;
    let changed = futures::stream::iter(manifests.iter().map(|m| async move { take_over_one(live, &m.object).await }))
        .buffer_unordered(8)
        .collect::<Vec<Result<bool>>>()
        .await;
    let mut n = 0;
    for c in changed {
        n += usize::from(c?);
    }
    Ok(n)
}

async fn take_over_one(live: &LiveObjects<'_>, desired: &Value) -> Result<bool> {
    let Some(name) = desired.pointer("/metadata/name").and_then(Value::as_str) else { return Ok(false) };
    let api = live.api_for(desired)?;
    let Some(obj) = api.get_opt(name).await.map_err(|e| live.cluster().error(e))? else { return Ok(false) };
    let entries = serde_json::to_value(obj.metadata.managed_fields.unwrap_or_default()).unwrap_or_default();
    let Some(merged) = merged_entries(entries.as_array().map(Vec::as_slice).unwrap_or_default()) else {
        return Ok(false);
    };
    let resource_version = obj.metadata.resource_version.unwrap_or_default();
    // A merge patch replaces the list whole; the resourceVersion makes a concurrent writer fail the
    // patch rather than lose its fields.
    let patch = json!({"metadata": {"resourceVersion": resource_version, "managedFields": merged}});
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch)).await.map_err(|e| live.cluster().error(e))?;
    Ok(true)
}

/// The managedFields with each `helm` Apply entry (of the object itself, not a subresource) merged into
/// helm-controller's Apply entry of the same API version (renamed when there is none); None when there is
/// nothing of `helm`'s.
fn merged_entries(entries: &[Value]) -> Option<Vec<Value>> {
    let is_apply = |e: &Value, manager: &str| {
        e.get("manager").and_then(Value::as_str) == Some(manager)
            && e.get("operation").and_then(Value::as_str) == Some("Apply")
            && e.get("subresource").and_then(Value::as_str).unwrap_or_default().is_empty()
    };
    if !entries.iter().any(|e| is_apply(e, HELM_FIELD_MANAGER)) {
        return None;
    }
    let mut out: Vec<Value> = entries.iter().filter(|e| !is_apply(e, HELM_FIELD_MANAGER)).cloned().collect();
    for helm in entries.iter().filter(|e| is_apply(e, HELM_FIELD_MANAGER)) {
        let version = helm.get("apiVersion").cloned().unwrap_or(Value::Null);
        let target = out.iter_mut().find(|e| is_apply(e, FLUX_FIELD_MANAGER) && e.get("apiVersion") == Some(&version));
        match target {
            Some(flux) => {
                let mut fields = flux.get("fieldsV1").cloned().unwrap_or_else(|| Value::Object(Map::new()));
                union(&mut fields, helm.get("fieldsV1").unwrap_or(&Value::Null));
                flux["fieldsV1"] = fields;
                if let Some(time) = helm.get("time") {
                    flux["time"] = time.clone();
                }
            }
            None => {
                let mut renamed = helm.clone();
                renamed["manager"] = FLUX_FIELD_MANAGER.into();
                out.push(renamed);
            }
        }
    }
    Some(out)
}

/// Adds the field set `b` to `a` (fieldsV1 are trees of `f:`/`k:`/`v:` keys with `{}` leaves).
fn union(a: &mut Value, b: &Value) {
    let (Some(a), Some(b)) = (a.as_object_mut(), b.as_object()) else { return };
    for (k, v) in b {
        match a.get_mut(k) {
            Some(existing) => union(existing, v),
            None => {
                a.insert(k.clone(), v.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(manager: &str, operation: &str, fields: Value) -> Value {
        json!({"manager": manager, "operation": operation, "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": fields})
    }

    #[test]
    fn helms_fields_join_helm_controllers() {
        let entries = [
            entry("helm-controller", "Apply", json!({"f:data": {"f:a": {}}})),
            entry(
                "helm",
                "Apply",
                json!({"f:data": {"f:a": {}, "f:local": {}}, "f:metadata": {"f:labels": {"f:x": {}}}}),
            ),
            entry("kubectl-edit", "Update", json!({"f:data": {"f:b": {}}})),
        ];
        let merged = merged_entries(&entries).expect("helm's entry is merged");
        assert_eq!(merged.len(), 2, "{merged:?}");
        let flux = merged.iter().find(|e| e["manager"] == "helm-controller").unwrap();
        assert_eq!(
            flux["fieldsV1"],
            json!({"f:data": {"f:a": {}, "f:local": {}}, "f:metadata": {"f:labels": {"f:x": {}}}})
        );
        assert!(merged.iter().any(|e| e["manager"] == "kubectl-edit"), "other managers stay");
    }

    #[test]
    fn helm_alone_is_renamed_and_nothing_of_helms_changes_nothing() {
        let merged = merged_entries(&[entry("helm", "Apply", json!({"f:data": {}}))]).unwrap();
        assert_eq!(merged[0]["manager"], "helm-controller");
        assert!(merged_entries(&[entry("helm", "Update", json!({}))]).is_none(), "a client-side update is Helm's own");
        assert!(merged_entries(&[entry("helm-controller", "Apply", json!({}))]).is_none());
    }
}
