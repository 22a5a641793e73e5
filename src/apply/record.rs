//! Writing down what the apply did as helm-controller writes down its reconcile: a [`Book`] opened on
//! the HelmRelease as the take-over left it, each step entered as it ended (the install or upgrade, the
//! tests, the remediation), the end decided, then the status ([`super::status::Ledger`]) and the Events
//! written at once, with a line for the user. After a remediation that helm-controller follows at once
//! with another attempt (retries left), the book says so ([`Written::Again`]) and the apply reconciles
//! again; any other failure is written and then returned as the apply's error, the release staying
//! suspended.

use kube::runtime::events::EventType;

use super::action::{Ended, How};
use super::events::emit;
use super::observe::{self, Writer};
use super::plan::Plan;
use super::prepare::{Checked, Release};
use super::remediate::{self, Decision, Remedied};
use super::request::{ApplyRequest, Voice};
use super::status::{self, Action, Attempt, End, Ledger};
use super::test::TestRun;
use crate::cluster::helmstore::{Storage, StoredRelease};
use crate::flux::HelmRelease;
use crate::flux::helmrelease::Snapshot;
use crate::flux::spec::{Actions as _, OnFailure};
use crate::flux::verbs::Objects;
use crate::support::error::{Error, Result};
use crate::support::output::progress;

/// After a failed rollback helm-controller finds the release failed and rolls back again at once, without
/// end while the rollback fails: a failed rollback counts in `failures` only, never against
/// `upgrade.remediation.retries` (`internal/reconcile/atomic_release.go` `actionForState`).
const ROLLBACK_FAILED_LINE: &str = "the rollback failed: helm-controller would find the release failed and roll it back again at once, without end while the rollback fails (a failed rollback counts against no retries); this apply stops here";

/// How the steps went, as far as the apply's exit is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Failed {
    No,
    /// The message the apply fails with.
    Yes(String),
}

/// How a reconcile's record ended, for the apply.
pub(super) enum Written {
    /// The release is deployed: the HelmRelease as written and the newest stored release.
    Applied(Box<(HelmRelease, StoredRelease)>),
    /// Remediated with retries left: helm-controller would reconcile again at once, and so does apply.
    Again,
}

/// The record of one reconcile of an apply, kept as helm-controller keeps it.
pub(super) struct Book<'a, 'r> {
    req: &'a ApplyRequest<'r>,
    release: &'a Release,
    hr: HelmRelease,
    pub ledger: Ledger,
    /// The storage as the latest step left it.
    storage: Storage,
    failed: Failed,
    /// The failed revision the remediation works on, and whether a failure was counted for it.
    counted: bool,
    decision: Option<Decision>,
    kept: bool,
    interrupted: bool,
    /// The rollback remediation ran and failed.
    rollback_failed: bool,
}

impl<'a, 'r> Book<'a, 'r> {
    /// Opens the book on the HelmRelease as it is now (suspended), the attempt the plan made.
    pub async fn open(req: &'a ApplyRequest<'r>, release: &'a Release, plan: &Plan) -> Result<Book<'a, 'r>> {
        let hr = Objects::<HelmRelease>::namespaced(req.cluster, &req.cluster.namespace).get(req.name).await?;
        let desired = &release.desired;
        let controller = &desired.controller;
        let attempt = Attempt {
            action: plan.action,
            chart_name: req.resolver.chart.meta.name.clone(),
            chart_version: desired.chart_version().to_string(),
            config_digest: crate::values::digest_values(&desired.composed.values),
            storage_namespace: desired.storage_namespace.clone(),
            rules: controller.rules(),
            default_to_retry: controller.rules().default_to_retry,
        };
        let mut ledger = Ledger::begin(&hr, attempt);
        ledger.action_started();
        Ok(Book {
            req,
            release,
            hr,
            ledger,
            storage: plan.storage.clone(),
            failed: Failed::No,
            counted: false,
            decision: None,
            kept: false,
            interrupted: false,
            rollback_failed: false,
        })
    }

