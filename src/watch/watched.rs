//! What is watched on disk: the chart as a tree, the charts it links to outside itself (a library chart
//! kept beside it), and single files (`-f` files, valuesFiles outside the chart); which paths of those a
//! change concerns, and how a path reads in the round line.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// How deep symlinks are followed when looking for linked charts (a loop ends here).
const MAX_DEPTH: usize = 32;

/// What is watched on disk: trees (recursively) and single files (through their directory, since an
/// editor that saves by renaming replaces the file's inode, and a watch on the old inode hears nothing).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Watched {
    pub trees: Vec<PathBuf>,
    pub files: Vec<PathBuf>,
}

impl Watched {
    /// The chart directory, every linked directory or file it reaches outside itself (resolved), and the
    /// user's `-f` files.
    pub fn for_chart(chart_dir: &Path, user_files: &[PathBuf]) -> Watched {
        let root = std::fs::canonicalize(chart_dir).unwrap_or_else(|_| chart_dir.to_path_buf());
        let mut w = Watched { trees: vec![root.clone()], files: Vec::new() };
        let mut seen = BTreeSet::from([root.clone()]);
        linked(&root, &mut w, &mut seen, 0);
        for f in user_files {
            // A file that does not exist yet is watched where it will appear; `-f -` (stdin) is no file.
            if f.as_os_str() == "-" {
                continue;
            }
            let f = std::fs::canonicalize(f).unwrap_or_else(|_| std::path::absolute(f).unwrap_or_else(|_| f.clone()));
            if !w.covers(&f) {
                w.files.push(f);
            }
        }
        w
    }

    /// Whether a change at `path` concerns the release: inside a watched tree (but a VCS directory or an
    /// editor's swap and backup files), or one of the watched files.
    pub fn covers(&self, path: &Path) -> bool {
        if ignored(path) {
            return false;
        }
        self.trees.iter().any(|t| path.starts_with(t)) || self.files.iter().any(|f| f == path)
    }

    /// `path` as a person reads it: relative to the chart when inside it, a linked chart's path from the
    /// directory that holds it (`lib/templates/_h.tpl`). Links are resolved first, so a save seen both
    /// through the link and at its target reads the same.
    pub fn describe(&self, path: &Path) -> String {
        let resolved = match (path.parent().and_then(|p| std::fs::canonicalize(p).ok()), path.file_name()) {
            (Some(dir), Some(name)) => dir.join(name),
            _ => path.to_path_buf(),
        };
        let path = resolved.as_path();
        for (i, tree) in self.trees.iter().enumerate() {
            let base = if i == 0 { Some(tree.as_path()) } else { tree.parent() };
            if let Some(rel) = base.and_then(|b| path.strip_prefix(b).ok())
                && !rel.as_os_str().is_empty()
            {
                return rel.display().to_string();
            }
        }
        path.display().to_string()
    }

    /// The directories to ask the notifier for, with whether recursively.
    pub(super) fn watches(&self) -> Vec<(PathBuf, bool)> {
        let mut out: Vec<(PathBuf, bool)> = self.trees.iter().map(|t| (t.clone(), true)).collect();
        for f in &self.files {
            if let Some(dir) = f.parent()
                && !out.iter().any(|(d, _)| d == dir)
            {
                out.push((dir.to_path_buf(), false));
            }
        }
        out
    }
}

/// Walks `dir` (following links) and records every symlink whose target lies outside the watched trees.
fn linked(dir: &Path, w: &mut Watched, seen: &mut BTreeSet<PathBuf>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if entry.file_name() == ".git" {
            continue;
        }
        let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
        // A broken link is nothing to render and nothing to watch.
        let Ok(target) = std::fs::canonicalize(&path) else { continue };
        let is_dir = target.is_dir();
        if is_link && !w.trees.iter().any(|t| target.starts_with(t)) {
            if is_dir {
                w.trees.push(target.clone());
            } else if !w.files.contains(&target) {
                w.files.push(target.clone());
            }
        }
        if is_dir && seen.insert(target.clone()) {
            linked(&target, w, seen, depth + 1);
        }
    }
}

/// Paths no render reads: version control and what editors write beside the file they save.
fn ignored(path: &Path) -> bool {
    if path.components().any(|c| matches!(c.as_os_str().to_str(), Some(".git" | ".hg" | ".svn"))) {
        return true;
    }
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else { return false };
    name.ends_with('~')
        || name.starts_with(".#")
        || [".swp", ".swx", ".swo", ".tmp"].iter().any(|s| name.ends_with(s))
        // vim probes whether it may write a directory with a file of this name.
        || name == "4913"
}

/// A chart and a library chart beside it, linked as `chart/charts/lib`: the tree the tests watch.
#[cfg(test)]
pub(super) fn chart_beside_library() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let chart = dir.path().join("chart");
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::create_dir_all(chart.join("charts")).unwrap();
    std::fs::write(chart.join("Chart.yaml"), "name: c\nversion: 0.1.0\n").unwrap();
    let lib = dir.path().join("lib");
    std::fs::create_dir_all(lib.join("templates")).unwrap();
    std::fs::write(lib.join("templates/_h.tpl"), "").unwrap();
    std::os::unix::fs::symlink(&lib, chart.join("charts/lib")).unwrap();
    dir
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linked_library_charts_and_values_files_are_watched() {
        let dir = chart_beside_library();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let values = root.join("extra.yaml");
        std::fs::write(&values, "a: 1\n").unwrap();
        let inside = root.join("chart/values.yaml");
        let w = Watched::for_chart(&root.join("chart"), &[values.clone(), inside]);
        assert_eq!(w.trees, [root.join("chart"), root.join("lib")]);
        assert_eq!(w.files.as_slice(), std::slice::from_ref(&values), "a file in the chart is covered by the tree");
        assert!(w.covers(&root.join("lib/templates/_h.tpl")));
        assert!(w.covers(&root.join("chart/templates/x.yaml")));
        assert!(w.covers(&values));
        assert!(!w.covers(&root.join("other.yaml")), "a neighbour of a -f file is not watched");
        assert!(!w.covers(&root.join("chart/templates/.x.yaml.swp")));
        assert!(!w.covers(&root.join("chart/.git/index")));
        assert!(!w.covers(&root.join("chart/templates/x.yaml~")));
        assert_eq!(w.describe(&root.join("chart/templates/x.yaml")), "templates/x.yaml");
        assert_eq!(w.describe(&root.join("lib/templates/_h.tpl")), "lib/templates/_h.tpl");
        assert_eq!(w.describe(&root.join("chart/charts/lib/templates/_h.tpl")), "lib/templates/_h.tpl");
        assert_eq!(w.watches(), [(root.join("chart"), true), (root.join("lib"), true), (root.clone(), false)]);
    }

    #[test]
    fn a_symlink_loop_ends() {
        let dir = chart_beside_library();
        std::os::unix::fs::symlink(dir.path(), dir.path().join("lib/up")).unwrap();
        let w = Watched::for_chart(&dir.path().join("chart"), &[]);
        assert!(w.trees.len() <= 3, "{w:?}");
    }
}
