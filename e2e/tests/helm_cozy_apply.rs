//! `helm cozy apply` and `helm cozy delete` end to end (issue 5), under the real Helm 3 and Helm 4 with the
//! plugin installed from the checkout, against the real kube-apiserver and the real helm-controller of
//! `scripts/cluster.sh`. What is proved is the fidelity contract: the status `helm cozy apply` writes is
//! accepted by helm-controller as its own (dependents proceed, and a resumed release is left alone), failures
//! and interruptions leave the HelmRelease suspended with a status that says what happened, and `delete`
//! keeps Flux from reinstalling.
//!
//! Every scenario runs once per Helm major version, each in its own namespaces.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use cozyhr_e2e::{
    Chart, Helm, LEGACY, Run, apply, children, condition, controller_log, cozy_home, dir_entries, eventually, get_json,
    helm_release_secrets, helm_tests, helmrelease, kubectl, namespace, resume_without_an_upgrade, running,
    wait_hr_ready,
};
use serde_json::Value;

const READY_TIMEOUT: Duration = Duration::from_secs(120);

/// `helm cozy ARGS... -C CHART -n NS` through the real Helm's plugin dispatch.
fn cozy(helm: Helm, chart: &Chart, ns: &str, args: &[&str]) -> Run {
    let mut c = cozy_home(helm).command();
    c.arg("cozy").args(args).arg("-C").arg(chart.path()).args(["-n", ns]);
    cozyhr_e2e::run(c)
}

/// `kubectl cozyhr ARGS...` through kubectl's plugin dispatch.
fn cozyhr(args: &[&str]) -> Run {
    kubectl(std::iter::once("cozyhr").chain(args.iter().copied()))
}

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  message: {{ .Values.message | quote }}\n";

/// The chart the HelmReleases point at (published as v0.1.0), and the developer's working copy of it.
fn demo_chart() -> Chart {
    Chart::new("demo", "0.1.0", "message: hello\n", &[("cm.yaml", CM)])
}

/// The local change a developer tests: one more key in the ConfigMap.
fn edit_locally(chart: &Chart) {
    chart.write("templates/cm.yaml", &format!("{CM}  edited: {{{{ printf \"local-%s\" .Values.message | quote }}}}\n"));
}

fn hr(ns: &str, name: &str) -> Value {
    get_json("helmrelease", ns, name).unwrap_or_else(|| panic!("HelmRelease {ns}/{name} is missing"))
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or_default()
}

fn suspended(obj: &Value) -> bool {
    obj.pointer("/spec/suspend").and_then(Value::as_bool).unwrap_or(false)
}

fn configmap(ns: &str, name: &str) -> Option<Value> {
    get_json("configmap", ns, name)
}

/// Helm release Secrets by name → their `status` and `version` labels.
fn release_states(ns: &str, release: &str) -> BTreeMap<String, (String, String)> {
    helm_release_secrets(ns, release)
        .into_iter()
        .map(|(name, labels)| (name, (str_at(&labels, "/status").to_string(), str_at(&labels, "/version").to_string())))
        .collect()
}

