//! The charts under a path, at each side of a review, and what each one reads ([`Layout`]).
//!
//! A chart is a directory with a `Chart.yaml` that is not inside another chart (a chart inside another
//! is its subchart, rendered with it) and is not a library (a library renders nothing of its own; it is
//! reviewed through the charts that use it). What a chart reads is more than its directory: a library
//! linked into `charts/` (`charts/cozy-lib -> ../../../library/cozy-lib`) is read where the link points,
//! and a `file://` dependency from where its repository path points. Each such directory is a [`Mount`]:
//! the directory in the repository and where the chart sees it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::source::git_sides::{Side, Sides};
use crate::source::gitref::{Listed, Listing, is_under, lexical_join};
use crate::support::error::{Error, Result};

/// A chart under the path reviewed, at each side where it is one.
#[derive(Debug)]
pub struct Chart {
    /// Its directory, relative to the repository's top.
    pub path: PathBuf,
    pub old: Option<Layout>,
    pub new: Option<Layout>,
}

impl Chart {
    /// Its name (Chart.yaml's), at the new side if it is there.
    pub fn name(&self) -> &str {
        self.new.as_ref().or(self.old.as_ref()).map_or("", |l| l.name.as_str())
    }

    /// Its names at both sides (a renamed chart has two).
    pub fn names(&self) -> BTreeSet<&str> {
        self.old.iter().chain(&self.new).map(|l| l.name.as_str()).filter(|n| !n.is_empty()).collect()
    }
}

/// What a chart reads at one side.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    /// Chart.yaml's name ("" when Chart.yaml cannot be read: rendering says why).
    pub name: String,
    /// The directories (or files) the chart's files come from, the chart's own first.
    pub mounts: Vec<Mount>,
    /// `file://` dependencies of the chart itself that its `charts/` lacks: where each is in the
    /// repository, and the name it takes in `charts/`. Rendering links them in, as source-controller
    /// builds a chart's local dependencies from its repository.
    pub missing_dependencies: Vec<(String, PathBuf)>,
}

/// A directory of the repository as the chart sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// Repository-relative.
    pub dir: PathBuf,
    /// Relative to the chart's directory ("" for the chart's own).
    pub at: PathBuf,
}

impl Layout {
    /// Where repository path `path` is in the chart, for each mount it lies under.
    pub fn places<'a>(&'a self, path: &'a Path) -> impl Iterator<Item = PathBuf> + 'a {
        self.mounts.iter().filter_map(move |m| path.strip_prefix(&m.dir).ok().map(|rest| join(&m.at, rest)))
    }

    /// The repository path of chart path `at` (the first mount it lies under, innermost first).
    pub fn repository_path(&self, at: &Path) -> Option<PathBuf> {
        let mut best: Option<(&Mount, PathBuf)> = None;
        for m in &self.mounts {
            if let Ok(rest) = at.strip_prefix(&m.at)
                && best.as_ref().is_none_or(|(b, _)| m.at.components().count() > b.at.components().count())
            {
                best = Some((m, rest.to_path_buf()));
            }
        }
        best.map(|(m, rest)| join(&m.dir, &rest))
    }

    /// Every file the chart sees, by its path in the chart.
    pub fn files<'a>(&'a self, listing: &'a Listing) -> impl Iterator<Item = PathBuf> + 'a {
        self.mounts.iter().flat_map(move |m| {
            listing
                .under(&m.dir)
                .filter(|(_, l)| **l == Listed::File)
                .filter_map(move |(p, _)| p.strip_prefix(&m.dir).ok().map(|rest| join(&m.at, rest)))
        })
    }

    /// The repository directories of every mount (what a side must hold to render the chart).
    pub fn dirs(&self) -> impl Iterator<Item = &PathBuf> {
        self.mounts.iter().map(|m| &m.dir)
    }
}

fn join(a: &Path, b: &Path) -> PathBuf {
    if b.as_os_str().is_empty() { a.to_path_buf() } else { a.join(b) }
}

