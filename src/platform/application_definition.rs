//! `ApplicationDefinition` (`cozystack.io/v1alpha1`): an application Cozystack's API offers tenants,
//! kept in each `*-rd` chart's `cozyrds/`. cozyhr reads only how the API releases it: the prefix of the
//! HelmRelease's name and the artifact (`release.chartRef`, an ExternalArtifact a PackageSource's
//! component is built as) it releases, which ties the definition to that component.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{Metadata, nullable};

pub const KIND: &str = "ApplicationDefinition";

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApplicationDefinition {
    #[serde(default, deserialize_with = "nullable")]
    pub metadata: Metadata,
    #[serde(default)]
    pub spec: Option<ApplicationDefinitionSpec>,
}

impl ApplicationDefinition {
    /// Reads one document (already known to be of this kind).
    pub fn read(object: &Map<String, Value>) -> Result<ApplicationDefinition, serde_json::Error> {
        ApplicationDefinition::deserialize(object)
    }

    /// The name of the artifact it releases and the prefix of its releases' names (empty when none):
    /// None when it names no artifact.
    pub fn release_of(&self) -> Option<(&str, &str)> {
        let release = self.spec.as_ref()?.release.as_ref()?;
        let artifact = release.chart_ref.as_ref()?.name.as_deref()?;
        Some((artifact, release.prefix.as_deref().unwrap_or("")))
    }
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApplicationDefinitionSpec {
    #[serde(default)]
    pub release: Option<Release>,
}

/// `spec.release`: how the API releases an application of this definition.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Release {
    /// Put before the application's name to name its HelmRelease.
    #[serde(default)]
    pub prefix: Option<String>,
    #[serde(default)]
    pub chart_ref: Option<ChartRef>,
}

/// `spec.release.chartRef`: the artifact released (an ExternalArtifact; only its name is read, the
/// artifacts all living in the operator's namespace).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChartRef {
    #[serde(default)]
    pub name: Option<String>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(value: Value) -> ApplicationDefinition {
        let Value::Object(object) = value else { panic!("test documents are objects") };
        ApplicationDefinition::read(&object).expect("an ApplicationDefinition")
    }

    #[test]
    fn reads_the_release_prefix_and_artifact() {
        let definition = read(json!({
            "apiVersion": "cozystack.io/v1alpha1",
            "kind": "ApplicationDefinition",
            "metadata": {"name": "bucket"},
            "spec": {
                "application": {"kind": "Bucket", "plural": "buckets", "singular": "bucket"},
                "release": {
                    "prefix": "bucket-",
                    "labels": {"cozystack.io/ui": "true"},
                    "chartRef": {"kind": "ExternalArtifact", "name": "cozystack-bucket-default-bucket", "namespace": "cozy-system"}
                }
            }
        }));
        assert_eq!(definition.metadata.name(), "bucket");
        assert_eq!(definition.release_of(), Some(("cozystack-bucket-default-bucket", "bucket-")));
    }

    #[test]
    fn without_a_chart_ref_it_releases_nothing_and_a_missing_prefix_is_empty() {
        assert_eq!(read(json!({"spec": {"release": {"prefix": "x-"}}})).release_of(), None);
        assert_eq!(read(json!({"spec": {"release": {"prefix": "x-", "chartRef": {}}}})).release_of(), None);
        assert_eq!(read(json!({"metadata": {"name": "x"}})).release_of(), None);
        assert_eq!(read(json!({"spec": {"release": {"chartRef": {"name": "a"}}}})).release_of(), Some(("a", "")));
    }
}
