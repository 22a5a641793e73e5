//! Everything one loop watches, started together: the files of the chart and the cluster objects of its
//! HelmReleases, their changes on one channel, and what is watched in words.

use std::path::{Path, PathBuf};

use tokio::sync::mpsc;

use super::cluster::watch_cluster;
use super::files::{FileWatch, watch_files};
use super::round::Change;
use super::watched::Watched;
use crate::cluster::Cluster;
use crate::flux::HelmRelease;
use crate::support::error::WatchError;

/// Everything a loop watches for one HelmRelease and its chart, and the channel its changes arrive on.
/// Dropping it stops every watch.
pub struct Watches {
    pub watched: Watched,
    pub changes: mpsc::UnboundedReceiver<Change>,
    /// What is watched, in a few words, for the status line.
    pub what: String,
    _files: FileWatch,
    /// One watch of the cluster per HelmRelease followed.
    cluster: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for Watches {
    fn drop(&mut self) {
        for task in &self.cluster {
            task.abort();
        }
    }
}

impl Watches {
    /// Starts watching the chart in `chart_dir` (linked charts included), the `-f` files, HelmReleases
    /// `hrs` with their `valuesFrom` sources and their valuesFiles outside the chart.
    pub fn start(
        cluster: &Cluster,
        chart_dir: &Path,
        user_files: &[PathBuf],
        hrs: &[HelmRelease],
    ) -> Result<Watches, WatchError> {
        // A GitRepository's valuesFiles outside the chart directory (relative to the repository) count too.
        let mut files = user_files.to_vec();
        if let Ok(chart) = crate::source::chart::ChartDir::open(chart_dir) {
            files.extend(hrs.iter().flat_map(|hr| crate::source::values_files::outside_chart(hr, &chart)));
        }
        let watched = Watched::for_chart(chart_dir, &files);
        let (tx, changes) = mpsc::unbounded_channel();
        let files = watch_files(&watched, tx.clone())?;
        let cluster_tasks = hrs.iter().map(|hr| watch_cluster(cluster, hr, tx.clone())).collect();
        let linked = watched.trees.len() - 1;
        let mut what = String::from("the chart");
        if linked > 0 {
            what.push_str(&format!(", {linked} linked chart{}", if linked == 1 { "" } else { "s" }));
        }
        if !watched.files.is_empty() {
            let n = watched.files.len();
            what.push_str(&format!(", {n} file{}", if n == 1 { "" } else { "s" }));
        }
        match hrs {
            [hr] => {
                what.push_str(&format!(" and helmrelease {}", hr.name()));
                let n = hr.spec.values_from.len();
                if n > 0 {
                    what.push_str(&format!(" with {n} valuesFrom source{}", if n == 1 { "" } else { "s" }));
                }
            }
            _ => what.push_str(&format!(" and {} helmreleases with their valuesFrom sources", hrs.len())),
        }
        Ok(Watches { watched, changes, what, _files: files, cluster: cluster_tasks })
    }
}
