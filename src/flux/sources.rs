//! A HelmRelease's chart source: which source objects `reconcile --with-source` reconciles, in order,
//! before the HelmRelease, and which chart version the source offers (to warn before a hand-back).
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
use crate::support::error::{Error, Result};

/// One step of the plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Request a reconcile of this object and wait for it.
    Reconcile { kind: &'static Kind, namespace: String, name: String },
    /// Nothing to reconcile here, and the user should know why.
    Note(String),
}

/// The object helm-controller takes `hr`'s chart from: `chartRef`, or the HelmChart it made for
/// `spec.chart` (`status.helmChart`, else `<hr namespace>-<hr name>` in the source's namespace), or the
/// OCIRepository it made for a `kind: OCIRepository` template (Flux 2.10, in the HelmRelease's namespace).
pub(crate) fn chart_source(hr: &HelmRelease) -> Result<(String, String, String)> {
    let hr_ns = hr.namespace();
    if let Some(r) = &hr.spec.chart_ref {
        let ns = r.namespace.as_deref().filter(|s| !s.is_empty()).unwrap_or(hr_ns);
        return Ok((r.kind.clone(), ns.to_string(), r.name.clone()));
    }
    if let Some(t) = &hr.spec.chart {
        let made = hr.status.as_ref().and_then(|s| s.helm_chart.as_deref()).and_then(helm_chart_reference);
        if t.makes_oci_repository() {
            // Flux 2.10: always `<hr namespace>-<hr name>` in the HelmRelease's namespace.
            let name = made.map(|(_, name)| name.to_string()).unwrap_or_else(|| format!("{hr_ns}-{}", hr.name()));
            return Ok((kind::OCI_REPOSITORY.kind.to_string(), hr_ns.to_string(), name));
        }
        let (ns, name) = match made {
            Some((ns, name)) => (ns.to_string(), name.to_string()),
            None => {
                let ns = t.spec.source_ref.namespace.as_deref().filter(|s| !s.is_empty()).unwrap_or(hr_ns);
                (ns.to_string(), format!("{hr_ns}-{}", hr.name()))
            }
        };
        return Ok((kind::HELM_CHART.kind.to_string(), ns, name));
    }
    Err(Error::Invalid { what: "HelmRelease".into(), reason: "it has neither spec.chart nor spec.chartRef".into() })
}

/// `status.helmChart` as `(namespace, name)`: `namespace/name` as helm-controller up to v1.6 writes it, or
/// `Kind/namespace/name` as v1.7 (Flux 2.10) writes it.
pub(crate) fn helm_chart_reference(text: &str) -> Option<(&str, &str)> {
    let parts: Vec<&str> = text.split('/').collect();
    match parts.as_slice() {
        [ns, name] | [_, ns, name] if !ns.is_empty() && !name.is_empty() => Some((ns, name)),
        _ => None,
    }
}

/// The source steps for `hr`, in the order they must run.
pub async fn plan(cluster: &Cluster, hr: &HelmRelease) -> Result<Vec<Step>> {
    let (kind, ns, name) = chart_source(hr)?;
    match kind.as_str() {
        "OCIRepository" => Ok(vec![reconcile(&kind::OCI_REPOSITORY, &ns, &name)]),
        "HelmChart" => helm_chart(cluster, &ns, &name).await,
        "ExternalArtifact" => external_artifact(cluster, &ns, &name).await,
        other => Err(Error::Invalid {
            what: "chartRef".into(),
            reason: format!("kind {other:?} is not supported (OCIRepository, HelmChart or ExternalArtifact)"),
        }),
    }
}

