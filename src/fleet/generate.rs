//! The `kustomization.yaml` kustomize-controller builds a Kustomization's path with (fluxcd/pkg/kustomize
//! `Generator`): the path's own file, else one generated from the YAML files under it, then the
//! Kustomization's fields laid over it:
//!
//! - found: `kustomization.yaml`, `kustomization.yml` or `Kustomization`;
//! - generated: a walk of the path in name order, each `*.yaml`/`*.yml` a resource (it must read as
//!   Kubernetes objects), each subdirectory holding a kustomization file a resource as a whole, not walked;
//! - laid over: `targetNamespace` as `namespace`, `namePrefix`/`nameSuffix` when set, `patches` and
//!   `components` appended (a missing component dropped only with `ignoreMissingComponents`), `images`
//!   merged by `name`.
//!
//! The file is written into the private copy of the source a build runs in ([`super::artifact`]), never
//! into the user's tree, and restored once the build is read ([`Written::restore`]).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::kustomization::Kustomization;

/// The names kustomize reads a kustomization from, in its order.
pub const FILES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// The kustomization file a build needs written, and what was there before; nothing when the path's
/// own file is what the build reads.
pub struct Planned(Option<(PathBuf, Option<Vec<u8>>, Vec<u8>)>);

/// A kustomization file written for a build, and what was there before.
pub struct Written(Option<(PathBuf, Option<Vec<u8>>)>);

impl Planned {
    /// The file the build writes into the tree, if any (other builds reading it must wait for it).
    pub fn writes(&self) -> Option<&Path> {
        self.0.as_ref().map(|(file, _, _)| file.as_path())
    }

    pub fn write(self) -> Result<Written, String> {
        let Some((file, before, text)) = self.0 else { return Ok(Written(None)) };
        std::fs::write(&file, text).map_err(|e| format!("{}: {e}", file.display()))?;
        Ok(Written(Some((file, before))))
    }
}

impl Written {
    /// Puts the file back as it was (a generated one removed), for the next Kustomization of the same
    /// path.
    pub fn restore(self) {
        let _ = match self.0 {
            Some((file, Some(bytes))) => std::fs::write(file, bytes),
            Some((file, None)) => std::fs::remove_file(file),
            None => Ok(()),
        };
    }
}

/// The kustomization file in `dir`, if any.
pub fn found(dir: &Path) -> Option<PathBuf> {
    FILES.iter().map(|f| dir.join(f)).find(|p| p.is_file())
}

/// The kustomization `k` is built with in `dir` (its path in the source's copy), to be written there.
pub fn plan(dir: &Path, k: &Kustomization) -> Result<Planned, String> {
    let (file, before, base) = match found(dir) {
        Some(file) => {
            let bytes = std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
            let text = String::from_utf8_lossy(&bytes);
            let base = crate::values::parse_values(&text, &file.display().to_string())
                .map_err(|e| format!("{} is not YAML: {e}", name_in(dir, &file)))?;
            (file, Some(bytes), base)
        }
        None => (dir.join(FILES[0]), None, generated(dir)?),
    };
    let base = Value::Object(base);
    let overlaid = overlay(base.clone(), k, dir);
    if before.is_some() && overlaid == base {
        // The path's own file with nothing laid over it: kustomize reads the same from it as written.
        return Ok(Planned(None));
    }
    let text = serde_json::to_vec_pretty(&overlaid).map_err(|e| e.to_string())?;
    Ok(Planned(Some((file, before, text))))
}

fn name_in(dir: &Path, file: &Path) -> String {
    file.strip_prefix(dir).unwrap_or(file).display().to_string()
}

/// The kustomization kustomize-controller generates for a path that has none.
fn generated(dir: &Path) -> Result<serde_json::Map<String, Value>, String> {
    let mut resources = Vec::new();
    scan(dir, dir, &mut resources)?;
    let out = json!({
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": resources,
    });
    Ok(out.as_object().cloned().unwrap_or_default())
}

fn scan(root: &Path, dir: &Path, resources: &mut Vec<String>) -> Result<(), String> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        let rel = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().into_owned();
        if path.is_dir() {
            if found(&path).is_some() {
                resources.push(rel);
            } else {
                scan(root, &path, resources)?;
            }
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            let text = std::fs::read_to_string(&path).map_err(|e| format!("{rel}: {e}"))?;
            if !manifests(&text) {
                return Err(format!("failed to decode Kubernetes YAML from {rel}"));
            }
            resources.push(rel);
        }
    }
    Ok(())
}

/// Whether every document of `text` reads as a Kubernetes object (an `apiVersion` and a `kind`).
fn manifests(text: &str) -> bool {
    crate::cluster::manifests::split_documents(text).iter().all(|doc| {
        match crate::values::parse_values(&doc.text, "a manifest") {
            Ok(o) => {
                o.is_empty()
                    || (o.get("apiVersion").is_some_and(Value::is_string)
                        && o.get("kind").is_some_and(Value::is_string))
            }
            Err(_) => false,
        }
    })
}

