//! The first two steps of an apply: what it is about ([`resolve`]) and whether it can be done at all
//! ([`render_and_check`]). Everything that can be checked without changing anything is checked here,
//! what needs no cluster before anything is asked of it.

use serde_json::Value;

use super::request::{ApplyRequest, Voice};
use crate::cluster::discovery::ClusterApis;
use crate::desired::Desired;
use crate::desired::target::Target;
use crate::flux::HelmRelease;
use crate::flux::verbs::Objects;
use crate::render::postrender::PostRenderSession;
use crate::support::error::{Error, Result};
use crate::support::output::progress;

/// What one apply is about, derived once and handed to every later step.
pub(super) struct Release {
    /// The HelmRelease with its composed values and the chart to install.
    pub desired: Desired,
    /// The cluster the release lives in (`spec.kubeConfig`), reached, and as whom (`serviceAccountName`).
    pub target: Target,
    /// Flux's post-render chain, as helm runs it.
    pub session: PostRenderSession,
    /// The Helm release and where Flux keeps it.
    pub storage: crate::apply::install::Release,
}

/// The HelmRelease, its values, its cluster and its post-render session; None when a round of `apply
/// --watch` finds the release resumed under the loop (`kubectl cozyhr resume` hands it to Flux, and a
/// round never takes it back).
pub(super) async fn resolve(req: &ApplyRequest<'_>, voice: Voice) -> Result<Option<Release>> {
    let cluster = req.cluster;
    // Without kubectl (Flux's post-render chain) no apply can end: said before the cluster is asked.
    req.resolver.tools.kubectl()?;
    let hr = Objects::<HelmRelease>::namespaced(cluster, &cluster.namespace).read(req.name).await?;
    if voice == Voice::Round && !hr.spec.suspend {
        return Ok(None);
    }
    let chart = &req.resolver.chart;
    // Before anything is read or changed: the wrong directory would uninstall the application.
    crate::desired::which_chart::check(&hr, chart, req.resolver.other_chart)?;
    let desired = crate::resolve::fetched::on_cluster(cluster, hr, req.resolver.with(&req.user)).await?;
    if voice.says() {
        crate::desired::notes::recorded_version(&desired, chart);
        crate::desired::notes::controller(&desired, &req.resolver.tools.helm);
    }
    // Any failure to reach the release's cluster is before anything changes, in either cluster.
    let target = if voice.says() {
        crate::desired::target::resolve(cluster, &desired.hr).await?
    } else {
        crate::desired::target::resolve_quietly(cluster, &desired.hr).await?
    };
    let session = PostRenderSession::new(&desired.post_render, req.resolver.tools.self_exe.clone())
        .map_err(|e| Error::Invalid { what: "post-renderer".into(), reason: e.to_string() })?;
    let storage = crate::apply::install::Release::of(&desired.hr);
    Ok(Some(Release { desired, target, session, storage }))
}

/// The chart rendered as helm-controller would render it, and what it brings besides its templates.
pub(super) struct Checked {
    /// What helm-controller's Helm sees of the release's cluster.
    pub apis: ClusterApis,
    /// The rendered, post-rendered manifests (for the dry run's objects).
    pub manifests: String,
    /// Every document of the chart's `crds/` directories (the inventory lists them all).
    pub crd_objects: Vec<Value>,
    /// The CustomResourceDefinitions among them, which helm-controller applies before Helm.
    pub crds: Vec<Value>,
}

/// Renders the chart with the values and what helm-controller's Helm would see of the cluster, runs
/// Flux's post-render chain on it, and checks the CRD policies and waits of both actions (which one
/// applies is known only once the release is locked): a chart that cannot be installed changes nothing,
/// not even the suspension.
pub(super) async fn render_and_check(req: &ApplyRequest<'_>, release: &Release, voice: Voice) -> Result<Checked> {
    let desired = &release.desired;
    let seen = req.resolver.look(&release.target, desired).await?;
    let apis = seen.apis.clone();
    let rendered = req
        .resolver
        .render_with_crds(desired, seen)
        .await
        .map_err(|e| Error::Failed(format!("the chart does not render, so nothing was changed: {e}")))?;
    let crd_objects = crate::desired::crds::objects(&rendered.crds)?;
    let ignored = crate::desired::crds::ignored(&crd_objects);
    if voice.says() && !ignored.is_empty() {
        let rules = desired.controller.rules();
        progress::warning(if rules.creates_non_crds_from_crds_dir {
            format!(
                "helm-controller {} creates what is not a CustomResourceDefinition in the chart's crds/ with the CRDs, and so does {} (later helm-controllers drop it: move it to templates/): {}",
                rules.version,
                crate::support::output::chart_command(),
                ignored.join(", ")
            )
        } else {
            format!(
                "ignoring what is not a CustomResourceDefinition in the chart's crds/ (as helm-controller does; move it to templates/): {}",
                ignored.join(", ")
            )
        });
    }
    let crds = crate::desired::crds::to_apply(
        &crd_objects,
        &desired.hr,
        desired.controller.rules().creates_non_crds_from_crds_dir,
    );
    refuse_what_the_controller_fails(release).await?;
    for installed in [false, true] {
        crate::desired::crds::policy(&desired.hr, installed)?;
        // An unknown wait strategy or an invalid healthCheckExprs is refused now.
        req.options.waiting(&desired.hr, installed)?;
    }
    Ok(Checked { apis, manifests: rendered.manifests, crd_objects, crds })
}

/// What helm-controller's version would fail, refused before anything changes: an upgrade with
/// `spec.upgrade.force` applied server-side under v1.5.0–v1.5.3, whose Helm is asked to force conflicts
/// and to replace at once.
async fn refuse_what_the_controller_fails(release: &Release) -> Result<()> {
    let (cluster, desired) = (&release.target.cluster, &release.desired);
    let rules = desired.controller.rules();
    let force = desired.hr.spec.upgrade.as_ref().is_some_and(|u| u.force);
    if rules.force_with_ssa != crate::controller::ForceWithSsa::Fails || !force {
        return Ok(());
    }
    let installed = desired.installed(cluster).await?;
    if !installed || !desired.apply_method(cluster, installed).await?.server_side() {
        return Ok(());
    }
    Err(Error::Invalid {
        what: format!("helmrelease {}/{}", desired.hr.namespace(), desired.hr.name()),
        reason: format!(
            "helm-controller {} fails this upgrade (spec.upgrade.force with server-side apply: \"cannot use force conflicts and force replace together\"), so nothing was changed: set spec.upgrade.force to false or spec.upgrade.serverSideApply to disabled",
            rules.version
        ),
    })
}
