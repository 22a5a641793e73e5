//! The set of releases `--all` acts on: every HelmRelease that deploys one chart, so a change to the chart
//! can be diffed against, and applied to, all of its releases at once ([`diff`], [`apply`]).
//!
//! "Deploys this chart": the chart name of the release helm-controller last made (`status.history[0]`),
//! else, where no release exists yet, the chart its `spec.chart` template asks for. A HelmRelease with
//! neither (a `chartRef` never installed) is not counted: what it would deploy is not known without
//! fetching its source. The set comes from one LIST (of a namespace, or all with `-A`), narrowed by a
//! label selector and by names.

pub mod apply;
pub mod diff;

use std::collections::{BTreeMap, BTreeSet};

use kube::ResourceExt as _;

use crate::cluster::Cluster;
use crate::flux::{HelmRelease, Objects};
use crate::resolve::Resolver;
use crate::support::error::{Error, Result};

/// Which HelmReleases of the chart: where, which labels, which names.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Every namespace (`-A`), else the cluster's.
    pub all_namespaces: bool,
    /// `-l`: a label selector, as kubectl takes it.
    pub selector: Option<String>,
    /// Only these names (none: all).
    pub names: Vec<String>,
}

/// How many at a time: `--concurrency`, else one per core.
pub fn concurrency(asked: Option<usize>) -> usize {
    asked.filter(|n| *n > 0).unwrap_or_else(|| std::thread::available_parallelism().map_or(2, usize::from))
}

/// Whether `hr` deploys the chart named `chart` (see the module's words: [`HelmRelease::deploys`]).
pub fn deploys(hr: &HelmRelease, chart: &str) -> bool {
    hr.deploys(chart)
}

/// The HelmReleases of `selection` that deploy `chart`, sorted by namespace and name. None is an error.
pub async fn select(cluster: &Cluster, chart: &str, selection: &Selection) -> Result<Vec<HelmRelease>> {
    let set: Vec<HelmRelease> = listed(cluster, selection).await?.into_iter().filter(|hr| deploys(hr, chart)).collect();
    if set.is_empty() {
        let narrowed = match (&selection.selector, selection.names.is_empty()) {
            (Some(s), _) => format!(" with labels {s}"),
            (None, false) => format!(" named {}", selection.names.join(", ")),
            _ => String::new(),
        };
        return Err(Error::Failed(format!(
            "no HelmRelease in {}{narrowed} deploys chart {chart} (by its last release, or its spec.chart where none exists yet): check the chart directory (-C), or look elsewhere with -n NAMESPACE or -A",
            scope(cluster, selection)
        )));
    }
    Ok(set)
}

/// Every HelmRelease `selection` names, whatever its chart (each with its own source's chart: `diff --all`
/// without a chart directory); an error when none is there.
pub async fn select_any(cluster: &Cluster, selection: &Selection) -> Result<Vec<HelmRelease>> {
    let set = listed(cluster, selection).await?;
    if set.is_empty() {
        return Err(Error::Failed(format!(
            "no HelmRelease in {} matches the selection (-l, names): look elsewhere with -n NAMESPACE or -A",
            scope(cluster, selection)
        )));
    }
    Ok(set)
}

/// The HelmReleases of the namespace (or all, with -A) that `selection`'s labels and names select.
async fn listed(cluster: &Cluster, selection: &Selection) -> Result<Vec<HelmRelease>> {
    let objects = if selection.all_namespaces {
        Objects::<HelmRelease>::all(cluster)
    } else {
        Objects::<HelmRelease>::namespaced(cluster, &cluster.namespace)
    };
    let wanted: BTreeSet<&str> = selection.names.iter().map(String::as_str).collect();
    Ok(objects
        .list(selection.selector.as_deref())
        .await?
        .into_iter()
        .filter(|hr| wanted.is_empty() || wanted.contains(hr.name_any().as_str()))
        .collect())
}

/// Where `selection` looked, in words.
fn scope(cluster: &Cluster, selection: &Selection) -> String {
    if selection.all_namespaces { "any namespace".to_string() } else { format!("namespace {}", cluster.namespace) }
}

/// `namespace/name` of a HelmRelease.
pub fn key(hr: &HelmRelease) -> (String, String) {
    (hr.namespace().to_string(), hr.name_any())
}

