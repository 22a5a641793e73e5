//! Signed Helm plugin archives, installed every way a user installs them: `scripts/release.sh --sign KEY`
//! with a throw-away GnuPG key made here writes a .prov per Helm archive and the public key ring; the
//! real Helm 4 installs, with `--keyring` and its default verification (no --verify=false), the archive
//! over http, the same file once downloaded (`curl`, `helm plugin verify`, `helm plugin install FILE`),
//! the every-platform archive, and the OCI artifact `release.sh --push` put into the test ground's
//! registry; each says whose signature it checked, and refuses the archive tampered with, the
//! provenance tampered with, and a signature by a key not in the ring. The real Helm 3 installs the same
//! archive over http. `helm plugin package --sign` of the real Helm 4 makes the same layout and the same
//! kind of provenance from the same plugin. An unsigned release needs --verify=false on Helm 4.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cozyhr_e2e::{Helm, HelmHome, Run, ServedRelease, oras_bin, platform, registry, run};

const SIGNER: &str = "cozyhr e2e signer <signer@cozyhr.invalid>";
const SIGNER_EMAIL: &str = "signer@cozyhr.invalid";

/// A GnuPG home of its own with one unprotected ed25519 signing key for `uid`.
struct Gpg {
    home: tempfile::TempDir,
}

impl Gpg {
    fn new(uid: &str) -> Gpg {
        // Short path: gpg-agent's socket lives in the home and socket paths are limited in length.
        let home = tempfile::Builder::new().prefix("gpg-").tempdir_in("/tmp").expect("tempdir");
        let g = Gpg { home };
        g.run(&[
            "--batch",
            "--pinentry-mode",
            "loopback",
            "--passphrase",
            "",
            "--quick-gen-key",
            uid,
            "ed25519",
            "sign",
            "never",
        ])
        .ok();
        g
    }

    fn run(&self, args: &[&str]) -> Run {
        let mut c = Command::new("gpg");
        c.args(args).env("GNUPGHOME", self.home.path()).stdin(Stdio::null());
        run(c)
    }

    fn path(&self) -> &Path {
        self.home.path()
    }

    /// The public key ring of `who`, written into this home.
    fn export(&self, who: &str) -> String {
        let ring = self.path().join("exported.gpg").to_string_lossy().into_owned();
        self.run(&["--batch", "--yes", "--export", "--output", &ring, who]).ok();
        ring
    }
}

impl Drop for Gpg {
    fn drop(&mut self) {
        // The agent gpg started for this home; it would outlive the test otherwise.
        let _ = Command::new("gpgconf")
            .args(["--kill", "gpg-agent"])
            .env("GNUPGHOME", self.home.path())
            .stdin(Stdio::null())
            .status();
    }
}

fn home(helm: Helm) -> HelmHome {
    let h = HelmHome::new(helm);
    std::fs::create_dir_all(plugins(&h)).expect("mkdir plugins");
    h
}

fn plugins(h: &HelmHome) -> PathBuf {
    h.dir.path().join("data/plugins")
}

fn installed(h: &HelmHome) -> bool {
    h.run(["plugin", "list"]).ok().stdout.lines().any(|l| l.split_whitespace().next() == Some("cozy"))
}

fn said(r: &Run) -> String {
    format!("{}{}", r.stdout, r.stderr)
}

/// The first line `helm cozy version` prints through this Helm home.
fn helm_cozy_version(h: &HelmHome) -> String {
    h.run(["cozy", "version", "--client"]).ok().stdout.lines().next().unwrap_or_default().to_string()
}

