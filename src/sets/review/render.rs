//! Each release of a review rendered at both sides and compared, several at a time.
//!
//! Both sides render the same way: a release of the cluster with what helm-controller would see there
//! (its values and `valuesFrom` sources read once, the cluster's capabilities, lookup and next action,
//! Flux's post-render chain); a release of the files with what the files say and the capabilities given
//! (`--kube-version`, `--api-versions`); the chart alone with its own values as `helm template` renders
//! it. A side where the chart or the release is missing has no objects: everything is added or removed.
//! A failure is the release's own row, named by the side it happened at.

use std::path::{Path, PathBuf};

use futures::StreamExt as _;
use serde_json::Value;

use super::Request;
use super::charts::{Chart, Layout};
use super::releases::{Assigned, Job};
use super::report::{Entry, Release};
use super::sides::{OnDisk, Side, Sides};
use crate::cluster::Cluster;
use crate::cluster::manifests::{ClusterScoped, ObjectId};
use crate::compare::diff::Plan;
use crate::controller::Controller;
use crate::desired::{Desired, UserValues};
use crate::flux::HelmRelease;
use crate::render::{ClusterView, Helm, TemplateRequest};
use crate::source::chart::{ChartDir, Checkout};
use crate::source::release_file::ReleaseFiles;
use crate::support::error::{Error, Result};

type Objects = Vec<(ObjectId, Value)>;

/// What every job renders with.
struct Context<'a> {
    helm: &'a Helm,
    self_exe: &'a Path,
    /// The kubectl whose kustomize runs postRenderers; only a release that has them needs it.
    kubectl: Option<PathBuf>,
    charts: &'a [Chart],
    old: Disk<'a>,
    new: Disk<'a>,
    files: Option<(ReleaseFiles, ReleaseFiles)>,
    cluster: Option<&'a Cluster>,
    /// The cluster's helm-controller, asked once.
    controller: Controller,
    request: &'a Request<'a>,
}

impl Context<'_> {
    /// The kubectl for `hr`: an error (how to get one) only when its postRenderers need one and there
    /// is none.
    fn kubectl(&self, hr: &HelmRelease) -> Result<PathBuf> {
        let needs_one = hr.spec.post_renderers.as_ref().and_then(|p| p.as_array()).is_some_and(|p| !p.is_empty());
        match &self.kubectl {
            Some(path) => Ok(path.clone()),
            None if needs_one => Ok(crate::render::locate_kubectl()?),
            None => Ok(PathBuf::from("kubectl")),
        }
    }
}

/// A side and its files on disk.
struct Disk<'a> {
    side: &'a Side,
    on_disk: OnDisk,
}

/// Renders every job, `request.concurrency` at a time; the entries come back in the jobs' order.
pub async fn all(
    helm: &Helm,
    self_exe: &Path,
    sides: &Sides,
    charts: &[Chart],
    assigned: Assigned,
    request: &Request<'_>,
) -> Result<Vec<Entry>> {
    let needed = |layout: fn(&Chart) -> Option<&Layout>| -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> =
            assigned.jobs.iter().filter_map(|j| layout(&charts[j.chart])).flat_map(|l| l.dirs().cloned()).collect();
        dirs.sort();
        dirs.dedup();
        dirs
    };
    let (mut old_paths, mut new_paths) = (needed(|c| c.old.as_ref()), needed(|c| c.new.as_ref()));
    let outside = values_files_outside(charts, &assigned);
    old_paths.extend(outside.iter().cloned());
    new_paths.extend(outside);
    let (old, new) = tokio::try_join!(sides.on_disk(&sides.old, &old_paths), sides.on_disk(&sides.new, &new_paths))?;
    let cluster = assigned.cluster.as_ref().filter(|_| assigned.jobs.iter().any(|j| j.helmrelease.is_some()));
    let controller = match cluster {
        Some(c) => crate::controller::detect(c).await,
        None => Controller::offline(),
    };
    let ctx = Context {
        helm,
        self_exe,
        kubectl: crate::render::locate_kubectl().ok(),
        charts,
        old: Disk { side: &sides.old, on_disk: old },
        new: Disk { side: &sides.new, on_disk: new },
        files: assigned.files,
        cluster,
        controller,
        request,
    };
    let ctx = &ctx;
    let runs = assigned.jobs.into_iter().map(|job| async move {
        let chart = &ctx.charts[job.chart];
        // One line, for a table row: helm's own errors can run over several.
        let outcome = render_job(ctx, chart, &job)
            .await
            .map_err(|e| e.to_string().split_whitespace().collect::<Vec<_>>().join(" "));
        Entry { chart: chart.path.clone(), release: job.release, outcome }
    });
    Ok(futures::stream::iter(runs).buffered(request.concurrency.max(1)).collect().await)
}

