//! Installation as users do it: the release archives made by `scripts/release.sh`, installed with the real
//! krew into a throw-away KREW_ROOT and with the real Helm 3 and Helm 4 (`helm plugin install` of the
//! archive over http, of its plugin directory extracted by hand, and of the source checkout), used
//! through kubectl's and Helm's plugin dispatch, and removed again. Plus the shell completion both
//! binaries generate and the Makefile snippet. Signed installs (a file, over http, from the OCI
//! registry) are tests/signed_helm_plugin.rs.
//!
//! Each test packages its own release (release.sh with COZYHR_PREBUILT = the binaries under test, into a
//! temporary DIST), so nothing is written into the repository.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

use cozyhr_e2e::{Helm, HelmHome, Run, command, env, run};

/// The version the binaries under test were built with (the workspace version).
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// This machine's platform in krew's and Go's words.
fn platform() -> (&'static str, &'static str) {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    };
    (os, arch)
}

/// A release packaged by scripts/release.sh into a temporary directory.
struct Release {
    dir: tempfile::TempDir,
}

impl Release {
    fn new() -> Release {
        let dir = tempfile::Builder::new().prefix("cozyhr-dist-").tempdir().expect("tempdir");
        let r = Release { dir };
        r.package();
        r
    }

    /// Runs release.sh for this machine's platform only, packaging the binaries under test.
    fn package(&self) -> Run {
        let e = env();
        let (os, arch) = platform();
        let mut c = Command::new(e.repo.join("scripts/release.sh"));
        c.arg(VERSION)
            .env("DIST", self.dir.path())
            .env("KREW_MANIFEST", self.manifest())
            .env("TARGETS", format!("{os}/{arch}"))
            .env("COZYHR_PREBUILT", &e.bin_dir)
            .stdin(Stdio::null());
        run(c).ok()
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn manifest(&self) -> PathBuf {
        self.dir.path().join("krew-manifest.yaml")
    }

    fn krew_archive(&self) -> PathBuf {
        let (os, arch) = platform();
        self.dir.path().join(format!("kubectl-cozyhr_{VERSION}_{os}_{arch}.tar.gz"))
    }

    fn helm_archive_name() -> String {
        let (os, arch) = platform();
        format!("helm-cozy-{VERSION}-{os}-{arch}.tar.gz")
    }

    fn sums(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("SHA256SUMS")).expect("release.sh writes SHA256SUMS")
    }
}

fn sh(program: &str, args: &[&str]) -> Run {
    let mut c = Command::new(program);
    c.args(args).stdin(Stdio::null());
    run(c)
}

/// `tar -tvzf`: (mode string, path) per entry, in archive order.
fn tar_entries(archive: &Path) -> Vec<(String, String)> {
    let out = sh("tar", &["-tvzf", &archive.to_string_lossy()]).ok();
    out.stdout
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[0].to_string(), f[f.len() - 1].to_string())
        })
        .collect()
}

/// A file of an archive, as text.
fn tar_file(archive: &Path, member: &str) -> String {
    sh("tar", &["-xzOf", &archive.to_string_lossy(), member]).ok().stdout
}

// ---------------------------------------------------------------------------------------------------
// Archives and manifest