/// Helm 4 verified `what` with the signer's key and the sum `sum`, installed it into plugins/helm-cozy,
/// and `helm cozy` runs from there; the `cozyhr` a user links from the plugin directory runs too.
#[track_caller]
fn assert_verified_and_installed(h: &HelmHome, install: &Run, sum: &str, version: &str, what: &str) {
    let out = said(install);
    assert!(out.contains("Verifying plugin signature"), "{what}: Helm 4 verified nothing:\n{out}");
    assert!(out.contains(&format!("Plugin Hash Verified: sha256:{sum}")), "{what}:\n{out}");
    assert!(out.contains("Signed by: cozyhr e2e signer"), "{what}:\n{out}");
    assert!(out.contains("Installed plugin: cozy"), "{what}:\n{out}");
    assert!(installed(h), "{what}: Helm 4 does not list the verified plugin");
    assert!(plugins(h).join("helm-cozy/plugin.yaml").is_file(), "{what}: the plugin is not in plugins/helm-cozy");
    assert_eq!(helm_cozy_version(h), format!("helm-cozy {version}"), "{what}");
    let bin = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink(plugins(h).join("helm-cozy/cozyhr"), bin.path().join("cozyhr")).expect("link");
    let mut c = Command::new(bin.path().join("cozyhr"));
    c.args(["version", "--client"]).stdin(Stdio::null());
    assert_eq!(
        run(c).ok().stdout.lines().next().unwrap_or_default(),
        format!("cozyhr {version}"),
        "{what}: the cozyhr linked from the installed plugin"
    );
    let mut complete = h.command();
    complete.args(["__complete", "cozy", ""]);
    let offered = run(complete).ok().stdout;
    assert!(offered.lines().any(|l| l.split('\t').next() == Some("apply")), "{what}: helm __complete cozy:\n{offered}");
}

/// Helm 4 refused to install, with a message containing `why`, and installed nothing.
#[track_caller]
fn assert_refused(h: &HelmHome, r: &Run, why: &str, what: &str) {
    assert_ne!(r.code, Some(0), "Helm 4 installed {what}:\n{}", said(r));
    assert!(said(r).contains(why), "{what}: Helm 4 said:\n{}", said(r));
    assert!(!installed(h), "{what}: the plugin was installed");
    assert!(!plugins(h).join("helm-cozy").exists(), "{what}: plugins/helm-cozy was written");
}

/// The sum SHA256SUMS gives for a file of the release.
fn sum_of(rel: &ServedRelease, file: &str) -> String {
    let sums = std::fs::read_to_string(rel.path("SHA256SUMS")).expect("SHA256SUMS");
    sums.lines()
        .find_map(|l| l.strip_suffix(&format!("  {file}")).map(str::to_string))
        .unwrap_or_else(|| panic!("no sum of {file} in SHA256SUMS:\n{sums}"))
}

/// The same bytes and one more: a file that no longer matches its provenance.
fn tamper_archive(path: &Path) {
    let mut bytes = std::fs::read(path).expect("archive");
    bytes.push(0);
    std::fs::write(path, bytes).expect("tamper");
}

/// The provenance with its signed text changed (the first sum's first digit): the signature no longer
/// matches the text.
fn tamper_prov(path: &Path) {
    let text = std::fs::read_to_string(path).expect("prov");
    let at = text.find(": sha256:").expect("a sum in the provenance") + ": sha256:".len();
    let digit = if text.as_bytes()[at] == b'0' { "1" } else { "0" };
    std::fs::write(path, format!("{}{digit}{}", &text[..at], &text[at + 1..])).expect("tamper");
}

/// `curl -fsSLO URL` into `dir`, as the docs download a release file.
fn curl(dir: &Path, url: &str) {
    let mut c = Command::new("curl");
    c.args(["-fsSLO", url]).current_dir(dir).stdin(Stdio::null());
    run(c).ok();
}

/// A signed release (release.sh --sign with a throw-away key), served over http.
fn signed_release(extra: &[&str], gpg: &Gpg) -> ServedRelease {
    let mut args = vec!["--sign", SIGNER_EMAIL];
    args.extend_from_slice(extra);
    let rel = ServedRelease::new(&args, &[("GNUPGHOME", gpg.path())]);
    assert!(rel.path("cozyhr-keyring.gpg").is_file(), "release.sh --sign ships no cozyhr-keyring.gpg");
    rel
}

