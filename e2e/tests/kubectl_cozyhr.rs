//! `kubectl cozyhr` end to end: the real kubectl dispatching to the built plugin, against the real
//! kube-apiserver and helm-controller of `scripts/cluster.sh`. Every test works in its own namespace.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use cozyhr_e2e::{
    Chart, Helm, Run, apply, command, condition, cozy, env, eventually, get_json, helm_release_secrets, helmrelease,
    kubectl, namespace, run, wait_hr_ready,
};
use serde_json::Value;

const READY_TIMEOUT: Duration = Duration::from_secs(120);

/// `kubectl cozyhr ARGS...` through kubectl's plugin dispatch.
fn cozyhr(args: &[&str]) -> Run {
    kubectl(std::iter::once("cozyhr").chain(args.iter().copied()))
}

fn demo_chart(version: &str) -> Chart {
    Chart::new(
        "demo",
        version,
        "message: hello\n",
        &[(
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  message: {{ .Values.message | quote }}\n",
        )],
    )
}

/// Publishes the demo chart as ExternalArtifact `name` and installs HelmRelease `name` from it.
fn install(ns: &str, name: &str, extra_spec: &str) -> Value {
    demo_chart("0.1.0").publish(name, ns);
    apply(&helmrelease(ns, name, name, extra_spec));
    wait_hr_ready(ns, name, READY_TIMEOUT)
}

/// A HelmRelease created suspended: helm-controller never installs it.
fn create_suspended(ns: &str, name: &str) {
    apply(&helmrelease(ns, name, name, "suspend: true\n"));
}

fn hr(ns: &str, name: &str) -> Value {
    get_json("helmrelease", ns, name).unwrap_or_else(|| panic!("HelmRelease {ns}/{name} is missing"))
}

fn configmap_message(ns: &str, name: &str) -> Option<String> {
    get_json("configmap", ns, &format!("{name}-cm"))
        .and_then(|cm| cm.pointer("/data/message").and_then(Value::as_str).map(str::to_string))
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> Option<&'a str> {
    v.pointer(pointer).and_then(Value::as_str)
}

/// A kubectl-style table split into cells by the header's column offsets (cells never contain the
/// three-space gap, so a row is sliced where its header starts each column).
fn parse_table(text: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_else(|| panic!("no table header in {text:?}"));
    let mut starts = Vec::new();
    let mut names = Vec::new();
    // Columns are three spaces apart; a single space belongs to a header (WAITING ON).
    let mut spaces = 2;
    for (i, c) in header.char_indices() {
        if c != ' ' && spaces >= 2 {
            starts.push(i);
        }
        spaces = if c == ' ' { spaces + 1 } else { 0 };
    }
    for (n, &s) in starts.iter().enumerate() {
        let end = starts.get(n + 1).copied().unwrap_or(header.len());
        names.push(header[s..end].trim().to_string());
    }
    // Sliced by characters: the header is ASCII, but a tree's NAME cells hold box-drawing characters.
    let rows = lines
        .map(|line| {
            let line: Vec<char> = line.chars().collect();
            (0..starts.len())
                .map(|n| {
                    let s = starts[n].min(line.len());
                    let e = if n + 1 < starts.len() { starts[n + 1].min(line.len()) } else { line.len() };
                    line[s..e].iter().collect::<String>().trim().to_string()
                })
                .collect()
        })
        .collect();
    (names, rows)
}

fn row_for<'a>(rows: &'a [Vec<String>], cells: &[(usize, &str)]) -> &'a Vec<String> {
    rows.iter()
        .find(|r| cells.iter().all(|(i, v)| r.get(*i).map(String::as_str) == Some(*v)))
        .unwrap_or_else(|| panic!("no row with {cells:?} in {rows:?}"))
}

/// READY and MESSAGE as `flux get` derives them from the object.
fn expected_ready(obj: &Value) -> (String, String) {
    match condition(obj, "Ready") {
        Some((status, _, message)) => (status, message.split_whitespace().collect::<Vec<_>>().join(" ")),
        None => ("False".into(), "waiting to be reconciled".into()),
    }
}

#[test]
fn get_lists_two_namespaces_with_flux_columns() {
    let ns1 = namespace("kc-get-a");
    let ns2 = namespace("kc-get-b");
    install(&ns1, "alpha", "");
    install(&ns2, "beta", "");
    create_suspended(&ns2, "gamma");
    // The namespace is the label's value: namespaces of earlier runs stay behind with their releases.
    let pick = format!("cozyhr-e2e/pick={ns2}");
    kubectl(["-n", &ns2, "label", "helmrelease", "beta", &pick]).ok();

    let out = cozyhr(&["get", "-A"]).ok();
    let (header, rows) = parse_table(&out.stdout);
    assert_eq!(header, ["NAMESPACE", "NAME", "REVISION", "SUSPENDED", "READY", "MESSAGE"]);
    for (ns, name) in [(&ns1, "alpha"), (&ns2, "beta"), (&ns2, "gamma")] {
        let obj = hr(ns, name);
        let row = row_for(&rows, &[(0, ns.as_str()), (1, name)]);
        let (ready, message) = expected_ready(&obj);
        let revision = str_at(&obj, "/status/history/0/chartVersion")
            .or(str_at(&obj, "/status/lastAttemptedRevision"))
            .unwrap_or_default();
        assert_eq!(row[2], revision, "REVISION of {name}");
        assert_eq!(row[3], if name == "gamma" { "True" } else { "False" }, "SUSPENDED of {name}");
        assert_eq!(row[4], ready, "READY of {name}");
        assert_eq!(row[5], message, "MESSAGE of {name}");
    }
    let alpha = row_for(&rows, &[(0, ns1.as_str()), (1, "alpha")]);
    assert_eq!((alpha[2].as_str(), alpha[4].as_str()), ("0.1.0", "True"));
    assert!(alpha[5].contains("succeeded"), "{alpha:?}");
    assert_eq!(row_for(&rows, &[(0, ns2.as_str()), (1, "gamma")])[4], "False");

    // One namespace: no NAMESPACE column, and only that namespace.
    let out = cozyhr(&["get", "-n", &ns2]).ok();
    let (header, rows) = parse_table(&out.stdout);
    assert_eq!(header, ["NAME", "REVISION", "SUSPENDED", "READY", "MESSAGE"]);
    let names: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(names, ["beta", "gamma"]);

    // Flags before and after the subcommand, and the aliases, print the same.
    for args in [&["-n", ns2.as_str(), "get"][..], &["list", "-n", &ns2], &["--namespace", &ns2, "ls"]] {
        assert_eq!(cozyhr(args).ok().stdout, out.stdout, "{args:?}");
    }

    let wide = cozyhr(&["get", "-n", &ns1, "-o", "wide"]).ok();
    let (header, rows) = parse_table(&wide.stdout);
    assert_eq!(header, ["NAME", "REVISION", "SUSPENDED", "READY", "AGE", "CHART", "SOURCE", "TARGET", "MESSAGE"]);
    assert_eq!(rows[0][5], "demo");
    assert_eq!(rows[0][6], format!("ExternalArtifact/{ns1}/alpha"));
    assert_eq!(rows[0][7], "-", "installed into the cluster it lives in");
    assert!(rows[0][4].ends_with('s') || rows[0][4].ends_with('m'), "AGE {:?}", rows[0][4]);

    let names = cozyhr(&["get", "-n", &ns2, "-o", "name"]).ok();
    assert_eq!(names.stdout, "helmrelease.helm.toolkit.fluxcd.io/beta\nhelmrelease.helm.toolkit.fluxcd.io/gamma\n");

    let picked = cozyhr(&["get", "-A", "-l", &pick, "-o", "name"]).ok();
    assert_eq!(picked.stdout, "helmrelease.helm.toolkit.fluxcd.io/beta\n");

    // An empty result is not an error, and says so like kubectl.
    let empty = namespace("kc-get-empty");
    let none = cozyhr(&["get", "-n", &empty]).ok();
    assert_eq!(none.stdout, "");
    assert_eq!(none.stderr.trim(), format!("No resources found in {empty} namespace."));

    // A missing name: one clear line naming the namespace, exit 1.
    let missing = cozyhr(&["get", "-n", &ns1, "nope"]).code(1);
    assert_eq!(missing.stderr.trim(), format!("error: helmrelease \"nope\" not found in namespace \"{ns1}\""));
}

