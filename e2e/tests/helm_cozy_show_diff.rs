//! `helm cozy show`, `values` and `diff` end to end (issue 4): the built plugin installed into real Helm 3
//! and Helm 4 from the source checkout, against the real kube-apiserver and the real helm-controller of
//! `scripts/cluster.sh`. The reference side of every fidelity check is what helm-controller itself stored
//! in its Helm release, never our own idea of it. Every test works in its own namespaces.

use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use cozyhr_e2e::{
    Chart, Helm, HelmHome, Run, apply, assert_same_objects, children, command, env, eventually, files_under, find,
    get_json, helm_get, helm_release_secrets, helm_tests, helmrelease, kubectl, namespace, objects,
    resume_without_an_upgrade, run, running, wait_hr_ready,
};
use serde_json::Value;

const READY_TIMEOUT: Duration = Duration::from_secs(180);

/// Scalars where YAML parsers disagree (YAML 1.1 as go-yaml v2 reads it, vs YAML 1.2), in a valuesFrom
/// ConfigMap: the rendered `values.json` and the stored release config show how helm-controller read them.
const ODD_YAML: &str = "    odd:\n      yes_word: yes\n      on_word: on\n      off_word: Off\n      y_word: y\n      \
                        float_ver: 1.10\n      octal: 0755\n      octal12: 0o17\n      hex: 0x1F\n      \
                        exp: 1e3\n      tilde: ~\n      empty:\n      date: 2024-01-01\n      quoted: \"007\"\n      \
                        sexagesimal: 1:20\n      underscore: 1_000\n";

/// One Helm home per Helm major version with the cozy plugin installed from the checkout, shared by all
/// tests of this binary (the install hook runs a cargo build).
///
/// HELM_PLUGINS is set to $HELM_DATA_HOME/plugins, Helm's default: Helm 4's local-directory installer
/// writes there whatever HELM_PLUGINS says (see tests/install.rs), so the support crate's
/// `HelmHome::command` (HELM_PLUGINS=<home>/plugins) does not find a plugin Helm 4 installed.
struct CozyHelm {
    home: HelmHome,
}

impl CozyHelm {
    /// helm in this home, without arguments yet.
    fn command(&self) -> std::process::Command {
        let mut c = self.home.command();
        c.env("HELM_PLUGINS", self.home.dir.path().join("data/plugins"));
        c
    }

    fn run<I: IntoIterator<Item = S>, S: AsRef<std::ffi::OsStr>>(&self, args: I) -> Run {
        let mut c = self.command();
        c.args(args);
        run(c)
    }
}

fn helm_home(helm: Helm) -> &'static CozyHelm {
    static V3: OnceLock<CozyHelm> = OnceLock::new();
    static V4: OnceLock<CozyHelm> = OnceLock::new();
    static INSTALL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let cell = match helm {
        Helm::V3 => &V3,
        Helm::V4 => &V4,
    };
    cell.get_or_init(|| {
        // The hook builds into the checkout's bin/: one install at a time.
        let _guard = INSTALL.lock().unwrap_or_else(|p| p.into_inner());
        let h = CozyHelm { home: HelmHome::new(helm) };
        std::fs::create_dir_all(h.home.dir.path().join("data/plugins")).expect("mkdir plugins");
        h.run([std::ffi::OsStr::new("plugin"), "install".as_ref(), env().repo.as_os_str()]).ok();
        let version = h.run(["cozy", "version"]).ok();
        assert!(version.stdout.starts_with("helm-cozy "), "helm cozy version: {}", version.stdout);
        h
    })
}

/// `helm cozy ARGS... -C CHART -n NS` through real Helm.
fn cozy(helm: Helm, chart: &Path, ns: &str, args: &[&str]) -> Run {
    let chart = chart.to_string_lossy().into_owned();
    let mut all: Vec<&str> = vec!["cozy"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-C", &chart, "-n", ns]);
    helm_home(helm).run(all)
}

fn fixture(rel: &str) -> String {
    let p = env().repo.join("e2e/fixtures/show_diff").join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("fixture {}: {e}", p.display()))
}

// ---------------------------------------------------------------------------------------------------
// 1. Fidelity

