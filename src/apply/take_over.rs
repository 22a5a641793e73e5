//! Taking a release from Flux, for `apply` and `delete` alike: suspend the HelmRelease, so helm-controller
//! starts no action; put back what an interrupted helm cozy left of Helm's storage; wait for an action
//! helm-controller had begun (suspending stops none), and lift a stale lock it left.

use std::time::Duration;

use kube::runtime::events::EventType;

use crate::apply::install::Release;
use crate::apply::release_lock::{self, Found};
use crate::cluster::Cluster;
use crate::flux::HelmRelease;
use crate::flux::verbs::Objects;
use crate::support::error::Result;
use crate::support::output::progress;

/// Suspends HelmRelease `name` (in `home`'s namespace) and readies its release `storage` in
/// `release_cluster` for helm; `why`, when given, is said with the suspension. Returns the HelmRelease as
/// suspended.
pub(super) async fn take_over(
    home: &Cluster,
    release_cluster: &Cluster,
    name: &str,
    storage: &Release,
    timeout: Option<Duration>,
    why: Option<&str>,
) -> Result<HelmRelease> {
    let objects = Objects::<HelmRelease>::namespaced(home, &home.namespace);
    if let Some(why) = why {
        progress::action(format!("suspending helmrelease {name} in {} namespace, {why}", home.namespace));
    }
    let hr = objects.set_suspend(name, true).await?;
    recover_storage(release_cluster, storage).await?;
    if let Found::Unlocked { message, .. } =
        release_lock::wait_then_unlock(home, release_cluster, name, storage, timeout).await?
    {
        super::events::emit(home, &hr, EventType::Normal, release_lock::UNLOCKED_REASON, &message).await;
    }
    Ok(hr)
}

/// Puts back what an interrupted apply or delete left of the release's storage (see
/// [`crate::apply::install::recover_storage`]), and says so.
async fn recover_storage(cluster: &Cluster, release: &Release) -> Result<()> {
    let moved = crate::apply::install::recover_storage(cluster, release).await?;
    if moved > 0 {
        progress::warning(format!(
            "found {moved} Helm storage Secret(s) of release {} in {}, left there by an interrupted {}: moved back to {}, where Flux keeps them",
            release.name,
            release.namespace,
            crate::support::output::chart_command(),
            release.storage_namespace
        ));
    }
    Ok(())
}
