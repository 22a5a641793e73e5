//! Any Flux source-like object (HelmChart, OCIRepository, GitRepository, ExternalArtifact,
//! ArtifactGenerator, ...) read through the fields every Flux kind shares: `spec.suspend` and the status
//! fields of the reconcile protocol. The kind travels as the dynamic type, like `DynamicObject` with an
//! `ApiResource`, so one struct serves every kind in [`super::kind`] and the shared verbs apply to it.

use std::borrow::Cow;
use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use kube::core::DynamicResourceScope;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::condition::ReconcileStatus;
use super::kind::Kind;
use super::object::FluxObject;

type Extra = BTreeMap<String, Value>;

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FluxSource {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: SourceSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<SourceStatus>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceSpec {
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub suspend: bool,
    /// Everything kind-specific (a HelmChart's `sourceRef`, an ArtifactGenerator's `sources`, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceStatus {
    /// observedGeneration, lastHandledReconcileAt and conditions.
    #[serde(flatten)]
    pub reconcile: ReconcileStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<Artifact>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    #[serde(default)]
    pub revision: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Resource for FluxSource {
    type DynamicType = &'static Kind;
    type Scope = DynamicResourceScope;

    fn kind<'a>(dt: &'a &'static Kind) -> Cow<'a, str> {
        dt.kind.into()
    }
    fn group<'a>(dt: &'a &'static Kind) -> Cow<'a, str> {
        dt.group.into()
    }
    fn version<'a>(dt: &'a &'static Kind) -> Cow<'a, str> {
        dt.version.into()
    }
    fn plural<'a>(dt: &'a &'static Kind) -> Cow<'a, str> {
        dt.plural.into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl FluxObject for FluxSource {
    fn flux_kind(dt: &&'static Kind) -> &'static Kind {
        dt
    }
    fn suspended(&self) -> bool {
        self.spec.suspend
    }
    fn reconcile_status(&self) -> Option<&ReconcileStatus> {
        self.status.as_ref().map(|s| &s.reconcile)
    }
    fn revision(&self) -> String {
        self.status.as_ref().and_then(|s| s.artifact.as_ref()).map(|a| a.revision.clone()).unwrap_or_default()
    }
}
