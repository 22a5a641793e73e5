//! What helm-controller does next after a failed install, upgrade or test, in the same reconcile
//! (`internal/reconcile/atomic_release.go` `actionForState` for a failed release, and its loop): retry
//! later under `RetryOnFailure`; else, by the failures counted for the action and its
//! `remediation.retries` and `remediateLastFailure`, stall, or remediate: roll an upgrade back to the
//! last good revision (`spec.rollback.*`), uninstall a failed install (`spec.uninstall.*`), then (retries
//! left) reconcile again at once. helm cozy decides the same way ([`decide`], pure), runs the remediation
//! ([`run`]) and, as helm-controller's requeue does, reconciles again until the retries are spent
//! (`super::reconcile`); under `retries: -1` it stops after the first remediation; `--keep-failed` leaves
//! a failure as it is for inspection.

use std::time::Duration;

use super::cleanup::Created;
use super::observe;
use super::prepare::Release;
use super::request::{ApplyRequest, Voice};
use super::status::{End, Ledger};
use crate::apply::install::RollbackOptions;
use crate::apply::readiness::HelmWait;
use crate::cluster::helmstore::{Storage, StoredRelease};
use crate::flux::HelmRelease;
use crate::flux::helmrelease::Snapshot;
use crate::flux::spec::{Actions as _, OnFailure};
use crate::support::error::Result;
use crate::support::output::progress;

/// helm-controller's next step for a failed release.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// `RetryOnFailure`: nothing now, the action again after the interval.
    RetryAfter(Duration),
    /// No failure counted for the action (Helm stored nothing): the action again at once.
    AgainNow,
    /// The retries are spent and the last failure is not remediated: stalled.
    Exhausted,
    /// No revision to roll back to: stalled.
    MissingRollbackTarget,
    /// The rollback target's storage changed under it: an upgrade instead, at once.
    UpgradeInstead,
    Rollback {
        target: Box<Snapshot>,
    },
    Uninstall,
}

/// The message of `Stalled RetriesExceeded`.
pub fn exhausted_message(ledger: &Ledger) -> String {
    let action = ledger.attempt().action;
    format!("Failed to {} after {} attempt(s)", action.as_str(), ledger.failure_count(action))
}

/// The message of `Stalled MissingRollbackTarget`.
pub const MISSING_TARGET: &str =
    "Failed to perform remediation: missing target release for rollback: cannot remediate failed release";

/// `actionForState` for a failed release, given the status so far (`ledger`) and the storage now. Also
/// truncates the history where helm-controller does before its choice.
pub fn decide(hr: &HelmRelease, ledger: &mut Ledger, storage: &Storage) -> Decision {
    let attempt = ledger.attempt().clone();
    let action = attempt.action;
    if let OnFailure::Retry { interval } = hr.spec.on_failure(action, attempt.default_to_retry) {
        ledger.set_history(observe::truncate_keeping_five(&ledger.history));
        return Decision::RetryAfter(interval);
    }
    let remediation = hr.spec.remediation(action);
    let count = ledger.failure_count(action);
    if count <= 0 {
        return Decision::AgainNow;
    }
    if remediation.retries_exhausted(count) && !remediation.remediate_last_failure {
        return Decision::Exhausted;
    }
    let ignore = remediation.ignores_test_failures(hr.spec.test.as_ref().is_some_and(|t| t.ignore_failures));
    ledger.set_history(observe::truncate(&ledger.history, ignore));
    if remediation.uninstalls {
        return Decision::Uninstall;
    }
    match observe::previous(&ledger.history, ignore) {
        None => Decision::MissingRollbackTarget,
        Some(target) if !observe::verifies(target, storage) => Decision::UpgradeInstead,
        Some(target) => Decision::Rollback { target: Box::new(target.clone()) },
    }
}

