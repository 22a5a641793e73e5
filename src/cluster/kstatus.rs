//! The status of one object as kstatus computes it (fluxcd/cli-utils `pkg/kstatus/status.Compute`), the
//! rule helm-controller's `poller` waits by: generic properties first (deletion, observed generation,
//! the `Reconciling` and `Stalled` conditions), then a rule per built-in kind, else a `Ready` condition,
//! else current. Messages are kstatus's, so what helm cozy prints is what Flux users read in events.

use serde_json::Value;

/// kstatus's verdict on an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    InProgress,
    Failed,
    Current,
    Terminating,
    NotFound,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::InProgress => "InProgress",
            Status::Failed => "Failed",
            Status::Current => "Current",
            Status::Terminating => "Terminating",
            Status::NotFound => "NotFound",
        }
    }
}

/// A verdict and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub status: Status,
    pub message: String,
}

impl Verdict {
    pub fn new(status: Status, message: impl Into<String>) -> Self {
        Verdict { status, message: message.into() }
    }
    fn in_progress(message: impl Into<String>) -> Self {
        Verdict::new(Status::InProgress, message)
    }
    fn current(message: impl Into<String>) -> Self {
        Verdict::new(Status::Current, message)
    }
    fn failed(message: impl Into<String>) -> Self {
        Verdict::new(Status::Failed, message)
    }
}

/// kstatus's `Compute` of a live object.
pub fn compute(obj: &Value) -> Verdict {
    if let Some(v) = generic(obj) {
        return v;
    }
    let (group, kind) = group_kind(obj);
    let rule: Option<fn(&Value) -> Verdict> = match (group, kind) {
        ("", "Service") => Some(service),
        ("", "Pod") => Some(pod),
        ("", "Secret" | "ConfigMap") | ("batch", "CronJob") => Some(|_| Verdict::current("Resource is always ready")),
        ("", "PersistentVolumeClaim") => Some(pvc),
        ("apps", "StatefulSet") => Some(statefulset),
        ("apps" | "extensions", "DaemonSet") => Some(daemonset),
        ("apps" | "extensions", "Deployment") => Some(deployment),
        ("apps" | "extensions", "ReplicaSet") => Some(replicaset),
        ("policy", "PodDisruptionBudget") => Some(|_| Verdict::current("AllowedDisruptions has been computed.")),
        ("batch", "Job") => Some(job),
        ("apiextensions.k8s.io", "CustomResourceDefinition") => Some(crd),
        _ => None,
    };
    if let Some(rule) = rule {
        return rule(obj);
    }
    for c in conditions(obj) {
        if c.type_ != "Ready" {
            continue;
        }
        match c.status {
            "True" => return Verdict::current("Resource is Ready"),
            "False" | "Unknown" => return Verdict::in_progress(c.message),
            _ => {}
        }
    }
    Verdict::current("Resource is current")
}

/// The API group and kind of an object.
pub fn group_kind(obj: &Value) -> (&str, &str) {
    let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    let group = api_version.rsplit_once('/').map(|(g, _)| g).unwrap_or("");
    (group, obj.get("kind").and_then(Value::as_str).unwrap_or_default())
}

fn generic(obj: &Value) -> Option<Verdict> {
    if obj.pointer("/metadata/deletionTimestamp").and_then(Value::as_str).is_some_and(|s| !s.is_empty()) {
        return Some(Verdict::new(Status::Terminating, "Resource scheduled for deletion"));
    }
    if let Some(generation) = int(obj, "/metadata/generation")
        && let Some(observed) = int(obj, "/status/observedGeneration")
        && observed != generation
    {
        let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
        return Some(Verdict::in_progress(format!(
            "{kind} generation is {generation}, but latest observed generation is {observed}"
        )));
    }
    for c in conditions(obj) {
        if c.type_ == "Reconciling" && c.status == "True" {
            return Some(Verdict::in_progress(c.message));
        }
        if c.type_ == "Stalled" && c.status == "True" {
            return Some(Verdict::failed(c.message));
        }
    }
    None
}

struct Condition<'a> {
    type_: &'a str,
    status: &'a str,
    reason: &'a str,
    message: &'a str,
}

fn conditions(obj: &Value) -> Vec<Condition<'_>> {
    let list = obj.pointer("/status/conditions").and_then(Value::as_array);
    fn s<'a>(c: &'a Value, f: &str) -> &'a str {
        c.get(f).and_then(Value::as_str).unwrap_or_default()
    }
    list.into_iter()
        .flatten()
        .map(|c| Condition {
            type_: s(c, "type"),
            status: s(c, "status"),
            reason: s(c, "reason"),
            message: s(c, "message"),
        })
        .collect()
}