#[test]
fn helm4_verifies_a_signed_archive_with_the_shipped_keyring_and_helm3_installs_it() {
    let gpg = Gpg::new(SIGNER);
    let rel = signed_release(&[], &gpg);
    let archive = rel.archive("helm-cozy");
    let keyring = rel.path("cozyhr-keyring.gpg").to_string_lossy().into_owned();

    // The .prov is Helm's format: clear-signed with SHA512, the metadata, `...`, and the archive's sum
    // under its file name.
    let prov = std::fs::read_to_string(rel.path(&format!("{archive}.prov"))).expect("release.sh --sign writes a .prov");
    let sum = sum_of(&rel, &archive);
    assert!(prov.starts_with("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\n"), "{prov}");
    assert!(prov.contains(&format!("\n...\nfiles:\n  {archive}: sha256:{sum}\n")), "{prov}");
    assert!(prov.contains("name: cozy\n"), "the metadata part names the plugin:\n{prov}");
    let url = format!("{}/{archive}", rel.url);

    // Helm 4 verifies the archive with the shipped key ring, by default.
    let h4 = home(Helm::V4);
    let install = h4.run(["plugin", "install", &url, "--keyring", &keyring]).ok();
    assert_verified_and_installed(&h4, &install, &sum, &rel.version, "the archive over http");

    // Helm 3 does not verify plugins and installs the same archive, .prov beside it or not.
    let h3 = home(Helm::V3);
    h3.run(["plugin", "install", &url]).ok();
    assert!(installed(&h3), "Helm 3 does not list the plugin");
    assert_eq!(helm_cozy_version(&h3), format!("helm-cozy {}", rel.version), "Helm 3");

    // A key ring without the signer's key: refused.
    let stranger = Gpg::new("someone else <else@cozyhr.invalid>");
    let other_ring = stranger.export("else@cozyhr.invalid");
    let h = home(Helm::V4);
    let refused = h.run(["plugin", "install", &url, "--keyring", &other_ring]);
    assert_refused(&h, &refused, "plugin verification failed", "an archive signed by a key not in the ring");

    // The provenance tampered with: refused.
    let prov_path = rel.path(&format!("{archive}.prov"));
    let good_prov = std::fs::read(&prov_path).expect("prov");
    tamper_prov(&prov_path);
    let h = home(Helm::V4);
    let refused = h.run(["plugin", "install", &url, "--keyring", &keyring]);
    assert_refused(&h, &refused, "plugin verification failed", "an archive whose provenance was tampered with");
    std::fs::write(&prov_path, good_prov).expect("restore the prov");

    // The archive tampered with (the .prov no longer matches): refused.
    tamper_archive(&rel.path(&archive));
    let h = home(Helm::V4);
    let refused = h.run(["plugin", "install", &url, "--keyring", &keyring]);
    assert_refused(&h, &refused, "sha256 sum does not match", "a tampered archive over http");
}

