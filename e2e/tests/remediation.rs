//! When a chart fails or is tested (issues 44 and 53): `helm cozy apply` runs the chart's tests and the
//! remediations and retries helm-controller would run, writes the status helm-controller writes for
//! them, and after the hand-back helm-controller keeps that history and does what resume says. Against
//! the real helm-controller of the Flux the test ground runs (2.9 and, in a second pass, 2.8), with Helm 3 and
//! Helm 4; test hook Pods end as the kubelet stand-in of the test ground says
//! (`cozyhr.test/phase`, docs/test-ground.md).
//!
//! - `spec.test.enable`: apply tests the new revision (its `testHooks`, `TestSuccess` naming it), and
//!   helm-controller, resumed, runs nothing; with `--skip-tests` the status claims no test and resume says
//!   helm-controller ran them;
//! - a failing test with `test.ignoreFailures`: left deployed;
//! - an upgrade the API server rejects under `RetryOnFailure`: left as it is;
//! - the whole retry cycle, as twins: the same failing chart through helm-controller alone and through
//!   `apply` ends with the same conditions, counters, history, storage and objects (a rejected install, a
//!   rejected upgrade, a failing test, each with retries: 1; a rejected upgrade with retries: 2; a failed
//!   wait with retries: 2, and one with `cleanupOnFail`); `retries: -1` and `--keep-failed` stop at the
//!   first failure, with no `Reconciling` left where nothing retries.

use std::time::Duration;

use cozyhr_e2e::{
    Chart, Helm, Run, apply, condition, controller_log, cozy, eventually, get_json, helm_release_secrets,
    helm_revision, helm_tests, kubectl, namespace, resume_without_an_upgrade, wait_hr_ready,
};
use serde_json::Value;

const TIMEOUT: Duration = Duration::from_secs(180);

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  \
                  message: {{ .Values.message | quote }}\n";

/// A ConfigMap the API server refuses (its name is not a DNS subdomain), rendered when `.Values.broken`.
const REJECTED: &str = "{{- if .Values.broken }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Not_A_Valid_Name\n\
                        data:\n  a: b\n{{- end }}\n";

/// A test hook Pod that ends as `.Values.testPhase` says (the kubelet stand-in reads the annotation).
const TEST_POD: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Release.Name }}-test\n  annotations:\n    \
                        helm.sh/hook: test\n    cozyhr.test/phase: {{ .Values.testPhase | quote }}\nspec:\n  \
                        restartPolicy: Never\n  containers:\n    - name: check\n      image: registry.invalid/check:1\n";

/// A ConfigMap whose data cannot change (`immutable`), rendered when `.Values.fixed`: an upgrade that
/// changes `.Values.message` is rejected by the API server, a new install is not.
const IMMUTABLE: &str = "{{- if .Values.fixed }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-fixed\n\
                         immutable: true\ndata:\n  message: {{ .Values.message | quote }}\n{{- end }}\n";

/// A Deployment that never becomes ready (no Pod runs on the test ground), named `.Values.deploy` after
/// the release, rendered when it is set.
const NEVER_READY: &str = "{{- with .Values.deploy }}\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ $.Release.Name }}-{{ . }}\n\
                           spec:\n  replicas: 1\n  selector:\n    matchLabels: {app: {{ . }}}\n  template:\n    metadata:\n      \
                           labels: {app: {{ . }}}\n    spec:\n      containers:\n        - {name: web, image: registry.invalid/web:1}\n\
                           {{- end }}\n";

/// The chart the HelmReleases point at (published as it is written here), and the developer's working
/// copy of it.
fn chart() -> Chart {
    let chart = Chart::new(
        "checked",
        "0.1.0",
        "message: hello\ntestPhase: Succeeded\nbroken: false\n",
        &[("cm.yaml", CM), ("rejected.yaml", REJECTED), ("immutable.yaml", IMMUTABLE), ("web.yaml", NEVER_READY)],
    );
    chart.write("templates/tests/test.yaml", TEST_POD);
    chart
}

/// A HelmRelease of ExternalArtifact `artifact`, with `install`, `upgrade` and the rest of the spec as
/// given (each a YAML block, indented here). The install and the upgrade do not wait unless their block
/// sets `disableWait` itself.
fn helmrelease(ns: &str, name: &str, install: &str, upgrade: &str, rest: &str) -> String {
    let indent = |block: &str, by: &str| block.lines().map(|l| format!("{by}{l}\n")).collect::<String>();
    let action = |block: &str| {
        let wait = if block.contains("disableWait:") { "" } else { "disableWait: true\n" };
        indent(&format!("{wait}{block}"), "    ")
    };
    format!(
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: {name}\n  namespace: {ns}\nspec:\n  \
         interval: 1h\n  chartRef:\n    kind: ExternalArtifact\n    name: checked\n  install:\n{}  upgrade:\n{}{}",
        action(install),
        action(upgrade),
        indent(rest, "  ")
    )
}

