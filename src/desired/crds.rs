//! A chart's CRDs as helm-controller handles them (internal/action/crds.go): the objects of the `crds/`
//! directories of the chart and of its enabled subcharts (conditions and tags decide, as Helm decides;
//! helm cozy lets Helm select them with `helm template --include-crds`) are applied by helm-controller
//! itself before Helm runs, and Helm is told to skip them.
//!
//! - The policy is `spec.install.crds` for an install, `spec.upgrade.crds` for an upgrade: `Skip`,
//!   `Create` (the default for both) or `CreateReplace`.
//! - `Create` applied server-side is a server-side apply, which updates a CRD that exists; applied
//!   client-side it creates what is missing and leaves the rest. `CreateReplace` updates every CRD
//!   (server-side apply, else a replace).
//! - Each CRD gets the HelmRelease's origin labels, is applied as helm-controller's field manager with
//!   conflicts forced when server-side, and is waited for until Established.
//! - Non-CRD objects in `crds/` are not applied (helm-controller v1.5.5 and later warn and ignore them;
//!   v1.5.0–v1.5.4 create them as they create the CRDs, which [`to_apply`] follows); a CRD is never
//!   deleted; every object of those files is listed in the inventory, after the release's own.
//!
//! The method (server- or client-side) is helm-controller's ([`crate::desired::apply_method`]), whatever the local
//! Helm is.

use std::time::Duration;

use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::runtime::wait::await_condition;
use serde_json::{Value, json};

use crate::cluster::Cluster;
use crate::cluster::live::LiveObjects;
use crate::cluster::manifests::ObjectId;
use crate::desired::apply_method::ApplyMethod;
use crate::flux::HelmRelease;
use crate::support::error::{Error, Result};

/// What helm-controller does with the chart's CRDs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    Skip,
    Create,
    CreateReplace,
}

/// The policy for the next action on `hr`'s release (an upgrade when `installed`); an unknown value is
/// refused as helm-controller refuses it.
pub fn policy(hr: &HelmRelease, installed: bool) -> Result<Policy> {
    let section = if installed { "upgrade" } else { "install" };
    let crds = if installed {
        hr.spec.upgrade.as_ref().and_then(|u| u.crds.as_deref())
    } else {
        hr.spec.install.as_ref().and_then(|i| i.crds.as_deref())
    };
    match crds.unwrap_or("") {
        "" | "Create" => Ok(Policy::Create),
        "Skip" => Ok(Policy::Skip),
        "CreateReplace" => Ok(Policy::CreateReplace),
        other => Err(Error::Invalid {
            what: format!("spec.{section}.crds of helmrelease {}/{}", hr.namespace(), hr.name()),
            reason: format!("{other:?} is not a CRD policy: use Skip, Create or CreateReplace"),
        }),
    }
}

const CRD_GROUP: &str = "apiextensions.k8s.io";
const CRD_KIND: &str = "CustomResourceDefinition";

/// How long helm-controller waits for applied CRDs to be Established.
const ESTABLISHED_TIMEOUT: Duration = Duration::from_secs(60);

/// Whether `# Source: PATH` names a file of a chart's `crds/` directory (`chart/crds/…`,
/// `chart/charts/sub/crds/…`), as `--include-crds` prints them.
fn is_crd_source(path: &str) -> bool {
    path.contains("/crds/") && !path.contains("/templates/")
}

