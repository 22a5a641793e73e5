//! What a review is asked: the repository and refs, where the releases come from, and how to render them.

use std::path::{Path, PathBuf};

use crate::cluster::Connection;
use crate::compare::diff::PlanOptions;
use crate::desired::UserValues;
use crate::render::ClusterView;
use crate::sets::release_set::Selection;

/// What to review.
pub struct Request<'a> {
    /// A directory inside the repository (the one the command runs in, or `-C`).
    pub dir: &'a Path,
    /// Only charts under this path (relative to `dir` unless absolute).
    pub scope: &'a Path,
    /// `REF`, `A..B` or `A...B`, as Git spells refs (see [`crate::source::git_sides::Refs::parse`]).
    pub refs: &'a str,
    /// Where the releases come from.
    pub releases: Releases<'a>,
    /// What charts see of a cluster when a release is rendered without one.
    pub offline_view: ClusterView,
    /// Values given to every release at both sides, over its own (`-f`, `--set`): those a platform
    /// injects when it installs them, for a review without the platform.
    pub user: &'a UserValues,
    /// The namespace of the releases shown with their chart's defaults.
    pub defaults_namespace: &'a str,
    pub options: PlanOptions,
    /// How many releases render at a time.
    pub concurrency: usize,
}

/// Where a review finds the releases of a chart: the cluster's HelmReleases that deploy it, else those
/// of the files that deploy it, else none (the chart with its own defaults). See [`super::releases`].
#[derive(Default)]
pub struct Releases<'a> {
    /// The cluster (connected when a release to review needs it) and which of its HelmReleases (as
    /// `diff --all` selects them); None: no cluster.
    pub cluster: Option<(Connection, Selection)>,
    /// HelmRelease files and directories of YAML (other kinds ignored); those inside the repository
    /// are read as they are at each side.
    pub files: &'a [PathBuf],
}
