//! The repository a HelmRelease's chart comes from, as its Flux source names it in the cluster, and the
//! credentials Flux reads for it: for a chart fetched straight from the repository (`--version V`).
//!
//! - `spec.chart` (or `chartRef` to a HelmChart) from a HelmRepository: its `url` (HTTP(S), or an OCI
//!   registry with `type: oci`), the chart's name, `secretRef` (`username`/`password`, or a
//!   `.dockerconfigjson` for a registry), `certSecretRef` (`tls.crt`, `tls.key`, `ca.crt`), `insecure`
//!   (plain HTTP to a registry) and `passCredentials`.
//! - `chartRef` to an OCIRepository, or a `spec.chart` template of `kind: OCIRepository` (Flux 2.10,
//!   the OCIRepository's spec inlined): its `url` is the chart's own (`oci://host/path/chart`), its
//!   `ref` picks the tag as source-controller picks it, with the same `secretRef`, `certSecretRef` and
//!   `insecure`.
//!
//! A GitRepository, Bucket or ExternalArtifact has one revision, the one the cluster serves: it has no
//! other version to fetch.
//!
//! The source objects are read from the cluster ([`of_cluster`]), or from release files without one
//! ([`of_files`]): then the credentials are Helm's own, from its repository configuration
//! (`repositories.yaml`, matched by URL) and its registry configuration (`registry/config.json`), as
//! `helm pull` reads them; Secrets are not expected in a repository.

use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use serde_json::Value;

use crate::cluster::Cluster;
use crate::flux::HelmRelease;
use crate::flux::kind::{self, Kind};
use crate::flux::source::FluxSource;
use crate::flux::verbs::Objects;
use crate::source::release_file::ReleaseFiles;
use crate::source::repository::{Credentials, OciReference, OciRule, Repo, RepositoryChart, oci};

/// A chart in its repository, and how to reach it.
#[derive(Debug, Clone)]
pub struct Remote {
    pub chart: RepositoryChart,
    pub creds: Credentials,
    /// `Kind ns/name` of the source object that names the repository.
    pub source: String,
    /// Whether helm-controller appends the artifact's digest to the chart's version (an OCIRepository).
    pub digested: bool,
}

/// The repository of `hr`'s chart at `version` (a version or a semver range), read from `cluster`.
pub async fn of_cluster(cluster: &Cluster, hr: &HelmRelease, version: &str) -> Result<Remote, String> {
    of(&InCluster(cluster), hr, Some(version)).await
}

/// The repository of `hr`'s chart at `version` (else the version the HelmRelease names), its source
/// objects read from release `files`, the credentials from Helm's own configuration.
pub async fn of_files(files: &ReleaseFiles, hr: &HelmRelease, version: Option<&str>) -> Result<Remote, String> {
    of(&InFiles(files), hr, version).await
}

/// The version or range `hr` asks its repository for, read from `cluster`: None when its source pins one
/// artifact (an OCIRepository by tag or digest, a Git or Bucket source, an ExternalArtifact).
pub async fn range_of_cluster(cluster: &Cluster, hr: &HelmRelease) -> Option<String> {
    let remote = of(&InCluster(cluster), hr, None).await.ok()?;
    match &remote.chart.repo {
        Repo::Oci { rule: OciRule::Flux { reference: OciReference::Tag | OciReference::Digest, .. }, .. } => None,
        _ => Some(remote.chart.version),
    }
}

/// `hr`'s chart in its repository, at `version`, else as the HelmRelease names it
/// (`spec.chart.spec.version`, `*` when empty, or its OCIRepository's `ref`).
async fn of(reader: &impl Reader, hr: &HelmRelease, version: Option<&str>) -> Result<Remote, String> {
    let hr_ns = hr.namespace();
    if let Some(template) = &hr.spec.chart {
        if template.makes_oci_repository() {
            // Flux 2.10: the OCIRepository helm-controller makes, its spec inlined in the template's.
            let source = format!("OCIRepository {hr_ns}/{hr_ns}-{}", hr.name());
            return oci_repository(reader, hr_ns, &template.spec.extra, source, version, true).await;
        }
        let r = &template.spec.source_ref;
        let ns = r.namespace.as_deref().filter(|s| !s.is_empty()).unwrap_or(hr_ns);
        let named = template.spec.version.as_deref().filter(|v| !v.is_empty()).unwrap_or("*");
        let version = version.unwrap_or(named);
        return helm_repository(reader, &r.kind, ns, &r.name, &template.spec.chart, version).await;
    }
    let Some(r) = &hr.spec.chart_ref else {
        return Err("it has neither spec.chart nor spec.chartRef".into());
    };
    let ns = r.namespace.as_deref().filter(|s| !s.is_empty()).unwrap_or(hr_ns);
    match r.kind.as_str() {
        "OCIRepository" => {
            let spec = reader.source(&kind::OCI_REPOSITORY, ns, &r.name).await?;
            oci_repository(reader, ns, &spec, format!("OCIRepository {ns}/{}", r.name), version, false).await
        }
        "HelmChart" => {
            let spec = reader.source(&kind::HELM_CHART, ns, &r.name).await?;
            let source = spec.get("sourceRef").unwrap_or(&Value::Null);
            let (kind_name, name) = (str_at(source, "kind"), str_at(source, "name"));
            let chart_name = spec.get("chart").and_then(Value::as_str).unwrap_or_default();
            let named = spec.get("version").and_then(Value::as_str).filter(|v| !v.is_empty()).unwrap_or("*");
            helm_repository(reader, kind_name, ns, name, chart_name, version.unwrap_or(named)).await
        }
        other => Err(one_revision(other, ns, &r.name)),
    }
}

