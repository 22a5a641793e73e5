//! `suspend` and `resume`: a merge patch of `spec.suspend`, like `flux suspend|resume hr`; `resume` then
//! waits until helm-controller has reconciled the resumed generation.

use std::process::ExitCode;

use cozyhr::cluster::Cluster;
use cozyhr::flux::HelmRelease;
use cozyhr::flux::bulk::{Selection, Target, wait_ready};
use cozyhr::output::progress;

use crate::cli::{ResumeArgs, SuspendArgs, Targets};

async fn resolve(cluster: &Cluster, targets: &Targets) -> cozyhr::Result<Vec<Target<HelmRelease>>> {
    let selection = Selection {
        names: &targets.names,
        all: targets.all,
        all_namespaces: targets.scope.all_namespaces,
        selector: targets.selector.as_deref(),
        chart: targets.chart.as_deref(),
    };
    Target::resolve(cluster, &selection).await
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
        if let Some(warning) = cozyhr::handback::resume_warning(&hr) {
            progress::warning(warning);
        }
        progress::action(format!("resuming helmrelease {} in {} namespace", t.name, t.namespace()));
        t.objects.set_suspend(&t.name, false).await?;
        cozyhr::handback::after_resume(&t.objects, &hr).await?;
        progress::success("helmrelease resumed");
    }
    if args.wait {
        progress::waiting("waiting for HelmRelease reconciliation");
        wait_ready(&targets, args.wait_for.timeout).await?;
    }
    Ok(ExitCode::SUCCESS)
}
