//! The chart's version from its source (issue 24), against the real helm-controller and source-controller:
//! a chart with the `helm.sh/chart` label and `.Chart.Version` in its data, delivered
//! - as source-watcher's ArtifactGenerator delivers it: an ExternalArtifact whose revision is
//!   `latest@sha256:<digest>` (published by scripts/publish-chart.sh: source-watcher itself is not served
//!   by the Go module proxy);
//! - by `chartRef` to an OCIRepository, the chart pushed to the local OCI registry by the real Helm;
//! - by `spec.chart` from a HelmRepository (the local one over HTTP) with `valuesFiles`, the HelmChart
//!   built by source-controller;
//! - by `spec.chart` from a GitRepository (the local Git server) with `reconcileStrategy: Revision`;
//! - by `spec.chart` from a GitRepository whose `valuesFiles` lie outside the chart directory (read from
//!   the repository's root, as source-controller reads them).
//!
//! For each, under Helm 3 and Helm 4: helm-controller installs it with the source's version (not the bare
//! one), `helm cozy diff --detailed-exitcode` exits 0 right after, `show` equals the stored manifest object
//! by object, and `apply` of the unchanged chart then `resume` leaves helm-controller nothing to do.

use std::time::Duration;

use cozyhr_e2e::{
    Chart, Helm, apply, assert_same_objects, cozy, cozy_in, find, helm_get, helm_repo_url, helm_tests, namespace,
    objects, resume_without_an_upgrade, wait_hr_ready,
};

const READY_TIMEOUT: Duration = Duration::from_secs(180);
const VERSION: &str = "0.3.0";

/// A chart written like `helm create` writes one: the `helm.sh/chart` label from a helper, and the
/// version in its data; `values-prod.yaml` for `valuesFiles`.
fn sourced_chart(name: &str) -> Chart {
    let chart = Chart::new(
        name,
        VERSION,
        "greeting: hello\nreplicas: 1\n",
        &[
            (
                "_helpers.tpl",
                "{{- define \"sourced.chart\" -}}\n{{- printf \"%s-%s\" .Chart.Name .Chart.Version | replace \"+\" \"_\" | trunc 63 | trimSuffix \"-\" }}\n{{- end }}\n",
            ),
            (
                "config.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\n  labels:\n\
                 \x20   helm.sh/chart: {{ include \"sourced.chart\" . }}\ndata:\n\
                 \x20 version: {{ .Chart.Version | quote }}\n  greeting: {{ .Values.greeting | quote }}\n",
            ),
        ],
    );
    chart.write("values-prod.yaml", "greeting: from-prod\n");
    chart
}

#[derive(Debug, Clone, Copy)]
enum Delivery {
    ArtifactGenerator,
    OciRepository,
    HelmRepository,
    GitRepository,
}

/// Publishes `chart` the way `how` delivers it and returns the HelmRelease's spec lines for its chart.
fn deliver(how: Delivery, chart: &Chart, ns: &str) -> String {
    match how {
        Delivery::ArtifactGenerator => {
            chart.publish_digested("sourced", ns);
            "chartRef:\n  kind: ExternalArtifact\n  name: sourced\n".to_string()
        }
        Delivery::OciRepository => {
            let url = chart.push_oci();
            apply(&format!(
                "apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata:\n  name: sourced\n  namespace: {ns}\n\
                 spec:\n  interval: 1h\n  url: {url}\n  insecure: true\n  ref:\n    tag: {VERSION}\n  layerSelector:\n\
                 \x20   mediaType: application/vnd.cncf.helm.chart.content.v1.tar+gzip\n    operation: copy\n"
            ));
            "chartRef:\n  kind: OCIRepository\n  name: sourced\n".to_string()
        }
        Delivery::GitRepository => {
            let url = chart.push_to_git(&format!("charts-{ns}"));
            apply(&format!(
                "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: repo\n  namespace: {ns}\n\
                 spec:\n  interval: 1h\n  url: {url}\n  ref:\n    branch: main\n"
            ));
            format!(
                "chart:\n  spec:\n    chart: ./charts/{}\n    interval: 1h\n    reconcileStrategy: Revision\n    sourceRef:\n\
                 \x20     kind: GitRepository\n      name: repo\n",
                chart.name
            )
        }
        Delivery::HelmRepository => {
            chart.publish_to_helm_repo();
            apply(&format!(
                "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: local\n  namespace: {ns}\n\
                 spec:\n  interval: 1h\n  url: {}\n",
                helm_repo_url()
            ));
            format!(
                "chart:\n  spec:\n    chart: {}\n    version: \"{VERSION}\"\n    interval: 1h\n    sourceRef:\n      kind: HelmRepository\n\
                 \x20     name: local\n    valuesFiles:\n    - values.yaml\n    - values-prod.yaml\n",
                chart.name
            )
        }
    }
}

