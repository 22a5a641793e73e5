//! Releases as Cozystack defines them: its `PackageSource` objects (`cozystack.io/v1alpha1`, read as
//! [`crate::platform`] types them), kept in the repository beside the charts, each a list of variants
//! whose components are charts. The platform's operator makes of each component an artifact (an
//! ArtifactGenerator's copies: the chart's directory, the variant's libraries the component names into
//! `charts/`, its `valuesFiles` over `values.yaml`, the first replacing it and each next one merged)
//! and, for a component with `install`, a HelmRelease of that artifact (named `install.releaseName`,
//! else the component, in `install.namespace`). Here each component of each variant is one
//! [`PackageRelease`], made the same way from the files of one side of a review, so that a change to
//! what one variant reads is reviewed as that variant's release.
//!
//! Paths: a component's `path` lies under its source's `path` (for a GitRepository `packages` unless
//! given; for an OCIRepository the artifact's root, which Cozystack pushes from `packages/`): the
//! directory that stands for the source's root is the one under which the component's chart is found.
//! A component without `install` (Cozystack's apps, released by its API in tenant namespaces) is
//! released under its own name in the namespace given for charts without a release (`-n`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::artifact::{Artifact, Copy, Strategy};
use super::release_file::ReleaseFiles;
use crate::flux::HelmRelease;
use crate::platform::package_source::{self as kind, Component, Install, PackageSourceSpec, Variant};
use crate::platform::{self, ApplicationDefinition, PackageSource, application_definition};

/// The namespace of the artifacts the operator's ArtifactGenerators make.
const ARTIFACTS_NAMESPACE: &str = "cozy-system";

/// Where a PackageSource's release is, as people name it: the package, the variant, the component.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    pub package: String,
    pub variant: String,
    pub component: String,
}

/// One component of one variant of a PackageSource, as the platform releases it.
#[derive(Debug, Clone)]
pub struct PackageRelease {
    pub key: Key,
    /// The HelmRelease's namespace and name.
    pub namespace: String,
    pub name: String,
    /// Whether the operator writes its HelmRelease (`install`); else it is released as `-n` says.
    pub installed: bool,
    /// The chart's directory in the repository.
    pub chart: PathBuf,
    /// The artifact the chart is built as (its chart in [`Artifact::chart`]).
    pub artifact: Artifact,
    /// The repository paths of its `valuesFiles`.
    pub values_files: Vec<PathBuf>,
    /// The HelmRelease as the operator writes it (JSON).
    helmrelease: Value,
}

impl PackageRelease {
    /// The HelmRelease: its `cozystack-values` Secret (the values the platform injects) is `optional`
    /// here, so that a review without the platform renders it with the values given instead (`-f`).
    pub fn helmrelease(&self) -> Option<HelmRelease> {
        serde_json::from_value(self.helmrelease.clone()).ok()
    }

    /// What decides its rendering besides the files it reads: its HelmRelease and its copies.
    pub fn definition(&self) -> String {
        format!("{}{:?}", self.helmrelease, self.artifact.copies)
    }

    /// The repository paths its artifact reads (the chart's directory, libraries, values files).
    pub fn reads(&self) -> impl Iterator<Item = PathBuf> + '_ {
        self.artifact.copies.iter().map(Copy::reads)
    }
}

/// Every component of every variant of the PackageSources of `files`, whose chart is one of `charts`
/// (repository directories); a component without `install` is released in `namespace`.
pub fn releases(files: &ReleaseFiles, charts: &BTreeSet<PathBuf>, namespace: &str) -> Vec<PackageRelease> {
    let prefixes = application_prefixes(files);
    let mut out = Vec::new();
    for object in files.objects(platform::GROUP, kind::KIND) {
        let source = match PackageSource::read(object) {
            Ok(source) => source,
            Err(e) => {
                // A field of the wrong type: the API server would refuse the object, so no cluster has it.
                tracing::debug!("PackageSource {}: left out, it cannot be read: {e}", name_of(object));
                continue;
            }
        };
        let name = source.metadata.name();
        let skip_values = source.skips_values();
        let Some(spec) = &source.spec else { continue };
        let Some(root) = source_root(spec, charts) else {
            tracing::debug!("PackageSource {name}: none of its components' charts is in the review");
            continue;
        };
        for variant in &spec.variants {
            let made = Made { package: name, skip_values, root: &root, namespace, prefixes: &prefixes };
            out.extend(made.variant(variant));
        }
    }
    out.retain(|r| charts.contains(&r.chart));
    out
}

