//! helm cozy follows the helm-controller the cluster runs: run against Flux 2.9.5 (helm-controller v1.6.4,
//! Helm SDK v4.2.4) and against Flux 2.8.0 as Cozystack runs it (helm-controller v1.5.0, Helm SDK v4.1.1):
//! `scripts/test.sh` runs this suite on each (`scripts/cluster.sh up --flux 2.8|2.9`). Every expectation
//! that differs between the two is read off the real controller first (what it stored), then helm cozy
//! is held to it.

use std::path::Path;
use std::time::Duration;

use cozyhr_e2e::{
    Chart, Helm, Run, apply, assert_same_objects, cozy_home, find, flux, get_json, helm_get, helm_revision, helm_tests,
    helmrelease, kubectl, namespace, objects, resume_without_an_upgrade, run, wait_hr_ready,
};
use serde_json::Value;

const READY_TIMEOUT: Duration = Duration::from_secs(180);

/// Which Helm renders: the plugin's own (`HELM_BIN`), or the Helm helm-controller embeds (`COZYHR_HELM`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Renders {
    PluginsHelm,
    ControllersHelm,
}

/// `helm cozy ARGS -C CHART -n NS` through the real Helm's plugin dispatch.
fn cozy(helm: Helm, renders: Renders, chart: &Path, ns: &str, args: &[&str]) -> Run {
    let mut c = cozy_home(helm).command();
    if renders == Renders::ControllersHelm {
        c.env("COZYHR_HELM", &flux().controller_helm);
    }
    c.arg("cozy").args(args).arg("-C").arg(chart).args(["-n", ns]);
    run(c)
}

/// The objects and hooks helm-controller stored for release NS/NAME.
fn stored(ns: &str, name: &str) -> std::collections::BTreeMap<String, Value> {
    let manifest = helm_get(&["manifest", name, "-n", ns]).stdout;
    let hooks = helm_get(&["hooks", name, "-n", ns]).stdout;
    objects(&format!("{manifest}\n---\n{hooks}"))
}

/// The line helm cozy prints when the rendering Helm can differ from helm-controller's for this chart.
fn helm_line(stderr: &str) -> Option<&str> {
    stderr.lines().find(|l| l.contains("renders with Helm"))
}

#[track_caller]
fn assert_in_sync(helm: Helm, renders: Renders, chart: &Path, ns: &str, name: &str) {
    let shown = cozy(helm, renders, chart, ns, &["show", name]).ok();
    assert_same_objects(&objects(&shown.stdout), &stored(ns, name), &format!("{helm:?} {renders:?} {name}"));
    let diff = cozy(helm, renders, chart, ns, &["diff", name, "--detailed-exitcode"]);
    assert_eq!(diff.code, Some(0), "{helm:?} {renders:?} {name}:\n{}\n{}", diff.stdout, diff.stderr);
}

// ---------------------------------------------------------------------------------------------------
// What the cluster runs

#[test]
fn version_and_status_name_the_controller_and_its_helm() {
    let f = flux();
    let out = kubectl(["cozyhr", "version"]).ok();
    let expected = format!(
        "helm-controller: {hc} (image ghcr.io/fluxcd/helm-controller:{hc} of Deployment flux-system/helm-controller)",
        hc = f.helm_controller
    );
    assert!(out.stdout.contains(&expected), "{}", out.stdout);
    assert!(out.stdout.contains(&format!("helm-controller's Helm: {}\n", f.controller_helm_version)), "{}", out.stdout);
    assert!(kubectl(["cozyhr", "version", "--client"]).ok().stdout.lines().count() == 1);

    // helm cozy also names the Helm that renders, and says when it is not helm-controller's.
    let plain = cozy_home(Helm::V4).run(["cozy", "version"]).ok();
    assert!(plain.stdout.contains(&expected), "{}", plain.stdout);
    assert!(plain.stdout.contains("note: the Helm that renders here"), "{}", plain.stdout);
    let mut matching = cozy_home(Helm::V4).command();
    matching.env("COZYHR_HELM", &f.controller_helm).args(["cozy", "version"]);
    let matching = run(matching).ok();
    // Built without a version stamp, as the SDK inside helm-controller is: it says v4.2, not v4.2.2.
    let minor = f.controller_helm_version.rsplit_once('.').map(|(mm, _)| mm).unwrap_or_default();
    assert!(matching.stdout.contains(&format!("helm: {minor} (")), "{}", matching.stdout);
    assert!(!matching.stdout.contains("note:"), "{}", matching.stdout);

    // status says who reconciles the release.
    let ns = namespace("fx-status");
    let chart = simple_chart("status");
    chart.publish("status", &ns);
    apply(&helmrelease(&ns, "status", "status", ""));
    let status = kubectl(["cozyhr", "status", "status", "-n", &ns]).ok();
    assert!(
        status.stdout.contains(&format!("Reconciled by: helm-controller {}", f.helm_controller)),
        "{}",
        status.stdout
    );
}