fn helmrelease(ns: &str, chart_spec: &str) -> String {
    let indented: String = chart_spec.lines().map(|l| format!("  {l}\n")).collect();
    format!(
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: app\n  namespace: {ns}\nspec:\n\
         \x20 interval: 1h\n{indented}  install:\n    disableWait: true\n  upgrade:\n    disableWait: true\n"
    )
}

fn delivered(helm: Helm, how: Delivery) {
    let tag = format!("{how:?}-{helm:?}").to_lowercase();
    let ns = namespace(&format!("src-{}", &tag[..tag.len().min(20)]));
    // A chart name of its own per test: the Helm repository is shared.
    let chart = sourced_chart(&format!("sourced-{}", format!("{helm:?}").to_lowercase()));
    let spec = deliver(how, &chart, &ns);
    apply(&helmrelease(&ns, &spec));
    let hr = wait_hr_ready(&ns, "app", READY_TIMEOUT);

    // helm-controller gave the chart its source's version.
    let stored = objects(&helm_get(&["manifest", "app", "-n", &ns]).stdout);
    let config = find(&stored, "ConfigMap", "app-config");
    let version = config["data"]["version"].as_str().unwrap_or_default().to_string();
    let recorded = hr.pointer("/status/history/0/chartVersion").and_then(|v| v.as_str()).unwrap_or_default();
    assert!(version.starts_with(&format!("{VERSION}+")) && version.len() > VERSION.len() + 1, "{how:?}: {version}");
    assert_eq!(recorded, version, "{how:?}: the history records the version the templates saw");
    if matches!(how, Delivery::HelmRepository) {
        assert_eq!(config["data"]["greeting"], "from-prod", "valuesFiles merged by source-controller: {config}");
    }

    let diff = cozy(helm, chart.path(), &ns, &["diff", "app", "--detailed-exitcode"]);
    assert_eq!(diff.code, Some(0), "{helm:?} {how:?}: diff right after the install\n{}\n{}", diff.stdout, diff.stderr);
    let shown = cozy(helm, chart.path(), &ns, &["show", "app"]).ok();
    assert_same_objects(&objects(&shown.stdout), &stored, &format!("{helm:?} {how:?} show"));
    assert!(!shown.stderr.contains("rendered with the chart's own version"), "{}", shown.stderr);

    // From a directory that holds no chart: the chart the source serves in the cluster, fetched through
    // the API server (or from the artifact's address) and checked against its digest, then kept by digest.
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let diff = cozy_in(helm, elsewhere.path(), &ns, &["diff", "app", "--detailed-exitcode"]);
    assert_eq!(diff.code, Some(0), "{helm:?} {how:?}: diff of the source's chart\n{}\n{}", diff.stdout, diff.stderr);
    assert!(diff.stderr.contains("helm cozy: the chart of ") && diff.stderr.contains(&chart.name), "{}", diff.stderr);
    let shown = cozy_in(helm, elsewhere.path(), &ns, &["show", "app"]).ok();
    assert_same_objects(&objects(&shown.stdout), &stored, &format!("{helm:?} {how:?} show of the source's chart"));
    assert!(shown.stderr.contains("(cached, "), "a second command fetches nothing: {}", shown.stderr);
    let applied = cozy_in(helm, elsewhere.path(), &ns, &["apply", "app"]).ok();
    assert!(applied.stderr.contains(&format!("with chart {}@{version}", chart.name)), "{}", applied.stderr);
    assert!(!applied.stderr.contains("runs a local chart"), "the source's own chart: {}", applied.stderr);
    resume_without_an_upgrade(&ns, "app");

    // The unchanged chart applied: recorded with the source's version, so Flux finds nothing to redo.
    let applied = cozy(helm, chart.path(), &ns, &["apply", "app"]).ok();
    assert!(applied.stderr.contains(&format!("with chart {}@{version}", chart.name)), "{}", applied.stderr);
    assert!(!applied.stderr.contains("runs a local chart"), "the chart is the source's: {}", applied.stderr);
    resume_without_an_upgrade(&ns, "app");

    // A changed chart applied: not taken for the source's. apply and resume say so, and once resumed
    // helm-controller installs the source's chart, once: an object and a key the local chart added are
    // gone again (the key was applied as helm-controller's field manager, so its apply removes it).
    chart.write(
        "templates/extra.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-extra\ndata:\n  local: \"yes\"\n",
    );
    let config_template = chart.path().join("templates/config.yaml");
    let with_key = std::fs::read_to_string(&config_template).expect("config.yaml") + "  localKey: \"yes\"\n";
    chart.write("templates/config.yaml", &with_key);
    let applied = cozy(helm, chart.path(), &ns, &["apply", "app"]).ok();
    assert!(
        applied.stderr.contains("runs a local chart") && applied.stderr.contains("templates/extra.yaml"),
        "{}",
        applied.stderr
    );
    assert!(cozyhr_e2e::get_json("configmap", &ns, "app-extra").is_some(), "the local chart is installed");
    let config = cozyhr_e2e::get_json("configmap", &ns, "app-config").expect("app-config");
    assert_eq!(config["data"]["localKey"], "yes", "the local key is applied: {config}");
    let revision = |ns: &str| {
        let hr = cozyhr_e2e::get_json("helmrelease", ns, "app").expect("the HelmRelease");
        hr.pointer("/status/history/0/version").and_then(|v| v.as_i64()).unwrap_or_default()
    };
    let applied_revision = revision(&ns);
    let resumed = cozyhr_e2e::kubectl(["cozyhr", "resume", "app", "-n", &ns, "--timeout", "2m"]).ok();
    assert!(resumed.stderr.contains("runs a local chart"), "{}", resumed.stderr);
    // Checked the moment resume returned: it returns once helm-controller has installed the source's chart.
    assert!(cozyhr_e2e::get_json("configmap", &ns, "app-extra").is_none(), "the local object is gone");
    assert_eq!(revision(&ns), applied_revision + 1, "helm-controller installed the source's chart once");
    assert!(
        resumed.stderr.contains("helm-controller ran a Helm upgrade, replacing the local chart"),
        "{}",
        resumed.stderr
    );
    let config = cozyhr_e2e::get_json("configmap", &ns, "app-config").expect("app-config");
    assert!(config["data"].get("localKey").is_none(), "{helm:?} {how:?}: the local key is gone: {config}");
    let hr = cozyhr_e2e::get_json("helmrelease", &ns, "app").expect("the HelmRelease");
    assert!(hr.pointer("/metadata/annotations/cozyhr.cozystack.io~1local-chart").is_none(), "the mark is gone: {hr}");
}

