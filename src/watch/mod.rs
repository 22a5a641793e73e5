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
mod files;
mod status_line;
mod stop;
mod watched;
mod watches;

pub use apply::apply;
pub use cluster::watch_cluster;
pub use debounce::{QUIET, debounce};
pub use diff::{diff, diff_all};
pub use files::{FileWatch, watch_files};
pub use status_line::{StatusLine, describe};
pub use stop::Stop;
pub use watched::Watched;
pub use watches::Watches;

use std::path::PathBuf;
use std::time::Instant;

use tokio::sync::mpsc;

pub use crate::error::WatchError;
use crate::output::{Paint, Tone};

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

/// Resolves when standard output is a pipe whose reader has gone: the kernel reports an error on the
/// pipe's write end, so this waits on epoll, without polling, and the loop ends then rather than at its
/// next write. Never resolves when standard output is a terminal or a file.
async fn stdout_reader_gone() {
    use std::os::fd::{AsFd, OwnedFd};
    use std::os::unix::fs::FileTypeExt;
    use tokio::io::{Interest, unix::AsyncFd};
    // A duplicate of standard output: the same pipe, and a descriptor this function owns.
    let pipe = std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .map(std::fs::File::from)
        .ok()
        .filter(|f| f.metadata().is_ok_and(|m| m.file_type().is_fifo()));
    let Some(fd) = pipe.map(OwnedFd::from) else {
        return std::future::pending().await;
    };
    // SAFETY: `fd` is owned by the AsyncFd for its whole life, so it stays open and names the same pipe.
    match unsafe { AsyncFd::register_with_interest(fd, Interest::ERROR) } {
        Ok(fd) => {
            let _ = fd.ready(Interest::ERROR).await;
        }
        Err(_) => std::future::pending().await,
    }
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

/// The loop: a round at the start, then one per burst of changes, until SIGINT or SIGTERM (see the module
/// docs).
pub async fn run<R: Round>(round: &mut R, watches: &mut Watches, stop: &Stop) -> Ended {
    let Watches { watched, changes, what, .. } = watches;
    drive(round, changes, watched, what, stop).await
}

/// [`run`] over its parts: the changes as they arrive, what names them, and what is watched in words.
async fn drive<R: Round>(
    round: &mut R,
    changes: &mut mpsc::UnboundedReceiver<Change>,
    watched: &Watched,
    what: &str,
    stop: &Stop,
) -> Ended {
    let mut status = StatusLine::new();
    let mut rounds = 0u32;
    let mut burst = vec![Change::Start];
    let paint = Paint::stderr();
    loop {
        rounds += 1;
        let cause = describe(&burst, watched);
        // Stays until the round prints (output clears it first) or ends.
        status.show(&format!("◎ round {rounds} ({cause}): working…"));
        let started = Instant::now();
        let before = stop.count();
        let outcome = {
            let work = round.run(stop);
            tokio::pin!(work);
            let first = stop.after(before + 1);
            tokio::pin!(first);
            let mut finishing = false;
            loop {
                tokio::select! {
                    outcome = &mut work => break Some(outcome),
                    _ = &mut first, if !finishing => {
                        if !R::CHANGES_CLUSTER {
                            // Nothing of this round is in the cluster: stop now (its temporary files go with it).
                            break None;
                        }
                        finishing = true;
                        status.line(format!(
                            "{} finishing this round, then stopping (Ctrl-C again stops helm now)",
                            paint.tone("◎", Tone::Plain)
                        ));
                    }
                }
            }
        };
        let took = started.elapsed();
        let stamp = jiff::Zoned::now().strftime("%H:%M:%S");
        match &outcome {
            Some(Outcome::Done(text)) => status.round(&format!(
                "{} {stamp} round {rounds} ({cause}): {text} in {:.2}s; watching {what} (Ctrl-C to stop)",
                paint.tone("✔", Tone::Good),
                took.as_secs_f64()
            )),
            Some(Outcome::Failed(error)) => {
                status.line(format!("{} {error}", paint.tone("✗", Tone::Bad)));
                status.round(&format!(
                    "{} {stamp} round {rounds} ({cause}): failed in {:.2}s; watching {what} for the next change (Ctrl-C to stop)",
                    paint.tone("✗", Tone::Bad),
                    took.as_secs_f64()
                ));
            }
            Some(Outcome::End(why)) => {
                status.clear();
                return Ended { why: why.clone(), rounds, cut_off: false };
            }
            None => {}
        }
        if stop.count() > 0 {
            status.clear();
            let signal = stop.after(1).await;
            return Ended { why: Why::Signal(signal), rounds, cut_off: stop.count() > 1 && R::CHANGES_CLUSTER };
        }
        let next = tokio::select! {
            burst = debounce(changes, QUIET) => burst,
            signal = stop.after(1) => {
                status.clear();
                return Ended { why: Why::Signal(signal), rounds, cut_off: false };
            }
            () = stdout_reader_gone() => {
                status.clear();
                return Ended { why: Why::ReaderGone, rounds, cut_off: false };
            }
        };
        match next {
            Some(b) => burst = b,
            None => {
                status.clear();
                return Ended { why: Why::Unwatched, rounds, cut_off: false };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// A round that records what it saw, sends a signal part-way when told to, and takes 100 ms.
    struct Recorder<const CHANGES: bool> {
        runs: u32,
        signal_in_round: Option<u32>,
        signals: tokio::sync::watch::Sender<(u32, &'static str)>,
        /// Whether the second signal reached the round (it stops helm in an apply).
        saw_second: bool,
    }

    impl<const CHANGES: bool> Round for Recorder<CHANGES> {
        const CHANGES_CLUSTER: bool = CHANGES;

        async fn run(&mut self, stop: &Stop) -> Outcome {
            self.runs += 1;
            if self.signal_in_round == Some(self.runs) {
                self.signals.send_modify(|(n, name)| {
                    *n += 1;
                    *name = "SIGINT";
                });
                tokio::time::sleep(Duration::from_millis(10)).await;
                self.signals.send_modify(|(n, _)| *n += 1);
                tokio::select! {
                    _ = stop.second() => self.saw_second = true,
                    () = tokio::time::sleep(Duration::from_secs(5)) => {}
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            Outcome::Done(format!("run {}", self.runs))
        }
    }

    fn recorder<const CHANGES: bool>(signal_in_round: Option<u32>) -> (Recorder<CHANGES>, Stop) {
        let (stop, signals) = Stop::by_hand();
        (Recorder { runs: 0, signal_in_round, signals, saw_second: false }, stop)
    }

    #[tokio::test(start_paused = true)]
    async fn a_round_at_the_start_then_one_per_burst_until_a_signal() {
        let (mut round, stop) = recorder::<true>(None);
        let (tx, mut rx) = mpsc::unbounded_channel();
        let signals = round.signals.clone();
        tokio::spawn(async move {
            for name in ["a", "b"] {
                tokio::time::sleep(Duration::from_secs(1)).await;
                // Two events of one save: one round.
                tx.send(Change::File(PathBuf::from(name))).unwrap();
                tx.send(Change::File(PathBuf::from(name))).unwrap();
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
            signals.send_modify(|(n, name)| {
                *n += 1;
                *name = "SIGTERM";
            });
            // Kept open: the loop ends by the signal, not because the watches are gone.
            std::future::pending::<()>().await;
        });
        let ended = drive(&mut round, &mut rx, &Watched::default(), "x", &stop).await;
        assert_eq!(ended, Ended { why: Why::Signal("SIGTERM".into()), rounds: 3, cut_off: false });
        assert_eq!(round.runs, 3);
    }

    #[tokio::test(start_paused = true)]
    async fn a_round_that_changes_the_cluster_is_finished_and_only_a_second_signal_reaches_it() {
        let (mut round, stop) = recorder::<true>(Some(1));
        let (_tx, mut rx) = mpsc::unbounded_channel();
        let ended = drive(&mut round, &mut rx, &Watched::default(), "x", &stop).await;
        assert_eq!(round.runs, 1, "no round after the signal");
        assert!(round.saw_second, "the second signal reached the round");
        assert_eq!(ended, Ended { why: Why::Signal("SIGINT".into()), rounds: 1, cut_off: true });
    }

    #[tokio::test(start_paused = true)]
    async fn a_round_that_changes_nothing_is_dropped_at_the_first_signal() {
        let (mut round, stop) = recorder::<false>(Some(1));
        let (_tx, mut rx) = mpsc::unbounded_channel();
        let ended = drive(&mut round, &mut rx, &Watched::default(), "x", &stop).await;
        assert!(!round.saw_second, "the round was dropped before it could see the second signal");
        assert_eq!((ended.rounds, ended.cut_off), (1, false));
    }
}
