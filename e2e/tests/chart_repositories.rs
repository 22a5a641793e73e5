//! The chart from its repository (issue 52), against the real source-controller and helm-controller: a
//! chart at two versions in
//! - the test ground's private Helm repository (HTTP Basic auth; the HelmRepository's `secretRef`),
//! - its OCI registry, read by a HelmRepository of `type: oci`,
//! - its OCI registry, read by an OCIRepository (`chartRef`),
//! - its HTTPS Helm repository, which serves only clients with a certificate of its own authority (the
//!   HelmRepository's `certSecretRef`: `ca.crt`, `tls.crt`, `tls.key`).
//!
//! For each: `diff` and `show` from a directory without a chart take the chart the source serves and find
//! nothing to change right after helm-controller installs; `diff --version` shows the newer chart's change;
//! `apply --version` installs it, says that resume gives the release back, and once resumed
//! helm-controller returns the release to the source's version. Then: semver ranges picked as
//! source-controller picks them (asserted against the HelmChart's status), and bad input (a repository
//! that is down, a wrong password, a range no version matches, a source of one revision, `--version`
//! beside a chart directory): one line each, exit 1, nothing changed.

use std::time::{Duration, Instant};

use cozyhr_e2e::{
    Chart, Helm, apply, assert_same_objects, cozy, cozy_in, get_json, helm_get, helm_repo_url, namespace, objects,
    private_helm_repository, registry, wait_hr_ready,
};

const READY_TIMEOUT: Duration = Duration::from_secs(180);

/// A chart at `version` whose ConfigMap says the version, and (from 1.1.0) a key of its own.
fn chart_at(name: &str, version: &str) -> Chart {
    let newer = if version == "1.0.0" { "" } else { "  added: \"in 1.1\"\n" };
    Chart::new(
        name,
        version,
        "greeting: hello\n",
        &[(
            "config.yaml",
            &format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{{{ .Release.Name }}}}-config\ndata:\n\
                 \x20 version: {{{{ .Chart.Version | quote }}}}\n  greeting: {{{{ .Values.greeting | quote }}}}\n{newer}"
            ),
        )],
    )
}

/// Where a chart is kept.
#[derive(Debug, Clone, Copy)]
enum Where {
    PrivateHelm,
    TlsHelm,
    OciHelm,
    OciRepository,
}

/// Publishes `chart` where `how` keeps charts.
fn publish(how: Where, chart: &Chart) {
    match how {
        Where::PrivateHelm => chart.publish_to_private_helm_repo(),
        Where::TlsHelm => chart.publish_to_tls_helm_repo(),
        Where::OciHelm | Where::OciRepository => {
            chart.push_oci();
        }
    }
}

/// The source objects of `how` in `ns` (YAML) and the HelmRelease's chart lines, at version 1.0.0.
fn source(how: Where, chart: &str, ns: &str) -> (String, String) {
    match how {
        Where::PrivateHelm => (private_helm_repository(ns, "repo"), helm_chart_spec(chart, "1.0.0")),
        Where::TlsHelm => (cozyhr_e2e::tls_helm_repository(ns, "repo"), helm_chart_spec(chart, "1.0.0")),
        Where::OciHelm => (
            format!(
                "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: repo\n  namespace: {ns}\n\
                 spec:\n  type: oci\n  insecure: true\n  interval: 1h\n  url: oci://{}/charts\n",
                registry()
            ),
            helm_chart_spec(chart, "1.0.0"),
        ),
        Where::OciRepository => (
            format!(
                "apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata:\n  name: repo\n  namespace: {ns}\n\
                 spec:\n  interval: 1h\n  url: oci://{}/charts/{chart}\n  insecure: true\n  ref:\n    tag: 1.0.0\n  layerSelector:\n\
                 \x20   mediaType: application/vnd.cncf.helm.chart.content.v1.tar+gzip\n    operation: copy\n",
                registry()
            ),
            "chartRef:\n  kind: OCIRepository\n  name: repo\n".into(),
        ),
    }
}

