//! One object's comparison, pure: the release's object made what helm-controller sends to its dry run
//! ([`normalize`], [`crate::cluster::manifests::add_helm_ownership`]), the exclusion by metadata
//! ([`disabled_by_metadata`]), and the verdict on a live object against its dry run ([`compare`]), with
//! the two sides to show.

use serde_json::{Map, Value};

use super::ignore::unescape;
use super::jsondiff::{self, OpKind};

/// The label or annotation that turns drift detection off for an object (value `disabled`, any case).
pub const DISABLE_KEY: &str = "helm.toolkit.fluxcd.io/driftDetection";

/// What fluxcd/pkg `ssa/normalize.UnstructuredListWithScheme` does to a release object before it is
/// compared, as far as it changes what the dry run answers:
/// - container ports (Pods and the pod templates of `apps/v1` workloads, `batch/v1` Jobs and CronJobs)
///   and Service ports without a protocol get `TCP`;
/// - a Secret's `stringData` is moved into `data` (base64), overriding keys that are in both;
/// - `metadata.creationTimestamp` is set to null, and `status` removed (except from a CRD).
///
/// Role and ClusterRole are left as they are, as there. The typed round trip those steps run in is not
/// repeated: it only drops fields the API server would not accept and adds empty ones it defaults.
pub fn normalize(obj: &mut Value) {
    let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or_default().to_string();
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default().to_string();
    let crd = kind.eq_ignore_ascii_case("customresourcedefinition") && api_version.starts_with("apiextensions.k8s.io/");
    match (api_version.as_str(), kind.as_str()) {
        ("v1", "Pod") => default_container_protocols(obj.pointer_mut("/spec")),
        ("apps/v1", "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet") | ("batch/v1", "Job") => {
            default_container_protocols(obj.pointer_mut("/spec/template/spec"))
        }
        ("batch/v1", "CronJob") => default_container_protocols(obj.pointer_mut("/spec/jobTemplate/spec/template/spec")),
        ("v1", "Service") => default_protocols(obj.pointer_mut("/spec/ports")),
        ("v1", "Secret") => string_data_into_data(obj),
        _ => {}
    }
    let Some(map) = obj.as_object_mut() else { return };
    if let Value::Object(metadata) = map.entry("metadata").or_insert_with(|| Value::Object(Map::new())) {
        metadata.insert("creationTimestamp".into(), Value::Null);
    }
    if !crd {
        map.shift_remove("status");
    }
}

/// `ports[].protocol` of every container of a pod spec (not init containers: the same as upstream).
fn default_container_protocols(pod_spec: Option<&mut Value>) {
    let Some(Value::Array(containers)) = pod_spec.and_then(|s| s.get_mut("containers")) else { return };
    for c in containers {
        default_protocols(c.get_mut("ports"));
    }
}

fn default_protocols(ports: Option<&mut Value>) {
    let Some(Value::Array(ports)) = ports else { return };
    for port in ports.iter_mut().filter_map(Value::as_object_mut) {
        let empty = port.get("protocol").is_none_or(|p| p.as_str().is_none_or(str::is_empty));
        if empty {
            port.insert("protocol".into(), Value::String("TCP".into()));
        }
    }
}

fn string_data_into_data(obj: &mut Value) {
    use base64::Engine as _;
    let Some(map) = obj.as_object_mut() else { return };
    let Some(Value::Object(string_data)) = map.get("stringData") else { return };
    if string_data.values().any(|v| !v.is_string()) {
        // Go cannot read it into a Secret, so it is left as it is.
        return;
    }
    let encoded: Vec<(String, Value)> = string_data
        .iter()
        .map(|(k, v)| {
            (k.clone(), base64::engine::general_purpose::STANDARD.encode(v.as_str().unwrap_or_default()).into())
        })
        .collect();
    map.shift_remove("stringData");
    if encoded.is_empty() {
        return;
    }
    let data = map.entry("data").or_insert_with(|| Value::Object(Map::new()));
    if !data.is_object() {
        *data = Value::Object(Map::new());
    }
    if let Value::Object(data) = data {
        data.extend(encoded);
    }
}