#[test]
fn without_the_deployment_the_crd_names_the_flux() {
    // A user who may not read Deployments: the HelmRelease CRD's Flux version label still says it.
    let f = flux();
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = restricted_kubeconfig(dir.path());
    let mut c = cozyhr_e2e::command(&cozyhr_e2e::env().kubectl);
    c.env("KUBECONFIG", &kubeconfig).args(["cozyhr", "version"]);
    let out = run(c).ok();
    assert!(
        out.stdout.contains(&format!("helm-controller: {} (Flux v{}", f.helm_controller, flux_version())),
        "{}",
        out.stdout
    );
}

/// The Flux version label cluster.sh puts on the CRDs, as Flux's install does.
fn flux_version() -> String {
    std::env::var("COZYHR_FLUX_VERSION")
        .expect("COZYHR_FLUX_VERSION is set by scripts/cluster.sh env")
        .trim_start_matches('v')
        .to_string()
}

/// A kubeconfig for user `reader`, impersonated by the admin: a ClusterRole that reads CRDs only.
fn restricted_kubeconfig(dir: &Path) -> std::path::PathBuf {
    apply(
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: cozyhr-e2e-crd-reader\nrules:\n- \
         apiGroups: [apiextensions.k8s.io]\n  resources: [customresourcedefinitions]\n  verbs: [get]\n---\napiVersion: \
         rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: cozyhr-e2e-crd-reader\nroleRef:\n  \
         apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: cozyhr-e2e-crd-reader\nsubjects:\n- kind: User\n  \
         name: crd-reader\n  apiGroup: rbac.authorization.k8s.io\n",
    );
    let admin = std::fs::read_to_string(&cozyhr_e2e::env().kubeconfig).expect("read the kubeconfig");
    let mut config: Value = serde_json::to_value(kubeconfig_json(&admin)).expect("kubeconfig");
    for user in config["users"].as_array_mut().expect("users") {
        user["user"]["as"] = "crd-reader".into();
    }
    let path = dir.join("kubeconfig");
    std::fs::write(&path, serde_json::to_string(&config).expect("json")).expect("write kubeconfig");
    path
}

/// The kubeconfig as JSON, converted by kubectl (which reads YAML as the API machinery does).
fn kubeconfig_json(yaml: &str) -> Value {
    let r = cozyhr_e2e::kubectl_stdin(&["config", "view", "--raw", "-o", "json", "--kubeconfig", "/dev/stdin"], yaml);
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("kubectl config view: {e}\n{}", r.stderr))
}

fn simple_chart(name: &str) -> Chart {
    Chart::new(
        name,
        "0.1.0",
        "greeting: hello\n",
        &[(
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  g: {{ .Values.greeting }}\n",
        )],
    )
}

// ---------------------------------------------------------------------------------------------------
// The chart of the issue: a chart-default null, a hook, postRenderers, commonMetadata, HelmVersion

fn issue_chart() -> Chart {
    let data = "  m: {{ toJson .Values.m | quote }}\n  helm: {{ .Capabilities.HelmVersion.Version | quote }}\n";
    Chart::new(
        "fluxy",
        "0.1.0",
        "m:\n  a: 1\n  b: null\n",
        &[
            (
                "cm.yaml",
                &format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{{{ .Release.Name }}}}\ndata:\n{data}"),
            ),
            (
                "hook.yaml",
                &format!(
                    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{{{ .Release.Name }}}}-hook\n  annotations:\n    \
                     helm.sh/hook: post-install,post-upgrade\ndata:\n{data}"
                ),
            ),
        ],
    )
}

