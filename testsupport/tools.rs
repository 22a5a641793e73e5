//! The real programs hermetic tests of `helm cozy` run: Helm 3, Helm 4 and kubectl as scripts/tools.sh
//! builds them (HELM3, HELM4 and KUBECTL when set, else `scripts/tools.sh env` is asked), and git. A
//! missing one fails with how to get it.

#![allow(dead_code)] // each test binary uses its own part of this

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The real programs these tests need.
pub struct Tools {
    pub helm3: PathBuf,
    pub helm4: PathBuf,
    pub kubectl: PathBuf,
    pub git: PathBuf,
}

pub fn tools() -> &'static Tools {
    static TOOLS: OnceLock<Tools> = OnceLock::new();
    TOOLS.get_or_init(|| {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/tools.sh");
        let mut exported = std::collections::BTreeMap::new();
        let wanted = ["HELM3", "HELM4", "KUBECTL"];
        if wanted.iter().any(|k| std::env::var_os(k).is_none()) {
            let out = Command::new(&script).arg("env").output().unwrap_or_else(|e| {
                panic!("cannot run {}: {e}; build the tools with scripts/tools.sh build", script.display())
            });
            assert!(
                out.status.success(),
                "scripts/tools.sh env failed: {}\nbuild Helm 3, Helm 4 and kubectl with `scripts/tools.sh build` (needs Go >= 1.26), or set HELM3, HELM4 and KUBECTL",
                String::from_utf8_lossy(&out.stderr).trim()
            );
            for line in String::from_utf8_lossy(&out.stdout).lines() {
                if let Some((k, v)) = line.strip_prefix("export ").and_then(|l| l.split_once('=')) {
                    exported.insert(k.to_string(), v.trim_matches(['"', '\'']).to_string());
                }
            }
        }
        let tool = |name: &str| -> PathBuf {
            let path = std::env::var_os(name)
                .map(PathBuf::from)
                .or_else(|| exported.get(name).map(PathBuf::from))
                .unwrap_or_else(|| panic!("{name} is not set and scripts/tools.sh env does not give it"));
            assert!(path.is_file(), "{name}={} does not exist: run scripts/tools.sh build", path.display());
            path
        };
        let git = std::env::var_os("PATH")
            .and_then(|p| std::env::split_paths(&p).map(|d| d.join("git")).find(|g| g.is_file()))
            .expect("git is not on PATH: install git (Debian: apt-get install git)");
        Tools { helm3: tool("HELM3"), helm4: tool("HELM4"), kubectl: tool("KUBECTL"), git }
    })
}

#[derive(Clone, Copy, Debug)]
pub enum Helm {
    V3,
    V4,
}

impl Helm {
    pub fn bin(self) -> &'static Path {
        match self {
            Helm::V3 => &tools().helm3,
            Helm::V4 => &tools().helm4,
        }
    }
}