fn artifact_generator(helm: Helm) {
    delivered(helm, Delivery::ArtifactGenerator);
}

fn oci_repository(helm: Helm) {
    delivered(helm, Delivery::OciRepository);
}

fn helm_repository_with_values_files(helm: Helm) {
    delivered(helm, Delivery::HelmRepository);
}

fn git_repository_by_revision(helm: Helm) {
    delivered(helm, Delivery::GitRepository);
}

/// A GitRepository's HelmRelease whose `valuesFiles` lie outside the chart directory: source-controller
/// reads them from the repository's root (`environments/prod/values.yaml` beside `charts/NAME`). After
/// helm-controller installs it, `helm cozy show` from the chart directory of a checkout of that repository
/// equals the stored manifest object by object, and `diff --detailed-exitcode` exits 0.
fn git_repository_values_files_outside_the_chart(helm: Helm) {
    let ns = namespace(&format!("src-vf-{}", format!("{helm:?}").to_lowercase()));
    let chart = sourced_chart("sourced-vf");
    let checkout = tempfile::Builder::new().prefix("cozyhr-monorepo-").tempdir().expect("tempdir");
    let chart_dir = checkout.path().join("charts").join(&chart.name);
    chart.copy_to(&chart_dir);
    let env = checkout.path().join("environments/prod");
    std::fs::create_dir_all(&env).expect("mkdir");
    std::fs::write(env.join("values.yaml"), "greeting: from-the-environment\nreplicas: 3\n").expect("write");
    let url = cozyhr_e2e::push_dir_to_git(checkout.path(), &format!("monorepo-{ns}"));
    apply(&format!(
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: repo\n  namespace: {ns}\n\
         spec:\n  interval: 1h\n  url: {url}\n  ref:\n    branch: main\n"
    ));
    let spec = format!(
        "chart:\n  spec:\n    chart: ./charts/{name}\n    interval: 1h\n    sourceRef:\n      kind: GitRepository\n\
         \x20     name: repo\n    valuesFiles:\n    - ./charts/{name}/values.yaml\n    - environments/prod/values.yaml\n",
        name = chart.name
    );
    apply(&helmrelease(&ns, &spec));
    wait_hr_ready(&ns, "app", READY_TIMEOUT);

    let stored = objects(&helm_get(&["manifest", "app", "-n", &ns]).stdout);
    let config = find(&stored, "ConfigMap", "app-config");
    assert_eq!(config["data"]["greeting"], "from-the-environment", "read from the repository's root: {config}");
    let diff = cozy(helm, &chart_dir, &ns, &["diff", "app", "--detailed-exitcode"]);
    assert_eq!(diff.code, Some(0), "{helm:?}: diff right after the install\n{}\n{}", diff.stdout, diff.stderr);
    let shown = cozy(helm, &chart_dir, &ns, &["show", "app"]).ok();
    assert_same_objects(&objects(&shown.stdout), &stored, &format!("{helm:?} show with valuesFiles outside the chart"));
}