/// What every release of one PackageSource is made with.
struct Made<'a> {
    package: &'a str,
    skip_values: bool,
    /// The repository directory that stands for the source's root.
    root: &'a Path,
    /// Where a component without `install` is released.
    namespace: &'a str,
    /// The release prefix of each artifact an ApplicationDefinition releases.
    prefixes: &'a BTreeMap<String, String>,
}

/// The `release.prefix` of each ApplicationDefinition of the files, by the name of the artifact (the
/// ExternalArtifact of its `release.chartRef`) it releases.
fn application_prefixes(files: &ReleaseFiles) -> BTreeMap<String, String> {
    files
        .objects(platform::GROUP, application_definition::KIND)
        .filter_map(|object| match ApplicationDefinition::read(object) {
            Ok(definition) => definition.release_of().map(|(artifact, prefix)| (artifact.into(), prefix.into())),
            Err(e) => {
                tracing::debug!("ApplicationDefinition {}: left out, it cannot be read: {e}", name_of(object));
                None
            }
        })
        .collect()
}

/// A document's name, for messages about a document that cannot be read.
fn name_of(object: &Map<String, Value>) -> &str {
    object.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or("")
}

impl Made<'_> {
    fn variant(&self, variant: &Variant) -> Vec<PackageRelease> {
        let variant_name = variant.name.as_deref().unwrap_or("default");
        let libraries: Vec<(String, String)> = variant
            .libraries
            .iter()
            .filter_map(|l| {
                let path = l.path.as_deref()?;
                let name = l.name.as_deref().filter(|n| !n.is_empty()).or_else(|| last_segment(path))?;
                Some((name.to_string(), path.to_string()))
            })
            .collect();
        variant.components.iter().filter_map(|c| self.component(variant_name, &libraries, c)).collect()
    }

    fn component(&self, variant: &str, libraries: &[(String, String)], c: &Component) -> Option<PackageRelease> {
        let component = c.name.as_deref()?;
        let path = c.path.as_deref()?.trim_matches('/');
        let dir_name = last_segment(path)?;
        let chart = self.root.join(path);
        let key = Key { package: self.package.into(), variant: variant.into(), component: component.into() };
        let artifact_name =
            [self.package, variant, component].iter().map(|s| s.replace('.', "-")).collect::<Vec<_>>().join("-");
        let repo = |p: &Path| p.display().to_string();
        let mut copies = vec![Copy {
            from: format!("{}/**", repo(&chart)),
            to: format!("{dir_name}/"),
            strategy: Strategy::Overwrite,
        }];
        for wanted in &c.libraries {
            // The operator leaves out a library its variant does not define.
            if let Some((lib, lib_path)) = libraries.iter().find(|(n, _)| n == wanted) {
                let from = format!("{}/**", repo(&self.root.join(lib_path.trim_matches('/'))));
                copies.push(Copy { from, to: format!("{dir_name}/charts/{lib}/"), strategy: Strategy::Overwrite });
            }
        }
        let values_files: Vec<PathBuf> = c.values_files.iter().map(|f| chart.join(f)).collect();
        for (i, f) in values_files.iter().enumerate() {
            let strategy = if i == 0 { Strategy::Overwrite } else { Strategy::Merge };
            copies.push(Copy { from: repo(f), to: format!("{dir_name}/values.yaml"), strategy });
        }
        let install = c.install.as_ref();
        let namespace = install.and_then(|i| i.namespace.as_deref()).unwrap_or(self.namespace).to_string();
        // An application (no `install`) is released by Cozystack's API under its ApplicationDefinition's
        // prefix: shown as an application named after the component.
        let application = self.prefixes.get(&artifact_name).map(|prefix| format!("{prefix}{component}"));
        let name = match install.and_then(|i| i.release_name.as_deref()).filter(|n| !n.is_empty()) {
            Some(name) => name.to_string(),
            None if install.is_none() => application.unwrap_or_else(|| component.to_string()),
            None => component.to_string(),
        };
        let files_annotation: Vec<&str> = c.values_files.iter().map(String::as_str).collect();
        let helmrelease = self.helmrelease(&namespace, &name, &artifact_name, install, &files_annotation);
        Some(PackageRelease {
            key,
            namespace,
            name,
            installed: install.is_some(),
            chart,
            artifact: Artifact::new(artifact_name, copies),
            values_files,
            helmrelease,
        })
    }

    /// The HelmRelease as Cozystack's package reconciler writes it.
    fn helmrelease(
        &self,
        namespace: &str,
        name: &str,
        artifact: &str,
        install: Option<&Install>,
        values_files: &[&str],
    ) -> Value {
        let strategy = json!({"name": "RetryOnFailure", "retryInterval": "30s"});
        let mut upgrade = json!({"timeout": "10m", "strategy": strategy});
        if let Some(crds) = install.and_then(|i| i.upgrade_crds.as_deref()).filter(|c| !c.is_empty()) {
            upgrade["crds"] = json!(crds);
        }
        let mut metadata =
            json!({"name": name, "namespace": namespace, "labels": {"cozystack.io/package": self.package}});
        if !values_files.is_empty() {
            metadata["annotations"] = json!({"cozyhr.cozystack.io/values-files": values_files.join(",")});
        }
        let mut spec: Map<String, Value> = serde_json::from_value(json!({
            "interval": "5m",
            "maxHistory": 5,
            "chartRef": {"kind": "ExternalArtifact", "name": artifact, "namespace": ARTIFACTS_NAMESPACE},
            "install": {"timeout": "10m", "strategy": strategy},
            "upgrade": upgrade,
        }))
        .unwrap_or_default();
        if !self.skip_values {
            spec.insert("valuesFrom".into(), json!([{"kind": "Secret", "name": "cozystack-values", "optional": true}]));
        }
        json!({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "metadata": metadata, "spec": spec})
    }
}

