//! The releases a review shows for each affected chart: the HelmReleases of the cluster that deploy it
//! (as `diff --all` finds them), else the HelmReleases of the files given that deploy it, else the chart
//! with its own defaults. The cluster is only asked when a chart is affected; when none can be reached
//! that is said in one line and the files (or the defaults) are used.
//!
//! From files, a HelmRelease deploys the chart its `spec.chart.spec.chart` names, by the chart's path in
//! the repository (a GitRepository source) or by its name (a Helm repository), or, for a `chartRef` to an
//! ExternalArtifact, the directory the ArtifactGenerator of the files copies into that artifact as the
//! chart (Cozystack's packages). Files inside the repository are read at both sides, so a HelmRelease
//! whose own values or valuesFrom sources changed is reviewed even where its chart did not, and from the
//! files, where the change is, even when the cluster has a HelmRelease of that name.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::affected::Touched;
use super::charts::Chart;
use super::report::Release;
use super::sides::{Side, Sides};
use crate::cluster::Cluster;
use crate::flux::{HelmRelease, Objects};
use crate::source::gitref::{Listed, is_under};
use crate::source::release_file::{ReleaseFiles, is_stdin};
use crate::support::error::{Error, Result};

/// One release of one chart to render at both sides.
pub struct Job {
    /// Index into the charts.
    pub chart: usize,
    pub release: Release,
    /// The HelmRelease, for a release of the cluster.
    pub helmrelease: Option<Box<HelmRelease>>,
}

/// What the jobs render from, besides the charts.
pub struct Assigned {
    pub jobs: Vec<Job>,
    /// The release files at the old and the new side, when releases come from files.
    pub files: Option<(ReleaseFiles, ReleaseFiles)>,
    /// The cluster the releases come from, when they do.
    pub cluster: Option<Cluster>,
}

/// A HelmRelease of the files: `(namespace, name)`.
type Key = (String, String);

/// The HelmRelease files at both sides, parsed.
pub struct Files {
    old: ReleaseFiles,
    new: ReleaseFiles,
    /// Whether every file is the same at both sides (then no release changed by its own inputs).
    same: bool,
}

/// Reads and parses the release files `paths` at both sides (nothing without any). A path that is at
/// neither side is an error. The parsing runs on a thread of its own, beside the rest of the review.
pub async fn read(sides: &Sides, paths: &[PathBuf]) -> Result<Option<Files>> {
    if paths.is_empty() {
        return Ok(None);
    }
    for path in paths.iter().filter(|p| !is_stdin(p)) {
        let in_repo = sides.repo.relative(path).or_else(|| sides.scope(Path::new("."), path).ok());
        let found = match &in_repo {
            Some(rel) => [&sides.old, &sides.new].iter().any(|s| s.listing.under(rel).next().is_some()),
            None => path.exists(),
        };
        if !found {
            return Err(Error::Failed(format!(
                "--release-file {}: no such file or directory, at {} or in {}",
                path.display(),
                sides.old.label,
                sides.new.label
            )));
        }
    }
    let (old, new) = tokio::try_join!(read_texts(sides, &sides.old, paths), read_texts(sides, &sides.new, paths))?;
    let parsed = tokio::task::spawn_blocking(move || {
        let same = old == new;
        let mut parsed = std::collections::HashMap::new();
        Files { old: parse(old, &mut parsed), new: parse(new, &mut parsed), same }
    });
    parsed.await.map_err(|e| Error::Failed(format!("reading the release files: {e}"))).map(Some)
}

