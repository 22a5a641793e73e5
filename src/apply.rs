//! `apply` and `delete` of a HelmRelease's chart from a local directory, without racing Flux:
//!
//! 1. compose values and check the inputs (bad input changes nothing);
//! 2. suspend the HelmRelease, so helm-controller does not act while we do;
//! 3. `helm upgrade --install` exactly as helm-controller would (see [`crate::install`]);
//! 4. write the status helm-controller would write ([`crate::release_status`]) and emit Events;
//! 5. nudge HelmReleases that depend on this one, so they proceed now instead of at their next retry;
//! 6. optionally resume.
//!
//! On failure the status says Ready=False with Helm's message and the release stays suspended. Ctrl-C or
//! SIGTERM stops helm (the child is killed when its future is dropped), records that the apply was
//! interrupted, and removes temporary files on the way out. Under `--watch` ([`apply_round`]) the same
//! steps run once per round.

use std::time::{Duration, Instant};

use kube::Resource;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};

use crate::cluster::Cluster;
use crate::desired::{Desired, UserValues};
use crate::error::{Error, Result};
use crate::flux::HelmRelease;
use crate::flux::verbs::Objects;
use crate::install::{Mode, UpgradeOptions, uninstall, upgrade};
use crate::output::progress;
use crate::pipeline::Pipeline;
use crate::readiness::{HelmWait, Settled, Waiting};
use crate::release_lock::{self, Found};
use crate::release_status::{self, Action, Failure, Success};
use crate::render::Helm;
use crate::render::postrender::PostRenderSession;
use crate::target::Target;

/// How an apply ended, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Applied,
    DryRun,
    /// A round of `apply --watch` found the HelmRelease resumed since the loop suspended it: Flux owns the
    /// release again, and nothing was changed.
    Resumed,
}

#[derive(Clone)]
pub struct ApplyRequest<'a> {
    pub cluster: &'a Cluster,
    /// The chart and the helm that installs it.
    pub pipeline: &'a Pipeline,
    pub name: &'a str,
    pub user: UserValues,
    pub options: UpgradeOptions,
    pub resume: bool,
}

fn recorder(cluster: &Cluster) -> Recorder {
    Recorder::new(cluster.client.clone(), Reporter { controller: "helm-cozy".into(), instance: None })
}

/// The API server refuses an Event note over 1024 bytes.
const EVENT_NOTE_MAX: usize = 1024;

/// Cuts `s` to at most `max` bytes on a character boundary, marking the cut.
fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max.saturating_sub(3);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

/// Helm's error as helm-controller states it: once, without Helm 4's duplicate `level=…` log lines or the
/// CLI's `Error: UPGRADE FAILED: ` prefix.
fn helm_error(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim_start().starts_with("level=")).collect();
    let text = lines.join("\n");
    let text = text.trim();
    let text = text.strip_prefix("Error: ").unwrap_or(text);
    let text =
        text.strip_prefix("UPGRADE FAILED: ").or_else(|| text.strip_prefix("INSTALLATION FAILED: ")).unwrap_or(text);
    text.trim().to_string()
}

async fn emit(cluster: &Cluster, hr: &HelmRelease, type_: EventType, reason: &str, note: &str) {
    let note = truncate(note, EVENT_NOTE_MAX);
    let ev = Event { type_, reason: reason.into(), note: Some(note), action: "Apply".into(), secondary: None };
    // An Event is a courtesy to people and tools watching; failing to record one does not fail the apply.
    if let Err(e) = recorder(cluster).publish(&ev, &hr.object_ref(&())).await {
        progress::failure(format!("cannot record the {reason} event: {e}"));
    }
}

