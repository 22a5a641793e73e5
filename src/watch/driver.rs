//! The round driver: a round at the start, then one per burst of changes, until a signal, standard
//! output's reader going away, a round (the HelmRelease was resumed) or the end of every watch ends it.

use std::time::Instant;

use tokio::sync::mpsc;

use super::debounce::{QUIET, debounce};
use super::reader_gone::stdout_reader_gone;
use super::status_line::{StatusLine, describe};
use super::stop::Stop;
use super::watched::Watched;
use super::watches::Watches;
use super::{Change, Ended, Outcome, Round, Why};
use crate::output::{Paint, Tone};

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
