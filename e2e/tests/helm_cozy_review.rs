//! Reviewing without a cluster (issue 12), checked against the real helm-controller: the HelmRelease
//! file of a review (valuesFrom a ConfigMap and a Secret in the same file, one at a targetPath, a kustomize
//! postRenderer, commonMetadata, targetNamespace and a name long enough to be shortened) is applied to the
//! local control plane and installed by helm-controller; then `helm cozy show --release-file`, run with no
//! kubeconfig at all and the server's `--kube-version`/`--api-versions` given as Helm spells them, must
//! equal the manifest helm-controller stored, object by object.

use std::time::Duration;

use cozyhr_e2e::{
    Chart, Helm, apply, assert_same_objects, command, env, find, get_json, helm_get, helm_tests, helmrelease, kubectl,
    namespace, objects, run, server_version, wait_hr_ready,
};

const READY_TIMEOUT: Duration = Duration::from_secs(180);

/// Long enough that `<targetNamespace>-<name>` is over 53 characters and helm-controller shortens it.
const NAME: &str = "a-helmrelease-reviewed-without-a-cluster";

fn review_chart() -> Chart {
    Chart::new(
        "review",
        "0.1.0",
        "color: red\nport: 80\nauth:\n  password: unset\n",
        &[
            (
                "config.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\ndata:\n\
                 \x20 color: {{ .Values.color | quote }}\n\
                 \x20 kubeVersion: {{ .Capabilities.KubeVersion.Version | quote }}\n\
                 \x20 fluxServed: {{ .Capabilities.APIVersions.Has \"helm.toolkit.fluxcd.io/v2\" | quote }}\n",
            ),
            (
                "service.yaml",
                "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  ports:\n  - port: {{ .Values.port }}\n",
            ),
            (
                "secret.yaml",
                "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Release.Name }}-auth\nstringData:\n\
                 \x20 password: {{ .Values.auth.password | quote }}\n",
            ),
        ],
    )
}

/// The file a reviewer has: the HelmRelease and its valuesFrom objects, as `kustomize build` prints them.
fn release_file(ns: &str) -> String {
    let spec = format!(
        "targetNamespace: {ns}\ncommonMetadata:\n  labels:\n    team: platform\n\
         postRenderers:\n- kustomize:\n    patches:\n    - target:\n        kind: Service\n      patch: |\n\
         \x20       - op: add\n          path: /metadata/annotations\n          value:\n            patched-by: kustomize\n\
         valuesFrom:\n- kind: ConfigMap\n  name: review-values\n- kind: Secret\n  name: review-secret\n\
         \x20 valuesKey: password\n  targetPath: auth.password\n"
    );
    format!(
        "{}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: review-values\n  namespace: {ns}\ndata:\n\
         \x20 values.yaml: |\n    color: blue\n    port: 8080\n---\napiVersion: v1\nkind: Secret\nmetadata:\n\
         \x20 name: review-secret\n  namespace: {ns}\ndata:\n  password: aHVudGVyMg==\n",
        helmrelease(ns, NAME, "review", &spec)
    )
}