/// `base` with the Kustomization's fields laid over it, as kustomize-controller lays them.
fn overlay(mut base: Value, k: &Kustomization, dir: &Path) -> Value {
    let spec = &k.spec;
    let set = |base: &mut Value, key: &str, v: &Option<String>| {
        if let Some(v) = v.as_deref().filter(|v| !v.is_empty()) {
            base[key] = json!(v);
        }
    };
    set(&mut base, "namespace", &spec.target_namespace);
    set(&mut base, "namePrefix", &spec.name_prefix);
    set(&mut base, "nameSuffix", &spec.name_suffix);
    if !spec.patches.is_empty() {
        append(&mut base, "patches", spec.patches.iter().cloned());
    }
    let components: Vec<Value> = spec
        .components
        .iter()
        .filter(|c| !spec.ignore_missing_components || dir.join(c).exists())
        .map(|c| json!(c))
        .collect();
    if !components.is_empty() {
        append(&mut base, "components", components);
    }
    for image in &spec.images {
        merge_image(&mut base, image);
    }
    base
}

fn append(base: &mut Value, key: &str, items: impl IntoIterator<Item = Value>) {
    let list = base.as_object_mut().map(|m| m.entry(key).or_insert_with(|| json!([])));
    if let Some(Value::Array(list)) = list {
        list.extend(items);
    } else if let Some(slot) = base.get_mut(key) {
        *slot = Value::Array(items.into_iter().collect());
    }
}

/// An image of the Kustomization over the file's image of the same name (its set fields win), else
/// added.
fn merge_image(base: &mut Value, image: &Value) {
    let name = image.get("name").cloned();
    let list = base.as_object_mut().map(|m| m.entry("images").or_insert_with(|| json!([])));
    let Some(Value::Array(list)) = list else { return };
    match list.iter_mut().find(|i| i.get("name") == name.as_ref()) {
        Some(Value::Object(existing)) => {
            for (k, v) in image.as_object().into_iter().flatten() {
                if v.as_str().is_none_or(|s| !s.is_empty()) {
                    existing.insert(k.clone(), v.clone());
                }
            }
        }
        _ => list.push(image.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kustomization(spec: Value) -> Kustomization {
        serde_json::from_value(json!({"metadata": {"name": "k"}, "spec": spec})).unwrap()
    }

    #[test]
    fn generates_from_the_yaml_under_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("nested/deeper")).unwrap();
        std::fs::create_dir_all(d.join("base")).unwrap();
        std::fs::write(d.join("b.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n").unwrap();
        std::fs::write(d.join("a.yml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n").unwrap();
        std::fs::write(d.join("notes.txt"), "not read").unwrap();
        std::fs::write(d.join("nested/deeper/c.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
            .unwrap();
        std::fs::write(d.join("base/kustomization.yaml"), "resources: []\n").unwrap();
        std::fs::write(d.join("base/ignored.yaml"), "not: a manifest\n").unwrap();
        let k = kustomization(
            json!({"targetNamespace": "web", "namePrefix": "p-", "images": [{"name": "nginx", "newTag": "2"}]}),
        );
        let written = plan(d, &k).unwrap().write().unwrap();
        let got: Value = serde_json::from_slice(&std::fs::read(d.join("kustomization.yaml")).unwrap()).unwrap();
        assert_eq!(got["resources"], json!(["a.yml", "b.yaml", "base", "nested/deeper/c.yaml"]));
        assert_eq!(got["namespace"], "web");
        assert_eq!(got["namePrefix"], "p-");
        assert_eq!(got["images"], json!([{"name": "nginx", "newTag": "2"}]));
        written.restore();
        assert!(!d.join("kustomization.yaml").exists());
    }

    #[test]
    fn lays_its_fields_over_a_found_file_and_restores_it() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let original = "resources: [x.yaml]\nnameSuffix: -old\nimages:\n- name: nginx\n  newTag: \"1\"\n  newName: r/nginx\npatches:\n- path: p.yaml\n";
        std::fs::write(d.join("kustomization.yaml"), original).unwrap();
        let k = kustomization(json!({"nameSuffix": "-new", "images": [{"name": "nginx", "newTag": "2"}],
            "patches": [{"patch": "x", "target": {"kind": "Deployment"}}], "components": ["c", "missing"],
            "ignoreMissingComponents": true}));
        std::fs::create_dir(d.join("c")).unwrap();
        let written = plan(d, &k).unwrap().write().unwrap();
        let got: Value = serde_json::from_slice(&std::fs::read(d.join("kustomization.yaml")).unwrap()).unwrap();
        assert_eq!(got["nameSuffix"], "-new");
        assert_eq!(got["images"], json!([{"name": "nginx", "newTag": "2", "newName": "r/nginx"}]));
        assert_eq!(got["patches"].as_array().unwrap().len(), 2);
        assert_eq!(got["components"], json!(["c"]));
        written.restore();
        assert_eq!(std::fs::read_to_string(d.join("kustomization.yaml")).unwrap(), original);
        // With nothing to lay over it, the file is read as it is: nothing written.
        assert!(plan(d, &kustomization(json!({}))).unwrap().writes().is_none());
    }

    #[test]
    fn a_stray_yaml_fails_a_generated_build() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("values.yaml"), "replicas: 2\n").unwrap();
        let err = plan(dir.path(), &kustomization(json!({}))).err().unwrap();
        assert_eq!(err, "failed to decode Kubernetes YAML from values.yaml");
    }
}
