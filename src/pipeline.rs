//! The release pipeline every chart command runs, as one straight line:
//!
//! HelmRelease + chart directory → [`Desired`] (values, names, post-render chain) → render (the real
//! helm, then Flux's post-render chain) → compare ([`crate::compare`]: plan against live objects or the
//! stored release) → install and status (apply).
//!
//! `show`, `diff` and `apply --dry-run` reach the rendered release by the same path, with what
//! helm-controller's Helm would see of the cluster ([`Seen`]), so they cannot disagree. A command in a
//! binary turns its flags into one call here and prints the result.

use std::path::{Path, PathBuf};

use crate::cluster::Cluster;
use crate::compare::Against;
use crate::compare::diff::{Plan, PlanOptions};
use crate::compare::two_sides::{Caller, Release, ReleaseCluster, Renderer, Side, View};
use crate::controller::Controller;
use crate::desired::which_chart::OtherChart;
use crate::desired::{Desired, Seen, UserValues, notes};
use crate::flux::{HelmRelease, Objects};
use crate::render::{ClusterView, Helm, TemplateRequest};
use crate::source::chart::{ChartDir, Checkout};
use crate::source::generated::{Built, Generated};
use crate::source::release_file::{ReleaseFileError, ReleaseFiles};
use crate::source::served::{ChartPlace, Served};
use crate::source::{FileReleases, ReleaseSource};
use crate::support::error::{Error, Result};

/// A chart directory and the helm that renders and installs it.
pub struct Pipeline {
    pub chart: ChartDir,
    pub helm: Helm,
    /// This executable, which Helm runs as the post-renderer when the chain cannot run in process.
    pub self_exe: PathBuf,
    /// What to do when the chart is not the one the HelmRelease deploys (see
    /// [`crate::desired::which_chart`]): refused unless a command says otherwise.
    pub other_chart: OtherChart,
    /// The chart as the HelmRelease's source serves it, when there is no chart directory: kept while the
    /// pipeline lives (its unpacked files are removed with it).
    pub served: Option<std::sync::Arc<Served>>,
}

impl Pipeline {
    /// Opens the chart in `chart_dir` and finds helm (and this executable).
    pub async fn open(chart_dir: &Path) -> Result<Pipeline> {
        let chart = ChartDir::open(chart_dir)?;
        let helm = Helm::locate().await?;
        Ok(Pipeline { chart, helm, self_exe: self_exe()?, other_chart: OtherChart::Refuse, served: None })
    }

    /// What can be had of a pipeline at `place` before the cluster is asked: the chart directory opened
    /// and helm found, or (no chart directory) helm alone, the chart to come from the HelmRelease's
    /// source ([`Opened::for_release`]). Bad input is found here, before any cluster is reached.
    pub async fn open_place(place: &ChartPlace) -> Result<Opened> {
        match place {
            ChartPlace::Directory(dir) => Ok(Opened::Ready(Pipeline::open(dir).await?)),
            ChartPlace::Source => {
                self_exe()?;
                Ok(Opened::FromSource(Helm::locate().await?))
            }
        }
    }

    /// A pipeline rendering `served` with `helm`.
    pub fn with_served(helm: Helm, served: Served) -> Result<Pipeline> {
        Ok(Pipeline {
            chart: served.chart.clone(),
            helm,
            self_exe: self_exe()?,
            other_chart: OtherChart::Refuse,
            served: Some(std::sync::Arc::new(served)),
        })
    }

    /// Reads HelmRelease `name` and works out the release Flux would make of it with this chart (said in
    /// one line when it is not the HelmRelease's chart).
    pub async fn desired(&self, cluster: &Cluster, name: &str, user: &UserValues) -> Result<Desired> {
        let hr = helmrelease(cluster, name).await?;
        // `values` only reads: another chart is said, not refused.
        crate::desired::which_chart::check(&hr, &self.chart, OtherChart::Warn)?;
        self.resolve(cluster, hr, user).await
    }

    async fn resolve(&self, cluster: &Cluster, hr: HelmRelease, user: &UserValues) -> Result<Desired> {
        let kubectl = crate::render::locate_kubectl()?;
        Desired::resolve(cluster, hr, &self.chart, user, kubectl).await
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
        let refs = from.files.values_from(&hr)?;
        let kubectl = crate::render::locate_kubectl()?;
        let source_version = crate::source::chart_source::offline(&hr);
        Desired::from_fetched(hr, refs, &self.chart, user, kubectl, source_version, Controller::offline())
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
        Ok(desired.render(&self.helm, view, &self.self_exe, None).await?)
    }

