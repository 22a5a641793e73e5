//! A chart directory on disk: the thing a developer stands in.

use std::path::{Path, PathBuf};

use serde::Deserialize;

#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    #[error("{dir} is not a chart directory: it has no Chart.yaml (run from the chart directory or pass -C DIR)")]
    NotAChart { dir: String },
    #[error("{path}: {reason}")]
    Invalid { path: String, reason: String },
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

#[derive(Debug, Clone, Deserialize)]
pub struct ChartMeta {
    pub name: String,
    pub version: String,
    #[serde(default, rename = "appVersion")]
    pub app_version: Option<String>,
}

#[derive(Debug, Clone)]
pub struct ChartDir {
    path: PathBuf,
    pub meta: ChartMeta,
}

impl ChartDir {
    pub fn open(dir: &Path) -> Result<ChartDir, ChartError> {
        let path = std::fs::canonicalize(dir).map_err(|_| ChartError::NotAChart { dir: dir.display().to_string() })?;
        let chart_yaml = path.join("Chart.yaml");
        let text = std::fs::read_to_string(&chart_yaml)
            .map_err(|_| ChartError::NotAChart { dir: dir.display().to_string() })?;
        let meta: ChartMeta = serde_saphyr::from_str(&text)
            .map_err(|e| ChartError::Invalid { path: chart_yaml.display().to_string(), reason: e.to_string() })?;
        if meta.name.is_empty() || meta.version.is_empty() {
            return Err(ChartError::Invalid {
                path: chart_yaml.display().to_string(),
                reason: "name and version are required".into(),
            });
        }
        Ok(ChartDir { path, meta })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether any template of the chart or of its subcharts (directories, symlinked ones included, and
    /// packaged ones in charts/) may call `lookup`. Only those need helm to talk to the cluster while
    /// rendering; a mention in a comment just costs that. An unreadable file counts as a yes.
    pub fn may_use_lookup(&self) -> bool {
        mentions_lookup(&self.path, 0)
    }

    /// The chart's own values.yaml text ("" when absent).
    pub fn default_values_text(&self) -> Result<String, ChartError> {
        match std::fs::read_to_string(self.path.join("values.yaml")) {
            Ok(t) => Ok(t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
            Err(e) => Err(e.into()),
        }
    }
}

/// How deep subcharts may nest before we stop looking (and assume lookup): symlink loops end here.
const MAX_DEPTH: usize = 16;

fn mentions_lookup(chart: &Path, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return true;
    }
    if tree_mentions(&chart.join("templates"), depth) {
        return true;
    }
    let Ok(entries) = std::fs::read_dir(chart.join("charts")) else { return false };
    entries.flatten().any(|e| {
        let path = e.path();
        // metadata() follows symlinks: a library chart linked into charts/ is read where it lives.
        match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => mentions_lookup(&path, depth + 1),
            Ok(m) if m.is_file() && path.extension().is_some_and(|x| x == "tgz") => archive_mentions(&path),
            Ok(_) => false,
            Err(_) => true,
        }
    })
}

fn tree_mentions(dir: &Path, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return true;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return false };
    entries.flatten().any(|e| {
        let path = e.path();
        match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => tree_mentions(&path, depth + 1),
            Ok(_) => std::fs::read(&path).map_or(true, |bytes| contains_lookup(&bytes)),
            Err(_) => true,
        }
    })
}

/// A packaged subchart: the whole archive, unpacked, is searched (values and docs included).
fn archive_mentions(path: &Path) -> bool {
    use std::io::Read;
    let Ok(file) = std::fs::File::open(path) else { return true };
    let mut bytes = Vec::new();
    match flate2::read::GzDecoder::new(file).read_to_end(&mut bytes) {
        Ok(_) => contains_lookup(&bytes),
        Err(_) => true,
    }
}

fn contains_lookup(bytes: &[u8]) -> bool {
    bytes.windows(6).any(|w| w == b"lookup")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_without_chart_yaml_is_a_clear_error() {
        let d = tempfile::tempdir().unwrap();
        let e = ChartDir::open(d.path()).unwrap_err().to_string();
        assert!(e.contains("no Chart.yaml") && e.contains("-C DIR"), "{e}");
    }

    #[test]
    fn lookup_is_found_in_templates_and_linked_or_packaged_subcharts() {
        use std::io::Write;
        let d = tempfile::tempdir().unwrap();
        let chart = d.path().join("app");
        std::fs::create_dir_all(chart.join("templates/sub")).unwrap();
        std::fs::write(chart.join("Chart.yaml"), "apiVersion: v2\nname: app\nversion: 1.0.0\n").unwrap();
        std::fs::write(chart.join("templates/sub/cm.yaml"), "kind: ConfigMap\n").unwrap();
        let c = ChartDir::open(&chart).unwrap();
        assert!(!c.may_use_lookup());

        // A library chart linked into charts/, as platform monorepos do.
        let lib = d.path().join("lib");
        std::fs::create_dir_all(lib.join("templates")).unwrap();
        std::fs::write(
            lib.join("templates/_h.tpl"),
            "{{ define \"x\" }}{{ lookup \"v1\" \"Secret\" \"\" \"\" }}{{ end }}",
        )
        .unwrap();
        std::fs::create_dir_all(chart.join("charts")).unwrap();
        std::os::unix::fs::symlink(&lib, chart.join("charts/lib")).unwrap();
        assert!(c.may_use_lookup());
        std::fs::remove_file(chart.join("charts/lib")).unwrap();

        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(b"templates/secret.yaml ... {{ lookup \"v1\" }}").unwrap();
        std::fs::write(chart.join("charts/packaged-1.0.0.tgz"), gz.finish().unwrap()).unwrap();
        assert!(c.may_use_lookup());
    }

    #[test]
    fn reads_name_and_version() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("Chart.yaml"), "apiVersion: v2\nname: demo\nversion: 1.2.3\n").unwrap();
        let c = ChartDir::open(d.path()).unwrap();
        assert_eq!((c.meta.name.as_str(), c.meta.version.as_str()), ("demo", "1.2.3"));
    }
}
