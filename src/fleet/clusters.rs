//! A fleet repository's clusters and what kustomize-controller applies to each, at one side of a change:
//!
//! - [`find`]: the Flux Kustomizations its YAML files define.
//! - [`entries`]: those no other Kustomization's path holds are where a cluster's reconciliation starts
//!   (`clusters/staging/flux-system/gotk-sync.yaml`, whose path `./clusters/staging` holds its own file);
//!   a cluster is named by that path, or by the directory of its entries' files when they lie outside
//!   their paths (`clusters/staging/apps.yaml` without a `flux-system`).
//! - [`build_cluster`]: each entry built, then each Kustomization its build applies (nested, in order),
//!   as kustomize-controller would build it with the objects built before it applied: its source (a
//!   GitRepository is this repository; an ExternalArtifact the artifact an ArtifactGenerator of the
//!   builds makes of it), its `postBuild` variables read from the ConfigMaps and Secrets applied before
//!   it. A Kustomization that reads nothing that changed and is the same at the other side is not built
//!   again: the other side's objects are its own.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde_json::{Map, Value};

use super::build::{self, BuildError, PostBuild};
use super::kustomization::{Kustomization, SubstituteReference};
use super::reads::Reads;
use super::substitute::Variables;

/// A Kustomization defined in a file of the repository.
#[derive(Debug, Clone)]
pub struct Found {
    pub file: PathBuf,
    pub kustomization: Kustomization,
}

/// The Flux Kustomizations of `files` (repository path, text); files that are not YAML are passed over.
pub fn find<'a>(files: impl IntoIterator<Item = (&'a Path, &'a str)>) -> Vec<Found> {
    let mut out = Vec::new();
    // Most YAML of a repository is something else: only a file that names the API group is parsed.
    for (file, text) in files.into_iter().filter(|(_, text)| text.contains(super::kustomization::GROUP)) {
        for doc in crate::cluster::manifests::split_documents(text) {
            let Ok(object) = crate::values::parse_values(&doc.text, "a manifest") else { continue };
            if Kustomization::is(&object)
                && let Ok(kustomization) = Kustomization::from_object(&object, "default")
            {
                out.push(Found { file: file.to_path_buf(), kustomization });
            }
        }
    }
    out
}

/// Each cluster's name and the Kustomizations its reconciliation starts from, by name.
pub fn entries(found: &[Found]) -> BTreeMap<String, Vec<Kustomization>> {
    let mut clusters: BTreeMap<String, Vec<Kustomization>> = BTreeMap::new();
    for f in found {
        let held_by_another = found.iter().any(|other| {
            !std::ptr::eq(other, f)
                && from_repository(&other.kustomization)
                && holds(&other.kustomization.path(), &f.file)
        });
        if held_by_another {
            continue;
        }
        let own = f.kustomization.path();
        let name = if holds(&own, &f.file) && !own.is_empty() {
            own
        } else {
            f.file.parent().map(|p| p.display().to_string()).unwrap_or_default()
        };
        let list = clusters.entry(name).or_default();
        if !list.iter().any(|k| k.key() == f.kustomization.key()) {
            list.push(f.kustomization.clone());
        }
    }
    clusters
}

/// Whether a Kustomization's path is a path of this repository (its source a GitRepository), not of an
/// artifact cut out of it.
fn from_repository(k: &Kustomization) -> bool {
    k.spec.source_ref.kind == "GitRepository"
}

/// Whether the build of `path` reads `file` (it lies under it).
fn holds(path: &str, file: &Path) -> bool {
    path.is_empty() || file.starts_with(path)
}

/// One Kustomization built (or why not), and what its build reads.
#[derive(Debug, Clone)]
pub struct Built {
    pub kustomization: Kustomization,
    pub outcome: Result<Vec<Map<String, Value>>, String>,
    pub reads: Reads,
    /// Built at this side; false: the same as the other side's, taken from there.
    pub built: bool,
    /// Its variables (to tell a change of a substituteFrom source apart).
    vars: Option<Variables>,
}

/// A cluster at one side: every Kustomization its entries lead to, in build order.
#[derive(Debug, Clone, Default)]
pub struct ClusterBuild {
    pub builds: Vec<Built>,
}

impl ClusterBuild {
    /// Every object the cluster's Kustomizations apply, with the Kustomization (`namespace/name`) that
    /// applies it.
    pub fn objects(&self) -> impl Iterator<Item = (&Kustomization, &Map<String, Value>)> {
        self.builds
            .iter()
            .filter_map(|b| Some((&b.kustomization, b.outcome.as_ref().ok()?)))
            .flat_map(|(k, objs)| objs.iter().map(move |o| (k, o)))
    }
}