/// An integer field as kstatus's `GetIntField` reads it: a whole JSON number, else absent.
fn int(obj: &Value, pointer: &str) -> Option<i64> {
    obj.pointer(pointer).and_then(Value::as_i64)
}

fn int_or(obj: &Value, pointer: &str, default: i64) -> i64 {
    int(obj, pointer).unwrap_or(default)
}

fn string<'a>(obj: &'a Value, pointer: &str) -> Option<&'a str> {
    obj.pointer(pointer).and_then(Value::as_str)
}

fn service(obj: &Value) -> Verdict {
    let type_ = string(obj, "/spec/type").unwrap_or("ClusterIP");
    if type_ == "LoadBalancer" && string(obj, "/spec/clusterIP").unwrap_or_default().is_empty() {
        return Verdict::in_progress("ClusterIP not set. Service type: LoadBalancer");
    }
    Verdict::current("Service is ready")
}

fn pvc(obj: &Value) -> Verdict {
    let phase = string(obj, "/status/phase").unwrap_or("unknown");
    if phase != "Bound" {
        return Verdict::in_progress(format!("PVC is not Bound. phase: {phase}"));
    }
    Verdict::current("PVC is Bound")
}

fn pod(obj: &Value) -> Verdict {
    let conds = conditions(obj);
    match string(obj, "/status/phase").unwrap_or_default() {
        "Succeeded" => Verdict::current("Pod has completed successfully"),
        "Failed" => Verdict::current("Pod has completed, but not successfully"),
        "Running" => {
            if conds.iter().any(|c| c.type_ == "Ready" && c.status == "True") {
                return Verdict::current("Pod is Ready");
            }
            let looping: Vec<&str> = obj
                .pointer("/status/containerStatuses")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|cs| cs.pointer("/state/waiting/reason").and_then(Value::as_str) == Some("CrashLoopBackOff"))
                .filter_map(|cs| cs.get("name").and_then(Value::as_str))
                .collect();
            if !looping.is_empty() {
                return Verdict::failed(format!("Containers in CrashLoop state: {}", looping.join(",")));
            }
            Verdict::in_progress("Pod is running but is not Ready")
        }
        "Pending" => {
            let unschedulable =
                conds.iter().any(|c| c.type_ == "PodScheduled" && c.status == "False" && c.reason == "Unschedulable");
            // kstatus gives the scheduler 15 seconds from creation before calling it a failure.
            let created = string(obj, "/metadata/creationTimestamp").and_then(|t| t.parse::<jiff::Timestamp>().ok());
            let within_window = created.is_none_or(|t| jiff::Timestamp::now().duration_since(t).as_secs() < 15);
            match (unschedulable, within_window) {
                (true, true) => Verdict::in_progress("Pod has not been scheduled"),
                (true, false) => Verdict::failed("Pod could not be scheduled"),
                _ => Verdict::in_progress("Pod is in the Pending phase"),
            }
        }
        "" => Verdict::in_progress("Pod phase not available"),
        other => Verdict::in_progress(format!("unknown phase {other}")),
    }
}

fn deployment(obj: &Value) -> Verdict {
    // Without a progress deadline the Progressing condition is never set to NewReplicaSetAvailable.
    let mut progressing = int(obj, "/spec/progressDeadlineSeconds").is_none_or(|d| d == i64::from(i32::MAX));
    let mut available = false;
    for c in conditions(obj) {
        match c.type_ {
            "Progressing" => {
                if c.reason == "ProgressDeadlineExceeded" {
                    return Verdict::failed("Progress deadline exceeded");
                }
                if c.status == "True" && c.reason == "NewReplicaSetAvailable" {
                    progressing = true;
                }
            }
            "Available" if c.status == "True" => available = true,
            _ => {}
        }
    }
    let spec = int_or(obj, "/spec/replicas", 1);
    let replicas = int_or(obj, "/status/replicas", 0);
    let updated = int_or(obj, "/status/updatedReplicas", 0);
    let ready = int_or(obj, "/status/readyReplicas", 0);
    let available_n = int_or(obj, "/status/availableReplicas", 0);
    if spec > replicas {
        return Verdict::in_progress(format!("Replicas: {replicas}/{spec}"));
    }
    if spec > updated {
        return Verdict::in_progress(format!("Updated: {updated}/{spec}"));
    }
    if replicas > spec {
        return Verdict::in_progress(format!("Pending termination: {}", replicas - spec));
    }
    if updated > available_n {
        return Verdict::in_progress(format!("Available: {available_n}/{updated}"));
    }
    if spec > ready {
        return Verdict::in_progress(format!("Ready: {ready}/{spec}"));
    }
    if !progressing {
        return Verdict::in_progress("ReplicaSet not Available");
    }
    if !available {
        return Verdict::in_progress("Deployment not Available");
    }
    Verdict::current(format!("Deployment is available. Replicas: {replicas}"))
}

