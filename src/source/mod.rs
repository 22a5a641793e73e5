//! Where a release comes from: the chart directory ([`chart`]) and what Helm leaves out of it
//! ([`helmignore`]), the chart's version as its Flux source gives it ([`chart_source`]), HelmReleases read
//! from files ([`release_file`]), `chart.spec.valuesFiles` read as source-controller reads them
//! ([`values_files`]), and a chart as it is at a Git ref ([`gitref`]).

pub mod chart;
pub mod chart_source;
pub mod gitref;
pub mod helmignore;
pub mod release_file;
pub mod values_files;
