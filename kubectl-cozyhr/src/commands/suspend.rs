//! `suspend` and `resume`: a merge patch of `spec.suspend`, like `flux suspend|resume hr`; `resume` then
//! waits until helm-controller has reconciled the resumed generation.

use std::process::ExitCode;

use cozyhr::cluster::Cluster;
use cozyhr::flux::{FluxObject, HelmRelease, Objects};
use cozyhr::output::progress;
use futures::future::join_all;

use crate::cli::{ResumeArgs, SuspendArgs, Targets};

/// One HelmRelease to act on, with the handle for its namespace.
struct Target {
    objects: Objects<HelmRelease>,
    name: String,
}

impl Target {
    fn namespace(&self) -> &str {
        &self.objects.namespace
    }
}

/// The named HelmReleases (each read first, so a typo changes nothing) or, with `--all`, every one in
/// scope.
async fn resolve(cluster: &Cluster, targets: &Targets) -> anyhow::Result<Vec<Target>> {
    let here = |ns: &str, name: &str| Target { objects: Objects::namespaced(cluster, ns), name: name.to_string() };
    if !targets.all {
        if targets.scope.all_namespaces {
            anyhow::bail!("-A needs --all: a HelmRelease is named within one namespace (-n)");
        }
        let objects = Objects::<HelmRelease>::namespaced(cluster, &cluster.namespace);
        for name in &targets.names {
            objects.get(name).await?;
        }
        return Ok(targets.names.iter().map(|n| here(&cluster.namespace, n)).collect());
    }
    let objects = if targets.scope.all_namespaces {
        Objects::<HelmRelease>::all(cluster)
    } else {
        Objects::namespaced(cluster, &cluster.namespace)
    };
    let items = objects.list(None).await?;
    if items.is_empty() {
        let scope = if targets.scope.all_namespaces { "any".to_string() } else { cluster.namespace.clone() };
        anyhow::bail!("no HelmRelease objects found in {scope} namespace");
    }
    Ok(items.iter().map(|hr| here(hr.namespace(), hr.name())).collect())
}

pub async fn suspend(cluster: &Cluster, args: &SuspendArgs) -> anyhow::Result<ExitCode> {
    for t in resolve(cluster, &args.targets).await? {
        progress::action(format!("suspending helmrelease {} in {} namespace", t.name, t.namespace()));
        t.objects.set_suspend(&t.name, true).await?;
        progress::success("helmrelease suspended");
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn resume(cluster: &Cluster, args: &ResumeArgs) -> anyhow::Result<ExitCode> {
    let targets = resolve(cluster, &args.targets).await?;
    for t in &targets {
        // Said before Flux acts: a chart helm cozy apply deployed is replaced by the source's version.
        let hr = t.objects.get(&t.name).await?;
        if let Some(warning) = cozyhr::flux::sources::handback_warning(cluster, &hr).await {
            progress::warning(warning);
        }
        progress::action(format!("resuming helmrelease {} in {} namespace", t.name, t.namespace()));
        t.objects.set_suspend(&t.name, false).await?;
        progress::success("helmrelease resumed");
    }
    if !args.wait {
        return Ok(ExitCode::SUCCESS);
    }
    progress::waiting("waiting for HelmRelease reconciliation");
    // All resumed releases reconcile in parallel in the controller; wait for them together.
    let timeout = args.wait_for.timeout;
    let results = join_all(targets.iter().map(|t| t.objects.wait_ready(&t.name, timeout))).await;
    let mut errors = Vec::new();
    for (t, result) in targets.iter().zip(results) {
        match result {
            Ok(hr) => {
                progress::success(format!("HelmRelease {} reconciliation completed", t.name));
                let revision = hr.revision();
                if !revision.is_empty() {
                    progress::success(format!("applied revision {revision}"));
                }
            }
            Err(e) => errors.push(e),
        }
    }
    match errors.len() {
        0 => Ok(ExitCode::SUCCESS),
        1 => Err(errors.remove(0).into()),
        _ => {
            for e in &errors {
                cozyhr::output::stderr_line(format_args!("error: {e}"));
            }
            Ok(ExitCode::FAILURE)
        }
    }
}