/// Every rendered object (hooks aside, which Helm creates only when it runs them) through a server-side
/// apply dry run as helm-controller's field manager, with Helm's ownership metadata.
/// The objects are those of `rendered`, rendered as `show` renders them: with what helm-controller's Helm
/// sees of the cluster (`apis`).
async fn server_dry_run(
    target: &Target,
    apis: crate::discovery::ClusterApis,
    rendered: &str,
    desired: &Desired,
) -> Result<()> {
    let scoped = apis.cluster_scoped();
    let live = crate::live::LiveObjects::new(&target.cluster, apis);
    let objects = crate::compare::desired_objects(rendered, &desired.release_namespace, &scoped)?;
    let (mut objects, _hooks) = crate::compare::split_hooks(objects);
    for m in &mut objects {
        crate::manifests::add_helm_ownership(&mut m.object, &desired.release_name, &desired.release_namespace);
    }
    use futures::{StreamExt, TryStreamExt};
    futures::stream::iter(objects.iter().map(|m| live.dry_run(&m.object, None)))
        .buffer_unordered(16)
        .try_collect::<Vec<_>>()
        .await?;
    Ok(())
}

/// Whether `helm upgrade --install` will upgrade (a release is stored and not uninstalled), from the
/// storage Secrets' labels: nothing is decoded.
async fn installed(cluster: &Cluster, desired: &Desired) -> Result<bool> {
    Ok(matches!(desired.next_action(cluster).await?, crate::helmstore::NextAction::Upgrade { .. }))
}

/// How the action waits (see [`crate::readiness`]): the HelmRelease's strategy and expressions, the
/// user's `--wait` and `--timeout`.
fn waiting(hr: &HelmRelease, installed: bool, options: &UpgradeOptions) -> Result<Waiting> {
    let timeout = crate::install::action_timeout(hr, installed, options.timeout);
    Waiting::of(hr, installed, options.wait, timeout)
}

/// How the locked part of an apply ended.
enum Ended {
    /// Applied and, where helm cozy waits, ready.
    Applied,
    /// The CRDs or helm failed.
    Failed(crate::render::RenderError),
    /// Applied, but not ready as helm-controller judges it; the stored revision is marked failed.
    NotReady {
        failure: crate::readiness::NotReady,
        stored: Box<crate::helmstore::StoredRelease>,
    },
    Interrupted {
        signal: String,
        during: String,
    },
}

/// helm-controller's waiter after helm applied the release ([`crate::readiness::settle`]).
async fn settle(
    cluster: &Cluster,
    desired: &Desired,
    action: Action,
    poller: &crate::readiness::Poller,
    says: bool,
) -> Result<Ended> {
    if says {
        progress::action(format!(
            "waiting for the release's objects as helm-controller's poller would (timeout {})",
            crate::duration::go_string(poller.timeout)
        ));
    }
    let upgrade = action == Action::Upgrade;
    let (sns, name, ns) = (&desired.storage_namespace, &desired.release_name, &desired.release_namespace);
    Ok(match crate::readiness::settle(cluster, sns, name, ns, upgrade, poller, says).await? {
        Settled::Ready => Ended::Applied,
        Settled::NotReady { failure, stored } => Ended::NotReady { failure, stored },
        Settled::Interrupted { signal } => Ended::Interrupted {
            signal,
            during: "while waiting for the release's objects to be ready (helm had applied them)".into(),
        },
    })
}

/// Puts back what an interrupted apply or delete left of the release's storage (see
/// [`crate::install::recover_storage`]), and says so.
async fn recover_storage(cluster: &Cluster, release: &crate::install::Release) -> Result<()> {
    let moved = crate::install::recover_storage(cluster, release).await?;
    if moved > 0 {
        progress::warning(format!(
            "found {moved} Helm storage Secret(s) of release {} in {}, left there by an interrupted helm cozy: moved back to {}, where Flux keeps them",
            release.name, release.namespace, release.storage_namespace
        ));
    }
    Ok(())
}

/// The method helm-controller would apply the release with (see [`crate::apply_method`]): the release's
/// newest revision is read for an upgrade.
async fn method(cluster: &Cluster, desired: &Desired, installed: bool) -> Result<crate::apply_method::ApplyMethod> {
    let last = if installed {
        crate::helmstore::latest(cluster, &desired.storage_namespace, &desired.release_name).await?
    } else {
        None
    };
    Ok(crate::apply_method::decide(&desired.hr, installed, last.as_ref()))
}

