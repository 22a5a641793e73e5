//! helm-controller's judgement of readiness (issue 26), against the real helm-controller, under Helm 3
//! and Helm 4. The local control plane runs no controllers for workloads, so the tests write the objects'
//! status themselves, then have helm-controller and `helm cozy apply` judge the same release:
//! - a custom kind judged by `healthCheckExprs` under `poller`: waiting while Pending, Ready once Running,
//!   failing at once when Broken, with helm-controller's reason and message;
//! - Deployments, StatefulSets and Jobs, ready, not ready and failed, under `poller` and `legacy`: the
//!   same verdict from both;
//! - `dependsOn[].readyExpr` in `tree` and `status`, false then true, as helm-controller's
//!   DependencyNotReady says.

use std::process::Stdio;
use std::time::{Duration, Instant};

use cozyhr_e2e::{
    Chart, Helm, apply, condition, cozy, cozy_home, eventually, get_json, helm_tests, kubectl, namespace, wait_hr_ready,
};
use serde_json::Value;

const READY_TIMEOUT: Duration = Duration::from_secs(180);
const GROUP: &str = "readiness.cozyhr.test";
/// The Widgets of this suite by their full name: other suites install kinds named Widget in groups of
/// their own, and kubectl resolves a bare `widget` to whichever group it finds first.
const WIDGETS: &str = "widgets.readiness.cozyhr.test";

fn widget_crd() -> String {
    format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.{GROUP}\nspec:\n\
         \x20 group: {GROUP}\n  scope: Namespaced\n  names: {{plural: widgets, singular: widget, kind: Widget}}\n\
         \x20 versions:\n  - name: v1\n    served: true\n    storage: true\n    subresources: {{status: {{}}}}\n\
         \x20   schema:\n      openAPIV3Schema:\n        type: object\n        x-kubernetes-preserve-unknown-fields: true\n"
    )
}

/// Waits for the Widget of release `app` in `ns`, saying on a timeout where the HelmRelease stands.
fn wait_for_widget(ns: &str, who: &str) {
    eventually(&format!("{who} to create the Widget"), READY_TIMEOUT, || match get_json(WIDGETS, ns, "app-w") {
        Some(_) => Ok(()),
        None => Err(format!("HelmRelease Ready: {:?}", ready(ns, "app"))),
    });
}

/// A HelmRelease that waits (install and upgrade) with `spec` lines added.
fn waiting_release(ns: &str, name: &str, artifact: &str, spec: &str) -> String {
    let spec: String = spec.lines().map(|l| format!("  {l}\n")).collect();
    format!(
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: {name}\n  namespace: {ns}\nspec:\n  \
         interval: 1h\n  chartRef:\n    kind: ExternalArtifact\n    name: {artifact}\n{spec}"
    )
}

const HEALTH: &str = "waitStrategy:\n  name: poller\nhealthCheckExprs:\n- apiVersion: readiness.cozyhr.test/v1\n  kind: Widget\n  \
     current: \"has(status.phase) && status.phase == 'Running'\"\n  failed: \"has(status.phase) && status.phase == 'Broken'\"\n\
     install:\n  timeout: 2m\nupgrade:\n  timeout: 2m\n";

/// A chart with a custom kind and, in crds/, its CRD (installed by helm-controller, or by apply, before the
/// templates, as real operator charts ship theirs).
fn widget_chart() -> Chart {
    let chart = widget_chart_without_crd();
    chart.write("crds/widgets.yaml", &widget_crd());
    chart
}

fn widget_chart_without_crd() -> Chart {
    Chart::new(
        "widgets",
        "0.1.0",
        "message: one\n",
        &[
            (
                "widget.yaml",
                &format!(
                    "apiVersion: {GROUP}/v1\nkind: Widget\nmetadata:\n  name: {{{{ .Release.Name }}}}-w\nspec:\n  color: blue\n"
                ),
            ),
            (
                "cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  message: {{ .Values.message | quote }}\n",
            ),
        ],
    )
}

