//! Writing a HelmRelease's status the way helm-controller does after it ran an install or upgrade, so the
//! controller later takes the release for its own (reference §4): conditions with its reasons and message
//! formats, a history snapshot with Go-exact digests, the lastAttempted* fields, storage namespace, the
//! observed post-render digests and the inventory.
//!
//! The status is computed here from the current object and written by
//! [`crate::flux::Objects::write_status`], which recomputes it when the object changed meanwhile.

use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::error::{Error, Result};
use crate::flux::HelmRelease;
use crate::flux::condition::Condition;
use crate::helmstore::StoredRelease;
use crate::manifests::{ClusterScoped, parse_manifests};

pub const READY: &str = "Ready";
pub const RELEASED: &str = "Released";
/// Our reason for an apply stopped by Ctrl-C or SIGTERM.
pub const INTERRUPTED_REASON: &str = "ApplyInterrupted";

/// Which Helm action ran, in helm-controller's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Install,
    Upgrade,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Install => "install",
            Action::Upgrade => "upgrade",
        }
    }
    fn succeeded_reason(self) -> &'static str {
        match self {
            Action::Install => "InstallSucceeded",
            Action::Upgrade => "UpgradeSucceeded",
        }
    }
    fn failed_reason(self) -> &'static str {
        match self {
            Action::Install => "InstallFailed",
            Action::Upgrade => "UpgradeFailed",
        }
    }
    fn title(self) -> &'static str {
        match self {
            Action::Install => "install",
            Action::Upgrade => "upgrade",
        }
    }
}

/// What a successful apply hands to [`succeeded`].
pub struct Success<'a> {
    pub action: Action,
    /// The objects of the chart's `crds/` files, listed in the inventory after the release's.
    pub crds: &'a [Value],
    pub release: &'a StoredRelease,
    pub config_digest: String,
    pub storage_namespace: &'a str,
    pub release_namespace: &'a str,
    pub duration: Duration,
    /// Which kinds are cluster-scoped: the cluster's discovery, as helm-controller asks its REST mapper.
    pub scoped: &'a ClusterScoped,
    /// Record `Drifted=False`: helm-controller v1.6 with drift detection enabled or warning finds the
    /// release it just made in sync with the cluster and says so (v1.5 writes no such condition).
    pub no_drift: bool,
}

/// The `Drifted` condition helm-controller v1.6 writes for a release in sync with the cluster.
pub const DRIFTED: &str = "Drifted";

/// What a failed apply hands to [`failed`].
pub struct Failure<'a> {
    pub action: Action,
    pub reason: Option<&'a str>,
    pub message: String,
    pub chart_name: &'a str,
    pub chart_version: &'a str,
    pub config_digest: String,
    pub storage_namespace: &'a str,
    /// The revision the failed action stored (a wait that failed after Helm wrote it), which
    /// helm-controller records in the history; None when nothing was stored.
    pub release: Option<&'a StoredRelease>,
}