#[test]
fn helm4_installs_the_downloaded_file_verified_and_refuses_it_tampered() {
    let gpg = Gpg::new(SIGNER);
    let rel = signed_release(&[], &gpg);
    // Downloaded as docs/install.md says for a machine behind a proxy or without network: the archive,
    // its .prov and the key ring, by their names, then `helm plugin verify` and `helm plugin install FILE`.
    let down = tempfile::tempdir().expect("tempdir");
    for file in [rel.archive("helm-cozy"), format!("{}.prov", rel.archive("helm-cozy")), "cozyhr-keyring.gpg".into()] {
        curl(down.path(), &format!("{}/{file}", rel.url));
    }
    let file = down.path().join(rel.archive("helm-cozy")).to_string_lossy().into_owned();
    let keyring = down.path().join("cozyhr-keyring.gpg").to_string_lossy().into_owned();
    let sum = sum_of(&rel, &rel.archive("helm-cozy"));

    let h = home(Helm::V4);
    let verify = h.run(["plugin", "verify", &file, "--keyring", &keyring]).ok();
    assert!(said(&verify).contains(&format!("Plugin Hash Verified: sha256:{sum}")), "{}", said(&verify));
    let install = h.run(["plugin", "install", &file, "--keyring", &keyring]).ok();
    assert_verified_and_installed(&h, &install, &sum, &rel.version, "the downloaded file");
    // The plugin as Helm 4 installs a file: the archive's helm-cozy/ directory, not its root.
    let root = plugins(&h).join("helm-cozy");
    assert!(root.join("helm-cozy").is_file(), "plugins/helm-cozy/helm-cozy is the binary for a file install");

    // The every-platform archive installs from its file the same way.
    let every = rel.every_platform_archive();
    for f in [every.clone(), format!("{every}.prov")] {
        curl(down.path(), &format!("{}/{f}", rel.url));
    }
    let every_file = down.path().join(&every).to_string_lossy().into_owned();
    let h = home(Helm::V4);
    let install = h.run(["plugin", "install", &every_file, "--keyring", &keyring]).ok();
    assert_verified_and_installed(&h, &install, &sum_of(&rel, &every), &rel.version, "the every-platform file");

    // A key ring without the signer's key: refused.
    let stranger = Gpg::new("someone else <else@cozyhr.invalid>");
    let other_ring = stranger.export("else@cozyhr.invalid");
    let h = home(Helm::V4);
    let refused = h.run(["plugin", "install", &file, "--keyring", &other_ring]);
    assert_refused(&h, &refused, "plugin verification failed", "a file signed by a key not in the ring");

    // The provenance tampered with: refused, by `helm plugin verify` too.
    let prov = down.path().join(format!("{}.prov", rel.archive("helm-cozy")));
    let good_prov = std::fs::read(&prov).expect("prov");
    tamper_prov(&prov);
    let h = home(Helm::V4);
    let refused = h.run(["plugin", "verify", &file, "--keyring", &keyring]);
    assert_ne!(refused.code, Some(0), "helm plugin verify accepted a tampered provenance:\n{}", said(&refused));
    let refused = h.run(["plugin", "install", &file, "--keyring", &keyring]);
    assert_refused(&h, &refused, "plugin verification failed", "a file whose provenance was tampered with");
    std::fs::write(&prov, good_prov).expect("restore the prov");

    // The file tampered with: refused.
    tamper_archive(Path::new(&file));
    let h = home(Helm::V4);
    let refused = h.run(["plugin", "install", &file, "--keyring", &keyring]);
    assert_refused(&h, &refused, "sha256 sum does not match", "a tampered file");
}

