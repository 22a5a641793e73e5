//! One Kustomization built as kustomize-controller builds it (its `build` step), from a staged artifact:
//! its path joined to the artifact's root (it must exist), the kustomization written there
//! ([`super::generate`]), `kustomize build` by kustomize v5.8, the one kustomize-controller v1.9.5 pins
//! ([`super::kustomizer`]: the binary, or kubectl's; load restrictions off, as there, the artifact being
//! the only tree) or its output kept from a run before ([`super::kept`]), then each object: it must have an
//! apiVersion, a kind and a name; `postBuild` substitution ([`super::substitute`]); as the apply step
//! leaves it: a Secret's `stringData` folded into `data`, `commonMetadata` over the object's metadata,
//! and the owner labels kustomize-controller adds.

use std::path::Path;

use base64::Engine as _;
use serde_json::{Map, Value, json};

use super::generate;
use super::kept::Kept;
use super::kustomization::Kustomization;
use super::kustomizer::Kustomizer;
use super::reads::Reads;
use super::substitute::{self, Variables};
use super::turns::{Turn, Turns};

/// Why a Kustomization cannot be built; its message reads as kustomize-controller's would.
#[derive(Debug, Clone, thiserror::Error)]
pub enum BuildError {
    #[error("kustomization path not found: {0}")]
    PathNotFound(String),
    #[error("{0}")]
    Generate(String),
    #[error("kustomize build failed: {0}")]
    Kustomize(String),
    #[error("{0}")]
    Object(String),
    #[error("post build failed for '{object}': envsubst error: variable substitution failed: {error}")]
    Substitute { object: String, error: substitute::SubstituteError },
}

/// The variables of a Kustomization's `postBuild`, and whether to substitute without any.
pub struct PostBuild {
    pub vars: Variables,
    pub always: bool,
}

/// The objects `k` applies, built from the artifact at `root` by `kustomizer`, in its turn
/// among the builds of the same tree.
pub async fn build(
    kustomizer: &Kustomizer,
    (root, turns): (&Path, &Turns),
    (k, reads): (&Kustomization, &Reads),
    post: Option<&PostBuild>,
) -> Result<Vec<Map<String, Value>>, BuildError> {
    let path = k.path();
    let dir = root.join(&path);
    if !dir.is_dir() {
        return Err(BuildError::PathNotFound(if path.is_empty() { ".".into() } else { path }));
    }
    let turn = turns.build(reads, None).await;
    let kept = Kept::of(kustomizer.program(), root, k, reads);
    let (text, fresh) = match kept.as_ref().and_then(Kept::load) {
        Some(text) => (text, false),
        None => (kustomize(kustomizer, (root, &dir), (turns, turn), (k, reads)).await?, true),
    };
    let mut built = Vec::new();
    for doc in crate::cluster::manifests::split_documents(&text) {
        let object = crate::values::parse_values(&doc.text, "kustomize's output")
            .map_err(|e| BuildError::Kustomize(e.to_string()))?;
        if !object.is_empty() {
            built.push(object);
        }
    }
    if let Some(kept) = kept.filter(|_| fresh) {
        kept.store(&text, &built);
    }
    built.into_iter().map(|object| finish(object, k, post)).collect()
}

