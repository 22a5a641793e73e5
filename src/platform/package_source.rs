//! `PackageSource` (`cozystack.io/v1alpha1`): a package of the platform, as Cozystack keeps it in its
//! platform chart's `sources/`. Its spec names where the charts come from (`sourceRef`) and lists the
//! package's variants; each variant lists its libraries (charts copied into a component's `charts/`) and
//! its components, each a chart (`path`) with the libraries it takes, the values files laid over its
//! `values.yaml` and, for one the operator releases itself, `install`.
//!
//! What the operator makes of it (the artifacts, the HelmRelease) is `crate::source::package_source`'s.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{Metadata, nullable};

pub const KIND: &str = "PackageSource";

/// The annotation of a PackageSource whose releases get no `cozystack-values` Secret.
pub const SKIP_VALUES: &str = "operator.cozystack.io/skip-cozystack-values";

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PackageSource {
    #[serde(default, deserialize_with = "nullable")]
    pub metadata: Metadata,
    /// None when the document has no spec (or `spec: null`): such a source defines no release.
    #[serde(default)]
    pub spec: Option<PackageSourceSpec>,
}

impl PackageSource {
    /// Reads one document (already known to be of this kind).
    pub fn read(object: &Map<String, Value>) -> Result<PackageSource, serde_json::Error> {
        PackageSource::deserialize(object)
    }

    /// Whether its releases go without the platform's `cozystack-values` Secret ([`SKIP_VALUES`] is
    /// `"true"`).
    pub fn skips_values(&self) -> bool {
        self.metadata.annotation(SKIP_VALUES) == Some("true")
    }
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PackageSourceSpec {
    #[serde(default)]
    pub source_ref: Option<SourceRef>,
    #[serde(default, deserialize_with = "nullable")]
    pub variants: Vec<Variant>,
}

/// `spec.sourceRef`: the Flux source the charts come from. Only what places the charts in the
/// repository is read (its name and namespace are the cluster's business).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceRef {
    /// `GitRepository` or `OCIRepository`; None when not given.
    #[serde(default)]
    pub kind: Option<String>,
    /// The directory of the source under which the components' paths lie; None when not given.
    #[serde(default)]
    pub path: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Variant {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub libraries: Vec<Library>,
    #[serde(default, deserialize_with = "nullable")]
    pub components: Vec<Component>,
}

/// A library chart of a variant, which its components name to have it copied into their `charts/`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Library {
    /// None or empty: named after the last segment of its path.
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub path: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Component {
    #[serde(default)]
    pub name: Option<String>,
    /// The chart's directory under the source's path.
    #[serde(default)]
    pub path: Option<String>,
    /// The names of the variant's libraries it takes.
    #[serde(default, deserialize_with = "nullable")]
    pub libraries: Vec<String>,
    /// Files of the chart's directory laid over its `values.yaml`, in order.
    #[serde(default, deserialize_with = "nullable")]
    pub values_files: Vec<String>,
    /// Present when the operator writes the component's HelmRelease; absent (or `null`) for an
    /// application Cozystack's API releases.
    #[serde(default)]
    pub install: Option<Install>,
}

/// `install`: how the operator releases the component. Typed, not kept as a `Value`: the operator's
/// HelmRelease takes only these three fields from it (its name, namespace and `upgrade.crds`), nothing
/// of it is copied whole. The rest (`dependsOn`, `privileged`, ...) is kept in `extra` so that what the
/// document says is not lost to whoever reads it next.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Install {
    #[serde(default)]
    pub release_name: Option<String>,
    #[serde(default)]
    pub namespace: Option<String>,
    /// Helm's CRD policy on upgrade (`Skip`, `Create`, `CreateReplace`).
    #[serde(default, rename = "upgradeCRDs")]
    pub upgrade_crds: Option<String>,
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A document as the release files hold it.
    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    /// Two variants: libraries, values files, `install` with a field cozyhr does not read, `install: {}`,
    /// `install: null` and an empty `libraries:` key (YAML's `null`).
    fn source() -> Value {
        json!({
            "apiVersion": "cozystack.io/v1alpha1",
            "kind": "PackageSource",
            "metadata": {"name": "cozystack.monitoring", "annotations": {SKIP_VALUES: "true"}},
            "spec": {
                "sourceRef": {"kind": "OCIRepository", "name": "cozystack-packages", "namespace": "cozy-system", "path": "/"},
                "variants": [
                    {
                        "name": "default",
                        "libraries": [{"name": "cozy-lib", "path": "library/cozy-lib"}, {"path": "library/other"}],
                        "components": [{
                            "name": "monitoring",
                            "path": "system/monitoring",
                            "libraries": ["cozy-lib"],
                            "valuesFiles": ["values.yaml", "values-default.yaml"],
                            "install": {"namespace": "cozy-monitoring", "releaseName": "monitoring", "upgradeCRDs": "CreateReplace", "privileged": true}
                        }]
                    },
                    {
                        "name": "hosted",
                        "libraries": null,
                        "components": [
                            {"name": "monitoring-agents", "path": "system/monitoring-agents", "valuesFiles": ["values-hosted.yaml"], "install": {}},
                            {"name": "bucket", "path": "apps/bucket", "install": null}
                        ]
                    }
                ]
            }
        })
    }