#[test]
fn yaml_and_json_round_trip_through_kubectl_apply() {
    let ns = namespace("kc-yaml");
    install(&ns, "one", "values:\n  message: from-values\n");
    install(&ns, "two", "");
    let before: Vec<i64> =
        ["one", "two"].iter().map(|n| hr(&ns, n)["metadata"]["generation"].as_i64().expect("generation")).collect();

    // A single name prints the object itself.
    let single = cozyhr(&["get", "-n", &ns, "one", "-o", "json"]).ok().json();
    assert_eq!(single["kind"], "HelmRelease");
    assert_eq!(single["spec"]["values"]["message"], "from-values");
    assert!(single["metadata"].get("managedFields").is_none(), "managedFields are hidden like kubectl's");

    // Several objects print as a v1 List, which kubectl applies as it is.
    let yaml = cozyhr(&["get", "-n", &ns, "-o", "yaml"]).ok();
    assert!(yaml.stdout.starts_with("apiVersion: v1\n"), "{}", yaml.stdout);
    assert!(yaml.stdout.contains("\nkind: List\n"), "{}", yaml.stdout);
    let applied = cozyhr_e2e::kubectl_stdin(&["apply", "-f", "-"], &yaml.stdout).ok();
    assert!(applied.stdout.contains("helmrelease.helm.toolkit.fluxcd.io/one"), "{}", applied.stdout);
    assert!(applied.stdout.contains("helmrelease.helm.toolkit.fluxcd.io/two"), "{}", applied.stdout);

    // The spec came back unchanged: the generation did not move.
    let after: Vec<i64> =
        ["one", "two"].iter().map(|n| hr(&ns, n)["metadata"]["generation"].as_i64().expect("generation")).collect();
    assert_eq!(before, after, "re-applying our YAML changed a spec");
    assert_eq!(hr(&ns, "one")["spec"]["values"]["message"], "from-values");

    // And the YAML of one object goes through a server-side dry run as well.
    let one = cozyhr(&["get", "-n", &ns, "one", "-o", "yaml"]).ok();
    assert!(one.stdout.starts_with("apiVersion: helm.toolkit.fluxcd.io/v2\n"), "{}", one.stdout);
    cozyhr_e2e::kubectl_stdin(
        &["apply", "--server-side", "--dry-run=server", "--force-conflicts", "-f", "-"],
        &one.stdout,
    )
    .ok();
}

#[test]
fn suspend_holds_changes_and_resume_waits_for_them() {
    let ns = namespace("kc-suspend");
    install(&ns, "app", "values:\n  message: first\n");
    assert_eq!(configmap_message(&ns, "app").as_deref(), Some("first"));
    let secrets_before = helm_release_secrets(&ns, "app").len();

    let out = cozyhr(&["suspend", "app", "-n", &ns]).ok();
    assert!(out.stderr.contains(&format!("► suspending helmrelease app in {ns} namespace")), "{}", out.stderr);
    assert_eq!(hr(&ns, "app")["spec"]["suspend"], true);

    // Change the spec, then make helm-controller look at the object (it records every request it
    // handles, suspended or not): once it has, it has seen the change and left it alone.
    kubectl([
        "-n",
        &ns,
        "patch",
        "helmrelease",
        "app",
        "--type=merge",
        "-p",
        r#"{"spec":{"values":{"message":"second"}}}"#,
    ])
    .ok();
    kubectl(["-n", &ns, "annotate", "--overwrite", "helmrelease", "app", "reconcile.fluxcd.io/requestedAt=e2e-probe"])
        .ok();
    eventually("helm-controller to handle the probe request", READY_TIMEOUT, || {
        let obj = hr(&ns, "app");
        match str_at(&obj, "/status/lastHandledReconcileAt") {
            Some("e2e-probe") => Ok(()),
            other => Err(format!("lastHandledReconcileAt {other:?}")),
        }
    });
    assert_eq!(configmap_message(&ns, "app").as_deref(), Some("first"), "acted on a change while suspended");
    assert_eq!(helm_release_secrets(&ns, "app").len(), secrets_before, "upgraded while suspended");

    let out = cozyhr(&["resume", "app", "-n", &ns, "--timeout", "2m"]).ok();
    for line in [
        format!("► resuming helmrelease app in {ns} namespace"),
        "◎ waiting for helm-controller to answer the hand-back".to_string(),
        format!(
            "✔ helmrelease app handed back: helm-controller ran a Helm upgrade: release {ns}/app.v2 with chart demo@0.1.0"
        ),
    ] {
        assert!(out.stderr.contains(&line), "missing {line:?} in:\n{}", out.stderr);
    }
    assert_eq!(out.stdout, "", "status lines belong on stderr");
    // Read once, right after resume returned: no waiting here.
    let obj = hr(&ns, "app");
    assert!(!obj["spec"].get("suspend").and_then(Value::as_bool).unwrap_or(false), "still suspended");
    assert_eq!(obj["metadata"]["generation"], obj["status"]["observedGeneration"], "{obj:#}");
    assert_eq!(condition(&obj, "Ready").map(|c| c.0).as_deref(), Some("True"));
    assert_eq!(configmap_message(&ns, "app").as_deref(), Some("second"));
    assert_eq!(helm_release_secrets(&ns, "app").len(), secrets_before + 1);
}