/// How the reconcile ends after a remediation ran (`MustStop`): at once again while retries last (or
/// after uninstalling a failed upgrade), else stalled.
pub fn end_after_remediation(hr: &HelmRelease, ledger: &Ledger) -> End {
    let action = ledger.attempt().action;
    let remediation = hr.spec.remediation(action);
    let uninstall_after_upgrade = remediation.uninstalls && action == crate::flux::spec::ReleaseAction::Upgrade;
    if !remediation.retries_exhausted(ledger.failure_count(action)) || uninstall_after_upgrade {
        End::Requeue
    } else {
        End::Stalled { reason: "RetriesExceeded", message: exhausted_message(ledger) }
    }
}

/// What a remediation that ran did.
pub(super) enum Remedied {
    RolledBack { target: Snapshot, after: Storage },
    RollbackFailed { target: Snapshot, error: String, after: Storage },
    Uninstalled { release: Snapshot, after: Storage },
    UninstallFailed { release: Snapshot, error: String },
}

/// Runs the remediation `decision` names (a rollback or an uninstall; nothing else runs anything).
pub(super) async fn run(
    req: &ApplyRequest<'_>,
    release: &Release,
    decision: &Decision,
    failed: &Snapshot,
    interrupted: impl std::future::Future<Output = String>,
    voice: Voice,
) -> Result<Option<Remedied>> {
    let (cluster, storage) = (&release.target.cluster, &release.storage);
    let hr = &release.desired.hr;
    let helm = &req.resolver.tools.helm;
    let read = || Storage::read(cluster, &storage.storage_namespace, &storage.name);
    match decision {
        Decision::Rollback { target } => {
            let before = read().await?;
            let options = rollback_options(hr, target, &before, req.options.timeout)?;
            let created = rollback_creates(release, &options, before.get(target.version)).await?;
            if voice.says() {
                progress::action(format!(
                    "rolling back to {} ({}) as helm-controller's remediation would (spec.upgrade.remediation)",
                    target.full_name(),
                    target.versioned_chart()
                ));
            }
            let ran =
                crate::apply::install::rollback(cluster, helm, storage, target.version, &options.helm, interrupted)
                    .await;
            let ran = match (ran, &options.poller) {
                (Ok(()), Some(poller)) => {
                    let waited = wait_for_rollback(release, poller, voice).await?;
                    if let (Err(_), Some(created)) = (&waited, &created) {
                        created.clean_up(cluster, "rollback", voice).await;
                    }
                    waited
                }
                (ran, _) => ran.map_err(|e| super::action::helm_message(&e)),
            };
            let after = read().await?;
            Ok(Some(match ran {
                Ok(()) => Remedied::RolledBack { target: (**target).clone(), after },
                Err(error) => Remedied::RollbackFailed { target: (**target).clone(), error, after },
            }))
        }
        Decision::Uninstall => {
            if voice.says() {
                progress::action(format!(
                    "uninstalling {} as helm-controller's remediation would (spec.install.remediation)",
                    failed.full_name()
                ));
            }
            let args = crate::apply::install::uninstall_args(helm.major, hr, storage, req.options.timeout)?;
            let ran = crate::apply::install::uninstall(cluster, helm, storage, &args, interrupted).await;
            Ok(Some(match ran {
                Ok(()) => Remedied::Uninstalled { release: failed.clone(), after: read().await? },
                Err(e) => Remedied::UninstallFailed { release: failed.clone(), error: super::action::helm_message(&e) },
            }))
        }
        _ => Ok(None),
    }
}

/// What a rollback with `rollback.cleanupOnFail` that helm cozy's poller waits for creates: the
/// objects of the revision rolled back to that do not exist now (see [`Created`]).
async fn rollback_creates(
    release: &Release,
    options: &Rollback,
    to: Option<&StoredRelease>,
) -> Result<Option<Created>> {
    let (Some(_), true, Some(to)) = (&options.poller, options.helm.cleanup_on_fail, to) else {
        return Ok(None);
    };
    let cluster = &release.target.cluster;
    let live = crate::cluster::live::LiveObjects::new(cluster, crate::cluster::discovery::discover(cluster).await?);
    Ok(Some(Created::before(&live, &to.manifest, &release.desired.release_namespace).await?))
}

