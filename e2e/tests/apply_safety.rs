//! apply that cannot hurt (issue 25), against the real helm-controller, under Helm 3 and Helm 4:
//! - a chart that cannot render, a values file that does not parse, a missing valuesFrom source: each
//!   exits 1 with one `error:` line, and nothing was written anywhere (the HelmRelease, the release's
//!   storage and the objects keep their resourceVersions: not even the suspension was touched);
//! - two applies of one release started a second apart: the second waits for the first's lock;
//! - an apply killed while helm runs, its storage left in the target namespace: the next apply repairs
//!   it first, says so, and records an upgrade with the earlier history.

use std::collections::BTreeMap;
use std::time::Duration;

use cozyhr_e2e::{Chart, Helm, apply, cozy, get_json, helm_tests, helmrelease, kubectl, namespace, wait_hr_ready};

const READY_TIMEOUT: Duration = Duration::from_secs(180);

fn chart() -> Chart {
    Chart::new(
        "safe",
        "0.1.0",
        "message: hello\n",
        &[(
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  message: {{ .Values.message | quote }}\n",
        )],
    )
}

/// Every object of the namespace that apply could write (the HelmRelease, Helm's storage, the release's
/// ConfigMap), by kind and name, with its resourceVersion.
fn versions(ns: &str) -> BTreeMap<String, String> {
    let list = kubectl(["-n", ns, "get", "helmreleases,secrets,configmaps", "-o", "json"]).ok().json();
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            (
                format!(
                    "{} {}",
                    o["kind"].as_str().unwrap_or_default(),
                    o["metadata"]["name"].as_str().unwrap_or_default()
                ),
                o["metadata"]["resourceVersion"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[track_caller]
fn refused_without_a_trace(helm: Helm, chart: &Chart, ns: &str, args: &[&str], what: &str) {
    let before = versions(ns);
    let r = cozy(helm, chart.path(), ns, args);
    assert_eq!(r.code, Some(1), "{helm:?} {what}: exit 1\n{}\n{}", r.stdout, r.stderr);
    let errors: Vec<&str> = r.stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{what}: one error line\n{}", r.stderr);
    assert!(!r.stderr.contains("suspending"), "{what}: nothing was suspended\n{}", r.stderr);
    assert_eq!(versions(ns), before, "{what}: nothing was written");
}

fn bad_input_changes_nothing(helm: Helm) {
    let ns = namespace(&format!("safe-{helm:?}").to_lowercase());
    let chart = chart();
    chart.publish("safe", &ns);
    apply(&helmrelease(&ns, "safe", "safe", ""));
    wait_hr_ready(&ns, "safe", READY_TIMEOUT);
    assert!(get_json("configmap", &ns, "safe-cm").is_some());

    // A template error: helm cannot render the chart.
    let broken = self::chart();
    broken.write("templates/broken.yaml", "value: {{ .Values.missing.deeper }}\n");
    refused_without_a_trace(helm, &broken, &ns, &["apply", "safe"], "a chart that cannot render");

    // A values file that does not parse.
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, "a: [unclosed\n").expect("write");
    let bad = bad.to_string_lossy().into_owned();
    refused_without_a_trace(helm, &chart, &ns, &["apply", "safe", "-f", &bad], "a values file that does not parse");

    // A valuesFrom source that is missing (not optional).
    // (Suspended by the test, so that helm-controller does not fail it meanwhile.)
    let spec = "suspend: true\nvaluesFrom:\n- kind: ConfigMap\n  name: not-there\n";
    apply(&helmrelease(&ns, "safe", "safe", spec));
    refused_without_a_trace(helm, &chart, &ns, &["apply", "safe"], "a missing valuesFrom source");
}

/// Two applies of one release started a second apart, on a 400-object chart: the second waits for the
/// first's lock, says so, and both upgrade in turn.
fn two_applies_take_turns(helm: Helm) {
    let ns = namespace(&format!("turns-{helm:?}").to_lowercase());
    let chart = Chart::new(
        "turns",
        "0.1.0",
        "count: 400\nmessage: one\n",
        &[(
            "cms.yaml",
            "{{- range $i := until (int .Values.count) }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ $.Release.Name }}-{{ $i }}\ndata:\n  message: {{ $.Values.message | quote }}\n{{- end }}\n",
        )],
    );
    chart.publish("turns", &ns);
    apply(&helmrelease(&ns, "turns", "turns", ""));
    let installed = wait_hr_ready(&ns, "turns", READY_TIMEOUT);
    let revision =
        |hr: &serde_json::Value| hr.pointer("/status/history/0/version").and_then(|v| v.as_i64()).unwrap_or(0);
    let first_revision = revision(&installed);

    let start = |message: &str| {
        let mut c = cozyhr_e2e::cozy_home(helm).command();
        c.args(["cozy", "apply", "turns", "--set", &format!("message={message}"), "-C"])
            .arg(chart.path())
            .args(["-n", &ns])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        c.spawn().expect("start helm cozy apply")
    };
    let first = start("two");
    std::thread::sleep(Duration::from_secs(1));
    let second = start("three");
    let (first, second) = (first.wait_with_output().expect("first"), second.wait_with_output().expect("second"));
    let text = |o: &std::process::Output| String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(first.status.success(), "the first apply: {}", text(&first));
    assert!(second.status.success(), "the second apply: {}", text(&second));
    assert!(
        text(&second).contains("waiting for") && text(&second).contains("holds the lock on release"),
        "the second says it waited for the first:\n{}",
        text(&second)
    );
    assert!(!text(&first).contains("waiting for"), "the first did not wait: {}", text(&first));

    let hr = get_json("helmrelease", &ns, "turns").expect("the HelmRelease");
    assert_eq!(revision(&hr), first_revision + 2, "two new revisions: {}", hr["status"]);
    let message = cozyhr_e2e::condition(&hr, "Ready").map(|c| c.2).unwrap_or_default();
    assert!(message.contains(&format!("turns.v{}", first_revision + 2)), "the status names the last: {message}");
    let live = get_json("configmap", &ns, "turns-0").expect("a ConfigMap of the release");
    assert_eq!(live["data"]["message"], "three", "the second apply came last");
    let states = cozyhr_e2e::helm_release_secrets(&ns, "turns");
    let deployed: Vec<&str> =
        states.values().filter(|l| l["status"] == "deployed").filter_map(|l| l["version"].as_str()).collect();
    assert_eq!(deployed, [(first_revision + 2).to_string().as_str()], "{states:?}");
}

/// SIGKILL of apply (helm-cozy and its helm) during helm's upgrade, on a HelmRelease with
/// targetNamespace, whose storage is moved to the target namespace while helm runs: the next apply puts
/// the storage back first and says so, performs an upgrade, and the status keeps the earlier snapshots.
fn killed_apply_is_recovered(helm: Helm) {
    let ns = namespace(&format!("killed-{helm:?}").to_lowercase());
    let target = namespace(&format!("killed-t-{helm:?}").to_lowercase());
    let chart = chart();
    chart.write("templates/deployment.yaml", cozyhr_e2e::DEPLOYMENT);
    chart.publish("safe", &ns);
    // Helm's own wait (legacy), so that helm runs while it waits on the Deployment.
    let legacy = cozyhr_e2e::LEGACY;
    apply(&helmrelease(&ns, "safe", "safe", &format!("targetNamespace: {target}\n{legacy}")));
    wait_hr_ready(&ns, "safe", READY_TIMEOUT);
    let release = format!("{target}-safe");

    // apply --wait blocks on the Deployment (no kubelet here): killed then, with its helm. SIGKILL leaves
    // its temporary files (values, 0600) behind: in a directory of this test's, removed with it.
    let tmp = tempfile::Builder::new().prefix("killed-").tempdir_in(cozyhr_e2e::scratch()).expect("tempdir");
    let mut c = cozyhr_e2e::cozy_home(helm).command();
    c.env("TMPDIR", tmp.path());
    c.args(["cozy", "apply", "safe", "--wait", "--timeout", "5m", "--set", "message=killed", "-C"])
        .arg(chart.path())
        .args(["-n", &ns])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = c.spawn().expect("start helm cozy apply");
    let helm_pid = child.id();
    let (plugin, upgrade) = cozyhr_e2e::eventually("helm upgrade to run", Duration::from_secs(60), || {
        let plugin =
            cozyhr_e2e::children(helm_pid).into_iter().find(|(_, c)| c == "helm-cozy").ok_or("no helm-cozy")?.0;
        // The helm running the upgrade (helm cozy runs other helm commands before it, briefly).
        let upgrade = cozyhr_e2e::children(plugin)
            .into_iter()
            .find(|(pid, c)| c == "helm" && runs_upgrade(*pid))
            .ok_or("no helm upgrade")?
            .0;
        let moved = !cozyhr_e2e::helm_release_secrets(&target, &release).is_empty();
        let waiting = get_json("deployment", &target, &format!("{release}-web")).is_some();
        if moved && waiting { Ok((plugin, upgrade)) } else { Err(format!("moved {moved} waiting {waiting}")) }
    });
    for pid in [upgrade, plugin] {
        let mut kill = std::process::Command::new("kill");
        kill.args(["-KILL", &pid.to_string()]);
        cozyhr_e2e::run(kill).ok();
    }
    let _ = child.wait();
    assert!(
        !cozyhr_e2e::helm_release_secrets(&target, &release).is_empty(),
        "the storage was left in the target namespace"
    );

    let next = cozy(helm, chart.path(), &ns, &["apply", "safe"]).ok();
    assert!(
        next.stderr.contains(&format!("in {target}, left there by an interrupted helm cozy: moved back to {ns}")),
        "{}",
        next.stderr
    );
    assert!(next.stderr.contains("helm upgrade"), "an upgrade stays an upgrade: {}", next.stderr);
    assert!(cozyhr_e2e::helm_release_secrets(&target, &release).is_empty(), "nothing left in the target namespace");
    let hr = get_json("helmrelease", &ns, "safe").expect("the HelmRelease");
    let history = hr.pointer("/status/history").and_then(|h| h.as_array()).cloned().unwrap_or_default();
    assert_eq!(history.first().map(|s| s["action"].clone()), Some(serde_json::json!("upgrade")), "{history:?}");
    // The upgrade superseded it, so its snapshot is rewritten as helm-controller's observer rewrites it.
    assert!(
        history.iter().any(|s| s["version"] == 1 && s["status"] == "superseded"),
        "helm-controller's install stays: {history:?}"
    );
}

/// Whether process `pid` is a `helm upgrade` (its command line).
fn runs_upgrade(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|line| line.split(|b| *b == 0).any(|arg| arg == b"upgrade"))
}

helm_tests! {
    bad_input_changes_nothing => bad_input_changes_nothing;
    two_applies_take_turns => two_applies_take_turns;
    killed_apply_is_recovered => killed_apply_is_recovered;
}
