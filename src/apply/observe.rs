//! `status.history` as helm-controller's storage observers write it while an action runs
//! (`internal/reconcile/{release,test,rollback_remediation,uninstall_remediation}.go`): helm-controller
//! sees every write Helm makes to its storage and turns the releases written into snapshots. helm cozy
//! runs the Helm CLI instead, so it reads the storage before and after each action
//! ([`crate::cluster::helmstore::Storage`]) and applies the same rules to what was written:
//!
//! - an install or upgrade: the newest revision written goes in front (its action, the chart's OCI
//!   digest); of the older revisions written or deleted (`maxHistory` pruned them: the observer sees
//!   deletions too), the newest one already in the history is taken again (Helm superseded it, or wrote
//!   it back unchanged after a failure) and loses its action, keeping its OCI digest and test hooks. An
//!   install starts the history over;
//! - a test: the newest snapshot is taken again with the test hooks of the run;
//! - a rollback: each revision written replaces its snapshot with action `rollback`, or goes in front
//!   when the history has none (the new revision); a revision Helm pruned (`maxHistory`) as it created
//!   its own is seen first, and goes in front without an action when the history has none;
//! - an uninstall remediation: the snapshot of each revision written or purged is taken again with action
//!   `uninstall-remediation` (`uninstalling` when the storage was purged, `uninstalled` when kept).
//!
//! A snapshot is always rebuilt from the stored release, never copied with a changed field: its digest
//! covers the release's status, and helm-controller verifies it before it rolls back to it.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::cluster::helmstore::{Storage, StoredRelease};
use crate::flux::helmrelease::{Snapshot, TestHookStatus};

