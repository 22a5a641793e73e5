//! Where a release comes from: the chart directory ([`chart`]) and what Helm leaves out of it
//! ([`helmignore`]), the chart's version as its Flux source gives it ([`chart_source`]), HelmReleases read
//! from files ([`release_file`]), `chart.spec.valuesFiles` read as source-controller reads them
//! ([`values_files`]), a chart as it is at a Git ref ([`gitref`]) and the two states a comparison
//! of Git refs reads ([`git_sides`]), and a chart built as an artifact, as
//! an ArtifactGenerator builds it ([`artifact`]) for a HelmRelease of the files or a component of
//! Cozystack's PackageSources ([`package_source`], [`generated`]; the kinds themselves are typed in
//! [`crate::platform`]); a chart its source serves in the
//! cluster ([`fetch`], [`served`]), or straight from the repository the source names ([`remote`],
//! [`repository`]).

pub mod artifact;
pub mod chart;
pub mod chart_source;
pub mod fetch;
pub mod generated;
pub mod git_sides;
pub mod gitref;
pub mod helm_config;
pub mod helmignore;
pub mod package_source;
pub mod release_file;
pub mod remote;
pub mod repository;
pub mod served;
pub mod values_files;
