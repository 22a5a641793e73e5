//! Builds kept from one run to the next: kustomize's output for a Kustomization, on disk under cozyhr's
//! cache directory, by what the build reads: the content of every file under its [`Reads`], the
//! Kustomization's fields (what [`super::generate`] writes from), the kubectl binary and this one. A
//! review run again (a developer's second look, CI with its cache restored) builds only what changed
//! since.
//!
//! What is kept is kustomize's output before substitution, so variables (which may come from Secrets) are
//! never kept; an output that holds a Secret is not kept at all, nor a build that names a remote resource
//! (its content is not known from here). As everywhere in the cache, trouble reading or writing means
//! building.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::kustomization::Kustomization;
use super::reads::Reads;

/// Where a build's output is kept: a file named by the digest of everything it reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    file: PathBuf,
}

impl Kept {
    /// The place of `k`'s build from the artifact at `root` by `kubectl` (reading what `reads` says), in
    /// cozyhr's cache; None when the build cannot be kept (a remote resource) or there is no cache directory.
    pub fn of(kubectl: &Path, root: &Path, k: &Kustomization, reads: &Reads) -> Option<Kept> {
        Kept::in_dir(&crate::support::cache::dir()?, kubectl, root, k, reads)
    }

    /// As [`Kept::of`], in the cache directory `cache`.
    pub fn in_dir(cache: &Path, kubectl: &Path, root: &Path, k: &Kustomization, reads: &Reads) -> Option<Kept> {
        if reads.remote() {
            return None;
        }
        let mut h = Sha256::new();
        let mut field = |label: &str, bytes: &[u8]| {
            h.update((label.len() as u64).to_le_bytes());
            h.update(label.as_bytes());
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        };
        // This program too (what it writes for a path that has none changes with it, and a build from
        // source keeps its version number).
        let this = std::env::current_exe().ok()?;
        field("cozyhr", format!("{} {}", env!("CARGO_PKG_VERSION"), identity(&this)?).as_bytes());
        field("kubectl", identity(kubectl)?.as_bytes());
        field("kustomization", format!("{k:?}").as_bytes());
        let (dirs, files) = reads.paths();
        for dir in dirs {
            field("dir", dir.as_os_str().as_encoded_bytes());
            for (path, bytes) in files_under(&root.join(dir)) {
                field(&path.to_string_lossy(), &bytes);
            }
        }
        for file in files {
            field("file", file.as_os_str().as_encoded_bytes());
            field("content", &std::fs::read(root.join(file)).unwrap_or_default());
        }
        let digest: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        Some(Kept { file: cache.join("kustomize").join(format!("{digest}.yaml")) })
    }

    /// The output kept from a build before, if any.
    pub fn load(&self) -> Option<String> {
        std::fs::read_to_string(&self.file).ok()
    }

    /// Keeps `output`, whose objects are `objects`, unless one of them is a Secret.
    pub fn store(&self, output: &str, objects: &[Map<String, Value>]) {
        if !objects.iter().any(|o| o.get("kind").and_then(Value::as_str) == Some("Secret")) {
            crate::support::cache::write(&self.file, output.as_bytes());
        }
    }
}

/// A binary as the file it is: its path, size and modification time.
fn identity(binary: &Path) -> Option<String> {
    let meta = std::fs::metadata(binary).ok()?;
    let modified = meta.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?;
    Some(format!("{} {} {}", binary.display(), meta.len(), modified.as_nanos()))
}

/// Every file under `dir` (symbolic links followed, as kustomize reads them), relative to it, in order.
fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(dir.join(&rel)) else { continue };
        let mut names: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.file_name()).collect();
        names.sort();
        for name in names.into_iter().rev() {
            let path = rel.join(&name);
            let full = dir.join(&path);
            if full.is_dir() {
                // A depth bound against a symbolic link that points up its own tree.
                if path.components().count() < 32 {
                    stack.push(path);
                }
            } else if let Ok(bytes) = std::fs::read(&full) {
                out.push((path, bytes));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kustomization(path: &str) -> Kustomization {
        let object = serde_json::json!({
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
            "metadata": {"name": "apps", "namespace": "flux-system"},
            "spec": {"path": path, "sourceRef": {"kind": "GitRepository", "name": "flux-system"}},
        });
        Kustomization::from_object(object.as_object().unwrap(), "default").unwrap()
    }

    #[test]
    fn the_place_follows_every_file_the_build_reads_and_nothing_else() {
        let repo = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        let r = repo.path();
        let write = |p: &str, t: &str| {
            std::fs::create_dir_all(r.join(p).parent().unwrap()).unwrap();
            std::fs::write(r.join(p), t).unwrap();
        };
        write("apps/staging/kustomization.yaml", "resources:\n- ../base/web\npatches:\n- path: ../patches/web.yaml\n");
        write("apps/base/web/release.yaml", "kind: HelmRelease\n");
        write("apps/base/web/kustomization.yaml", "resources:\n- release.yaml\n");
        write("apps/patches/web.yaml", "kind: HelmRelease\n");
        write("apps/base/other/release.yaml", "kind: HelmRelease\n");
        let kubectl = r.join("apps/base/web/release.yaml");
        let at = || {
            Kept::in_dir(cache.path(), &kubectl, r, &kustomization("./apps/staging"), &Reads::of(r, "apps/staging"))
                .unwrap()
        };
        let first = at();
        assert!(first.file.starts_with(cache.path().join("kustomize")));

        write("apps/base/other/release.yaml", "kind: HelmRelease\nmetadata: {name: other}\n");
        assert_eq!(at(), first, "a file the build does not read changes nothing");
        write("apps/patches/web.yaml", "kind: HelmRelease\nmetadata: {name: web}\n");
        let patched = at();
        assert_ne!(patched, first, "a patch file it names");
        write("apps/base/web/values.yaml", "a: 1\n");
        assert_ne!(at(), patched, "a new file under a directory it reads");
        assert_ne!(
            Kept::in_dir(cache.path(), &kubectl, r, &kustomization("./apps/base/web"), &Reads::of(r, "apps/base/web")),
            Some(at()),
            "another Kustomization"
        );

        let objects = |kinds: &[&str]| -> Vec<Map<String, Value>> {
            kinds.iter().map(|k| serde_json::json!({"kind": k}).as_object().unwrap().clone()).collect()
        };
        at().store("kind: ConfigMap\n", &objects(&["ConfigMap"]));
        assert_eq!(at().load().as_deref(), Some("kind: ConfigMap\n"));
        write("apps/base/web/values.yaml", "a: 2\n");
        at().store("kind: ConfigMap\n---\nkind: Secret\n", &objects(&["ConfigMap", "Secret"]));
        assert_eq!(at().load(), None, "an output holding a Secret is not kept");

        write("apps/staging/kustomization.yaml", "resources:\n- https://example.com/remote.yaml\n");
        assert_eq!(
            Kept::in_dir(cache.path(), &kubectl, r, &kustomization("./apps/staging"), &Reads::of(r, "apps/staging")),
            None
        );
    }
}