/// Everything the issue names at once: two (here three) valuesFrom entries (a ConfigMap whole, a Secret
/// key and a ConfigMap key with targetPath), inline values, targetNamespace, a release name over 53
/// characters, commonMetadata, a kustomize postRenderer with a patch and an images entry, and values
/// files named by the `cozyhr.cozystack.io/values-files` annotation.
///
/// About the values files: the HelmRelease's chart is an ExternalArtifact (`chartRef`), and for that
/// helm-controller has no valuesFiles at all (they are a HelmChart feature, applied by source-controller
/// when it packages the chart: the listed files, merged in order, replace values.yaml; the chart's own
/// values.yaml only counts when listed). There is no source-controller here, so the chart helm-controller
/// installs is published the way source-controller would have packaged it: values.yaml replaced by
/// `published-values.yaml` (values-base.yaml merged with values-prod.yaml, written by hand). helm cozy
/// renders the developer's unmodified chart directory and reads the annotation. Equality therefore proves
/// that helm cozy merges the listed files and replaces the chart defaults as source-controller does
/// (a chart values.yaml leaking in shows as the `legacy` key and wrong replicas/image/port); it does not
/// prove anything about source-controller's own merge code, which is not running here.
fn fidelity(helm: Helm) {
    let ns = namespace("sd-fid");
    let target = namespace("sd-fid-target");
    let name = "fidelity-release-with-a-deliberately-long-name";
    let full_release = format!("{target}-{name}");
    assert!(full_release.len() > 53, "the fixture must need shortening: {full_release}");

    // The developer's chart directory, as helm cozy sees it.
    let dev = Chart::new(
        "fidelity",
        "0.3.0",
        &fixture("fidelity/values.yaml"),
        &[("app.yaml", &fixture("fidelity/templates/app.yaml"))],
    );
    dev.write("values-base.yaml", &fixture("fidelity/values-base.yaml"));
    dev.write("values-prod.yaml", &fixture("fidelity/values-prod.yaml"));
    // The same chart as source-controller would package it for valuesFiles [values-base, values-prod].
    let packaged = Chart::new(
        "fidelity",
        "0.3.0",
        &fixture("fidelity/published-values.yaml"),
        &[("app.yaml", &fixture("fidelity/templates/app.yaml"))],
    );
    packaged.write("values-base.yaml", &fixture("fidelity/values-base.yaml"));
    packaged.write("values-prod.yaml", &fixture("fidelity/values-prod.yaml"));
    packaged.publish("fidelity", &ns);

    apply(&format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fid-values\n  namespace: {ns}\ndata:\n  values.yaml: |\n    \
         app:\n      replicas: 3\n    feature:\n      b: from-configmap\n      keep: [z]\n{ODD_YAML}---\n\
         apiVersion: v1\nkind: Secret\nmetadata:\n  name: fid-secret\n  namespace: {ns}\nstringData:\n  token: s3cr3t-from-secret\n---\n\
         apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fid-port\n  namespace: {ns}\ndata:\n  port: \"8080\"\n"
    ));
    let spec = format!(
        "targetNamespace: {target}\n\
         valuesFrom:\n  \
           - kind: ConfigMap\n    name: fid-values\n  \
           - kind: Secret\n    name: fid-secret\n    valuesKey: token\n    targetPath: auth.token\n  \
           - kind: ConfigMap\n    name: fid-port\n    valuesKey: port\n    targetPath: app.port\n\
         values:\n  feature:\n    c: inline\n  app:\n    labels:\n      owner: e2e\n\
         commonMetadata:\n  labels:\n    team: platform\n  annotations:\n    example.com/contact: e2e-tests\n\
         postRenderers:\n  \
           - kustomize:\n      \
               patches:\n        \
                 - target:\n            kind: ConfigMap\n            name: \".*-config\"\n          \
                   patch: |\n            - op: add\n              path: /data/patched\n              value: by-kustomize\n      \
               images:\n        - name: nginx\n          newTag: \"1.27\"\n"
    );
    let hr_yaml = helmrelease(&ns, name, "fidelity", &spec).replacen(
        &format!("  name: {name}\n"),
        &format!(
            "  name: {name}\n  annotations:\n    cozyhr.cozystack.io/values-files: values-base.yaml,values-prod.yaml\n"
        ),
        1,
    );
    apply(&hr_yaml);
    let hr = wait_hr_ready(&ns, name, READY_TIMEOUT);

    // The release helm-controller made: the shortened name, stored in the HelmRelease's namespace.
    let release = hr.pointer("/status/history/0/name").and_then(Value::as_str).expect("status.history[0].name");
    assert_eq!(release.len(), 53, "release name {release} is not Flux-shortened from {full_release}");
    assert!(full_release.starts_with(&release[..40]) && release != full_release, "{release} vs {full_release}");
    assert_eq!(hr.pointer("/status/history/0/namespace").and_then(Value::as_str), Some(target.as_str()));
    assert!(!helm_release_secrets(&ns, release).is_empty(), "no Helm release Secret for {release} in {ns}");

    let stored = objects(&helm_get(&["manifest", release, "-n", &ns]).stdout);
    // The fixture really exercises each feature on helm-controller's side (else equality proves little).
    let cm = find(&stored, "ConfigMap", &format!("{release}-config"));
    assert_eq!(cm.pointer("/data/patched"), Some(&Value::from("by-kustomize")), "kustomize patch: {cm}");
    assert_eq!(cm.pointer("/metadata/labels/team"), Some(&Value::from("platform")), "commonMetadata: {cm}");
    assert_eq!(cm.pointer("/metadata/annotations/example.com~1contact"), Some(&Value::from("e2e-tests")));
    assert_eq!(cm.pointer("/metadata/labels/helm.toolkit.fluxcd.io~1name"), Some(&Value::from(name)));
    assert_eq!(cm.pointer("/data/namespace"), Some(&Value::from(target.as_str())));
    assert!(cm.pointer("/data/legacy").is_none(), "the chart's own values.yaml leaked in: {cm}");
    let values_json: Value =
        serde_json::from_str(cm.pointer("/data/values.json").and_then(Value::as_str).expect("values.json")).unwrap();
    assert_eq!(values_json.pointer("/auth/token"), Some(&Value::from("s3cr3t-from-secret")));
    assert_eq!(values_json.pointer("/app/port"), Some(&Value::from(8080)), "targetPath type inference");
    assert_eq!(values_json.pointer("/app/replicas"), Some(&Value::from(3)));
    assert_eq!(values_json.pointer("/feature/keep"), Some(&serde_json::json!(["z"])));
    let deploy = find(&stored, "Deployment", release);
    assert_eq!(deploy.pointer("/spec/template/spec/containers/0/image"), Some(&Value::from("nginx:1.27")));

    // helm cozy show: the same objects, field for field.
    let shown = cozy(helm, dev.path(), &ns, &["show", name]).ok();
    assert_same_objects(&objects(&shown.stdout), &stored, &format!("{helm:?}"));

    // helm cozy values: the release's config (without chart defaults), exactly.
    let ours = cozy(helm, dev.path(), &ns, &["values", name, "-o", "json"]).ok().json();
    let theirs = helm_get(&["values", release, "-n", &ns, "-o", "json"]).json();
    assert_eq!(
        ours,
        theirs,
        "{helm:?}: helm cozy values differs from helm-controller's stored release config\nours:\n{}\ntheirs:\n{}",
        serde_json::to_string_pretty(&ours).unwrap(),
        serde_json::to_string_pretty(&theirs).unwrap()
    );
}