#[test]
fn release_archives_are_laid_out_for_krew_and_helm_and_are_reproducible() {
    let rel = Release::new();
    let (os, arch) = platform();

    // SHA256SUMS covers the four archives (krew, Helm, the Helm plugin for every platform, flux) and is
    // right.
    let sums = rel.sums();
    let mut c = Command::new("sha256sum");
    c.arg("-c").arg("SHA256SUMS").current_dir(rel.path());
    let check = run(c).ok();
    assert_eq!(check.stdout.matches(": OK").count(), 4, "SHA256SUMS:\n{sums}\n{}", check.stdout);

    // krew archive: flat, executable bin at the root, the license beside it.
    let krew = tar_entries(&rel.krew_archive());
    let names: Vec<&str> = krew.iter().map(|(_, n)| n.as_str()).collect();
    assert!(names.contains(&"LICENSE") && names.contains(&"kubectl-cozyhr"), "krew archive: {krew:?}");
    let mode = &krew.iter().find(|(_, n)| n == "kubectl-cozyhr").expect("bin").0;
    assert_eq!(mode, "-rwxr-xr-x", "kubectl-cozyhr mode in {krew:?}");

    // Helm archive: the plugin in helm-cozy/ (the directory Helm 4 installs a local file from: the file's
    // name minus -VERSION-…), its directory entry first (Helm 3 creates a file's parent only from one);
    // at the root what the installers that take the archive's root read (plugin.yaml, completion.yaml)
    // and the cozyhr users link. Nothing else, no "./" entry.
    let helm_archive = rel.path().join(Release::helm_archive_name());
    let helm = tar_entries(&helm_archive);
    let want: &[(&str, &str)] = &[
        ("drwxr-xr-x", "helm-cozy/"),
        ("-rw-r--r--", "helm-cozy/LICENSE"),
        ("-rw-r--r--", "helm-cozy/completion.yaml"),
        ("-rwxr-xr-x", "helm-cozy/cozyhr"),
        ("-rwxr-xr-x", "helm-cozy/helm-cozy"),
        ("-rwxr-xr-x", "helm-cozy/plugin-hook.sh"),
        ("-rw-r--r--", "helm-cozy/plugin.yaml"),
        ("-rw-r--r--", "plugin.yaml"),
        ("-rw-r--r--", "completion.yaml"),
        ("-rwxr-xr-x", "cozyhr"),
    ];
    let got: Vec<(&str, &str)> = helm.iter().map(|(m, n)| (m.as_str(), n.as_str())).collect();
    assert_eq!(got, want, "the Helm archive's entries");
    // The binary is there once; the root plugin.yaml runs it where it is.
    let inner = tar_file(&helm_archive, "helm-cozy/plugin.yaml");
    let outer = tar_file(&helm_archive, "plugin.yaml");
    for (yaml, dir) in [(&inner, "$HELM_PLUGIN_DIR"), (&outer, "$HELM_PLUGIN_DIR/helm-cozy")] {
        assert!(yaml.lines().any(|l| l == format!("version: {VERSION}")), "plugin.yaml:\n{yaml}");
        assert!(yaml.lines().any(|l| l == "name: cozy"), "plugin.yaml:\n{yaml}");
        assert!(
            !yaml.lines().any(|l| l.starts_with("apiVersion:")),
            "a v1 plugin.yaml does not load on Helm 3:\n{yaml}"
        );
        assert!(yaml.contains(&format!("  - command: {dir}/helm-cozy\n")), "plugin.yaml:\n{yaml}");
        assert_eq!(yaml.matches(&format!(": {dir}/plugin-hook.sh\n")).count(), 2, "hooks:\n{yaml}");
    }
    assert_eq!(
        tar_file(&helm_archive, "completion.yaml"),
        tar_file(&helm_archive, "helm-cozy/completion.yaml"),
        "one completion.yaml"
    );

    // The Helm plugin for every platform (here, this one): Helm 4's package layout, each platform's
    // binary as OS-ARCH/helm-cozy and a platformCommand for it.
    let every = rel.path().join(format!("helm-cozy-{VERSION}.tgz"));
    let entries = tar_entries(&every);
    let got: Vec<(&str, &str)> = entries.iter().map(|(m, n)| (m.as_str(), n.as_str())).collect();
    let os_arch = format!("helm-cozy/{os}-{arch}/");
    let binary = format!("helm-cozy/{os}-{arch}/helm-cozy");
    let mut want: Vec<(&str, &str)> = vec![
        ("drwxr-xr-x", "helm-cozy/"),
        ("-rw-r--r--", "helm-cozy/LICENSE"),
        ("-rw-r--r--", "helm-cozy/completion.yaml"),
        ("-rwxr-xr-x", "helm-cozy/cozyhr"),
        ("drwxr-xr-x", os_arch.as_str()),
        ("-rwxr-xr-x", binary.as_str()),
        ("-rwxr-xr-x", "helm-cozy/plugin-hook.sh"),
        ("-rw-r--r--", "helm-cozy/plugin.yaml"),
    ];
    want.sort_by_key(|(_, n)| *n);
    assert_eq!(got, want, "the every-platform archive's entries");
    let yaml = tar_file(&every, "helm-cozy/plugin.yaml");
    assert!(
        yaml.contains(&format!(
            "  - os: {os}\n    arch: {arch}\n    command: $HELM_PLUGIN_DIR/{os}-{arch}/helm-cozy\n"
        )),
        "plugin.yaml:\n{yaml}"
    );
    assert_eq!(yaml.matches(": $HELM_PLUGIN_DIR/plugin-hook.sh\n").count(), 2, "hooks:\n{yaml}");

    // `cozyhr` runs helm-cozy with the Go cozyhr's command line, from wherever it is linked, in each
    // layout: the plugin directory, the platform archive's root, the every-platform archive.
    for (archive, launcher) in
        [(&helm_archive, "helm-cozy/cozyhr"), (&helm_archive, "cozyhr"), (&every, "helm-cozy/cozyhr")]
    {
        let unpacked = tempfile::tempdir().expect("tempdir");
        let mut x = Command::new("tar");
        x.arg("-xzf").arg(archive).arg("-C").arg(unpacked.path());
        run(x).ok();
        let linked = tempfile::tempdir().expect("tempdir");
        std::os::unix::fs::symlink(unpacked.path().join(launcher), linked.path().join("cozyhr")).expect("link cozyhr");
        let mut v = Command::new(linked.path().join("cozyhr"));
        v.args(["version", "--client"]);
        assert_eq!(
            run(v).ok().stdout.lines().next().unwrap_or_default(),
            format!("cozyhr {VERSION}"),
            "the cozyhr of {} at {launcher}",
            archive.display()
        );
    }

    // The krew manifest names this archive with its sum, and passes krew's rules that a line can check.
    let manifest = std::fs::read_to_string(rel.manifest()).expect("manifest");
    let krew_name = rel.krew_archive().file_name().unwrap().to_string_lossy().into_owned();
    let sum = sums
        .lines()
        .find(|l| l.ends_with(&krew_name))
        .and_then(|l| l.split_whitespace().next())
        .expect("sum of the krew archive");
    assert!(sum.len() == 64 && sum.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()), "{sum}");
    for want in [
        "  name: cozyhr".to_string(),
        format!("  version: v{VERSION}"),
        format!("        os: {os}"),
        format!("        arch: {arch}"),
        format!("    sha256: {sum}"),
        "    bin: kubectl-cozyhr".to_string(),
    ] {
        assert!(manifest.lines().any(|l| l == want), "manifest lacks `{want}`:\n{manifest}");
    }
    assert!(
        manifest.lines().any(|l| l.starts_with("    uri: https://") && l.ends_with(&format!("/{krew_name}"))),
        "uri:\n{manifest}"
    );
    let short = manifest.lines().find(|l| l.starts_with("  shortDescription: ")).expect("shortDescription");
    assert!(short.len() > "  shortDescription: ".len() + 10, "{short}");
    assert!(manifest.contains("kubectl_complete-cozyhr"), "caveats explain the completion shim:\n{manifest}");

    // The committed manifest is release.sh's output (same text up to the platform list, which depends on
    // the platforms the releasing machine could build), not a hand-edited copy.
    let committed = std::fs::read_to_string(env().repo.join("krew-manifest.yaml")).expect("krew-manifest.yaml");
    let head = |m: &str| m.split("\n  platforms:\n").next().unwrap().to_string();
    assert_eq!(head(&committed), head(&manifest), "krew-manifest.yaml is stale: run scripts/release.sh {VERSION}");
    assert!(committed.contains(&format!("kubectl-cozyhr_{VERSION}_linux_amd64.tar.gz")), "{committed}");

    // Reproducible: packaging again gives the same bytes.
    rel.package();
    assert_eq!(rel.sums(), sums, "a second release.sh run changed the archives");
}

