//! cozyhr: the library shared by `kubectl cozyhr` and `helm cozy`, cut by domain, not by binary.
//!
//! The release pipeline every chart command runs, in order, one folder a stage:
//! - [`resolve`]: where a release comes from (the HelmRelease × its chart), decided once per command,
//!   and the one place the release Flux would make of it is built.
//! - [`source`]: the things a release is read from: the chart directory, its Flux source, HelmRelease
//!   files, `valuesFiles`, a Git ref.
//! - [`desired`]: from a HelmRelease and a chart to what Helm is given (names, values, the post-render
//!   chain), the release's own cluster ([`desired::target`]), where it is recorded, how it is applied and
//!   its CRDs.
//! - [`render`]: the real helm (`template`, started ahead by `render::early`), then Flux's post-render
//!   chain in process or as Helm's post-renderer.
//! - [`compare`]: the plan against live objects or the stored release; [`compare::diff`](mod@compare::diff): the plan itself,
//!   normalised, masked and printed; [`compare::drift`]: `kubectl cozyhr drift`, as helm-controller's
//!   drift detection sees it.
//! - [`apply`]: check, lock, suspend, install, wait, test, remediate and record as helm-controller does,
//!   and hand back to Flux; the modules only apply uses live inside it.
//! - [`sets`]: many releases at once (`--all`, `review`); [`watch`]: `--watch`, the inner loop.
//!
//! Under it:
//! - [`flux`]: the Flux model (HelmRelease, sources, conditions, spec) and the verbs every Flux object
//!   shares (get, suspend, resume, reconcile, wait), written once over [`flux::FluxObject`];
//!   [`views`]: what `kubectl cozyhr` shows of them (get, status, tree, completion).
//! - [`controller`]: the cluster's helm-controller (its version, found as a user can find it) and its
//!   rules, which every command above follows, and the Helm SDK inside it.
//! - [`values`]: Flux-exact values composition (valuesFrom, `values`, the merge, go-yaml's scalars), no
//!   cluster I/O.
//! - [`cluster`]: kubeconfig, context and namespace as kubectl resolves them, discovery, live objects,
//!   manifests, kstatus and Helm's release storage.
//! - [`fleet`]: a fleet repository's Flux Kustomizations, each built as kustomize-controller builds it,
//!   cluster by cluster (what `review` reads the releases of such a repository from).
//! - [`platform`]: the kinds of the platform cozyhr serves, typed beside Flux's: Cozystack's
//!   PackageSource and ApplicationDefinition (`cozystack.io/v1alpha1`), read from documents; what
//!   releases are made of them is [`source`]'s.
//! - [`support`]: typed errors, output, other programs, the cache, durations, CEL, parallel work.
//! - [`go`]: the crate cozyhr-go, re-exported: Go's encoding rules, byte for byte, and the YAML reading
//!   and writing of show's and diff's hot loops, built for speed.

pub mod apply;
pub mod cluster;
pub mod compare;
pub mod controller;
pub mod desired;
pub mod fleet;
pub mod flux;
pub use cozyhr_go as go;
pub mod platform;
pub mod render;
pub mod resolve;
pub mod sets;
pub mod source;
pub mod support;
pub mod values;
pub mod views;
pub mod watch;

pub use support::error::{Error, Result};

/// The version every binary reports: the workspace version, set at release time by scripts/release.sh.
pub const VERSION: &str = match option_env!("COZYHR_VERSION") {
    Some(v) => v,
    None => env!("CARGO_PKG_VERSION"),
};