fn helm_chart_spec(chart: &str, version: &str) -> String {
    format!(
        "chart:\n  spec:\n    chart: {chart}\n    version: \"{version}\"\n    interval: 1h\n    sourceRef:\n      kind: HelmRepository\n      name: repo\n"
    )
}

fn helmrelease(ns: &str, name: &str, chart_spec: &str) -> String {
    let indented: String = chart_spec.lines().map(|l| format!("  {l}\n")).collect();
    format!(
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: {name}\n  namespace: {ns}\nspec:\n\
         \x20 interval: 1h\n{indented}  install:\n    disableWait: true\n  upgrade:\n    disableWait: true\n"
    )
}

fn chart_version_recorded(ns: &str, name: &str) -> String {
    let hr = get_json("helmrelease", ns, name).expect("the HelmRelease");
    hr.pointer("/status/history/0/chartVersion").and_then(|v| v.as_str()).unwrap_or_default().to_string()
}

fn from_the_repository(helm: Helm, how: Where) {
    let tag = format!("{how:?}-{helm:?}").to_lowercase();
    let ns = namespace(&format!("repo-{}", &tag[..tag.len().min(20)]));
    let chart_name = format!("bump-{tag}");
    let (old, new) = (chart_at(&chart_name, "1.0.0"), chart_at(&chart_name, "1.1.0"));
    publish(how, &old);
    publish(how, &new);
    let (sources, chart_spec) = source(how, &chart_name, &ns);
    apply(&sources);
    apply(&helmrelease(&ns, "app", &chart_spec));
    wait_hr_ready(&ns, "app", READY_TIMEOUT);
    let installed = chart_version_recorded(&ns, "app");
    assert!(installed.starts_with("1.0.0"), "{how:?}: {installed}");

    // From anywhere: the chart the source serves, nothing to change.
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let diff = cozy_in(helm, elsewhere.path(), &ns, &["diff", "app", "--detailed-exitcode"]);
    assert_eq!(diff.code, Some(0), "{how:?}: {}\n{}", diff.stdout, diff.stderr);
    let shown = cozy_in(helm, elsewhere.path(), &ns, &["show", "app"]).ok();
    let stored = objects(&helm_get(&["manifest", "app", "-n", &ns]).stdout);
    assert_same_objects(&objects(&shown.stdout), &stored, &format!("{helm:?} {how:?} show"));

    // Without a cluster: the HelmRelease and its source from release files, the chart from the
    // repository at the version the HelmRelease names, with Helm's own credentials (repositories.yaml).
    let files = tempfile::tempdir().expect("tempdir");
    let release_file = files.path().join("release.yaml");
    std::fs::write(&release_file, format!("{sources}\n---\n{}", helmrelease(&ns, "app", &chart_spec))).expect("write");
    let (user, password) = cozyhr_e2e::private_helm_repo_credentials();
    let (ca, cert, key) = cozyhr_e2e::tls_helm_repo_pki();
    let repositories = files.path().join("repositories.yaml");
    std::fs::write(
        &repositories,
        format!(
            "apiVersion: \"\"\nrepositories:\n- name: private\n  url: {}\n  username: {user}\n  password: {password}\n\
             - name: tls\n  url: {}\n  caFile: {}\n  certFile: {}\n  keyFile: {}\n",
            cozyhr_e2e::private_helm_repo_url(),
            cozyhr_e2e::tls_helm_repo_url(),
            ca.display(),
            cert.display(),
            key.display()
        ),
    )
    .expect("write");
    let mut offline = cozyhr_e2e::cozy_home(helm).command();
    offline
        .current_dir(elsewhere.path())
        .env("HELM_REPOSITORY_CONFIG", &repositories)
        .env("KUBECONFIG", "/nonexistent");
    offline.args(["cozy", "show", "app", "-n", &ns, "--release-file"]).arg(&release_file);
    let shown = cozyhr_e2e::run(offline).ok();
    assert!(shown.stderr.contains("as the HelmRelease names it"), "{how:?}: {}", shown.stderr);
    let offline_objects = objects(&shown.stdout);
    let config = |objs: &std::collections::BTreeMap<String, serde_json::Value>| {
        objs.values().find(|o| o["kind"] == "ConfigMap").map(|o| o["data"].clone())
    };
    assert_eq!(config(&offline_objects), config(&stored), "{how:?}: offline, the same chart and values");

    // --version: the newer chart straight from the repository, with the credentials Flux reads.
    let diff = cozy_in(helm, elsewhere.path(), &ns, &["diff", "app", "--version", "1.1.0", "--detailed-exitcode"]);
    assert_eq!(diff.code, Some(2), "{how:?}: the bump changes the ConfigMap\n{}\n{}", diff.stdout, diff.stderr);
    assert!(diff.stdout.contains("added") && diff.stdout.contains("1.1.0"), "{how:?}: {}", diff.stdout);
    assert!(
        diff.stderr.contains(&format!("{chart_name}@1.1.0 from its repository (--version 1.1.0")),
        "{how:?}: {}",
        diff.stderr
    );
    let applied = cozy_in(helm, elsewhere.path(), &ns, &["apply", "app", "--version", "1.1.0"]).ok();
    assert!(applied.stderr.contains("will upgrade it to 1.0.0"), "{how:?}: resume gives it back: {}", applied.stderr);
    let config = get_json("configmap", &ns, "app-config").expect("app-config");
    assert_eq!(config["data"]["added"], "in 1.1", "{how:?}: 1.1.0 installed: {config}");
    assert!(chart_version_recorded(&ns, "app").starts_with("1.1.0"), "{how:?}");

    // Resumed, helm-controller returns the release to the source's version, and resume says so.
    let resumed = cozyhr_e2e::kubectl(["cozyhr", "resume", "app", "-n", &ns, "--timeout", "2m"]).ok();
    assert_eq!(chart_version_recorded(&ns, "app"), installed, "{how:?}: back to the source's version");
    assert!(resumed.stderr.contains(&installed), "{how:?}: resume names the version: {}", resumed.stderr);
    let config = get_json("configmap", &ns, "app-config").expect("app-config");
    assert!(config["data"].get("added").is_none(), "{how:?}: {config}");
}