const ISSUE_SPEC: &str = "values:\n  m:\n    c: 3\ncommonMetadata:\n  labels:\n    team: platform\npostRenderers:\n- \
                          kustomize:\n    patches:\n    - target:\n        kind: ConfigMap\n      patch: |\n        \
                          apiVersion: v1\n        kind: ConfigMap\n        metadata:\n          name: any\n          \
                          labels:\n            patched: \"yes\"\n";

fn the_issue_chart(helm: Helm) {
    let f = flux();
    let ns = namespace("fx-issue");
    let name = "fluxy";
    let chart = issue_chart();
    chart.publish_digested(name, &ns);
    apply(&helmrelease(&ns, name, name, ISSUE_SPEC));
    wait_hr_ready(&ns, name, READY_TIMEOUT);

    // What helm-controller made: its Helm's coalescing and version; the hook post-rendered (v1.5.0 always,
    // v1.6 by the default strategy, combined).
    let theirs = stored(&ns, name);
    let cm = find(&theirs, "ConfigMap", name);
    let expected_m = if f.is_2_8() { r#"{"a":1,"b":null,"c":3}"# } else { r#"{"a":1,"c":3}"# };
    assert_eq!(cm["data"]["m"], expected_m, "{cm}");
    let minor = f.controller_helm_version.rsplit_once('.').map(|(mm, _)| mm.to_string()).unwrap_or_default();
    assert_eq!(cm["data"]["helm"], minor, "{cm}");
    let hook = find(&theirs, "ConfigMap", &format!("{name}-hook"));
    assert_eq!(hook.pointer("/metadata/labels/team"), Some(&Value::from("platform")), "{hook}");
    assert_eq!(hook.pointer("/metadata/labels/patched"), Some(&Value::from("yes")), "{hook}");

    // Rendered with the Helm helm-controller embeds: exact, hooks too, and nothing to say.
    assert_in_sync(helm, Renders::ControllersHelm, chart.path(), &ns, name);
    let quiet = cozy(helm, Renders::ControllersHelm, chart.path(), &ns, &["diff", name]).ok();
    assert_eq!(helm_line(&quiet.stderr), None, "{}", quiet.stderr);

    // Rendered with the plugin's own Helm (3.22 or 4.3): one line names what differs for this chart.
    let other = cozy(helm, Renders::PluginsHelm, chart.path(), &ns, &["diff", name, "--detailed-exitcode"]);
    assert_eq!(other.code, Some(2), "{}\n{}", other.stdout, other.stderr);
    let line =
        helm_line(&other.stderr).unwrap_or_else(|| panic!("no line names the Helm difference:\n{}", other.stderr));
    assert!(
        line.contains(&format!(
            "helm-controller {} renders with Helm {}",
            f.helm_controller, f.controller_helm_version
        )) && line.contains(".Capabilities.HelmVersion")
            && line.contains("COZYHR_HELM"),
        "{line}"
    );
    if f.is_2_8() && helm == Helm::V4 {
        assert!(line.contains("m.b: null is kept there"), "{line}");
    }
    assert_eq!(other.stderr.lines().filter(|l| l.contains("renders with Helm")).count(), 1, "{}", other.stderr);

    // apply with the matching Helm, then resume: helm-controller finds it in sync.
    let before = helm_revision(&ns, name);
    cozy(helm, Renders::ControllersHelm, chart.path(), &ns, &["apply", name]).ok();
    assert_eq!(helm_revision(&ns, name), before + 1);
    resume_without_an_upgrade(&ns, name);
}

helm_tests! {
    the_issue_chart_is_exact_under_the_clusters_flux => the_issue_chart;
}

// ---------------------------------------------------------------------------------------------------
// Each version rule, against the controller that has it

/// Hooks and the post-renderers: v1.5.0 post-renders hooks whatever the HelmRelease says (its CRD has no
/// `postRenderStrategy`: the API server refuses it), v1.6 leaves them alone under `nohooks`.
fn hooks_by_version(helm: Helm) {
    let ns = namespace("fx-hooks");
    let name = "hooked";
    let chart = Chart::new(
        name,
        "0.1.0",
        "{}\n",
        &[
            (
                "hook.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-hook\n  annotations:\n    \
             helm.sh/hook: post-install,post-upgrade\ndata:\n  a: b\n",
            ),
            ("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  a: b\n"),
        ],
    );
    chart.publish(name, &ns);
    // helm-controller v1.5's HelmRelease has no postRenderStrategy (the API server refuses the field).
    let strategy = if flux().is_2_8() { "" } else { "postRenderStrategy: nohooks\n" };
    apply(&helmrelease(&ns, name, name, &format!("{strategy}commonMetadata:\n  labels:\n    team: platform\n")));
    wait_hr_ready(&ns, name, READY_TIMEOUT);
    let theirs = stored(&ns, name);
    let hook = find(&theirs, "ConfigMap", &format!("{name}-hook"));
    assert_eq!(hook.pointer("/metadata/labels/team").is_some(), flux().is_2_8(), "{hook}");
    assert_in_sync(helm, Renders::PluginsHelm, chart.path(), &ns, name);
}

/// `valuesFrom[].literal`: v1.6 writes the value as a string; v1.5 has no such field and parses it with
/// Helm's `--set` rules (an integer).
fn literal_by_version(helm: Helm) {
    let ns = namespace("fx-literal");
    let name = "literal";
    let chart = Chart::new(
        name,
        "0.1.0",
        "{}\n",
        &[(
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  kind: {{ kindOf .Values.x | quote }}\n",
        )],
    );
    chart.publish(name, &ns);
    apply(&format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lit\n  namespace: {ns}\ndata:\n  x: \"42\"\n"));
    apply(&helmrelease(
        &ns,
        name,
        name,
        // helm-controller v1.5's HelmRelease has no literal (the API server refuses the field).
        &format!(
            "valuesFrom:\n- kind: ConfigMap\n  name: lit\n  valuesKey: x\n  targetPath: x\n{}",
            if flux().is_2_8() { "" } else { "  literal: true\n" }
        ),
    ));
    wait_hr_ready(&ns, name, READY_TIMEOUT);
    let theirs = stored(&ns, name);
    let kind = &find(&theirs, "ConfigMap", name)["data"]["kind"];
    assert_eq!(kind, if flux().is_2_8() { "int64" } else { "string" });
    assert_in_sync(helm, Renders::PluginsHelm, chart.path(), &ns, name);
}