/// A source of one revision has no other version to fetch.
fn one_revision(kind: &str, ns: &str, name: &str) -> String {
    format!(
        "--version takes the chart from a Helm or OCI repository, and this chart comes from {kind} {ns}/{name}, which serves one revision: run without --version, or from a chart directory"
    )
}

async fn helm_repository(
    reader: &impl Reader,
    kind_name: &str,
    ns: &str,
    name: &str,
    chart: &str,
    version: &str,
) -> Result<Remote, String> {
    if kind_name != kind::HELM_REPOSITORY.kind {
        return Err(one_revision(kind_name, ns, name));
    }
    let spec = reader.source(&kind::HELM_REPOSITORY, ns, name).await?;
    let spec = &spec;
    let url = str_at_map(spec, "url").to_string();
    let oci = str_at_map(spec, "type") == "oci";
    let insecure = spec.get("insecure").and_then(Value::as_bool).unwrap_or(false);
    let mut creds = reader.credentials(ns, spec, &url).await?;
    creds.pass_credentials = spec.get("passCredentials").and_then(Value::as_bool).unwrap_or(false);
    let repo = if oci { Repo::Oci { url, insecure, rule: OciRule::Helm } } else { Repo::Http { url } };
    let chart = RepositoryChart { repo, chart: chart.to_string(), version: version.to_string() };
    Ok(Remote { chart, creds, source: format!("HelmRepository {ns}/{name}"), digested: false })
}

/// The OCIRepository of `spec` in `ns` (`source` names it): its `url` is the chart's own
/// (`oci://host/path/chart`), picked at `version` (a version or range), else by its `ref` as
/// source-controller reads it (`digest`, else `semver` with `semverFilter`, else `tag`, else `latest`).
/// `made`: helm-controller made it from a HelmRelease's template, where no `layerSelector` means Helm's
/// chart layer.
async fn oci_repository(
    reader: &impl Reader,
    ns: &str,
    spec: &Spec,
    source: String,
    version: Option<&str>,
    made: bool,
) -> Result<Remote, String> {
    let url = str_at_map(spec, "url");
    let insecure = spec.get("insecure").and_then(Value::as_bool).unwrap_or(false);
    let Some((parent, chart)) = url.trim_end_matches('/').rsplit_once('/').filter(|(p, _)| p.contains("://")) else {
        return Err(format!("{source}'s url {url:?} names no chart (oci://HOST/PATH/CHART)"));
    };
    let reference = spec.get("ref").unwrap_or(&Value::Null);
    let (how, named) = match version {
        Some(v) => (OciReference::Semver, v.to_string()),
        None => [("digest", OciReference::Digest), ("semver", OciReference::Semver), ("tag", OciReference::Tag)]
            .into_iter()
            .map(|(field, how)| (how, str_at(reference, field)))
            .find(|(_, v)| !v.is_empty())
            .map_or((OciReference::Tag, "latest".to_string()), |(how, v)| (how, v.to_string())),
    };
    let selected = spec.get("layerSelector").map(|l| str_at(l, "mediaType")).filter(|m| !m.is_empty());
    let layer = selected.map(String::from).or_else(|| made.then(|| oci::CHART_LAYER.to_string()));
    let semver_filter = Some(str_at(reference, "semverFilter")).filter(|f| !f.is_empty()).map(String::from);
    let creds = reader.credentials(ns, spec, url).await?;
    let rule = OciRule::Flux { reference: how, semver_filter, layer };
    let chart = RepositoryChart {
        repo: Repo::Oci { url: parent.to_string(), insecure, rule },
        chart: chart.to_string(),
        version: named,
    };
    Ok(Remote { chart, creds, source, digested: true })
}

