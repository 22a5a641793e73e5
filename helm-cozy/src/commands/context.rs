//! What every chart command needs: the chart directory, the helm binary, kubectl for kustomize, and the
//! step from a HelmRelease to the Helm release Flux would make of it.

use std::path::Path;

use anyhow::Context as _;
use cozyhr::cluster::Cluster;
use cozyhr::desired::Desired;
use cozyhr::flux::HelmRelease;
use cozyhr::flux::verbs::Objects;
use cozyhr::render::postrender::{self, PostRenderSession};
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

    /// `apply --plain`: `helm upgrade --install` of the chart alone into the namespace given with -n.
    pub async fn apply_plain(
        &self,
        cluster: &crate::cli::ClusterFlags,
        release: &str,
        values: &ValuesFlags,
        dry_run: bool,
    ) -> anyhow::Result<std::process::ExitCode> {
        let namespace = cluster.namespace.clone().filter(|n| !n.is_empty()).unwrap_or_else(|| "default".into());
        let mut args: Vec<std::ffi::OsString> = vec![
            "upgrade".into(),
            "--install".into(),
            release.into(),
            self.chart.path().as_os_str().to_owned(),
            "--namespace".into(),
            namespace.into(),
        ];
        for f in &values.values {
            args.push("--values".into());
            args.push(f.as_os_str().to_owned());
        }
        for s in &values.set {
            args.push("--set".into());
            args.push(s.into());
        }
        if dry_run {
            args.push("--dry-run=server".into());
        }
        // The cluster helm cozy was pointed at (under Helm these also arrive as HELM_KUBE* variables).
        if let Some(kubeconfig) = &cluster.kubeconfig {
            args.push("--kubeconfig".into());
            args.push(kubeconfig.as_os_str().to_owned());
        }
        if let Some(context) = &cluster.context {
            args.push("--kube-context".into());
            args.push(context.into());
        }
        let out = self.helm.run(&args, &[]).await?;
        print!("{}", String::from_utf8_lossy(&out));
        Ok(std::process::ExitCode::SUCCESS)
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

    /// Renders the desired release through Flux's post-render chain: `helm template`, then the chain in
    /// this process; through Helm's own post-renderer only when Helm's output lacks what the chain needs
    /// (see [`cozyhr::render::postrender::run_on_template_output`]).
    pub async fn render(&self, desired: &Desired) -> anyhow::Result<String> {
        let values_file = desired.write_values_file()?;
        let req = TemplateRequest {
            chart_dir: desired.chart_dir(),
            release_name: &desired.release_name,
            namespace: &desired.release_namespace,
            values_files: vec![values_file.path().to_path_buf()],
            sets: Vec::new(),
            is_upgrade: false,
        };
        let plain = cozyhr::render::template(&self.helm, &req, None).await?;
        let chain = postrender::run_on_template_output(&desired.post_render, &plain, self.helm.major);
        if let Some(rendered) = chain.await? {
            tracing::debug!("post-rendered in process");
            return Ok(rendered);
        }
        tracing::debug!("the order of documents in a template matters: rendering again through Helm's post-renderer");
        let self_exe = std::env::current_exe().context("cannot find the helm-cozy executable")?;
        let session = PostRenderSession::new(&desired.post_render, self_exe)?;
        Ok(cozyhr::render::template(&self.helm, &req, Some(&session)).await?)
    }
}
