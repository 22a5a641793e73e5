//! The files of a Git side as source-controller archives them into the artifact kustomize-controller
//! builds from (`Storage.Archive` with its default ignore rules): regular files only (symbolic links are
//! dropped), without Git's own files, and, when the repository has no `.sourceignore`, without images,
//! archives and CI configuration. Staged in a private temporary directory (in memory where there is
//! a file system there), removed when dropped.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Always left out of an artifact.
const GIT_FILES: [&str; 3] = [".gitignore", ".gitmodules", ".gitattributes"];
/// Left out when there is no `.sourceignore` (source-controller's `VCSPatterns` and default excludes).
const DEFAULT_EXTENSIONS: [&str; 8] = [".jpg", ".jpeg", ".gif", ".png", ".wmv", ".flv", ".tar.gz", ".zip"];
const DEFAULT_DIRS: [&str; 2] = [".github", ".circleci"];
const DEFAULT_FILES: [&str; 8] = [
    ".travis.yml",
    ".gitlab-ci.yml",
    "appveyor.yml",
    ".drone.yml",
    "cloudbuild.yaml",
    ".goreleaser.yml",
    ".sops.yaml",
    ".flux.yaml",
];

/// A side's files, staged as an artifact: every directory and every kustomization file at once (what
/// working out a build's reads looks at), every other file when something is about to read it
/// ([`Artifact::ensure`]): a review builds few of a fleet's Kustomizations, and writing (then removing)
/// every file of both sides was most of a review run again.
pub struct Artifact {
    dir: tempfile::TempDir,
    /// The files not written yet, by repository path.
    unwritten: std::cell::RefCell<BTreeMap<PathBuf, Vec<u8>>>,
}

impl Artifact {
    /// Stages `files` (repository path, contents): those an artifact holds.
    pub fn stage(files: impl IntoIterator<Item = (PathBuf, Vec<u8>)>) -> std::io::Result<Artifact> {
        let files: Vec<(PathBuf, Vec<u8>)> = files.into_iter().collect();
        let ignore_file = files.iter().any(|(p, _)| p.file_name().is_some_and(|n| n == ".sourceignore"));
        let dir = crate::support::process::private_memory_dir("cozyhr-fleet-")?;
        let mut unwritten = BTreeMap::new();
        let mut dirs = BTreeSet::new();
        for (path, bytes) in files.into_iter().filter(|(p, _)| included(p, ignore_file)) {
            if let Some(parent) = path.parent().filter(|p| dirs.insert(p.to_path_buf())) {
                std::fs::create_dir_all(dir.path().join(parent))?;
            }
            let kustomization = path.file_name().is_some_and(|n| super::generate::FILES.iter().any(|f| n == *f));
            match kustomization {
                true => crate::render::postrender::write_private(&dir.path().join(&path), &bytes)?,
                false => _ = unwritten.insert(path, bytes),
            }
        }
        Ok(Artifact { dir, unwritten: std::cell::RefCell::new(unwritten) })
    }

    /// The artifact's root: the repository's top.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Writes every file under the repository paths `paths` (directories or files) not written yet.
    pub fn ensure<'p>(&self, paths: impl IntoIterator<Item = &'p Path>) -> std::io::Result<()> {
        let mut unwritten = self.unwritten.borrow_mut();
        for path in paths {
            let under: Vec<PathBuf> = unwritten
                .range(path.to_path_buf()..)
                .take_while(|(p, _)| p.starts_with(path))
                .map(|(p, _)| p.clone())
                .collect();
            for p in under {
                if let Some(bytes) = unwritten.remove(&p) {
                    crate::render::postrender::write_private(&self.dir.path().join(&p), &bytes)?;
                }
            }
        }
        Ok(())
    }
}

/// Whether repository path `path` is in the artifact (`ignore_file`: the repository has a
/// `.sourceignore`, which replaces the default excludes; its own patterns are not read).
pub fn included(path: &Path, ignore_file: bool) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if GIT_FILES.contains(&name.as_str()) || path.components().any(|c| c.as_os_str() == ".git") {
        return false;
    }
    if ignore_file {
        return true;
    }
    let in_dir = path.parent().into_iter().flat_map(|p| p.components()).any(|c| {
        let c = c.as_os_str().to_string_lossy();
        DEFAULT_DIRS.contains(&c.as_ref())
    });
    let codeship = name.starts_with("codeship-") && name.ends_with(".yml");
    !(in_dir
        || codeship
        || DEFAULT_FILES.contains(&name.as_str())
        || DEFAULT_EXTENSIONS.iter().any(|e| name.ends_with(e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaves_out_what_source_controller_leaves_out() {
        for p in [
            ".gitignore",
            "a/.gitattributes",
            "logo.png",
            "x/chart-1.0.0.tar.gz",
            ".github/workflows/ci.yaml",
            "deep/.sops.yaml",
            "codeship-steps.yml",
        ] {
            assert!(!included(Path::new(p), false), "{p}");
        }
        for p in ["apps/base/web/release.yaml", "clusters/staging/flux-system/gotk-sync.yaml", "README.md"] {
            assert!(included(Path::new(p), false), "{p}");
        }
        assert!(included(Path::new("logo.png"), true));
        assert!(!included(Path::new(".gitmodules"), true));
    }
}