/// The parts of Chart.yaml that decide what a chart reads.
#[derive(Debug, Default, Deserialize)]
struct ChartYaml {
    #[serde(default)]
    name: String,
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    dependencies: Option<Vec<Dependency>>,
}

#[derive(Debug, Deserialize)]
struct Dependency {
    #[serde(default)]
    name: String,
    #[serde(default)]
    alias: Option<String>,
    #[serde(default)]
    repository: Option<String>,
}

impl ChartYaml {
    fn parse(bytes: &[u8]) -> Option<ChartYaml> {
        serde_saphyr::from_str(&String::from_utf8_lossy(bytes)).ok()
    }

    /// `file://` dependencies: the name each takes in `charts/` and its path relative to the chart.
    fn local_dependencies(&self) -> Vec<(String, String)> {
        self.dependencies
            .iter()
            .flatten()
            .filter_map(|d| {
                let path = d.repository.as_deref()?.strip_prefix("file://")?;
                Some((d.alias.clone().filter(|a| !a.is_empty()).unwrap_or_else(|| d.name.clone()), path.to_string()))
            })
            .collect()
    }
}

/// How many rounds of mounts reaching further mounts are followed; loops end here.
const MAX_ROUNDS: usize = 16;

/// The charts under `scope` (repository-relative) at either side, by path. None is an error.
pub async fn discover(sides: &Sides, scope: &Path) -> Result<Vec<Chart>> {
    let (old, new) = tokio::try_join!(at_side(sides, &sides.old, scope), at_side(sides, &sides.new, scope))?;
    let mut by_path: BTreeMap<PathBuf, Chart> = BTreeMap::new();
    for (path, layout) in old {
        by_path.entry(path.clone()).or_insert(Chart { path, old: None, new: None }).old = Some(layout);
    }
    for (path, layout) in new {
        by_path.entry(path.clone()).or_insert(Chart { path, old: None, new: None }).new = Some(layout);
    }
    if by_path.is_empty() {
        let shown =
            if scope.as_os_str().is_empty() { "the repository".to_string() } else { scope.display().to_string() };
        return Err(Error::Failed(format!(
            "no chart under {shown} at {} or {} (a chart is a directory with a Chart.yaml that is not a library): name a directory that holds charts",
            sides.old.label, sides.new.label
        )));
    }
    Ok(by_path.into_values().collect())
}

/// The charts under `scope` at one side, each with its layout. Files are read in a few batches for all
/// the charts together (their Chart.yaml files, then those of what they reach, round by round), so the
/// cost hardly grows with the number of charts.
async fn at_side(sides: &Sides, side: &Side, scope: &Path) -> Result<Vec<(PathBuf, Layout)>> {
    let listing = &side.listing;
    let candidates = chart_dirs(listing, scope);
    let mut yamls = ChartYamls::default();
    yamls.load(sides, side, candidates.iter().map(|c| c.join("Chart.yaml")).collect()).await?;
    let mut builders: Vec<(PathBuf, Builder)> = Vec::new();
    for dir in candidates {
        let meta = yamls.get(&dir.join("Chart.yaml"));
        if meta.is_some_and(|m| m.kind.as_deref() == Some("library")) {
            continue;
        }
        let name = meta.map(|m| m.name.clone()).unwrap_or_default();
        builders.push((dir.clone(), Builder::new(&dir, name)));
    }
    for _ in 0..MAX_ROUNDS {
        if builders.iter().all(|(_, b)| b.done()) {
            break;
        }
        let wanted: Vec<PathBuf> = builders.iter().flat_map(|(_, b)| b.chart_yamls(listing)).map(|(p, _)| p).collect();
        yamls.load(sides, side, wanted).await?;
        for (_, b) in &mut builders {
            b.step(listing, &yamls);
        }
    }
    Ok(builders.into_iter().map(|(dir, b)| (dir, b.layout)).collect())
}

