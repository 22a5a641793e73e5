//! An artifact as source-watcher's ArtifactGenerator builds it from a repository: its copy operations
//! run in order into an empty directory, as its builder runs them. This is how a platform that keeps
//! its charts and their variants' values apart (Cozystack's PackageSources) makes the chart a
//! HelmRelease installs: the chart's directory, libraries copied into its `charts/`, and values files
//! laid over its `values.yaml`.
//!
//! What is done as source-watcher does it: `from` is `@ALIAS/PATTERN`, a glob when it holds `*`, `?` or
//! `[` (each `*` matches within one path segment, so `dir/**` is what `dir` holds, as Go's `fs.Glob`
//! matches it), and a match of `PREFIX/**` lands under `to` by its path below PREFIX; a directory is
//! copied whole. Without a glob a directory lands under `to` by its own name, and a file at `to` itself
//! unless `to` ends in `/` or is a directory already. `strategy: Merge` lays a YAML file over the one
//! already there, maps merged key by key and anything else replaced (a file not there yet is copied).
//! Here every alias is the repository's top (the GitRepository of the files); links are followed, as a
//! review's copy of a commit follows them. What source-watcher can do and this does not (`exclude`
//! patterns, the `Extract` strategy for tarballs, `pathPattern` placeholders) makes the artifact refuse
//! to build, saying which, rather than build something source-watcher would not.

use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value};

use super::release_file::ReleaseFiles;
use crate::flux::HelmRelease;
use crate::values::{Values, merge_maps};

/// The API group and kind of source-watcher's ArtifactGenerator.
pub const GENERATOR_GROUP: &str = "source.extensions.fluxcd.io";
pub const GENERATOR_KIND: &str = "ArtifactGenerator";

/// Why an artifact cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    #[error("artifact {artifact}: {what}: {reason}")]
    Copy { artifact: String, what: String, reason: String },
}

/// How a copy lands on what is already there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Replace it (source-watcher's default).
    Overwrite,
    /// Merge a YAML file's maps over it.
    Merge,
}

/// One copy operation, with `from` relative to the repository's top and `to` to the artifact's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copy {
    pub from: String,
    pub to: String,
    pub strategy: Strategy,
}

/// An artifact: its name and its copy operations, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artifact {
    pub name: String,
    pub copies: Vec<Copy>,
    /// What of its generator's copies cannot be done here (see the module's docs): building refuses.
    refused: Vec<String>,
}

impl Copy {
    /// A copy as an ArtifactGenerator writes it (`from: '@pkgs/apps/demo/**'`, `to: '@artifact/demo/'`),
    /// None when it is not in that form.
    pub fn parse(op: &Value) -> Option<Copy> {
        let from = op.get("from")?.as_str()?.strip_prefix('@')?.split_once('/')?.1.to_string();
        let to = op.get("to")?.as_str()?.strip_prefix("@artifact")?.trim_start_matches('/').to_string();
        let strategy = match op.get("strategy").and_then(Value::as_str) {
            Some("Merge") => Strategy::Merge,
            _ => Strategy::Overwrite,
        };
        Some(Copy { from, to, strategy })
    }

    /// The repository directory a whole-directory copy (`DIR/**`) reads, if it is one.
    pub fn whole_dir(&self) -> Option<PathBuf> {
        self.from.strip_suffix("/**").filter(|d| !is_glob(d)).map(normal)
    }

    /// The repository path this copy reads (a directory for a glob: the part before its first glob).
    pub fn reads(&self) -> PathBuf {
        let fixed: Vec<&str> = self.from.split('/').take_while(|s| !is_glob(s)).collect();
        normal(&fixed.join("/"))
    }
}

impl Artifact {
    /// An artifact made of `copies`.
    pub fn new(name: impl Into<String>, copies: Vec<Copy>) -> Artifact {
        Artifact { name: name.into(), copies, refused: Vec::new() }
    }

