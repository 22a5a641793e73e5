//! What a round of the loop is: what starts it, what it does (the [`Round`] trait), what it reports,
//! and how the loop ends.

use std::path::PathBuf;

use super::stop::Stop;

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
