//! The API server lost in the middle of an apply (issue 25): stopped while helm upgrades a release with
//! targetNamespace (its storage moved to the target namespace meanwhile), started again on the same data.
//! The apply exits 1 with one clear line; the next apply finishes the job (the storage put back, the
//! pending revision unlocked as helm-controller unlocks it) and writes an honest status; nothing is lost.
//!
//! One test binary of its own, with one test, run after the others (cargo runs test binaries one after
//! another, by name): stopping the API server would fail any test running beside it.

use std::process::Stdio;
use std::time::{Duration, Instant};

use cozyhr_e2e::{
    Chart, Helm, apply, cozy, env, eventually, get_json, helm_release_secrets, helmrelease, namespace, run,
    wait_hr_ready,
};
use serde_json::Value;

const READY_TIMEOUT: Duration = Duration::from_secs(180);

fn api_server(what: &str) {
    let mut c = cozyhr_e2e::command(env().repo.join("scripts/cluster.sh"));
    c.args(["apiserver", what]);
    run(c).ok();
}

fn lost_and_back(helm: Helm) {
    let ns = namespace(&format!("lost-{helm:?}").to_lowercase());
    let target = namespace(&format!("lost-t-{helm:?}").to_lowercase());
    let chart = Chart::new(
        "lost",
        "0.1.0",
        "message: one\n",
        &[
            (
                "cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  message: {{ .Values.message | quote }}\n",
            ),
            ("deployment.yaml", cozyhr_e2e::DEPLOYMENT),
        ],
    );
    chart.publish("lost", &ns);
    // Helm's own wait (legacy), so that helm runs while it waits on the Deployment.
    let legacy = cozyhr_e2e::LEGACY;
    apply(&helmrelease(&ns, "lost", "lost", &format!("targetNamespace: {target}\n{legacy}")));
    wait_hr_ready(&ns, "lost", READY_TIMEOUT);
    let release = format!("{target}-lost");

    // apply --wait blocks on the Deployment (no kubelet here); the API server goes away meanwhile.
    let mut c = cozyhr_e2e::cozy_home(helm).command();
    c.args(["cozy", "apply", "lost", "--wait", "--timeout", "30s", "--set", "message=two", "-C"])
        .arg(chart.path())
        .args(["-n", &ns])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = c.spawn().expect("start helm cozy apply");
    eventually("helm upgrade to wait on the Deployment", Duration::from_secs(60), || {
        let moved = !helm_release_secrets(&target, &release).is_empty();
        let waiting = get_json("deployment", &target, &format!("{release}-web")).is_some();
        if moved && waiting { Ok(()) } else { Err(format!("moved {moved} waiting {waiting}")) }
    });
    api_server("stop");
    let started = Instant::now();
    let out = child.wait_with_output().expect("wait for helm cozy apply");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    api_server("start");
    assert!(started.elapsed() < Duration::from_secs(150), "apply gave up in time");
    assert_eq!(out.status.code(), Some(1), "{helm:?}: the lost apply exits 1\n{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "one error line:\n{stderr}");
    assert!(errors[0].contains("cannot reach"), "it says the API server could not be reached: {}", errors[0]);

    // Back: the next apply finishes the job.
    eventually("the API server to answer", Duration::from_secs(60), || {
        get_json("helmrelease", &ns, "lost").map(|_| ()).ok_or_else(|| "no answer".to_string())
    });
    let next = cozy(helm, chart.path(), &ns, &["apply", "lost"]).ok();
    assert!(
        helm_release_secrets(&target, &release).is_empty(),
        "the storage is back where Flux keeps it:\n{}",
        next.stderr
    );
    assert!(!helm_release_secrets(&ns, &release).is_empty(), "nothing of the storage was lost");
    let hr = get_json("helmrelease", &ns, "lost").expect("the HelmRelease");
    assert_eq!(hr.pointer("/spec/suspend").and_then(Value::as_bool), Some(true), "still suspended");
    let history = hr.pointer("/status/history").and_then(Value::as_array).cloned().unwrap_or_default();
    assert_eq!(history.first().map(|s| s["action"].clone()), Some(serde_json::json!("upgrade")), "{history:?}");
    assert_eq!(history.first().map(|s| s["status"].clone()), Some(serde_json::json!("deployed")), "{history:?}");
    // helm-controller's install stays; the upgrade superseded it, so its snapshot is rewritten as
    // helm-controller's observer rewrites a snapshot (ObservedToSnapshot: no action).
    assert!(
        history.iter().any(|s| s["version"] == 1 && s["status"] == "superseded" && s.get("action").is_none()),
        "helm-controller's install stays, superseded: {history:?}"
    );
    let (ready, _, message) = cozyhr_e2e::condition(&hr, "Ready").expect("Ready");
    assert_eq!(ready, "True", "an honest status: {message}");
    let cm = get_json("configmap", &target, &format!("{release}-cm")).expect("the ConfigMap");
    assert_eq!(cm["data"]["message"], "one", "the next apply installed its own values: {cm}");
}

#[test]
fn an_apply_that_loses_the_api_server_is_finished_by_the_next() {
    lost_and_back(Helm::V4);
    lost_and_back(Helm::V3);
}
