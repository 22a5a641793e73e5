//! The HelmRelease status helm-controller writes in one reconcile, kept as helm-controller keeps it: a
//! [`Ledger`] that each step of the reconcile changes the way the controller's code changes
//! `obj.Status` (`internal/reconcile/{atomic_release,install,upgrade,test,rollback_remediation,
//! uninstall_remediation}.go`), then written at once. So the reasons, message formats, counters, history,
//! `lastAttempted*` fields and `observedGeneration` are helm-controller's for a success, a failure, a
//! test, a remediation, and for how the reconcile ended (done, requeued, retried later, stalled).
//!
//! The ledger is pure: it is computed from the current object and written by
//! [`crate::flux::Objects::write_status`], which computes it again when the object changed meanwhile.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::cluster::manifests::{ClusterScoped, parse_manifests};
use crate::controller::Rules;
use crate::flux::HelmRelease;
use crate::flux::condition::Condition;
use crate::flux::helmrelease::{Snapshot, TestHookStatus};
use crate::flux::spec::ReleaseAction;
use crate::support::error::{Error, Result};

pub const READY: &str = "Ready";
pub const RELEASED: &str = "Released";
pub const TEST_SUCCESS: &str = "TestSuccess";
pub const REMEDIATED: &str = "Remediated";
pub const RECONCILING: &str = "Reconciling";
pub const STALLED: &str = "Stalled";
/// The `Drifted` condition helm-controller v1.6 writes for a release in sync with the cluster.
pub const DRIFTED: &str = "Drifted";
/// Our reason for an apply stopped by Ctrl-C or SIGTERM.
pub const INTERRUPTED_REASON: &str = "ApplyInterrupted";

/// Which Helm action ran, in helm-controller's words.
pub type Action = ReleaseAction;

impl ReleaseAction {
    pub fn as_str(self) -> &'static str {
        match self {
            ReleaseAction::Install => "install",
            ReleaseAction::Upgrade => "upgrade",
        }
    }
    fn succeeded_reason(self) -> &'static str {
        match self {
            ReleaseAction::Install => "InstallSucceeded",
            ReleaseAction::Upgrade => "UpgradeSucceeded",
        }
    }
    pub fn failed_reason(self) -> &'static str {
        match self {
            ReleaseAction::Install => "InstallFailed",
            ReleaseAction::Upgrade => "UpgradeFailed",
        }
    }
}

/// An Event helm-controller records beside the status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub warning: bool,
    pub reason: String,
    pub message: String,
}

/// How the reconcile ended, which decides `Reconciling`, `Stalled` and whether `observedGeneration` is
/// written (`internal/controller/helmrelease_controller.go`: not when the controller requeues at once or
/// returns an error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// Nothing left to do: `Reconciling` removed, `observedGeneration` written.
    Done,
    /// `ErrMustRequeue`: helm-controller would go on at once (`ProgressingWithRetry`, the Ready message).
    Requeue,
    /// `ErrRetryAfterInterval` (`RetryOnFailure`): `ProgressingWithRetry "retrying after …"`,
    /// `observedGeneration` written.
    RetryAfter(Duration),
    /// A terminal error: `Stalled` with this reason and message, `observedGeneration` written.
    Stalled { reason: &'static str, message: String },
    /// The action returned an error helm-controller retries with backoff: `Reconciling` stays on the
    /// action that ran (with its timeout), `observedGeneration` is not written.
    Error { timeout: Duration },
}

/// What the reconcile worked with: the chart as loaded, the values' digest, where the release lives.
#[derive(Debug, Clone)]
pub struct Attempt {
    pub action: ReleaseAction,
    pub chart_name: String,
    pub chart_version: String,
    pub config_digest: String,
    pub storage_namespace: String,
    pub rules: Rules,
    /// The `DefaultToRetryOnFailure` feature gate.
    pub default_to_retry: bool,
}

