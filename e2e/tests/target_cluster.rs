//! The release's own cluster (issue 28), against two real API servers: the first with the real
//! helm-controller, where the HelmReleases live; the second, the "tenant", where `spec.kubeConfig`
//! installs them (`scripts/cluster.sh up --tenant`). Under Helm 3 and Helm 4:
//! - helm-controller installs into the tenant; `helm cozy diff` exits 0 right after, `show` equals the
//!   stored manifest and renders with the tenant's capabilities and lookups; `apply` of a local change
//!   changes the tenant only and writes the status in the first cluster; after `resume` helm-controller
//!   performs no upgrade;
//! - the Secret's address unreachable from here: `show`, `diff` and `apply` exit 1 with one line, nothing
//!   is created in either cluster and the HelmRelease is not suspended; `--target-kubeconfig` at the
//!   tenant works, at the first cluster it refuses;
//! - a kubeconfig Secret naming a file (a client key): helm-controller v1.6.4 refuses it, and `show`,
//!   `diff` and `apply` exit 1 with one line saying so, nothing changed;
//! - `serviceAccountName` naming an account that may not create ConfigMaps in the tenant: helm-controller's
//!   install fails, and so does `helm cozy apply`, impersonating it and saying so.

use std::time::Duration;

use cozyhr_e2e::{
    Chart, Helm, apply, assert_same_objects, condition, cozy, env, eventually, get_json, helm_release_secrets,
    helm_tests, helmrelease, kubectl, namespace, objects, resume_without_an_upgrade, run, tenant_apply,
    tenant_kubeconfig, tenant_kubectl, wait_hr_ready,
};
use serde_json::Value;

const READY_TIMEOUT: Duration = Duration::from_secs(180);

/// A chart that shows which cluster rendered it: a lookup of a ConfigMap only the tenant has, and an API
/// only the tenant serves.
fn tenant_chart() -> Chart {
    Chart::new(
        "tenant-app",
        "0.1.0",
        "color: red\n",
        &[(
            "config.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\ndata:\n\
             \x20 color: {{ .Values.color | quote }}\n\
             \x20 marker: {{ (lookup \"v1\" \"ConfigMap\" .Release.Namespace \"tenant-marker\").data.cluster | default \"none\" | quote }}\n\
             \x20 tenantApi: {{ .Capabilities.APIVersions.Has \"tenant.cozyhr.test/v1\" | quote }}\n",
        )],
    )
}

/// The tenant serves `tenant.cozyhr.test/v1` (a CRD the first cluster does not have); once per run.
fn tenant_crd() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        tenant_apply(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.tenant.cozyhr.test\n\
             spec:\n  group: tenant.cozyhr.test\n  scope: Namespaced\n  names:\n    plural: widgets\n    singular: widget\n\
             \x20   kind: Widget\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n\
             \x20     openAPIV3Schema:\n        type: object\n        x-kubernetes-preserve-unknown-fields: true\n",
        );
        tenant_kubectl(["wait", "--for=condition=Established", "--timeout=60s", "crd/widgets.tenant.cozyhr.test"]).ok();
    });
}

/// A namespace of the same name in both clusters, the tenant's with the marker the chart looks up, and
/// in the first one the Secret `tenant-kubeconfig` (key `value`) with the tenant's kubeconfig.
fn namespaces(prefix: &str) -> String {
    tenant_crd();
    let ns = namespace(prefix);
    tenant_kubectl(["create", "namespace", &ns]).ok();
    tenant_kubectl(["-n", &ns, "create", "configmap", "tenant-marker", "--from-literal=cluster=tenant"]).ok();
    let file = format!("value={}", tenant_kubeconfig().display());
    kubectl(["-n", &ns, "create", "secret", "generic", "tenant-kubeconfig", &format!("--from-file={file}")]).ok();
    ns
}

/// `helm get manifest` of a release stored in the tenant.
fn tenant_manifest(release: &str, ns: &str) -> String {
    let mut c = cozyhr_e2e::command(&env().helm4);
    c.args(["get", "manifest", release, "-n", ns, "--kubeconfig"]).arg(tenant_kubeconfig());
    run(c).ok().stdout
}

