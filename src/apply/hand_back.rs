//! The hand-back's part of an apply: whether the chart is the source's ([`compare`]), the mark that says
//! it is not ([`mark`]), and, once applied, what comes next ([`proceed`]): dependents nudged, then the
//! release handed back to Flux (`--resume`, see [`crate::apply::handback`]) or the way to do it said.

use super::request::{ApplyRequest, Voice};
use crate::apply::handback::Sameness;
use crate::cluster::Cluster;
use crate::cluster::helmstore::StoredRelease;
use crate::flux::HelmRelease;
use crate::flux::verbs::Objects;
use crate::support::error::Result;
use crate::support::output::progress;

/// Whether the chart is the one the source offers: else helm-controller must not keep it once resumed.
pub(super) async fn compare(req: &ApplyRequest<'_>, release: &super::prepare::Release, voice: Voice) -> Sameness {
    let sameness = crate::apply::handback::compare(req.cluster, &release.desired).await;
    if voice.says()
        && let Sameness::Unknown { why } = &sameness
    {
        progress::warning(format!(
            "cannot tell whether this chart is the one its source offers ({why}); if it is not, helm-controller keeps it once resumed until the source changes"
        ));
    }
    sameness
}

/// Marks the HelmRelease as running a local chart when it differs from the source's (unmarks it when it
/// is the source's; leaves an earlier mark when that is not known), and returns it as marked.
pub(super) async fn mark(
    req: &ApplyRequest<'_>,
    hr: &HelmRelease,
    stored: &StoredRelease,
    sameness: &Sameness,
) -> Result<HelmRelease> {
    let local = match sameness {
        Sameness::Differs { source, files } => Some(format!(
            "{}@{} differs from {source} in {}",
            stored.chart_name,
            stored.chart_version,
            files.join(", ")
        )),
        Sameness::Same => None,
        Sameness::Unknown { .. } => crate::apply::handback::local_chart(hr).map(str::to_string),
    };
    crate::apply::handback::mark(req.cluster, hr, local.as_deref()).await?;
    Objects::<HelmRelease>::namespaced(req.cluster, &req.cluster.namespace).get(req.name).await
}

/// After a successful apply: dependents nudged, then the hand-back (`--resume`) or the way to it said.
/// A round of `apply --watch` says neither: its loop says once, at its end, how to hand back.
pub(super) async fn proceed(req: &ApplyRequest<'_>, hr: &HelmRelease, voice: Voice) -> Result<()> {
    nudge_dependents(req.cluster, hr).await;
    if !voice.says() {
        return Ok(());
    }
    if let Some(warning) = crate::flux::sources::handback_warning(req.cluster, hr).await {
        progress::warning(warning);
    }
    if let Some(warning) = crate::apply::handback::resume_warning(hr) {
        progress::warning(warning);
    }
    let (name, ns) = (req.name, &req.cluster.namespace);
    if !req.resume {
        let resume = crate::support::output::lifecycle_command("resume");
        progress::success(format!(
            "helmrelease {name} stays suspended; hand it back to Flux with: {resume} {name} -n {ns}"
        ));
        return Ok(());
    }
    // Handed back as `kubectl cozyhr resume` does it, and waited for likewise: the upgrade's own timeout,
    // five minutes at least, for helm-controller to answer.
    let objects = Objects::<HelmRelease>::namespaced(req.cluster, ns);
    let asked = crate::apply::handback::hand_back(&objects, hr).await?;
    progress::waiting("waiting for helm-controller to answer the hand-back");
    let timeout =
        crate::apply::install::action_timeout(hr, true, req.options.timeout).max(std::time::Duration::from_secs(300));
    crate::apply::handback::wait_all(std::slice::from_ref(&asked), timeout).await
}

/// helm-controller does not watch dependencies: a HelmRelease waiting on this one retries only every
/// `--requeue-dependency`. A reconcile request makes the dependents look again now. Only entries that name
/// a HelmRelease count (Flux 2.10's dependsOn may name other kinds, of the same name).
async fn nudge_dependents(cluster: &Cluster, hr: &HelmRelease) {
    let Ok(all) = Objects::<HelmRelease>::all(cluster).list(None).await else { return };
    for dep in all {
        let dep_ns = dep.namespace().to_string();
        let depends = dep.spec.depends_on.iter().any(|d| {
            d.names_helm_release()
                && d.name == hr.name()
                && d.namespace.as_deref().filter(|n| !n.is_empty()).unwrap_or(&dep_ns) == hr.namespace()
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
