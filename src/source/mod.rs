//! Where a release comes from: the chart directory ([`chart`]) and what Helm leaves out of it
//! ([`helmignore`]), the chart's version as its Flux source gives it ([`chart_source`]), HelmReleases read
//! from files ([`release_file`]), `chart.spec.valuesFiles` read as source-controller reads them
//! ([`values_files`]), a chart as it is at a Git ref ([`gitref`]), and a chart built as an artifact, as
//! an ArtifactGenerator builds it ([`artifact`]) for a HelmRelease of the files or a component of
//! Cozystack's PackageSources ([`package_source`], [`generated`]).

pub mod artifact;
pub mod chart;
pub mod chart_source;
pub mod fetch;
pub mod generated;
pub mod gitref;
pub mod helmignore;
pub mod package_source;
pub mod release_file;
pub mod repository;
pub mod served;
pub mod values_files;

use std::path::PathBuf;

use release_file::{ReleaseFileError, ReleaseFiles};

/// Where the HelmRelease a command renders comes from, chosen once per command from its flags
/// ([`ReleaseSource::choose`]); every command that renders a release (`show`, `values`, `diff`) follows
/// this one choice.
pub enum ReleaseSource {
    /// The cluster: the HelmRelease and its `valuesFrom` sources are read there.
    Cluster,
    /// Release files (`--release-file`): the HelmRelease and its sources are read from them, no cluster
    /// needed for them.
    Files(FileReleases),
    /// No HelmRelease: the chart alone with its own values (`--plain`), as `helm install` renders it.
    ChartDefaults,
}

/// HelmReleases and their `valuesFrom` sources in files, read once.
pub struct FileReleases {
    /// The files as given (`-`: standard input), where `diff --against git:REF` finds them at the ref.
    pub paths: Vec<PathBuf>,
    /// Each file's name as messages give it and its text, in order.
    pub texts: Vec<(String, String)>,
    pub files: ReleaseFiles,
    /// `-n`, when given: the namespace the HelmRelease is looked up in (else whichever the files put it
    /// in).
    pub namespace: Option<String>,
}

impl ReleaseSource {
    /// The source the flags name: the release files when any is given, else the chart's defaults for
    /// `--plain`, else the cluster. Standard input (`-`) is read here, once.
    pub fn choose(
        release_files: &[PathBuf],
        plain: bool,
        namespace: Option<String>,
    ) -> Result<ReleaseSource, ReleaseFileError> {
        if release_files.is_empty() {
            return Ok(if plain { ReleaseSource::ChartDefaults } else { ReleaseSource::Cluster });
        }
        let texts = release_file::read_texts(release_files)?;
        let files = ReleaseFiles::parse(texts.clone())?;
        Ok(ReleaseSource::Files(FileReleases { paths: release_files.to_vec(), texts, files, namespace }))
    }
}