/// An integral number beyond 2^53 in a values source: helm-controller reads it as a Go float64, and Helm
/// stores and prints it with Go's encoding/json (`12345678901234567000`, the shortest digits that round-trip),
/// not as the float's exact binary value (`12345678901234567168`); `helm cozy values -o json` must print it
/// the same way. Helm 4 only: the printing is helm cozy's and the same under both, the release is
/// helm-controller's.
#[test]
fn values_json_prints_large_numbers_as_helm_stores_them_helm4() {
    let helm = Helm::V4;
    let ns = namespace("sd-big");
    let chart = Chart::new(
        "big",
        "0.1.0",
        "{}\n",
        &[(
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  big: {{ toJson .Values.big | quote }}\n",
        )],
    );
    chart.publish("big", &ns);
    apply(&format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big-values\n  namespace: {ns}\ndata:\n  values.yaml: \"big: 12345678901234567890\\n\"\n"
    ));
    apply(&helmrelease(&ns, "big", "big", "valuesFrom:\n  - kind: ConfigMap\n    name: big-values\n"));
    wait_hr_ready(&ns, "big", READY_TIMEOUT);
    let shown = cozy(helm, chart.path(), &ns, &["show", "big"]).ok();
    assert_same_objects(&objects(&shown.stdout), &objects(&helm_get(&["manifest", "big", "-n", &ns]).stdout), "big");
    let ours = cozy(helm, chart.path(), &ns, &["values", "big", "-o", "json"]).ok();
    let theirs = helm_get(&["values", "big", "-n", &ns, "-o", "json"]);
    assert!(theirs.stdout.contains("12345678901234567000"), "helm get values: {}", theirs.stdout);
    assert!(
        ours.stdout.contains("12345678901234567000"),
        "helm cozy values -o json:\n{}\nhelm get values -o json:\n{}",
        ours.stdout,
        theirs.stdout
    );
}

/// The YAML a chart's templates produce, read as helm-controller reads it, on both of helm cozy's
/// post-render paths: the in-process one (HelmRelease `edges-fast`) and kustomize's (`edges-kustomize`,
/// whose chart adds a document with an alias and a timestamp, which only go-yaml v3 may interpret).
/// Covered: block scalars ending a document in the middle and at the end of a template (helm-controller's
/// Helm 4.2.0-4.2.3 trims the first, not the second; 4.1 and 4.2.4 keep both), `>`; with Helm 4 only, `|+` ending a template and a block scalar
/// ending a template whose kinds Helm sorts (Helm 3 loses both before any post-renderer runs; Helm 4's
/// `helm template` hides the second, so helm cozy renders again through Helm's post-renderer); YAML 1.1
/// words (`yes`, `n`), version-like and octal-like strings,
/// `-Xmx512m`, flow collections, `annotations: {}` and `labels: null`. Then the diff against the cluster
/// right after helm-controller installed it: nothing to change.
fn yaml_edges(helm: Helm) {
    let ns = namespace("sd-edges");
    let keep = helm == Helm::V4;
    let templates = ["blocks.yaml", "mixed.yaml", "keep.yaml", "ordered.yaml", "fallback.yaml"]
        .map(|t| (t, fixture(&format!("edges/templates/{t}"))));
    let templates: Vec<(&str, &str)> = templates.iter().map(|(n, t)| (*n, t.as_str())).collect();
    let chart = Chart::new("edges", "0.1.0", "fallback: false\nkeep: false\n", &templates);
    chart.publish("edges", &ns);
    for (name, fallback) in [("edges-fast", false), ("edges-kustomize", true)] {
        let spec = format!(
            "values:\n  fallback: {fallback}\n  keep: {keep}\ncommonMetadata:\n  labels:\n    team: platform\n"
        );
        apply(&helmrelease(&ns, name, "edges", &spec));
    }
    for (name, fallback) in [("edges-fast", false), ("edges-kustomize", true)] {
        wait_hr_ready(&ns, name, READY_TIMEOUT);
        let stored = objects(&helm_get(&["manifest", name, "-n", &ns]).stdout);
        let block = |i: u32| find(&stored, "ConfigMap", &format!("{name}-block-{i}"))["data"]["config.yaml"].clone();
        // The fixture shows helm-controller's behaviour, which the equality below then pins down: its
        // Helm SDK trims a document inside a template (4.2.0-4.2.3) or keeps its ending (4.1, 4.2.4).
        let inside = if cozyhr_e2e::flux().keeps_document_endings() {
            "server:\n  port: 8000\n"
        } else {
            "server:\n  port: 8000"
        };
        assert_eq!(block(0), Value::from(inside), "{name}: inside a template");
        assert_eq!(block(2), Value::from("server:\n  port: 8002\n"), "{name}: kept at a template's end");
        assert_eq!(find(&stored, "ConfigMap", &format!("{name}-block-0"))["data"]["on"], "yes");
        if keep {
            assert_eq!(find(&stored, "ConfigMap", &format!("{name}-keep"))["data"]["kept"], "x\n\n");
            let ordered = find(&stored, "ConfigMap", &format!("{name}-ordered"));
            assert_eq!(ordered["data"]["config.yaml"], "last: document\n", "{ordered}");
        }
        if fallback {
            let anchors = find(&stored, "ConfigMap", &format!("{name}-anchors"));
            assert_eq!(anchors["data"]["b"], "shared", "{anchors}");
            assert_eq!(anchors["data"]["date"], "2001-12-14T00:00:00Z", "{anchors}");
        }
        let shown = cozy(helm, chart.path(), &ns, &["show", name]).ok();
        assert_same_objects(&objects(&shown.stdout), &stored, &format!("{helm:?} {name}"));
        let diff = cozy(helm, chart.path(), &ns, &["diff", name, "--detailed-exitcode"]);
        assert_eq!(diff.code, Some(0), "{helm:?} {name}: diff right after install:\n{}\n{}", diff.stdout, diff.stderr);
    }
}