#[test]
fn resume_without_wait_returns_at_once_and_all_covers_the_namespace() {
    let ns = namespace("kc-resume-all");
    create_suspended(&ns, "a");
    create_suspended(&ns, "b");
    let out = cozyhr(&["resume", "--all", "-n", &ns, "--wait=false"]).ok();
    assert!(!out.stderr.contains("waiting"), "{}", out.stderr);
    for name in ["a", "b"] {
        let asked = format!("helmrelease {name} resumed and a reconcile asked of helm-controller; not waited for");
        assert!(out.stderr.contains(&asked), "--wait=false says the hand-back is asked, not done:\n{}", out.stderr);
    }
    for name in ["a", "b"] {
        assert_eq!(hr(&ns, name)["spec"]["suspend"], false, "{name}");
    }
    cozyhr(&["suspend", "--all", "-n", &ns]).ok();
    for name in ["a", "b"] {
        assert_eq!(hr(&ns, name)["spec"]["suspend"], true, "{name}");
    }
    // A typo changes nothing: every name is read before anything is patched.
    let bad = cozyhr(&["resume", "a", "typo", "-n", &ns]).code(1);
    assert!(bad.stderr.contains("\"typo\" not found"), "{}", bad.stderr);
    assert_eq!(hr(&ns, "a")["spec"]["suspend"], true);
}

#[test]
fn reconcile_returns_after_handling_and_force_upgrades() {
    let ns = namespace("kc-reconcile");
    install(&ns, "app", "");
    assert_eq!(helm_release_secrets(&ns, "app").len(), 1);

    let out = cozyhr(&["reconcile", "app", "-n", &ns]).ok();
    assert!(out.stderr.contains("◎ waiting for HelmRelease reconciliation"), "{}", out.stderr);
    assert!(out.stderr.contains("✔ applied revision 0.1.0"), "{}", out.stderr);
    let obj = hr(&ns, "app");
    let requested = str_at(&obj, "/metadata/annotations/reconcile.fluxcd.io~1requestedAt").expect("requestedAt");
    assert_eq!(str_at(&obj, "/status/lastHandledReconcileAt"), Some(requested), "returned before hc handled it");
    assert_eq!(condition(&obj, "Ready").map(|c| c.0).as_deref(), Some("True"));
    assert_eq!(helm_release_secrets(&ns, "app").len(), 1, "a plain reconcile of an unchanged release upgraded it");

    // --with-source on an ExternalArtifact that no ArtifactGenerator produced: said, then carried on.
    let out = cozyhr(&["reconcile", "app", "--with-source", "-n", &ns]).ok();
    assert!(
        out.stderr.contains(&format!("ExternalArtifact {ns}/app was not produced by an ArtifactGenerator")),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("✔ HelmRelease app reconciliation completed"), "{}", out.stderr);

    let out = cozyhr(&["-n", &ns, "reconcile", "--force", "app"]).ok();
    assert!(out.stderr.contains("reconciliation completed"), "{}", out.stderr);
    let obj = hr(&ns, "app");
    let forced = str_at(&obj, "/metadata/annotations/reconcile.fluxcd.io~1forceAt").expect("forceAt");
    assert_eq!(str_at(&obj, "/status/lastHandledForceAt"), Some(forced));
    assert_eq!(obj.pointer("/status/history/0/version").and_then(Value::as_i64), Some(2), "{obj:#}");
    let secrets = helm_release_secrets(&ns, "app");
    assert!(secrets.contains_key("sh.helm.release.v1.app.v2"), "no new Helm revision: {secrets:?}");
}

#[test]
fn reconcile_of_a_suspended_release_is_refused() {
    let ns = namespace("kc-refuse");
    create_suspended(&ns, "held");
    let out = cozyhr(&["reconcile", "held", "-n", &ns]).code(1);
    assert_eq!(
        out.stderr.trim(),
        format!("error: helmrelease {ns}/held is suspended: resume it first (kubectl cozyhr resume held -n {ns})")
    );
    let obj = hr(&ns, "held");
    assert!(str_at(&obj, "/metadata/annotations/reconcile.fluxcd.io~1requestedAt").is_none(), "state changed");

    let missing = cozyhr(&["reconcile", "ghost", "-n", &ns]).code(1);
    assert_eq!(missing.stderr.trim(), format!("error: helmrelease \"ghost\" not found in namespace \"{ns}\""));
}

#[test]
fn a_failing_release_fails_reconcile_and_status_shows_its_events() {
    let ns = namespace("kc-fail");
    let chart = Chart::new(
        "broken",
        "0.1.0",
        "x: 1\n",
        // Renders to YAML that does not parse: Helm refuses it before touching the cluster.
        &[("bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\ndata:\n  a: [unclosed\n")],
    );
    chart.publish("broken", &ns);
    apply(&helmrelease(&ns, "broken", "broken", ""));
    eventually("helm-controller to fail the install", READY_TIMEOUT, || match condition(&hr(&ns, "broken"), "Ready") {
        Some((s, _, _)) if s == "False" => Ok(()),
        other => Err(format!("Ready {other:?}")),
    });

    let out = cozyhr(&["reconcile", "broken", "-n", &ns, "--timeout", "2m"]).code(1);
    let obj = hr(&ns, "broken");
    let (_, _, message) = condition(&obj, "Ready").expect("Ready condition");
    assert!(!message.is_empty());
    let last = out.stderr.lines().last().unwrap_or_default();
    assert_eq!(last, format!("error: helmrelease {ns}/broken reconciliation failed: {message}"), "{}", out.stderr);
    let requested = str_at(&obj, "/metadata/annotations/reconcile.fluxcd.io~1requestedAt").expect("requestedAt");
    assert_eq!(str_at(&obj, "/status/lastHandledReconcileAt"), Some(requested));

    // status: the failure, the counters and helm-controller's Warning events.
    let screen = eventually("a Warning event in status", Duration::from_secs(60), || {
        let out = cozyhr(&["status", "broken", "-n", &ns]).ok();
        let events = out.stdout.split("\nEvents:\n").nth(1).unwrap_or_default().to_string();
        if events.contains("Warning") { Ok(out.stdout) } else { Err(out.stdout) }
    });
    assert!(screen.contains("Ready:         False"), "{screen}");
    assert!(screen.contains("helm-controller"), "{screen}");
    assert!(screen.contains("Failures:"), "{screen}");
    let conditions = screen.split("\nConditions:\n").nth(1).unwrap_or_default();
    assert!(conditions.lines().any(|l| l.trim_start().starts_with("Ready ") && l.contains("False")), "{screen}");
}

