//! What every chart command needs: the chart directory, the helm binary, kubectl for kustomize, and the
//! step from a HelmRelease to the Helm release Flux would make of it.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use cozyhr::cluster::Cluster;
use cozyhr::desired::{Desired, Seen};
use cozyhr::flux::HelmRelease;
use cozyhr::flux::verbs::Objects;
use cozyhr::render::{ClusterView, Helm, TemplateRequest};

use crate::cli::{ClusterFlags, ValuesFlags};

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

    /// `--plain`: the chart alone, as `helm install` would render it into the namespace given with -n
    /// (else the context's): with the cluster's capabilities and lookup when a cluster is configured and
    /// not `offline`, else with Helm's defaults (said in one line on stderr).
    pub async fn render_plain(
        &self,
        flags: &ClusterFlags,
        release: &str,
        values: &ValuesFlags,
        offline: bool,
    ) -> anyhow::Result<String> {
        let options = flags.options();
        let (namespace, view) = if offline || !options.is_configured() {
            let why = if offline { "--offline" } else { "no cluster is configured" };
            cozyhr::output::stderr_line(format_args!(
                "helm cozy: {why}: rendering with Helm's defaults (built-in .Capabilities, lookup finds nothing, an install)"
            ));
            (options.namespace.clone().unwrap_or_else(|| "default".into()), ClusterView::default())
        } else {
            let cluster = options.connect().await?;
            let (apis, action) = tokio::try_join!(
                cozyhr::discovery::discover(&cluster),
                cozyhr::helmstore::next_action(&cluster, &cluster.namespace, release)
            )?;
            let view = cozyhr::desired::cluster_view(&cluster, &apis, &self.chart, action);
            (cluster.namespace.clone(), view)
        };
        let req = TemplateRequest {
            chart_dir: self.chart.path(),
            release_name: release,
            namespace: &namespace,
            values_stdin: None,
            values_files: values.values.clone(),
            sets: values.set.clone(),
            view: &view,
        };
        Ok(cozyhr::render::template(&self.helm, &req, None).await?)
    }

    /// `apply --plain`: `helm upgrade --install` of the chart alone into the namespace given with -n (else
    /// the context's).
    pub async fn apply_plain(
        &self,
        flags: &ClusterFlags,
        release: &str,
        values: &ValuesFlags,
        dry_run: bool,
    ) -> anyhow::Result<std::process::ExitCode> {
        let cluster = flags.options().connect().await?;
        let mut args: Vec<std::ffi::OsString> = vec![
            "upgrade".into(),
            "--install".into(),
            release.into(),
            self.chart.path().as_os_str().to_owned(),
            "--namespace".into(),
            cluster.namespace.clone().into(),
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
        args.extend(cluster.helm_args());
        let out = self.helm.run(&args, &[]).await?;
        cozyhr::output::write_stdout(&out)?;
        Ok(std::process::ExitCode::SUCCESS)
    }

    /// Reads HelmRelease `name` and works out the release Flux would make of it with this chart.
    pub async fn desired(&self, cluster: &Cluster, name: &str, values: &ValuesFlags) -> anyhow::Result<Desired> {
        let hr = self.helmrelease(cluster, name).await?;
        self.resolve(cluster, hr, values).await
    }

    async fn helmrelease(&self, cluster: &Cluster, name: &str) -> anyhow::Result<HelmRelease> {
        let objects = Objects::<HelmRelease>::namespaced(cluster, &cluster.namespace);
        objects.get(name).await.map_err(|e| match e {
            cozyhr::Error::NotFound { .. } => {
                anyhow::anyhow!("{e} (to render the chart without a HelmRelease, use --plain)")
            }
            e => e.into(),
        })
    }

    async fn resolve(&self, cluster: &Cluster, hr: HelmRelease, values: &ValuesFlags) -> anyhow::Result<Desired> {
        let user = cozyhr::desired::UserValues { files: values.values.clone(), sets: values.set.clone() };
        let kubectl = cozyhr::render::locate_kubectl()?;
        Ok(Desired::resolve(cluster, hr, &self.chart, &user, kubectl).await?)
    }

    /// HelmRelease `name` as [`desired`](Self::desired) gives it, with what helm-controller would see of
    /// the cluster when it renders it ([`Seen`]); the cluster is asked for all of it at once.
    pub async fn desired_on_cluster(
        &self,
        cluster: &Cluster,
        name: &str,
        values: &ValuesFlags,
    ) -> anyhow::Result<(Desired, Seen)> {
        // helm starts now if it can guess its arguments (see cozyhr::render::early); it waits for its values.
        let early = Desired::start_early(&self.helm, cluster, name, &self.chart);
        // Discovery needs nothing of the HelmRelease: it runs from the start, beside everything else.
        let discovery = async { Ok::<_, anyhow::Error>(cozyhr::discovery::discover(cluster).await?) };
        let release = async {
            let hr = self.helmrelease(cluster, name).await?;
            let (storage_ns, release) = (hr.storage_namespace().to_string(), hr.release_name());
            let next = async { Ok(cozyhr::helmstore::next_action(cluster, &storage_ns, &release).await?) };
            tokio::try_join!(self.resolve(cluster, hr, values), next)
        };
        let (apis, (desired, action)) = tokio::try_join!(discovery, release)?;
        Ok((desired, Seen { apis, action, early: Some(early) }))
    }

    /// Renders the desired release as helm-controller would on `cluster` (see [`Desired::render`]).
    pub async fn render(&self, cluster: &Cluster, desired: &Desired, seen: Seen) -> anyhow::Result<String> {
        let view = desired.cluster_view(cluster, &seen);
        Ok(desired.render(&self.helm, &view, &self_exe()?, seen.early).await?)
    }
}

/// This executable, which Helm runs as the post-renderer when one is needed.
pub fn self_exe() -> anyhow::Result<PathBuf> {
    std::env::current_exe().context("cannot find the helm-cozy executable")
}