/// The jobs for the `touched` charts (and the charts of HelmRelease files whose releases changed), in
/// chart order and release order.
pub async fn assign(
    charts: &[Chart],
    touched: &[Touched],
    cluster: Option<&(crate::cluster::ClusterOptions, crate::sets::release_set::Selection)>,
    files: Option<Files>,
) -> Result<Assigned> {
    let (of_files, changed) = files.as_ref().map(|f| file_releases(&f.old, &f.new, f.same, charts)).unwrap_or_default();
    let files = files.map(|f| (f.old, f.new));
    let touched_charts: BTreeSet<usize> = touched.iter().map(|t| t.chart).collect();
    let reviewed: BTreeSet<usize> = touched_charts.iter().chain(changed.keys()).copied().collect();
    let cluster = match cluster {
        Some((options, selection)) if !reviewed.is_empty() => match connect_and_list(options, selection).await {
            Ok(found) => Some(found),
            Err(e) => {
                let instead = if files.is_some() {
                    "the HelmRelease files are used"
                } else {
                    "each chart is shown with its own defaults"
                };
                crate::support::output::progress::warning(format!(
                    "no HelmReleases from a cluster ({e}): {instead} (--offline reads no cluster)"
                ));
                None
            }
        },
        _ => None,
    };
    let mut jobs = Vec::new();
    for chart in reviewed {
        let names = charts[chart].names();
        let changed_here = changed.get(&chart).cloned().unwrap_or_default();
        let in_cluster: Vec<&HelmRelease> = cluster
            .iter()
            .flat_map(|(_, listed)| listed.iter().filter(|hr| names.iter().any(|n| hr.deploys(n))))
            .filter(|_| touched_charts.contains(&chart))
            .collect();
        let before = jobs.len();
        for hr in &in_cluster {
            let (namespace, name) = crate::sets::release_set::key(hr);
            if !changed_here.contains(&(namespace.clone(), name.clone())) {
                jobs.push(Job {
                    chart,
                    release: Release::Cluster { namespace, name },
                    helmrelease: Some(Box::new((*hr).clone())),
                });
            }
        }
        // A changed chart: all its releases; a chart reviewed for a release whose own inputs changed:
        // that release.
        let from_files: BTreeSet<Key> = if in_cluster.is_empty() && touched_charts.contains(&chart) {
            of_files.get(&chart).cloned().unwrap_or_default()
        } else {
            changed_here
        };
        jobs.extend(from_files.into_iter().map(|(namespace, name)| Job {
            chart,
            release: Release::File { namespace, name },
            helmrelease: None,
        }));
        if jobs.len() == before {
            jobs.push(Job { chart, release: Release::Defaults, helmrelease: None });
        }
    }
    jobs.sort_by(|a, b| (a.chart, &a.release).cmp(&(b.chart, &b.release)));
    Ok(Assigned { jobs, files, cluster: cluster.map(|(c, _)| c) })
}

/// The HelmReleases of the files at either side by the chart they deploy, and of those the ones whose
/// own inputs (the object, its valuesFrom sources) differ between the sides (none when the files are
/// the `same` at both).
fn file_releases(
    old: &ReleaseFiles,
    new: &ReleaseFiles,
    same: bool,
    charts: &[Chart],
) -> (BTreeMap<usize, BTreeSet<Key>>, BTreeMap<usize, BTreeSet<Key>>) {
    let mut all: BTreeMap<usize, BTreeSet<Key>> = BTreeMap::new();
    let mut changed: BTreeMap<usize, BTreeSet<Key>> = BTreeMap::new();
    let sides: &[(&ReleaseFiles, &ReleaseFiles)] = if same { &[(new, old)] } else { &[(old, new), (new, old)] };
    for (files, other) in sides {
        for hr in files.helmreleases("default") {
            let (ns, name) = (hr.namespace().to_string(), hr.name().to_string());
            let Some(chart) = deployed_chart(files, &hr, charts) else { continue };
            if !same && inputs(files, &ns, &name) != inputs(other, &ns, &name) {
                changed.entry(chart).or_default().insert((ns.clone(), name.clone()));
            }
            all.entry(chart).or_default().insert((ns, name));
        }
    }
    (all, changed)
}

/// The cluster, and the HelmReleases of the selection there (one LIST for every chart of the review).
async fn connect_and_list(
    options: &crate::cluster::ClusterOptions,
    selection: &crate::sets::release_set::Selection,
) -> Result<(crate::cluster::Cluster, Vec<HelmRelease>)> {
    let cluster = options.connect().await?;
    let objects = if selection.all_namespaces {
        Objects::<HelmRelease>::all(&cluster)
    } else {
        Objects::<HelmRelease>::namespaced(&cluster, &cluster.namespace)
    };
    let wanted: BTreeSet<&str> = selection.names.iter().map(String::as_str).collect();
    let listed = objects.list(selection.selector.as_deref()).await?;
    let listed = listed
        .into_iter()
        .filter(|hr| wanted.is_empty() || wanted.contains(kube::ResourceExt::name_any(hr).as_str()))
        .collect();
    Ok((cluster, listed))
}

