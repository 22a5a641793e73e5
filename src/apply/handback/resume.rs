//! Handing a release back to Flux: `kubectl cozyhr resume` (by name, `--all`, `-l`, `--chart`) and
//! `helm cozy apply --resume`.
//!
//! One write asks helm-controller for everything the hand-back needs ([`Objects::resume`]): the
//! unsuspension, a reconcile request (forced when the release runs a local chart, so that helm-controller
//! installs the source's), and the local-chart mark removed. The wait then ends only when helm-controller
//! has answered that very request ([`Objects::wait_resumed`]), and what is said is what it did, read from
//! `status.history`: a new Helm revision (its action and chart), the tests of the same revision run (their
//! hooks' new `testHooks`), or nothing at all.

use std::fmt;
use std::time::Duration;

use super::{LOCAL_CHART_ANNOTATION, local_chart};
use crate::cluster::Cluster;
use crate::flux::HelmRelease;
use crate::flux::bulk::{Selection, Target};
use crate::flux::helmrelease::Snapshot;
use crate::flux::verbs::{Objects, Request};
use crate::support::error::{Error, Result};
use crate::support::output::progress;

/// A hand-back asked of helm-controller and not answered yet.
#[derive(Clone)]
pub struct Asked {
    pub name: String,
    pub namespace: String,
    objects: Objects<HelmRelease>,
    request: Request,
    /// The newest Helm release helm-controller's history named before the hand-back.
    before: Option<Snapshot>,
}

/// What helm-controller did with a hand-back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Done {
    /// It found the release in sync and ran no Helm action.
    Nothing { revision: i64 },
    /// It made no new revision but ran the chart's tests of `release` (`ns/name.vN`), with the outcome of
    /// each hook (`name phase`): what it does with a release handed back untested (`--skip-tests`).
    Tested { release: String, hooks: Vec<String> },
    /// It ran a Helm action: `action` (install, upgrade, ...) made `release` (`ns/name.vN`) with `chart`.
    Acted { action: String, release: String, chart: String, forced: bool },
}

impl fmt::Display for Done {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Done::Nothing { revision: 0 } => f.write_str("helm-controller found nothing to do"),
            Done::Nothing { revision } => {
                write!(f, "helm-controller found the release in sync and did nothing (still Helm revision {revision})")
            }
            Done::Tested { release, hooks } => {
                write!(
                    f,
                    "helm-controller ran the tests of release {release} and made no new revision: {}",
                    hooks.join(", ")
                )
            }
            Done::Acted { action, release, chart, forced } => {
                let why = if *forced { ", replacing the local chart with the source's" } else { "" };
                write!(f, "helm-controller ran a Helm {action}{why}: release {release} with chart {chart}")
            }
        }
    }
}

/// Hands `hr` back to helm-controller in one write (see the module docs).
pub async fn hand_back(objects: &Objects<HelmRelease>, hr: &HelmRelease) -> Result<Asked> {
    let force = local_chart(hr).is_some();
    let request = objects.resume(hr.name(), force, &[LOCAL_CHART_ANNOTATION]).await?;
    Ok(Asked {
        name: hr.name().to_string(),
        namespace: hr.namespace().to_string(),
        objects: objects.clone(),
        request,
        before: hr.latest_snapshot().cloned(),
    })
}

impl Asked {
    /// What is said when nobody waits for the answer (`--wait=false`).
    pub fn not_waited(&self) -> String {
        let what = if self.request.force { "a forced reconcile" } else { "a reconcile" };
        format!(
            "helmrelease {} resumed and {what} asked of helm-controller; not waited for: {} {} -n {} shows its answer",
            self.name,
            crate::support::output::lifecycle_command("status"),
            self.name,
            self.namespace
        )
    }

    /// Waits for helm-controller's answer and says what it did. A forced request answered without a new
    /// Helm revision is an error: the cluster still runs the local chart.
    pub async fn wait(&self, timeout: Duration) -> Result<Done> {
        let hr = self.objects.wait_resumed(&self.name, &self.request, timeout).await?;
        let done = done(self.before.as_ref(), hr.latest_snapshot(), self.request.force);
        if self.request.force && matches!(done, Done::Nothing { .. } | Done::Tested { .. }) {
            return Err(Error::Failed(format!(
                "helm-controller answered the hand-back of helmrelease {} without the forced upgrade it was asked for, so the cluster still runs the local chart: ask again with {} {} -n {} --force",
                self.name,
                crate::support::output::lifecycle_command("reconcile"),
                self.name,
                self.namespace
            )));
        }
        Ok(done)
    }
}

/// `resume`: hands every HelmRelease `selection` names back to helm-controller, each in one write after
/// its warnings (a local chart, a chart other than the source's), then, with `wait`, waits for every
/// answer together and says what helm-controller did with each; without, says what was asked.
pub async fn resume(cluster: &Cluster, selection: &Selection<'_>, wait: bool, timeout: Duration) -> Result<()> {
    let targets = Target::<HelmRelease>::resolve(cluster, selection).await?;
    let mut asked = Vec::with_capacity(targets.len());
    for t in &targets {
        // Said before Flux acts: a chart helm cozy apply deployed is replaced by the source's version.
        let hr = t.objects.get(&t.name).await?;
        if let Some(warning) = crate::flux::sources::handback_warning(cluster, &hr).await {
            progress::warning(warning);
        }
        if let Some(warning) = super::resume_warning(&hr) {
            progress::warning(warning);
        }
        progress::action(format!("resuming helmrelease {} in {} namespace", t.name, t.namespace()));
        asked.push(hand_back(&t.objects, &hr).await?);
    }
    if !wait {
        for a in &asked {
            progress::success(a.not_waited());
        }
        return Ok(());
    }
    progress::waiting("waiting for helm-controller to answer the hand-back");
    wait_all(&asked, timeout).await
}

