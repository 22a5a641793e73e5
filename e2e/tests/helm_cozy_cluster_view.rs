//! Rendering with the cluster's eyes (issue 10): charts that call `lookup`, test `.Capabilities` (served
//! CRDs, the server's version) and branch on `.Release.IsUpgrade`. After the real helm-controller installs
//! them (and upgrades them), `helm cozy show` must print what helm-controller stored and `helm cozy diff`
//! must find nothing to change, under Helm 3 and Helm 4. The reference is always helm-controller's own
//! stored release.

use std::path::Path;
use std::time::Duration;

use cozyhr_e2e::{
    Chart, Helm, apply, assert_same_objects, command, controller_log, cozy, cozy_home, eventually, find, get_json,
    helm_get, helm_release_secrets, helm_tests, helmrelease, kubectl, namespace, objects, run, server_version,
    wait_hr_ready,
};
use serde_json::Value;

const READY_TIMEOUT: Duration = Duration::from_secs(180);

/// Two CRDs of one group: `Gadget` (namespaced; the chart renders one only when the cluster serves it)
/// and `GadgetClass` (cluster-scoped, as ClusterIssuer-like kinds are; always rendered).
fn install_crds(group: &str) {
    let crd = |plural: &str, kind: &str, scope: &str| {
        format!(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: {plural}.{group}\n\
             spec:\n  group: {group}\n  scope: {scope}\n  names:\n    plural: {plural}\n    singular: {singular}\n    kind: {kind}\n\
             \x20 versions:\n    - name: v1\n      served: true\n      storage: true\n      schema:\n        openAPIV3Schema:\n\
             \x20         type: object\n          x-kubernetes-preserve-unknown-fields: true\n",
            singular = plural.trim_end_matches('s'),
        )
    };
    apply(&format!(
        "{}---\n{}",
        crd("gadgets", "Gadget", "Namespaced"),
        crd("gadgetclasses", "GadgetClass", "Cluster")
    ));
    for plural in ["gadgets", "gadgetclasses"] {
        kubectl(["wait", "--for", "condition=established", "--timeout=60s", "crd", &format!("{plural}.{group}")]).ok();
    }
}

/// The chart of the issue: a password kept by `lookup` of its own Secret, an object gated on
/// `.Capabilities.APIVersions.Has "<group>/v1/Gadget"`, `.Capabilities.KubeVersion` in a ConfigMap, a
/// branch on `.Release.IsUpgrade`, and a cluster-scoped custom resource.
fn eyes_chart() -> Chart {
    Chart::new(
        "eyes",
        "0.1.0",
        "group: example.invalid\nmessage: hello\n",
        &[
            (
                "secret.yaml",
                "{{- $name := printf \"%s-auth\" .Release.Name }}\n\
                 {{- $old := lookup \"v1\" \"Secret\" .Release.Namespace $name }}\n\
                 apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ $name }}\ntype: Opaque\ndata:\n\
                 {{- if $old }}\n  password: {{ index $old.data \"password\" }}\n\
                 {{- else }}\n  password: {{ randAlphaNum 24 | b64enc }}\n{{- end }}\n",
            ),
            (
                "gadget.yaml",
                "{{- if .Capabilities.APIVersions.Has (printf \"%s/v1/Gadget\" .Values.group) }}\n\
                 apiVersion: {{ .Values.group }}/v1\nkind: Gadget\nmetadata:\n  name: {{ .Release.Name }}-gadget\n\
                 spec:\n  size: 3\n{{- end }}\n",
            ),
            (
                "class.yaml",
                "apiVersion: {{ .Values.group }}/v1\nkind: GadgetClass\nmetadata:\n  name: {{ .Release.Name }}-class\n\
                 spec:\n  tier: gold\n",
            ),
            (
                "info.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-info\ndata:\n\
                 \x20 kubeVersion: {{ .Capabilities.KubeVersion.Version | quote }}\n\
                 \x20 kubeMinor: {{ .Capabilities.KubeVersion.Minor | quote }}\n\
                 \x20 upgrade: {{ .Release.IsUpgrade | quote }}\n\
                 \x20 install: {{ .Release.IsInstall | quote }}\n\
                 \x20 message: {{ .Values.message | quote }}\n\
                 \x20 {{- if .Release.IsUpgrade }}\n  upgradedOnce: \"yes\"\n  {{- end }}\n",
            ),
        ],
    )
}

/// helm cozy show equals what helm-controller stored, object by object; diff finds nothing.
#[track_caller]
fn in_sync(helm: Helm, chart: &Path, ns: &str, name: &str, what: &str) {
    let shown = cozy(helm, chart, ns, &["show", name]).ok();
    let stored = objects(&helm_get(&["manifest", name, "-n", ns]).stdout);
    assert_same_objects(&objects(&shown.stdout), &stored, &format!("{helm:?} {what}"));
    let diff = cozy(helm, chart, ns, &["diff", name, "--detailed-exitcode"]);
    assert_eq!(diff.code, Some(0), "{helm:?} {what}: helm cozy diff found changes\n{}\n{}", diff.stdout, diff.stderr);
}