    /// Artifact `name` of an ArtifactGenerator object (`spec.artifacts[].copy`), None when it has none of
    /// that name.
    pub fn of_generator(generator: &Map<String, Value>, name: &str) -> Option<Artifact> {
        let artifacts = generator.get("spec")?.get("artifacts")?.as_array()?;
        let entry = artifacts.iter().find(|a| a.get("name").and_then(Value::as_str) == Some(name))?;
        let mut artifact = Artifact::new(name, Vec::new());
        if entry.get("pathPattern").is_some() {
            artifact.refused.push("pathPattern".into());
        }
        for op in entry.get("copy")?.as_array()? {
            let from = op.get("from").and_then(Value::as_str).unwrap_or("?");
            if op.get("exclude").and_then(Value::as_array).is_some_and(|e| !e.is_empty()) {
                artifact.refused.push(format!("the exclude patterns of the copy from {from}"));
            }
            if op.get("strategy").and_then(Value::as_str) == Some("Extract") {
                artifact.refused.push(format!("the Extract strategy of the copy from {from}"));
            }
            match Copy::parse(op) {
                Some(copy) => artifact.copies.push(copy),
                None => artifact
                    .refused
                    .push(format!("the copy from {from}, not of the form @ALIAS/PATH to @artifact/PATH")),
            }
        }
        Some(artifact)
    }

    /// The artifact HelmRelease `hr` installs as its chart when its `chartRef` names an ExternalArtifact
    /// that an ArtifactGenerator of `files` makes (in the ExternalArtifact's namespace, the HelmRelease's
    /// when the reference names none).
    pub fn of_helmrelease(files: &ReleaseFiles, hr: &HelmRelease) -> Option<Artifact> {
        let chart_ref = hr.spec.chart_ref.as_ref().filter(|r| r.kind == "ExternalArtifact")?;
        let ns = chart_ref.namespace.as_deref().filter(|n| !n.is_empty()).unwrap_or(hr.namespace());
        files.objects(GENERATOR_GROUP, GENERATOR_KIND).find_map(|generator| {
            let generator_ns = generator.get("metadata").and_then(|m| m.get("namespace")).and_then(Value::as_str);
            (generator_ns.unwrap_or("default") == ns).then(|| Artifact::of_generator(generator, &chart_ref.name))?
        })
    }

    /// The directory of the artifact that holds its chart (where its first whole-directory copy lands),
    /// and the repository directory that copy reads.
    pub fn chart(&self) -> Option<(PathBuf, PathBuf)> {
        self.copies.iter().find_map(|c| {
            let dir = c.whole_dir()?;
            let to = normal(&c.to);
            (to.components().count() <= 1).then_some((to, dir))
        })
    }

    /// Runs the copies in order, reading the repository at `top`, into the empty directory `into`.
    pub fn build(&self, top: &Path, into: &Path) -> Result<(), ArtifactError> {
        if !self.refused.is_empty() {
            return Err(ArtifactError::Copy {
                artifact: self.name.clone(),
                what: format!("{} cannot be built here", self.refused.join(", ")),
                reason: "helm cozy builds an ArtifactGenerator's copies without exclude, Extract or pathPattern; render this release from the cluster instead".into(),
            });
        }
        for copy in &self.copies {
            run(copy, top, into).map_err(|reason| ArtifactError::Copy {
                artifact: self.name.clone(),
                what: format!("copying {} to {}", copy.from, if copy.to.is_empty() { "/" } else { &copy.to }),
                reason,
            })?;
        }
        Ok(())
    }
}