/// Applies the chart for the HelmRelease; see the module docs.
pub async fn apply(req: ApplyRequest<'_>) -> Result<Outcome> {
    // Listening from the start: a SIGINT while the storage is being moved is then handled (once helm
    // runs) instead of killing the process half-way.
    let interrupted = crate::process::interrupted();
    run(req, interrupted, Voice::Command).await
}

/// One round of `apply --watch` ([`crate::watch`]): the same apply, stopped only when `interrupted`
/// resolves (the loop's second Ctrl-C: the first one lets the round finish), and quiet about what the
/// loop says once for all rounds (the suspension, the hand-back) and about what its round line says.
pub async fn apply_round(
    req: ApplyRequest<'_>,
    interrupted: impl std::future::Future<Output = String>,
) -> Result<Outcome> {
    run(req, interrupted, Voice::Round).await
}

/// Who speaks for an apply: the command itself, or a watch loop that prints one line per round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Voice {
    Command,
    Round,
}

async fn run(
    req: ApplyRequest<'_>,
    interrupted: impl std::future::Future<Output = String>,
    voice: Voice,
) -> Result<Outcome> {
    let says = voice == Voice::Command;
    let cluster = req.cluster;
    let objects = Objects::<HelmRelease>::namespaced(cluster, &cluster.namespace);
    // Everything that can be checked without changing anything is checked first, what needs no cluster
    // before anything is asked of it.
    let kubectl = crate::render::locate_kubectl()?;
    let hr = objects.read(req.name).await?;
    // The loop suspended the release once; a round never takes back one resumed since (`kubectl cozyhr
    // resume` while watching hands it to Flux).
    if voice == Voice::Round && !hr.spec.suspend {
        return Ok(Outcome::Resumed);
    }
    let (helm, chart) = (&req.pipeline.helm, &req.pipeline.chart);
    let desired = Desired::resolve(cluster, hr, chart, &req.user, kubectl).await?;
    if says {
        crate::pipeline::note_recorded_version(&desired, chart);
    }
    // The cluster the release lives in (spec.kubeConfig), reached, and as whom (spec.serviceAccountName):
    // any failure here is before anything changes, in either cluster.
    let target = if says {
        crate::target::resolve(cluster, &desired.hr).await?
    } else {
        crate::target::resolve_quietly(cluster, &desired.hr).await?
    };
    let release_cluster = &target.cluster;
    let session = PostRenderSession::new(&desired.post_render, req.pipeline.self_exe.clone())
        .map_err(|e| Error::Invalid { what: "post-renderer".into(), reason: e.to_string() })?;
    let ns = cluster.namespace.as_str();
    // The chart renders, with the values and what helm-controller's Helm would see of the cluster, and
    // Flux's post-render chain runs on it: a chart that cannot be installed changes nothing, not even the
    // suspension. The same render gives the CRDs helm-controller applies before Helm.
    let seen = req.pipeline.look(&target, &desired).await?;
    let apis = seen.apis.clone();
    let rendered = req
        .pipeline
        .render_with_crds(&desired, seen)
        .await
        .map_err(|e| Error::Failed(format!("the chart does not render, so nothing was changed: {e}")))?;
    let crd_objects = crate::crds::objects(&rendered.crds)?;
    let ignored = crate::crds::ignored(&crd_objects);
    if says && !ignored.is_empty() {
        progress::warning(format!(
            "ignoring what is not a CustomResourceDefinition in the chart's crds/ (as helm-controller does; move it to templates/): {}",
            ignored.join(", ")
        ));
    }
    let crds = crate::crds::to_apply(&crd_objects, &desired.hr);
    // Both policies are checked now: which one applies is known only once the release is locked.
    crate::crds::policy(&desired.hr, false)?;
    crate::crds::policy(&desired.hr, true)?;
    // Likewise how each action would wait: an unknown strategy or an invalid healthCheckExprs refused now.
    for installed in [false, true] {
        waiting(&desired.hr, installed, &req.options)?;
    }

    if req.options.dry_run {
        let installed = installed(release_cluster, &desired).await?;
        let action = if installed { Action::Upgrade } else { Action::Install };
        let method = method(release_cluster, &desired, installed).await?;
        progress::action(format!("dry run: {} {} (nothing changes)", action.as_str(), desired.release_name));
        let mode = Mode { installed, method, wait: HelmWait::HooksOnly };
        upgrade(release_cluster, helm, &desired, &session, mode, &req.options, interrupted)
            .await
            .map_err(|e| Error::Failed(format!("dry run: {e}")))?;
        // helm's --dry-run=server only lets lookups reach the cluster; the objects themselves go through
        // the API server here, as helm-controller's apply would send them.
        server_dry_run(&target, apis, &rendered.manifests, &desired).await?;
        progress::success("the API server accepts every object (server-side dry run)");
        return Ok(Outcome::DryRun);
    }

    // Whether the chart is the one the source offers: else helm-controller must not keep it once resumed.
    let sameness = crate::handback::compare(cluster, &desired).await;
    if says && let crate::handback::Sameness::Unknown { why } = &sameness {
        progress::warning(format!(
            "cannot tell whether this chart is the one its source offers ({why}); if it is not, helm-controller keeps it once resumed until the source changes"
        ));
    }
    // One apply at a time per release (see crate::release_lease), held until the status is written.
    let lease = crate::release_lease::acquire(
        &target.own,
        &desired.storage_namespace,
        &desired.release_name,
        req.options.timeout,
    )
    .await?;
    let outcome = async {
        if says {
            progress::action(format!(
                "suspending helmrelease {} in {ns} namespace, so Flux does not race this apply",
                req.name
            ));
        }
        let hr = objects.set_suspend(req.name, true).await?;
        // Suspending stops no action helm-controller has begun: wait for it, and lift a stale lock.
        let release = crate::install::Release::of(&hr);
        recover_storage(release_cluster, &release).await?;
        if let Found::Unlocked { message, .. } =
            release_lock::wait_then_unlock(cluster, release_cluster, req.name, &release, req.options.timeout).await?
        {
            emit(cluster, &hr, EventType::Normal, release_lock::UNLOCKED_REASON, &message).await;
        }
        // What the storage holds now decides install or upgrade (the controller's action may have ended
        // with a release where there was none), and the method helm-controller would apply it with.
        let installed = installed(release_cluster, &desired).await?;
        let action = if installed { Action::Upgrade } else { Action::Install };
        let method = method(release_cluster, &desired, installed).await?;
        if says
            && helm.major < 4
            && let Some(note) = crate::apply_method::helm3_note(method)
        {
            progress::warning(note);
        }
        let crd_policy = crate::crds::policy(&desired.hr, installed)?;
        let waiting = waiting(&desired.hr, installed, &req.options)?;

        if says {
            progress::action(format!(
                "helm {} {}/{} with chart {}@{}",
                action.as_str(),
                desired.release_namespace,
                desired.release_name,
                chart.meta.name,
                desired.chart_version()
            ));
        }
        let started = Instant::now();
        // helm-controller applies the CRDs first; a failure there is the action's failure.
        let crds_applied = match crate::crds::apply(release_cluster, &crds, crd_policy, method).await {
            Ok(n) => Ok(n),
            Err(e) => Err(format!("failed to apply CustomResourceDefinitions: {e}")),
        };
        if says
            && let Ok(n) = crds_applied
            && n > 0
        {
            progress::success(format!("{n} CustomResourceDefinition(s) applied ({crd_policy:?} policy)"));
        }
        let ended = match crds_applied {
            Err(message) => Ended::Failed(crate::render::RenderError::Failed { program: "helm cozy".into(), stderr: message }),
            // On SIGINT/SIGTERM helm is asked to stop and given time to mark the release failed; the
            // storage relocation is undone either way, and then the interruption is recorded.
            Ok(_) => match upgrade(
                release_cluster,
                helm,
                &desired,
                &session,
                Mode { installed, method, wait: waiting.helm },
                &req.options,
                interrupted,
            )
            .await
            {
                Err(crate::render::RenderError::Interrupted { signal, detail }) => {
                    Ended::Interrupted { signal, during: format!("while helm was running{detail}") }
                }
                Err(e) => Ended::Failed(e),
                Ok(()) => match &waiting.poller {
                    None => Ended::Applied,
                    Some(poller) => {
                        settle(release_cluster, &desired, action, poller, says).await?
                    }
                },
            },
        };
        let config_digest = crate::values::digest_values(&desired.composed.values);
        let failure = |reason: Option<&'static str>, message: String, stored: Option<crate::helmstore::StoredRelease>| {
            let (chart_name, chart_version) = (chart.meta.name.clone(), desired.chart_version().to_string());
            let (cd, sns) = (config_digest.clone(), desired.storage_namespace.clone());
            move |hr: &HelmRelease| {
                Ok(release_status::failed(
                    hr,
                    &Failure {
                        action,
                        reason,
                        message: message.clone(),
                        chart_name: &chart_name,
                        chart_version: &chart_version,
                        config_digest: cd.clone(),
                        storage_namespace: &sns,
                        release: stored.as_ref(),
                    },
                ))
            }
        };
        match ended {
            Ended::Interrupted { signal, during } => {
                let message = format!(
                    "helm cozy apply was interrupted by {signal} {during}; the release may be partly applied: run helm cozy apply {} again",
                    req.name
                );
                let hr = objects
                    .write_status(req.name, failure(Some(release_status::INTERRUPTED_REASON), message.clone(), None))
                    .await?;
                emit(cluster, &hr, EventType::Warning, release_status::INTERRUPTED_REASON, &message).await;
                if says {
                    progress::failure(format!("interrupted: helmrelease {} stays suspended", req.name));
                }
                Err(Error::Failed(message))
            }
            Ended::NotReady { failure: not_ready, stored } => {
                let hr = objects.write_status(req.name, failure(None, not_ready.message.clone(), Some(*stored))).await?;
                let reason = if action == Action::Install { "InstallFailed" } else { "UpgradeFailed" };
                let conditions = hr.status.as_ref().map(|s| s.reconcile.conditions.as_slice()).unwrap_or_default();
                let said = crate::flux::condition::find(conditions, release_status::READY).map(|c| c.message.clone());
                emit(cluster, &hr, EventType::Warning, reason, said.as_deref().unwrap_or(&not_ready.message)).await;
                if says {
                    progress::failure(format!(
                        "the release is not ready ({}); helmrelease {} stays suspended (kubectl cozyhr status {} -n {ns})",
                        not_ready.why, req.name, req.name
                    ));
                }
                Err(Error::Failed(format!("{} ({})", not_ready.message, not_ready.why)))
            }
            Ended::Failed(e) => {
                let message = e.to_string();
                let helm_message = match &e {
                    crate::render::RenderError::Failed { stderr, .. } => helm_error(stderr),
                    _ => message.clone(),
                };
                let hr = objects.write_status(req.name, failure(None, helm_message.clone(), None)).await?;
                let reason = if action == Action::Install { "InstallFailed" } else { "UpgradeFailed" };
                emit(cluster, &hr, EventType::Warning, reason, &helm_message).await;
                if says {
                    progress::failure(format!(
                        "helm {} failed; helmrelease {} stays suspended (kubectl cozyhr status {} -n {ns})",
                        action.as_str(),
                        req.name,
                        req.name
                    ));
                }
                Err(Error::Failed(message))
            }
            Ended::Applied => {
                let stored = crate::helmstore::latest(release_cluster, &desired.storage_namespace, &desired.release_name)
                    .await?
                    .ok_or_else(|| Error::Invalid {
                        what: "apply".into(),
                        reason: format!("helm reported success but release {} is not stored", desired.release_name),
                    })?;
                let duration = started.elapsed();
                // What Helm 4 applied server-side is `helm`'s: made helm-controller's, so its apply after
                // the hand-back removes what the source's chart does not set (crate::field_managers).
                if helm.major >= 4 && method.server_side() {
                    let (manifest, ns) = (&stored.manifest, &desired.release_namespace);
                    if let Err(e) = crate::field_managers::take_over(release_cluster, manifest, ns).await {
                        progress::warning(format!(
                            "cannot hand the applied fields to helm-controller's field manager ({e}): once resumed, helm-controller leaves fields this chart sets and its source's does not"
                        ));
                    }
                }
                // Scopes for the inventory, as helm-controller's REST mapper knows them now (the chart may have
                // brought CRDs of its own).
                let scoped = crate::discovery::discover(release_cluster).await?.cluster_scoped();
                let success = Success {
                    action,
                    crds: &crd_objects,
                    release: &stored,
                    config_digest: config_digest.clone(),
                    storage_namespace: &desired.storage_namespace,
                    release_namespace: &desired.release_namespace,
                    duration,
                    scoped: &scoped,
                };
                let hr = objects.write_status(req.name, |hr| release_status::succeeded(hr, &success)).await?;
                // The mark `kubectl cozyhr resume` hands back by (see crate::handback).
                let local = match &sameness {
                    crate::handback::Sameness::Differs { source, files } => Some(format!(
                        "{}@{} differs from {source} in {}",
                        stored.chart_name,
                        stored.chart_version,
                        files.join(", ")
                    )),
                    crate::handback::Sameness::Same => None,
                    // Not known: whatever an earlier apply said stays.
                    crate::handback::Sameness::Unknown { .. } => crate::handback::local_chart(&hr).map(str::to_string),
                };
                crate::handback::mark(cluster, &hr, local.as_deref()).await?;
                let hr = objects.get(req.name).await?;
                let message = format!(
                    "Helm {} succeeded for release {}/{}.v{} with chart {}@{}",
                    action.as_str(),
                    stored.namespace,
                    stored.name,
                    stored.version,
                    stored.chart_name,
                    stored.chart_version
                );
                let reason = if action == Action::Install { "InstallSucceeded" } else { "UpgradeSucceeded" };
                emit(cluster, &hr, EventType::Normal, reason, &message).await;
                if says {
                    progress::success(&message);
                }
                nudge_dependents(cluster, &hr).await;
                if !says {
                    // The loop says once, at its end, how to hand back (and what Flux would find then).
                    return Ok(Outcome::Applied);
                }
                if let Some(warning) = crate::flux::sources::handback_warning(cluster, &hr).await {
                    progress::warning(warning);
                }
                if let Some(warning) = crate::handback::resume_warning(&hr) {
                    progress::warning(warning);
                }
                if req.resume {
                    // Handed back as `kubectl cozyhr resume` does it, and waited for likewise: the
                    // upgrade's own timeout, five minutes at least, for helm-controller to answer.
                    let asked = crate::handback::hand_back(&objects, &hr).await?;
                    progress::waiting("waiting for helm-controller to answer the hand-back");
                    let timeout = crate::install::action_timeout(&hr, true, req.options.timeout)
                        .max(Duration::from_secs(300));
                    crate::handback::wait_all(std::slice::from_ref(&asked), timeout).await?;
                } else {
                    progress::success(format!(
                        "helmrelease {} stays suspended; hand it back to Flux with: kubectl cozyhr resume {} -n {ns}",
                        req.name, req.name
                    ));
                }
                Ok(Outcome::Applied)
            }
        }
    }
    .await;
    lease.release().await;
    outcome
}

