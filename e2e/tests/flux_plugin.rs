//! `flux cozyhr` as a flux CLI plugin (Flux 2.9): the real flux CLI, built from its Go module by
//! scripts/tools.sh, installs cozyhr with `flux plugin install` from a catalog that scripts/release.sh
//! wrote (the Plugin manifest cozyhr.yaml, catalog.yaml and the flux archive, served over http on
//! loopback and found through FLUXCD_PLUGIN_CATALOG), into ~/.fluxcd/plugins of a throw-away HOME; then
//! `flux cozyhr ...` runs against a HelmRelease that the real helm-controller installed, and flux's own
//! completion (`flux __complete`) completes `flux cozyhr` through the plugin.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use cozyhr_e2e::{
    Chart, Run, ServedRelease, apply, command, eventually, flux_bin, get_json, helmrelease, namespace, run,
    wait_hr_ready,
};
use serde_json::Value;

const READY_TIMEOUT: Duration = Duration::from_secs(120);

/// A throw-away HOME for flux (its plugins in HOME/.fluxcd/plugins, flux's default) and the catalog URL.
struct Flux {
    home: tempfile::TempDir,
    catalog: String,
}

impl Flux {
    fn new(rel: &ServedRelease) -> Flux {
        let home = tempfile::Builder::new().prefix("cozyhr-flux-home-").tempdir().expect("tempdir");
        // The catalog's base URL is joined with the file name as it is: it ends with a slash.
        Flux { home, catalog: format!("{}/", rel.url) }
    }

    fn plugins(&self) -> PathBuf {
        self.home.path().join(".fluxcd/plugins")
    }

    fn command(&self) -> Command {
        let mut c = command(flux_bin());
        c.env("HOME", self.home.path()).env("FLUXCD_PLUGIN_CATALOG", &self.catalog).env_remove("FLUXCD_PLUGINS");
        c
    }

    fn run(&self, args: &[&str]) -> Run {
        let mut c = self.command();
        c.args(args);
        run(c)
    }

    /// What `flux __complete ARGS...` offers, after checking cobra's protocol (a `:N` directive line).
    fn completions(&self, args: &[&str]) -> (Vec<String>, String) {
        let mut all = vec!["__complete"];
        all.extend_from_slice(args);
        let out = self.run(&all).ok();
        let mut lines: Vec<String> = out.stdout.lines().map(str::to_string).collect();
        let directive = lines.pop().unwrap_or_default();
        assert!(directive.starts_with(':'), "flux __complete {args:?} ends without a directive:\n{}", out.stdout);
        (lines.into_iter().map(|l| l.split('\t').next().unwrap_or_default().to_string()).collect(), directive)
    }
}

fn demo_chart() -> Chart {
    Chart::new(
        "demo",
        "0.1.0",
        "message: hello\n",
        &[(
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  message: {{ .Values.message | quote }}\n",
        )],
    )
}

fn suspended(ns: &str, name: &str) -> bool {
    let hr = get_json("helmrelease", ns, name).unwrap_or_else(|| panic!("HelmRelease {ns}/{name} is missing"));
    hr.pointer("/spec/suspend").and_then(Value::as_bool).unwrap_or(false)
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
}