#[test]
fn status_shows_dependency_readiness() {
    let ns = namespace("kc-deps");
    install(&ns, "db", "");
    create_suspended(&ns, "cache");
    demo_chart("0.1.0").publish("app", &ns);
    apply(&helmrelease(&ns, "app", "app", "dependsOn:\n- name: db\n- name: cache\n"));
    eventually("app to wait for its dependency", READY_TIMEOUT, || match condition(&hr(&ns, "app"), "Ready") {
        Some((s, r, _)) if s == "False" && r == "DependencyNotReady" => Ok(()),
        other => Err(format!("Ready {other:?}")),
    });

    let out = cozyhr(&["status", "app", "-n", &ns]).ok();
    let deps = out.stdout.split("\nDepends on:\n").nth(1).expect("Depends on section");
    let deps: String = deps.split("\n\n").next().unwrap_or_default().to_string();
    let (header, rows) = parse_table(&deps.lines().map(str::trim_start).collect::<Vec<_>>().join("\n"));
    assert_eq!(header, ["NAMESPACE", "NAME", "READY", "MESSAGE"]);
    assert_eq!(row_for(&rows, &[(1, "db")])[2], "True", "{deps}");
    let cache = row_for(&rows, &[(1, "cache")]);
    assert_eq!(cache[0], ns);
    assert_eq!(cache[2], "False", "{deps}");
    assert!(out.stdout.contains("DependencyNotReady"), "{}", out.stdout);
}

/// A HelmRelease whose chart is an ExternalArtifact nobody published: helm-controller reports it
/// Ready=False (ArtifactFailed) once its dependencies, if any, are Ready; until then it waits on them.
fn create_unready(ns: &str, name: &str, depends_on: &[(&str, &str)]) {
    let mut spec = String::new();
    if !depends_on.is_empty() {
        spec.push_str("dependsOn:\n");
        for (dep_ns, dep) in depends_on {
            spec.push_str(&format!("- name: {dep}\n  namespace: {dep_ns}\n"));
        }
    }
    apply(&helmrelease(ns, name, "no-such-artifact", &spec));
}

/// Waits until helm-controller's Ready condition of `ns/name` has `reason`; returns its message.
fn wait_ready_reason(ns: &str, name: &str, reason: &str) -> String {
    eventually(&format!("{ns}/{name} Ready reason {reason}"), READY_TIMEOUT, || {
        match condition(&hr(ns, name), "Ready") {
            Some((s, r, m)) if s == "False" && r == reason => Ok(m),
            other => Err(format!("Ready {other:?}")),
        }
    })
}

/// The table of `tree` (the lines before those naming cycles and missing releases): its NAME cells as
/// drawn (indentation kept), and its rows as [`parse_table`] reads them.
fn tree_table(stdout: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let table: Vec<&str> =
        stdout.lines().take_while(|l| !l.starts_with("dependsOn cycle:") && !l.starts_with("missing:")).collect();
    let header = table.first().unwrap_or_else(|| panic!("no tree in {stdout:?}"));
    // " NAME": NAMESPACE starts with NAME too.
    let (name, ready) = (header.find(" NAME").expect("NAME") + 1, header.find("READY").expect("READY"));
    let names = table[1..]
        .iter()
        .map(|line| line.chars().skip(name).take(ready - name).collect::<String>().trim_end().to_string())
        .collect();
    (names, parse_table(&table.join("\n")).1)
}

/// The rows of a `status` section (indented table up to the next blank line).
fn status_section(stdout: &str, title: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let section = stdout.split(&format!("\n{title}:\n")).nth(1).unwrap_or_else(|| panic!("no {title} in {stdout}"));
    let section = section.split("\n\n").next().unwrap_or_default();
    parse_table(&section.lines().map(str::trim_start).collect::<Vec<_>>().join("\n"))
}

