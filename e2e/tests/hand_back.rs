//! The hand-back is finished when resume says it is (issue 33), against the real helm-controller, under
//! Helm 3 and Helm 4.
//!
//! After `helm cozy apply` of a locally edited chart, `kubectl cozyhr resume` returns only once
//! helm-controller has replaced the edit with the source's chart (one new Helm revision) and says so;
//! after `apply` of the source's own chart it returns with no new revision and says helm-controller did
//! nothing. The same through `apply --resume`, and through `resume --all --chart` over three releases.
//! Every check is made the moment the command returns: no waiting, no sleeping.
//!
//! And a cluster address that accepts connections but never answers is given up on within 12 s, with
//! one line, by `kubectl cozyhr get` and `helm cozy diff`.

use std::time::{Duration, Instant};

use cozyhr_e2e::{Chart, Helm, apply, cozy, get_json, helm_revision, helm_tests, helmrelease, kubectl, namespace};

const READY_TIMEOUT: Duration = Duration::from_secs(180);

fn chart(name: &str) -> Chart {
    Chart::new(
        name,
        "0.2.0",
        "greeting: hello\n",
        &[(
            "config.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\ndata:\n\
             \x20 greeting: {{ .Values.greeting | quote }}\n",
        )],
    )
}

/// The local edit: a key the source's chart does not have.
fn edit(chart: &Chart) {
    let template = chart.path().join("templates/config.yaml");
    let text = std::fs::read_to_string(&template).expect("config.yaml") + "  local: \"yes\"\n";
    chart.write("templates/config.yaml", &text);
}

/// Takes the local edit back: the chart is the source's again.
fn unedit(chart: &Chart) {
    let template = chart.path().join("templates/config.yaml");
    let text = std::fs::read_to_string(&template).expect("config.yaml").replace("  local: \"yes\"\n", "");
    chart.write("templates/config.yaml", &text);
}

/// Whether the cluster carries the local edit in release `release`'s ConfigMap.
fn carries_the_edit(ns: &str, release: &str) -> bool {
    let config = get_json("configmap", ns, &format!("{release}-config")).expect("the release's ConfigMap");
    config.pointer("/data/local").is_some()
}

/// HelmReleases `names` in a namespace of their own, all deploying one chart published as an
/// ExternalArtifact, each installed by helm-controller.
fn installed(tag: &str, names: &[&str]) -> (String, Chart) {
    let ns = namespace(tag);
    let chart = chart("handed");
    chart.publish("handed", &ns);
    for name in names {
        apply(&helmrelease(&ns, name, "handed", ""));
    }
    for name in names {
        cozyhr_e2e::wait_hr_ready(&ns, name, READY_TIMEOUT);
        assert_eq!(helm_revision(&ns, name), 1, "helm-controller installed {name}");
    }
    (ns, chart)
}

fn resume(ns: &str, name: &str) -> cozyhr_e2e::Run {
    kubectl(["cozyhr", "resume", name, "-n", ns, "--timeout", "3m"]).ok()
}

const REPLACED: &str = "helm-controller ran a Helm upgrade, replacing the local chart with the source's";
const NOTHING: &str = "helm-controller found the release in sync and did nothing";

fn resume_replaces_a_local_edit_once(helm: Helm) {
    let (ns, chart) = installed(&format!("hb-edit-{helm:?}").to_lowercase(), &["app"]);
    edit(&chart);
    let applied = cozy(helm, chart.path(), &ns, &["apply", "app"]).ok();
    assert!(applied.stderr.contains("runs a local chart"), "{}", applied.stderr);
    assert!(carries_the_edit(&ns, "app"), "apply installed the local edit");
    let applied_revision = helm_revision(&ns, "app");

    let resumed = resume(&ns, "app");
    assert!(
        !carries_the_edit(&ns, "app"),
        "resume returned while the cluster still carried the edit:\n{}",
        resumed.stderr
    );
    assert_eq!(helm_revision(&ns, "app"), applied_revision + 1, "one new Helm revision, the source's chart");
    let said = format!("helmrelease app handed back: {REPLACED}: release {ns}/app.v{}", applied_revision + 1);
    assert!(resumed.stderr.contains(&said), "resume names what helm-controller did:\n{}", resumed.stderr);
}

