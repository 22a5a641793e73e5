//! One chart, many releases (issue 27), against the real helm-controller: `helm cozy diff --all` and
//! `apply --all` over every HelmRelease that deploys the chart, across namespaces, each with its own
//! values; an error in one release is its row's; `dependsOn` order inside the set; the set handed back
//! with one `kubectl cozyhr resume`.

use std::time::Duration;

use cozyhr_e2e::{Chart, Helm, apply, controller_log, cozy, get_json, helmrelease, kubectl, namespace, wait_hr_ready};
use serde_json::Value;

const READY_TIMEOUT: Duration = Duration::from_secs(240);

/// A chart whose name is this run's own, so `-A` finds only this test's releases.
fn fleet_chart(name: &str) -> Chart {
    Chart::new(
        name,
        "0.1.0",
        "message: default\nsize: small\n",
        &[(
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  message: {{ .Values.message | quote }}\n  size: {{ .Values.size | quote }}\n",
        )],
    )
}

/// A HelmRelease of the chart published as `artifact` in `ns`, with inline values and a valuesFrom
/// ConfigMap of its own.
fn member(ns: &str, name: &str, artifact: &str, extra: &str) -> String {
    kubectl([
        "create",
        "configmap",
        &format!("{name}-values"),
        "-n",
        ns,
        &format!("--from-literal=values.yaml=size: {name}-size\n"),
    ])
    .ok();
    helmrelease(
        ns,
        name,
        artifact,
        &format!("values:\n  message: hello-{name}\nvaluesFrom:\n- kind: ConfigMap\n  name: {name}-values\n{extra}"),
    )
}

fn cozy_all(helm: Helm, chart: &Chart, ns: &str, args: &[&str]) -> cozyhr_e2e::Run {
    cozy(helm, chart.path(), ns, args)
}

/// helm-controller's Helm actions on a release so far (its log's "running '...'" lines).
fn actions(ns: &str, name: &str) -> usize {
    controller_log(ns, name).iter().filter(|m| m.starts_with("running '")).count()
}

#[test]
fn twelve_releases_across_three_namespaces() {
    let helm = Helm::V4;
    let nss: Vec<String> = (0..3).map(|i| namespace(&format!("fleet{i}"))).collect();
    let chart_name = format!("fleet{}", std::process::id() % 100000);
    let chart = fleet_chart(&chart_name);
    let other = fleet_chart(&format!("{chart_name}x"));
    let mut members = Vec::new();
    for ns in &nss {
        chart.publish("fleet", ns);
        for i in 0..4 {
            let name = format!("r{i}");
            apply(&member(ns, &name, "fleet", ""));
            members.push((ns.clone(), name));
        }
    }
    other.publish("other", &nss[0]);
    apply(&member(&nss[0], "stranger", "other", ""));
    for (ns, name) in members.iter().chain([&(nss[0].clone(), "stranger".to_string())]) {
        wait_hr_ready(ns, name, READY_TIMEOUT);
    }

    // Right after helm-controller's installs: nothing to change, in any of them.
    let same = cozy_all(helm, &chart, &nss[0], &["diff", "--all", "-A", "--detailed-exitcode"]);
    assert_eq!(same.code, Some(0), "{}\n{}", same.stdout, same.stderr);
    let rows: Vec<&str> = same.stdout.lines().filter(|l| nss.iter().any(|ns| l.starts_with(ns.as_str()))).collect();
    assert_eq!(rows.len(), 12, "a row per release of the chart:\n{}", same.stdout);
    assert!(!same.stdout.contains("stranger"), "the other chart's release is not in the set:\n{}", same.stdout);

    // A template edit: all twelve change, each with its own values, and not the other chart's.
    chart.write(
        "templates/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  message: {{ .Values.message | quote }}\n  size: {{ .Values.size | quote }}\n  edited: \"yes\"\n",
    );
    let changed = cozy_all(helm, &chart, &nss[0], &["diff", "--all", "-A", "--detailed-exitcode"]);
    assert_eq!(changed.code, Some(2), "{}\n{}", changed.stdout, changed.stderr);
    for (ns, name) in &members {
        assert!(changed.stdout.contains(&format!("=== {ns}/{name} ===")), "{ns}/{name} is diffed:\n{}", changed.stdout);
    }
    assert!(!changed.stdout.contains("stranger"));
    let json = cozy_all(helm, &chart, &nss[0], &["diff", "--all", "-A", "-o", "json"]).ok().json();
    let entries = json.as_array().expect("a JSON array");
    assert_eq!(entries.len(), 12, "{json}");
    assert!(entries.iter().all(|e| e["plan"].is_object() && e.get("error").is_none()), "{json}");

    // The rollout of a change the sources will offer: the set suspended in one command, the sources
    // updated (else the hand-back would rightly have helm-controller put the sources' chart back), then
    // apply --all reaches all twelve: each changed and Ready as helm-controller would write it.
    kubectl(["cozyhr", "suspend", "--all", "-A", "--chart", &chart_name]).ok();
    for ns in &nss {
        chart.publish("fleet", ns);
    }
    let before: Vec<usize> = members.iter().map(|(ns, name)| actions(ns, name)).collect();
    let applied = cozy_all(helm, &chart, &nss[0], &["apply", "--all", "-A", "--concurrency", "3"]);
    assert_eq!(applied.code, Some(0), "{}\n{}", applied.stdout, applied.stderr);
    assert_eq!(applied.stdout.matches(" applied").count(), 12, "{}", applied.stdout);
    for (ns, name) in &members {
        let cm = get_json("configmap", ns, &format!("{name}-cm")).expect("the ConfigMap");
        assert_eq!(cm["data"]["edited"], "yes", "{ns}/{name}");
        assert_eq!(cm["data"]["size"], format!("{name}-size"), "{ns}/{name} kept its own valuesFrom");
        let hr = get_json("helmrelease", ns, name).expect("hr");
        assert_eq!(hr["spec"]["suspend"], true, "{ns}/{name} is suspended");
        let (status, reason, _) = cozyhr_e2e::condition(&hr, "Ready").unwrap_or_default();
        assert_eq!((status.as_str(), reason.as_str()), ("True", "UpgradeSucceeded"), "{ns}/{name}");
    }
    let stranger = get_json("helmrelease", &nss[0], "stranger").expect("hr");
    assert_ne!(stranger["spec"]["suspend"], true, "the other chart's release is untouched");

    // The set handed back in one command: helm-controller finds every release in sync.
    kubectl(["cozyhr", "resume", "--all", "-A", "--chart", &chart_name, "--timeout", "3m"]).ok();
    for ((ns, name), before) in members.iter().zip(before) {
        wait_hr_ready(ns, name, READY_TIMEOUT);
        cozyhr_e2e::eventually(&format!("{ns}/{name} in sync"), Duration::from_secs(60), || {
            let log = controller_log(ns, name);
            if log.iter().any(|m| m == "release in-sync with desired state") { Ok(()) } else { Err(format!("{log:?}")) }
        });
        assert_eq!(actions(ns, name), before, "helm-controller ran no Helm action on {ns}/{name} after resume");
    }
}