// ---------------------------------------------------------------------------------------------------
// krew

/// A throw-away krew installation: KREW_ROOT with krew itself as a kubectl plugin, and a PATH with only
/// $KREW_ROOT/bin, the pinned kubectl and the system directories (not the binaries under test, so that
/// kubectl can only find kubectl-cozyhr where krew put it).
struct Krew {
    root: tempfile::TempDir,
    path_dir: tempfile::TempDir,
}

impl Krew {
    fn new() -> Krew {
        let e = env();
        let root = tempfile::Builder::new().prefix("cozyhr-krew-").tempdir().expect("tempdir");
        // krew and index commands need an index directory; `install --manifest` never reads it.
        std::fs::create_dir_all(root.path().join("index/default/.git")).expect("mkdir index");
        // krew itself goes next to kubectl, not into $KREW_ROOT/bin: krew 0.4 takes a bin/ with plugins
        // but no receipts for an outdated krew home and refuses to run.
        let path_dir = tempfile::Builder::new().prefix("cozyhr-krew-path-").tempdir().expect("tempdir");
        std::os::unix::fs::symlink(&e.kubectl, path_dir.path().join("kubectl")).expect("link kubectl");
        std::fs::copy(&e.krew, path_dir.path().join("kubectl-krew")).expect("copy krew");
        Krew { root, path_dir }
    }

    fn bin(&self) -> PathBuf {
        self.root.path().join("bin")
    }

    fn kubectl<I: IntoIterator<Item = S>, S: AsRef<std::ffi::OsStr>>(&self, args: I) -> Run {
        let e = env();
        let path = std::env::join_paths([
            self.bin(),
            self.path_dir.path().to_path_buf(),
            "/usr/local/bin".into(),
            "/usr/bin".into(),
            "/bin".into(),
        ])
        .expect("PATH");
        let mut c = Command::new(&e.kubectl);
        c.args(args)
            .env("PATH", path)
            .env("KREW_ROOT", self.root.path())
            .env("KREW_NO_UPGRADE_CHECK", "1")
            .env("KUBECONFIG", &e.kubeconfig)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null());
        run(c)
    }

    fn install(&self, rel: &Release) -> Run {
        self.kubectl([
            "krew".to_string(),
            "install".into(),
            format!("--manifest={}", rel.manifest().display()),
            format!("--archive={}", rel.krew_archive().display()),
        ])
    }
}