fn is_glob(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// A repository path as written in a manifest (`./charts/app/`), by name.
fn normal(path: &str) -> PathBuf {
    Path::new(path.trim_start_matches("./").trim_end_matches('/'))
        .components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .collect()
}

fn run(copy: &Copy, top: &Path, into: &Path) -> Result<(), String> {
    let to = into.join(normal(&copy.to));
    if !is_glob(&copy.from) {
        let from = top.join(normal(&copy.from));
        let meta = std::fs::metadata(&from).map_err(|e| format!("{}: {e}", copy.from))?;
        let name = from.file_name().map(PathBuf::from).unwrap_or_default();
        if meta.is_dir() {
            return copy_dir(&from, &to.join(name));
        }
        let dest = if copy.to.ends_with('/') || copy.to.is_empty() || to.is_dir() { to.join(name) } else { to };
        return place(&from, &dest, copy.strategy);
    }
    let matches = glob(top, &copy.from)?;
    if matches.is_empty() {
        return Err(format!("no files match pattern {}", copy.from));
    }
    let prefix = copy.from.strip_suffix("/**").map(normal);
    for m in matches {
        let rest = prefix.as_ref().and_then(|p| m.strip_prefix(p).ok()).unwrap_or(&m);
        let (src, dest) = (top.join(&m), to.join(rest));
        if src.is_dir() { copy_dir(&src, &dest)? } else { place(&src, &dest, copy.strategy)? }
    }
    Ok(())
}

/// The repository paths matching `pattern` segment by segment (`*` and `?` within one segment), sorted.
fn glob(top: &Path, pattern: &str) -> Result<Vec<PathBuf>, String> {
    let mut found = vec![PathBuf::new()];
    for segment in pattern.split('/').filter(|s| !s.is_empty() && *s != ".") {
        let mut next = Vec::new();
        for base in &found {
            if !is_glob(segment) {
                let p = base.join(segment);
                if top.join(&p).exists() {
                    next.push(p);
                }
                continue;
            }
            if segment.contains('[') {
                return Err(format!("{pattern}: character classes are not supported here"));
            }
            let Ok(entries) = std::fs::read_dir(top.join(base)) else { continue };
            let mut names: Vec<String> = entries.flatten().filter_map(|e| e.file_name().into_string().ok()).collect();
            names.sort();
            next.extend(names.into_iter().filter(|n| wildcard(segment, n)).map(|n| base.join(n)));
        }
        found = next;
    }
    Ok(found.into_iter().filter(|p| !p.as_os_str().is_empty()).collect())
}

/// Whether `name` matches `pattern` (`*`: any run of characters, `?`: one).
fn wildcard(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut pi, mut ni, mut star, mut mark) = (0, 0, None, 0);
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ni;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    let entries = std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))?;
    for entry in entries.flatten() {
        let (src, dest) = (entry.path(), to.join(entry.file_name()));
        if src.is_dir() { copy_dir(&src, &dest)? } else { place(&src, &dest, Strategy::Overwrite)? }
    }
    Ok(())
}

/// File `from` at `dest` by `strategy`.
fn place(from: &Path, dest: &Path, strategy: Strategy) -> Result<(), String> {
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    if strategy == Strategy::Merge && dest.is_file() {
        let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()));
        let (base, over) = (read(dest)?, read(from)?);
        let merged = merge_yaml(&base, &over, &from.display().to_string())?;
        return std::fs::write(dest, merged).map_err(|e| format!("{}: {e}", dest.display()));
    }
    std::fs::copy(from, dest).map(|_| ()).map_err(|e| format!("{}: {e}", from.display()))
}

