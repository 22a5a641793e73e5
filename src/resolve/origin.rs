//! Where a release comes from, on its two axes, each chosen once per command from its flags:
//! - the HelmRelease ([`ReleaseSource`]): the cluster, release files, or none (the chart's defaults);
//!   and at one side of a two-sided comparison, which of these that side renders ([`ReleaseOrigin`]);
//! - its chart ([`ChartPlace`]): a directory, or the one the HelmRelease's source serves.

use std::path::{Path, PathBuf};

use crate::cluster::Cluster;
use crate::controller::Controller;
use crate::flux::HelmRelease;
use crate::source::release_file::{self, ReleaseFileError, ReleaseFiles};
use crate::support::error::{Error, Result};
use crate::values::FetchedRef;

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
    ) -> std::result::Result<ReleaseSource, ReleaseFileError> {
        if release_files.is_empty() {
            return Ok(if plain { ReleaseSource::ChartDefaults } else { ReleaseSource::Cluster });
        }
        let texts = release_file::read_texts(release_files)?;
        let files = ReleaseFiles::parse(texts.clone())?;
        Ok(ReleaseSource::Files(FileReleases { paths: release_files.to_vec(), texts, files, namespace }))
    }

    /// The release files, when the release comes from them.
    pub fn files(&self) -> Option<&FileReleases> {
        match self {
            ReleaseSource::Files(files) => Some(files),
            ReleaseSource::Cluster | ReleaseSource::ChartDefaults => None,
        }
    }
}

/// The release one side of a two-sided comparison renders (see [`crate::compare::two_sides`]).
pub enum ReleaseOrigin<'a> {
    /// A HelmRelease of the cluster `home`, with its `valuesFrom` sources as read once for both sides: the
    /// chart version its source gives and the rules of the cluster's helm-controller apply.
    Cluster { home: &'a Cluster, hr: &'a HelmRelease, refs: &'a [FetchedRef], controller: &'a Controller },
    /// A HelmRelease of release files as they are at this side, with its sources from the same files:
    /// rendered with the chart's own version and the newest helm-controller's rules.
    File { hr: Box<HelmRelease>, refs: Vec<FetchedRef> },
    /// The chart alone with its own values (and the user's `-f` and `--set`), for a release named after
    /// it in `namespace`.
    ChartDefaults { namespace: &'a str },
    /// Nothing at this side (a HelmRelease added since the ref).
    Absent,
}

/// Where a command takes its chart from, chosen once from `-C` ([`ChartPlace::choose`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChartPlace {
    /// A chart directory: `-C DIR`, else the current directory when it holds a Chart.yaml.
    Directory(PathBuf),
    /// No chart directory: the chart the HelmRelease's source serves in the cluster.
    Source,
    /// `--version V`: the chart at another version (or range) than the HelmRelease names, straight from
    /// the repository its source names (a HelmRepository, an OCIRepository).
    Repository { version: String },
}

impl ChartPlace {
    /// `-C DIR` when given; else the current directory when it holds a Chart.yaml; else the source's chart.
    pub fn choose(chart_dir: Option<&Path>) -> ChartPlace {
        match chart_dir {
            Some(dir) => ChartPlace::Directory(dir.to_path_buf()),
            None if Path::new("Chart.yaml").is_file() => ChartPlace::Directory(PathBuf::from(".")),
            None => ChartPlace::Source,
        }
    }

    /// With `--version V`: the chart from its repository at V; refused beside a chart directory, whose
    /// chart is the one rendered.
    pub fn at_version(self, version: Option<&str>) -> Result<ChartPlace> {
        match (self, version) {
            (place, None) => Ok(place),
            (ChartPlace::Directory(dir), Some(_)) => Err(Error::Failed(format!(
                "--version takes the chart from the HelmRelease's repository, and {} is a chart directory: run it outside a chart directory, without -C",
                dir.display()
            ))),
            (_, Some(version)) => Ok(ChartPlace::Repository { version: version.to_string() }),
        }
    }

    /// The chart directory `what` needs (a render without a cluster, the chart alone, a Git side): an
    /// error that says so when there is none.
    pub fn directory(&self, what: &str) -> Result<&Path> {
        match self {
            ChartPlace::Directory(dir) => Ok(dir),
            ChartPlace::Repository { .. } => Err(Error::Failed(format!(
                "{what} needs a chart directory: --version takes the chart from the repository of a HelmRelease in the cluster"
            ))),
            ChartPlace::Source => Err(Error::Failed(format!(
                "{what} needs a chart directory, and . holds no Chart.yaml: run it from the chart's directory or pass -C DIR (without one, {} takes the chart the HelmRelease's source serves in the cluster)",
                crate::support::output::chart_command()
            ))),
        }
    }
}