/// The status as helm-controller changes it during one reconcile.
#[derive(Debug, Clone)]
pub struct Ledger {
    generation: i64,
    release_namespace: String,
    release_name: String,
    test_enabled: bool,
    test_ignore_failures: bool,
    attempt: Attempt,
    pub conditions: Vec<Condition>,
    pub history: Vec<Snapshot>,
    pub failures: i64,
    pub install_failures: i64,
    pub upgrade_failures: i64,
    observed_generation: Option<i64>,
    /// Fields written as they are (lastAttempted*, inventory, digests…), null to remove.
    fields: Map<String, Value>,
    pub events: Vec<Event>,
}

fn now() -> String {
    // metav1.Time: RFC 3339, whole seconds, UTC.
    jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// fluxcd/pkg `conditions.Set`: the transition time changes only with the status, reason or message;
/// the observed generation always follows the object.
fn set_condition(list: &mut Vec<Condition>, type_: &str, status: &str, reason: &str, message: &str, generation: i64) {
    let new = Condition {
        type_: type_.into(),
        status: status.into(),
        observed_generation: Some(generation),
        last_transition_time: now(),
        reason: reason.into(),
        message: message.into(),
    };
    match list.iter_mut().find(|c| c.type_ == type_) {
        Some(c) if c.status == new.status && c.reason == new.reason && c.message == new.message => {
            c.observed_generation = Some(generation);
        }
        Some(c) => *c = new,
        None => list.push(new),
    }
}

fn remove_condition(list: &mut Vec<Condition>, type_: &str) {
    list.retain(|c| c.type_ != type_);
}

fn condition<'a>(list: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    list.iter().find(|c| c.type_ == type_)
}

/// fluxcd/pkg's order of conditions: Stalled, Reconciling, Ready first, then by observed generation
/// (newest first), then by type.
fn sort_conditions(list: &mut [Condition]) {
    let rank = |t: &str| match t {
        STALLED => 0,
        RECONCILING => 1,
        READY => 2,
        _ => 3,
    };
    list.sort_by(|a, b| {
        rank(&a.type_)
            .cmp(&rank(&b.type_))
            .then(b.observed_generation.cmp(&a.observed_generation))
            .then(a.type_.cmp(&b.type_))
    });
}

impl Ledger {
    /// The start of a reconcile of `hr` (`reconcileRelease`): the storage namespace, the failure counters
    /// reset when the attempt differs from the last one (`MustResetFailures`), the `lastAttempted*` fields.
    pub fn begin(hr: &HelmRelease, attempt: Attempt) -> Ledger {
        let status = hr.status.clone().unwrap_or_default();
        let generation = hr.metadata.generation.unwrap_or(0);
        let mut ledger = Ledger {
            generation,
            release_namespace: hr.release_namespace().to_string(),
            release_name: hr.release_name(),
            test_enabled: hr.spec.tests_enabled(),
            test_ignore_failures: hr.spec.test.as_ref().is_some_and(|t| t.ignore_failures),
            conditions: status.reconcile.conditions.clone(),
            history: status.history.clone(),
            failures: status.failures.unwrap_or(0),
            install_failures: status.install_failures.unwrap_or(0),
            upgrade_failures: status.upgrade_failures.unwrap_or(0),
            observed_generation: None,
            fields: Map::new(),
            events: Vec::new(),
            attempt,
        };
        let changed = status.last_attempted_generation != Some(generation)
            || status.last_attempted_revision.as_deref() != Some(ledger.attempt.chart_version.as_str())
            || status.last_attempted_config_digest.as_deref() != Some(ledger.attempt.config_digest.as_str());
        if changed {
            ledger.clear_failures();
        }
        let a = &ledger.attempt;
        let fields = [
            ("storageNamespace", Value::from(a.storage_namespace.clone())),
            ("lastAttemptedGeneration", generation.into()),
            ("lastAttemptedRevision", a.chart_version.clone().into()),
            // No OCI digest: the chart is a local directory.
            ("lastAttemptedRevisionDigest", Value::Null),
            ("lastAttemptedConfigDigest", a.config_digest.clone().into()),
            ("lastAttemptedValuesChecksum", Value::Null),
            ("lastReleaseRevision", Value::Null),
        ];
        ledger.fields.extend(fields.into_iter().map(|(k, v)| (k.to_string(), v)));
        ledger
    }

