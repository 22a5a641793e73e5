//! Each release of a review rendered at both sides and compared, several at a time, by the two-sides
//! renderer ([`crate::compare::two_sides`], which `diff --against git:REF` renders with too). What is
//! here is review's own: the sides' files on disk, each chart opened at each side (with its missing
//! `file://` dependencies linked in), which release each job renders, and the jobs run side by side. A
//! failure is the release's own row, named by the side it happened at.

use std::path::{Path, PathBuf};

use futures::StreamExt as _;

use super::charts::{Chart, Layout};
use super::releases::{Assigned, Job};
use super::report::{Entry, Release};
use super::request::Request;
use crate::cluster::Cluster;
use crate::compare::diff::Plan;
use crate::compare::two_sides::{self, Caller, ReleaseCluster, Renderer, View};
use crate::controller::Controller;
use crate::flux::HelmRelease;
use crate::render::Tools;
use crate::resolve::ReleaseOrigin as At;
use crate::source::artifact::{Artifact, Copy};
use crate::source::chart::{ChartDir, Checkout};
use crate::source::generated::{Built, Generated};
use crate::source::git_sides::{OnDisk, Side, Sides};
use crate::source::package_source::{Key, PackageRelease};
use crate::source::release_file::ReleaseFiles;
use crate::support::error::{Error, Result};

/// What every job renders with.
struct Context<'a> {
    /// The two-sides renderer, the same `diff --against git:REF` renders with.
    renderer: Renderer<'a>,
    charts: &'a [Chart],
    old: Disk<'a>,
    new: Disk<'a>,
    files: Option<(ReleaseFiles, ReleaseFiles)>,
    cluster: Option<&'a Cluster>,
    /// The cluster's helm-controller, asked once.
    controller: Controller,
    request: &'a Request<'a>,
}

/// A side and its files on disk.
struct Disk<'a> {
    side: &'a Side,
    on_disk: OnDisk,
    /// The releases its PackageSources define.
    packages: Vec<PackageRelease>,
}

/// Renders every job, `request.concurrency` at a time; the entries come back in the jobs' order.
pub async fn all(
    tools: &Tools,
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
    let (old_generated, new_generated) = generated_reads(&assigned);
    old_paths.extend(old_generated);
    new_paths.extend(new_generated);
    let (old_packages, new_packages) = assigned.packages;
    old_paths.extend(old_packages.iter().flat_map(|p| p.reads().collect::<Vec<_>>()));
    new_paths.extend(new_packages.iter().flat_map(|p| p.reads().collect::<Vec<_>>()));
    let (old, new) = tokio::try_join!(sides.on_disk(&sides.old, &old_paths), sides.on_disk(&sides.new, &new_paths))?;
    // The cluster is asked for its HelmReleases' sources and for the values a platform keeps for its
    // packages; a review of neither does not ask it anything.
    let asks = |j: &Job| j.helmrelease.is_some() || matches!(j.release, Release::Package { .. });
    let cluster = assigned.cluster.as_ref().filter(|_| assigned.jobs.iter().any(asks));
    let controller = match cluster {
        Some(c) => crate::controller::detect(c).await,
        None => Controller::offline(),
    };
    let renderer = Renderer::new(tools, request.user, request.options, Caller::Review);
    let ctx = Context {
        renderer,
        charts,
        old: Disk { side: &sides.old, on_disk: old, packages: old_packages },
        new: Disk { side: &sides.new, on_disk: new, packages: new_packages },
        files: assigned.files,
        cluster,
        controller,
        request,
    };
    let ctx = &ctx;
    let runs = assigned.jobs.into_iter().map(|job| async move {
        let chart = &ctx.charts[job.chart];
        let outcome = render_job(ctx, chart, &job).await.map_err(|e| ctx.row_error(&e));
        Entry { chart: chart.path.clone(), release: job.release, outcome }
    });
    Ok(futures::stream::iter(runs).buffered(request.concurrency.max(1)).collect().await)
}

