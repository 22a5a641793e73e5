//! Learning a cluster's helm-controller version as a user with ordinary rights can, in order:
//! 1. the image tag of a helm-controller Deployment (listed cluster-wide by its Flux label, else read in
//!    `flux-system` and `cozy-fluxcd` by name), with its `--feature-gates`;
//! 2. the HelmRelease CRD: its `app.kubernetes.io/version` label (the Flux version, which names the
//!    helm-controller), else its schema (`postRenderStrategy` exists from v1.6.0, `force` is "ignored for
//!    server-side apply" from v1.5.4), which gives the oldest version it can be;
//! 3. else unknown, with what was tried.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::api::ListParams;

use super::known::{Controller, Found};
use super::version::Version;
use crate::cluster::Cluster;

/// The label Flux's install manifests give each controller's Deployment.
const COMPONENT_LABEL: &str = "app.kubernetes.io/component=helm-controller";
/// Where Flux (and Cozystack's operator) install the controllers.
const NAMESPACES: [&str; 2] = ["flux-system", "cozy-fluxcd"];
const CRD: &str = "helmreleases.helm.toolkit.fluxcd.io";

/// The cluster's helm-controller. Never fails: what cannot be read makes it unknown.
pub async fn detect(cluster: &Cluster) -> Controller {
    let mut tried = Vec::new();
    match deployments(cluster).await {
        Ok(list) => {
            if let Some(found) = list.iter().find_map(from_deployment) {
                return found;
            }
            tried.push(if list.is_empty() {
                "no helm-controller Deployment is readable".to_string()
            } else {
                "the helm-controller Deployment's image has no version tag".to_string()
            });
        }
        Err(e) => tried.push(format!("Deployments: {e}")),
    }
    match Api::<CustomResourceDefinition>::all(cluster.client.clone()).get(CRD).await {
        Ok(crd) => {
            if let Some(found) = from_crd(&crd) {
                return found;
            }
            tried.push("the HelmRelease CRD names no version".into());
        }
        Err(e) => tried.push(format!("the HelmRelease CRD: {}", short(&e))),
    }
    Controller { version: None, found: Found::Unknown { why: tried.join("; ") }, feature_gates: Vec::new() }
}

/// helm-controller Deployments: a cluster-wide list by label, else each usual namespace by name.
async fn deployments(cluster: &Cluster) -> Result<Vec<Deployment>, String> {
    let all = Api::<Deployment>::all(cluster.client.clone());
    match all.list(&ListParams::default().labels(COMPONENT_LABEL)).await {
        Ok(list) if !list.items.is_empty() => return Ok(list.items),
        Ok(_) => {}
        Err(e) if !is_forbidden(&e) => return Err(short(&e)),
        Err(_) => {}
    }
    let mut found = Vec::new();
    for ns in NAMESPACES {
        if let Ok(Some(d)) = Api::<Deployment>::namespaced(cluster.client.clone(), ns).get_opt("helm-controller").await
        {
            found.push(d);
        }
    }
    Ok(found)
}

fn is_forbidden(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 403)
}

fn short(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) if s.code == 403 => "forbidden".into(),
        kube::Error::Api(s) if s.code == 404 => "not found".into(),
        other => other.to_string(),
    }
}

/// The version and feature gates of a helm-controller Deployment's `manager` container (else its first).
pub(crate) fn from_deployment(d: &Deployment) -> Option<Controller> {
    let containers = &d.spec.as_ref()?.template.spec.as_ref()?.containers;
    let c = containers.iter().find(|c| c.name == "manager").or_else(|| containers.first())?;
    let image = c.image.clone()?;
    let version = image_version(&image)?;
    let deployment = format!(
        "{}/{}",
        d.metadata.namespace.as_deref().unwrap_or_default(),
        d.metadata.name.as_deref().unwrap_or_default()
    );
    let args = c.args.iter().flatten().chain(c.command.iter().flatten());
    Some(Controller { version: Some(version), found: Found::Image { deployment, image }, feature_gates: gates(args) })
}

/// `ghcr.io/fluxcd/helm-controller:v1.5.0` (also `@sha256:…` after the tag, and a registry port).
pub(crate) fn image_version(image: &str) -> Option<Version> {
    let name = image.split('@').next()?;
    let last = name.rsplit('/').next()?;
    let (_, tag) = last.split_once(':')?;
    Version::parse(tag)
}

/// `--feature-gates=A=true,B=false` (also as two arguments).
fn gates<'a>(args: impl Iterator<Item = &'a String>) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut next_is_value = false;
    for arg in args {
        let value = if next_is_value {
            next_is_value = false;
            Some(arg.as_str())
        } else if arg == "--feature-gates" {
            next_is_value = true;
            None
        } else {
            arg.strip_prefix("--feature-gates=")
        };
        for gate in value.into_iter().flat_map(|v| v.split(',')) {
            if let Some((name, on)) = gate.split_once('=') {
                out.push((name.trim().to_string(), on.trim().eq_ignore_ascii_case("true")));
            }
        }
    }
    out
}

