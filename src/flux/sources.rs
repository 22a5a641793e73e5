//! `reconcile --with-source`: which source objects to reconcile, in order, before the HelmRelease.
//!
//! - `spec.chart` (a HelmChart template): the HelmChart helm-controller made (`status.helmChart`, else
//!   `<hr namespace>-<hr name>` in the source's namespace), after that chart's own source.
//! - `spec.chartRef` to an OCIRepository: that repository. To a HelmChart: its source, then the chart.
//! - `spec.chartRef` to an ExternalArtifact: the ExternalArtifact has no controller of its own, so the
//!   sources of the ArtifactGenerator that produced it, then the generator (as the original cozyhr does).
//!   The generator is found by the artifact's `spec.sourceRef`, its owner references, or a generator's
//!   `status.inventory`; an artifact published by something else is reported and skipped.

use kube::Resource;
use serde_json::Value;

use super::helmrelease::HelmRelease;
use super::kind::{self, Kind};
use super::source::FluxSource;
use super::verbs::Objects;
use crate::cluster::Cluster;
use crate::error::{Error, Result};

/// One step of the plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Request a reconcile of this object and wait for it.
    Reconcile { kind: &'static Kind, namespace: String, name: String },
    /// Nothing to reconcile here, and the user should know why.
    Note(String),
}

/// The source steps for `hr`, in the order they must run.
pub async fn plan(cluster: &Cluster, hr: &HelmRelease) -> Result<Vec<Step>> {
    let hr_ns = hr.namespace();
    if let Some(r) = &hr.spec.chart_ref {
        let ns = r.namespace.as_deref().filter(|s| !s.is_empty()).unwrap_or(hr_ns);
        return match r.kind.as_str() {
            "OCIRepository" => Ok(vec![reconcile(&kind::OCI_REPOSITORY, ns, &r.name)]),
            "HelmChart" => helm_chart(cluster, ns, &r.name).await,
            "ExternalArtifact" => external_artifact(cluster, ns, &r.name).await,
            other => Err(Error::Invalid {
                what: "chartRef".into(),
                reason: format!("kind {other:?} is not supported (OCIRepository, HelmChart or ExternalArtifact)"),
            }),
        };
    }
    if let Some(t) = &hr.spec.chart {
        let (ns, name) = match hr.status.as_ref().and_then(|s| s.helm_chart.as_deref()).and_then(|s| s.split_once('/'))
        {
            Some((ns, name)) => (ns.to_string(), name.to_string()),
            None => {
                let ns = t.spec.source_ref.namespace.as_deref().filter(|s| !s.is_empty()).unwrap_or(hr_ns);
                (ns.to_string(), format!("{hr_ns}-{}", hr.name()))
            }
        };
        return helm_chart(cluster, &ns, &name).await;
    }
    Err(Error::Invalid { what: "HelmRelease".into(), reason: "it has neither spec.chart nor spec.chartRef".into() })
}

fn reconcile(kind: &'static Kind, namespace: &str, name: &str) -> Step {
    Step::Reconcile { kind, namespace: namespace.to_string(), name: name.to_string() }
}

/// A HelmChart's own source first (unless it is a static OCI HelmRepository), then the chart.
async fn helm_chart(cluster: &Cluster, ns: &str, name: &str) -> Result<Vec<Step>> {
    let chart = Objects::<FluxSource>::namespaced_with(cluster, ns, &kind::HELM_CHART).get(name).await?;
    let mut steps = Vec::new();
    let source_ref = chart.spec.extra.get("sourceRef");
    let src_kind = source_ref.and_then(|r| r.get("kind")).and_then(Value::as_str).unwrap_or_default();
    let src_name = source_ref.and_then(|r| r.get("name")).and_then(Value::as_str).unwrap_or_default();
    match Kind::lookup(src_kind) {
        Some(k) if *k == kind::HELM_REPOSITORY => {
            let repo = Objects::<FluxSource>::namespaced_with(cluster, ns, k).get(src_name).await?;
            if repo.spec.extra.get("type").and_then(Value::as_str) == Some("oci") {
                // source-controller does not reconcile OCI HelmRepositories: they are only a URL and
                // credentials, the HelmChart pulls from the registry itself.
                steps.push(Step::Note(format!("HelmRepository {ns}/{src_name} is of type oci: nothing to reconcile")));
            } else {
                steps.push(reconcile(k, ns, src_name));
            }
        }
        Some(k) => steps.push(reconcile(k, ns, src_name)),
        None => steps.push(Step::Note(format!("HelmChart {ns}/{name} has a source of unknown kind {src_kind:?}"))),
    }
    steps.push(reconcile(&kind::HELM_CHART, ns, name));
    Ok(steps)
}