fn hr(ns: &str, name: &str) -> Value {
    get_json("helmrelease", ns, name).unwrap_or_else(|| panic!("HelmRelease {ns}/{name} is missing"))
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or_default()
}

/// `status.history` as (version, status, action).
fn history(obj: &Value) -> Vec<(i64, String, String)> {
    obj.pointer("/status/history")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|s| {
                    (
                        s["version"].as_i64().unwrap_or_default(),
                        str_at(s, "/status").to_string(),
                        str_at(s, "/action").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn entry(version: i64, status: &str, action: &str) -> (i64, String, String) {
    (version, status.to_string(), action.to_string())
}

/// `status.history[0].testHooks` as (name, phase).
fn test_hooks(obj: &Value) -> Vec<(String, String)> {
    obj.pointer("/status/history/0/testHooks")
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.clone(), str_at(v, "/phase").to_string())).collect())
        .unwrap_or_default()
}

/// Release NS/NAME's storage as (version, status), by version.
fn storage(ns: &str, name: &str) -> Vec<(i64, String)> {
    let mut states: Vec<(i64, String)> = helm_release_secrets(ns, name)
        .values()
        .map(|labels| (str_at(labels, "/version").parse().unwrap_or_default(), str_at(labels, "/status").to_string()))
        .collect();
    states.sort();
    states
}

fn stored(list: &[(i64, &str)]) -> Vec<(i64, String)> {
    list.iter().map(|(v, s)| (*v, s.to_string())).collect()
}

/// (status, reason) of condition `type_`, None when it is not set.
fn cond(obj: &Value, type_: &str) -> Option<(String, String)> {
    condition(obj, type_).map(|(s, r, _)| (s, r))
}

fn is(status: &str, reason: &str) -> Option<(String, String)> {
    Some((status.to_string(), reason.to_string()))
}

fn counter(obj: &Value, name: &str) -> i64 {
    obj.pointer(&format!("/status/{name}")).and_then(Value::as_i64).unwrap_or_default()
}

/// The Helm actions helm-controller ran for NS/NAME, from its log (`running 'rollback' action ...`).
fn actions_run(ns: &str, name: &str) -> Vec<String> {
    controller_log(ns, name)
        .iter()
        .filter_map(|m| m.strip_prefix("running '").and_then(|r| r.split('\'').next()).map(str::to_string))
        .collect()
}

/// Installs HelmRelease NS/app through helm-controller and waits until it is Ready, then suspends it (the
/// developer's next apply is held to the same spec).
fn installed_by_flux(ns: &str, install: &str, upgrade: &str, rest: &str) {
    installed_by_flux_from(chart(), ns, install, upgrade, rest);
}

/// [`installed_by_flux`] with `first` as the chart.
fn installed_by_flux_from(first: Chart, ns: &str, install: &str, upgrade: &str, rest: &str) {
    first.publish("checked", ns);
    apply(&helmrelease(ns, "app", install, upgrade, rest));
    let obj = wait_hr_ready(ns, "app", TIMEOUT);
    assert_eq!(helm_revision(ns, "app"), 1, "helm-controller installed revision 1: {obj:#}");
    apply(&helmrelease(ns, "app", install, upgrade, &format!("suspend: true\n{rest}")));
}

/// `kubectl cozyhr resume app -n NS`, returning what it printed.
fn resume(ns: &str) -> Run {
    kubectl(["cozyhr", "resume", "app", "-n", ns, "--timeout", "2m"]).ok()
}

// ---------------------------------------------------------------------------------------------------
// Tests as helm-controller runs them

/// apply tests the new revision as helm-controller would, writes what it found, and helm-controller,
/// resumed, finds nothing to run (no upgrade, no test).
fn apply_tests_the_new_revision(helm: Helm) {
    let ns = namespace(&format!("rem-test-{helm:?}").to_lowercase());
    installed_by_flux(&ns, "", "", "test:\n  enable: true\nvalues:\n  message: from-hr\n");
    let before = hr(&ns, "app");
    assert_eq!(cond(&before, "TestSuccess"), is("True", "TestSucceeded"), "helm-controller tested v1");
    // The HelmRelease asks for other values: the source's chart, upgraded by helm cozy.
    let rest = "suspend: true\ntest:\n  enable: true\nvalues:\n  message: changed\n";
    apply(&helmrelease(&ns, "app", "", "", rest));

    let c = chart();
    let out = cozy(helm, c.path(), &ns, &["apply", "app"]).ok();
    assert!(out.stderr.contains("helm test"), "apply says it runs the tests:\n{}", out.stderr);
    let obj = hr(&ns, "app");
    assert_eq!(history(&obj)[0], entry(2, "deployed", "upgrade"), "{obj:#}");
    assert_eq!(test_hooks(&obj), [("app-test".to_string(), "Succeeded".to_string())], "{obj:#}");
    let (status, reason, message) = condition(&obj, "TestSuccess").expect("TestSuccess");
    assert_eq!((status.as_str(), reason.as_str()), ("True", "TestSucceeded"), "{message}");
    assert!(message.contains(&format!("{ns}/app.v2")), "TestSuccess names the new revision: {message}");
    assert_eq!(cond(&obj, "Ready"), is("True", "TestSucceeded"), "{obj:#}");

    let before = actions_run(&ns, "app");
    resume_without_an_upgrade(&ns, "app");
    assert_eq!(actions_run(&ns, "app"), before, "helm-controller ran nothing after resume (not even a test)");
    assert_eq!(test_hooks(&hr(&ns, "app")), [("app-test".to_string(), "Succeeded".to_string())]);
}

