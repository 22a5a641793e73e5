//! Hermetic (no cluster, no network): the `cargo binstall` metadata in the binaries' Cargo.toml (read by
//! `cargo metadata`) and the Homebrew formula scripts/release.sh writes name exactly the archives it
//! writes, for every platform, with their sums, and the binary each looks for is in the archive; the
//! Helm plugin for every platform (the OCI artifact's layer) holds each platform's binary and names it.
//!
//! release.sh packages the binaries under test for this machine and keeps archives "built elsewhere"
//! for the other platforms; here those are copies of this machine's archives under the other names, so
//! all four platforms are in the outputs. Needs the built binaries (scripts/build.sh) only.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use cozyhr_e2e::{bin_dir, platform, repo, run};

const VERSION: &str = env!("CARGO_PKG_VERSION");
const PLATFORMS: [(&str, &str, &str); 4] = [
    ("linux", "amd64", "x86_64-unknown-linux-gnu"),
    ("linux", "arm64", "aarch64-unknown-linux-gnu"),
    ("darwin", "amd64", "x86_64-apple-darwin"),
    ("darwin", "arm64", "aarch64-apple-darwin"),
];
const REPO_URL: &str = "https://github.com/cozystack/cozyhr";

fn krew_name(os: &str, arch: &str) -> String {
    format!("kubectl-cozyhr_{VERSION}_{os}_{arch}.tar.gz")
}

fn helm_name(os: &str, arch: &str) -> String {
    format!("helm-cozy-{VERSION}-{os}-{arch}.tar.gz")
}

/// A release of all four platforms in a temporary DIST (the default BASE_URL, the GitHub release).
fn release() -> (tempfile::TempDir, BTreeMap<String, String>) {
    let dist = tempfile::Builder::new().prefix("cozyhr-dist-").tempdir().expect("tempdir");
    let (os, arch) = platform();
    let first = |extra: &[(&str, &str)]| {
        let mut c = Command::new(repo().join("scripts/release.sh"));
        c.arg(VERSION)
            .env("DIST", dist.path())
            .env("KREW_MANIFEST", dist.path().join("krew-manifest.yaml"))
            .env("COZYHR_PREBUILT", bin_dir())
            .env_remove("BASE_URL")
            .stdin(Stdio::null());
        for (k, v) in extra {
            c.env(k, v);
        }
        run(c).ok()
    };
    first(&[("TARGETS", &format!("{os}/{arch}"))]);
    for (o, a, _) in PLATFORMS {
        if (o, a) != (os, arch) {
            std::fs::copy(dist.path().join(krew_name(os, arch)), dist.path().join(krew_name(o, a))).expect("copy");
            std::fs::copy(dist.path().join(helm_name(os, arch)), dist.path().join(helm_name(o, a))).expect("copy");
        }
    }
    first(&[("TARGETS", "linux/amd64 linux/arm64 darwin/amd64 darwin/arm64")]);
    let sums = std::fs::read_to_string(dist.path().join("SHA256SUMS")).expect("SHA256SUMS");
    let sums = sums
        .lines()
        .map(|l| {
            let (sum, file) = l.split_once("  ").expect("sha256sum format");
            (file.to_string(), sum.to_string())
        })
        .collect();
    (dist, sums)
}

/// The names in a .tar.gz archive, and whether each is an executable file.
fn entries(archive: &Path) -> BTreeMap<String, bool> {
    let mut c = Command::new("tar");
    c.arg("-tvzf").arg(archive);
    let out = run(c).ok();
    out.stdout
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[f.len() - 1].to_string(), f[0].starts_with('-') && f[0].contains('x'))
        })
        .collect()
}

/// binstall's template language for the variables these templates use.
fn expand(template: &str, bin: &str, version: &str) -> String {
    template
        .replace("{ repo }", REPO_URL)
        .replace("{ version }", version)
        .replace("{ bin }", bin)
        .replace("{ binary-ext }", "")
}

