//! The programs a rendering runs, found once per command by the binary that runs it: helm, this
//! executable (which Helm runs as Flux's post-renderer), and kubectl (whose embedded kustomize runs a
//! HelmRelease's postRenderers and, without a kustomize binary, a fleet's Kustomizations).
//!
//! kubectl is looked for at once but asked for only where it is needed ([`Tools::kubectl`]): a chart
//! without postRenderers renders without one, and a command that needs one says how to get it.

use std::path::{Path, PathBuf};

use super::Helm;
use crate::support::error::{Error, RenderError, Result};

/// The variable that names the kubectl to run instead of the one on PATH.
const KUBECTL_ENV: &str = "COZYHR_KUBECTL";

/// helm, this executable and kubectl, as found.
#[derive(Debug, Clone)]
pub struct Tools {
    pub helm: Helm,
    /// This executable, which Helm runs as the post-renderer when the chain cannot run in process.
    pub self_exe: PathBuf,
    /// `$COZYHR_KUBECTL`, else kubectl on PATH; None when neither is there.
    kubectl: Option<PathBuf>,
}

impl Tools {
    /// Finds this executable and helm (an error when either cannot be had: nothing renders without them),
    /// and kubectl when there is one.
    pub async fn locate() -> Result<Tools> {
        let self_exe = self_exe()?;
        let helm = Helm::locate().await?;
        Ok(Tools { helm, self_exe, kubectl: find_kubectl() })
    }

    /// The kubectl whose kustomize runs postRenderers; an error saying how to get one when there is none.
    pub fn kubectl(&self) -> std::result::Result<PathBuf, RenderError> {
        self.kubectl.clone().ok_or(RenderError::Missing {
            program: "kubectl",
            hint: "it runs kustomize (Flux's post-rendering, a fleet's Kustomizations): install kubectl or set COZYHR_KUBECTL",
        })
    }

    /// The kubectl found, if any.
    pub fn kubectl_found(&self) -> Option<&Path> {
        self.kubectl.as_deref()
    }
}

fn find_kubectl() -> Option<PathBuf> {
    if let Some(k) = std::env::var_os(KUBECTL_ENV).filter(|v| !v.is_empty()) {
        return Some(k.into());
    }
    which::which("kubectl").ok()
}

/// This executable, which Helm runs as the post-renderer.
fn self_exe() -> Result<PathBuf> {
    std::env::current_exe().map_err(|e| {
        Error::Failed(format!(
            "cannot find this program's own path ({e}), which Helm runs as Flux's post-renderer: run it by its full path"
        ))
    })
}
