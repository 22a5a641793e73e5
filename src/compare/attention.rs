//! What a reviewer must see first in a plan, before reading its diff: the container images that change
//! (before → after, per workload and container), and the changes that break or destroy on upgrade: a
//! field the API server will not change in place (a workload's selector, a StatefulSet's
//! volumeClaimTemplates, a Job's template, a Service's clusterIP, a claim's storage class or access
//! modes), a PersistentVolumeClaim that shrinks or goes, a CustomResourceDefinition or Namespace that
//! goes (with every object in it). They are flagged, never blocked: the diff is still the truth.

use serde::Serialize;
use serde_json::Value;

use super::diff::{Action, Entry, Plan};

/// What to see first in one plan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Attention {
    pub images: Vec<ImageChange>,
    pub risks: Vec<Risk>,
}

/// A container whose image changes (None: the container, or its workload, is not there at that side).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImageChange {
    /// `Kind name` of the workload.
    pub object: String,
    pub container: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// A change that breaks or destroys on upgrade.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Risk {
    /// `Kind name` of the object.
    pub object: String,
    /// What happens, in a few words.
    pub what: String,
}

impl Attention {
    pub fn is_empty(&self) -> bool {
        self.images.is_empty() && self.risks.is_empty()
    }

    /// One short line for a table's note: `2 images, 1 risk` (empty when there is nothing).
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if !self.images.is_empty() {
            parts.push(count(self.images.len(), "image"));
        }
        if !self.risks.is_empty() {
            parts.push(count(self.risks.len(), "risk"));
        }
        parts.join(", ")
    }

    /// One line per image and risk: `image  Deployment a, container b: x:1 → x:2`, `risk   ...`.
    pub fn lines(&self) -> Vec<String> {
        let images = self.images.iter().map(|i| {
            let side = |s: &Option<String>| s.clone().unwrap_or_else(|| "(none)".into());
            format!("image  {}, container {}: {} → {}", i.object, i.container, side(&i.before), side(&i.after))
        });
        let risks = self.risks.iter().map(|r| format!("risk   {}: {}", r.object, r.what));
        images.chain(risks).collect()
    }
}

fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// What to see first in `plan`.
pub fn of(plan: &Plan) -> Attention {
    let mut out = Attention::default();
    for entry in plan.entries.iter().filter(|e| e.action != Action::Unchanged) {
        let object = format!("{} {}", entry.id.kind, entry.id.name);
        out.images.extend(images(entry, &object));
        out.risks.extend(risks(entry).into_iter().map(|what| Risk { object: object.clone(), what }));
    }
    out
}

/// Where a kind keeps its pod template's spec.
fn pod_spec<'a>(kind: &str, object: &'a Value) -> Option<&'a Value> {
    let spec = object.get("spec")?;
    match kind {
        "Pod" => Some(spec),
        "CronJob" => spec.get("jobTemplate")?.get("spec")?.get("template")?.get("spec"),
        "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet" | "Job" | "ReplicationController" => {
            spec.get("template")?.get("spec")
        }
        _ => None,
    }
}

/// `(container, image)` of every container, init container and ephemeral container, in order.
fn containers(kind: &str, object: Option<&Value>) -> Vec<(String, String)> {
    let Some(spec) = object.and_then(|o| pod_spec(kind, o)) else { return Vec::new() };
    ["initContainers", "containers", "ephemeralContainers"]
        .iter()
        .filter_map(|k| spec.get(*k).and_then(Value::as_array))
        .flatten()
        .filter_map(|c| {
            let name = c.get("name").and_then(Value::as_str)?;
            let image = c.get("image").and_then(Value::as_str).unwrap_or("");
            Some((name.to_string(), image.to_string()))
        })
        .collect()
}

fn images(entry: &Entry, object: &str) -> Vec<ImageChange> {
    let kind = entry.id.kind.as_str();
    let (before, after) = (containers(kind, entry.old.as_ref()), containers(kind, entry.new.as_ref()));
    // Each container once, in the order the two sides name them.
    let mut seen = std::collections::BTreeSet::new();
    before
        .iter()
        .chain(&after)
        .map(|(n, _)| n)
        .filter(|n| seen.insert(n.as_str()))
        .filter_map(|name| {
            let find = |side: &[(String, String)]| side.iter().find(|(n, _)| n == name).map(|(_, i)| i.clone());
            let (b, a) = (find(&before), find(&after));
            (b != a).then(|| ImageChange { object: object.to_string(), container: name.clone(), before: b, after: a })
        })
        .collect()
}