#[test]
fn krew_installs_the_release_archive_and_uninstalls_it() {
    let rel = Release::new();
    let krew = Krew::new();

    // Not there before: kubectl cannot dispatch to it.
    let before = krew.kubectl(["cozyhr", "version"]);
    assert_ne!(before.code, Some(0), "kubectl-cozyhr was found before krew installed it: {}", before.stdout);

    let install = krew.install(&rel).ok();
    let said = format!("{}{}", install.stdout, install.stderr);
    assert!(said.contains("Installed plugin: cozyhr"), "krew install said:\n{said}");
    assert!(said.contains("kubectl_complete-cozyhr"), "krew shows the completion caveat:\n{said}");

    let link = krew.bin().join("kubectl-cozyhr");
    assert!(link.exists(), "krew linked {}", link.display());
    let version = krew.kubectl(["cozyhr", "version"]).ok();
    assert_eq!(version.stdout.lines().next().unwrap_or_default(), format!("kubectl-cozyhr {VERSION}"));

    let list = krew.kubectl(["plugin", "list"]);
    assert!(
        list.stdout.lines().any(|l| l.trim() == link.to_string_lossy()),
        "kubectl plugin list does not show the krew-installed plugin:\n{}\n{}",
        list.stdout,
        list.stderr
    );
    let krew_list = krew.kubectl(["krew", "list"]).ok();
    assert!(
        krew_list.stdout.lines().any(|l| matches!(l.split_whitespace().next(), Some("cozyhr" | "detached/cozyhr"))),
        "{}",
        krew_list.stdout
    );

    krew.kubectl(["krew", "uninstall", "cozyhr"]).ok();
    assert!(!link.exists(), "krew uninstall left {}", link.display());
    assert!(!krew.root.path().join("store/cozyhr").exists(), "krew uninstall left the store");
    let after = krew.kubectl(["cozyhr", "version"]);
    assert_ne!(after.code, Some(0), "kubectl still dispatches to cozyhr after uninstall: {}", after.stdout);
}

#[test]
fn krew_refuses_an_archive_whose_sha256_does_not_match() {
    let rel = Release::new();
    let krew = Krew::new();
    // Same file name, different bytes.
    let mut f = std::fs::OpenOptions::new().append(true).open(rel.krew_archive()).expect("open archive");
    f.write_all(b"\0").expect("append");
    drop(f);
    let out = krew.install(&rel);
    assert_ne!(out.code, Some(0), "krew installed a tampered archive");
    assert!(out.stderr.to_lowercase().contains("checksum"), "krew said:\n{}", out.stderr);
    assert!(!krew.bin().join("kubectl-cozyhr").exists());
}

#[test]
fn kubectl_completes_cozyhr_through_the_shim_placed_as_the_caveat_says() {
    let rel = Release::new();
    let krew = Krew::new();
    krew.install(&rel).ok();
    let shim = krew.root.path().join(format!("store/cozyhr/v{VERSION}/kubectl_complete-cozyhr"));
    assert!(
        shim.is_file(),
        "the krew archive has no kubectl_complete-cozyhr ({} missing): add the shim at the repository root",
        shim.display()
    );
    std::os::unix::fs::symlink(&shim, krew.bin().join("kubectl_complete-cozyhr")).expect("link shim");
    let out = krew.kubectl(["__complete", "cozyhr", ""]).ok();
    let offered: Vec<&str> = out.stdout.lines().map(|l| l.split('\t').next().unwrap_or(l)).collect();
    for sub in ["get", "suspend", "resume", "reconcile", "status", "tree"] {
        assert!(offered.contains(&sub), "kubectl __complete cozyhr offers {offered:?}, not {sub}");
    }
}

// ---------------------------------------------------------------------------------------------------
// Helm

/// A throw-away Helm home whose HELM_PLUGINS is $HELM_DATA_HOME/plugins, Helm's default: the http
/// installer (Helm 3 and 4) and the local-directory installer (Helm 4) write to $HELM_DATA_HOME/plugins
/// whatever HELM_PLUGINS says, so a HELM_PLUGINS elsewhere would not see what they installed.
struct Home {
    inner: HelmHome,
}

impl Home {
    fn new(helm: Helm) -> Home {
        let h = Home { inner: HelmHome::new(helm) };
        std::fs::create_dir_all(h.plugins()).expect("mkdir plugins");
        h
    }

    fn helm(&self) -> Helm {
        self.inner.helm
    }

    fn plugins(&self) -> PathBuf {
        self.inner.dir.path().join("data/plugins")
    }

    fn command(&self) -> Command {
        let mut c = self.inner.command();
        c.env("HELM_PLUGINS", self.plugins());
        c
    }

