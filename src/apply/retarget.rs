//! A release helm-controller uninstalls before it installs again: its target changed since the status
//! recorded it (the storage namespace, the release namespace, the release name, or the chart's name:
//! [`crate::desired::release_target`]). helm-controller uninstalls the recorded release with `spec.uninstall`'s
//! options, clears the history, the failure counters and the storage namespace, and its next reconcile
//! installs at the new target. helm cozy does the same in one apply: the uninstall and the status
//! helm-controller writes after it here, then the install planned and recorded as any other (so the final
//! status is the install's).
//!
//! helm-controller's Helm looks for the objects the recorded manifest gives no namespace in the new
//! release namespace ([`Move::uninstall`]); where the release namespace changed it leaves them, and so
//! does helm cozy, naming each one it left.

use k8s_openapi::api::core::v1::Namespace;
use kube::Api;
use kube::runtime::events::EventType;
use serde_json::Value;

use super::prepare::{Checked, Release};
use super::request::{ApplyRequest, Voice};
use super::status::{self as release_status, Uninstalled};
use crate::desired::release_target::Move;
use crate::flux::HelmRelease;
use crate::flux::verbs::Objects;
use crate::support::error::{Error, Result};
use crate::support::output::progress;

/// Uninstalls the recorded release when helm-controller would, before the action is planned, and writes
/// the status helm-controller writes then.
pub(super) async fn run(req: &ApplyRequest<'_>, release: &Release, checked: &Checked, voice: Voice) -> Result<()> {
    let desired = &release.desired;
    let Some(moved) = desired.target_move() else {
        return Ok(());
    };
    if voice.says() {
        progress::action(format!(
            "{}, and so does {}",
            moved.describe(&desired.controller.rules()),
            crate::support::output::chart_command()
        ));
    }
    let how = match stored(release, &moved).await? {
        Some(nothing_to_do) => nothing_to_do,
        None => {
            let unnamespaced = unnamespaced_objects(release, &moved, checked).await?;
            if let Err(e) = uninstall(req, release, &moved).await {
                return Err(failed(req, &moved, &e.to_string()).await);
            }
            say_left(release, &moved, checked, unnamespaced).await;
            Uninstalled::Done
        }
    };
    let objects = Objects::<HelmRelease>::namespaced(req.cluster, &req.cluster.namespace);
    let hr = objects.write_status(req.name, |hr| release_status::retargeted(hr, how)).await?;
    if how == Uninstalled::Done
        && let Some(message) = release_status::uninstalled_message(&desired.hr, how)
    {
        super::events::emit(req.cluster, &hr, EventType::Normal, "UninstallSucceeded", &message).await;
    }
    Ok(())
}

/// Checks, before anything changes, that the recorded release can be uninstalled as helm-controller
/// does: its Helm works in the new release namespace, which the install creates
/// (`spec.install.createNamespace`) or which must exist.
pub(super) async fn check(release: &Release) -> Result<()> {
    let Some(moved) = release.desired.target_move() else { return Ok(()) };
    crate::apply::install::UninstallSettings::of(&release.desired.hr, None)?;
    let create = release.desired.hr.spec.install.as_ref().is_some_and(|i| i.create_namespace);
    if create || namespace_exists(release, &moved.to.namespace).await? {
        return Ok(());
    }
    Err(Error::Invalid {
        what: format!("namespace {}", moved.to.namespace),
        reason: format!(
            "it does not exist and spec.install.createNamespace is false: helm-controller would uninstall release {}/{} and then fail to install, so nothing was changed; create the namespace first",
            moved.from.namespace, moved.from.name
        ),
    })
}

async fn namespace_exists(release: &Release, name: &str) -> Result<bool> {
    let cluster = &release.target.cluster;
    let api: Api<Namespace> = Api::all(cluster.client.clone());
    Ok(api.get_opt(name).await.map_err(|e| cluster.error(e))?.is_some())
}

/// What the recorded release's storage holds: None when Helm has something to uninstall, else how
/// helm-controller words that it had not (nothing stored, or uninstalled with its history kept). Storage
/// an interrupted helm cozy left in the namespace Helm works in is put back first.
async fn stored(release: &Release, moved: &Move) -> Result<Option<Uninstalled>> {
    let cluster = &release.target.cluster;
    let (old, new) = (moved.uninstall(), &moved.to);
    // Where Helm works is where the new release is stored, by the same name: what is there is the new
    // release's, never the old one's leftovers, and mixing them is refused.
    if old.namespace == new.storage_namespace && old.name == new.name && old.storage_namespace != old.namespace {
        if crate::cluster::helmstore::newest_labels(cluster, &old.namespace, &old.name).await?.is_some() {
            return Err(Error::Failed(format!(
                "cannot uninstall release {}/{} as helm-controller does: {} already stores a release {} (move one of them first)",
                moved.from.namespace, old.name, old.namespace, old.name
            )));
        }
    } else {
        crate::apply::install::recover_storage(cluster, &old).await?;
    }
    let keep_history = release.desired.hr.spec.uninstall.as_ref().is_some_and(|u| u.keep_history);
    let newest = crate::cluster::helmstore::newest_labels(cluster, &old.storage_namespace, &old.name).await?;
    Ok(match newest {
        None => Some(Uninstalled::NotFound),
        Some((_, status)) if status == "uninstalled" && keep_history => Some(Uninstalled::Already),
        Some(_) => None,
    })
}

