//! The Flux side of the world: typed objects, their conditions, and the verbs every Flux object shares.
//!
//! The verbs (suspend, resume, reconcile, wait for readiness) are written once over [`FluxObject`], as in
//! the flux CLI: adding a kind (Kustomization, HelmRepository) means a struct and a trait impl.

pub mod condition;
pub mod helmrelease;
pub mod object;
pub mod verbs;

pub use condition::{Condition, Readiness};
pub use helmrelease::HelmRelease;
pub use object::FluxObject;