fn set_phase(ns: &str, name: &str, phase: &str) {
    let patch = format!("{{\"status\":{{\"phase\":\"{phase}\"}}}}");
    kubectl(["patch", WIDGETS, name, "-n", ns, "--subresource=status", "--type=merge", "-p", &patch]).ok();
}

fn ready(ns: &str, name: &str) -> (String, String, String) {
    let hr = get_json("helmrelease", ns, name).expect("the HelmRelease");
    condition(&hr, "Ready").unwrap_or_default()
}

/// The message without the release's namespace, for comparing two namespaces' messages.
fn generic(message: &str, ns: &str) -> String {
    message.replace(ns, "NS")
}

helm_tests! {
    custom_kind => custom_kind_by_health_check_expressions;
}

fn custom_kind_by_health_check_expressions(helm: Helm) {
    let chart = widget_chart();

    // helm-controller, first: it waits while the Widget is Pending and calls it Ready once Running.
    let hc = namespace(&format!("ready-hc-{helm:?}").to_lowercase());
    chart.publish("widgets", &hc);
    apply(&waiting_release(&hc, "app", "widgets", HEALTH));
    wait_for_widget(&hc, "helm-controller");
    set_phase(&hc, "app-w", "Pending");
    std::thread::sleep(Duration::from_secs(8));
    let (status, reason, _) = ready(&hc, "app");
    assert_ne!(status, "True", "helm-controller waits while the Widget is Pending ({reason})");
    set_phase(&hc, "app-w", "Running");
    wait_hr_ready(&hc, "app", READY_TIMEOUT);

    // helm cozy, on the same chart and HelmRelease (suspended, so helm-controller stays out).
    let cz = namespace(&format!("ready-cz-{helm:?}").to_lowercase());
    chart.publish("widgets", &cz);
    apply(&waiting_release(&cz, "app", "widgets", &format!("suspend: true\n{HEALTH}")));
    let mut c = cozy_home(helm).command();
    c.args(["cozy", "apply", "app", "-C"])
        .arg(chart.path())
        .args(["-n", &cz])
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("start helm cozy apply");
    wait_for_widget(&cz, "helm cozy");
    set_phase(&cz, "app-w", "Pending");
    std::thread::sleep(Duration::from_secs(6));
    assert!(child.try_wait().expect("try_wait").is_none(), "apply waits while the Widget is Pending");
    set_phase(&cz, "app-w", "Running");
    let out = child.wait_with_output().expect("apply ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "apply ends once the Widget is Running:\n{stderr}");
    assert!(stderr.contains("waiting for 1 of 2 objects"), "it says what it waits for:\n{stderr}");
    let (status, reason, _) = ready(&cz, "app");
    assert_eq!((status.as_str(), reason.as_str()), ("True", "InstallSucceeded"));

    // Broken: both fail the upgrade at once, with the same reason and message.
    set_phase(&hc, "app-w", "Broken");
    kubectl([
        "patch",
        "helmrelease",
        "app",
        "-n",
        &hc,
        "--type=merge",
        "-p",
        r#"{"spec":{"values":{"message":"two"}}}"#,
    ])
    .ok();
    let theirs = eventually("helm-controller to fail the upgrade", READY_TIMEOUT, || {
        let (status, reason, message) = ready(&hc, "app");
        if status == "False" && reason == "UpgradeFailed" { Ok(message) } else { Err(format!("{status} {reason}")) }
    });
    set_phase(&cz, "app-w", "Broken");
    let started = Instant::now();
    let run = cozy(helm, chart.path(), &cz, &["apply", "app", "--set", "message=two"]);
    assert_eq!(run.code, Some(1), "a Broken Widget fails the apply:\n{}", run.stderr);
    assert!(started.elapsed() < Duration::from_secs(60), "at once, not at the timeout");
    let errors: Vec<&str> = run.stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "one error line:\n{}", run.stderr);
    assert!(
        errors[0].contains(&format!("Widget/{cz}/app-w")) && errors[0].contains("status.phase == 'Broken'"),
        "the line names the object and the expression: {}",
        errors[0]
    );
    let (status, reason, ours) = ready(&cz, "app");
    assert_eq!((status.as_str(), reason.as_str()), ("False", "UpgradeFailed"));
    assert!(theirs.contains("failed early due to stalled resources: [Widget/"), "{theirs}");
    assert_eq!(generic(&ours, &cz), generic(&theirs, &hc), "helm cozy writes helm-controller's message");
    let stored = cozyhr_e2e::stored_release(&cz, "app").expect("a stored release");
    assert_eq!(stored["info"]["status"], "failed", "the revision is marked failed, as Helm's waiter would");
    let hr = get_json("helmrelease", &cz, "app").expect("the HelmRelease");
    assert_eq!(hr.pointer("/status/history/0/status").and_then(Value::as_str), Some("failed"), "{}", hr["status"]);
}