/// Block scalars (`|`, `|+`, `|-`) that end documents which are not their template's last, in ConfigMaps
/// (a `range` of them, as charts write them, and Cozystack's `vpn` Secret), with `commonMetadata`: Helm
/// 4.1 (Flux 2.8.0) and Helm 4.2.4 (Flux 2.9.5) keep a document's ending, Helm 4.2.0-4.2.3 drop it.
fn block_scalar_by_version(helm: Helm) {
    let ns = namespace("fx-vpn");
    let name = "vpn";
    let chart = Chart::new(
        name,
        "0.1.0",
        "port: 40000\napps: [a, b, c]\n",
        &[
            (
                "secret.yaml",
                "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Release.Name }}-config\nstringData:\n  \
                 shadowbox_config.json: |\n    {\"portForNewAccessKeys\": {{ .Values.port }}}\n---\napiVersion: v1\nkind: \
                 Secret\nmetadata:\n  name: {{ .Release.Name }}-keys\nstringData:\n  keys: |\n    one\n",
            ),
            (
                "configs.yaml",
                "{{- range .Values.apps }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ $.Release.Name }}-{{ . }}\n\
                 data:\n  config.json: |\n    {\"a\": 1}\n  kept: |+\n    x\n\n  stripped: |-\n    y\n  config.yaml: |\n    app: {{ . }}\n\
                 {{- end }}\n",
            ),
        ],
    );
    chart.publish(name, &ns);
    let common = "commonMetadata:\n  labels:\n    team: vpn\n";
    apply(&helmrelease(&ns, name, name, common));
    wait_hr_ready(&ns, name, READY_TIMEOUT);

    // What helm-controller's Helm made of them, first.
    let theirs = stored(&ns, name);
    let config = find(&theirs, "Secret", &format!("{name}-config"))["stringData"]["shadowbox_config.json"]
        .as_str()
        .expect("the value")
        .to_string();
    let keeps = flux().keeps_document_endings();
    assert_eq!(config.ends_with('\n'), keeps, "{config:?}");
    let a = &find(&theirs, "ConfigMap", &format!("{name}-a"))["data"];
    assert_eq!(a["config.yaml"], if keeps { "app: a\n" } else { "app: a" }, "{a}");
    assert_eq!(a["config.json"], "{\"a\": 1}\n", "not the document's end: {a}");
    assert_eq!(a["stripped"], "y", "{a}");
    assert_eq!(a["kept"], "x\n\n", "{a}");
    assert_eq!(find(&theirs, "ConfigMap", &format!("{name}-a"))["metadata"]["labels"]["team"], "vpn");
    // The template's last document keeps its ending under every Helm.
    assert_eq!(find(&theirs, "ConfigMap", &format!("{name}-c"))["data"]["config.yaml"], "app: c\n");
    assert_in_sync(helm, Renders::PluginsHelm, chart.path(), &ns, name);
}