fn statefulset(obj: &Value) -> Verdict {
    if string(obj, "/spec/updateStrategy/type") == Some("OnDelete") {
        return Verdict::current("StatefulSet is using the ondelete update strategy");
    }
    let spec = int_or(obj, "/spec/replicas", 1);
    let ready = int_or(obj, "/status/readyReplicas", 0);
    let current = int_or(obj, "/status/currentReplicas", 0);
    let updated = int_or(obj, "/status/updatedReplicas", 0);
    let replicas = int_or(obj, "/status/replicas", 0);
    let partition = int_or(obj, "/spec/updateStrategy/rollingUpdate/partition", -1);
    if spec > replicas {
        return Verdict::in_progress(format!("Replicas: {replicas}/{spec}"));
    }
    if spec > ready {
        return Verdict::in_progress(format!("Ready: {ready}/{spec}"));
    }
    if replicas > spec {
        return Verdict::in_progress(format!("Pending termination: {}", replicas - spec));
    }
    if partition != -1 {
        if updated < spec - partition {
            return Verdict::in_progress(format!("updated: {updated}/{}", spec - partition));
        }
        return Verdict::current(format!("Partition rollout complete. updated: {updated}"));
    }
    if spec > current {
        return Verdict::in_progress(format!("current: {current}/{spec}"));
    }
    if string(obj, "/status/currentRevision").unwrap_or_default()
        != string(obj, "/status/updateRevision").unwrap_or_default()
    {
        return Verdict::in_progress("Waiting for updated revision to match current");
    }
    Verdict::current(format!("All replicas scheduled as expected. Replicas: {replicas}"))
}

fn daemonset(obj: &Value) -> Verdict {
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
    if int(obj, "/metadata/generation").is_none() {
        return Verdict::in_progress(format!("{kind} metadata.generation not found"));
    }
    if int(obj, "/status/observedGeneration").is_none() {
        return Verdict::in_progress(format!("{kind} status.observedGeneration not found"));
    }
    let Some(desired) = int(obj, "/status/desiredNumberScheduled") else {
        return Verdict::in_progress("Missing .status.desiredNumberScheduled");
    };
    let checks = [
        ("Current", "/status/currentNumberScheduled"),
        ("Updated", "/status/updatedNumberScheduled"),
        ("Available", "/status/numberAvailable"),
        ("Ready", "/status/numberReady"),
    ];
    for (what, pointer) in checks {
        let n = int_or(obj, pointer, 0);
        if desired > n {
            return Verdict::in_progress(format!("{what}: {n}/{desired}"));
        }
    }
    Verdict::current(format!("All replicas scheduled as expected. Replicas: {desired}"))
}

fn replicaset(obj: &Value) -> Verdict {
    if conditions(obj).iter().any(|c| c.type_ == "ReplicaFailure" && c.status == "True") {
        return Verdict::in_progress("Replica Failure condition. Check Pods");
    }
    let spec = int_or(obj, "/spec/replicas", 1);
    let replicas = int_or(obj, "/status/replicas", 0);
    let checks = [
        ("Labelled", "/status/fullyLabeledReplicas"),
        ("Available", "/status/availableReplicas"),
        ("Ready", "/status/readyReplicas"),
    ];
    for (what, pointer) in checks {
        let n = int_or(obj, pointer, 0);
        if spec > n {
            return Verdict::in_progress(format!("{what}: {n}/{spec}"));
        }
    }
    if replicas > spec {
        return Verdict::in_progress(format!("Pending termination: {}", replicas - spec));
    }
    Verdict::current(format!("ReplicaSet is available. Replicas: {replicas}"))
}