fn now() -> String {
    // metav1.Time: RFC 3339, whole seconds, UTC.
    jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Sets a condition in a list the way apimachinery's meta.SetStatusCondition does: the transition time
/// changes only when the status changes.
fn set_condition(list: &mut Vec<Condition>, type_: &str, status: &str, reason: &str, message: &str, generation: i64) {
    let time = now();
    match list.iter_mut().find(|c| c.type_ == type_) {
        Some(c) => {
            if c.status != status {
                c.status = status.into();
                c.last_transition_time = time;
            }
            c.reason = reason.into();
            c.message = message.into();
            c.observed_generation = Some(generation);
        }
        None => list.push(Condition {
            type_: type_.into(),
            status: status.into(),
            observed_generation: Some(generation),
            last_transition_time: time,
            reason: reason.into(),
            message: message.into(),
        }),
    }
}

fn remove_condition(list: &mut Vec<Condition>, type_: &str) {
    list.retain(|c| c.type_ != type_);
}

/// `status.inventory.entries` of a release manifest, as helm-controller builds it: hooks excluded,
/// namespaced objects without a namespace in the release namespace (`scope` says which kinds are
/// cluster-scoped), ids `ns_name_group_kind`.
pub fn inventory(manifest: &str, release_namespace: &str, scope: &ClusterScoped) -> Value {
    let mut entries = Vec::new();
    if let Ok(objects) = parse_manifests(manifest) {
        for mut m in objects {
            if m.object.pointer("/metadata/annotations/helm.sh~1hook").is_some() {
                continue;
            }
            let cluster_scoped = scope.contains(&m.id.group, &m.id.kind);
            m.default_namespace(release_namespace, cluster_scoped);
            let ns = m.id.namespace.clone().unwrap_or_default();
            let name = m.id.name.replace(':', "__");
            entries.push(json!({
                "id": format!("{ns}_{name}_{}_{}", m.id.group, m.id.kind),
                "v": m.id.version.clone().unwrap_or_default(),
            }));
        }
    }
    json!({ "entries": entries })
}

/// The status helm-controller would hold after a successful install or upgrade.
pub fn succeeded(hr: &HelmRelease, s: &Success<'_>) -> Result<Value> {
    let generation = hr.metadata.generation.unwrap_or(0);
    let status = hr.status.clone().unwrap_or_default();
    let snapshot = crate::snapshot::try_snapshot(&s.release.raw, s.config_digest.clone(), s.action.as_str(), "")
        .map_err(|e| Error::Invalid { what: "stored Helm release".into(), reason: e.to_string() })?;

    // History: an install starts over; an upgrade keeps the previous deployed revision, now superseded
    // (Snapshots.Truncate keeps the latest and the first deployed-or-superseded one before it).
    let mut history = vec![snapshot];
    if s.action == Action::Upgrade
        && let Some(prev) = status.history.iter().find(|p| {
            p.name == s.release.name
                && p.version < s.release.version
                && (p.status == "deployed" || p.status == "superseded")
        })
    {
        let mut prev =
            serde_json::to_value(prev).map_err(|e| Error::Invalid { what: "history".into(), reason: e.to_string() })?;
        prev["status"] = "superseded".into();
        history.push(prev);
    }

    let msg = format!(
        "Helm {} succeeded for release {}/{}.v{} with chart {}@{}",
        s.action.title(),
        s.release.namespace,
        s.release.name,
        s.release.version,
        s.release.chart_name,
        s.release.chart_version
    );
    let mut conditions = status.reconcile.conditions.clone();
    for t in ["Reconciling", "Stalled", "Remediated"] {
        remove_condition(&mut conditions, t);
    }
    set_condition(&mut conditions, RELEASED, "True", s.action.succeeded_reason(), &msg, generation);
    set_condition(&mut conditions, READY, "True", s.action.succeeded_reason(), &msg, generation);
    if s.no_drift {
        set_condition(
            &mut conditions,
            DRIFTED,
            "False",
            "NoDriftDetected",
            "No drift detected against the cluster state",
            generation,
        );
    }

    let mut out = Map::new();
    out.insert("observedGeneration".into(), generation.into());
    out.insert("lastAttemptedGeneration".into(), generation.into());
    out.insert("lastAttemptedRevision".into(), s.release.chart_version.clone().into());
    out.insert("lastAttemptedRevisionDigest".into(), Value::Null);
    out.insert("lastAttemptedConfigDigest".into(), s.config_digest.clone().into());
    out.insert("lastAttemptedReleaseAction".into(), s.action.as_str().into());
    out.insert("lastAttemptedReleaseActionDuration".into(), crate::duration::go_string(s.duration).into());
    out.insert("lastAttemptedValuesChecksum".into(), Value::Null);
    out.insert("lastReleaseRevision".into(), Value::Null);
    out.insert("storageNamespace".into(), s.storage_namespace.into());
    out.insert("history".into(), Value::Array(history));
    let mut inv = inventory(&s.release.manifest, s.release_namespace, s.scoped);
    if let Some(entries) = inv.get_mut("entries").and_then(Value::as_array_mut) {
        entries.extend(crate::crds::inventory_entries(s.crds));
    }
    out.insert("inventory".into(), inv);
    out.insert(
        "conditions".into(),
        serde_json::to_value(&conditions)
            .map_err(|e| Error::Invalid { what: "conditions".into(), reason: e.to_string() })?,
    );
    let pr = hr.spec.post_renderers.as_ref();
    let cm = hr.spec.common_metadata.as_ref().map(serde_json::to_value).transpose().ok().flatten();
    out.insert("observedPostRenderersDigest".into(), digest_or_null(crate::snapshot::post_renderers_digest(pr)));
    out.insert(
        "observedCommonMetadataDigest".into(),
        digest_or_null(crate::snapshot::common_metadata_digest(cm.as_ref())),
    );
    Ok(Value::Object(out))
}

fn digest_or_null(d: String) -> Value {
    if d.is_empty() { Value::Null } else { Value::String(d) }
}

/// The status after a failed (or interrupted) install or upgrade: Released and Ready False with the
/// reason and message, failure counters incremented; history and observed digests left alone.
pub fn failed(hr: &HelmRelease, f: &Failure<'_>) -> Value {
    let generation = hr.metadata.generation.unwrap_or(0);
    let status = hr.status.clone().unwrap_or_default();
    let reason = f.reason.unwrap_or(f.action.failed_reason());
    let msg = format!(
        "Helm {} failed for release {}/{} with chart {}@{}: {}",
        f.action.title(),
        hr.release_namespace(),
        hr.release_name(),
        f.chart_name,
        f.chart_version,
        f.message.trim()
    );
    let mut conditions = status.reconcile.conditions.clone();
    remove_condition(&mut conditions, "Reconciling");
    set_condition(&mut conditions, RELEASED, "False", reason, &msg, generation);
    set_condition(&mut conditions, READY, "False", reason, &msg, generation);
    let bump = |v: Option<i64>| v.unwrap_or(0) + 1;
    let mut out = Map::new();
    out.insert("observedGeneration".into(), generation.into());
    out.insert("lastAttemptedGeneration".into(), generation.into());
    out.insert("lastAttemptedRevision".into(), f.chart_version.into());
    out.insert("lastAttemptedConfigDigest".into(), f.config_digest.clone().into());
    out.insert("lastAttemptedReleaseAction".into(), f.action.as_str().into());
    out.insert("storageNamespace".into(), f.storage_namespace.into());
    out.insert("failures".into(), bump(status.failures).into());
    match f.action {
        Action::Install => out.insert("installFailures".into(), bump(status.install_failures).into()),
        Action::Upgrade => out.insert("upgradeFailures".into(), bump(status.upgrade_failures).into()),
    };
    if let Some(r) = f.release
        && let Ok(snapshot) = crate::snapshot::try_snapshot(&r.raw, f.config_digest.clone(), f.action.as_str(), "")
    {
        // An install starts the history over; a failed upgrade goes in front of what was there.
        let mut history = vec![snapshot];
        if f.action == Action::Upgrade {
            history.extend(status.history.iter().filter_map(|h| serde_json::to_value(h).ok()));
        }
        out.insert("history".into(), Value::Array(history));
    }
    out.insert("conditions".into(), serde_json::to_value(&conditions).unwrap_or(Value::Array(Vec::new())));
    Value::Object(out)
}

/// How the uninstall of a release whose target changed ended, for [`retargeted`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Uninstalled {
    /// Helm uninstalled it.
    Done,
    /// The storage held no such release: nothing to uninstall.
    NotFound,
    /// It was uninstalled already, its history kept (`spec.uninstall.keepHistory`).
    Already,
}

