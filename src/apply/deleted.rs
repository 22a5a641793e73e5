//! The HelmRelease after `helm cozy delete`: its status tells the truth, that the release is gone and
//! how to bring it back, for `get`, `status`, `drift`, dependents and whoever reads it.
//!
//! helm-controller writes nothing of the kind: it never uninstalls a release it keeps. What is written is
//! in its own words where it has them: Ready and Released False with `UninstallSucceeded` (its reason for
//! an uninstall that went well), the newest history entry marked `uninstalled` (as its observer records
//! an uninstalled release), the conditions of what no longer exists (tests, remediation, drift, a
//! stall) removed. On resume helm-controller finds no release in storage and installs it again; the
//! failure counters and history it keeps are its own business then.

use kube::runtime::events::EventType;
use serde_json::{Value, json};

use crate::apply::install::Release;
use crate::apply::status::{DRIFTED, READY, RECONCILING, RELEASED, REMEDIATED, STALLED, TEST_SUCCESS};
use crate::cluster::Cluster;
use crate::flux::HelmRelease;
use crate::flux::verbs::Objects;
use crate::support::error::Result;

pub use crate::flux::helmrelease::DELETED_REASON as REASON;

/// The words of Ready, Released and the Event after HelmRelease `name`'s `release` was deleted.
pub fn message(name: &str, namespace: &str, release: &Release) -> String {
    format!(
        "Helm release {}/{} was uninstalled by {} delete; the HelmRelease stays suspended: {} {name} -n {namespace} lets Flux install it again",
        release.namespace,
        release.name,
        crate::support::output::chart_command(),
        crate::support::output::lifecycle_command("resume"),
    )
}

/// Writes the status of a deleted release on HelmRelease `name`, removes the local-chart mark (there is
/// no local chart running any more) and records the Event.
pub(super) async fn record(cluster: &Cluster, name: &str, release: &Release) -> Result<()> {
    let objects = Objects::<HelmRelease>::namespaced(cluster, &cluster.namespace);
    let message = message(name, &cluster.namespace, release);
    let written = objects.write_status(name, |hr| Ok(status_patch(hr, &message))).await?;
    objects.annotate(name, crate::apply::handback::LOCAL_CHART_ANNOTATION, None).await?;
    super::events::emit(cluster, &written, EventType::Normal, REASON, &message).await;
    Ok(())
}

/// The status merge patch: conditions as the module docs say, the newest snapshot `uninstalled`.
fn status_patch(hr: &HelmRelease, message: &str) -> Value {
    let status = hr.status.clone().unwrap_or_default();
    let generation = hr.metadata.generation;
    let now = jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    let gone = [READY, RELEASED, TEST_SUCCESS, REMEDIATED, STALLED, RECONCILING, DRIFTED];
    let mut conditions: Vec<Value> = status
        .reconcile
        .conditions
        .iter()
        .filter(|c| !gone.contains(&c.type_.as_str()))
        .filter_map(|c| serde_json::to_value(c).ok())
        .collect();
    for type_ in [READY, RELEASED] {
        let mut c = json!({"type": type_, "status": "False", "reason": REASON, "message": message,
                           "lastTransitionTime": now});
        if let Some(g) = generation {
            c["observedGeneration"] = g.into();
        }
        conditions.insert(if type_ == READY { 0 } else { conditions.len() }, c);
    }
    let mut history = status.history.clone();
    let newest = history.iter_mut().max_by_key(|s| s.version);
    if let Some(s) = newest {
        s.status = "uninstalled".into();
        s.deleted = Some(now);
    }
    json!({"conditions": conditions, "history": history})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_says_the_release_is_gone_and_how_to_bring_it_back() {
        let hr: HelmRelease = serde_json::from_value(json!({
            "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {"name": "mine", "namespace": "apps", "generation": 3},
            "spec": {},
            "status": {
                "conditions": [
                    {"type": "Ready", "status": "True", "reason": "InstallSucceeded", "message": "ok", "lastTransitionTime": "x"},
                    {"type": "Released", "status": "True", "reason": "InstallSucceeded", "message": "ok", "lastTransitionTime": "x"},
                    {"type": "Other", "status": "True", "reason": "Kept", "message": "", "lastTransitionTime": "x"},
                ],
                "history": [{"name": "mine", "namespace": "apps", "version": 2, "status": "deployed"},
                            {"name": "mine", "namespace": "apps", "version": 1, "status": "superseded"}],
            },
        }))
        .expect("a HelmRelease");
        let release = Release { name: "mine".into(), namespace: "apps".into(), storage_namespace: "apps".into() };
        let text = message("mine", "apps", &release);
        assert!(text.contains("apps/mine was uninstalled by helm cozy delete"), "{text}");
        assert!(text.contains("kubectl cozyhr resume mine -n apps lets Flux install it again"), "{text}");
        let patch = status_patch(&hr, &text);
        let types: Vec<&str> =
            patch["conditions"].as_array().expect("a list").iter().filter_map(|c| c["type"].as_str()).collect();
        assert_eq!(types, ["Ready", "Other", "Released"]);
        assert_eq!(patch["conditions"][0]["status"], "False");
        assert_eq!(patch["conditions"][0]["reason"], REASON);
        assert_eq!(patch["conditions"][0]["observedGeneration"], 3);
        assert_eq!(patch["history"][0]["status"], "uninstalled", "the newest entry");
        assert_eq!(patch["history"][1]["status"], "superseded");
        let mut after = hr.clone();
        after.status.as_mut().expect("a status").reconcile.conditions =
            serde_json::from_value(patch["conditions"].clone()).expect("conditions");
        assert!(after.deleted_by_delete());
        assert!(!hr.deleted_by_delete());
    }
}