/// What building a side needs.
pub struct Ground<'a> {
    pub kubectl: &'a Path,
    /// The side's files, staged as source-controller archives them.
    pub root: &'a Path,
    /// The ArtifactGenerators the repository's files define.
    pub generators: &'a [Map<String, Value>],
    /// Repository paths that differ between the sides.
    pub changed: &'a BTreeSet<PathBuf>,
}

/// Builds a cluster from its `entries`, taking from `other` (the same cluster at the other side) what
/// it can.
pub async fn build_cluster(
    ground: &Ground<'_>,
    entries: &[Kustomization],
    other: Option<&ClusterBuild>,
) -> ClusterBuild {
    let mut out = ClusterBuild::default();
    let mut queue: VecDeque<Kustomization> = entries.iter().cloned().collect();
    let mut seen = BTreeSet::new();
    while let Some(k) = queue.pop_front() {
        if !seen.insert(k.key()) {
            continue;
        }
        let built = build_one(ground, &k, &out, other).await;
        if let Ok(objects) = &built.outcome {
            for o in objects.iter().filter(|o| Kustomization::is(o)) {
                if let Ok(child) = Kustomization::from_object(o, "default") {
                    queue.push_back(child);
                }
            }
        }
        out.builds.push(built);
    }
    out
}

async fn build_one(
    ground: &Ground<'_>,
    k: &Kustomization,
    so_far: &ClusterBuild,
    other: Option<&ClusterBuild>,
) -> Built {
    let failed = |why: String, reads: Reads| Built {
        kustomization: k.clone(),
        outcome: Err(why),
        reads,
        built: true,
        vars: None,
    };
    let source = match Source::of(ground, k, so_far) {
        Ok(source) => source,
        Err(why) => return failed(why, Reads::default()),
    };
    let reads = match &source {
        Source::Repository => Reads::of(ground.root, &k.path()),
        // An artifact's paths are not the repository's: seen as reading everything its copies read.
        Source::Artifact { reads, .. } => reads.clone(),
    };
    let vars = match variables(k, so_far) {
        Ok(vars) => vars,
        Err(why) => return failed(why, reads),
    };
    let same_elsewhere = other.and_then(|o| o.builds.iter().find(|b| b.kustomization == *k && b.vars == vars));
    if let Some(same) =
        same_elsewhere.filter(|b| !ground.changed.iter().any(|c| reads.touches(c) || b.reads.touches(c)))
    {
        return Built { kustomization: k.clone(), outcome: same.outcome.clone(), reads, built: false, vars };
    }
    let post = vars.clone().map(|vars| PostBuild { vars, always: always(k) });
    let outcome = match &source {
        Source::Repository => build::build(ground.kubectl, ground.root, k, post.as_ref()).await,
        Source::Artifact { dir, .. } => build::build(ground.kubectl, dir.path(), k, post.as_ref()).await,
    };
    Built {
        kustomization: k.clone(),
        outcome: outcome.map_err(|e: BuildError| e.to_string()),
        reads,
        built: true,
        vars,
    }
}

fn always(k: &Kustomization) -> bool {
    k.spec.post_build.as_ref().and_then(|p| p.substitute_strategy.as_deref()) == Some("Always")
}

/// Where a Kustomization's files are.
enum Source {
    /// This repository (a GitRepository).
    Repository,
    /// An ArtifactGenerator's artifact of this repository, built into `dir`.
    Artifact { dir: tempfile::TempDir, reads: Reads },
}

impl Source {
    fn of(ground: &Ground<'_>, k: &Kustomization, so_far: &ClusterBuild) -> Result<Source, String> {
        let r = &k.spec.source_ref;
        match r.kind.as_str() {
            "GitRepository" => Ok(Source::Repository),
            "ExternalArtifact" => {
                let ns = k.source_namespace();
                let built: Vec<&Map<String, Value>> = so_far.objects().map(|(_, o)| o).collect();
                let generator = ground
                    .generators
                    .iter()
                    .chain(built)
                    .filter(|g| is_generator(g) && namespace(g).is_none_or(|n| n == ns))
                    .find_map(|g| crate::source::artifact::Artifact::of_generator(g, &r.name))
                    .ok_or_else(|| {
                        format!("ExternalArtifact {ns}/{}: no ArtifactGenerator of this repository makes it", r.name)
                    })?;
                let dir = crate::support::process::private_dir("cozyhr-fleet-artifact-").map_err(|e| e.to_string())?;
                generator.build(ground.root, dir.path()).map_err(|e| e.to_string())?;
                let mut reads = Reads::default();
                for copy in &generator.copies {
                    reads.add_dir(copy.reads());
                }
                Ok(Source::Artifact { dir, reads })
            }
            other => Err(format!(
                "sourceRef {other} {}/{}: review builds Kustomizations of this repository (a GitRepository, or an ExternalArtifact an ArtifactGenerator makes of it)",
                k.source_namespace(),
                r.name
            )),
        }
    }
}

