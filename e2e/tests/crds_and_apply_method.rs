//! Around the templates (issue 24), against the real helm-controller, under Helm 3 and Helm 4:
//! - a chart with `crds/` and a subchart with its own behind a condition: under each CRD policy
//!   (`spec.upgrade.crds`), helm-controller's upgrade and `helm cozy apply` of the same change (a CRD
//!   changed, the subchart enabled) do the same to the CRDs: applied under Create and CreateReplace, not
//!   under Skip; `helm cozy diff` shows the change exactly when apply would make it;
//! - a release whose last revision was applied client-side: `apply` succeeds (conflicts are not forced),
//!   its revision is client-side too, and helm-controller's next upgrade keeps the method.

use std::time::Duration;

use cozyhr_e2e::{Chart, Helm, apply, cozy, eventually, get_json, helm_tests, kubectl, namespace, wait_hr_ready};
use serde_json::Value;

const READY_TIMEOUT: Duration = Duration::from_secs(180);

fn crd(group: &str, plural: &str, kind: &str, with_size: bool) -> String {
    let size = if with_size { "\n              size:\n                type: integer" } else { "" };
    format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: {plural}.{group}\nspec:\n\
         \x20 group: {group}\n  scope: Namespaced\n  names:\n    plural: {plural}\n    singular: {}\n    kind: {kind}\n\
         \x20 versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n\
         \x20       type: object\n        properties:\n          spec:\n            type: object\n            properties:\n\
         \x20             color:\n                type: string{size}\n",
        plural.trim_end_matches('s')
    )
}

/// Version 1 of the chart: its CRD without `spec.size`, the subchart (with a CRD of its own) disabled.
/// Version 2 adds `spec.size` and enables the subchart.
fn chart(group: &str, v2: bool) -> Chart {
    let version = if v2 { "0.2.0" } else { "0.1.0" };
    let chart = Chart::new(
        "withcrds",
        version,
        &format!("sub:\n  enabled: {v2}\n"),
        &[("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  a: b\n")],
    );
    chart.write(
        "Chart.yaml",
        &format!(
            "apiVersion: v2\nname: withcrds\nversion: {version}\ndependencies:\n- name: sub\n  version: 0.1.0\n  condition: sub.enabled\n"
        ),
    );
    chart.write("crds/widgets.yaml", &crd(group, "widgets", "Widget", v2));
    chart.write("charts/sub/Chart.yaml", "apiVersion: v2\nname: sub\nversion: 0.1.0\n");
    chart.write("charts/sub/crds/gadgets.yaml", &crd(group, "gadgets", "Gadget", false));
    chart.write(
        "charts/sub/templates/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sub-cm\ndata:\n  a: b\n",
    );
    chart
}

fn crd_json(name: &str) -> Option<Value> {
    let r = kubectl(["get", "crd", name, "-o", "json"]);
    (r.code == Some(0)).then(|| r.json())
}