    #[test]
    fn reads_variants_libraries_values_files_and_install() {
        let source = PackageSource::read(&object(source())).expect("a PackageSource");
        assert_eq!(source.metadata.name(), "cozystack.monitoring");
        assert!(source.skips_values());
        let spec = source.spec.expect("a spec");
        let source_ref = spec.source_ref.expect("a sourceRef");
        assert_eq!((source_ref.kind.as_deref(), source_ref.path.as_deref()), (Some("OCIRepository"), Some("/")));
        assert_eq!(spec.variants.len(), 2);

        let default = &spec.variants[0];
        assert_eq!(default.name.as_deref(), Some("default"));
        let libraries: Vec<(Option<&str>, Option<&str>)> =
            default.libraries.iter().map(|l| (l.name.as_deref(), l.path.as_deref())).collect();
        assert_eq!(libraries, [(Some("cozy-lib"), Some("library/cozy-lib")), (None, Some("library/other"))]);
        let monitoring = &default.components[0];
        assert_eq!(monitoring.name.as_deref(), Some("monitoring"));
        assert_eq!(monitoring.path.as_deref(), Some("system/monitoring"));
        assert_eq!(monitoring.libraries, ["cozy-lib"]);
        assert_eq!(monitoring.values_files, ["values.yaml", "values-default.yaml"]);
        let install = monitoring.install.as_ref().expect("install");
        assert_eq!(install.release_name.as_deref(), Some("monitoring"));
        assert_eq!(install.namespace.as_deref(), Some("cozy-monitoring"));
        assert_eq!(install.upgrade_crds.as_deref(), Some("CreateReplace"));
        assert_eq!(install.extra.get("privileged"), Some(&Value::Bool(true)), "the rest is kept");

        let hosted = &spec.variants[1];
        assert!(hosted.libraries.is_empty(), "`null` reads as none");
        assert_eq!(hosted.components[0].install, Some(Install::default()), "`install: {{}}` is an install");
        assert_eq!(hosted.components[0].values_files, ["values-hosted.yaml"]);
        assert!(hosted.components[0].libraries.is_empty());
        assert_eq!(hosted.components[1].install, None, "`install: null` is none");
    }

    #[test]
    fn what_is_missing_reads_as_none() {
        let source = PackageSource::read(&object(json!({"kind": "PackageSource"}))).expect("a PackageSource");
        assert_eq!((source.metadata.name(), source.skips_values(), source.spec), ("", false, None));
        let source = PackageSource::read(&object(json!({"metadata": null, "spec": null}))).expect("a PackageSource");
        assert_eq!((source.metadata, source.spec), (Metadata::default(), None));
        let document = json!({"metadata": {"name": "x"}, "spec": {"variants": [{"components": [{}]}]}});
        let spec = PackageSource::read(&object(document)).expect("a PackageSource").spec.expect("a spec");
        assert_eq!(spec.source_ref, None);
        assert_eq!(spec.variants[0].name, None);
        assert_eq!(spec.variants[0].components[0], Component::default());
    }

    #[test]
    fn a_field_of_the_wrong_type_is_an_error() {
        let document = json!({"spec": {"variants": [{"components": [{"name": ["a", "b"]}]}]}});
        let err = PackageSource::read(&object(document)).expect_err("a list where a name is due");
        assert!(err.to_string().contains("invalid type"), "{err}");
    }
}
