//! The program that runs kustomize for a fleet's builds: the `kustomize` binary when it is the kustomize
//! kustomize-controller builds with (v5.8, kustomize-controller v1.9's; it starts in a fraction of
//! kubectl's time, and a review of a fleet runs one build per Kustomization), else the kustomize kubectl
//! embeds (`kubectl kustomize`; v5.8.1 in kubectl 1.37).
//!
//! `COZYHR_KUSTOMIZE` names the binary (taken as it is); else `kustomize` on the PATH is asked its
//! version once and taken only at v5.8; else kubectl (`COZYHR_KUBECTL`, else on the PATH).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::support::error::RenderError;

/// The kustomize a standalone binary must be to be taken from the PATH: the minor version
/// kustomize-controller v1.9 pins.
const PINNED: &str = "v5.8.";

/// A program that builds a kustomization directory.
#[derive(Debug, Clone)]
pub struct Kustomizer {
    program: PathBuf,
    embedded: bool,
}

impl Kustomizer {
    /// The kustomize to build with (see the module's docs); `tools`' kubectl when there is no other.
    pub async fn locate(tools: &crate::render::Tools) -> Result<Kustomizer, RenderError> {
        if let Some(k) = std::env::var_os("COZYHR_KUSTOMIZE").filter(|v| !v.is_empty()) {
            // Named by a path or looked up on the PATH as a command is; missing, it is said once here
            // rather than in a failed row per Kustomization.
            let program = which::which(&k).map_err(|_| RenderError::Missing {
                program: "COZYHR_KUSTOMIZE's kustomize",
                hint: "set COZYHR_KUSTOMIZE to a kustomize binary (v5.8), or unset it to use kubectl's",
            })?;
            return Ok(Kustomizer { program, embedded: false });
        }
        if let Ok(k) = which::which("kustomize") {
            let version = crate::support::process::run_program(&k, &["version".into()], &[], None).await;
            if version.is_ok_and(|v| String::from_utf8_lossy(&v).trim().starts_with(PINNED)) {
                return Ok(Kustomizer { program: k, embedded: false });
            }
        }
        Ok(Kustomizer { program: tools.kubectl()?, embedded: true })
    }

    /// The program run.
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// Its arguments to build `dir` as kustomize-controller does (load restrictions off).
    pub fn args(&self, dir: &Path) -> Vec<OsString> {
        let verb = if self.embedded { "kustomize" } else { "build" };
        [verb, "--load-restrictor", "LoadRestrictionsNone"]
            .into_iter()
            .map(OsString::from)
            .chain([dir.into()])
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_and_kustomize_are_asked_alike() {
        let dir = Path::new("/tmp/apps");
        assert_eq!(
            Kustomizer { program: "kubectl".into(), embedded: true }.args(dir),
            ["kustomize", "--load-restrictor", "LoadRestrictionsNone", "/tmp/apps"].map(OsString::from)
        );
        let standalone = Kustomizer { program: "kustomize".into(), embedded: false };
        assert_eq!(
            standalone.args(dir),
            ["build", "--load-restrictor", "LoadRestrictionsNone", "/tmp/apps"].map(OsString::from)
        );
    }
}
