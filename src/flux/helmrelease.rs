//! Typed `helm.toolkit.fluxcd.io/v2` HelmRelease: the fields cozyhr reads, with everything else kept in
//! `extra` maps so that an object read and written back loses nothing.

use std::borrow::Cow;
use std::collections::BTreeMap;

use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::condition::ReconcileStatus;
use super::kind::{self, Kind};
use super::object::FluxObject;

pub const GROUP: &str = "helm.toolkit.fluxcd.io";
pub const VERSION: &str = "v2";
pub const KIND: &str = "HelmRelease";
pub const PLURAL: &str = "helmreleases";

type Extra = BTreeMap<String, Value>;

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HelmRelease {
    #[serde(default = "api_version")]
    pub api_version: String,
    #[serde(default = "kind")]
    pub kind: String,
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: HelmReleaseSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<HelmReleaseStatus>,
}

fn api_version() -> String {
    format!("{GROUP}/{VERSION}")
}
fn kind() -> String {
    KIND.to_string()
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HelmReleaseSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart: Option<HelmChartTemplate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart_ref: Option<CrossNamespaceSourceReference>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_namespace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_namespace: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub suspend: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<DependencyReference>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values_from: Vec<ValuesReference>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_renderers: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub common_metadata: Option<CommonMetadata>,
    /// `spec.kubeConfig`: the release lives in another cluster, reached with this kubeconfig.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kube_config: Option<KubeConfigReference>,
    /// `spec.serviceAccountName`: helm-controller acts as this service account of the HelmRelease's
    /// namespace (in the release's own cluster).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<String>,
    /// `spec.timeout`: every action's timeout unless the action names its own (Go duration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    /// `spec.maxHistory`: the revisions Helm keeps (default 5, 0 for all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_history: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install: Option<super::spec::Install>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade: Option<super::spec::Upgrade>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<super::spec::Test>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback: Option<super::spec::Rollback>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uninstall: Option<super::spec::Uninstall>,
    /// `spec.postRenderStrategy` (v1.6): `combined`, `separate` or `nohooks`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_render_strategy: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl super::spec::Actions for HelmReleaseSpec {
    fn install_spec(&self) -> Option<&super::spec::Install> {
        self.install.as_ref()
    }
    fn upgrade_spec(&self) -> Option<&super::spec::Upgrade> {
        self.upgrade.as_ref()
    }
}

impl HelmReleaseSpec {
    /// `spec.maxHistory`, defaulted.
    pub fn max_history(&self) -> i64 {
        self.max_history.unwrap_or(super::spec::DEFAULT_MAX_HISTORY)
    }

    /// Whether helm-controller tests the release after an install or upgrade.
    pub fn tests_enabled(&self) -> bool {
        self.test.as_ref().is_some_and(|t| t.enable)
    }
}

/// `spec.kubeConfig`: a Secret holding a kubeconfig, or (Flux 2.6+) a ConfigMap naming a cloud
/// provider's workload identity.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KubeConfigReference {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretKeyReference>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map_ref: Option<Value>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// A key of a Secret in the HelmRelease's namespace; an empty or absent key means the consumer's default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretKeyReference {
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// `spec.chart`: a template from which helm-controller makes the chart's source, a HelmChart, or (Flux
/// 2.10, `kind: OCIRepository`) an OCIRepository whose spec (`url`, `ref`, `layerSelector`, `secretRef`…)
/// is inlined in `spec.chart.spec`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HelmChartTemplate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default)]
    pub spec: HelmChartTemplateSpec,
    #[serde(flatten)]
    pub extra: Extra,
}

impl HelmChartTemplate {
    /// Whether helm-controller makes an OCIRepository of this template (`kind: OCIRepository`, Flux
    /// 2.10) rather than a HelmChart.
    pub fn makes_oci_repository(&self) -> bool {
        self.kind.as_deref() == Some(super::kind::OCI_REPOSITORY.kind)
    }