fn is_generator(o: &Map<String, Value>) -> bool {
    o.get("kind").and_then(Value::as_str) == Some(crate::source::artifact::GENERATOR_KIND)
}

fn namespace(o: &Map<String, Value>) -> Option<&str> {
    o.get("metadata").and_then(|m| m.get("namespace")).and_then(Value::as_str)
}

/// The variables of `k`'s `postBuild` (None without one): `substituteFrom` read from what was applied
/// before it, in order, then `substitute` over them.
fn variables(k: &Kustomization, so_far: &ClusterBuild) -> Result<Option<Variables>, String> {
    let Some(post) = &k.spec.post_build else { return Ok(None) };
    let mut vars = Variables::default();
    for r in &post.substitute_from {
        match source_data(r, k.namespace(), so_far) {
            Some(data) => vars.extend(data).map_err(|e| e.to_string())?,
            None if r.optional => {}
            None => {
                let plural = if r.kind == "Secret" { "secrets" } else { "configmaps" };
                return Err(format!(
                    "substitute from '{}/{}' error: {plural} \"{}\" not found",
                    r.kind, r.name, r.name
                ));
            }
        }
    }
    vars.extend(post.substitute.clone()).map_err(|e| e.to_string())?;
    Ok(Some(vars))
}

/// The data of a ConfigMap or Secret applied before, in `namespace`.
fn source_data(r: &SubstituteReference, namespace: &str, so_far: &ClusterBuild) -> Option<Vec<(String, String)>> {
    let object = so_far.objects().map(|(_, o)| o).find(|o| {
        o.get("apiVersion").and_then(Value::as_str) == Some("v1")
            && o.get("kind").and_then(Value::as_str) == Some(r.kind.as_str())
            && o.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str) == Some(r.name.as_str())
            && self::namespace(o).is_none_or(|n| n == namespace)
    })?;
    let data = object.get("data").and_then(Value::as_object).cloned().unwrap_or_default();
    Some(
        data.into_iter()
            .map(|(k, v)| {
                let text = v.as_str().unwrap_or_default();
                let value = if r.kind == "Secret" {
                    base64::engine::general_purpose::STANDARD
                        .decode(text)
                        .map(|b| String::from_utf8_lossy(&b).into_owned())
                        .unwrap_or_default()
                } else {
                    text.to_string()
                };
                (k, value)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(file: &str, name: &str, path: &str) -> Found {
        let text = format!(
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: {name}\n  namespace: flux-system\nspec:\n  path: {path}\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n"
        );
        find([(Path::new(file), text.as_str())]).remove(0)
    }

    #[test]
    fn clusters_start_where_no_other_path_holds_them() {
        let all = [
            found("clusters/staging/flux-system/gotk-sync.yaml", "flux-system", "./clusters/staging"),
            found("clusters/staging/apps.yaml", "apps", "./apps/staging"),
            found("clusters/production/flux-system/gotk-sync.yaml", "flux-system", "./clusters/production"),
            found("clusters/production/apps.yaml", "apps", "./apps/production"),
            found("tenants/blue/web.yaml", "web", "./tenants/blue/web"),
        ];
        let mut artifact = found("clusters/staging/dashboards.yaml", "dashboards", "./");
        artifact.kustomization.spec.source_ref.kind = "ExternalArtifact".into();
        let all: Vec<Found> = all.into_iter().chain([artifact]).collect();
        let clusters = entries(&all);
        let names: Vec<(&str, Vec<String>)> =
            clusters.iter().map(|(n, ks)| (n.as_str(), ks.iter().map(Kustomization::key).collect())).collect();
        assert_eq!(
            names,
            vec![
                ("clusters/production", vec!["flux-system/flux-system".to_string()]),
                ("clusters/staging", vec!["flux-system/flux-system".to_string()]),
                ("tenants/blue", vec!["flux-system/web".to_string()]),
            ]
        );
    }
}
