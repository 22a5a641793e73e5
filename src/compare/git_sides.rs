//! `diff --against git:REF`: one release at a Git ref and in the working tree, as two sides for the
//! two-sides renderer ([`super::two_sides`]): the chart (and the release files inside the repository) as
//! they are at the ref, written out into a private temporary directory by the Git sides `review` reads
//! too ([`crate::source::git_sides`]).

use std::path::PathBuf;

use super::diff::Plan;
use super::request::DiffRequest;
use super::two_sides::{Caller, ReleaseCluster, Renderer, Side, View};
use crate::cluster::Cluster;
use crate::flux::HelmRelease;
use crate::resolve::{FileReleases, ReleaseOrigin, Resolver};
use crate::source::chart::{ChartDir, Checkout};
use crate::source::generated::{Built, Generated};
use crate::source::git_sides::{OnDisk, Sides};
use crate::source::release_file::{ReleaseFileError, ReleaseFiles};
use crate::support::error::{Error, Result};

/// `diff --against git:REF`: the chart (and the release files inside the repository) as they are at
/// the ref against the working tree, both rendered by the two-sides renderer
/// ([`crate::compare::two_sides`], which `review` renders with too): with the cluster's capabilities,
/// lookups and next action when `cluster` is given, else with `offline_view`. The ref's tree is
/// written into a private temporary directory (see [`crate::source::gitref`]), removed when this returns.
pub(super) async fn diff_against_git(
    resolver: &Resolver,
    cluster: Option<&Cluster>,
    git_ref: &str,
    git: &DiffRequest<'_>,
) -> Result<Plan> {
    let files = git.source.files();
    let at_ref = AtRef::materialise(&resolver.chart, git_ref, files).await?;
    let renderer = Renderer::new(&resolver.tools, git.user, git.options, Caller::Diff);
    let Some(from) = files else {
        let Some(home) = cluster else {
            return Err(Error::Failed(
                "--against git:REF without --release-file reads the HelmRelease from the cluster: configure one, or pass --release-file".into(),
            ));
        };
        let hr = crate::resolve::helmrelease(home, git.name).await?;
        let (refs, controller) =
            tokio::join!(crate::desired::fetch_values_from(home, &hr), crate::controller::detect(home));
        let refs = refs?;
        at_ref.add_values_files(&hr).await?;
        let release = || ReleaseOrigin::Cluster { home, hr: &hr, refs: &refs, controller: &controller };
        let (old, new) =
            (at_ref.side(release()), Side { label: None, chart: Some(&resolver.chart), release: release() });
        let seen = ReleaseCluster::of(home, &hr).await?;
        return renderer.plan(&old, &new, &seen.view()).await;
    };
    let namespace = from.namespace.as_deref();
    let default_ns = cluster.map_or(namespace.unwrap_or("default"), |c| c.namespace.as_str());
    let new_files = &from.files;
    if let Some(generated) = Generated::find(new_files, &at_ref.chart_rel, git.name, namespace, default_ns) {
        let new = generated.build(at_ref.sides.repo.top(), new_files)?;
        return diff_generated(cluster, &at_ref, new, &renderer, git, (namespace, default_ns)).await;
    }
    let new_hr = new_files.helmrelease(git.name, namespace, default_ns)?;
    let new_release = ReleaseOrigin::File { refs: new_files.values_from(&new_hr)?, hr: Box::new(new_hr.clone()) };
    let old_release = match at_ref.old_files()? {
        Some(old_files) => match old_files.helmrelease(git.name, namespace, default_ns) {
            // A HelmRelease added since the ref: nothing of it was there.
            Err(ReleaseFileError::NotFound { .. }) => ReleaseOrigin::Absent,
            hr => {
                let hr = hr?;
                at_ref.add_values_files(&hr).await?;
                ReleaseOrigin::File { refs: old_files.values_from(&hr)?, hr: Box::new(hr) }
            }
        },
        None => ReleaseOrigin::Absent,
    };
    let new = Side { label: None, chart: Some(&resolver.chart), release: new_release };
    let seen = match cluster {
        Some(home) => Some(ReleaseCluster::of(home, &new_hr).await?),
        None => None,
    };
    let view = seen.as_ref().map_or(View::Offline(&git.offline_view), ReleaseCluster::view);
    renderer.plan(&at_ref.side(old_release), &new, &view).await
}

