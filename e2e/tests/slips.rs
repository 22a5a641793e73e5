//! No harm from a slip, no false line: what a new user's mistakes meet, on the real control plane with
//! the real helm-controller. A chart directory that is not the HelmRelease's chart is refused before
//! anything changes; a diff against the stored release says what it compared; a wait ends on
//! helm-controller's own verdict; after delete the status says the release is gone; a name typed wrong
//! is answered with what is there; a chart that does not render is Helm's message on one line.

use std::time::{Duration, Instant};

use cozyhr_e2e::{
    Chart, Helm, apply, condition, cozy, get_json, helmrelease, kubectl, namespace, stored_release, wait_hr_ready,
};

const READY_TIMEOUT: Duration = Duration::from_secs(180);

/// The user's own application: a ConfigMap and a Deployment (Pods never run here: waits are off).
fn mine() -> Chart {
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\ndata:\n  greeting: {{ .Values.greeting | quote }}\n";
    Chart::new("mine", "0.1.0", "greeting: hello\n", &[("cm.yaml", cm), ("deploy.yaml", cozyhr_e2e::DEPLOYMENT)])
}

/// Another chart, the directory a `cd` slip lands in.
fn other() -> Chart {
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-other\ndata:\n  a: b\n";
    Chart::new("hello", "0.1.0", "", &[("cm.yaml", cm)])
}

/// HelmRelease `name` of chart `mine`, installed by helm-controller in a namespace of its own.
fn installed(prefix: &str, name: &str) -> (String, Chart) {
    let ns = namespace(prefix);
    let chart = mine();
    chart.publish(name, &ns);
    apply(&helmrelease(&ns, name, name, ""));
    wait_hr_ready(&ns, name, READY_TIMEOUT);
    (ns, chart)
}

/// The one `error:` line a command ends with, asserted to be the only line that says error.
#[track_caller]
fn error_line(stderr: &str) -> String {
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "one error line: {stderr}");
    errors[0].to_string()
}

fn suspended(ns: &str, name: &str) -> bool {
    get_json("helmrelease", ns, name).expect("the HelmRelease")["spec"]["suspend"].as_bool().unwrap_or(false)
}

#[test]
fn another_charts_directory_is_refused_and_changes_nothing() {
    let (ns, chart) = installed("slip-dir", "app");
    let wrong = other();
    let release_before = stored_release(&ns, "app").expect("helm-controller's release");
    let config_before = get_json("configmap", &ns, "app-config").expect("the application's ConfigMap");
    for args in [vec!["apply", "app"], vec!["diff", "app"], vec!["delete", "app"], vec!["apply", "--all", "app"]] {
        let out = cozy(Helm::V4, wrong.path(), &ns, &args).code(1);
        let line = error_line(&out.stderr);
        if args.contains(&"--all") {
            // --all selects the HelmReleases of the directory's chart: the one named is not among them.
            assert!(
                line.contains("deploys chart hello") || line.contains("deploys chart \"mine\""),
                "{args:?}: {line}"
            );
            continue;
        }
        assert!(
            line.contains("holds chart \"hello\"")
                && line.contains("deploys chart \"mine\"")
                && line.contains("--other-chart"),
            "{args:?}: one line naming both charts and the way on: {line}"
        );
    }
    assert!(!suspended(&ns, "app"), "not suspended by a refusal");
    let release_after = stored_release(&ns, "app").expect("the release is still there");
    assert_eq!(release_after["version"], release_before["version"], "no new revision");
    assert_eq!(get_json("configmap", &ns, "app-config"), Some(config_before), "the objects are untouched");
    // show only reads: it says so and renders.
    let shown = cozy(Helm::V4, wrong.path(), &ns, &["show", "app"]).ok();
    assert!(shown.stderr.contains("holds chart \"hello\""), "{}", shown.stderr);
    // From the right directory all is as before.
    cozy(Helm::V4, chart.path(), &ns, &["diff", "app", "--detailed-exitcode"]).ok();
}

