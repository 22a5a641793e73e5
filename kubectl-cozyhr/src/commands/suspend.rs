//! `suspend` and `resume`: a merge patch of `spec.suspend`, like `flux suspend|resume hr`. `resume` hands
//! the release back in one write (the unsuspension with its reconcile request, see
//! [`cozyhr::handback::hand_back`]), then waits until helm-controller has answered that request and says
//! what it did.

use std::process::ExitCode;

use cozyhr::cluster::Cluster;
use cozyhr::flux::HelmRelease;
use cozyhr::flux::bulk::{Selection, Target};
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
    let mut asked = Vec::with_capacity(targets.len());
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
        asked.push(cozyhr::handback::hand_back(&t.objects, &hr).await?);
    }
    if !args.wait {
        for a in &asked {
            progress::success(a.not_waited());
        }
        return Ok(ExitCode::SUCCESS);
    }
    progress::waiting("waiting for helm-controller to answer the hand-back");
    cozyhr::handback::wait_all(&asked, args.wait_for.timeout).await?;
    Ok(ExitCode::SUCCESS)
}