fn job(obj: &Value) -> Verdict {
    let parallelism = int_or(obj, "/spec/parallelism", 1);
    let completions = int_or(obj, "/spec/completions", parallelism);
    let succeeded = int_or(obj, "/status/succeeded", 0);
    let active = int_or(obj, "/status/active", 0);
    let failed = int_or(obj, "/status/failed", 0);
    for c in conditions(obj) {
        match (c.type_, c.status) {
            ("Complete", "True") => {
                return Verdict::current(format!("Job Completed. succeeded: {succeeded}/{completions}"));
            }
            ("Failed", "True") => return Verdict::failed(format!("Job Failed. failed: {failed}/{completions}")),
            _ => {}
        }
    }
    if string(obj, "/status/startTime").unwrap_or_default().is_empty() {
        return Verdict::in_progress("Job not started");
    }
    Verdict::current(format!("Job in progress. success:{succeeded}, active: {active}, failed: {failed}"))
}

fn crd(obj: &Value) -> Verdict {
    for c in conditions(obj) {
        if c.type_ == "NamesAccepted" && c.status == "False" {
            return Verdict::failed(c.message);
        }
        if c.type_ == "Established" {
            if c.status == "False" && c.reason != "Installing" {
                return Verdict::failed(c.message);
            }
            if c.status == "True" {
                return Verdict::current("CRD is established");
            }
        }
    }
    Verdict::in_progress("Install in progress")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deploy(spec: i64, status: Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "generation": 1},
               "spec": {"replicas": spec, "progressDeadlineSeconds": 600}, "status": status})
    }

    #[test]
    fn deployments_by_replicas_then_conditions() {
        let v = compute(&deploy(2, json!({"observedGeneration": 1, "replicas": 1})));
        assert_eq!(v, Verdict::in_progress("Replicas: 1/2"));
        let ready = json!({"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1, "readyReplicas": 1,
            "availableReplicas": 1, "conditions": [
                {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"},
                {"type": "Available", "status": "True"}]});
        assert_eq!(compute(&deploy(1, ready.clone())).status, Status::Current);
        let mut stale = ready.clone();
        stale["observedGeneration"] = json!(0);
        assert_eq!(
            compute(&deploy(1, stale)),
            Verdict::in_progress("Deployment generation is 1, but latest observed generation is 0")
        );
        let mut no_rs = ready.clone();
        no_rs["conditions"][0]["reason"] = json!("ReplicaSetUpdated");
        assert_eq!(compute(&deploy(1, no_rs)), Verdict::in_progress("ReplicaSet not Available"));
        let mut deadline = ready;
        deadline["conditions"][0] =
            json!({"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"});
        assert_eq!(compute(&deploy(1, deadline)), Verdict::failed("Progress deadline exceeded"));
    }

    #[test]
    fn jobs_are_current_once_started_and_failed_by_condition() {
        let job = |status: Value| json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "status": status});
        assert_eq!(compute(&job(json!({}))), Verdict::in_progress("Job not started"));
        assert_eq!(compute(&job(json!({"startTime": "2026-01-01T00:00:00Z", "active": 1}))).status, Status::Current);
        let failed = json!({"failed": 1, "conditions": [{"type": "Failed", "status": "True"}]});
        assert_eq!(compute(&job(failed)), Verdict::failed("Job Failed. failed: 1/1"));
    }

    #[test]
    fn custom_kinds_by_generic_conditions_then_ready() {
        let obj =
            |conds: Value| json!({"apiVersion": "example.io/v1", "kind": "Widget", "status": {"conditions": conds}});
        assert_eq!(compute(&obj(json!([]))).status, Status::Current);
        assert_eq!(
            compute(&obj(json!([{"type": "Ready", "status": "False", "message": "m"}]))),
            Verdict::in_progress("m")
        );
        assert_eq!(compute(&obj(json!([{"type": "Stalled", "status": "True", "message": "s"}]))), Verdict::failed("s"));
        let deleting = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"deletionTimestamp": "x"}});
        assert_eq!(compute(&deleting).status, Status::Terminating);
    }

    #[test]
    fn statefulsets_and_daemonsets() {
        let sts = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "spec": {"replicas": 1},
            "status": {"replicas": 1, "readyReplicas": 1, "currentReplicas": 1, "currentRevision": "a", "updateRevision": "b"}});
        assert_eq!(compute(&sts), Verdict::in_progress("Waiting for updated revision to match current"));
        let ds = json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"generation": 1},
            "status": {"observedGeneration": 1, "desiredNumberScheduled": 2, "currentNumberScheduled": 2, "updatedNumberScheduled": 1}});
        assert_eq!(compute(&ds), Verdict::in_progress("Updated: 1/2"));
    }
}