helm_tests! {
    artifact_generator => artifact_generator;
    oci_repository => oci_repository;
    helm_repository_with_values_files => helm_repository_with_values_files;
    git_repository_by_revision => git_repository_by_revision;
    git_repository_values_files_outside_the_chart => git_repository_values_files_outside_the_chart;
}

/// `kubectl cozyhr reconcile --with-source` against the real source-controller: a new chart version
/// pushed to the registry is seen only once the OCIRepository is reconciled (its interval is an hour);
/// the source goes first, and helm-controller then installs the new revision.
#[test]
fn reconcile_with_source_installs_the_new_revision() {
    let ns = namespace("src-reconcile");
    // A name of its own in the registry, which outlives a test run.
    let chart_name = format!("sourced-{ns}");
    let chart = sourced_chart(&chart_name);
    let url = chart.push_oci();
    apply(&format!(
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata:\n  name: sourced\n  namespace: {ns}\n\
         spec:\n  interval: 1h\n  url: {url}\n  insecure: true\n  ref:\n    semver: \">=0.3.0\"\n  layerSelector:\n\
         \x20   mediaType: application/vnd.cncf.helm.chart.content.v1.tar+gzip\n    operation: copy\n"
    ));
    apply(&helmrelease(&ns, "chartRef:\n  kind: OCIRepository\n  name: sourced\n"));
    let installed = wait_hr_ready(&ns, "app", READY_TIMEOUT);
    let version = |hr: &serde_json::Value| {
        hr.pointer("/status/history/0/chartVersion").and_then(|v| v.as_str()).unwrap_or_default().to_string()
    };
    assert!(version(&installed).starts_with("0.3.0+"), "{}", version(&installed));

    chart.write("Chart.yaml", &format!("apiVersion: v2\nname: {chart_name}\nversion: 0.3.1\n"));
    chart.push_oci();
    let run = cozyhr_e2e::kubectl(["cozyhr", "reconcile", "app", "-n", &ns, "--with-source", "--timeout", "2m"]).ok();
    let source_first = run.stderr.find("fetched revision 0.3.1@sha256:").zip(run.stderr.find("annotating HelmRelease"));
    assert!(source_first.is_some_and(|(s, h)| s < h), "the source is reconciled first:\n{}", run.stderr);
    let hr = cozyhr_e2e::get_json("helmrelease", &ns, "app").expect("the HelmRelease");
    assert!(version(&hr).starts_with("0.3.1+"), "helm-controller installed the new revision: {}", version(&hr));
}

