//! One release rendered at two sides (two states of a repository: a Git ref and the working tree, or two
//! refs) and compared: what `diff --against git:REF` shows of one release and `review` of each release a
//! change reaches. Both commands decide where each side's chart and release come from; rendering and
//! comparing them is done here, once, so the two cannot disagree.
//!
//! Both sides render the same way: a HelmRelease of the cluster with what helm-controller would see there
//! (its `valuesFrom` sources read once for both sides, the cluster's capabilities, lookup and next action,
//! its helm-controller's rules, Flux's post-render chain); a HelmRelease of files with what the files say,
//! the newest rules and the capabilities given (`--kube-version`, `--api-versions`); a chart alone with
//! its own values as `helm template` renders it. A side where the chart or the release is missing has no
//! objects: everything is added or removed.

use std::path::PathBuf;

use serde_json::Value;

use super::diff::{Plan, PlanOptions};
use crate::cluster::Cluster;
use crate::cluster::discovery::ClusterApis;
use crate::cluster::helmstore::NextAction;
use crate::cluster::manifests::{ClusterScoped, ObjectId};
use crate::desired::target::Target;
use crate::desired::{Desired, UserValues, notes};
use crate::flux::HelmRelease;
use crate::render::{ClusterView, TemplateRequest, Tools};
use crate::resolve::ReleaseOrigin;
use crate::resolve::fetched::With;
use crate::source::chart::ChartDir;
use crate::support::error::{Error, Result};

type Objects = Vec<(ObjectId, Value)>;

/// What renders both sides: the tools (helm; this executable, Flux's post-renderer when the chain cannot
/// run in process; kubectl), the user's values, how the plan is made, and for which command.
pub struct Renderer<'a> {
    tools: &'a Tools,
    /// `-f` and `--set`, given to both sides.
    user: &'a UserValues,
    options: PlanOptions,
    caller: Caller,
}

/// The command a renderer works for: what it says, and how its errors are named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// `diff --against git:REF`, one release: a rendering with another chart version than
    /// helm-controller's is said.
    Diff,
    /// `review`, many releases: only what is said once per command (the helm-controller's notes).
    Review,
}

impl<'a> Renderer<'a> {
    pub fn new(tools: &'a Tools, user: &'a UserValues, options: PlanOptions, caller: Caller) -> Self {
        Renderer { tools, user, options, caller }
    }
}

/// One side: its chart (None: not there) and the release it renders.
pub struct Side<'a> {
    /// Named in this side's errors ("at origin/main: ..."), when a report holds errors of both sides.
    pub label: Option<&'a str>,
    pub chart: Option<&'a ChartDir>,
    pub release: ReleaseOrigin<'a>,
}

/// What the charts see of a cluster when they render, at both sides alike.
pub enum View<'a> {
    /// The release's own cluster as helm-controller sees it: its APIs, and what its Helm storage holds
    /// (`stored`: the next action before a move of the release is accounted for, per side).
    Cluster { cluster: &'a Cluster, apis: &'a ClusterApis, stored: NextAction },
    /// No cluster: the capabilities given, lookup finds nothing, an install.
    Offline(&'a ClusterView),
}

/// The release's own cluster (the one its HelmRelease installs into, `spec.kubeConfig`) as
/// helm-controller sees it: its APIs and what its Helm storage holds, read once for both sides.
pub struct ReleaseCluster {
    pub target: Target,
    pub apis: ClusterApis,
    pub stored: NextAction,
}

impl ReleaseCluster {
    /// The cluster `hr` installs into, seen from `home`.
    pub async fn of(home: &Cluster, hr: &HelmRelease) -> Result<ReleaseCluster> {
        let target = crate::desired::target::resolve(home, hr).await?;
        let (cluster, release) = (&target.cluster, hr.release_name());
        let (apis, stored) = tokio::try_join!(
            crate::cluster::discovery::discover(cluster),
            crate::cluster::helmstore::next_action(cluster, hr.storage_namespace(), &release)
        )?;
        Ok(ReleaseCluster { target, apis, stored })
    }

    pub fn view(&self) -> View<'_> {
        View::Cluster { cluster: &self.target.cluster, apis: &self.apis, stored: self.stored }
    }
}

impl View<'_> {
    fn of(&self, chart: &ChartDir, desired: Option<&Desired>) -> ClusterView {
        match self {
            View::Cluster { cluster, apis, stored } => {
                let action = desired.map_or(*stored, |d| d.after_move(*stored));
                crate::desired::cluster_view(cluster, apis, chart, action)
            }
            View::Offline(view) => (*view).clone(),
        }
    }

    fn scoped(&self) -> ClusterScoped {
        match self {
            View::Cluster { apis, .. } => apis.cluster_scoped(),
            View::Offline(_) => ClusterScoped::builtin(),
        }
    }
}