    /// `helm cozy diff`, whatever it compares with: the cluster's live objects or stored release, or
    /// the chart as it is at a Git ref; and whatever the release comes from (the request's source).
    /// `cluster` is needed unless [`DiffRequest::needs_cluster`] says otherwise (a Git ref with release
    /// files renders both sides offline).
    pub async fn diff_request(&self, cluster: Option<&Cluster>, req: &DiffRequest<'_>) -> Result<Plan> {
        let needs_cluster = || {
            Error::Failed("diff against the live objects or the stored release needs a cluster: configure one (--kubeconfig, --context), or compare with a Git ref (--against git:REF --release-file FILE)".into())
        };
        if let ReleaseSource::ChartDefaults = req.source {
            // The chart alone is compared with the release stored in the cluster's namespace, whatever
            // --against says (as Go cozyhr's diff --plain).
            let cluster = cluster.ok_or_else(needs_cluster)?;
            let rendered = self.render_plain(Some(cluster), &cluster.namespace, req.name, req.user).await?;
            return crate::compare::plain_against_release(cluster, &rendered, req.name, req.options).await;
        }
        let against = match req.against {
            DiffAgainst::Git(git_ref) => return self.diff_against_git(cluster, git_ref, req).await,
            DiffAgainst::Cluster(against) => against,
        };
        let cluster = cluster.ok_or_else(needs_cluster)?;
        let from = match req.source {
            ReleaseSource::Files(files) => Some(files),
            ReleaseSource::Cluster | ReleaseSource::ChartDefaults => None,
        };
        let (desired, seen) = self.desired_on(cluster, from, req.name, req.user).await?;
        crate::compare::diff(seen, &self.helm, &desired, against, req.options, &self.self_exe).await
    }

    /// HelmRelease `name` as [`desired`](Self::desired) gives it, with what helm-controller would see of
    /// the cluster when it renders it ([`Seen`]); the cluster is asked for all of it at once.
    async fn desired_on_cluster(&self, cluster: &Cluster, name: &str, user: &UserValues) -> Result<(Desired, Seen)> {
        self.desired_on(cluster, None, name, user).await
    }

    /// [`desired_on_cluster`](Self::desired_on_cluster), the HelmRelease and its sources read from
    /// `from` when given.
    async fn desired_on(
        &self,
        cluster: &Cluster,
        from: Option<&FileReleases>,
        name: &str,
        user: &UserValues,
    ) -> Result<(Desired, Seen)> {
        // helm starts now if it can guess its arguments (see crate::render::early); it waits for its values.
        let early = Desired::start_early(&self.helm, cluster, name, &self.chart);
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
                    Some(from) => {
                        // The HelmRelease from files, its source from the cluster.
                        let refs = from.files.values_from(&hr)?;
                        let kubectl = crate::render::locate_kubectl()?;
                        let (version, controller) = tokio::join!(
                            crate::source::chart_source::lookup(cluster, &hr, &self.chart.meta.version),
                            crate::controller::detect(cluster),
                        );
                        Desired::from_fetched(hr.clone(), refs, &self.chart, user, kubectl, version, controller)
                    }
                    None => self.resolve(cluster, hr.clone(), user).await,
                }
            };
            let (desired, action) = tokio::try_join!(desired, next)?;
            Ok::<_, Error>((desired, action, target))
        };
        let (home_apis, release) = tokio::join!(discovery, release);
        let (desired, action, target) = release?;
        let action = desired.after_move(action);
        notes::version(&desired, &self.chart);
        notes::controller(&desired, &self.helm);
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
        Ok(desired.render_with_crds(&self.helm, &view, &self.self_exe, seen.early).await?)
    }

    /// Renders the desired release as helm-controller would on its own cluster (see [`Desired::render`]).
    pub async fn render(&self, desired: &Desired, seen: Seen) -> Result<String> {
        let view = desired.cluster_view(&seen);
        Ok(desired.render(&self.helm, &view, &self.self_exe, seen.early).await?)
    }

    /// `show`: the manifests Flux would install for HelmRelease `name`.
    pub async fn show(&self, cluster: &Cluster, name: &str, user: &UserValues) -> Result<String> {
        let (desired, seen) = self.desired_on_cluster(cluster, name, user).await?;
        self.render(&desired, seen).await
    }

    /// `diff`: what `apply` would change, against the live objects or the stored release.
    pub async fn diff(
        &self,
        cluster: &Cluster,
        name: &str,
        user: &UserValues,
        against: Against,
        options: PlanOptions,
    ) -> Result<Plan> {
        let (desired, seen) = self.desired_on_cluster(cluster, name, user).await?;
        crate::compare::diff(seen, &self.helm, &desired, against, options, &self.self_exe).await
    }

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
        Ok(crate::render::template(&self.helm, &req, None).await?)
    }

    /// `apply --plain`: `helm upgrade --install` of the chart alone into the cluster's namespace; returns
    /// helm's output.
    pub async fn apply_plain(
        &self,
        cluster: &Cluster,
        release: &str,
        user: &UserValues,
        dry_run: bool,
        take_ownership: bool,
    ) -> Result<Vec<u8>> {
        let mut args: Vec<std::ffi::OsString> = vec![
            "upgrade".into(),
            "--install".into(),
            release.into(),
            self.chart.path().as_os_str().to_owned(),
            "--namespace".into(),
            cluster.namespace.clone().into(),
        ];
        args.extend(crate::render::values_args(&user.files, &user.sets));
        if dry_run {
            args.push("--dry-run=server".into());
        }
        if take_ownership {
            args.push("--take-ownership".into());
            // Helm 4 applies server-side: the fields another manager set are taken over too, as
            // helm-controller's apply forces its conflicts.
            if self.helm.major >= 4 {
                args.push("--force-conflicts".into());
            }
        }
        args.extend(cluster.helm_args());
        Ok(self.helm.run(&args, &[]).await?)
    }
}