/// helm-controller's waiter after a rollback (its default `poller`), on the revision the rollback made.
async fn wait_for_rollback(
    release: &Release,
    poller: &crate::apply::readiness::Poller,
    voice: Voice,
) -> Result<std::result::Result<(), String>> {
    let (cluster, desired) = (&release.target.cluster, &release.desired);
    let (sns, name, ns) = (&desired.storage_namespace, &desired.release_name, &desired.release_namespace);
    Ok(match crate::apply::readiness::settle(cluster, sns, name, ns, false, poller, voice.says()).await? {
        crate::apply::readiness::Settled::Ready => Ok(()),
        crate::apply::readiness::Settled::NotReady { failure, .. } => Err(failure.message),
        crate::apply::readiness::Settled::Interrupted { signal } => Err(format!("interrupted by {signal}")),
    })
}

/// The rollback as helm-controller runs it: Helm's arguments, and helm cozy's poller when
/// helm-controller waits with its own.
struct Rollback {
    helm: RollbackOptions,
    poller: Option<crate::apply::readiness::Poller>,
}

/// `spec.rollback` as helm-controller maps it (`internal/action/rollback.go`): the timeout, hooks, the
/// wait, `cleanupOnFail`, the method (`auto`: as the revision rolled back to was applied) and `force`
/// (a replace, client-side only).
fn rollback_options(
    hr: &HelmRelease,
    target: &Snapshot,
    storage: &Storage,
    overridden: Option<Duration>,
) -> Result<Rollback> {
    let spec = hr.spec.rollback.clone().unwrap_or_default();
    let timeout = overridden
        .or_else(|| crate::apply::install::spec_timeout(&hr.spec, spec.timeout.as_deref()))
        .unwrap_or(crate::flux::spec::DEFAULT_TIMEOUT);
    let server_side = match spec.server_side_apply.as_deref() {
        Some("enabled") => true,
        Some("disabled") => false,
        _ => {
            storage.get(target.version).and_then(|r| r.raw.get("apply_method")).and_then(|m| m.as_str()) == Some("ssa")
        }
    };
    let legacy =
        hr.spec.extra.get("waitStrategy").and_then(|w| w.get("name")).and_then(|n| n.as_str()) == Some("legacy");
    let jobs = !spec.disable_wait_for_jobs;
    let (helm_wait, poller) = match (spec.disable_wait, legacy) {
        (true, _) => (HelmWait::HooksOnly, None),
        (false, true) => (HelmWait::Legacy { jobs }, None),
        (false, false) => {
            let checks = crate::apply::readiness::HealthChecks::of(&hr.spec.extra)?;
            (HelmWait::HooksOnly, Some(crate::apply::readiness::Poller { jobs, timeout, checks }))
        }
    };
    let helm = RollbackOptions {
        timeout,
        helm_wait,
        disable_hooks: spec.disable_hooks,
        cleanup_on_fail: spec.cleanup_on_fail,
        server_side,
        force_replace: spec.force && !server_side,
        max_history: hr.spec.max_history(),
    };
    Ok(Rollback { helm, poller })
}

