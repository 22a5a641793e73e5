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
use crate::fleet::artifact::Artifact;
use crate::fleet::clusters::{self, ClusterBuild, Found, Ground};
use crate::fleet::kustomizer::Kustomizer;
use crate::render::Tools;
use crate::source::git_sides::{Side, Sides};
use crate::source::gitref::Listed;
use crate::support::error::{Error, Result};

/// A side's files, staged, with the Kustomizations and ArtifactGenerators they define.
pub(super) struct Staged {
    pub(super) artifact: Artifact,
    found: Vec<Found>,
    generators: Vec<Map<String, Value>>,
    /// The files that define a Kustomization or an ArtifactGenerator.
    defines: BTreeSet<PathBuf>,
    /// The turns of the builds in the staged files.
    turns: crate::fleet::turns::Turns,
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
pub async fn review(tools: &Tools, sides: &Sides, scope: &Path, req: &Request<'_>) -> Result<(Vec<Entry>, FleetTally)> {
    let kustomizer = Kustomizer::locate(tools).await?;
    let (old, new) = tokio::try_join!(stage(sides, &sides.old, scope), stage(sides, &sides.new, scope))?;
    let built = build_clusters(&kustomizer, sides, &old, &new).await;
    let home =
        home::find(req.releases.cluster.as_ref().map(|(connection, _)| connection), &clusters::entries(&new.found))
            .await;
    let (mut entries, jobs, tally) = rows(&built, sides, req);
    let staged = render::StagedSides { old: (&sides.old, &old), new: (&sides.new, &new) };
    entries.extend(render::all(tools, req, &staged, home.as_ref(), &jobs).await);
    entries.sort_by_key(order);
    Ok((entries, tally))
}

/// Each cluster built at both sides at once (what reads no change taken from the old side), then
/// settled: what one side built built at the other, what a change needs built at all; the clusters
/// side by side.
async fn build_clusters(
    kustomizer: &Kustomizer,
    sides: &Sides,
    old: &Staged,
    new: &Staged,
) -> Vec<(String, ClusterBuild, ClusterBuild)> {
    let (old_entries, new_entries) = (clusters::entries(&old.found), clusters::entries(&new.found));
    let names: BTreeSet<&String> = old_entries.keys().chain(new_entries.keys()).collect();
    let defer = !reaches_charts(sides, old, new);
    let old_ground = ground(kustomizer, old, &sides.changed, defer);
    let new_ground = ground(kustomizer, new, &sides.changed, defer);
    let (old_ground, new_ground) = (&old_ground, &new_ground);
    let none = Vec::new();
    let clusters = names.into_iter().map(|name| {
        let (old, new) = (old_entries.get(name).unwrap_or(&none), new_entries.get(name).unwrap_or(&none));
        async move {
            let (mut o, mut n) = clusters::build_both((old_ground, old), (new_ground, new)).await;
            clusters::settle(old_ground, &mut o, &mut n).await;
            if o.deferred() && releases::of(name, &o, &n).iter().any(|r| r.changed(&sides.changed) && r.wants_objects())
            {
                // A release to render reads an object of what was not built (its chart's source, values).
                clusters::complete(old_ground, &mut o, &mut n).await;
            }
            (name.clone(), o, n)
        }
    });
    // The clusters side by side: their builds share the staged trees by turns (crate::fleet::turns).
    futures::future::join_all(clusters).await
}

/// Whether a changed path lies in a chart of the repository or in what an ArtifactGenerator copies: a
/// release of any Kustomization may read it, whatever its build reads.
fn reaches_charts(sides: &Sides, old: &Staged, new: &Staged) -> bool {
    let charts: BTreeSet<&Path> = [&sides.old, &sides.new]
        .into_iter()
        .flat_map(|s| s.listing.entries.keys())
        .filter(|p| p.file_name().is_some_and(|n| n == "Chart.yaml"))
        .filter_map(|p| p.parent())
        .collect();
    let copied: Vec<PathBuf> = old
        .generators
        .iter()
        .chain(&new.generators)
        .filter_map(|g| g.get("spec")?.get("artifacts")?.as_array())
        .flatten()
        .filter_map(|a| a.get("copy")?.as_array())
        .flatten()
        .filter_map(crate::source::artifact::Copy::parse)
        .map(|c| c.reads())
        .collect();
    sides.changed.iter().any(|p| p.ancestors().any(|a| charts.contains(a)) || copied.iter().any(|c| p.starts_with(c)))
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
        let (rows, (kustomizations, rebuilt, unbuilt)) = objects::entries(cluster, o, n, labels, req);
        entries.extend(rows);
        tally.kustomizations += kustomizations;
        tally.built += rebuilt;
        tally.unbuilt += unbuilt;
        let releases = releases::of(cluster, o, n);
        tally.releases += releases.len();
        jobs.extend(releases.into_iter().filter(|r| r.changed(&sides.changed)));
    }
    tally.rendered = jobs.len();
    (entries, jobs, tally)
}

fn ground<'a>(
    kustomizer: &'a Kustomizer,
    staged: &'a Staged,
    changed: &'a BTreeSet<PathBuf>,
    defer: bool,
) -> Ground<'a> {
    Ground {
        kustomizer,
        artifact: &staged.artifact,
        turns: &staged.turns,
        generators: &staged.generators,
        changed,
        defines: &staged.defines,
        defer,
    }
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
    let defines = found.iter().map(|f| f.file.clone()).chain(generators.iter().map(|(f, _)| f.clone())).collect();
    let generators = generators.into_iter().map(|(_, g)| g).collect();
    let artifact = Artifact::stage(contents).map_err(Error::Io)?;
    Ok(Staged { artifact, found, generators, defines, turns: Default::default() })
}

/// The ArtifactGenerators of the files, with the file of each (only a file that names the kind is
/// parsed).
fn generators(texts: &[(&Path, String)]) -> Vec<(PathBuf, Map<String, Value>)> {
    let mut out = Vec::new();
    for (file, text) in texts.iter().filter(|(_, t)| t.contains(crate::source::artifact::GENERATOR_KIND)) {
        for doc in crate::cluster::manifests::split_documents(text) {
            if let Ok(o) = crate::values::parse_values(&doc.text, "a manifest")
                && o.get("kind").and_then(Value::as_str) == Some(crate::source::artifact::GENERATOR_KIND)
            {
                out.push((file.to_path_buf(), o));
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