/// The chart version `hr`'s source offers helm-controller now, as far as the source's status tells it
/// without downloading the artifact: a HelmChart's revision is the chart's version; an OCIRepository's
/// is `<tag>@<digest>`, and a chart's tag is its version (`+` written `_`); an ExternalArtifact's
/// revision is used when it reads as a version. None when it cannot be told, or the source has no
/// artifact yet. Returns the source as `Kind ns/name` too, for messages.
async fn offered_chart_version(cluster: &Cluster, hr: &HelmRelease) -> Result<Option<(String, String)>> {
    let (kind_name, ns, name) = chart_source(hr)?;
    let Some(k) = Kind::lookup(&kind_name) else { return Ok(None) };
    let Some(source) = Objects::<FluxSource>::namespaced_with(cluster, &ns, k).get_opt(&name).await? else {
        return Ok(None);
    };
    let Some(revision) = source.status.as_ref().and_then(|s| s.artifact.as_ref()).map(|a| a.revision.as_str()) else {
        return Ok(None);
    };
    Ok(chart_version_of_revision(k, revision).map(|v| (v, format!("{kind_name} {ns}/{name}"))))
}

/// See [`offered_chart_version`].
fn chart_version_of_revision(k: &Kind, revision: &str) -> Option<String> {
    if *k == kind::HELM_CHART {
        return Some(revision.to_string()).filter(|r| !r.is_empty());
    }
    let tag = revision.split('@').next().unwrap_or_default().replace('_', "+");
    let digits = tag.strip_prefix('v').unwrap_or(&tag);
    let version_like = digits.starts_with(|c: char| c.is_ascii_digit()) && digits.contains('.');
    version_like.then_some(tag)
}

/// When handing `hr` back to Flux would replace the chart now deployed (its latest history entry) with
/// another version from its source: the warning to print. Nothing when the versions agree, or the
/// source's version cannot be told (a warning is never worth failing for).
pub async fn handback_warning(cluster: &Cluster, hr: &HelmRelease) -> Option<String> {
    let deployed = hr.latest_snapshot()?;
    let (offered, source) = match offered_chart_version(cluster, hr).await {
        Ok(found) => found?,
        Err(e) => {
            tracing::debug!("cannot tell the source's chart version: {e}");
            return None;
        }
    };
    let plain = |v: &str| v.strip_prefix('v').unwrap_or(v).to_string();
    if plain(&offered) == plain(&deployed.chart_version) {
        return None;
    }
    Some(format!(
        "helmrelease {} runs chart {}@{}, but its source {source} offers {offered}: once resumed, helm-controller \
         will upgrade it to {offered} (publish the new chart version first to keep it)",
        hr.name(),
        deployed.chart_name,
        deployed.chart_version
    ))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_helm_chart_reads_as_either_version_writes_it() {
        assert_eq!(helm_chart_reference("flux-system/apps-podinfo"), Some(("flux-system", "apps-podinfo")));
        assert_eq!(helm_chart_reference("HelmChart/flux-system/apps-podinfo"), Some(("flux-system", "apps-podinfo")));
        assert_eq!(helm_chart_reference("podinfo"), None);
        assert_eq!(helm_chart_reference("a/b/c/d"), None);
    }

    #[test]
    fn chart_versions_from_source_revisions() {
        assert_eq!(chart_version_of_revision(&kind::HELM_CHART, "1.2.3+abc").as_deref(), Some("1.2.3+abc"));
        let oci = "1.2.3_build.1@sha256:0123";
        assert_eq!(chart_version_of_revision(&kind::OCI_REPOSITORY, oci).as_deref(), Some("1.2.3+build.1"));
        assert_eq!(chart_version_of_revision(&kind::OCI_REPOSITORY, "latest@sha256:0123"), None);
        assert_eq!(chart_version_of_revision(&kind::EXTERNAL_ARTIFACT, "0.1.0").as_deref(), Some("0.1.0"));
        assert_eq!(chart_version_of_revision(&kind::EXTERNAL_ARTIFACT, "latest@sha256:0123"), None);
        assert_eq!(chart_version_of_revision(&kind::EXTERNAL_ARTIFACT, "main@sha1:abc"), None);
    }
}
