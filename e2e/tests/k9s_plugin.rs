//! The repository's k9s plugin file (k9s/plugins-cozyhr.yaml): it passes k9s's own plugin JSON schema
//! (from the k9s Go module, checked with jsonschema by e2e/k9s_plugins.py in the venv scripts/tools.sh
//! makes), binds no key of k9s's upstream Flux plugin file, and every command in it, with k9s's
//! variables filled in for a HelmRelease the real helm-controller installed (substituted as k9s does),
//! runs against the local control plane and exits 0 doing what it says.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use cozyhr_e2e::{
    Chart, Run, ServedRelease, apply, command, env, get_json, helmrelease, k9s_dir, kubectl, namespace, python, run,
    wait_hr_ready,
};
use serde_json::Value;

const READY_TIMEOUT: Duration = Duration::from_secs(120);

fn plugin_file() -> PathBuf {
    env().repo.join("k9s/plugins-cozyhr.yaml")
}

fn checker(args: &[&std::ffi::OsStr]) -> Run {
    let mut c = Command::new(python());
    c.arg(env().repo.join("e2e/k9s_plugins.py")).args(args);
    run(c)
}

fn validate(file: &Path) -> Run {
    checker(&["validate".as_ref(), file.as_os_str(), k9s_dir().as_os_str()])
}

#[test]
fn the_plugin_file_passes_k9s_schema_and_keeps_off_the_flux_plugin_keys() {
    let out = validate(&plugin_file());
    assert_eq!(out.code, Some(0), "k9s/plugins-cozyhr.yaml does not pass k9s's schema:\n{}", out.stderr);

    // The check can fail: a misspelt key, a plugin without a command, and upstream's Shift-R.
    let text = std::fs::read_to_string(plugin_file()).expect("read the plugin file");
    let dir = tempfile::tempdir().expect("tempdir");
    for (what, broken, expect) in [
        ("a misspelt key", text.replacen("shortCut: Shift-I", "shortcut: Shift-I", 1), "shortCut"),
        ("no command", text.replacen("    command: bash\n", "", 1), "command"),
        ("upstream's reconcile key", text.replacen("shortCut: Shift-W", "shortCut: Shift-R", 1), "flux.yaml"),
    ] {
        assert_ne!(broken, text, "{what}: the edit did not apply");
        let f = dir.path().join("broken.yaml");
        std::fs::write(&f, &broken).expect("write");
        let out = validate(&f);
        assert_eq!(out.code, Some(1), "{what} passed the check:\n{}", out.stderr);
        assert!(out.stderr.contains(expect), "{what}: the check said:\n{}", out.stderr);
    }
}

/// A PATH directory with `helm` (the pinned Helm 4, with helm cozy installed from the release archive in
/// a Helm home of its own) and `less`, plus the Helm home's variables.
struct Tools {
    dir: tempfile::TempDir,
    home: tempfile::TempDir,
    _release: ServedRelease,
}

impl Tools {
    fn new() -> Tools {
        let e = env();
        let release = ServedRelease::new(&[], &[]);
        let dir = tempfile::Builder::new().prefix("cozyhr-k9s-path-").tempdir().expect("tempdir");
        std::os::unix::fs::symlink(&e.helm4, dir.path().join("helm")).expect("link helm");
        let home = tempfile::Builder::new().prefix("cozyhr-k9s-helm-").tempdir().expect("tempdir");
        let t = Tools { dir, home, _release: release };
        std::fs::create_dir_all(t.home.path().join("data/plugins")).expect("mkdir plugins");
        let url = format!("{}/{}", t._release.url, t._release.archive("helm-cozy"));
        // Unsigned (this release has no .prov): Helm 4 is told not to look for one.
        let mut c = t.helm_env(command(&e.helm4));
        c.args(["plugin", "install", &url, "--verify=false"]);
        run(c).ok();
        t
    }

    fn helm_env(&self, mut c: Command) -> Command {
        let h = self.home.path();
        c.env("HELM_PLUGINS", h.join("data/plugins"))
            .env("HELM_CONFIG_HOME", h.join("config"))
            .env("HELM_CACHE_HOME", h.join("cache"))
            .env("HELM_DATA_HOME", h.join("data"));
        c
    }

    /// A command with the test environment, `helm` first on PATH, and `extra` variables.
    fn command(&self, program: &str, extra: &[(&str, &Path)]) -> Command {
        let mut c = self.helm_env(command(program));
        let path = std::env::join_paths(
            std::iter::once(self.dir.path().to_path_buf())
                .chain(std::env::split_paths(c.get_envs().find(|(k, _)| *k == "PATH").and_then(|(_, v)| v).unwrap())),
        )
        .expect("PATH");
        c.env("PATH", path);
        for (k, v) in extra {
            c.env(k, v);
        }
        c
    }
}

