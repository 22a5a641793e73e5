//! From a HelmRelease and a chart directory to the Helm release Flux would make: release name, release
//! and storage namespaces, composed values, and the post-render chain. Shared by show, values, diff and
//! apply, so they can never disagree.

pub mod apply_method;
pub mod crds;
pub mod notes;
pub mod release_target;
pub mod target;
pub mod which_chart;

use std::path::{Path, PathBuf};

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::Api;
use serde_json::Value;

use crate::cluster::Cluster;
use crate::cluster::discovery::ClusterApis;
use crate::cluster::helmstore::NextAction;
use crate::controller::Controller;
use crate::flux::HelmRelease;
use crate::render::early::Early;
use crate::render::postrender::{self, PostRenderSession};
use crate::render::{Ahead, ClusterView, Helm, PostRenderSpec, RenderError, TemplateRequest};
use crate::source::chart::ChartDir;
use crate::source::chart_source::SourceVersion;
use crate::support::error::{Error, Result};
use crate::values::{Composed, FetchedRef, Inputs, RefData, Values};

/// Values the user adds on top, like Helm's `-f` and `--set`.
#[derive(Debug, Clone, Default)]
pub struct UserValues {
    pub files: Vec<PathBuf>,
    pub sets: Vec<String>,
}

impl UserValues {
    /// Every `-f` file read and parsed, so that a command that renders many releases (or none) says
    /// what is wrong with one before it starts, rather than once per release or never.
    pub fn check_files(&self) -> Result<()> {
        for file in &self.files {
            read_values_file(file, &file.display().to_string())?;
        }
        Ok(())
    }
}

#[derive(Debug)]
pub struct Desired {
    pub hr: HelmRelease,
    pub release_name: String,
    pub release_namespace: String,
    pub storage_namespace: String,
    /// The composed values, as Helm will store them (release.Config): without chart defaults.
    pub values: Value,
    /// The composition with provenance and the defaults it is coalesced with.
    pub composed: Composed,
    pub post_render: PostRenderSpec,
    /// The helm-controller that will take the release back, whose rules this release follows.
    pub controller: Controller,
    chart: ChartDir,
    /// The version helm-controller gives the chart from its source (see [`crate::source::chart_source`]).
    pub source_version: SourceVersion,
    /// A private copy of the chart as helm-controller would load it: values.yaml replaced by the merged
    /// `valuesFiles` (as source-controller packages them), Chart.yaml's version by the source's; None
    /// when the chart is used as it is.
    copy: Option<tempfile::TempDir>,
}

pub use crate::source::values_files::VALUES_FILES_ANNOTATION;

/// What Flux makes a release of, besides its chart: the HelmRelease, its `valuesFrom` sources (from the
/// cluster, or from release files: [`crate::source::release_file`]), the chart version its source gives
/// (or not) and the helm-controller whose rules apply. Gathered by the resolver (`crate::resolve`).
#[derive(Debug, Clone)]
pub struct Fetched {
    pub hr: HelmRelease,
    pub refs: Vec<FetchedRef>,
    pub source_version: SourceVersion,
    pub controller: Controller,
}