    fn set(&mut self, type_: &str, status: &str, reason: &str, message: &str) {
        set_condition(&mut self.conditions, type_, status, reason, message, self.generation);
    }

    fn event(&mut self, warning: bool, reason: &str, message: &str) {
        self.events.push(Event { warning, reason: reason.into(), message: message.into() });
    }

    pub fn clear_failures(&mut self) {
        (self.failures, self.install_failures, self.upgrade_failures) = (0, 0, 0);
    }

    fn count_for(&mut self, action: ReleaseAction) {
        match action {
            ReleaseAction::Install => self.install_failures += 1,
            ReleaseAction::Upgrade => self.upgrade_failures += 1,
        }
    }

    /// The failures counted for `action`'s remediation.
    pub fn failure_count(&self, action: ReleaseAction) -> i64 {
        match action {
            ReleaseAction::Install => self.install_failures,
            ReleaseAction::Upgrade => self.upgrade_failures,
        }
    }

    /// An install or upgrade starting: its action recorded, the previous test and remediation verdicts
    /// dropped; an install starts the history over.
    pub fn action_started(&mut self) {
        let action = self.attempt.action;
        self.fields.insert("lastAttemptedReleaseAction".into(), action.as_str().into());
        remove_condition(&mut self.conditions, TEST_SUCCESS);
        remove_condition(&mut self.conditions, REMEDIATED);
        if action == ReleaseAction::Install {
            self.history.clear();
        }
    }

    /// The install or upgrade succeeded; `history` is the history after it, `took` its duration.
    pub fn action_succeeded(&mut self, history: Vec<Snapshot>, took: Duration, retries: bool) {
        self.history = history;
        self.fields
            .insert("lastAttemptedReleaseActionDuration".into(), crate::support::duration::go_string(took).into());
        let action = self.attempt.action;
        let message = self.latest_message(action.as_str(), "succeeded");
        self.set(RELEASED, "True", action.succeeded_reason(), &message);
        if self.test_enabled && !self.latest_tested() {
            let awaiting = self.latest_phrase("Helm release", "is awaiting tests");
            self.set(TEST_SUCCESS, "Unknown", "AwaitingTests", &awaiting);
        }
        // Under RetryOnFailure a success forgets the failures before it.
        if retries {
            self.clear_failures();
        }
        self.event(false, action.succeeded_reason(), &message);
        self.summarize();
    }

    /// The install or upgrade failed with `error`; `history` is the history after it, `stored` whether
    /// Helm stored a revision for it (only then does the failure count for remediation).
    pub fn action_failed(&mut self, history: Vec<Snapshot>, error: &str, stored: bool, reason: Option<&str>) {
        self.history = history;
        let action = self.attempt.action;
        self.failures += 1;
        let message = format!(
            "Helm {} failed for release {}/{} with chart {}@{}: {}",
            action.as_str(),
            self.release_namespace,
            self.release_name,
            self.attempt.chart_name,
            self.attempt.chart_version,
            error.trim()
        );
        let reason = reason.unwrap_or(action.failed_reason());
        self.set(RELEASED, "False", reason, &message);
        if stored {
            self.count_for(action);
        }
        self.event(true, action.failed_reason(), &message);
        self.summarize();
    }

    /// The tests ran and passed; `history` holds their hooks in its newest snapshot.
    pub fn tested(&mut self, history: Vec<Snapshot>) {
        self.history = history;
        let hooks = self.history.first().and_then(|s| s.test_hooks.as_ref()).map_or(0, BTreeMap::len);
        let count = match hooks {
            0 => "no test hooks".to_string(),
            1 => "1 test hook completed successfully".to_string(),
            n => format!("{n} test hooks completed successfully"),
        };
        let message = format!("{}: {count}", self.latest_phrase("Helm test succeeded for release", ""));
        self.set(TEST_SUCCESS, "True", "TestSucceeded", &message);
        self.event(false, "TestSucceeded", &message);
        self.summarize();
    }

