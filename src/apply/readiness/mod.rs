//! Waiting for a release as helm-controller waits for it, so that apply calls a release Ready exactly
//! when helm-controller would.
//!
//! `spec.waitStrategy.name` decides who waits (helm-controller's `internal/action/wait.go`):
//! - `poller` (the default): helm-controller's own waiter, kstatus readiness ([`kstatus`](crate::cluster::kstatus)) of every object
//!   of the release, with the HelmRelease's `healthCheckExprs` ([`health`]) for the kinds they name, Jobs
//!   awaited to completion unless `disableWaitForJobs`, paused Deployments skipped, Jobs with a TTL done
//!   once gone, polled until all are current, failing at once when one has failed, bounded by the
//!   action's timeout. helm cozy runs this waiter itself after helm, which is told to wait for hooks only.
//! - `legacy`: Helm's own wait (`--wait=legacy`, Helm 3's `--wait`), with `--wait-for-jobs` unless
//!   `disableWaitForJobs`.
//!
//! `disableWait` waits for hooks only, under either; `--wait=false|true` on the command line overrides it.
//!
//! One order differs from helm-controller's: it waits between creating the objects and running the
//! post-install/upgrade hooks, while helm cozy (which drives the helm CLI, not Helm's library) waits
//! after the hooks. A failed wait then marks the stored revision failed, as Helm would have.

pub mod health;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::cluster::Cluster;
use crate::cluster::kstatus::{Status, Verdict};
use crate::cluster::live::LiveObjects;
use crate::cluster::manifests::ObjectId;
use crate::flux::helmrelease::HelmRelease;
use crate::support::error::{Error, Result};
use crate::support::output::progress;
pub use health::HealthChecks;

/// helm-controller's poll interval is 5 s; the verdicts do not depend on it, and a shorter one ends an
/// apply sooner after the last object becomes ready.
const INTERVAL: Duration = Duration::from_secs(2);

/// What helm is told to do about waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HelmWait {
    /// Hooks only: nothing (poller, whose waiting is helm cozy's) or `disableWait`.
    HooksOnly,
    /// Helm's own (legacy) wait, for Jobs too when `jobs`.
    Legacy { jobs: bool },
}

/// How an action of the release waits.
#[derive(Debug)]
pub struct Waiting {
    pub helm: HelmWait,
    /// helm cozy's poller, when the strategy is `poller` and waiting is on.
    pub poller: Option<Poller>,
}

/// helm-controller's `poller`.
#[derive(Debug)]
pub struct Poller {
    /// Jobs are awaited to completion (not `disableWaitForJobs`).
    pub jobs: bool,
    pub timeout: Duration,
    pub checks: HealthChecks,
}

impl Waiting {
    /// How the next action (an upgrade when `installed`, else an install) waits. `wait` is the user's
    /// override of `disableWait`; `timeout` the action's. Invalid `healthCheckExprs` and an unknown
    /// strategy are refused here, before anything changes.
    pub fn of(hr: &HelmRelease, installed: bool, wait: Option<bool>, timeout: Duration) -> Result<Waiting> {
        use crate::flux::spec::Actions as _;
        let settings = hr.spec.release_settings(installed);
        let strategy = Strategy::of(hr)?;
        let checks = HealthChecks::of(&hr.spec.extra)?;
        let jobs = !settings.disable_wait_for_jobs;
        if !wait.unwrap_or(!settings.disable_wait) {
            return Ok(Waiting { helm: HelmWait::HooksOnly, poller: None });
        }
        Ok(match strategy {
            Strategy::Legacy => Waiting { helm: HelmWait::Legacy { jobs }, poller: None },
            Strategy::Poller => Waiting { helm: HelmWait::HooksOnly, poller: Some(Poller { jobs, timeout, checks }) },
        })
    }
}

/// `spec.waitStrategy.name`: who waits for every action of the release (install, upgrade, rollback and
/// uninstall alike).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// helm-controller's own kstatus poller (the default).
    Poller,
    /// Helm's own wait.
    Legacy,
}

impl Strategy {
    /// The HelmRelease's strategy; one helm-controller does not know is refused.
    pub fn of(hr: &HelmRelease) -> Result<Strategy> {
        match hr.spec.extra.pointer_str("waitStrategy", "name").unwrap_or("poller") {
            "poller" => Ok(Strategy::Poller),
            "legacy" => Ok(Strategy::Legacy),
            other => Err(Error::Invalid {
                what: "spec.waitStrategy.name".into(),
                reason: format!("{other:?} is not a wait strategy helm-controller knows (poller or legacy)"),
            }),
        }
    }
}