helm_tests! {
    hooks_are_post_rendered_as_the_controller_does => hooks_by_version;
    values_from_literal_as_the_controller_reads_it => literal_by_version;
    a_block_scalar_ending_a_document_as_the_controllers_helm_reads_it => block_scalar_by_version;
}

/// `spec.upgrade.force` with server-side apply: helm-controller v1.5.0 fails the upgrade, so helm cozy
/// refuses it and changes nothing; from v1.5.4 force is ignored for server-side apply and both upgrade.
#[test]
fn force_with_server_side_apply_as_the_controller_does() {
    let f = flux();
    let ns = namespace("fx-force");
    let name = "forced";
    let chart = simple_chart(name);
    chart.publish(name, &ns);
    let hr = |greeting: &str| {
        format!(
            "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: {name}\n  namespace: {ns}\nspec:\n  \
             interval: 1h\n  chartRef:\n    kind: ExternalArtifact\n    name: {name}\n  install:\n    disableWait: true\n  \
             upgrade:\n    disableWait: true\n    force: true\n  values:\n    greeting: {greeting}\n"
        )
    };
    apply(&hr("hello"));
    wait_hr_ready(&ns, name, READY_TIMEOUT);
    let before = helm_revision(&ns, name);
    let applied = cozy(Helm::V4, Renders::PluginsHelm, chart.path(), &ns, &["apply", name]);
    let suspended =
        get_json("helmrelease", &ns, name).and_then(|h| h.pointer("/spec/suspend").and_then(Value::as_bool));
    if f.is_2_8() {
        assert_eq!(applied.code, Some(1), "{}\n{}", applied.stdout, applied.stderr);
        assert!(
            applied.stderr.contains(&format!("helm-controller {} fails this upgrade", f.helm_controller))
                && applied.stderr.lines().filter(|l| l.starts_with("error:")).count() == 1,
            "{}",
            applied.stderr
        );
        assert_eq!(helm_revision(&ns, name), before, "nothing was changed");
        assert_ne!(suspended, Some(true), "the HelmRelease is not left suspended");
        // The real controller does fail it.
        apply(&hr("changed"));
        cozyhr_e2e::eventually("helm-controller to fail the forced upgrade", READY_TIMEOUT, || {
            let hr = get_json("helmrelease", &ns, name).unwrap_or_default();
            match cozyhr_e2e::condition(&hr, "Ready") {
                Some((s, _, m)) if s == "False" && m.contains("force") => Ok(()),
                other => Err(format!("{other:?}")),
            }
        });
    } else {
        assert_eq!(applied.code, Some(0), "{}\n{}", applied.stdout, applied.stderr);
        assert_eq!(helm_revision(&ns, name), before + 1);
        resume_without_an_upgrade(&ns, name);
    }
}

/// A document in `crds/` that is not a CRD: helm-controller v1.5.0 creates it with the CRDs, v1.5.5 and
/// v1.6 drop it; helm cozy does what the cluster's helm-controller does, and says which.
#[test]
fn non_crds_in_the_crds_directory_as_the_controller_does() {
    let f = flux();
    let ns = namespace("fx-crds");
    // One chart per installer: crds/ is not templated, so each names its own object.
    let chart_for = |object: &str| {
        let chart = simple_chart("crdsdir");
        chart.write(
            "crds/extra.yaml",
            &format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {object}\ndata:\n  a: b\n"),
        );
        chart
    };
    let (theirs, ours) = (chart_for("from-crds-flux"), chart_for("from-crds-cozy"));
    theirs.publish("by-flux", &ns);
    ours.publish("by-cozy", &ns);
    apply(&helmrelease(&ns, "by-flux", "by-flux", ""));
    // Suspended from the start: helm cozy installs it.
    apply(&helmrelease(&ns, "by-cozy", "by-cozy", "suspend: true\n"));
    wait_hr_ready(&ns, "by-flux", READY_TIMEOUT);
    assert_eq!(
        get_json("configmap", &ns, "from-crds-flux").is_some(),
        f.is_2_8(),
        "helm-controller {}",
        f.helm_controller
    );
    let applied = cozy(Helm::V4, Renders::PluginsHelm, ours.path(), &ns, &["apply", "by-cozy"]).ok();
    assert_eq!(
        get_json("configmap", &ns, "from-crds-cozy").is_some(),
        f.is_2_8(),
        "helm cozy under {}",
        f.helm_controller
    );
    let said = if f.is_2_8() {
        format!("helm-controller {} creates what is not a CustomResourceDefinition", f.helm_controller)
    } else {
        "ignoring what is not a CustomResourceDefinition".to_string()
    };
    assert!(applied.stderr.contains(&said) && applied.stderr.contains("from-crds-cozy"), "{}", applied.stderr);
}