/// `--skip-tests`: said in one line; the status names no test of the new revision and claims no test
/// success for it; resume says helm-controller ran the tests, which it does.
fn skip_tests_leaves_them_to_flux(helm: Helm) {
    let ns = namespace(&format!("rem-skip-{helm:?}").to_lowercase());
    installed_by_flux(&ns, "", "", "test:\n  enable: true\n");
    apply(&helmrelease(&ns, "app", "", "", "suspend: true\ntest:\n  enable: true\nvalues:\n  message: changed\n"));

    let c = chart();
    let out = cozy(helm, c.path(), &ns, &["apply", "app", "--skip-tests"]).ok();
    assert!(out.stderr.contains("tests not run (--skip-tests)"), "{}", out.stderr);
    assert!(!out.stderr.contains("helm test"), "no test runs:\n{}", out.stderr);
    let obj = hr(&ns, "app");
    assert_eq!(history(&obj)[0], entry(2, "deployed", "upgrade"), "{obj:#}");
    assert!(test_hooks(&obj).is_empty(), "no test recorded for v2: {obj:#}");
    assert_ne!(cond(&obj, "TestSuccess").map(|c| c.0), Some("True".to_string()), "no test success claimed: {obj:#}");
    assert_ne!(cond(&obj, "Ready").map(|c| c.1), Some("TestSucceeded".to_string()), "{obj:#}");

    let resumed = resume(&ns);
    let said =
        format!("helm-controller ran the tests of release {ns}/app.v2 and made no new revision: app-test Succeeded");
    assert!(resumed.stderr.contains(&said), "resume says what helm-controller ran:\n{}", resumed.stderr);
    let obj = wait_hr_ready(&ns, "app", TIMEOUT);
    assert_eq!(helm_revision(&ns, "app"), 2);
    assert_eq!(test_hooks(&obj), [("app-test".to_string(), "Succeeded".to_string())], "{obj:#}");
}

/// `test.ignoreFailures`: the failing test is recorded and the release stays as it is.
fn ignored_test_failure_keeps_the_release(helm: Helm) {
    let ns = namespace(&format!("rem-tign-{helm:?}").to_lowercase());
    let rest = "test:\n  enable: true\n  ignoreFailures: true\n";
    installed_by_flux(&ns, "", "remediation:\n  retries: 1\n", rest);
    let c = chart();
    c.write("values.yaml", "message: edited\ntestPhase: Failed\nbroken: false\n");

    let out = cozy(helm, c.path(), &ns, &["apply", "app"]).ok();
    assert!(!out.stderr.contains("rolling back"), "{}", out.stderr);
    assert_eq!(storage(&ns, "app"), stored(&[(1, "superseded"), (2, "deployed")]));
    let obj = hr(&ns, "app");
    assert_eq!(history(&obj)[0], entry(2, "deployed", "upgrade"), "{obj:#}");
    assert_eq!(test_hooks(&obj), [("app-test".to_string(), "Failed".to_string())], "{obj:#}");
    assert_eq!(cond(&obj, "TestSuccess"), is("False", "TestFailed"), "{obj:#}");
    assert_eq!(cond(&obj, "Ready").map(|c| c.0), Some("True".to_string()), "ignored, so Ready: {obj:#}");
    assert!(cond(&obj, "Remediated").is_none(), "{obj:#}");
}

helm_tests! {
    apply_tests_the_new_revision_and_helm_controller_runs_nothing_after_resume => apply_tests_the_new_revision;
    skip_tests_claims_no_test_and_resume_says_helm_controller_ran_them => skip_tests_leaves_them_to_flux;
    a_failing_test_with_ignore_failures_stays_deployed => ignored_test_failure_keeps_the_release;
}

// ---------------------------------------------------------------------------------------------------
// A rejected upgrade, a failed install