// --- Deployments, StatefulSets and Jobs ------------------------------------------------------------

fn workloads_chart(with_deployment: bool) -> Chart {
    let mut templates: Vec<(&str, String)> = vec![
        (
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  message: {{ .Values.message | quote }}\n".into(),
        ),
        (
            "sts.yaml",
            "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: {{ .Release.Name }}-s\nspec:\n  replicas: 1\n  serviceName: s\n  \
             selector:\n    matchLabels: {app: s}\n  template:\n    metadata:\n      labels: {app: s}\n    spec:\n      containers:\n        \
             - name: c\n          image: registry.invalid/s:1\n"
                .into(),
        ),
        (
            "job.yaml",
            "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {{ .Release.Name }}-j\nspec:\n  template:\n    spec:\n      \
             restartPolicy: Never\n      containers:\n        - name: c\n          image: registry.invalid/j:1\n"
                .into(),
        ),
    ];
    if with_deployment {
        templates
            .push(("deploy.yaml", cozyhr_e2e::DEPLOYMENT.replace("{{ .Release.Name }}-web", "{{ .Release.Name }}-d")));
    }
    let refs: Vec<(&str, &str)> = templates.iter().map(|(n, t)| (*n, t.as_str())).collect();
    Chart::new("workloads", "0.1.0", "message: one\n", &refs)
}

/// What a case makes of the objects' status before the upgrade that is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ready,
    DeploymentNotReady,
    DeploymentFailed,
    StatefulSetNotReady,
    JobRunning,
    JobFailed,
}

fn status_patch(ns: &str, kind: &str, name: &str, status: Value) {
    let patch = serde_json::json!({ "status": status }).to_string();
    kubectl(["patch", kind, name, "-n", ns, "--subresource=status", "--type=merge", "-p", &patch]).ok();
}

fn write_statuses(ns: &str, release: &str, state: State, with_deployment: bool) {
    // Any time will do: no rule the tests reach depends on how long ago.
    let now = "2026-01-01T00:00:00Z";
    let cond =
        |t: &str, s: &str, r: &str| serde_json::json!({"type": t, "status": s, "reason": r, "lastTransitionTime": now});
    if with_deployment {
        let (ready, progressing) = match state {
            State::DeploymentNotReady => (0, cond("Progressing", "True", "ReplicaSetUpdated")),
            State::DeploymentFailed => (0, cond("Progressing", "False", "ProgressDeadlineExceeded")),
            _ => (1, cond("Progressing", "True", "NewReplicaSetAvailable")),
        };
        let available = cond("Available", if ready == 1 { "True" } else { "False" }, "MinimumReplicasAvailable");
        status_patch(
            ns,
            "deployment",
            &format!("{release}-d"),
            serde_json::json!({"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1, "readyReplicas": ready,
                "availableReplicas": ready, "conditions": [progressing, available]}),
        );
    }
    let sts_ready = if state == State::StatefulSetNotReady { 0 } else { 1 };
    status_patch(
        ns,
        "statefulset",
        &format!("{release}-s"),
        serde_json::json!({"observedGeneration": 1, "replicas": 1, "readyReplicas": sts_ready, "currentReplicas": 1,
            "updatedReplicas": 1, "availableReplicas": sts_ready, "currentRevision": "r1", "updateRevision": "r1"}),
    );
    let job = match state {
        State::JobRunning => serde_json::json!({"startTime": now, "active": 1}),
        State::JobFailed => serde_json::json!({"startTime": now, "failed": 1, "conditions": [
            cond("FailureTarget", "True", "BackoffLimitExceeded"), cond("Failed", "True", "BackoffLimitExceeded")]}),
        _ => serde_json::json!({"startTime": now, "completionTime": now, "succeeded": 1, "conditions": [
            cond("SuccessCriteriaMet", "True", "CompletionsReached"), cond("Complete", "True", "CompletionsReached")]}),
    };
    status_patch(ns, "job", &format!("{release}-j"), job);
}