fn resume_of_the_sources_chart_does_nothing(helm: Helm) {
    let (ns, chart) = installed(&format!("hb-same-{helm:?}").to_lowercase(), &["app"]);
    let applied = cozy(helm, chart.path(), &ns, &["apply", "app"]).ok();
    assert!(!applied.stderr.contains("runs a local chart"), "{}", applied.stderr);
    let applied_revision = helm_revision(&ns, "app");
    assert_eq!(applied_revision, 2, "apply upgraded the release");

    let resumed = resume(&ns, "app");
    assert_eq!(helm_revision(&ns, "app"), applied_revision, "helm-controller made a new revision:\n{}", resumed.stderr);
    let said = format!("helmrelease app handed back: {NOTHING} (still Helm revision {applied_revision})");
    assert!(resumed.stderr.contains(&said), "{}", resumed.stderr);
}

fn apply_resume_replaces_a_local_edit_once(helm: Helm) {
    let (ns, chart) = installed(&format!("hb-ar-edit-{helm:?}").to_lowercase(), &["app"]);
    edit(&chart);
    let run = cozy(helm, chart.path(), &ns, &["apply", "app", "--resume"]).ok();
    // apply made revision 2 with the edit; helm-controller revision 3 from the source's chart.
    assert!(
        !carries_the_edit(&ns, "app"),
        "apply --resume returned while the cluster carried the edit:\n{}",
        run.stderr
    );
    assert_eq!(helm_revision(&ns, "app"), 3, "{}", run.stderr);
    let said = format!("helmrelease app handed back: {REPLACED}: release {ns}/app.v3");
    assert!(run.stderr.contains(&said), "{}", run.stderr);
    let hr = get_json("helmrelease", &ns, "app").expect("the HelmRelease");
    assert!(!hr.pointer("/spec/suspend").and_then(|v| v.as_bool()).unwrap_or(false), "resumed");
}

fn apply_resume_of_the_sources_chart_does_nothing(helm: Helm) {
    let (ns, chart) = installed(&format!("hb-ar-same-{helm:?}").to_lowercase(), &["app"]);
    let run = cozy(helm, chart.path(), &ns, &["apply", "app", "--resume"]).ok();
    assert_eq!(helm_revision(&ns, "app"), 2, "only apply's own revision:\n{}", run.stderr);
    let said = format!("helmrelease app handed back: {NOTHING} (still Helm revision 2)");
    assert!(run.stderr.contains(&said), "{}", run.stderr);
}

/// `resume --all --chart NAME` over three releases of one chart, after `apply --all`: a local edit is
/// replaced in each, once; then the source's chart applied is kept by each.
fn resume_all_by_chart(helm: Helm) {
    let names = ["one", "two", "three"];
    let (ns, chart) = installed(&format!("hb-all-{helm:?}").to_lowercase(), &names);
    let hand_back = ["cozyhr", "resume", "--all", "--chart", "handed", "-n", &ns, "--timeout", "3m"];

    edit(&chart);
    cozy(helm, chart.path(), &ns, &["apply", "--all"]).ok();
    for name in names {
        assert!(carries_the_edit(&ns, name), "apply --all installed the edit in {name}");
        assert_eq!(helm_revision(&ns, name), 2, "{name}");
    }
    let resumed = kubectl(hand_back).ok();
    for name in names {
        assert!(!carries_the_edit(&ns, name), "{name} still carries the edit:\n{}", resumed.stderr);
        assert_eq!(helm_revision(&ns, name), 3, "{name}: one new revision");
        let said = format!("helmrelease {name} handed back: {REPLACED}: release {ns}/{name}.v3");
        assert!(resumed.stderr.contains(&said), "{}", resumed.stderr);
    }

    unedit(&chart);
    cozy(helm, chart.path(), &ns, &["apply", "--all"]).ok();
    let resumed = kubectl(hand_back).ok();
    for name in names {
        assert_eq!(helm_revision(&ns, name), 4, "{name}: apply's revision only:\n{}", resumed.stderr);
        let said = format!("helmrelease {name} handed back: {NOTHING} (still Helm revision 4)");
        assert!(resumed.stderr.contains(&said), "{}", resumed.stderr);
    }
}

