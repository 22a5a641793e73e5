//! A fleet repository as Flux builds it: the Flux Kustomizations its files define, each built as
//! kustomize-controller builds it, cluster by cluster, so that `review` sees every HelmRelease (and every
//! other object) a change reaches, not only the charts that lie in the repository.
//!
//! Rooms, in the order a side is built:
//! - [`artifact`]: the side's files as source-controller archives them;
//! - [`kustomization`]: the Flux Kustomization's fields a build reads;
//! - [`clusters`]: where each cluster's reconciliation starts, and its Kustomizations built in order,
//!   nested ones included;
//! - [`reads`]: what a build reads, to build again only what a change reaches;
//! - [`build`]: one build: [`generate`] writes its kustomization, kustomize builds it ([`kustomizer`]; or
//!   [`kept`] has its output from a run before), each object is finished ([`substitute`], then as the
//!   apply step leaves it); builds of one tree side by side in [`turns`].

pub mod artifact;
pub mod build;
pub mod clusters;
pub mod generate;
pub mod kept;
pub mod kustomization;
pub mod kustomizer;
pub mod reads;
pub mod substitute;
pub mod turns;