#[test]
fn tree_shows_a_chain_waiting_on_a_release_that_is_not_ready() {
    // c (in another namespace) depends on b, b on a; a is not Ready (its chart does not exist).
    let ns = namespace("kc-tree");
    let other = namespace("kc-tree-other");
    create_unready(&ns, "a", &[]);
    create_unready(&ns, "b", &[(&ns, "a")]);
    create_unready(&other, "c", &[(&ns, "b")]);
    install(&ns, "ok", "");
    let a_message = wait_ready_reason(&ns, "a", "ArtifactFailed");
    let b_message = wait_ready_reason(&ns, "b", "DependencyNotReady");
    wait_ready_reason(&other, "c", "DependencyNotReady");
    assert!(b_message.contains(&format!("'{ns}/a'")), "{b_message}");

    let out = cozyhr(&["tree", "b", "-n", &ns]).ok();
    let (header, _) = parse_table(&out.stdout);
    assert_eq!(header, ["NAMESPACE", "NAME", "READY", "SUSPENDED", "WAITING ON", "MESSAGE"]);
    let (names, rows) = tree_table(&out.stdout);
    assert_eq!(names, ["b", "├── depends on", "│   └── a", "└── required by", "    └── c"], "{}", out.stdout);
    let expect = |row: &[String], ns: &str, waiting: &str, message: &str| {
        assert_eq!((row[0].as_str(), row[2].as_str(), row[3].as_str()), (ns, "False", "False"), "{row:?}");
        assert_eq!(row[4], waiting, "WAITING ON of {row:?}");
        assert_eq!(row[5], message, "MESSAGE of {row:?}");
    };
    expect(&rows[0], &ns, "a", &format!("DependencyNotReady: {b_message}"));
    expect(
        &rows[2],
        &ns,
        "",
        &format!("ArtifactFailed: {}", a_message.split_whitespace().collect::<Vec<_>>().join(" ")),
    );
    // Across namespaces, the dependency is named with its namespace.
    expect(&rows[4], &other, &format!("{ns}/b"), &format!("DependencyNotReady: dependency '{ns}/b' is not ready"));
    assert!(!out.stdout.contains("cycle") && !out.stdout.contains("missing"), "{}", out.stdout);

    // JSON parses back into the same graph, with what the cluster says of each release.
    let json = cozyhr(&["tree", "c", "-n", &other, "-o", "json"]).ok().json();
    let release = &json["release"];
    assert_eq!((release["namespace"].as_str(), release["name"].as_str()), (Some(other.as_str()), Some("c")));
    assert_eq!(release["waitingOn"], serde_json::json!([{"namespace": ns, "name": "b"}]));
    assert_eq!(release["dependents"], Value::Null, "nothing depends on c");
    let b = &release["dependsOn"][0];
    assert_eq!(
        (b["name"].as_str(), b["found"].as_str(), b["ready"].as_str()),
        (Some("b"), Some("True"), Some("False"))
    );
    assert_eq!((b["reason"].as_str(), b["message"].as_str()), (Some("DependencyNotReady"), Some(b_message.as_str())));
    let a = &b["dependsOn"][0];
    assert_eq!((a["name"].as_str(), a["reason"].as_str()), (Some("a"), Some("ArtifactFailed")));
    assert_eq!(a["message"].as_str(), Some(a_message.as_str()));
    assert_eq!(a["waitingOn"], serde_json::json!([]));
    assert_eq!(a["suspended"], false);
    assert!(a.get("dependsOn").is_none(), "{a:#}");
    assert_eq!((json["cycles"].clone(), json["missing"].clone()), (serde_json::json!([]), serde_json::json!([])));
    let again: Value = serde_json::from_str(&serde_json::to_string(&json).expect("encodes")).expect("parses");
    assert_eq!(again, json);
    let yaml = cozyhr(&["tree", "c", "-n", &other, "-o", "yaml"]).ok();
    assert!(yaml.stdout.starts_with("release:\n  namespace: "), "{}", yaml.stdout);

    // get --status-selector: only what is not Ready, or only what is.
    let not_ready = cozyhr(&["get", "-n", &ns, "--status-selector", "ready=false", "-o", "name"]).ok();
    let hr_name = |n: &str| format!("helmrelease.helm.toolkit.fluxcd.io/{n}\n");
    assert_eq!(not_ready.stdout, [hr_name("a"), hr_name("b")].concat());
    let ready = cozyhr(&["get", "-A", "--status-selector=Ready=True"]).ok();
    let (_, rows) = parse_table(&ready.stdout);
    assert!(rows.iter().any(|r| r[0] == ns && r[1] == "ok"), "{}", ready.stdout);
    assert!(rows.iter().all(|r| r[4] == "True"), "{}", ready.stdout);
    let bad = cozyhr(&["get", "-n", &ns, "--status-selector", "ready"]).code(1);
    assert_eq!(bad.stderr.lines().count(), 1, "{}", bad.stderr);
    assert!(bad.stderr.starts_with("error: invalid value 'ready' for '--status-selector"), "{}", bad.stderr);

    // status lists the dependents and which wait on the release.
    let status = cozyhr(&["status", "a", "-n", &ns]).ok();
    let (header, rows) = status_section(&status.stdout, "Dependents");
    assert_eq!(header, ["NAMESPACE", "NAME", "READY", "SUSPENDED", "WAITING ON THIS", "MESSAGE"]);
    assert_eq!(rows.len(), 1, "{}", status.stdout);
    assert_eq!(rows[0][..5], [ns.clone(), "b".into(), "False".into(), "False".into(), "True".into()]);
    let status = cozyhr(&["status", "b", "-n", &ns]).ok();
    let (_, rows) = status_section(&status.stdout, "Dependents");
    assert_eq!(rows[0][..5], [other.clone(), "c".into(), "False".into(), "False".into(), "True".into()]);
    let status = cozyhr(&["status", "ok", "-n", &ns]).ok();
    assert!(status.stdout.contains("\nDependents:\n  <none>\n"), "{}", status.stdout);
}

#[test]
fn tree_flags_a_cycle_and_a_missing_dependency() {
    let ns = namespace("kc-tree-cycle");
    create_unready(&ns, "a", &[(&ns, "b")]);
    create_unready(&ns, "b", &[(&ns, "a"), (&ns, "gone")]);

    let out = cozyhr(&["tree", "a", "-n", &ns]).ok();
    let (names, rows) = tree_table(&out.stdout);
    assert_eq!(
        names,
        [
            "a",
            "├── depends on",
            "│   └── b",
            "│       ├── a (cycle)",
            "│       └── gone",
            "└── required by",
            "    └── b",
            "        └── a (cycle)"
        ],
        "{}",
        out.stdout
    );
    assert_eq!(rows[4][2..4], ["-", "-"], "{}", out.stdout);
    assert!(rows[4][5].starts_with("not found"), "{}", out.stdout);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(lines.contains(&format!("dependsOn cycle: {ns}/a → {ns}/b → {ns}/a (while one of them is not Ready, none of them can become Ready)").as_str()), "{}", out.stdout);
    assert!(
        lines.contains(
            &format!("missing: {ns}/gone does not exist: what depends on it waits until it is created").as_str()
        ),
        "{}",
        out.stdout
    );

    let json = cozyhr(&["tree", "b", "-n", &ns, "-o", "json"]).ok().json();
    let r = |name: &str| serde_json::json!({"namespace": ns, "name": name});
    assert_eq!(json["cycles"], serde_json::json!([[r("a"), r("b")]]));
    assert_eq!(json["missing"], serde_json::json!([r("gone")]));
    assert_eq!(json["release"]["dependsOn"][0]["dependsOn"][0]["cycle"], true);
    assert_eq!(json["release"]["dependsOn"][1]["found"], "False");

    // A name that is not there: the usual one line.
    let missing = cozyhr(&["tree", "nope", "-n", &ns]).code(1);
    assert_eq!(missing.stderr.trim(), format!("error: helmrelease \"nope\" not found in namespace \"{ns}\""));
}