    fn run<I: IntoIterator<Item = S>, S: AsRef<std::ffi::OsStr>>(&self, args: I) -> Run {
        let mut c = self.command();
        c.args(args);
        run(c)
    }
}

/// `helm plugin install URL` as each Helm needs it: Helm 4 verifies by default and the archive is not
/// signed (there is no .prov), so it takes --verify=false; Helm 3 has no such flag.
fn helm_install_url(home: &Home, url: &str) -> Run {
    match home.helm() {
        Helm::V3 => home.run(["plugin", "install", url]),
        Helm::V4 => home.run(["plugin", "install", url, "--verify=false"]),
    }
}

fn plugin_listed(home: &Home) -> Option<String> {
    let list = home.run(["plugin", "list"]).ok();
    list.stdout.lines().find(|l| l.split_whitespace().next() == Some("cozy")).map(str::to_string)
}

/// What `helm __complete ARGS...` offers (completion.yaml in the installed plugin).
fn helm_completions(home: &Home, args: &[&str]) -> Vec<String> {
    let mut all = vec!["__complete"];
    all.extend_from_slice(args);
    let out = home.run(all).ok();
    out.stdout
        .lines()
        .filter(|l| !l.starts_with(':') && !l.starts_with("Completion ended"))
        .map(|l| l.split('\t').next().unwrap_or(l).to_string())
        .collect()
}

fn helm_installs_the_release_archive(helm: Helm) {
    let rel = Release::new();
    let base = cozyhr_e2e::serve(rel.path());
    let url = format!("{base}/{}", Release::helm_archive_name());
    let home = Home::new(helm);

    if helm == Helm::V4 {
        // Why --verify=false: Helm 4 verifies plugin archives by default against a .prov signature, and
        // our release archives are not signed.
        let verified = home.run(["plugin", "install", url.as_str()]);
        assert_ne!(verified.code, Some(0), "Helm 4 installed an unsigned archive with verification on");
        assert!(verified.stderr.contains("no provenance file"), "Helm 4 said:\n{}", verified.stderr);
        assert_eq!(plugin_listed(&home), None, "a refused install left the plugin behind");
    }

    let install = helm_install_url(&home, &url).ok();
    assert!(install.stdout.contains("Installed plugin: cozy"), "{}\n{}", install.stdout, install.stderr);
    assert!(install.stderr.contains(&format!("helm-cozy: ready: helm-cozy {VERSION}")), "hook:\n{}", install.stderr);
    // The directory is named after the archive minus -VERSION-…: the same for every version. From a URL
    // both Helms install the archive's root, whose plugin.yaml runs helm-cozy/helm-cozy.
    assert!(home.plugins().join("helm-cozy/plugin.yaml").is_file(), "plugin not in plugins/helm-cozy");
    assert!(home.plugins().join("helm-cozy/helm-cozy/helm-cozy").is_file(), "the archive's root is installed");
    let listed = plugin_listed(&home).expect("helm plugin list shows cozy");
    assert!(listed.split_whitespace().nth(1) == Some(VERSION), "helm plugin list: {listed}");

    let version = home.run(["cozy", "version"]).ok();
    assert_eq!(version.stdout.lines().next().unwrap_or_default(), format!("helm-cozy {VERSION}"));
    // The README's one line for `cozyhr`: a link to the installed plugin's cozyhr.
    let bin = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink(home.plugins().join("helm-cozy/cozyhr"), bin.path().join("cozyhr")).expect("link");
    let mut c = Command::new(bin.path().join("cozyhr"));
    c.arg("version");
    assert_eq!(
        run(c).ok().stdout.lines().next().unwrap_or_default(),
        format!("cozyhr {VERSION}"),
        "the installed plugin's cozyhr"
    );

    let subs = helm_completions(&home, &["cozy", ""]);
    for sub in ["show", "diff", "apply", "delete", "values", "completion", "version"] {
        assert!(subs.iter().any(|s| s == sub), "helm __complete cozy offers {subs:?}, not {sub}");
    }
    let flags = helm_completions(&home, &["cozy", "diff", "--"]);
    for flag in ["--detailed-exitcode", "--show-secrets", "--against", "--values", "--chdir"] {
        assert!(flags.iter().any(|f| f == flag), "helm __complete cozy diff -- offers {flags:?}, not {flag}");
    }

    home.run(["plugin", "uninstall", "cozy"]).ok();
    assert_eq!(plugin_listed(&home), None, "cozy still listed after uninstall");
    assert!(!home.plugins().join("helm-cozy").exists(), "uninstall left plugins/helm-cozy");
    let gone = home.run(["cozy", "version"]);
    assert_ne!(gone.code, Some(0), "helm cozy still runs after uninstall: {}", gone.stdout);

    // Installing the same URL again works. Helm 3 extracts into a cache directory named after the URL and
    // keeps it, and a second extraction there fails on the archive's helm-cozy/ directory entry ("mkdir
    // ...: file exists"): the install hook removed that extraction.
    let kept: Vec<String> = std::fs::read_dir(home.inner.dir.path().join("cache/plugins"))
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    assert!(
        !kept.iter().any(|k| k.ends_with(&Release::helm_archive_name())),
        "Helm's extraction of the archive is still in its cache: {kept:?}"
    );
    helm_install_url(&home, &url).ok();
    assert_eq!(
        home.run(["cozy", "version"]).ok().stdout.lines().next().unwrap_or_default(),
        format!("helm-cozy {VERSION}")
    );
    // And a second install over it is refused instead of making two plugins called cozy.
    let again = helm_install_url(&home, &url);
    assert_ne!(again.code, Some(0), "a second install succeeded");
    assert!(again.stderr.contains("plugin already exists"), "{}", again.stderr);
    assert_eq!(
        home.run(["cozy", "version"]).ok().stdout.lines().next().unwrap_or_default(),
        format!("helm-cozy {VERSION}")
    );
}

