//! Cozystack's Makefiles unchanged (issue 36): the `cozyhr` command takes the Go cozyhr's command line
//! and does what this project's plugins do, against the real helm-controller.
//!
//! - Cozystack's own `hack/package.mk` (`../shared/vendor/cozystack-package.mk` or `$COZYHR_VENDOR`'s, included from there, not
//!   copied), included by a package Makefile for a chart helm-controller installed: `make show`, `make
//!   diff` (unchanged, then after an edit), `make apply`, `make resume`, `make delete`.
//! - flux-aio's pipe: `cozyhr show --plain | kubectl apply --server-side -f -` and `| kubectl diff -f -`.
//! - The migration scripts' style: `cozyhr -n NS -C DIR apply NAME --plain`, `--take-ownership` over
//!   objects another owner made, `cozyhr reconcile NAME -n NS --force`.
//! - `show -s`, `get -A -o wide`, `list`, and bad calls (one line, exit 1).

use std::path::{Path, PathBuf};
use std::time::Duration;

use cozyhr_e2e::{Chart, Run, apply, command, get_json, helm_revision, helmrelease, namespace, run};

const READY_TIMEOUT: Duration = Duration::from_secs(180);

/// A command whose PATH has, in front, the built binaries (`cozyhr` among them: scripts/build.sh links it
/// beside helm-cozy) and a `helm` (the pinned Helm 4), as a Cozystack developer's shell has.
fn on_path(program: &str) -> std::process::Command {
    static HELM_DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let helm_dir = HELM_DIR.get_or_init(|| {
        let dir = cozyhr_e2e::scratch().join(format!("helm-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let link = dir.join("helm");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&cozyhr_e2e::env().helm4, &link).expect("link helm");
        dir
    });
    let mut c = command(program);
    let path = c.get_envs().find(|(k, _)| *k == "PATH").and_then(|(_, v)| v.map(|v| v.to_owned())).unwrap_or_default();
    let joined = std::env::join_paths(
        [cozyhr_e2e::env().bin_dir.clone(), helm_dir.clone()].into_iter().chain(std::env::split_paths(&path)),
    )
    .expect("PATH");
    c.env("PATH", joined);
    c
}

/// `cozyhr ARGS...` from PATH, in `dir`.
fn cozyhr_in(dir: &Path, args: &[&str]) -> Run {
    let mut c = on_path("cozyhr");
    c.current_dir(dir).args(args);
    run(c)
}

fn cozyhr(args: &[&str]) -> Run {
    cozyhr_in(&std::env::temp_dir(), args)
}

/// Cozystack's `hack/package.mk`, as Cozystack ships it, from the shared vendor directory: `$COZYHR_VENDOR`
/// when set (as `scripts/tools.sh` reads it), else `../shared/vendor` beside the checkout.
fn package_mk() -> PathBuf {
    let vendor = match std::env::var_os("COZYHR_VENDOR").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => cozyhr_e2e::repo().parent().expect("the checkout has a parent").join("shared/vendor"),
    };
    let mk = vendor.join("cozystack-package.mk");
    assert!(
        mk.is_file(),
        "{} is missing: the shared vendor directory (../shared/vendor beside the checkout, or $COZYHR_VENDOR) holds Cozystack's hack/package.mk",
        mk.display()
    );
    mk
}

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\ndata:\n\
                  \x20 greeting: {{ .Values.greeting | quote }}\n";

/// A Cozystack-like package: the chart, a Makefile that sets NAME and NAMESPACE and includes package.mk,
/// published as an ExternalArtifact and installed by helm-controller.
fn package(tag: &str) -> (String, Chart) {
    let ns = namespace(tag);
    let chart = Chart::new("pkg", "0.1.0", "greeting: hello\n", &[("config.yaml", CM)]);
    chart.write("Makefile", &format!("NAME=app\nNAMESPACE={ns}\n\ninclude {}\n", package_mk().display()));
    // The Makefile is no part of the chart Helm packs (Cozystack's .helmignore says so too).
    chart.write(".helmignore", "Makefile\n");
    chart.publish("pkg", &ns);
    apply(&helmrelease(&ns, "app", "pkg", ""));
    cozyhr_e2e::wait_hr_ready(&ns, "app", READY_TIMEOUT);
    (ns, chart)
}

fn make(chart: &Chart, target: &str) -> Run {
    let mut c = on_path("make");
    c.arg("--no-print-directory").arg(target).current_dir(chart.path());
    run(c)
}

fn greeting(ns: &str) -> Option<String> {
    let cm = get_json("configmap", ns, "app-config")?;
    cm.pointer("/data/greeting").and_then(|v| v.as_str()).map(str::to_string)
}

fn suspended(ns: &str) -> bool {
    let hr = get_json("helmrelease", ns, "app").expect("the HelmRelease");
    hr.pointer("/spec/suspend").and_then(|v| v.as_bool()).unwrap_or(false)
}

#[test]
fn cozystacks_package_makefile_runs_unchanged() {
    let (ns, chart) = package("cz-make");

    let shown = make(&chart, "show").ok();
    assert!(shown.stdout.contains("name: app-config") && shown.stdout.contains("greeting: hello"), "{}", shown.stdout);

    let diff = make(&chart, "diff").ok();
    assert!(
        !diff.stdout.contains("greeting"),
        "nothing to change right after helm-controller's install:\n{}",
        diff.stdout
    );

    chart.write("values.yaml", "greeting: edited\n");
    let diff = make(&chart, "diff").ok();
    assert!(
        diff.stdout.contains("edited"),
        "make diff shows the edit (and exits 0, as Go cozyhr's diff does):\n{}",
        diff.stdout
    );

    let applied = make(&chart, "apply").ok();
    assert_eq!(greeting(&ns).as_deref(), Some("edited"), "make apply installs the edit");
    assert!(suspended(&ns), "make apply leaves the HelmRelease suspended");
    // It names itself as it was called: the hand-back it suggests is this command's own.
    assert!(
        applied.stderr.contains(&format!("hand it back to Flux with: cozyhr resume app -n {ns}")),
        "{}",
        applied.stderr
    );
    let applied = helm_revision(&ns, "app");

    let resumed = make(&chart, "resume").ok();
    assert!(!suspended(&ns), "make resume hands it back");
    assert_eq!(
        greeting(&ns).as_deref(),
        Some("hello"),
        "helm-controller installed the source's chart:\n{}",
        resumed.stderr
    );
    assert_eq!(helm_revision(&ns, "app"), applied + 1, "once");
    assert!(resumed.stderr.contains("replacing the local chart"), "{}", resumed.stderr);

    let deleted = make(&chart, "delete").ok();
    assert!(deleted.stderr.contains(&format!("to hand it back: cozyhr resume app -n {ns}")), "{}", deleted.stderr);
    assert!(greeting(&ns).is_none(), "make delete uninstalls the release");
    assert!(suspended(&ns), "and leaves the HelmRelease suspended, so Flux does not reinstall it");
}

#[test]
fn flux_aio_pipes_show_plain_into_kubectl() {
    let ns = namespace("cz-aio");
    let chart = Chart::new("aio", "0.1.0", "greeting: hello\n", &[("config.yaml", CM)]);
    // No HelmRelease: Flux is not there yet when flux-aio's Makefile runs.
    let shown = cozyhr_in(chart.path(), &["show", "--namespace", &ns, "app", "--plain"]).ok();
    assert!(
        shown.stdout.contains("kind: ConfigMap") && !shown.stdout.contains("helm.toolkit.fluxcd.io/name"),
        "only the chart's manifests, no Flux labels: {}",
        shown.stdout
    );
    cozyhr_e2e::kubectl_stdin(&["apply", "--server-side", "-n", &ns, "-f", "-"], &shown.stdout).ok();
    assert_eq!(greeting(&ns).as_deref(), Some("hello"), "kubectl created the objects");

    chart.write("values.yaml", "greeting: changed\n");
    let shown = cozyhr_in(chart.path(), &["show", "--namespace", &ns, "app", "--plain"]).ok();
    let diff = cozyhr_e2e::kubectl_stdin(&["diff", "-n", &ns, "-f", "-"], &shown.stdout);
    assert_eq!(diff.code, Some(1), "kubectl diff finds the edit:\n{}\n{}", diff.stdout, diff.stderr);
    assert!(diff.stdout.contains("changed"), "{}", diff.stdout);
}

#[test]
fn migration_scripts_apply_plain_take_ownership_and_force_reconcile() {
    let ns = namespace("cz-migrate");
    let chart = Chart::new("mig", "0.1.0", "greeting: hello\n", &[("config.yaml", CM)]);
    let dir = chart.path().to_string_lossy().into_owned();

    // apply --plain: the chart alone, with Helm, no HelmRelease needed.
    cozyhr(&["-n", &ns, "-C", &dir, "apply", "plain", "--plain"]).ok();
    let cm = get_json("configmap", &ns, "plain-config").expect("apply --plain installed the chart");
    assert_eq!(cm.pointer("/metadata/labels/app.kubernetes.io~1managed-by").and_then(|v| v.as_str()), Some("Helm"));

    // --take-ownership over an object another owner made (here: kubectl, with no Helm metadata).
    apply(&format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: taken-config\n  namespace: {ns}\ndata:\n  greeting: old\n"
    ));
    let refused = cozyhr(&["-n", &ns, "-C", &dir, "apply", "taken", "--plain"]);
    assert_eq!(refused.code, Some(1), "without --take-ownership Helm refuses the object:\n{}", refused.stderr);
    cozyhr(&["-n", &ns, "-C", &dir, "apply", "taken", "--plain", "--take-ownership"]).ok();
    let cm = get_json("configmap", &ns, "taken-config").expect("taken-config");
    assert_eq!(cm.pointer("/data/greeting").and_then(|v| v.as_str()), Some("hello"));
    assert_eq!(
        cm.pointer("/metadata/annotations/meta.helm.sh~1release-name").and_then(|v| v.as_str()),
        Some("taken"),
        "Helm owns it now: {cm}"
    );

    // reconcile --force: a one-off upgrade by helm-controller.
    chart.publish("mig", &ns);
    apply(&helmrelease(&ns, "app", "mig", ""));
    cozyhr_e2e::wait_hr_ready(&ns, "app", READY_TIMEOUT);
    let before = helm_revision(&ns, "app");
    cozyhr(&["reconcile", "app", "-n", &ns, "--force"]).ok();
    assert_eq!(helm_revision(&ns, "app"), before + 1, "reconcile --force ran an upgrade");
}

