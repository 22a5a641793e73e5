//! The one place a [`Desired`] is made outside `desired/`: what Flux makes a release of ([`Fetched`]: the
//! HelmRelease, its `valuesFrom` sources, its source's chart version and the helm-controller whose rules
//! apply) gathered from where the release comes from, then composed with the chart and the user's values.
//! Adding an origin is one function here.

use std::path::PathBuf;

use crate::cluster::Cluster;
use crate::controller::Controller;
use crate::desired::{Desired, Fetched, UserValues};
use crate::flux::HelmRelease;
use crate::render::Tools;
use crate::source::chart::ChartDir;
use crate::source::chart_source::SourceVersion;
use crate::source::release_file::ReleaseFiles;
use crate::support::error::Result;

use super::origin::ReleaseOrigin;

/// What a release is made with besides its HelmRelease: the chart, the user's `-f` and `--set`,
/// (`given`) the version the chart's source would give the chart when it was had from elsewhere than the
/// source in the cluster (its repository), and the tools (the kubectl of its post-render chain).
#[derive(Clone)]
pub struct With<'a> {
    pub chart: &'a ChartDir,
    pub user: &'a UserValues,
    pub given: Option<SourceVersion>,
    pub tools: &'a Tools,
}

/// A HelmRelease of `cluster`: its sources, its source's chart version and the helm-controller are read
/// there, at once.
pub async fn on_cluster(cluster: &Cluster, hr: HelmRelease, with: With<'_>) -> Result<Desired> {
    let kubectl = with.tools.kubectl()?;
    let (refs, source_version, controller) = tokio::join!(
        crate::desired::fetch_values_from(cluster, &hr),
        source_version(cluster, &hr, with.chart, with.given.clone()),
        crate::controller::detect(cluster),
    );
    make(Fetched { hr, refs: refs?, source_version, controller }, with, kubectl)
}

/// A HelmRelease of release files, with its sources from the same files and no cluster: the chart's
/// version as the files' source documents give it, the newest helm-controller's rules.
pub fn from_files(files: &ReleaseFiles, hr: HelmRelease, with: With<'_>) -> Result<Desired> {
    let refs = files.values_from(&hr)?;
    let kubectl = with.tools.kubectl()?;
    let source_version = with.given.clone().unwrap_or_else(|| crate::source::chart_source::offline(&hr));
    make(Fetched { hr, refs, source_version, controller: Controller::offline() }, with, kubectl)
}

/// A HelmRelease of release files rendered for `cluster`: its sources from the files, its source's chart
/// version and the helm-controller from the cluster.
pub async fn files_on_cluster(
    cluster: &Cluster,
    files: &ReleaseFiles,
    hr: HelmRelease,
    with: With<'_>,
) -> Result<Desired> {
    let refs = files.values_from(&hr)?;
    let kubectl = with.tools.kubectl()?;
    let (source_version, controller) =
        tokio::join!(source_version(cluster, &hr, with.chart, with.given.clone()), crate::controller::detect(cluster));
    make(Fetched { hr, refs, source_version, controller }, with, kubectl)
}

/// The release one side of a comparison renders `with` its chart, when it renders a HelmRelease (None
/// for the chart alone or nothing); `kubectl` as the side's postRenderers need it.
pub async fn at_side(
    origin: &ReleaseOrigin<'_>,
    with: With<'_>,
    kubectl: impl FnOnce(&HelmRelease) -> Result<PathBuf>,
) -> Option<Result<Desired>> {
    let chart = with.chart;
    let fetched = match origin {
        ReleaseOrigin::Cluster { home, hr, refs, controller } => {
            let source_version = crate::source::chart_source::lookup(home, hr, &chart.meta.version).await;
            Fetched { hr: (*hr).clone(), refs: refs.to_vec(), source_version, controller: (*controller).clone() }
        }
        ReleaseOrigin::File { hr, refs } => Fetched {
            source_version: crate::source::chart_source::offline(hr),
            hr: (**hr).clone(),
            refs: refs.clone(),
            controller: Controller::offline(),
        },
        ReleaseOrigin::ChartDefaults { .. } | ReleaseOrigin::Absent => return None,
    };
    Some(kubectl(&fetched.hr).and_then(|kubectl| make(fetched, with, kubectl)))
}

/// `given`, else what the source in `cluster` gives the chart.
async fn source_version(
    cluster: &Cluster,
    hr: &HelmRelease,
    chart: &ChartDir,
    given: Option<SourceVersion>,
) -> SourceVersion {
    match given {
        Some(given) => given,
        None => crate::source::chart_source::lookup(cluster, hr, &chart.meta.version).await,
    }
}

fn make(fetched: Fetched, with: With<'_>, kubectl: PathBuf) -> Result<Desired> {
    Desired::from_fetched(fetched, with.chart, with.user, kubectl)
}
