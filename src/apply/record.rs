//! Writing down how the action ended, as helm-controller would: the HelmRelease's status
//! ([`crate::release_status`]), an Event, and a line for the user. A failure is written and then
//! returned as the apply's error, the release staying suspended.

use kube::runtime::events::EventType;

use super::action::{Ended, How};
use super::events::emit;
use super::plan::Plan;
use super::prepare::{Checked, Release};
use super::{ApplyRequest, Voice};
use crate::error::{Error, Result};
use crate::flux::HelmRelease;
use crate::flux::verbs::Objects;
use crate::helmstore::StoredRelease;
use crate::output::progress;
use crate::release_status::{self, Action, Failure, Success};

/// Records `ended`. Returns the HelmRelease as written and the release Helm stored, once applied.
pub(super) async fn record(
    req: &ApplyRequest<'_>,
    release: &Release,
    checked: &Checked,
    plan: &Plan,
    ended: Ended,
    voice: Voice,
) -> Result<(HelmRelease, StoredRelease)> {
    let failed = |reason: Option<&'static str>, message: &str, stored: Option<StoredRelease>| Failed {
        req,
        release,
        action: plan.action,
        reason,
        message: message.to_string(),
        stored,
    };
    let name = req.name;
    match ended.how {
        How::Applied => succeeded(req, release, checked, plan, ended.took, voice).await,
        How::Interrupted { signal, during } => {
            let cmd = crate::output::chart_command();
            let message = format!(
                "{cmd} apply was interrupted by {signal} {during}; the release may be partly applied: run {cmd} apply {name} again"
            );
            let reason = release_status::INTERRUPTED_REASON;
            failed(Some(reason), &message, None).write(reason, false).await?;
            if voice.says() {
                progress::failure(format!("interrupted: helmrelease {name} stays suspended"));
            }
            Err(Error::Failed(message))
        }
        How::NotReady { failure, stored } => {
            failed(None, &failure.message, Some(*stored)).write(failed_reason(plan.action), true).await?;
            if voice.says() {
                progress::failure(format!(
                    "the release is not ready ({}); helmrelease {name} stays suspended ({} {name} -n {})",
                    failure.why,
                    crate::output::lifecycle_command("status"),
                    req.cluster.namespace
                ));
            }
            Err(Error::Failed(format!("{} ({})", failure.message, failure.why)))
        }
        How::CrdsFailed(message) => {
            failed(None, &message, None).write(failed_reason(plan.action), false).await?;
            if voice.says() {
                progress::failure(format!(
                    "the chart's CustomResourceDefinitions could not be applied, so helm did not run; helmrelease {name} stays suspended ({} {name} -n {})",
                    crate::output::lifecycle_command("status"),
                    req.cluster.namespace
                ));
            }
            Err(Error::Failed(message))
        }
        How::HelmFailed(e) => {
            let helm_message = match &e {
                crate::render::RenderError::Failed { stderr, .. } => helm_error(stderr),
                other => other.to_string(),
            };
            failed(None, &helm_message, None).write(failed_reason(plan.action), false).await?;
            if voice.says() {
                progress::failure(format!(
                    "helm {} failed; helmrelease {name} stays suspended ({} {name} -n {})",
                    plan.action.as_str(),
                    crate::output::lifecycle_command("status"),
                    req.cluster.namespace
                ));
            }
            Err(Error::Failed(e.to_string()))
        }
    }
}

fn failed_reason(action: Action) -> &'static str {
    if action == Action::Install { "InstallFailed" } else { "UpgradeFailed" }
}

/// A failed action, as helm-controller writes one down.
struct Failed<'a, 'r> {
    req: &'a ApplyRequest<'r>,
    release: &'a Release,
    action: Action,
    /// helm-controller's reason for the action's failure unless given (ours for an interruption).
    reason: Option<&'static str>,
    message: String,
    /// The revision the waiter marked failed, for the history.
    stored: Option<StoredRelease>,
}