/// Whether the live objects of HelmRelease `name` differ from its stored release (helm-controller's
/// drift detection's comparison, [`crate::compare::drift`]), in words for [`DiffRequest::no_differences`].
async fn live_against_release(cluster: &Cluster, name: &str) -> String {
    let command = crate::support::output::chart_command();
    let compared = async {
        let hr = helmrelease(cluster, name).await?;
        crate::compare::drift::detect(cluster, &hr, Default::default()).await
    };
    match compared.await {
        Ok(report) if report.has_drift() => {
            let c = report.counts();
            format!(
                "but the live objects differ from it ({} drifted, {} missing): {command} diff {name} shows what apply would change",
                c.drifted, c.missing
            )
        }
        Ok(_) => "the live objects match it".into(),
        Err(e) => format!("the live objects were not compared with it ({e})"),
    }
}

/// A pipeline as far as it can be opened without a cluster ([`Pipeline::open_place`]).
pub enum Opened {
    /// A chart directory's.
    Ready(Pipeline),
    /// Helm, found; the chart is the one the HelmRelease's source serves.
    FromSource(Helm),
}

impl Opened {
    /// The pipeline of HelmRelease `name`: the directory's, or one with the chart its source serves in
    /// `cluster` ([`crate::source::served`], said in one line on stderr).
    pub async fn for_release(self, cluster: &Cluster, name: &str) -> Result<Pipeline> {
        match self {
            Opened::Ready(pipeline) => Ok(pipeline),
            Opened::FromSource(helm) => {
                let hr = helmrelease(cluster, name).await?;
                let served = crate::source::served::fetch(cluster, &hr).await?;
                let line = served.describe();
                crate::support::output::stderr_line(format_args!(
                    "{}: {line}",
                    crate::support::output::chart_command()
                ));
                Pipeline::with_served(helm, served)
            }
        }
    }
}

impl Opened {
    /// The directory's pipeline, for a command that reads no cluster (the source's chart needs one).
    pub fn for_release_offline(self) -> Result<Pipeline> {
        match self {
            Opened::Ready(pipeline) => Ok(pipeline),
            Opened::FromSource(_) => Err(Error::Failed(
                "without a chart directory the chart is the one the HelmRelease's source serves in the cluster: configure one, or pass -C DIR".into(),
            )),
        }
    }
}

/// What `diff` compares the rendering with.
#[derive(Clone, Copy, Debug)]
pub enum DiffAgainst<'a> {
    /// The cluster: its live objects or its stored release.
    Cluster(Against),
    /// The chart (and the release files inside the repository) as they are at a Git ref, as Git spells
    /// it (`origin/main`, a tag, a commit).
    Git(&'a str),
}

