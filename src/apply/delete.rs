//! `helm cozy delete`: uninstall the release from Flux's storage and leave the HelmRelease suspended, so
//! Flux does not install it again. Only the release's name and namespaces are needed: no chart, no values
//! (a valuesFrom source deleted already does not block a delete). The same take-over as `apply`'s, under
//! the same lease.

use std::time::Duration;

use crate::cluster::Cluster;
use crate::error::{Error, Result};
use crate::flux::HelmRelease;
use crate::flux::verbs::Objects;
use crate::install::{Release, uninstall};
use crate::output::progress;
use crate::render::Helm;

/// Uninstalls the release of HelmRelease `name` and leaves the HelmRelease suspended.
pub async fn delete(cluster: &Cluster, helm: &Helm, name: &str, timeout: Option<Duration>) -> Result<()> {
    // Listening from the start: SIGINT or SIGTERM no longer kill the process half-way (say, with Helm's
    // storage moved to the release namespace); helm is stopped gracefully and the storage put back.
    let interrupted = crate::process::interrupted();
    let hr = Objects::<HelmRelease>::namespaced(cluster, &cluster.namespace).get(name).await?;
    let release = Release::of(&hr);
    // Where the release is (and as whom), before anything changes.
    let target = crate::target::resolve(cluster, &hr).await?;
    let release_cluster = &target.cluster;
    let lease = crate::release_lease::acquire(&target.own, &release.storage_namespace, &release.name, timeout).await?;
    let outcome = async {
        let why = Some("so Flux does not reinstall it");
        super::take_over::take_over(cluster, release_cluster, name, &release, timeout, why).await?;
        uninstall_release(release_cluster, helm, name, &release, timeout, interrupted).await?;
        progress::success(format!(
            "helmrelease {name} stays suspended, so Flux will not reinstall it; to hand it back: {} {name} -n {}",
            crate::output::lifecycle_command("resume"),
            cluster.namespace
        ));
        Ok(())
    }
    .await;
    lease.release().await;
    outcome
}

/// `helm uninstall`, when the storage holds the release.
async fn uninstall_release(
    release_cluster: &Cluster,
    helm: &Helm,
    name: &str,
    release: &Release,
    timeout: Option<Duration>,
    interrupted: impl std::future::Future<Output = String>,
) -> Result<()> {
    let next = crate::helmstore::next_action(release_cluster, &release.storage_namespace, &release.name).await?;
    if next == crate::helmstore::NextAction::Install {
        progress::success(format!(
            "release {} is not installed (no Helm storage in {}): nothing to uninstall",
            release.name, release.storage_namespace
        ));
        return Ok(());
    }
    progress::action(format!("helm uninstall {}/{}", release.namespace, release.name));
    match uninstall(release_cluster, helm, release, timeout, interrupted).await {
        Ok(()) => {}
        Err(crate::render::RenderError::Interrupted { signal, detail }) => {
            progress::failure(format!("interrupted: helmrelease {name} stays suspended"));
            return Err(Error::Failed(format!(
                "{cmd} delete was interrupted by {signal} while helm was running{detail}; Helm's storage is in {} as before and the release may be partly uninstalled: run {cmd} delete {name} again",
                release.storage_namespace,
                cmd = crate::output::chart_command()
            )));
        }
        Err(e) => return Err(Error::Failed(format!("uninstall: {e}"))),
    }
    progress::success(format!("release {} uninstalled", release.name));
    Ok(())
}