#[test]
fn helm3_installs_the_release_archive_and_uninstalls_it() {
    helm_installs_the_release_archive(Helm::V3);
}

#[test]
fn helm4_installs_the_release_archive_and_uninstalls_it() {
    helm_installs_the_release_archive(Helm::V4);
}

/// Repacks the Helm archive with its `helm-cozy/helm-cozy` binary replaced (None: removed), under the
/// same name and in the same order.
fn broken_archive(rel: &Release, binary: Option<&[u8]>) -> tempfile::TempDir {
    let stage = tempfile::Builder::new().prefix("cozyhr-broken-").tempdir().expect("tempdir");
    let out = tempfile::Builder::new().prefix("cozyhr-broken-dist-").tempdir().expect("tempdir");
    let archive = rel.path().join(Release::helm_archive_name());
    let stage_s = stage.path().to_string_lossy().into_owned();
    sh("tar", &["-xzf", &archive.to_string_lossy(), "-C", &stage_s]).ok();
    let bin = stage.path().join("helm-cozy/helm-cozy");
    let mut entries: Vec<String> = tar_entries(&archive).into_iter().map(|(_, n)| n).collect();
    match binary {
        None => {
            std::fs::remove_file(&bin).expect("remove binary");
            entries.retain(|n| n != "helm-cozy/helm-cozy");
        }
        Some(bytes) => std::fs::write(&bin, bytes).expect("write binary"),
    }
    let target = out.path().join(Release::helm_archive_name()).to_string_lossy().into_owned();
    let mut args = vec!["--no-recursion", "-czf", target.as_str(), "-C", stage_s.as_str()];
    args.extend(entries.iter().map(String::as_str));
    sh("tar", &args).ok();
    out
}

fn helm_install_fails_clearly(helm: Helm, binary: Option<&[u8]>, expect: &str) {
    let rel = Release::new();
    let broken = broken_archive(&rel, binary);
    let base = cozyhr_e2e::serve(broken.path());
    let home = Home::new(helm);
    let out = helm_install_url(&home, &format!("{base}/{}", Release::helm_archive_name()));
    let (os, arch) = platform();
    assert_ne!(out.code, Some(0), "installing a broken archive succeeded:\n{}\n{}", out.stdout, out.stderr);
    let want = expect.replace("PLATFORM", &format!("{os}/{arch}"));
    assert!(out.stderr.contains(&want), "expected `{want}` in:\n{}", out.stderr);
    assert!(
        out.stderr.contains("helm plugin install https://")
            && out.stderr.contains(&format!("helm-cozy-{VERSION}-{os}-{arch}.tar.gz")),
        "the message names the archive to install instead:\n{}",
        out.stderr
    );
    let run = home.run(["cozy", "version"]);
    assert_ne!(run.code, Some(0), "helm cozy runs from a broken install: {}", run.stdout);
}

#[test]
fn helm3_install_of_an_archive_without_a_binary_fails_clearly() {
    helm_install_fails_clearly(Helm::V3, None, "helm-cozy: no helm-cozy binary for PLATFORM");
}

#[test]
fn helm4_install_of_an_archive_without_a_binary_fails_clearly() {
    helm_install_fails_clearly(Helm::V4, None, "helm-cozy: no helm-cozy binary for PLATFORM");
}

#[test]
fn helm_install_of_an_archive_for_another_platform_fails_clearly() {
    // An ELF header for another machine (aarch64 on x86_64, x86_64 on aarch64): the kernel refuses it.
    let machine: u16 = if std::env::consts::ARCH == "aarch64" { 0x3e } else { 0xb7 };
    let mut elf = vec![0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0];
    elf.extend_from_slice(&machine.to_le_bytes());
    elf.resize(64, 0);
    helm_install_fails_clearly(Helm::V4, Some(&elf), "does not run on this machine (PLATFORM)");
}