/// `status` of a HelmRelease with targetNamespace names the release helm-controller made
/// (`<targetNamespace>-<name>` in the target namespace), as `helm list` shows it.
#[test]
fn status_names_the_release_helm_controller_made() {
    let ns = namespace("kc-target");
    let target = namespace("kc-target-prod");
    install(&ns, "web", &format!("targetNamespace: {target}\n"));
    let release = format!("{target}-web");
    let mut c = cozyhr_e2e::command(&cozyhr_e2e::env().helm4);
    c.args(["list", "-n", &ns, "-o", "json"]);
    let listed = cozyhr_e2e::run(c).ok().json();
    let names: Vec<&str> = listed.as_array().expect("a list").iter().filter_map(|r| r["name"].as_str()).collect();
    assert_eq!(names, [release.as_str()], "helm list in the storage namespace");
    let out = cozyhr(&["status", "web", "-n", &ns]).ok();
    let line = out.stdout.lines().find(|l| l.starts_with("Release:")).expect("a Release line");
    assert_eq!(line.split_whitespace().nth(1), Some(format!("{target}/{release}").as_str()), "{}", out.stdout);
}

#[test]
fn context_flag_picks_another_context() {
    let ns_default = namespace("kc-ctx-a");
    let ns_other = namespace("kc-ctx-b");
    create_suspended(&ns_default, "in-a");
    create_suspended(&ns_other, "in-b");
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("config");
    std::fs::copy(&env().kubeconfig, &kubeconfig).expect("copy kubeconfig");
    let kc = kubeconfig.to_string_lossy().into_owned();
    kubectl(["config", "--kubeconfig", &kc, "set-context", "--current", "--namespace", &ns_default]).ok();
    let current = kubectl(["config", "--kubeconfig", &kc, "current-context"]).ok().stdout.trim().to_string();
    let cluster =
        kubectl(["config", "--kubeconfig", &kc, "view", "-o", "jsonpath={.contexts[0].context.cluster}"]).ok();
    let user = kubectl(["config", "--kubeconfig", &kc, "view", "-o", "jsonpath={.contexts[0].context.user}"]).ok();
    kubectl([
        "config",
        "--kubeconfig",
        &kc,
        "set-context",
        "other",
        "--cluster",
        cluster.stdout.trim(),
        "--user",
        user.stdout.trim(),
        "--namespace",
        &ns_other,
    ])
    .ok();

    let names = |args: &[&str]| cozyhr(args).ok().stdout;
    assert_eq!(names(&["--kubeconfig", &kc, "get", "-o", "name"]), "helmrelease.helm.toolkit.fluxcd.io/in-a\n");
    assert_eq!(
        names(&["--kubeconfig", &kc, "--context", "other", "get", "-o", "name"]),
        "helmrelease.helm.toolkit.fluxcd.io/in-b\n"
    );
    assert_eq!(
        names(&["get", "-o", "name", "--context=other", "--kubeconfig", &kc]),
        "helmrelease.helm.toolkit.fluxcd.io/in-b\n"
    );
    assert_eq!(
        names(&["--kubeconfig", &kc, "--context", &current, "get", "-o", "name"]),
        "helmrelease.helm.toolkit.fluxcd.io/in-a\n"
    );
    // KUBECONFIG is honoured like kubectl's, and -n still wins over the context's namespace.
    let mut c = command(&env().kubectl);
    c.env("KUBECONFIG", &kubeconfig).args(["cozyhr", "--context", "other", "-n", &ns_default, "get", "-o", "name"]);
    assert_eq!(run(c).ok().stdout, "helmrelease.helm.toolkit.fluxcd.io/in-a\n");

    let bad = cozyhr(&["--kubeconfig", &kc, "--context", "nope", "get"]).code(1);
    assert!(bad.stderr.starts_with("error: context \"nope\" is not in the kubeconfig"), "{}", bad.stderr);
    assert!(bad.stderr.contains(&current), "the contexts it has are named: {}", bad.stderr);
    assert_eq!(bad.stderr.lines().count(), 1, "{}", bad.stderr);
}

#[test]
fn an_unreachable_cluster_is_one_clear_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("config");
    // A port nothing listens on: bind one, note it, free it.
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: gone\n  cluster:\n    server: https://127.0.0.1:{port}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: x\ncontexts:\n- name: gone\n  context:\n    cluster: gone\n    user: u\ncurrent-context: gone\n"
        ),
    )
    .expect("write kubeconfig");
    let out = cozyhr(&["--kubeconfig", &kubeconfig.to_string_lossy(), "get"]).code(1);
    assert!(
        out.stderr.starts_with(&format!("error: cannot reach the cluster at https://127.0.0.1:{port}")),
        "{}",
        out.stderr
    );
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
}

#[test]
fn watch_prints_a_row_when_a_release_changes() {
    let ns = namespace("kc-watch");
    create_suspended(&ns, "w");
    let mut c = command(&env().kubectl);
    c.args(["cozyhr", "get", "-w", "-n", &ns]).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().expect("start kubectl cozyhr get -w");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let next_line = |what: &str| {
        rx.recv_timeout(Duration::from_secs(60)).unwrap_or_else(|_| panic!("watch printed no line for {what}"))
    };
    let header = next_line("the header");
    assert!(header.starts_with("NAME"), "{header}");
    let first = next_line("the first row");
    assert!(first.starts_with("w ") && first.contains("True"), "{first}");

    cozyhr(&["resume", "w", "-n", &ns, "--wait=false"]).ok();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = Vec::new();
    loop {
        let line = next_line("the resumed release");
        seen.push(line.clone());
        // Cells by the header's offsets: REVISION is empty here, so splitting on spaces would shift them.
        let (_, rows) = parse_table(&format!("{header}\n{line}"));
        if rows[0][0] == "w" && rows[0][2] == "False" {
            break;
        }
        assert!(Instant::now() < deadline, "no row with SUSPENDED False: {seen:?}");
    }
    // Still running: it only stops when interrupted.
    assert!(child.try_wait().expect("try_wait").is_none(), "watch exited on its own");
    child.kill().expect("stop the watch");
    let _ = child.wait();
}