/// `helm cozy diff`: what is compared, and how it is rendered.
pub struct DiffRequest<'a> {
    /// The HelmRelease `diff` is about.
    pub name: &'a str,
    pub user: &'a UserValues,
    pub against: DiffAgainst<'a>,
    /// Where the release comes from: the cluster, release files (against a Git ref, those inside the
    /// repository are read as they are at the ref for the old side, and nothing is read from a cluster),
    /// or the chart's defaults (`--plain`, against the stored release).
    pub source: &'a ReleaseSource,
    /// What the charts see without a cluster (a Git ref with release files).
    pub offline_view: ClusterView,
    pub options: PlanOptions,
}

impl DiffRequest<'_> {
    /// Whether this diff reads anything from a cluster: all do but a Git ref with release files.
    pub fn needs_cluster(&self) -> bool {
        !matches!((self.against, self.source), (DiffAgainst::Git(_), ReleaseSource::Files(_)))
    }

    /// Prints `plan` as `format` asks on stdout; a plan without changes is also said in words on stderr
    /// when people read the output, naming what was compared (against the stored release, whether the
    /// live objects match it).
    pub async fn print(
        &self,
        plan: &Plan,
        format: crate::compare::diff::Format,
        options: crate::compare::diff::RenderOptions,
        cluster: Option<&Cluster>,
    ) -> std::result::Result<(), crate::support::output::StdoutError> {
        crate::support::output::write_stdout(plan.render(format, options, &self.title()))?;
        if !plan.has_changes() && format.for_people() {
            let line = self.no_differences(cluster).await;
            crate::support::output::stderr_line(format_args!("{line}"));
        }
        Ok(())
    }

    /// The closing line of a diff without changes, saying only what was compared: "apply would change
    /// nothing" after a comparison with the live objects alone. Against the stored release, the live
    /// objects are compared with that release too (as helm-controller's drift detection compares them),
    /// so that a live edit is not hidden behind "no differences".
    async fn no_differences(&self, cluster: Option<&Cluster>) -> String {
        let command = crate::support::output::chart_command();
        if let ReleaseSource::ChartDefaults = self.source {
            // --plain compares the chart alone with the stored release, and reads no HelmRelease.
            return format!("No differences from the stored Helm release {}.", self.name);
        }
        match (self.against, cluster) {
            (DiffAgainst::Git(git_ref), _) => format!("No differences against git:{git_ref}."),
            (DiffAgainst::Cluster(Against::Live), _) => {
                format!("No differences: {command} apply {} would change nothing.", self.name)
            }
            (DiffAgainst::Cluster(Against::Release), None) => {
                "No differences from the stored Helm release (the live objects were not compared).".into()
            }
            (DiffAgainst::Cluster(Against::Release), Some(cluster)) => {
                let live = live_against_release(cluster, self.name).await;
                format!("No differences from the stored Helm release; {live}.")
            }
        }
    }
    /// What was compared, in Markdown: the first line of `-o markdown`.
    fn title(&self) -> String {
        let against = match self.against {
            DiffAgainst::Cluster(Against::Live) => "the live objects".to_string(),
            DiffAgainst::Cluster(Against::Release) => "the stored Helm release".to_string(),
            DiffAgainst::Git(r) => format!("`git:{r}`"),
        };
        format!("`{} diff {}` against {against}", crate::support::output::chart_command(), self.name)
    }
}