/// The archive extracted by hand and its helm-cozy/ directory installed (what docs/install.md says when
/// Helm cannot reach the release and for Helm 3, which installs no local archive): Helm 4 links it as a
/// development install (no signature asked), Helm 3 links it too; the hook checks the binary.
fn helm_installs_the_extracted_plugin_directory(helm: Helm) {
    let rel = Release::new();
    let dir = tempfile::tempdir().expect("tempdir");
    let x = dir.path().to_string_lossy().into_owned();
    sh("tar", &["-xzf", &rel.path().join(Release::helm_archive_name()).to_string_lossy(), "-C", &x]).ok();
    let home = Home::new(helm);
    let plugin = dir.path().join("helm-cozy");
    let install = home.run([Path::new("plugin"), Path::new("install"), plugin.as_path()]).ok();
    assert!(install.stdout.contains("Installed plugin: cozy"), "{}\n{}", install.stdout, install.stderr);
    assert!(install.stderr.contains(&format!("helm-cozy: ready: helm-cozy {VERSION}")), "hook:\n{}", install.stderr);
    if helm == Helm::V4 {
        assert!(install.stdout.contains("development mode"), "{}", install.stdout);
    }
    let version = home.run(["cozy", "version", "--client"]).ok();
    assert_eq!(version.stdout.lines().next().unwrap_or_default(), format!("helm-cozy {VERSION}"));
    let subs = helm_completions(&home, &["cozy", ""]);
    assert!(subs.iter().any(|s| s == "diff"), "helm __complete cozy offers {subs:?}");
    home.run(["plugin", "uninstall", "cozy"]).ok();
    assert_eq!(plugin_listed(&home), None, "cozy still listed after uninstall");
    assert!(plugin.join("helm-cozy").is_file(), "uninstalling a linked directory must not touch it");
}

#[test]
fn helm3_installs_the_extracted_plugin_directory() {
    helm_installs_the_extracted_plugin_directory(Helm::V3);
}

#[test]
fn helm4_installs_the_extracted_plugin_directory() {
    helm_installs_the_extracted_plugin_directory(Helm::V4);
}

/// Source-checkout installs build into the checkout's bin/: one at a time.
static SOURCE_CHECKOUT: Mutex<()> = Mutex::new(());

fn helm_installs_the_source_checkout(helm: Helm) {
    let _guard = SOURCE_CHECKOUT.lock().unwrap_or_else(|p| p.into_inner());
    let repo = &env().repo;
    let bin = repo.join("bin/helm-cozy");
    let had_bin = bin.exists();
    let home = Home::new(helm);
    let install = home.run([Path::new("plugin"), Path::new("install"), repo.as_path()]);
    // Leave the checkout as it was even when an assertion fails below.
    struct Restore<'a>(&'a Path, bool);
    impl Drop for Restore<'_> {
        fn drop(&mut self) {
            if !self.1 {
                let _ = std::fs::remove_file(self.0);
                let _ = std::fs::remove_dir(self.0.parent().unwrap());
            }
        }
    }
    let _restore = Restore(&bin, had_bin);
    let install = install.ok();
    assert!(install.stderr.contains("building from source with cargo"), "hook:\n{}", install.stderr);
    assert!(bin.is_file(), "the hook did not build {}", bin.display());
    let listed = plugin_listed(&home).expect("helm plugin list shows cozy");
    assert!(listed.split_whitespace().nth(1) == Some(VERSION), "helm plugin list: {listed}");
    let version = home.run(["cozy", "version"]).ok();
    assert_eq!(version.stdout.lines().next().unwrap_or_default(), format!("helm-cozy {VERSION}"));
    let subs = helm_completions(&home, &["cozy", ""]);
    assert!(subs.iter().any(|s| s == "apply"), "helm __complete cozy offers {subs:?}");

    home.run(["plugin", "uninstall", "cozy"]).ok();
    assert_eq!(plugin_listed(&home), None, "cozy still listed after uninstall");
    assert!(repo.join("Cargo.toml").is_file(), "uninstalling a development install must not touch the checkout");
}

#[test]
fn helm3_installs_the_source_checkout_and_uninstalls_it() {
    helm_installs_the_source_checkout(Helm::V3);
}

#[test]
fn helm4_installs_the_source_checkout_and_uninstalls_it() {
    helm_installs_the_source_checkout(Helm::V4);
}

// ---------------------------------------------------------------------------------------------------
// Completion scripts and the Makefile snippet

