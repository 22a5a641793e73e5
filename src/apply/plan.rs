//! What the action will be, decided as helm-controller decides it once the release is locked: install or
//! upgrade from what the storage holds now (the controller's action may have ended with a release where
//! there was none), the apply method, the CRD policy of that action, and how it waits.

use super::prepare::Release;
use super::request::{ApplyRequest, Voice};
use super::status::Action;
use crate::apply::readiness::Waiting;
use crate::desired::apply_method::ApplyMethod;
use crate::support::error::Result;
use crate::support::output::progress;

/// The action an apply runs, and how.
pub(super) struct Plan {
    /// Helm's storage of the release before the action (what the action writes is what changes).
    pub storage: crate::cluster::helmstore::Storage,
    pub installed: bool,
    pub action: Action,
    pub method: ApplyMethod,
    pub crd_policy: crate::desired::crds::Policy,
    pub waiting: Waiting,
}

/// The plan for the release as its storage stands now.
pub(super) async fn decide(req: &ApplyRequest<'_>, release: &Release, voice: Voice) -> Result<Plan> {
    let (cluster, desired) = (&release.target.cluster, &release.desired);
    let installed = desired.installed(cluster).await?;
    let action = if installed { Action::Upgrade } else { Action::Install };
    let method = desired.apply_method(cluster, installed).await?;
    if voice.says()
        && req.resolver.tools.helm.major < 4
        && let Some(note) = crate::desired::apply_method::helm3_note(method)
    {
        progress::warning(note);
    }
    let crd_policy = crate::desired::crds::policy(&desired.hr, installed)?;
    let waiting = req.options.waiting(&desired.hr, installed)?;
    let storage =
        crate::cluster::helmstore::Storage::read(cluster, &desired.storage_namespace, &desired.release_name).await?;
    Ok(Plan { storage, installed, action, method, crd_policy, waiting })
}