fn tenant_json(kind: &str, ns: &str, name: &str) -> Option<Value> {
    let r = tenant_kubectl(["-n", ns, "get", kind, name, "-o", "json"]);
    (r.code == Some(0)).then(|| r.json())
}

/// The one `error:` line a command ends with, asserted to be the only line that says error.
#[track_caller]
fn one_error_line(stderr: &str) -> String {
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "one error line: {stderr}");
    errors[0].to_string()
}

fn installs_into_its_own_cluster(helm: Helm) {
    let ns = namespaces(&format!("target-{}", format!("{helm:?}").to_lowercase()));
    let chart = tenant_chart();
    chart.publish("tenant-app", &ns);
    let spec = "kubeConfig:\n  secretRef:\n    name: tenant-kubeconfig\n";
    apply(&helmrelease(&ns, "app", "tenant-app", spec));
    wait_hr_ready(&ns, "app", READY_TIMEOUT);

    // helm-controller installed it into the tenant, rendered with the tenant's eyes.
    let live = tenant_json("configmap", &ns, "app-config").expect("the tenant has the release's ConfigMap");
    assert_eq!(live["data"]["marker"], "tenant", "{live}");
    assert_eq!(live["data"]["tenantApi"], "true", "{live}");
    assert!(get_json("configmap", &ns, "app-config").is_none(), "the first cluster has no object of the release");
    assert!(helm_release_secrets(&ns, "app").is_empty(), "the first cluster has no storage of the release");

    let diff = cozy(helm, chart.path(), &ns, &["diff", "app", "--detailed-exitcode"]);
    assert_eq!(
        diff.code,
        Some(0),
        "{helm:?}: diff right after helm-controller's install\n{}\n{}",
        diff.stdout,
        diff.stderr
    );
    assert!(diff.stderr.contains("the release's own cluster at"), "says where it works: {}", diff.stderr);
    let status = kubectl(["cozyhr", "status", "app", "-n", &ns]).ok();
    assert!(status.stdout.contains(&format!("Installs into: {}", cozyhr_e2e::tenant_url())), "{}", status.stdout);
    assert!(status.stdout.contains("(secret/tenant-kubeconfig): reached"), "{}", status.stdout);
    let tree = kubectl(["cozyhr", "tree", "app", "-n", &ns]).ok();
    assert!(
        tree.stdout
            .contains(&format!("installs into another cluster: {ns}/app (spec.kubeConfig, secret/tenant-kubeconfig)")),
        "{}",
        tree.stdout
    );
    let wide = kubectl(["cozyhr", "get", "app", "-n", &ns, "-o", "wide"]).ok();
    assert!(wide.stdout.contains("secret/tenant-kubeconfig"), "{}", wide.stdout);
    let shown = cozy(helm, chart.path(), &ns, &["show", "app"]).ok();
    assert_same_objects(&objects(&shown.stdout), &objects(&tenant_manifest("app", &ns)), &format!("{helm:?} show"));

    // A local change reaches the tenant only; the status is written where the HelmRelease lives. (Published
    // too: the chart applied is then its source's, so resume has nothing to hand back.)
    chart.write("values.yaml", "color: green\n");
    chart.publish("tenant-app", &ns);
    cozy(helm, chart.path(), &ns, &["apply", "app"]).ok();
    let live = tenant_json("configmap", &ns, "app-config").expect("the tenant's ConfigMap");
    assert_eq!(live["data"]["color"], "green", "{live}");
    assert!(get_json("configmap", &ns, "app-config").is_none(), "still nothing in the first cluster");
    assert!(helm_release_secrets(&ns, "app").is_empty(), "still no storage in the first cluster");
    let hr = get_json("helmrelease", &ns, "app").expect("the HelmRelease");
    assert_eq!(hr.pointer("/status/history/0/version").and_then(Value::as_i64), Some(2), "{hr}");
    assert_eq!(condition(&hr, "Ready").map(|c| c.0).as_deref(), Some("True"), "{hr}");
    resume_without_an_upgrade(&ns, "app");
}

