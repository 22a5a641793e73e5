//! Helm's release lock, as `apply` and `delete` meet it: a stored release in a `pending-*` state is
//! "another operation in progress" to Helm. Suspending a HelmRelease does not stop an action
//! helm-controller has already started, so before running helm we look:
//!
//! - helm-controller marks the HelmRelease `Reconciling=True`, reason `Progressing`, message
//!   `Running '<action>' action with timeout of <d>` before each Helm action
//!   (internal/reconcile/atomic_release.go). While that holds, and its timeout has not passed, the
//!   action is in flight: we wait for it to end (the storage leaves `pending-*` and the condition
//!   changes), bounded by the user's `--timeout`.
//! - A release that stays `pending-*` with no such action running was left by a helm that no longer
//!   runs. helm-controller unlocks it (internal/reconcile/unlock.go): the release is marked `failed`
//!   with the description `Release unlocked from stale '<status>' state` and an Event `PendingRelease`
//!   is recorded. We do the same, and say so.

use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::Value;

use crate::apply::install::Release;
use crate::cluster::Cluster;
use crate::flux::condition::{self, Condition};
use crate::flux::{HelmRelease, Objects};
use crate::support::error::{Error, Result};
use crate::support::output::progress;

/// helm-controller's reason for the Event of an unlock.
pub const UNLOCKED_REASON: &str = "PendingRelease";

/// The Helm statuses that lock a release (Helm's `Status.IsPending`).
const PENDING: &[&str] = &["pending-install", "pending-upgrade", "pending-rollback"];

/// helm-controller needs a moment after Helm's own timeout to record the outcome.
const GRACE: Duration = Duration::from_secs(30);

/// An action helm-controller says it is running, and when its timeout ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerAction {
    /// `install`, `upgrade`, `uninstall`, `rollback`, `test`, `unlock`...
    pub name: String,
    pub deadline: jiff::Timestamp,
}

/// The action helm-controller's conditions say is running at `now`, if any: `Reconciling=True` with
/// reason `Progressing` and a `Running '<action>' action with timeout of <d>` message whose timeout,
/// counted from the condition's last transition, has not passed. A controller that died mid-action
/// leaves the condition behind; the timeout is what tells that apart from one still at work.
fn controller_action(conditions: &[Condition], now: jiff::Timestamp) -> Option<ControllerAction> {
    let c = condition::find(conditions, condition::RECONCILING)?;
    if c.status != "True" || c.reason != "Progressing" {
        return None;
    }
    let rest = c.message.strip_prefix("Running '")?;
    let (name, rest) = rest.split_once('\'')?;
    let timeout = crate::support::duration::parse(rest.strip_prefix(" action with timeout of ")?.trim()).ok()?;
    let since: jiff::Timestamp = c.last_transition_time.parse().ok()?;
    let deadline = since.checked_add(jiff::SignedDuration::try_from(timeout + GRACE).ok()?).ok()?;
    (now < deadline).then(|| ControllerAction { name: name.to_string(), deadline })
}

/// What was found before helm runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// Nothing in flight, nothing locked.
    Free,
    /// A stale lock was lifted: the revision and the status it was stuck in, for the status and Events.
    Unlocked { revision: i64, was: String, message: String },
}

