//! Finding and driving the real `helm` binary.
//!
//! Under `helm cozy`, Helm sets HELM_BIN to itself; standalone we look `helm` up on PATH. Helm 3 and Helm 4
//! take a post-renderer differently (an executable path vs. a plugin name), which [`Helm::major`] decides.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::support::error::RenderError;
use crate::support::process::{Running, spawn_program};

#[derive(Debug, Clone)]
pub struct Helm {
    pub bin: PathBuf,
    /// The version as Helm prints it, e.g. "v3.22.0".
    pub version: String,
    pub major: u32,
}

/// The environment variable that names the Helm to render and install with, whatever runs helm cozy
/// (see [`crate::controller::helm_sdk`] for why one would).
pub const HELM_ENV: &str = "COZYHR_HELM";

/// Helm 3.8 is the oldest that runs our plugin manifest and `--post-renderer-args` (3.9 for the latter is
/// only needed by our Helm 3 path; 3.8 users get a clear error from Helm). We require 3.9.
const MIN_HELM: (u32, u32) = (3, 9);

impl Helm {
    /// `$COZYHR_HELM` (a Helm chosen to render as helm-controller's does, under either plugin), else
    /// `$HELM_BIN` when run by Helm as a plugin, else `helm` on PATH.
    pub async fn locate() -> Result<Helm, RenderError> {
        if let Some(b) = std::env::var_os(HELM_ENV).filter(|v| !v.is_empty()) {
            return Self::check(which::which(&b).unwrap_or_else(|_| PathBuf::from(b)), Some(HELM_ENV)).await;
        }
        let bin = match std::env::var_os("HELM_BIN").filter(|v| !v.is_empty()) {
            // Helm sets HELM_BIN to os.Args[0], which may be a bare "helm": resolve it on PATH.
            Some(b) => {
                return Self::check(which::which(&b).unwrap_or_else(|_| PathBuf::from(b)), Some("HELM_BIN")).await;
            }
            None => which::which("helm").map_err(|_| RenderError::Missing {
                program: "helm",
                hint: "install Helm 3.9+ or Helm 4 (https://helm.sh/docs/intro/install/) or set HELM_BIN",
            })?,
        };
        Self::at(bin).await
    }

    /// A specific helm binary; asks it for its version (remembered per binary, see `version_cache`).
    pub async fn at(bin: PathBuf) -> Result<Helm, RenderError> {
        Self::check(bin, None).await
    }

    /// [`at`](Self::at), with whether HELM_BIN named the binary, for what to do when it does not work.
    async fn check(bin: PathBuf, from_env: Option<&'static str>) -> Result<Helm, RenderError> {
        let bad = |what, reason| RenderError::BadHelm { what, bin: bin.clone(), from_env, reason };
        let version = match version_cache::lookup(&bin) {
            Some(v) => v,
            None => {
                let args = ["version".into(), "--template".into(), "{{.Version}}".into()];
                let out = crate::support::process::run_program(&bin, &args, &[], None).await.map_err(|e| match e {
                    RenderError::Spawn { reason, .. } => bad("cannot run helm", reason.to_string()),
                    RenderError::Failed { stderr, .. } => bad("`helm version` failed with", stderr),
                    other => other,
                })?;
                let version = String::from_utf8_lossy(&out).trim().to_string();
                if parse_version(&version).is_some() {
                    version_cache::store(&bin, &version);
                }
                version
            }
        };
        let (major, minor) = parse_version(&version)
            .ok_or_else(|| bad("`helm version` gave no version with", format!("it printed {version:?}")))?;
        if (major, minor) < MIN_HELM {
            return Err(RenderError::TooOld { program: "helm", version, needed: "v3.9" });
        }
        Ok(Helm { bin, version, major })
    }

    /// Runs helm with the given arguments and extra environment; returns stdout.
    pub async fn run(&self, args: &[OsString], envs: &[(String, OsString)]) -> Result<Vec<u8>, RenderError> {
        self.run_until(args, envs, std::future::pending()).await
    }

    /// [`run`](Self::run), stopped gracefully when `cancel` resolves.
    pub async fn run_until(
        &self,
        args: &[OsString],
        envs: &[(String, OsString)],
        cancel: impl std::future::Future<Output = String>,
    ) -> Result<Vec<u8>, RenderError> {
        let running = self.spawn(args, envs, false)?;
        crate::support::process::finish_program(running, None, cancel).await.map_err(|e| match e {
            RenderError::Failed { stderr, .. } => RenderError::Failed { program: "helm".into(), stderr },
            other => other,
        })
    }