    /// The OCIRepository's URL this template names, when it makes one.
    pub fn oci_url(&self) -> Option<&str> {
        self.makes_oci_repository().then(|| self.spec.extra.get("url").and_then(Value::as_str)).flatten()
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HelmChartTemplateSpec {
    #[serde(default)]
    pub chart: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default)]
    pub source_ref: CrossNamespaceSourceReference,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values_files: Vec<String>,
    /// Skip `valuesFiles` that do not exist (source-controller's `os.IsNotExist`; anything else that is
    /// not a regular file still fails).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_missing_values_files: Option<bool>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CrossNamespaceSourceReference {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// One `spec.dependsOn` entry. helm-controller 1.6 reads `name`, `namespace` and `readyExpr`, and the
/// entry always names a HelmRelease. Flux 2.10's proposal (helm-controller PR #1480) adds `apiVersion`,
/// `kind` and `ready`, so that an entry may name any object; fluxcd/pkg PR #1229, on which the controllers
/// are to build, later drops `ready` for `readyExpr: "true"`. All of them are read here; anything else is
/// kept in `extra`, so an object read and written back loses nothing.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DependencyReference {
    /// The referent's apiVersion; none means `helm.toolkit.fluxcd.io/v2` when the kind is HelmRelease.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// The referent's kind; none means HelmRelease.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    pub name: String,
    /// The referent's namespace: for a HelmRelease none means the dependent's; for any other object it is
    /// not defaulted (as proposed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// PR #1480: `false` asks only that the object exists (PR #1229 says the same with `readyExpr: "true"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
    /// A CEL expression over `self` (the dependent) and `dep` (the object named) that decides readiness
    /// instead of the built-in rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_expr: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl DependencyReference {
    /// The kind named: `kind`, else HelmRelease.
    pub fn kind(&self) -> &str {
        self.kind.as_deref().filter(|k| !k.is_empty()).unwrap_or(KIND)
    }

    /// Whether the entry names a HelmRelease: its kind is HelmRelease (or not given) and its apiVersion is
    /// of group `helm.toolkit.fluxcd.io` (or not given). Only such entries are edges between releases;
    /// any other object is a leaf that is judged, never followed further.
    pub fn names_helm_release(&self) -> bool {
        let group = match self.api_version.as_deref().filter(|v| !v.is_empty()) {
            Some(v) => v.rsplit_once('/').map_or("", |(group, _)| group),
            None => GROUP,
        };
        self.kind() == KIND && group == GROUP
    }

    /// The apiVersion named: `apiVersion`, else, for a HelmRelease, `helm.toolkit.fluxcd.io/v2`; empty
    /// for another kind named without one (nothing defaults it).
    pub fn api_version(&self) -> String {
        match self.api_version.as_deref().filter(|v| !v.is_empty()) {
            Some(v) => v.to_string(),
            None if self.names_helm_release() => api_version(),
            None => String::new(),
        }
    }

    /// The namespace the entry points into, seen from a dependent in `dependent`: its own, else, for a
    /// HelmRelease only, the dependent's; None for another object named without one.
    pub fn namespace_from<'a>(&'a self, dependent: &'a str) -> Option<&'a str> {
        match self.namespace.as_deref().filter(|n| !n.is_empty()) {
            Some(ns) => Some(ns),
            None if self.names_helm_release() => Some(dependent),
            None => None,
        }
    }

    /// The entry's `readyExpr`, when it has one.
    pub fn ready_expr(&self) -> Option<&str> {
        self.ready_expr.as_deref().filter(|s| !s.is_empty())
    }

    /// Whether only the object's existence is checked: `ready: false` (PR #1480, where readyExpr is then
    /// not evaluated either). PR #1229's spelling, `readyExpr: "true"`, needs no rule of its own: the
    /// expression is true for any object that exists.
    pub fn existence_only(&self) -> bool {
        self.ready == Some(false)
    }
}

/// One `spec.valuesFrom` entry.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ValuesReference {
    pub kind: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_path: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub optional: bool,
    /// helm-controller 1.6: the value at `targetPath` is written verbatim, as a string.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub literal: bool,
}