type Spec = std::collections::BTreeMap<String, Value>;

/// Where the source objects and their credentials are read.
trait Reader {
    /// The `spec` of source `kind` `ns/name`.
    async fn source(&self, kind: &'static Kind, ns: &str, name: &str) -> Result<Spec, String>;
    /// The credentials for the repository at `url`, whose source in `ns` has `spec`.
    async fn credentials(&self, ns: &str, spec: &Spec, url: &str) -> Result<Credentials, String>;
}

struct InCluster<'a>(&'a Cluster);

impl Reader for InCluster<'_> {
    async fn source(&self, kind: &'static Kind, ns: &str, name: &str) -> Result<Spec, String> {
        let object = Objects::<FluxSource>::namespaced_with(self.0, ns, kind)
            .get_opt(name)
            .await
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("{} {ns}/{name} does not exist", kind.kind))?;
        Ok(object.spec.extra)
    }

    /// What the source's `secretRef` and `certSecretRef` hold.
    async fn credentials(&self, ns: &str, spec: &Spec, url: &str) -> Result<Credentials, String> {
        let cluster = self.0;
        let mut creds = Credentials::default();
        let secret_name = |field: &str| spec.get(field).map(|r| str_at(r, "name")).filter(|n| !n.is_empty());
        if let Some(name) = secret_name("secretRef") {
            let data = secret(cluster, ns, name).await?;
            let (username, password) = match data.get(".dockerconfigjson") {
                Some(json) => crate::source::helm_config::docker_config_auth(json, url)
                    .ok_or_else(|| format!("Secret {ns}/{name}'s .dockerconfigjson has no credentials for {url}"))?,
                None => (
                    data.get("username").cloned().unwrap_or_default(),
                    data.get("password").cloned().unwrap_or_default(),
                ),
            };
            (creds.username, creds.password) = (Some(username), Some(password));
        }
        if let Some(name) = secret_name("certSecretRef") {
            let data = secret(cluster, ns, name).await?;
            creds.cert_pem = data.get("tls.crt").or(data.get("certFile")).cloned();
            creds.key_pem = data.get("tls.key").or(data.get("keyFile")).cloned();
            creds.ca_pem = data.get("ca.crt").or(data.get("caFile")).cloned();
        }
        Ok(creds)
    }
}

struct InFiles<'a>(&'a ReleaseFiles);

impl Reader for InFiles<'_> {
    async fn source(&self, kind: &'static Kind, ns: &str, name: &str) -> Result<Spec, String> {
        let found = self.0.objects(kind.group, kind.kind).find(|o| {
            let meta = |f: &str| o.get("metadata").and_then(|m| m.get(f)).and_then(Value::as_str).unwrap_or_default();
            meta("name") == name && (meta("namespace") == ns || meta("namespace").is_empty())
        });
        let found = found.ok_or_else(|| {
            format!(
                "{} {ns}/{name} is not in {}: give the file that defines it with --release-file too",
                kind.kind,
                self.0.files()
            )
        })?;
        match found.get("spec") {
            Some(Value::Object(spec)) => Ok(spec.iter().map(|(k, v)| (k.clone(), v.clone())).collect()),
            _ => Ok(Spec::new()),
        }
    }

    /// Helm's own: its repository configuration for an HTTP(S) repository, its registry configuration for
    /// an OCI one.
    async fn credentials(&self, _ns: &str, _spec: &Spec, url: &str) -> Result<Credentials, String> {
        Ok(crate::source::helm_config::credentials(url))
    }
}

/// A Secret's data as text; its values are never part of a message.
async fn secret(cluster: &Cluster, ns: &str, name: &str) -> Result<std::collections::BTreeMap<String, String>, String> {
    let api: Api<Secret> = Api::namespaced(cluster.client.clone(), ns);
    let secret = api
        .get_opt(name)
        .await
        .map_err(|e| {
        format!(
            "cannot read Secret {ns}/{name}, which holds the source's credentials ({}): ask for read access to it, or run from a chart directory",
            crate::support::error::cause(&e)
        )
    })?;
    let secret = secret
        .ok_or_else(|| format!("Secret {ns}/{name}, which the source names for its credentials, does not exist"))?;
    Ok(secret
        .data
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(k, v)| String::from_utf8(v.0).ok().map(|v| (k, v)))
        .collect())
}

fn str_at<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn str_at_map<'a>(m: &'a std::collections::BTreeMap<String, Value>, key: &str) -> &'a str {
    m.get(key).and_then(Value::as_str).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_of_one_revision_says_so() {
        let line = one_revision("GitRepository", "apps", "repo");
        assert!(line.contains("GitRepository apps/repo, which serves one revision"), "{line}");
    }
}
