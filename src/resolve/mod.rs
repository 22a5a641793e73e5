//! The release resolver: where a release comes from, decided once, and the release Flux would make of it.
//!
//! A release comes from two things, each chosen once per command from its flags ([`origin`]): the
//! HelmRelease (the cluster, release files, none) and its chart (a directory, or the one its source
//! serves). [`Resolver`] holds the chart so chosen and the helm that renders it; [`fetched`] gathers what
//! Flux makes the release of, from wherever the HelmRelease comes from, and is the one place a
//! [`Desired`] is made. Everything above (show, values, diff, apply, diff --all, watch, review) starts here:
//!
//! ```text
//! flags ─▶ origin (HelmRelease × chart) ─▶ Resolver ─▶ fetched ─▶ Desired + Seen ─▶ render ─▶ compare / apply
//! ```
//!
//! `show`, `diff` and `apply --dry-run` reach the rendered release by the same path, with what
//! helm-controller's Helm would see of the cluster ([`Seen`]), so they cannot disagree.

pub mod fetched;
pub mod origin;
mod plain;

use std::path::Path;

use crate::cluster::Cluster;
use crate::desired::which_chart::OtherChart;
use crate::desired::{Desired, Seen, UserValues, notes};
use crate::flux::{HelmRelease, Objects};
use crate::render::{ClusterView, Tools};
use crate::source::chart::ChartDir;
use crate::source::served::Served;
use crate::support::error::{Error, Result};

pub use origin::{ChartPlace, FileReleases, ReleaseOrigin, ReleaseSource};

/// A chart, chosen from where the command takes it, and the tools that render and install it (helm among
/// them), found by the command.
pub struct Resolver {
    pub chart: ChartDir,
    pub tools: Tools,
    /// What to do when the chart is not the one the HelmRelease deploys (see
    /// [`crate::desired::which_chart`]): refused unless a command says otherwise.
    pub other_chart: OtherChart,
    /// The chart as the HelmRelease's source serves it, when there is no chart directory: kept while the
    /// resolver lives (its unpacked files are removed with it).
    pub served: Option<std::sync::Arc<Served>>,
}

impl Resolver {
    /// Opens the chart in `chart_dir`, to render with `tools`.
    pub fn open(chart_dir: &Path, tools: Tools) -> Result<Resolver> {
        let chart = ChartDir::open(chart_dir)?;
        Ok(Resolver { chart, tools, other_chart: OtherChart::Refuse, served: None })
    }

    /// What can be had of a resolver at `place` before the cluster is asked: the chart directory opened,
    /// or (no chart directory) the tools alone, the chart to come from the HelmRelease's source
    /// ([`Opened::for_release`]). Bad input is found here, before any cluster is reached.
    pub fn open_place(place: &ChartPlace, tools: Tools) -> Result<Opened> {
        match place {
            ChartPlace::Directory(dir) => Ok(Opened::Ready(Resolver::open(dir, tools)?)),
            ChartPlace::Source => Ok(Opened::FromSource(tools, None)),
            ChartPlace::Repository { version } => Ok(Opened::FromSource(tools, Some(version.clone()))),
        }
    }

    /// A resolver rendering `served` with `tools`.
    pub fn with_served(tools: Tools, served: Served) -> Resolver {
        Resolver {
            chart: served.chart.clone(),
            tools,
            other_chart: OtherChart::Refuse,
            served: Some(std::sync::Arc::new(served)),
        }
    }

    /// Reads HelmRelease `name` and works out the release Flux would make of it with this chart (said in
    /// one line when it is not the HelmRelease's chart).
    pub async fn desired(&self, cluster: &Cluster, name: &str, user: &UserValues) -> Result<Desired> {
        let hr = helmrelease(cluster, name).await?;
        // `values` only reads: another chart is said, not refused.
        crate::desired::which_chart::check(&hr, &self.chart, OtherChart::Warn)?;
        fetched::on_cluster(cluster, hr, self.with(user)).await
    }

    /// One line when the chart is the one the HelmRelease's source serves in `cluster` and the source's
    /// repository has a newer match for the HelmRelease's range (see
    /// [`crate::source::served::newer_in_repository`]); for `diff`, which asks it beside its own work.
    pub async fn newer_in_repository(&self, cluster: &Cluster, name: &str) -> Option<String> {
        let served =
            self.served.as_ref().filter(|s| matches!(s.from, crate::source::served::ServedFrom::Cluster(_)))?;
        crate::source::served::newer_in_repository(cluster, name, &served.chart.meta.version).await
    }

