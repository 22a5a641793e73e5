//! Rendering with the cluster's eyes (issue 10): charts that call `lookup`, test `.Capabilities` (served
//! CRDs, the server's version) and branch on `.Release.IsUpgrade`. `helm cozy show` must print what
//! helm-controller's next action stores and `helm cozy diff` must find nothing to change but what that
//! action would change, under Helm 3 and Helm 4. The reference is always helm-controller's own stored
//! release.

use std::path::Path;
use std::time::Duration;

use cozyhr_e2e::{
    Chart, Helm, apply, assert_same_objects, command, cozy, cozy_home, eventually, files_under, find, get_json,
    helm_get, helm_release_secrets, helm_tests, helmrelease, kubectl, namespace, objects, resume_without_an_upgrade,
    run, server_version, wait_hr_ready,
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

/// The Helm revision of helm-controller's latest snapshot (`status.history[0].version`).
fn deployed_revision(ns: &str, name: &str) -> i64 {
    get_json("helmrelease", ns, name)
        .and_then(|hr| hr.pointer("/status/history/0/version").and_then(Value::as_i64))
        .unwrap_or(0)
}

fn cozyhr(args: &[&str]) -> cozyhr_e2e::Run {
    kubectl(std::iter::once("cozyhr").chain(args.iter().copied()))
}

/// A namespace of its own for a scenario under `helm`, the CRDs in an API group of its own (tests run in
/// parallel and one of them deletes a CRD), and the chart.
fn eyes_setup(scenario: &str, helm: Helm) -> (String, String, Chart) {
    let ns = namespace(&format!("{scenario}-{}", format!("{helm:?}").to_lowercase()));
    let group = format!("{ns}.eyes.example.io");
    install_crds(&group);
    (ns, group, eyes_chart())
}

fn cluster_eyes(helm: Helm) {
    let (ns, group, chart) = eyes_setup("eyes", helm);
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

    // 1. Right after the install, helm cozy renders helm-controller's next action: an upgrade to revision
    // 2. So the diff shows exactly the IsUpgrade flip (what apply would change, and what a forced
    // upgrade by helm-controller stores, below), and nothing else: not the password, the version, the
    // gated object or the cluster-scoped one.
    let next = objects(&cozy(helm, chart.path(), &ns, &["show", "eyes"]).ok().stdout);
    let first = cozy(helm, chart.path(), &ns, &["diff", "eyes", "--detailed-exitcode", "-o", "json"]).code(2).json();
    assert_eq!(first["summary"], serde_json::json!({"add": 0, "change": 1, "remove": 0}), "{first}");
    assert_eq!(first["changes"][0]["name"], "eyes-info", "{first}");
    let flip = first["changes"][0]["diff"].as_str().unwrap_or_default();
    let changed = |sign: char, text: &str| flip.lines().any(|l| l.starts_with(sign) && l.trim_end().ends_with(text));
    assert!(changed('-', "upgrade: \"false\"") && changed('+', "upgrade: \"true\""), "{flip}");

    // 2. helm-controller upgrades it: what it stores is what show printed before, object by object
    // (the looked-up password, the server's version, IsUpgrade, the gated object), and now nothing is left.
    cozyhr(&["reconcile", "eyes", "-n", &ns, "--force", "--timeout", "2m"]).ok();
    eventually("helm-controller's upgrade", READY_TIMEOUT, || match deployed_revision(&ns, "eyes") {
        r if r >= 2 => Ok(()),
        r => Err(format!("revision {r}")),
    });
    wait_hr_ready(&ns, "eyes", READY_TIMEOUT);
    let stored = objects(&helm_get(&["manifest", "eyes", "-n", &ns]).stdout);
    assert_same_objects(&next, &stored, &format!("{helm:?}: show before helm-controller's upgrade"));
    assert_eq!(find(&stored, "ConfigMap", "eyes-info")["data"]["upgrade"], "true");
    assert_eq!(find(&stored, "Secret", "eyes-auth")["data"]["password"], password, "lookup kept the password");
    in_sync(helm, chart.path(), &ns, "eyes", "after an upgrade");

    // A change to the cluster-scoped object is a change, not an addition or a removal.
    let set_tier = |tier: &str| {
        let patch = format!(r#"{{"spec":{{"tier":"{tier}"}}}}"#);
        kubectl(["patch", &format!("gadgetclasses.{group}"), "eyes-class", "--type=merge", "-p", &patch]).ok();
    };
    set_tier("tin");
    let drift = cozy(helm, chart.path(), &ns, &["diff", "eyes", "--detailed-exitcode", "-o", "json"]).code(2);
    let plan = drift.json();
    assert_eq!(plan["summary"], serde_json::json!({"add": 0, "change": 1, "remove": 0}), "{}", drift.stdout);
    // Undone by hand: Helm 3's upgrade patches custom resources from the old manifest to the new one only,
    // so it would leave this drift in place (helm-controller's Helm 4 applies server-side and would not).
    set_tier("gold");

    // 3. apply of a local change keeps the password, and Flux finds nothing to do after resume.
    chart.write("values.yaml", &format!("group: {group}\nmessage: edited-locally\n"));
    // Published too: the chart applied is then its source's, so resume has nothing to hand back.
    chart.publish("eyes", &ns);
    cozy(helm, chart.path(), &ns, &["apply", "eyes"]).ok();
    let secret = get_json("secret", &ns, "eyes-auth").expect("Secret eyes-auth");
    assert_eq!(secret["data"]["password"], password, "apply kept the looked-up password");
    let cm = get_json("configmap", &ns, "eyes-info").expect("ConfigMap eyes-info");
    assert_eq!(cm["data"]["message"], "edited-locally", "{cm}");
    assert_eq!(cm["data"]["upgradedOnce"], "yes", "{cm}");
    let release_secrets = helm_release_secrets(&ns, "eyes");
    resume_without_an_upgrade(&ns, "eyes");
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

/// `.Release.Revision`, which `helm template` cannot be told: show renders the revision of
/// helm-controller's next upgrade (here through `.Release.Revision` and `$.Release.Revision`), and what
/// helm-controller then stores is what show printed.
fn revision(helm: Helm) {
    let v = format!("{helm:?}").to_lowercase();
    let ns = namespace(&format!("eyes-rev-{v}"));
    let chart = Chart::new(
        "rev",
        "0.1.0",
        "{}\n",
        &[(
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n  annotations:\n\
             \x20   example.com/rollout: {{ $.Release.Revision | quote }}\ndata:\n  revision: {{ .Release.Revision | quote }}\n\
             \x20 next: {{ add1 .Release.Revision | quote }}\n",
        )],
    );
    chart.publish("rev", &ns);
    apply(&helmrelease(&ns, "rev", "rev", ""));
    wait_hr_ready(&ns, "rev", READY_TIMEOUT);
    for (stored_revision, next) in [(1, 2), (2, 3)] {
        let stored = objects(&helm_get(&["manifest", "rev", "-n", &ns]).stdout);
        assert_eq!(find(&stored, "ConfigMap", "rev")["data"]["revision"], stored_revision.to_string());
        let shown = objects(&cozy(helm, chart.path(), &ns, &["show", "rev"]).ok().stdout);
        assert_eq!(find(&shown, "ConfigMap", "rev")["data"]["revision"], next.to_string(), "{helm:?}");
        cozyhr(&["reconcile", "rev", "-n", &ns, "--force", "--timeout", "2m"]).ok();
        eventually("helm-controller's upgrade", READY_TIMEOUT, || match deployed_revision(&ns, "rev") {
            r if r > stored_revision => Ok(()),
            r => Err(format!("revision {r}")),
        });
        wait_hr_ready(&ns, "rev", READY_TIMEOUT);
        let upgraded = objects(&helm_get(&["manifest", "rev", "-n", &ns]).stdout);
        assert_same_objects(&shown, &upgraded, &format!("{helm:?}: show before upgrade {next}"));
    }
}

helm_tests! {
    revision_renders_as_helm_controllers_next_upgrade => revision;
}

/// `--plain` with a cluster renders what `helm upgrade --install --dry-run=server` of the chart alone
/// renders (capabilities, lookup, upgrade); `--offline`, and `--plain` without any kubeconfig, render with
/// Helm's defaults and say so in one line.
fn plain(helm: Helm) {
    let (ns, group, chart) = eyes_setup("eyes-plain", helm);
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

/// A database chart as the common ones are written: a credentials Secret whose generated password is
/// kept by `lookup` (and `helm.sh/resource-policy: keep`), a StatefulSet reading it, two Services, a
/// configuration block scalar and a big number.
fn database_chart() -> Chart {
    Chart::new(
        "db",
        "12.1.0",
        "auth:\n  postgresPassword: \"\"\n  username: app\nprimary:\n  maxWalSize: 1073741824000\n  replicas: 1\n",
        &[
            (
                "_helpers.tpl",
                "{{- define \"db.fullname\" -}}{{ printf \"%s-postgresql\" .Release.Name | trunc 63 | trimSuffix \"-\" }}{{- end -}}\n\
                 {{- define \"db.labels\" -}}\napp.kubernetes.io/name: postgresql\napp.kubernetes.io/instance: {{ .Release.Name }}\n{{- end -}}\n\
                 {{- define \"db.secretPassword\" -}}\n\
                 {{- $secret := lookup \"v1\" \"Secret\" .Release.Namespace (include \"db.fullname\" .) -}}\n\
                 {{- if and $secret $secret.data (index $secret.data \"postgres-password\") -}}\n\
                 {{- index $secret.data \"postgres-password\" -}}\n\
                 {{- else if .Values.auth.postgresPassword -}}\n{{- .Values.auth.postgresPassword | b64enc -}}\n\
                 {{- else -}}\n{{- randAlphaNum 16 | b64enc -}}\n{{- end -}}\n{{- end -}}\n",
            ),
            (
                "secret.yaml",
                "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ include \"db.fullname\" . }}\n  labels:\n    {{- include \"db.labels\" . | nindent 4 }}\n\
                 \x20 annotations:\n    helm.sh/resource-policy: keep\ntype: Opaque\ndata:\n\
                 \x20 postgres-password: {{ include \"db.secretPassword\" . | quote }}\n\
                 \x20 username: {{ .Values.auth.username | b64enc | quote }}\n",
            ),
            (
                "config.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ include \"db.fullname\" . }}-config\ndata:\n\
                 \x20 postgresql.conf: |\n    max_wal_size = {{ .Values.primary.maxWalSize }}\n    listen_addresses = '*'\n",
            ),
            (
                "services.yaml",
                "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ include \"db.fullname\" . }}\n  labels:\n    {{- include \"db.labels\" . | nindent 4 }}\n\
                 spec:\n  ports:\n    - name: tcp-postgresql\n      port: 5432\n      targetPort: tcp-postgresql\n  selector:\n    {{- include \"db.labels\" . | nindent 4 }}\n\
                 ---\napiVersion: v1\nkind: Service\nmetadata:\n  name: {{ include \"db.fullname\" . }}-hl\nspec:\n  clusterIP: None\n\
                 \x20 publishNotReadyAddresses: true\n  ports:\n    - name: tcp-postgresql\n      port: 5432\n  selector:\n    {{- include \"db.labels\" . | nindent 4 }}\n",
            ),
            (
                "statefulset.yaml",
                "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: {{ include \"db.fullname\" . }}\nspec:\n\
                 \x20 replicas: {{ .Values.primary.replicas }}\n  serviceName: {{ include \"db.fullname\" . }}-hl\n  selector:\n    matchLabels:\n      {{- include \"db.labels\" . | nindent 6 }}\n\
                 \x20 template:\n    metadata:\n      labels:\n        {{- include \"db.labels\" . | nindent 8 }}\n    spec:\n      containers:\n\
                 \x20       - name: postgresql\n          image: postgres:17\n          ports:\n            - name: tcp-postgresql\n              containerPort: 5432\n\
                 \x20         env:\n            - name: POSTGRES_PASSWORD\n              valueFrom:\n                secretKeyRef:\n\
                 \x20                 name: {{ include \"db.fullname\" . }}\n                  key: postgres-password\n\
                 \x20 volumeClaimTemplates:\n    - metadata:\n        name: data\n      spec:\n        accessModes: [ReadWriteOnce]\n\
                 \x20       resources:\n          requests:\n            storage: 8Gi\n",
            ),
        ],
    )
}

/// An application chart whose helpers come from a library chart linked into charts/ by a symlink, as
/// platform monorepos keep one `common` library for all their charts. The library picks the
/// PodDisruptionBudget apiVersion from `.Capabilities` (the usual `capabilities.policy.apiVersion`).
fn linked_library_chart(root: &Path) -> Chart {
    let lib = root.join("common");
    std::fs::create_dir_all(lib.join("templates")).expect("mkdir common");
    std::fs::write(lib.join("Chart.yaml"), "apiVersion: v2\nname: common\nversion: 2.0.0\ntype: library\n").unwrap();
    std::fs::write(
        lib.join("templates/_common.tpl"),
        "{{- define \"common.labels\" -}}\napp.kubernetes.io/instance: {{ .Release.Name }}\napp.kubernetes.io/managed-by: {{ .Release.Service }}\n{{- end -}}\n\
         {{- define \"common.pdb.apiVersion\" -}}\n\
         {{- if .Capabilities.APIVersions.Has \"policy/v1/PodDisruptionBudget\" -}}policy/v1{{- else -}}policy/v1beta1{{- end -}}\n\
         {{- end -}}\n",
    )
    .unwrap();
    let app = Chart::new(
        "webapp",
        "1.4.0",
        "minAvailable: 1\n",
        &[
            (
                "pdb.yaml",
                "apiVersion: {{ include \"common.pdb.apiVersion\" . }}\nkind: PodDisruptionBudget\nmetadata:\n  name: {{ .Release.Name }}\n  labels:\n    {{- include \"common.labels\" . | nindent 4 }}\n\
                 spec:\n  minAvailable: {{ .Values.minAvailable }}\n  selector:\n    matchLabels:\n      {{- include \"common.labels\" . | nindent 6 }}\n",
            ),
            (
                "cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n  labels:\n    {{- include \"common.labels\" . | nindent 4 }}\ndata:\n  a: b\n",
            ),
        ],
    );
    app.write(
        "Chart.yaml",
        "apiVersion: v2\nname: webapp\nversion: 1.4.0\ndependencies:\n  - name: common\n    version: 2.0.0\n    repository: file://../common\n",
    );
    std::fs::create_dir_all(app.path().join("charts")).unwrap();
    std::os::unix::fs::symlink(&lib, app.path().join("charts/common")).expect("link the library chart");
    app
}

/// A chart that compares `.Capabilities.KubeVersion` with `semverCompare`, as charts do to pick an API or
/// a feature by server version. Helm's built-in version is older than the local server, so a render
/// without the cluster's version takes the other branch.
fn semver_chart() -> Chart {
    Chart::new(
        "semver",
        "0.2.0",
        "{}\n",
        &[(
            "policy.yaml",
            "{{- if semverCompare \">=1.37-0\" .Capabilities.KubeVersion.GitVersion }}\n\
             apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: {{ .Release.Name }}-default-deny\n\
             spec:\n  podSelector: {}\n  policyTypes: [Ingress]\n\
             {{- else }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-legacy\ndata:\n  mode: legacy\n{{- end }}\n\
             ---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-features\ndata:\n\
             \x20 sidecars: {{ semverCompare \">=1.29-0\" .Capabilities.KubeVersion.Version | quote }}\n\
             \x20 major: {{ .Capabilities.KubeVersion.Major | quote }}\n",
        )],
    )
}

/// An admission webhook as operators ship one: a CA and a serving certificate generated by the chart
/// (`genCA`, `genSignedCert`) into a TLS Secret, kept across renders by `lookup`, and the CA's base64 in
/// the webhook's `caBundle` (long one-line strings; the annotation a long sentence). The webhook matches
/// a kind nobody creates and is ignored on failure, so it never stands in the way of the other tests.
fn webhook_chart() -> Chart {
    Chart::new(
        "webhook",
        "1.4.0",
        "{}\n",
        &[(
            "webhook.yaml",
            "{{- $name := printf \"%s-webhook\" .Release.Name }}\n\
             {{- $host := printf \"%s.%s.svc\" $name .Release.Namespace }}\n\
             {{- $secret := lookup \"v1\" \"Secret\" .Release.Namespace $name }}\n\
             {{- $ca := \"\" }}{{- $crt := \"\" }}{{- $key := \"\" }}\n\
             {{- if and $secret $secret.data }}\n\
             {{- $ca = index $secret.data \"ca.crt\" }}{{- $crt = index $secret.data \"tls.crt\" }}{{- $key = index $secret.data \"tls.key\" }}\n\
             {{- else }}\n\
             {{- $gen := genCA (printf \"%s-ca\" $name) 3650 }}\n\
             {{- $cert := genSignedCert $host nil (list $host) 3650 $gen }}\n\
             {{- $ca = $gen.Cert | b64enc }}{{- $crt = $cert.Cert | b64enc }}{{- $key = $cert.Key | b64enc }}\n\
             {{- end }}\n\
             apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ $name }}\ntype: kubernetes.io/tls\ndata:\n\
             \x20 ca.crt: {{ $ca }}\n  tls.crt: {{ $crt }}\n  tls.key: {{ $key }}\n\
             ---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n\
             \x20 name: {{ $name }}-{{ .Release.Namespace }}\n  annotations:\n\
             \x20   description: Validates the widgets of this release before the API server admits them, with a certificate the chart generated once and keeps\n\
             webhooks:\n  - name: widgets.{{ .Release.Namespace }}.example.com\n    admissionReviewVersions: [v1]\n\
             \x20   sideEffects: None\n    failurePolicy: Ignore\n    clientConfig:\n      caBundle: {{ $ca }}\n\
             \x20     service:\n        name: {{ $name }}\n        namespace: {{ .Release.Namespace }}\n        path: /validate\n\
             \x20   rules:\n      - apiGroups: [widgets.example.com]\n        apiVersions: [v1]\n\
             \x20       operations: [CREATE, UPDATE]\n        resources: [widgets]\n",
        )],
    )
}

fn real_world(helm: Helm) {
    let v = format!("{helm:?}").to_lowercase();
    let ns = namespace(&format!("eyes-real-{v}"));
    let root = tempfile::tempdir().expect("tempdir");
    let charts = [
        ("db", database_chart()),
        ("webapp", linked_library_chart(root.path())),
        ("semver", semver_chart()),
        ("webhook", webhook_chart()),
    ];
    for (name, chart) in &charts {
        chart.publish(name, &ns);
        apply(&helmrelease(&ns, name, name, ""));
    }
    for (name, chart) in &charts {
        wait_hr_ready(&ns, name, READY_TIMEOUT);
        let stored = objects(&helm_get(&["manifest", name, "-n", &ns]).stdout);
        // The patterns are live on helm-controller's side.
        match *name {
            "db" => assert!(!find(&stored, "Secret", "db-postgresql")["data"]["postgres-password"].is_null()),
            "webapp" => assert_eq!(find(&stored, "PodDisruptionBudget", "webapp")["apiVersion"], "policy/v1"),
            "webhook" => {
                let ca = &find(&stored, "Secret", "webhook-webhook")["data"]["ca.crt"];
                let config = find(&stored, "ValidatingWebhookConfiguration", &format!("webhook-webhook-{ns}"));
                assert!(ca.as_str().is_some_and(|c| c.len() > 500), "a generated CA in base64: {ca}");
                assert_eq!(&config["webhooks"][0]["clientConfig"]["caBundle"], ca);
            }
            _ => {
                find(&stored, "NetworkPolicy", "semver-default-deny");
            }
        }
        in_sync(helm, chart.path(), &ns, name, "after install");
    }
}

helm_tests! {
    real_world_charts_are_in_sync_after_helm_controller_installs_them => real_world;
}

/// helm is started before the cluster has answered, with the arguments of the release's last render,
/// and gets its values on standard input (`cozyhr::render::early`). That guess must never decide the
/// output: a render whose arguments changed (the HelmRelease's release name, a CRD) runs a new helm,
/// a render whose values changed feeds the new values to the waiting one, and the cache keeps no values.
fn started_ahead(helm: Helm) {
    let v = format!("{helm:?}").to_lowercase();
    let ns = namespace(&format!("ahead-{v}"));
    let chart = Chart::new(
        "ahead",
        "0.1.0",
        "message: default\n",
        &[(
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-info\ndata:\n  \
             message: {{ .Values.message | quote }}\n  upgrade: {{ .Release.IsUpgrade | quote }}\n",
        )],
    );
    chart.publish("ahead", &ns);
    apply(&helmrelease(&ns, "ahead", "ahead", "values:\n  message: first-secret-value\n"));
    wait_hr_ready(&ns, "ahead", READY_TIMEOUT);
    let cache = tempfile::tempdir().expect("tempdir");
    // show with helm cozy's cache of its own, logging what it does with the helm started ahead.
    let show = || {
        let mut c = cozy_home(helm).command();
        c.env("XDG_CACHE_HOME", cache.path()).env("HELM_DEBUG", "1").args(["cozy", "show", "ahead", "-C"]);
        c.arg(chart.path()).args(["-n", &ns]);
        let r = run(c).ok();
        let started = r.stderr.contains("helm started ahead started=true");
        let used = r.stderr.contains("arguments of the helm started ahead same=true");
        (objects(&r.stdout), started, used)
    };
    let stored = objects(&helm_get(&["manifest", "ahead", "-n", &ns]).stdout);

    // A first render has nothing to go by; the second starts helm ahead and uses it. Both print the same.
    let (first, started, _) = show();
    assert!(!started, "{helm:?}: nothing was remembered yet, yet helm was started ahead");
    let (second, started, used) = show();
    assert!(started && used, "{helm:?}: the second render did not use the helm started ahead");
    assert_eq!(first, second, "{helm:?}");
    assert_eq!(find(&second, "ConfigMap", "ahead-info")["data"]["message"], "first-secret-value");
    assert_eq!(find(&stored, "ConfigMap", "ahead-info")["data"]["message"], "first-secret-value");

    // New values, same arguments: the helm started ahead gets the new values.
    apply(&helmrelease(&ns, "ahead", "ahead", "values:\n  message: second-secret-value\n"));
    let (changed, _, used) = show();
    assert!(used, "{helm:?}: a change of values alone changes no argument");
    assert_eq!(find(&changed, "ConfigMap", "ahead-info")["data"]["message"], "second-secret-value");

    // A new release name changes the arguments: the guess is dropped and the output follows the change.
    apply(&helmrelease(&ns, "ahead", "ahead", "releaseName: renamed\nvalues:\n  message: second-secret-value\n"));
    let (renamed, started, used) = show();
    assert!(started && !used, "{helm:?}: the helm started with the old release name was used");
    find(&renamed, "ConfigMap", "renamed-info");
    assert_eq!(renamed.len(), 1, "{renamed:?}");

    // What is remembered is arguments, never values.
    for entry in files_under(cache.path()) {
        let text = std::fs::read_to_string(&entry).unwrap_or_default();
        assert!(!text.contains("secret-value"), "{} keeps values: {text}", entry.display());
    }
}

helm_tests! {
    helm_started_ahead_never_decides_the_output => started_ahead;
}