fn has_size(group: &str) -> bool {
    crd_json(&format!("widgets.{group}"))
        .and_then(|c| c.pointer("/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/size").cloned())
        .is_some()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Who {
    HelmController,
    HelmCozy,
}

/// Installs version 1 by helm-controller, then has `who` take version 2 under `policy`; returns the CRD
/// group, whose CRDs show what was applied.
fn upgrade_under(helm: Helm, policy: &str, who: Who) -> String {
    let tag = format!("{}-{who:?}-{helm:?}", policy.to_lowercase()).to_lowercase();
    let ns = namespace(&format!("crd-{}", &tag[..tag.len().min(24)]));
    let group = format!("{ns}.cozyhr.test");
    let v1 = chart(&group, false);
    v1.publish("withcrds", &ns);
    apply(&release(&ns, "", &format!("    crds: {policy}\n")));
    let hr = wait_hr_ready(&ns, "app", READY_TIMEOUT);
    // Installed under the install policy (Create): the chart's own CRD, with its origin labels, and not
    // the disabled subchart's.
    let widgets = crd_json(&format!("widgets.{group}")).expect("the chart's CRD is installed");
    assert_eq!(widgets["metadata"]["labels"]["helm.toolkit.fluxcd.io/name"], "app", "{widgets}");
    assert!(crd_json(&format!("gadgets.{group}")).is_none(), "the disabled subchart's CRD is not installed");
    let inventory = hr.pointer("/status/inventory/entries").cloned().unwrap_or_default().to_string();
    assert!(
        inventory.contains(&format!("_widgets.{group}_apiextensions.k8s.io_CustomResourceDefinition")),
        "{inventory}"
    );

    let v2 = chart(&group, true);
    match who {
        Who::HelmController => {
            v2.publish("withcrds", &ns);
            eventually("helm-controller to upgrade to 0.2.0", READY_TIMEOUT, || {
                let hr = get_json("helmrelease", &ns, "app").ok_or("not found")?;
                let v = hr.pointer("/status/history/0/chartVersion").and_then(Value::as_str).unwrap_or_default();
                let ready = cozyhr_e2e::condition(&hr, "Ready").is_some_and(|c| c.0 == "True");
                if v == "0.2.0" && ready { Ok(()) } else { Err(format!("{v} ready={ready}")) }
            });
        }
        Who::HelmCozy => {
            let diff = cozy(helm, v2.path(), &ns, &["diff", "app", "--detailed-exitcode", "-o", "summary"]);
            let shows = diff.stdout.contains(&format!("CustomResourceDefinition widgets.{group}"));
            assert_eq!(
                shows,
                policy != "Skip",
                "{policy}: the diff shows the CRD change\n{}\n{}",
                diff.stdout,
                diff.stderr
            );
            assert!(!diff.stdout.contains("- CustomResourceDefinition"), "a CRD is never removed: {}", diff.stdout);
            let applied = cozy(helm, v2.path(), &ns, &["apply", "app"]).ok();
            let hr = get_json("helmrelease", &ns, "app").expect("the HelmRelease");
            let inventory = hr.pointer("/status/inventory/entries").cloned().unwrap_or_default().to_string();
            assert!(
                inventory.contains(&format!("_gadgets.{group}_apiextensions.k8s.io_CustomResourceDefinition")),
                "the enabled subchart's CRD is in the inventory apply wrote: {inventory}\n{}",
                applied.stderr
            );
        }
    }
    group
}

fn policy_is_followed_as_helm_controller_follows_it(helm: Helm, policy: &str) {
    for who in [Who::HelmController, Who::HelmCozy] {
        let group = upgrade_under(helm, policy, who);
        let applied = policy != "Skip";
        assert_eq!(has_size(&group), applied, "{who:?} under {policy}: the changed CRD applied");
        assert_eq!(
            crd_json(&format!("gadgets.{group}")).is_some(),
            applied,
            "{who:?} under {policy}: the subchart's CRD"
        );
    }
}

fn create(helm: Helm) {
    policy_is_followed_as_helm_controller_follows_it(helm, "Create");
}

fn create_replace(helm: Helm) {
    policy_is_followed_as_helm_controller_follows_it(helm, "CreateReplace");
}

fn skip(helm: Helm) {
    policy_is_followed_as_helm_controller_follows_it(helm, "Skip");
}

/// The apply method of the newest stored revision of release `app` in `ns` (`ssa`, `csa`, or "" when
/// none is recorded).
fn apply_method(ns: &str) -> String {
    let release = cozyhr_e2e::stored_release(ns, "app").expect("a stored release");
    release.get("apply_method").and_then(Value::as_str).unwrap_or_default().to_string()
}

/// A HelmRelease of ExternalArtifact `withcrds` with the given `install:` and `upgrade:` settings.
fn release(ns: &str, install: &str, upgrade: &str) -> String {
    format!(
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: app\n  namespace: {ns}\nspec:\n\
         \x20 interval: 1h\n  chartRef:\n    kind: ExternalArtifact\n    name: withcrds\n\
         \x20 install:\n    disableWait: true\n{install}  upgrade:\n    disableWait: true\n{upgrade}"
    )
}

fn client_side_release(helm: Helm) {
    let ns = namespace(&format!("csa-{helm:?}").to_lowercase());
    let group = format!("{ns}.cozyhr.test");
    let v1 = chart(&group, false);
    v1.publish("withcrds", &ns);
    // helm-controller installs it client-side, as releases made before helm-controller 1.5 were.
    apply(&release(&ns, "    serverSideApply: false\n", ""));
    wait_hr_ready(&ns, "app", READY_TIMEOUT);
    assert_eq!(apply_method(&ns), "csa", "helm-controller's install is client-side");

    let v2 = chart(&group, true);
    let applied = cozy(helm, v2.path(), &ns, &["apply", "app"]).ok();
    assert!(!applied.stderr.contains("forceConflicts"), "{}", applied.stderr);
    if helm == Helm::V4 {
        assert_eq!(apply_method(&ns), "csa", "Helm 4 applies it as helm-controller would: client-side");
    }
    assert!(
        !applied.stderr.contains("Helm 3 applies it client-side"),
        "no note where helm-controller applies client-side too"
    );

    // Handed back, helm-controller's next upgrade keeps the client-side method.
    v2.publish("withcrds", &ns);
    kubectl(["cozyhr", "resume", "app", "-n", &ns, "--timeout", "2m"]).ok();
    kubectl(["cozyhr", "reconcile", "app", "-n", &ns, "--force", "--timeout", "2m"]).ok();
    let hr = wait_hr_ready(&ns, "app", READY_TIMEOUT);
    let revision = hr.pointer("/status/history/0/version").and_then(Value::as_i64).unwrap_or_default();
    assert!(revision >= 3, "helm-controller upgraded after the hand-back: {hr}");
    assert_eq!(apply_method(&ns), "csa", "and kept the client-side method");
}

/// A server-side release applied with Helm 3: the note says what Helm 3 does instead.
fn helm3_says_what_it_does_instead(helm: Helm) {
    let ns = namespace(&format!("ssa-{helm:?}").to_lowercase());
    let group = format!("{ns}.cozyhr.test");
    chart(&group, false).publish("withcrds", &ns);
    apply(&release(&ns, "", ""));
    wait_hr_ready(&ns, "app", READY_TIMEOUT);
    assert_eq!(apply_method(&ns), "ssa", "helm-controller installs server-side");
    let applied = cozy(helm, chart(&group, true).path(), &ns, &["apply", "app"]).ok();
    let noted = applied.stderr.contains("Helm 3 applies it client-side");
    assert_eq!(noted, helm == Helm::V3, "{helm:?}: {}", applied.stderr);
    if helm == Helm::V4 {
        assert_eq!(apply_method(&ns), "ssa", "Helm 4 keeps it server-side");
    }
}

helm_tests! {
    crds_under_create => create;
    crds_under_create_replace => create_replace;
    crds_under_skip => skip;
    client_side_release_stays_client_side => client_side_release;
    server_side_release_under_helm3 => helm3_says_what_it_does_instead;
}