/// Directories under `scope` with a Chart.yaml that lie inside no other such directory.
pub fn chart_dirs(listing: &Listing, scope: &Path) -> Vec<PathBuf> {
    let all: BTreeSet<PathBuf> = listing
        .entries
        .iter()
        .filter(|(p, l)| **l == Listed::File && p.file_name().is_some_and(|n| n == "Chart.yaml"))
        .map(|(p, _)| p.parent().map(Path::to_path_buf).unwrap_or_default())
        .collect();
    all.iter()
        // Under the scope, or holding it (a scope inside a chart names that chart).
        .filter(|d| is_under(d, scope) || is_under(scope, d))
        .filter(|d| !d.ancestors().skip(1).any(|a| all.contains(a)))
        .cloned()
        .collect()
}

/// The Chart.yaml files read so far at a side (None: not a chart's YAML).
#[derive(Default)]
struct ChartYamls(BTreeMap<PathBuf, Option<ChartYaml>>);

impl ChartYamls {
    /// Reads those of `paths` not read yet, in one batch.
    async fn load(&mut self, sides: &Sides, side: &Side, paths: Vec<PathBuf>) -> Result<()> {
        let new: Vec<PathBuf> = paths.into_iter().filter(|p| !self.0.contains_key(p)).collect();
        if new.is_empty() {
            return Ok(());
        }
        let texts = sides.read(side, &new).await?;
        for p in new {
            let meta = texts.get(&p).and_then(|b| ChartYaml::parse(b));
            self.0.insert(p, meta);
        }
        Ok(())
    }

    fn get(&self, path: &Path) -> Option<&ChartYaml> {
        self.0.get(path).and_then(Option::as_ref)
    }
}

/// One chart's layout as it is worked out, a round of mounts at a time: the links inside the mounts
/// of the round, and the `file://` dependencies of every Chart.yaml inside them.
struct Builder {
    layout: Layout,
    /// The first mount not worked out yet.
    next: usize,
}

impl Builder {
    fn new(dir: &Path, name: String) -> Builder {
        let layout = Layout {
            name,
            mounts: vec![Mount { dir: dir.to_path_buf(), at: PathBuf::new() }],
            missing_dependencies: Vec::new(),
        };
        Builder { layout, next: 0 }
    }

    fn done(&self) -> bool {
        self.next >= self.layout.mounts.len()
    }