impl Desired {
    /// The release Flux would make of `fetched` with `chart`, the user's values on top; `kubectl` runs
    /// the postRenderers' kustomize.
    pub fn from_fetched(fetched: Fetched, chart: &ChartDir, user: &UserValues, kubectl: PathBuf) -> Result<Desired> {
        let Fetched { hr, refs, source_version, controller } = fetched;
        let rules = controller.rules();
        let source_version = if !rules.tracks_chart_digest { source_version.without_digest() } else { source_version };
        // A chart as its source packaged it has its valuesFiles merged into values.yaml already.
        let values_files = if chart.is_packaged() {
            None
        } else {
            crate::source::values_files::read(&hr, chart).map_err(|e| Error::ValuesFiles {
                hr: format!("{}/{}", hr.namespace(), hr.name()),
                error: Box::new(e),
            })?
        };
        let replaced = values_files.is_some();
        let composed = compose(&hr, chart, values_files, refs, user, rules.values_from_literal)?;
        let values = Value::Object(composed.values.clone());
        let defaults = replaced.then_some(&composed.defaults);
        let version = source_version.version(&chart.meta.version);
        let version = (version != chart.meta.version).then_some(version);
        let copy =
            if defaults.is_some() || version.is_some() { Some(chart_copy(chart, defaults, version)?) } else { None };
        let release_name = hr.release_name();
        let post_render = PostRenderSpec {
            hr_name: hr.name().to_string(),
            hr_namespace: hr.namespace().to_string(),
            post_renderers: match &hr.spec.post_renderers {
                Some(Value::Array(list)) => list.clone(),
                _ => Vec::new(),
            },
            common_metadata: hr.spec.common_metadata.clone(),
            post_render_strategy: rules.hook_strategy(hr.spec.post_render_strategy.as_deref()),
            splitting: controller.helm_sdk().splitting(),
            kubectl,
        };
        Ok(Desired {
            release_namespace: hr.release_namespace().to_string(),
            storage_namespace: hr.storage_namespace().to_string(),
            release_name,
            values,
            composed,
            post_render,
            controller,
            chart: chart.clone(),
            source_version,
            copy,
            hr,
        })
    }

    /// The lines [`notes::controller`] prints: the controller's version unknown, and what
    /// `helm` can render differently from the Helm SDK inside it, for this chart.
    pub fn controller_notes(&self, helm: &Helm) -> Vec<String> {
        let mut notes: Vec<String> = self.controller.unknown_line().into_iter().collect();
        let sdk = self.controller.helm_sdk();
        let defaults = Value::Object(self.composed.defaults.clone());
        let found = crate::controller::differences(&helm.version, sdk, self.chart.path(), &defaults);
        let version = self.controller.effective_version();
        notes.extend(crate::controller::helm_sdk::line(&helm.version, sdk, version, &found));
        notes
    }

    /// The chart's version as helm-controller would record it: the source's (see
    /// [`crate::source::chart_source`]), else Chart.yaml's.
    pub fn chart_version(&self) -> &str {
        self.source_version.version(&self.chart.meta.version)
    }

    /// The chart directory to render: the developer's, or the copy as helm-controller would load it.
    pub fn chart_dir(&self) -> &Path {
        match &self.copy {
            Some(dir) => dir.path(),
            None => self.chart.path(),
        }
    }

    /// helm-controller's next action on this release: an upgrade when a release is stored, an install
    /// when its target changed where the recorded release is stored ([`Self::after_move`]).
    pub async fn next_action(&self, cluster: &Cluster) -> Result<NextAction> {
        let stored =
            crate::cluster::helmstore::next_action(cluster, &self.storage_namespace, &self.release_name).await?;
        Ok(self.after_move(stored))
    }

    /// Whether helm-controller's next action is an upgrade (a release is stored where it looks).
    pub async fn installed(&self, cluster: &Cluster) -> Result<bool> {
        Ok(matches!(self.next_action(cluster).await?, NextAction::Upgrade { .. }))
    }

    /// The method helm-controller would apply the release with (see [`crate::desired::apply_method`]): the
    /// release's newest revision is read for an upgrade.
    pub async fn apply_method(
        &self,
        cluster: &Cluster,
        installed: bool,
    ) -> Result<crate::desired::apply_method::ApplyMethod> {
        let last = if installed {
            crate::cluster::helmstore::latest(cluster, &self.storage_namespace, &self.release_name).await?
        } else {
            None
        };
        Ok(crate::desired::apply_method::decide(&self.hr, installed, last.as_ref()))
    }

    /// Where helm-controller moves the release (uninstalls the recorded one and installs anew), for
    /// this chart and its rules ([`crate::desired::release_target`]); None when it keeps it.
    pub fn target_move(&self) -> Option<crate::desired::release_target::Move> {
        crate::desired::release_target::reinstall(&self.hr, &self.chart.meta.name, &self.controller.rules())
    }