/// The risks of one object's change.
fn risks(entry: &Entry) -> Vec<String> {
    let kind = entry.id.kind.as_str();
    if entry.action == Action::Remove {
        return match kind {
            "PersistentVolumeClaim" => vec!["removed: its volume can be deleted with it".into()],
            "CustomResourceDefinition" => vec!["removed: every object of this kind is deleted with it".into()],
            "Namespace" => vec!["removed: everything in it is deleted with it".into()],
            _ => Vec::new(),
        };
    }
    let (Some(old), Some(new)) = (&entry.old, &entry.new) else { return Vec::new() };
    let at = |v: &Value, path: &[&str]| path.iter().try_fold(v.clone(), |v, k| v.get(*k).cloned());
    let immutable: &[&[&str]] = match kind {
        "Deployment" | "DaemonSet" | "ReplicaSet" => &[&["spec", "selector"]],
        "StatefulSet" => &[&["spec", "selector"], &["spec", "volumeClaimTemplates"], &["spec", "serviceName"]],
        "Job" => &[&["spec", "selector"], &["spec", "template"]],
        "Service" => &[&["spec", "clusterIP"]],
        "PersistentVolumeClaim" => &[&["spec", "storageClassName"], &["spec", "accessModes"], &["spec", "volumeName"]],
        _ => &[],
    };
    let mut out = Vec::new();
    for path in immutable {
        let (before, after) = (at(old, path), at(new, path));
        // A Service's clusterIP left out at one side is the server's choice, not a change.
        let unset = |v: &Option<Value>| v.as_ref().is_none_or(|v| v.is_null() || v.as_str() == Some(""));
        if before != after && !(kind == "Service" && (unset(&before) || unset(&after))) {
            out.push(format!("{} is immutable: the upgrade fails unless the object is replaced", path.join(".")));
        }
    }
    if kind == "PersistentVolumeClaim" {
        let storage = |v: &Value| at(v, &["spec", "resources", "requests", "storage"]).and_then(|s| quantity(&s));
        if let (Some(b), Some(a)) = (storage(old), storage(new))
            && a < b
        {
            out.push("spec.resources.requests.storage shrinks: a claim cannot shrink".into());
        }
    }
    out
}

/// A Kubernetes quantity (`10Gi`, `500M`, `1.5T`, `100m`) as a number.
fn quantity(value: &Value) -> Option<f64> {
    if let Some(n) = value.as_f64() {
        return Some(n);
    }
    let s = value.as_str()?.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+')).unwrap_or(s.len());
    let (number, suffix) = s.split_at(split);
    let n: f64 = number.parse().ok()?;
    let factor = match suffix {
        "" => 1.0,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024f64,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        _ => return None,
    };
    Some(n * factor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::manifests::ObjectId;
    use crate::compare::diff::plan;
    use serde_json::json;

    fn obj(v: Value) -> (ObjectId, Value) {
        (ObjectId::from_object(&v).unwrap(), v)
    }

    fn deployment(name: &str, image: &str, app: &str) -> (ObjectId, Value) {
        obj(json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "a"},
            "spec": {"selector": {"matchLabels": {"app": app}}, "template": {"metadata": {"labels": {"app": app}},
            "spec": {"initContainers": [{"name": "init", "image": "busybox:1"}], "containers": [{"name": "web", "image": image}]}}}}))
    }

    fn pvc(name: &str, size: &str) -> (ObjectId, Value) {
        obj(json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "a"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}}))
    }

    #[test]
    fn images_that_change_are_listed_per_container() {
        let p =
            plan(vec![deployment("web", "nginx:1.27", "web")], vec![deployment("web", "nginx:1.25", "web")]).unwrap();
        let a = of(&p);
        assert_eq!(
            a.images,
            [ImageChange {
                object: "Deployment web".into(),
                container: "web".into(),
                before: Some("nginx:1.25".into()),
                after: Some("nginx:1.27".into())
            }]
        );
        assert!(a.risks.is_empty());
        assert_eq!(a.summary(), "1 image");
        assert_eq!(a.lines(), ["image  Deployment web, container web: nginx:1.25 → nginx:1.27"]);
        let added = of(&plan(vec![deployment("new", "app:1", "new")], vec![]).unwrap());
        assert_eq!(added.images.len(), 2, "an added workload's images are new: {added:?}");
        assert_eq!(added.images[0].before, None);
    }

    #[test]
    fn changes_that_break_or_destroy_are_flagged() {
        let p = plan(
            vec![deployment("web", "nginx:1", "web2"), pvc("data", "5Gi")],
            vec![
                deployment("web", "nginx:1", "web"),
                pvc("data", "10Gi"),
                pvc("gone", "1Gi"),
                obj(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "old"}})),
                obj(json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "xs.example.com"}})),
            ],
        )
        .unwrap();
        let whats: Vec<String> = of(&p).risks.iter().map(|r| format!("{}: {}", r.object, r.what)).collect();
        for expected in [
            "Deployment web: spec.selector is immutable",
            "PersistentVolumeClaim data: spec.resources.requests.storage shrinks",
            "PersistentVolumeClaim gone: removed",
            "Namespace old: removed",
            "CustomResourceDefinition xs.example.com: removed",
        ] {
            assert!(whats.iter().any(|w| w.starts_with(expected)), "{expected} not in {whats:?}");
        }
        let grown = plan(vec![pvc("data", "20Gi")], vec![pvc("data", "10Gi")]).unwrap();
        assert!(of(&grown).is_empty(), "a claim may grow");
    }

    #[test]
    fn a_services_cluster_ip_left_to_the_server_is_no_change() {
        let svc = |ip: Option<&str>| {
            let mut v = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "a"}, "spec": {"ports": [{"port": 80}]}});
            if let Some(ip) = ip {
                v["spec"]["clusterIP"] = json!(ip);
            }
            obj(v)
        };
        assert!(of(&plan(vec![svc(None)], vec![svc(Some("10.0.0.1"))]).unwrap()).risks.is_empty());
        assert_eq!(of(&plan(vec![svc(Some("None"))], vec![svc(Some("10.0.0.1"))]).unwrap()).risks.len(), 1);
    }

    #[test]
    fn quantities_read_as_kubernetes_writes_them() {
        assert_eq!(quantity(&json!("10Gi")), Some(10.0 * 1024f64.powi(3)));
        assert_eq!(quantity(&json!("500M")), Some(5e8));
        assert_eq!(quantity(&json!("100m")), Some(0.1));
        assert_eq!(quantity(&json!(3)), Some(3.0));
        assert_eq!(quantity(&json!("lots")), None);
    }
}