helm_tests! {
    yaml_edges_read_as_helm_controller_reads_them => yaml_edges;
}

/// SIGINT while helm renders (`helm-cozy show`, run directly so the signal reaches it): exit 130 with one
/// line, and the helm child gone with it. The composed values, which hold valuesFrom Secret data, reach
/// helm on its standard input: no file holds them, while helm runs or after.
#[test]
fn interrupted_show_leaves_no_values_file() {
    let ns = namespace("sd-int");
    // A template that keeps helm busy for seconds; the HelmRelease is suspended, so Flux never renders it.
    let chart = Chart::new(
        "slow",
        "0.1.0",
        "spin: 6000\n",
        &[(
            "cm.yaml",
            "{{- range until (int $.Values.spin) }}{{- range until (int $.Values.spin) }}{{- end }}{{- end }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: slow\n",
        )],
    );
    apply(&helmrelease(&ns, "slow", "slow", "suspend: true\nvalues:\n  marker: a-secret-marker\n"));
    let tmp = tempfile::tempdir().expect("temp dir");
    let cache = tempfile::tempdir().expect("temp dir");
    let mut c = command(env().bin_dir.join("helm-cozy"));
    c.args(["show", "slow", "-n", &ns, "-C"])
        .arg(chart.path())
        .env("HELM_BIN", &env().helm3)
        .env("TMPDIR", tmp.path())
        .env("XDG_CACHE_HOME", cache.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().expect("start helm-cozy show");
    let files = || files_under(tmp.path()).into_iter().chain(files_under(cache.path())).collect::<Vec<_>>();
    let holds_values =
        || files().iter().any(|f| std::fs::read_to_string(f).is_ok_and(|t| t.contains("a-secret-marker")));
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let helm = loop {
        assert!(!holds_values(), "a file holds the values: {:?}", files());
        if let Some((pid, _)) = children(child.id()).into_iter().find(|(_, comm)| comm == "helm") {
            break pid;
        }
        assert!(std::time::Instant::now() < deadline, "helm-cozy show never started helm");
        assert!(child.try_wait().expect("poll").is_none(), "helm-cozy show ended before it could be interrupted");
        std::thread::sleep(Duration::from_millis(20));
    };
    // helm is rendering (reading its values took it no time at all).
    std::thread::sleep(Duration::from_millis(500));
    assert!(!holds_values(), "a file holds the values while helm renders: {:?}", files());
    let kill = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status();
    assert!(kill.is_ok_and(|s| s.success()), "kill -INT failed");
    let out = child.wait_with_output().expect("wait for helm-cozy");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "stderr: {stderr}");
    assert!(stderr.trim().lines().count() == 1 && stderr.contains("interrupted by SIGINT"), "stderr: {stderr}");
    assert!(!holds_values(), "a file holds the values after the interrupted command: {:?}", files());
    eventually("helm to be gone with helm-cozy", Duration::from_secs(10), || {
        if running(helm) { Err(format!("helm {helm} still runs")) } else { Ok(()) }
    });
}

/// A chart with a ConfigMap, a post-install/post-upgrade hook whose data says `hook_data`, and optionally a
/// test hook.
fn hooks_chart(hook_data: &str, with_test: bool) -> Chart {
    let hook = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{{{ .Release.Name }}}}-hook\n  annotations:\n    \
         helm.sh/hook: post-install,post-upgrade\ndata:\n  config: |\n    hook: {hook_data}\n"
    );
    let test = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-test\n  annotations:\n    \
                helm.sh/hook: test\ndata:\n  run: by-helm-test\n";
    let mut templates = vec![
        ("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  a: b\n"),
        ("hook.yaml", hook.as_str()),
    ];
    if with_test {
        templates.push(("test.yaml", test));
    }
    Chart::new("hooks", "0.1.0", "{}\n", &templates)
}

