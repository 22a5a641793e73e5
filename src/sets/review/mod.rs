//! `helm cozy review git:REF [PATH]`: what a change does to a whole repository of charts, release by
//! release, rendered as helm-controller would, without a cluster if need be.
//!
//! A review is a short line of steps, each in its room:
//! 1. [`sides`]: the two states compared (a commit, and the work tree or another commit) and the paths
//!    that differ between them, from Git's plumbing only: the checkout is never touched.
//! 2. [`charts`]: the charts under PATH on either side, and what each one reads: its directory, the
//!    libraries linked into it, its `file://` dependencies, its vendored subcharts ([`charts::Layout`]).
//! 3. [`affected`]: the charts a changed path can change the rendering of (a README, or a file
//!    `.helmignore` leaves out, changes nothing); the others are never rendered.
//! 4. [`releases`]: for each affected chart, the releases to show: the HelmReleases that deploy it in the
//!    cluster, else the HelmRelease files given (in the repository, read at both sides), else the chart
//!    with its own defaults. A HelmRelease file whose release changed brings its chart in too.
//! 5. [`render`]: each release rendered at both sides, several at a time, into a [`Plan`](crate::compare::diff::Plan); a failure is
//!    that release's row, the others still shown.
//! 6. [`print`](mod@print): a table, then each release's diff; `-o markdown` for a pull-request comment, `-o json`
//!    for CI.

pub mod affected;
pub mod charts;
pub mod print;
pub mod releases;
pub mod render;
mod report;
pub mod sides;

pub use report::{Entry, Release, Report};

use std::path::{Path, PathBuf};

use crate::cluster::ClusterOptions;
use crate::compare::diff::PlanOptions;
use crate::render::{ClusterView, Helm};
use crate::sets::release_set::Selection;
use crate::support::error::Result;

/// What to review.
pub struct Request<'a> {
    /// A directory inside the repository (the one the command runs in, or `-C`).
    pub dir: &'a Path,
    /// Only charts under this path (relative to `dir` unless absolute).
    pub scope: &'a Path,
    /// `REF`, `A..B` or `A...B`, as Git spells refs (see [`sides::Refs::parse`]).
    pub refs: &'a str,
    /// Where the releases come from.
    pub releases: Releases<'a>,
    /// What charts see of a cluster when a release is rendered without one.
    pub offline_view: ClusterView,
    pub options: PlanOptions,
    /// How many releases render at a time.
    pub concurrency: usize,
}

/// Where a review finds the releases of a chart: the cluster's HelmReleases that deploy it, else those
/// of the files that deploy it, else none (the chart with its own defaults). See [`releases`].
#[derive(Default)]
pub struct Releases<'a> {
    /// The cluster and which of its HelmReleases (as `diff --all` selects them); None: no cluster.
    pub cluster: Option<(ClusterOptions, Selection)>,
    /// HelmRelease files and directories of YAML (other kinds ignored); those inside the repository
    /// are read as they are at each side.
    pub files: &'a [PathBuf],
}

/// Runs a review (the steps of the module's words, in order).
pub async fn run(helm: &Helm, self_exe: &Path, req: &Request<'_>) -> Result<Report> {
    let sides = sides::Sides::open(req.dir, req.refs).await?;
    let scope = sides.scope(req.dir, req.scope)?;
    let found = async {
        let charts = charts::discover(&sides, &scope).await?;
        let touched = affected::select(&sides, &charts, &sides.changed).await?;
        Ok((charts, touched))
    };
    let ((charts, touched), files) = tokio::try_join!(found, releases::read(&sides, req.releases.files))?;
    let jobs = releases::assign(&charts, &touched, req.releases.cluster.as_ref(), files).await?;
    let entries = render::all(helm, self_exe, &sides, &charts, jobs, req).await;
    sides.close().await;
    let entries = entries?;
    Ok(Report { old: sides.old.label.clone(), new: sides.new.label.clone(), charts: charts.len(), entries })
}
