//! A cluster a command may need: the binary says which (its flags' [`ClusterOptions`]) and the library
//! connects on first use, once, so that a review that renders nothing of a cluster never reads a
//! kubeconfig.

use tokio::sync::OnceCell;

use super::{Cluster, ClusterOptions};

/// The cluster `options` name, connected when first asked for.
pub struct Connection {
    options: ClusterOptions,
    /// The connection, or why there is none (said as the error says it).
    made: OnceCell<Result<Cluster, String>>,
}

impl Connection {
    pub fn new(options: ClusterOptions) -> Connection {
        Connection { options, made: OnceCell::new() }
    }

    /// What names the cluster.
    pub fn options(&self) -> &ClusterOptions {
        &self.options
    }

    /// The cluster, connected at the first call; every call gets the same answer.
    pub async fn get(&self) -> Result<&Cluster, &str> {
        let made = self.made.get_or_init(|| async { self.options.connect().await.map_err(|e| e.to_string()) }).await;
        made.as_ref().map_err(String::as_str)
    }
}
