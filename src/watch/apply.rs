//! `apply --watch`: suspend the HelmRelease once, apply at the start and after every change, until
//! Ctrl-C; then say how to hand it back. A round changes the cluster, so the first signal lets it finish
//! and only a second one stops helm (see [`Stop`]).

use super::driver::run;
use super::round::{Ended, Outcome, Round, Why};
use super::status_line::plan_words;
use super::stop::Stop;
use super::watches::Watches;
use crate::apply::{ApplyRequest, apply_round};
use crate::cluster::Cluster;
use crate::compare::Against;
use crate::compare::diff::PlanOptions;
use crate::flux::{HelmRelease, Objects};
use crate::support::error::Result;
use crate::support::output::progress;

/// Runs the loop for `request` and prints its last lines. [`Ended::cut_off`] says a second signal stopped
/// helm half-way.
pub async fn apply(request: ApplyRequest<'_>) -> Result<Ended> {
    let (cluster, name) = (request.cluster, request.name);
    let stop = Stop::listen()?;
    let hr = suspend(cluster, name).await?;
    let mut watches =
        Watches::start(cluster, request.resolver.chart.path(), &request.user.files, std::slice::from_ref(&hr))?;
    let ended = run(&mut ApplyRound { request }, &mut watches, &stop).await;
    drop(watches);
    if ended.why == Why::Resumed {
        progress::success(format!("helmrelease {name} was resumed: Flux reconciles it again, stopped watching"));
    } else {
        hand_back(cluster, name).await;
    }
    Ok(ended)
}

/// The HelmRelease is suspended once, for the whole loop: no round races helm-controller, and the
/// rounds' own status writes start no round (they leave the generation alone).
async fn suspend(cluster: &Cluster, name: &str) -> Result<HelmRelease> {
    let objects = Objects::<HelmRelease>::namespaced(cluster, &cluster.namespace);
    progress::action(format!(
        "suspending helmrelease {name} in {} namespace while watching, so Flux does not race the rounds",
        cluster.namespace
    ));
    objects.set_suspend(name, true).await
}

/// The last lines: the HelmRelease stays suspended with the status of the last round, and how to hand it
/// back (with what Flux would find then, when its source differs from the chart).
async fn hand_back(cluster: &Cluster, name: &str) {
    let objects = Objects::<HelmRelease>::namespaced(cluster, &cluster.namespace);
    if let Ok(hr) = objects.get(name).await
        && let Some(warning) = crate::flux::sources::handback_warning(cluster, &hr).await
    {
        progress::warning(warning);
    }
    progress::success(format!(
        "helmrelease {name} stays suspended with the status of the last round; hand it back to Flux with: {} {name} -n {}",
        crate::support::output::lifecycle_command("resume"),
        cluster.namespace
    ));
}

struct ApplyRound<'a> {
    request: ApplyRequest<'a>,
}

impl Round for ApplyRound<'_> {
    const CHANGES_CLUSTER: bool = true;

    /// The objects that change and the plan line, then the apply itself (a render error stops the round
    /// before anything changes).
    async fn run(&mut self, stop: &Stop) -> Outcome {
        let r = &self.request;
        let plan = match crate::compare::release_diff::diff(
            r.resolver,
            r.cluster,
            r.name,
            &r.user,
            Against::Live,
            PlanOptions::default(),
        )
        .await
        {
            Ok(plan) => plan,
            Err(e) => return Outcome::Failed(e.to_string()),
        };
        let color = crate::support::output::ColorChoice::Auto.for_stdout();
        match crate::support::output::write_stdout(plan.render_summary(color)) {
            Err(e) if e.is_reader_gone() => return Outcome::End(Why::ReaderGone),
            Err(e) => return Outcome::Failed(e.to_string()),
            Ok(()) => {}
        }
        match apply_round(self.request.clone(), stop.second()).await {
            // Resumed under the loop (`kubectl cozyhr resume`): Flux owns it again; the loop ends.
            Ok(crate::apply::Outcome::Resumed) => Outcome::End(Why::Resumed),
            Ok(_) => Outcome::Done(format!("applied: {}", plan_words(&plan))),
            Err(e) => Outcome::Failed(e.to_string()),
        }
    }
}