/// YAML `over` laid over `base`, as source-watcher's Merge does: maps merge key by key, any other value
/// of `over` replaces `base`'s (Flux's `MergeMaps`, which its merge is). The result is written as JSON,
/// which is YAML.
pub fn merge_yaml(base: &str, over: &str, over_name: &str) -> Result<String, String> {
    let base: Values = crate::values::parse_values(base, "the values so far").map_err(|e| e.to_string())?;
    let over = crate::values::parse_values(over, over_name).map_err(|e| e.to_string())?;
    let merged = merge_maps(&base, &over);
    serde_json::to_string_pretty(&Value::Object(merged)).map(|s| s + "\n").map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, files: &[(&str, &str)]) {
        for (path, text) in files {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
    }

    fn op(from: &str, to: &str, strategy: Strategy) -> Copy {
        Copy { from: from.into(), to: to.into(), strategy }
    }

    #[test]
    fn a_variant_chart_is_built_as_source_watcher_builds_it() {
        let repo = tempfile::tempdir().unwrap();
        write(
            repo.path(),
            &[
                ("packages/system/ca/Chart.yaml", "name: ca\nversion: 1.0.0\n"),
                ("packages/system/ca/values.yaml", "image: {repository: ca, tag: '1.0'}\nlist: [a, b]\n"),
                ("packages/system/ca/values-azure.yaml", "image: {tag: '1.1'}\nlist: [c]\ncloud: azure\n"),
                ("packages/system/ca/templates/x.yaml", "kind: ConfigMap\n"),
                ("packages/library/lib/Chart.yaml", "name: lib\ntype: library\n"),
                ("packages/library/lib/templates/_h.tpl", "{{/* */}}"),
            ],
        );
        let artifact = Artifact::new(
            "a",
            vec![
                op("packages/system/ca/**", "ca/", Strategy::Overwrite),
                op("packages/library/lib/**", "ca/charts/lib/", Strategy::Overwrite),
                op("packages/system/ca/values.yaml", "ca/values.yaml", Strategy::Overwrite),
                op("packages/system/ca/values-azure.yaml", "ca/values.yaml", Strategy::Merge),
            ],
        );
        let out = tempfile::tempdir().unwrap();
        artifact.build(repo.path(), out.path()).unwrap();
        assert!(out.path().join("ca/templates/x.yaml").is_file());
        assert!(out.path().join("ca/charts/lib/templates/_h.tpl").is_file());
        let values: Value =
            serde_json::from_str(&std::fs::read_to_string(out.path().join("ca/values.yaml")).unwrap()).unwrap();
        assert_eq!(
            values,
            serde_json::json!({"image": {"repository": "ca", "tag": "1.1"}, "list": ["c"], "cloud": "azure"})
        );
        assert_eq!(artifact.chart(), Some((PathBuf::from("ca"), PathBuf::from("packages/system/ca"))));
    }

    #[test]
    fn files_land_as_source_watcher_places_them() {
        let repo = tempfile::tempdir().unwrap();
        write(repo.path(), &[("d/a.yaml", "a: 1\n"), ("d/b.txt", "b"), ("d/sub/c.yaml", "c: 1\n")]);
        let out = tempfile::tempdir().unwrap();
        let artifact = Artifact::new(
            "x",
            vec![
                op("d/*.yaml", "globbed/", Strategy::Overwrite),
                op("d/sub", "dir/", Strategy::Overwrite),
                op("d/b.txt", "renamed.txt", Strategy::Overwrite),
                op("d/a.yaml", "into/", Strategy::Overwrite),
                op("d/sub/c.yaml", "fresh.yaml", Strategy::Merge),
            ],
        );
        artifact.build(repo.path(), out.path()).unwrap();
        for path in ["globbed/d/a.yaml", "dir/sub/c.yaml", "renamed.txt", "into/a.yaml", "fresh.yaml"] {
            assert!(out.path().join(path).is_file(), "{path}");
        }
        assert!(!out.path().join("globbed/d/b.txt").exists(), "*.yaml takes no .txt");
        let missing = Artifact::new("y", vec![op("nothing/**", "n/", Strategy::Overwrite)]);
        let err = missing.build(repo.path(), out.path()).unwrap_err().to_string();
        assert!(err.contains("no files match pattern nothing/**"), "{err}");
    }

    #[test]
    fn what_cannot_be_built_here_is_refused_by_name() {
        let generator = serde_json::json!({"spec": {"artifacts": [{"name": "a", "copy": [
            {"from": "@pkgs/apps/demo/**", "to": "@artifact/demo/", "exclude": ["*.md"]},
            {"from": "@pkgs/charts/*.tgz", "to": "@artifact/", "strategy": "Extract"},
        ]}]}});
        let artifact = Artifact::of_generator(generator.as_object().unwrap(), "a").unwrap();
        let out = tempfile::tempdir().unwrap();
        let err = artifact.build(out.path(), out.path()).unwrap_err().to_string();
        assert!(err.contains("the exclude patterns of the copy from @pkgs/apps/demo/**"), "{err}");
        assert!(err.contains("the Extract strategy of the copy from @pkgs/charts/*.tgz"), "{err}");
        assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 0, "nothing is copied");
        let plain = serde_json::json!({"spec": {"artifacts": [{"name": "a", "copy": [
            {"from": "@pkgs/apps/demo/**", "to": "@artifact/demo/"}]}]}});
        assert!(Artifact::of_generator(plain.as_object().unwrap(), "a").unwrap().refused.is_empty());
    }

    #[test]
    fn copies_are_read_as_an_artifact_generator_writes_them() {
        let c = Copy::parse(&serde_json::json!({"from": "@pkgs/apps/demo/**", "to": "@artifact/demo/"})).unwrap();
        assert_eq!(c, op("apps/demo/**", "demo/", Strategy::Overwrite));
        assert_eq!(c.whole_dir(), Some(PathBuf::from("apps/demo")));
        let m = Copy::parse(
            &serde_json::json!({"from": "@p/a/v.yaml", "to": "@artifact/a/values.yaml", "strategy": "Merge"}),
        )
        .unwrap();
        assert_eq!(m.strategy, Strategy::Merge);
        assert_eq!(m.reads(), PathBuf::from("a/v.yaml"));
        assert!(Copy::parse(&serde_json::json!({"from": "apps/demo", "to": "@artifact/"})).is_none());
        assert!(wildcard("values-*.yaml", "values-azure.yaml") && !wildcard("values-*.yaml", "values.yaml"));
        assert!(wildcard("**", "anything") && wildcard("a?c", "abc") && !wildcard("a?c", "ac"));
    }
}