/// `diff --all` from a directory that holds no chart: every HelmRelease of the namespace, each with the
/// chart its own source serves (an ExternalArtifact, an OCIRepository, a HelmRepository), as one plan;
/// a values change to one of them is that release's change alone.
#[test]
fn diff_all_without_a_chart_directory_takes_each_releases_own_source() {
    let ns = namespace("src-all");
    let names = ["by-artifact", "by-oci", "by-repo"];
    for (how, name) in
        [Delivery::ArtifactGenerator, Delivery::OciRepository, Delivery::HelmRepository].into_iter().zip(names)
    {
        // A chart name of its own: the Helm repository and the registry are shared and outlive a run.
        let chart = sourced_chart(&format!("all-{name}-{ns}"));
        let spec = deliver(how, &chart, &ns);
        apply(&helmrelease(&ns, &spec).replacen("name: app\n", &format!("name: {name}\n"), 1));
    }
    for name in names {
        wait_hr_ready(&ns, name, READY_TIMEOUT);
    }
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let clean = cozy_in(Helm::V4, elsewhere.path(), &ns, &["diff", "--all", "--detailed-exitcode"]);
    assert_eq!(clean.code, Some(0), "right after helm-controller installed them:\n{}\n{}", clean.stdout, clean.stderr);
    for name in names {
        assert!(clean.stdout.contains(name), "{name} in the plan:\n{}", clean.stdout);
    }
    // A values change held back from helm-controller (suspended in the same write) is by-oci's alone.
    cozyhr_e2e::kubectl([
        "-n",
        &ns,
        "patch",
        "helmrelease",
        "by-oci",
        "--type=merge",
        "-p",
        r#"{"spec":{"suspend":true,"values":{"greeting":"changed"}}}"#,
    ])
    .ok();
    let changed = cozy_in(Helm::V4, elsewhere.path(), &ns, &["diff", "--all", "--detailed-exitcode", "-o", "json"]);
    assert_eq!(changed.code, Some(2), "{}\n{}", changed.stdout, changed.stderr);
    let entries: serde_json::Value = serde_json::from_str(&changed.stdout).expect("JSON");
    let with_changes: Vec<&str> = entries
        .as_array()
        .expect("an array")
        .iter()
        .filter(|e| e["plan"]["summary"]["change"].as_u64().unwrap_or_default() > 0)
        .filter_map(|e| e["name"].as_str())
        .collect();
    assert_eq!(with_changes, ["by-oci"], "{}", changed.stdout);

    // apply --all without a chart directory: each release with its own source's chart, by-oci's change
    // applied; handed back, helm-controller finds nothing to do for any of them.
    let applied = cozy_in(Helm::V4, elsewhere.path(), &ns, &["apply", "--all"]).ok();
    for name in names {
        assert!(applied.stdout.contains(name) && applied.stdout.contains("applied"), "{name}:\n{}", applied.stdout);
    }
    assert!(applied.stderr.contains("resume --all -n"), "how to hand the set back: {}", applied.stderr);
    let config = cozyhr_e2e::get_json("configmap", &ns, "by-oci-config").expect("by-oci-config");
    assert_eq!(config["data"]["greeting"], "changed", "{config}");
    let clean = cozy_in(Helm::V4, elsewhere.path(), &ns, &["diff", "--all", "--detailed-exitcode"]);
    assert_eq!(clean.code, Some(0), "after apply --all:\n{}\n{}", clean.stdout, clean.stderr);
    for name in names {
        resume_without_an_upgrade(&ns, name);
    }
}
