//! Helm chart tests (`helm.sh/hook: test` Pods) on the test ground. There is no kubelet there: the kubelet
//! stand-in of `scripts/cluster.sh` (scripts/kubelet-standin.py) gives a Pod annotated
//! `cozyhr.test/phase: Succeeded|Failed` the status a kubelet writes when its containers end so; the API
//! server, Helm and helm-controller are the real ones.
//! - `helm test` with real Helm 3 and Helm 4: a passing test hook exits 0 and the stored release records
//!   the hook's last run Succeeded; a failing one (the same Pod name, created again by Helm) exits 1 and
//!   the release records Failed;
//! - helm-controller with `spec.test.enable`: a passing test is Ready=True `TestSucceeded`, with the hook in
//!   `status.history[0].testHooks`; a failing one is TestSuccess=False `TestFailed`, the hook Failed;
//! - the stand-in itself: what a Pod that asks gets (Running until `cozyhr.test/after`, then its outcome,
//!   init containers and every container), and that a Pod that does not ask, or asks wrongly, is never
//!   touched; the tenant cluster has a stand-in of its own.

use std::time::{Duration, Instant};

use cozyhr_e2e::{
    Chart, Helm, Run, apply, command, condition, env, eventually, get_json, helm_tests, helmrelease, kubectl,
    namespace, run, stored_release, tenant_apply, tenant_kubectl, wait_hr_ready,
};
use serde_json::Value;

const TIMEOUT: Duration = Duration::from_secs(180);
/// The field manager of the stand-in's status writes (its user agent).
const STANDIN: &str = "cozyhr-kubelet-standin";

/// A chart with a ConfigMap and a test hook Pod that ends as `.Values.testPhase` says.
fn tested_chart() -> Chart {
    let chart = Chart::new(
        "tested",
        "0.1.0",
        "testPhase: Succeeded\n",
        &[("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  a: b\n")],
    );
    chart.write(
        "templates/tests/test-connection.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Release.Name }}-test\n  annotations:\n    \
         helm.sh/hook: test\n    cozyhr.test/phase: {{ .Values.testPhase | quote }}\nspec:\n  restartPolicy: Never\n  \
         containers:\n    - name: check\n      image: registry.invalid/check:1\n      args: [\"--against\", \
         \"{{ .Release.Name }}\"]\n",
    );
    chart
}

fn helm(helm: Helm, args: &[&str]) -> Run {
    let mut c = command(helm.bin());
    c.args(args);
    run(c)
}