/// The message helm-controller's uninstall writes to `Released` (`internal/reconcile/uninstall.go`) for
/// `hr`'s newest history entry; None when the history is empty.
pub fn uninstalled_message(hr: &HelmRelease, how: Uninstalled) -> Option<String> {
    let cur = crate::release_target::latest(hr)?;
    let full = format!("{}/{}.v{}", cur.namespace, cur.name, cur.version);
    Some(match how {
        Uninstalled::Done => {
            format!("Helm uninstall succeeded for release {full} with chart {}@{}", cur.chart_name, cur.chart_version)
        }
        Uninstalled::NotFound => format!("Release {full} was not found, assuming it is uninstalled"),
        Uninstalled::Already => format!("Release {full} was already uninstalled"),
    })
}

/// The status helm-controller writes once it uninstalled the release of a changed target (its
/// `reconcileRelease` after `ReleaseTargetChanged`), before the next reconcile installs at the new one:
/// `Released` and `Ready` False `UninstallSucceeded`, and the history, failure counters, storage
/// namespace and inventory cleared (null: the status is written as a merge patch).
pub fn retargeted(hr: &HelmRelease, how: Uninstalled) -> Result<Value> {
    let generation = hr.metadata.generation.unwrap_or(0);
    let status = hr.status.clone().unwrap_or_default();
    let message = uninstalled_message(hr, how).unwrap_or_default();
    let mut conditions = status.reconcile.conditions.clone();
    set_condition(&mut conditions, RELEASED, "False", "UninstallSucceeded", &message, generation);
    set_condition(&mut conditions, READY, "False", "UninstallSucceeded", &message, generation);
    let conditions = serde_json::to_value(&conditions)
        .map_err(|e| Error::Invalid { what: "conditions".into(), reason: e.to_string() })?;
    Ok(json!({
        "history": null,
        "failures": null,
        "installFailures": null,
        "upgradeFailures": null,
        "storageNamespace": null,
        "inventory": null,
        "conditions": conditions,
    }))
}

