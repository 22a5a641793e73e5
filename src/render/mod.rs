//! Rendering a chart the way helm-controller does: the real `helm` binary (Helm 3 or Helm 4) with Flux's
//! release name, namespace and values, and Flux's post-render chain (kustomize postRenderers through the
//! kustomize that kubectl embeds, then commonMetadata, then the origin labels).

pub mod early;
pub mod helm;
pub mod metadata;
pub mod postrender;
pub mod tools;

pub use helm::Helm;
pub use postrender::{PostRenderSpec, check_show_only, filter_show_only};
pub use tools::Tools;

pub use crate::support::error::RenderError;

/// Helm's `--values FILE` for each file, then `--set EXPR` for each expression, in order (later wins).
pub fn values_args(files: &[std::path::PathBuf], sets: &[String]) -> Vec<std::ffi::OsString> {
    let files = files.iter().flat_map(|f| ["--values".into(), f.as_os_str().to_owned()]);
    files.chain(sets.iter().flat_map(|s| ["--set".into(), s.into()])).collect()
}
use crate::support::process::finish_program_watching;

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
    /// `--include-crds`: the CRDs of the chart's `crds/` directories (its own and its enabled
    /// subcharts') first, unrendered, each after a `# Source: CHART/crds/FILE` line.
    pub include_crds: bool,
    /// `--skip-schema-validation`: the values are not checked against the charts' values.schema.json, as
    /// helm-controller does not when the next action's `disableSchemaValidation` says so.
    pub skip_schema_validation: bool,
}

/// Renders the chart with `helm template`; with a post-render session, through Flux's chain.
pub async fn template(
    helm: &Helm,
    req: &TemplateRequest<'_>,
    post_render: Option<&postrender::PostRenderSession>,
) -> Result<String, RenderError> {
    render(helm, req, post_render, None, |_| {}).await
}

/// [`template`] without a post-render session: with the helm that `early` started if it was started with
/// exactly this request's arguments (see [`early`]), and with `on_quiet` shown helm's output as it stands
/// whenever it pauses before helm has exited (see [`Ahead`]).
pub async fn template_ahead(
    helm: &Helm,
    req: &TemplateRequest<'_>,
    early: Option<early::Early>,
    on_quiet: impl FnMut(&[u8]),
) -> Result<String, RenderError> {
    render(helm, req, None, early, on_quiet).await
}

/// Work on helm's output started before helm has exited. helm prints everything in one write and then
/// takes 5-15 ms to exit; only the exit says the output is complete. So whenever the output pauses (for a
/// millisecond: see `process::finish_program_watching`) `work` starts on a thread of its own on the output
/// so far, and its result is used only if that was the whole output (output only grows: the same length is
/// the same text). Whatever was started is waited for before this is dropped, used or not, so that work
/// which writes temporary files removes them on every path.
pub struct Ahead<R: Send + 'static> {
    work: std::sync::Arc<dyn Fn(String) -> R + Send + Sync>,
    started: Vec<(usize, std::thread::JoinHandle<R>)>,
}

impl<R: Send + 'static> Ahead<R> {
    pub fn new(work: impl Fn(String) -> R + Send + Sync + 'static) -> Ahead<R> {
        Ahead { work: std::sync::Arc::new(work), started: Vec::new() }
    }

    /// Starts the work on `so_far` (nothing when it is not UTF-8: helm's final output would not be either).
    pub fn start(&mut self, so_far: &[u8]) {
        let Ok(text) = std::str::from_utf8(so_far) else { return };
        let (work, text) = (self.work.clone(), text.to_owned());
        // Should no thread start, the output is worked on after helm's exit as without this.
        if let Ok(handle) = std::thread::Builder::new().name("ahead".into()).spawn(move || work(text)) {
            tracing::debug!(bytes = so_far.len(), "work started ahead on the output so far");
            self.started.push((so_far.len(), handle));
        }
    }

    /// The result of the work started on exactly `output`, if any (a panic in it counts as none).
    pub fn take(mut self, output: &str) -> Option<R> {
        let i = self.started.iter().rposition(|(len, _)| *len == output.len())?;
        let (_, handle) = self.started.swap_remove(i);
        handle.join().ok()
    }
}

impl<R: Send + 'static> Drop for Ahead<R> {
    fn drop(&mut self) {
        for (_, handle) in self.started.drain(..) {
            let _ = handle.join();
        }
    }
}