/// Hooks meet the post-renderers as `spec.postRenderStrategy` says: with helm-controller's default
/// (`combined`) a hook gets commonMetadata and the origin labels like every object, with `nohooks` it is
/// stored as the chart renders it. `helm cozy show` prints the hooks too; together with the objects they
/// equal what helm-controller stored (`helm get manifest` and `helm get hooks`).
fn hooks_follow_the_post_render_strategy(helm: Helm) {
    let ns = namespace("sd-hooks");
    let chart = hooks_chart("data", true);
    chart.publish("hooks", &ns);
    let common = "commonMetadata:\n  labels:\n    team: platform\n";
    for (name, strategy) in [("hooks-combined", ""), ("hooks-nohooks", "postRenderStrategy: nohooks\n")] {
        apply(&helmrelease(&ns, name, "hooks", &format!("{common}{strategy}")));
    }
    for (name, post_rendered) in [("hooks-combined", true), ("hooks-nohooks", false)] {
        wait_hr_ready(&ns, name, READY_TIMEOUT);
        let manifest = helm_get(&["manifest", name, "-n", &ns]).stdout;
        let hooks = helm_get(&["hooks", name, "-n", &ns]).stdout;
        let stored = objects(&format!("{manifest}\n---\n{hooks}"));
        let hook = find(&stored, "ConfigMap", &format!("{name}-hook"));
        assert_eq!(hook.pointer("/metadata/labels/team").is_some(), post_rendered, "{name}: {hook}");
        let shown = cozy(helm, chart.path(), &ns, &["show", name]).ok();
        assert_same_objects(&objects(&shown.stdout), &stored, &format!("{helm:?} {name}"));
        // Hooks are compared with the release's hooks (a test hook not at all): nothing to change.
        for against in
            [&["diff", name, "--detailed-exitcode"][..], &["diff", name, "--detailed-exitcode", "--against", "release"]]
        {
            let diff = cozy(helm, chart.path(), &ns, against);
            assert_eq!(diff.code, Some(0), "{helm:?} {against:?}:\n{}\n{}", diff.stdout, diff.stderr);
        }
    }
    // A changed hook is a change; the test hook still is not compared.
    let changed = hooks_chart("changed", false);
    let diff = cozy(helm, changed.path(), &ns, &["diff", "hooks-combined", "-o", "summary", "--detailed-exitcode"]);
    assert_eq!(diff.code, Some(2), "{helm:?}:\n{}\n{}", diff.stdout, diff.stderr);
    assert!(
        diff.stdout.contains("hooks-combined-hook") && !diff.stdout.contains("hooks-combined-test"),
        "{}",
        diff.stdout
    );
    assert!(diff.stdout.contains("0 to add, 1 to change, 0 to remove"), "{}", diff.stdout);
}

helm_tests! {
    hooks_follow_the_post_render_strategy => hooks_follow_the_post_render_strategy;
}

helm_tests! {
    show_and_values_equal_what_helm_controller_installed => fidelity;
}

// ---------------------------------------------------------------------------------------------------
// 2. Diff

const PW_OLD: &str = "pw-old-4f1c9a7e";
const PW_NEW: &str = "pw-new-b83d02e5";
const PW_DRIFT: &str = "pw-hand-61aa0c3f";