#[test]
fn a_diff_against_the_stored_release_says_what_it_compared() {
    let (ns, chart) = installed("slip-against", "app");
    let clean = cozy(Helm::V4, chart.path(), &ns, &["diff", "app", "--against", "release"]).ok();
    assert!(
        clean.stderr.contains("No differences from the stored Helm release; the live objects match it."),
        "{}",
        clean.stderr
    );
    kubectl(["-n", &ns, "patch", "configmap", "app-config", "--type=merge", "-p", r#"{"data":{"greeting":"edited"}}"#])
        .ok();
    let edited = cozy(Helm::V4, chart.path(), &ns, &["diff", "app", "--against", "release"]).ok();
    assert!(!edited.stderr.contains("would change nothing"), "a claim that was not compared:\n{}", edited.stderr);
    assert!(
        edited.stderr.contains("but the live objects differ from it (1 drifted, 0 missing)"),
        "the live edit is said:\n{}",
        edited.stderr
    );
    let live = cozy(Helm::V4, chart.path(), &ns, &["diff", "app", "--detailed-exitcode"]).code(2);
    assert!(live.stdout.contains("edited"), "the live diff shows the edit:\n{}", live.stdout);
}

#[test]
fn resume_of_a_release_whose_source_is_gone_ends_on_helm_controllers_verdict() {
    let ns = namespace("slip-ghost");
    // Suspended from the start, as helm cozy apply leaves it; its ExternalArtifact never existed.
    apply(&helmrelease(&ns, "ghost", "ghost-chart", "suspend: true\n"));
    let started = Instant::now();
    let out = kubectl(["cozyhr", "resume", "ghost", "-n", &ns, "--timeout", "2m"]).code(1);
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "ended on the verdict, not the timeout: {:?}",
        started.elapsed()
    );
    let line = error_line(&out.stderr);
    assert!(line.contains("ArtifactFailed") && line.contains("ghost-chart"), "helm-controller's words: {line}");
    let hr = get_json("helmrelease", &ns, "ghost").expect("the HelmRelease");
    let (_, reason, message) = condition(&hr, "Ready").expect("helm-controller's Ready");
    assert_eq!(reason, "ArtifactFailed");
    assert!(line.contains(&message), "quoted as helm-controller wrote it: {line} / {message}");
}

#[test]
fn after_delete_every_command_says_the_release_is_gone_and_how_to_bring_it_back() {
    let (ns, chart) = installed("slip-delete", "app");
    cozy(Helm::V4, chart.path(), &ns, &["delete", "app"]).ok();
    assert!(stored_release(&ns, "app").is_none(), "uninstalled");
    let hr = get_json("helmrelease", &ns, "app").expect("the HelmRelease stays");
    let (status, reason, message) = condition(&hr, "Ready").expect("Ready");
    assert_eq!((status.as_str(), reason.as_str()), ("False", "UninstallSucceeded"), "{message}");
    assert!(
        message.contains("uninstalled by helm cozy delete") && message.contains("kubectl cozyhr resume app"),
        "{message}"
    );
    assert!(hr["metadata"]["annotations"].get("cozyhr.cozystack.io/local-chart").is_none(), "the mark is gone");
    let events =
        kubectl(["-n", &ns, "get", "events", "--field-selector", "involvedObject.name=app", "-o", "json"]).ok();
    let reasons: Vec<String> = events.json()["items"]
        .as_array()
        .map(|items| items.iter().filter_map(|e| e["reason"].as_str().map(String::from)).collect())
        .unwrap_or_default();
    assert!(reasons.iter().any(|r| r == "UninstallSucceeded"), "an Event: {reasons:?}");

    let got = kubectl(["cozyhr", "get", "app", "-n", &ns]).ok();
    assert!(got.stdout.contains("False") && got.stdout.contains("uninstalled by helm cozy delete"), "{}", got.stdout);
    let status_out = kubectl(["cozyhr", "status", "app", "-n", &ns]).ok();
    assert!(status_out.stdout.contains("uninstalled by helm cozy delete"), "{}", status_out.stdout);
    let drift = kubectl(["cozyhr", "drift", "app", "-n", &ns]).code(1);
    let line = error_line(&drift.stderr);
    assert!(line.contains("uninstalled by helm cozy delete") && line.contains("kubectl cozyhr resume app"), "{line}");
    let resumed = kubectl(["cozyhr", "resume", "app", "-n", &ns, "--timeout", "2m"]).ok();
    assert!(!resumed.stderr.contains("local chart"), "no mark of a local chart is left:\n{}", resumed.stderr);
    wait_hr_ready(&ns, "app", READY_TIMEOUT);
    assert!(stored_release(&ns, "app").is_some(), "helm-controller installed it again");
}

#[test]
fn a_name_typed_wrong_is_answered_with_what_is_there() {
    let (ns, chart) = installed("slip-name", "my-app");
    let out = cozy(Helm::V4, chart.path(), &ns, &["diff", "my-ap"]).code(1);
    let line = error_line(&out.stderr);
    assert!(line.contains("did you mean my-app"), "{line}");
    assert!(!line.contains("--plain"), "the likely fix, not a way around it: {line}");
    // The name exists in another namespace.
    let elsewhere = namespace("slip-name-other");
    let out = cozy(Helm::V4, chart.path(), &elsewhere, &["show", "my-app"]).code(1);
    let line = error_line(&out.stderr);
    // (Namespaces outlive a run: an earlier run's may be listed too.)
    assert!(line.contains("my-app exists in namespace") && line.contains(&ns) && line.contains("(-n "), "{line}");
}

#[test]
fn a_broken_template_is_helms_message_on_one_line() {
    let (ns, chart) = installed("slip-template", "app");
    chart.write("templates/broken.yaml", "a: {{ .Values.greeting }\n");
    let out = cozy(Helm::V4, chart.path(), &ns, &["show", "app"]).code(1);
    let line = error_line(&out.stderr);
    assert!(line.contains("parse error"), "{line}");
    assert!(!line.contains("helm failed") && !line.contains("Error: "), "one prefix: {line}");
    assert!(!line.contains("Use --debug flag"), "Helm's hint does not work under helm cozy: {line}");
    assert!(!suspended(&ns, "app"));
    let applied = cozy(Helm::V4, chart.path(), &ns, &["apply", "app"]).code(1);
    assert!(error_line(&applied.stderr).contains("nothing was changed"), "{}", applied.stderr);
    assert!(!suspended(&ns, "app"), "nothing changed");
}

#[test]
fn what_helm_and_kubectl_users_type_is_understood() {
    let (ns, chart) = installed("slip-words", "app");
    let shown = cozy(Helm::V4, chart.path(), &ns, &["show", "app"]).ok();
    let templated = cozy(Helm::V4, chart.path(), &ns, &["template", "app"]).ok();
    assert_eq!(templated.stdout, shown.stdout, "template is show");
    let described = kubectl(["cozyhr", "describe", "app", "-n", &ns]).ok();
    let status = kubectl(["cozyhr", "status", "app", "-n", &ns]).ok();
    assert!(described.stdout.contains("Ready"), "describe prints the status report:\n{}", described.stdout);
    assert_eq!(described.stdout.lines().next(), status.stdout.lines().next(), "describe is status");
    let help = cozy_home_help();
    assert!(!help.contains("__post-render"), "no internal subcommand in the help:\n{help}");
    assert!(help.contains("show") && help.contains("apply"), "the commands people run:\n{help}");
}

/// `helm cozy` with no arguments, as a new user first runs it.
fn cozy_home_help() -> String {
    let out = cozyhr_e2e::cozy_home(Helm::V4).run(["cozy"]);
    format!("{}{}", out.stdout, out.stderr)
}