/// Waits for an action helm-controller has in flight on the release of HelmRelease `name` to end, then
/// unlocks the release if a helm that no longer runs left it pending. `limit` bounds the wait (the
/// user's `--timeout`); without it, the controller's own timeout does.
pub async fn wait_then_unlock(
    cluster: &Cluster,
    release_cluster: &Cluster,
    name: &str,
    release: &Release,
    limit: Option<Duration>,
) -> Result<Found> {
    let hrs = Objects::<HelmRelease>::namespaced(cluster, &cluster.namespace);
    // The HelmRelease is in `cluster`; the release's storage in its own cluster.
    let secrets: Api<Secret> = Api::namespaced(release_cluster.client.clone(), &release.storage_namespace);
    let started = std::time::Instant::now();
    // Any change to the HelmRelease or to the release's storage is a reason to look again; the look
    // itself reads both afresh, so the events' contents do not matter.
    let hr_changes = watcher(hrs.api.clone(), watcher::Config::default().fields(&format!("metadata.name={name}")))
        .default_backoff()
        .map(|_| ())
        .boxed();
    let storage_changes =
        watcher(secrets, watcher::Config::default().labels(&format!("owner=helm,name={}", release.name)))
            .default_backoff()
            .map(|_| ())
            .boxed();
    let mut changes = futures::stream::select(hr_changes, storage_changes);
    let mut announced: Option<String> = None;
    loop {
        let hr = hrs.get(name).await?;
        let conditions = hr.status.as_ref().map(|s| s.reconcile.conditions.as_slice()).unwrap_or_default();
        let now = jiff::Timestamp::now();
        let newest =
            crate::cluster::helmstore::newest_labels(release_cluster, &release.storage_namespace, &release.name)
                .await?;
        let Some(action) = controller_action(conditions, now) else {
            if announced.is_some() {
                progress::success("helm-controller's action ended");
            }
            return match newest {
                Some((revision, was)) if PENDING.contains(&was.as_str()) => {
                    unlock(release_cluster, release, revision, &was).await
                }
                _ => Ok(Found::Free),
            };
        };
        if announced.as_deref() != Some(action.name.as_str()) {
            progress::waiting(format!(
                "helm-controller is running its {} of release {}/{} (timeout at {}); waiting for it to end",
                action.name,
                release.namespace,
                release.name,
                action.deadline.strftime("%H:%M:%S UTC")
            ));
            announced = Some(action.name.clone());
        }
        let until_deadline = action.deadline.duration_since(now).unsigned_abs();
        let left = match limit {
            Some(limit) => match limit.checked_sub(started.elapsed()) {
                Some(left) => left,
                None => {
                    return Err(Error::Timeout {
                        what: format!("helm-controller's {} of release {} to end", action.name, release.name),
                        after: limit,
                        last_seen: format!(
                            "still running; helmrelease {name} stays suspended, run the command again later"
                        ),
                    });
                }
            },
            None => until_deadline,
        };
        // Wake on the next change, or when the controller's timeout or our limit has passed.
        let _ = tokio::time::timeout(left.min(until_deadline), changes.next()).await;
    }
}

/// Marks revision `revision` of the release `failed`, as helm-controller's unlock does (if it changed
/// meanwhile, the write fails and nothing is changed), and says so.
async fn unlock(cluster: &Cluster, release: &Release, revision: i64, was: &str) -> Result<Found> {
    let description = format!("Release unlocked from stale '{was}' state");
    let raw = crate::cluster::helmstore::set_status(
        cluster,
        &release.storage_namespace,
        &release.name,
        revision,
        "failed",
        &description,
    )
    .await?;
    let chart = |k: &str| raw.pointer(&format!("/chart/metadata/{k}")).and_then(Value::as_str).unwrap_or_default();
    let message = format!(
        "Unlocked Helm release {}/{}.v{revision} with chart {}@{} in {was} state",
        release.namespace,
        release.name,
        chart("name"),
        chart("version")
    );
    progress::warning(format!("{message}: the helm that left it pending no longer runs"));
    Ok(Found::Unlocked { revision, was: was.to_string(), message })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reconciling(status: &str, reason: &str, message: &str, since: &str) -> Vec<Condition> {
        vec![Condition {
            type_: "Reconciling".into(),
            status: status.into(),
            reason: reason.into(),
            message: message.into(),
            last_transition_time: since.into(),
            ..Default::default()
        }]
    }

    #[test]
    fn an_action_runs_until_its_timeout_and_a_grace() {
        let c =
            reconciling("True", "Progressing", "Running 'install' action with timeout of 5m0s", "2026-01-01T10:00:00Z");
        let at = |s: &str| s.parse::<jiff::Timestamp>().unwrap();
        let running = controller_action(&c, at("2026-01-01T10:05:00Z")).expect("running");
        assert_eq!(running.name, "install");
        assert_eq!(running.deadline, at("2026-01-01T10:05:30Z"));
        assert_eq!(controller_action(&c, at("2026-01-01T10:05:31Z")), None, "a dead controller's condition");
    }

    #[test]
    fn only_a_running_action_counts() {
        let now = "2026-01-01T10:00:01Z".parse().unwrap();
        let since = "2026-01-01T10:00:00Z";
        for c in [
            reconciling("True", "ProgressingWithRetry", "retrying after 1m", since),
            reconciling("True", "Progressing", "Fulfilling prerequisites", since),
            reconciling("False", "Progressing", "Running 'upgrade' action with timeout of 5m0s", since),
            vec![],
        ] {
            assert_eq!(controller_action(&c, now), None, "{c:?}");
        }
    }
}
