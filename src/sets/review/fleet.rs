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
//! Charts render as they would without a cluster: the capabilities given (`--kube-version`,
//! `--api-versions`), lookup finding nothing, an install.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use futures::StreamExt as _;
use serde_json::{Map, Value};

use super::report::{Entry, FleetTally, Release};
use super::request::Request;
use super::sides::{Side, Sides};
use crate::cluster::manifests::ObjectId;
use crate::compare::diff::Plan;
use crate::compare::two_sides::{self, Caller, Renderer, View};
use crate::fleet::artifact::Artifact;
use crate::fleet::clusters::{self, ClusterBuild, Found, Ground};
use crate::flux::HelmRelease;
use crate::render::Helm;
use crate::resolve::ReleaseOrigin as At;
use crate::source::chart::{ChartDir, Checkout};
use crate::source::gitref::Listed;
use crate::source::release_file::ReleaseFiles;
use crate::support::error::{Error, Result};

/// A side's files, staged, with the Kustomizations and ArtifactGenerators they define.
struct Staged {
    artifact: Artifact,
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

/// Reviews the fleet repository: each cluster's releases and Kustomizations, and what was built and
/// rendered.
pub async fn review(
    helm: &Helm,
    self_exe: &Path,
    sides: &Sides,
    scope: &Path,
    req: &Request<'_>,
) -> Result<(Vec<Entry>, FleetTally)> {
    let kubectl = crate::render::locate_kubectl()?;
    let (old, new) = tokio::try_join!(stage(sides, &sides.old, scope), stage(sides, &sides.new, scope))?;
    let (old_entries, new_entries) = (clusters::entries(&old.found), clusters::entries(&new.found));
    let names: BTreeSet<&String> = old_entries.keys().chain(new_entries.keys()).collect();
    let (old_ground, new_ground) = (ground(&kubectl, &old, &sides.changed), ground(&kubectl, &new, &sides.changed));
    let mut built = Vec::new();
    for name in &names {
        let none = Vec::new();
        let o = clusters::build_cluster(&old_ground, old_entries.get(*name).unwrap_or(&none), None).await;
        let n = clusters::build_cluster(&new_ground, new_entries.get(*name).unwrap_or(&none), Some(&o)).await;
        built.push(((*name).clone(), o, n));
    }
    let renderer = Renderer::new(helm, self_exe, req.user, req.options, Caller::Review);
    let mut tally = FleetTally { clusters: built.len(), ..FleetTally::default() };
    let mut jobs = Vec::new();
    let mut entries = Vec::new();
    for (cluster, o, n) in &built {
        let labels = (sides.old.label.as_str(), sides.new.label.as_str());
        let (k_entries, counted) = kustomization_entries(cluster, o, n, labels, req);
        entries.extend(k_entries);
        tally.kustomizations += counted.0;
        tally.built += counted.1;
        let releases = releases(cluster, o, n);
        tally.releases += releases.len();
        jobs.extend(releases.into_iter().filter(|r| r.changed(&sides.changed)));
    }
    tally.rendered = jobs.len();
    let ctx = Ctx { renderer: &renderer, old: (&sides.old, &old), new: (&sides.new, &new), req };
    let ctx = &ctx;
    let roots = [old.artifact.root(), new.artifact.root()];
    let rendered: Vec<Entry> = futures::stream::iter(jobs.iter().map(|job| async move {
        let outcome = render(ctx, job).await.map_err(|e| one_line(&e.to_string(), roots));
        Entry { chart: PathBuf::from(job.chart_name()), release: job.release(), outcome }
    }))
    .buffered(req.concurrency.max(1))
    .collect()
    .await;
    let mut all: Vec<Entry> = rendered.into_iter().chain(entries).collect();
    all.sort_by_key(order);
    Ok((all, tally))
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

/// The ArtifactGenerators of the files.
fn generators(texts: &[(&Path, String)]) -> Vec<Map<String, Value>> {
    let mut out = Vec::new();
    for (_, text) in texts {
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

/// An entry per Kustomization built at both sides (its objects compared) or failing; and how many
/// Kustomizations there were and were built again.
fn kustomization_entries(
    cluster: &str,
    old: &ClusterBuild,
    new: &ClusterBuild,
    (old_label, new_label): (&str, &str),
    req: &Request<'_>,
) -> (Vec<Entry>, (usize, usize)) {
    let mut keys: Vec<String> = Vec::new();
    for b in old.builds.iter().chain(&new.builds) {
        if !keys.contains(&b.kustomization.key()) {
            keys.push(b.kustomization.key());
        }
    }
    let find = |c: &'_ ClusterBuild, key: &str| c.builds.iter().find(|b| b.kustomization.key() == key).cloned();
    let mut entries = Vec::new();
    let mut built = 0;
    for key in &keys {
        let (o, n) = (find(old, key), find(new, key));
        let again = n.as_ref().is_none_or(|b| b.built);
        built += again as usize;
        let failed = [&o, &n].iter().any(|b| b.as_ref().is_some_and(|b| b.outcome.is_err()));
        if !again && !failed {
            continue;
        }
        let objects =
            |b: &Option<clusters::Built>, label: &str| -> std::result::Result<Vec<(ObjectId, Value)>, String> {
                match b {
                    None => Ok(Vec::new()),
                    Some(b) => match &b.outcome {
                        Ok(objs) => Ok(objs
                            .iter()
                            .filter_map(|o| {
                                let v = Value::Object(o.clone());
                                Some((ObjectId::from_object(&v).ok()?, v))
                            })
                            .collect()),
                        Err(why) => Err(format!("{label}: {why}")),
                    },
                }
            };
        let outcome = objects(&o, old_label).and_then(|old_objs| {
            let new_objs = objects(&n, new_label)?;
            crate::compare::diff::plan_with(new_objs, old_objs, req.options).map_err(|e| e.to_string())
        });
        entries.push(Entry {
            chart: PathBuf::from("(objects)"),
            release: Release::Kustomization { cluster: cluster.to_string(), kustomization: key.clone() },
            outcome,
        });
    }
    (entries, (keys.len(), built))
}

/// A HelmRelease of a cluster, at both sides.
struct Job {
    cluster: String,
    namespace: String,
    name: String,
    old: Option<At1>,
    new: Option<At1>,
}

/// A HelmRelease at one side, with the objects of that side's builds of its cluster.
struct At1 {
    kustomization: String,
    hr: HelmRelease,
    files: ReleaseFiles,
    object: Map<String, Value>,
}

fn releases(cluster: &str, old: &ClusterBuild, new: &ClusterBuild) -> Vec<Job> {
    let side = |c: &ClusterBuild| -> BTreeMap<(String, String), At1> {
        let files =
            ReleaseFiles::from_objects(&format!("the builds of {cluster}"), c.objects().map(|(_, o)| o.clone()));
        c.objects()
            .filter(|(_, o)| is_helmrelease(o))
            .filter_map(|(k, o)| {
                let mut object = o.clone();
                let ns = namespace_of(&object);
                object["metadata"]["namespace"] = Value::String(ns.clone());
                let hr: HelmRelease = serde_json::from_value(Value::Object(object.clone())).ok()?;
                let name = hr.name().to_string();
                Some(((ns, name), At1 { kustomization: k.key(), hr, files: files.clone(), object }))
            })
            .collect()
    };
    let (mut o, mut n) = (side(old), side(new));
    let keys: BTreeSet<(String, String)> = o.keys().chain(n.keys()).cloned().collect();
    let failed = |c: &ClusterBuild| -> BTreeSet<String> {
        c.builds.iter().filter(|b| b.outcome.is_err()).map(|b| b.kustomization.key()).collect()
    };
    let (old_failed, new_failed) = (failed(old), failed(new));
    keys.into_iter()
        .map(|(namespace, name)| {
            let key = (namespace.clone(), name.clone());
            Job { cluster: cluster.to_string(), old: o.remove(&key), new: n.remove(&key), namespace, name }
        })
        // A release missing at a side where its Kustomization failed is not removed: the failure is that
        // Kustomization's row.
        .filter(|job| match (&job.old, &job.new) {
            (None, Some(a)) => !old_failed.contains(&a.kustomization),
            (Some(a), None) => !new_failed.contains(&a.kustomization),
            _ => true,
        })
        .collect()
}

fn is_helmrelease(o: &Map<String, Value>) -> bool {
    o.get("kind").and_then(Value::as_str) == Some(crate::flux::helmrelease::KIND)
        && o.get("apiVersion").and_then(Value::as_str).is_some_and(|v| v.starts_with(crate::flux::helmrelease::GROUP))
}

fn namespace_of(o: &Map<String, Value>) -> String {
    o.get("metadata")
        .and_then(|m| m.get("namespace"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .unwrap_or("default")
        .to_string()
}

impl Job {
    /// Whether anything its rendering reads differs between the sides: the HelmRelease, its `valuesFrom`
    /// sources, its chart's source object, or (a chart of this repository) the chart's files.
    fn changed(&self, paths: &BTreeSet<PathBuf>) -> bool {
        let (Some(o), Some(n)) = (&self.old, &self.new) else { return true };
        if o.object != n.object {
            return true;
        }
        let refs = |a: &At1| a.files.values_from(&a.hr).map_err(|e| e.to_string());
        if refs(o) != refs(n) {
            return true;
        }
        let source = |a: &At1| source_object(a);
        if source(o) != source(n) {
            return true;
        }
        match repository_chart(&n.hr) {
            Some(dir) => paths.iter().any(|p| p.starts_with(&dir)),
            None => false,
        }
    }

    fn release(&self) -> Release {
        let kustomization =
            self.new.as_ref().or(self.old.as_ref()).map(|a| a.kustomization.clone()).unwrap_or_default();
        Release::Fleet {
            cluster: self.cluster.clone(),
            kustomization,
            namespace: self.namespace.clone(),
            name: self.name.clone(),
        }
    }

    /// The chart as the HelmRelease names it (its name in the repository, or its path in this one).
    fn chart_name(&self) -> String {
        let at = self.new.as_ref().or(self.old.as_ref());
        at.map(|a| a.hr.chart_name()).filter(|n| !n.is_empty()).unwrap_or_else(|| "(chart)".into())
    }
}

/// The source object the HelmRelease's chart comes from, as the builds have it.
fn source_object(a: &At1) -> Option<Map<String, Value>> {
    let hr_ns = a.hr.namespace();
    let (kind, ns, name) = match (&a.hr.spec.chart_ref, &a.hr.spec.chart) {
        (Some(r), _) => (r.kind.clone(), r.namespace.clone(), r.name.clone()),
        (None, Some(t)) => {
            (t.spec.source_ref.kind.clone(), t.spec.source_ref.namespace.clone(), t.spec.source_ref.name.clone())
        }
        (None, None) => return None,
    };
    let ns = ns.filter(|n| !n.is_empty()).unwrap_or_else(|| hr_ns.to_string());
    let group = crate::flux::kind::Kind::lookup(&kind).map(|k| k.group).unwrap_or("source.toolkit.fluxcd.io");
    a.files
        .objects(group, &kind)
        .find(|o| {
            namespace_of(o) == ns
                && o.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str) == Some(name.as_str())
        })
        .cloned()
}

/// The repository directory of a chart that comes from a GitRepository (this repository).
fn repository_chart(hr: &HelmRelease) -> Option<PathBuf> {
    let template = hr.spec.chart.as_ref()?;
    (template.spec.source_ref.kind == "GitRepository")
        .then(|| PathBuf::from(crate::fleet::kustomization::clean_path(&template.spec.chart)))
}

struct Ctx<'a> {
    renderer: &'a Renderer<'a>,
    old: (&'a Side, &'a Staged),
    new: (&'a Side, &'a Staged),
    req: &'a Request<'a>,
}

/// A chart at one side, and what keeps it on disk.
enum Opened {
    Served(crate::source::served::Served),
    Dir(ChartDir),
}

impl Opened {
    fn chart(&self) -> &ChartDir {
        match self {
            Opened::Served(s) => &s.chart,
            Opened::Dir(c) => c,
        }
    }
}

async fn render(ctx: &Ctx<'_>, job: &Job) -> Result<Plan> {
    let (old, new) = tokio::try_join!(chart(ctx.old, job.old.as_ref()), chart(ctx.new, job.new.as_ref()))?;
    let side = |label: &'_ Side,
                at: Option<&'_ At1>|
     -> std::result::Result<(Option<Box<HelmRelease>>, Vec<crate::values::FetchedRef>), Error> {
        match at {
            Some(a) => {
                let refs = a.files.values_from(&a.hr).map_err(|e| Error::Failed(format!("{}: {e}", label.label)))?;
                Ok((Some(Box::new(a.hr.clone())), refs))
            }
            None => Ok((None, Vec::new())),
        }
    };
    let (o_hr, o_refs) = side(ctx.old.0, job.old.as_ref())?;
    let (n_hr, n_refs) = side(ctx.new.0, job.new.as_ref())?;
    let old_side = make_side(ctx.old.0, old.as_ref(), o_hr, o_refs);
    let new_side = make_side(ctx.new.0, new.as_ref(), n_hr, n_refs);
    ctx.renderer.plan(&old_side, &new_side, &View::Offline(&ctx.req.offline_view)).await
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
async fn chart((side, staged): (&Side, &Staged), at: Option<&At1>) -> Result<Option<Opened>> {
    let Some(a) = at else { return Ok(None) };
    let named = |e: Error| Error::Failed(format!("{}: {e}", side.label));
    if let Some(dir) = repository_chart(&a.hr) {
        let top = staged.artifact.root().to_path_buf();
        let path = top.join(&dir);
        let opened = ChartDir::open(&path).map_err(|e| named(e.into()))?;
        return Ok(Some(Opened::Dir(opened.in_checkout(Checkout { top, dir: path }))));
    }
    let served = crate::source::served::from_repository_offline(&a.files, &a.hr, None).await.map_err(named)?;
    Ok(Some(Opened::Served(served)))
}

/// An error on one line, the staged copies named by repository paths.
fn one_line(text: &str, roots: [&Path; 2]) -> String {
    let mut line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    for root in roots {
        line = line.replace(&format!("{}/", root.display()), "");
    }
    line
}
