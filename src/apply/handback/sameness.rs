//! Whether the chart `apply` installs is the chart the HelmRelease's source offers, compared file by file
//! as Helm loads a chart (see the [module docs](super)).

use std::path::PathBuf;

use serde_json::Value;

use crate::cluster::Cluster;
use crate::desired::Desired;

/// Whether the local chart is the source's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sameness {
    Same,
    /// The charts differ: `source` is `Kind ns/name at REVISION`, `files` the first files that differ.
    Differs {
        source: String,
        files: Vec<String>,
    },
    /// The source's chart could not be had or rendered: said, never an error.
    Unknown {
        why: String,
    },
}

/// A chart's files by path (the top chart's directory stripped), as compared.
type Files = std::collections::BTreeMap<String, Vec<u8>>;

/// The files of a chart archive (a `.tgz`), by path below its top directory.
fn archive_files(archive: &[u8]) -> Result<Files, String> {
    use std::io::Read as _;
    let mut out = Files::new();
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(archive));
    for entry in tar.entries().map_err(|e| e.to_string())? {
        let mut entry = entry.map_err(|e| e.to_string())?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry.path().map_err(|e| e.to_string())?.to_string_lossy().into_owned();
        let Some((_, rel)) = path.split_once('/') else { continue };
        let mut data = Vec::new();
        entry.read_to_end(&mut data).map_err(|e| e.to_string())?;
        out.insert(rel.to_string(), data);
    }
    Ok(out)
}

/// Helm's `.helmignore` rules (pkg/ignore): `#` comments, `!` negation, a trailing `/` for directories,
/// a leading `/` or any `/` matching the whole relative path, else the base name; and the default rule
/// `templates/.?*`.
struct Ignore {
    rules: Vec<(bool, bool, bool, crate::go::path::Pattern)>,
}

impl Ignore {
    fn read(chart: &std::path::Path) -> Ignore {
        let text = std::fs::read_to_string(chart.join(".helmignore")).unwrap_or_default();
        let mut rules = Vec::new();
        for line in text.lines().chain(std::iter::once("templates/.?*")) {
            let mut rule = line.trim().trim_start_matches('\u{feff}');
            if rule.is_empty() || rule.starts_with('#') || rule.contains("**") {
                continue;
            }
            let negate = rule.starts_with('!');
            if negate {
                rule = &rule[1..];
            }
            let dir_only = rule.ends_with('/');
            let rule = rule.trim_end_matches('/');
            let whole = rule.contains('/');
            if let Ok(p) = crate::go::path::Pattern::new(rule.trim_start_matches('/')) {
                rules.push((negate, dir_only, whole, p));
            }
        }
        Ignore { rules }
    }

    fn ignores(&self, rel: &str, is_dir: bool) -> bool {
        let base = rel.rsplit('/').next().unwrap_or(rel);
        for (negate, dir_only, whole, p) in &self.rules {
            let name = if *whole { rel } else { base };
            if *negate {
                if *dir_only && !is_dir {
                    return true;
                }
                if !p.matches(name) {
                    return true;
                }
                continue;
            }
            if *dir_only && !is_dir {
                continue;
            }
            if p.matches(name) {
                return true;
            }
        }
        false
    }
}

/// The files of the chart in `dir` as Helm loads and packs them, by path; archived subcharts opened.
fn directory_files(dir: &std::path::Path) -> Result<Files, String> {
    let ignore = Ignore::read(dir);
    let mut out = Files::new();
    walk(dir, dir, &ignore, &mut out, 0)?;
    Ok(out)
}

fn walk(
    root: &std::path::Path,
    dir: &std::path::Path,
    ignore: &Ignore,
    out: &mut Files,
    depth: usize,
) -> Result<(), String> {
    if depth > 32 {
        return Err(format!("{} is nested too deep", dir.display()));
    }
    let mut entries: Vec<PathBuf> =
        std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        let rel = path.strip_prefix(root).map_err(|e| e.to_string())?.to_string_lossy().replace('\\', "/");
        // Helm follows symlinks (a library chart linked into charts/).
        let meta = std::fs::metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        if ignore.ignores(&rel, meta.is_dir()) {
            continue;
        }
        if meta.is_dir() {
            walk(root, &path, ignore, out, depth + 1)?;
        } else if rel.starts_with("charts/") && rel.matches('/').count() == 1 && rel.ends_with(".tgz") {
            let bytes = std::fs::read(&path).map_err(|e| e.to_string())?;
            let archive = archive_files(&bytes).map_err(|e| format!("{rel}: {e}"))?;
            let name =
                chart_name(archive.get("Chart.yaml")).unwrap_or_else(|| rel.trim_end_matches(".tgz").to_string());
            for (sub, data) in archive {
                out.insert(format!("charts/{name}/{sub}"), data);
            }
        } else {
            out.insert(rel, std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?);
        }
    }
    Ok(())
}

fn chart_name(chart_yaml: Option<&Vec<u8>>) -> Option<String> {
    let meta: crate::source::chart::ChartMeta = serde_saphyr::from_slice(chart_yaml?).ok()?;
    Some(meta.name)
}