/// From the HelmRelease CRD: the Flux version label, else what its schema allows.
pub(crate) fn from_crd(crd: &CustomResourceDefinition) -> Option<Controller> {
    let labels = crd.metadata.labels.as_ref();
    if let Some(flux) = labels.and_then(|l| l.get("app.kubernetes.io/version"))
        && let Some(version) = Version::parse(flux).as_ref().and_then(super::version::for_flux)
    {
        return Some(Controller {
            version: Some(version),
            found: Found::FluxLabel { flux: flux.clone() },
            feature_gates: Vec::new(),
        });
    }
    let schema = serde_json::to_value(&crd.spec.versions).ok()?;
    let v2 = schema.as_array()?.iter().find(|v| v["name"] == "v2")?;
    let spec = &v2["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
    let version = if spec.get("postRenderStrategy").is_some() {
        Version::new(1, 6, 0)
    } else if spec["upgrade"]["properties"]["force"]["description"]
        .as_str()
        .is_some_and(|d| d.contains("ignored for server-side apply"))
    {
        Version::new(1, 5, 4)
    } else if spec.is_object() {
        Version::new(1, 5, 0)
    } else {
        return None;
    };
    Some(Controller { version: Some(version), found: Found::CrdSchema, feature_gates: Vec::new() })
}

/// For tests: a CRD value.
#[cfg(test)]
fn crd(v: serde_json::Value) -> CustomResourceDefinition {
    serde_json::from_value(v).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn image_tags() {
        assert_eq!(image_version("ghcr.io/fluxcd/helm-controller:v1.5.0"), Some(Version::new(1, 5, 0)));
        assert_eq!(
            image_version("registry.local:5000/fluxcd/helm-controller:v1.6.2@sha256:0123"),
            Some(Version::new(1, 6, 2))
        );
        assert_eq!(image_version("registry.local:5000/helm-controller"), None);
        assert_eq!(image_version("ghcr.io/fluxcd/helm-controller:latest"), None);
    }

    #[test]
    fn a_deployment_gives_version_and_gates() {
        let d: Deployment = serde_json::from_value(json!({
            "metadata": {"name": "helm-controller", "namespace": "cozy-fluxcd"},
            "spec": {"selector": {}, "template": {"spec": {"containers": [
                {"name": "sidecar", "image": "busybox:1.36"},
                {"name": "manager", "image": "ghcr.io/fluxcd/helm-controller:v1.5.0",
                 "args": ["--watch-all-namespaces", "--feature-gates=UseHelm3Defaults=true,OOMWatch=false"]}
            ]}}}
        }))
        .unwrap();
        let c = from_deployment(&d).unwrap();
        assert_eq!(c.version, Some(Version::new(1, 5, 0)));
        assert!(c.gate("UseHelm3Defaults") && !c.gate("OOMWatch"));
        assert!(c.describe().contains("Deployment cozy-fluxcd/helm-controller"), "{}", c.describe());
    }

    #[test]
    fn the_crd_label_then_its_schema() {
        let labelled = crd(json!({
            "metadata": {"name": CRD, "labels": {"app.kubernetes.io/version": "v2.8.0"}},
            "spec": {"group": "helm.toolkit.fluxcd.io", "names": {"kind": "HelmRelease", "plural": "helmreleases"},
                     "scope": "Namespaced", "versions": []}
        }));
        assert_eq!(from_crd(&labelled).unwrap().version, Some(Version::new(1, 5, 0)));
        let schema = |spec: serde_json::Value| {
            crd(json!({
                "metadata": {"name": CRD},
                "spec": {"group": "helm.toolkit.fluxcd.io", "names": {"kind": "HelmRelease", "plural": "helmreleases"},
                         "scope": "Namespaced", "versions": [{"name": "v2", "served": true, "storage": true,
                         "schema": {"openAPIV3Schema": {"properties": {"spec": {"properties": spec}}}}}]}
            }))
        };
        let v16 = schema(json!({"postRenderStrategy": {"type": "string"}}));
        assert_eq!(from_crd(&v16).unwrap().version, Some(Version::new(1, 6, 0)));
        assert_eq!(from_crd(&v16).unwrap().found, Found::CrdSchema);
        let v154 = schema(
            json!({"upgrade": {"properties": {"force": {"description": "... ignored for server-side apply."}}}}),
        );
        assert_eq!(from_crd(&v154).unwrap().version, Some(Version::new(1, 5, 4)));
        assert_eq!(from_crd(&schema(json!({"chart": {}}))).unwrap().version, Some(Version::new(1, 5, 0)));
    }
}