/// A small extension for reading `spec.a.b` strings from the HelmRelease's extra fields.
trait PointerStr {
    fn pointer_str(&self, a: &str, b: &str) -> Option<&str>;
}

impl PointerStr for BTreeMap<String, Value> {
    fn pointer_str(&self, a: &str, b: &str) -> Option<&str> {
        self.get(a)?.get(b)?.as_str().filter(|s| !s.is_empty())
    }
}

/// Why a release is not ready: helm-controller's message (ssa `WaitForSetWithContext`), which becomes
/// the action's failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotReady {
    pub message: String,
    /// For people: why each object named is not ready (its status message, or the expression that said so).
    pub why: String,
}

/// One object waited for, and what was last seen of it.
struct Watched {
    id: ObjectId,
    desired: Value,
    /// A Job with `ttlSecondsAfterFinished`: gone counts as done.
    ttl_job: bool,
    last: Option<(Status, String)>,
}

impl Watched {
    /// `Kind/namespace/name`, as Flux names objects in its messages.
    fn name(&self) -> String {
        match &self.id.namespace {
            Some(ns) => format!("{}/{ns}/{}", self.id.kind, self.id.name),
            None => format!("{}/{}", self.id.kind, self.id.name),
        }
    }

    fn effective(&self) -> Option<Status> {
        match self.last.as_ref().map(|l| l.0) {
            Some(Status::NotFound) if self.ttl_job => Some(Status::Current),
            other => other,
        }
    }
}

/// Waits for the objects of `manifest` (the stored release's, defaulted to `namespace`) as the poller
/// does. `says`: progress lines on stderr. `interrupted` ends the wait early with the signal's name.
pub async fn wait(
    cluster: &Cluster,
    manifest: &str,
    namespace: &str,
    poller: &Poller,
    says: bool,
    interrupted: impl std::future::Future<Output = String>,
) -> Result<std::result::Result<(), NotReady>, Interrupted> {
    tokio::pin!(interrupted);
    let run = poll(cluster, manifest, namespace, poller, says);
    tokio::select! {
        outcome = run => Ok(outcome),
        signal = &mut interrupted => Err(Interrupted { signal }),
    }
}

/// How the release stands once helm has applied it and [`settle`] has waited.
#[derive(Debug)]
pub enum Settled {
    Ready,
    /// Not ready: the stored revision is now marked failed (`stored`, as written).
    NotReady {
        failure: NotReady,
        stored: Box<crate::cluster::helmstore::StoredRelease>,
    },
    Interrupted {
        signal: String,
    },
}

/// After helm applied the release under `poller`: waits for its objects, and when they are not ready
/// marks the revision Helm stored failed, as Helm does when its waiter fails (an install's description
/// `Release "x" failed: ...`; an upgrade's `Upgrade "x" failed: ...`, its previous revision, which
/// Helm had superseded, deployed again).
pub async fn settle(
    cluster: &Cluster,
    storage_namespace: &str,
    release_name: &str,
    release_namespace: &str,
    upgrade: bool,
    poller: &Poller,
    says: bool,
) -> Result<Settled> {
    let stored =
        crate::cluster::helmstore::latest(cluster, storage_namespace, release_name).await?.ok_or_else(|| {
            Error::Invalid {
                what: "apply".into(),
                reason: format!("helm reported success but release {release_name} is not stored"),
            }
        })?;
    let failure =
        match wait(cluster, &stored.manifest, release_namespace, poller, says, crate::support::process::interrupted())
            .await
        {
            Ok(Ok(())) => return Ok(Settled::Ready),
            Ok(Err(failure)) => failure,
            Err(Interrupted { signal }) => return Ok(Settled::Interrupted { signal }),
        };
    let description = if upgrade {
        format!("Upgrade {release_name:?} failed: {}", failure.message)
    } else {
        format!("Release {release_name:?} failed: {}", failure.message)
    };
    crate::cluster::helmstore::set_status(
        cluster,
        storage_namespace,
        release_name,
        stored.version,
        "failed",
        &description,
    )
    .await?;
    if upgrade {
        let history = crate::cluster::helmstore::history(cluster, storage_namespace, release_name).await?;
        if let Some(previous) = history.iter().filter(|r| r.version < stored.version).max_by_key(|r| r.version)
            && previous.status == "superseded"
        {
            let description = previous.raw.pointer("/info/description").and_then(Value::as_str).unwrap_or_default();
            crate::cluster::helmstore::set_status(
                cluster,
                storage_namespace,
                release_name,
                previous.version,
                "deployed",
                description,
            )
            .await?;
        }
    }
    let stored = crate::cluster::helmstore::latest(cluster, storage_namespace, release_name).await?.unwrap_or(stored);
    Ok(Settled::NotReady { failure, stored: Box::new(stored) })
}

