//! Signed Helm plugin archives: `scripts/release.sh --sign KEY` with a throw-away GnuPG key made here
//! writes a .prov per Helm archive and the public key ring; the real Helm 4 installs the archive over
//! http with `--keyring` and its default verification (no --verify=false) and says whose signature it
//! checked, refuses a tampered archive and a signature by a key not in the ring, and the real Helm 3
//! installs the same archive. An unsigned release needs --verify=false on Helm 4, as the README says.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cozyhr_e2e::{Helm, HelmHome, Run, ServedRelease, run};

const SIGNER: &str = "cozyhr e2e signer <signer@cozyhr.invalid>";

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
    std::fs::create_dir_all(h.dir.path().join("data/plugins")).expect("mkdir plugins");
    h
}

fn installed(h: &HelmHome) -> bool {
    h.run(["plugin", "list"]).ok().stdout.lines().any(|l| l.split_whitespace().next() == Some("cozy"))
}

fn said(r: &Run) -> String {
    format!("{}{}", r.stdout, r.stderr)
}

#[test]
fn helm4_verifies_a_signed_archive_with_the_shipped_keyring_and_helm3_installs_it() {
    let gpg = Gpg::new(SIGNER);
    let rel = ServedRelease::new(&["--sign", "signer@cozyhr.invalid"], &[("GNUPGHOME", gpg.path())]);
    let archive = rel.archive("helm-cozy");
    let keyring: PathBuf = rel.path("cozyhr-keyring.gpg");
    assert!(keyring.is_file(), "release.sh --sign ships no cozyhr-keyring.gpg");

    // The .prov is Helm's format: clear-signed with SHA512, the metadata, `...`, and the archive's sum
    // under its file name.
    let prov = std::fs::read_to_string(rel.path(&format!("{archive}.prov"))).expect("release.sh --sign writes a .prov");
    let sum = {
        let sums = std::fs::read_to_string(rel.path("SHA256SUMS")).expect("SHA256SUMS");
        sums.lines().find_map(|l| l.strip_suffix(&format!("  {archive}")).map(str::to_string)).expect("its sum")
    };
    assert!(prov.starts_with("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\n"), "{prov}");
    assert!(prov.contains(&format!("\n...\nfiles:\n  {archive}: sha256:{sum}\n")), "{prov}");
    assert!(prov.contains("name: cozy\n"), "the metadata part names the plugin:\n{prov}");
    let url = format!("{}/{archive}", rel.url);
    let keyring_arg = keyring.to_string_lossy().into_owned();

    // Helm 4 verifies the archive with the shipped key ring, by default.
    let h4 = home(Helm::V4);
    let install = h4.run(["plugin", "install", &url, "--keyring", &keyring_arg]).ok();
    let out = said(&install);
    assert!(out.contains("Verifying plugin signature"), "Helm 4 verified nothing:\n{out}");
    assert!(out.contains(&format!("Plugin Hash Verified: sha256:{sum}")), "{out}");
    assert!(out.contains("Signed by: cozyhr e2e signer"), "{out}");
    assert!(installed(&h4), "Helm 4 does not list the verified plugin");
    let version = h4.run(["cozy", "version"]).ok();
    assert_eq!(version.stdout.lines().next().unwrap_or_default(), format!("helm-cozy {}", rel.version));
    // `helm plugin verify` agrees about the archive as downloaded.
    h4.run(["plugin", "verify", &rel.path(&archive).to_string_lossy(), "--keyring", &keyring_arg]).ok();

    // Helm 3 does not verify plugins and installs the same archive, .prov beside it or not.
    let h3 = home(Helm::V3);
    h3.run(["plugin", "install", &url]).ok();
    assert!(installed(&h3), "Helm 3 does not list the plugin");
    assert_eq!(
        h3.run(["cozy", "version"]).ok().stdout.lines().next().unwrap_or_default(),
        format!("helm-cozy {}", rel.version)
    );

    // A key ring without the signer's key: refused.
    let stranger = Gpg::new("someone else <else@cozyhr.invalid>");
    let other_ring = stranger.path().join("other.gpg");
    stranger
        .run(&["--batch", "--yes", "--export", "--output", &other_ring.to_string_lossy(), "else@cozyhr.invalid"])
        .ok();
    let h = home(Helm::V4);
    let refused = h.run(["plugin", "install", &url, "--keyring", &other_ring.to_string_lossy()]);
    assert_ne!(
        refused.code,
        Some(0),
        "Helm 4 installed an archive signed by a key not in its key ring:\n{}",
        said(&refused)
    );
    assert!(!installed(&h), "a plugin signed by an unknown key was installed");

    // A tampered archive (the .prov no longer matches): refused.
    let mut bytes = std::fs::read(rel.path(&archive)).expect("archive");
    bytes.push(0);
    std::fs::write(rel.path(&archive), bytes).expect("tamper");
    let h = home(Helm::V4);
    let refused = h.run(["plugin", "install", &url, "--keyring", &keyring_arg]);
    assert_ne!(refused.code, Some(0), "Helm 4 installed a tampered archive:\n{}", said(&refused));
    assert!(said(&refused).contains("sha256 sum does not match"), "Helm 4 said:\n{}", said(&refused));
    assert!(!installed(&h), "a tampered plugin was installed");
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
    assert_ne!(refused.code, Some(0), "Helm 4 installed an unsigned archive with verification on");
    assert!(said(&refused).contains("no provenance file"), "Helm 4 said:\n{}", said(&refused));
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