#[test]
fn private_helm_repository_helm4() {
    from_the_repository(Helm::V4, Where::PrivateHelm);
}

#[test]
fn tls_helm_repository_helm3() {
    from_the_repository(Helm::V3, Where::TlsHelm);
}

#[test]
fn oci_helm_repository_helm3() {
    from_the_repository(Helm::V3, Where::OciHelm);
}

#[test]
fn oci_repository_helm4() {
    from_the_repository(Helm::V4, Where::OciRepository);
}

/// Ranges resolve to the version source-controller picks: a pre-release when the range names one, never
/// otherwise, `*` the newest release.
#[test]
fn ranges_pick_the_version_source_controller_picks() {
    let ns = namespace("repo-ranges");
    // The Helm repository outlives the run: a chart name of this run's own.
    let name = ns.as_str();
    for version in ["1.0.0", "1.1.0", "1.2.0-rc.1"] {
        chart_at(name, version).publish_to_helm_repo();
    }
    apply(&format!(
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: repo\n  namespace: {ns}\n\
         spec:\n  interval: 1h\n  url: {}\n",
        helm_repo_url()
    ));
    let ranges = [(">=1.0.0-0", "pre"), ("1.x", "minor"), ("*", "any")];
    for (range, hr) in ranges {
        apply(&helmrelease(&ns, hr, &helm_chart_spec(name, range)));
    }
    let elsewhere = tempfile::tempdir().expect("tempdir");
    for (range, hr) in ranges {
        wait_hr_ready(&ns, hr, READY_TIMEOUT);
        let chart = get_json("helmchart", &ns, &format!("{ns}-{hr}")).expect("the HelmChart");
        let picked = chart.pointer("/status/artifact/revision").and_then(|v| v.as_str()).unwrap_or_default();
        let shown = cozy_in(Helm::V4, elsewhere.path(), &ns, &["show", hr, "--version", range]).ok();
        assert!(
            shown.stderr.contains(&format!("{name}@{picked} from its repository")),
            "{range}: source-controller picked {picked}: {}",
            shown.stderr
        );
    }
    let picked = |hr: &str| chart_version_recorded(&ns, hr);
    assert_eq!((picked("pre"), picked("minor"), picked("any")), ("1.2.0-rc.1".into(), "1.1.0".into(), "1.1.0".into()));

    // A newer match published after source-controller fetched: diff, show and apply say it, from the
    // source's chart.
    chart_at(name, "1.1.1").publish_to_helm_repo();
    for command in ["diff", "show", "apply"] {
        let out = cozy_in(Helm::V4, elsewhere.path(), &ns, &[command, "minor"]).ok();
        assert!(
            out.stderr.contains("has 1.1.1 matching \"1.x\", newer than the 1.1.0 its source fetched"),
            "{command}: {}",
            out.stderr
        );
    }
}

