//! The repository a HelmRelease's chart comes from, as its Flux source names it in the cluster, and the
//! credentials Flux reads for it: for a chart fetched straight from the repository (`--version V`).
//!
//! - `spec.chart` (or `chartRef` to a HelmChart) from a HelmRepository: its `url` (HTTP(S), or an OCI
//!   registry with `type: oci`), the chart's name, `secretRef` (`username`/`password`, or a
//!   `.dockerconfigjson` for a registry), `certSecretRef` (`tls.crt`, `tls.key`, `ca.crt`), `insecure`
//!   (plain HTTP to a registry) and `passCredentials`.
//! - `chartRef` to an OCIRepository: its `url` is the chart's own (`oci://host/path/chart`), with the
//!   same `secretRef`, `certSecretRef` and `insecure`.
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
use crate::source::repository::{Credentials, Repo, RepositoryChart};

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
    of(&InCluster(cluster), hr, version).await
}

/// The repository of `hr`'s chart at `version` (else the version the HelmRelease names), its source
/// objects read from release `files`, the credentials from Helm's own configuration.
pub async fn of_files(files: &ReleaseFiles, hr: &HelmRelease, version: Option<&str>) -> Result<Remote, String> {
    let reader = InFiles(files);
    let version = match version {
        Some(v) => v.to_string(),
        None => named_version(&reader, hr).await?,
    };
    of(&reader, hr, &version).await
}

/// The version or range `hr` asks its repository for, read from `cluster`: None when its source pins one
/// artifact (an OCIRepository by tag or digest, a Git or Bucket source, an ExternalArtifact).
pub async fn range_of_cluster(cluster: &Cluster, hr: &HelmRelease) -> Option<String> {
    let reader = InCluster(cluster);
    match &hr.spec.chart_ref {
        Some(r) if r.kind == kind::OCI_REPOSITORY.kind => {
            let ns = r.namespace.as_deref().filter(|s| !s.is_empty()).unwrap_or(hr.namespace());
            let repo = reader.source(&kind::OCI_REPOSITORY, ns, &r.name).await.ok()?;
            let semver = str_at(repo.get("ref")?, "semver");
            (!semver.is_empty()).then(|| semver.to_string())
        }
        Some(_) => None,
        None if hr.spec.chart.as_ref().is_some_and(|t| t.spec.source_ref.kind == kind::HELM_REPOSITORY.kind) => {
            named_version(&reader, hr).await.ok()
        }
        None => None,
    }
}

/// The version the HelmRelease names: `spec.chart.spec.version` (`*` when empty), or its OCIRepository's
/// `ref` (`semver`, else `tag`, else `latest`).
async fn named_version(reader: &impl Reader, hr: &HelmRelease) -> Result<String, String> {
    if let Some(template) = &hr.spec.chart {
        return Ok(template.spec.version.clone().filter(|v| !v.is_empty()).unwrap_or_else(|| "*".into()));
    }
    match &hr.spec.chart_ref {
        Some(r) if r.kind == kind::OCI_REPOSITORY.kind => {
            let ns = r.namespace.as_deref().filter(|s| !s.is_empty()).unwrap_or(hr.namespace());
            let repo = reader.source(&kind::OCI_REPOSITORY, ns, &r.name).await?;
            let reference = repo.get("ref").unwrap_or(&Value::Null);
            let pick = ["semver", "tag"].iter().map(|k| str_at(reference, k)).find(|v| !v.is_empty());
            Ok(pick.unwrap_or("latest").to_string())
        }
        Some(r) => Err(one_revision(&r.kind, r.namespace.as_deref().unwrap_or(hr.namespace()), &r.name)),
        None => Err("it has neither spec.chart nor spec.chartRef".into()),
    }
}

async fn of(reader: &impl Reader, hr: &HelmRelease, version: &str) -> Result<Remote, String> {
    let hr_ns = hr.namespace();
    if let Some(template) = &hr.spec.chart {
        let r = &template.spec.source_ref;
        let ns = r.namespace.as_deref().filter(|s| !s.is_empty()).unwrap_or(hr_ns);
        return helm_repository(reader, &r.kind, ns, &r.name, &template.spec.chart, version).await;
    }
    let Some(r) = &hr.spec.chart_ref else {
        return Err("it has neither spec.chart nor spec.chartRef".into());
    };
    let ns = r.namespace.as_deref().filter(|s| !s.is_empty()).unwrap_or(hr_ns);
    match r.kind.as_str() {
        "OCIRepository" => oci_repository(reader, ns, &r.name, version).await,
        "HelmChart" => {
            let spec = reader.source(&kind::HELM_CHART, ns, &r.name).await?;
            let source = spec.get("sourceRef").unwrap_or(&Value::Null);
            let (kind_name, name) = (str_at(source, "kind"), str_at(source, "name"));
            let chart_name = spec.get("chart").and_then(Value::as_str).unwrap_or_default();
            helm_repository(reader, kind_name, ns, name, chart_name, version).await
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
    let repo = if oci { Repo::Oci { url, insecure } } else { Repo::Http { url } };
    let chart = RepositoryChart { repo, chart: chart.to_string(), version: version.to_string() };
    Ok(Remote { chart, creds, source: format!("HelmRepository {ns}/{name}"), digested: false })
}

async fn oci_repository(reader: &impl Reader, ns: &str, name: &str, version: &str) -> Result<Remote, String> {
    let spec = reader.source(&kind::OCI_REPOSITORY, ns, name).await?;
    let spec = &spec;
    let url = str_at_map(spec, "url");
    let insecure = spec.get("insecure").and_then(Value::as_bool).unwrap_or(false);
    let Some((parent, chart)) = url.trim_end_matches('/').rsplit_once('/').filter(|(p, _)| p.contains("://")) else {
        return Err(format!("OCIRepository {ns}/{name}'s url {url:?} names no chart (oci://HOST/PATH/CHART)"));
    };
    let creds = reader.credentials(ns, spec, url).await?;
    let chart = RepositoryChart {
        repo: Repo::Oci { url: parent.to_string(), insecure },
        chart: chart.to_string(),
        version: version.to_string(),
    };
    Ok(Remote { chart, creds, source: format!("OCIRepository {ns}/{name}"), digested: true })
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