fn history_len(ns: &str, name: &str) -> usize {
    get_json("helmrelease", ns, name)
        .and_then(|hr| hr.pointer("/status/history").and_then(Value::as_array).map(Vec::len))
        .unwrap_or(0)
}

fn cozyhr(args: &[&str]) -> cozyhr_e2e::Run {
    kubectl(std::iter::once("cozyhr").chain(args.iter().copied()))
}

fn cluster_eyes(helm: Helm) {
    let v = format!("{helm:?}").to_lowercase();
    let ns = namespace(&format!("eyes-{v}"));
    let group = format!("{ns}.eyes.example.io");
    install_crds(&group);
    let chart = eyes_chart();
    chart.publish("eyes", &ns);
    apply(&helmrelease(&ns, "eyes", "eyes", &format!("values:\n  group: {group}\n")));
    wait_hr_ready(&ns, "eyes", READY_TIMEOUT);

    // What helm-controller rendered shows that each pattern really is exercised on its side.
    let stored = objects(&helm_get(&["manifest", "eyes", "-n", &ns]).stdout);
    let info = find(&stored, "ConfigMap", "eyes-info");
    assert_eq!(info["data"]["kubeVersion"], server_version().as_str(), "the server's version: {info}");
    assert_eq!(info["data"]["upgrade"], "false", "{info}");
    find(&stored, "Gadget", "eyes-gadget");
    let class = find(&stored, "GadgetClass", "eyes-class");
    assert!(class.pointer("/metadata/namespace").is_none(), "cluster-scoped: {class}");
    let password = find(&stored, "Secret", "eyes-auth")["data"]["password"].clone();

    // 1. Right after the install.
    in_sync(helm, chart.path(), &ns, "eyes", "after install");

    // 2. After helm-controller upgraded it: the looked-up password stays, IsUpgrade turns true.
    cozyhr(&["reconcile", "eyes", "-n", &ns, "--force", "--timeout", "2m"]).ok();
    eventually("helm-controller's upgrade", READY_TIMEOUT, || {
        if history_len(&ns, "eyes") >= 2 { Ok(()) } else { Err(format!("history {}", history_len(&ns, "eyes"))) }
    });
    wait_hr_ready(&ns, "eyes", READY_TIMEOUT);
    let stored = objects(&helm_get(&["manifest", "eyes", "-n", &ns]).stdout);
    assert_eq!(find(&stored, "ConfigMap", "eyes-info")["data"]["upgrade"], "true");
    assert_eq!(find(&stored, "Secret", "eyes-auth")["data"]["password"], password, "lookup kept the password");
    in_sync(helm, chart.path(), &ns, "eyes", "after an upgrade");

    // A change to the cluster-scoped object is a change, not an addition or a removal.
    kubectl([
        "patch",
        &format!("gadgetclasses.{group}"),
        "eyes-class",
        "--type=merge",
        "-p",
        r#"{"spec":{"tier":"tin"}}"#,
    ])
    .ok();
    let drift = cozy(helm, chart.path(), &ns, &["diff", "eyes", "--detailed-exitcode", "-o", "json"]).code(2);
    let plan = drift.json();
    assert_eq!(plan["summary"], serde_json::json!({"add": 0, "change": 1, "remove": 0}), "{}", drift.stdout);

    // 3. apply of a local change keeps the password, and Flux finds nothing to do after resume.
    chart.write("values.yaml", &format!("group: {group}\nmessage: edited-locally\n"));
    cozy(helm, chart.path(), &ns, &["apply", "eyes"]).ok();
    let secret = get_json("secret", &ns, "eyes-auth").expect("Secret eyes-auth");
    assert_eq!(secret["data"]["password"], password, "apply kept the looked-up password");
    let cm = get_json("configmap", &ns, "eyes-info").expect("ConfigMap eyes-info");
    assert_eq!(cm["data"]["message"], "edited-locally", "{cm}");
    assert_eq!(cm["data"]["upgradedOnce"], "yes", "{cm}");
    let release_secrets = helm_release_secrets(&ns, "eyes");
    let actions = controller_log(&ns, "eyes").iter().filter(|m| m.starts_with("running '")).count();
    assert!(actions >= 2, "helm-controller's install and upgrade are in its log: {:#?}", controller_log(&ns, "eyes"));
    cozyhr(&["resume", "eyes", "-n", &ns, "--timeout", "2m"]).ok();
    wait_hr_ready(&ns, "eyes", READY_TIMEOUT);
    eventually("helm-controller to find the release in sync", Duration::from_secs(30), || {
        let log = controller_log(&ns, "eyes");
        if log.iter().any(|m| m == "release in-sync with desired state") { Ok(()) } else { Err(format!("{log:#?}")) }
    });
    assert_eq!(
        controller_log(&ns, "eyes").iter().filter(|m| m.starts_with("running '")).count(),
        actions,
        "helm-controller ran a Helm action after resume: {:#?}",
        controller_log(&ns, "eyes")
    );
    assert_eq!(helm_release_secrets(&ns, "eyes"), release_secrets, "the release Secrets changed after resume");
    in_sync(helm, chart.path(), &ns, "eyes", "after apply and resume");

    // 4. The CRD goes away: the gated object is no longer rendered, a removal (cache bypassed).
    kubectl(["delete", "crd", &format!("gadgets.{group}")]).ok();
    let removed = eventually("the Gadget kind to be gone", Duration::from_secs(30), || {
        let mut c = cozy_home(helm).command();
        c.env("COZYHR_DISCOVERY_TTL", "0")
            .args(["cozy", "diff", "eyes", "--detailed-exitcode", "-o", "json", "-C"])
            .arg(chart.path())
            .args(["-n", &ns]);
        let r = run(c);
        if r.code == Some(2) { Ok(r) } else { Err(format!("{:?}\n{}\n{}", r.code, r.stdout, r.stderr)) }
    });
    let plan = removed.json();
    assert_eq!(plan["summary"], serde_json::json!({"add": 0, "change": 0, "remove": 1}), "{}", removed.stdout);
    assert!(removed.stdout.contains("eyes-gadget"), "{}", removed.stdout);
}