/// The repository paths of the jobs' valuesFiles that lie outside their charts (a GitRepository's, relative
/// to its root), at either side: a side renders with them as they are there.
fn values_files_outside(charts: &[Chart], assigned: &Assigned) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    for job in &assigned.jobs {
        let mut hrs: Vec<HelmRelease> = job.helmrelease.iter().map(|hr| (**hr).clone()).collect();
        if let (Release::File { namespace, name }, Some((old, new))) = (&job.release, &assigned.files) {
            hrs.extend([old, new].into_iter().filter_map(|f| f.helmrelease(name, Some(namespace), "default").ok()));
        }
        for hr in &hrs {
            paths.extend(crate::source::values_files::repository_paths(hr, &charts[job.chart].path));
        }
    }
    paths.sort();
    paths.dedup();
    paths
}

async fn render_job(ctx: &Context<'_>, chart: &Chart, job: &Job) -> Result<Plan> {
    let old = open_chart(&ctx.old, chart, chart.old.as_ref())?;
    let new = open_chart(&ctx.new, chart, chart.new.as_ref())?;
    let (old, new) = (old.as_ref().map(|(c, _)| c), new.as_ref().map(|(c, _)| c));
    let (old_objects, new_objects) = match (&job.release, &job.helmrelease) {
        (Release::Cluster { .. }, Some(hr)) => from_cluster(ctx, hr, old, new).await?,
        (Release::File { namespace, name }, _) => from_files(ctx, namespace, name, old, new).await?,
        _ => tokio::try_join!(plain(ctx, &ctx.old, old), plain(ctx, &ctx.new, new))?,
    };
    crate::compare::diff::plan_with(new_objects, old_objects, ctx.request.options)
        .map_err(|e| Error::Invalid { what: "review".into(), reason: e.to_string() })
}

/// The chart at a side, opened; with its missing `file://` dependencies linked into a private overlay
/// (kept alive beside it).
fn open_chart(
    disk: &Disk<'_>,
    chart: &Chart,
    layout: Option<&Layout>,
) -> Result<Option<(ChartDir, Option<tempfile::TempDir>)>> {
    let Some(layout) = layout else { return Ok(None) };
    let dir = disk.on_disk.path(&chart.path);
    let overlay = if layout.missing_dependencies.is_empty() {
        None
    } else {
        let deps: Vec<(String, PathBuf)> =
            layout.missing_dependencies.iter().map(|(name, path)| (name.clone(), disk.on_disk.path(path))).collect();
        Some(with_dependencies(&dir, &deps).map_err(|e| at(disk, Error::Io(e)))?)
    };
    let opened =
        ChartDir::open(overlay.as_ref().map_or(dir.as_path(), |o| o.path())).map_err(|e| at(disk, e.into()))?;
    // A GitRepository's valuesFiles are read from the repository as the side has it.
    let opened = opened.in_checkout(Checkout { top: disk.on_disk.root().to_path_buf(), dir });
    Ok(Some((opened, overlay)))
}

/// `error`, said to have happened at `disk`'s side.
fn at(disk: &Disk<'_>, error: Error) -> Error {
    Error::Failed(format!("{}: {error}", disk.side.label))
}

/// The chart alone, with its own values, as `helm template` renders it for a release named after it in
/// namespace "default".
async fn plain(ctx: &Context<'_>, disk: &Disk<'_>, chart: Option<&ChartDir>) -> Result<Objects> {
    let Some(chart) = chart else { return Ok(Vec::new()) };
    let req = TemplateRequest {
        chart_dir: chart.path(),
        release_name: &chart.meta.name,
        namespace: "default",
        values_stdin: None,
        values_files: Vec::new(),
        sets: Vec::new(),
        view: &ctx.request.offline_view,
        include_crds: false,
        skip_schema_validation: false,
    };
    let text = crate::render::template(ctx.helm, &req, None).await.map_err(|e| at(disk, e.into()))?;
    crate::compare::rendered_objects(&text, "default", &ClusterScoped::builtin()).map_err(|e| at(disk, e))
}

/// HelmRelease `namespace/name` of the release files at each side, rendered without a cluster.
async fn from_files(
    ctx: &Context<'_>,
    namespace: &str,
    name: &str,
    old: Option<&ChartDir>,
    new: Option<&ChartDir>,
) -> Result<(Objects, Objects)> {
    let Some((old_files, new_files)) = &ctx.files else { return Ok((Vec::new(), Vec::new())) };
    tokio::try_join!(
        file_side(ctx, &ctx.old, old_files, (namespace, name), old),
        file_side(ctx, &ctx.new, new_files, (namespace, name), new)
    )
}