/// The repository paths the artifacts of the jobs' HelmRelease files read (their chartRef an
/// ExternalArtifact an ArtifactGenerator of the files builds), at the old and the new side.
fn generated_reads(assigned: &Assigned) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let Some((old, new)) = &assigned.files else { return Default::default() };
    let reads = |files: &ReleaseFiles| -> Vec<PathBuf> {
        let artifacts = assigned.jobs.iter().filter_map(|job| match &job.release {
            Release::File { namespace, name } => {
                let hr = files.helmrelease(name, Some(namespace), "default").ok()?;
                Artifact::of_helmrelease(files, &hr)
            }
            _ => None,
        });
        artifacts.flat_map(|a| a.copies.iter().map(Copy::reads).collect::<Vec<_>>()).collect()
    };
    (reads(old), reads(new))
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
    if let Release::Package { key, .. } = &job.release {
        let files = ctx.files.as_ref();
        let mut old = ctx.old.package(key, files.map(|f| &f.0))?;
        let mut new = ctx.new.package(key, files.map(|f| &f.1))?;
        if let Some(home) = ctx.cluster {
            // The values the platform injects, where it keeps them (Cozystack's `cozystack-values` Secret
            // in the release's namespace), as they are now: the same at both sides.
            for built in [old.as_mut(), new.as_mut()].into_iter().flatten() {
                built.refs = crate::desired::fetch_values_from(home, &built.hr).await?;
            }
        }
        let offline = View::Offline(&ctx.request.offline_view);
        return ctx.renderer.plan(&ctx.old.built_side(old.as_ref()), &ctx.new.built_side(new.as_ref()), &offline).await;
    }
    let old = open_chart(&ctx.old, chart, chart.old.as_ref())?;
    let new = open_chart(&ctx.new, chart, chart.new.as_ref())?;
    let (old, new) = (old.as_ref().map(|(c, _)| c), new.as_ref().map(|(c, _)| c));
    let offline = View::Offline(&ctx.request.offline_view);
    match (&job.release, &job.helmrelease) {
        (Release::Cluster { .. }, Some(hr)) => {
            let Some(home) = ctx.cluster else { return ctx.renderer.plan(&nothing(), &nothing(), &offline).await };
            let seen = ReleaseCluster::of(home, hr).await?;
            let refs = crate::desired::fetch_values_from(home, hr).await?;
            let release = || At::Cluster { home, hr, refs: &refs, controller: &ctx.controller };
            ctx.renderer.plan(&ctx.old.side(old, release()), &ctx.new.side(new, release()), &seen.view()).await
        }
        (Release::File { namespace, name }, _) => {
            let Some((old_files, new_files)) = &ctx.files else {
                return ctx.renderer.plan(&nothing(), &nothing(), &offline).await;
            };
            // A HelmRelease whose chart is an ArtifactGenerator's artifact renders the artifact as built.
            let old_built = if old.is_some() { ctx.old.generated(old_files, (namespace, name))? } else { None };
            let new_built = if new.is_some() { ctx.new.generated(new_files, (namespace, name))? } else { None };
            let old = match &old_built {
                Some(built) => ctx.old.built_side(Some(built)),
                None => ctx.old.side(old, ctx.old.file_release(old_files, (namespace, name), old)?),
            };
            let new = match &new_built {
                Some(built) => ctx.new.built_side(Some(built)),
                None => ctx.new.side(new, ctx.new.file_release(new_files, (namespace, name), new)?),
            };
            ctx.renderer.plan(&old, &new, &offline).await
        }
        _ => {
            let defaults = || At::ChartDefaults { namespace: ctx.request.defaults_namespace };
            let (old, new) = (ctx.old.side(old, defaults()), ctx.new.side(new, defaults()));
            ctx.renderer.plan(&old, &new, &offline).await
        }
    }
}

impl Context<'_> {
    /// `error` as a table row says it: on one line (helm's own errors can run over several), and with a
    /// commit's private copy named by repository paths (`apps/a/...`, not `/tmp/cozyhr-.../apps/a/...`).
    fn row_error(&self, error: &Error) -> String {
        let mut line = error.to_string().split_whitespace().collect::<Vec<_>>().join(" ");
        for disk in [&self.old, &self.new] {
            if let OnDisk::Tree(tree) = &disk.on_disk {
                line = line.replace(&format!("{}/", tree.root().display()), "");
            }
        }
        line
    }
}

/// A side with nothing: a release whose cluster or files are not there.
fn nothing() -> two_sides::Side<'static> {
    two_sides::Side { label: None, chart: None, release: At::Absent }
}

impl<'a> Disk<'a> {
    /// This side rendering `release` with `chart`, its errors named by the side.
    fn side<'s>(&'s self, chart: Option<&'s ChartDir>, release: At<'s>) -> two_sides::Side<'s> {
        two_sides::Side { label: Some(&self.side.label), chart, release }
    }

    /// Package release `key` at this side, its chart built as its artifact: None when it is not there.
    fn package(&self, key: &Key, files: Option<&ReleaseFiles>) -> Result<Option<Built>> {
        let Some(release) = self.packages.iter().find(|p| &p.key == key) else { return Ok(None) };
        // PackageSources come from the release files: a side with packages has files.
        let Some(files) = files else { return Ok(None) };
        let hr = release.helmrelease().ok_or_else(|| {
            at(self, Error::Failed(format!("PackageSource {}: its HelmRelease cannot be made", key.package)))
        })?;
        self.build(Generated { hr, artifact: release.artifact.clone() }, files).map(Some)
    }

    /// HelmRelease `namespace/name` of this side's release files, its chart built as the artifact an
    /// ArtifactGenerator of the files makes: None when the HelmRelease is not there or its chart is not
    /// such an artifact.
    fn generated(&self, files: &ReleaseFiles, (namespace, name): (&str, &str)) -> Result<Option<Built>> {
        let Some(generated) = Generated::of_file(files, name, Some(namespace), "default") else { return Ok(None) };
        self.build(generated, files).map(Some)
    }

    /// `generated` built from this side's files, its errors named by the side.
    fn build(&self, generated: Generated, files: &ReleaseFiles) -> Result<Built> {
        generated.build(self.on_disk.root(), files).map_err(|e| at(self, e))
    }

    /// This side rendering a built release (nothing when it is not there).
    fn built_side<'s>(&'s self, built: Option<&'s Built>) -> two_sides::Side<'s> {
        match built {
            Some(b) => self.side(Some(&b.chart), At::File { hr: Box::new(b.hr.clone()), refs: b.refs.clone() }),
            None => self.side(None, At::Absent),
        }
    }

    /// HelmRelease `namespace/name` of this side's release files with its sources: nothing when the chart
    /// or the HelmRelease is not there.
    fn file_release(
        &self,
        files: &ReleaseFiles,
        (namespace, name): (&str, &str),
        chart: Option<&ChartDir>,
    ) -> Result<At<'a>> {
        if chart.is_none() {
            return Ok(At::Absent);
        }
        let Ok(hr) = files.helmrelease(name, Some(namespace), "default") else { return Ok(At::Absent) };
        let refs = files.values_from(&hr).map_err(|e| at(self, e.into()))?;
        Ok(At::File { hr: Box::new(hr), refs })
    }
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
