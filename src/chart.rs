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

    /// The chart's own values.yaml text ("" when absent).
    pub fn default_values_text(&self) -> Result<String, ChartError> {
        match std::fs::read_to_string(self.path.join("values.yaml")) {
            Ok(t) => Ok(t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
            Err(e) => Err(e.into()),
        }
    }
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
    fn reads_name_and_version() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("Chart.yaml"), "apiVersion: v2\nname: demo\nversion: 1.2.3\n").unwrap();
        let c = ChartDir::open(d.path()).unwrap();
        assert_eq!((c.meta.name.as_str(), c.meta.version.as_str()), ("demo", "1.2.3"));
    }
}