/// The status after the uninstall of a changed target's release failed: `failures` incremented,
/// `Released` and `Ready` False `UninstallFailed` with helm-controller's message; the history is kept,
/// so the next attempt uninstalls the same release.
pub fn retarget_failed(hr: &HelmRelease, error: &str) -> Result<Value> {
    let generation = hr.metadata.generation.unwrap_or(0);
    let status = hr.status.clone().unwrap_or_default();
    let message = match crate::release_target::latest(hr) {
        Some(cur) => format!(
            "Helm uninstall failed for release {}/{}.v{} with chart {}@{}: {}",
            cur.namespace,
            cur.name,
            cur.version,
            cur.chart_name,
            cur.chart_version,
            error.trim()
        ),
        None => error.trim().to_string(),
    };
    let mut conditions = status.reconcile.conditions.clone();
    set_condition(&mut conditions, RELEASED, "False", "UninstallFailed", &message, generation);
    set_condition(&mut conditions, READY, "False", "UninstallFailed", &message, generation);
    let conditions = serde_json::to_value(&conditions)
        .map_err(|e| Error::Invalid { what: "conditions".into(), reason: e.to_string() })?;
    Ok(json!({ "failures": status.failures.unwrap_or(0) + 1, "conditions": conditions }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transition_time_changes_only_with_status() {
        let mut list = Vec::new();
        set_condition(&mut list, READY, "False", "A", "a", 1);
        list[0].last_transition_time = "2020-01-01T00:00:00Z".into();
        set_condition(&mut list, READY, "False", "B", "b", 2);
        assert_eq!(list[0].last_transition_time, "2020-01-01T00:00:00Z");
        assert_eq!((list[0].reason.as_str(), list[0].observed_generation), ("B", Some(2)));
        set_condition(&mut list, READY, "True", "C", "c", 2);
        assert_ne!(list[0].last_transition_time, "2020-01-01T00:00:00Z");
    }

    #[test]
    fn a_changed_target_clears_what_helm_controller_clears() {
        let hr: HelmRelease = serde_json::from_value(json!({
            "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {"name": "a", "namespace": "flux", "generation": 3},
            "spec": {"targetNamespace": "other"},
            "status": {
                "storageNamespace": "flux", "failures": 2, "installFailures": 1,
                "history": [{"name": "apps-a", "namespace": "apps", "version": 4, "chartName": "demo",
                             "chartVersion": "0.1.0", "status": "deployed"}],
                "conditions": [{"type": "Ready", "status": "True", "reason": "UpgradeSucceeded", "message": "m",
                                "lastTransitionTime": "2020-01-01T00:00:00Z"}]
            }
        }))
        .unwrap();
        let status = retargeted(&hr, Uninstalled::Done).unwrap();
        for cleared in ["history", "failures", "installFailures", "upgradeFailures", "storageNamespace", "inventory"] {
            assert_eq!(status[cleared], Value::Null, "{cleared}");
            assert!(status.as_object().unwrap().contains_key(cleared), "{cleared} is written as null");
        }
        let message = "Helm uninstall succeeded for release apps/apps-a.v4 with chart demo@0.1.0";
        for type_ in [READY, RELEASED] {
            let c = status["conditions"].as_array().unwrap().iter().find(|c| c["type"] == type_).unwrap();
            assert_eq!(
                (&c["status"], &c["reason"], &c["message"]),
                (&json!("False"), &json!("UninstallSucceeded"), &json!(message))
            );
            assert_eq!(c["observedGeneration"], 3);
        }
        assert_eq!(
            uninstalled_message(&hr, Uninstalled::NotFound).unwrap(),
            "Release apps/apps-a.v4 was not found, assuming it is uninstalled"
        );
        let failed = retarget_failed(&hr, "boom\n").unwrap();
        assert_eq!(failed["failures"], 3);
        assert!(failed.get("history").is_none(), "the history is kept");
        let ready = failed["conditions"].as_array().unwrap().iter().find(|c| c["type"] == READY).unwrap();
        assert_eq!(ready["message"], "Helm uninstall failed for release apps/apps-a.v4 with chart demo@0.1.0: boom");
    }

    #[test]
    fn inventory_ids_follow_cli_utils() {
        let inv = inventory(
            "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: r\n---\napiVersion: cs.example.io/v1\nkind: WidgetClass\nmetadata:\n  name: w\n",
            "apps",
            &{
                let mut scoped = ClusterScoped::builtin();
                scoped.insert("cs.example.io", "WidgetClass");
                scoped
            },
        );
        assert_eq!(inv["entries"][0], json!({"id": "apps_a__ConfigMap", "v": "v1"}));
        assert_eq!(inv["entries"][1], json!({"id": "_r_rbac.authorization.k8s.io_ClusterRole", "v": "v1"}));
        assert_eq!(inv["entries"][2], json!({"id": "_w_cs.example.io_WidgetClass", "v": "v1"}));
    }
}