    /// The tests failed with `error`. They count for the active remediation when the release counts as
    /// tested and test failures are not ignored.
    pub fn test_failed(&mut self, history: Vec<Snapshot>, error: &str, remediation_ignores: bool) {
        self.history = history;
        self.failures += 1;
        let message = format!("{}: {}", self.latest_phrase("Helm test failed for release", ""), error.trim());
        self.set(TEST_SUCCESS, "False", "TestFailed", &message);
        self.event(true, "TestFailed", &message);
        if self.latest_tested() && !remediation_ignores {
            self.count_for(self.attempt.action);
        }
        self.summarize();
    }

    /// The rollback to `target` succeeded; `history` is the history after it.
    pub fn rolled_back(&mut self, history: Vec<Snapshot>, target: &Snapshot) {
        self.history = history;
        let message = format!(
            "Helm rollback to previous release {} with chart {} succeeded",
            target.full_name(),
            target.versioned_chart()
        );
        self.set(REMEDIATED, "True", "RollbackSucceeded", &message);
        self.event(false, "RollbackSucceeded", &message);
        self.summarize();
    }

    pub fn rollback_failed(&mut self, history: Vec<Snapshot>, target: &Snapshot, error: &str) {
        self.history = history;
        self.failures += 1;
        let message = format!(
            "Helm rollback to previous release {} with chart {} failed: {}",
            target.full_name(),
            target.versioned_chart(),
            error.trim()
        );
        self.set(REMEDIATED, "False", "RollbackFailed", &message);
        self.event(true, "RollbackFailed", &message);
        self.summarize();
    }

    /// The failed release was uninstalled; `history` is the history after it. helm-controller does not
    /// summarize here: Ready keeps the failure.
    pub fn uninstalled(&mut self, history: Vec<Snapshot>, release: &Snapshot) {
        self.history = history;
        let message = format!(
            "Helm uninstall remediation for release {} with chart {} succeeded",
            release.full_name(),
            release.versioned_chart()
        );
        self.set(REMEDIATED, "True", "UninstallSucceeded", &message);
        self.event(false, "UninstallSucceeded", &message);
    }

    pub fn uninstall_failed(&mut self, release: &Snapshot, error: &str) {
        self.failures += 1;
        let message = format!(
            "Helm uninstall remediation for release {} with chart {} failed: {}",
            release.full_name(),
            release.versioned_chart(),
            error.trim()
        );
        self.set(REMEDIATED, "False", "UninstallFailed", &message);
        self.event(true, "UninstallFailed", &message);
    }

    /// The history as `actionForState` leaves it before deciding (`Truncate` and its variant).
    pub fn set_history(&mut self, history: Vec<Snapshot>) {
        self.history = history;
    }

    /// An interruption of ours: Released and Ready False, our reason, nothing counted.
    pub fn interrupted(&mut self, message: &str) {
        self.set(RELEASED, "False", INTERRUPTED_REASON, message);
        self.set(READY, "False", INTERRUPTED_REASON, message);
        self.event(true, INTERRUPTED_REASON, message);
    }

    /// The reconcile ended as `end` says.
    pub fn end(&mut self, end: &End) {
        match end {
            End::Done => {
                remove_condition(&mut self.conditions, RECONCILING);
                self.observed_generation = Some(self.generation);
            }
            End::Requeue => {
                let message = self.ready_message();
                remove_condition(&mut self.conditions, STALLED);
                self.set(RECONCILING, "True", "ProgressingWithRetry", &message);
            }
            End::RetryAfter(interval) => {
                remove_condition(&mut self.conditions, STALLED);
                let message = format!("retrying after {}", crate::support::duration::go_string(*interval));
                self.set(RECONCILING, "True", "ProgressingWithRetry", &message);
                self.observed_generation = Some(self.generation);
            }
            End::Stalled { reason, message } => {
                remove_condition(&mut self.conditions, RECONCILING);
                self.set(STALLED, "True", reason, message);
                self.observed_generation = Some(self.generation);
            }
            End::Error { timeout } => {
                let action = self.attempt.action.as_str();
                let timeout = crate::support::duration::go_string(*timeout);
                let message = format!("Running '{action}' action with timeout of {timeout}");
                remove_condition(&mut self.conditions, STALLED);
                self.set(RECONCILING, "True", "Progressing", &message);
            }
        }
    }