/// The set in `dependsOn` order: waves, each of releases whose dependencies inside the set are all in
/// earlier waves (dependencies outside the set are helm-controller's business, not an order here, and so
/// are objects of other kinds, which are never part of a set). Indexes into `set`; a cycle inside the set
/// is an error naming it.
pub fn waves(set: &[HelmRelease]) -> Result<Vec<Vec<usize>>> {
    let index: BTreeMap<(String, String), usize> = set.iter().enumerate().map(|(i, hr)| (key(hr), i)).collect();
    let deps: Vec<Vec<usize>> = set
        .iter()
        .map(|hr| {
            hr.spec
                .depends_on
                .iter()
                .filter(|d| d.names_helm_release())
                .filter_map(|d| index.get(&(hr.dependency_namespace(d).to_string(), d.name.clone())).copied())
                .collect()
        })
        .collect();
    let mut placed = vec![false; set.len()];
    let mut out = Vec::new();
    while placed.iter().any(|p| !p) {
        let wave: Vec<usize> =
            (0..set.len()).filter(|&i| !placed[i] && deps[i].iter().all(|&d| placed[d] && d != i)).collect();
        if wave.is_empty() {
            let stuck: Vec<String> = (0..set.len())
                .filter(|&i| !placed[i])
                .map(|i| {
                    let (ns, name) = key(&set[i]);
                    format!("{ns}/{name}")
                })
                .collect();
            return Err(Error::Failed(format!("dependsOn cycle among {}: nothing to apply first", stuck.join(", "))));
        }
        for &i in &wave {
            placed[i] = true;
        }
        out.push(wave);
    }
    Ok(out)
}

/// Where each release of a set takes its chart from.
#[derive(Clone, Copy)]
pub enum Charts<'a> {
    /// One chart directory for all (the set is the HelmReleases of its chart).
    Directory(&'a Resolver),
    /// Each release the chart its own source serves in the cluster ([`crate::source::served`]), rendered
    /// with these tools.
    Sources(&'a crate::render::Tools),
}

impl<'a> Charts<'a> {
    /// The resolver of `hr` in `cluster` (its namespace's): the directory's, or one with the chart its own
    /// source serves there.
    pub async fn resolver_for(&self, cluster: &Cluster, hr: &HelmRelease) -> Result<Held<'a>> {
        match *self {
            Charts::Directory(resolver) => Ok(Held::Shared(resolver)),
            Charts::Sources(tools) => {
                let served = crate::source::served::fetch(cluster, hr).await?;
                Ok(Held::Own(Box::new(Resolver::with_served(tools.clone(), served))))
            }
        }
    }
}

/// A release's resolver: the set's one, or its own.
pub enum Held<'a> {
    Shared(&'a Resolver),
    Own(Box<Resolver>),
}

impl std::ops::Deref for Held<'_> {
    type Target = Resolver;
    fn deref(&self) -> &Resolver {
        match self {
            Held::Shared(r) => r,
            Held::Own(r) => r,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hr(ns: &str, name: &str, chart_in_history: Option<&str>, template: Option<&str>, deps: &[&str]) -> HelmRelease {
        let mut obj = serde_json::json!({
            "metadata": {"name": name, "namespace": ns},
            "spec": {"dependsOn": deps.iter().map(|d| serde_json::json!({"name": d})).collect::<Vec<_>>()},
        });
        if let Some(c) = template {
            obj["spec"]["chart"] =
                serde_json::json!({"spec": {"chart": c, "sourceRef": {"kind": "HelmRepository", "name": "r"}}});
        }
        if let Some(c) = chart_in_history {
            obj["status"] = serde_json::json!({"history": [{"chartName": c, "chartVersion": "1.0.0", "name": name, "namespace": ns, "version": 1, "status": "deployed"}]});
        }
        serde_json::from_value(obj).expect("fixture")
    }

    #[test]
    fn the_last_release_decides_else_the_template() {
        assert!(deploys(&hr("a", "x", Some("pg"), Some("other"), &[]), "pg"));
        assert!(!deploys(&hr("a", "x", Some("other"), Some("pg"), &[]), "pg"));
        assert!(deploys(&hr("a", "x", None, Some("pg"), &[]), "pg"));
        assert!(!deploys(&hr("a", "x", None, None, &[]), "pg"));
    }

    #[test]
    fn waves_follow_depends_on_inside_the_set() {
        let set = [
            hr("a", "c", None, None, &["b"]),
            hr("a", "b", None, None, &["a", "outside"]),
            hr("a", "a", None, None, &[]),
        ];
        assert_eq!(waves(&set).unwrap(), vec![vec![2], vec![1], vec![0]]);
        let cycle = [hr("a", "x", None, None, &["y"]), hr("a", "y", None, None, &["x"])];
        assert!(waves(&cycle).unwrap_err().to_string().contains("a/x, a/y"));
    }

    #[test]
    fn objects_of_other_kinds_are_never_part_of_a_wave() {
        // y depends on a ConfigMap named x (Flux 2.10's dependsOn), not on release x: no order, no cycle.
        let mut y = hr("a", "y", None, None, &[]);
        y.spec.depends_on = serde_json::from_value(serde_json::json!([
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "namespace": "a"}
        ]))
        .expect("entries");
        let set = [hr("a", "x", None, None, &["y"]), y];
        assert_eq!(waves(&set).unwrap(), vec![vec![1], vec![0]]);
    }
}