    /// Starts helm (stdin piped when `stdin`) with the extra environment and [`GO_GC`]; every helm that
    /// cozyhr runs starts here.
    pub(crate) fn spawn(
        &self,
        args: &[OsString],
        envs: &[(String, OsString)],
        stdin: bool,
    ) -> Result<Running, RenderError> {
        let mut all = go_gc();
        all.extend(envs.iter().cloned());
        spawn_program(&self.bin, args, &all, CLUSTER_OVERRIDES, stdin)
    }

    pub fn path(&self) -> &Path {
        &self.bin
    }
}

/// The version of each helm binary seen, so that a command does not start helm once more just to ask
/// (a helm start is ~50-100 ms, as long as rendering a mid-sized chart). A binary is known by its path,
/// size and modification time: an upgrade in place changes those. The cache is a small text file under
/// `$XDG_CACHE_HOME/cozyhr` (else `~/.cache/cozyhr`); any trouble with it just means asking helm.
mod version_cache {
    use std::path::{Path, PathBuf};
    use std::time::UNIX_EPOCH;

    const FILE: &str = "helm-versions";
    /// Binaries remembered; the oldest entry goes first.
    const KEEP: usize = 16;

    fn file() -> Option<PathBuf> {
        Some(crate::support::cache::dir()?.join(FILE))
    }

    /// `path \t size \t mtime-ns`: what identifies this build of the binary.
    fn key(bin: &Path) -> Option<String> {
        let path = std::fs::canonicalize(bin).ok()?;
        let meta = std::fs::metadata(&path).ok()?;
        let mtime = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?.as_nanos();
        let path = path.to_str()?;
        (!path.contains(['\t', '\n'])).then(|| format!("{path}\t{}\t{mtime}", meta.len()))
    }

    pub fn lookup(bin: &Path) -> Option<String> {
        let key = key(bin)?;
        let text = std::fs::read_to_string(file()?).ok()?;
        text.lines().find_map(|l| l.rsplit_once('\t').filter(|(k, _)| *k == key).map(|(_, v)| v.to_string()))
    }

    pub fn store(bin: &Path, version: &str) {
        let (Some(key), Some(file)) = (key(bin), file()) else { return };
        let old = std::fs::read_to_string(&file).unwrap_or_default();
        let mut lines: Vec<&str> = old.lines().filter(|l| !l.starts_with(&format!("{key}\t"))).collect();
        let entry = format!("{key}\t{version}");
        lines.push(&entry);
        let start = lines.len().saturating_sub(KEEP);
        let mut text = lines[start..].join("\n");
        text.push('\n');
        crate::support::cache::write(&file, text.as_bytes());
    }
}

/// Helm's environment variables that override the kubeconfig's server, credentials and identity (what
/// `helm --kube-apiserver`, `--kube-token`, `--kube-as-user`… hand a plugin). cozyhr resolves the cluster
/// as kubectl does, from the kubeconfig and context alone, and tells helm which (`Cluster::helm_args`):
/// left in helm's environment they would send helm to another server, or as another user, than the one
/// cozyhr itself reads and checks; for a release's own cluster (`spec.kubeConfig`) that could be the
/// wrong cluster.
const CLUSTER_OVERRIDES: &[&str] = &[
    "HELM_KUBEAPISERVER",
    "HELM_KUBETOKEN",
    "HELM_KUBEASUSER",
    "HELM_KUBEASGROUPS",
    "HELM_KUBECAFILE",
    "HELM_KUBEINSECURE_SKIP_TLS_VERIFY",
    "HELM_KUBETLS_SERVER_NAME",
];

/// Go's garbage collector target for the helm processes cozyhr starts, unless the user set `GOGC`.
///
/// Each helm here is a batch process that lives a fraction of a second to a few minutes and then exits,
/// handing its memory back at once. At Go's default (100: collect when the heap doubles) `helm template`
/// of a 1000-object chart spends about a fifth of its CPU time collecting garbage beside the rendering,
/// on cores that cozyhr and the API server share with it; at 400 the heap may grow to five times what is
/// live before a collection (peak 52 → 68 MiB there) and helm finishes about 9 % sooner. Output is the
/// same: the collector decides when memory is freed, nothing else. See docs/benchmarks.md.
pub const GO_GC: &str = "400";

/// `GOGC=`[`GO_GC`] for helm's environment, or nothing when the user chose a `GOGC` (helm inherits it).
fn go_gc() -> Vec<(String, OsString)> {
    if std::env::var_os("GOGC").is_some() { Vec::new() } else { vec![("GOGC".to_string(), GO_GC.into())] }
}

/// "v3.22.0" / "v4.3.1+g1234" → (major, minor).
fn parse_version(v: &str) -> Option<(u32, u32)> {
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