#[test]
fn completion_through_kubectl_plugin_convention() {
    let ns = namespace("kc-complete");
    create_suspended(&ns, "web-frontend");
    create_suspended(&ns, "worker");
    // kubectl (>= 1.26) runs `kubectl_complete-cozyhr` from PATH: put the repository's shim there.
    let e = env();
    let dir = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink(e.repo.join("kubectl_complete-cozyhr"), dir.path().join("kubectl_complete-cozyhr"))
        .expect("link shim");
    let complete = |args: &[&str]| {
        let mut c = command(&e.kubectl);
        let path =
            c.get_envs().find(|(k, _)| *k == "PATH").and_then(|(_, v)| v).map(|v| v.to_owned()).unwrap_or_default();
        let path = std::env::join_paths(std::iter::once(dir.path().to_path_buf()).chain(std::env::split_paths(&path)))
            .expect("PATH");
        c.env("PATH", path).arg("__complete").arg("cozyhr").args(args);
        run(c).ok().stdout
    };
    let subcommands = complete(&["re"]);
    assert!(subcommands.lines().any(|l| l == "reconcile"), "{subcommands}");
    assert!(subcommands.lines().any(|l| l == "resume"), "{subcommands}");
    assert!(!subcommands.lines().any(|l| l == "get"), "{subcommands}");

    let names = complete(&["-n", &ns, "suspend", "w"]);
    let candidates: Vec<&str> = names.lines().filter(|l| !l.starts_with(':')).collect();
    assert_eq!(candidates, ["web-frontend", "worker"], "{names}");
    let names = complete(&["status", "--namespace", &ns, "wo"]);
    assert!(names.lines().any(|l| l == "worker") && !names.contains("web-frontend"), "{names}");

    // The generated shell scripts are there too.
    for shell in ["bash", "zsh", "fish"] {
        let script = cozyhr(&["completion", shell]).ok();
        assert!(script.stdout.contains("kubectl-cozyhr") || script.stdout.contains("kubectl cozyhr"), "{shell}");
    }
}

// --- dependsOn naming any object (Flux 2.10) ------------------------------------------------------------

const HELMRELEASE_CRD: &str = "helmreleases.helm.toolkit.fluxcd.io";

/// Adds `apiVersion`, `kind` and `ready` to the items of the HelmRelease CRD's `spec.dependsOn`, as Flux
/// 2.10's CRD would carry them (helm-controller PR #1480), so that the API server keeps them where
/// helm-controller v1.6's structural schema prunes them. The change is additive (three optional fields,
/// nothing removed or made stricter), so the other suites running in parallel against the same CRD are
/// unaffected, and helm-controller v1.6 ignores fields it does not know. Done once per cluster: the fields
/// stay until `scripts/cluster.sh up` installs the CRD afresh.
fn crd_keeps_flux_2_10_depends_on() {
    let crd = kubectl(["get", "crd", HELMRELEASE_CRD, "-o", "json"]).ok().json();
    let versions = crd.pointer("/spec/versions").and_then(Value::as_array).expect("the CRD's versions");
    let v2 = versions.iter().position(|v| v["name"] == "v2").expect("the CRD serves v2");
    let items =
        format!("/spec/versions/{v2}/schema/openAPIV3Schema/properties/spec/properties/dependsOn/items/properties");
    if crd.pointer(&format!("{items}/kind")).is_some() {
        return;
    }
    let field = |name: &str, type_: &str, description: &str| {
        serde_json::json!({"op": "add", "path": format!("{items}/{name}"),
                           "value": {"type": type_, "description": description}})
    };
    let patch = serde_json::json!([
        field("apiVersion", "string", "API version of the referent (Flux 2.10, helm-controller PR #1480)."),
        field("kind", "string", "Kind of the referent (Flux 2.10, helm-controller PR #1480)."),
        field("ready", "boolean", "Whether the referent must be ready, not only exist (helm-controller PR #1480)."),
    ]);
    kubectl(["patch", "crd", HELMRELEASE_CRD, "--type=json", "-p", &patch.to_string()]).ok();
}

/// A Deployment nobody runs (the local control plane has no controllers): kstatus says InProgress until
/// its status is written.
fn unrun_deployment(ns: &str, name: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  namespace: {ns}\nspec:\n  replicas: 1\n  \
         selector:\n    matchLabels: {{app: {name}}}\n  template:\n    metadata:\n      labels: {{app: {name}}}\n    \
         spec:\n      containers:\n      - name: c\n        image: registry.invalid/api:1\n"
    )
}

/// The dependsOn of HelmRelease `app`: a release, two ConfigMaps (PR #1229's existence check
/// `readyExpr: "true"`, and PR #1480's `ready: false`), a Deployment judged by kstatus, a kind nobody
/// serves, and a namespaced kind named without a namespace.
fn any_object_depends_on(ns: &str) -> String {
    format!(
        "dependsOn:\n- name: db\n- apiVersion: v1\n  kind: ConfigMap\n  name: settings\n  namespace: {ns}\n  readyExpr: \"true\"\n\
         - apiVersion: v1\n  kind: ConfigMap\n  name: flags\n  namespace: {ns}\n  ready: false\n\
         - apiVersion: apps/v1\n  kind: Deployment\n  name: api\n  namespace: {ns}\n\
         - apiVersion: example.invalid/v1\n  kind: Gadget\n  name: g\n  namespace: {ns}\n  ready: true\n\
         - apiVersion: v1\n  kind: Secret\n  name: creds\n"
    )
}

/// `tree app`'s rows by NAME cell, and its JSON.
fn any_object_tree(ns: &str) -> (Vec<String>, Vec<Vec<String>>, Value) {
    let out = cozyhr(&["tree", "app", "-n", ns]).ok();
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    let (names, rows) = tree_table(&out.stdout);
    let json = cozyhr(&["tree", "app", "-n", ns, "-o", "json"]).ok().json();
    (names, rows, json)
}