fn offline_show_equals_what_helm_controller_stored(helm: Helm) {
    let ns = namespace(&format!("review-{}", format!("{helm:?}").to_lowercase()));
    let chart = review_chart();
    chart.publish("review", &ns);
    let file_text = release_file(&ns);
    apply(&file_text);
    wait_hr_ready(&ns, NAME, READY_TIMEOUT);
    // The Helm release helm-controller made of it (`<targetNamespace>-<name>`, shortened).
    let hr = get_json("helmrelease", &ns, NAME).expect("the HelmRelease");
    let release = hr.pointer("/status/history/0/name").and_then(|v| v.as_str()).expect("a snapshot").to_string();
    assert!(format!("{ns}-{NAME}").len() > 53 && release.len() == 53, "the release name is shortened: {release}");
    let stored = objects(&helm_get(&["manifest", &release, "-n", &ns]).stdout);
    // The chain really ran on helm-controller's side.
    let config = find(&stored, "ConfigMap", &format!("{release}-config"));
    assert_eq!(config["data"]["color"], "blue", "{config}");
    assert_eq!(config["data"]["fluxServed"], "true", "{config}");
    let service = find(&stored, "Service", &release);
    assert_eq!(service["metadata"]["annotations"]["patched-by"], "kustomize", "{service}");
    assert_eq!(service["metadata"]["labels"]["team"], "platform", "{service}");

    // The reviewer's side: the file, no cluster at all (no KUBECONFIG, a HOME without ~/.kube), the
    // server's version and APIs given as Helm takes them.
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("release.yaml");
    std::fs::write(&file, &file_text).expect("write the release file");
    let api_versions = kubectl(["api-versions"]).ok().stdout.lines().collect::<Vec<_>>().join(",");
    let mut c = command(env().bin_dir.join("helm-cozy"));
    c.env_remove("KUBECONFIG")
        .env("HOME", dir.path())
        .env("HELM_BIN", helm.bin())
        .env("COZYHR_KUBECTL", &env().kubectl)
        .args(["show", NAME, "--release-file"])
        .arg(&file)
        .args(["--kube-version", &server_version(), "--api-versions", &api_versions, "-C"])
        .arg(chart.path());
    let shown = run(c).ok();
    assert!(shown.stderr.is_empty(), "nothing to say for a chart without lookup: {}", shown.stderr);
    assert_same_objects(&objects(&shown.stdout), &stored, &format!("{helm:?} show --release-file offline"));

    // With the cluster, the same file diffs as nothing to change (HelmRelease from the file, objects
    // against the live ones).
    let mut c = command(env().bin_dir.join("helm-cozy"));
    c.env("HELM_BIN", helm.bin())
        .env("COZYHR_KUBECTL", &env().kubectl)
        .args(["diff", NAME, "--detailed-exitcode", "-n", &ns, "--release-file"])
        .arg(&file)
        .arg("-C")
        .arg(chart.path());
    let diff = run(c);
    assert_eq!(diff.code, Some(0), "{helm:?}: diff --release-file found changes\n{}\n{}", diff.stdout, diff.stderr);

    diff_against_git_with_the_cluster(helm, &ns, &chart, &release);
}

/// `diff --against git:REF` without a release file: the HelmRelease, its valuesFrom and the capabilities
/// from the cluster, both sides rendered with them (the kustomize postRenderer and commonMetadata
/// included). The chart directory committed as it is diffs as nothing; a change in the working tree is
/// the one change shown, with exit 2.
fn diff_against_git_with_the_cluster(helm: Helm, ns: &str, chart: &Chart, release: &str) {
    let git = |args: &[&str]| {
        let mut c = std::process::Command::new("git");
        c.arg("-C").arg(chart.path()).args(["-c", "user.name=e2e", "-c", "user.email=e2e@cozyhr.invalid"]);
        c.args(args);
        run(c).ok();
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "the chart as installed"]);
    let diff = || {
        let mut c = command(env().bin_dir.join("helm-cozy"));
        c.env("HELM_BIN", helm.bin())
            .env("COZYHR_KUBECTL", &env().kubectl)
            .env("NO_COLOR", "1")
            .args(["diff", NAME, "--detailed-exitcode", "-n", ns, "--against", "git:HEAD", "-C"])
            .arg(chart.path());
        run(c)
    };
    let clean = diff().code(0);
    assert_eq!(clean.stderr, "No differences against git:HEAD.\n", "{helm:?}");

    let config = chart.path().join("templates/config.yaml");
    let text = std::fs::read_to_string(&config).expect("read the template");
    std::fs::write(&config, format!("{text}  added: \"in the working tree\"\n")).expect("change the template");
    let changed = diff().code(2);
    assert!(
        changed.stdout.contains(&format!("{ns}, {release}-config, ConfigMap (v1) has changed:")),
        "{helm:?}: the ConfigMap is the change\n{}",
        changed.stdout
    );
    assert!(changed.stdout.contains("+   added: in the working tree"), "{helm:?}\n{}", changed.stdout);
    assert!(changed.stdout.ends_with("Plan: 0 to add, 1 to change, 0 to remove.\n"), "{helm:?}\n{}", changed.stdout);
}

helm_tests! {
    offline_show_from_a_release_file_equals_the_stored_manifest => offline_show_equals_what_helm_controller_stored;
}
