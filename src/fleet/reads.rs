//! What a Kustomization's build reads of its source, worked out from the kustomization files without
//! building: its path (everything under it), and every local directory or file its kustomization files
//! name (`resources`, `components`, patches, generators' files, configurations, ...), followed into the
//! directories they name. Generous by design: a changed file it names is always seen, so an unchanged
//! result can be built once and used at both sides. Remote resources are not followed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::generate;
use super::kustomization::clean_path;

/// Repository paths a build reads: directories (everything under them) and single files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reads {
    dirs: BTreeSet<PathBuf>,
    files: BTreeSet<PathBuf>,
    /// Whether a kustomization names a remote resource (not followed, so not known from here).
    remote: bool,
}

impl Reads {
    /// What a build of `path` reads in the artifact at `root`.
    pub fn of(root: &Path, path: &str) -> Reads {
        let mut reads = Reads::default();
        reads.dir(root, PathBuf::from(path), 0);
        reads
    }

    /// What a build of Kustomization `k` reads in the artifact at `root`: its path, and the components its
    /// spec lays over the path's kustomization.
    pub fn of_kustomization(root: &Path, k: &super::kustomization::Kustomization) -> Reads {
        let path = k.path();
        let mut reads = Reads::of(root, &path);
        for component in &k.spec.components {
            let dir = PathBuf::from(clean_path(&Path::new(&path).join(component).to_string_lossy()));
            reads.dir(root, dir, 1);
        }
        reads
    }

    /// Adds everything under repository directory `dir`.
    pub fn add_dir(&mut self, dir: PathBuf) {
        self.dirs.insert(dir);
    }

    /// The directories read whole and the single files read, in order.
    pub fn paths(&self) -> (impl Iterator<Item = &PathBuf>, impl Iterator<Item = &PathBuf>) {
        (self.dirs.iter(), self.files.iter())
    }

    /// Whether a kustomization names a remote resource, which these paths do not cover.
    pub fn remote(&self) -> bool {
        self.remote
    }

    /// Whether the build reads repository path `changed`.
    pub fn touches(&self, changed: &Path) -> bool {
        self.files.contains(changed) || self.dirs.iter().any(|d| changed.starts_with(d))
    }

    fn dir(&mut self, root: &Path, dir: PathBuf, depth: usize) {
        if depth > 32 || self.dirs.iter().any(|d| dir.starts_with(d)) {
            return;
        }
        self.dirs.insert(dir.clone());
        let Some(file) = generate::found(&root.join(&dir)) else { return };
        let Ok(text) = std::fs::read_to_string(&file) else { return };
        let Ok(k) = crate::values::parse_values(&text, "a kustomization") else { return };
        for named in named_paths(&Value::Object(k)) {
            if named.contains("://") || named.starts_with("github.com/") || named.starts_with("git@") {
                self.remote = true;
                continue;
            }
            let joined = PathBuf::from(clean_path(&dir.join(&named).to_string_lossy()));
            if root.join(&joined).is_dir() {
                self.dir(root, joined, depth + 1);
            } else {
                self.files.insert(joined);
            }
        }
    }
}

/// The local paths a kustomization names.
fn named_paths(k: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).map(str::to_string).collect()
    };
    for key in [
        "resources",
        "bases",
        "components",
        "patchesStrategicMerge",
        "configurations",
        "crds",
        "transformers",
        "generators",
        "validators",
    ] {
        out.extend(strings(k.get(key)));
    }
    for key in ["patches", "patchesJson6902", "replacements"] {
        for item in k.get(key).and_then(Value::as_array).into_iter().flatten() {
            out.extend(item.get("path").and_then(Value::as_str).map(str::to_string));
        }
    }
    for key in ["configMapGenerator", "secretGenerator"] {
        for item in k.get(key).and_then(Value::as_array).into_iter().flatten() {
            // `files` entries may be `key=path`.
            out.extend(
                strings(item.get("files"))
                    .into_iter()
                    .map(|f| f.split_once('=').map_or(f.clone(), |(_, p)| p.to_string())),
            );
            out.extend(strings(item.get("envs")));
            out.extend(item.get("env").and_then(Value::as_str).map(str::to_string));
        }
    }
    out.extend(k.get("openapi").and_then(|o| o.get("path")).and_then(Value::as_str).map(str::to_string));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_what_the_kustomization_files_name() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        std::fs::create_dir_all(r.join("apps/base/web")).unwrap();
        std::fs::create_dir_all(r.join("apps/staging")).unwrap();
        std::fs::write(r.join("apps/base/web/kustomization.yaml"), "resources: [release.yaml]\n").unwrap();
        std::fs::write(
            r.join("apps/staging/kustomization.yaml"),
            "resources: [../base/web, https://example.com/x.yaml]\npatches:\n- path: ../../patches/web.yaml\nconfigMapGenerator:\n- name: v\n  files: [values.yaml=../../values/web.yaml]\n",
        )
        .unwrap();
        let reads = Reads::of(r, "apps/staging");
        assert!(reads.touches(Path::new("apps/staging/values.yaml")));
        assert!(reads.touches(Path::new("apps/base/web/release.yaml")));
        assert!(reads.touches(Path::new("patches/web.yaml")));
        assert!(reads.touches(Path::new("values/web.yaml")));
        assert!(!reads.touches(Path::new("apps/production/kustomization.yaml")));
        assert!(!reads.touches(Path::new("values/other.yaml")));
    }

    #[test]
    fn a_kustomizations_own_components_are_read_too() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        std::fs::create_dir_all(r.join("apps/staging")).unwrap();
        std::fs::create_dir_all(r.join("components/monitoring")).unwrap();
        std::fs::write(r.join("apps/staging/kustomization.yaml"), "resources: []\n").unwrap();
        std::fs::write(r.join("components/monitoring/kustomization.yaml"), "kind: Component\n").unwrap();
        let k: crate::fleet::kustomization::Kustomization = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "apps", "namespace": "flux-system"},
            "spec": {"path": "./apps/staging", "components": ["../../components/monitoring"]}
        }))
        .unwrap();
        assert!(!Reads::of(r, "apps/staging").touches(Path::new("components/monitoring/kustomization.yaml")));
        let reads = Reads::of_kustomization(r, &k);
        assert!(reads.touches(Path::new("components/monitoring/kustomization.yaml")));
        assert!(reads.touches(Path::new("apps/staging/kustomization.yaml")));
    }
}