#[test]
fn flux_installs_cozyhr_from_the_release_catalog_and_runs_it() {
    let rel = ServedRelease::new(&[], &[]);
    let v = rel.version.clone();

    // What release.sh wrote for the catalog: the Plugin manifest names this platform's flux archive with
    // its sum, and the checksums file is the one the catalog's update job reads.
    let manifest = std::fs::read_to_string(rel.path("cozyhr.yaml")).expect("release.sh writes cozyhr.yaml");
    let archive = rel.archive("flux-cozyhr");
    let checksums = std::fs::read_to_string(rel.path(&format!("flux-cozyhr_{v}_checksums.txt")))
        .expect("release.sh writes flux-cozyhr_VERSION_checksums.txt");
    let sum = checksums
        .lines()
        .find_map(|l| l.strip_suffix(&format!("  {archive}")))
        .unwrap_or_else(|| panic!("no line for {archive} in the checksums file:\n{checksums}"));
    for want in [
        "apiVersion: cli.fluxcd.io/v1beta1".to_string(),
        "kind: Plugin".into(),
        "name: cozyhr".into(),
        "bin: flux-cozyhr".into(),
        format!("  - version: {v}"),
        format!("        url: {}/{archive}", rel.url),
        format!("        checksum: sha256:{sum}"),
    ] {
        assert!(manifest.lines().any(|l| l == want), "cozyhr.yaml lacks `{want}`:\n{manifest}");
    }
    let description = manifest.lines().find(|l| l.starts_with("description: ")).expect("a description");
    for word in ["status", "tree", "helm cozy", "diffs", "applies"] {
        assert!(description.contains(word), "the description names {word}: {description}");
    }

    let flux = Flux::new(&rel);
    // Not there before the install: flux has no such command.
    let before = flux.run(&["cozyhr", "version"]);
    assert_ne!(before.code, Some(0), "flux ran cozyhr before it was installed: {}", before.stdout);

    // The catalog lists it, and flux installs it from there, checking the archive's checksum.
    let search = flux.run(&["plugin", "search", "cozyhr"]).ok();
    assert!(
        search.stdout.lines().any(|l| l.split_whitespace().next() == Some("cozyhr") && l.contains("helm cozy")),
        "flux plugin search:\n{}",
        search.stdout
    );
    let install = flux.run(&["plugin", "install", "cozyhr"]).ok();
    let said = format!("{}{}", install.stdout, install.stderr);
    assert!(said.contains(&format!("installed cozyhr v{v}")), "flux plugin install said:\n{said}");
    let bin = flux.plugins().join("flux-cozyhr");
    assert!(is_executable(&bin), "flux plugin install did not write an executable {}", bin.display());
    let list = flux.run(&["plugin", "list"]).ok();
    assert!(
        list.stdout.lines().any(|l| l.split_whitespace().take(2).eq(["cozyhr", v.as_str()])),
        "flux plugin list:\n{}",
        list.stdout
    );
    let version = flux.run(&["cozyhr", "version", "--client"]).ok();
    assert_eq!(version.stdout.trim(), format!("flux-cozyhr {v}"));
    // It names itself as it was called, in help and in errors.
    let help = flux.run(&["cozyhr", "--help"]).ok();
    assert!(help.stdout.contains("flux cozyhr") && !help.stdout.contains("kubectl cozyhr"), "{}", help.stdout);
    let bad = flux.run(&["cozyhr", "get", "--bogus"]);
    assert_eq!(bad.code, Some(1), "{}", bad.stderr);
    assert!(bad.stderr.contains("flux cozyhr") && !bad.stderr.contains("kubectl cozyhr"), "{}", bad.stderr);

    // A HelmRelease that the real helm-controller installed.
    let ns = namespace("flux-plugin");
    demo_chart().publish("web", &ns);
    apply(&helmrelease(&ns, "web", "web", ""));
    wait_hr_ready(&ns, "web", READY_TIMEOUT);

    // The arguments reach the plugin as they were typed (-A, -n after the subcommand).
    let get = flux.run(&["cozyhr", "get", "-A"]).ok();
    let row = get
        .stdout
        .lines()
        .find(|l| l.split_whitespace().take(2).eq([ns.as_str(), "web"]))
        .unwrap_or_else(|| panic!("flux cozyhr get -A has no row for {ns}/web:\n{}", get.stdout));
    assert!(row.split_whitespace().any(|c| c == "True"), "{ns}/web is Ready in: {row}");
    assert!(get.stdout.starts_with("NAMESPACE"), "a table with NAMESPACE first:\n{}", get.stdout);

    let status = flux.run(&["cozyhr", "status", "web", "-n", &ns]).ok();
    assert!(status.stdout.contains("web") && status.stdout.contains("Ready"), "flux cozyhr status:\n{}", status.stdout);

    let tree = flux.run(&["cozyhr", "tree", "web", "-n", &ns, "-o", "json"]).ok();
    let graph = tree.json();
    assert!(graph.to_string().contains("\"web\""), "flux cozyhr tree -o json names web:\n{}", tree.stdout);

    flux.run(&["cozyhr", "suspend", "web", "-n", &ns]).ok();
    assert!(suspended(&ns, "web"), "flux cozyhr suspend left {ns}/web running");
    // What it suggests is what this user has: flux cozyhr (kubectl cozyhr may not be installed at all).
    let refused = flux.run(&["cozyhr", "reconcile", "web", "-n", &ns]).code(1);
    assert_eq!(
        refused.stderr.trim_end(),
        format!("error: helmrelease {ns}/web is suspended: resume it first (flux cozyhr resume web -n {ns})"),
        "flux cozyhr reconcile of a suspended release"
    );
    flux.run(&["cozyhr", "resume", "web", "-n", &ns, "--timeout", "2m"]).ok();
    assert!(!suspended(&ns, "web"), "flux cozyhr resume left {ns}/web suspended");
    wait_hr_ready(&ns, "web", READY_TIMEOUT);

    // flux's completion hands `flux cozyhr ...` to the plugin (cobra's __complete protocol).
    let (subs, directive) = flux.completions(&["cozyhr", ""]);
    for sub in ["get", "suspend", "resume", "reconcile", "status", "tree"] {
        assert!(subs.iter().any(|s| s == sub), "flux __complete cozyhr offers {subs:?}, not {sub}");
    }
    assert_eq!(directive, ":4", "no file completion after the subcommands");
    // With the words before it, from the cluster: the HelmRelease's name.
    let names = eventually("flux __complete to offer the HelmRelease", Duration::from_secs(10), || {
        let (names, _) = flux.completions(&["cozyhr", "status", "-n", &ns, ""]);
        if names.iter().any(|n| n == "web") { Ok(names) } else { Err(format!("{names:?}")) }
    });
    assert!(!names.iter().any(|n| n == "get"), "subcommands offered where a name is due: {names:?}");
    // And the shell script flux generates completes plugins through the same __complete.
    let bash = flux.run(&["completion", "bash"]).ok();
    assert!(bash.stdout.contains("__complete"), "flux completion bash does not call __complete");

    // Uninstall removes it again.
    flux.run(&["plugin", "uninstall", "cozyhr"]).ok();
    assert!(!bin.exists(), "flux plugin uninstall left {}", bin.display());
}

#[test]
fn flux_refuses_an_archive_whose_checksum_does_not_match() {
    let rel = ServedRelease::new(&[], &[]);
    // Same name, different bytes: the manifest's checksum no longer matches what is served.
    let mut bytes = std::fs::read(rel.path(&rel.archive("flux-cozyhr"))).expect("flux archive");
    bytes.push(0);
    std::fs::write(rel.path(&rel.archive("flux-cozyhr")), bytes).expect("tamper");
    let flux = Flux::new(&rel);
    let out = flux.run(&["plugin", "install", "cozyhr"]);
    assert_ne!(out.code, Some(0), "flux installed a tampered archive");
    assert!(
        format!("{}{}", out.stdout, out.stderr).contains("checksum verification failed"),
        "flux said:\n{}{}",
        out.stdout,
        out.stderr
    );
    assert!(!flux.plugins().join("flux-cozyhr").exists(), "a tampered plugin was written");
}