/// The repository directory that stands for the root of a PackageSource's source: where its `path`
/// (the source's default when none) joined with a component's path is a chart.
fn source_root(spec: &PackageSourceSpec, charts: &BTreeSet<PathBuf>) -> Option<PathBuf> {
    let source = spec.source_ref.as_ref();
    let kind = source.and_then(|s| s.kind.as_deref()).unwrap_or("OCIRepository");
    let base = match source.and_then(|s| s.path.as_deref()) {
        Some(p) => p.trim_matches('/').to_string(),
        None if kind == "GitRepository" => "packages".into(),
        None => String::new(),
    };
    let paths = spec.variants.iter().flat_map(|v| &v.components).filter_map(|c| c.path.as_deref());
    for path in paths {
        let wanted = Path::new(&base).join(path.trim_matches('/'));
        if let Some(chart) = charts.iter().find(|c| c.ends_with(&wanted)) {
            let depth = wanted.components().count();
            let root: PathBuf =
                chart.components().take(chart.components().count() - depth).collect::<PathBuf>().join(&base);
            return Some(root);
        }
    }
    None
}

fn last_segment(path: &str) -> Option<&str> {
    path.trim_matches('/').rsplit('/').next().filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`super::source_root`] of a spec written as JSON, the form these tests were first written in.
    fn source_root(spec: &Value, charts: &BTreeSet<PathBuf>) -> Option<PathBuf> {
        let spec: PackageSourceSpec = serde_json::from_value(spec.clone()).expect("a PackageSource spec");
        super::source_root(&spec, charts)
    }

    const SOURCES: &str = r#"
apiVersion: cozystack.io/v1alpha1
kind: PackageSource
metadata: {name: cozystack.ca-azure}
spec:
  sourceRef: {kind: OCIRepository, name: cozystack-packages, namespace: cozy-system, path: /}
  variants:
  - name: default
    components:
    - name: ca-azure
      path: system/ca
      valuesFiles: [values.yaml, values-azure.yaml]
      install: {namespace: cozy-ca-azure, releaseName: ca-azure, upgradeCRDs: CreateReplace}