/// One side of [`from_files`]: nothing when the chart or the HelmRelease is not there.
async fn file_side(
    ctx: &Context<'_>,
    disk: &Disk<'_>,
    files: &ReleaseFiles,
    (namespace, name): (&str, &str),
    chart: Option<&ChartDir>,
) -> Result<Objects> {
    let Some(chart) = chart else { return Ok(Vec::new()) };
    let Ok(hr) = files.helmrelease(name, Some(namespace), "default") else { return Ok(Vec::new()) };
    let refs = files.values_from(&hr).map_err(|e| at(disk, e.into()))?;
    let version = crate::source::chart_source::offline(&hr);
    let user = UserValues::default();
    let kubectl = ctx.kubectl(&hr)?;
    let desired = Desired::from_fetched(hr, refs, chart, &user, kubectl, version, Controller::offline())
        .map_err(|e| at(disk, e))?;
    release_objects(ctx, disk, &desired, &ctx.request.offline_view, &ClusterScoped::builtin()).await
}

/// A HelmRelease of the cluster, rendered at each side as helm-controller would render it there.
async fn from_cluster(
    ctx: &Context<'_>,
    hr: &HelmRelease,
    old: Option<&ChartDir>,
    new: Option<&ChartDir>,
) -> Result<(Objects, Objects)> {
    let Some(home) = ctx.cluster else { return Ok((Vec::new(), Vec::new())) };
    let target = crate::desired::target::resolve(home, hr).await?;
    let cluster = &target.cluster;
    let refs = crate::desired::fetch_values_from(home, hr).await?;
    let release = hr.release_name();
    let (apis, action) = tokio::try_join!(
        crate::cluster::discovery::discover(cluster),
        crate::cluster::helmstore::next_action(cluster, hr.storage_namespace(), &release)
    )?;
    let seen = Seen { home, cluster, apis: &apis, action, refs: &refs };
    tokio::try_join!(cluster_side(ctx, &ctx.old, hr, &seen, old), cluster_side(ctx, &ctx.new, hr, &seen, new))
}

/// What both sides of [`from_cluster`] render with.
struct Seen<'a> {
    home: &'a Cluster,
    /// The release's own cluster.
    cluster: &'a Cluster,
    apis: &'a crate::cluster::discovery::ClusterApis,
    action: crate::cluster::helmstore::NextAction,
    refs: &'a [crate::values::FetchedRef],
}

/// One side of [`from_cluster`]: nothing when the chart is not there.
async fn cluster_side(
    ctx: &Context<'_>,
    disk: &Disk<'_>,
    hr: &HelmRelease,
    seen: &Seen<'_>,
    chart: Option<&ChartDir>,
) -> Result<Objects> {
    let Some(chart) = chart else { return Ok(Vec::new()) };
    let version = crate::source::chart_source::lookup(seen.home, hr, &chart.meta.version).await;
    let user = UserValues::default();
    let desired = Desired::from_fetched(
        hr.clone(),
        seen.refs.to_vec(),
        chart,
        &user,
        ctx.kubectl(hr)?,
        version,
        ctx.controller.clone(),
    )
    .map_err(|e| at(disk, e))?;
    crate::pipeline::note_controller(&desired, ctx.helm);
    let view = crate::desired::cluster_view(seen.cluster, seen.apis, chart, seen.action);
    release_objects(ctx, disk, &desired, &view, &seen.apis.cluster_scoped()).await
}

/// A release rendered through Flux's post-render chain, as objects.
async fn release_objects(
    ctx: &Context<'_>,
    disk: &Disk<'_>,
    desired: &Desired,
    view: &ClusterView,
    scoped: &ClusterScoped,
) -> Result<Objects> {
    let text = desired.render(ctx.helm, view, ctx.self_exe, None).await.map_err(|e| at(disk, e.into()))?;
    crate::compare::rendered_objects(&text, &desired.release_namespace, scoped).map_err(|e| at(disk, e))
}

/// A private directory that is chart `dir` with `deps` (a name in `charts/` and the directory it is)
/// linked into its `charts/`: every entry of the chart is a link to the original, so nothing is copied
/// and nothing is written into the chart.
fn with_dependencies(dir: &Path, deps: &[(String, PathBuf)]) -> std::io::Result<tempfile::TempDir> {
    let overlay = crate::support::process::private_dir("cozyhr-review-chart-")?;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_name() != "charts" {
            std::os::unix::fs::symlink(entry.path(), overlay.path().join(entry.file_name()))?;
        }
    }
    let charts = overlay.path().join("charts");
    std::fs::create_dir(&charts)?;
    if let Ok(entries) = std::fs::read_dir(dir.join("charts")) {
        for entry in entries.flatten() {
            std::os::unix::fs::symlink(entry.path(), charts.join(entry.file_name()))?;
        }
    }
    for (name, target) in deps {
        let link = charts.join(name);
        if std::fs::symlink_metadata(&link).is_err() {
            std::os::unix::fs::symlink(target, link)?;
        }
    }
    Ok(overlay)
}