impl Renderer<'_> {
    /// Both sides rendered (at once) with `view` and compared: what the new side adds, changes and removes
    /// against the old.
    pub async fn plan(&self, old: &Side<'_>, new: &Side<'_>, view: &View<'_>) -> Result<Plan> {
        let (old_objects, new_objects) = tokio::try_join!(self.objects(old, view), self.objects(new, view))?;
        let new_objects = self.pin_drawn(old, &old_objects, new_objects, view).await?;
        super::diff::plan_with(new_objects, old_objects, self.options)
            .map_err(|e| Error::Invalid { what: self.caller.command().into(), reason: e.to_string() })
    }

    /// `new_objects` with the values the old side's chart draws anew at every render taken from
    /// `old_objects` ([`super::drawn`]): found by rendering the old side a second time, only when the two
    /// sides differ and its chart may draw such values.
    async fn pin_drawn(
        &self,
        old: &Side<'_>,
        old_objects: &Objects,
        new_objects: Objects,
        view: &View<'_>,
    ) -> Result<Objects> {
        let draws = old.chart.is_some_and(ChartDir::may_draw_anew);
        if !draws || old_objects.is_empty() || !super::drawn::any_differs(&new_objects, old_objects) {
            return Ok(new_objects);
        }
        let again = self.objects(old, view).await?;
        Ok(super::drawn::pin(old_objects, &again, new_objects))
    }

    /// One side's objects: none when its chart or release is not there.
    async fn objects(&self, side: &Side<'_>, view: &View<'_>) -> Result<Objects> {
        let Some(chart) = side.chart else { return Ok(Vec::new()) };
        if let ReleaseOrigin::ChartDefaults { namespace } = &side.release {
            return self.chart_defaults(chart, namespace, view).await.map_err(|e| side.at(e));
        }
        let kubectl = |hr: &HelmRelease| self.kubectl_for(hr);
        let with = With { chart, user: self.user, given: None, tools: self.tools };
        let Some(desired) = crate::resolve::fetched::at_side(&side.release, with, kubectl).await else {
            return Ok(Vec::new());
        };
        let of_cluster = matches!(side.release, ReleaseOrigin::Cluster { .. });
        let objects = match desired {
            Ok(desired) => self.release_objects(desired, of_cluster, chart, view).await,
            Err(e) => Err(e),
        };
        objects.map_err(|e| side.at(e))
    }

    /// The chart alone in `namespace`, with its own values and the user's, as `helm template` renders it.
    async fn chart_defaults(&self, chart: &ChartDir, namespace: &str, view: &View<'_>) -> Result<Objects> {
        let cluster_view = view.of(chart, None);
        let req = TemplateRequest {
            chart_dir: chart.path(),
            release_name: &chart.meta.name,
            namespace,
            values_stdin: None,
            values_files: self.user.files.clone(),
            sets: self.user.sets.clone(),
            view: &cluster_view,
            include_crds: false,
            skip_schema_validation: false,
        };
        let text = crate::render::template(&self.tools.helm, &req, None).await?;
        super::rendered_objects(&text, namespace, &view.scoped())
    }

    /// A HelmRelease's release at this side, as Flux would make it, rendered through Flux's post-render
    /// chain; what a cluster's release renders with is said as one command says it.
    async fn release_objects(
        &self,
        desired: Desired,
        of_cluster: bool,
        chart: &ChartDir,
        view: &View<'_>,
    ) -> Result<Objects> {
        if of_cluster {
            if self.caller == Caller::Diff {
                notes::version(&desired, chart);
            }
            notes::controller(&desired, &self.tools.helm);
        }
        let cluster_view = view.of(chart, Some(&desired));
        let text = desired.render(&self.tools.helm, &cluster_view, &self.tools.self_exe, None).await?;
        super::rendered_objects(&text, &desired.release_namespace, &view.scoped())
    }

    /// The kubectl for `hr`: an error (how to get one) only when its postRenderers need one and there
    /// is none.
    fn kubectl_for(&self, hr: &HelmRelease) -> Result<PathBuf> {
        let needs_one = hr.spec.post_renderers.as_ref().and_then(|p| p.as_array()).is_some_and(|p| !p.is_empty());
        match self.tools.kubectl_found() {
            Some(path) => Ok(path.to_path_buf()),
            None if needs_one => Ok(self.tools.kubectl()?),
            None => Ok(PathBuf::from("kubectl")),
        }
    }
}

impl Caller {
    fn command(self) -> &'static str {
        match self {
            Caller::Diff => "diff",
            Caller::Review => "review",
        }
    }
}

impl Side<'_> {
    /// `error`, said to have happened at this side when it has a label.
    fn at(&self, error: Error) -> Error {
        match self.label {
            Some(label) => Error::Failed(format!("{label}: {error}")),
            None => error,
        }
    }
}