/// What of HelmRelease `ns/name` decides its rendering besides the chart: the object and its
/// `valuesFrom` sources (None when the files do not have it; an error is its own value).
fn inputs(files: &ReleaseFiles, ns: &str, name: &str) -> Option<String> {
    let hr = files.helmrelease(name, Some(ns), "default").ok()?;
    let refs = files.values_from(&hr).map(|r| r.iter().map(|f| f.data.clone()).collect::<Vec<_>>());
    Some(format!("{}{:?}", serde_json::to_string(&hr.spec).unwrap_or_default(), refs.map_err(|e| e.to_string())))
}

/// The chart (an index into `charts`) that HelmRelease `hr` of the files deploys.
fn deployed_chart(files: &ReleaseFiles, hr: &HelmRelease, charts: &[Chart]) -> Option<usize> {
    let ns = hr.namespace();
    if let Some(template) = &hr.spec.chart {
        let wanted = template.spec.chart.trim();
        if wanted.contains('/') {
            let path = normal(wanted);
            return charts.iter().position(|c| c.path == path);
        }
        return charts.iter().position(|c| c.names().contains(wanted));
    }
    let chart_ref = hr.spec.chart_ref.as_ref()?;
    if chart_ref.kind != "ExternalArtifact" {
        return None;
    }
    let ref_ns = chart_ref.namespace.as_deref().filter(|n| !n.is_empty()).unwrap_or(ns);
    let path = generated_from(files, ref_ns, &chart_ref.name)?;
    charts.iter().position(|c| c.path == path)
}

/// The repository directory an ArtifactGenerator of the files copies into ExternalArtifact `ns/name` as
/// its chart: the first `copy` whose `from` is a whole directory (`@SOURCE/DIR/**`) and whose `to` is
/// the artifact's root or one directory of it.
fn generated_from(files: &ReleaseFiles, ns: &str, artifact: &str) -> Option<PathBuf> {
    files.objects("source.extensions.fluxcd.io", "ArtifactGenerator").find_map(|ag| {
        let ag_ns = ag.get("metadata").and_then(|m| m.get("namespace")).and_then(Value::as_str).unwrap_or("default");
        if ag_ns != ns {
            return None;
        }
        let artifacts = ag.get("spec")?.get("artifacts")?.as_array()?;
        let entry = artifacts.iter().find(|a| a.get("name").and_then(Value::as_str) == Some(artifact))?;
        entry.get("copy")?.as_array()?.iter().find_map(|c| {
            let from = c.get("from")?.as_str()?;
            let to = c.get("to")?.as_str()?.trim_end_matches('/');
            let dir = from.strip_prefix('@')?.split_once('/')?.1.strip_suffix("/**")?;
            let inside = to.strip_prefix("@artifact")?;
            (inside.matches('/').count() <= 1).then(|| normal(dir))
        })
    })
}

/// A repository path as written in a manifest (`./charts/app/`), by name.
fn normal(path: &str) -> PathBuf {
    Path::new(path.trim_start_matches("./").trim_end_matches('/'))
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect()
}