    /// What a release is made with here: this chart, `user`'s values, and the version the chart's source
    /// would give it when it was had from its repository.
    pub fn with<'a>(&'a self, user: &'a UserValues) -> fetched::With<'a> {
        fetched::With {
            chart: &self.chart,
            user,
            given: self.served.as_ref().and_then(|s| s.source_version()),
            tools: &self.tools,
        }
    }

    /// HelmRelease `name` and its `valuesFrom` sources from release files instead of the cluster
    /// (`--release-file`); the rest is what [`desired`](Self::desired) does. A HelmRelease without a
    /// namespace in the files is in `default_namespace`.
    pub fn desired_from_files(
        &self,
        from: &FileReleases,
        default_namespace: &str,
        name: &str,
        user: &UserValues,
    ) -> Result<Desired> {
        let hr = from.files.helmrelease(name, from.namespace.as_deref(), default_namespace)?;
        fetched::from_files(&from.files, hr, self.with(user))
    }

    /// `show --release-file`: the manifests Flux would install for HelmRelease `name` of the files,
    /// rendered without a cluster with `view` (see [`crate::desired::offline_view`]).
    pub async fn show_from_files(
        &self,
        from: &FileReleases,
        name: &str,
        user: &UserValues,
        view: &ClusterView,
    ) -> Result<String> {
        let desired = self.desired_from_files(from, from.namespace.as_deref().unwrap_or("default"), name, user)?;
        // As for lookup: said when the chart reads what cannot be known.
        if let Some(note) = desired.source_version.note(&self.chart.meta.version)
            && self.chart.may_use_chart_version()
        {
            crate::support::output::stderr_line(format_args!(
                "{}: rendering without a cluster: {note}",
                crate::support::output::chart_command()
            ));
        }
        Ok(desired.render(&self.tools.helm, view, &self.tools.self_exe, None).await?)
    }

    /// HelmRelease `name` as [`desired`](Self::desired) gives it, with what helm-controller would see of
    /// the cluster when it renders it ([`Seen`]); the cluster is asked for all of it at once.
    pub async fn desired_on_cluster(
        &self,
        cluster: &Cluster,
        name: &str,
        user: &UserValues,
    ) -> Result<(Desired, Seen)> {
        self.desired_on(cluster, None, name, user).await
    }

    /// [`desired_on_cluster`](Self::desired_on_cluster), the HelmRelease and its sources read from
    /// `from` when given.
    pub async fn desired_on(
        &self,
        cluster: &Cluster,
        from: Option<&FileReleases>,
        name: &str,
        user: &UserValues,
    ) -> Result<(Desired, Seen)> {
        // helm starts now if it can guess its arguments (see crate::render::early); it waits for its values.
        let early = Desired::start_early(&self.tools.helm, cluster, name, &self.chart);
        // Discovery needs nothing of the HelmRelease: it runs from the start, beside everything else. It
        // is the release's cluster's unless the HelmRelease names another one (spec.kubeConfig), and then
        // it is asked there once that is known.
        let discovery = crate::cluster::discovery::discover(cluster);
        let release = async {
            let hr = match from {
                Some(from) => from.files.helmrelease(name, from.namespace.as_deref(), &cluster.namespace)?,
                None => helmrelease(cluster, name).await?,
            };
            crate::desired::which_chart::check(&hr, &self.chart, self.other_chart)?;
            let target = crate::desired::target::resolve(cluster, &hr).await?;
            let (storage_ns, release) = (hr.storage_namespace().to_string(), hr.release_name());
            let next = crate::cluster::helmstore::next_action(&target.cluster, &storage_ns, &release);
            let desired = async {
                match from {
                    // The HelmRelease from files, its source from the cluster.
                    Some(from) => fetched::files_on_cluster(cluster, &from.files, hr.clone(), self.with(user)).await,
                    None => fetched::on_cluster(cluster, hr.clone(), self.with(user)).await,
                }
            };
            let (desired, action) = tokio::try_join!(desired, next)?;
            Ok::<_, Error>((desired, action, target))
        };
        let (home_apis, release) = tokio::join!(discovery, release);
        let (desired, action, target) = release?;
        let action = desired.after_move(action);
        notes::version(&desired, &self.chart);
        notes::controller(&desired, &self.tools.helm);
        notes::target_move(&desired);
        let apis = if target.shares_discovery_with_home() {
            home_apis?
        } else {
            crate::cluster::discovery::discover(&target.cluster).await?
        };
        Ok((desired, Seen { target, apis, action, early: Some(early) }))
    }