impl ValuesReference {
    /// `valuesKey` defaults to `values.yaml`.
    pub fn key(&self) -> &str {
        self.values_key.as_deref().filter(|k| !k.is_empty()).unwrap_or("values.yaml")
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommonMetadata {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HelmReleaseStatus {
    /// observedGeneration, lastHandledReconcileAt and conditions.
    #[serde(flatten)]
    pub reconcile: ReconcileStatus,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Snapshot>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helm_chart: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_namespace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_attempted_generation: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_attempted_revision: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_attempted_config_digest: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_attempted_release_action: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failures: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install_failures: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade_failures: Option<i64>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// The reason `helm cozy delete` writes on Ready and Released: helm-controller's word for an uninstall
/// that succeeded.
pub const DELETED_REASON: &str = "UninstallSucceeded";

/// One entry of `status.history`: what helm-controller recorded about a Helm release revision.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    #[serde(default)]
    pub digest: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub namespace: String,
    #[serde(default)]
    pub version: i64,
    #[serde(default)]
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    #[serde(default)]
    pub chart_name: String,
    #[serde(default)]
    pub chart_version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_version: Option<String>,
    #[serde(default)]
    pub config_digest: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_deployed: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_deployed: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted: Option<String>,
    /// The chart's OCI digest (an OCIRepository or ExternalArtifact revision), part of `digest`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oci_digest: Option<String>,
    /// The release's test hooks as the last test run left them (`spec.test`), by hook name; `{}` when the
    /// tests ran and none was selected; absent when they never ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_hooks: Option<BTreeMap<String, TestHookStatus>>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// One test hook's last run, in a snapshot's `testHooks`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TestHookStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_started: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_completed: Option<String>,
    /// `Running`, `Succeeded`, `Failed` or `Unknown`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
}

impl Snapshot {
    /// `HasBeenTested`, by the rule ([`Tested`]) of the helm-controller version.
    pub fn has_been_tested(&self, rule: Tested) -> bool {
        let Some(hooks) = &self.test_hooks else { return false };
        match rule {
            Tested::AnyRecord => true,
            Tested::Finished => {
                let phase = |h: &TestHookStatus| h.phase.as_deref().unwrap_or_default().to_string();
                hooks.is_empty()
                    || hooks.values().any(|h| phase(h) == "Failed")
                    || hooks.values().all(|h| phase(h) == "Succeeded")
            }
        }
    }

    /// `HasTestInPhase`: a test hook of the snapshot last ended in `phase`.
    pub fn has_test_in_phase(&self, phase: &str) -> bool {
        self.test_hooks.as_ref().is_some_and(|h| h.values().any(|t| t.phase.as_deref() == Some(phase)))
    }

    /// `FullReleaseName`: `namespace/name.vN`, as helm-controller's messages name a revision.
    pub fn full_name(&self) -> String {
        format!("{}/{}.v{}", self.namespace, self.name, self.version)
    }

    /// `VersionedChartName`: `chart@version`.
    pub fn versioned_chart(&self) -> String {
        format!("{}@{}", self.chart_name, self.chart_version)
    }
}

impl Resource for HelmRelease {
    type DynamicType = ();
    type Scope = NamespaceResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        KIND.into()
    }
    fn group(_: &()) -> Cow<'_, str> {
        GROUP.into()
    }
    fn version(_: &()) -> Cow<'_, str> {
        VERSION.into()
    }
    fn plural(_: &()) -> Cow<'_, str> {
        PLURAL.into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl HelmRelease {
    /// The namespace of the HelmRelease object itself.
    pub fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or("default")
    }

    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// Where the release's objects go: `targetNamespace`, else the HelmRelease's namespace.
    pub fn release_namespace(&self) -> &str {
        self.spec.target_namespace.as_deref().filter(|s| !s.is_empty()).unwrap_or_else(|| self.namespace())
    }

    /// The Helm release helm-controller makes of it: `releaseName`, else `<targetNamespace>-<name>`, else
    /// `<name>`, shortened like Flux over 53 characters ([`crate::flux::release_name::release_name`]).
    pub fn release_name(&self) -> String {
        crate::flux::release_name::release_name(
            self.name(),
            self.spec.target_namespace.as_deref(),
            self.spec.release_name.as_deref(),
        )
    }

    /// Where Helm keeps its release Secrets: `storageNamespace`, else the HelmRelease's namespace.
    /// Where the release is installed when not into the cluster the HelmRelease lives in (`spec.kubeConfig`):
    /// `secret/NAME` (the Secret with the kubeconfig), `configmap/NAME` (a cloud identity); None for this
    /// cluster.
    pub fn target_cluster(&self) -> Option<String> {
        let kc = self.spec.kube_config.as_ref()?;
        match (&kc.secret_ref, &kc.config_map_ref) {
            (Some(secret), _) => Some(format!("secret/{}", secret.name)),
            (None, Some(cm)) => {
                Some(format!("configmap/{}", cm.get("name").and_then(Value::as_str).unwrap_or_default()))
            }
            (None, None) => Some("kubeConfig".into()),
        }
    }