/// Bad input: one line that says what is wrong, exit 1, answered within seconds, nothing changed.
#[test]
fn bad_repository_input_is_one_line_and_changes_nothing() {
    let ns = namespace("repo-bad");
    let chart = chart_at("badin", "1.0.0");
    chart.publish_to_private_helm_repo();
    apply(&private_helm_repository(&ns, "repo"));
    apply(&helmrelease(&ns, "app", &helm_chart_spec("badin", "1.0.0")));
    wait_hr_ready(&ns, "app", READY_TIMEOUT);
    let elsewhere = tempfile::tempdir().expect("tempdir");
    // The plugin is installed once per test process, before any command is timed.
    cozyhr_e2e::cozy_home(Helm::V4);
    let one_line = |args: &[&str], says: &str| {
        let started = Instant::now();
        let out = cozy_in(Helm::V4, elsewhere.path(), &ns, args).code(1);
        assert!(started.elapsed() < Duration::from_secs(20), "{args:?} took {:?}", started.elapsed());
        // Helm 4 adds its own `Error: plugin "cozy" exited with error`.
        let lines: Vec<&str> = out.stderr.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(lines.len(), 1, "{args:?}: one error line: {}", out.stderr);
        assert!(out.stderr.contains(says), "{args:?}: expected {says:?} in: {}", out.stderr);
        let hr = get_json("helmrelease", &ns, "app").expect("the HelmRelease");
        assert!(hr.pointer("/spec/suspend").and_then(|v| v.as_bool()) != Some(true), "{args:?}: not suspended");
    };
    // A range no version matches names the versions there are.
    one_line(&["apply", "app", "--version", ">=9"], "1.0.0");
    one_line(&["show", "app", "--version", ">=9"], "matches \">=9\"");
    // A wrong password.
    apply(&cozyhr_e2e::helm_repository_with_auth(&ns, "repo", "cozy", "not-the-password"));
    one_line(&["diff", "app", "--version", "1.0.0"], "credentials");
    // A repository that is down.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
        l.local_addr().expect("addr").port()
    };
    cozyhr_e2e::kubectl(["delete", "helmrepository", "repo", "-n", &ns]).ok();
    apply(&format!(
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: repo\n  namespace: {ns}\n\
         spec:\n  interval: 1h\n  url: http://127.0.0.1:{closed}/charts\n"
    ));
    one_line(&["show", "app", "--version", "1.0.0"], "cannot reach");
    // A source of one revision has no other version.
    apply(&format!(
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: git\n  namespace: {ns}\n\
         spec:\n  interval: 1h\n  url: http://127.0.0.1:{closed}/none.git\n  ref:\n    branch: main\n---\n{}",
        helmrelease(
            &ns,
            "from-git",
            "chart:\n  spec:\n    chart: ./charts/badin\n    sourceRef:\n      kind: GitRepository\n      name: git\n"
        )
    ));
    let out = cozy_in(Helm::V4, elsewhere.path(), &ns, &["show", "from-git", "--version", "1.0.0"]).code(1);
    assert!(out.stderr.contains("serves one revision"), "{}", out.stderr);
    // Beside a chart directory, --version is refused before anything is read.
    let out = cozy(Helm::V4, chart.path(), &ns, &["apply", "app", "--version", "1.0.0"]).code(1);
    assert!(out.stderr.contains("is a chart directory"), "{}", out.stderr);
}