/// `sh -c SCRIPT` in `dir` with Helm home `h`'s environment and its Helm first on PATH as `helm`, and
/// GnuPG's home `gnupg` (as a user's own, without the key ring imported).
fn sh_with_helm(h: &HelmHome, dir: &Path, gnupg: &Path, script: &str) -> Run {
    let bin = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink(h.helm.bin(), bin.path().join("helm")).expect("link helm");
    let mut c = Command::new("sh");
    for (k, v) in h.command().get_envs() {
        if let Some(v) = v {
            c.env(k, v);
        }
    }
    let path = std::env::join_paths(
        std::iter::once(bin.path().to_path_buf())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .expect("PATH");
    c.args(["-ec", script]).env("PATH", path).env("GNUPGHOME", gnupg).current_dir(dir).stdin(Stdio::null());
    run(c)
}

#[test]
fn helm3_installs_a_downloaded_archive_checked_with_gnupg_as_the_docs_say() {
    let gpg = Gpg::new(SIGNER);
    let rel = signed_release(&[], &gpg);
    let archive = rel.archive("helm-cozy");
    let down = tempfile::tempdir().expect("tempdir");
    for file in [archive.clone(), format!("{archive}.prov"), "cozyhr-keyring.gpg".into()] {
        curl(down.path(), &format!("{}/{file}", rel.url));
    }
    // docs/install.md's three lines for Helm 3, for this archive (a user's GnuPG home, empty).
    let user_gnupg = tempfile::Builder::new().prefix("gpg-user-").tempdir_in("/tmp").expect("tempdir");
    let check = format!(
        "gpg --no-default-keyring --keyring ./cozyhr-keyring.gpg --verify {archive}.prov\n\
         gpg --no-default-keyring --keyring ./cozyhr-keyring.gpg --decrypt {archive}.prov | grep \"$(sha256sum {archive} | cut -d' ' -f1)\"\n"
    );
    let install = "tar -xzf ARCHIVE && helm plugin install ./helm-cozy\n".replace("ARCHIVE", &archive);
    let h = home(Helm::V3);
    let out = sh_with_helm(&h, down.path(), user_gnupg.path(), &format!("{check}{install}")).ok();
    assert!(out.stderr.contains("Good signature from \"cozyhr e2e signer"), "gpg said:\n{}", out.stderr);
    assert!(out.stdout.contains(&format!("{archive}: sha256:{}", sum_of(&rel, &archive))), "{}", out.stdout);
    assert!(out.stdout.contains("Installed plugin: cozy"), "{}", out.stdout);
    assert_eq!(helm_cozy_version(&h), format!("helm-cozy {}", rel.version), "Helm 3, from the extracted archive");

    // A tampered provenance fails the first check, a tampered archive the second.
    let prov = down.path().join(format!("{archive}.prov"));
    let good_prov = std::fs::read(&prov).expect("prov");
    tamper_prov(&prov);
    let bad = sh_with_helm(&h, down.path(), user_gnupg.path(), &check);
    assert_ne!(bad.code, Some(0), "gpg accepted a tampered provenance:\n{}", bad.stderr);
    assert!(bad.stderr.contains("BAD signature"), "gpg said:\n{}", bad.stderr);
    std::fs::write(&prov, good_prov).expect("restore the prov");
    tamper_archive(&down.path().join(&archive));
    let bad = sh_with_helm(&h, down.path(), user_gnupg.path(), &check);
    assert_ne!(bad.code, Some(0), "the docs' check passed a tampered archive:\n{}{}", bad.stdout, bad.stderr);
    let _ = std::process::Command::new("gpgconf")
        .args(["--kill", "gpg-agent"])
        .env("GNUPGHOME", user_gnupg.path())
        .stdin(Stdio::null())
        .status();
}

/// `oras push` of FILE (as `helm-cozy-VERSION.tgz`) and PROV (as its .prov) to `reference`, the way
/// release.sh pushes the plugin: for the tampered artifacts.
fn push_artifact(reference: &str, version: &str, file: &Path, prov: &Path) {
    let dir = tempfile::tempdir().expect("tempdir");
    let name = format!("helm-cozy-{version}.tgz");
    std::fs::copy(file, dir.path().join(&name)).expect("copy");
    std::fs::copy(prov, dir.path().join(format!("{name}.prov"))).expect("copy");
    let mut c = Command::new(oras_bin());
    c.args(["push", "--plain-http", "--artifact-type", "application/vnd.helm.plugin.v1+json", reference])
        .arg(format!("{name}:application/vnd.oci.image.layer.v1.tar+gzip"))
        .arg(format!("{name}.prov:application/vnd.oci.image.layer.v1.tar"))
        .current_dir(dir.path())
        .stdin(Stdio::null());
    run(c).ok();
}

#[test]
fn helm4_installs_the_oci_artifact_release_sh_pushed_verified_and_refuses_it_tampered() {
    let gpg = Gpg::new(SIGNER);
    let repo = format!("{}/e2e-signed-{}", registry(), std::process::id());
    let rel = signed_release(&["--push", &format!("oci://{repo}"), "--plain-http"], &gpg);
    let keyring = rel.path("cozyhr-keyring.gpg").to_string_lossy().into_owned();
    let every = rel.every_platform_archive();
    let reference = format!("{repo}/helm-cozy:{}", rel.version);

    // What is in the registry: a plugin artifact whose layers are the every-platform archive and its
    // provenance, by their file names.
    let mut c = Command::new(oras_bin());
    c.args(["manifest", "fetch", "--plain-http", &reference]).stdin(Stdio::null());
    let manifest = run(c).ok().json();
    assert_eq!(manifest["artifactType"], "application/vnd.helm.plugin.v1+json", "{manifest}");
    let titles: Vec<&str> = manifest["layers"]
        .as_array()
        .expect("layers")
        .iter()
        .filter_map(|l| l.pointer("/annotations/org.opencontainers.image.title").and_then(|t| t.as_str()))
        .collect();
    assert_eq!(titles, [every.clone(), format!("{every}.prov")], "{manifest}");
    assert_eq!(
        manifest["layers"][0]["digest"],
        format!("sha256:{}", sum_of(&rel, &every)),
        "the layer is the every-platform archive of the release"
    );
    // Its provenance holds the sum under the name Helm 4 checks for an OCI install (PLUGIN-VERSION.tgz
    // from plugin.yaml), and under the file's own name for `helm plugin verify` of a pulled copy.
    let prov = std::fs::read_to_string(rel.path(&format!("{every}.prov"))).expect("prov");
    let sum = sum_of(&rel, &every);
    for name in [every.clone(), format!("cozy-{}.tgz", rel.version)] {
        assert!(prov.contains(&format!("\n  {name}: sha256:{sum}\n")), "{name} in:\n{prov}");
    }

    // Helm 4 installs it from the registry, verified with the shipped key ring.
    let oci = format!("oci://{reference}");
    let h = home(Helm::V4);
    let install = h.run(["plugin", "install", &oci, "--plain-http", "--keyring", &keyring]).ok();
    assert_verified_and_installed(&h, &install, &sum, &rel.version, "the OCI artifact");
    let (os, arch) = platform();
    assert!(
        plugins(&h).join(format!("helm-cozy/{os}-{arch}/helm-cozy")).is_file(),
        "the OCI install carries this platform's binary as {os}-{arch}/helm-cozy"
    );

    // A copy in a registry of one's own (docs/install.md: `oras copy`, the repository still named
    // helm-cozy) installs the same way.
    let mirror = format!("{}/e2e-mirror-{}/tools/helm-cozy:{}", registry(), std::process::id(), rel.version);
    let mut c = Command::new(oras_bin());
    c.args(["copy", "--from-plain-http", "--to-plain-http", &reference, &mirror]).stdin(Stdio::null());
    run(c).ok();
    let h = home(Helm::V4);
    let install = h.run(["plugin", "install", &format!("oci://{mirror}"), "--plain-http", "--keyring", &keyring]).ok();
    assert_verified_and_installed(&h, &install, &sum, &rel.version, "a copy of the OCI artifact");

    // A key ring without the signer's key: refused.
    let stranger = Gpg::new("someone else <else@cozyhr.invalid>");
    let other_ring = stranger.export("else@cozyhr.invalid");
    let h = home(Helm::V4);
    let refused = h.run(["plugin", "install", &oci, "--plain-http", "--keyring", &other_ring]);
    assert_refused(&h, &refused, "plugin verification failed", "an OCI artifact signed by a key not in the ring");

    // An artifact whose provenance was tampered with, and one whose archive was: refused.
    let work = tempfile::tempdir().expect("tempdir");
    let bad_prov = work.path().join("prov");
    std::fs::copy(rel.path(&format!("{every}.prov")), &bad_prov).expect("copy");
    tamper_prov(&bad_prov);
    let tampered_prov = format!("{repo}/helm-cozy:tampered-prov");
    push_artifact(&tampered_prov, &rel.version, &rel.path(&every), &bad_prov);
    let h = home(Helm::V4);
    let refused =
        h.run(["plugin", "install", &format!("oci://{tampered_prov}"), "--plain-http", "--keyring", &keyring]);
    assert_refused(&h, &refused, "plugin verification failed", "an OCI artifact whose provenance was tampered with");

    let bad_archive = work.path().join("archive");
    std::fs::copy(rel.path(&every), &bad_archive).expect("copy");
    tamper_archive(&bad_archive);
    let tampered = format!("{repo}/helm-cozy:tampered-archive");
    push_artifact(&tampered, &rel.version, &bad_archive, &rel.path(&format!("{every}.prov")));
    let h = home(Helm::V4);
    let refused = h.run(["plugin", "install", &format!("oci://{tampered}"), "--plain-http", "--keyring", &keyring]);
    assert_refused(&h, &refused, "sha256 sum does not match", "a tampered OCI artifact");
}

/// The entries of a .tar.gz: (mode string, path without a trailing slash), in archive order.
fn tar_entries(archive: &Path) -> Vec<(String, String)> {
    let mut c = Command::new("tar");
    c.arg("-tvzf").arg(archive).stdin(Stdio::null());
    run(c)
        .ok()
        .stdout
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[0].to_string(), f[f.len() - 1].trim_end_matches('/').to_string())
        })
        .collect()
}

