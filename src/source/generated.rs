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
use crate::values::FetchedRef;

/// A HelmRelease and the artifact its chart is built as.
#[derive(Debug, Clone)]
pub struct Generated {
    pub hr: HelmRelease,
    pub artifact: Artifact,
}

/// A [`Generated`] release built at one side: its chart as the artifact makes it (in a private directory,
/// removed when this is dropped), its HelmRelease and the `valuesFrom` sources that side's files give it.
pub struct Built {
    pub chart: ChartDir,
    pub hr: HelmRelease,
    pub refs: Vec<FetchedRef>,
    _dir: tempfile::TempDir,
}

impl Generated {
    /// HelmRelease `namespace/name` of `files` when its chartRef is an ArtifactGenerator's artifact.
    pub fn of_file(
        files: &ReleaseFiles,
        name: &str,
        namespace: Option<&str>,
        default_namespace: &str,
    ) -> Option<Generated> {
        let hr = files.helmrelease(name, namespace, default_namespace).ok()?;
        let artifact = Artifact::of_helmrelease(files, &hr)?;
        Some(Generated { hr, artifact })
    }

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
        if files.helmrelease(name, namespace, default_namespace).is_ok() {
            return Generated::of_file(files, name, namespace, default_namespace);
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

    /// Built from the repository whose top is `top`, with the `valuesFrom` sources of `files`.
    pub fn build(self, top: &Path, files: &ReleaseFiles) -> Result<Built> {
        let refs = files.values_from(&self.hr)?;
        let dir = crate::support::process::private_dir("cozyhr-artifact-").map_err(Error::Io)?;
        self.artifact.build(top, dir.path()).map_err(|e| Error::Failed(e.to_string()))?;
        let (chart_dir, _) = self
            .artifact
            .chart()
            .ok_or_else(|| Error::Failed(format!("artifact {}: no copy of a chart directory", self.artifact.name)))?;
        let chart = ChartDir::open(&dir.path().join(chart_dir))?;
        Ok(Built { chart, hr: self.hr, refs, _dir: dir })
    }
}
