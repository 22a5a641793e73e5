//! The action itself, as helm-controller runs it: the CRDs first, then `helm upgrade --install` with the
//! planned method, then helm-controller's waiter on what helm applied. Its end, whatever it is, is what
//! [`super::record`] writes down.

use std::time::{Duration, Instant};

use super::cleanup::Created;
use super::plan::Plan;
use super::prepare::{Checked, Release};
use super::request::{ApplyRequest, Voice};
use super::status::Action;
use crate::apply::install::{Mode, upgrade};
use crate::apply::readiness::{Poller, Settled};
use crate::support::error::Result;
use crate::support::output::progress;

/// How the action ended, and how long it took.
pub(super) struct Ended {
    pub how: How,
    pub took: Duration,
    /// Helm's storage of the release after the action (and helm cozy's wait).
    pub after: crate::cluster::helmstore::Storage,
}

pub(super) enum How {
    /// Applied and, where helm cozy waits, ready.
    Applied,
    /// helm-controller applies the CRDs before Helm: a failure there is the action's failure.
    CrdsFailed(String),
    /// helm failed.
    HelmFailed(crate::render::RenderError),
    /// Applied, but not ready as helm-controller judges it; the stored revision is marked failed.
    NotReady {
        failure: crate::apply::readiness::NotReady,
    },
    Interrupted {
        signal: String,
        during: String,
    },
}

/// Runs the planned action. On SIGINT/SIGTERM helm is asked to stop and given time to mark the release
/// failed; the storage relocation is undone either way, and the interruption is what it ended with.
pub(super) async fn run(
    req: &ApplyRequest<'_>,
    release: &Release,
    checked: &Checked,
    plan: &Plan,
    interrupted: impl std::future::Future<Output = String>,
    voice: Voice,
) -> Result<Ended> {
    let (cluster, desired) = (&release.target.cluster, &release.desired);
    if voice.says() {
        progress::action(format!(
            "helm {} {}/{} with chart {}@{}",
            plan.action.as_str(),
            desired.release_namespace,
            desired.release_name,
            req.resolver.chart.meta.name,
            desired.chart_version()
        ));
    }
    let started = Instant::now();
    let live = crate::cluster::live::LiveObjects::new(cluster, checked.apis.clone());
    let crds =
        crate::desired::crds::apply(&live, &checked.crds, plan.crd_policy, plan.method, &desired.release_namespace);
    let how = match crds.await {
        Err(e) => How::CrdsFailed(format!("failed to apply CustomResourceDefinitions: {e}")),
        Ok(applied) => {
            if voice.says() && applied > 0 {
                let policy = plan.crd_policy;
                progress::success(format!("{applied} CustomResourceDefinition(s) applied ({policy:?} policy)"));
            }
            let created = if cleans_up(release, plan) {
                Some(Created::before(&live, &checked.manifests, &desired.release_namespace).await?)
            } else {
                None
            };
            let mode = Mode { installed: plan.installed, method: plan.method, wait: plan.waiting.helm };
            match upgrade(cluster, &req.resolver.tools.helm, desired, &release.session, mode, &req.options, interrupted)
                .await
            {
                Err(crate::render::RenderError::Interrupted { signal, detail }) => {
                    How::Interrupted { signal, during: format!("while helm was running{detail}") }
                }
                Err(e) => How::HelmFailed(e),
                Ok(()) => match &plan.waiting.poller {
                    None => How::Applied,
                    Some(poller) => {
                        let how = settle(release, plan.action, poller, voice).await?;
                        if let (How::NotReady { .. }, Some(created)) = (&how, &created) {
                            created.clean_up(cluster, "upgrade", voice).await;
                        }
                        how
                    }
                },
            }
        }
    };
    let took = started.elapsed();
    let after =
        crate::cluster::helmstore::Storage::read(cluster, &desired.storage_namespace, &desired.release_name).await?;
    Ok(Ended { how, took, after })
}

/// Whether a failed wait of helm cozy's is followed by Helm's cleanup: an upgrade with
/// `upgrade.cleanupOnFail` that helm cozy's poller waits for (Helm's own wait cleans up by itself).
fn cleans_up(release: &Release, plan: &Plan) -> bool {
    let cleanup = release.desired.hr.spec.upgrade.as_ref().is_some_and(|u| u.cleanup_on_fail);
    plan.action == Action::Upgrade && cleanup && plan.waiting.poller.is_some()
}

/// helm-controller's waiter after helm applied the release ([`crate::apply::readiness::settle`]).
async fn settle(release: &Release, action: Action, poller: &Poller, voice: Voice) -> Result<How> {
    let says = voice.says();
    if says {
        progress::action(format!(
            "waiting for the release's objects as helm-controller's poller would (timeout {})",
            crate::support::duration::go_string(poller.timeout)
        ));
    }
    let (cluster, desired) = (&release.target.cluster, &release.desired);
    let upgrade = action == Action::Upgrade;
    let (sns, name, ns) = (&desired.storage_namespace, &desired.release_name, &desired.release_namespace);
    Ok(match crate::apply::readiness::settle(cluster, sns, name, ns, upgrade, poller, says).await? {
        Settled::Ready => How::Applied,
        Settled::NotReady { failure, .. } => How::NotReady { failure },
        Settled::Interrupted { signal } => How::Interrupted {
            signal,
            during: "while waiting for the release's objects to be ready (helm had applied them)".into(),
        },
    })
}

/// Helm's error as helm-controller states it: once, without Helm 4's duplicate `level=…` log lines or the
/// CLI's `Error: UPGRADE FAILED: ` prefix.
pub(super) fn helm_message(e: &crate::render::RenderError) -> String {
    match e {
        crate::render::RenderError::Failed { stderr, .. } => helm_error(stderr),
        other => other.to_string(),
    }
}

fn helm_error(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim_start().starts_with("level=")).collect();
    let text = lines.join("\n");
    let text = text.trim();
    let text = text.strip_prefix("Error: ").unwrap_or(text);
    let text = ["UPGRADE FAILED: ", "INSTALLATION FAILED: ", "ROLLBACK FAILED: "]
        .iter()
        .find_map(|p| text.strip_prefix(p))
        .unwrap_or(text);
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