/// Sources the bash completion that `BINARY completion bash` prints, then asks it for the candidates of
/// `WORDS... ""` the way bash does on TAB (COMP_WORDS/COMP_CWORD), through the function it registered.
fn bash_completes(binary: &str, words: &[&str]) -> Vec<String> {
    let e = env();
    let script = {
        let mut c = command(e.bin_dir.join(binary));
        c.args(["completion", "bash"]);
        run(c).ok().stdout
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("completion.bash");
    std::fs::write(&file, &script).expect("write completion");
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let driver = format!(
        r#"source '{file}'
spec=$(complete -p {cmd} 2>/dev/null) || {{ echo "no completion registered for {cmd}; registered: $(complete -p)" >&2; exit 3; }}
fn=$(printf '%s\n' "$spec" | sed -n 's/.* -F \([^ ]*\) .*/\1/p')
[ -n "$fn" ] || {{ echo "no -F function in: $spec" >&2; exit 3; }}
COMP_WORDS=({words} '')
COMP_CWORD={cword}
COMP_LINE="${{COMP_WORDS[*]}}"
COMP_POINT=${{#COMP_LINE}}
"$fn" {cmd} '' '{prev}'
printf '%s\n' "${{COMPREPLY[@]}}"
"#,
        file = file.display(),
        cmd = words[0],
        words = quoted.join(" "),
        cword = words.len(),
        prev = words[words.len() - 1],
    );
    let mut c = Command::new("bash");
    c.arg("-c").arg(driver).stdin(Stdio::null());
    let out = run(c).ok();
    out.stdout.lines().map(str::to_string).filter(|l| !l.is_empty()).collect()
}

#[test]
fn bash_completion_of_kubectl_cozyhr_offers_its_commands() {
    let offered = bash_completes("kubectl-cozyhr", &["kubectl-cozyhr"]);
    for sub in ["get", "suspend", "resume", "reconcile", "status", "tree"] {
        assert!(offered.iter().any(|o| o == sub), "bash completion of kubectl-cozyhr offers {offered:?}, not {sub}");
    }
}

#[test]
fn bash_completion_of_helm_cozy_offers_its_commands() {
    let offered = bash_completes("helm-cozy", &["helm-cozy"]);
    for sub in ["show", "diff", "apply", "delete", "values"] {
        assert!(offered.iter().any(|o| o == sub), "bash completion of helm-cozy offers {offered:?}, not {sub}");
    }
}

#[test]
fn makefile_snippet_runs_the_loop_with_name_and_namespace() {
    let e = env();
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("Makefile"),
        format!("NAME = web\nNAMESPACE = tenant-a\ninclude {}\n", e.repo.join("scripts/cozyhr.mk").display()),
    )
    .expect("write Makefile");
    let make = |target: &str, extra: &[&str]| {
        let mut c = Command::new("make");
        c.arg("-n").arg("-s").arg(target).args(extra).current_dir(dir.path()).stdin(Stdio::null());
        // The defaults, not what the test environment exports (KUBECTL is the pinned kubectl's path).
        c.env_remove("KUBECTL").env_remove("HELM");
        run(c).ok().stdout.trim().to_string()
    };
    let chart = dir.path().display().to_string();
    for verb in ["show", "diff", "apply", "values", "delete"] {
        assert_eq!(make(verb, &[]), format!("helm cozy {verb} web -n tenant-a -C {chart}"));
    }
    for verb in ["suspend", "resume", "status", "reconcile", "tree", "drift"] {
        assert_eq!(make(verb, &[]), format!("kubectl cozyhr {verb} web -n tenant-a"));
    }
    assert_eq!(
        make("diff", &["COZY_FLAGS=--detailed-exitcode", "NAMESPACE=", "HELM=helm4"]),
        format!("helm4 cozy diff web -C {chart} --detailed-exitcode")
    );

    // And for real: `make show` through Helm 4 with the plugin installed, rendering a chart alone.
    let home = Home::new(Helm::V4);
    let rel = Release::new();
    let base = cozyhr_e2e::serve(rel.path());
    helm_install_url(&home, &format!("{base}/{}", Release::helm_archive_name())).ok();
    std::fs::write(dir.path().join("Chart.yaml"), "apiVersion: v2\nname: web\nversion: 0.1.0\n").expect("chart");
    std::fs::create_dir_all(dir.path().join("templates")).expect("templates");
    std::fs::write(
        dir.path().join("templates/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\n",
    )
    .expect("template");
    // make with the environment of the isolated Helm home (HELM_PLUGINS and the rest).
    let mut c = Command::new("make");
    for (k, v) in home.command().get_envs() {
        if let Some(v) = v {
            c.env(k, v);
        }
    }
    c.args(["-s", "show", "COZY_FLAGS=--plain"])
        .arg(format!("HELM={}", Helm::V4.bin().display()))
        .current_dir(dir.path())
        .stdin(Stdio::null());
    let out = run(c).ok();
    assert!(out.stdout.contains("name: web-cm"), "make show printed:\n{}\n{}", out.stdout, out.stderr);
}
