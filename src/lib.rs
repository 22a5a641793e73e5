//! cozyhr: the library shared by `kubectl cozyhr` and `helm cozy`.
//!
//! It is cut by domain, not by binary:
//! - [`cluster`]: kubeconfig, context and namespace resolution exactly like kubectl, one client per process.
//! - [`flux`]: the typed HelmRelease v2 model, its conditions and the `reconcile.fluxcd.io` request protocol,
//!   and the verbs (suspend, resume, reconcile, wait) written once over [`flux::FluxObject`].
//! - [`output`]: tables, `-o` formats and the colour decision.
//! - [`error`]: the typed errors the binaries turn into one clear line.

pub mod apply;
pub mod cache;
pub mod chart;
pub mod cluster;
pub mod compare;
pub mod desired;
pub mod diff;
pub mod discovery;
pub mod duration;
pub mod error;
pub mod flux;
pub mod go;
pub mod helmstore;
pub mod install;
pub mod live;
pub mod manifests;
pub mod output;
pub mod par;
pub mod pipeline;
pub mod release;
pub mod release_lock;
pub mod release_status;
pub mod render;
pub mod snapshot;
pub mod values;

pub use error::{Error, Result};

/// The version every binary reports: the workspace version, set at release time by scripts/release.sh.
pub const VERSION: &str = match option_env!("COZYHR_VERSION") {
    Some(v) => v,
    None => env!("CARGO_PKG_VERSION"),
};