    /// The apply stops where helm-controller would try again (at once, or after `retryInterval`), with
    /// the HelmRelease suspended: nothing retries until it is resumed, so no `Reconciling` is left to say
    /// that something does. Ready, the counters and the history still say what failed.
    pub fn held(&mut self) {
        remove_condition(&mut self.conditions, RECONCILING);
    }

    fn ready_message(&self) -> String {
        condition(&self.conditions, READY).map(|c| c.message.clone()).unwrap_or_default()
    }

    /// `summarize`: Ready follows the first of Remediated, TestSuccess (when tests count) and Released
    /// that is there; a remediation is never Ready. Stalled goes when Ready is True.
    pub fn summarize(&mut self) {
        if !self.test_enabled {
            remove_condition(&mut self.conditions, TEST_SUCCESS);
        }
        let counts_tests = self.test_enabled && !self.test_ignore_failures;
        let order: &[&str] = if counts_tests { &[REMEDIATED, TEST_SUCCESS, RELEASED] } else { &[REMEDIATED, RELEASED] };
        let Some(first) = order.iter().find_map(|t| condition(&self.conditions, t)).cloned() else { return };
        let status = if first.type_ == REMEDIATED { "False" } else { first.status.as_str() };
        self.set(READY, status, &first.reason, &first.message);
        if status == "True" {
            remove_condition(&mut self.conditions, STALLED);
        }
    }

    /// Whether the newest snapshot counts as tested, by the version's rule.
    pub fn latest_tested(&self) -> bool {
        self.history.first().is_some_and(|s| s.has_been_tested(self.attempt.rules.tested))
    }

    /// `<prefix> <release> with chart <chart> <suffix>`, for the newest snapshot.
    fn latest_phrase(&self, prefix: &str, suffix: &str) -> String {
        let (release, chart) = match self.history.first() {
            Some(s) => (s.full_name(), s.versioned_chart()),
            None => (
                format!("{}/{}", self.release_namespace, self.release_name),
                format!("{}@{}", self.attempt.chart_name, self.attempt.chart_version),
            ),
        };
        format!("{prefix} {release} with chart {chart} {suffix}").trim_end().to_string()
    }

    fn latest_message(&self, action: &str, outcome: &str) -> String {
        self.latest_phrase(&format!("Helm {action} {outcome} for release"), "")
    }

    /// Extra fields written as they are (the inventory, the observed digests, Drifted…).
    pub fn put(&mut self, key: &str, value: Value) {
        self.fields.insert(key.into(), value);
    }

    /// `Drifted=False` (helm-controller v1.6 with drift detection on, for a release in sync).
    pub fn no_drift(&mut self) {
        self.set(DRIFTED, "False", "NoDriftDetected", "No drift detected against the cluster state");
    }

    /// The observed post-render digests `summarize` writes.
    pub fn observe_post_render(&mut self, hr: &HelmRelease) {
        let pr = hr.spec.post_renderers.as_ref();
        let cm = hr.spec.common_metadata.as_ref().map(serde_json::to_value).transpose().ok().flatten();
        let digest_or_null = |d: String| if d.is_empty() { Value::Null } else { Value::String(d) };
        self.put("observedPostRenderersDigest", digest_or_null(crate::apply::snapshot::post_renderers_digest(pr)));
        self.put(
            "observedCommonMetadataDigest",
            digest_or_null(crate::apply::snapshot::common_metadata_digest(cm.as_ref())),
        );
    }

