//! Rendering a chart the way helm-controller does: the real `helm` binary (Helm 3 or Helm 4) with Flux's
//! release name, namespace and values, and Flux's post-render chain (kustomize postRenderers through the
//! kustomize that kubectl embeds, then commonMetadata, then the origin labels).

pub mod early;
pub mod helm;
pub mod metadata;
pub mod postrender;

pub use helm::Helm;
pub use postrender::{PostRenderSpec, check_show_only, filter_show_only};

/// The kubectl whose embedded kustomize runs Flux's postRenderers: $COZYHR_KUBECTL, else kubectl on PATH.
pub fn locate_kubectl() -> Result<std::path::PathBuf, RenderError> {
    if let Some(k) = std::env::var_os("COZYHR_KUBECTL").filter(|v| !v.is_empty()) {
        return Ok(k.into());
    }
    which::which("kubectl").map_err(|_| RenderError::Missing {
        program: "kubectl",
        hint: "it runs kustomize for Flux's post-rendering: install kubectl or set COZYHR_KUBECTL",
    })
}

pub use crate::error::RenderError;

/// Helm's `--values FILE` for each file, then `--set EXPR` for each expression, in order (later wins).
pub fn values_args(files: &[std::path::PathBuf], sets: &[String]) -> Vec<std::ffi::OsString> {
    let files = files.iter().flat_map(|f| ["--values".into(), f.as_os_str().to_owned()]);
    files.chain(sets.iter().flat_map(|s| ["--set".into(), s.into()])).collect()
}
use crate::process::finish_program;

/// What a chart sees of the cluster while Helm renders it: `.Capabilities`, `lookup` and `.Release`.
/// [`ClusterView::default`] is plain `helm template`: Helm's built-in capabilities, lookup answering
/// nothing, an install.
#[derive(Debug, Clone, Default)]
pub struct ClusterView {
    /// `.Capabilities.KubeVersion`: the server's version (None: Helm's built-in default).
    pub kube_version: Option<String>,
    /// `.Capabilities.APIVersions`: what the server serves, added to Helm's built-in list.
    pub api_versions: Vec<String>,
    /// helm's flags for the cluster that answers `lookup` (None: lookup answers nothing). helm then
    /// renders with `--dry-run=server`: on Helm 3 that only lets lookups through; Helm 4 also asks the
    /// cluster for its capabilities itself (so the two above do not matter there).
    pub lookup: Option<Vec<std::ffi::OsString>>,
    /// Render as an upgrade (`.Release.IsUpgrade`), as helm-controller does when a release is stored.
    pub is_upgrade: bool,
    /// `.Release.Revision` of that action (0 or 1: what `helm template` renders anyway).
    pub revision: i64,
}

impl ClusterView {
    /// helm's flags for this view.
    fn helm_args(&self) -> Vec<std::ffi::OsString> {
        let mut args: Vec<std::ffi::OsString> = Vec::new();
        if self.is_upgrade {
            args.push("--is-upgrade".into());
        }
        if let Some(v) = &self.kube_version {
            args.push(format!("--kube-version={v}").into());
        }
        // One flag each: a cluster with many CRDs makes a list longer than one argument may be.
        args.extend(self.api_versions.iter().map(|v| format!("--api-versions={v}").into()));
        if let Some(cluster) = &self.lookup {
            args.push("--dry-run=server".into());
            // helm-controller adopts existing objects on install unless told not to; Helm 4's server dry
            // run of an install would otherwise refuse objects that exist without Helm's labels.
            if !self.is_upgrade {
                args.push("--take-ownership".into());
            }
            args.extend(cluster.iter().cloned());
        }
        args
    }
}

/// One `helm template` invocation.
#[derive(Debug)]
pub struct TemplateRequest<'a> {
    pub chart_dir: &'a std::path::Path,
    pub release_name: &'a str,
    pub namespace: &'a str,
    /// Values given on helm's standard input (`--values -`), lowest precedence; never written to a file.
    pub values_stdin: Option<&'a [u8]>,
    /// Values files, lowest precedence first (`-f`), after the standard input's.
    pub values_files: Vec<std::path::PathBuf>,
    /// `--set` expressions, applied by Helm after the files.
    pub sets: Vec<String>,
    /// What the chart sees of the cluster.
    pub view: &'a ClusterView,
}

/// Renders the chart with `helm template`; with a post-render session, through Flux's chain.
pub async fn template(
    helm: &Helm,
    req: &TemplateRequest<'_>,
    post_render: Option<&postrender::PostRenderSession>,
) -> Result<String, RenderError> {
    render(helm, req, post_render, None).await
}

/// [`template`] without a post-render session, using the helm that `early` started if it was started with
/// exactly this request's arguments (see [`early`]).
pub async fn template_early(
    helm: &Helm,
    req: &TemplateRequest<'_>,
    early: early::Early,
) -> Result<String, RenderError> {
    render(helm, req, None, Some(early)).await
}

async fn render(
    helm: &Helm,
    req: &TemplateRequest<'_>,
    post_render: Option<&postrender::PostRenderSession>,
    early: Option<early::Early>,
) -> Result<String, RenderError> {
    // helm template renders revision 1 whatever it is told: a later revision is written into a copy.
    let revised = if req.view.revision > 1 {
        crate::chart::at_revision(req.chart_dir, req.view.revision).map_err(|e| {
            RenderError::Io(std::io::Error::new(
                e.kind(),
                format!(
                    "copying the chart to write .Release.Revision into it: {e} (is the temporary directory writable?)"
                ),
            ))
        })?
    } else {
        None
    };
    let chart_dir = revised.as_ref().map_or(req.chart_dir, |d| d.path());
    let mut args: Vec<std::ffi::OsString> = vec![
        "template".into(),
        req.release_name.into(),
        chart_dir.as_os_str().to_owned(),
        "--namespace".into(),
        req.namespace.into(),
    ];
    args.extend(req.view.helm_args());
    if req.values_stdin.is_some() {
        args.push("--values".into());
        args.push("-".into());
    }
    args.extend(values_args(&req.values_files, &req.sets));
    let mut envs = Vec::new();
    if let Some(pr) = post_render {
        args.extend(pr.helm_args(helm.major)?);
        envs.extend(pr.helm_env(helm.major));
    }
    // A private copy of the chart has a new path each time: no later run can guess it. `--set`s carry
    // values, which are never kept.
    let mut early = early.map(|e| e.remembering(revised.is_none() && req.sets.is_empty()));
    let started = match early.as_mut().and_then(|e| e.take_if_started_with(&args)) {
        Some(running) => Ok(running),
        None => helm.spawn(&args, &envs, req.values_stdin.is_some()),
    };
    let out = match started {
        Ok(running) => finish_program(running, req.values_stdin, std::future::pending()).await,
        Err(e) => Err(e),
    };
    match out {
        Ok(out) => {
            if let Some(e) = early {
                e.remember(&args);
            }
            String::from_utf8(out).map_err(|e| RenderError::PostRender(format!("helm printed invalid UTF-8: {e}")))
        }
        // Helm 4 reports only "plugin exited with error": put the post-renderer's own message first.
        Err(RenderError::Failed { stderr, .. }) => match post_render.and_then(|p| p.error_log()) {
            Some(log) => Err(RenderError::Failed { program: "helm".into(), stderr: format!("{log}\n{stderr}") }),
            None => Err(RenderError::Failed { program: "helm".into(), stderr }),
        },
        Err(e) => Err(e),
    }
}
