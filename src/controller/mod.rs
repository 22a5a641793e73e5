//! The helm-controller a cluster runs, and what follows from its version.
//!
//! helm cozy is exact for one helm-controller at a time: the one that will take the release back. What
//! differs between helm-controller versions (which hooks are post-rendered, which HelmRelease fields
//! exist, what the Helm SDK inside renders) is a rule of [`Rules`], chosen by the version found here.
//! The version is learnt as a user with ordinary rights can learn it ([`detect()`]): the image tag of the
//! helm-controller Deployment, else the Flux version label and schema of the HelmRelease CRD. It is
//! asked once per command, beside discovery, and not kept on disk: a Flux upgrade must be seen by the
//! next command, and the one request costs what a revalidation would.
//!
//! - [`mod@detect`]: reading the cluster;
//! - [`rules`]: what each version does;
//! - [`helm_sdk`]: the Helm built into each version, and what a different local Helm can change.

pub mod detect;
pub mod helm_sdk;
pub mod known;
pub mod rules;
pub mod version;

pub use detect::detect;
pub use helm_sdk::{HelmDifference, HelmSdk, Splitting, differences};
pub use known::{Controller, Found, VERSION_ENV};
pub use rules::{ForceWithSsa, HookRule, Rules};
pub use version::{NEWEST_KNOWN, Version, for_flux};