    /// The status as a merge patch of the status subresource.
    pub fn patch(&self) -> Value {
        let mut out = self.fields.clone();
        let mut conditions = self.conditions.clone();
        sort_conditions(&mut conditions);
        out.insert("conditions".into(), serde_json::to_value(&conditions).unwrap_or(Value::Array(Vec::new())));
        out.insert("history".into(), serde_json::to_value(&self.history).unwrap_or(Value::Array(Vec::new())));
        let count = |n: i64| if n == 0 { Value::Null } else { n.into() };
        out.insert("failures".into(), count(self.failures));
        out.insert("installFailures".into(), count(self.install_failures));
        out.insert("upgradeFailures".into(), count(self.upgrade_failures));
        if let Some(g) = self.observed_generation {
            out.insert("observedGeneration".into(), g.into());
        }
        Value::Object(out)
    }

    pub fn attempt(&self) -> &Attempt {
        &self.attempt
    }
}

/// The test hooks of a stored release as a snapshot records them (`TestHooksFromRelease`), with
/// `spec.test.filters` applied where the version records only the selected hooks (v1.6.3).
pub fn test_hooks(raw: &Value, hr: &HelmRelease, rules: &Rules) -> BTreeMap<String, TestHookStatus> {
    let filters = hr.spec.test.as_ref().and_then(|t| t.filters.clone()).unwrap_or_default();
    let selected = |name: &str| crate::flux::spec::test_hook_selected(&filters, name);
    let keep: Option<&dyn Fn(&str) -> bool> =
        (rules.tested == crate::flux::helmrelease::Tested::Finished).then_some(&selected as &dyn Fn(&str) -> bool);
    serde_json::from_value(crate::apply::snapshot::test_hooks(raw, keep)).unwrap_or_default()
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
    let cur = crate::desired::release_target::latest(hr)?;
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
    let message = match crate::desired::release_target::latest(hr) {
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
    use crate::controller::Version;

    fn hr(spec: Value, status: Value) -> HelmRelease {
        serde_json::from_value(json!({
            "metadata": {"name": "app", "namespace": "apps", "generation": 3},
            "spec": spec, "status": status,
        }))
        .unwrap()
    }

    fn attempt(action: ReleaseAction) -> Attempt {
        Attempt {
            action,
            chart_name: "app".into(),
            chart_version: "0.2.0".into(),
            config_digest: "sha256:c".into(),
            storage_namespace: "apps".into(),
            rules: Rules::of(Version::new(1, 6, 4), &[]),
            default_to_retry: false,
        }
    }

    fn snap(version: i64, status: &str, chart: &str) -> Snapshot {
        Snapshot {
            name: "app".into(),
            namespace: "apps".into(),
            version,
            status: status.into(),
            chart_name: "app".into(),
            chart_version: chart.into(),
            ..Default::default()
        }
    }

    fn get<'a>(l: &'a Ledger, t: &str) -> (&'a str, &'a str, &'a str) {
        let c = condition(&l.conditions, t).unwrap_or_else(|| panic!("no {t}: {:?}", l.conditions));
        (c.status.as_str(), c.reason.as_str(), c.message.as_str())
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
    fn a_failed_upgrade_rolled_back_is_written_as_helm_controller_writes_it() {
        let mut l = Ledger::begin(&hr(json!({}), json!({"upgradeFailures": 4})), attempt(ReleaseAction::Upgrade));
        // Another generation: the counters start over.
        assert_eq!(l.upgrade_failures, 0);
        l.action_started();
        l.action_failed(vec![snap(2, "failed", "0.2.0"), snap(1, "deployed", "0.1.0")], "boom", true, None);
        assert_eq!(
            get(&l, READY),
            ("False", "UpgradeFailed", "Helm upgrade failed for release apps/app with chart app@0.2.0: boom")
        );
        assert_eq!((l.failures, l.upgrade_failures), (1, 1));
        let target = snap(1, "deployed", "0.1.0");
        l.rolled_back(
            vec![snap(3, "deployed", "0.1.0"), snap(2, "failed", "0.2.0"), snap(1, "superseded", "0.1.0")],
            &target,
        );
        let message = "Helm rollback to previous release apps/app.v1 with chart app@0.1.0 succeeded";
        assert_eq!(get(&l, READY), ("False", "RollbackSucceeded", message));
        assert_eq!(get(&l, REMEDIATED), ("True", "RollbackSucceeded", message));
        l.end(&End::Requeue);
        assert_eq!(get(&l, RECONCILING), ("True", "ProgressingWithRetry", message));
        let patch = l.patch();
        assert!(patch.get("observedGeneration").is_none(), "requeued at once: not observed");
        assert_eq!(patch["conditions"][0]["type"], "Reconciling");
        assert_eq!(patch["upgradeFailures"], 1);
        assert_eq!(
            l.events.iter().map(|e| e.reason.as_str()).collect::<Vec<_>>(),
            ["UpgradeFailed", "RollbackSucceeded"]
        );
        // Where the apply stops there instead (retries -1, --keep-failed), nothing retries.
        l.held();
        assert!(l.patch()["conditions"].as_array().is_some_and(|c| c.iter().all(|c| c["type"] != "Reconciling")));
        assert_eq!(get(&l, READY), ("False", "RollbackSucceeded", message));
    }

    #[test]
    fn tests_decide_ready_unless_ignored() {
        let spec = json!({"test": {"enable": true}});
        let mut l = Ledger::begin(&hr(spec.clone(), json!({})), attempt(ReleaseAction::Upgrade));
        l.action_started();
        l.action_succeeded(vec![snap(2, "deployed", "0.2.0")], Duration::from_secs(1), false);
        assert_eq!(
            get(&l, READY),
            ("Unknown", "AwaitingTests", "Helm release apps/app.v2 with chart app@0.2.0 is awaiting tests")
        );
        let mut tested = snap(2, "deployed", "0.2.0");
        let hook = |phase: &str| TestHookStatus { phase: Some(phase.into()), ..Default::default() };
        tested.test_hooks = Some(BTreeMap::from([("a".into(), hook("Succeeded")), ("b".into(), hook("Succeeded"))]));
        l.tested(vec![tested.clone()]);
        assert_eq!(
            get(&l, READY),
            (
                "True",
                "TestSucceeded",
                "Helm test succeeded for release apps/app.v2 with chart app@0.2.0: 2 test hooks completed successfully"
            )
        );
        // A failed test, ignored: Ready follows the upgrade.
        let ignored = json!({"test": {"enable": true, "ignoreFailures": true}});
        let mut l = Ledger::begin(&hr(ignored, json!({})), attempt(ReleaseAction::Upgrade));
        l.action_started();
        l.action_succeeded(vec![snap(2, "deployed", "0.2.0")], Duration::from_secs(1), false);
        tested.test_hooks = Some(BTreeMap::from([("a".into(), hook("Failed"))]));
        l.test_failed(vec![tested], "pod failed", true);
        assert_eq!(get(&l, READY).0, "True");
        assert_eq!(get(&l, TEST_SUCCESS).1, "TestFailed");
        assert_eq!((l.failures, l.upgrade_failures), (1, 0));
    }

    #[test]
    fn an_uninstall_remediation_leaves_ready_on_the_install_failure() {
        let mut l = Ledger::begin(&hr(json!({}), json!({})), attempt(ReleaseAction::Install));
        l.action_started();
        l.action_failed(vec![snap(1, "failed", "0.2.0")], "bad", true, None);
        l.uninstalled(vec![snap(1, "uninstalling", "0.2.0")], &snap(1, "failed", "0.2.0"));
        assert_eq!(get(&l, READY).1, "InstallFailed");
        assert_eq!(get(&l, REMEDIATED).1, "UninstallSucceeded");
        l.end(&End::Stalled { reason: "RetriesExceeded", message: "Failed to install after 1 attempt(s)".into() });
        assert_eq!(l.patch()["observedGeneration"], 3);
        assert_eq!(l.patch()["conditions"][0]["type"], "Stalled");
    }
}
