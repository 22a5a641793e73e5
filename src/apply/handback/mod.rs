//! An honest hand-back: whether the chart `apply` installs is the chart the HelmRelease's source offers.
//!
//! helm-controller decides whether to act on a resumed release by the chart's name and version and the
//! values: a local chart with changed templates but the source's version looks in sync, and Flux would
//! keep it for good. So `apply` compares the two charts, file by file, as Helm loads them: the source's
//! chart archive (the artifact its status names, checked against its digest) against the chart directory
//! as `helm package` would pack it (`.helmignore` and Helm's default rule applied, symlinks followed,
//! archived subcharts opened). Chart.yaml files are compared as data, the top chart's version aside (the
//! source may have written its own, see [`crate::source::chart_source`]); values.yaml files as data (the top
//! chart's as helm-controller loads it, `valuesFiles` merged); every other file byte for byte. Renders are
//! not compared: a chart that generates passwords or certificates renders differently every time.
//!
//! When they differ, `apply` says so and marks the HelmRelease with [`LOCAL_CHART_ANNOTATION`];
//! `kubectl cozyhr resume` then warns again and asks helm-controller, in the same write that resumes the
//! release, for a forced reconcile (Flux's `reconcile.fluxcd.io/forceAt`), so that it installs the source's
//! chart, and waits for its answer ([`hand_back`]). An apply whose chart is the source's removes the mark. The artifact is fetched from the address in the source's status: directly,
//! or, for an in-cluster Service address (`*.svc`, as source-controller advertises), through the API
//! server's service proxy with the user's credentials.

mod resume;
mod sameness;

pub use resume::{Asked, Done, hand_back, resume, wait_all};
pub use sameness::{Sameness, compare};

use crate::cluster::Cluster;
use crate::flux::HelmRelease;
use crate::flux::verbs::Objects;

/// Set by `apply` on a HelmRelease whose release runs a chart other than its source's (the value says
/// which); read by `kubectl cozyhr resume`.
pub const LOCAL_CHART_ANNOTATION: &str = "cozyhr.cozystack.io/local-chart";

/// What apply marked `hr` with: the local chart it runs, and how it differs from the source's.
pub fn local_chart(hr: &HelmRelease) -> Option<&str> {
    hr.metadata.annotations.as_ref()?.get(LOCAL_CHART_ANNOTATION).map(String::as_str)
}

/// The line `resume` says before handing back a release that runs a local chart.
pub fn resume_warning(hr: &HelmRelease) -> Option<String> {
    local_chart(hr).map(|what| {
        format!(
            "helmrelease {} runs a local chart ({what}): resuming asks helm-controller for a forced reconcile, so it installs the source's chart",
            hr.name()
        )
    })
}

/// Marks (or unmarks, with None) the HelmRelease as running a chart other than its source's.
pub async fn mark(cluster: &Cluster, hr: &HelmRelease, local_chart: Option<&str>) -> crate::support::error::Result<()> {
    let has = hr.metadata.annotations.as_ref().is_some_and(|a| a.contains_key(LOCAL_CHART_ANNOTATION));
    if local_chart.is_none() && !has {
        return Ok(());
    }
    let objects = Objects::<HelmRelease>::namespaced(cluster, hr.namespace());
    objects.annotate(hr.name(), LOCAL_CHART_ANNOTATION, local_chart).await.map(|_| ())
}
