//! What only the kubeconfig and the cluster know when a command line is completed: context names,
//! namespaces, HelmRelease names. A completion must never print an error or keep the shell waiting, so
//! each lookup gives up after a few seconds and any failure means no candidates.

use std::time::Duration;

use crate::cluster::Connection;
use crate::flux::{HelmRelease, Objects};

/// A completion that waits on an unreachable cluster is worse than none.
const LOOKUP_TIMEOUT: Duration = Duration::from_secs(5);

/// What a word on the command line names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    Context,
    Namespace,
    /// A HelmRelease in the namespace the connection's options resolve to.
    HelmRelease,
}

/// The names `lookup` can be, for the cluster `connection` names (the flags already on the line); a
/// context is looked up in the kubeconfig alone.
pub async fn candidates(connection: &Connection, lookup: Lookup) -> Vec<String> {
    let found = async {
        match lookup {
            Lookup::Context => connection.options().context_names().ok(),
            Lookup::Namespace => connection.get().await.ok()?.namespace_names().await.ok(),
            Lookup::HelmRelease => {
                let cluster = connection.get().await.ok()?;
                let items = Objects::<HelmRelease>::namespaced(cluster, &cluster.namespace).list(None).await.ok()?;
                Some(items.iter().map(|hr| hr.name().to_string()).collect())
            }
        }
    };
    tokio::time::timeout(LOOKUP_TIMEOUT, found).await.ok().flatten().unwrap_or_default()
}