    /// The next action `stored` (what the storage at the new target says), once a move is accounted
    /// for: when the new release is kept where the recorded one is (a renamed chart), the uninstall
    /// empties it first, so an install follows.
    pub fn after_move(&self, stored: NextAction) -> NextAction {
        match self.target_move() {
            Some(m) if m.same_storage() => NextAction::Install,
            _ => stored,
        }
    }

    /// What helm-controller's Helm would see of the release's own cluster when it renders this release:
    /// the served APIs and its next action (`seen`), and lookup through that cluster when the chart may
    /// call it.
    pub fn cluster_view(&self, seen: &Seen) -> ClusterView {
        cluster_view(&seen.target.cluster, &seen.apis, &self.chart, seen.action)
    }

    /// Renders the release through Flux's post-render chain: `helm template`, then the chain in this
    /// process; through Helm's own post-renderer (`self_exe`) only when Helm's output lacks what the chain
    /// needs (see [`crate::render::postrender::run_on_template_output`]).
    pub async fn render(
        &self,
        helm: &Helm,
        view: &ClusterView,
        self_exe: &Path,
        early: Option<Early>,
    ) -> Result<String, RenderError> {
        Ok(self.render_release(helm, view, self_exe, early, false).await?.manifests)
    }

    /// [`render`](Self::render), and the objects of the chart's `crds/` directories (its own and its
    /// enabled subcharts', as Helm selects them), which helm-controller applies itself before Helm runs
    /// (see [`crate::desired::crds`]).
    pub async fn render_with_crds(
        &self,
        helm: &Helm,
        view: &ClusterView,
        self_exe: &Path,
        early: Option<Early>,
    ) -> Result<Rendered, RenderError> {
        self.render_release(helm, view, self_exe, early, self.chart.has_crds()).await
    }

    async fn render_release(
        &self,
        helm: &Helm,
        view: &ClusterView,
        self_exe: &Path,
        early: Option<Early>,
        include_crds: bool,
    ) -> Result<Rendered, RenderError> {
        // JSON is YAML with no ambiguity left for Helm's parser; it reaches helm on its standard input.
        let values = serde_json::to_vec(&self.values).map_err(|e| RenderError::ValuesFile(e.to_string()))?;
        // helm-controller skips the values schema when the action it takes next (an upgrade once a
        // release is stored) says disableSchemaValidation, as `apply` tells helm (its install step).
        use crate::flux::spec::Actions as _;
        let settings = self.hr.spec.release_settings(view.is_upgrade);
        let req = TemplateRequest {
            chart_dir: self.chart_dir(),
            release_name: &self.release_name,
            namespace: &self.release_namespace,
            values_stdin: Some(&values),
            values_files: Vec::new(),
            sets: self.composed.integer_sets.clone(),
            view,
            include_crds,
            skip_schema_validation: settings.disable_schema_validation,
        };
        // A chart copy with Flux's replaced defaults has a new path each time: nothing to start ahead.
        let early = early.filter(|_| self.copy.is_none());
        // The chain starts on helm's output while helm exits (see Ahead), on a runtime of its own: it may
        // run kustomize. CRDs are never post-rendered (helm-controller applies them as they are).
        let (spec, major) = (self.post_render.clone(), helm.major);
        let mut ahead = Ahead::new(move |text: String| {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let (_, plain) = crate::desired::crds::split(&text);
            runtime.block_on(postrender::run_on_template_output(&spec, &plain, major))
        });
        let output = crate::render::template_ahead(helm, &req, early, |so_far| ahead.start(so_far)).await?;
        let (crds, plain) = crate::desired::crds::split(&output);
        let post_rendered = match ahead.take(&output) {
            Some(result) => {
                tracing::debug!("post-rendered while helm exited");
                result?
            }
            None => postrender::run_on_template_output(&self.post_render, &plain, helm.major).await?,
        };
        if let Some(manifests) = post_rendered {
            tracing::debug!("post-rendered in process");
            return Ok(Rendered { manifests, crds });
        }
        tracing::debug!("the order of documents in a template matters: rendering again through Helm's post-renderer");
        let session = PostRenderSession::new(&self.post_render, self_exe.to_path_buf())?;
        // Helm would hand the CRDs to its post-renderer too: they were taken from the first run.
        let req = TemplateRequest { include_crds: false, ..req };
        let manifests = crate::render::template(helm, &req, Some(&session)).await?;
        Ok(Rendered { manifests, crds })
    }

