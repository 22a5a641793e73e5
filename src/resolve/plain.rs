//! The chart alone (`--plain`), as `helm install RELEASE` would render it: no HelmRelease.

use crate::cluster::Cluster;
use crate::desired::UserValues;
use crate::render::{ClusterView, TemplateRequest};
use crate::support::error::Result;

use super::Resolver;

impl Resolver {
    /// `--plain`: the chart alone, as `helm install RELEASE` into `namespace` would render it; with the
    /// cluster's capabilities and lookup when `cluster` is given, else with Helm's defaults.
    pub async fn render_plain(
        &self,
        cluster: Option<&Cluster>,
        namespace: &str,
        release: &str,
        user: &UserValues,
    ) -> Result<String> {
        let view = match cluster {
            None => ClusterView::default(),
            Some(cluster) => {
                let (apis, action) = tokio::try_join!(
                    crate::cluster::discovery::discover(cluster),
                    crate::cluster::helmstore::next_action(cluster, namespace, release)
                )?;
                crate::desired::cluster_view(cluster, &apis, &self.chart, action)
            }
        };
        let req = TemplateRequest {
            chart_dir: self.chart.path(),
            release_name: release,
            namespace,
            values_stdin: None,
            values_files: user.files.clone(),
            sets: user.sets.clone(),
            view: &view,
            include_crds: false,
            skip_schema_validation: false,
        };
        Ok(crate::render::template(&self.tools.helm, &req, None).await?)
    }
}