#[test]
fn show_only_get_and_list_as_go_cozyhr() {
    let (ns, chart) = package("cz-get");
    chart.write(
        "templates/other.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-other\n",
    );
    let dir = chart.path().to_string_lossy().into_owned();
    let only = cozyhr(&["-C", &dir, "show", "app", "-n", &ns, "-s", "templates/config.yaml"]).ok();
    assert!(only.stdout.contains("app-config") && !only.stdout.contains("app-other"), "{}", only.stdout);

    let wide = cozyhr(&["get", "-A", "-o", "wide"]).ok();
    let header = wide.stdout.lines().next().unwrap_or_default();
    assert!(header.starts_with("NAMESPACE") && header.contains("NAME") && header.contains("READY"), "{}", wide.stdout);
    assert!(wide.stdout.lines().any(|l| l.starts_with(&ns) && l.contains("app")), "{}", wide.stdout);

    let listed = cozyhr(&["list", "-n", &ns]).ok();
    assert!(listed.stdout.lines().nth(1).is_some_and(|l| l.starts_with("app ")), "{}", listed.stdout);
    let named = cozyhr(&["-n", &ns, "get", "app", "-o", "name"]).ok();
    assert_eq!(named.stdout.trim(), "helmrelease.helm.toolkit.fluxcd.io/app");
}

