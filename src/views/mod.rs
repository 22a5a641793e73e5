//! What `kubectl cozyhr` shows of Flux objects, over the model and verbs of [`crate::flux`]: the `get`
//! table and documents ([`get`], columns in [`table`]), the `status` report ([`status`]), the dependsOn
//! tree ([`tree`]) and the cluster's answers for command-line completion ([`complete`]).

pub mod complete;
pub mod get;
pub mod status;
pub mod table;
pub mod tree;