/// `RetryOnFailure`: no remediation; the failed revision stays, said; resumed, helm-controller upgrades
/// it again (its retry), rolls nothing back.
fn retry_on_failure_leaves_it(helm: Helm) {
    let ns = namespace(&format!("rem-retry-{helm:?}").to_lowercase());
    installed_by_flux(&ns, "", "strategy:\n  name: RetryOnFailure\n  retryInterval: 1m\n", "");
    let c = chart();
    c.write("values.yaml", "message: edited\ntestPhase: Succeeded\nbroken: true\n");

    let out = cozy(helm, c.path(), &ns, &["apply", "app"]).code(1);
    assert!(!out.stderr.contains("rolling back"), "{}", out.stderr);
    assert!(out.stderr.contains("RetryOnFailure"), "what comes on resume is said:\n{}", out.stderr);
    // A failed upgrade leaves the release before it deployed, written back by Helm (`recordRelease`), so
    // helm-controller's observer rewrites its snapshot without an action.
    assert_eq!(storage(&ns, "app"), stored(&[(1, "deployed"), (2, "failed")]));
    let obj = hr(&ns, "app");
    assert_eq!(history(&obj), [entry(2, "failed", "upgrade"), entry(1, "deployed", "")], "{obj:#}");
    assert!(cond(&obj, "Remediated").is_none(), "{obj:#}");
    assert_eq!(cond(&obj, "Ready"), is("False", "UpgradeFailed"), "{obj:#}");

    let before = actions_run(&ns, "app");
    let resumed = resume(&ns);
    assert!(resumed.stderr.contains(&format!("ran a Helm upgrade: release {ns}/app.v3")), "{}", resumed.stderr);
    let after = wait_hr_ready(&ns, "app", TIMEOUT);
    let versions: Vec<i64> = history(&after).iter().map(|h| h.0).collect();
    assert_eq!(versions.first(), Some(&3), "{after:#}");
    assert_eq!(actions_run(&ns, "app").split_off(before.len()), ["upgrade"], "its retry, no remediation");
}

helm_tests! {
    a_rejected_upgrade_under_retry_on_failure_is_left_as_it_is => retry_on_failure_leaves_it;
}

// ---------------------------------------------------------------------------------------------------
// The whole retry cycle, as twins (issue 53): the same failing chart through helm-controller alone (its
// source publishes it) and through `helm cozy apply` of the chart directory; both end alike.

/// What a failure cycle leaves: the conditions that say how it ended (type, status, reason), the
/// failure counters, the history, the Helm storage, the application's ConfigMap and its Deployments.
#[derive(Debug, PartialEq)]
struct Ended {
    conditions: Vec<(String, String, String)>,
    /// failures, installFailures, upgradeFailures.
    counters: (i64, i64, i64),
    history: Vec<(i64, String, String)>,
    storage: Vec<(i64, String)>,
    message: Option<String>,
    /// The Deployments there, by name.
    deployments: Vec<String>,
}

fn ended(ns: &str) -> Ended {
    let obj = hr(ns, "app");
    let mut conditions: Vec<(String, String, String)> =
        ["Ready", "Released", "Remediated", "Stalled", "Reconciling", "TestSuccess"]
            .into_iter()
            .filter_map(|t| condition(&obj, t).map(|(s, r, _)| (t.to_string(), s, r)))
            .collect();
    conditions.sort();
    Ended {
        conditions,
        counters: (counter(&obj, "failures"), counter(&obj, "installFailures"), counter(&obj, "upgradeFailures")),
        history: history(&obj),
        storage: storage(ns, "app"),
        message: get_json("configmap", ns, "app-cm").map(|cm| str_at(&cm, "/data/message").to_string()),
        deployments: kubectl(["get", "deployments", "-n", ns, "-o", "name"])
            .ok()
            .stdout
            .lines()
            .map(str::to_string)
            .collect(),
    }
}

/// helm-controller alone: HelmRelease app (not suspended) with the chart of `case.values` published;
/// `case.installed` first installs the good chart, then publishes the failing one. Waits until
/// helm-controller stops: Stalled, or Ready on the failing chart's generation.
fn by_flux_alone(ns: &str, case: &Case<'_>) -> Ended {
    let Case { install, upgrade, rest, installed, values, .. } = *case;
    if installed {
        good(case.first).publish("checked", ns);
        apply(&helmrelease(ns, "app", install, upgrade, rest));
        wait_hr_ready(ns, "app", TIMEOUT);
    }
    failing(values).publish("checked", ns);
    if !installed {
        apply(&helmrelease(ns, "app", install, upgrade, rest));
    }
    eventually(&format!("helm-controller to stop on {ns}/app"), TIMEOUT, || {
        let obj = hr(ns, "app");
        let stalled = cond(&obj, "Stalled").is_some_and(|c| c.0 == "True");
        let attempted = str_at(&obj, "/status/lastAttemptedRevisionDigest").to_string();
        let ready_on_new = cond(&obj, "Ready").is_some_and(|c| c.0 == "True") && counter(&obj, "failures") > 0;
        if stalled || ready_on_new {
            Ok(())
        } else {
            Err(format!("{attempted} {:?}", obj.pointer("/status/conditions")))
        }
    });
    ended(ns)
}

