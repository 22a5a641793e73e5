//! `apply --dry-run`: helm's own dry run with the chosen action and method, then every object through the
//! API server as helm-controller's apply would send it. Nothing changes, nothing is locked.

use futures::{StreamExt, TryStreamExt};

use super::prepare::{Checked, Release};
use super::request::{ApplyRequest, Outcome};
use super::status::Action;
use crate::apply::install::{Mode, upgrade};
use crate::apply::readiness::HelmWait;
use crate::support::error::{Error, Result};
use crate::support::output::progress;

pub(super) async fn run(
    req: &ApplyRequest<'_>,
    release: &Release,
    checked: &Checked,
    interrupted: impl std::future::Future<Output = String>,
) -> Result<Outcome> {
    let (cluster, desired) = (&release.target.cluster, &release.desired);
    let installed = desired.installed(cluster).await?;
    let action = if installed { Action::Upgrade } else { Action::Install };
    let method = desired.apply_method(cluster, installed).await?;
    if let Some(moved) = desired.target_move() {
        progress::action(format!("dry run: {} (not done)", moved.describe(&desired.controller.rules())));
    }
    progress::action(format!("dry run: {} {} (nothing changes)", action.as_str(), desired.release_name));
    let mode = Mode { installed, method, wait: HelmWait::HooksOnly };
    upgrade(cluster, &req.resolver.tools.helm, desired, &release.session, mode, &req.options, interrupted)
        .await
        .map_err(|e| Error::Failed(format!("dry run: {e}")))?;
    // helm's --dry-run=server only lets lookups reach the cluster; the objects themselves go through
    // the API server here, as helm-controller's apply would send them.
    server_dry_run(release, checked).await?;
    progress::success("the API server accepts every object (server-side dry run)");
    Ok(Outcome::DryRun)
}

/// Every rendered object (hooks aside, which Helm creates only when it runs them) through a server-side
/// apply dry run as helm-controller's field manager, with Helm's ownership metadata; rendered as `show`
/// renders them, with what helm-controller's Helm sees of the cluster.
async fn server_dry_run(release: &Release, checked: &Checked) -> Result<()> {
    let desired = &release.desired;
    let scoped = checked.apis.cluster_scoped();
    let live = crate::cluster::live::LiveObjects::new(&release.target.cluster, checked.apis.clone());
    let objects = crate::compare::desired_objects(&checked.manifests, &desired.release_namespace, &scoped)?;
    let (mut objects, _hooks) = crate::compare::split_hooks(objects);
    for m in &mut objects {
        crate::cluster::manifests::add_helm_ownership(&mut m.object, &desired.release_name, &desired.release_namespace);
    }
    futures::stream::iter(objects.iter().map(|m| live.dry_run(&m.object, None)))
        .buffer_unordered(16)
        .try_collect::<Vec<_>>()
        .await?;
    Ok(())
}