/// helm-controller does not watch dependencies: a HelmRelease waiting on this one retries only every
/// `--requeue-dependency`. A reconcile request makes the dependents look again now.
async fn nudge_dependents(cluster: &Cluster, hr: &HelmRelease) {
    let Ok(all) = Objects::<HelmRelease>::all(cluster).list(None).await else { return };
    for dep in all {
        let dep_ns = dep.namespace().to_string();
        let depends = dep.spec.depends_on.iter().any(|d| {
            d.name == hr.name() && d.namespace.as_deref().filter(|n| !n.is_empty()).unwrap_or(&dep_ns) == hr.namespace()
        });
        if !depends || dep.spec.suspend {
            continue;
        }
        let objects = Objects::<HelmRelease>::namespaced(cluster, &dep_ns);
        if objects.request_reconcile(dep.name(), false, false).await.is_ok() {
            progress::action(format!(
                "asked helm-controller to re-check dependent helmrelease {dep_ns}/{}",
                dep.name()
            ));
        }
    }
}

/// `helm cozy delete`: suspend, then uninstall the release from Flux's storage; the HelmRelease stays
/// suspended so Flux does not install it again.
/// Uninstalls the release of HelmRelease `name` and leaves the HelmRelease suspended. Only the release's
/// name and namespaces are needed: no chart, no values (a valuesFrom source deleted already does not
/// block a delete).
pub async fn delete(cluster: &Cluster, helm: &Helm, name: &str, timeout: Option<Duration>) -> Result<()> {
    // Listening from the start: SIGINT or SIGTERM no longer kill the process half-way (say, with Helm's
    // storage moved to the release namespace); helm is stopped gracefully and the storage put back.
    let interrupted = crate::process::interrupted();
    let objects = Objects::<HelmRelease>::namespaced(cluster, &cluster.namespace);
    let hr = objects.get(name).await?;
    let release = crate::install::Release::of(&hr);
    // Where the release is (and as whom), before anything changes.
    let target = crate::target::resolve(cluster, &hr).await?;
    let release_cluster = &target.cluster;
    let lease = crate::release_lease::acquire(&target.own, &release.storage_namespace, &release.name, timeout).await?;
    let outcome = uninstall_locked(cluster, release_cluster, helm, name, &release, timeout, interrupted).await;
    lease.release().await;
    outcome
}