/// The wait was interrupted by a signal.
#[derive(Debug)]
pub struct Interrupted {
    pub signal: String,
}

async fn poll(
    cluster: &Cluster,
    manifest: &str,
    namespace: &str,
    poller: &Poller,
    says: bool,
) -> std::result::Result<(), NotReady> {
    let mut watched = match objects(cluster, manifest, namespace).await {
        Ok(w) => w,
        Err(e) => {
            return Err(NotReady { message: format!("cannot read the release's objects: {e}"), why: String::new() });
        }
    };
    if watched.is_empty() {
        return Ok(());
    }
    let apis = match crate::cluster::discovery::discover(cluster).await {
        Ok(a) => a,
        Err(e) => {
            return Err(NotReady { message: format!("cannot discover the cluster's APIs: {e}"), why: String::new() });
        }
    };
    let live = LiveObjects::new(cluster, apis);
    let started = Instant::now();
    let mut said = String::new();
    loop {
        let desired: Vec<&Value> = watched.iter().map(|w| &w.desired).collect();
        let got = live.get_all(&desired).await;
        match got {
            Ok(objs) => {
                for (w, obj) in watched.iter_mut().zip(objs) {
                    let (status, message) = match obj {
                        None => (Status::NotFound, "Resource not found".to_string()),
                        Some(obj) => judge(&obj, poller),
                    };
                    w.last = Some((status, message));
                }
            }
            // A failed read leaves what was last seen: the wait goes on until the timeout, as the
            // poller's does through transient errors.
            Err(e) => {
                if says {
                    progress::warning(format!("cannot read the release's objects now: {e}"));
                }
            }
        }
        let effective: Vec<Option<Status>> = watched.iter().map(Watched::effective).collect();
        let all_current = effective.iter().all(|s| *s == Some(Status::Current));
        let failed = effective.contains(&Some(Status::Failed));
        let terminal = effective.iter().all(|s| matches!(s, Some(Status::Current | Status::Failed)));
        if all_current {
            if says && !said.is_empty() {
                progress::success(format!("all {} objects are ready", watched.len()));
            }
            return Ok(());
        }
        if failed || terminal {
            return Err(not_ready(&watched, false));
        }
        if started.elapsed() >= poller.timeout {
            return Err(not_ready(&watched, true));
        }
        if says {
            let waiting = not_ready_line(&watched);
            if waiting != said {
                progress::waiting(&waiting);
                said = waiting;
            }
        }
        let left = poller.timeout.saturating_sub(started.elapsed());
        tokio::time::sleep(INTERVAL.min(left)).await;
    }
}

/// What the poller's status readers say of a live object: the health check expressions for the kinds
/// they name, Jobs by completion when Jobs are awaited, else kstatus.
fn judge(obj: &Value, poller: &Poller) -> (Status, String) {
    let verdict = match poller.checks.evaluate(obj) {
        Some(Ok(v)) => v,
        // Unknown, which is never ready: the error is the message.
        Some(Err(e)) => return (Status::InProgress, format!("Unknown: {e}")),
        None if poller.jobs && crate::cluster::kstatus::group_kind(obj) == ("batch", "Job") => job_to_completion(obj),
        None => crate::cluster::kstatus::compute(obj),
    };
    (verdict.status, verdict.message)
}

/// A Job as Flux's custom Job status reader sees it (fluxcd/pkg `runtime/statusreaders`): current only
/// when complete (or suspended), failed when failed, else in progress.
fn job_to_completion(obj: &Value) -> Verdict {
    if obj.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true) {
        return Verdict::new(Status::Current, "Job is suspended");
    }
    let v = crate::cluster::kstatus::compute(obj);
    if v.status == Status::Current && !v.message.starts_with("Job Completed") {
        return Verdict::new(Status::InProgress, v.message);
    }
    v
}

