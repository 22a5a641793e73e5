//! The Flux side of the world: typed objects, their conditions, and the verbs every Flux object shares.
//!
//! The verbs (get, list, watch, suspend, resume, reconcile, wait for readiness) are written once over
//! [`FluxObject`], as in the flux CLI: adding a kind (Kustomization, HelmRepository) means a struct and a
//! trait impl, or no code at all through the generic [`FluxSource`] and a row in [`kind`].

pub mod bulk;
pub mod condition;
pub mod dependency;
pub mod events;
pub mod helmrelease;
pub mod kind;
pub mod near;
pub mod object;
pub mod reconcile;
pub mod release_name;
pub mod source;
pub mod sources;
pub mod spec;
pub mod verbs;

pub use condition::{Condition, Readiness};
pub use helmrelease::HelmRelease;
pub use kind::Kind;
pub use object::FluxObject;
pub use source::FluxSource;
pub use verbs::Objects;
