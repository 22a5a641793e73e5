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

use super::affected::Touched;
use super::charts::Chart;
use super::report::Release;
use crate::cluster::Cluster;
use crate::flux::{HelmRelease, Objects};
use crate::platform;
use crate::source::artifact::Artifact;
use crate::source::git_sides::{Side, Sides};
use crate::source::gitref::{Listed, is_under};
use crate::source::package_source::{self, PackageRelease};
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
    /// The releases the PackageSources of the files define, at the old and the new side.
    pub packages: (Vec<PackageRelease>, Vec<PackageRelease>),
}

/// What decides which releases a change reaches, besides the charts and the files.
pub struct Reach<'a> {
    /// Every path that differs between the sides.
    pub changed: &'a BTreeSet<PathBuf>,
    /// The namespace of releases without one of their own (a chart's defaults, a component without
    /// `install`).
    pub namespace: &'a str,
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
    cluster: Option<&(crate::cluster::Connection, crate::sets::release_set::Selection)>,
    files: Option<Files>,
    reach: Reach<'_>,
) -> Result<Assigned> {
    let (of_files, changed) =
        files.as_ref().map(|f| file_releases(&f.old, &f.new, f.same, charts, reach.changed)).unwrap_or_default();
    let packages = files.as_ref().map(|f| package_releases(f, charts, reach.namespace)).unwrap_or_default();
    let of_packages = reached_packages(&packages, charts, touched, reach.changed);
    let files = files.map(|f| (f.old, f.new));
    let touched_charts: BTreeSet<usize> = touched.iter().map(|t| t.chart).collect();
    let reviewed: BTreeSet<usize> =
        touched_charts.iter().chain(changed.keys()).chain(of_packages.keys()).copied().collect();
    let cluster = match cluster {
        Some((connection, selection)) if !reviewed.is_empty() => match connect_and_list(connection, selection).await {
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
        if in_cluster.is_empty() {
            jobs.extend(of_packages.get(&chart).into_iter().flatten().cloned().map(|release| Job {
                chart,
                release,
                helmrelease: None,
            }));
        }
        // A chart the platform releases has its releases, reached or not: never its defaults.
        let packaged = packages.0.iter().chain(&packages.1).any(|p| p.chart == charts[chart].path);
        if jobs.len() == before && !packaged {
            jobs.push(Job { chart, release: Release::Defaults, helmrelease: None });
        }
    }
    jobs.sort_by(|a, b| (a.chart, &a.release).cmp(&(b.chart, &b.release)));
    Ok(Assigned { jobs, files, cluster: cluster.map(|(c, _)| c), packages })
}

/// The releases the PackageSources of the files define at each side, for the charts of the review.
fn package_releases(files: &Files, charts: &[Chart], namespace: &str) -> (Vec<PackageRelease>, Vec<PackageRelease>) {
    let at = |layout: fn(&Chart) -> bool| -> BTreeSet<PathBuf> {
        charts.iter().filter(|c| layout(c)).map(|c| c.path.clone()).collect()
    };
    let (old_charts, new_charts) = (at(|c| c.old.is_some()), at(|c| c.new.is_some()));
    (
        package_source::releases(&files.old, &old_charts, namespace),
        package_source::releases(&files.new, &new_charts, namespace),
    )
}

/// The package releases a change reaches, by chart: those whose definition differs between the sides,
/// and those that read a changed path. A release reads its chart as the chart's rules say (`touched`),
/// its libraries, and its own values files: not the values files only other variants of the chart name
/// (`values-hetzner.yaml` is not the azure variant's), nor `values.yaml` when its first values file
/// replaces it.
fn reached_packages(
    (old, new): &(Vec<PackageRelease>, Vec<PackageRelease>),
    charts: &[Chart],
    touched: &[Touched],
    changed: &BTreeSet<PathBuf>,
) -> BTreeMap<usize, BTreeSet<Release>> {
    let mut out: BTreeMap<usize, BTreeSet<Release>> = BTreeMap::new();
    let keys: BTreeSet<&package_source::Key> = old.iter().chain(new).map(|p| &p.key).collect();
    for key in keys {
        let (before, after) = (old.iter().find(|p| &p.key == key), new.iter().find(|p| &p.key == key));
        let Some(release) = after.or(before) else { continue };
        let Some(chart) = charts.iter().position(|c| c.path == release.chart) else { continue };
        let redefined = before.map(PackageRelease::definition) != after.map(PackageRelease::definition);
        let chart_paths: &[PathBuf] = touched.iter().find(|t| t.chart == chart).map_or(&[], |t| &t.paths);
        let siblings: Vec<&PackageRelease> =
            old.iter().chain(new).filter(|p| p.chart == release.chart && p.key != *key).collect();
        let reads = |p: &PathBuf| {
            [before, after].into_iter().flatten().any(|r| {
                if r.values_files.contains(p) {
                    return true;
                }
                if is_under(p, &r.chart) {
                    if p == &r.chart.join("values.yaml") {
                        return r.values_files.is_empty() && chart_paths.contains(p);
                    }
                    let others = siblings.iter().any(|s| s.values_files.contains(p));
                    return chart_paths.contains(p) && !others;
                }
                r.reads().any(|dir| is_under(p, &dir))
            })
        };
        if redefined || changed.iter().any(reads) {
            let shared = old.iter().chain(new).any(|p| {
                p.chart == release.chart
                    && p.key.package != key.package
                    && (&p.namespace, &p.name) == (&release.namespace, &release.name)
            });
            out.entry(chart).or_default().insert(Release::Package {
                namespace: release.namespace.clone(),
                name: release.name.clone(),
                key: key.clone(),
                shared,
            });
        }
    }
    out
}

/// The HelmReleases of the files at either side by the chart they deploy, and of those the ones whose
/// own inputs (the object, its valuesFrom sources, the artifact an ArtifactGenerator of the files builds
/// as its chart) differ between the sides, or whose artifact copies a `changed` path from outside its
/// chart (a library, a values file kept elsewhere; what the chart's own directory holds is the chart's
/// rules' to judge).
fn file_releases(
    old: &ReleaseFiles,
    new: &ReleaseFiles,
    same: bool,
    charts: &[Chart],
    changed_paths: &BTreeSet<PathBuf>,
) -> (BTreeMap<usize, BTreeSet<Key>>, BTreeMap<usize, BTreeSet<Key>>) {
    let mut all: BTreeMap<usize, BTreeSet<Key>> = BTreeMap::new();
    let mut changed: BTreeMap<usize, BTreeSet<Key>> = BTreeMap::new();
    let sides: &[(&ReleaseFiles, &ReleaseFiles)] = if same { &[(new, old)] } else { &[(old, new), (new, old)] };
    for (files, other) in sides {
        for hr in files.helmreleases("default") {
            let (ns, name) = (hr.namespace().to_string(), hr.name().to_string());
            let Some(chart) = deployed_chart(files, &hr, charts) else { continue };
            let copies_changed = Artifact::of_helmrelease(files, &hr).is_some_and(|artifact| {
                let outside = changed_paths.iter().filter(|p| !is_under(p, &charts[chart].path));
                outside.into_iter().any(|p| artifact.copies.iter().any(|c| is_under(p, &c.reads())))
            });
            if copies_changed || (!same && inputs(files, &ns, &name) != inputs(other, &ns, &name)) {
                changed.entry(chart).or_default().insert((ns.clone(), name.clone()));
            }
            all.entry(chart).or_default().insert((ns, name));
        }
    }
    (all, changed)
}

/// The cluster, and the HelmReleases of the selection there (one LIST for every chart of the review).
async fn connect_and_list(
    connection: &crate::cluster::Connection,
    selection: &crate::sets::release_set::Selection,
) -> Result<(crate::cluster::Cluster, Vec<HelmRelease>)> {
    let cluster = connection.get().await.map_err(|e| crate::support::error::Error::Failed(e.to_string()))?.clone();
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

/// What of HelmRelease `ns/name` decides its rendering besides the chart: the object, its `valuesFrom`
/// sources and the artifact its chart is built as (None when the files do not have it; an error is its own value).
fn inputs(files: &ReleaseFiles, ns: &str, name: &str) -> Option<String> {
    let hr = files.helmrelease(name, Some(ns), "default").ok()?;
    let refs = files.values_from(&hr).map(|r| r.iter().map(|f| f.data.clone()).collect::<Vec<_>>());
    let artifact = Artifact::of_helmrelease(files, &hr);
    let spec = serde_json::to_string(&hr.spec).unwrap_or_default();
    Some(format!("{spec}{:?}{artifact:?}", refs.map_err(|e| e.to_string())))
}

/// The chart (an index into `charts`) that HelmRelease `hr` of the files deploys.
fn deployed_chart(files: &ReleaseFiles, hr: &HelmRelease, charts: &[Chart]) -> Option<usize> {
    if let Some(template) = &hr.spec.chart {
        let wanted = template.spec.chart.trim();
        if wanted.contains('/') {
            let path = normal(wanted);
            return charts.iter().position(|c| c.path == path);
        }
        return charts.iter().position(|c| c.names().contains(wanted));
    }
    // A chartRef to an ExternalArtifact an ArtifactGenerator of the files makes: the directory it copies
    // into the artifact as its chart.
    let (_, path) = Artifact::of_helmrelease(files, hr)?.chart()?;
    charts.iter().position(|c| c.path == path)
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
                // The chart a path lies in under the path given (a path given inside a chart is read
                // whole: Cozystack keeps its PackageSources in its platform chart's `sources/`).
                let chart_of =
                    |p: &Path| charts.iter().filter(|c| is_under(p, c) && is_under(c, &rel) && **c != rel).max();
                let wanted: Vec<(PathBuf, bool)> = side
                    .listing
                    .under(&rel)
                    .filter(|(p, l)| **l == Listed::File && (**p == rel || is_yaml(p)))
                    .filter_map(|(p, _)| match chart_of(p) {
                        None => Some((p.clone(), false)),
                        Some(chart) => platform_file(p, chart).then(|| (p.clone(), true)),
                    })
                    .collect();
                let paths: Vec<PathBuf> = wanted.iter().map(|(p, _)| p.clone()).collect();
                let read = sides.read(side, &paths).await?;
                for (p, in_chart) in wanted {
                    let Some(bytes) = read.get(&p) else { continue };
                    let text = String::from_utf8_lossy(bytes).into_owned();
                    if !in_chart || defines_platform_objects(&text) {
                        texts.push((p.display().to_string(), text));
                    }
                }
            }
            None => texts.extend(outside(path)?),
        }
    }
    Ok(texts)
}