/// [`delete`] with the release's lock held.
async fn uninstall_locked(
    cluster: &Cluster,
    release_cluster: &Cluster,
    helm: &Helm,
    name: &str,
    release: &crate::install::Release,
    timeout: Option<Duration>,
    interrupted: impl std::future::Future<Output = String>,
) -> Result<()> {
    let objects = Objects::<HelmRelease>::namespaced(cluster, &cluster.namespace);
    let release = release.clone();
    let ns = cluster.namespace.as_str();
    progress::action(format!("suspending helmrelease {name} in {ns} namespace, so Flux does not reinstall it"));
    let hr = objects.set_suspend(name, true).await?;
    recover_storage(release_cluster, &release).await?;
    if let Found::Unlocked { message, .. } =
        release_lock::wait_then_unlock(cluster, release_cluster, name, &release, timeout).await?
    {
        emit(cluster, &hr, EventType::Normal, release_lock::UNLOCKED_REASON, &message).await;
    }
    let installed = crate::helmstore::next_action(release_cluster, &release.storage_namespace, &release.name).await?;
    if installed == crate::helmstore::NextAction::Install {
        progress::success(format!(
            "release {} is not installed (no Helm storage in {}): nothing to uninstall",
            release.name, release.storage_namespace
        ));
    } else {
        progress::action(format!("helm uninstall {}/{}", release.namespace, release.name));
        match uninstall(release_cluster, helm, &release, timeout, interrupted).await {
            Ok(()) => {}
            Err(crate::render::RenderError::Interrupted { signal, detail }) => {
                progress::failure(format!("interrupted: helmrelease {name} stays suspended"));
                return Err(Error::Failed(format!(
                    "helm cozy delete was interrupted by {signal} while helm was running{detail}; Helm's storage is in {} as before and the release may be partly uninstalled: run helm cozy delete {name} again",
                    release.storage_namespace
                )));
            }
            Err(e) => return Err(Error::Failed(format!("uninstall: {e}"))),
        }
        progress::success(format!("release {} uninstalled", release.name));
    }
    progress::success(format!(
        "helmrelease {name} stays suspended, so Flux will not reinstall it; to hand it back: kubectl cozyhr resume {name} -n {ns}"
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_fit_the_event_limit_on_a_char_boundary() {
        let long = "é".repeat(800);
        let t = truncate(&long, EVENT_NOTE_MAX);
        assert!(t.len() <= EVENT_NOTE_MAX && t.ends_with("..."), "{}", t.len());
        assert_eq!(truncate("short", EVENT_NOTE_MAX), "short");
    }

    #[test]
    fn helm_errors_are_stated_once() {
        let helm4 = "level=WARN msg=\"upgrade failed\" error=\"boom\"\nError: UPGRADE FAILED: boom\n";
        assert_eq!(helm_error(helm4), "boom");
        assert_eq!(helm_error("Error: INSTALLATION FAILED: bad\n"), "bad");
    }
}