fn b64(s: &str) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let b = s.as_bytes();
    let mut out = String::new();
    for chunk in b.chunks(3) {
        let n =
            (chunk[0] as u32) << 16 | (*chunk.get(1).unwrap_or(&0) as u32) << 8 | *chunk.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(T[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn diff_chart() -> Chart {
    Chart::new(
        "diffy",
        "0.1.0",
        "message: default\npassword: none\n",
        &[(
            "objects.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  message: {{ .Values.message | quote }}\n  \
         other: unchanged\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Release.Name }}-secret\ntype: Opaque\ndata:\n  \
         password: {{ .Values.password | b64enc | quote }}\n  user: {{ \"admin\" | b64enc | quote }}\n",
        )],
    )
}

fn set_message(ns: &str, message: &str) {
    apply(&format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: diff-values\n  namespace: {ns}\ndata:\n  values.yaml: |\n    message: {message}\n"
    ));
}

fn set_password(ns: &str, password: &str) {
    apply(&format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: diff-pass\n  namespace: {ns}\nstringData:\n  password: {password}\n"
    ));
}

/// The changed lines of a unified diff (`+`/`-` lines, not the `---`/`+++` headers), trimmed of the
/// marker's following whitespace.
fn changed_lines(diff: &str) -> Vec<String> {
    diff.lines()
        .filter(|l| (l.starts_with('+') && !l.starts_with("+++")) || (l.starts_with('-') && !l.starts_with("---")))
        .map(|l| format!("{}{}", &l[..1], l[1..].trim()))
        .collect()
}

#[track_caller]
fn assert_no_secret(r: &Run, secrets: &[&str], what: &str) {
    for s in secrets {
        for form in [s.to_string(), b64(s)] {
            assert!(
                !r.stdout.contains(&form) && !r.stderr.contains(&form),
                "{what}: `{}` printed secret value {form:?}\nstdout:\n{}\nstderr:\n{}",
                r.line,
                r.stdout,
                r.stderr
            );
        }
    }
}

/// HelmRelease `diffy` of [`diff_chart`] in `ns`, its values from a ConfigMap (message "hello") and a
/// Secret (password [`PW_OLD`]), installed by helm-controller.
fn install_diffy(ns: &str) -> (&'static str, Chart) {
    let name = "diffy";
    let chart = diff_chart();
    chart.publish(name, ns);
    set_message(ns, "hello");
    set_password(ns, PW_OLD);
    apply(&helmrelease(
        ns,
        name,
        name,
        "valuesFrom:\n  - kind: ConfigMap\n    name: diff-values\n  \
         - kind: Secret\n    name: diff-pass\n    valuesKey: password\n    targetPath: password\n",
    ));
    wait_hr_ready(ns, name, READY_TIMEOUT);
    (name, chart)
}

fn diff_flow(helm: Helm) {
    let ns = namespace("sd-diff");
    let (name, chart) = install_diffy(&ns);
    let cm_name = format!("{name}-cm");
    assert_eq!(
        get_json("configmap", &ns, &cm_name).and_then(|c| c.pointer("/data/message").cloned()),
        Some(Value::from("hello"))
    );
    let diff = |extra: &[&str]| {
        let mut args = vec!["diff", name, "--detailed-exitcode"];
        args.extend_from_slice(extra);
        cozy(helm, chart.path(), &ns, &args)
    };

    // Right after helm-controller installed it: nothing to change, against the cluster and the release.
    let r = diff(&[]).code(0);
    assert!(changed_lines(&r.stdout).is_empty(), "{}", r.stdout);
    assert_no_secret(&r, &[PW_OLD], "clean diff");
    diff(&["--against", "release"]).code(0);
    let plan = diff(&["-o", "json"]).code(0).json();
    assert!(!plan.to_string().contains(PW_OLD), "{plan}");
    assert_eq!(plan["summary"], serde_json::json!({"add": 0, "change": 0, "remove": 0}), "{plan}");

    // A valuesFrom ConfigMap changes: exactly that line changes.
    set_message(&ns, "changed-by-test");
    let r = diff(&[]).code(2);
    assert_eq!(
        changed_lines(&r.stdout),
        vec!["-message: hello".to_string(), "+message: changed-by-test".to_string()],
        "diff after the valuesFrom change:\n{}",
        r.stdout
    );
    assert!(r.stdout.contains(&cm_name), "the diff names the ConfigMap:\n{}", r.stdout);
    assert!(!r.stdout.contains(&format!("{name}-secret")), "the Secret did not change:\n{}", r.stdout);
    assert!(r.stdout.contains("0 to add, 1 to change, 0 to remove"), "plan line:\n{}", r.stdout);
    let r = diff(&["--against", "release"]).code(2);
    assert_eq!(changed_lines(&r.stdout), vec!["-message: hello", "+message: changed-by-test"], "{}", r.stdout);
    let summary = diff(&["-o", "summary"]).code(2);
    assert!(summary.stdout.contains(&cm_name) && summary.stdout.contains("0 to add, 1 to change, 0 to remove"));
    set_message(&ns, "hello");
    diff(&[]).code(0);

    // Drift: someone edits a deployed object by hand. The cluster diff shows that field; the stored release
    // did not change and the rendering did not either, so `--against release` (helm-diff's default view)
    // sees nothing: drift is exactly what only the live comparison can show.
    kubectl(["-n", &ns, "patch", "configmap", &cm_name, "--type=merge", "-p", r#"{"data":{"message":"hand-edited"}}"#])
        .ok();
    let r = diff(&[]).code(2);
    assert_eq!(
        changed_lines(&r.stdout),
        vec!["-message: hand-edited", "+message: hello"],
        "diff after the hand edit:\n{}",
        r.stdout
    );
    diff(&["--against", "release"]).code(0);
    // Put the object back: nothing to change again.
    kubectl(["-n", &ns, "patch", "configmap", &cm_name, "--type=merge", "-p", r#"{"data":{"message":"hello"}}"#]).ok();
    diff(&[]).code(0);

    // Secrets: a changed password in the valuesFrom Secret is shown as a changed Secret, never its value.
    set_password(&ns, PW_NEW);
    for extra in [&[][..], &["-o", "summary"], &["-o", "json"], &["--against", "release"], &["--context", "-1"]] {
        let r = diff(extra).code(2);
        assert!(r.stdout.contains(&format!("{name}-secret")), "`{}` names the Secret:\n{}", r.line, r.stdout);
        assert_no_secret(&r, &[PW_OLD, PW_NEW], "masked diff");
    }
    let r = diff(&[]).code(2);
    let changed = changed_lines(&r.stdout);
    assert!(
        changed.iter().any(|l| l.starts_with("-password:")) && changed.iter().any(|l| l.starts_with("+password:")),
        "the masked diff shows the password key as changed:\n{}",
        r.stdout
    );
    assert!(!changed.iter().any(|l| l.contains("user:")), "user did not change:\n{}", r.stdout);
    let r = diff(&["--show-secrets"]).code(2);
    assert!(
        r.stdout.contains(PW_NEW) || r.stdout.contains(&b64(PW_NEW)),
        "--show-secrets shows the new value:\n{}",
        r.stdout
    );
    assert!(r.stdout.contains(PW_OLD) || r.stdout.contains(&b64(PW_OLD)), "and the old one:\n{}", r.stdout);
    set_password(&ns, PW_OLD);
    diff(&[]).code(0);

    // Drift on the Secret: shown as a change, masked.
    kubectl([
        "-n",
        &ns,
        "patch",
        "secret",
        &format!("{name}-secret"),
        "--type=merge",
        "-p",
        &format!(r#"{{"stringData":{{"password":"{PW_DRIFT}"}}}}"#),
    ])
    .ok();
    let r = diff(&[]).code(2);
    assert!(r.stdout.contains(&format!("{name}-secret")), "{}", r.stdout);
    assert_no_secret(&r, &[PW_OLD, PW_DRIFT], "masked drift");
    let r = diff(&["--show-secrets"]).code(2);
    assert!(r.stdout.contains(PW_DRIFT) || r.stdout.contains(&b64(PW_DRIFT)), "{}", r.stdout);
    diff(&["--against", "release"]).code(0);
}

helm_tests! {
    diff_sees_values_changes_drift_and_masks_secrets => diff_flow;
}

/// A kubeconfig of the test cluster's that impersonates `user` (kubeconfig `as:`), written as JSON (which
/// is YAML) into `dir`.
fn impersonating_kubeconfig(dir: &Path, user: &str) -> std::path::PathBuf {
    let mut config = kubectl(["config", "view", "--raw", "-o", "json"]).ok().json();
    let users = config.get_mut("users").and_then(Value::as_array_mut).expect("kubeconfig users");
    for u in users {
        u["user"]["as"] = Value::from(user);
    }
    let path = dir.join("impersonating.kubeconfig");
    std::fs::write(&path, config.to_string()).expect("write the kubeconfig");
    path
}

/// show and diff read the HelmRelease as a LIST of its one name (cheaper for the API server); a user who
/// may only get it by name (RBAC `resourceNames`), not list HelmReleases, is served by a GET instead.
fn get_by_name_is_enough(helm: Helm) {
    let ns = namespace("sd-rbac");
    let (name, chart) = install_diffy(&ns);
    let user = format!("cozyhr-get-only-{ns}");
    apply(&format!(
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: get-only\n  namespace: {ns}\nrules:\n\
         - apiGroups: [helm.toolkit.fluxcd.io]\n  resources: [helmreleases]\n  resourceNames: [{name}]\n  verbs: [get]\n\
         - apiGroups: [\"\"]\n  resources: [configmaps, secrets]\n  verbs: [get, list]\n---\n\
         apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: get-only\n  namespace: {ns}\n\
         roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: get-only\nsubjects:\n\
         - apiGroup: rbac.authorization.k8s.io\n  kind: User\n  name: {user}\n"
    ));
    let dir = tempfile::Builder::new().prefix("cozyhr-rbac-").tempdir().expect("a temporary directory");
    let kubeconfig = impersonating_kubeconfig(dir.path(), &user);
    // The user can get the HelmRelease but not list HelmReleases: the case the GET is there for.
    let as_user = |args: &[&str]| {
        let mut c = command(&env().kubectl);
        c.env("KUBECONFIG", &kubeconfig).args(args).args(["-n", &ns]);
        run(c)
    };
    as_user(&["get", "helmrelease", name]).ok();
    let listed = as_user(&["get", "helmreleases"]);
    assert!(listed.code != Some(0) && listed.stderr.contains("forbidden"), "{}", listed.stderr);

    let cozy_as_user = |args: &[&str]| {
        let mut c = helm_home(helm).command();
        c.env("KUBECONFIG", &kubeconfig).arg("cozy").args(args).arg("-C").arg(chart.path()).args(["-n", &ns]);
        run(c)
    };
    let shown = cozy_as_user(&["show", name]).ok();
    let admin = cozy(helm, chart.path(), &ns, &["show", name]).ok();
    assert_eq!(shown.stdout, admin.stdout, "show as a user who may only get the HelmRelease");
    cozy_as_user(&["diff", name, "--detailed-exitcode"]).code(0);
}

helm_tests! {
    a_user_who_may_only_get_the_helmrelease_can_show_and_diff => get_by_name_is_enough;
}

// ---------------------------------------------------------------------------------------------------
// 3. Errors

/// Exit 1 and one line from helm cozy on stderr (Helm's own trailer for a failed plugin, if any, aside),
/// nothing on stdout.
#[track_caller]
fn one_line_error(r: &Run) -> String {
    assert_eq!(r.code, Some(1), "`{}` exited {:?}\nstdout:\n{}\nstderr:\n{}", r.line, r.code, r.stdout, r.stderr);
    assert!(r.stdout.trim().is_empty(), "`{}` printed on stdout:\n{}", r.line, r.stdout);
    let ours: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter(|l| !(l.starts_with("Error: plugin \"cozy\"") || l.starts_with("Error: plugin cozy")))
        .collect();
    assert_eq!(ours.len(), 1, "`{}`: not one line on stderr:\n{}", r.line, r.stderr);
    ours[0].to_string()
}

fn errors(helm: Helm) {
    let ns = namespace("sd-err");
    let chart = diff_chart();

    // HelmRelease not found: say so, and offer --plain.
    let line = one_line_error(&cozy(helm, chart.path(), &ns, &["show", "no-such-release"]));
    assert!(line.contains("no-such-release") && line.contains("--plain"), "{line}");
    let line = one_line_error(&cozy(helm, chart.path(), &ns, &["diff", "no-such-release"]));
    assert!(line.contains("no-such-release"), "{line}");

    // Not a chart directory.
    let empty = tempfile::Builder::new().prefix("cozyhr-not-a-chart-").tempdir().unwrap();
    std::fs::write(empty.path().join("README.md"), "not a chart\n").unwrap();
    let line = one_line_error(&cozy(helm, empty.path(), &ns, &["show", "x"]));
    assert!(line.contains(&*empty.path().to_string_lossy()) && line.contains("Chart.yaml"), "{line}");

    // A missing, non-optional valuesFrom ConfigMap: named. (Suspended: helm-controller stays out of it.)
    apply(&helmrelease(
        &ns,
        "missing-ref",
        "unused",
        "suspend: true\nvaluesFrom:\n  - kind: ConfigMap\n    name: present-values\n  - kind: ConfigMap\n    name: absent-values\n",
    ));
    apply(&format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: present-values\n  namespace: {ns}\ndata:\n  values.yaml: \"message: hi\\n\"\n"
    ));
    for sub in ["show", "values", "diff"] {
        let line = one_line_error(&cozy(helm, chart.path(), &ns, &[sub, "missing-ref"]));
        assert!(line.contains("absent-values") && !line.contains("present-values"), "{sub}: {line}");
    }
    // Optional: no error.
    apply(&helmrelease(
        &ns,
        "optional-ref",
        "unused",
        "suspend: true\nvaluesFrom:\n  - kind: ConfigMap\n    name: absent-values\n    optional: true\n",
    ));
    cozy(helm, chart.path(), &ns, &["values", "optional-ref"]).ok();

    // Invalid YAML in a values source: names the source and the line.
    apply(&format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad-values\n  namespace: {ns}\ndata:\n  values.yaml: |\n    \
         message: fine\n    other: also fine\n    list: [1, 2\n    next: x\n"
    ));
    apply(&helmrelease(
        &ns,
        "bad-yaml",
        "unused",
        "suspend: true\nvaluesFrom:\n  - kind: ConfigMap\n    name: present-values\n  - kind: ConfigMap\n    name: bad-values\n",
    ));
    for sub in ["show", "values"] {
        let line = one_line_error(&cozy(helm, chart.path(), &ns, &[sub, "bad-yaml"]));
        assert!(line.contains("bad-values") && !line.contains("present-values"), "{sub}: {line}");
        assert!(line.contains("line 3") || line.contains("line 4"), "{sub}: names the line: {line}");
    }
    // The same for a -f file of the user's.
    let bad = chart.path().join("bad.yaml");
    std::fs::write(&bad, "a: 1\nb: : 2\n").unwrap();
    let line = one_line_error(&cozy(helm, chart.path(), &ns, &["show", "x", "--plain", "-f", &bad.to_string_lossy()]));
    assert!(line.contains("bad.yaml") && line.contains("line 2"), "{line}");
}

helm_tests! {
    errors_are_one_clear_line => errors;
}

/// Integers a `targetPath` writes are Go int64s in helm-controller's Helm (strvals, values in memory),
/// while helm reads a values file as JSON, where they would become float64s: `{{ .Values.x }}` of
/// 1000000 prints `1e+06` then. show, diff and apply give them to helm as int64s. (Beyond 2^53
/// helm-controller itself upgrades on every reconcile: the config it reads back from the release is
/// float64, so its digest never matches; nothing to compare with there.)
fn target_path_integers(helm: Helm) {
    let v = format!("{helm:?}").to_lowercase();
    let ns = namespace(&format!("sd-int-{v}"));
    let chart = Chart::new(
        "ints",
        "0.1.0",
        "limits: {}\n",
        &[(
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-limits\ndata:\n  \
             bytes: {{ .Values.limits.bytes | quote }}\n  large: {{ .Values.limits.large | quote }}\n  \
             kind: {{ kindOf .Values.limits.bytes | quote }}\n  yaml: {{ toYaml .Values.limits | quote }}\n",
        )],
    );
    chart.publish("ints", &ns);
    apply(&format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ints\n  namespace: {ns}\ndata:\n  \
         bytes: \"1000000\"\n  large: \"123456789012\"\n"
    ));
    let refs = "valuesFrom:\n  - kind: ConfigMap\n    name: ints\n    valuesKey: bytes\n    targetPath: limits.bytes\n  \
                - kind: ConfigMap\n    name: ints\n    valuesKey: large\n    targetPath: limits.large\n";
    apply(&helmrelease(&ns, "ints", "ints", refs));
    wait_hr_ready(&ns, "ints", READY_TIMEOUT);

    // helm-controller's side really has int64s (else equality proves nothing).
    let stored = objects(&helm_get(&["manifest", "ints", "-n", &ns]).stdout);
    let cm = find(&stored, "ConfigMap", "ints-limits");
    assert_eq!(cm["data"]["bytes"], "1000000", "{cm}");
    assert_eq!(cm["data"]["large"], "123456789012", "{cm}");
    assert_eq!(cm["data"]["kind"], "int64", "{cm}");

    let shown = cozy(helm, chart.path(), &ns, &["show", "ints"]).ok();
    assert_same_objects(&objects(&shown.stdout), &stored, &format!("{helm:?} targetPath integers"));
    let diff = cozy(helm, chart.path(), &ns, &["diff", "ints", "--detailed-exitcode"]);
    assert_eq!(diff.code, Some(0), "{helm:?}: {}\n{}", diff.stdout, diff.stderr);

    // apply installs them as int64s too, and helm-controller then finds nothing to do.
    chart.write("values.yaml", "limits: {}\nedited: true\n");
    // Published too: the chart applied is then its source's, so resume has nothing to hand back.
    chart.publish("ints", &ns);
    cozy(helm, chart.path(), &ns, &["apply", "ints"]).ok();
    let live = get_json("configmap", &ns, "ints-limits").expect("ConfigMap ints-limits");
    assert_eq!(live["data"]["bytes"], "1000000", "{live}");
    assert_eq!(live["data"]["large"], "123456789012", "{live}");
    resume_without_an_upgrade(&ns, "ints");
}

helm_tests! {
    target_path_integers_render_as_helm_controller_renders_them => target_path_integers;
}