/// Whether the object's labels or annotations hold [`DISABLE_KEY`] `disabled` (compared as Go's
/// `strings.EqualFold` compares it). A labels or annotations mapping with a value that is not a string
/// counts as none, as Go reads it.
pub fn disabled_by_metadata(obj: &Value) -> bool {
    ["/metadata/labels", "/metadata/annotations"].iter().any(|pointer| {
        super::ignore::string_map(obj, pointer)
            .get(DISABLE_KEY)
            .is_some_and(|v| !v.is_empty() && equal_fold(v, "disabled"))
    })
}

/// Go's `strings.EqualFold` for an ASCII word: letters of any case, and the two non-ASCII letters that
/// fold to ASCII ones (`ſ` to s, the Kelvin sign to k).
fn equal_fold(a: &str, ascii: &str) -> bool {
    let fold = |c: char| match c {
        'ſ' => 's',
        '\u{212a}' => 'k',
        c => c.to_ascii_lowercase(),
    };
    a.chars().map(fold).eq(ascii.chars().map(|c| c.to_ascii_lowercase()))
}

/// What fluxcd/pkg `normalize.DryRunUnstructured` fixes in a dry run's answer: an `autoscaling/v2`
/// HorizontalPodAutoscaler's metrics with duplicates and entries without a type left out (an API
/// server bug before Kubernetes 1.27).
pub fn normalize_dry_run(obj: &mut Value) {
    let hpa = obj.get("kind").and_then(Value::as_str) == Some("HorizontalPodAutoscaler")
        && obj.get("apiVersion").and_then(Value::as_str) == Some("autoscaling/v2");
    if !hpa {
        return;
    }
    let Some(Value::Array(metrics)) = obj.pointer_mut("/spec/metrics") else { return };
    let mut kept: Vec<Value> = Vec::with_capacity(metrics.len());
    for m in metrics.drain(..) {
        let typed = m.get("type").and_then(Value::as_str).is_some_and(|t| !t.is_empty());
        if typed && !kept.iter().any(|k| jsondiff::equal(k, &m)) {
            kept.push(m);
        }
    }
    *metrics = kept;
}

/// The verdict on one object, and its two sides as they are shown: the live object and what
/// helm-controller's drift detection would make of it, both without `status`, with only the name,
/// namespace, labels and annotations of their metadata, and the release side's labels and annotations
/// changed only where the comparison counts a change.
#[derive(Clone, Debug, PartialEq)]
pub struct Compared {
    pub drifted: bool,
    pub live: Value,
    pub release: Value,
}

/// Compares the live object with its dry run (both with the ignored paths already removed) as
/// fluxcd/pkg `jsondiff.Unstructured` does: labels and annotations by the rationalised patch from the
/// live ones to the dry run's, of which only `add` and `replace` count (keys others put on the live
/// object are no drift); everything else but `metadata` and `status` must be equal.
pub fn compare(live: &Value, dry_run: &Value) -> Compared {
    let (live_meta, dry_meta) = (labels_and_annotations(live), labels_and_annotations(dry_run));
    let counted: Vec<jsondiff::Op> =
        jsondiff::compare(&live_meta, &dry_meta).into_iter().filter(|op| op.kind != OpKind::Remove).collect();
    let mut after = live_meta.clone();
    for op in &counted {
        if let Some(value) = &op.value {
            set(&mut after, &op.path, value.clone());
        }
    }
    let body_differs = !jsondiff::equal(&without_metadata_and_status(live), &without_metadata_and_status(dry_run));
    Compared {
        drifted: body_differs || !counted.is_empty(),
        live: shown(live, &live_meta),
        release: shown(dry_run, &after),
    }
}