#[test]
fn binstall_metadata_names_the_archives_release_sh_writes() {
    let (dist, sums) = release();
    let mut c = Command::new("cargo");
    c.args(["metadata", "--format-version", "1", "--no-deps", "--offline", "--manifest-path"])
        .arg(repo().join("Cargo.toml"));
    let meta = run(c).ok().json();
    for (package, name_of) in [("kubectl-cozyhr", krew_name as fn(&str, &str) -> String), ("helm-cozy", helm_name)] {
        let p = meta["packages"]
            .as_array()
            .and_then(|ps| ps.iter().find(|p| p["name"] == package))
            .unwrap_or_else(|| panic!("cargo metadata has no package {package}"));
        assert_eq!(p["repository"], REPO_URL, "{package}: binstall's {{ repo }} is package.repository");
        assert_eq!(p["version"], VERSION);
        let b = &p["metadata"]["binstall"];
        assert_eq!(b["pkg-fmt"], "tgz", "{package}: {b}");
        let bin_dir_template = b["bin-dir"].as_str().unwrap_or_else(|| panic!("{package}: no bin-dir in {b}"));
        let overrides = b["overrides"].as_object().unwrap_or_else(|| panic!("{package}: no overrides in {b}"));
        assert_eq!(overrides.len(), PLATFORMS.len(), "{package}: one override per platform release.sh builds: {b}");
        for (os, arch, triple) in PLATFORMS {
            let url = overrides
                .get(triple)
                .and_then(|o| o["pkg-url"].as_str())
                .unwrap_or_else(|| panic!("{package}: no pkg-url for {triple}"));
            let url = expand(url, package, VERSION);
            let file = name_of(os, arch);
            assert_eq!(url, format!("{REPO_URL}/releases/download/v{VERSION}/{file}"), "{package} on {triple}");
            assert!(sums.contains_key(&file), "{package} on {triple}: release.sh wrote no {file}");
            // Every binary of the package (helm-cozy also installs `cozyhr`) is where bin-dir says.
            let bins: &[&str] = if package == "helm-cozy" { &["helm-cozy", "cozyhr"] } else { &[package] };
            for bin in bins {
                let inside = expand(bin_dir_template, bin, VERSION);
                assert_eq!(
                    entries(&dist.path().join(&file)).get(&inside),
                    Some(&true),
                    "{package} on {triple}: {file} has no executable {inside}"
                );
            }
        }
    }
}

/// (os block, arch block) → (url, sha256) of the formula's own url, and of its helm-cozy resource.
type FormulaPlatforms = BTreeMap<(String, String), ((String, String), (String, String))>;

fn formula_platforms(formula: &str) -> FormulaPlatforms {
    let mut out = FormulaPlatforms::new();
    let (mut os, mut arch, mut in_resource) = (String::new(), String::new(), false);
    let (mut main, mut res) = ((String::new(), String::new()), (String::new(), String::new()));
    let quoted = |l: &str| l.split('"').nth(1).unwrap_or_default().to_string();
    for line in formula.lines().map(str::trim) {
        match line {
            "on_macos do" => os = "darwin".into(),
            "on_linux do" => os = "linux".into(),
            "on_arm do" => arch = "arm64".into(),
            "on_intel do" => arch = "amd64".into(),
            "resource \"helm-cozy\" do" => in_resource = true,
            l if l.starts_with("url ") => {
                if in_resource {
                    res.0 = quoted(l)
                } else {
                    main.0 = quoted(l)
                }
            }
            l if l.starts_with("sha256 ") => {
                if in_resource {
                    res.1 = quoted(l)
                } else {
                    main.1 = quoted(l)
                }
            }
            "end" if in_resource => in_resource = false,
            "end" if !arch.is_empty() => {
                out.insert((os.clone(), arch.clone()), (std::mem::take(&mut main), std::mem::take(&mut res)));
                arch.clear();
            }
            _ => {}
        }
    }
    out
}