fn unreachable_address_changes_nothing(helm: Helm) {
    let ns = namespaces(&format!("target-far-{}", format!("{helm:?}").to_lowercase()));
    let chart = tenant_chart();
    chart.publish("tenant-app", &ns);
    // The tenant's kubeconfig with an address that does not answer from here (as a `*.svc` address of
    // the platform would not): a port nothing listens on.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let text = std::fs::read_to_string(tenant_kubeconfig()).expect("tenant kubeconfig");
    let far = text
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("server:") {
                format!("    server: https://127.0.0.1:{closed}")
            } else {
                l.into()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let dir = tempfile::tempdir().expect("tempdir");
    let far_file = dir.path().join("far.kubeconfig");
    std::fs::write(&far_file, far).expect("write");
    kubectl([
        "-n",
        &ns,
        "create",
        "secret",
        "generic",
        "far-kubeconfig",
        &format!("--from-file=value={}", far_file.display()),
    ])
    .ok();
    apply(&helmrelease(&ns, "far", "tenant-app", "kubeConfig:\n  secretRef:\n    name: far-kubeconfig\n"));
    let before = get_json("helmrelease", &ns, "far").expect("the HelmRelease");

    for args in [&["show", "far"][..], &["diff", "far"], &["apply", "far"]] {
        let r = cozy(helm, chart.path(), &ns, args);
        assert_eq!(r.code, Some(1), "{helm:?} {args:?}: {}\n{}", r.stdout, r.stderr);
        let line = one_error_line(&r.stderr);
        assert!(line.contains(&format!("cannot reach https://127.0.0.1:{closed}")), "names the server: {line}");
        assert!(line.contains("--target-kubeconfig"), "says how to point at it from here: {line}");
    }
    let after = get_json("helmrelease", &ns, "far").expect("the HelmRelease");
    assert_eq!(after["spec"], before["spec"], "the HelmRelease is not suspended nor changed");
    assert!(
        tenant_json("configmap", &ns, "far-config").is_none() && get_json("configmap", &ns, "far-config").is_none()
    );
    assert!(helm_release_secrets(&ns, "far").is_empty());
    let tenant_storage = tenant_kubectl(["-n", &ns, "get", "secrets", "-l", "owner=helm,name=far", "-o", "name"]).ok();
    assert!(tenant_storage.stdout.trim().is_empty(), "{}", tenant_storage.stdout);

    // The first cluster's kubeconfig is not the tenant: refused, nothing changed.
    let home = env().kubeconfig.to_string_lossy().into_owned();
    for args in [&["diff", "far", "--target-kubeconfig", &home][..], &["apply", "far", "--target-kubeconfig", &home]] {
        let r = cozy(helm, chart.path(), &ns, args);
        assert_eq!(r.code, Some(1), "{helm:?} {args:?}: {}\n{}", r.stdout, r.stderr);
        let line = one_error_line(&r.stderr);
        assert!(line.contains("is not the cluster helmrelease") && line.contains("certificate authority"), "{line}");
    }
    assert!(get_json("configmap", &ns, "far-config").is_none(), "nothing in the first cluster");
    let after = get_json("helmrelease", &ns, "far").expect("the HelmRelease");
    assert_eq!(after["spec"], before["spec"], "still not suspended");

    // status says where the release is, and that it cannot be reached from here.
    let status = kubectl(["cozyhr", "status", "far", "-n", &ns]).ok();
    assert!(
        status.stdout.contains("Installs into: secret/far-kubeconfig: not reached: cannot reach"),
        "{}",
        status.stdout
    );

    // Pointed at the tenant from here, they work.
    let tenant = tenant_kubeconfig().to_string_lossy().into_owned();
    let shown = cozy(helm, chart.path(), &ns, &["show", "far", "--target-kubeconfig", &tenant]).ok();
    assert!(
        shown.stdout.contains("marker: tenant") && shown.stdout.contains("tenantApi: \"true\""),
        "{}",
        shown.stdout
    );
    let diff = cozy(helm, chart.path(), &ns, &["diff", "far", "--target-kubeconfig", &tenant, "--detailed-exitcode"]);
    assert_eq!(diff.code, Some(2), "not installed yet: everything to add\n{}\n{}", diff.stdout, diff.stderr);
    // Also with credentials from an exec plugin, as kubectl takes them (here a script printing the
    // tenant admin's client certificate as an ExecCredential).
    let exec = exec_kubeconfig(dir.path());
    let shown = cozy(helm, chart.path(), &ns, &["show", "far", "--target-kubeconfig", &exec]).ok();
    assert!(shown.stdout.contains("marker: tenant"), "{}", shown.stdout);
    cozy(helm, chart.path(), &ns, &["apply", "far", "--target-kubeconfig", &tenant]).ok();
    let live = tenant_json("configmap", &ns, "far-config").expect("installed into the tenant");
    assert_eq!(live["data"]["marker"], "tenant", "{live}");
    assert!(get_json("configmap", &ns, "far-config").is_none(), "and not into the first cluster");
    let hr = get_json("helmrelease", &ns, "far").expect("the HelmRelease");
    assert_eq!(condition(&hr, "Ready").map(|c| c.0).as_deref(), Some("True"), "{hr}");
}

/// The tenant's kubeconfig with its user's client certificate given by an exec credential plugin (a
/// script in `dir` printing an ExecCredential), as cloud and OIDC kubeconfigs give theirs.
fn exec_kubeconfig(dir: &std::path::Path) -> String {
    use base64::Engine as _;
    let text = std::fs::read_to_string(tenant_kubeconfig()).expect("tenant kubeconfig");
    let field = |key: &str| {
        let line = text.lines().find(|l| l.trim_start().starts_with(key)).expect(key);
        let b64 = line.split_once(':').expect("key: value").1.trim();
        String::from_utf8(base64::engine::general_purpose::STANDARD.decode(b64).expect("base64")).expect("PEM")
    };
    let credential = serde_json::json!({
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {"clientCertificateData": field("client-certificate-data:"), "clientKeyData": field("client-key-data:")},
    });
    let plugin = dir.join("credential.sh");
    std::fs::write(&plugin, format!("#!/bin/sh\ncat <<'EOF'\n{credential}\nEOF\n")).expect("write plugin");
    let mut chmod = std::process::Command::new("chmod");
    chmod.arg("+x").arg(&plugin);
    run(chmod).ok();
    let user = format!(
        "users:\n- name: tenant-admin\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {}\n      interactiveMode: Never\n",
        plugin.display()
    );
    let start = text.find("users:").expect("users");
    let end = text.find("contexts:").expect("contexts");
    let path = dir.join("exec.kubeconfig");
    std::fs::write(&path, format!("{}{user}{}", &text[..start], &text[end..])).expect("write kubeconfig");
    path.to_string_lossy().into_owned()
}

fn service_account_is_impersonated(helm: Helm) {
    let ns = namespaces(&format!("target-sa-{}", format!("{helm:?}").to_lowercase()));
    let chart = tenant_chart();
    chart.publish("tenant-app", &ns);
    // In the tenant, `deployer` may keep Helm's storage but not create ConfigMaps.
    tenant_apply(&format!(
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: deployer\n  namespace: {ns}\n---\n\
         apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: deployer\n  namespace: {ns}\nrules:\n\
         - apiGroups: [\"\"]\n  resources: [secrets]\n  verbs: [get, list, watch, create, update, patch, delete]\n\
         - apiGroups: [\"\"]\n  resources: [configmaps]\n  verbs: [get, list, watch]\n---\n\
         apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: deployer\n  namespace: {ns}\n\
         roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: deployer\n\
         subjects:\n- kind: ServiceAccount\n  name: deployer\n  namespace: {ns}\n"
    ));
    let spec = "serviceAccountName: deployer\nkubeConfig:\n  secretRef:\n    name: tenant-kubeconfig\n";
    apply(&helmrelease(&ns, "limited", "tenant-app", spec));
    let forbidden = |message: &str| {
        message.contains("forbidden") && message.contains(&format!("system:serviceaccount:{ns}:deployer"))
    };
    eventually("helm-controller's install to fail as the service account", READY_TIMEOUT, || {
        let hr = get_json("helmrelease", &ns, "limited").ok_or("not found")?;
        match condition(&hr, "Ready") {
            Some((s, _, m)) if s == "False" && forbidden(&m) => Ok(()),
            other => Err(format!("{other:?}")),
        }
    });
    assert!(tenant_json("configmap", &ns, "limited-config").is_none());

    let r = cozy(helm, chart.path(), &ns, &["apply", "limited"]);
    assert_eq!(r.code, Some(1), "{helm:?}: apply as the service account\n{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains(&format!("as system:serviceaccount:{ns}:deployer")), "says as whom: {}", r.stderr);
    one_error_line(&r.stderr);
    assert!(forbidden(&r.stderr), "fails as the service account: {}", r.stderr);
    assert!(tenant_json("configmap", &ns, "limited-config").is_none(), "nothing was created");
}

/// A kubeconfig Secret whose user names a client-key file: helm-controller v1.6.4 refuses it before
/// rendering (Ready=False, RESTClientError), and so does helm cozy, before anything changes.
fn a_kubeconfig_naming_a_file(helm: Helm) {
    let ns = namespaces(&format!("target-file-{}", format!("{helm:?}").to_lowercase()));
    let chart = tenant_chart();
    chart.publish("tenant-app", &ns);
    let dir = tempfile::tempdir().expect("tempdir");
    let key_file = dir.path().join("admin.key");
    let text = std::fs::read_to_string(tenant_kubeconfig()).expect("tenant kubeconfig");
    let with_file: Vec<String> = text
        .lines()
        .map(|l| match l.trim_start().strip_prefix("client-key-data:") {
            Some(data) => {
                use base64::Engine as _;
                let key = base64::engine::general_purpose::STANDARD.decode(data.trim()).expect("base64 key");
                std::fs::write(&key_file, key).expect("write the key");
                format!("    client-key: {}", key_file.display())
            }
            None => l.to_string(),
        })
        .collect();
    let file = dir.path().join("file.kubeconfig");
    std::fs::write(&file, with_file.join("\n")).expect("write");
    kubectl([
        "-n",
        &ns,
        "create",
        "secret",
        "generic",
        "file-kubeconfig",
        &format!("--from-file=value={}", file.display()),
    ])
    .ok();
    apply(&helmrelease(&ns, "file", "tenant-app", "kubeConfig:\n  secretRef:\n    name: file-kubeconfig\n"));

    // What helm-controller does with it, first.
    let theirs = eventually("helm-controller to judge the kubeconfig", READY_TIMEOUT, || {
        let hr = get_json("helmrelease", &ns, "file").ok_or("not found")?;
        match condition(&hr, "Ready") {
            Some((s, reason, message)) if s == "False" && reason == "RESTClientError" => Ok(message),
            other => Err(format!("Ready {other:?}")),
        }
    });
    assert!(
        theirs.contains("user 'tenant-admin' references a client-key file, only client-key-data is supported"),
        "{theirs}"
    );
    let before = get_json("helmrelease", &ns, "file").expect("the HelmRelease");

    for args in [&["show", "file"][..], &["diff", "file"], &["apply", "file"]] {
        let r = cozy(helm, chart.path(), &ns, args);
        assert_eq!(r.code, Some(1), "{helm:?} {args:?}: {}\n{}", r.stdout, r.stderr);
        let line = one_error_line(&r.stderr);
        let expected = format!("helm-controller {} refuses the kubeconfig", cozyhr_e2e::flux().helm_controller);
        assert!(line.contains(&expected), "{line}");
        assert!(
            line.contains(&format!("user 'tenant-admin' references a client-key file ({})", key_file.display())),
            "{line}"
        );
    }
    let after = get_json("helmrelease", &ns, "file").expect("the HelmRelease");
    assert_eq!(after["spec"], before["spec"], "the HelmRelease is not suspended nor changed");
    assert!(tenant_json("configmap", &ns, "file-config").is_none());
}

helm_tests! {
    a_kubeconfig_naming_a_file_is_refused_as_the_controller_refuses_it => a_kubeconfig_naming_a_file;
    installs_into_its_own_cluster => installs_into_its_own_cluster;
    unreachable_address_changes_nothing => unreachable_address_changes_nothing;
    service_account_is_impersonated => service_account_is_impersonated;
}