    fn oci(&self) -> &'static str {
        // A local chart has no OCI digest.
        ""
    }

    /// The install or upgrade ended as `ended` says; `after` is the storage after it.
    pub fn action(&mut self, ended: &Ended, after: Storage) {
        let action = self.ledger.attempt().action;
        let writer = match action {
            Action::Install => Writer::Install { oci_digest: self.oci() },
            Action::Upgrade => Writer::Upgrade { oci_digest: self.oci() },
        };
        let mut written = after.written_since(&self.storage);
        let stored = written.first().is_some_and(|r| self.storage.newest().is_none_or(|b| r.version > b.version));
        // A failed upgrade whose revision Helm stored writes the previous one back (Helm's
        // `recordRelease(original)`, or helm cozy's waiter that marks the revision failed for it).
        if stored && action == Action::Upgrade && !matches!(ended.how, How::Applied) {
            for r in after.revisions.iter().skip(1) {
                if written.iter().all(|w| w.version != r.version) && r.status == "deployed" {
                    written.push(r);
                    break;
                }
            }
        }
        // helm-controller observes what Helm deletes too: the revisions `maxHistory` pruned.
        written.extend(after.deleted_since(&self.storage));
        written.sort_by_key(|r| std::cmp::Reverse(r.version));
        let config = self.ledger.attempt().config_digest.clone();
        let history = observe::after_release(&self.ledger.history, &written, writer, &config);
        match &ended.how {
            How::Applied => {
                let retries = matches!(
                    self.hr.spec.on_failure(action, self.ledger.attempt().default_to_retry),
                    OnFailure::Retry { .. }
                );
                self.ledger.action_succeeded(history, ended.took, retries);
            }
            How::Interrupted { signal, during } => {
                let cmd = crate::support::output::chart_command();
                let message = format!(
                    "{cmd} apply was interrupted by {signal} {during}; the release may be partly applied: run {cmd} apply {} again",
                    self.req.name
                );
                self.ledger.set_history(history);
                self.ledger.interrupted(&message);
                self.failed = Failed::Yes(message);
                self.interrupted = true;
            }
            How::NotReady { failure, .. } => {
                self.ledger.action_failed(history, &failure.message, stored, None);
                self.failed = Failed::Yes(format!("{} ({})", failure.message, failure.why));
                self.counted = stored;
            }
            How::CrdsFailed(message) => {
                self.ledger.action_failed(history, message, stored, None);
                self.failed = Failed::Yes(message.clone());
                self.counted = stored;
            }
            How::HelmFailed(e) => {
                let message = super::action::helm_message(e);
                self.ledger.action_failed(history, &message, stored, None);
                self.failed = Failed::Yes(message);
                self.counted = stored;
            }
        }
        self.storage = after;
    }

    /// Whether the steps so far succeeded (so the tests may run).
    pub fn applied(&self) -> bool {
        self.failed == Failed::No
    }

    /// The tests ended as `tested` says.
    pub fn test(&mut self, tested: TestRun) {
        let (rules, hr) = (self.ledger.attempt().rules, &self.hr);
        match tested {
            TestRun::NotEnabled | TestRun::Skipped => {}
            TestRun::Passed { after } => {
                if let Some(newest) = after.newest() {
                    let hooks = status::test_hooks(&newest.raw, hr, &rules);
                    let history = observe::after_test(&self.ledger.history, newest, hooks);
                    self.ledger.tested(history);
                }
                self.storage = after;
            }
            TestRun::Failed { error, after } => {
                let history = match after.newest() {
                    Some(newest) => {
                        observe::after_test(&self.ledger.history, newest, status::test_hooks(&newest.raw, hr, &rules))
                    }
                    None => self.ledger.history.clone(),
                };
                let action = self.ledger.attempt().action;
                let ignore_failures = hr.spec.test.as_ref().is_some_and(|t| t.ignore_failures);
                let ignores = hr.spec.remediation(action).ignores_test_failures(ignore_failures);
                let before = self.ledger.failure_count(action);
                self.ledger.test_failed(history, &error, ignores);
                self.counted = self.ledger.failure_count(action) > before;
                // A failure that counts makes the release a failed one to helm-controller.
                if !ignores {
                    self.failed = Failed::Yes(format!("the tests failed: {error}"));
                } else if !ignore_failures {
                    self.failed = Failed::Yes(format!(
                        "the tests failed (not remediated: remediation.ignoreTestFailures): {error}"
                    ));
                }
                self.storage = after;
            }
            TestRun::Interrupted { signal } => {
                let message = format!(
                    "the tests were interrupted by {signal}: run {} apply {} again",
                    crate::support::output::chart_command(),
                    self.req.name
                );
                self.ledger.interrupted(&message);
                self.failed = Failed::Yes(message);
                self.interrupted = true;
            }
        }
    }

    /// What helm-controller does next about a failure, when there is one it would act on; `keep` is
    /// `--keep-failed`.
    pub fn decide(&mut self, keep: bool) -> Option<&Decision> {
        if self.interrupted || self.failed == Failed::No {
            return None;
        }
        // A failed test that does not count leaves a release helm-controller finds in sync.
        let test_ignored = matches!(&self.failed, Failed::Yes(m) if m.contains("remediation.ignoreTestFailures"));
        if test_ignored {
            return None;
        }
        self.kept = keep;
        self.decision = Some(remediate::decide(&self.hr, &mut self.ledger, &self.storage));
        self.decision.as_ref()
    }

    /// The failed revision, as the newest snapshot says.
    pub fn failed_snapshot(&self) -> Snapshot {
        self.ledger.history.first().cloned().unwrap_or_default()
    }

    /// The remediation ran and ended as `remedied` says.
    pub fn remediation(&mut self, remedied: Option<Remedied>) {
        match remedied {
            None => {}
            Some(Remedied::RolledBack { target, after }) => {
                let history = self.remediation_history(&after, Writer::Rollback);
                self.ledger.rolled_back(history, &target);
                self.storage = after;
            }
            Some(Remedied::RollbackFailed { target, error, after }) => {
                let history = self.remediation_history(&after, Writer::Rollback);
                self.ledger.rollback_failed(history, &target, &error);
                self.storage = after;
                self.rollback_failed = true;
            }
            Some(Remedied::Uninstalled { release, after }) => {
                let history = self.remediation_history(&after, Writer::UninstallRemediation);
                self.ledger.uninstalled(history, &release);
                self.storage = after;
            }
            Some(Remedied::UninstallFailed { release, error }) => self.ledger.uninstall_failed(&release, &error),
        }
    }

    fn remediation_history(&self, after: &Storage, writer: Writer<'_>) -> Vec<Snapshot> {
        let written = after.written_since(&self.storage);
        let purged = after.deleted_since(&self.storage);
        observe::after_remediation(&self.ledger.history, after, &written, &purged, writer)
    }

    /// How the reconcile ends, as helm-controller's loop ends it.
    fn end(&mut self) -> End {
        let attempt = self.ledger.attempt().clone();
        if self.interrupted {
            return End::Error {
                timeout: crate::apply::install::action_timeout(
                    &self.hr,
                    attempt.action == Action::Upgrade,
                    self.req.options.timeout,
                ),
            };
        }
        match (&self.failed, &self.decision) {
            (Failed::No, _) | (Failed::Yes(_), None) => {
                // In sync: the history truncated, Drifted=False where drift detection is on.
                let retry = matches!(
                    self.hr.spec.on_failure(attempt.action, attempt.default_to_retry),
                    OnFailure::Retry { .. }
                );
                let ignore = self.hr.spec.test.as_ref().is_some_and(|t| t.ignore_failures);
                let ignore = self.hr.spec.remediation(attempt.action).ignores_test_failures(ignore);
                let history = if retry {
                    observe::truncate_keeping_five(&self.ledger.history)
                } else {
                    observe::truncate(&self.ledger.history, ignore)
                };
                self.ledger.set_history(history);
                if self.no_drift() {
                    self.ledger.no_drift();
                }
                End::Done
            }
            (Failed::Yes(_), Some(decision)) => match decision {
                Decision::RetryAfter(interval) => End::RetryAfter(*interval),
                Decision::AgainNow | Decision::UpgradeInstead => End::Requeue,
                Decision::Exhausted => {
                    End::Stalled { reason: "RetriesExceeded", message: remediate::exhausted_message(&self.ledger) }
                }
                Decision::MissingRollbackTarget => {
                    End::Stalled { reason: "MissingRollbackTarget", message: remediate::MISSING_TARGET.into() }
                }
                Decision::Rollback { .. } | Decision::Uninstall if self.kept => End::Requeue,
                Decision::Rollback { .. } | Decision::Uninstall => {
                    remediate::end_after_remediation(&self.hr, &self.ledger)
                }
            },
        }
    }

    fn no_drift(&self) -> bool {
        let desired = &self.release.desired;
        desired.controller.rules().drifted_condition
            && crate::compare::drift::DriftDetection::of(&desired.hr.spec)
                .is_ok_and(|d| d.mode() != crate::compare::drift::Mode::Disabled)
    }

    /// Writes the status and the Events, says how it ended, and returns what comes next: the HelmRelease
    /// as written and the newest stored release, another attempt, or (an error) the failure the apply
    /// ends with. `attempt` counts this apply's reconciles, from 1.
    pub async fn write(mut self, checked: &Checked, voice: Voice, attempt: u32) -> Result<Written> {
        let end = self.end();
        let again = self.goes_again(&end);
        self.ledger.end(&end);
        if !again && matches!(end, End::Requeue | End::RetryAfter(_)) {
            self.ledger.held();
        }
        let newest = self.storage.newest().cloned();
        if let Some(stored) = &newest {
            self.put_inventory(stored, checked).await?;
        }
        self.ledger.observe_post_render(&self.release.desired.hr);
        let objects = Objects::<HelmRelease>::namespaced(self.req.cluster, &self.req.cluster.namespace);
        let patch = self.ledger.patch();
        let hr = objects.write_status(self.req.name, |_| Ok(patch.clone())).await?;
        for e in &self.ledger.events {
            let kind = if e.warning { EventType::Warning } else { EventType::Normal };
            emit(self.req.cluster, &hr, kind, &e.reason, &e.message).await;
        }
        self.say(&end, voice, again.then_some(attempt));
        match (self.failed.clone(), newest) {
            (Failed::No, Some(stored)) => Ok(Written::Applied(Box::new((hr, stored)))),
            (Failed::Yes(_), _) if again => Ok(Written::Again),
            (Failed::No, None) => Err(Error::Invalid {
                what: "apply".into(),
                reason: format!(
                    "helm reported success but release {} is not stored",
                    self.release.desired.release_name
                ),
            }),
            (Failed::Yes(message), _) => Err(Error::Failed(message)),
        }
    }

    /// The inventory of the newest release (hooks out, CRDs of `crds/` in), with the scopes
    /// helm-controller's REST mapper knows now; Helm 4's applied fields handed to helm-controller's
    /// field manager, so its apply after the hand-back removes what the source's chart does not set.
    async fn put_inventory(&mut self, stored: &StoredRelease, checked: &Checked) -> Result<()> {
        let (cluster, desired) = (&self.release.target.cluster, &self.release.desired);
        if self.req.resolver.tools.helm.major >= 4
            && stored.raw.get("apply_method").and_then(|m| m.as_str()) == Some("ssa")
        {
            let (manifest, ns) = (&stored.manifest, &desired.release_namespace);
            if let Err(e) = crate::apply::field_managers::take_over(cluster, manifest, ns).await {
                progress::warning(format!(
                    "cannot hand the applied fields to helm-controller's field manager ({e}): once resumed, helm-controller leaves fields this chart sets and its source's does not"
                ));
            }
        }
        if stored.status != "deployed" {
            return Ok(());
        }
        let scoped = crate::cluster::discovery::discover(cluster).await?.cluster_scoped();
        let mut inventory = status::inventory(&stored.manifest, &desired.release_namespace, &scoped);
        if let Some(entries) = inventory.get_mut("entries").and_then(serde_json::Value::as_array_mut) {
            entries.extend(crate::desired::crds::inventory_entries(&checked.crd_objects));
        }
        self.ledger.put("inventory", inventory);
        Ok(())
    }

    /// Whether helm-controller would reconcile again at once after this one and apply follows it: a
    /// remediation ran (or an upgrade comes instead of one) with retries left. Not with `--keep-failed`,
    /// after an interruption, under `retries: -1`, where it would go on without end, nor after a failed
    /// rollback, which it would run again and again while it fails, counting nothing against the retries
    /// (each said instead).
    fn goes_again(&self, end: &End) -> bool {
        let remediated =
            matches!(self.decision, Some(Decision::Rollback { .. } | Decision::Uninstall | Decision::UpgradeInstead));
        *end == End::Requeue
            && remediated
            && !self.kept
            && !self.interrupted
            && !self.endless()
            && !self.rollback_failed
    }

    /// `remediation.retries: -1` for the action attempted: helm-controller retries without end.
    fn endless(&self) -> bool {
        self.hr.spec.remediation(self.ledger.attempt().action).retries < 0
    }

    /// The lines for the user: what each step did; then, when helm-controller goes on at once
    /// (`again`: this attempt's number), that it does; else what the cluster holds now and what comes
    /// on resume.
    fn say(&self, end: &End, voice: Voice, again: Option<u32>) {
        if !voice.says() {
            return;
        }
        let (name, ns) = (self.req.name, &self.req.cluster.namespace);
        for e in &self.ledger.events {
            if e.warning {
                progress::failure(&e.message);
            } else {
                progress::success(&e.message);
            }
        }
        if self.failed == Failed::No {
            return;
        }
        if let Some(attempt) = again {
            progress::action(self.again_line(attempt));
            return;
        }
        if *end == End::Requeue && !self.kept && self.rollback_failed {
            progress::warning(ROLLBACK_FAILED_LINE);
        } else if *end == End::Requeue && !self.kept && self.endless() {
            progress::warning(self.endless_line());
        }
        if self.kept {
            progress::warning(
                "the failed release is kept as it is (--keep-failed): helm-controller would have remediated it",
            );
        }
        if let Some(newest) = self.storage.newest() {
            progress::action(format!(
                "the cluster holds {}/{}.v{} ({}@{}, {})",
                newest.namespace, newest.name, newest.version, newest.chart_name, newest.chart_version, newest.status
            ));
        }
        let status = crate::support::output::lifecycle_command("status");
        progress::failure(format!(
            "helmrelease {name} stays suspended ({status} {name} -n {ns}); {}",
            remediate::on_resume(
                end,
                self.decision.as_ref(),
                self.kept,
                self.release.desired.hr.spec.tests_enabled(),
                self.rollback_failed,
            )
        ));
    }
}

impl Book<'_, '_> {
    /// The line between two attempts: which failed, and that helm-controller tries again at once.
    fn again_line(&self, attempt: u32) -> String {
        let action = self.ledger.attempt().action;
        let retries = self.hr.spec.remediation(action).retries;
        format!(
            "attempt {attempt} failed and was remediated; {}.remediation.retries is {retries}: helm-controller tries again at once, and so does this apply (attempt {})",
            action.as_str(),
            attempt + 1
        )
    }

    /// Under `retries: -1`: what helm-controller would do, which this apply does not.
    fn endless_line(&self) -> String {
        let action = self.ledger.attempt().action.as_str();
        format!(
            "{action}.remediation.retries is -1: helm-controller would remediate and try again without end; this apply stops after the first remediation"
        )
    }
}
