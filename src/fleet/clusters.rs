//! A fleet repository's clusters and what kustomize-controller applies to each, at one side of a change:
//!
//! - [`find`]: the Flux Kustomizations its YAML files define.
//! - [`entries`]: those no other Kustomization's path holds are where a cluster's reconciliation starts
//!   (`clusters/staging/flux-system/gotk-sync.yaml`, whose path `./clusters/staging` holds its own file);
//!   a cluster is named by that path, or by the directory of its entries' files when they lie outside
//!   their paths (`clusters/staging/apps.yaml` without a `flux-system`).
//! - [`build_both`]: at each side, each entry built, then each Kustomization its build applies (nested,
//!   in order), as kustomize-controller would build it with the objects built before it applied: its source (a
//!   GitRepository is this repository; an ExternalArtifact the artifact an ArtifactGenerator of the
//!   builds makes of it), its `postBuild` variables read from the ConfigMaps and Secrets applied before
//!   it; both sides at once. A Kustomization that reads nothing that changed and is the same at the old
//!   side is not built again at the new one: the old side's objects are its own.
//! - Not built at all (deferred): a Kustomization of this repository that reads nothing that changed
//!   and no file defining a Kustomization or an ArtifactGenerator: nothing it applies can differ
//!   between the sides, and it leads to no other Kustomization. [`settle`] and [`complete`] build it
//!   after all when something that changed needs its objects (a source or values object a changed one
//!   redefines, a variable source, a release to render), or when the other side builds it.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde_json::{Map, Value};
use tokio::sync::Notify;

use super::artifact::Artifact;
use super::build::{self, BuildError, PostBuild};
use super::kustomization::{Kustomization, SubstituteReference};
use super::kustomizer::Kustomizer;
use super::reads::Reads;
use super::substitute::Variables;
use super::turns::Turns;

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
    /// Not built at either side (see the module's docs): its objects are unknown, `outcome` empty.
    pub deferred: bool,
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
    pub kustomizer: &'a Kustomizer,
    /// The side's files, staged as source-controller archives them.
    pub artifact: &'a Artifact,
    /// The turns of the builds in `root`.
    pub turns: &'a Turns,
    /// The ArtifactGenerators the repository's files define.
    pub generators: &'a [Map<String, Value>],
    /// Repository paths that differ between the sides.
    pub changed: &'a BTreeSet<PathBuf>,
    /// The side's files that define a Kustomization or an ArtifactGenerator.
    pub defines: &'a BTreeSet<PathBuf>,
    /// Whether a Kustomization that reads nothing that changed may be left unbuilt (false when what
    /// changed may reach releases through another way than the builds, a chart of the repository).
    pub defer: bool,
}

impl Ground<'_> {
    /// The top of the side's staged files.
    pub fn root(&self) -> &Path {
        self.artifact.root()
    }

    /// The staged tree with every file `reads` covers written, and the turns of its builds.
    fn staged(&self, reads: &Reads) -> std::io::Result<(&Path, &Turns)> {
        let (dirs, files) = reads.paths();
        self.artifact.ensure(dirs.chain(files).map(PathBuf::as_path))?;
        Ok((self.root(), self.turns))
    }
}

/// A cluster's builds at the old side as they are made, so that the new side, built at the same time,
/// takes from them what reads nothing that changed (and waits for them only then).
#[derive(Default)]
struct Progress {
    builds: RefCell<Vec<Built>>,
    done: Cell<bool>,
    grown: Notify,
}

impl Progress {
    fn publish(&self, built: &Built) {
        self.builds.borrow_mut().push(built.clone());
        self.grown.notify_waiters();
    }

    fn finish(&self) {
        self.done.set(true);
        self.grown.notify_waiters();
    }

    /// The build of `k` at this side once it is made; None when the side ends without it.
    async fn of(&self, k: &Kustomization) -> Option<Built> {
        loop {
            // Created before looking, so that a build published in between still wakes it.
            let grown = self.grown.notified();
            if let Some(b) = self.builds.borrow().iter().find(|b| b.kustomization.key() == k.key()) {
                return Some(b.clone());
            }
            if self.done.get() {
                return None;
            }
            grown.await;
        }
    }
}