---
apiVersion: cozystack.io/v1alpha1
kind: PackageSource
metadata:
  name: cozystack.bucket
  annotations: {operator.cozystack.io/skip-cozystack-values: "true"}
spec:
  sourceRef: {kind: OCIRepository, name: cozystack-packages, namespace: cozy-system, path: /}
  variants:
  - name: default
    libraries: [{name: cozy-lib, path: library/cozy-lib}, {path: library/other}]
    components:
    - {name: bucket, path: apps/bucket, libraries: [cozy-lib, other, unknown]}
"#;

    fn charts() -> BTreeSet<PathBuf> {
        ["packages/system/ca", "packages/apps/bucket", "packages/core/platform"]
            .into_iter()
            .map(PathBuf::from)
            .collect()
    }

    #[test]
    fn each_component_is_released_as_the_operator_releases_it() {
        let files = ReleaseFiles::parse(vec![("s.yaml".into(), SOURCES.into())]).unwrap();
        let found = releases(&files, &charts(), "tenant-root");
        assert_eq!(found.len(), 2);
        let ca = &found[0];
        assert_eq!((ca.namespace.as_str(), ca.name.as_str(), ca.installed), ("cozy-ca-azure", "ca-azure", true));
        assert_eq!(ca.chart, PathBuf::from("packages/system/ca"));
        assert_eq!(ca.artifact.name, "cozystack-ca-azure-default-ca-azure");
        let copies: Vec<(&str, &str, Strategy)> =
            ca.artifact.copies.iter().map(|c| (c.from.as_str(), c.to.as_str(), c.strategy)).collect();
        assert_eq!(
            copies,
            [
                ("packages/system/ca/**", "ca/", Strategy::Overwrite),
                ("packages/system/ca/values.yaml", "ca/values.yaml", Strategy::Overwrite),
                ("packages/system/ca/values-azure.yaml", "ca/values.yaml", Strategy::Merge),
            ]
        );
        let hr = ca.helmrelease().unwrap();
        assert_eq!(hr.spec.values_from.len(), 1, "the platform's values Secret");
        assert!(hr.spec.values_from[0].optional);
        let raw = &ca.helmrelease;
        assert_eq!(raw["spec"]["chartRef"]["name"], "cozystack-ca-azure-default-ca-azure");
        assert_eq!(raw["spec"]["upgrade"]["crds"], "CreateReplace");
        assert_eq!(raw["metadata"]["annotations"]["cozyhr.cozystack.io/values-files"], "values.yaml,values-azure.yaml");

        let bucket = &found[1];
        assert_eq!(
            (bucket.namespace.as_str(), bucket.name.as_str(), bucket.installed),
            ("tenant-root", "bucket", false)
        );
        let to: Vec<&str> = bucket.artifact.copies.iter().map(|c| c.to.as_str()).collect();
        assert_eq!(
            to,
            ["bucket/", "bucket/charts/cozy-lib/", "bucket/charts/other/"],
            "an unknown library is left out"
        );
        assert!(bucket.helmrelease().unwrap().spec.values_from.is_empty(), "skip-cozystack-values");
    }

    #[test]
    fn a_git_repository_source_is_under_packages_unless_told() {
        let spec = json!({"sourceRef": {"kind": "GitRepository", "name": "x"}, "variants": [{"components": [{"name": "ca", "path": "system/ca"}]}]});
        assert_eq!(source_root(&spec, &charts()), Some(PathBuf::from("packages")));
        let spec = json!({"sourceRef": {"kind": "OCIRepository", "path": "/"}, "variants": [{"components": [{"name": "ca", "path": "system/ca"}]}]});
        assert_eq!(source_root(&spec, &charts()), Some(PathBuf::from("packages")));
        let spec = json!({"sourceRef": {"kind": "OCIRepository"}, "variants": [{"components": [{"name": "x", "path": "nowhere/x"}]}]});
        assert_eq!(source_root(&spec, &charts()), None);
    }
}