/// What helm-controller does with the release once handed back, for the line an apply ends with;
/// `rollback_failed`: the rollback remediation ran and failed.
pub fn on_resume(end: &End, decision: Option<&Decision>, kept: bool, tests: bool, rollback_failed: bool) -> String {
    if rollback_failed {
        // Resumed, the HelmRelease is a new generation: the counters start over, and a failed release
        // with no failure counted is upgraded (`actionForState`: "release conditions have changed since
        // last failure").
        return "once resumed (a new generation), the failure counters start over and helm-controller upgrades the failed release with the source's chart".into();
    }
    if kept {
        return "once resumed, helm-controller finds a failed release whose failures it did not count and upgrades it again with the source's chart (it does not remediate a failure it did not see)".into();
    }
    match (end, decision) {
        (End::RetryAfter(_), _) => {
            "once resumed, helm-controller upgrades it again with the source's chart (RetryOnFailure, no remediation)".into()
        }
        (_, Some(Decision::Rollback { .. })) if tests => "once resumed, helm-controller upgrades it to the source's chart unless that is the chart rolled back to, which it finds in sync and tests (the revision rolled back to is untested)".into(),
        (_, Some(Decision::Rollback { .. })) => "once resumed, helm-controller upgrades it to the source's chart unless that is the chart rolled back to, which it finds in sync".into(),
        (_, Some(Decision::Uninstall)) => "once resumed, helm-controller installs the source's chart".into(),
        (End::Stalled { .. }, _) => "once resumed, the failure counters start over and helm-controller upgrades it again with the source's chart".into(),
        _ => "once resumed, helm-controller upgrades it again with the source's chart".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::status::Attempt;
    use crate::controller::{Rules, Version};
    use crate::flux::spec::ReleaseAction;
    use serde_json::json;

    fn hr(spec: serde_json::Value) -> HelmRelease {
        serde_json::from_value(json!({"metadata": {"name": "app", "namespace": "apps", "generation": 2}, "spec": spec}))
            .unwrap()
    }

    fn ledger(hr: &HelmRelease, action: ReleaseAction, counted: bool) -> Ledger {
        let attempt = Attempt {
            action,
            chart_name: "app".into(),
            chart_version: "0.2.0".into(),
            config_digest: "c".into(),
            storage_namespace: "apps".into(),
            rules: Rules::of(Version::new(1, 6, 4), &[]),
            default_to_retry: false,
        };
        let mut l = Ledger::begin(hr, attempt);
        l.action_started();
        let history = vec![Snapshot {
            name: "app".into(),
            namespace: "apps".into(),
            version: 2,
            status: "failed".into(),
            ..Default::default()
        }];
        l.action_failed(history, "boom", counted, None);
        l
    }

    #[test]
    fn each_strategy_decides_as_helm_controller() {
        let storage = Storage::default();
        let retry = hr(json!({"upgrade": {"strategy": {"name": "RetryOnFailure", "retryInterval": "30s"}}}));
        let mut l = ledger(&retry, ReleaseAction::Upgrade, true);
        assert_eq!(decide(&retry, &mut l, &storage), Decision::RetryAfter(Duration::from_secs(30)));
        // Retries 0 (the default): exhausted after one failure.
        let plain = hr(json!({}));
        let mut l = ledger(&plain, ReleaseAction::Upgrade, true);
        assert_eq!(decide(&plain, &mut l, &storage), Decision::Exhausted);
        assert_eq!(exhausted_message(&l), "Failed to upgrade after 1 attempt(s)");
        // Nothing stored, nothing counted: again at once.
        let mut l = ledger(&plain, ReleaseAction::Upgrade, false);
        assert_eq!(decide(&plain, &mut l, &storage), Decision::AgainNow);
        // Retries left, no previous revision: nothing to roll back to.
        let one = hr(json!({"upgrade": {"remediation": {"retries": 1}}}));
        let mut l = ledger(&one, ReleaseAction::Upgrade, true);
        assert_eq!(decide(&one, &mut l, &storage), Decision::MissingRollbackTarget);
        assert_eq!(end_after_remediation(&one, &l), End::Requeue);
        // An install remediates by uninstalling.
        let install = hr(json!({"install": {"remediation": {"retries": 1}}}));
        let mut l = ledger(&install, ReleaseAction::Install, true);
        assert_eq!(decide(&install, &mut l, &storage), Decision::Uninstall);
    }

    #[test]
    fn resume_is_said_for_each_end() {
        assert!(
            on_resume(&End::RetryAfter(Duration::from_secs(30)), None, false, false, false).contains("RetryOnFailure")
        );
        assert!(on_resume(&End::Requeue, None, true, false, false).contains("did not see"));
        let rollback = Decision::Rollback { target: Box::default() };
        assert!(on_resume(&End::Requeue, Some(&rollback), false, false, true).contains("counters start over"));
    }
}