/// Waits for every hand-back together (helm-controller works on them in parallel), saying what it did
/// with each as `resume` and `apply --resume` say it; the failures are returned together.
pub async fn wait_all(asked: &[Asked], timeout: Duration) -> Result<()> {
    let answers = futures::future::join_all(asked.iter().map(|a| a.wait(timeout))).await;
    let mut errors = Vec::new();
    for (a, answer) in asked.iter().zip(answers) {
        match answer {
            Ok(done) => progress::success(format!("helmrelease {} handed back: {done}", a.name)),
            Err(e) => errors.push(e),
        }
    }
    match errors.len() {
        0 => Ok(()),
        1 => Err(errors.remove(0)),
        _ => Err(Error::Several(errors)),
    }
}

/// What helm-controller did, from the newest history entry before and after its answer: a new Helm
/// release revision is an action; the same one with other `testHooks` is a test run; else nothing.
fn done(before: Option<&Snapshot>, after: Option<&Snapshot>, forced: bool) -> Done {
    let revision = |s: Option<&Snapshot>| s.map(|s| s.version).unwrap_or_default();
    // A release uninstalled and installed anew starts again at revision 1: it is another release when its
    // status or deployment time differs.
    let same = before.map(identity) == after.map(identity);
    let hooks = |s: Option<&Snapshot>| s.and_then(|s| s.test_hooks.clone()).unwrap_or_default();
    match after {
        Some(after) if !same => Done::Acted {
            action: after.action.clone().unwrap_or_else(|| "action".into()),
            release: after.full_name(),
            chart: format!("{}@{}", after.chart_name, after.chart_version),
            forced,
        },
        Some(tested) if hooks(before) != hooks(Some(tested)) => Done::Tested {
            release: tested.full_name(),
            hooks: hooks(Some(tested))
                .iter()
                .map(|(name, h)| format!("{name} {}", h.phase.as_deref().unwrap_or("Unknown")))
                .collect(),
        },
        _ => Done::Nothing { revision: revision(after) },
    }
}

/// What tells one Helm release of a history from another (see [`done`]).
fn identity(s: &Snapshot) -> (&str, &str, i64, &str, Option<&str>) {
    (&s.namespace, &s.name, s.version, &s.status, s.last_deployed.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(version: i64, action: &str, chart_version: &str) -> Snapshot {
        Snapshot {
            name: "demo-apps-hello".into(),
            namespace: "demo-apps".into(),
            version,
            action: Some(action.into()),
            chart_name: "hello".into(),
            chart_version: chart_version.into(),
            ..Default::default()
        }
    }

    #[test]
    fn a_new_revision_is_what_helm_controller_did() {
        let before = snapshot(2, "upgrade", "0.1.0");
        let after = snapshot(3, "upgrade", "0.1.0+8c4e1a2b3d4f");
        let done = done(Some(&before), Some(&after), true);
        assert_eq!(
            done.to_string(),
            "helm-controller ran a Helm upgrade, replacing the local chart with the source's: release demo-apps/demo-apps-hello.v3 with chart hello@0.1.0+8c4e1a2b3d4f"
        );
    }

    #[test]
    fn the_same_revision_is_nothing_done() {
        let before = snapshot(2, "upgrade", "0.1.0");
        let done = done(Some(&before), Some(&before.clone()), false);
        assert_eq!(done, Done::Nothing { revision: 2 });
        assert_eq!(
            done.to_string(),
            "helm-controller found the release in sync and did nothing (still Helm revision 2)"
        );
    }

    #[test]
    fn new_test_hooks_on_the_same_revision_are_a_test_run() {
        use crate::flux::helmrelease::TestHookStatus;
        let before = snapshot(2, "upgrade", "0.1.0");
        let mut after = before.clone();
        let hook = TestHookStatus { phase: Some("Succeeded".into()), ..Default::default() };
        after.test_hooks = Some([("app-test".to_string(), hook)].into());
        assert_eq!(
            done(Some(&before), Some(&after), false).to_string(),
            "helm-controller ran the tests of release demo-apps/demo-apps-hello.v2 and made no new revision: app-test Succeeded"
        );
        assert_eq!(done(Some(&after), Some(&after), false), Done::Nothing { revision: 2 });
    }

    #[test]
    fn an_install_after_an_uninstall_is_an_action() {
        let mut before = snapshot(1, "install", "0.1.0");
        before.status = "uninstalled".into();
        let mut after = snapshot(1, "install", "0.1.0");
        after.status = "deployed".into();
        assert!(matches!(done(Some(&before), Some(&after), false), Done::Acted { action, .. } if action == "install"));
    }

    #[test]
    fn a_first_install_is_an_action() {
        let after = snapshot(1, "install", "0.1.0");
        assert!(matches!(done(None, Some(&after), false), Done::Acted { action, .. } if action == "install"));
        assert_eq!(done(None, None, false), Done::Nothing { revision: 0 });
    }
}
