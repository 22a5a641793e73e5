//! A fleet's releases that read a change, rendered at both sides by the two-sides renderer (the one
//! `diff --against git` and the rest of review render with), several at a time: the HelmRelease and its
//! values sources from each side's builds, its chart from where Flux gets it at that side, and what the
//! charts see of a cluster: the reachable one when it is the release's fleet cluster, else none.

use std::path::{Path, PathBuf};

use futures::StreamExt as _;

use super::super::report::Entry;
use super::super::request::Request;
use super::Staged;
use super::releases::{AtSide, Job, repository_chart};
use crate::cluster::Cluster;
use crate::compare::diff::Plan;
use crate::compare::two_sides::{self, Caller, ReleaseCluster, Renderer, View};
use crate::flux::HelmRelease;
use crate::render::Tools;
use crate::resolve::ReleaseOrigin as At;
use crate::source::chart::{ChartDir, Checkout};
use crate::source::git_sides::Side;
use crate::support::error::{Error, Result};

/// The two sides, as staged.
pub(super) struct StagedSides<'a> {
    pub old: (&'a Side, &'a Staged),
    pub new: (&'a Side, &'a Staged),
}

struct Ctx<'a> {
    renderer: Renderer<'a>,
    sides: &'a StagedSides<'a>,
    req: &'a Request<'a>,
    /// The fleet cluster the reachable cluster is, by name.
    home: Option<(&'a str, &'a Cluster)>,
}

/// Renders every job, `req.concurrency` at a time; the entries come back in the jobs' order.
pub(super) async fn all(
    tools: &Tools,
    req: &Request<'_>,
    sides: &StagedSides<'_>,
    home: Option<&(String, Cluster)>,
    jobs: &[Job],
) -> Vec<Entry> {
    let renderer = Renderer::new(tools, req.user, req.options, Caller::Review);
    let ctx = Ctx { renderer, sides, req, home: home.map(|(n, c)| (n.as_str(), c)) };
    let ctx = &ctx;
    let roots = [sides.old.1.artifact.root(), sides.new.1.artifact.root()];
    futures::stream::iter(jobs.iter().map(|job| async move {
        let outcome = render(ctx, job).await.map_err(|e| super::one_line(&e.to_string(), roots));
        Entry { chart: PathBuf::from(job.chart_name()), release: job.release(), outcome }
    }))
    .buffered(req.concurrency.max(1))
    .collect()
    .await
}

/// A chart at one side, and what keeps it on disk.
enum Opened {
    Served(crate::source::served::Served),
    Dir(ChartDir),
    /// An ArtifactGenerator's artifact, built from the side's files.
    Built(Box<crate::source::generated::Built>),
}

impl Opened {
    fn chart(&self) -> &ChartDir {
        match self {
            Opened::Served(s) => &s.chart,
            Opened::Dir(c) => c,
            Opened::Built(b) => &b.chart,
        }
    }
}

async fn render(ctx: &Ctx<'_>, job: &Job) -> Result<Plan> {
    let (old_side, new_side) = (ctx.sides.old, ctx.sides.new);
    let (old, new) = tokio::try_join!(chart(old_side, job.old.as_ref()), chart(new_side, job.new.as_ref()))?;
    let side = |label: &'_ Side,
                at: Option<&'_ AtSide>|
     -> std::result::Result<(Option<Box<HelmRelease>>, Vec<crate::values::FetchedRef>), Error> {
        match at {
            Some(a) => {
                let refs = a.files.values_from(&a.hr).map_err(|e| Error::Failed(format!("{}: {e}", label.label)))?;
                Ok((Some(Box::new(a.hr.clone())), refs))
            }
            None => Ok((None, Vec::new())),
        }
    };
    let (o_hr, o_refs) = side(old_side.0, job.old.as_ref())?;
    let (n_hr, n_refs) = side(new_side.0, job.new.as_ref())?;
    let old = make_side(old_side.0, old.as_ref(), o_hr, o_refs);
    let new = make_side(new_side.0, new.as_ref(), n_hr, n_refs);
    match ctx.home.filter(|(name, _)| *name == job.cluster) {
        Some((_, home)) => {
            let hr = job
                .new
                .as_ref()
                .or(job.old.as_ref())
                .map(|a| &a.hr)
                .ok_or_else(|| Error::Failed("no HelmRelease at either side".into()))?;
            let seen = ReleaseCluster::of(home, hr).await?;
            ctx.renderer.plan(&old, &new, &seen.view()).await
        }
        None => ctx.renderer.plan(&old, &new, &View::Offline(&ctx.req.offline_view)).await,
    }
}

/// One side of the two-sides renderer: the release with its chart, or nothing.
fn make_side<'s>(
    label: &'s Side,
    chart: Option<&'s Opened>,
    hr: Option<Box<HelmRelease>>,
    refs: Vec<crate::values::FetchedRef>,
) -> two_sides::Side<'s> {
    match (chart, hr) {
        (Some(chart), Some(hr)) => {
            two_sides::Side { label: Some(&label.label), chart: Some(chart.chart()), release: At::File { hr, refs } }
        }
        _ => two_sides::Side { label: Some(&label.label), chart: None, release: At::Absent },
    }
}

/// The HelmRelease's chart at one side, from where Flux gets it.
async fn chart((side, staged): (&Side, &Staged), at: Option<&AtSide>) -> Result<Option<Opened>> {
    let Some(a) = at else { return Ok(None) };
    let named = |e: Error| Error::Failed(format!("{}: {e}", side.label));
    if let Some(dir) = repository_chart(&a.hr) {
        // The whole tree: a chart of the repository may name dependencies beside it (`file://../lib`).
        staged.artifact.ensure([Path::new("")]).map_err(|e| named(Error::Io(e)))?;
        let top = staged.artifact.root().to_path_buf();
        let path = top.join(&dir);
        let opened = ChartDir::open(&path).map_err(|e| named(e.into()))?;
        return Ok(Some(Opened::Dir(opened.in_checkout(Checkout { top, dir: path }))));
    }
    if a.hr.spec.chart_ref.as_ref().is_some_and(|r| r.kind == "ExternalArtifact") {
        let generated = super::releases::generated(a).ok_or_else(|| {
            named(Error::Failed(
                "its chartRef names an ExternalArtifact that no ArtifactGenerator of this cluster's builds makes: add the ArtifactGenerator to a Kustomization of the cluster, or fix the chartRef's name and namespace".into(),
            ))
        })?;
        staged.artifact.ensure(generated.reads().iter().map(PathBuf::as_path)).map_err(|e| named(Error::Io(e)))?;
        return Ok(Some(Opened::Built(Box::new(generated.build(staged.artifact.root(), &a.files).map_err(named)?))));
    }
    let served = crate::source::served::from_repository_offline(&a.files, &a.hr, None).await.map_err(named)?;
    Ok(Some(Opened::Served(served)))
}