/// One line and exit 1, as the plugins answer bad calls; `what` is in it.
#[track_caller]
fn one_line(out: Run, what: &str) {
    let out = out.code(1);
    let lines: Vec<&str> = out.stderr.trim().lines().collect();
    assert_eq!(lines.len(), 1, "one line:\n{}", out.stderr);
    assert!(lines[0].starts_with("error: ") && lines[0].contains(what), "{what:?} in: {}", lines[0]);
}

#[test]
fn bad_calls_are_one_line() {
    let ns = namespace("cz-bad");
    let empty = tempfile::tempdir().expect("tempdir");
    let chart = Chart::new("bad", "0.1.0", "greeting: hello\n", &[("config.yaml", CM)]);
    let dir = chart.path().to_string_lossy().into_owned();
    one_line(cozyhr(&["frobnicate"]), "frobnicate");
    one_line(cozyhr(&["show", "app", "--no-such-flag"]), "--no-such-flag");
    // From a directory that holds no chart, the chart is the HelmRelease's source's: the HelmRelease is
    // read first, and is not there.
    one_line(cozyhr_in(empty.path(), &["show", "app", "-n", &ns]), "\"app\" not found");
    one_line(cozyhr_in(empty.path(), &["show", "app", "-n", &ns, "--plain"]), "needs a chart directory");
    one_line(cozyhr(&["-C", &dir, "diff", "missing", "-n", &ns]), "\"missing\" not found");
    one_line(cozyhr(&["resume", "missing", "-n", &ns]), "\"missing\" not found");
}
