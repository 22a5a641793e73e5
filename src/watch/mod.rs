//! `--watch`: the inner loop of `diff` and `apply`. A save in the chart, in a linked library chart or in a
//! `-f` file, or an edit of the HelmRelease or of its `valuesFrom` sources in the cluster, starts a round;
//! what a round does is a [`Round`]: [`diff()`] prints a diff, [`apply()`] applies.
//!
//! - Files: filesystem notifications ([`notify`]: inotify, FSEvents, kqueue), never polling. The chart is
//!   watched as a tree; a symlink in it that leads out of it (a library chart kept beside the chart) is
//!   resolved and its target watched too, since a write there reaches no watch on the chart itself.
//! - Cluster: `watcher`s on the HelmRelease and on each `valuesFrom` ConfigMap and Secret. A HelmRelease
//!   counts as changed when its generation moves (its spec changed), so the status an apply writes, and
//!   helm-controller's own status writes, start no round; a source counts when its resourceVersion moves.
//! - Debounce: a round starts once no event came for [`QUIET`]; an editor's write, rename and chmod of one
//!   save (and a checkout touching many files) are one change.
//! - Ctrl-C (SIGINT) or SIGTERM ends the loop between rounds. A round that changes nothing is dropped at
//!   once; one that may change the cluster ([`Round::CHANGES_CLUSTER`]) is finished first, and only a
//!   second signal reaches it (see [`Stop`]) — an apply is never cut off by the first.

mod apply;
mod cluster;
mod debounce;
mod diff;
mod driver;
mod files;
mod reader_gone;
mod round;
mod status_line;
mod stop;
mod watched;
mod watches;

pub use apply::apply;
pub use cluster::watch_cluster;
pub use debounce::{QUIET, debounce};
pub use diff::{diff, diff_all};
pub use driver::run;
pub use files::{FileWatch, watch_files};
pub use status_line::{StatusLine, describe};
pub use stop::Stop;
pub use watched::Watched;
pub use watches::Watches;

pub use crate::support::error::WatchError;
pub use round::{Change, Ended, Outcome, Round, Why};