#[test]
fn helm_plugin_package_makes_the_same_layout_and_provenance_from_the_same_plugin() {
    let gpg = Gpg::new(SIGNER);
    let rel = signed_release(&[], &gpg);
    let archive = rel.path(&rel.archive("helm-cozy"));
    let keyring = rel.path("cozyhr-keyring.gpg").to_string_lossy().into_owned();

    // The plugin directory of our archive, packaged and signed by the real Helm 4 with the same key
    // (Helm reads an OpenPGP secret key ring file).
    let work = tempfile::tempdir().expect("tempdir");
    let mut x = Command::new("tar");
    x.arg("-xzf").arg(&archive).arg("-C").arg(work.path()).stdin(Stdio::null());
    run(x).ok();
    let secring = work.path().join("secring.gpg").to_string_lossy().into_owned();
    gpg.run(&[
        "--batch",
        "--pinentry-mode",
        "loopback",
        "--passphrase",
        "",
        "--export-secret-keys",
        "--output",
        &secring,
    ])
    .ok();
    let out = work.path().join("out");
    let h = home(Helm::V4);
    let plugin_dir = work.path().join("helm-cozy").to_string_lossy().into_owned();
    let package = h
        .run([
            "plugin",
            "package",
            &plugin_dir,
            "--sign",
            "--key",
            SIGNER_EMAIL,
            "--keyring",
            &secring,
            "-d",
            &out.to_string_lossy(),
        ])
        .ok();
    let theirs = out.join(format!("cozy-{}.tgz", rel.version));
    assert!(theirs.is_file() && out.join(format!("cozy-{}.tgz.prov", rel.version)).is_file(), "{}", said(&package));

    // Helm's archive is one top directory (named after the plugin) holding the plugin; ours holds the
    // same files, with the same modes, in the directory named after our file (which Helm 4 looks for
    // when it installs a file), plus the root files of the installers that read the root.
    let helm_entries: Vec<(String, String)> =
        tar_entries(&theirs).into_iter().map(|(mode, path)| (mode, path.replacen("cozy", "helm-cozy", 1))).collect();
    let ours = tar_entries(&archive);
    let ours_inside: Vec<(String, String)> =
        ours.iter().filter(|(_, p)| p == "helm-cozy" || p.starts_with("helm-cozy/")).cloned().collect();
    assert_eq!(ours_inside, helm_entries, "our helm-cozy/ against helm plugin package's cozy/");
    let root: Vec<&str> = ours.iter().map(|(_, p)| p.as_str()).filter(|p| !p.starts_with("helm-cozy")).collect();
    assert_eq!(root, ["plugin.yaml", "completion.yaml", "cozyhr"], "the archive's root files");

    // The provenance: the same clear-signed form, the sum under the archive's file name.
    let their_prov = std::fs::read_to_string(out.join(format!("cozy-{}.tgz.prov", rel.version))).expect("prov");
    let our_prov = std::fs::read_to_string(rel.path(&format!("{}.prov", rel.archive("helm-cozy")))).expect("prov");
    for (who, prov, name, file) in [
        ("helm plugin package", &their_prov, format!("cozy-{}.tgz", rel.version), theirs.clone()),
        ("release.sh", &our_prov, rel.archive("helm-cozy"), archive.clone()),
    ] {
        let sum = {
            let mut c = Command::new("sha256sum");
            c.arg(&file).stdin(Stdio::null());
            run(c).ok().stdout.split_whitespace().next().unwrap_or_default().to_string()
        };
        assert!(prov.starts_with("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\n"), "{who}:\n{prov}");
        assert!(prov.contains(&format!("\n...\nfiles:\n  {name}: sha256:{sum}\n")), "{who}:\n{prov}");
        assert!(prov.contains("\n-----BEGIN PGP SIGNATURE-----\n"), "{who}:\n{prov}");
    }

    // And Helm 4 takes each for the other's: it verifies and installs its own package with the key ring
    // release.sh shipped, as it does ours.
    let h = home(Helm::V4);
    let install = h.run(["plugin", "install", &theirs.to_string_lossy(), "--keyring", &keyring]);
    let install = install.ok();
    assert!(said(&install).contains("Signed by: cozyhr e2e signer"), "{}", said(&install));
    assert_eq!(helm_cozy_version(&h), format!("helm-cozy {}", rel.version), "helm plugin package's archive");
    h.run(["plugin", "verify", &archive.to_string_lossy(), "--keyring", &keyring]).ok();
}