#[test]
fn depends_on_naming_any_object_is_shown_and_breaks_no_command() {
    crd_keeps_flux_2_10_depends_on();
    let ns = namespace("kc-any-dep");
    install(&ns, "db", "");
    apply(&format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: {ns}\n"));
    apply(&unrun_deployment(&ns, "api"));
    let chart = demo_chart("0.1.0");
    chart.publish("app", &ns);
    // The API server takes a moment to serve the patched schema: until then it prunes the new fields.
    let release = helmrelease(&ns, "app", "app", &any_object_depends_on(&ns));
    eventually("the API server to keep dependsOn[].kind", READY_TIMEOUT, || {
        apply(&release);
        match str_at(&hr(&ns, "app"), "/spec/dependsOn/1/kind") {
            Some("ConfigMap") => Ok(()),
            other => Err(format!("dependsOn[1].kind is {other:?}")),
        }
    });

    // get reads it and writes it back whole.
    let got = cozyhr(&["get", "app", "-n", &ns, "-o", "json"]).ok().json();
    assert_eq!(got.pointer("/spec/dependsOn/2/ready"), Some(&Value::Bool(false)), "{got:#}");
    assert_eq!(str_at(&got, "/spec/dependsOn/3/apiVersion"), Some("apps/v1"));
    let table = cozyhr(&["get", "-n", &ns]).ok();
    assert!(parse_table(&table.stdout).1.iter().any(|r| r[0] == "app"), "{}", table.stdout);

    any_object_status_gives_each_its_verdict(&ns);
    any_object_tree_shows_leaves(&ns);
    any_object_verdicts_turn(&ns);

    // helm cozy show, diff and apply of that release.
    let show = cozy(Helm::V4, chart.path(), &ns, &["show", "app"]).ok();
    assert!(show.stdout.contains("name: app-cm"), "{}", show.stdout);
    cozy(Helm::V4, chart.path(), &ns, &["diff", "app"]).ok();
    cozy(Helm::V4, chart.path(), &ns, &["apply", "app"]).ok();
    assert_eq!(configmap_message(&ns, "app").as_deref(), Some("hello"));
    let after = cozy(Helm::V4, chart.path(), &ns, &["diff", "app", "--detailed-exitcode"]).ok();
    assert!(after.stdout.contains("Plan: 0 to add, 0 to change, 0 to remove."), "{}", after.stdout);
    // The entries survive apply's writes, and status still reads them all.
    assert_eq!(str_at(&hr(&ns, "app"), "/spec/dependsOn/4/kind"), Some("Gadget"));
    let status = cozyhr(&["status", "app", "-n", &ns]).ok();
    assert_eq!(status_section(&status.stdout, "Depends on").1.len(), 6, "{}", status.stdout);
}

/// `status app`: each entry with its verdict; what cannot be followed says why in its row.
fn any_object_status_gives_each_its_verdict(ns: &str) {
    let status = cozyhr(&["status", "app", "-n", ns]).ok();
    let (header, rows) = status_section(&status.stdout, "Depends on");
    assert_eq!(header, ["NAMESPACE", "NAME", "READY", "MESSAGE"]);
    let cells = |name: &str| {
        let row = row_for(&rows, &[(1, name)]);
        (row[0].clone(), row[2].clone(), row[3].clone())
    };
    assert_eq!(cells("db").1, "True", "{}", status.stdout);
    assert_eq!(cells("ConfigMap/settings"), (ns.to_string(), "True".into(), "readyExpr is true: true".into()));
    assert_eq!(
        cells("ConfigMap/flags"),
        (ns.to_string(), "False".into(), format!("ConfigMap/flags not found in namespace \"{ns}\""))
    );
    let (_, ready, message) = cells("apps/v1 Deployment/api");
    assert_eq!(ready, "False", "{}", status.stdout);
    assert!(
        message.starts_with(&format!("dependency 'apps/v1 Deployment/{ns}/api' is not ready: status InProgress")),
        "{message}"
    );
    assert_eq!(
        cells("example.invalid/v1 Gadget/g"),
        (
            ns.to_string(),
            "Unknown".into(),
            "cannot be followed: the cluster does not serve example.invalid/v1 Gadget".into()
        )
    );
    // Its NAMESPACE cell is empty, which the section's trimmed rows cannot show: read from the line.
    let creds = status.stdout.lines().find(|l| l.contains("Secret/creds")).expect("a row for Secret/creds");
    let creds: Vec<&str> = creds.split("   ").map(str::trim).filter(|c| !c.is_empty()).collect();
    assert_eq!(
        creds,
        [
            "Secret/creds",
            "Unknown",
            "cannot be followed: Secret is namespaced and the entry names no namespace (only a HelmRelease's is defaulted)"
        ]
    );
}

/// `tree app` (table and JSON): the objects are leaves with their verdicts; app waits on the missing
/// ConfigMap and the Deployment that is not available.
fn any_object_tree_shows_leaves(ns: &str) {
    let (names, rows, json) = any_object_tree(ns);
    assert_eq!(
        names,
        [
            "app",
            "└── depends on",
            "    ├── db",
            "    ├── ConfigMap/settings",
            "    ├── ConfigMap/flags",
            "    ├── apps/v1 Deployment/api",
            "    ├── example.invalid/v1 Gadget/g",
            "    └── Secret/creds",
        ]
    );
    assert_eq!(rows[0][4], "ConfigMap/flags, apps/v1 Deployment/api", "WAITING ON of app: {rows:?}");
    assert_eq!((rows[3][2].as_str(), rows[3][3].as_str()), ("True", "-"), "{rows:?}");
    assert!(rows[4][5].starts_with("not found"), "{rows:?}");
    assert_eq!(rows[6][5], "cannot be followed: the cluster does not serve example.invalid/v1 Gadget", "{rows:?}");
    let down = &json["release"]["dependsOn"];
    assert!(down[0].get("kind").is_none() && down[0]["ready"] == "True", "{down:#}");
    assert_eq!(
        (down[1]["kind"].as_str(), down[1]["found"].as_str(), down[1]["ready"].as_str()),
        (Some("ConfigMap"), Some("True"), Some("True"))
    );
    assert_eq!((down[3]["apiVersion"].as_str(), down[3]["ready"].as_str()), (Some("apps/v1"), Some("False")));
    assert_eq!(down[4]["found"], "Unknown");
    let missing = serde_json::json!([{"namespace": ns, "name": "flags", "apiVersion": "v1", "kind": "ConfigMap"}]);
    assert_eq!(json["missing"], missing);
}

/// The ConfigMap appears and the Deployment becomes available: nothing holds app back any more.
fn any_object_verdicts_turn(ns: &str) {
    apply(&format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flags\n  namespace: {ns}\n"));
    let available = serde_json::json!({"status": {"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1,
        "readyReplicas": 1, "availableReplicas": 1, "conditions": [
            {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"},
            {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"}]}});
    kubectl([
        "patch",
        "deployment",
        "api",
        "-n",
        ns,
        "--subresource=status",
        "--type=merge",
        "-p",
        &available.to_string(),
    ])
    .ok();
    let (_, rows, json) = any_object_tree(ns);
    assert_eq!(rows[0][4], "", "WAITING ON of app: {rows:?}");
    assert_eq!(rows[4][2..4], ["True", "-"], "{rows:?}");
    assert_eq!(rows[4][5], "exists (ready: false: only its existence is checked)");
    assert!(rows[5][5].starts_with("kstatus Current: Deployment is available"), "{rows:?}");
    assert_eq!(json["missing"], serde_json::json!([]));
}