    /// Starts helm ahead for this HelmRelease and chart on `cluster` (see [`crate::render::early`]):
    /// callable before the HelmRelease is read.
    pub fn start_early(helm: &Helm, cluster: &Cluster, name: &str, chart: &ChartDir) -> Early {
        let chart = chart.path().to_string_lossy();
        Early::start(helm, &[&cluster.server, &cluster.namespace, name, &chart])
    }

    /// The composed values in a private (0600) temporary file for `helm -f`, removed when dropped. JSON
    /// is YAML with no ambiguity left for Helm's parser.
    pub fn write_values_file(&self) -> Result<tempfile::NamedTempFile> {
        let mut f = crate::support::process::private_file("cozyhr-values-", ".json")?;
        serde_json::to_writer(&mut f, &self.values).map_err(std::io::Error::other)?;
        Ok(f)
    }
}

/// A rendered release: the manifests Helm installs, and the documents of the chart's `crds/`
/// directories, which helm-controller applies before Helm runs (as they are: no templating, no
/// post-rendering).
#[derive(Debug, Default)]
pub struct Rendered {
    pub manifests: String,
    pub crds: Vec<String>,
}

/// What is learnt of the release's own cluster before a render: which cluster that is (and as whom it is
/// reached), its discovery and helm-controller's next action on the release, asked for together as early
/// as a command can; and the helm started meanwhile, if any ([`Desired::start_early`]).
pub struct Seen {
    pub target: crate::desired::target::Target,
    pub apis: ClusterApis,
    pub action: NextAction,
    pub early: Option<Early>,
}

/// What helm-controller's Helm sees of `cluster` when it renders `chart`: the server's version and APIs,
/// and `lookup` answered by the cluster (with the user's credentials) when the chart may call it.
pub fn cluster_view(cluster: &Cluster, apis: &ClusterApis, chart: &ChartDir, action: NextAction) -> ClusterView {
    let (is_upgrade, revision) = match action {
        NextAction::Install => (false, 1),
        NextAction::Upgrade { revision } => (true, revision),
    };
    ClusterView {
        kube_version: Some(apis.kube_version.clone()),
        api_versions: apis.api_versions.clone(),
        lookup: chart.may_use_lookup().then(|| cluster.helm_args()),
        is_upgrade,
        revision,
    }
}

/// What a chart sees when it is rendered without a cluster: the given `--kube-version` and
/// `--api-versions` (Helm's defaults when absent), `lookup` answering nothing, an install.
pub fn offline_view(kube_version: Option<String>, api_versions: Vec<String>) -> ClusterView {
    ClusterView { kube_version, api_versions, lookup: None, is_upgrade: false, revision: 1 }
}

