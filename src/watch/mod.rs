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

use std::path::PathBuf;

pub use crate::support::error::WatchError;

/// What started a round.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Change {
    /// The first round, when the loop starts.
    Start,
    File(PathBuf),
    /// An object in the cluster, as `Kind name`.
    Object(String),
}

/// What a round reports for the round line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Done; the text says what was done (`3 to change, applied`).
    Done(String),
    /// Failed (a render error, a failed apply); the text is the error. The loop goes on.
    Failed(String),
    /// The loop ends, for this reason ([`Why::ReaderGone`], [`Why::Resumed`]).
    End(Why),
}

/// One turn of the loop: render and print a diff, or apply. It writes its own output (the diff, the plan)
/// and reports how it went; the loop writes the round line.
pub trait Round {
    /// Whether a round may change the cluster: then it is never dropped half-way on the first signal.
    const CHANGES_CLUSTER: bool;

    /// Runs one round. `stop` tells a round that changes the cluster when to cut its work short.
    fn run(&mut self, stop: &Stop) -> impl std::future::Future<Output = Outcome>;
}

/// Why the loop ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// SIGINT or SIGTERM, by name.
    Signal(String),
    /// Standard output's reader went away (`| head` ended, `less` quit): a normal end, and a quiet one.
    ReaderGone,
    /// A round found the HelmRelease resumed under the loop: Flux owns the release again.
    Resumed,
    /// Every watch is gone (cannot happen while the watchers live): nothing will change again.
    Unwatched,
}

impl std::fmt::Display for Why {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Why::Signal(name) => f.write_str(name),
            Why::ReaderGone => f.write_str("standard output closed"),
            Why::Resumed => f.write_str("the HelmRelease was resumed"),
            Why::Unwatched => f.write_str("nothing is watched any more"),
        }
    }
}

/// How the loop ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    pub why: Why,
    pub rounds: u32,
    /// A round was cut off by a second signal (helm was stopped).
    pub cut_off: bool,
}
