//! cozyhr: the library shared by `kubectl cozyhr` and `helm cozy`, cut by domain, not by binary.
//!
//! The release pipeline every chart command runs, in order ([`pipeline`] puts it together):
//! - [`chart`]: the chart directory; [`desired`]: from a HelmRelease and a chart to what Helm is given
//!   (names from [`release`], values from [`values`], the post-render chain).
//! - [`render`]: the real helm (`template`, started ahead by `render::early`), then Flux's post-render
//!   chain in process or as Helm's post-renderer.
//! - [`compare`]: the plan against live objects ([`live`], [`discovery`]) or the stored release
//!   ([`helmstore`]); [`diff`]: the plan itself, normalising, masking and printing it (`-o diff|summary|
//!   json|markdown`); [`manifests`]: parsing documents and naming objects.
//! - [`target`]: the release's own cluster (`spec.kubeConfig`) and identity (`spec.serviceAccountName`);
//!   [`chart_source`]: the chart's version as its source gives it.
//! - [`apply`]: check, take the release's lock ([`release_lease`]), suspend, wait for helm-controller
//!   ([`release_lock`]), apply the chart's CRDs ([`crds`]), install ([`install`], with the method of
//!   [`apply_method`]), wait as helm-controller waits ([`readiness`], expressions in [`cel`]), hand
//!   Helm 4's fields to helm-controller's field manager ([`field_managers`]), test and remediate as
//!   helm-controller does, and the status it would write (digests from [`snapshot`]); [`handback`]:
//!   whether the chart applied is the source's, for an honest hand-back; [`release_target`]: where the
//!   release is recorded, and whether helm-controller uninstalls it there before installing anew.
//!
//! - [`drift`]: `kubectl cozyhr drift`, the drift helm-controller's drift detection sees (the stored
//!   release against the live objects, its normalisation, exclusions and ignore rules in
//!   [`drift::ignore`]).
//!
//! - [`release_set`]: the releases of one chart for `--all` (which HelmReleases deploy it, their
//!   `dependsOn` waves), diffed and applied as a set.
//! - [`review`]: `helm cozy review`, a change across a repository of charts: the charts it can change
//!   (what each reads, [`helmignore`] for what Helm leaves out), each of their releases diffed between
//!   two Git states.
//! - [`watch`]: `--watch`, the inner loop: files and cluster objects watched, changes debounced, a round
//!   per change until Ctrl-C; [`watch::diff()`] and [`watch::apply()`] are the two commands' loops.
//!
//! Around it:
//! - [`controller`]: the cluster's helm-controller (its version, found as a user can find it) and its
//!   rules, which every command above follows, and the Helm SDK inside it.
//! - [`flux`]: the HelmRelease and source models, conditions, the verbs (get, suspend, resume, reconcile,
//!   wait) written once over [`flux::FluxObject`] and their bulk forms (by name or `--all`, in
//!   [`flux::bulk`]), the `status` report, what `get` prints and follows (table, documents, `-w`), the
//!   dependsOn graph of `tree` and the cluster's answers for command-line completion.
//! - [`go`]: the crate cozyhr-go, re-exported: Go's encoding rules, byte for byte (strconv, time,
//!   encoding/json, go-yaml v2/v3, digests, path.Match), and the YAML reading and writing of show's and
//!   diff's hot loops, built for speed.
//! - [`cluster`]: kubeconfig, context and namespace as kubectl resolves them; [`error`]: the typed errors
//!   the binaries turn into one line; [`output`]: stdout, progress lines on stderr, colour, tables.
//! - [`process`]: other programs (argument vectors, never a shell), SIGINT/SIGTERM, private temporary files.
//! - [`release_file`]: a HelmRelease and its valuesFrom sources read from files instead of the cluster;
//!   [`gitref`]: the chart as it is at a Git ref, for `diff --against git:REF`.
//! - [`cache`] (cozyhr's cache directory), [`duration`] (Go durations), [`par`] (large charts on all cores).

pub mod apply;
pub mod apply_method;
pub mod cache;
pub mod cel;
pub mod chart;
pub mod chart_source;
pub mod cluster;
pub mod compare;
pub mod controller;
pub mod crds;
pub mod desired;
pub mod diff;
pub mod discovery;
pub mod drift;
pub mod duration;
pub mod error;
pub mod field_managers;
pub mod flux;
pub mod gitref;
pub mod handback;
pub mod helmignore;
pub use cozyhr_go as go;
pub mod helmstore;
pub mod install;
pub mod live;
pub mod manifests;
pub mod output;
pub mod par;
pub mod pipeline;
pub mod process;
pub mod readiness;
pub mod release;
pub mod release_file;
pub mod release_lease;
pub mod release_lock;
pub mod release_set;
pub mod release_target;
pub mod render;
pub mod review;
pub mod snapshot;
pub mod target;
pub mod values;
pub mod values_files;
pub mod watch;

pub use error::{Error, Result};

/// The version every binary reports: the workspace version, set at release time by scripts/release.sh.
pub const VERSION: &str = match option_env!("COZYHR_VERSION") {
    Some(v) => v,
    None => env!("CARGO_PKG_VERSION"),
};