// ---------------------------------------------------------------------------------------------------
// A chart delivered by a real ArtifactGenerator (source-watcher), the way Cozystack's PackageSources
// deliver theirs: a component directory of a Git repository, a library copied into `charts/`, and two
// values files merged into values.yaml.

/// A repository laid out like Cozystack's: `apps/demo` (the chart; its `charts/lib` is a link to the
/// library in the developer's checkout, not in Git) and `library/lib` (a library chart).
struct PackageRepo {
    checkout: tempfile::TempDir,
}

impl PackageRepo {
    fn new() -> PackageRepo {
        let checkout = tempfile::tempdir().expect("tempdir");
        let root = checkout.path();
        let write = |rel: &str, text: &str| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(p, text).expect("write");
        };
        write("library/lib/Chart.yaml", "apiVersion: v2\nname: lib\nversion: 0.1.0\ntype: library\n");
        write(
            "library/lib/templates/_labels.tpl",
            "{{- define \"lib.labels\" -}}\napp.kubernetes.io/part-of: demo\ntier: {{ .Values.tier }}\n{{- end -}}\n",
        );
        write("apps/demo/Chart.yaml", "apiVersion: v2\nname: demo\nversion: 0.1.0\n");
        write("apps/demo/values.yaml", "tier: web\nreplicas: 1\ngreeting: hello\n");
        write("apps/demo/values-platform.yaml", "replicas: 3\n");
        write(
            "apps/demo/templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n  labels:\n    \
             {{- include \"lib.labels\" . | nindent 4 }}\ndata:\n  replicas: {{ .Values.replicas | quote }}\n  \
             greeting: {{ .Values.greeting | quote }}\n",
        );
        PackageRepo { checkout }
    }

    fn chart(&self) -> std::path::PathBuf {
        self.checkout.path().join("apps/demo")
    }

    /// Commits the checkout (without the library link) to Git repository `name` of the local Git server.
    fn push(&self, name: &str) -> String {
        let root = std::path::PathBuf::from(std::env::var("COZYHR_GIT_DIR").expect("COZYHR_GIT_DIR"));
        let bare = root.join(format!("{name}.git"));
        let git = |dir: &Path, args: &[&str]| {
            let mut c = std::process::Command::new("git");
            c.arg("-C").arg(dir).args(["-c", "user.name=e2e", "-c", "user.email=e2e@cozyhr.invalid"]).args(args);
            run(c).ok();
        };
        std::fs::create_dir_all(&bare).expect("mkdir");
        git(&bare, &["init", "-q", "--bare", "-b", "main"]);
        let work = self.checkout.path();
        git(work, &["init", "-q", "-b", "main"]);
        git(work, &["add", "apps", "library"]);
        git(work, &["commit", "-q", "-m", "packages"]);
        git(work, &["push", "-q", "--force", &bare.to_string_lossy(), "main"]);
        // The developer's checkout links the library, as Cozystack's does (charts/cozy-lib).
        std::fs::create_dir_all(self.chart().join("charts")).expect("mkdir charts");
        std::os::unix::fs::symlink("../../../library/lib", self.chart().join("charts/lib")).expect("link the library");
        format!("{}/{name}.git", std::env::var("COZYHR_GIT_URL").expect("COZYHR_GIT_URL"))
    }
}