/// `helm cozy apply` of the failing chart (`case.values`) onto HelmRelease app, suspended;
/// `case.installed` has helm-controller install the good chart first. Returns what apply printed and
/// what it left.
fn by_apply(helm: Helm, ns: &str, case: &Case<'_>) -> (Run, Ended) {
    let Case { install, upgrade, rest, installed, values, .. } = *case;
    if installed {
        installed_by_flux_from(good(case.first), ns, install, upgrade, rest);
    } else {
        chart().publish("checked", ns);
        apply(&helmrelease(ns, "app", install, upgrade, &format!("suspend: true\n{rest}")));
    }
    let c = failing(values);
    let out = cozy(helm, c.path(), ns, &["apply", "app"]);
    (out, ended(ns))
}

/// One failure, as the twins meet it: the namespaces' prefix, the HelmRelease's `install`, `upgrade` and
/// the rest of its spec, whether helm-controller installed the good chart first (with the values
/// `first`, else its own), the failing chart's values.
#[derive(Default, Clone, Copy)]
struct Case<'a> {
    prefix: &'a str,
    install: &'a str,
    upgrade: &'a str,
    rest: &'a str,
    installed: bool,
    first: &'a str,
    values: &'a str,
}

/// The twins: `case` through helm-controller alone and through `apply`, which must end alike. Returns
/// what apply printed, its namespace and where it ended.
fn twins(helm: Helm, case: Case<'_>) -> (Run, String, Ended) {
    let tag = format!("{helm:?}").to_lowercase();
    let (flux, mine) = (namespace(&format!("{}-hc-{tag}", case.prefix)), namespace(&format!("{}-{tag}", case.prefix)));
    // The twins run side by side: each mostly waits (for helm-controller, for a timeout).
    let (by_flux, (out, by_apply)) = std::thread::scope(|s| {
        let flux = s.spawn(|| by_flux_alone(&flux, &case));
        let mine = by_apply(helm, &mine, &case);
        (flux.join().unwrap_or_else(|e| std::panic::resume_unwind(e)), mine)
    });
    assert_eq!(by_apply, by_flux, "apply ends where helm-controller ends:\n{}", out.stderr);
    (out, mine, by_apply)
}

/// The good chart (0.1.0), with `values` when given.
fn good(values: &str) -> Chart {
    let c = chart();
    if !values.is_empty() {
        c.write("values.yaml", values);
    }
    c
}

/// The chart at 0.2.0 with `values`: a new chart version, which helm-controller upgrades to (the same
/// version with other files would be in sync for it).
fn failing(values: &str) -> Chart {
    let c = chart();
    c.write("Chart.yaml", "apiVersion: v2\nname: checked\nversion: 0.2.0\nappVersion: \"1.0\"\ntype: application\n");
    c.write("values.yaml", values);
    c
}

const BROKEN: &str = "message: edited\ntestPhase: Succeeded\nbroken: true\n";
const TEST_FAILS: &str = "message: edited\ntestPhase: Failed\nbroken: false\n";

/// An install the API server rejects, `install.remediation.retries: 1`: installed twice, uninstalled
/// once, then Stalled "Failed to install after 2 attempt(s)" with the second failure kept.
fn rejected_install_twins(helm: Helm) {
    let install = "remediation:\n  retries: 1\n";
    let (out, mine, by_apply) = twins(helm, Case { prefix: "cyc-inst", install, values: BROKEN, ..Case::default() });
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(by_apply.conditions.contains(&("Stalled".into(), "True".into(), "RetriesExceeded".into())), "{by_apply:?}");
    assert!(out.stderr.contains("attempt 1 failed and was remediated"), "{}", out.stderr);
    let obj = hr(&mine, "app");
    let (_, _, message) = condition(&obj, "Stalled").expect("Stalled");
    assert_eq!(message, "Failed to install after 2 attempt(s)");
}

/// An upgrade the API server rejects, `upgrade.remediation.retries: 1` (rollback): two upgrades, two
/// rollbacks, Stalled "Failed to upgrade after 2 attempt(s)"; the application runs the chart rolled back
/// to. Resumed, helm-controller finds the revision rolled back to in sync (it is the source's chart).
fn rejected_upgrade_twins(helm: Helm) {
    let upgrade = "remediation:\n  retries: 1\n";
    let (out, mine, by_apply) =
        twins(helm, Case { prefix: "cyc-up", upgrade, installed: true, values: BROKEN, ..Case::default() });
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(out.stderr.contains("Not_A_Valid_Name"), "Helm's error reaches the user:\n{}", out.stderr);
    assert_eq!(out.stderr.matches(&format!("rolling back to {mine}/app.v")).count(), 2, "{}", out.stderr);
    assert_eq!(by_apply.message.as_deref(), Some("hello"), "the cluster holds v1's objects again");
    let (_, _, message) = condition(&hr(&mine, "app"), "Stalled").expect("Stalled");
    assert_eq!(message, "Failed to upgrade after 2 attempt(s)");

    let before = actions_run(&mine, "app");
    resume_without_an_upgrade(&mine, "app");
    assert_eq!(actions_run(&mine, "app"), before, "no remediation of its own");
}