    /// The Chart.yaml files inside this round's mounts, each with where its chart is in the chart.
    fn chart_yamls(&self, listing: &Listing) -> Vec<(PathBuf, PathBuf)> {
        self.layout.mounts[self.next..]
            .iter()
            .flat_map(|m| {
                listing
                    .under(&m.dir)
                    .filter(|(p, l)| **l == Listed::File && p.file_name().is_some_and(|n| n == "Chart.yaml"))
                    .map(|(p, _)| {
                        let inside = p.parent().and_then(|d| d.strip_prefix(&m.dir).ok()).unwrap_or(Path::new(""));
                        (p.clone(), join(&m.at, inside))
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Works out this round's mounts (their Chart.yaml files are in `yamls`); the mounts they reach are
    /// the next round's.
    fn step(&mut self, listing: &Listing, yamls: &ChartYamls) {
        if self.done() {
            return;
        }
        let round: Vec<Mount> = self.layout.mounts[self.next..].to_vec();
        let chart_yamls = self.chart_yamls(listing);
        self.next = self.layout.mounts.len();
        let mounts = &mut self.layout.mounts;
        for m in &round {
            for (path, listed) in listing.under(&m.dir) {
                let Listed::Link(target) = listed else { continue };
                let Some(resolved) = path.parent().and_then(|p| lexical_join(p, Path::new(target))) else { continue };
                let at = join(&m.at, path.strip_prefix(&m.dir).unwrap_or(path));
                push(mounts, resolved, at);
            }
        }
        for (yaml, chart_at) in &chart_yamls {
            let Some(meta) = yamls.get(yaml) else { continue };
            let chart_dir = yaml.parent().unwrap_or(Path::new(""));
            for (dep_name, rel) in meta.local_dependencies() {
                let Some(resolved) = lexical_join(chart_dir, Path::new(&rel)) else { continue };
                let at = chart_at.join("charts").join(&dep_name);
                if chart_at.as_os_str().is_empty() && !has_dependency(listing, mounts, &dep_name) {
                    self.layout.missing_dependencies.push((dep_name.clone(), resolved.clone()));
                }
                push(mounts, resolved, at);
            }
        }
    }
}

fn push(mounts: &mut Vec<Mount>, dir: PathBuf, at: PathBuf) {
    if !mounts.iter().any(|m| m.dir == dir && m.at == at) {
        mounts.push(Mount { dir, at });
    }
}

/// Whether the chart's `charts/` already holds dependency `name` (a directory or link of that name, or
/// an archive of that chart), before any `file://` dependency is mounted.
fn has_dependency(listing: &Listing, mounts: &[Mount], name: &str) -> bool {
    let Some(own) = mounts.first() else { return false };
    let charts = own.dir.join("charts");
    let entry = charts.join(name);
    listing.entries.contains_key(&entry)
        || listing.entries.contains_key(&entry.join("Chart.yaml"))
        || listing.under(&charts).any(|(p, _)| {
            p.parent() == Some(charts.as_path())
                && p.file_name()
                    .and_then(|f| f.to_str())
                    .is_some_and(|f| f.starts_with(&format!("{name}-")) && f.ends_with(".tgz"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(entries: &[(&str, Option<&str>)]) -> Listing {
        Listing::from_entries(
            entries.iter().map(|(p, l)| (PathBuf::from(p), l.map_or(Listed::File, |t| Listed::Link(t.to_string())))),
        )
    }

    #[test]
    fn charts_are_top_level_chart_directories_under_the_scope() {
        let l = listing(&[
            ("README.md", None),
            ("apps/a/Chart.yaml", None),
            ("apps/a/charts/vendored/Chart.yaml", None),
            ("apps/a/charts/lib", Some("../../../library/lib")),
            ("apps/b/Chart.yaml", None),
            ("library/lib/Chart.yaml", None),
            ("system/c/Chart.yaml", None),
        ]);
        let dirs = |scope: &str| chart_dirs(&l, Path::new(scope));
        assert_eq!(dirs("apps"), [PathBuf::from("apps/a"), PathBuf::from("apps/b")]);
        assert_eq!(dirs("").len(), 4, "the library is found here; it is dropped once its Chart.yaml is read");
        assert_eq!(dirs("apps/a/templates"), [PathBuf::from("apps/a")], "a scope inside a chart names it");
        assert!(dirs("nothing").is_empty());
    }

    #[test]
    fn places_and_repository_paths_follow_the_mounts() {
        let layout = Layout {
            name: "a".into(),
            mounts: vec![
                Mount { dir: "apps/a".into(), at: "".into() },
                Mount { dir: "library/lib".into(), at: "charts/lib".into() },
            ],
            missing_dependencies: Vec::new(),
        };
        let at: Vec<PathBuf> = layout.places(Path::new("library/lib/templates/_x.tpl")).collect();
        assert_eq!(at, [PathBuf::from("charts/lib/templates/_x.tpl")]);
        assert_eq!(layout.places(Path::new("apps/b/values.yaml")).count(), 0);
        assert_eq!(layout.repository_path(Path::new("charts/lib/Chart.yaml")), Some("library/lib/Chart.yaml".into()));
        assert_eq!(layout.repository_path(Path::new("values.yaml")), Some("apps/a/values.yaml".into()));
    }

    #[test]
    fn local_dependencies_take_their_alias() {
        let meta = ChartYaml::parse(
            b"name: a\nversion: 1.0.0\ndependencies:\n- name: common\n  repository: file://../common\n- name: redis\n  repository: https://charts.example.com\n- name: lib\n  alias: mylib\n  repository: file://../../library/lib\n",
        )
        .unwrap();
        assert_eq!(
            meta.local_dependencies(),
            [("common".to_string(), "../common".to_string()), ("mylib".to_string(), "../../library/lib".to_string())]
        );
    }
}
