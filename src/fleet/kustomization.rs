//! A Flux Kustomization (`kustomize.toolkit.fluxcd.io/v1`), the fields a build reads: where its files are
//! (`sourceRef`, `path`), what kustomize-controller lays over their `kustomization.yaml`, and what it does
//! to each object after the build (`postBuild`, `commonMetadata`). Read through serde, as the HelmRelease
//! is; fields a build does not read are not modelled.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

/// The API group of Flux's Kustomization (not kustomize's own `kustomize.config.k8s.io`).
pub const GROUP: &str = "kustomize.toolkit.fluxcd.io";
pub const KIND: &str = "Kustomization";

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Kustomization {
    pub metadata: Metadata,
    #[serde(default)]
    pub spec: Spec,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
pub struct Metadata {
    pub name: String,
    #[serde(default)]
    pub namespace: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Spec {
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub source_ref: SourceRef,
    #[serde(default)]
    pub target_namespace: Option<String>,
    #[serde(default)]
    pub name_prefix: Option<String>,
    #[serde(default)]
    pub name_suffix: Option<String>,
    /// `{patch, target}`, passed to kustomize as they are.
    #[serde(default)]
    pub patches: Vec<Value>,
    /// `{name, newName, newTag, digest}`, merged by name into the file's.
    #[serde(default)]
    pub images: Vec<Value>,
    #[serde(default)]
    pub components: Vec<String>,
    #[serde(default)]
    pub ignore_missing_components: bool,
    #[serde(default)]
    pub common_metadata: Option<CommonMetadata>,
    #[serde(default)]
    pub post_build: Option<PostBuild>,
    #[serde(default)]
    pub suspend: bool,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
pub struct SourceRef {
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub namespace: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
pub struct CommonMetadata {
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PostBuild {
    #[serde(default)]
    pub substitute: BTreeMap<String, String>,
    #[serde(default)]
    pub substitute_from: Vec<SubstituteReference>,
    /// `Always` substitutes (defaults, `$$`) even with no variable; else only with one.
    #[serde(default)]
    pub substitute_strategy: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
pub struct SubstituteReference {
    pub kind: String,
    pub name: String,
    #[serde(default)]
    pub optional: bool,
}

impl Kustomization {
    /// Whether `object` is a Flux Kustomization.
    pub fn is(object: &serde_json::Map<String, Value>) -> bool {
        object.get("kind").and_then(Value::as_str) == Some(KIND)
            && object.get("apiVersion").and_then(Value::as_str).is_some_and(|v| v.split('/').next() == Some(GROUP))
    }

    /// The Kustomization `object` is, in `default_namespace` when it names none.
    pub fn from_object(
        object: &serde_json::Map<String, Value>,
        default_namespace: &str,
    ) -> Result<Kustomization, String> {
        let mut k: Kustomization = serde_json::from_value(Value::Object(object.clone())).map_err(|e| e.to_string())?;
        if k.metadata.namespace.as_deref().is_none_or(str::is_empty) {
            k.metadata.namespace = Some(default_namespace.to_string());
        }
        Ok(k)
    }

    pub fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or("default")
    }

    /// `namespace/name`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace(), self.metadata.name)
    }

    /// Its path in its source, relative to the artifact's root, without `./` or a trailing `/` (empty: the
    /// root).
    pub fn path(&self) -> String {
        clean_path(self.spec.path.as_deref().unwrap_or_default())
    }

    /// The source's namespace (the Kustomization's when the reference names none).
    pub fn source_namespace(&self) -> &str {
        self.spec.source_ref.namespace.as_deref().filter(|s| !s.is_empty()).unwrap_or(self.namespace())
    }
}

/// A path as kustomize-controller joins it to the artifact root: `.`, `./` and empty segments dropped,
/// `..` kept inside the root.
pub fn clean_path(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            s => out.push(s),
        }
    }
    out.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_joined_inside_the_root() {
        assert_eq!(clean_path("./apps/staging/"), "apps/staging");
        assert_eq!(clean_path("../../etc"), "etc");
        assert_eq!(clean_path("./"), "");
    }

    #[test]
    fn reads_the_fields_a_build_needs() {
        let o = serde_json::json!({
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
            "metadata": {"name": "apps"},
            "spec": {"path": "./apps/staging", "sourceRef": {"kind": "GitRepository", "name": "flux-system"},
                     "targetNamespace": "web", "postBuild": {"substitute": {"a": "b"},
                     "substituteFrom": [{"kind": "ConfigMap", "name": "vars", "optional": true}]}}
        });
        let o = o.as_object().unwrap();
        assert!(Kustomization::is(o));
        let k = Kustomization::from_object(o, "flux-system").unwrap();
        assert_eq!(k.key(), "flux-system/apps");
        assert_eq!(k.path(), "apps/staging");
        assert_eq!(k.source_namespace(), "flux-system");
        assert!(k.spec.post_build.unwrap().substitute_from[0].optional);
    }
}