    /// What [`Seen`] holds for a desired release resolved already, in its own cluster `target`:
    /// discovery and the next action.
    pub async fn look(&self, target: &crate::desired::target::Target, desired: &Desired) -> Result<Seen> {
        let cluster = &target.cluster;
        let (apis, action) =
            tokio::try_join!(crate::cluster::discovery::discover(cluster), desired.next_action(cluster))?;
        Ok(Seen { target: target.clone(), apis, action, early: None })
    }

    /// [`render`](Self::render), and the documents of the chart's `crds/` directories.
    pub async fn render_with_crds(&self, desired: &Desired, seen: Seen) -> Result<crate::desired::Rendered> {
        let view = desired.cluster_view(&seen);
        Ok(desired.render_with_crds(&self.tools.helm, &view, &self.tools.self_exe, seen.early).await?)
    }

    /// Renders the desired release as helm-controller would on its own cluster (see [`Desired::render`]).
    pub async fn render(&self, desired: &Desired, seen: Seen) -> Result<String> {
        let view = desired.cluster_view(&seen);
        Ok(desired.render(&self.tools.helm, &view, &self.tools.self_exe, seen.early).await?)
    }

    /// `show`: the manifests Flux would install for HelmRelease `name`.
    pub async fn show(&self, cluster: &Cluster, name: &str, user: &UserValues) -> Result<String> {
        let (desired, seen) = self.desired_on_cluster(cluster, name, user).await?;
        self.render(&desired, seen).await
    }
}

/// A resolver as far as it can be opened without a cluster ([`Resolver::open_place`]).
pub enum Opened {
    /// A chart directory's.
    Ready(Resolver),
    /// The tools, found; the chart is the one the HelmRelease's source serves, or with a version
    /// (`--version`) the one its repository has at that version.
    FromSource(Tools, Option<String>),
}

impl Opened {
    /// The resolver of HelmRelease `name`: the directory's, or one with the chart its source serves in
    /// `cluster` ([`crate::source::served`], said in one line on stderr).
    pub async fn for_release(self, cluster: &Cluster, name: &str) -> Result<Resolver> {
        match self {
            Opened::Ready(resolver) => Ok(resolver),
            Opened::FromSource(tools, version) => {
                let hr = helmrelease(cluster, name).await?;
                let served = match version {
                    None => crate::source::served::fetch(cluster, &hr).await?,
                    Some(version) => crate::source::served::from_repository(cluster, &hr, &version).await?,
                };
                let command = crate::support::output::chart_command();
                crate::support::output::stderr_line(format_args!("{command}: {}", served.describe()));
                Ok(Resolver::with_served(tools, served))
            }
        }
    }
}

impl Opened {
    /// The resolver of HelmRelease `name` of release `files` (in `namespace` when given, else wherever
    /// the files put it; without one, in `default_namespace`): the directory's, or without a chart
    /// directory one with the chart its source's repository has, read from the files, at the version
    /// asked (`--version`) or the one the HelmRelease names (said in one line on stderr).
    pub async fn for_release_files(self, from: &FileReleases, name: &str, default_namespace: &str) -> Result<Resolver> {
        match self {
            Opened::Ready(resolver) => Ok(resolver),
            Opened::FromSource(tools, version) => {
                let hr = from.files.helmrelease(name, from.namespace.as_deref(), default_namespace)?;
                let served =
                    crate::source::served::from_repository_offline(&from.files, &hr, version.as_deref()).await?;
                crate::support::output::stderr_line(format_args!(
                    "{}: {}",
                    crate::support::output::chart_command(),
                    served.describe()
                ));
                Ok(Resolver::with_served(tools, served))
            }
        }
    }

    /// The directory's resolver, for a command that reads no cluster (the source's chart needs one).
    pub fn for_release_offline(self) -> Result<Resolver> {
        match self {
            Opened::Ready(resolver) => Ok(resolver),
            Opened::FromSource(..) => Err(Error::Failed(
                "without a chart directory the chart is the one the HelmRelease's source serves in the cluster: configure one, or pass -C DIR".into(),
            )),
        }
    }
}

/// HelmRelease `name` in the cluster's namespace.
pub async fn helmrelease(cluster: &Cluster, name: &str) -> Result<HelmRelease> {
    Objects::<HelmRelease>::namespaced(cluster, &cluster.namespace).read(name).await
}