/// `diff --against git:REF` of a release whose chart is an artifact ([`Generated`]: an
/// ArtifactGenerator's, a PackageSource component's), `new` as the work tree builds it: against the
/// artifact built from the ref with the release files as they are there (nothing when the ref does
/// not define the release).
async fn diff_generated(
    cluster: Option<&Cluster>,
    at_ref: &AtRef<'_>,
    new: Built,
    renderer: &Renderer<'_>,
    git: &DiffRequest<'_>,
    (namespace, default_ns): (Option<&str>, &str),
) -> Result<Plan> {
    let old_files = at_ref.old_files()?;
    let old =
        match old_files.as_ref().map(|f| (Generated::find(f, &at_ref.chart_rel, git.name, namespace, default_ns), f)) {
            Some((Some(generated), files)) => {
                at_ref.sides.add(&at_ref.tree, &generated.reads()).await?;
                Some(generated.build(at_ref.tree.root(), files)?)
            }
            _ => None,
        };
    let seen = match cluster {
        Some(home) => Some(ReleaseCluster::of(home, &new.hr).await?),
        None => None,
    };
    let view = seen.as_ref().map_or(View::Offline(&git.offline_view), ReleaseCluster::view);
    renderer.plan(&built_side(old.as_ref()), &built_side(Some(&new)), &view).await
}

/// One side of a diff rendering `built` (nothing when it is not there).
fn built_side(built: Option<&Built>) -> Side<'_> {
    match built {
        Some(b) => Side {
            label: None,
            chart: Some(&b.chart),
            release: ReleaseOrigin::File { hr: Box::new(b.hr.clone()), refs: b.refs.clone() },
        },
        None => Side { label: None, chart: None, release: ReleaseOrigin::Absent },
    }
}

/// The chart and the release files inside its repository as they are at a Git ref, written into a
/// private temporary directory that is removed when this is dropped.
struct AtRef<'a> {
    git_ref: &'a str,
    /// The ref (old) and the work tree (new).
    sides: Sides,
    /// The ref's paths this diff reads.
    tree: OnDisk,
    /// The chart's directory, relative to the repository's top.
    chart_rel: PathBuf,
    /// The chart at the ref; None when it was added since.
    chart: Option<ChartDir>,
    /// The release files as they were read (label, text), and where each lies in the repository (None:
    /// stdin or a file elsewhere, the same at both sides).
    texts: Vec<(String, String)>,
    in_repo: Vec<Option<PathBuf>>,
}

impl<'a> AtRef<'a> {
    /// Writes out the chart and the release files inside the repository as they are at `git_ref`.
    async fn materialise(chart: &ChartDir, git_ref: &'a str, files: Option<&FileReleases>) -> Result<AtRef<'a>> {
        let sides = Sides::against_work_tree(chart.path(), git_ref).await?;
        let repo = &sides.repo;
        let chart_rel = repo.relative(chart.path()).unwrap_or_default();
        let (paths, texts) = files.map_or((&[][..], Vec::new()), |f| (&f.paths[..], f.texts.clone()));
        let in_repo: Vec<Option<PathBuf>> = paths
            .iter()
            .map(|p| if crate::source::release_file::is_stdin(p) { None } else { repo.relative(p) })
            .collect();
        let mut wanted = vec![chart_rel.clone()];
        wanted.extend(in_repo.iter().flatten().cloned());
        let tree = sides.on_disk(&sides.old, &wanted).await?;
        // A chart added since the ref has no old side: everything it renders is added.
        let chart = if tree.has(&chart_rel.join("Chart.yaml")) {
            let dir = tree.path(&chart_rel);
            let chart = ChartDir::open(&dir)
                .map_err(|e| Error::Failed(format!("the chart directory as it is at {git_ref}: {e}")))?;
            Some(chart.in_checkout(Checkout { top: tree.root().to_path_buf(), dir }))
        } else {
            None
        };
        Ok(AtRef { git_ref, sides, tree, chart_rel, chart, texts, in_repo })
    }

    /// The old side: the chart at the ref, rendering `release`.
    fn side(&self, release: ReleaseOrigin<'a>) -> Side<'_> {
        Side { label: None, chart: self.chart.as_ref(), release }
    }

    /// The release files as they are at the ref (a file added since has nothing there); None when the
    /// chart itself was not there.
    fn old_files(&self) -> Result<Option<ReleaseFiles>> {
        if self.chart.is_none() {
            return Ok(None);
        }
        let mut old_texts = Vec::new();
        for ((label, text), rel) in self.texts.iter().zip(&self.in_repo) {
            match rel {
                Some(rel) if !self.tree.has(rel) => {}
                Some(rel) => {
                    let text = std::fs::read_to_string(self.tree.path(rel)).map_err(|e| {
                        Error::Failed(format!("--release-file {label} as it is at {}: {e}", self.git_ref))
                    })?;
                    old_texts.push((format!("{label} at {}", self.git_ref), text));
                }
                None => old_texts.push((label.clone(), text.clone())),
            }
        }
        Ok(Some(ReleaseFiles::parse(old_texts)?))
    }

    /// Writes `hr`'s valuesFiles that lie outside the chart directory (a GitRepository's, relative to
    /// its root) into the tree, as they are at the ref, so that the chart at the ref renders with them.
    async fn add_values_files(&self, hr: &HelmRelease) -> Result<()> {
        if self.chart.is_none() {
            return Ok(());
        }
        let outside = crate::source::values_files::repository_paths(hr, &self.chart_rel);
        if !outside.is_empty() {
            self.sides.add(&self.tree, &outside).await?;
        }
        Ok(())
    }
}