/// Events recorded for HelmRelease NS/NAME as (reason, reporting controller, message).
fn events(ns: &str, name: &str) -> Vec<(String, String, String)> {
    let selector = format!("involvedObject.kind=HelmRelease,involvedObject.name={name}");
    let list = kubectl(["-n", ns, "get", "events", "--field-selector", &selector, "-o", "json"]).ok().json();
    list["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|e| {
                    let by = e["reportingComponent"]
                        .as_str()
                        .filter(|s| !s.is_empty())
                        .or(e.pointer("/source/component").and_then(Value::as_str))
                        .unwrap_or_default();
                    (str_at(e, "/reason").to_string(), by.to_string(), str_at(e, "/message").to_string())
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The row of `kubectl cozyhr get NAME -n NS`: NAME REVISION SUSPENDED READY, then MESSAGE.
fn get_row(ns: &str, name: &str) -> (Vec<String>, String) {
    let out = cozyhr(&["get", name, "-n", ns]).ok();
    let mut lines = out.stdout.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split_whitespace().collect();
    assert_eq!(header, ["NAME", "REVISION", "SUSPENDED", "READY", "MESSAGE"], "{}", out.stdout);
    let row = lines.next().unwrap_or_else(|| panic!("no row for {name}:\n{}", out.stdout));
    let cells: Vec<String> = row.split_whitespace().map(str::to_string).collect();
    assert!(cells.len() >= 5, "row {row:?}");
    (cells[..4].to_vec(), cells[4..].join(" "))
}

/// Waits until helm-controller has reported the Ready condition `reason` on the HelmRelease.
fn wait_ready_reason(ns: &str, name: &str, reason: &str) -> Value {
    eventually(&format!("HelmRelease {ns}/{name} Ready reason {reason}"), READY_TIMEOUT, || {
        let obj = hr(ns, name);
        match condition(&obj, "Ready") {
            Some((_, r, _)) if r == reason => Ok(obj),
            other => Err(format!("{other:?}")),
        }
    })
}

// ---------------------------------------------------------------------------------------------------
// 1, 3, 5: apply of a local change, diff after it, and resume into Flux without an upgrade

fn apply_local_change_then_resume(helm: Helm) {
    let ns = namespace(&format!("hca-up-{helm:?}").to_lowercase());
    let chart = demo_chart();
    chart.publish("a", &ns);
    apply(&helmrelease(&ns, "a", "a", "values:\n  message: from-hr\n"));
    let installed = wait_hr_ready(&ns, "a", READY_TIMEOUT);
    assert_eq!(str_at(&installed, "/status/history/0/action"), "install", "helm-controller installs v1");
    assert_eq!(release_states(&ns, "a").len(), 1);

    // The developer edits a template: the diff sees it (exit 2), which is what gives exit 0 below meaning.
    // The edit is published too (as CI publishes a merged change): the chart applied is then its source's,
    // which is what makes "nothing to redo" the right answer after resume (tests/chart_sources.rs has
    // helm-controller replace a chart that is not).
    edit_locally(&chart);
    chart.publish("a", &ns);
    let before = cozy(helm, &chart, &ns, &["diff", "a", "--detailed-exitcode"]).code(2);
    assert!(before.stdout.contains("local-from-hr"), "the diff shows the local change:\n{}", before.stdout);

    let out = cozy(helm, &chart, &ns, &["apply", "a"]).ok();
    assert!(out.stderr.contains("suspending helmrelease a"), "apply says it suspends:\n{}", out.stderr);
    assert!(out.stderr.contains(&format!("kubectl cozyhr resume a -n {ns}")), "how to resume:\n{}", out.stderr);

    // 1. The cluster carries the change, made with the HelmRelease's values.
    let cm = configmap(&ns, "a-cm").expect("ConfigMap a-cm");
    assert_eq!(str_at(&cm, "/data/edited"), "local-from-hr", "{cm}");
    assert_eq!(str_at(&cm, "/data/message"), "from-hr", "{cm}");

    let obj = hr(&ns, "a");
    assert!(suspended(&obj), "apply leaves A suspended: {}", obj["spec"]);
    let history = obj.pointer("/status/history").and_then(Value::as_array).expect("status.history");
    assert_eq!(history.len(), 2, "the new snapshot first, helm-controller's install after it: {history:?}");
    assert_eq!(history[0]["version"], 2, "{history:?}");
    assert_eq!(history[0]["action"], "upgrade", "{history:?}");
    assert_eq!(history[0]["status"], "deployed", "{history:?}");
    assert_eq!(history[1]["version"], 1, "{history:?}");
    assert_eq!(history[1]["status"], "superseded", "{history:?}");
    assert_eq!(obj.pointer("/status/observedGeneration"), obj.pointer("/metadata/generation"), "{}", obj["status"]);
    let (ready, _, message) = condition(&obj, "Ready").expect("Ready");
    assert_eq!(ready, "True", "{message}");
    let expected = format!("Helm upgrade succeeded for release {ns}/a.v2 with chart demo@0.1.0");
    assert_eq!(message, expected);
    assert_eq!(condition(&obj, "Released").map(|c| (c.0, c.1)), Some(("True".into(), "UpgradeSucceeded".into())));
    let (cells, row_message) = get_row(&ns, "a");
    assert_eq!(cells, ["a", "0.1.0", "True", "True"], "kubectl cozyhr get a: {row_message}");
    assert_eq!(row_message, expected);
    let secrets = release_states(&ns, "a");
    assert_eq!(
        secrets.values().cloned().collect::<Vec<_>>(),
        [("superseded".to_string(), "1".to_string()), ("deployed".to_string(), "2".to_string())],
        "{secrets:?}"
    );
    assert!(
        events(&ns, "a")
            .iter()
            .any(|(reason, by, m)| reason == "UpgradeSucceeded" && by == "helm-cozy" && *m == expected),
        "an UpgradeSucceeded Event from helm-cozy: {:?}",
        events(&ns, "a")
    );

    // 5. Nothing left to change.
    let after = cozy(helm, &chart, &ns, &["diff", "a", "--detailed-exitcode"]).code(0);
    assert!(!after.stdout.contains("local-from-hr"), "no change is shown after apply:\n{}", after.stdout);

    // 3. Hand back to Flux: helm-controller reconciles and finds the release in sync.
    let labels_before = helm_release_secrets(&ns, "a");
    let digest = str_at(&obj, "/status/history/0/digest").to_string();
    assert!(digest.starts_with("sha256:"), "{digest}");
    let in_sync_before = controller_log(&ns, "a").iter().filter(|m| *m == "release in-sync with desired state").count();
    let actions_before = controller_log(&ns, "a").iter().filter(|m| m.starts_with("running '")).count();
    // helm-controller's own install of revision 1 is logged so: else the check after resume proves nothing.
    assert!(actions_before >= 1, "no Helm action in helm-controller's log:\n{:#?}", controller_log(&ns, "a"));
    cozyhr(&["resume", "a", "-n", &ns, "--timeout", "2m"]).ok();

    let resumed = wait_hr_ready(&ns, "a", READY_TIMEOUT);
    assert!(!suspended(&resumed));
    assert!(
        resumed.pointer("/metadata/generation").and_then(Value::as_i64)
            > obj.pointer("/metadata/generation").and_then(Value::as_i64),
        "resume changes the spec, so helm-controller had a new generation to observe"
    );
    let log = eventually("helm-controller to log that A is in sync", Duration::from_secs(30), || {
        let log = controller_log(&ns, "a");
        let n = log.iter().filter(|m| *m == "release in-sync with desired state").count();
        if n > in_sync_before { Ok(log) } else { Err(format!("{log:#?}")) }
    });
    assert_eq!(
        log.iter().filter(|m| m.starts_with("running '")).count(),
        actions_before,
        "helm-controller ran a Helm action after resume:\n{log:#?}"
    );
    assert_eq!(helm_release_secrets(&ns, "a"), labels_before, "the release Secrets changed after resume");
    assert_eq!(str_at(&resumed, "/status/history/0/digest"), digest, "{}", resumed["status"]);
    assert_eq!(resumed.pointer("/status/history").and_then(Value::as_array).map(Vec::len), Some(2));
    assert_eq!(condition(&resumed, "Ready").map(|c| c.2), Some(expected.clone()), "the Ready message is ours");
    let cm = configmap(&ns, "a-cm").expect("ConfigMap a-cm");
    assert_eq!(str_at(&cm, "/data/edited"), "local-from-hr", "helm-controller reverted the local change: {cm}");
}

helm_tests! {
    apply_of_a_local_change_is_in_sync_for_flux_after_resume => apply_local_change_then_resume;
}

// ---------------------------------------------------------------------------------------------------
// 2: a dependent proceeds right after apply, and helm-controller never touched A

fn dependent_proceeds_after_apply(helm: Helm) {
    let ns = namespace(&format!("hca-dep-{helm:?}").to_lowercase());
    let target = namespace(&format!("hca-dep-{helm:?}-t").to_lowercase());
    let chart = demo_chart();
    chart.publish("demo", &ns);
    // A deploys to another namespace (release name TARGET-a, storage in the HelmRelease's namespace), and
    // helm-controller never installs it.
    apply(&helmrelease(&ns, "a", "demo", &format!("suspend: true\ntargetNamespace: {target}\n")));
    apply(&helmrelease(&ns, "b", "demo", "dependsOn:\n  - name: a\n"));
    let blocked = wait_ready_reason(&ns, "b", "DependencyNotReady");
    assert_eq!(condition(&blocked, "Ready").map(|c| c.0), Some("False".into()));
    assert!(helm_release_secrets(&ns, "b").is_empty(), "B was installed before A");

    let out = cozy(helm, &chart, &ns, &["apply", "a"]).ok();
    let applied = Instant::now();
    assert!(
        out.stderr.contains(&format!("re-check dependent helmrelease {ns}/b")),
        "apply nudges the dependent:\n{}",
        out.stderr
    );
    let b = wait_hr_ready(&ns, "b", Duration::from_secs(15));
    eprintln!("B was Ready {:?} after apply returned", applied.elapsed());
    assert_eq!(str_at(&b, "/status/history/0/action"), "install");
    assert!(configmap(&ns, "b-cm").is_some(), "B's objects exist");

    let release = format!("{target}-a");
    let a = hr(&ns, "a");
    assert!(suspended(&a), "A stays suspended");
    assert_eq!(condition(&a, "Ready").map(|c| c.0), Some("True".into()));
    assert_eq!(a.pointer("/status/observedGeneration"), a.pointer("/metadata/generation"));
    assert_eq!(str_at(&a, "/status/storageNamespace"), ns);
    let history = a.pointer("/status/history").and_then(Value::as_array).expect("history");
    assert_eq!(history.len(), 1, "{history:?}");
    assert_eq!(
        (&history[0]["version"], str_at(&history[0], "/action"), str_at(&history[0], "/namespace")),
        (&Value::from(1), "install", target.as_str()),
        "{history:?}"
    );
    // Helm's storage is where Flux keeps it (the HelmRelease's namespace), not where the objects went.
    assert_eq!(
        release_states(&ns, &release),
        BTreeMap::from([(format!("sh.helm.release.v1.{release}.v1"), ("deployed".to_string(), "1".to_string()))])
    );
    assert!(helm_release_secrets(&target, &release).is_empty(), "release storage left in {target}");
    assert!(configmap(&target, &format!("{release}-cm")).is_some(), "A's ConfigMap in the target namespace");
    // helm-controller saw A only as suspended: it never determined a release state or ran an action.
    let log = controller_log(&ns, "a");
    assert!(!log.is_empty(), "helm-controller never logged A: is the log path right?");
    assert!(log.iter().any(|m| m == "reconciliation is suspended for this object"), "{log:#?}");
    // Besides that, helm-controller only relays the API server's warning about its own finalizer name.
    assert!(
        log.iter().all(|m| m == "reconciliation is suspended for this object" || m.starts_with("metadata.finalizers:")),
        "helm-controller did more than skip the suspended A:\n{log:#?}"
    );
    let evs = events(&ns, "a");
    assert!(evs.iter().any(|(r, by, _)| r == "InstallSucceeded" && by == "helm-cozy"), "{evs:?}");
    assert!(evs.iter().all(|(_, by, _)| by == "helm-cozy"), "events from others on A: {evs:?}");
}

helm_tests! {
    dependent_is_ready_right_after_apply_without_flux_reconciling_it => dependent_proceeds_after_apply;
}

// ---------------------------------------------------------------------------------------------------
// 4: a rejected object

fn failing_apply_keeps_previous_release(helm: Helm) {
    let ns = namespace(&format!("hca-fail-{helm:?}").to_lowercase());
    let chart = demo_chart();
    chart.publish("a", &ns);
    apply(&helmrelease(&ns, "a", "a", ""));
    wait_hr_ready(&ns, "a", READY_TIMEOUT);
    edit_locally(&chart);
    chart.write(
        "templates/bad.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Not_A_Valid_Name\ndata:\n  a: b\n",
    );

    let out = cozy(helm, &chart, &ns, &["apply", "a"]).code(1);
    assert!(out.stderr.contains("Not_A_Valid_Name"), "helm's error reaches the user:\n{}", out.stderr);

    let obj = hr(&ns, "a");
    assert!(suspended(&obj), "A stays suspended after a failed apply");
    let (ready, reason, message) = condition(&obj, "Ready").expect("Ready");
    assert_eq!((ready.as_str(), reason.as_str()), ("False", "UpgradeFailed"), "{message}");
    assert!(message.contains("Not_A_Valid_Name") && message.contains("Invalid value"), "helm's message: {message}");
    assert_eq!(condition(&obj, "Released").map(|c| (c.0, c.1)), Some(("False".into(), "UpgradeFailed".into())));
    assert!(obj.pointer("/status/failures").and_then(Value::as_i64) >= Some(1), "{}", obj["status"]);
    assert!(obj.pointer("/status/upgradeFailures").and_then(Value::as_i64) >= Some(1), "{}", obj["status"]);

    // The release helm-controller installed is still the deployed one, with its objects.
    let secrets = release_states(&ns, "a");
    let deployed: Vec<&String> = secrets.iter().filter(|(_, (s, _))| s == "deployed").map(|(n, _)| n).collect();
    assert_eq!(deployed, [&"sh.helm.release.v1.a.v1".to_string()], "{secrets:?}");
    let cm = configmap(&ns, "a-cm").expect("ConfigMap a-cm");
    assert_eq!(str_at(&cm, "/data/message"), "hello", "{cm}");
    let history = cozy_home(helm).run(["history", "a", "-n", &ns, "-o", "json"]).ok().json();
    let states: Vec<(i64, &str)> = history
        .as_array()
        .expect("helm history is a list")
        .iter()
        .map(|r| (r["revision"].as_i64().unwrap_or_default(), r["status"].as_str().unwrap_or_default()))
        .collect();
    assert_eq!(states.first(), Some(&(1, "deployed")), "helm history: {history}");
}

helm_tests! {
    failing_apply_leaves_a_suspended_with_helms_message_and_the_previous_release_deployed => failing_apply_keeps_previous_release;
}

/// The failure is also an Event on the HelmRelease (issue 5, Build 4), carrying helm's message, also when
/// that message is long: here the API server lists four invalid fields (over 1 KiB of error under both
/// Helm versions; Helm 4 repeats it in a log line), and an Event's note may hold at most 1024 characters.
fn failing_apply_records_a_warning_event(helm: Helm) {
    let ns = namespace(&format!("hca-ev-{helm:?}").to_lowercase());
    let chart = demo_chart();
    chart.publish("a", &ns);
    apply(&helmrelease(&ns, "a", "a", ""));
    wait_hr_ready(&ns, "a", READY_TIMEOUT);
    cozyhr(&["suspend", "a", "-n", &ns]).ok();
    chart.write(
        "templates/bad.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Not_A_Valid_Name\n  labels:\n    bad1: \"-x-\"\n    bad2: \"-y-\"\n    bad3: \"-z-\"\ndata:\n  a: b\n",
    );
    cozy(helm, &chart, &ns, &["apply", "a"]).code(1);
    let obj = hr(&ns, "a");
    let (_, reason, message) = condition(&obj, "Ready").expect("Ready");
    assert_eq!(reason, "UpgradeFailed", "{message}");
    assert!(message.len() > 1024, "the fixture must fail with over 1 KiB of message: {} bytes", message.len());
    let evs = events(&ns, "a");
    let ours =
        evs.iter().find(|(r, by, m)| r == "UpgradeFailed" && by == "helm-cozy" && m.contains("Not_A_Valid_Name"));
    let (_, _, note) =
        ours.unwrap_or_else(|| panic!("no UpgradeFailed Event from helm-cozy with helm's message: {evs:?}"));
    assert!(note.chars().count() <= 1024, "an Event note holds at most 1024 characters: {}", note.chars().count());
}

helm_tests! {
    failing_apply_records_a_warning_event => failing_apply_records_a_warning_event;
}

// ---------------------------------------------------------------------------------------------------
// 6: delete

fn delete_keeps_flux_from_reinstalling(helm: Helm) {
    let ns = namespace(&format!("hca-del-{helm:?}").to_lowercase());
    let chart = demo_chart();
    chart.publish("a", &ns);
    apply(&helmrelease(&ns, "a", "a", ""));
    wait_hr_ready(&ns, "a", READY_TIMEOUT);
    assert_eq!(release_states(&ns, "a").len(), 1);
    assert!(configmap(&ns, "a-cm").is_some());

    let out = cozy(helm, &chart, &ns, &["delete", "a"]).ok();
    assert!(out.stderr.contains("stays suspended"), "{}", out.stderr);
    assert!(suspended(&hr(&ns, "a")), "delete suspends A");
    assert!(helm_release_secrets(&ns, "a").is_empty(), "release Secrets remain after delete");
    assert!(configmap(&ns, "a-cm").is_none(), "the release's objects remain after delete");

    // Make helm-controller look at A now, and give it time to (not) reinstall.
    let token = format!("e2e-{}", std::process::id());
    kubectl([
        "-n",
        &ns,
        "annotate",
        "helmrelease",
        "a",
        "--overwrite",
        &format!("reconcile.fluxcd.io/requestedAt={token}"),
    ])
    .ok();
    eventually("helm-controller to handle the reconcile request", Duration::from_secs(30), || {
        let obj = hr(&ns, "a");
        let handled = str_at(&obj, "/status/lastHandledReconcileAt");
        if handled == token { Ok(()) } else { Err(handled.to_string()) }
    });
    std::thread::sleep(Duration::from_secs(10));
    assert!(helm_release_secrets(&ns, "a").is_empty(), "helm-controller reinstalled A while it was suspended");
    assert!(configmap(&ns, "a-cm").is_none(), "helm-controller recreated A's objects");
    assert!(suspended(&hr(&ns, "a")));

    // Deleting again is a clear message, not a failure.
    let again = cozy(helm, &chart, &ns, &["delete", "a"]).ok();
    assert!(again.stderr.contains("not installed"), "{}", again.stderr);
}

helm_tests! {
    delete_uninstalls_and_flux_does_not_reinstall_while_suspended => delete_keeps_flux_from_reinstalling;
}

/// Deletes HelmRelease NS/NAME as a user would, and waits until it is gone: helm-controller uninstalls
/// its release on the way (it is not suspended), as its deletion does.
fn delete_through_flux(ns: &str, name: &str) {
    kubectl(["-n", ns, "delete", "helmrelease", name, "--wait=true", "--timeout=120s"]).ok();
}

/// Release NS/RELEASE's storage as (status, version) pairs, sorted.
fn storage_states(ns: &str, release: &str) -> Vec<(String, String)> {
    let mut states: Vec<(String, String)> = release_states(ns, release).into_values().collect();
    states.sort();
    states
}

/// `uninstall.keepHistory: true`: `delete` uninstalls and keeps Helm's history, each revision marked
/// `uninstalled`, as helm-controller's own uninstall (its deletion of a HelmRelease) keeps it; a second
/// delete finds nothing to uninstall and leaves the history alone.
fn delete_keeps_history_when_asked(helm: Helm) {
    let ns = namespace(&format!("hca-keep-{helm:?}").to_lowercase());
    let chart = demo_chart();
    chart.publish("a", &ns);
    for name in ["by-flux", "by-cozy"] {
        apply(&helmrelease(&ns, name, "a", "uninstall:\n  keepHistory: true\n"));
        wait_hr_ready(&ns, name, READY_TIMEOUT);
    }
    let out = cozy(helm, &chart, &ns, &["delete", "by-cozy"]).ok();
    assert!(out.stderr.contains("uninstalled, its history kept"), "{}", out.stderr);
    assert!(configmap(&ns, "by-cozy-cm").is_none(), "the release's objects are gone");
    let kept = storage_states(&ns, "by-cozy");
    assert_eq!(kept, [("uninstalled".to_string(), "1".to_string())], "the history is kept, uninstalled");

    // helm-controller, deleting its HelmRelease, keeps the same history.
    delete_through_flux(&ns, "by-flux");
    assert!(configmap(&ns, "by-flux-cm").is_none());
    assert_eq!(storage_states(&ns, "by-flux"), kept, "helm cozy's history against helm-controller's");

    let again = cozy(helm, &chart, &ns, &["delete", "by-cozy"]).ok();
    assert!(again.stderr.contains("not installed (uninstalled, its history kept"), "{}", again.stderr);
    assert_eq!(storage_states(&ns, "by-cozy"), kept, "a second delete leaves the history alone");
}

helm_tests! {
    delete_keeps_helms_history_with_uninstall_keep_history => delete_keeps_history_when_asked;
}

/// A pre-delete hook that needs no Pod (the test ground runs no kubelet): a ConfigMap, which Helm creates
/// when it runs the hook and leaves (no delete policy but the default before-hook-creation).
const PRE_DELETE_CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-goodbye\n  \
     annotations:\n    helm.sh/hook: pre-delete\ndata:\n  said: goodbye\n";

/// `uninstall.disableHooks: true`: `delete` runs no pre-delete hook; without it, the hook runs. The same
/// pair of HelmReleases deleted through helm-controller shows it does the same.
fn delete_runs_hooks_unless_disabled(helm: Helm) {
    let ns = namespace(&format!("hca-hooks-{helm:?}").to_lowercase());
    let chart = demo_chart();
    chart.write("templates/goodbye.yaml", PRE_DELETE_CM);
    chart.publish("a", &ns);
    let quiet = "uninstall:\n  disableHooks: true\n";
    let releases = [("cozy-quiet", quiet), ("cozy-loud", ""), ("flux-quiet", quiet), ("flux-loud", "")];
    for (name, spec) in releases {
        apply(&helmrelease(&ns, name, "a", spec));
    }
    for (name, _) in releases {
        wait_hr_ready(&ns, name, READY_TIMEOUT);
        assert!(configmap(&ns, &format!("{name}-goodbye")).is_none(), "no hook has run for {name} yet");
    }
    for name in ["cozy-quiet", "cozy-loud"] {
        cozy(helm, &chart, &ns, &["delete", name]).ok();
    }
    for name in ["flux-quiet", "flux-loud"] {
        delete_through_flux(&ns, name);
    }
    for (name, spec) in releases {
        assert!(configmap(&ns, &format!("{name}-cm")).is_none(), "{name}'s objects are gone");
        assert!(helm_release_secrets(&ns, name).is_empty(), "{name}'s storage is gone");
        let hook = configmap(&ns, &format!("{name}-goodbye"));
        if spec.is_empty() {
            let hook = hook.unwrap_or_else(|| panic!("the pre-delete hook of {name} ran"));
            assert_eq!(str_at(&hook, "/data/said"), "goodbye");
        } else {
            assert!(hook.is_none(), "no pre-delete hook ran for {name} (spec.uninstall.disableHooks)");
        }
    }
}

helm_tests! {
    delete_runs_no_hooks_with_uninstall_disable_hooks => delete_runs_hooks_unless_disabled;
}

// ---------------------------------------------------------------------------------------------------
// A changed release target

/// One ConfigMap without a namespace in the chart (Helm puts it in the release namespace) and one that
/// names `.Release.Namespace` itself.
const BARE_AND_EXPLICIT: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-bare\n\
     data:\n  a: \"1\"\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-explicit\n  \
     namespace: {{ .Release.Namespace }}\ndata:\n  a: \"1\"\n";

/// A new `targetNamespace`: helm-controller uninstalls the release where it was and installs anew. Read
/// off the real helm-controller first (HelmRelease `by-flux`), then `helm cozy diff` and `apply` of its
/// twin `by-cozy` are held to it: no storage left at the old target, the objects Helm finds there gone
/// (one without a namespace in the manifest is looked for in the new namespace and left, by both), the
/// new release installed and the status naming it; after resume, helm-controller does nothing more.
fn target_namespace_change(helm: Helm) {
    let v = format!("{helm:?}").to_lowercase();
    let (ns, old, new) =
        (namespace(&format!("hca-move-{v}")), namespace(&format!("hca-old-{v}")), namespace(&format!("hca-new-{v}")));
    let chart = Chart::new("demo", "0.1.0", "", &[("cms.yaml", BARE_AND_EXPLICIT)]);
    chart.publish("a", &ns);
    for name in ["by-flux", "by-cozy"] {
        apply(&helmrelease(&ns, name, "a", &format!("targetNamespace: {old}\n")));
        wait_hr_ready(&ns, name, READY_TIMEOUT);
    }
    // helm-controller moves by-flux; by-cozy is suspended in the same write that moves it.
    apply(&helmrelease(&ns, "by-flux", "a", &format!("targetNamespace: {new}\n")));
    apply(&helmrelease(&ns, "by-cozy", "a", &format!("suspend: true\ntargetNamespace: {new}\n")));
    let theirs = eventually("helm-controller to install by-flux anew", READY_TIMEOUT, || {
        let obj = hr(&ns, "by-flux");
        let name = str_at(&obj, "/status/history/0/name");
        if name == format!("{new}-by-flux") && condition(&obj, "Ready").is_some_and(|c| c.0 == "True") {
            Ok(obj)
        } else {
            Err(format!("{name} {:?}", condition(&obj, "Ready")))
        }
    });

    // The plan: the old release's objects Helm finds are removed, the new ones added.
    let plan = cozy(helm, &chart, &ns, &["diff", "by-cozy", "-o", "json", "--detailed-exitcode"]).code(2);
    assert!(plan.stderr.contains("the release target changed (release namespace)"), "{}", plan.stderr);
    let mut changes: Vec<(String, String, String)> = plan.json()["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| (str_at(c, "/action").into(), str_at(c, "/namespace").into(), str_at(c, "/name").into()))
        .collect();
    changes.sort();
    let entry = |a: &str, ns: &str, n: &str| (a.to_string(), ns.to_string(), n.to_string());
    assert_eq!(
        changes,
        [
            entry("add", &new, &format!("{new}-by-cozy-bare")),
            entry("add", &new, &format!("{new}-by-cozy-explicit")),
            entry("remove", &old, &format!("{old}-by-cozy-explicit")),
        ],
        "{}",
        plan.stdout
    );

    let out = cozy(helm, &chart, &ns, &["apply", "by-cozy"]).ok();
    assert!(out.stderr.contains(&format!("uninstalls release {old}/{old}-by-cozy")), "{}", out.stderr);
    assert!(out.stderr.contains(&format!("ConfigMap/{old}-by-cozy-bare")), "the object left is named:\n{}", out.stderr);
    for who in ["by-flux", "by-cozy"] {
        let (was, is) = (format!("{old}-{who}"), format!("{new}-{who}"));
        assert!(helm_release_secrets(&ns, &was).is_empty(), "{who}: no storage left for {was}");
        assert!(helm_release_secrets(&old, &was).is_empty() && helm_release_secrets(&new, &was).is_empty());
        assert!(configmap(&old, &format!("{was}-explicit")).is_none(), "{who}: the old release's object is gone");
        assert!(configmap(&old, &format!("{was}-bare")).is_some(), "{who}: Helm looked in {new} and left it");
        assert_eq!(storage_states(&ns, &is), [("deployed".to_string(), "1".to_string())], "{who}: installed anew");
        assert!(
            configmap(&new, &format!("{is}-bare")).is_some() && configmap(&new, &format!("{is}-explicit")).is_some()
        );
    }

    // The status is the install's, as helm-controller's.
    let ours = hr(&ns, "by-cozy");
    let shape = |obj: &Value, who: &str| {
        let history = obj.pointer("/status/history").and_then(Value::as_array).cloned().unwrap_or_default();
        let h = &history[0];
        let mut keys: Vec<String> = obj["status"].as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default();
        keys.retain(|k| k != "lastHandledReconcileAt");
        (
            history.len(),
            str_at(h, "/name").replace(who, "X"),
            str_at(h, "/namespace").to_string(),
            str_at(h, "/action").to_string(),
            h["version"].clone(),
            str_at(obj, "/status/storageNamespace").to_string(),
            condition(obj, "Ready").map(|c| (c.0, c.1)),
            keys,
        )
    };
    assert_eq!(shape(&ours, "by-cozy"), shape(&theirs, "by-flux"), "helm cozy's status against helm-controller's");
    let uninstalled = format!("Helm uninstall succeeded for release {old}/{old}-by-cozy.v1 with chart demo@0.1.0");
    assert!(
        events(&ns, "by-cozy")
            .iter()
            .any(|(r, by, m)| r == "UninstallSucceeded" && by == "helm-cozy" && *m == uninstalled),
        "{:#?}",
        events(&ns, "by-cozy")
    );
    cozy(helm, &chart, &ns, &["diff", "by-cozy", "--detailed-exitcode"]).ok();
    resume_without_an_upgrade(&ns, "by-cozy");
    assert_eq!(storage_states(&ns, &format!("{new}-by-cozy")), [("deployed".to_string(), "1".to_string())]);
}

helm_tests! {
    a_new_target_namespace_uninstalls_the_old_release_and_installs_anew => target_namespace_change;
}

// ---------------------------------------------------------------------------------------------------
// 7: an interrupted apply

/// Reads a pipe to its end on a thread.
fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = pipe.read_to_string(&mut s);
        s
    })
}