/// `helm uninstall` of the recorded release as helm-controller's Helm sees it ([`Move::uninstall`]), with
/// `spec.uninstall`'s options; the namespace it works in is created first when the install would create
/// it (it is checked to exist otherwise: [`check`]).
async fn uninstall(req: &ApplyRequest<'_>, release: &Release, moved: &Move) -> Result<()> {
    let (helm, cluster) = (&req.resolver.tools.helm, &release.target.cluster);
    let old = moved.uninstall();
    let args = crate::apply::install::uninstall_args(helm.major, &release.desired.hr, &old, req.options.timeout)?;
    if !namespace_exists(release, &old.namespace).await? {
        let api: Api<Namespace> = Api::all(cluster.client.clone());
        let ns = Namespace {
            metadata: kube::api::ObjectMeta { name: Some(old.namespace.clone()), ..Default::default() },
            ..Default::default()
        };
        api.create(&kube::api::PostParams::default(), &ns).await.map_err(|e| cluster.error(e))?;
    }
    // Not stopped by a signal half-way: the signal is answered by the action that follows.
    crate::apply::install::uninstall(cluster, helm, &old, &args, std::future::pending())
        .await
        .map_err(|e| Error::Failed(e.to_string()))
}

/// The objects of the recorded release that Helm will not find: namespaced, without a namespace in its
/// manifest, when the release namespace changed (each given the recorded namespace, where it is).
async fn unnamespaced_objects(release: &Release, moved: &Move, checked: &Checked) -> Result<Vec<Value>> {
    if !moved.leaves_unnamespaced() {
        return Ok(Vec::new());
    }
    let old = moved.uninstall();
    let cluster = &release.target.cluster;
    let Some(stored) = crate::cluster::helmstore::latest(cluster, &old.storage_namespace, &old.name).await? else {
        return Ok(Vec::new());
    };
    let scoped = checked.apis.cluster_scoped();
    let manifests = crate::cluster::manifests::parse_manifests(&stored.manifest)
        .map_err(|e| Error::Invalid { what: "stored release manifest".into(), reason: e.to_string() })?;
    Ok(manifests
        .into_iter()
        .filter(|m| m.id.namespace.is_none() && !scoped.contains(&m.id.group, &m.id.kind))
        .map(|mut m| {
            m.object["metadata"]["namespace"] = moved.from.namespace.clone().into();
            m.object
        })
        .collect())
}

/// Names the objects Helm left in the recorded release namespace (those of `candidates` still there).
async fn say_left(release: &Release, moved: &Move, checked: &Checked, candidates: Vec<Value>) {
    if candidates.is_empty() {
        return;
    }
    let live = crate::cluster::live::LiveObjects::new(&release.target.cluster, checked.apis.clone());
    let refs: Vec<&Value> = candidates.iter().collect();
    let left: Vec<String> = match live.get_all(&refs).await {
        Ok(found) => candidates
            .iter()
            .zip(found)
            .filter(|(_, l)| l.is_some())
            .filter_map(|(c, _)| crate::cluster::manifests::ObjectId::from_object(c).ok())
            .map(|id| format!("{}/{}", id.kind, id.name))
            .collect(),
        Err(e) => {
            progress::warning(format!("cannot tell which objects Helm left in {}: {e}", moved.from.namespace));
            return;
        }
    };
    if !left.is_empty() {
        progress::warning(format!(
            "left in {}, as helm-controller leaves them (the release's manifest gives them no namespace, and Helm looked in {}): {}; delete them by hand if nothing else needs them",
            moved.from.namespace,
            moved.to.namespace,
            left.join(", ")
        ));
    }
}

/// Writes down a failed uninstall as helm-controller does (the history kept, so the next apply tries the
/// same release again), and returns the apply's error.
async fn failed(req: &ApplyRequest<'_>, moved: &Move, error: &str) -> Error {
    let objects = Objects::<HelmRelease>::namespaced(req.cluster, &req.cluster.namespace);
    match objects.write_status(req.name, |hr| release_status::retarget_failed(hr, error)).await {
        Ok(hr) => {
            let conditions = hr.status.as_ref().map(|s| s.reconcile.conditions.as_slice()).unwrap_or_default();
            let ready = crate::flux::condition::find(conditions, release_status::READY);
            let note = ready.map(|c| c.message.clone()).unwrap_or_else(|| error.to_string());
            super::events::emit(req.cluster, &hr, EventType::Warning, "UninstallFailed", &note).await;
        }
        Err(e) => progress::failure(format!("cannot write the status of the failed uninstall: {e}")),
    }
    Error::Failed(format!(
        "uninstalling release {}/{} before installing {}/{}: {error}; helmrelease {} stays suspended",
        moved.from.namespace, moved.from.name, moved.to.namespace, moved.to.name, req.name
    ))
}