#[test]
fn one_release_in_error_is_its_rows() {
    let helm = Helm::V4;
    let ns = namespace("fleet-err");
    let chart_name = format!("fleeterr{}", std::process::id() % 100000);
    let chart = fleet_chart(&chart_name);
    chart.publish("fleet", &ns);
    for name in ["good", "bad"] {
        apply(&member(&ns, name, "fleet", ""));
    }
    for name in ["good", "bad"] {
        wait_hr_ready(&ns, name, READY_TIMEOUT);
    }
    kubectl(["delete", "configmap", "bad-values", "-n", &ns]).ok();
    let run = cozy_all(helm, &chart, &ns, &["diff", "--all", "--detailed-exitcode"]);
    assert_eq!(run.code, Some(1), "{}\n{}", run.stdout, run.stderr);
    let bad = run.stdout.lines().find(|l| l.contains(" bad ")).unwrap_or_default();
    assert!(bad.contains("bad-values"), "the row says what is missing: {bad}\n{}", run.stdout);
    let good = run.stdout.lines().find(|l| l.contains(" good ")).unwrap_or_default();
    assert!(good.split_whitespace().nth(2) == Some("0"), "the other release still diffs: {good}");
    let errors: Vec<&str> = run.stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "one error line:\n{}", run.stderr);
    let json = cozy_all(helm, &chart, &ns, &["diff", "--all", "-o", "json"]);
    let entries: Value = serde_json::from_str(&json.stdout).expect("JSON even with an error");
    let bad = entries.as_array().and_then(|a| a.iter().find(|e| e["name"] == "bad")).cloned().unwrap_or_default();
    assert!(bad["error"].as_str().is_some_and(|e| e.contains("bad-values")), "{entries}");
}

#[test]
fn apply_all_follows_depends_on() {
    let helm = Helm::V4;
    let ns = namespace("fleet-deps");
    let chart_name = format!("fleetdeps{}", std::process::id() % 100000);
    let chart = fleet_chart(&chart_name);
    chart.publish("fleet", &ns);
    apply(&member(&ns, "a", "fleet", ""));
    apply(&member(&ns, "b", "fleet", "dependsOn:\n- name: a\n"));
    apply(&member(&ns, "c", "fleet", "dependsOn:\n- name: b\n"));
    for name in ["a", "b", "c"] {
        wait_hr_ready(&ns, name, READY_TIMEOUT);
    }
    chart.write("values.yaml", "message: default\nsize: large\n");
    let run = cozy_all(helm, &chart, &ns, &["apply", "--all", "--concurrency", "3"]);
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    // Each release's upgrade line, in the order they were said: A's apply ends before B's starts.
    let started = |name: &str| {
        run.stderr
            .find(&format!("helm upgrade {ns}/{name} "))
            .unwrap_or_else(|| panic!("{name} upgraded:\n{}", run.stderr))
    };
    let ended = |name: &str| {
        run.stderr
            .find(&format!("release {ns}/{name}.v"))
            .unwrap_or_else(|| panic!("{name} succeeded:\n{}", run.stderr))
    };
    assert!(ended("a") < started("b") && ended("b") < started("c"), "A, then B, then C:\n{}", run.stderr);
}