/// `{metadata: {name, annotations, labels}}` with those of them the object has (fluxcd/pkg's
/// `copyAnnotationsAndLabels`; the name keeps a `metadata` to compare when both others are missing).
fn labels_and_annotations(obj: &Value) -> Value {
    let mut metadata = Map::new();
    if let Some(Value::Object(m)) = obj.get("metadata") {
        for key in ["name", "annotations", "labels"] {
            if let Some(v) = m.get(key) {
                metadata.insert(key.into(), v.clone());
            }
        }
    }
    let mut doc = Map::new();
    doc.insert("metadata".into(), Value::Object(metadata));
    Value::Object(doc)
}

fn without_metadata_and_status(obj: &Value) -> Value {
    let mut copy = obj.clone();
    if let Some(map) = copy.as_object_mut() {
        map.shift_remove("metadata");
        map.shift_remove("status");
    }
    copy
}

/// An object as shown: without `status`, its metadata the name and namespace and the labels and
/// annotations of `meta` (a [`labels_and_annotations`] document).
fn shown(obj: &Value, meta: &Value) -> Value {
    let mut out = without_metadata_and_status(obj);
    let mut metadata = Map::new();
    for (key, from) in [("name", meta), ("namespace", obj), ("labels", meta), ("annotations", meta)] {
        if let Some(v) = from.pointer(&format!("/metadata/{key}")) {
            metadata.insert(key.into(), v.clone());
        }
    }
    if let Some(map) = out.as_object_mut() {
        map.insert("metadata".into(), Value::Object(metadata));
    }
    out
}