/// A test that fails after the upgrade, `upgrade.remediation.retries: 1`: two upgrades, two failed
/// tests, two rollbacks, Stalled.
fn failing_test_twins(helm: Helm) {
    let (upgrade, rest) = ("remediation:\n  retries: 1\n", "test:\n  enable: true\n");
    let (out, _, by_apply) =
        twins(helm, Case { prefix: "cyc-test", upgrade, rest, installed: true, values: TEST_FAILS, ..Case::default() });
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(out.stderr.contains("app-test"), "the failed test is named:\n{}", out.stderr);
    assert_eq!(by_apply.counters.2, 2, "two upgrades counted: {by_apply:?}");
}

/// An upgrade rejected (an immutable ConfigMap's data), `upgrade.remediation: {retries: 1, strategy:
/// uninstall}`: uninstalled, then installed again with the new chart, which runs: Ready, as
/// helm-controller leaves it.
fn uninstall_strategy_twins(helm: Helm) {
    let (upgrade, rest) = ("remediation:\n  retries: 1\n  strategy: uninstall\n", "values:\n  fixed: true\n");
    let edited = "message: edited\ntestPhase: Succeeded\nbroken: false\n";
    let (out, mine, by_apply) =
        twins(helm, Case { prefix: "cyc-uni", upgrade, rest, installed: true, values: edited, ..Case::default() });
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stderr.contains(&format!("uninstalling {mine}/app.v")), "{}", out.stderr);
    assert_eq!(by_apply.message.as_deref(), Some("edited"), "the new chart runs: {by_apply:?}");
    let fixed = get_json("configmap", &mine, "app-fixed").expect("app-fixed");
    assert_eq!(str_at(&fixed, "/data/message"), "edited");
}

/// `retries: -1`: apply remediates once, ends, and says helm-controller would go on without end.
fn endless_retries_end_after_one(helm: Helm) {
    let ns = namespace(&format!("cyc-endless-{helm:?}").to_lowercase());
    let upgrade = "remediation:\n  retries: -1\n";
    let (out, left) = by_apply(helm, &ns, &Case { upgrade, installed: true, values: BROKEN, ..Case::default() });
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert_eq!(out.stderr.matches("rolling back to").count(), 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("upgrade.remediation.retries is -1: helm-controller would remediate and try again without end"),
        "{}",
        out.stderr
    );
    assert_eq!(left.counters, (1, 0, 1), "{left:?}");
    assert!(!left.conditions.iter().any(|c| c.0 == "Stalled"), "{left:?}");
    // Suspended, nothing retries: no Reconciling says something does.
    assert!(!left.conditions.iter().any(|c| c.0 == "Reconciling"), "{left:?}");
}

/// `--keep-failed` stops at the first failure, whatever the retries.
fn keep_failed_stops_at_the_first(helm: Helm) {
    let ns = namespace(&format!("cyc-keep-{helm:?}").to_lowercase());
    installed_by_flux(&ns, "", "remediation:\n  retries: 2\n", "");
    let out = cozy(helm, failing(BROKEN).path(), &ns, &["apply", "app", "--keep-failed"]).code(1);
    assert!(!out.stderr.contains("rolling back"), "{}", out.stderr);
    assert!(!out.stderr.contains("attempt 1 failed"), "{}", out.stderr);
    assert_eq!(storage(&ns, "app"), stored(&[(1, "deployed"), (2, "failed")]));
    let obj = hr(&ns, "app");
    assert_eq!(cond(&obj, "Reconciling"), None, "nothing retries while suspended: {obj:#}");
    assert_eq!(cond(&obj, "Ready"), is("False", "UpgradeFailed"), "{obj:#}");
}

/// An upgrade rejected under `upgrade.remediation.retries: 2` (rollback): three upgrades, three rollbacks,
/// Stalled "Failed to upgrade after 3 attempt(s)"; seven revisions, of which Helm's `maxHistory` (5)
/// keeps five.
fn three_attempts_twins(helm: Helm) {
    let upgrade = "remediation:\n  retries: 2\n";
    let (out, mine, _) =
        twins(helm, Case { prefix: "cyc-three", upgrade, installed: true, values: BROKEN, ..Case::default() });
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert_eq!(out.stderr.matches("rolling back to").count(), 3, "{}", out.stderr);
    assert!(out.stderr.contains("attempt 2 failed and was remediated"), "{}", out.stderr);
    let (_, _, message) = condition(&hr(&mine, "app"), "Stalled").expect("Stalled");
    assert_eq!(message, "Failed to upgrade after 3 attempt(s)");
}