/// The hooks of the newest stored revision of release `name`, as (name, last_run.phase).
fn hook_runs(ns: &str, name: &str) -> Vec<(String, String)> {
    let release = stored_release(ns, name).unwrap_or_else(|| panic!("no stored release {ns}/{name}"));
    release["hooks"]
        .as_array()
        .map(|hooks| {
            hooks
                .iter()
                .map(|h| {
                    (
                        h["name"].as_str().unwrap_or_default().to_string(),
                        h.pointer("/last_run/phase").and_then(Value::as_str).unwrap_or_default().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn phase(pod: &Value) -> &str {
    pod.pointer("/status/phase").and_then(Value::as_str).unwrap_or_default()
}

/// The Pod once it has `want` phase.
#[track_caller]
fn wait_phase(ns: &str, name: &str, want: &str) -> Value {
    eventually(&format!("Pod {ns}/{name} to be {want}"), Duration::from_secs(30), || {
        let pod = get_json("pod", ns, name).ok_or("not found")?;
        if phase(&pod) == want { Ok(pod) } else { Err(format!("phase {:?}", phase(&pod))) }
    })
}

/// Asserts the status a kubelet writes for a Pod whose containers all ended with `code`/`reason`.
#[track_caller]
fn assert_ended(pod: &Value, want: &str, code: i64, reason: &str) {
    assert_eq!(phase(pod), want, "{pod:#}");
    assert!(pod.pointer("/status/startTime").and_then(Value::as_str).is_some(), "startTime: {pod:#}");
    let statuses = pod.pointer("/status/containerStatuses").and_then(Value::as_array).expect("containerStatuses");
    let containers = pod.pointer("/spec/containers").and_then(Value::as_array).expect("containers");
    assert_eq!(statuses.len(), containers.len(), "a status per container: {pod:#}");
    for (s, c) in statuses.iter().zip(containers) {
        assert_eq!(s["name"], c["name"], "{pod:#}");
        let t = &s["state"]["terminated"];
        assert_eq!(t["exitCode"].as_i64(), Some(code), "{pod:#}");
        assert_eq!(t["reason"], reason, "{pod:#}");
        assert!(t["finishedAt"].is_string() && t["startedAt"].is_string(), "{pod:#}");
        assert_eq!(s["ready"], false, "{pod:#}");
    }
    let ready = condition(pod, "Ready").expect("Ready condition");
    let containers_ready = condition(pod, "ContainersReady").expect("ContainersReady condition");
    assert_eq!(ready.0, "False", "{pod:#}");
    assert_eq!(containers_ready.0, "False", "{pod:#}");
    let expected = if want == "Succeeded" { "PodCompleted" } else { "ContainersNotReady" };
    assert_eq!(ready.1, expected, "{pod:#}");
    assert_eq!(condition(pod, "Initialized").map(|c| c.0).as_deref(), Some("True"), "{pod:#}");
}

helm_tests! {
    helm_test_ends_as_the_test_pod_does => helm_test;
}

/// `helm test` waits for the test Pod and reports its phase: 0 and Succeeded, then (upgraded to a failing
/// test; Helm deletes the Pod and creates it again under the same name) non-zero and Failed.
fn helm_test(h: Helm) {
    let ns = namespace(&format!("th-helm-{h:?}").to_lowercase());
    let chart = tested_chart();
    let dir = chart.path().to_string_lossy().into_owned();
    helm(h, &["install", "t", &dir, "-n", &ns]).ok();
    assert!(get_json("pod", &ns, "t-test").is_none(), "a test hook is not installed");

    let started = Instant::now();
    let passed = helm(h, &["test", "t", "-n", &ns, "--timeout", "60s"]).ok();
    assert!(started.elapsed() < Duration::from_secs(30), "helm test took {:?}", started.elapsed());
    assert!(passed.stdout.contains("Succeeded"), "{h:?} helm test says the phase:\n{}", passed.stdout);
    assert_eq!(hook_runs(&ns, "t"), [("t-test".to_string(), "Succeeded".to_string())], "{h:?}");
    let first = get_json("pod", &ns, "t-test").expect("the test Pod");
    assert_ended(&first, "Succeeded", 0, "Completed");

    helm(h, &["upgrade", "t", &dir, "-n", &ns, "--set", "testPhase=Failed"]).ok();
    let failed = helm(h, &["test", "t", "-n", &ns, "--timeout", "60s"]);
    assert_eq!(failed.code, Some(1), "{h:?} helm test of a failing test:\n{}\n{}", failed.stdout, failed.stderr);
    assert!(
        failed.stderr.contains("t-test") && failed.stderr.contains("failed"),
        "{h:?} helm test names the failed Pod:\n{}",
        failed.stderr
    );
    assert_eq!(hook_runs(&ns, "t"), [("t-test".to_string(), "Failed".to_string())], "{h:?}");
    let second = get_json("pod", &ns, "t-test").expect("the test Pod");
    assert_ne!(second.pointer("/metadata/uid"), first.pointer("/metadata/uid"), "Helm created the Pod again");
    assert_ended(&second, "Failed", 1, "Error");
}

/// helm-controller runs the test after the install (`spec.test.enable`), waits for the Pod and records
/// it: Ready=True `TestSucceeded`, the hook Succeeded in `status.history[0].testHooks`.
#[test]
fn helm_controller_test_succeeds() {
    let ns = namespace("th-hc-pass");
    tested_chart().publish("tested", &ns);
    apply(&helmrelease(&ns, "app", "tested", "test:\n  enable: true\n"));
    let hr = wait_hr_ready(&ns, "app", TIMEOUT);
    let (_, reason, message) = condition(&hr, "Ready").expect("Ready");
    assert_eq!(reason, "TestSucceeded", "{message}");
    let (status, reason, _) = condition(&hr, "TestSuccess").expect("TestSuccess");
    assert_eq!((status.as_str(), reason.as_str()), ("True", "TestSucceeded"), "{hr:#}");
    assert_eq!(test_hooks(&hr), [("app-test".to_string(), "Succeeded".to_string())], "{hr:#}");
    assert_ended(&get_json("pod", &ns, "app-test").expect("the test Pod"), "Succeeded", 0, "Completed");
}

/// A failing test: TestSuccess=False `TestFailed` naming the Pod, Ready=False `TestFailed`, the hook Failed
/// in the history (the install counts as failed: without retries, helm-controller stalls).
#[test]
fn helm_controller_test_fails() {
    let ns = namespace("th-hc-fail");
    tested_chart().publish("tested", &ns);
    apply(&helmrelease(&ns, "app", "tested", "test:\n  enable: true\nvalues:\n  testPhase: Failed\n"));
    // helm-controller writes its status more than once in a reconcile: TestSuccess=False can be stored
    // before the hook's phase reaches the history. Its end is Stalled, after the last write.
    let hr = eventually("helm-controller to stall on the failed test", TIMEOUT, || {
        let hr = get_json("helmrelease", &ns, "app").ok_or("not found")?;
        match condition(&hr, "Stalled") {
            Some((s, _, _)) if s == "True" => Ok(hr),
            other => Err(format!(
                "Stalled {other:?}, TestSuccess {:?}, Ready {:?}",
                condition(&hr, "TestSuccess"),
                condition(&hr, "Ready")
            )),
        }
    });
    let (_, reason, message) = condition(&hr, "TestSuccess").expect("TestSuccess");
    assert_eq!(reason, "TestFailed", "{message}");
    assert!(message.contains("app-test"), "TestSuccess names the Pod: {message}");
    let (ready, reason, _) = condition(&hr, "Ready").expect("Ready");
    assert_eq!((ready.as_str(), reason.as_str()), ("False", "TestFailed"), "{hr:#}");
    assert_eq!(test_hooks(&hr), [("app-test".to_string(), "Failed".to_string())], "{hr:#}");
    assert_ended(&get_json("pod", &ns, "app-test").expect("the test Pod"), "Failed", 1, "Error");
}

/// `status.history[0].testHooks` as (key, phase).
fn test_hooks(hr: &Value) -> Vec<(String, String)> {
    hr.pointer("/status/history/0/testHooks")
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v["phase"].as_str().unwrap_or_default().to_string())).collect())
        .unwrap_or_default()
}

/// A bare Pod with `annotations`, an init container and two containers.
fn pod(ns: &str, name: &str, annotations: &[(&str, &str)]) -> String {
    let mut meta = format!("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: {ns}\n");
    if !annotations.is_empty() {
        meta.push_str("  annotations:\n");
        for (k, v) in annotations {
            meta.push_str(&format!("    {k}: {v:?}\n"));
        }
    }
    format!(
        "{meta}spec:\n  restartPolicy: Never\n  initContainers:\n    - {{name: setup, image: registry.invalid/setup:1}}\n  \
         containers:\n    - {{name: main, image: registry.invalid/main:1}}\n    - {{name: side, image: registry.invalid/side:1}}\n"
    )
}

/// A Pod that asks nothing stays as the API server created it (Pending, no container statuses, not one
/// write since), and so does a Pod whose annotation's value is not understood; the stand-in's writes are
/// only to the Pods that ask.
#[test]
fn pods_that_do_not_ask_are_left_alone() {
    let ns = namespace("th-alone");
    let quiet = [
        ("plain", vec![]),
        ("running", vec![("cozyhr.test/phase", "Running")]),
        ("lowercase", vec![("cozyhr.test/phase", "succeeded")]),
        ("bad-after", vec![("cozyhr.test/phase", "Succeeded"), ("cozyhr.test/after", "soon")]),
        ("other-annotation", vec![("example.com/phase", "Succeeded")]),
    ];
    let mut created = Vec::new();
    for (name, annotations) in &quiet {
        apply(&pod(&ns, name, annotations));
        let p = get_json("pod", &ns, name).expect("the Pod");
        created.push((name, p["metadata"]["resourceVersion"].clone()));
    }
    // Created last: the stand-in reads the watch in order, so once this one is done, the others were seen.
    apply(&pod(&ns, "asked", &[("cozyhr.test/phase", "Succeeded")]));
    let asked = wait_phase(&ns, "asked", "Succeeded");
    assert_ended(&asked, "Succeeded", 0, "Completed");
    std::thread::sleep(Duration::from_secs(2));
    for (name, rv) in created {
        let p = get_json("pod", &ns, name).expect("the Pod");
        assert_eq!(phase(&p), "Pending", "{name}: {p:#}");
        assert_eq!(p["metadata"]["resourceVersion"], rv, "{name} was written to: {p:#}");
        assert!(p.pointer("/status/containerStatuses").is_none(), "{name}: {p:#}");
        assert!(p.pointer("/status/startTime").is_none(), "{name}: {p:#}");
        let by = managers(&ns, name);
        assert!(!by.is_empty() && !by.iter().any(|m| m == STANDIN), "{name} written by {by:?}");
    }
    let by = managers(&ns, "asked");
    assert!(by.iter().any(|m| m == STANDIN), "the stand-in wrote the status of the Pod that asked: {by:?}");
    // Not bound to a Node: the stand-in writes status only.
    assert!(asked.pointer("/spec/nodeName").is_none(), "{asked:#}");
}

/// The field managers of Pod NS/NAME (kubectl hides them unless asked).
fn managers(ns: &str, name: &str) -> Vec<String> {
    let pod = kubectl(["-n", ns, "get", "pod", name, "-o", "json", "--show-managed-fields"]).ok().json();
    pod.pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .map(|m| m.iter().filter_map(|f| f["manager"].as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

/// `cozyhr.test/after`: the Pod is Running (init container done, containers running and ready) until
/// then, and ends at that time since its creation; a Failed Pod's containers exit 1 with Error, its init
/// container 0 with Completed.
#[test]
fn after_runs_the_pod_then_ends_it() {
    let ns = namespace("th-after");
    apply(&pod(&ns, "slow", &[("cozyhr.test/phase", "Failed"), ("cozyhr.test/after", "4s")]));
    let applied = Instant::now();
    let running = wait_phase(&ns, "slow", "Running");
    assert!(applied.elapsed() < Duration::from_secs(3), "Running at once: {:?}", applied.elapsed());
    let statuses = running.pointer("/status/containerStatuses").and_then(Value::as_array).expect("statuses");
    assert_eq!(statuses.len(), 2, "{running:#}");
    for s in statuses {
        assert!(s["state"]["running"]["startedAt"].is_string(), "{running:#}");
        assert_eq!(s["ready"], true, "{running:#}");
    }
    assert_eq!(condition(&running, "Ready").map(|c| c.0).as_deref(), Some("True"), "{running:#}");

    let failed = wait_phase(&ns, "slow", "Failed");
    assert!(applied.elapsed() >= Duration::from_secs(3), "ended too early: {:?}", applied.elapsed());
    assert_ended(&failed, "Failed", 1, "Error");
    assert_eq!(failed.pointer("/status/startTime"), running.pointer("/status/startTime"), "{failed:#}");
    let init = failed.pointer("/status/initContainerStatuses/0").expect("init container status");
    assert_eq!(init["name"], "setup", "{failed:#}");
    assert_eq!(init["state"]["terminated"]["exitCode"], 0, "{failed:#}");
    assert_eq!(init["state"]["terminated"]["reason"], "Completed", "{failed:#}");
}

/// The tenant cluster (`up --tenant`) has a stand-in of its own.
#[test]
fn the_tenant_has_a_standin_too() {
    env();
    let ns = format!("th-tenant-{}", std::process::id() % 100000);
    tenant_kubectl(["create", "namespace", &ns]).ok();
    tenant_apply(&pod(&ns, "asked", &[("cozyhr.test/phase", "Succeeded")]));
    let pod = eventually("the tenant's Pod to be Succeeded", Duration::from_secs(30), || {
        let r = tenant_kubectl(["-n", &ns, "get", "pod", "asked", "-o", "json"]).ok().json();
        if phase(&r) == "Succeeded" { Ok(r) } else { Err(format!("phase {:?}", phase(&r))) }
    });
    assert_ended(&pod, "Succeeded", 0, "Completed");
}