#[test]
fn the_homebrew_formula_names_the_archives_release_sh_writes() {
    let (dist, sums) = release();
    let formula = std::fs::read_to_string(dist.path().join("cozyhr.rb")).expect("release.sh writes cozyhr.rb");
    let base = format!("{REPO_URL}/releases/download/v{VERSION}");
    let platforms = formula_platforms(&formula);
    assert_eq!(platforms.len(), PLATFORMS.len(), "one block per platform:\n{formula}");
    for (os, arch, _) in PLATFORMS {
        let ((url, sha), (rurl, rsha)) = platforms
            .get(&(os.to_string(), arch.to_string()))
            .unwrap_or_else(|| panic!("no {os}/{arch} in:\n{formula}"));
        let (k, h) = (krew_name(os, arch), helm_name(os, arch));
        assert_eq!(url, &format!("{base}/{k}"), "{os}/{arch} url");
        assert_eq!(Some(sha), sums.get(&k), "{os}/{arch}: the sha256 of {k}");
        assert_eq!(rurl, &format!("{base}/{h}"), "{os}/{arch} helm-cozy resource");
        assert_eq!(Some(rsha), sums.get(&h), "{os}/{arch}: the sha256 of {h}");
        // What install() takes from them is in them.
        let krew = entries(&dist.path().join(&k));
        for bin in ["kubectl-cozyhr", "kubectl_complete-cozyhr"] {
            assert_eq!(krew.get(bin), Some(&true), "{k} has no executable {bin} for bin.install");
        }
        // The formula installs the archive's helm-cozy/ (the plugin directory) into libexec/helm-cozy.
        let helm = entries(&dist.path().join(&h));
        assert_eq!(helm.get("helm-cozy/helm-cozy"), Some(&true), "{h} has no executable helm-cozy/helm-cozy");
        assert_eq!(helm.get("helm-cozy/cozyhr"), Some(&true), "{h} has no executable helm-cozy/cozyhr");
        assert!(helm.contains_key("helm-cozy/plugin.yaml"), "{h} has no helm-cozy/plugin.yaml for helm plugin install");
    }
    for want in [
        "class Cozyhr < Formula".to_string(),
        format!("version \"{VERSION}\""),
        "license \"Apache-2.0\"".into(),
        "bin.install \"kubectl-cozyhr\", \"kubectl_complete-cozyhr\"".into(),
        "resource(\"helm-cozy\").stage { (libexec/\"helm-cozy\").install Dir[\"helm-cozy/*\"] }".into(),
        "helm plugin install #{opt_libexec}/helm-cozy".into(),
        "bin.install_symlink libexec/\"helm-cozy/helm-cozy\" => \"cozyhr\"".into(),
    ] {
        assert!(formula.lines().any(|l| l.trim() == want), "the formula lacks `{want}`:\n{formula}");
    }
    // Ruby's blocks close: every `do` (and class/def) has its `end`.
    let opens = formula
        .lines()
        .map(str::trim)
        .filter(|l| l.ends_with(" do") || l.starts_with("class ") || l.starts_with("def "))
        .count();
    let ends = formula.lines().filter(|l| l.trim() == "end").count();
    assert_eq!(opens, ends, "unbalanced blocks in the formula:\n{formula}");

    // The catalog's Plugin manifest names the same four platforms with the flux archives' sums.
    let manifest = std::fs::read_to_string(dist.path().join("cozyhr.yaml")).expect("cozyhr.yaml");
    for (os, arch, _) in PLATFORMS {
        let f = format!("flux-cozyhr_{VERSION}_{os}_{arch}.tar.gz");
        let sum = sums.get(&f).unwrap_or_else(|| panic!("no {f} in SHA256SUMS"));
        assert!(manifest.contains(&format!("        url: {base}/{f}\n        checksum: sha256:{sum}\n")), "{manifest}");
        assert_eq!(entries(&dist.path().join(&f)).get("flux-cozyhr"), Some(&true), "{f} has no executable flux-cozyhr");
    }
}

#[test]
fn the_every_platform_helm_archive_holds_each_platforms_binary_and_a_platform_command_for_it() {
    let (dist, sums) = release();
    let every = format!("helm-cozy-{VERSION}.tgz");
    assert!(sums.contains_key(&every), "SHA256SUMS has no {every}");
    let inside = entries(&dist.path().join(&every));
    let mut c = Command::new("tar");
    c.arg("-xzOf").arg(dist.path().join(&every)).arg("helm-cozy/plugin.yaml");
    let plugin_yaml = run(c).ok().stdout;
    for (os, arch, _) in PLATFORMS {
        // Built from each platform's archive (here: copies of this machine's under the other names).
        assert_eq!(inside.get(&format!("helm-cozy/{os}-{arch}/helm-cozy")), Some(&true), "{every}: {inside:?}");
        assert!(
            plugin_yaml.contains(&format!(
                "  - os: {os}\n    arch: {arch}\n    command: $HELM_PLUGIN_DIR/{os}-{arch}/helm-cozy\n"
            )),
            "no platformCommand for {os}/{arch}:\n{plugin_yaml}"
        );
    }
    assert_eq!(plugin_yaml.matches("command: ").count(), PLATFORMS.len(), "{plugin_yaml}");
    for file in ["helm-cozy/plugin-hook.sh", "helm-cozy/cozyhr"] {
        assert_eq!(inside.get(file), Some(&true), "{every} has no executable {file}");
    }
    assert!(!inside.keys().any(|k| !k.starts_with("helm-cozy/")), "one top directory: {inside:?}");
}
