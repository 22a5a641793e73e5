//! A release whose chart is an artifact built from the repository, as a platform makes it: a HelmRelease
//! of the files whose `chartRef` names an ExternalArtifact that an ArtifactGenerator of the files makes
//! ([`super::artifact`]), or a component of a PackageSource of the files ([`super::package_source`]). Its
//! chart is not the chart's directory as it lies in Git but what the copies make of it (libraries copied
//! into `charts/`, values files laid over `values.yaml`), so `review` and `diff --against git` build it at
//! each side before rendering.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::artifact::{Artifact, Copy};
use super::chart::ChartDir;
use super::package_source;
use super::release_file::ReleaseFiles;
use crate::flux::HelmRelease;
use crate::support::error::{Error, Result};

/// A HelmRelease and the artifact its chart is built as.
#[derive(Debug, Clone)]
pub struct Generated {
    pub hr: HelmRelease,
    pub artifact: Artifact,
}

/// An artifact built into a private directory (removed when this is dropped), and its chart opened.
pub struct BuiltChart {
    pub chart: ChartDir,
    _dir: tempfile::TempDir,
}

impl Generated {
    /// HelmRelease `name` as `files` define it with a chart built as an artifact from `chart` (a
    /// repository directory): a HelmRelease of the files whose chartRef is an ArtifactGenerator's
    /// artifact, else the component of a PackageSource released under that name (in `namespace` when
    /// given; a component without `install` is released in `namespace`, else `default_namespace`). None
    /// when the files define no such release.
    pub fn find(
        files: &ReleaseFiles,
        chart: &Path,
        name: &str,
        namespace: Option<&str>,
        default_namespace: &str,
    ) -> Option<Generated> {
        if let Ok(hr) = files.helmrelease(name, namespace, default_namespace) {
            let artifact = Artifact::of_helmrelease(files, &hr)?;
            return Some(Generated { hr, artifact });
        }
        let charts = BTreeSet::from([chart.to_path_buf()]);
        let releases = package_source::releases(files, &charts, namespace.unwrap_or(default_namespace));
        let release = releases.into_iter().find(|r| r.name == name && namespace.is_none_or(|ns| r.namespace == ns))?;
        Some(Generated { hr: release.helmrelease()?, artifact: release.artifact })
    }

    /// The repository paths its artifact reads.
    pub fn reads(&self) -> Vec<PathBuf> {
        self.artifact.copies.iter().map(Copy::reads).collect()
    }
}

/// `artifact` built from the repository whose top is `top`, and its chart opened.
pub fn build(artifact: &Artifact, top: &Path) -> Result<BuiltChart> {
    let dir = crate::support::process::private_dir("cozyhr-artifact-").map_err(Error::Io)?;
    artifact.build(top, dir.path()).map_err(|e| Error::Failed(e.to_string()))?;
    let (chart_dir, _) = artifact
        .chart()
        .ok_or_else(|| Error::Failed(format!("artifact {}: no copy of a chart directory", artifact.name)))?;
    let chart = ChartDir::open(&dir.path().join(chart_dir))?;
    Ok(BuiltChart { chart, _dir: dir })
}