impl Pipeline {
    /// `diff --against git:REF`: the chart (and the release files inside the repository) as they are at
    /// the ref against the working tree, both rendered by the two-sides renderer
    /// ([`crate::compare::two_sides`], which `review` renders with too): with the cluster's capabilities,
    /// lookups and next action when `cluster` is given, else with `offline_view`. The ref's tree is
    /// written into a private temporary directory (see [`crate::source::gitref`]), removed when this returns.
    async fn diff_against_git(&self, cluster: Option<&Cluster>, git_ref: &str, git: &DiffRequest<'_>) -> Result<Plan> {
        let files = match git.source {
            ReleaseSource::Files(files) => Some(files),
            ReleaseSource::Cluster | ReleaseSource::ChartDefaults => None,
        };
        let at_ref = AtRef::materialise(&self.chart, git_ref, files).await?;
        let renderer = Renderer::new(&self.helm, &self.self_exe, git.user, git.options, Caller::Diff);
        let Some(from) = files else {
            let Some(home) = cluster else {
                return Err(Error::Failed(
                    "--against git:REF without --release-file reads the HelmRelease from the cluster: configure one, or pass --release-file".into(),
                ));
            };
            let hr = helmrelease(home, git.name).await?;
            let (refs, controller) =
                tokio::join!(crate::desired::fetch_values_from(home, &hr), crate::controller::detect(home));
            let refs = refs?;
            at_ref.add_values_files(&hr).await?;
            let release = || Release::Cluster { home, hr: &hr, refs: &refs, controller: &controller };
            let (old, new) =
                (at_ref.side(release()), Side { label: None, chart: Some(&self.chart), release: release() });
            let seen = ReleaseCluster::of(home, &hr).await?;
            return renderer.plan(&old, &new, &seen.view()).await;
        };
        let namespace = from.namespace.as_deref();
        let default_ns = cluster.map_or(namespace.unwrap_or("default"), |c| c.namespace.as_str());
        let new_files = &from.files;
        if let Some(generated) = Generated::find(new_files, &at_ref.chart_rel, git.name, namespace, default_ns) {
            let new = generated.build(at_ref.repo.top(), new_files)?;
            return self.diff_generated(cluster, &at_ref, new, &renderer, git, (namespace, default_ns)).await;
        }
        let new_hr = new_files.helmrelease(git.name, namespace, default_ns)?;
        let new_release = Release::File { refs: new_files.values_from(&new_hr)?, hr: Box::new(new_hr.clone()) };
        let old_release = match at_ref.old_files()? {
            Some(old_files) => match old_files.helmrelease(git.name, namespace, default_ns) {
                // A HelmRelease added since the ref: nothing of it was there.
                Err(ReleaseFileError::NotFound { .. }) => Release::Absent,
                hr => {
                    let hr = hr?;
                    at_ref.add_values_files(&hr).await?;
                    Release::File { refs: old_files.values_from(&hr)?, hr: Box::new(hr) }
                }
            },
            None => Release::Absent,
        };
        let new = Side { label: None, chart: Some(&self.chart), release: new_release };
        let seen = match cluster {
            Some(home) => Some(ReleaseCluster::of(home, &new_hr).await?),
            None => None,
        };
        let view = seen.as_ref().map_or(View::Offline(&git.offline_view), ReleaseCluster::view);
        renderer.plan(&at_ref.side(old_release), &new, &view).await
    }
}

impl Pipeline {
    /// `diff --against git:REF` of a release whose chart is an artifact ([`Generated`]: an
    /// ArtifactGenerator's, a PackageSource component's), `new` as the work tree builds it: against the
    /// artifact built from the ref with the release files as they are there (nothing when the ref does
    /// not define the release).
    async fn diff_generated(
        &self,
        cluster: Option<&Cluster>,
        at_ref: &AtRef<'_>,
        new: Built,
        renderer: &Renderer<'_>,
        git: &DiffRequest<'_>,
        (namespace, default_ns): (Option<&str>, &str),
    ) -> Result<Plan> {
        let old_files = at_ref.old_files()?;
        let old = match old_files
            .as_ref()
            .map(|f| (Generated::find(f, &at_ref.chart_rel, git.name, namespace, default_ns), f))
        {
            Some((Some(generated), files)) => {
                at_ref.repo.add(&at_ref.tree, at_ref.git_ref, &generated.reads()).await?;
                Some(generated.build(at_ref.tree.root(), files)?)
            }
            _ => None,
        };
        let seen = match cluster {
            Some(home) => Some(ReleaseCluster::of(home, &new.hr).await?),
            None => None,
        };
        let view = seen.as_ref().map_or(View::Offline(&git.offline_view), ReleaseCluster::view);
        renderer.plan(&built_side(old.as_ref()), &built_side(Some(&new)), &view).await
    }
}

/// One side of a diff rendering `built` (nothing when it is not there).
fn built_side(built: Option<&Built>) -> Side<'_> {
    match built {
        Some(b) => Side {
            label: None,
            chart: Some(&b.chart),
            release: Release::File { hr: Box::new(b.hr.clone()), refs: b.refs.clone() },
        },
        None => Side { label: None, chart: None, release: Release::Absent },
    }
}

/// The chart and the release files inside its repository as they are at a Git ref, written into a
/// private temporary directory that is removed when this is dropped.
struct AtRef<'a> {
    git_ref: &'a str,
    repo: crate::source::gitref::Repo,
    tree: crate::source::gitref::Tree,
    /// The chart's directory, relative to the repository's top.
    chart_rel: PathBuf,
    /// The chart at the ref; None when it was added since.
    chart: Option<ChartDir>,
    /// The release files as they were read (label, text), and where each lies in the repository (None:
    /// stdin or a file elsewhere, the same at both sides).
    texts: Vec<(String, String)>,
    in_repo: Vec<Option<PathBuf>>,
}

