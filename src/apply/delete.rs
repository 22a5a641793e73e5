//! `helm cozy delete`: uninstall the release from Flux's storage and leave the HelmRelease suspended, so
//! Flux does not install it again. Only the release's name and namespaces are needed: no chart, no values
//! (a valuesFrom source deleted already does not block a delete). The same take-over as `apply`'s, under
//! the same lease.
//!
//! The release uninstalled is the one helm-controller would uninstall were the HelmRelease deleted: the
//! one its status records ([`crate::desired::release_target::recorded`]), else the one its spec names; Helm is
//! told what `spec.uninstall` says ([`crate::apply::install::uninstall_args`]).

use std::ffi::OsString;
use std::time::Duration;

use crate::apply::install::{Release, uninstall};
use crate::cluster::Cluster;
use crate::desired::which_chart::OtherChart;
use crate::flux::HelmRelease;
use crate::flux::verbs::Objects;
use crate::render::Helm;
use crate::source::chart::ChartDir;
use crate::support::error::{Error, Result};
use crate::support::output::progress;

/// Uninstalls the release of HelmRelease `name` and leaves the HelmRelease suspended, its status saying so
/// ([`crate::apply::deleted`]); `timeout` (`--timeout`) overrides the HelmRelease's. `chart`: the chart
/// directory it is run from, if any, and what to do when that is not the HelmRelease's chart (see
/// [`crate::desired::which_chart`]).
pub async fn delete(
    cluster: &Cluster,
    helm: &Helm,
    name: &str,
    timeout: Option<Duration>,
    chart: Option<(&ChartDir, OtherChart)>,
) -> Result<()> {
    // Listening from the start: SIGINT or SIGTERM no longer kill the process half-way (say, with Helm's
    // storage moved to the release namespace); helm is stopped gracefully and the storage put back.
    let interrupted = crate::support::process::interrupted();
    let hr = Objects::<HelmRelease>::namespaced(cluster, &cluster.namespace).get(name).await?;
    if let Some((chart, policy)) = chart {
        crate::desired::which_chart::check(&hr, chart, policy)?;
    }
    let release = recorded_release(&hr);
    // What spec.uninstall asks for is checked before anything changes.
    let args = crate::apply::install::uninstall_args(helm.major, &hr, &release, timeout)?;
    let keep_history = hr.spec.uninstall.as_ref().is_some_and(|u| u.keep_history);
    // Where the release is (and as whom), before anything changes.
    let target = crate::desired::target::resolve(cluster, &hr).await?;
    let release_cluster = &target.cluster;
    let lease =
        crate::apply::release_lease::acquire(&target.own, &release.storage_namespace, &release.name, timeout).await?;
    let outcome = async {
        let why = Some("so Flux does not reinstall it");
        super::take_over::take_over(cluster, release_cluster, name, &release, timeout, why).await?;
        let uninstalling = Uninstalling { release_cluster, helm, name, release: &release, args: &args, keep_history };
        uninstalling.run(interrupted).await?;
        super::deleted::record(cluster, name, &release).await?;
        progress::success(format!(
            "helmrelease {name} stays suspended, so Flux will not reinstall it; to hand it back: {} {name} -n {}",
            crate::support::output::lifecycle_command("resume"),
            cluster.namespace
        ));
        Ok(())
    }
    .await;
    lease.release().await;
    outcome
}

/// The release helm-controller uninstalls when the HelmRelease is deleted, else (nothing recorded: never
/// reconciled, or installed by other means) the one the spec names.
fn recorded_release(hr: &HelmRelease) -> Release {
    crate::desired::release_target::recorded(hr).unwrap_or_else(|| Release::of(hr))
}

/// One `helm uninstall` of a delete.
struct Uninstalling<'a> {
    release_cluster: &'a Cluster,
    helm: &'a Helm,
    /// The HelmRelease's name.
    name: &'a str,
    release: &'a Release,
    args: &'a [OsString],
    keep_history: bool,
}

impl Uninstalling<'_> {
    /// `helm uninstall`, when the storage holds the release (or, without `keepHistory`, the history of
    /// one uninstalled with its history kept, which Helm then purges).
    async fn run(&self, interrupted: impl std::future::Future<Output = String>) -> Result<()> {
        let (release, name) = (self.release, self.name);
        let newest =
            crate::cluster::helmstore::newest_labels(self.release_cluster, &release.storage_namespace, &release.name)
                .await?;
        let uninstalled = match newest {
            None => {
                progress::success(format!(
                    "release {} is not installed (no Helm storage in {}): nothing to uninstall",
                    release.name, release.storage_namespace
                ));
                return Ok(());
            }
            Some((_, status)) => status == "uninstalled",
        };
        if uninstalled && self.keep_history {
            progress::success(format!(
                "release {} is not installed (uninstalled, its history kept in {}): nothing to uninstall",
                release.name, release.storage_namespace
            ));
            return Ok(());
        }
        progress::action(format!("helm uninstall {}/{}", release.namespace, release.name));
        match uninstall(self.release_cluster, self.helm, release, self.args, interrupted).await {
            Ok(()) => {}
            Err(crate::render::RenderError::Interrupted { signal, detail }) => {
                progress::failure(format!("interrupted: helmrelease {name} stays suspended"));
                return Err(Error::Failed(format!(
                    "{cmd} delete was interrupted by {signal} while helm was running{detail}; Helm's storage is in {} as before and the release may be partly uninstalled: run {cmd} delete {name} again",
                    release.storage_namespace,
                    cmd = crate::support::output::chart_command()
                )));
            }
            Err(e) => return Err(Error::Failed(format!("uninstall: {e}"))),
        }
        progress::success(if uninstalled {
            format!("release {} was uninstalled already: its history purged", release.name)
        } else if self.keep_history {
            format!("release {} uninstalled, its history kept (spec.uninstall.keepHistory)", release.name)
        } else {
            format!("release {} uninstalled", release.name)
        });
        Ok(())
    }
}