/// The action that wrote to the storage, as the snapshots name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writer<'a> {
    Install { oci_digest: &'a str },
    Upgrade { oci_digest: &'a str },
    Rollback,
    UninstallRemediation,
}

/// A snapshot of `release` with `action` (empty: none) and `oci_digest`, its config digest `config`.
fn snapshot_of(release: &StoredRelease, config: &str, action: &str, oci_digest: &str) -> Option<Snapshot> {
    let value = crate::apply::snapshot::try_snapshot(&release.raw, config.to_string(), action, oci_digest).ok()?;
    serde_json::from_value(value).ok()
}

/// The config digest helm-controller records for a stored release: that of its snapshot when the history
/// has one (the config of a revision never changes), else that of a snapshot whose revision holds the
/// same config (a rollback copies its target's), else computed from the stored config.
fn config_digest(history: &[Snapshot], release: &StoredRelease, storage: &Storage) -> String {
    if let Some(s) = find(history, release) {
        return history[s].config_digest.clone();
    }
    let same =
        history.iter().find(|s| storage.get(s.version).is_some_and(|r| r.name == s.name && r.config == release.config));
    match (same, &release.config) {
        (Some(s), _) => s.config_digest.clone(),
        (None, Value::Object(config)) => crate::values::digest_values(config),
        (None, _) => crate::values::digest_values(&serde_json::Map::new()),
    }
}

fn find(history: &[Snapshot], release: &StoredRelease) -> Option<usize> {
    history
        .iter()
        .position(|s| s.name == release.name && s.namespace == release.namespace && s.version == release.version)
}

/// The history after an install or upgrade wrote `written` (newest first); `new_config` is the digest of
/// the values the action was given.
pub fn after_release(
    history: &[Snapshot],
    written: &[&StoredRelease],
    writer: Writer<'_>,
    new_config: &str,
) -> Vec<Snapshot> {
    let (action, oci, install) = match writer {
        Writer::Install { oci_digest } => ("install", oci_digest, true),
        Writer::Upgrade { oci_digest } => ("upgrade", oci_digest, false),
        _ => return history.to_vec(),
    };
    let mut out: Vec<Snapshot> = if install { Vec::new() } else { history.to_vec() };
    let Some((newest, older)) = written.split_first() else { return out };
    // Taken again: the newest older revision the history already holds.
    if let Some(prev) = older.iter().find_map(|r| find(&out, r).map(|i| (i, *r))) {
        let (i, release) = prev;
        let kept = &out[i];
        let oci = kept.oci_digest.clone().unwrap_or_default();
        if let Some(mut again) = snapshot_of(release, &kept.config_digest, "", &oci) {
            again.test_hooks = kept.test_hooks.clone();
            out[i] = again;
        }
    }
    if let Some(snapshot) = snapshot_of(newest, new_config, action, oci) {
        out.retain(|s| s.version != newest.version || s.name != newest.name);
        out.insert(0, snapshot);
    }
    out
}

/// The history after a test run on its newest revision, stored now as `tested`: the newest snapshot with
/// the run's `hooks`.
pub fn after_test(
    history: &[Snapshot],
    tested: &StoredRelease,
    hooks: BTreeMap<String, TestHookStatus>,
) -> Vec<Snapshot> {
    let mut out = history.to_vec();
    if let Some(latest) = out.first_mut()
        && latest.version == tested.version
        && latest.name == tested.name
    {
        let action = latest.action.clone().unwrap_or_default();
        let oci = latest.oci_digest.clone().unwrap_or_default();
        if let Some(mut again) = snapshot_of(tested, &latest.config_digest, &action, &oci) {
            again.test_hooks = Some(hooks);
            *latest = again;
        }
    }
    out
}

/// The history after a rollback or an uninstall remediation: `written` are the revisions written (newest
/// first), `purged` those deleted from the storage (pruned by `maxHistory`, or by the uninstall), as they
/// were before.
pub fn after_remediation(
    history: &[Snapshot],
    storage: &Storage,
    written: &[&StoredRelease],
    purged: &[&StoredRelease],
    writer: Writer<'_>,
) -> Vec<Snapshot> {
    let action = match writer {
        Writer::Rollback => "rollback",
        Writer::UninstallRemediation => "uninstall-remediation",
        _ => return history.to_vec(),
    };
    let mut out = history.to_vec();
    if writer == Writer::Rollback {
        // Helm's rollback prunes the oldest revisions (`maxHistory`) as it creates its own; the observer
        // sees each deletion first. One the history has none of goes in front without an action.
        for release in purged.iter().rev() {
            let config = config_digest(&out, release, storage);
            observe(&mut out, release, &config, action, "");
        }
    }
    // Oldest first, as Helm writes them: a new revision met first goes in front.
    for release in written.iter().rev() {
        let config = config_digest(&out, release, storage);
        observe(&mut out, release, &config, action, action);
    }
    if writer == Writer::UninstallRemediation {
        for release in purged {
            let Some(i) = find(&out, release) else { continue };
            // Helm purges what it marked `uninstalling` first; the observer sees the copy it deletes.
            let mut uninstalling = (*release).clone();
            if let Some(info) = uninstalling.raw.get_mut("info").and_then(Value::as_object_mut) {
                info.insert("status".into(), "uninstalling".into());
                info.insert("description".into(), "Deletion in progress (or silently failed)".into());
                let now = jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
                info.insert("deleted".into(), now.into());
            }
            let config = out[i].config_digest.clone();
            observe(&mut out, &uninstalling, &config, action, action);
        }
    }
    out
}

/// One release the observer saw written or deleted: its snapshot taken again with `action` (keeping the
/// OCI digest and test hooks), or, when the history has none, a new one in front with `new_action`.
fn observe(out: &mut Vec<Snapshot>, release: &StoredRelease, config: &str, action: &str, new_action: &str) {
    match find(out, release) {
        Some(i) => {
            let kept = &out[i];
            let oci = kept.oci_digest.clone().unwrap_or_default();
            if let Some(mut again) = snapshot_of(release, config, action, &oci) {
                again.test_hooks = kept.test_hooks.clone();
                out[i] = again;
            }
        }
        None => {
            if let Some(new) = snapshot_of(release, config, new_action, "") {
                out.insert(0, new);
            }
        }
    }
}

/// `Snapshots.Truncate`: newest first, up to and with the first older revision that is deployed or
/// superseded and whose tests did not fail (unless `ignore_tests`); without one, at most five.
pub fn truncate(history: &[Snapshot], ignore_tests: bool) -> Vec<Snapshot> {
    let mut sorted = history.to_vec();
    sorted.sort_by_key(|s| std::cmp::Reverse(s.version));
    let keep = sorted.iter().enumerate().skip(1).find(|(_, s)| {
        matches!(s.status.as_str(), "deployed" | "superseded") && (ignore_tests || !s.has_test_in_phase("Failed"))
    });
    match keep {
        Some((i, _)) => sorted.truncate(i + 1),
        None => sorted.truncate(MAX_KEPT),
    }
    sorted
}

/// `Snapshots.TruncateIgnoringPreviousSnapshots` (under `RetryOnFailure`): the newest five.
pub fn truncate_keeping_five(history: &[Snapshot]) -> Vec<Snapshot> {
    let mut sorted = history.to_vec();
    sorted.sort_by_key(|s| std::cmp::Reverse(s.version));
    sorted.truncate(MAX_KEPT);
    sorted
}

/// `defaultMaxHistory` of the snapshots (not `spec.maxHistory`, which is Helm's).
const MAX_KEPT: usize = 5;

/// `Snapshots.Previous`: the newest snapshot after the first that is deployed or superseded and whose
/// tests did not fail (unless `ignore_tests`): the rollback target.
pub fn previous(history: &[Snapshot], ignore_tests: bool) -> Option<&Snapshot> {
    history.iter().skip(1).find(|s| {
        matches!(s.status.as_str(), "deployed" | "superseded") && (ignore_tests || !s.has_test_in_phase("Failed"))
    })
}

/// Whether helm-controller can roll back to `target` (`VerifySnapshot`): its revision is stored and the
/// snapshot's digest is the stored release's.
pub fn verifies(target: &Snapshot, storage: &Storage) -> bool {
    let Some(stored) = storage.get(target.version).filter(|r| r.name == target.name) else { return false };
    let oci = target.oci_digest.as_deref().unwrap_or("");
    snapshot_of(stored, &target.config_digest, "", oci)
        .is_some_and(|s| s.digest == target.digest && !s.digest.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stored(version: i64, status: &str, modified: &str) -> StoredRelease {
        stored_with(version, status, modified, version)
    }

    fn stored_with(version: i64, status: &str, modified: &str, config: i64) -> StoredRelease {
        let raw = json!({
            "name": "app", "namespace": "apps", "version": version,
            "info": {"status": status, "first_deployed": "2026-01-01T00:00:00Z", "last_deployed": "2026-01-01T00:00:00Z", "description": "d"},
            "chart": {"metadata": {"name": "app", "version": format!("0.{version}.0"), "apiVersion": "v2"}},
            "config": {"v": config}, "manifest": "", "hooks": [],
        });
        let mut r = crate::cluster::helmstore::decode(&crate::cluster::helmstore::encode_json(&raw)).unwrap();
        r.modified_at = Some(modified.into());
        r
    }

    fn storage(list: Vec<StoredRelease>) -> Storage {
        let mut revisions = list;
        revisions.sort_by_key(|r| std::cmp::Reverse(r.version));
        Storage { revisions }
    }

    fn actions(h: &[Snapshot]) -> Vec<(i64, String, String)> {
        h.iter().map(|s| (s.version, s.status.clone(), s.action.clone().unwrap_or_default())).collect()
    }

    #[test]
    fn a_failed_upgrade_then_its_rollback_as_helm_controller_records_them() {
        let s0 = storage(vec![stored(1, "deployed", "1")]);
        let h0 = after_release(&[], &s0.written_since(&Storage::default()), Writer::Install { oci_digest: "" }, "c1");
        assert_eq!(actions(&h0), [(1, "deployed".into(), "install".into())]);
        // The upgrade failed after Helm stored it; v1 was written back unchanged.
        let s1 = storage(vec![stored(1, "deployed", "2"), stored(2, "failed", "2")]);
        let h1 = after_release(&h0, &s1.written_since(&s0), Writer::Upgrade { oci_digest: "" }, "c2");
        assert_eq!(actions(&h1), [(2, "failed".into(), "upgrade".into()), (1, "deployed".into(), String::new())]);
        assert_eq!(h1[1].digest, h0[0].digest, "the same release, the same digest");
        // The rollback to v1: v3 made, v1 superseded.
        let target = previous(&truncate(&h1, false), false).cloned().unwrap();
        assert_eq!(target.version, 1);
        assert!(verifies(&target, &s1));
        let s2 =
            storage(vec![stored(1, "superseded", "3"), stored(2, "failed", "2"), stored_with(3, "deployed", "3", 1)]);
        let h2 = after_remediation(&h1, &s2, &s2.written_since(&s1), &[], Writer::Rollback);
        assert_eq!(
            actions(&h2),
            [
                (3, "deployed".into(), "rollback".into()),
                (2, "failed".into(), "upgrade".into()),
                (1, "superseded".into(), "rollback".into()),
            ]
        );
        assert_ne!(h2[2].digest, h0[0].digest, "superseded is another release to Helm: a new digest");
        assert_eq!(h2[0].config_digest, "c1", "v3 holds v1's config");
    }

    /// The third rollback under `maxHistory: 5`: Helm prunes v2 (failed, long truncated away) as it
    /// creates v7; helm-controller's observer puts it back in front, without an action, before v7.
    #[test]
    fn a_revision_pruned_by_a_rollback_comes_back_to_the_history() {
        let before =
            storage((2..=6).map(|v| stored(v, if v % 2 == 0 { "failed" } else { "superseded" }, "1")).collect());
        let snap = |v: i64, action: &str| before.get(v).and_then(|r| snapshot_of(r, "c", action, "")).unwrap();
        let h = vec![snap(6, "upgrade"), snap(5, "rollback")];
        let mut kept: Vec<StoredRelease> = (3..=6).map(|v| before.get(v).cloned().unwrap()).collect();
        kept.push(stored_with(7, "deployed", "2", 5));
        let after = storage(kept);
        let h = after_remediation(
            &h,
            &after,
            &after.written_since(&before),
            &after.deleted_since(&before),
            Writer::Rollback,
        );
        assert_eq!(
            actions(&h),
            [
                (7, "deployed".into(), "rollback".into()),
                (2, "failed".into(), String::new()),
                (6, "failed".into(), "upgrade".into()),
                (5, "superseded".into(), "rollback".into()),
            ]
        );
    }

    #[test]
    fn truncation_keeps_up_to_the_last_good_revision() {
        let snap = |v: i64, status: &str, failed_test: bool| Snapshot {
            version: v,
            status: status.into(),
            test_hooks: failed_test.then(|| {
                BTreeMap::from([(
                    "t".to_string(),
                    TestHookStatus { phase: Some("Failed".into()), ..Default::default() },
                )])
            }),
            ..Default::default()
        };
        let h = [
            snap(4, "deployed", false),
            snap(3, "failed", false),
            snap(2, "superseded", true),
            snap(1, "superseded", false),
        ];
        assert_eq!(truncate(&h, false).len(), 4);
        assert_eq!(truncate(&h, true).len(), 3);
        assert_eq!(previous(&h, false).map(|s| s.version), Some(1));
        assert_eq!(previous(&h, true).map(|s| s.version), Some(2));
        let failed: Vec<Snapshot> = (1..=7).rev().map(|v| snap(v, "failed", false)).collect();
        assert_eq!(truncate(&failed, false).len(), 5);
        assert_eq!(truncate_keeping_five(&h).len(), 4);
    }
}