fn artifact_generator(helm: Helm) {
    let ns = namespace("fx-ag");
    let repo = PackageRepo::new();
    let url = repo.push(&ns);
    apply(&format!(
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: packages\n  namespace: {ns}\n\
         spec:\n  interval: 1h\n  url: {url}\n  ref:\n    branch: main\n---\n\
         apiVersion: source.extensions.fluxcd.io/v1beta1\nkind: ArtifactGenerator\nmetadata:\n  name: packages\n  \
         namespace: {ns}\nspec:\n  sources:\n  - alias: repo\n    kind: GitRepository\n    name: packages\n  artifacts:\n  \
         - name: demo\n    originRevision: \"@repo\"\n    copy:\n    - from: \"@repo/apps/demo/**\"\n      to: \"@artifact/demo/\"\n    \
         - from: \"@repo/library/lib/**\"\n      to: \"@artifact/demo/charts/lib/\"\n    - from: \"@repo/apps/demo/values-platform.yaml\"\n      \
         to: \"@artifact/demo/values.yaml\"\n      strategy: Merge\n"
    ));
    let name = "demo";
    // The HelmRelease names the values files merged into the artifact's values.yaml, as the Go cozyhr reads them.
    let hr = helmrelease(&ns, name, "demo", "values:\n  greeting: hi\n").replacen(
        &format!("  namespace: {ns}\n"),
        &format!("  namespace: {ns}\n  annotations:\n    cozyhr.cozystack.io/values-files: values.yaml,values-platform.yaml\n"),
        1,
    );
    apply(&hr);
    wait_hr_ready(&ns, name, READY_TIMEOUT);
    let theirs = stored(&ns, name);
    let cm = find(&theirs, "ConfigMap", name);
    assert_eq!(
        (&cm["data"]["replicas"], &cm["metadata"]["labels"]["tier"]),
        (&Value::from("3"), &Value::from("web")),
        "{cm}"
    );
    assert_in_sync(helm, Renders::PluginsHelm, &repo.chart(), &ns, name);

    // apply then resume: nothing to redo.
    cozy(helm, Renders::PluginsHelm, &repo.chart(), &ns, &["apply", name]).ok();
    resume_without_an_upgrade(&ns, name);

    // A local edit, applied, is handed back once: helm-controller puts the source's chart back.
    std::fs::write(repo.chart().join("values-platform.yaml"), "replicas: 5\n").expect("edit");
    cozy(helm, Renders::PluginsHelm, &repo.chart(), &ns, &["apply", name]).ok();
    let edited = helm_revision(&ns, name);
    let live = get_json("configmap", &ns, name).expect("the ConfigMap");
    assert_eq!(live["data"]["replicas"], "5");
    let resumed = kubectl(["cozyhr", "resume", name, "-n", &ns, "--timeout", "2m"]).ok();
    assert!(resumed.stderr.contains("ran a Helm upgrade, replacing the local chart"), "{}", resumed.stderr);
    assert_eq!(helm_revision(&ns, name), edited + 1);
    let live = get_json("configmap", &ns, name).expect("the ConfigMap");
    assert_eq!(live["data"]["replicas"], "3", "the source's values are back");
}

helm_tests! {
    a_chart_from_a_real_artifact_generator => artifact_generator;
}

/// With drift detection on, helm-controller v1.6 records `Drifted=False` for the release it made (v1.5
/// writes no such condition): so does the status helm cozy apply writes for a release it installed.
#[test]
fn the_drifted_condition_as_the_controller_writes_it() {
    let f = flux();
    let ns = namespace("fx-drifted");
    let chart = simple_chart("drifty");
    chart.publish("drifty", &ns);
    let spec = "driftDetection:\n  mode: warn\n";
    apply(&helmrelease(&ns, "by-flux", "drifty", spec));
    // Suspended from the start: helm-controller never acts on it, helm cozy installs it.
    apply(&helmrelease(&ns, "by-cozy", "drifty", &format!("suspend: true\n{spec}")));
    wait_hr_ready(&ns, "by-flux", READY_TIMEOUT);
    cozy(Helm::V4, Renders::PluginsHelm, chart.path(), &ns, &["apply", "by-cozy"]).ok();
    let drifted = |name: &str| {
        let hr = get_json("helmrelease", &ns, name).unwrap_or_default();
        cozyhr_e2e::condition(&hr, "Drifted")
    };
    let theirs = cozyhr_e2e::eventually("helm-controller's drift check", Duration::from_secs(30), || {
        match (drifted("by-flux"), f.is_2_8()) {
            (None, true) => Ok(None),
            (Some(c), false) => Ok(Some(c)),
            (other, _) => Err(format!("{other:?}")),
        }
    });
    assert_eq!(drifted("by-cozy"), theirs, "helm cozy's status against helm-controller's");
}