async fn external_artifact(cluster: &Cluster, ns: &str, name: &str) -> Result<Vec<Step>> {
    let ea = Objects::<FluxSource>::namespaced_with(cluster, ns, &kind::EXTERNAL_ARTIFACT).get(name).await?;
    let Some((gen_ns, gen_name)) = find_generator(cluster, &ea, ns, name).await? else {
        return Ok(vec![Step::Note(format!(
            "ExternalArtifact {ns}/{name} was not produced by an ArtifactGenerator: no source to reconcile"
        ))]);
    };
    let generators = Objects::<FluxSource>::namespaced_with(cluster, &gen_ns, &kind::ARTIFACT_GENERATOR);
    let Some(generator) = generators.get_opt(&gen_name).await? else {
        return Ok(vec![Step::Note(format!(
            "ExternalArtifact {ns}/{name} names ArtifactGenerator {gen_ns}/{gen_name}, which does not exist"
        ))]);
    };
    let mut steps = Vec::new();
    for src in generator.spec.extra.get("sources").and_then(Value::as_array).into_iter().flatten() {
        let src_kind = src.get("kind").and_then(Value::as_str).unwrap_or_default();
        let src_name = src.get("name").and_then(Value::as_str).unwrap_or_default();
        let src_ns = src.get("namespace").and_then(Value::as_str).filter(|s| !s.is_empty()).unwrap_or(&gen_ns);
        match Kind::lookup(src_kind) {
            // An ExternalArtifact source has no controller to ask; whoever publishes it decides.
            Some(k) if *k == kind::EXTERNAL_ARTIFACT => {
                steps.push(Step::Note(format!("ExternalArtifact {src_ns}/{src_name} has no controller to reconcile")))
            }
            Some(k) => steps.push(reconcile(k, src_ns, src_name)),
            None => steps.push(Step::Note(format!("source {src_kind} {src_ns}/{src_name} is of an unknown kind"))),
        }
    }
    steps.push(reconcile(&kind::ARTIFACT_GENERATOR, &gen_ns, &gen_name));
    Ok(steps)
}

/// The ArtifactGenerator that produced `ea`: its `spec.sourceRef`, else an owner reference, else a
/// generator in the same namespace whose inventory lists it. None when there is none (or source-watcher
/// is not installed).
async fn find_generator(cluster: &Cluster, ea: &FluxSource, ns: &str, name: &str) -> Result<Option<(String, String)>> {
    if let Some(r) = ea.spec.extra.get("sourceRef")
        && r.get("kind").and_then(Value::as_str) == Some(kind::ARTIFACT_GENERATOR.kind)
        && let Some(n) = r.get("name").and_then(Value::as_str)
    {
        let rns = r.get("namespace").and_then(Value::as_str).filter(|s| !s.is_empty()).unwrap_or(ns);
        return Ok(Some((rns.to_string(), n.to_string())));
    }
    if let Some(owner) = ea.meta().owner_references.iter().flatten().find(|o| o.kind == kind::ARTIFACT_GENERATOR.kind) {
        return Ok(Some((ns.to_string(), owner.name.clone())));
    }
    let generators = Objects::<FluxSource>::namespaced_with(cluster, ns, &kind::ARTIFACT_GENERATOR);
    let list = match generators.list(None).await {
        Ok(list) => list,
        Err(Error::CrdMissing { .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    Ok(list.into_iter().find_map(|g| {
        let inventory = g.status.as_ref()?.extra.get("inventory")?.as_array()?.clone();
        let listed = inventory.iter().any(|i| {
            i.get("name").and_then(Value::as_str) == Some(name)
                && i.get("namespace").and_then(Value::as_str).is_none_or(|n| n.is_empty() || n == ns)
        });
        listed.then(|| (ns.to_string(), g.metadata.name.clone().unwrap_or_default()))
    }))
}