/// Sets the value at `pointer` as a JSON patch `add`/`replace` would (`-` appends to a list); a pointer
/// whose parent is missing changes nothing.
fn set(doc: &mut Value, pointer: &str, value: Value) {
    let tokens: Vec<String> = pointer.split('/').skip(1).map(unescape).collect();
    let Some((last, parents)) = tokens.split_last() else {
        *doc = value;
        return;
    };
    let mut current = doc;
    for t in parents {
        let next = match current {
            Value::Object(m) => m.get_mut(t),
            Value::Array(a) => t.parse::<usize>().ok().and_then(|i| a.get_mut(i)),
            _ => None,
        };
        let Some(next) = next else { return };
        current = next;
    }
    match current {
        Value::Object(m) => {
            m.insert(last.clone(), value);
        }
        Value::Array(a) if last == "-" => a.push(value),
        Value::Array(a) => {
            if let Some(slot) = last.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
                *slot = value;
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cm(labels: Value, data: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "c", "namespace": "apps", "resourceVersion": "7", "labels": labels,
                            "annotations": {"meta.helm.sh/release-name": "web"}},
               "data": data})
    }

    #[test]
    fn normalisation_defaults_protocols_moves_string_data_and_drops_status() {
        let mut deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"template": {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80}, {"containerPort": 81, "protocol": "UDP"}]}],
                                           "initContainers": [{"name": "i", "ports": [{"containerPort": 1}]}]}}},
            "status": {"replicas": 1}});
        normalize(&mut deploy);
        assert_eq!(deploy.pointer("/spec/template/spec/containers/0/ports/0/protocol"), Some(&json!("TCP")));
        assert_eq!(deploy.pointer("/spec/template/spec/containers/0/ports/1/protocol"), Some(&json!("UDP")));
        assert_eq!(deploy.pointer("/spec/template/spec/initContainers/0/ports/0/protocol"), None);
        assert_eq!(deploy.pointer("/metadata/creationTimestamp"), Some(&Value::Null));
        assert!(deploy.get("status").is_none());

        let mut svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {"ports": [{"port": 80, "protocol": ""}]}});
        normalize(&mut svc);
        assert_eq!(svc.pointer("/spec/ports/0/protocol"), Some(&json!("TCP")));

        let mut secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
                                "data": {"a": "b2xk", "k": "eA=="}, "stringData": {"a": "new"}});
        normalize(&mut secret);
        assert_eq!(secret["data"], json!({"a": "bmV3", "k": "eA=="}));
        assert!(secret.get("stringData").is_none());

        let mut crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                             "metadata": {"name": "x"}, "status": {"kept": true}});
        normalize(&mut crd);
        assert_eq!(crd["status"], json!({"kept": true}));
    }

    #[test]
    fn the_metadata_switch_is_a_label_or_annotation_in_any_case() {
        let with = |field: &str, value: Value| json!({"metadata": {field: {DISABLE_KEY: value}}});
        assert!(disabled_by_metadata(&with("labels", json!("disabled"))));
        assert!(disabled_by_metadata(&with("annotations", json!("DISABLED"))));
        assert!(disabled_by_metadata(&with("annotations", json!("Diſabled"))));
        assert!(!disabled_by_metadata(&with("labels", json!("enabled"))));
        assert!(!disabled_by_metadata(&with("labels", json!(""))));
        assert!(!disabled_by_metadata(&json!({"metadata": {"labels": {DISABLE_KEY: "disabled", "n": 1}}})));
    }

    #[test]
    fn labels_only_on_the_live_object_are_no_drift_but_a_changed_one_is() {
        let release = cm(json!({"app": "web"}), json!({"k": "v"}));
        let mut live = release.clone();
        live["metadata"]["labels"]["added-by-someone"] = json!("x");
        live["metadata"]["uid"] = json!("123");
        let c = compare(&live, &release);
        assert!(!c.drifted, "{c:?}");
        // The shown release side keeps what is not counted.
        assert_eq!(c.live, c.release);

        live["metadata"]["labels"]["app"] = json!("other");
        let c = compare(&live, &release);
        assert!(c.drifted);
        assert_eq!(c.live.pointer("/metadata/labels"), Some(&json!({"app": "other", "added-by-someone": "x"})));
        // Rationalised: one replace of the labels is shorter than a remove and a replace, so that is what
        // helm-controller counts (and what `enabled` mode would patch in, the extra label going too).
        assert_eq!(c.release.pointer("/metadata/labels"), Some(&json!({"app": "web"})));
        assert_eq!(c.release.pointer("/metadata/namespace"), Some(&json!("apps")));
        assert!(c.release.pointer("/metadata/resourceVersion").is_none());
    }

    #[test]
    fn enough_extra_live_labels_are_drift_as_helm_controller_counts_them() {
        let release = cm(json!({"app.kubernetes.io/managed-by": "Helm"}), json!({}));
        let mut live = release.clone();
        for k in ["a.example.com/one", "a.example.com/two", "a.example.com/three"] {
            live["metadata"]["labels"][k] = json!("x");
        }
        let c = compare(&live, &release);
        assert!(c.drifted, "the removals become one replace of the labels");
        assert_eq!(c.release.pointer("/metadata/labels"), Some(&json!({"app.kubernetes.io/managed-by": "Helm"})));
    }

    #[test]
    fn data_and_status_are_compared_as_helm_controller_compares_them() {
        let release = cm(json!({}), json!({"k": "v"}));
        let mut live = release.clone();
        live["status"] = json!({"whatever": 1});
        assert!(!compare(&live, &release).drifted, "status is not compared");
        live["data"]["k"] = json!("by-hand");
        let c = compare(&live, &release);
        assert!(c.drifted);
        assert_eq!((c.live["data"]["k"].clone(), c.release["data"]["k"].clone()), (json!("by-hand"), json!("v")));
        assert!(c.live.get("status").is_none());
    }

    #[test]
    fn dry_run_metrics_are_deduplicated() {
        let m = json!({"type": "Resource", "resource": {"name": "cpu"}});
        let mut hpa = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                             "spec": {"metrics": [m, m, {"type": ""}, {"type": "Pods"}]}});
        normalize_dry_run(&mut hpa);
        assert_eq!(hpa["spec"]["metrics"], json!([m, {"type": "Pods"}]));
    }
}