impl Failed<'_, '_> {
    /// Writes the failed status and records an Event of `event_reason`, whose note is the message, or with
    /// `note_from_ready` what the Ready condition says (helm-controller's words for a failed wait).
    async fn write(self, event_reason: &str, note_from_ready: bool) -> Result<HelmRelease> {
        let desired = &self.release.desired;
        let objects = Objects::<HelmRelease>::namespaced(self.req.cluster, &self.req.cluster.namespace);
        let chart_name = &self.req.pipeline.chart.meta.name;
        let config_digest = crate::values::digest_values(&desired.composed.values);
        let hr = objects
            .write_status(self.req.name, |hr| {
                Ok(release_status::failed(
                    hr,
                    &Failure {
                        action: self.action,
                        reason: self.reason,
                        message: self.message.clone(),
                        chart_name,
                        chart_version: desired.chart_version(),
                        config_digest: config_digest.clone(),
                        storage_namespace: &desired.storage_namespace,
                        release: self.stored.as_ref(),
                    },
                ))
            })
            .await?;
        let conditions = hr.status.as_ref().map(|s| s.reconcile.conditions.as_slice()).unwrap_or_default();
        let ready = crate::flux::condition::find(conditions, release_status::READY).map(|c| c.message.clone());
        let note = ready.filter(|_| note_from_ready).unwrap_or_else(|| self.message.clone());
        emit(self.req.cluster, &hr, EventType::Warning, event_reason, &note).await;
        Ok(hr)
    }
}

/// The success helm-controller would write: the stored release read back, its fields made
/// helm-controller's (Helm 4, server-side), the status and an Event.
async fn succeeded(
    req: &ApplyRequest<'_>,
    release: &Release,
    checked: &Checked,
    plan: &Plan,
    took: std::time::Duration,
    voice: Voice,
) -> Result<(HelmRelease, StoredRelease)> {
    let (cluster, desired) = (&release.target.cluster, &release.desired);
    let stored = crate::helmstore::latest(cluster, &desired.storage_namespace, &desired.release_name)
        .await?
        .ok_or_else(|| Error::Invalid {
            what: "apply".into(),
            reason: format!("helm reported success but release {} is not stored", desired.release_name),
        })?;
    // What Helm 4 applied server-side is `helm`'s: made helm-controller's, so its apply after the
    // hand-back removes what the source's chart does not set (crate::field_managers).
    if req.pipeline.helm.major >= 4 && plan.method.server_side() {
        let (manifest, ns) = (&stored.manifest, &desired.release_namespace);
        if let Err(e) = crate::field_managers::take_over(cluster, manifest, ns).await {
            progress::warning(format!(
                "cannot hand the applied fields to helm-controller's field manager ({e}): once resumed, helm-controller leaves fields this chart sets and its source's does not"
            ));
        }
    }
    // Scopes for the inventory, as helm-controller's REST mapper knows them now (the chart may have
    // brought CRDs of its own).
    let scoped = crate::discovery::discover(cluster).await?.cluster_scoped();
    let success = Success {
        action: plan.action,
        crds: &checked.crd_objects,
        release: &stored,
        config_digest: crate::values::digest_values(&desired.composed.values),
        storage_namespace: &desired.storage_namespace,
        release_namespace: &desired.release_namespace,
        duration: took,
        scoped: &scoped,
        no_drift: desired.controller.rules().drifted_condition
            && crate::drift::DriftDetection::of(&desired.hr.spec)
                .is_ok_and(|d| d.mode() != crate::drift::Mode::Disabled),
    };
    let objects = Objects::<HelmRelease>::namespaced(req.cluster, &req.cluster.namespace);
    let hr = objects.write_status(req.name, |hr| release_status::succeeded(hr, &success)).await?;
    let message = format!(
        "Helm {} succeeded for release {}/{}.v{} with chart {}@{}",
        plan.action.as_str(),
        stored.namespace,
        stored.name,
        stored.version,
        stored.chart_name,
        stored.chart_version
    );
    let reason = if plan.action == Action::Install { "InstallSucceeded" } else { "UpgradeSucceeded" };
    emit(req.cluster, &hr, EventType::Normal, reason, &message).await;
    if voice.says() {
        progress::success(&message);
    }
    Ok((hr, stored))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helm_errors_are_stated_once() {
        let helm4 = "level=WARN msg=\"upgrade failed\" error=\"boom\"\nError: UPGRADE FAILED: boom\n";
        assert_eq!(helm_error(helm4), "boom");
        assert_eq!(helm_error("Error: INSTALLATION FAILED: bad\n"), "bad");
    }
}
