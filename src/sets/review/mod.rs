//! `helm cozy review git:REF [PATH]`: what a change does to a whole repository of charts, release by
//! release, rendered as helm-controller would, without a cluster if need be.
//!
//! A review is a short line of steps, each in its room:
//! 1. [`Sides`]: the two states compared (a commit, and the work tree or another commit) and the paths
//!    that differ between them, from Git's plumbing only: the checkout is never touched.
//! 2. [`charts`]: the charts under PATH on either side, and what each one reads: its directory, the
//!    libraries linked into it, its `file://` dependencies, its vendored subcharts ([`charts::Layout`]).
//! 3. [`affected`]: the charts a changed path can change the rendering of (a README, or a file
//!    `.helmignore` leaves out, changes nothing); the others are never rendered.
//! 4. [`releases`]: for each affected chart, the releases to show: the HelmReleases that deploy it in the
//!    cluster, else the HelmRelease files given (in the repository, read at both sides) and the releases
//!    their PackageSources define (each variant's component that reads what changed), else the chart
//!    with its own defaults. A HelmRelease file whose release changed brings its chart in too.
//! 5. [`render`]: each release rendered at both sides, several at a time, into a [`Plan`](crate::compare::diff::Plan); a failure is
//!    that release's row, the others still shown.
//! 6. [`print`](mod@print): a table, then each release's diff; `-o markdown` for a pull-request comment, `-o json`
//!    for CI.

pub mod affected;
pub mod charts;
pub mod fleet;
pub mod print;
pub mod releases;
pub mod render;
mod report;
mod request;

pub use report::{Entry, FleetTally, Release, Report};
pub use request::{Releases, Request};

use crate::render::Tools;
use crate::source::git_sides::Sides;
use crate::support::error::Result;

/// Runs a review (the steps of the module's words, in order).
pub async fn run(tools: &Tools, req: &Request<'_>) -> Result<Report> {
    let sides = Sides::open(req.dir, req.refs).await?;
    let scope = sides.scope(req.dir, req.scope)?;
    if fleet::found(&sides, &scope).await? {
        let reviewed = fleet::review(tools, &sides, &scope, req).await;
        sides.close().await;
        let (entries, tally) = reviewed?;
        let (old, new) = (sides.old.label.clone(), sides.new.label.clone());
        return Ok(Report { old, new, charts: 0, entries, fleet: Some(tally) });
    }
    let found = async {
        let charts = charts::discover(&sides, &scope).await?;
        let touched = affected::select(&sides, &charts, &sides.changed).await?;
        Ok((charts, touched))
    };
    let ((charts, touched), files) = tokio::try_join!(found, releases::read(&sides, req.releases.files))?;
    let reach = releases::Reach { changed: &sides.changed, namespace: req.defaults_namespace };
    let jobs = releases::assign(&charts, &touched, req.releases.cluster.as_ref(), files, reach).await?;
    let entries = render::all(tools, &sides, &charts, jobs, req).await;
    sides.close().await;
    let entries = entries?;
    Ok(Report {
        old: sides.old.label.clone(),
        new: sides.new.label.clone(),
        charts: charts.len(),
        entries,
        fleet: None,
    })
}