    pub fn storage_namespace(&self) -> &str {
        self.spec.storage_namespace.as_deref().filter(|s| !s.is_empty()).unwrap_or_else(|| self.namespace())
    }

    /// The namespace a dependsOn entry that names a HelmRelease points into: its own, else this
    /// release's (as helm-controller reads it).
    pub fn dependency_namespace<'a>(&'a self, dep: &'a DependencyReference) -> &'a str {
        dep.namespace.as_deref().filter(|s| !s.is_empty()).unwrap_or_else(|| self.namespace())
    }

    /// The chart source as `Kind/namespace/name`, for tables.
    pub fn source(&self) -> String {
        if self.spec.chart_ref.is_none()
            && let Some(url) = self.spec.chart.as_ref().and_then(HelmChartTemplate::oci_url)
        {
            let ns = self.namespace();
            return format!("OCIRepository/{ns}/{ns}-{} ({url})", self.name());
        }
        let (r, chart) = match (&self.spec.chart_ref, &self.spec.chart) {
            (Some(r), _) => (r, None),
            (None, Some(t)) => (&t.spec.source_ref, Some(t.spec.chart.as_str())),
            (None, None) => return String::new(),
        };
        let ns = r.namespace.as_deref().unwrap_or_else(|| self.namespace());
        match chart {
            Some(c) => format!("{}/{}/{} ({c})", r.kind, ns, r.name),
            None => format!("{}/{}/{}", r.kind, ns, r.name),
        }
    }

    /// The chart name as a table shows it: the template's chart, else the latest snapshot's chart name.
    pub fn chart_name(&self) -> String {
        if let Some(t) = self.spec.chart.as_ref().filter(|t| !t.makes_oci_repository()) {
            return t.spec.chart.clone();
        }
        self.latest_snapshot().map(|s| s.chart_name.clone()).unwrap_or_default()
    }

    /// Whether this HelmRelease deploys the chart named `chart`: by the chart name of the release
    /// helm-controller last made, else, where none exists yet, by the chart its `spec.chart` asks for (a
    /// `chartRef` never installed deploys what only its source's artifact says, so it is not counted).
    pub fn deploys(&self, chart: &str) -> bool {
        match self.latest_snapshot() {
            Some(s) if !s.chart_name.is_empty() => s.chart_name == chart,
            _ => self.spec.chart.as_ref().is_some_and(|t| t.spec.chart == chart),
        }
    }

    /// Whether the status says `helm cozy delete` uninstalled the release and nothing installed it since:
    /// Ready and Released both False with [`DELETED_REASON`] (helm-controller's own uninstall, a
    /// remediation, leaves Released on the failure that caused it).
    pub fn deleted_by_delete(&self) -> bool {
        let Some(status) = &self.status else { return false };
        let said = |type_: &str| {
            crate::flux::condition::find(&status.reconcile.conditions, type_)
                .is_some_and(|c| c.status == "False" && c.reason == DELETED_REASON)
        };
        said(crate::flux::condition::READY) && said("Released")
    }

    pub fn latest_snapshot(&self) -> Option<&Snapshot> {
        self.status.as_ref().and_then(|s| s.history.first())
    }
}

impl FluxObject for HelmRelease {
    fn deploys_chart(&self, chart: &str) -> bool {
        self.deploys(chart)
    }

    fn flux_kind(_: &()) -> &'static Kind {
        &kind::HELM_RELEASE
    }
    fn suspended(&self) -> bool {
        self.spec.suspend
    }
    fn reconcile_status(&self) -> Option<&ReconcileStatus> {
        self.status.as_ref().map(|s| &s.reconcile)
    }
    fn last_attempted_generation(&self) -> Option<i64> {
        self.status.as_ref().and_then(|s| s.last_attempted_generation)
    }
    fn revision(&self) -> String {
        if let Some(s) = self.latest_snapshot() {
            return s.chart_version.clone();
        }
        self.status.as_ref().and_then(|s| s.last_attempted_revision.clone()).unwrap_or_default()
    }
}