helm_tests! {
    lookup_capabilities_and_upgrades_render_as_helm_controller_renders_them => cluster_eyes;
}

/// `--plain` with a cluster renders what `helm upgrade --install --dry-run=server` of the chart alone
/// renders (capabilities, lookup, upgrade); `--offline`, and `--plain` without any kubeconfig, render with
/// Helm's defaults and say so in one line.
fn plain(helm: Helm) {
    let v = format!("{helm:?}").to_lowercase();
    let ns = namespace(&format!("eyes-plain-{v}"));
    let group = format!("{ns}.eyes.example.io");
    install_crds(&group);
    let chart = eyes_chart();
    let set = format!("group={group}");
    // Installed with helm alone, so the lookup has a Secret to find and the next render is an upgrade.
    let mut c = command(helm.bin());
    c.args(["install", "p"]).arg(chart.path()).args(["-n", &ns, "--set", &set]);
    run(c).ok();

    let ours = cozy(helm, chart.path(), &ns, &["show", "p", "--plain", "--set", &set]).ok();
    assert!(ours.stderr.is_empty(), "no note with a cluster: {}", ours.stderr);
    let mut c = command(helm.bin());
    c.args(["upgrade", "--install", "p"]).arg(chart.path()).args([
        "-n",
        &ns,
        "--set",
        &set,
        "--dry-run=server",
        "-o",
        "json",
    ]);
    let theirs = run(c).ok().json();
    let theirs = objects(theirs["manifest"].as_str().expect("manifest"));
    assert_same_objects(&objects(&ours.stdout), &theirs, &format!("{helm:?} --plain"));
    find(&theirs, "Gadget", "p-gadget");

    // No kubeconfig at all: HOME without ~/.kube, no KUBECONFIG; helm-cozy run directly.
    let home = tempfile::tempdir().expect("tempdir");
    for args in [&["show", "p", "--plain", "--offline"][..], &["show", "p", "--plain"][..]] {
        let mut c = command(cozyhr_e2e::env().bin_dir.join("helm-cozy"));
        c.env_remove("KUBECONFIG")
            .env("HOME", home.path())
            .env("HELM_BIN", helm.bin())
            .args(args)
            .args(["--set", &set, "-C"])
            .arg(chart.path());
        let r = run(c).ok();
        assert_eq!(r.stderr.lines().count(), 1, "one line on stderr: {}", r.stderr);
        assert!(r.stderr.contains("Helm's defaults"), "{}", r.stderr);
        let objs = objects(&r.stdout);
        let info = find(&objs, "ConfigMap", "p-info");
        assert_ne!(info["data"]["kubeVersion"], server_version().as_str(), "Helm's default version: {info}");
        assert_eq!(info["data"]["upgrade"], "false", "{info}");
        assert!(objs.values().all(|o| o["kind"] != "Gadget"), "no CRD is known offline: {:?}", objs.keys());
    }
}

helm_tests! {
    plain_renders_as_helm_install_and_offline_with_helms_defaults => plain;
}