/// A chart renamed since the release: helm-controller v1.5 uninstalls and installs again, v1.6 too unless
/// `chartNameChangeStrategy: InPlaceUpdate` (an upgrade). Each pair: one HelmRelease helm-controller moves
/// to the renamed chart, one helm cozy applies it to; their newest history entries agree.
#[test]
fn a_renamed_chart_as_the_controller_handles_it() {
    let f = flux();
    let ns = namespace("fx-rename");
    let old = simple_chart("first-name");
    // Another version too: the artifact's revision is the chart's version, and a new one is what
    // makes helm-controller look again.
    let renamed = simple_chart("second-name");
    renamed.write("Chart.yaml", "apiVersion: v2\nname: second-name\nversion: 0.2.0\n");
    let mut cases = vec![("", "install")];
    if !f.is_2_8() {
        // v1.5's HelmRelease has no such field.
        cases.push(("upgrade:\n  chartNameChangeStrategy: InPlaceUpdate\n", "upgrade"));
    }
    for (i, (spec, action)) in cases.into_iter().enumerate() {
        let (flux_hr, cozy_hr) = (format!("flux-{i}"), format!("cozy-{i}"));
        // helmrelease() writes an upgrade: section of its own: merge the strategy into it.
        let hr = |name: &str, artifact: &str| {
            let text = helmrelease(&ns, name, artifact, "");
            match spec.strip_prefix("upgrade:\n") {
                Some(rest) => text.replacen("  upgrade:\n", &format!("  upgrade:\n{}", rest.replace("  ", "    ")), 1),
                None => text,
            }
        };
        for (name, artifact) in [(&flux_hr, format!("a-{i}")), (&cozy_hr, format!("b-{i}"))] {
            old.publish(&artifact, &ns);
            apply(&hr(name, &artifact));
            wait_hr_ready(&ns, name, READY_TIMEOUT);
        }
        // helm-controller: the source now serves the renamed chart.
        renamed.publish(&format!("a-{i}"), &ns);
        // helm cozy: the renamed chart from its directory, refused as a slip of the directory unless the
        // rename is said to be meant; refused, nothing changes.
        let before = get_json("helmrelease", &ns, &cozy_hr).unwrap_or_default();
        let slip = cozy(Helm::V4, Renders::PluginsHelm, renamed.path(), &ns, &["apply", &cozy_hr]).code(1);
        // (Helm 4 adds a line of its own after the plugin's: `Error: plugin "cozy" exited with error`.)
        let errors: Vec<&str> = slip.stderr.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(errors.len(), 1, "one error line: {}", slip.stderr);
        let line = errors[0];
        assert!(
            line.contains("holds chart \"second-name\"")
                && line.contains("deploys chart \"first-name\"")
                && !line.contains('\n'),
            "one line naming both charts: {line}"
        );
        let after = get_json("helmrelease", &ns, &cozy_hr).unwrap_or_default();
        assert_eq!(after["spec"]["suspend"], before["spec"]["suspend"], "not suspended by the refusal");
        assert_eq!(after["status"]["history"], before["status"]["history"], "the release is untouched");
        cozy(Helm::V4, Renders::PluginsHelm, renamed.path(), &ns, &["apply", &cozy_hr, "--other-chart"]).ok();
        let latest = |name: &str| {
            let hr = get_json("helmrelease", &ns, name).unwrap_or_default();
            let h = &hr["status"]["history"][0];
            (
                h["chartName"].as_str().unwrap_or_default().to_string(),
                h["action"].as_str().unwrap_or_default().to_string(),
                h["version"].as_i64().unwrap_or_default(),
            )
        };
        let theirs = cozyhr_e2e::eventually("helm-controller to move to the renamed chart", READY_TIMEOUT, || {
            let l = latest(&flux_hr);
            if l.0 == "second-name" { Ok(l) } else { Err(format!("{l:?}")) }
        });
        assert_eq!(theirs.1, action, "helm-controller {} with {spec:?}: {theirs:?}", f.helm_controller);
        assert_eq!(latest(&cozy_hr), theirs, "helm cozy against helm-controller, {spec:?}");
    }
}