/// Kills the process when the test fails before it exited.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The helm-cozy plugin process that helm `helm_pid` runs, and the helm that this helm-cozy runs.
fn plugin_and_its_helm(helm_pid: u32) -> (u32, u32) {
    let plugin = children(helm_pid)
        .into_iter()
        .find(|(_, comm)| comm == "helm-cozy")
        .unwrap_or_else(|| panic!("no helm-cozy child of helm {helm_pid}: {:?}", children(helm_pid)))
        .0;
    let helm = children(plugin)
        .into_iter()
        .find(|(_, comm)| comm == "helm")
        .unwrap_or_else(|| panic!("helm-cozy {plugin} runs no helm: {:?}", children(plugin)))
        .0;
    (plugin, helm)
}

/// Sends SIGINT to `pid` and waits, at most 60 s, for `child` (`what`) to exit.
fn interrupt_and_wait(child: &mut KillOnDrop, pid: u32, what: &str) -> std::process::ExitStatus {
    let mut kill = std::process::Command::new("kill");
    kill.args(["-INT", &pid.to_string()]);
    cozyhr_e2e::run(kill).ok();
    let start = Instant::now();
    loop {
        if let Some(status) = child.0.try_wait().expect("try_wait") {
            return status;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "{what} did not exit within 60s of SIGINT");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Starts `helm cozy apply a --wait` for a chart with a Deployment (which never becomes ready here: there
/// is no kubelet), with TMPDIR set to `tmp`, and sends SIGINT to helm-cozy (the plugin process helm runs)
/// while helm waits. Returns the result and the pid of the `helm upgrade` that helm-cozy was running.
fn interrupt_apply(helm: Helm, chart: &Chart, ns: &str, tmp: &Path, deployment: (&str, &str)) -> (Run, u32) {
    let mut c = cozy_home(helm).command();
    c.args(["cozy", "apply", "a", "--wait", "--timeout", "2m"])
        .arg("-C")
        .arg(chart.path())
        .args(["-n", ns])
        .env("TMPDIR", tmp)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = KillOnDrop(c.spawn().expect("spawn helm cozy apply"));
    let (out, err) = (drain(child.0.stdout.take().unwrap()), drain(child.0.stderr.take().unwrap()));
    let helm_pid = child.0.id();

    // helm is waiting once the Deployment exists.
    eventually("helm to create the Deployment and wait for it", Duration::from_secs(60), || {
        if let Some(status) = child.0.try_wait().expect("try_wait") {
            return Err(format!("helm cozy apply exited early with {status}"));
        }
        get_json("deployment", deployment.0, deployment.1).map(|_| ()).ok_or_else(|| "no Deployment yet".to_string())
    });
    let (plugin, upgrade) = plugin_and_its_helm(helm_pid);
    let during = dir_entries(tmp);
    assert!(
        during.iter().any(|n| n.starts_with("cozyhr-values-")),
        "the values file is in TMPDIR while helm runs (else the emptiness check below proves nothing): {during:?}"
    );
    std::thread::sleep(Duration::from_secs(2));
    assert!(child.0.try_wait().expect("try_wait").is_none(), "helm cozy apply did not block on --wait");
    let status = interrupt_and_wait(&mut child, plugin, "helm cozy apply");
    let run = Run {
        code: status.code(),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
        line: "helm cozy apply a --wait --timeout 2m".into(),
    };
    (run, upgrade)
}

fn interrupted_apply(helm: Helm) {
    let ns = namespace(&format!("hca-int-{helm:?}").to_lowercase());
    let chart = demo_chart();
    chart.write("templates/deployment.yaml", cozyhr_e2e::DEPLOYMENT);
    chart.publish("a", &ns);
    // Helm's own wait (legacy), so that helm runs while it waits on the Deployment.
    apply(&helmrelease(&ns, "a", "a", &format!("suspend: true\n{LEGACY}")));
    let tmp = tempfile::tempdir().expect("tempdir");

    let (run, upgrade) = interrupt_apply(helm, &chart, &ns, tmp.path(), (&ns, "a-web"));
    assert!(
        run.code.is_some_and(|c| c != 0),
        "an interrupted apply exits non-zero: {:?}\n{}\n{}",
        run.code,
        run.stdout,
        run.stderr
    );
    assert!(run.stderr.contains("interrupted"), "{}", run.stderr);
    eventually("the helm upgrade to be stopped", Duration::from_secs(10), || {
        if running(upgrade) { Err(format!("helm upgrade {upgrade} still runs")) } else { Ok(()) }
    });
    assert_eq!(dir_entries(tmp.path()), Vec::<String>::new(), "temporary files left behind");

    let obj = hr(&ns, "a");
    assert!(suspended(&obj), "A stays suspended after an interrupted apply");
    let (ready, reason, message) = condition(&obj, "Ready").expect("Ready");
    assert_eq!((ready.as_str(), reason.as_str()), ("False", "ApplyInterrupted"), "{message}");
    assert!(message.contains("interrupted by SIGINT"), "{message}");
    let evs = events(&ns, "a");
    assert!(evs.iter().any(|(r, by, _)| r == "ApplyInterrupted" && by == "helm-cozy"), "{evs:?}");
}

helm_tests! {
    interrupted_apply_leaves_a_suspended_saying_so_and_no_temporary_files => interrupted_apply;
}

// After an interruption, Helm's storage must be back where Flux keeps it (the HelmRelease's namespace) also
// when the release deploys to targetNamespace (helm cozy moves it to the release namespace while helm runs).

fn interrupted_apply_restores_storage(helm: Helm) {
    let ns = namespace(&format!("hca-store-{helm:?}").to_lowercase());
    let target = namespace(&format!("hca-store-{helm:?}-t").to_lowercase());
    let release = format!("{target}-a");
    let chart = demo_chart();
    chart.write("templates/deployment.yaml", cozyhr_e2e::DEPLOYMENT);
    chart.publish("a", &ns);
    apply(&helmrelease(&ns, "a", "a", &format!("suspend: true\ntargetNamespace: {target}\n{LEGACY}")));
    let tmp = tempfile::tempdir().expect("tempdir");
    let (run, _) = interrupt_apply(helm, &chart, &ns, tmp.path(), (&target, &format!("{release}-web")));
    assert!(run.code.is_some_and(|c| c != 0), "{:?}\n{}", run.code, run.stderr);
    assert_eq!(condition(&hr(&ns, "a"), "Ready").map(|c| c.1), Some("ApplyInterrupted".into()));
    assert!(
        helm_release_secrets(&target, &release).is_empty(),
        "the interrupted apply left Helm's storage in the target namespace {target}: {:?} (Flux keeps it in {ns}: {:?})",
        release_states(&target, &release),
        release_states(&ns, &release)
    );
    assert_eq!(release_states(&ns, &release).len(), 1, "the release's storage is in {ns}");
}

helm_tests! {
    interrupted_apply_with_target_namespace_leaves_helm_storage_where_flux_keeps_it => interrupted_apply_restores_storage;
}

/// `apply --dry-run` changes nothing: the HelmRelease stays as it is (not even suspended), Helm's storage
/// stays where helm-controller keeps it although the release deploys to targetNamespace, and the live
/// objects keep the installed version; the API server still sees the local change (an invalid object
/// fails the dry run).
fn dry_run_changes_nothing(helm: Helm) {
    let ns = namespace(&format!("hca-dry-{helm:?}").to_lowercase());
    let target = namespace(&format!("hca-dry-{helm:?}-t").to_lowercase());
    let release = format!("{target}-a");
    let chart = demo_chart();
    chart.publish("a", &ns);
    apply(&helmrelease(&ns, "a", "a", &format!("targetNamespace: {target}\n")));
    let before = wait_hr_ready(&ns, "a", READY_TIMEOUT);
    let storage = helm_release_secrets(&ns, &release);
    assert_eq!(storage.len(), 1, "helm-controller installed {release} with its storage in {ns}");
    edit_locally(&chart);
    let run = cozy(helm, &chart, &ns, &["apply", "a", "--dry-run"]).ok();
    assert!(run.stderr.contains("nothing changes"), "{}", run.stderr);
    let after = hr(&ns, "a");
    assert!(!suspended(&after), "a dry run suspended the HelmRelease: {}", after["spec"]);
    assert_eq!(after["metadata"]["generation"], before["metadata"]["generation"]);
    assert_eq!(after["status"], before["status"], "a dry run wrote the HelmRelease's status");
    assert_eq!(helm_release_secrets(&ns, &release), storage, "a dry run changed Helm's storage in {ns}");
    assert!(helm_release_secrets(&target, &release).is_empty(), "a dry run left Helm's storage in {target}");
    let cm = configmap(&target, &format!("{release}-cm")).expect("the installed ConfigMap");
    assert!(cm["data"].get("edited").is_none(), "a dry run changed the live ConfigMap: {cm}");
    chart.write("templates/bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Not_A_Valid_Name\n");
    let bad = cozy(helm, &chart, &ns, &["apply", "a", "--dry-run"]);
    assert_eq!(bad.code, Some(1), "an invalid object fails the dry run:\n{}", bad.stderr);
    assert!(bad.stderr.contains("Not_A_Valid_Name"), "{}", bad.stderr);
    assert!(!suspended(&hr(&ns, "a")));
}

helm_tests! {
    dry_run_apply_changes_nothing => dry_run_changes_nothing;
}

// The interrupted apply says "run helm cozy apply NAME again": that must work.

fn apply_again_after_interrupt(helm: Helm) {
    let ns = namespace(&format!("hca-again-{helm:?}").to_lowercase());
    let chart = demo_chart();
    chart.write("templates/deployment.yaml", cozyhr_e2e::DEPLOYMENT);
    chart.publish("a", &ns);
    // Helm's own wait (legacy), so that helm runs while it waits on the Deployment.
    apply(&helmrelease(&ns, "a", "a", &format!("suspend: true\n{LEGACY}")));
    let tmp = tempfile::tempdir().expect("tempdir");
    let (run, _) = interrupt_apply(helm, &chart, &ns, tmp.path(), (&ns, "a-web"));
    assert!(run.stderr.contains("helm cozy apply a again"), "the advice this test follows:\n{}", run.stderr);

    // Without --wait this time, so the Deployment does not block.
    let again = cozy(helm, &chart, &ns, &["apply", "a"]);
    assert_eq!(
        again.code,
        Some(0),
        "apply after an interrupted apply fails (release storage: {:?}):\n{}",
        release_states(&ns, "a"),
        again.stderr
    );
    let obj = hr(&ns, "a");
    assert_eq!(condition(&obj, "Ready").map(|c| c.0), Some("True".into()), "{}", obj["status"]);
    let states = release_states(&ns, "a");
    assert!(states.values().any(|(status, _)| status == "deployed"), "no deployed release: {states:?}");
}

helm_tests! {
    apply_again_after_an_interrupted_apply_succeeds => apply_again_after_interrupt;
}

/// A values float whose shortest digits are an exact tie (`1748103125955531.25`): Go writes it
/// `1.7481031259555312e+15` (ties to even), and so must the configDigest helm cozy writes into the status,
/// else helm-controller sees other values after resume and upgrades needlessly.
fn float_tie_values_stay_in_sync(helm: Helm) {
    let ns = namespace(&format!("hca-float-{helm:?}").to_lowercase());
    let chart = demo_chart();
    chart.publish("f", &ns);
    apply(&helmrelease(&ns, "f", "f", "values:\n  message: tie\n  ratio: 1748103125955531.25\n"));
    wait_hr_ready(&ns, "f", READY_TIMEOUT);
    let installed = hr(&ns, "f");
    let digest = str_at(&installed, "/status/history/0/configDigest").to_string();
    edit_locally(&chart);
    // Published too: the chart applied is then its source's, so resume has nothing to hand back.
    chart.publish("f", &ns);
    cozy(helm, &chart, &ns, &["apply", "f"]).ok();
    let applied = hr(&ns, "f");
    assert_eq!(str_at(&applied, "/status/history/0/configDigest"), digest, "helm-controller's configDigest");
    resume_without_an_upgrade(&ns, "f");
}

helm_tests! {
    a_float_tie_in_values_keeps_the_release_in_sync_after_resume => float_tie_values_stay_in_sync;
}

// ---------------------------------------------------------------------------------------------------
// An interrupted delete

/// A pre-delete hook Job: without a kubelet it never completes, so `helm uninstall` waits on it.
const PRE_DELETE_JOB: &str = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {{ .Release.Name }}-goodbye\n  \
     annotations:\n    helm.sh/hook: pre-delete\nspec:\n  backoffLimit: 0\n  template:\n    spec:\n      \
     restartPolicy: Never\n      containers:\n        - name: goodbye\n          image: registry.invalid/goodbye:1\n";

/// SIGINT while `helm cozy delete` runs `helm uninstall` of a release whose storage Flux keeps apart from
/// its objects (targetNamespace): helm is stopped, Helm's storage Secrets are put back where
/// helm-controller looks for them, the HelmRelease stays suspended, and the command says so in one line.
fn interrupted_delete(helm: Helm) {
    let v = format!("{helm:?}").to_lowercase();
    let ns = namespace(&format!("hca-del-{v}"));
    let target = namespace(&format!("hca-del-target-{v}"));
    let chart = demo_chart();
    chart.write("templates/job.yaml", PRE_DELETE_JOB);
    chart.publish("a", &ns);
    apply(&helmrelease(&ns, "a", "a", &format!("targetNamespace: {target}\n")));
    wait_hr_ready(&ns, "a", READY_TIMEOUT);
    let release = format!("{target}-a");
    let stored = helm_release_secrets(&ns, &release);
    assert!(!stored.is_empty(), "helm-controller keeps the storage in {ns}");

    let mut c = cozy_home(helm).command();
    c.args(["cozy", "delete", "a", "--timeout", "2m", "-n", &ns]).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = KillOnDrop(c.spawn().expect("spawn helm cozy delete"));
    let (out, err) = (drain(child.0.stdout.take().unwrap()), drain(child.0.stderr.take().unwrap()));
    let helm_pid = child.0.id();
    // helm uninstall waits once the hook Job exists; the storage is in the release namespace meanwhile.
    eventually("helm uninstall to start the pre-delete hook", Duration::from_secs(60), || {
        if let Some(status) = child.0.try_wait().expect("try_wait") {
            return Err(format!("helm cozy delete exited early with {status}"));
        }
        get_json("job", &target, &format!("{release}-goodbye")).map(|_| ()).ok_or_else(|| "no hook Job yet".into())
    });
    assert!(helm_release_secrets(&ns, &release).is_empty(), "the storage is in {target} while helm runs");
    let (plugin, uninstall) = plugin_and_its_helm(helm_pid);
    let status = interrupt_and_wait(&mut child, plugin, "helm cozy delete");
    let (stdout, stderr) = (out.join().unwrap(), err.join().unwrap());
    assert!(
        status.code().is_some_and(|c| c != 0),
        "an interrupted delete exits non-zero: {status}\n{stdout}\n{stderr}"
    );
    let error_lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(error_lines.len(), 1, "{stderr}");
    assert!(error_lines[0].contains("interrupted by SIGINT") && error_lines[0].contains(&ns), "{stderr}");
    eventually("the helm uninstall to be stopped", Duration::from_secs(10), || {
        if running(uninstall) { Err(format!("helm uninstall {uninstall} still runs")) } else { Ok(()) }
    });
    // The same revisions (helm marked the last one uninstalling before its hook: the labels may differ).
    let names = |m: &BTreeMap<String, Value>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&helm_release_secrets(&ns, &release)), names(&stored), "the storage is back in {ns}");
    assert!(helm_release_secrets(&target, &release).is_empty(), "nothing left in {target}");
    assert!(suspended(&hr(&ns, "a")), "the HelmRelease stays suspended");
}

helm_tests! {
    an_interrupted_delete_puts_the_storage_back => interrupted_delete;
}

// ---------------------------------------------------------------------------------------------------
// Helm's release lock: an action helm-controller has in flight, and a release left pending

/// A pre-install hook that never completes here (no kubelet runs its pod): Helm waits on it until its
/// timeout, so helm-controller's install stays in flight that long. Upgrades do not run it.
const PRE_INSTALL_JOB: &str = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {{ .Release.Name }}-setup\n  \
     annotations:\n    helm.sh/hook: pre-install\nspec:\n  backoffLimit: 0\n  template:\n    spec:\n      \
     restartPolicy: Never\n      containers:\n        - name: setup\n          image: registry.invalid/setup:1\n";

/// Suspending does not stop an install helm-controller has begun: `helm cozy apply` says it waits, waits
/// for the install to end (here: to fail on its hook's timeout), then upgrades, and the HelmRelease ends
/// suspended with the upgrade recorded.
fn apply_waits_for_the_controller(helm: Helm) {
    let ns = namespace(&format!("hca-busy-{helm:?}").to_lowercase());
    let chart = demo_chart();
    chart.write("templates/setup.yaml", PRE_INSTALL_JOB);
    chart.publish("a", &ns);
    apply(&helmrelease(&ns, "a", "a", "timeout: 20s\n"));
    eventually("helm-controller's install to wait on its hook", READY_TIMEOUT, || {
        let states = release_states(&ns, "a");
        let running = condition(&hr(&ns, "a"), "Reconciling").is_some_and(|(status, reason, msg)| {
            status == "True" && reason == "Progressing" && msg.starts_with("Running 'install'")
        });
        let pending = states.values().any(|(status, _)| status == "pending-install");
        if running && pending && get_json("job", &ns, "a-setup").is_some() {
            Ok(())
        } else {
            Err(format!("{states:?}"))
        }
    });

    let run = cozy(helm, &chart, &ns, &["apply", "a"]).ok();
    let waiting = run.stderr.find("helm-controller is running its install of release");
    let upgrading = run.stderr.find("helm upgrade");
    assert!(waiting.is_some() && waiting < upgrading, "apply says it waits, before it runs helm:\n{}", run.stderr);
    let states = release_states(&ns, "a");
    let by_version: BTreeMap<&str, &str> = states.values().map(|(s, v)| (v.as_str(), s.as_str())).collect();
    // Helm marks the revision an upgrade replaced superseded, failed or not.
    assert_eq!(by_version, BTreeMap::from([("1", "superseded"), ("2", "deployed")]), "apply upgraded");
    let install_failed = |e: &(String, String, String)| e.0 == "InstallFailed" && e.1 == "helm-controller";
    assert!(
        events(&ns, "a").iter().any(install_failed),
        "helm-controller's install ended (failed on its hook) before apply ran: {:#?}",
        events(&ns, "a")
    );
    let after = hr(&ns, "a");
    assert!(suspended(&after), "the HelmRelease stays suspended");
    let ready = condition(&after, "Ready").expect("Ready");
    assert_eq!((ready.0.as_str(), ready.1.as_str()), ("True", "UpgradeSucceeded"), "{ready:?}");
}

helm_tests! {
    apply_waits_for_an_install_helm_controller_has_in_flight => apply_waits_for_the_controller;
}

/// A pre-upgrade hook only the test's own `helm upgrade` turns on, to hold that upgrade in `pending-upgrade`.
const SLOW_PRE_UPGRADE_JOB: &str = "{{- if .Values.slowUpgrade }}\napiVersion: batch/v1\nkind: Job\nmetadata:\n  \
     name: {{ .Release.Name }}-slow\n  annotations:\n    helm.sh/hook: pre-upgrade\nspec:\n  backoffLimit: 0\n  \
     template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: slow\n          \
     image: registry.invalid/slow:1\n{{- end }}\n";

/// A release left `pending-upgrade` by a helm killed mid-upgrade: `helm cozy apply` unlocks it as
/// helm-controller would (revision marked failed, "Release unlocked from stale 'pending-upgrade' state"),
/// says so, records helm-controller's `PendingRelease` Event, and applies; resumed, Flux does nothing.
/// HelmRelease `a` installed by helm-controller, suspended, then a `helm upgrade` killed with SIGKILL
/// while it waits on a pre-upgrade hook: revision 2 stays `pending-upgrade`, with no helm running.
fn release_left_pending(helm: Helm, prefix: &str) -> (String, Chart) {
    let ns = namespace(&format!("{prefix}-{helm:?}").to_lowercase());
    let chart = demo_chart();
    chart.write("templates/slow.yaml", SLOW_PRE_UPGRADE_JOB);
    chart.publish("a", &ns);
    apply(&helmrelease(&ns, "a", "a", ""));
    wait_hr_ready(&ns, "a", READY_TIMEOUT);
    cozyhr(&["suspend", "a", "-n", &ns]).ok();

    let mut c = cozy_home(helm).command();
    c.args(["upgrade", "a"]).arg(chart.path()).args(["-n", &ns, "--reuse-values", "--set", "slowUpgrade=true"]);
    c.stdout(Stdio::null()).stderr(Stdio::null());
    let mut killed = KillOnDrop(c.spawn().expect("spawn helm upgrade"));
    eventually("helm upgrade to wait on its pre-upgrade hook", Duration::from_secs(60), || {
        let states = release_states(&ns, "a");
        let pending = states.values().any(|(status, version)| status == "pending-upgrade" && version == "2");
        if pending && get_json("job", &ns, "a-slow").is_some() { Ok(()) } else { Err(format!("{states:?}")) }
    });
    killed.0.kill().expect("SIGKILL helm upgrade");
    killed.0.wait().expect("reap helm upgrade");
    (ns, chart)
}

fn apply_unlocks_a_stale_release(helm: Helm) {
    let (ns, chart) = release_left_pending(helm, "hca-lock");
    let run = cozy(helm, &chart, &ns, &["apply", "a"]).ok();
    let unlocked = format!("Unlocked Helm release {ns}/a.v2 with chart demo@0.1.0 in pending-upgrade state");
    assert!(run.stderr.contains(&unlocked), "apply says it unlocked the release:\n{}", run.stderr);
    let states = release_states(&ns, "a");
    let by_version: BTreeMap<&str, &str> = states.values().map(|(s, v)| (v.as_str(), s.as_str())).collect();
    assert_eq!(by_version, BTreeMap::from([("1", "superseded"), ("2", "failed"), ("3", "deployed")]));
    let history = cozy_home(helm).run(["history", "a", "-n", &ns, "-o", "json"]).ok().json();
    let second = history.as_array().into_iter().flatten().find(|r| r["revision"] == 2).expect("revision 2");
    assert_eq!(second["description"], "Release unlocked from stale 'pending-upgrade' state", "{history:#}");
    assert!(
        events(&ns, "a").iter().any(|(reason, _, message)| reason == "PendingRelease" && message == &unlocked),
        "{:#?}",
        events(&ns, "a")
    );
    assert!(suspended(&hr(&ns, "a")));
    resume_without_an_upgrade(&ns, "a");
}

helm_tests! {
    apply_unlocks_a_release_a_killed_helm_left_pending => apply_unlocks_a_stale_release;
}

// ---------------------------------------------------------------------------------------------------
// Handing back: Flux's own chart would replace what apply installed

/// A developer applies a chart whose version the source does not offer (0.2.0 locally, 0.1.0 published):
/// `apply`'s closing hint and `kubectl cozyhr resume` both warn, naming both versions, and the warning is
/// true: resumed, helm-controller upgrades to 0.1.0. With equal versions nothing is said.
fn handback_warns_of_another_chart_version(helm: Helm) {
    let ns = namespace(&format!("hca-ver-{helm:?}").to_lowercase());
    let chart = demo_chart();
    chart.publish("a", &ns);
    apply(&helmrelease(&ns, "a", "a", ""));
    wait_hr_ready(&ns, "a", READY_TIMEOUT);
    edit_locally(&chart);
    let same = cozy(helm, &chart, &ns, &["apply", "a"]).ok();
    assert!(!same.stderr.contains("offers"), "the same chart version is no reason to warn:\n{}", same.stderr);

    chart.write("Chart.yaml", "apiVersion: v2\nname: demo\nversion: 0.2.0\nappVersion: \"1.0\"\ntype: application\n");
    let warning = "runs chart demo@0.2.0, but its source ExternalArtifact";
    let applied = cozy(helm, &chart, &ns, &["apply", "a"]).ok();
    assert!(
        applied.stderr.contains(warning) && applied.stderr.contains("offers 0.1.0"),
        "apply warns before the hand-back:\n{}",
        applied.stderr
    );
    let resumed = cozyhr(&["resume", "a", "-n", &ns, "--timeout", "2m"]).ok();
    assert!(resumed.stderr.contains(warning), "resume warns:\n{}", resumed.stderr);
    let warned_at = resumed.stderr.find(warning);
    assert!(warned_at < resumed.stderr.find("resuming helmrelease"), "the warning comes first:\n{}", resumed.stderr);
    eventually("helm-controller to upgrade to the source's chart", READY_TIMEOUT, || {
        let now = hr(&ns, "a");
        match str_at(&now, "/status/history/0/chartVersion") {
            "0.1.0" => Ok(()),
            other => Err(other.to_string()),
        }
    });
}

helm_tests! {
    handing_back_warns_when_the_source_offers_another_chart_version => handback_warns_of_another_chart_version;
}

/// `helm cozy apply 2>&1 | head -1`: the progress lines meet a closed pipe after the first. The apply
/// neither panics nor stops half-way: it installs, writes the status, and exits 0.
fn apply_with_its_progress_cut_off(helm: Helm) {
    let ns = namespace(&format!("hca-cut-{helm:?}").to_lowercase());
    let chart = demo_chart();
    chart.publish("a", &ns);
    apply(&helmrelease(&ns, "a", "a", "suspend: true\n"));
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let mut c = cozy_home(helm).command();
    c.args(["cozy", "apply", "a", "-n", &ns]).arg("-C").arg(chart.path());
    c.stdout(writer.try_clone().expect("pipe")).stderr(writer);
    let status = c.status().expect("run helm cozy apply");
    assert!(status.success(), "helm cozy apply with its output cut off: {status}");
    let after = hr(&ns, "a");
    let ready = condition(&after, "Ready").expect("Ready");
    assert_eq!((ready.0.as_str(), ready.1.as_str()), ("True", "InstallSucceeded"), "{ready:?}");
    assert_eq!(release_states(&ns, "a").values().map(|(s, _)| s.as_str()).collect::<Vec<_>>(), ["deployed"]);
}

helm_tests! {
    apply_finishes_when_its_output_is_cut_off => apply_with_its_progress_cut_off;
}

/// Every command that prints what it read from the cluster, its output into a pipe whose reader is gone:
/// exit 0 and nothing on stderr, as kubectl and helm end (`helm cozy show | head -1`).
fn cluster_output_into_a_closed_pipe(helm: Helm) {
    let ns = namespace(&format!("hca-pipe-{helm:?}").to_lowercase());
    let chart = demo_chart();
    chart.publish("a", &ns);
    apply(&helmrelease(&ns, "a", "a", "values:\n  message: from-hr\n"));
    wait_hr_ready(&ns, "a", READY_TIMEOUT);
    edit_locally(&chart);
    let helm_cozy: &[&[&str]] =
        &[&["show", "a"], &["values", "a", "--sources"], &["diff", "a"], &["diff", "a", "-o", "json"]];
    for args in helm_cozy {
        let mut c = cozy_home(helm).command();
        c.arg("cozy").args(*args).arg("-C").arg(chart.path()).args(["-n", &ns]);
        let (status, stderr) = cozyhr_e2e::into_closed_pipe(c);
        assert!(status.success() && stderr.is_empty(), "helm cozy {args:?} into a closed pipe: {status}\n{stderr}");
    }
    let kubectl_cozyhr: &[&[&str]] = &[&["get", "-A"], &["get", "a", "-o", "yaml"], &["status", "a"]];
    for args in kubectl_cozyhr {
        let mut c = cozyhr_e2e::command(&cozyhr_e2e::env().kubectl);
        c.arg("cozyhr").args(*args).args(["-n", &ns]);
        let (status, stderr) = cozyhr_e2e::into_closed_pipe(c);
        assert!(
            status.success() && stderr.is_empty(),
            "kubectl cozyhr {args:?} into a closed pipe: {status}\n{stderr}"
        );
    }
}

helm_tests! {
    cluster_output_into_a_closed_pipe_ends_quietly => cluster_output_into_a_closed_pipe;
}

/// `helm cozy delete` of a release a killed helm left `pending-upgrade`: unlocked first (and said so), then
/// uninstalled; the HelmRelease stays suspended.
fn delete_unlocks_a_stale_release(helm: Helm) {
    let (ns, chart) = release_left_pending(helm, "hca-dlock");
    let run = cozy(helm, &chart, &ns, &["delete", "a"]).ok();
    let unlocked = format!("Unlocked Helm release {ns}/a.v2 with chart demo@0.1.0 in pending-upgrade state");
    assert!(run.stderr.contains(&unlocked), "delete says it unlocked the release:\n{}", run.stderr);
    assert!(run.stderr.contains("release a uninstalled"), "{}", run.stderr);
    assert!(release_states(&ns, "a").is_empty(), "the release is gone: {:?}", release_states(&ns, "a"));
    assert!(suspended(&hr(&ns, "a")), "the HelmRelease stays suspended");
}

helm_tests! {
    delete_unlocks_a_release_a_killed_helm_left_pending => delete_unlocks_a_stale_release;
}