/// The values of an upgrade that adds a Deployment which never becomes ready.
const NEVER_READY_VALUES: &str = "message: edited\ntestPhase: Succeeded\nbroken: false\ndeploy: web\n";

/// An upgrade whose wait fails (a Deployment that never becomes ready, `timeout: 10s`) with
/// `upgrade.cleanupOnFail` and no retries: the Deployment the failed upgrade created is deleted, as
/// Helm's cleanup after its wait deletes it; the ConfigMap it changed keeps its new data; Stalled.
fn cleanup_on_fail_twins(helm: Helm) {
    let (upgrade, rest) = ("disableWait: false\ncleanupOnFail: true\n", "timeout: 10s\n");
    let (out, mine, by_apply) = twins(
        helm,
        Case { prefix: "cyc-clean", upgrade, rest, installed: true, values: NEVER_READY_VALUES, ..Case::default() },
    );
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(by_apply.deployments.is_empty(), "the Deployment the failed upgrade created is gone: {by_apply:?}");
    assert_eq!(by_apply.message.as_deref(), Some("edited"), "what it changed keeps its new data");
    assert!(
        out.stderr.contains(&format!(
            "cleanupOnFail: deleted what the failed upgrade created, as Helm does: apps/Deployment {mine}/app-web"
        )),
        "{}",
        out.stderr
    );
    assert!(by_apply.conditions.contains(&("Stalled".into(), "True".into(), "RetriesExceeded".into())), "{by_apply:?}");

    // Resumed, helm-controller does what apply said: a new upgrade with the source's chart.
    let said =
        "once resumed, the failure counters start over and helm-controller upgrades it again with the source's chart";
    assert!(out.stderr.contains(said), "{}", out.stderr);
    let resumed = resume(&mine);
    assert!(resumed.stderr.contains(&format!("ran a Helm upgrade: release {mine}/app.v3")), "{}", resumed.stderr);
    let after = wait_hr_ready(&mine, "app", TIMEOUT);
    assert_eq!(cond(&after, "Stalled"), None, "{after:#}");
}