/// The release's objects from its manifest, namespaces defaulted as the API server stores them, less
/// what helm-controller's waiter skips: paused Deployments.
async fn objects(cluster: &Cluster, manifest: &str, namespace: &str) -> Result<Vec<Watched>> {
    let mut manifests = crate::cluster::manifests::parse_manifests(manifest)
        .map_err(|e| Error::Invalid { what: "the stored release's manifest".into(), reason: e.to_string() })?;
    let scoped = crate::cluster::discovery::discover(cluster).await?.cluster_scoped();
    crate::cluster::manifests::default_namespaces(&mut manifests, namespace, |g, k| scoped.contains(g, k));
    Ok(manifests
        .into_iter()
        .filter(|m| {
            !(m.id.group == "apps"
                && m.id.kind == "Deployment"
                && m.object.pointer("/spec/paused").and_then(Value::as_bool) == Some(true))
        })
        .map(|m| {
            let ttl_job = m.id.group == "batch"
                && m.id.kind == "Job"
                && m.object.pointer("/spec/ttlSecondsAfterFinished").is_some();
            Watched { id: m.id, desired: m.object, ttl_job, last: None }
        })
        .collect())
}

/// helm-controller's words for a wait that failed or timed out: the objects that failed (and, at the
/// deadline, every object not current), with their kstatus status.
fn verdict_message(watched: &[Watched], deadline: bool) -> String {
    let listed: Vec<String> = watched
        .iter()
        .filter(|w| match w.effective() {
            Some(Status::Failed) => true,
            Some(Status::Current) => false,
            _ => deadline,
        })
        .map(|w| {
            let status = w
                .last
                .as_ref()
                .map_or("Unknown", |l| if l.1.starts_with("Unknown: ") { "Unknown" } else { l.0.as_str() });
            format!("{} status: '{status}'", w.name())
        })
        .collect();
    let head = if deadline { "timeout waiting for" } else { "failed early due to stalled resources" };
    format!("{head}: [{}]", listed.join(", "))
}

/// Why the objects that are not current are not: their last status message each.
fn reasons(watched: &[Watched]) -> String {
    let why: Vec<String> = watched
        .iter()
        .filter(|w| w.effective() != Some(Status::Current))
        .filter_map(|w| w.last.as_ref().map(|l| format!("{}: {}", w.name(), l.1)))
        .collect();
    why.join("; ")
}

fn not_ready(watched: &[Watched], deadline: bool) -> NotReady {
    NotReady { message: verdict_message(watched, deadline), why: reasons(watched) }
}

/// One progress line: how many objects are not ready yet, and why (the first few).
fn not_ready_line(watched: &[Watched]) -> String {
    let waiting: Vec<&Watched> = watched.iter().filter(|w| w.effective() != Some(Status::Current)).collect();
    let shown: Vec<String> = waiting
        .iter()
        .take(3)
        .map(|w| format!("{} ({})", w.name(), w.last.as_ref().map_or("not read yet", |l| l.1.as_str())))
        .collect();
    let more = if waiting.len() > 3 { format!(" and {} more", waiting.len() - 3) } else { String::new() };
    format!("waiting for {} of {} objects to be ready: {}{more}", waiting.len(), watched.len(), shown.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn watched(kind: &str, status: Option<(Status, &str)>) -> Watched {
        let id = ObjectId {
            group: String::new(),
            version: Some("v1".into()),
            kind: kind.into(),
            namespace: Some("ns".into()),
            name: "x".into(),
        };
        Watched { id, desired: json!({}), ttl_job: false, last: status.map(|(s, m)| (s, m.to_string())) }
    }

    #[test]
    fn messages_name_objects_as_flux_does() {
        let w = [
            watched("Widget", Some((Status::Failed, "healthCheckExprs failed: x"))),
            watched("ConfigMap", Some((Status::Current, "ok"))),
        ];
        assert_eq!(verdict_message(&w, false), "failed early due to stalled resources: [Widget/ns/x status: 'Failed']");
        assert_eq!(reasons(&w), "Widget/ns/x: healthCheckExprs failed: x");
        let w = [watched("Widget", Some((Status::InProgress, "Replicas: 0/1")))];
        assert!(verdict_message(&w, true).starts_with("timeout waiting for: [Widget/ns/x status: 'InProgress']"));
    }

    #[test]
    fn jobs_awaited_to_completion() {
        let started = json!({"apiVersion": "batch/v1", "kind": "Job", "status": {"startTime": "t", "active": 1}});
        assert_eq!(job_to_completion(&started).status, Status::InProgress);
        let done = json!({"apiVersion": "batch/v1", "kind": "Job", "status": {"conditions": [{"type": "Complete", "status": "True"}]}});
        assert_eq!(job_to_completion(&done).status, Status::Current);
    }
}
