//! The stop signal: SIGINT (Ctrl-C) and SIGTERM, counted, so that the loop ends between rounds on the
//! first and a round that changes the cluster is reached only by the second.

use crate::support::error::WatchError;

/// The signals that stop the loop, counted: the first ends the loop after the round, the second reaches
/// a round that changes the cluster (helm is asked to stop, as a plain `apply` would on the first).
#[derive(Clone)]
pub struct Stop {
    count: tokio::sync::watch::Receiver<(u32, &'static str)>,
}

impl Stop {
    /// Listens for SIGINT and SIGTERM from now on: they no longer end the process by themselves.
    pub fn listen() -> Result<Stop, WatchError> {
        let (tx, rx) = tokio::sync::watch::channel((0u32, ""));
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let mut int = signal(SignalKind::interrupt()).map_err(WatchError::Signal)?;
            let mut term = signal(SignalKind::terminate()).map_err(WatchError::Signal)?;
            tokio::spawn(async move {
                loop {
                    let name = tokio::select! {
                        Some(()) = int.recv() => "SIGINT",
                        Some(()) = term.recv() => "SIGTERM",
                        else => break,
                    };
                    tx.send_modify(|(n, last)| {
                        *n += 1;
                        *last = name;
                    });
                }
            });
        }
        #[cfg(not(unix))]
        tokio::spawn(async move {
            while tokio::signal::ctrl_c().await.is_ok() {
                tx.send_modify(|(n, last)| {
                    *n += 1;
                    *last = "SIGINT";
                });
            }
        });
        Ok(Stop { count: rx })
    }

    /// A stop whose signals are sent by hand, for tests of the loop.
    #[cfg(test)]
    pub(super) fn by_hand() -> (Stop, tokio::sync::watch::Sender<(u32, &'static str)>) {
        let (tx, rx) = tokio::sync::watch::channel((0u32, ""));
        (Stop { count: rx }, tx)
    }

    /// Resolves with the signal's name once `n` signals have come.
    pub fn after(&self, n: u32) -> impl std::future::Future<Output = String> + 'static {
        let mut rx = self.count.clone();
        async move {
            match rx.wait_for(|(count, _)| *count >= n).await {
                Ok(v) => v.1.to_string(),
                // The listener is gone (the runtime is ending): never resolve rather than stop by mistake.
                Err(_) => std::future::pending().await,
            }
        }
    }

    /// The second signal, for a round that changes the cluster to stop helm gracefully.
    pub fn second(&self) -> impl std::future::Future<Output = String> + 'static {
        self.after(2)
    }

    pub(super) fn count(&self) -> u32 {
        self.count.borrow().0
    }
}
