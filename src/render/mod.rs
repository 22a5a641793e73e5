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

/// A future that resolves with the signal's name when the process gets SIGINT or SIGTERM. The handlers
/// are installed when this is called, not when the future is first polled: from then on the signals no
/// longer kill the process, so whoever awaits the future decides how to stop (and what to clean up).
pub fn interrupted() -> impl std::future::Future<Output = String> {
    #[cfg(unix)]
    let streams = {
        use tokio::signal::unix::{SignalKind, signal};
        (signal(SignalKind::interrupt()), signal(SignalKind::terminate()))
    };
    async move {
        #[cfg(unix)]
        if let (Ok(mut int), Ok(mut term)) = streams {
            return tokio::select! {
                _ = int.recv() => "SIGINT".to_string(),
                _ = term.recv() => "SIGTERM".to_string(),
            };
        }
        let _ = tokio::signal::ctrl_c().await;
        "SIGINT".to_string()
    }
}

/// Runs a program with an argument vector (never through a shell), feeding `stdin`, and returns stdout.
/// A non-zero exit becomes [`RenderError::Failed`] carrying the program's stderr.
pub async fn run_program(
    program: &std::path::Path,
    args: &[std::ffi::OsString],
    envs: &[(String, std::ffi::OsString)],
    stdin: Option<&[u8]>,
) -> Result<Vec<u8>, RenderError> {
    run_program_until(program, args, envs, stdin, std::future::pending()).await
}

/// How long a program asked to stop may take to clean up (Helm marks its release failed) before it is
/// killed.
const GRACE: std::time::Duration = std::time::Duration::from_secs(30);

/// [`run_program`], stopped gracefully when `cancel` resolves (with the signal's name): the child gets
/// SIGTERM and up to `GRACE` to finish, so that Helm records the release as failed instead of leaving it
/// pending, and callers still run their own clean-up after it.
pub async fn run_program_until(
    program: &std::path::Path,
    args: &[std::ffi::OsString],
    envs: &[(String, std::ffi::OsString)],
    stdin: Option<&[u8]>,
    cancel: impl std::future::Future<Output = String>,
) -> Result<Vec<u8>, RenderError> {
    let child = spawn_program(program, args, envs, stdin.is_some())?;
    finish_program(child, stdin, cancel).await
}

/// A started program whose output is collected by [`finish_program`].
pub(crate) struct Running {
    name: String,
    child: tokio::process::Child,
}

/// Starts a program with an argument vector (never through a shell), stdout and stderr piped, stdin piped
/// when `stdin` (else empty). Dropping the result kills the program.
pub(crate) fn spawn_program(
    program: &std::path::Path,
    args: &[std::ffi::OsString],
    envs: &[(String, std::ffi::OsString)],
    stdin: bool,
) -> Result<Running, RenderError> {
    let name = program.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args)
        .envs(envs.iter().map(|(k, v)| (k, v)))
        .stdin(if stdin { std::process::Stdio::piped() } else { std::process::Stdio::null() })
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        // Ctrl-C or an error in the caller drops the future: do not leave the child running.
        .kill_on_drop(true);
    // Only the subcommand: arguments can carry values (`--set`), which are never logged.
    tracing::debug!(program = %program.display(), command = ?args.first(), "running");
    let child = cmd.spawn().map_err(|reason| RenderError::Spawn { program: program.display().to_string(), reason })?;
    Ok(Running { name, child })
}

/// Feeds a started program `stdin` (then closes it) and waits for it; see [`run_program_until`].
pub(crate) async fn finish_program(
    running: Running,
    stdin: Option<&[u8]>,
    cancel: impl std::future::Future<Output = String>,
) -> Result<Vec<u8>, RenderError> {
    use tokio::io::AsyncWriteExt;
    let Running { name, mut child } = running;
    if let Some(input) = stdin {
        let mut pipe = child.stdin.take().ok_or_else(|| RenderError::PostRender("stdin not piped".into()))?;
        let input = input.to_vec();
        // Write from a task so a child that fills its stdout pipe before reading all input cannot deadlock us.
        tokio::spawn(async move {
            let _ = pipe.write_all(&input).await;
        });
    }
    let pid = child.id();
    let output = child.wait_with_output();
    tokio::pin!(output);
    let out = tokio::select! {
        out = &mut output => out?,
        signal = cancel => {
            if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
                // SAFETY: kill(2) on the pid of our own child, which we have not reaped yet.
                unsafe {
                    libc::kill(pid, libc::SIGTERM);
                }
            }
            let detail = match tokio::time::timeout(GRACE, &mut output).await {
                Ok(Ok(out)) => {
                    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
                    if stderr.is_empty() { String::new() } else { format!(" ({name}: {stderr})") }
                }
                // Still running after the grace period: dropping the future kills it (kill_on_drop).
                _ => format!(" ({name} did not stop within {}s and was killed)", GRACE.as_secs()),
            };
            return Err(RenderError::Interrupted { signal, detail });
        }
    };
    tracing::debug!(program = %name, status = %out.status, "finished");
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
        let stderr = match out.status.code() {
            _ if !stderr.is_empty() => stderr,
            Some(code) => format!("exited with code {code} and printed nothing on stderr"),
            None => format!("ended by {}", out.status),
        };
        return Err(RenderError::Failed { program: name, stderr });
    }
    Ok(out.stdout)
}

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
    for f in &req.values_files {
        args.push("--values".into());
        args.push(f.as_os_str().to_owned());
    }
    for s in &req.sets {
        args.push("--set".into());
        args.push(s.into());
    }
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
        None => spawn_program(&helm.bin, &args, &envs, req.values_stdin.is_some()),
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