/// A rollback whose wait fails, under `rollback.cleanupOnFail`: the good chart runs Deployment app-web
/// (installed without a wait); the upgrade replaces it with app-other, whose wait fails; the rollback
/// brings app-web back, its wait fails too, and Helm's cleanup deletes app-web, which the rollback
/// created. helm-controller then rolls back again and again while the rollback fails (a failed rollback
/// counts against no retries: `upgradeFailures` stays 1), so no end state can be compared: apply stops
/// after the first failed rollback and says so, with the status helm-controller wrote after it.
fn rollback_cleanup(helm: Helm) {
    let (upgrade, rest) =
        ("disableWait: false\nremediation:\n  retries: 1\n", "timeout: 10s\nrollback:\n  cleanupOnFail: true\n");
    let first = "message: hello\ntestPhase: Succeeded\nbroken: false\ndeploy: web\n";
    let values = "message: edited\ntestPhase: Succeeded\nbroken: false\ndeploy: other\n";
    let case = Case { upgrade, rest, installed: true, first, values, ..Case::default() };
    let tag = format!("{helm:?}").to_lowercase();
    let (flux, mine) = (namespace(&format!("cyc-rbclean-hc-{tag}")), namespace(&format!("cyc-rbclean-{tag}")));
    let (out, left) = std::thread::scope(|s| {
        s.spawn(|| {
            // helm-controller alone: a second rollback, the upgrade's failures still one.
            good(first).publish("checked", &flux);
            apply(&helmrelease(&flux, "app", "", upgrade, rest));
            wait_hr_ready(&flux, "app", TIMEOUT);
            failing(values).publish("checked", &flux);
            eventually(&format!("helm-controller to roll {flux}/app back twice"), TIMEOUT, || {
                let rollbacks = actions_run(&flux, "app").iter().filter(|a| *a == "rollback").count();
                let obj = hr(&flux, "app");
                if rollbacks >= 2 {
                    Ok(obj)
                } else {
                    Err(format!("{rollbacks} rollback(s) {:?}", obj.pointer("/status/conditions")))
                }
            });
            let obj = hr(&flux, "app");
            assert_eq!(counter(&obj, "upgradeFailures"), 1, "a failed rollback counts against no retries: {obj:#}");
            assert_eq!(cond(&obj, "Stalled"), None, "{obj:#}");
        });
        by_apply(helm, &mine, &case)
    });
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    let line = format!(
        "cleanupOnFail: deleted what the failed rollback created, as Helm does: apps/Deployment {mine}/app-web"
    );
    assert!(out.stderr.contains(&line), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("the rollback failed: helm-controller would find the release failed and roll it back again"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stderr.matches("rolling back to").count(), 1, "{}", out.stderr);
    assert!(left.deployments.is_empty(), "what the rollback created is gone, and what the upgrade created: {left:?}");
    assert_eq!(left.counters, (2, 0, 1), "the upgrade's failure and the rollback's: {left:?}");
    let conditions: Vec<&str> = left.conditions.iter().map(|c| c.0.as_str()).collect();
    assert!(!conditions.contains(&"Stalled") && !conditions.contains(&"Reconciling"), "{left:?}");
    assert!(left.conditions.contains(&("Remediated".into(), "False".into(), "RollbackFailed".into())), "{left:?}");
}

/// What apply's waits say, once per wait of an upgrade.
const WAITING: &str = "waiting for the release's objects as helm-controller's poller would (timeout 10s)";

/// An upgrade whose wait fails after ten seconds, `upgrade.remediation.retries: 2`: three waits, each
/// failed wait said and followed by a rollback, ending where helm-controller ends; with `--keep-failed`
/// one wait, and the Deployment left for inspection.
fn failed_waits_twins(helm: Helm) {
    let (upgrade, rest) = ("disableWait: false\nremediation:\n  retries: 2\n", "timeout: 10s\n");
    let (out, mine, _) = twins(
        helm,
        Case { prefix: "cyc-wait", upgrade, rest, installed: true, values: NEVER_READY_VALUES, ..Case::default() },
    );
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert_eq!(out.stderr.matches(WAITING).count(), 3, "three waits:\n{}", out.stderr);
    assert_eq!(out.stderr.matches("rolling back to").count(), 3, "{}", out.stderr);
    assert!(out.stderr.contains("attempt 2 failed and was remediated"), "{}", out.stderr);
    // The chart rolled back to is the source's: resumed, helm-controller finds it in sync.
    resume_without_an_upgrade(&mine, "app");

    let kept = namespace(&format!("cyc-wait-keep-{helm:?}").to_lowercase());
    installed_by_flux(&kept, "", upgrade, rest);
    let out = cozy(helm, failing(NEVER_READY_VALUES).path(), &kept, &["apply", "app", "--keep-failed"]).code(1);
    assert_eq!(out.stderr.matches(WAITING).count(), 1, "one wait:\n{}", out.stderr);
    assert!(!out.stderr.contains("rolling back"), "{}", out.stderr);
    assert!(get_json("deployment", &kept, "app-web").is_some(), "kept for inspection");
}

/// An apply that ends Ready after an earlier one stalled leaves no Stalled (nor Reconciling) behind.
fn ready_after_stalled(helm: Helm) {
    let ns = namespace(&format!("cyc-after-{helm:?}").to_lowercase());
    installed_by_flux(&ns, "", "", "");
    cozy(helm, failing(BROKEN).path(), &ns, &["apply", "app"]).code(1);
    assert_eq!(cond(&hr(&ns, "app"), "Stalled"), is("True", "RetriesExceeded"));
    cozy(helm, failing("message: mended\ntestPhase: Succeeded\nbroken: false\n").path(), &ns, &["apply", "app"]).ok();
    let obj = hr(&ns, "app");
    assert_eq!(cond(&obj, "Ready"), is("True", "UpgradeSucceeded"), "{obj:#}");
    assert_eq!(cond(&obj, "Stalled"), None, "{obj:#}");
    assert_eq!(cond(&obj, "Reconciling"), None, "{obj:#}");
}

helm_tests! {
    three_attempts_end_as_helm_controller_ends_them => three_attempts_twins;
    a_failed_wait_with_cleanup_on_fail_ends_as_helm_controller_ends_it => cleanup_on_fail_twins;
    a_failed_rollback_wait_with_cleanup_on_fail_cleans_up_and_stops => rollback_cleanup;
    failed_waits_retry_as_helm_controller_retries_them => failed_waits_twins;
    an_apply_ending_ready_leaves_no_stalled_behind => ready_after_stalled;
}

helm_tests! {
    a_rejected_upgrade_under_the_uninstall_strategy_ends_as_helm_controller_ends_it => uninstall_strategy_twins;
    endless_retries_end_after_one_remediation_and_say_so => endless_retries_end_after_one;
    keep_failed_stops_at_the_first_failure => keep_failed_stops_at_the_first;
    a_rejected_install_ends_as_helm_controller_ends_it => rejected_install_twins;
    a_rejected_upgrade_ends_as_helm_controller_ends_it => rejected_upgrade_twins;
    a_failing_test_ends_as_helm_controller_ends_it => failing_test_twins;
}