/// The release files at one side, each as a label and its text: those inside the repository as that
/// side has them (a directory: its YAML files, leaving out chart directories), the others as they are.
async fn read_texts(sides: &Sides, side: &Side, paths: &[PathBuf]) -> Result<Vec<(String, String)>> {
    let mut texts: Vec<(String, String)> = Vec::new();
    for path in paths {
        if is_stdin(path) {
            texts.extend(stdin_text()?);
            continue;
        }
        match sides.repo.relative(path).or_else(|| sides.scope(Path::new("."), path).ok()) {
            Some(rel) => {
                let charts: BTreeSet<PathBuf> = side
                    .listing
                    .entries
                    .keys()
                    .filter(|p| p.file_name().is_some_and(|n| n == "Chart.yaml"))
                    .filter_map(|p| p.parent().map(Path::to_path_buf))
                    .collect();
                let wanted: Vec<PathBuf> = side
                    .listing
                    .under(&rel)
                    .filter(|(p, l)| **l == Listed::File && (**p == rel || is_yaml(p)))
                    .filter(|(p, _)| !charts.iter().any(|c| is_under(p, c)))
                    .map(|(p, _)| p.clone())
                    .collect();
                let read = sides.read(side, &wanted).await?;
                for p in wanted {
                    if let Some(bytes) = read.get(&p) {
                        texts.push((p.display().to_string(), String::from_utf8_lossy(bytes).into_owned()));
                    }
                }
            }
            None => texts.extend(outside(path)?),
        }
    }
    Ok(texts)
}

/// The release files of `texts`, leaving out those that are not YAML (see [`ReleaseFiles::parse_each`]).
fn parse(
    texts: Vec<(String, String)>,
    parsed: &mut std::collections::HashMap<(String, String), std::result::Result<ReleaseFiles, String>>,
) -> ReleaseFiles {
    let (files, left_out) = ReleaseFiles::parse_each(texts, parsed);
    for (label, why) in left_out {
        tracing::debug!("release file {label} left out: {why}");
    }
    files
}

fn is_yaml(path: &Path) -> bool {
    path.extension().is_some_and(|x| x == "yaml" || x == "yml")
}

/// Standard input, read once for both sides.
fn stdin_text() -> Result<Vec<(String, String)>> {
    static STDIN: std::sync::OnceLock<std::result::Result<String, String>> = std::sync::OnceLock::new();
    let text = STDIN.get_or_init(|| {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text).map(|_| text).map_err(|e| e.to_string())
    });
    match text {
        Ok(t) => Ok(vec![("stdin".into(), t.clone())]),
        Err(e) => Err(Error::Failed(format!("cannot read --release-file -: {e}"))),
    }
}

/// A file or directory outside the repository: the same at both sides.
fn outside(path: &Path) -> Result<Vec<(String, String)>> {
    let meta = std::fs::metadata(path)
        .map_err(|e| Error::Failed(format!("cannot read --release-file {}: {e}", path.display())))?;
    if !meta.is_dir() {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Failed(format!("cannot read --release-file {}: {e}", path.display())))?;
        return Ok(vec![(path.display().to_string(), text)]);
    }
    let mut out = Vec::new();
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        entries.sort();
        if entries.iter().any(|p| p.file_name().is_some_and(|n| n == "Chart.yaml")) {
            continue;
        }
        for p in entries {
            if p.is_dir() {
                stack.push(p);
            } else if is_yaml(&p)
                && let Ok(text) = std::fs::read_to_string(&p)
            {
                out.push((p.display().to_string(), text));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(text: &str) -> ReleaseFiles {
        ReleaseFiles::parse(vec![("f.yaml".into(), text.into())]).unwrap()
    }

    #[test]
    fn an_artifact_generator_names_the_chart_directory_of_its_artifact() {
        let f = files(
            "apiVersion: source.extensions.fluxcd.io/v1beta1\nkind: ArtifactGenerator\nmetadata:\n  name: pkgs\n  namespace: cozy-system\nspec:\n  artifacts:\n  - name: other\n    copy:\n    - from: '@pkgs/apps/other/**'\n      to: '@artifact/other/'\n  - name: demo\n    copy:\n    - from: '@pkgs/apps/demo/**'\n      to: '@artifact/demo/'\n    - from: '@pkgs/library/lib/**'\n      to: '@artifact/demo/charts/lib/'\n",
        );
        assert_eq!(generated_from(&f, "cozy-system", "demo"), Some(PathBuf::from("apps/demo")));
        assert_eq!(generated_from(&f, "elsewhere", "demo"), None);
        assert_eq!(generated_from(&f, "cozy-system", "nothing"), None);
    }

    #[test]
    fn chart_paths_are_read_by_name() {
        assert_eq!(normal("./charts/app/"), PathBuf::from("charts/app"));
        assert_eq!(normal("charts/./app"), PathBuf::from("charts/app"));
    }
}
