//! `reconcile NAME [--with-source] [--force] [--reset]`: the `reconcile.fluxcd.io/requestedAt` protocol,
//! like `flux reconcile hr`, waiting by watch for helm-controller to handle the request; with the source
//! first, when asked.

use std::time::Duration;

use super::bulk::reconciled;
use super::sources::{self, Step};
use super::{FluxObject, FluxSource, HelmRelease, Kind, Objects};
use crate::cluster::Cluster;
use crate::support::error::{Error, Result};
use crate::support::output::progress;

/// What `reconcile` is asked for.
pub struct Request<'a> {
    pub name: &'a str,
    /// Reconcile the chart source first (and the sources behind it).
    pub with_source: bool,
    /// A one-off Helm upgrade even when nothing changed (`forceAt`).
    pub force: bool,
    /// The failure counters reset (`resetAt`).
    pub reset: bool,
    pub timeout: Duration,
}

/// Asks helm-controller to reconcile HelmRelease `req.name` in the cluster's namespace and waits for its
/// answer: Ready, or its failure as the error. A suspended release is refused before anything changes.
pub async fn reconcile(cluster: &Cluster, req: &Request<'_>) -> Result<()> {
    let ns = &cluster.namespace;
    let objects = Objects::<HelmRelease>::namespaced(cluster, ns);
    let hr = objects.get(req.name).await?;
    // Checked before touching any source, so a refused request changes nothing.
    if hr.suspended() {
        return Err(Error::Suspended { kind: "helmrelease", namespace: ns.clone(), name: req.name.to_string() });
    }
    if req.with_source {
        for step in sources::plan(cluster, &hr).await? {
            match step {
                Step::Note(note) => progress::warning(note),
                Step::Reconcile { kind, namespace, name } => {
                    reconcile_source(cluster, kind, &namespace, &name, req.timeout).await?
                }
            }
        }
    }
    progress::action(format!("annotating HelmRelease {} in {ns} namespace", req.name));
    let token = objects.request_reconcile(req.name, req.force, req.reset).await?;
    progress::success("HelmRelease annotated");
    progress::waiting("waiting for HelmRelease reconciliation");
    let hr = objects.wait_reconciled(req.name, token, req.timeout).await?;
    reconciled("HelmRelease", req.name, &hr, "applied");
    Ok(())
}

async fn reconcile_source(
    cluster: &Cluster,
    kind: &'static Kind,
    namespace: &str,
    name: &str,
    timeout: Duration,
) -> Result<()> {
    let objects = Objects::<FluxSource>::namespaced_with(cluster, namespace, kind);
    progress::action(format!("annotating {} {name} in {namespace} namespace", kind.kind));
    let token = objects.request_reconcile(name, false, false).await?;
    progress::success(format!("{} annotated", kind.kind));
    progress::waiting(format!("waiting for {} reconciliation", kind.kind));
    let obj = objects.wait_reconciled(name, token, timeout).await?;
    reconciled(kind.kind, name, &obj, "fetched");
    Ok(())
}
