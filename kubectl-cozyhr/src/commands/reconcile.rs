//! `reconcile NAME [--with-source] [--force] [--reset]`: the `reconcile.fluxcd.io/requestedAt` protocol,
//! like `flux reconcile hr`, waiting by watch for helm-controller to handle the request.

use std::process::ExitCode;
use std::time::Duration;

use cozyhr::Error;
use cozyhr::cluster::Cluster;
use cozyhr::flux::bulk::reconciled;
use cozyhr::flux::sources::{self, Step};
use cozyhr::flux::{FluxObject, FluxSource, HelmRelease, Kind, Objects};
use cozyhr::output::progress;

use crate::cli::ReconcileArgs;

pub async fn run(cluster: &Cluster, args: &ReconcileArgs) -> anyhow::Result<ExitCode> {
    let ns = &cluster.namespace;
    let objects = Objects::<HelmRelease>::namespaced(cluster, ns);
    let hr = objects.get(&args.name).await?;
    // Checked before touching any source, so a refused request changes nothing.
    if hr.suspended() {
        return Err(Error::Suspended { kind: "helmrelease", namespace: ns.clone(), name: args.name.clone() }.into());
    }
    let timeout = args.wait_for.timeout;
    if args.with_source {
        for step in sources::plan(cluster, &hr).await? {
            match step {
                Step::Note(note) => progress::warning(note),
                Step::Reconcile { kind, namespace, name } => {
                    reconcile_source(cluster, kind, &namespace, &name, timeout).await?
                }
            }
        }
    }

    progress::action(format!("annotating HelmRelease {} in {ns} namespace", args.name));
    let token = objects.request_reconcile(&args.name, args.force, args.reset).await?;
    progress::success("HelmRelease annotated");
    progress::waiting("waiting for HelmRelease reconciliation");
    let hr = objects.wait_reconciled(&args.name, token, timeout).await?;
    reconciled("HelmRelease", &args.name, &hr, "applied");
    Ok(ExitCode::SUCCESS)
}

async fn reconcile_source(
    cluster: &Cluster,
    kind: &'static Kind,
    namespace: &str,
    name: &str,
    timeout: Duration,
) -> anyhow::Result<()> {
    let objects = Objects::<FluxSource>::namespaced_with(cluster, namespace, kind);
    progress::action(format!("annotating {} {name} in {namespace} namespace", kind.kind));
    let token = objects.request_reconcile(name, false, false).await?;
    progress::success(format!("{} annotated", kind.kind));
    progress::waiting(format!("waiting for {} reconciliation", kind.kind));
    let obj = objects.wait_reconciled(name, token, timeout).await?;
    reconciled(kind.kind, name, &obj, "fetched");
    Ok(())
}