async fn render(
    helm: &Helm,
    req: &TemplateRequest<'_>,
    post_render: Option<&postrender::PostRenderSession>,
    early: Option<early::Early>,
    on_quiet: impl FnMut(&[u8]),
) -> Result<String, RenderError> {
    // helm template renders revision 1 whatever it is told: a later revision is written into a copy.
    let revised = if req.view.revision > 1 {
        crate::source::chart::at_revision(req.chart_dir, req.view.revision).map_err(|e| {
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
    if req.include_crds {
        args.push("--include-crds".into());
    }
    if req.skip_schema_validation {
        args.push("--skip-schema-validation".into());
    }
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
        Ok(running) => finish_program_watching(running, req.values_stdin, std::future::pending(), on_quiet).await,
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
            None => Err(template_error(&stderr)),
        },
        Err(e) => Err(e),
    }
}

/// Helm's hint after a render error, for its own `--debug` flag: helm cozy takes no such flag (`helm
/// --debug cozy` times its steps), so it is replaced by how to see the rendered YAML.
const HELMS_DEBUG_HINT: &str = "Use --debug flag to render out invalid YAML";

/// A chart that does not render, as one line: Helm's message without its `Error: ` (the line starts
/// with `error: ` already) and without its `--debug` hint, which is replaced by one that works here.
pub fn template_error(stderr: &str) -> RenderError {
    let line = one_line(stderr);
    let had_hint = line.contains(HELMS_DEBUG_HINT);
    let message = line.replace(HELMS_DEBUG_HINT, "");
    let message = message.trim();
    let message = message.strip_prefix("Error: ").unwrap_or(message).trim_end();
    if !had_hint {
        return RenderError::Template(message.to_string());
    }
    let command = crate::support::output::chart_command();
    RenderError::Template(format!(
        "{message} (to see the YAML the templates make: {command} values NAME > values.yaml, then helm template . -f values.yaml --debug)"
    ))
}

/// Helm's message on one line: some span several (a values schema's violations, one per line, under
/// the chart's name), and an error is one line. Helm's log lines before it (Helm 4's `level=INFO
/// msg="found symbolic link in path: ..."`, Helm 3's `walk.go:74: found symbolic link ...`) are not the
/// error, and name temporary paths: they are left out (unless nothing else is there).
fn one_line(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let message: Vec<&str> = lines.iter().copied().filter(|l| !is_log_line(l)).collect();
    if message.is_empty() { lines.join(" ") } else { message.join(" ") }
}

/// A line of Helm's logger rather than of its error: slog's text (`level=... msg=...`, with or without
/// `time=...` first) or Go's standard logger with file and line (`walk.go:74: ...`).
fn is_log_line(line: &str) -> bool {
    let slog = line.starts_with("level=") || (line.starts_with("time=") && line.contains(" level="));
    let go_log = line.split_once(": ").is_some_and(|(at, _)| {
        at.split_once(".go:").is_some_and(|(file, n)| {
            !file.is_empty() && !file.contains(' ') && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
        })
    });
    slog || go_log
}

#[cfg(test)]
mod tests {
    use super::Ahead;

    #[test]
    fn helms_errors_are_one_line() {
        let schema = "Error: values don't meet the specifications of the schema(s) in the following chart(s):\napp:\n- replicas: Invalid type. Expected: integer, given: string\n\n";
        assert_eq!(
            super::one_line(schema),
            "Error: values don't meet the specifications of the schema(s) in the following chart(s): app: - replicas: Invalid type. Expected: integer, given: string"
        );
    }

    #[test]
    fn a_render_error_is_helms_message_with_a_hint_that_works_here() {
        let helm3 = "Error: parse error at (app/templates/cm.yaml:3): unexpected \"}\" in operand\nUse --debug flag to render out invalid YAML\n";
        assert_eq!(
            super::template_error(helm3).to_string(),
            "parse error at (app/templates/cm.yaml:3): unexpected \"}\" in operand (to see the YAML the templates make: helm cozy values NAME > values.yaml, then helm template . -f values.yaml --debug)"
        );
        assert_eq!(super::template_error("Error: boom\n").to_string(), "boom");
    }

    #[test]
    fn helms_log_lines_are_not_its_error() {
        let helm4 = "level=INFO msg=\"found symbolic link in path: /tmp/cozyhr-x/apps/a/charts/lib resolves to /tmp/cozyhr-x/library/lib\"\nError: execution error at (a/templates/ns.yaml:1:4): 'default' is not a valid tenant identifier\n";
        assert_eq!(
            super::one_line(helm4),
            "Error: execution error at (a/templates/ns.yaml:1:4): 'default' is not a valid tenant identifier"
        );
        let helm3 = "walk.go:74: found symbolic link in path: /tmp/x/charts/lib resolves to /tmp/lib\nError: boom\n";
        assert_eq!(super::one_line(helm3), "Error: boom");
        let timed = "time=2026-12-03T10:00:00Z level=WARN msg=\"x\"\nError: y";
        assert_eq!(super::one_line(timed), "Error: y");
        // An error that only looks like a log line is kept rather than lost.
        assert_eq!(super::one_line("level=ERROR msg=only"), "level=ERROR msg=only");
        assert_eq!(
            super::one_line("Error: template: a/templates/x.yaml:3:4: bad"),
            "Error: template: a/templates/x.yaml:3:4: bad"
        );
    }

    #[test]
    fn work_ahead_is_used_only_for_the_whole_output() {
        let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = runs.clone();
        let make = move || {
            let counted = counted.clone();
            Ahead::new(move |text: String| {
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                text.to_uppercase()
            })
        };
        // Started on a part, then on the whole: the whole's result.
        let mut ahead = make();
        ahead.start(b"abc");
        ahead.start(b"abcdef");
        assert_eq!(ahead.take("abcdef").as_deref(), Some("ABCDEF"));
        // Started on a part only: nothing, and the part's work was waited for all the same.
        let mut ahead = make();
        ahead.start(b"abc");
        assert_eq!(ahead.take("abcdef"), None);
        assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), 3);
        // Not UTF-8 (cut inside a character): nothing started.
        let mut ahead = make();
        ahead.start(&"é".as_bytes()[..1]);
        drop(ahead);
        assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), 3);
    }
}