impl<'a> AtRef<'a> {
    /// Writes out the chart and the release files inside the repository as they are at `git_ref`.
    async fn materialise(chart: &ChartDir, git_ref: &'a str, files: Option<&FileReleases>) -> Result<AtRef<'a>> {
        let repo = crate::source::gitref::Repo::of(chart.path()).await?;
        let chart_rel = repo.relative(chart.path()).unwrap_or_default();
        let (paths, texts) = files.map_or((&[][..], Vec::new()), |f| (&f.paths[..], f.texts.clone()));
        let in_repo: Vec<Option<PathBuf>> = paths
            .iter()
            .map(|p| if crate::source::release_file::is_stdin(p) { None } else { repo.relative(p) })
            .collect();
        let mut wanted = vec![chart_rel.clone()];
        wanted.extend(in_repo.iter().flatten().cloned());
        let tree = repo.materialise(git_ref, &wanted).await?;
        // A chart added since the ref has no old side: everything it renders is added.
        let chart = if tree.has(&chart_rel.join("Chart.yaml")) {
            let dir = tree.path(&chart_rel);
            let chart = ChartDir::open(&dir)
                .map_err(|e| Error::Failed(format!("the chart directory as it is at {git_ref}: {e}")))?;
            Some(chart.in_checkout(Checkout { top: tree.root().to_path_buf(), dir }))
        } else {
            None
        };
        Ok(AtRef { git_ref, repo, tree, chart_rel, chart, texts, in_repo })
    }

    /// The old side: the chart at the ref, rendering `release`.
    fn side(&self, release: Release<'a>) -> Side<'_> {
        Side { label: None, chart: self.chart.as_ref(), release }
    }

    /// The release files as they are at the ref (a file added since has nothing there); None when the
    /// chart itself was not there.
    fn old_files(&self) -> Result<Option<ReleaseFiles>> {
        if self.chart.is_none() {
            return Ok(None);
        }
        let mut old_texts = Vec::new();
        for ((label, text), rel) in self.texts.iter().zip(&self.in_repo) {
            match rel {
                Some(rel) if !self.tree.has(rel) => {}
                Some(rel) => {
                    let text = std::fs::read_to_string(self.tree.path(rel)).map_err(|e| {
                        Error::Failed(format!("--release-file {label} as it is at {}: {e}", self.git_ref))
                    })?;
                    old_texts.push((format!("{label} at {}", self.git_ref), text));
                }
                None => old_texts.push((label.clone(), text.clone())),
            }
        }
        Ok(Some(ReleaseFiles::parse(old_texts)?))
    }

    /// Writes `hr`'s valuesFiles that lie outside the chart directory (a GitRepository's, relative to
    /// its root) into the tree, as they are at the ref, so that the chart at the ref renders with them.
    async fn add_values_files(&self, hr: &HelmRelease) -> Result<()> {
        if self.chart.is_none() {
            return Ok(());
        }
        let outside = crate::source::values_files::repository_paths(hr, &self.chart_rel);
        if !outside.is_empty() {
            self.repo.add(&self.tree, self.git_ref, &outside).await?;
        }
        Ok(())
    }
}

/// This executable, which Helm runs as the post-renderer.
fn self_exe() -> Result<PathBuf> {
    std::env::current_exe().map_err(|e| {
        Error::Failed(format!(
            "cannot find this program's own path ({e}), which Helm runs as Flux's post-renderer: run it by its full path"
        ))
    })
}

/// HelmRelease `name` in the cluster's namespace.
pub async fn helmrelease(cluster: &Cluster, name: &str) -> Result<HelmRelease> {
    Objects::<HelmRelease>::namespaced(cluster, &cluster.namespace).read(name).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_markdown_title_says_what_was_compared() {
        let user = UserValues::default();
        let request = |against| DiffRequest {
            name: "podinfo",
            user: &user,
            against,
            source: &ReleaseSource::Cluster,
            offline_view: ClusterView::default(),
            options: PlanOptions::default(),
        };
        assert_eq!(
            request(DiffAgainst::Cluster(Against::Live)).title(),
            "`helm cozy diff podinfo` against the live objects"
        );
        assert_eq!(
            request(DiffAgainst::Cluster(Against::Release)).title(),
            "`helm cozy diff podinfo` against the stored Helm release"
        );
        assert_eq!(
            request(DiffAgainst::Git("origin/main")).title(),
            "`helm cozy diff podinfo` against `git:origin/main`"
        );
    }
}
