//! Debounce: the events of one save (an editor's write, rename and chmod) or of one checkout arrive as a
//! burst; a round starts once the burst has ended, with every change of it.

use std::collections::BTreeSet;
use std::time::Duration;

use tokio::sync::mpsc;

use super::round::Change;

/// How long the files and the cluster must stay quiet before a round starts: long enough for an editor's
/// write-rename dance to end, short enough not to be felt.
pub const QUIET: Duration = Duration::from_millis(150);

/// A burst of events never delays a round longer than this (a build writing into the chart for minutes
/// still gets rounds).
const MAX_DELAY: Duration = Duration::from_secs(2);

/// Waits for the next change and for the quiet that ends its burst; returns every change of the burst
/// (sorted, once each), or None when the senders are gone.
pub async fn debounce(rx: &mut mpsc::UnboundedReceiver<Change>, quiet: Duration) -> Option<Vec<Change>> {
    let first = rx.recv().await?;
    let mut burst = BTreeSet::from([first]);
    let started = tokio::time::Instant::now();
    loop {
        let until = (tokio::time::Instant::now() + quiet).min(started + MAX_DELAY);
        match tokio::time::timeout_at(until, rx.recv()).await {
            Ok(Some(c)) => {
                burst.insert(c);
            }
            // Quiet (or waited long enough), or the senders are gone: the burst is complete.
            Ok(None) | Err(_) => return Some(burst.into_iter().collect()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_burst_is_one_change() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let f = |s: &str| Change::File(PathBuf::from(s));
        tx.send(f("a")).unwrap();
        let sender = tokio::spawn({
            let tx = tx.clone();
            async move {
                // An editor's dance: write the swap file, rename it over, fix the mode, 40 ms apart.
                for name in ["b", "a", "a"] {
                    tokio::time::sleep(Duration::from_millis(40)).await;
                    tx.send(Change::File(PathBuf::from(name))).unwrap();
                }
                // A save well after the quiet period is the next change.
                tokio::time::sleep(QUIET * 3).await;
                tx.send(Change::File(PathBuf::from("c"))).unwrap();
            }
        });
        let burst = debounce(&mut rx, QUIET).await.unwrap();
        assert_eq!(burst, [f("a"), f("b")]);
        let next = debounce(&mut rx, QUIET).await.unwrap();
        assert_eq!(next, [f("c")]);
        sender.await.unwrap();
        drop(tx);
        assert_eq!(debounce(&mut rx, QUIET).await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn a_stream_of_events_still_gets_rounds() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            loop {
                if tx.send(Change::Object("ConfigMap x".into())).is_err() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        });
        let started = tokio::time::Instant::now();
        debounce(&mut rx, QUIET).await.unwrap();
        assert!(started.elapsed() <= MAX_DELAY + Duration::from_millis(60), "{:?}", started.elapsed());
    }
}