#[test]
fn an_unsigned_release_installs_on_helm4_only_with_verify_false() {
    let rel = ServedRelease::new(&[], &[]);
    let archive = rel.archive("helm-cozy");
    assert!(!rel.path(&format!("{archive}.prov")).exists(), "an unsigned release has a .prov");
    assert!(!rel.path("cozyhr-keyring.gpg").exists(), "an unsigned release has a key ring");
    let url = format!("{}/{archive}", rel.url);

    let h = home(Helm::V4);
    let refused = h.run(["plugin", "install", &url]);
    assert_refused(&h, &refused, "no provenance file", "an unsigned archive with verification on");
    h.run(["plugin", "install", &url, "--verify=false"]).ok();
    assert!(installed(&h), "Helm 4 --verify=false did not install the unsigned archive");
}

#[test]
fn release_sh_refuses_a_key_gpg_does_not_have() {
    let gpg = Gpg::new(SIGNER);
    let dir = tempfile::tempdir().expect("tempdir");
    let mut c = Command::new(cozyhr_e2e::env().repo.join("scripts/release.sh"));
    c.args(["--sign", "nobody@cozyhr.invalid", env!("CARGO_PKG_VERSION")])
        .env("DIST", dir.path())
        .env("KREW_MANIFEST", dir.path().join("krew-manifest.yaml"))
        .env("GNUPGHOME", gpg.path())
        .env("COZYHR_PREBUILT", &cozyhr_e2e::env().bin_dir)
        .stdin(Stdio::null());
    let out = run(c).code(1);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line:\n{}", out.stderr);
    assert!(lines[0].contains("no secret key") && lines[0].contains("nobody@cozyhr.invalid"), "{}", out.stderr);
    assert!(
        std::fs::read_dir(dir.path()).expect("dist").next().is_none(),
        "release.sh wrote into DIST before refusing"
    );
}