/// Reads every `valuesFrom` source from the HelmRelease's namespace. `optional` only forgives a missing
/// object or key; anything else is an error that names the source.
pub async fn fetch_values_from(cluster: &Cluster, hr: &HelmRelease) -> Result<Vec<FetchedRef>> {
    let ns = hr.namespace();
    let mut out = Vec::new();
    for r in &hr.spec.values_from {
        let key = r.key();
        let found: Option<Option<String>> = match r.kind.as_str() {
            "ConfigMap" => {
                let api: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), ns);
                api.get_opt(&r.name)
                    .await
                    .map_err(|e| cluster.error(e))?
                    .map(|cm| cm.data.and_then(|mut d| d.remove(key)))
            }
            "Secret" => {
                let api: Api<Secret> = Api::namespaced(cluster.client.clone(), ns);
                match api.get_opt(&r.name).await.map_err(|e| cluster.error(e))? {
                    Some(s) => Some(match s.data.and_then(|mut d| d.remove(key)) {
                        Some(bytes) => Some(String::from_utf8(bytes.0).map_err(|_| Error::Invalid {
                            what: format!("valuesFrom Secret {ns}/{} key {key}", r.name),
                            reason: "not UTF-8 text".into(),
                        })?),
                        None => None,
                    }),
                    None => None,
                }
            }
            other => {
                return Err(Error::Invalid {
                    what: format!("valuesFrom {other}/{}", r.name),
                    reason: "kind must be ConfigMap or Secret".into(),
                });
            }
        };
        let data = match found {
            Some(Some(text)) => Some(text),
            Some(None) if r.optional => None,
            None if r.optional => None,
            Some(None) => {
                return Err(Error::Invalid {
                    what: format!("valuesFrom {} {ns}/{}", r.kind, r.name),
                    reason: format!("it has no key {key:?} (add it, or mark the reference optional)"),
                });
            }
            None => {
                return Err(Error::Invalid {
                    what: format!("valuesFrom {} {ns}/{}", r.kind, r.name),
                    reason: "it does not exist (create it, or mark the reference optional)".into(),
                });
            }
        };
        out.push(FetchedRef { reference: r.clone(), data });
    }
    Ok(out)
}

fn read_values_file(path: &Path, label: &str) -> Result<Values> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::Invalid {
        what: format!("values file {label}"),
        reason: format!("cannot read {}: {e}", path.display()),
    })?;
    crate::values::parse_values(&text, label).map_err(values_error)
}

/// Flux's composition over what was fetched, plus the user's -f/--set.
/// `literal`: whether helm-controller knows `valuesFrom[].literal` (1.6); before, the field is ignored.
/// `values_files`: the chart's `valuesFiles` read (see [`crate::source::values_files::read`]), which replace its
/// values.yaml when Some.
fn compose(
    hr: &HelmRelease,
    chart: &ChartDir,
    values_files: Option<Vec<(String, Values)>>,
    refs: Vec<FetchedRef>,
    user: &UserValues,
    literal: bool,
) -> Result<Composed> {
    let text =
        chart.default_values_text().map_err(|e| Error::Invalid { what: "chart".into(), reason: e.to_string() })?;
    let chart_defaults = crate::values::parse_values(&text, "chart values.yaml").map_err(values_error)?;
    let mut user_files = Vec::new();
    for f in &user.files {
        let label = f.display().to_string();
        user_files.push((label.clone(), read_values_file(f, &label)?));
    }
    let inputs = Inputs {
        namespace: hr.namespace().to_string(),
        chart_defaults,
        values_files,
        refs: refs
            .into_iter()
            .map(|r| RefData { literal: literal && r.reference.literal, reference: r.reference, data: r.data })
            .collect(),
        inline: hr.spec.values.clone(),
        user_files,
        user_sets: user.sets.clone(),
    };
    crate::values::compose(&inputs).map_err(values_error)
}

fn values_error(e: crate::values::ValuesError) -> Error {
    Error::Invalid { what: "values".into(), reason: e.to_string() }
}

/// Copies the chart to a private temporary directory with `values.yaml` replaced by `defaults` (JSON is
/// YAML), which is how source-controller packages a chart whose HelmChart lists valuesFiles.
fn chart_copy(chart: &ChartDir, defaults: Option<&Values>, version: Option<&str>) -> Result<tempfile::TempDir> {
    let dir = crate::source::chart::private_copy(chart.path())?;
    if let Some(defaults) = defaults {
        let text = serde_json::to_vec_pretty(defaults).map_err(std::io::Error::other)?;
        crate::render::postrender::write_private(&dir.path().join("values.yaml"), &text)?;
    }
    if let Some(version) = version {
        crate::source::chart::set_version(dir.path(), version)?;
    }
    Ok(dir)
}