/// When a release counts as tested (`Snapshot.HasBeenTested`, which decides whether a release in sync
/// is tested again: `internal/reconcile/state.go`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tested {
    /// v1.5.0–v1.6.2: as soon as any test hook is recorded in the snapshot (`testHooks` set), whatever
    /// its phase; every test hook of the release is recorded, `spec.test.filters` or not.
    AnyRecord,
    /// v1.6.3 and later: the test action ran with no test hook selected (an empty `testHooks`), or a
    /// selected hook failed, or every selected hook succeeded; hooks `spec.test.filters` leaves out are
    /// not recorded.
    Finished,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(value: Value) -> DependencyReference {
        serde_json::from_value(value).expect("a dependsOn entry")
    }

    #[test]
    fn a_flux_2_10_depends_on_entry_reads_and_writes_back_whole() {
        let written = json!({
            "apiVersion": "cert-manager.io/v1", "kind": "Certificate", "name": "web-tls", "namespace": "apps",
            "ready": true, "readyExpr": "dep.status.conditions.exists(c, c.type == 'Ready')",
            "someFutureField": {"kept": [1, 2]}
        });
        let e = entry(written.clone());
        assert_eq!(
            (e.api_version.as_deref(), e.kind.as_deref(), e.name.as_str(), e.namespace.as_deref(), e.ready),
            (Some("cert-manager.io/v1"), Some("Certificate"), "web-tls", Some("apps"), Some(true))
        );
        assert_eq!(e.ready_expr(), Some("dep.status.conditions.exists(c, c.type == 'Ready')"));
        assert_eq!(e.extra.keys().collect::<Vec<_>>(), ["someFutureField"]);
        assert_eq!(serde_json::to_value(&e).expect("encodes"), written);
        // helm-controller 1.6's entry writes back as it was read: nothing added.
        let old = json!({"name": "db", "readyExpr": "true"});
        assert_eq!(serde_json::to_value(entry(old.clone())).expect("encodes"), old);
        // Inside a whole HelmRelease, read from YAML as a release file is.
        let hr: HelmRelease = serde_saphyr::from_str(
            "metadata: {name: web, namespace: apps}\nspec:\n  dependsOn:\n  - name: db\n  - apiVersion: v1\n    kind: ConfigMap\n    name: settings\n    namespace: apps\n    ready: false\n",
        )
        .expect("a HelmRelease");
        assert_eq!(hr.spec.depends_on.len(), 2);
        assert!(hr.spec.depends_on[1].existence_only() && !hr.spec.depends_on[1].names_helm_release());
    }

    #[test]
    fn an_entry_names_a_helm_release_by_kind_and_group_defaulted_as_proposed() {
        let cases = [
            (json!({"name": "db"}), true),
            (json!({"name": "db", "kind": "HelmRelease"}), true),
            (json!({"name": "db", "kind": "", "apiVersion": ""}), true),
            (json!({"name": "db", "apiVersion": "helm.toolkit.fluxcd.io/v2"}), true),
            (json!({"name": "db", "kind": "HelmRelease", "apiVersion": "helm.toolkit.fluxcd.io/v2beta2"}), true),
            (json!({"name": "db", "kind": "ConfigMap", "apiVersion": "v1"}), false),
            (json!({"name": "db", "kind": "ConfigMap"}), false),
            // Another group's HelmRelease, or the kind defaulted in another group: not Flux's.
            (json!({"name": "db", "kind": "HelmRelease", "apiVersion": "example.com/v1"}), false),
            (json!({"name": "db", "apiVersion": "v1"}), false),
        ];
        for (value, expected) in cases {
            assert_eq!(entry(value.clone()).names_helm_release(), expected, "{value}");
        }
        // apiVersion and namespace default for a HelmRelease only.
        let release = entry(json!({"name": "db"}));
        assert_eq!(
            (release.api_version(), release.kind(), release.namespace_from("apps")),
            ("helm.toolkit.fluxcd.io/v2".to_string(), "HelmRelease", Some("apps"))
        );
        let object = entry(json!({"name": "settings", "kind": "ConfigMap"}));
        assert_eq!((object.api_version(), object.namespace_from("apps")), (String::new(), None));
        let elsewhere = entry(json!({"name": "settings", "kind": "ConfigMap", "apiVersion": "v1", "namespace": "x"}));
        assert_eq!((elsewhere.api_version(), elsewhere.namespace_from("apps")), ("v1".to_string(), Some("x")));
        // ready: false asks for existence alone; ready: true or none does not.
        assert!(entry(json!({"name": "a", "ready": false})).existence_only());
        assert!(!entry(json!({"name": "a", "ready": true})).existence_only());
        assert!(!entry(json!({"name": "a", "readyExpr": "true"})).existence_only());
        assert_eq!(entry(json!({"name": "a", "readyExpr": ""})).ready_expr(), None);
    }
}