#[test]
fn release_sh_refuses_a_push_it_cannot_make_before_writing_anything() {
    let dir = tempfile::tempdir().expect("tempdir");
    let release = |args: &[&str], oras: &Path| {
        let mut c = Command::new(cozyhr_e2e::env().repo.join("scripts/release.sh"));
        c.args(args)
            .arg(env!("CARGO_PKG_VERSION"))
            .env("DIST", dir.path())
            .env("KREW_MANIFEST", dir.path().join("krew-manifest.yaml"))
            .env("COZYHR_PREBUILT", &cozyhr_e2e::env().bin_dir)
            .env("ORAS", oras)
            .stdin(Stdio::null());
        let out = run(c).code(1);
        assert_eq!(out.stderr.lines().count(), 1, "one line:\n{}", out.stderr);
        out.stderr
    };
    let oras = oras_bin();
    let said = release(&["--push", "ghcr.io/cozystack/cozyhr"], &oras);
    assert!(said.contains("--push takes oci://REGISTRY[/PATH]"), "{said}");
    let said = release(&["--push", "oci://ghcr.io/cozystack/cozyhr/helm-cozy:0.1.0"], &oras);
    assert!(said.contains("without a tag"), "{said}");
    let said = release(&["--push", "oci://127.0.0.1:1/x"], Path::new("/nonexistent/oras"));
    assert!(said.contains("--push needs oras"), "{said}");
    let said = release(&["--plain-http"], &oras);
    assert!(said.contains("--plain-http is for --push"), "{said}");
    assert!(
        std::fs::read_dir(dir.path()).expect("dist").next().is_none(),
        "release.sh wrote into DIST before refusing"
    );
}
