//! What every chart command needs: the chart directory, the helm binary, kubectl for kustomize, and the
//! step from a HelmRelease to the Helm release Flux would make of it.

use std::path::Path;

use anyhow::Context as _;
use cozyhr::cluster::Cluster;
use cozyhr::desired::Desired;
use cozyhr::flux::HelmRelease;
use cozyhr::flux::verbs::Objects;
use cozyhr::render::postrender::PostRenderSession;
use cozyhr::render::{Helm, TemplateRequest};

use crate::cli::ValuesFlags;

pub struct Context {
    pub chart: cozyhr::chart::ChartDir,
    pub helm: Helm,
}

impl Context {
    pub async fn new(chart_dir: &Path) -> anyhow::Result<Context> {
        let chart = cozyhr::chart::ChartDir::open(chart_dir)?;
        let helm = Helm::locate().await?;
        Ok(Context { chart, helm })
    }

    /// `--plain`: the chart alone, as `helm template` renders it.
    pub async fn render_plain(&self, release: &str, values: &ValuesFlags) -> anyhow::Result<String> {
        let req = TemplateRequest {
            chart_dir: self.chart.path(),
            release_name: release,
            namespace: "default",
            values_files: values.values.clone(),
            sets: values.set.clone(),
            is_upgrade: false,
        };
        Ok(cozyhr::render::template(&self.helm, &req, None).await?)
    }

    /// Reads HelmRelease `name` and works out the release Flux would make of it with this chart.
    pub async fn desired(&self, cluster: &Cluster, name: &str, values: &ValuesFlags) -> anyhow::Result<Desired> {
        let objects = Objects::<HelmRelease>::namespaced(cluster, &cluster.namespace);
        let hr = objects.get(name).await.map_err(|e| match e {
            cozyhr::Error::NotFound { .. } => {
                anyhow::anyhow!("{e} (to render the chart without a HelmRelease, use --plain)")
            }
            e => e.into(),
        })?;
        let user = cozyhr::desired::UserValues { files: values.values.clone(), sets: values.set.clone() };
        let kubectl = cozyhr::render::locate_kubectl()?;
        Ok(Desired::resolve(cluster, hr, &self.chart, &user, kubectl).await?)
    }

    /// Renders the desired release through Flux's post-render chain.
    pub async fn render(&self, desired: &Desired) -> anyhow::Result<String> {
        let self_exe = std::env::current_exe().context("cannot find the helm-cozy executable")?;
        let session = PostRenderSession::new(&desired.post_render, self_exe)?;
        let values_file = desired.write_values_file()?;
        let req = TemplateRequest {
            chart_dir: desired.chart_dir(),
            release_name: &desired.release_name,
            namespace: &desired.release_namespace,
            values_files: vec![values_file.path().to_path_buf()],
            sets: Vec::new(),
            is_upgrade: false,
        };
        Ok(cozyhr::render::template(&self.helm, &req, Some(&session)).await?)
    }
}
