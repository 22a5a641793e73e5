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

/// `spec.chart`: a template from which Flux creates a HelmChart.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HelmChartTemplate {
    #[serde(default)]
    pub spec: HelmChartTemplateSpec,
    #[serde(flatten)]
    pub extra: Extra,
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

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DependencyReference {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
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
    #[serde(flatten)]
    pub extra: Extra,
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
    /// `<name>`, shortened like Flux over 53 characters ([`crate::release::release_name`]).
    pub fn release_name(&self) -> String {
        crate::release::release_name(
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

    /// The chart source as `Kind/namespace/name`, for tables.
    pub fn source(&self) -> String {
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
        if let Some(t) = &self.spec.chart {
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