/// Splits `helm template --include-crds` output into the documents of the `crds/` files (which Helm
/// prints first, each file after one `# Source:` line, unrendered) and the rest, unchanged.
pub fn split(output: &str) -> (Vec<String>, String) {
    let mut cut = None;
    let mut offset = 0;
    let mut previous_was_separator = false;
    let mut previous_start = 0;
    let mut saw_crds = false;
    for line in output.split_inclusive('\n') {
        let trimmed = line.trim_end();
        if let Some(path) = trimmed.strip_prefix("# Source: ") {
            if !is_crd_source(path) {
                // The documents from this one's separator on are the templates'.
                cut = Some(if previous_was_separator { previous_start } else { offset });
                break;
            }
            saw_crds = true;
        }
        previous_was_separator = trimmed == "---";
        previous_start = offset;
        offset += line.len();
    }
    if !saw_crds {
        return (Vec::new(), output.to_string());
    }
    let cut = cut.unwrap_or(output.len());
    let mut documents = Vec::new();
    let mut current = String::new();
    for line in output[..cut].split_inclusive('\n') {
        if line.trim_end() == "---" {
            documents.push(std::mem::take(&mut current));
        } else {
            current.push_str(line);
        }
    }
    documents.push(current);
    // A document of comments and blank lines only (the headers of an empty file) holds no object.
    documents.retain(|d| d.lines().any(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#')));
    (documents, output[cut..].to_string())
}

/// The objects of the `crds/` documents, parsed.
pub fn objects(documents: &[String]) -> Result<Vec<Value>> {
    let mut out = Vec::new();
    for d in documents {
        let manifests = crate::cluster::manifests::parse_manifests(d).map_err(|e| Error::Invalid {
            what: "a CustomResourceDefinition of the chart's crds/ directory".into(),
            reason: e.to_string(),
        })?;
        out.extend(manifests.into_iter().map(|m| m.object));
    }
    Ok(out)
}

fn is_crd(obj: &Value) -> bool {
    let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    api_version.split('/').next() == Some(CRD_GROUP) && obj.get("kind").and_then(Value::as_str) == Some(CRD_KIND)
}

fn name_of(obj: &Value) -> &str {
    obj.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default()
}

/// The CRDs of `objects` (and the other objects too, with `non_crds`: helm-controller v1.5.0–v1.5.4
/// create them alike), as helm-controller applies them: with the HelmRelease's origin labels.
pub fn to_apply(objects: &[Value], hr: &HelmRelease, non_crds: bool) -> Vec<Value> {
    objects
        .iter()
        .filter(|o| non_crds || is_crd(o))
        .map(|o| {
            let mut o = o.clone();
            if let Some(meta) = o.get_mut("metadata").and_then(Value::as_object_mut) {
                let labels = meta.entry("labels").or_insert_with(|| json!({}));
                if let Some(labels) = labels.as_object_mut() {
                    labels.insert("helm.toolkit.fluxcd.io/name".into(), hr.name().into());
                    labels.insert("helm.toolkit.fluxcd.io/namespace".into(), hr.namespace().into());
                }
            }
            o
        })
        .collect()
}

/// The objects of `crds/` that are not CRDs, which helm-controller ignores with a warning.
pub fn ignored(objects: &[Value]) -> Vec<String> {
    objects
        .iter()
        .filter(|o| !is_crd(o))
        .map(|o| ObjectId::from_object(o).map(|id| id.to_string()).unwrap_or_default())
        .collect()
}

/// Applies `objects` (from [`to_apply`]) to the cluster of `live` by `policy` and `method`, and waits
/// until each CRD applied is Established. A namespaced object that names no namespace goes to
/// `release_namespace`, as Helm's client puts it. Returns how many were applied.
pub async fn apply(
    live: &LiveObjects<'_>,
    objects: &[Value],
    policy: Policy,
    method: ApplyMethod,
    release_namespace: &str,
) -> Result<usize> {
    if policy == Policy::Skip || objects.is_empty() {
        return Ok(0);
    }
    let crd_api: Api<DynamicObject> = Api::all_with(live.cluster().client.clone(), &crd_resource());
    let mut applied = Vec::new();
    let mut count = 0;
    for object in objects {
        if apply_one(live, &crd_api, object, policy, method, release_namespace).await? {
            count += 1;
            if is_crd(object) {
                applied.push(name_of(object).to_string());
            }
        }
    }
    wait_established(live.cluster(), &applied).await?;
    Ok(count)
}

/// Applies one object and says whether it was written (`Create` client-side leaves one that exists).
/// The API server's refusal (400, 422) names the object, since the chart must change; any other error
/// is the cluster's.
async fn apply_one(
    live: &LiveObjects<'_>,
    crd_api: &Api<DynamicObject>,
    object: &Value,
    policy: Policy,
    method: ApplyMethod,
    release_namespace: &str,
) -> Result<bool> {
    let (crd, name) = (is_crd(object), name_of(object));
    let (api, object) = placed(live, crd_api, object, crd, release_namespace)?;
    let what = || match ObjectId::from_object(&object) {
        Ok(id) if !crd => id.to_string(),
        _ => format!("CustomResourceDefinition {name}"),
    };
    let typed: DynamicObject =
        serde_json::from_value(object.clone()).map_err(|e| Error::Invalid { what: what(), reason: e.to_string() })?;
    match write(&api, name, &object, &typed, policy, method).await {
        Ok(written) => Ok(written),
        Err(kube::Error::Api(s)) if s.code == 422 || s.code == 400 => {
            Err(Error::Invalid { what: what(), reason: format!("the API server rejects it: {}", s.message) })
        }
        Err(e) => Err(live.cluster().error(e)),
    }
}

/// The API to apply `object` with, and the object as sent: a CRD (`crd`) goes to the CRD API as it is;
/// another object to its kind's API, in `release_namespace` when it is namespaced and names none, as
/// Helm's client puts it.
fn placed(
    live: &LiveObjects<'_>,
    crd_api: &Api<DynamicObject>,
    object: &Value,
    crd: bool,
    release_namespace: &str,
) -> Result<(Api<DynamicObject>, Value)> {
    if crd {
        return Ok((crd_api.clone(), object.clone()));
    }
    let mut object = object.clone();
    if live.resource(&object)?.1 && object.pointer("/metadata/namespace").is_none() {
        object["metadata"]["namespace"] = release_namespace.into();
    }
    Ok((live.api_for(&object)?, object))
}

/// Writes one object as helm-controller does, and says whether it was written: server-side, an apply as
/// helm-controller's field manager with conflicts forced (which updates what exists, whatever the
/// policy); client-side, `Create` creates it and leaves one that exists as it is, `CreateReplace`
/// replaces one that exists (at its resourceVersion) and creates one that does not.
async fn write(
    api: &Api<DynamicObject>,
    name: &str,
    object: &Value,
    typed: &DynamicObject,
    policy: Policy,
    method: ApplyMethod,
) -> kube::Result<bool> {
    match (policy, method) {
        (_, ApplyMethod::ServerSide) => {
            let params = PatchParams::apply(crate::cluster::live::FLUX_FIELD_MANAGER).force();
            api.patch(name, &params, &Patch::Apply(object)).await.map(|_| true)
        }
        (Policy::Create, ApplyMethod::ClientSide) => match api.create(&PostParams::default(), typed).await {
            Ok(_) => Ok(true),
            // Present already: left as it is.
            Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
            Err(e) => Err(e),
        },
        (_, ApplyMethod::ClientSide) => match api.get_opt(name).await {
            Ok(Some(current)) => {
                let mut replacement = typed.clone();
                replacement.metadata.resource_version = current.metadata.resource_version.clone();
                api.replace(name, &PostParams::default(), &replacement).await.map(|_| true)
            }
            Ok(None) => api.create(&PostParams::default(), typed).await.map(|_| true),
            Err(e) => Err(e),
        },
    }
}

/// Waits until each CRD of `names` is Established, one after the other and up to
/// [`ESTABLISHED_TIMEOUT`] each, as helm-controller does: Helm installs the chart's custom resources
/// next, which the API server serves only then.
async fn wait_established(cluster: &Cluster, names: &[String]) -> Result<()> {
    // Watched as dynamic objects: the typed CustomResourceDefinition (its recursive JSONSchemaProps) would
    // bring a deserializer of its own for one condition.
    let crds_api: Api<DynamicObject> = Api::all_with(cluster.client.clone(), &crd_resource());
    for name in names {
        let established = await_condition(crds_api.clone(), name, is_established);
        match tokio::time::timeout(ESTABLISHED_TIMEOUT, established).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return Err(Error::Failed(format!("waiting for CustomResourceDefinition {name}: {e}"))),
            Err(_) => {
                return Err(Error::Timeout {
                    what: format!("CustomResourceDefinition {name} to be Established"),
                    after: ESTABLISHED_TIMEOUT,
                    last_seen: "not Established".into(),
                });
            }
        }
    }
    Ok(())
}

/// Whether a CustomResourceDefinition, seen as a dynamic object, has condition Established=True.
fn is_established(crd: Option<&DynamicObject>) -> bool {
    let conditions = crd.and_then(|c| c.data.pointer("/status/conditions")).and_then(Value::as_array);
    conditions.is_some_and(|all| all.iter().any(|c| c["type"] == "Established" && c["status"] == "True"))
}

fn crd_resource() -> kube::api::ApiResource {
    kube::api::ApiResource {
        group: CRD_GROUP.into(),
        version: "v1".into(),
        api_version: format!("{CRD_GROUP}/v1"),
        kind: CRD_KIND.into(),
        plural: "customresourcedefinitions".into(),
    }
}

/// What [`apply`] would change, for the diff: each CRD with the object as the API server would leave it
/// (a server-side dry run when it would be applied server-side or replaced; as it is when it would be
/// created) and the live one. Unchanged and untouched CRDs are left out; none is ever removed.
pub async fn observe(
    live: &LiveObjects<'_>,
    crds: &[Value],
    policy: Policy,
    method: ApplyMethod,
) -> Result<Vec<(ObjectId, Value, Option<Value>)>> {
    let mut out = Vec::new();
    if policy == Policy::Skip {
        return Ok(out);
    }
    for crd in crds {
        let id = ObjectId::from_object(crd)
            .map_err(|e| Error::Invalid { what: "a CRD of crds/".into(), reason: e.to_string() })?;
        let current = live.get(crd).await?;
        let desired = match (&current, policy, method) {
            // Created only if missing.
            (Some(_), Policy::Create, ApplyMethod::ClientSide) => continue,
            (None, _, ApplyMethod::ClientSide) => crd.clone(),
            // A replace leaves what the object says (and what the server defaults); a dry run of the
            // server-side apply shows both, which is what the diff needs.
            _ => live.dry_run(crd, current.as_ref()).await?,
        };
        out.push((id, desired, current));
    }
    Ok(out)
}

/// Inventory entries for every object of `crds/` (helm-controller's `AddCRDs`): after the release's.
pub fn inventory_entries(objects: &[Value]) -> Vec<Value> {
    objects
        .iter()
        .filter_map(|o| ObjectId::from_object(o).ok().map(|id| (o, id)))
        .map(|(o, id)| {
            let ns = o.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or_default();
            json!({
                "id": format!("{ns}_{}_{}_{}", id.name.replace(':', "__"), id.group, id.kind),
                "v": id.version.clone().unwrap_or_default(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn established_is_read_from_the_dynamic_object() {
        let crd = |conditions: Value| -> DynamicObject {
            serde_json::from_value(json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                "metadata": {"name": "widgets.example.com"}, "status": {"conditions": conditions}}))
            .unwrap()
        };
        let established =
            crd(json!([{"type": "NamesAccepted", "status": "True"}, {"type": "Established", "status": "True"}]));
        assert!(is_established(Some(&established)));
        assert!(!is_established(Some(&crd(json!([{"type": "Established", "status": "False"}])))));
        assert!(!is_established(Some(&crd(json!([])))) && !is_established(None));
    }

    const OUTPUT: &str = "---\n# Source: app/crds/widgets.yaml\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: gadgets.example.com\n\n---\n# Source: app/charts/sub/crds/parts.yaml\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: parts.example.com\n\n---\n# Source: app/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n---\n# Source: app/templates/crds/not-a-crd-dir.yaml\nkind: ConfigMap\n";

    #[test]
    fn crds_come_first_and_the_templates_stay_as_helm_printed_them() {
        let (crds, rest) = split(OUTPUT);
        let names: Vec<String> = objects(&crds).unwrap().iter().map(|o| name_of(o).to_string()).collect();
        assert_eq!(names, ["widgets.example.com", "gadgets.example.com", "parts.example.com"]);
        assert_eq!(
            rest,
            "---\n# Source: app/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n---\n# Source: app/templates/crds/not-a-crd-dir.yaml\nkind: ConfigMap\n"
        );
        let plain = "---\n# Source: app/templates/cm.yaml\nkind: ConfigMap\n";
        assert_eq!(split(plain), (Vec::new(), plain.to_string()));
    }

    #[test]
    fn policies_default_to_create_and_unknown_ones_are_refused() {
        let hr = |spec: Value| -> HelmRelease {
            serde_json::from_value(json!({"metadata": {"name": "a", "namespace": "n"}, "spec": spec})).unwrap()
        };
        assert_eq!(policy(&hr(json!({})), false).unwrap(), Policy::Create);
        assert_eq!(policy(&hr(json!({})), true).unwrap(), Policy::Create);
        let set = hr(json!({"install": {"crds": "Skip"}, "upgrade": {"crds": "CreateReplace"}}));
        assert_eq!(policy(&set, false).unwrap(), Policy::Skip);
        assert_eq!(policy(&set, true).unwrap(), Policy::CreateReplace);
        assert!(policy(&hr(json!({"upgrade": {"crds": "Replace"}})), true).is_err());
    }

    #[test]
    fn crds_get_origin_labels_and_every_object_is_in_the_inventory() {
        let hr: HelmRelease =
            serde_json::from_value(json!({"metadata": {"name": "app", "namespace": "apps"}})).unwrap();
        let objs = objects(&split(OUTPUT).0).unwrap();
        let applied = to_apply(&objs, &hr, false);
        assert_eq!(applied[0]["metadata"]["labels"]["helm.toolkit.fluxcd.io/name"], "app");
        // Under helm-controller v1.5.0-v1.5.4 the other objects of crds/ go with them, labelled alike.
        let mut with_other = objs.clone();
        with_other.push(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "extra"}}));
        assert_eq!(to_apply(&with_other, &hr, false).len(), objs.len());
        let all = to_apply(&with_other, &hr, true);
        assert_eq!(all.len(), objs.len() + 1);
        assert_eq!(all[objs.len()]["metadata"]["labels"]["helm.toolkit.fluxcd.io/name"], "app");
        assert_eq!(applied[0]["metadata"]["labels"]["helm.toolkit.fluxcd.io/namespace"], "apps");
        assert_eq!(
            inventory_entries(&objs)[0],
            json!({"id": "_widgets.example.com_apiextensions.k8s.io_CustomResourceDefinition", "v": "v1"})
        );
    }
}
