//! A review of a fleet repository: one whose files define Flux Kustomizations (`clusters/<name>/` and
//! the overlays they point at), the shape Flux recommends. Each side is built as kustomize-controller
//! builds it, cluster by cluster ([`crate::fleet`]); then, per cluster:
//!
//! - each HelmRelease the builds apply is a release of that cluster, rendered at both sides when its
//!   HelmRelease, its `valuesFrom` sources or its chart's source changed (else not rendered), its chart
//!   from where Flux gets it: a HelmRepository's or OCIRepository's (fetched, cached by digest), or this
//!   repository's directory for a GitRepository;
//! - each Kustomization built again (it reads what changed) compares what it applies as objects,
//!   Secrets masked, so that a plain manifest's change is seen too.
//!
//! The cluster that is reachable, when it runs one of the fleet's clusters (see `home`), renders that
//! cluster's releases with its capabilities and lookups; the others render without a cluster.

mod home;
mod objects;
mod releases;
mod render;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::report::{Entry, FleetTally, Release};
use super::request::Request;
use super::sides::{Side, Sides};
use crate::fleet::artifact::Artifact;
use crate::fleet::clusters::{self, ClusterBuild, Found, Ground};
use crate::render::Helm;
use crate::source::gitref::Listed;
use crate::support::error::{Error, Result};

/// A side's files, staged, with the Kustomizations and ArtifactGenerators they define.
pub(super) struct Staged {
    pub(super) artifact: Artifact,
    found: Vec<Found>,
    generators: Vec<Map<String, Value>>,
}

/// The Kustomizations of the repository under `scope` at either side (none: not a fleet repository).
pub async fn found(sides: &Sides, scope: &Path) -> Result<bool> {
    for side in [&sides.old, &sides.new] {
        let yamls = yaml_files(side, scope);
        let texts = sides.read(side, &yamls).await?;
        let texts =
            texts.iter().map(|(p, b)| (p.as_path(), String::from_utf8_lossy(b).into_owned())).collect::<Vec<_>>();
        if !clusters::find(texts.iter().map(|(p, t)| (*p, t.as_str()))).is_empty() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The YAML files under `scope` outside chart directories (whose templates are not manifests).
fn yaml_files(side: &Side, scope: &Path) -> Vec<PathBuf> {
    let entries = &side.listing.entries;
    let charts: BTreeSet<&Path> = entries
        .keys()
        .filter(|p| p.file_name().is_some_and(|n| n == "Chart.yaml"))
        .filter_map(|p| p.parent())
        .collect();
    entries
        .iter()
        .filter(|(p, l)| **l == Listed::File && p.starts_with(scope))
        .map(|(p, _)| p)
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .filter(|p| !p.ancestors().skip(1).any(|a| charts.contains(a)))
        .cloned()
        .collect()
}

/// Reviews the fleet repository: each side staged and built cluster by cluster, the rows of what the
/// builds apply, and the releases that read a change rendered.
pub async fn review(
    helm: &Helm,
    self_exe: &Path,
    sides: &Sides,
    scope: &Path,
    req: &Request<'_>,
) -> Result<(Vec<Entry>, FleetTally)> {
    let kubectl = crate::render::locate_kubectl()?;
    let (old, new) = tokio::try_join!(stage(sides, &sides.old, scope), stage(sides, &sides.new, scope))?;
    let built = build_clusters(&kubectl, sides, &old, &new).await;
    let home =
        home::find(req.releases.cluster.as_ref().map(|(options, _)| options), &clusters::entries(&new.found)).await;
    let (mut entries, jobs, tally) = rows(&built, sides, req);
    let staged = render::StagedSides { old: (&sides.old, &old), new: (&sides.new, &new) };
    entries.extend(render::all(helm, self_exe, req, &staged, home.as_ref(), &jobs).await);
    entries.sort_by_key(order);
    Ok((entries, tally))
}

/// Each cluster built at the old side, then at the new one (what reads no change taken from the old).
async fn build_clusters(
    kubectl: &Path,
    sides: &Sides,
    old: &Staged,
    new: &Staged,
) -> Vec<(String, ClusterBuild, ClusterBuild)> {
    let (old_entries, new_entries) = (clusters::entries(&old.found), clusters::entries(&new.found));
    let names: BTreeSet<&String> = old_entries.keys().chain(new_entries.keys()).collect();
    let (old_ground, new_ground) = (ground(kubectl, old, &sides.changed), ground(kubectl, new, &sides.changed));
    let mut built = Vec::new();
    for name in names {
        let none = Vec::new();
        let o = clusters::build_cluster(&old_ground, old_entries.get(name).unwrap_or(&none), None).await;
        let n = clusters::build_cluster(&new_ground, new_entries.get(name).unwrap_or(&none), Some(&o)).await;
        built.push((name.clone(), o, n));
    }
    built
}

/// The Kustomizations' rows, the releases to render, and the tally.
fn rows(
    built: &[(String, ClusterBuild, ClusterBuild)],
    sides: &Sides,
    req: &Request<'_>,
) -> (Vec<Entry>, Vec<releases::Job>, FleetTally) {
    let mut tally = FleetTally { clusters: built.len(), ..FleetTally::default() };
    let (mut entries, mut jobs) = (Vec::new(), Vec::new());
    let labels = (sides.old.label.as_str(), sides.new.label.as_str());
    for (cluster, o, n) in built {
        let (rows, (kustomizations, rebuilt)) = objects::entries(cluster, o, n, labels, req);
        entries.extend(rows);
        tally.kustomizations += kustomizations;
        tally.built += rebuilt;
        let releases = releases::of(cluster, o, n);
        tally.releases += releases.len();
        jobs.extend(releases.into_iter().filter(|r| r.changed(&sides.changed)));
    }
    tally.rendered = jobs.len();
    (entries, jobs, tally)
}

fn ground<'a>(kubectl: &'a Path, staged: &'a Staged, changed: &'a BTreeSet<PathBuf>) -> Ground<'a> {
    Ground { kubectl, root: staged.artifact.root(), generators: &staged.generators, changed }
}

