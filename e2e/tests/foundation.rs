//! The ground every other test stands on: a real kube-apiserver with the Flux CRDs, the real
//! helm-controller installing a chart from a locally served ExternalArtifact, and both binaries reachable
//! through the real plugin systems (kubectl dispatch, Helm 3 and Helm 4 `helm plugin install`).

use std::time::Duration;

use cozyhr_e2e::{
    Chart, Helm, HelmHome, apply, condition, env, get_json, helm_release_secrets, helmrelease, kubectl, namespace,
    wait_hr_ready,
};

#[test]
fn apiserver_reports_a_semver_version() {
    let v = kubectl(["get", "--raw", "/version"]).ok().json();
    let git = v["gitVersion"].as_str().expect("gitVersion");
    let parts: Vec<&str> = git.trim_start_matches('v').split('.').collect();
    assert!(git.starts_with('v') && parts.len() == 3, "not semver: {git}");
    assert!(parts.iter().all(|p| p.parse::<u32>().is_ok()), "not a release semver: {git}");
    assert_eq!(v["major"], "1");
}

#[test]
fn helmrelease_crd_is_established_with_v2_served() {
    let crd = get_json("crd", "", "helmreleases.helm.toolkit.fluxcd.io").expect("HelmRelease CRD");
    assert_eq!(condition(&crd, "Established").map(|c| c.0), Some("True".into()));
    let served: Vec<&str> = crd["spec"]["versions"]
        .as_array()
        .expect("versions")
        .iter()
        .filter(|v| v["served"] == true)
        .filter_map(|v| v["name"].as_str())
        .collect();
    assert!(served.contains(&"v2"), "served versions: {served:?}");
    for k in ["externalartifacts", "helmcharts", "ocirepositories", "helmrepositories"] {
        let crd = get_json("crd", "", &format!("{k}.source.toolkit.fluxcd.io")).unwrap_or_else(|| panic!("{k} CRD"));
        assert_eq!(condition(&crd, "Established").map(|c| c.0), Some("True".into()), "{k}");
    }
}

#[test]
fn helm_controller_installs_a_chart_from_an_external_artifact() {
    let ns = namespace("found");
    let chart = Chart::new(
        "hello",
        "0.1.0",
        "greeting: hello\n",
        &[(
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  greeting: {{ .Values.greeting | quote }}\n",
        )],
    );
    chart.publish("hello", &ns);
    apply(&helmrelease(&ns, "hello", "hello", "values:\n  greeting: bonjour\n"));

    let hr = wait_hr_ready(&ns, "hello", Duration::from_secs(120));
    assert_eq!(hr.pointer("/status/history/0/chartVersion").and_then(|v| v.as_str()), Some("0.1.0"));
    assert_eq!(condition(&hr, "Released").map(|c| c.1), Some("InstallSucceeded".into()));

    let secrets = helm_release_secrets(&ns, "hello");
    assert!(secrets.contains_key("sh.helm.release.v1.hello.v1"), "release secrets: {secrets:?}");

    let cm = get_json("configmap", &ns, "hello-cm").expect("the chart's ConfigMap exists");
    assert_eq!(cm["data"]["greeting"], "bonjour");
    assert_eq!(cm["metadata"]["labels"]["helm.toolkit.fluxcd.io/name"], "hello");
}

#[test]
fn kubectl_dispatches_to_kubectl_cozyhr() {
    let out = kubectl(["cozyhr", "version"]).ok();
    assert_eq!(out.stdout.lines().next().unwrap_or_default(), format!("kubectl-cozyhr {}", env!("CARGO_PKG_VERSION")));
    let list = kubectl(["plugin", "list"]);
    assert!(list.stdout.contains("kubectl-cozyhr"), "kubectl plugin list:\n{}\n{}", list.stdout, list.stderr);
}

fn helm_cozy_version_after_plugin_install(helm: Helm) {
    let home = HelmHome::new(helm);
    home.install_plugin_from_repo().ok();
    let list = home.run(["plugin", "list"]).ok();
    assert!(list.stdout.lines().any(|l| l.starts_with("cozy")), "helm plugin list:\n{}", list.stdout);
    let out = home.run(["cozy", "version"]).ok();
    assert_eq!(out.stdout.lines().next().unwrap_or_default(), format!("helm-cozy {}", env!("CARGO_PKG_VERSION")));
    home.run(["plugin", "uninstall", "cozy"]).ok();
    let list = home.run(["plugin", "list"]).ok();
    assert!(!list.stdout.lines().any(|l| l.starts_with("cozy")), "still installed:\n{}", list.stdout);
    let _ = env();
}

#[test]
fn helm3_runs_helm_cozy_after_plugin_install() {
    helm_cozy_version_after_plugin_install(Helm::V3);
}

#[test]
fn helm4_runs_helm_cozy_after_plugin_install() {
    helm_cozy_version_after_plugin_install(Helm::V4);
}