/// Whether `path`, inside `chart`, may hold a platform's own objects rather than what Helm renders: not
/// in `templates/`, `crds/` or `charts/`, and not the chart's `Chart.yaml`, `Chart.lock` or values files.
/// (Cozystack keeps its PackageSources in its platform chart's `sources/`, its ApplicationDefinitions in
/// each `*-rd` chart's `cozyrds/`.)
fn platform_file(path: &Path, chart: &Path) -> bool {
    let Ok(inside) = path.strip_prefix(chart) else { return false };
    let mut parts = inside.components();
    let first = parts.next().map(|c| c.as_os_str().to_string_lossy().into_owned()).unwrap_or_default();
    if parts.next().is_none() {
        return !(first == "Chart.yaml" || first == "Chart.lock" || first.starts_with("values"));
    }
    !matches!(first.as_str(), "templates" | "crds" | "charts")
}

/// Whether a file inside a chart defines a platform's objects that define releases (PackageSources,
/// ApplicationDefinitions): only those are read from inside a chart, the chart's other files being its own.
fn defines_platform_objects(text: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim_end();
        l == format!("kind: {}", platform::package_source::KIND)
            || l == format!("kind: {}", platform::application_definition::KIND)
    })
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
        let chart_of = |ns: &str, chart_ref: serde_json::Value| {
            let hr: HelmRelease = serde_json::from_value(serde_json::json!({
                "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
                "metadata": {"name": "r", "namespace": ns}, "spec": {"chartRef": chart_ref}
            }))
            .expect("a HelmRelease");
            Artifact::of_helmrelease(&f, &hr).and_then(|a| a.chart()).map(|(_, dir)| dir)
        };
        let demo = serde_json::json!({"kind": "ExternalArtifact", "name": "demo", "namespace": "cozy-system"});
        assert_eq!(chart_of("apps", demo), Some(PathBuf::from("apps/demo")));
        let here = serde_json::json!({"kind": "ExternalArtifact", "name": "demo"});
        assert_eq!(chart_of("cozy-system", here.clone()), Some(PathBuf::from("apps/demo")));
        assert_eq!(chart_of("elsewhere", here), None, "the ExternalArtifact is in the HelmRelease's namespace");
        let nothing = serde_json::json!({"kind": "ExternalArtifact", "name": "nothing", "namespace": "cozy-system"});
        assert_eq!(chart_of("apps", nothing), None);
    }

    #[test]
    fn chart_paths_are_read_by_name() {
        assert_eq!(normal("./charts/app/"), PathBuf::from("charts/app"));
        assert_eq!(normal("charts/./app"), PathBuf::from("charts/app"));
    }
}
