//! The round driver: a round at the start, then one per burst of changes, until a signal, standard
//! output's reader going away, a round (the HelmRelease was resumed) or the end of every watch ends it.

use tokio::sync::mpsc;

use super::debounce::{QUIET, debounce};
use super::reader_gone::stdout_reader_gone;
use super::round::{Change, Ended, Outcome, Round, Why};
use super::status_line::RoundLines;
use super::stop::Stop;
use super::watched::Watched;
use super::watches::Watches;

/// The loop: a round at the start, then one per burst of changes, until SIGINT or SIGTERM (see the module
/// docs).
pub async fn run<R: Round>(round: &mut R, watches: &mut Watches, stop: &Stop) -> Ended {
    let Watches { watched, changes, what, .. } = watches;
    drive(round, changes, watched, what, stop).await
}

/// [`run`] over its parts: the changes as they arrive, what names them, and what is watched in words.
/// Each turn runs a round and writes its line; then the loop ends if the round ended it or a signal came
/// during it, and otherwise waits for the next burst.
async fn drive<R: Round>(
    round: &mut R,
    changes: &mut mpsc::UnboundedReceiver<Change>,
    watched: &Watched,
    what: &str,
    stop: &Stop,
) -> Ended {
    let mut lines = RoundLines::new(watched, what);
    let mut rounds = 0u32;
    let mut burst = vec![Change::Start];
    let exit = loop {
        rounds += 1;
        let started = lines.start(rounds, &burst);
        let outcome = run_round(round, stop, &mut lines).await;
        lines.ended(&started, outcome.as_ref());
        if let Some(Outcome::End(why)) = outcome {
            break Exit::by(why);
        }
        if let Some(exit) = signalled_during_round::<R>(stop).await {
            break exit;
        }
        match next_burst(changes, stop).await {
            Ok(next) => burst = next,
            Err(exit) => break exit,
        }
    };
    lines.clear();
    Ended { why: exit.why, rounds, cut_off: exit.cut_off }
}

/// How the loop ends, before its rounds are counted: why, and whether a round was cut off.
struct Exit {
    why: Why,
    cut_off: bool,
}

impl Exit {
    /// An end that cut no round off: every end but a signal during a round ([`signalled_during_round`]).
    fn by(why: Why) -> Exit {
        Exit { why, cut_off: false }
    }
}

/// Runs one round and decides what the first signal during it does. A round that changes nothing in the
/// cluster is dropped at once (None; its temporary files go with it). One that may change the cluster is
/// finished, so that the first Ctrl-C never cuts an apply off half-way; the loop says so, and only a
/// second signal reaches the round, through the [`Stop`] it was given.
async fn run_round<R: Round>(round: &mut R, stop: &Stop, lines: &mut RoundLines<'_>) -> Option<Outcome> {
    let before = stop.count();
    let work = round.run(stop);
    tokio::pin!(work);
    let first = stop.after(before + 1);
    tokio::pin!(first);
    let mut finishing = false;
    loop {
        tokio::select! {
            outcome = &mut work => return Some(outcome),
            _ = &mut first, if !finishing => {
                if !R::CHANGES_CLUSTER {
                    return None;
                }
                finishing = true;
                lines.finishing();
            }
        }
    }
}

/// After a round: whether a signal came during it. Then the loop ends now rather than waiting for the
/// next change, and the round counts as cut off when a second signal reached a round that changes the
/// cluster (helm was stopped).
async fn signalled_during_round<R: Round>(stop: &Stop) -> Option<Exit> {
    if stop.count() == 0 {
        return None;
    }
    let signal = stop.after(1).await;
    Some(Exit { why: Why::Signal(signal), cut_off: stop.count() > 1 && R::CHANGES_CLUSTER })
}

/// Between rounds: the next burst of changes, or the end that comes first: a signal, standard output's
/// reader going away (noticed now rather than at the next round's write), or every watch gone (nothing
/// will start a round again).
async fn next_burst(changes: &mut mpsc::UnboundedReceiver<Change>, stop: &Stop) -> Result<Vec<Change>, Exit> {
    tokio::select! {
        burst = debounce(changes, QUIET) => burst.ok_or(Exit::by(Why::Unwatched)),
        signal = stop.after(1) => Err(Exit::by(Why::Signal(signal))),
        () = stdout_reader_gone() => Err(Exit::by(Why::ReaderGone)),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
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