/// Installs the release (helm-controller, without waiting), writes the case's statuses, and has `who`
/// judge an upgrade that waits; returns (Ready status, reason, message).
fn judge(who: Option<Helm>, strategy: &str, state: State) -> (String, String, String) {
    let with_deployment = strategy == "poller";
    let tag = format!("{strategy}-{state:?}-{}", who.map_or("hc".to_string(), |h| format!("{h:?}"))).to_lowercase();
    let ns = namespace(&format!("rw-{}", &tag[..tag.len().min(30)]));
    let chart = workloads_chart(with_deployment);
    chart.publish("workloads", &ns);
    let spec = format!("waitStrategy:\n  name: {strategy}\ninstall:\n  disableWait: true\nupgrade:\n  timeout: 20s\n");
    apply(&waiting_release(&ns, "w", "workloads", &spec));
    wait_hr_ready(&ns, "w", READY_TIMEOUT);
    write_statuses(&ns, "w", state, with_deployment);
    match who {
        None => {
            let before = get_json("helmrelease", &ns, "w").expect("hr")["metadata"]["generation"].as_i64().unwrap_or(0);
            kubectl([
                "patch",
                "helmrelease",
                "w",
                "-n",
                &ns,
                "--type=merge",
                "-p",
                r#"{"spec":{"values":{"message":"two"}}}"#,
            ])
            .ok();
            eventually("helm-controller's verdict on the upgrade", READY_TIMEOUT, || {
                let hr = get_json("helmrelease", &ns, "w").ok_or("no hr")?;
                let attempted = hr.pointer("/status/lastAttemptedGeneration").and_then(Value::as_i64).unwrap_or(0);
                let (status, reason, message) = condition(&hr, "Ready").unwrap_or_default();
                let done = attempted > before && (reason == "UpgradeSucceeded" || reason == "UpgradeFailed");
                if done { Ok((status, reason, generic(&message, &ns))) } else { Err(format!("{status} {reason}")) }
            })
        }
        Some(helm) => {
            kubectl(["patch", "helmrelease", "w", "-n", &ns, "--type=merge", "-p", r#"{"spec":{"suspend":true}}"#])
                .ok();
            let run = cozy(helm, chart.path(), &ns, &["apply", "w", "--set", "message=two"]);
            let (status, reason, message) = ready(&ns, "w");
            let expected_code = if status == "True" { 0 } else { 1 };
            assert_eq!(run.code, Some(expected_code), "{tag}: the exit code follows the verdict\n{}", run.stderr);
            (status, reason, generic(&message, &ns))
        }
    }
}

fn poller_and_legacy_verdicts_match_helm_controllers(helm: Helm) {
    let cases: Vec<(&str, State, &str)> = vec![
        ("poller", State::Ready, "True"),
        // Not ready, at the timeout: helm-controller's words then depend on when its client's rate limiter
        // sees the deadline ("timeout waiting for: [...]", or "rate: Wait(n=1) would exceed context
        // deadline"), so only the verdict and reason are compared.
        ("poller", State::DeploymentNotReady, ""),
        ("poller", State::DeploymentFailed, "failed early"),
        ("poller", State::StatefulSetNotReady, ""),
        ("poller", State::JobRunning, ""),
        ("poller", State::JobFailed, "failed early"),
        ("legacy", State::Ready, "True"),
        ("legacy", State::StatefulSetNotReady, ""),
        ("legacy", State::JobRunning, ""),
        ("legacy", State::JobFailed, ""),
    ];
    std::thread::scope(|scope| {
        let handles: Vec<_> = cases
            .iter()
            .map(|&(strategy, state, expect)| {
                scope.spawn(move || {
                    let theirs = judge(None, strategy, state);
                    let ours = judge(Some(helm), strategy, state);
                    (strategy, state, expect, theirs, ours)
                })
            })
            .collect();
        for h in handles {
            let (strategy, state, expect, theirs, ours) = h.join().expect("a case");
            let what = format!("{strategy} {state:?}");
            assert_eq!(ours.0, theirs.0, "{what}: the same verdict ({ours:?} / helm-controller {theirs:?})");
            assert_eq!(ours.1, theirs.1, "{what}: the same reason");
            if expect == "True" {
                assert_eq!(theirs.0, "True", "{what}: {theirs:?}");
            } else {
                assert_eq!(theirs.0, "False", "{what}: {theirs:?}");
                if !expect.is_empty() {
                    assert!(theirs.2.contains(expect), "{what}: helm-controller says {}", theirs.2);
                    assert_eq!(ours.2, theirs.2, "{what}: helm cozy writes helm-controller's message");
                }
            }
        }
    });
}

helm_tests! {
    workloads => poller_and_legacy_verdicts_match_helm_controllers;
}

// --- dependsOn readyExpr ---------------------------------------------------------------------------

fn cozyhr(args: &[&str]) -> cozyhr_e2e::Run {
    let mut all = vec!["cozyhr"];
    all.extend_from_slice(args);
    kubectl(all)
}

#[test]
fn ready_expr_decides_who_waits_as_helm_controller_does() {
    let ns = namespace("ready-expr");
    let chart = widget_chart_without_crd();
    chart.write("templates/widget.yaml", "");
    chart.publish("widgets", &ns);
    apply(&cozyhr_e2e::helmrelease(&ns, "a", "widgets", ""));
    wait_hr_ready(&ns, "a", READY_TIMEOUT);
    let expr = "has(dep.metadata.annotations) && 'stage' in dep.metadata.annotations && dep.metadata.annotations['stage'] == 'done'";
    let b = format!("dependsOn:\n- name: a\n  readyExpr: \"{expr}\"\nvalues:\n  message: b\n");
    apply(&cozyhr_e2e::helmrelease(&ns, "b", "widgets", &b));

    // a is Ready, but the expression is false: helm-controller holds b back, and so do tree and status.
    let theirs = eventually("helm-controller to hold b back", READY_TIMEOUT, || {
        let (status, reason, message) = ready(&ns, "b");
        if reason == "DependencyNotReady" { Ok(message) } else { Err(format!("{status} {reason}")) }
    });
    assert_eq!(theirs, format!("dependency '{ns}/a' is not ready according to readyExpr eval"));
    let tree = cozyhr(&["tree", "b", "-n", &ns, "-o", "json"]).ok().json();
    let waiting = tree.pointer("/release/waitingOn").cloned().unwrap_or_default();
    assert!(waiting.to_string().contains("\"a\""), "tree: b waits on a: {tree}");
    let status = cozyhr(&["status", "b", "-n", &ns]).ok();
    assert!(status.stdout.contains(&theirs), "status says what helm-controller says:\n{}", status.stdout);

    // The expression turns true: tree and status say so at once, and helm-controller proceeds.
    kubectl(["annotate", "helmrelease", "a", "-n", &ns, "stage=done"]).ok();
    let tree = cozyhr(&["tree", "b", "-n", &ns, "-o", "json"]).ok().json();
    let waiting = tree.pointer("/release/waitingOn").cloned().unwrap_or_default();
    assert!(!waiting.to_string().contains("\"a\""), "tree: b waits on nothing now: {tree}");
    let status = cozyhr(&["status", "b", "-n", &ns]).ok();
    assert!(status.stdout.contains("readyExpr is true"), "{}", status.stdout);
    wait_hr_ready(&ns, "b", READY_TIMEOUT);
}