/// k9s's variables for the selected HelmRelease (view/helpers.go defaultEnv and k8sEnv), with the
/// view's columns as COL-*.
fn k9s_env(ns: &str, name: &str) -> BTreeMap<&'static str, String> {
    let e = env();
    let current = kubectl(["config", "current-context"]).ok().stdout.trim().to_string();
    let config = kubectl(["config", "view", "--minify", "-o", "json"]).ok().json();
    let cluster = config.pointer("/contexts/0/context/cluster").and_then(Value::as_str).unwrap_or("n/a");
    let user = config.pointer("/contexts/0/context/user").and_then(Value::as_str).unwrap_or("n/a");
    BTreeMap::from([
        ("NAME", name.to_string()),
        ("NAMESPACE", ns.to_string()),
        ("CONTEXT", current),
        ("CLUSTER", cluster.to_string()),
        ("USER", user.to_string()),
        ("GROUPS", "system:masters".to_string()),
        ("KUBECONFIG", e.kubeconfig.to_string_lossy().into_owned()),
        ("RESOURCE_GROUP", "helm.toolkit.fluxcd.io".to_string()),
        ("RESOURCE_VERSION", "v2".to_string()),
        ("RESOURCE_NAME", "helmreleases".to_string()),
        ("FILTER", String::new()),
        ("COL-NAMESPACE", ns.to_string()),
        ("COL-NAME", name.to_string()),
        ("COL-READY", "True".to_string()),
    ])
}

fn suspended(ns: &str, name: &str) -> bool {
    let hr = get_json("helmrelease", ns, name).expect("the HelmRelease");
    hr.pointer("/spec/suspend").and_then(Value::as_bool).unwrap_or(false)
}

fn handled_at(ns: &str, name: &str) -> Option<String> {
    let hr = get_json("helmrelease", ns, name).expect("the HelmRelease");
    hr.pointer("/status/lastHandledReconcileAt").and_then(Value::as_str).map(str::to_string)
}

/// The plugins in the order they are run here (suspend before resume); every plugin of the file must
/// be in it, so a new one is not left untested.
const ORDER: [&str; 6] =
    ["cozyhr-status", "cozyhr-tree", "cozyhr-diff", "cozyhr-reconcile", "cozyhr-suspend", "cozyhr-resume"];

#[test]
fn every_command_of_the_plugin_file_runs_for_a_real_helmrelease() {
    let ns = namespace("k9s");
    let chart = Chart::new(
        "web",
        "0.1.0",
        "message: hello\n",
        &[(
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  message: {{ .Values.message | quote }}\n",
        )],
    );
    chart.publish("web", &ns);
    apply(&helmrelease(&ns, "web", "web", ""));
    wait_hr_ready(&ns, "web", READY_TIMEOUT);
    // A local edit, for the diff to show.
    chart.write("values.yaml", "message: goodbye from k9s\n");

    let tools = Tools::new();
    let vars = serde_json::to_string(&k9s_env(&ns, "web")).expect("json");
    let expanded = checker(&["expand".as_ref(), plugin_file().as_os_str(), vars.as_ref()]).ok().json();
    let plugins = expanded.as_object().expect("a map of plugins");
    let mut names: Vec<&str> = plugins.keys().map(String::as_str).collect();
    names.sort_unstable();
    let mut order = ORDER.to_vec();
    order.sort_unstable();
    assert_eq!(names, order, "the plugins of k9s/plugins-cozyhr.yaml are not the ones this test runs");

    // COZYHR_CHART_DIR names a directory of charts: the release's chart is COZYHR_CHART_DIR/NAME.
    let charts = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink(chart.path(), charts.path().join("web")).expect("link the chart");

    let before = handled_at(&ns, "web");
    for name in ORDER {
        let p = &plugins[name];
        let args: Vec<&str> =
            p["args"].as_array().expect("args").iter().map(|a| a.as_str().expect("a string")).collect();
        assert!(
            !args.iter().any(|a| a.contains("$NAME") || a.contains("$NAMESPACE")),
            "{name}: unsubstituted {args:?}"
        );
        let mut c = tools.command(p["command"].as_str().expect("command"), &[("COZYHR_CHART_DIR", charts.path())]);
        c.args(&args);
        let out = run(c).ok();
        match name {
            "cozyhr-status" => {
                assert!(out.stdout.contains("web") && out.stdout.contains("Ready"), "{name}:\n{}", out.stdout)
            }
            "cozyhr-tree" => assert!(out.stdout.contains("web"), "{name}:\n{}", out.stdout),
            "cozyhr-diff" => {
                assert!(out.stdout.contains("goodbye from k9s"), "{name} shows the local edit:\n{}", out.stdout)
            }
            "cozyhr-reconcile" => {
                assert_ne!(handled_at(&ns, "web"), before, "{name}: helm-controller handled no request")
            }
            "cozyhr-suspend" => assert!(suspended(&ns, "web"), "{name}: not suspended"),
            "cozyhr-resume" => {
                assert!(!suspended(&ns, "web"), "{name}: still suspended");
                wait_hr_ready(&ns, "web", READY_TIMEOUT);
            }
            other => unreachable!("{other}"),
        }
    }

    // Without COZYHR_CHART_DIR the diff says what to set, and fails.
    let p = &plugins["cozyhr-diff"];
    let args: Vec<&str> = p["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    let mut c = tools.command("bash", &[]);
    c.args(&args).env_remove("COZYHR_CHART_DIR");
    let out = run(c).code(1);
    assert!(out.stdout.contains("COZYHR_CHART_DIR is not set"), "{}", out.stdout);
}
