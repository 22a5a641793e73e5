//! Finding and driving the real `helm` binary.
//!
//! Under `helm cozy`, Helm sets HELM_BIN to itself; standalone we look `helm` up on PATH. Helm 3 and Helm 4
//! take a post-renderer differently (an executable path vs. a plugin name), which [`Helm::major`] decides.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::{RenderError, run_program};

#[derive(Debug, Clone)]
pub struct Helm {
    pub bin: PathBuf,
    /// The version as Helm prints it, e.g. "v3.22.0".
    pub version: String,
    pub major: u32,
}

/// Helm 3.8 is the oldest that runs our plugin manifest and `--post-renderer-args` (3.9 for the latter is
/// only needed by our Helm 3 path; 3.8 users get a clear error from Helm). We require 3.9.
const MIN_HELM: (u32, u32) = (3, 9);

impl Helm {
    /// `$HELM_BIN` when run by Helm as a plugin, else `helm` on PATH.
    pub async fn locate() -> Result<Helm, RenderError> {
        let bin = match std::env::var_os("HELM_BIN").filter(|v| !v.is_empty()) {
            // Helm sets HELM_BIN to os.Args[0], which may be a bare "helm": resolve it on PATH.
            Some(b) => which::which(&b).unwrap_or_else(|_| PathBuf::from(b)),
            None => which::which("helm").map_err(|_| RenderError::Missing {
                program: "helm",
                hint: "install Helm 3.9+ or Helm 4 (https://helm.sh/docs/intro/install/) or set HELM_BIN",
            })?,
        };
        Self::at(bin).await
    }

    /// A specific helm binary; asks it for its version.
    pub async fn at(bin: PathBuf) -> Result<Helm, RenderError> {
        let out = run_program(&bin, &["version".into(), "--template".into(), "{{.Version}}".into()], &[], None).await?;
        let version = String::from_utf8_lossy(&out).trim().to_string();
        let (major, minor) = parse_version(&version).ok_or_else(|| RenderError::Failed {
            program: "helm version".into(),
            stderr: format!("unexpected version {version:?}"),
        })?;
        if (major, minor) < MIN_HELM {
            return Err(RenderError::TooOld { program: "helm", version, needed: "v3.9" });
        }
        Ok(Helm { bin, version, major })
    }

    /// Runs helm with the given arguments and extra environment; returns stdout.
    pub async fn run(&self, args: &[OsString], envs: &[(String, OsString)]) -> Result<Vec<u8>, RenderError> {
        run_program(&self.bin, args, envs, None).await.map_err(|e| match e {
            RenderError::Failed { stderr, .. } => RenderError::Failed { program: "helm".into(), stderr },
            other => other,
        })
    }

    /// [`run`](Self::run), stopped gracefully when `cancel` resolves.
    pub async fn run_until(
        &self,
        args: &[OsString],
        envs: &[(String, OsString)],
        cancel: impl std::future::Future<Output = String>,
    ) -> Result<Vec<u8>, RenderError> {
        super::run_program_until(&self.bin, args, envs, None, cancel).await.map_err(|e| match e {
            RenderError::Failed { stderr, .. } => RenderError::Failed { program: "helm".into(), stderr },
            other => other,
        })
    }

    pub fn path(&self) -> &Path {
        &self.bin
    }
}

/// "v3.22.0" / "v4.3.1+g1234" → (major, minor).
pub fn parse_version(v: &str) -> Option<(u32, u32)> {
    let mut it = v.trim().trim_start_matches('v').split(['.', '+', '-']);
    let major = it.next()?.parse().ok()?;
    let minor = it.next()?.parse().ok()?;
    Some((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(parse_version("v3.22.0"), Some((3, 22)));
        assert_eq!(parse_version("v4.3.1+gabc"), Some((4, 3)));
        assert_eq!(parse_version("v3.22"), Some((3, 22)));
        assert_eq!(parse_version("garbage"), None);
    }
}