/// kustomize's build of `dir`, with the kustomization kustomize-controller would generate there, in a
/// turn that writes it when it must be written (`turn`, the build's, reads only).
async fn kustomize(
    kustomizer: &Kustomizer,
    (root, dir): (&Path, &Path),
    (turns, turn): (&Turns, Turn<'_>),
    (k, reads): (&Kustomization, &Reads),
) -> Result<String, BuildError> {
    let planned = generate::plan(dir, k).map_err(BuildError::Generate)?;
    let (_turn, planned) = match planned.writes().map(|f| f.strip_prefix(root).unwrap_or(f).to_path_buf()) {
        None => (turn, planned),
        Some(file) => {
            drop(turn);
            let turn = turns.build(reads, Some(&file)).await;
            (turn, generate::plan(dir, k).map_err(BuildError::Generate)?)
        }
    };
    let written = planned.write().map_err(BuildError::Generate)?;
    let out = crate::support::process::run_program(kustomizer.program(), &kustomizer.args(dir), &[], None).await;
    written.restore();
    let out = out.map_err(|e| BuildError::Kustomize(e.to_string()))?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// One object of the build as kustomize-controller applies it.
fn finish(
    mut object: Map<String, Value>,
    k: &Kustomization,
    post: Option<&PostBuild>,
) -> Result<Map<String, Value>, BuildError> {
    let id = identity(&object)?;
    if let Some(post) = post.filter(|p| p.always || !p.vars.is_empty())
        && let Some(done) =
            substitute::object(&object, &post.vars).map_err(|error| BuildError::Substitute { object: id, error })?
    {
        object = done;
    }
    fold_string_data(&mut object);
    let meta = object.entry("metadata").or_insert_with(|| json!({}));
    if let Some(common) = &k.spec.common_metadata {
        for (field, map) in [("labels", &common.labels), ("annotations", &common.annotations)] {
            for (key, v) in map {
                set(meta, field, key, v);
            }
        }
    }
    set(meta, "labels", "kustomize.toolkit.fluxcd.io/name", &k.metadata.name);
    set(meta, "labels", "kustomize.toolkit.fluxcd.io/namespace", k.namespace());
    Ok(object)
}

/// `Kind.version.group/name`, as kustomize-controller names an object in messages (kustomize's resource
/// id; `[noGrp]` for the core group); an object without an apiVersion, a kind or a name is an error.
fn identity(object: &Map<String, Value>) -> Result<String, BuildError> {
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or_default();
    let name = object.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or_default();
    let api = object.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    if api.is_empty() || kind.is_empty() || name.is_empty() {
        return Err(BuildError::Object(format!(
            "an object of the build has no apiVersion, kind or name: '{kind}/{name}'"
        )));
    }
    let (group, version) = api.split_once('/').unwrap_or(("[noGrp]", api));
    Ok(format!("{kind}.{version}.{group}/{name}"))
}

fn set(meta: &mut Value, field: &str, key: &str, value: &str) {
    if !meta.get(field).is_some_and(Value::is_object) {
        meta[field] = json!({});
    }
    meta[field][key] = json!(value);
}

/// A Secret's `stringData` merged into `data` (stringData wins), as the API server and
/// kustomize-controller's normalisation store it.
fn fold_string_data(object: &mut Map<String, Value>) {
    if object.get("kind").and_then(Value::as_str) != Some("Secret")
        || object.get("apiVersion").and_then(Value::as_str) != Some("v1")
    {
        return;
    }
    let Some(Value::Object(string_data)) = object.remove("stringData") else { return };
    let data = object.entry("data").or_insert_with(|| json!({}));
    if !data.is_object() {
        *data = json!({});
    }
    for (k, v) in string_data {
        let text = v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string());
        data[k] = json!(base64::engine::general_purpose::STANDARD.encode(text));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(spec: Value) -> Kustomization {
        serde_json::from_value(json!({"metadata": {"name": "apps", "namespace": "flux-system"}, "spec": spec})).unwrap()
    }

    #[test]
    fn objects_are_finished_as_applied() {
        let o: Map<String, Value> = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "labels": {"team": "a"}},
            "stringData": {"password": "${pw}"}, "data": {"user": "dQ=="}
        }))
        .unwrap();
        let mut vars = Variables::default();
        vars.extend([("pw".to_string(), "hunter2".to_string())]).unwrap();
        let post = PostBuild { vars, always: false };
        let kz = k(json!({"commonMetadata": {"labels": {"team": "b", "env": "staging"}}}));
        let out = finish(o, &kz, Some(&post)).unwrap();
        assert_eq!(out["data"], json!({"user": "dQ==", "password": "aHVudGVyMg=="}));
        assert!(out.get("stringData").is_none());
        assert_eq!(
            out["metadata"]["labels"],
            json!({"team": "b", "env": "staging", "kustomize.toolkit.fluxcd.io/name": "apps", "kustomize.toolkit.fluxcd.io/namespace": "flux-system"})
        );
    }

    #[test]
    fn a_variable_without_value_fails_as_strict_mode_does() {
        let o: Map<String, Value> = serde_json::from_value(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"x": "${nope}"}}),
        )
        .unwrap();
        let mut vars = Variables::default();
        vars.extend([("other".to_string(), "1".to_string())]).unwrap();
        let err = finish(o.clone(), &k(json!({})), Some(&PostBuild { vars, always: false })).unwrap_err();
        assert_eq!(
            err.to_string(),
            "post build failed for 'ConfigMap.v1.[noGrp]/c': envsubst error: variable substitution failed: variable not set (strict mode): \"nope\""
        );
        // No variable at all: nothing is substituted.
        let out = finish(o, &k(json!({})), Some(&PostBuild { vars: Variables::default(), always: false })).unwrap();
        assert_eq!(out["data"]["x"], "${nope}");
    }
}