helm_tests! {
    resume_replaces_a_local_edit_once => resume_replaces_a_local_edit_once;
    resume_of_the_sources_chart_does_nothing => resume_of_the_sources_chart_does_nothing;
    apply_resume_replaces_a_local_edit_once => apply_resume_replaces_a_local_edit_once;
    apply_resume_of_the_sources_chart_does_nothing => apply_resume_of_the_sources_chart_does_nothing;
    resume_all_by_chart => resume_all_by_chart;
}

/// A loopback listener that accepts every connection and never says a word (a dead load balancer, a
/// half-open tunnel), and a kubeconfig whose cluster is it. Lives for the test.
struct Silent {
    kubeconfig: tempfile::NamedTempFile,
}

fn silent_cluster() -> Silent {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let port = listener.local_addr().expect("its address").port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming().flatten() {
            held.push(conn);
        }
    });
    let kubeconfig = tempfile::NamedTempFile::new().expect("a kubeconfig file");
    std::fs::write(
        kubeconfig.path(),
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: silent\n  cluster:\n    server: https://127.0.0.1:{port}\n\
             \x20   insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: silent\n\
             \x20 context:\n    cluster: silent\n    user: u\ncurrent-context: silent\n"
        ),
    )
    .expect("write the kubeconfig");
    Silent { kubeconfig }
}

#[track_caller]
fn gives_up_quickly(run: impl FnOnce() -> cozyhr_e2e::Run) {
    let started = Instant::now();
    let out = run();
    let took = started.elapsed();
    let out = out.code(1);
    assert!(took < Duration::from_secs(12), "gave up after {took:?}, not within 12 s:\n{}", out.stderr);
    // Helm adds a line of its own when a plugin fails ("Error: plugin \"cozy\" exited with error").
    let lines: Vec<&str> = out.stderr.trim().lines().filter(|l| !l.starts_with("Error: plugin \"cozy\"")).collect();
    assert_eq!(lines.len(), 1, "one line:\n{}", out.stderr);
    assert!(
        lines[0].contains("cannot reach the cluster")
            && lines[0].contains("no answer: connecting, TLS handshake included, timed out"),
        "{}",
        lines[0]
    );
}

#[test]
fn kubectl_cozyhr_get_gives_up_on_a_silent_server() {
    let silent = silent_cluster();
    gives_up_quickly(|| {
        let mut c = cozyhr_e2e::command(&cozyhr_e2e::env().kubectl);
        c.args(["cozyhr", "get"]).env("KUBECONFIG", silent.kubeconfig.path());
        cozyhr_e2e::run(c)
    });
}

fn helm_cozy_diff_gives_up_on_a_silent_server(helm: Helm) {
    let silent = silent_cluster();
    let chart = chart("silent");
    // The plugin is installed (its hook builds it) before the clock starts.
    let home = cozyhr_e2e::cozy_home(helm);
    gives_up_quickly(|| {
        let mut c = home.command();
        c.args(["cozy", "diff", "app", "-n", "apps", "-C"]).arg(chart.path());
        c.env("KUBECONFIG", silent.kubeconfig.path());
        cozyhr_e2e::run(c)
    });
}

helm_tests! {
    helm_cozy_diff_gives_up_on_a_silent_server => helm_cozy_diff_gives_up_on_a_silent_server;
}