/// YAML as data for comparing: what Helm's marshalling leaves out (nulls, empty strings, lists and
/// maps) left out.
fn as_data(yaml: &[u8]) -> Option<Value> {
    fn prune(v: Value) -> Option<Value> {
        match v {
            Value::Null => None,
            Value::String(s) if s.is_empty() => None,
            Value::Array(a) => {
                let a: Vec<Value> = a.into_iter().filter_map(prune).collect();
                (!a.is_empty()).then_some(Value::Array(a))
            }
            Value::Object(m) => {
                let m: serde_json::Map<String, Value> =
                    m.into_iter().filter_map(|(k, v)| prune(v).map(|v| (k, v))).collect();
                (!m.is_empty()).then_some(Value::Object(m))
            }
            v => Some(v),
        }
    }
    let text = std::str::from_utf8(yaml).ok()?;
    if text.trim().is_empty() {
        return Some(Value::Null);
    }
    let value: Value = serde_saphyr::from_str(text).ok()?;
    Some(prune(value).unwrap_or(Value::Null))
}

/// What differs between two charts' files (see the module docs), by path; empty when nothing does. The
/// local side is the chart as helm-controller would load it (`Desired::chart_dir`: `valuesFiles` merged
/// into its values.yaml).
fn differences(ours: &Files, theirs: &Files) -> Vec<String> {
    let mut out = Vec::new();
    let paths: std::collections::BTreeSet<&String> = ours.keys().chain(theirs.keys()).collect();
    for path in paths {
        // Helm reads it for the rules and packs it, or not, by them; what it leaves out is compared anyway.
        if path == ".helmignore" || path.ends_with("/.helmignore") {
            continue;
        }
        let base = path.rsplit('/').next().unwrap_or(path);
        let same = match (ours.get(path), theirs.get(path)) {
            (Some(a), Some(b)) if base == "Chart.yaml" => {
                let strip = |v: Option<Value>| {
                    v.map(|mut v| {
                        if path == "Chart.yaml"
                            && let Some(m) = v.as_object_mut()
                        {
                            m.remove("version");
                        }
                        v
                    })
                };
                strip(as_data(a)) == strip(as_data(b))
            }
            (Some(a), Some(b)) if base == "values.yaml" => as_data(a) == as_data(b),
            (Some(a), Some(b)) => a == b,
            _ => false,
        };
        if !same {
            out.push(path.clone());
        }
    }
    out
}

/// Compares the local chart of `desired` with the one its source offers now (see the module docs).
pub async fn compare(cluster: &Cluster, desired: &Desired) -> Sameness {
    let unknown = |why: String| Sameness::Unknown { why };
    let artifact = match crate::source::fetch::artifact(cluster, &desired.hr).await {
        Ok(a) => a,
        Err(why) => return unknown(why),
    };
    let source = artifact.describe();
    let bytes = match artifact.bytes(cluster).await {
        Ok(b) => b,
        Err(why) => return unknown(why),
    };
    let theirs = match archive_files(&bytes) {
        Ok(f) => f,
        Err(why) => return unknown(format!("{source}: {why}")),
    };
    let ours = match directory_files(desired.chart_dir()) {
        Ok(f) => f,
        Err(why) => return unknown(format!("the chart directory: {why}")),
    };
    let differing = differences(&ours, &theirs);
    if differing.is_empty() {
        Sameness::Same
    } else {
        tracing::debug!(?differing, "the local chart is not the source's");
        Sameness::Differs { source, files: differing.into_iter().take(5).collect() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_compare_as_helm_packs_them() {
        let files = |entries: &[(&str, &str)]| -> Files {
            entries.iter().map(|(k, v)| (k.to_string(), v.as_bytes().to_vec())).collect()
        };
        let ours = files(&[
            ("Chart.yaml", "apiVersion: v2\nname: app\nversion: 0.3.0\nicon: \"\"\n"),
            ("values.yaml", "a: 1\nb: [x]\n"),
            ("templates/cm.yaml", "kind: ConfigMap\n"),
            (".helmignore", "*.md\n"),
        ]);
        // As helm package writes it: metadata marshalled, the version the source's.
        let theirs = files(&[
            ("Chart.yaml", "apiVersion: v2\nname: app\nversion: 0.3.0+1\n"),
            ("values.yaml", "a: 1\nb:\n- x\n"),
            ("templates/cm.yaml", "kind: ConfigMap\n"),
        ]);
        assert!(differences(&ours, &theirs).is_empty());
        let mut changed = theirs.clone();
        changed.insert("templates/cm.yaml".into(), b"kind: Secret\n".to_vec());
        changed.insert("templates/extra.yaml".into(), b"kind: Secret\n".to_vec());
        assert_eq!(differences(&ours, &changed), ["templates/cm.yaml", "templates/extra.yaml"]);
    }

    #[test]
    fn helmignore_rules_are_helms() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".helmignore"), "# c\n*.md\n/ci/\n").unwrap();
        let ignore = Ignore::read(dir.path());
        assert!(ignore.ignores("README.md", false) && ignore.ignores("docs/x.md", false));
        assert!(ignore.ignores("ci", true) && !ignore.ignores("ci", false));
        assert!(ignore.ignores("templates/.hidden", false) && !ignore.ignores("templates/cm.yaml", false));
    }
}