/// Rows by cluster, the releases before the Kustomizations' objects.
fn order(e: &Entry) -> (String, u8, String) {
    let (cluster, _) = e.release.fleet().unwrap_or_default();
    (cluster.to_string(), matches!(e.release, Release::Kustomization { .. }) as u8, e.release.label())
}

async fn stage(sides: &Sides, side: &Side, scope: &Path) -> Result<Staged> {
    let files: Vec<PathBuf> =
        side.listing.entries.iter().filter(|(_, l)| **l == Listed::File).map(|(p, _)| p.clone()).collect();
    let contents = sides.read(side, &files).await?;
    let yamls: BTreeSet<PathBuf> = yaml_files(side, scope).into_iter().collect();
    let texts: Vec<(&Path, String)> = contents
        .iter()
        .filter(|(p, _)| yamls.contains(*p))
        .map(|(p, b)| (p.as_path(), String::from_utf8_lossy(b).into_owned()))
        .collect();
    let found = clusters::find(texts.iter().map(|(p, t)| (*p, t.as_str())));
    let generators = generators(&texts);
    let artifact = Artifact::stage(contents).map_err(Error::Io)?;
    Ok(Staged { artifact, found, generators })
}

/// The ArtifactGenerators of the files (only a file that names the kind is parsed).
fn generators(texts: &[(&Path, String)]) -> Vec<Map<String, Value>> {
    let mut out = Vec::new();
    for (_, text) in texts.iter().filter(|(_, t)| t.contains(crate::source::artifact::GENERATOR_KIND)) {
        for doc in crate::cluster::manifests::split_documents(text) {
            if let Ok(o) = crate::values::parse_values(&doc.text, "a manifest")
                && o.get("kind").and_then(Value::as_str) == Some(crate::source::artifact::GENERATOR_KIND)
            {
                out.push(o);
            }
        }
    }
    out
}

/// An error on one line, the staged copies named by repository paths.
pub(super) fn one_line(text: &str, roots: [&Path; 2]) -> String {
    let mut line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    for root in roots {
        line = line.replace(&format!("{}/", root.display()), "");
    }
    line
}
