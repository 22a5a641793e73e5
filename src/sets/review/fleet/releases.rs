//! A fleet's HelmReleases, cluster by cluster: each one the builds of a cluster apply, at both sides,
//! with the objects of that side's builds (its values sources, its chart's source), and whether anything
//! its rendering reads differs between the sides.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::super::report::Release;
use crate::fleet::clusters::ClusterBuild;
use crate::flux::HelmRelease;
use crate::source::release_file::ReleaseFiles;

/// A HelmRelease of a cluster, at both sides.
pub(super) struct Job {
    pub(super) cluster: String,
    namespace: String,
    name: String,
    pub(super) old: Option<AtSide>,
    pub(super) new: Option<AtSide>,
}

/// A HelmRelease at one side, with the objects of that side's builds of its cluster.
pub(super) struct AtSide {
    kustomization: String,
    pub(super) hr: HelmRelease,
    /// The objects of that side's builds of the cluster, shared by its releases.
    pub(super) files: Arc<ReleaseFiles>,
    object: Map<String, Value>,
}

pub(super) fn of(cluster: &str, old: &ClusterBuild, new: &ClusterBuild) -> Vec<Job> {
    let side = |c: &ClusterBuild| -> BTreeMap<(String, String), AtSide> {
        let files = Arc::new(ReleaseFiles::from_objects(
            &format!("the builds of {cluster}"),
            c.objects().map(|(_, o)| o.clone()),
        ));
        c.objects()
            .filter(|(_, o)| is_helmrelease(o))
            .filter_map(|(k, o)| {
                let mut object = o.clone();
                let ns = namespace_of(&object);
                object["metadata"]["namespace"] = Value::String(ns.clone());
                let hr: HelmRelease = serde_json::from_value(Value::Object(object.clone())).ok()?;
                let name = hr.name().to_string();
                Some(((ns, name), AtSide { kustomization: k.key(), hr, files: Arc::clone(&files), object }))
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
    pub(super) fn changed(&self, paths: &BTreeSet<PathBuf>) -> bool {
        let (Some(o), Some(n)) = (&self.old, &self.new) else { return true };
        if o.object != n.object {
            return true;
        }
        let refs = |a: &AtSide| a.files.values_from(&a.hr).map_err(|e| e.to_string());
        if refs(o) != refs(n) {
            return true;
        }
        let source = |a: &AtSide| source_object(a);
        if source(o) != source(n) {
            return true;
        }
        let reads = [o, n].into_iter().flat_map(repository_reads).collect::<Vec<_>>();
        paths.iter().any(|p| reads.iter().any(|r| p.starts_with(r)))
    }

    /// Whether, at a side, its chart's source object or a `valuesFrom` source is not among the objects
    /// of the builds (it may be among what was not built).
    pub(super) fn wants_objects(&self) -> bool {
        [&self.old, &self.new].into_iter().flatten().any(|a| {
            let chart_from_source = repository_chart(&a.hr).is_none();
            (chart_from_source && source_object(a).is_none()) || a.files.values_from(&a.hr).is_err()
        })
    }

    pub(super) fn release(&self) -> Release {
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
    pub(super) fn chart_name(&self) -> String {
        let at = self.new.as_ref().or(self.old.as_ref());
        at.map(|a| a.hr.chart_name()).filter(|n| !n.is_empty()).unwrap_or_else(|| "(chart)".into())
    }
}

/// The source object the HelmRelease's chart comes from, as the builds have it.
fn source_object(a: &AtSide) -> Option<Map<String, Value>> {
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

/// The repository paths a chart of this repository is read from: its directory for a GitRepository, what
/// the ArtifactGenerator's copies read for an ExternalArtifact (none for a chart from a repository).
fn repository_reads(a: &AtSide) -> Vec<PathBuf> {
    if let Some(dir) = repository_chart(&a.hr) {
        return vec![dir];
    }
    generated(a).map(|g| g.reads()).unwrap_or_default()
}

/// The HelmRelease's chart as an ArtifactGenerator of the builds makes it, when its `chartRef` names such
/// an ExternalArtifact.
pub(super) fn generated(a: &AtSide) -> Option<crate::source::generated::Generated> {
    let artifact = crate::source::artifact::Artifact::of_helmrelease(&a.files, &a.hr)?;
    Some(crate::source::generated::Generated { hr: a.hr.clone(), artifact })
}

/// The repository directory of a chart that comes from a GitRepository (this repository).
pub(super) fn repository_chart(hr: &HelmRelease) -> Option<PathBuf> {
    let template = hr.spec.chart.as_ref()?;
    (template.spec.source_ref.kind == "GitRepository")
        .then(|| PathBuf::from(crate::fleet::kustomization::clean_path(&template.spec.chart)))
}