/// An OCIRepository picks its tag as source-controller does, and a Flux 2.10 HelmRelease whose
/// `spec.chart` template has `kind: OCIRepository` is read the same way: `ref.semver` with a
/// `semverFilter` (the newest tag the filter keeps, a pre-release here), and `ref.digest`.
/// source-controller and helm-controller decide in the cluster; `show` without a cluster, from release
/// files, must render the same chart at the same version (digest included).
#[test]
fn oci_references_are_read_as_source_controller_reads_them() {
    let ns = namespace("repo-ociref");
    let name = format!("ref-{}", &ns[ns.len().saturating_sub(6)..]);
    for version in ["1.0.0", "1.1.0", "1.2.0-dev.1"] {
        chart_at(&name, version).push_oci();
    }
    let url = format!("oci://{}/charts/{name}", registry());
    let filtered = "  ref:\n    semver: \">=1.0.0-0\"\n    semverFilter: \".*-dev.*\"\n";
    let oci_repository = format!(
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata:\n  name: repo\n  namespace: {ns}\n\
         spec:\n  interval: 1h\n  url: {url}\n  insecure: true\n{filtered}"
    );
    apply(&oci_repository);
    apply(&helmrelease(&ns, "app", "chartRef:\n  kind: OCIRepository\n  name: repo\n"));
    wait_hr_ready(&ns, "app", READY_TIMEOUT);
    let installed = chart_version_recorded(&ns, "app");
    assert!(installed.starts_with("1.2.0-dev.1+"), "source-controller kept the -dev tag: {installed}");
    let repo = get_json("ocirepository", &ns, "repo").expect("the OCIRepository");
    let revision = repo.pointer("/status/artifact/revision").and_then(|v| v.as_str()).unwrap_or_default();
    let digest = revision.split_once('@').map(|(_, d)| d.to_string()).expect("TAG@DIGEST");

    let stored = objects(&helm_get(&["manifest", "app", "-n", &ns]).stdout);
    let config = |objs: &std::collections::BTreeMap<String, serde_json::Value>| {
        objs.values().find(|o| o["kind"] == "ConfigMap").map(|o| o["data"].clone()).expect("a ConfigMap")
    };
    let offline = |documents: &str| {
        let files = tempfile::tempdir().expect("tempdir");
        let release_file = files.path().join("release.yaml");
        std::fs::write(&release_file, documents).expect("write");
        let mut show = cozyhr_e2e::cozy_home(Helm::V4).command();
        show.current_dir(files.path()).env("KUBECONFIG", "/nonexistent");
        show.args(["cozy", "show", "app", "-n", &ns, "--release-file"]).arg(&release_file);
        let shown = cozyhr_e2e::run(show).ok();
        (config(&objects(&shown.stdout)), shown.stderr)
    };
    let chart_ref = helmrelease(&ns, "app", "chartRef:\n  kind: OCIRepository\n  name: repo\n");
    let (data, said) = offline(&format!("{oci_repository}---\n{chart_ref}"));
    assert_eq!(data, config(&stored), "ref.semver + semverFilter: {said}");
    assert_eq!(data["version"], installed.as_str(), "the digest helm-controller appends");

    // ref.digest: that manifest, whatever the tags say.
    let pinned = oci_repository.replace(filtered, &format!("  ref:\n    digest: {digest}\n"));
    let (data, said) = offline(&format!("{pinned}---\n{chart_ref}"));
    assert_eq!(data["version"], installed.as_str(), "ref.digest: {said}");

    // Flux 2.10: the OCIRepository inlined in the HelmRelease's template.
    let template = format!(
        "chart:\n  kind: OCIRepository\n  spec:\n    url: {url}\n    insecure: true\n    ref:\n      semver: \">=1.0.0-0\"\n      semverFilter: \".*-dev.*\"\n"
    );
    let (data, said) = offline(&helmrelease(&ns, "app", &template));
    assert_eq!(data, config(&stored), "a kind: OCIRepository template: {said}");
    assert!(said.contains(&format!("OCIRepository {ns}/{ns}-app")), "names the object helm-controller makes: {said}");
}