/// Which side a cluster is built at: the old one publishes its builds as it goes, the new one takes
/// from them.
#[derive(Clone, Copy)]
enum Pairing<'a> {
    Old(&'a Progress),
    New(&'a Progress),
}

/// Builds a cluster at both sides at once: the old side from `old_entries`, the new one from
/// `new_entries`, taking from the old what reads nothing that changed and is the same.
pub async fn build_both(
    (old_ground, old_entries): (&Ground<'_>, &[Kustomization]),
    (new_ground, new_entries): (&Ground<'_>, &[Kustomization]),
) -> (ClusterBuild, ClusterBuild) {
    let progress = Progress::default();
    let old = async {
        let old = build_cluster(old_ground, old_entries, Pairing::Old(&progress)).await;
        progress.finish();
        old
    };
    tokio::join!(old, build_cluster(new_ground, new_entries, Pairing::New(&progress)))
}

/// Builds a cluster at one side from its `entries`.
async fn build_cluster(ground: &Ground<'_>, entries: &[Kustomization], pairing: Pairing<'_>) -> ClusterBuild {
    let mut out = ClusterBuild::default();
    let mut queue: VecDeque<Kustomization> = entries.iter().cloned().collect();
    let mut seen = BTreeSet::new();
    while let Some(k) = queue.pop_front() {
        if !seen.insert(k.key()) {
            continue;
        }
        if out.deferred() && variables(&k, &out).is_err() {
            // A variable source may be among what was not built.
            materialize(ground, &mut out, |_| true).await;
        }
        let built = build_one(ground, &k, &out, pairing).await;
        if let Ok(objects) = &built.outcome {
            for o in objects.iter().filter(|o| Kustomization::is(o)) {
                if let Ok(child) = Kustomization::from_object(o, "default") {
                    queue.push_back(child);
                }
            }
        }
        if let Pairing::Old(progress) = pairing {
            progress.publish(&built);
        }
        out.builds.push(built);
    }
    out
}

async fn build_one(ground: &Ground<'_>, k: &Kustomization, so_far: &ClusterBuild, pairing: Pairing<'_>) -> Built {
    let failed = |why: String, reads: Reads| Built {
        kustomization: k.clone(),
        outcome: Err(why),
        reads,
        built: true,
        deferred: false,
        vars: None,
    };
    let source = match k.spec.source_ref.kind.as_str() {
        // An artifact is cut from the tree as no build has written it.
        "ExternalArtifact" => {
            let _look = ground.turns.look().await;
            Source::of(ground, k, so_far)
        }
        _ => Source::of(ground, k, so_far),
    };
    let reads = match &source {
        Ok(Source::Repository) => ground.turns.reads(ground.root(), k).await,
        // An artifact's paths are not the repository's: seen as reading everything its copies read.
        Ok(Source::Artifact { reads, .. }) => reads.clone(),
        Err(_) => Reads::default(),
    };
    let source = match source {
        Ok(source) => source,
        Err(why) => return failed(why, reads),
    };
    let vars = match variables(k, so_far) {
        Ok(vars) => vars,
        Err(why) => return failed(why, reads),
    };
    let untouched = |r: &Reads| !ground.changed.iter().any(|c| r.touches(c));
    match pairing {
        Pairing::New(old) if untouched(&reads) => {
            let same = old.of(k).await.filter(|b| b.kustomization == *k && b.vars == vars && untouched(&b.reads));
            if let Some(same) = same {
                let (outcome, deferred) = (same.outcome, same.deferred);
                return Built { kustomization: k.clone(), outcome, reads, built: false, deferred, vars };
            }
        }
        Pairing::Old(_) => {
            let leads_nowhere = !reads.remote() && !ground.defines.iter().any(|f| reads.touches(f));
            if ground.defer && matches!(source, Source::Repository) && untouched(&reads) && leads_nowhere {
                let outcome = Ok(Vec::new());
                return Built { kustomization: k.clone(), outcome, reads, built: false, deferred: true, vars };
            }
        }
        Pairing::New(_) => {}
    }
    let post = vars.clone().map(|vars| PostBuild { vars, always: always(k) });
    let outcome = match &source {
        Source::Repository => match ground.staged(&reads) {
            Ok(tree) => build::build(ground.kustomizer, tree, (k, &reads), post.as_ref()).await,
            Err(e) => Err(BuildError::Generate(e.to_string())),
        },
        Source::Artifact { dir, .. } => {
            // Its own tree, and paths of its own: what it reads there is everything.
            let all = Reads::of_kustomization(dir.path(), k);
            build::build(ground.kustomizer, (dir.path(), &Turns::default()), (k, &all), post.as_ref()).await
        }
    };
    Built {
        kustomization: k.clone(),
        outcome: outcome.map_err(|e: BuildError| e.to_string()),
        reads,
        built: true,
        deferred: false,
        vars,
    }
}

impl ClusterBuild {
    /// Whether a Kustomization of the cluster was left unbuilt.
    pub fn deferred(&self) -> bool {
        self.builds.iter().any(|b| b.deferred)
    }

    /// The outcomes of `other` (the same cluster at the other side, settled) for what was deferred here
    /// and built there: the same Kustomization, reading nothing that changed.
    fn take_from(&mut self, other: &ClusterBuild) {
        for b in self.builds.iter_mut().filter(|b| b.deferred) {
            if let Some(there) = other.builds.iter().find(|o| o.kustomization == b.kustomization && !o.deferred) {
                b.outcome = there.outcome.clone();
                b.deferred = false;
            }
        }
    }
}

/// Builds the deferred Kustomizations of `cluster` that `which` names, in order (a deferred one is of
/// this repository, its variables known).
async fn materialize(ground: &Ground<'_>, cluster: &mut ClusterBuild, which: impl Fn(&Built) -> bool) {
    for b in cluster.builds.iter_mut().filter(|b| b.deferred && which(b)) {
        let post = b.vars.clone().map(|vars| PostBuild { vars, always: always(&b.kustomization) });
        let outcome = match ground.staged(&b.reads) {
            Ok(tree) => build::build(ground.kustomizer, tree, (&b.kustomization, &b.reads), post.as_ref()).await,
            Err(e) => Err(BuildError::Generate(e.to_string())),
        };
        b.outcome = outcome.map_err(|e| e.to_string());
        (b.built, b.deferred) = (true, false);
    }
}

/// After both sides of a cluster are built: what the new side built again is built at the old side too
/// (to compare), and everything deferred is built when a Kustomization built again changes an object
/// that releases or variables elsewhere may read (a source, a ConfigMap, a Secret).
pub async fn settle(old_ground: &Ground<'_>, old: &mut ClusterBuild, new: &mut ClusterBuild) {
    let again: BTreeSet<String> = new.builds.iter().filter(|b| b.built).map(|b| b.kustomization.key()).collect();
    materialize(old_ground, old, |b| again.contains(&b.kustomization.key())).await;
    let shared = |c: &ClusterBuild, key: &str| -> Vec<Map<String, Value>> {
        c.builds
            .iter()
            .filter(|b| b.kustomization.key() == key)
            .filter_map(|b| b.outcome.as_ref().ok())
            .flatten()
            .filter(|o| read_elsewhere(o))
            .cloned()
            .collect()
    };
    if old.deferred() && again.iter().any(|key| shared(old, key) != shared(new, key)) {
        materialize(old_ground, old, |_| true).await;
    }
    new.take_from(old);
}

/// Every deferred Kustomization of the cluster built (at the old side, taken by the new).
pub async fn complete(old_ground: &Ground<'_>, old: &mut ClusterBuild, new: &mut ClusterBuild) {
    materialize(old_ground, old, |_| true).await;
    new.take_from(old);
}

/// Whether an object may be read by what another Kustomization applies: a Flux source or artifact
/// generator (a release's chart), a ConfigMap or a Secret (values, variables).
fn read_elsewhere(o: &Map<String, Value>) -> bool {
    let api = o.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    let kind = o.get("kind").and_then(Value::as_str).unwrap_or_default();
    api.starts_with("source.toolkit.fluxcd.io/")
        || api.starts_with(crate::source::artifact::GENERATOR_GROUP)
        || (api == "v1" && (kind == "ConfigMap" || kind == "Secret"))
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
                let mut reads = Reads::default();
                for copy in &generator.copies {
                    reads.add_dir(copy.reads());
                }
                let dir =
                    crate::support::process::private_memory_dir("cozyhr-fleet-artifact-").map_err(|e| e.to_string())?;
                ground.staged(&reads).map_err(|e| e.to_string())?;
                generator.build(ground.root(), dir.path()).map_err(|e| e.to_string())?;
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
