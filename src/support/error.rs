//! Typed errors of the library. Each variant renders as one line that says what is wrong and, where there
//! is something to do about it, what to do; the binaries print it with `error: ` in front and exit 1.

use std::path::PathBuf;
use std::time::Duration;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Where the kubeconfig in use was named, which decides what to tell a user whose file cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KubeconfigFrom {
    /// `--kubeconfig`.
    Flag,
    /// `KUBECONFIG` (under Helm also what `helm --kubeconfig` hands its plugins).
    Env,
    /// Neither: `~/.kube/config`.
    Default,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot load kubeconfig: {0}")]
    Kubeconfig(String),

    #[error("cannot read kubeconfig {}{}: {reason}; {}", path.display(), origin(*from), kubeconfig_hint(*from))]
    KubeconfigUnreadable { path: PathBuf, from: KubeconfigFrom, reason: String },

    #[error(
        "{} {context:?} is not in the kubeconfig ({files}); {}",
        if *current { "current-context" } else { "context" },
        contexts(available)
    )]
    ContextNotFound { context: String, current: bool, files: String, available: Vec<String> },

    #[error("the kubeconfig ({files}) sets no current-context; {}", no_current_context_hint(available))]
    NoCurrentContext { files: String, available: Vec<String> },

    #[error(
        "cannot reach the cluster at {server}: {reason} (check the kubeconfig, the context and that the API server is running)"
    )]
    Unreachable { server: String, reason: String },

    #[error("{kind} {name:?} not found in namespace {namespace:?}")]
    NotFound { kind: &'static str, name: String, namespace: String },

    #[error("no {kind} objects found in {scope}")]
    NoneFound { kind: &'static str, scope: String },

    #[error(
        "the {kind} API ({group}/{version}) is not installed in this cluster: install Flux (flux install) or its CRDs first"
    )]
    CrdMissing { kind: &'static str, group: &'static str, version: &'static str },

    #[error("forbidden: {0} (ask for RBAC permission or use another context)")]
    Forbidden(String),

    #[error("timed out after {after:?} waiting for {what}; last seen: {last_seen}")]
    Timeout { what: String, after: Duration, last_seen: String },

    #[error(
        "{kind} {namespace}/{name} is suspended: resume it first ({resume} {name} -n {namespace})",
        resume = crate::support::output::lifecycle_command("resume")
    )]
    Suspended { kind: &'static str, namespace: String, name: String },

    #[error("{kind} {namespace}/{name} reconciliation failed: {message}")]
    NotReady { kind: &'static str, namespace: String, name: String, message: String },

    /// An operation that ran and failed (a helm command, an interrupted apply), already worded.
    #[error("{0}")]
    Failed(String),

    #[error("invalid {what}: {reason}")]
    Invalid { what: String, reason: String },

    /// A chart directory whose chart is not the one the HelmRelease deploys ([`crate::desired::which_chart`]).
    #[error(
        "{dir} holds chart {found:?}, but helmrelease {hr} deploys chart {deployed:?} ({known_from}), so nothing was changed: run from {deployed}'s chart directory (or -C DIR), or pass --other-chart if the chart is renamed on purpose"
    )]
    OtherChart { dir: String, found: String, hr: String, deployed: String, known_from: String },

    #[error("kubernetes API error: {}", describe(.0))]
    Kube(kube::Error),

    #[error(transparent)]
    Io(#[from] std::io::Error),

    /// Rendering or running helm.
    #[error(transparent)]
    Render(#[from] RenderError),

    /// The chart directory.
    #[error(transparent)]
    Chart(#[from] ChartError),

    /// `--release-file`: the HelmRelease and its sources read from files.
    #[error(transparent)]
    ReleaseFile(Box<ReleaseFileError>),

    /// `--against git:REF`: the chart as it is at a Git ref.
    #[error(transparent)]
    Git(#[from] GitError),

    /// Several objects failed, each for its own reason: one `error:` line each.
    #[error("{}", several(.0))]
    Several(Vec<Error>),

    /// Standard output failed (or its reader went away: [`crate::support::output::StdoutError::is_reader_gone`]).
    #[error(transparent)]
    Stdout(#[from] crate::support::output::StdoutError),

    /// `--watch`: a watch or the signal listener could not start. Boxed as [`Error::ReleaseFile`] is.
    #[error(transparent)]
    Watch(Box<WatchError>),

    /// The release's own cluster (`spec.kubeConfig`) cannot be read, reached or confirmed.
    #[error(transparent)]
    Target(Box<TargetError>),

    /// `kubectl cozyhr drift`: the drift detection settings or the release to compare.
    #[error(transparent)]
    Drift(Box<DriftError>),

    /// A HelmRelease's `valuesFiles` cannot be read as source-controller reads them.
    #[error("helmrelease {hr}: {error}")]
    ValuesFiles { hr: String, error: Box<ValuesFilesError> },
}

/// Why `spec.chart.spec.valuesFiles` cannot be read as source-controller reads them
/// ([`crate::source::values_files`]): source-controller's own words where it has them (its HelmChart fails with
/// them, and the HelmRelease is not ready), then why here and what to do.
#[derive(Debug, thiserror::Error)]
pub enum ValuesFilesError {
    /// A GitRepository's or Bucket's file that is not a regular file; `shown` is its path below the
    /// source's root, as source-controller names it (`/charts/app/values-prod.yaml`).
    #[error("values files merge error: no values file found at path '{shown}' (reference '{reference}'): {why}")]
    NotFound { shown: String, reference: String, why: String },

    /// A HelmRepository chart's entry that is not one of the chart's files.
    #[error(
        "values files merge error: failed to merge chart values: no values file found at path '{reference}': {why}"
    )]
    NotInChart { reference: String, why: String },

    #[error("values files merge error: could not read values from file '{reference}': {reason}")]
    Unreadable { reference: String, reason: String },

    #[error("values files merge error: unmarshaling values from '{reference}' failed: {reason}")]
    Unmarshal { reference: String, reason: String },

    /// `OverwriteChartDefaultValues` finds no values.yaml to replace.
    #[error(
        "values files merge error: failed to locate values file: values.yaml (source-controller replaces the chart's values.yaml with the merged valuesFiles, and {chart} has none): add one to the chart"
    )]
    NoChartValues { chart: String },

    #[error(
        "cannot find the root of {what}, which valuesFiles are relative to: {chart} does not end in spec.chart.spec.chart {in_source:?} and is in no Git work tree (run {} in a checkout of the source)",
        crate::support::output::chart_command()
    )]
    NoSourceRoot { what: String, chart: String, in_source: String },

    /// The original cozyhr's annotation names a file outside the chart directory.
    #[error("invalid valuesFiles entry {entry:?}: must be a path inside the chart directory")]
    OutsideChart { entry: String },
}

/// Why `--watch` ([`crate::watch`]) cannot watch: the files, or the signals that end the loop.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error("cannot watch {}: {source} (on Linux, raise fs.inotify.max_user_watches if the limit is reached)", path.display())]
    Watch { path: PathBuf, source: notify::Error },
    #[error("cannot start the file watcher: {0}")]
    Start(notify::Error),
    #[error("cannot listen for Ctrl-C: {0}")]
    Signal(std::io::Error),
}

impl From<DriftError> for Error {
    fn from(e: DriftError) -> Self {
        Error::Drift(Box::new(e))
    }
}

/// Why drift cannot be looked for as helm-controller looks for it ([`crate::compare::drift`]).
#[derive(Debug, thiserror::Error)]
pub enum DriftError {
    #[error("spec.driftDetection cannot be read: {reason}")]
    Spec { reason: String },

    /// helm-controller compiles every rule first and compares nothing when one does not compile.
    #[error(
        "spec.driftDetection.ignore[{rule}].target.{field} {value:?} is not a valid {what}: {reason} (helm-controller cannot look for drift in this release either: fix the HelmRelease)"
    )]
    Target { rule: usize, field: &'static str, value: String, what: &'static str, reason: String },

    #[error(
        "helmrelease {hr} has no Helm release {release} in namespace {storage}{}: {why}, so there is no drift to look for",
        if *remote { " of the release's own cluster" } else { "" }
    )]
    NoRelease { hr: String, release: String, storage: String, remote: bool, why: String },

    #[error("the stored manifest of Helm release {release} cannot be read: {reason}")]
    Manifest { release: String, reason: String },
}

impl From<TargetError> for Error {
    fn from(e: TargetError) -> Self {
        Error::Target(Box::new(e))
    }
}

/// Why the cluster a HelmRelease installs into (`spec.kubeConfig`, [`crate::desired::target`]) cannot be used.
/// Each is found before anything is changed anywhere, and says so.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error(
        "helmrelease {hr} installs into the cluster of the kubeconfig in Secret {secret} (spec.kubeConfig.secretRef), which does not exist: create it or fix spec.kubeConfig; nothing was changed"
    )]
    SecretNotFound { hr: String, secret: String },

    #[error(
        "cannot read Secret {secret}, the kubeconfig of the cluster helmrelease {hr} installs into: forbidden ({reason}); ask for get on that Secret, or pass --target-kubeconfig FILE; nothing was changed"
    )]
    SecretForbidden { hr: String, secret: String, reason: String },

    #[error(
        "Secret {secret} (spec.kubeConfig.secretRef of helmrelease {hr}) has {}; it has {}; nothing was changed",
        match key { Some(k) => format!("no key {k:?}"), None => "neither a \"value\" nor a \"value.yaml\" key".into() },
        if keys.is_empty() { "no keys".to_string() } else { format!("keys {}", keys.join(", ")) }
    )]
    KeyMissing { hr: String, secret: String, key: Option<String>, keys: Vec<String> },

    #[error("the kubeconfig in {what} cannot be used: {reason}; nothing was changed")]
    BadKubeconfig { what: String, reason: String },

    #[error(
        "helmrelease {hr} reaches its cluster through spec.kubeConfig.configMapRef (a cloud provider's identity), which {tool} cannot use; nothing was changed",
        tool = crate::support::output::chart_command()
    )]
    Unsupported { hr: String },

    #[error(
        "cannot reach {server}, the cluster helmrelease {hr} installs into ({from}): {reason}; {}nothing was changed",
        if *flag_given { "" } else { "if that address only works inside the platform, point at the same cluster from here with --target-kubeconfig FILE (and --target-context NAME); " }
    )]
    Unreachable { hr: String, server: String, from: String, reason: String, flag_given: bool },

    #[error(
        "{given} is not the cluster helmrelease {hr} installs into (Secret {secret}): {why}; refusing to act on it, nothing was changed"
    )]
    NotSame { hr: String, secret: String, given: String, why: String },

    #[error(
        "helmrelease {hr}: helm-controller {controller} refuses the kubeconfig in {secret}, which names a file ({reference}), and fails the release (Ready=False, RESTClientError): put the file's content in the kubeconfig itself (certificate-authority-data, token, client-certificate-data, client-key-data); nothing was changed"
    )]
    FileReference { hr: String, secret: String, controller: String, reference: String },

    #[error(
        "--target-kubeconfig {}: helmrelease {hr} has no spec.kubeConfig, so it installs into the cluster it lives in; drop the flag",
        file.display()
    )]
    FlagWithoutKubeConfig { hr: String, file: PathBuf },
}

/// Boxed: its messages carry several names, and every `Result` of the library would grow with it.
impl From<ReleaseFileError> for Error {
    fn from(e: ReleaseFileError) -> Self {
        Error::ReleaseFile(Box::new(e))
    }
}

impl From<WatchError> for Error {
    fn from(e: WatchError) -> Self {
        Error::Watch(Box::new(e))
    }
}

impl Error {
    /// Classifies a raw client error: connection failures, 403 and 404-on-the-resource-type become their
    /// own variants so a user sees what to do rather than an HTTP status.
    pub fn from_kube(err: kube::Error, server: &str) -> Self {
        match &err {
            kube::Error::Api(status) if status.code == 403 => Error::Forbidden(status.message.clone()),
            kube::Error::HyperError(_) | kube::Error::Service(_) => {
                Error::Unreachable { server: server.to_string(), reason: unreachable_reason(&err) }
            }
            _ => Error::Kube(err),
        }
    }
}

/// Several errors as the binaries print errors, one `error:` line each (the first one's prefix is the
/// binary's).
fn several(errors: &[Error]) -> String {
    errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\nerror: ")
}

/// Where a kubeconfig came from, after its path: said for KUBECONFIG, which the command line does not show.
fn origin(from: KubeconfigFrom) -> &'static str {
    if from == KubeconfigFrom::Env { " (from KUBECONFIG)" } else { "" }
}

/// What to do about a kubeconfig that cannot be read, by where it was named.
fn kubeconfig_hint(from: KubeconfigFrom) -> &'static str {
    match from {
        KubeconfigFrom::Flag => {
            "pass --kubeconfig a valid kubeconfig file, or leave it out to use KUBECONFIG or ~/.kube/config"
        }
        KubeconfigFrom::Env => "fix KUBECONFIG or pass --kubeconfig FILE",
        KubeconfigFrom::Default => "pass --kubeconfig FILE or set KUBECONFIG",
    }
}

/// The contexts a kubeconfig has, for a user who named one it lacks.
fn contexts(available: &[String]) -> String {
    if available.is_empty() { "it has no contexts".to_string() } else { format!("contexts: {}", available.join(", ")) }
}

/// What to do about a kubeconfig without a current context: choose one of its contexts, if it has any.
fn no_current_context_hint(available: &[String]) -> String {
    if available.is_empty() {
        "it has no contexts either: pass --kubeconfig FILE or set KUBECONFIG to one that has".to_string()
    } else {
        format!("contexts: {} (choose one with kubectl config use-context NAME)", available.join(", "))
    }
}

/// A client error as one readable line: for an API error the server's own message and status code rather
/// than the Debug dump kube's Display includes.
fn describe(err: &kube::Error) -> String {
    match err {
        kube::Error::Api(status) => format!("{} ({} {})", status.message, status.code, status.reason),
        other => other.to_string(),
    }
}

/// Why a server could not be reached, from the innermost error: a connection that timed out (the
/// client bounds connecting, TLS handshake included) says so in words (the timer's own is "deadline has
/// elapsed").
fn unreachable_reason(err: &kube::Error) -> String {
    let mut cur: &(dyn std::error::Error + 'static) = err;
    while let Some(next) = cur.source() {
        let timed_out = next.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::TimedOut);
        if timed_out || next.is::<tokio::time::error::Elapsed>() {
            return "no answer: connecting, TLS handshake included, timed out".to_string();
        }
        cur = next;
    }
    cur.to_string()
}

/// The innermost message of an error chain; hyper/tower wrap the useful part ("connection refused") deep.
pub(crate) fn cause(err: &(dyn std::error::Error + 'static)) -> String {
    match err.downcast_ref::<kube::Error>() {
        Some(kube::Error::Api(status)) => format!("{} ({})", status.message, status.code),
        _ => root_cause(err),
    }
}

fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = err;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// Errors of running external programs (helm, kubectl) and rendering; `crate::render` re-exports it.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("{program} not found: {hint}")]
    Missing { program: &'static str, hint: &'static str },

    #[error("{program} {version} is too old: cozyhr needs {needed} or newer")]
    TooOld { program: &'static str, version: String, needed: &'static str },

    #[error("{program} failed: {stderr}")]
    Failed { program: String, stderr: String },

    /// The chart does not render: Helm's own message, on one line, without its `Error: ` and its
    /// `--debug` hint (which `helm cozy` does not take), with how to see the YAML instead
    /// ([`crate::render::template_error`]).
    #[error("{0}")]
    Template(String),

    /// Not `source`: the reason is in the line already, and a source would print it a second time.
    #[error("cannot run {program}: {reason}")]
    Spawn { program: String, reason: std::io::Error },

    /// The helm binary found (or named by COZYHR_HELM or HELM_BIN) does not work: what failed, and what to
    /// do about it.
    #[error(
        "{what} {}{}: {reason}; {}",
        bin.display(),
        from_env.map(|v| format!(" (from {v})")).unwrap_or_default(),
        helm_hint(*from_env)
    )]
    BadHelm { what: &'static str, bin: std::path::PathBuf, from_env: Option<&'static str>, reason: String },

    #[error(transparent)]
    Io(#[from] std::io::Error),

    #[error("post-render: {0}")]
    PostRender(String),

    /// `--show-only` cannot be applied; the message names the flag itself.
    #[error("{0}")]
    ShowOnly(String),

    #[error("cannot write the values file for helm: {0}")]
    ValuesFile(String),

    #[error("moving Helm's release storage between namespaces: {0}")]
    Storage(String),

    #[error("interrupted by {signal}{detail}")]
    Interrupted { signal: String, detail: String },
}

/// What to do about a helm that does not work, by which environment variable named it.
fn helm_hint(from_env: Option<&'static str>) -> &'static str {
    match from_env {
        Some("COZYHR_HELM") => "set COZYHR_HELM to a Helm 3.9+ or Helm 4 binary, or unset it",
        Some(_) => "set HELM_BIN to a Helm 3.9+ or Helm 4 binary, or unset it to use helm on PATH",
        None => "install Helm 3.9+ or Helm 4 (https://helm.sh/docs/intro/install/) or set HELM_BIN to one",
    }
}

/// The chart directory ([`crate::source::chart`]).
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    #[error("{dir} is not a chart directory: it has no Chart.yaml (run from the chart directory or pass -C DIR)")]
    NotAChart { dir: String },
    #[error("{path}: {reason}")]
    Invalid { path: String, reason: String },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// `--against git:REF` ([`crate::source::gitref`]).
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("git not found: install git (it reads the chart as it is at the ref)")]
    Missing,

    #[error(
        "{dir} is not inside a Git repository: --against git:REF compares the chart with a commit of its repository"
    )]
    NotARepo { dir: String },

    #[error(
        "unknown Git ref {git_ref:?} in {repo}: name a branch, tag or commit that exists there (for a remote branch fetch it first, e.g. git fetch origin main)"
    )]
    UnknownRef { git_ref: String, repo: String },

    #[error("git {command} failed: {stderr}")]
    Failed { command: &'static str, stderr: String },

    #[error("writing the tree of {git_ref} into a temporary directory: {source}")]
    Io { git_ref: String, source: std::io::Error },
}

/// Why the release files cannot give what a command needs; each one line naming the file(s) and the fix.
#[derive(Debug, thiserror::Error)]
pub enum ReleaseFileError {
    #[error("cannot read --release-file {file}: {reason}")]
    Read { file: String, reason: String },

    #[error("--release-file {file}: {message}")]
    Yaml { file: String, message: String },

    #[error("no HelmRelease {name:?}{} in --release-file {files}{}", in_namespace(namespace.as_deref()), found_list(found))]
    NotFound { name: String, namespace: Option<String>, files: String, found: Vec<String> },

    #[error("HelmRelease {namespace}/{name} appears more than once in --release-file {files}: keep one")]
    Twice { name: String, namespace: String, files: String },

    #[error(
        "HelmRelease {name:?} is in more than one namespace ({}) in --release-file {files}: choose one with -n NAMESPACE",
        namespaces.join(", ")
    )]
    Ambiguous { name: String, namespaces: Vec<String>, files: String },

    #[error("--release-file {file}: HelmRelease {name:?} cannot be read: {reason}")]
    BadHelmRelease { file: String, name: String, reason: String },

    /// `object`: `Kind namespace/name`.
    #[error(
        "valuesFrom {object} is not in --release-file {files} (add it to one of them, or mark the reference optional: true)"
    )]
    MissingSource { object: String, files: String },

    #[error("valuesFrom {object} (in {file}) has no key {key:?} (add it, or mark the reference optional: true)")]
    MissingKey { object: String, key: String, file: String },

    #[error("{object} appears more than once in --release-file {files}: keep one")]
    SourceTwice { object: String, files: String },

    #[error(
        "--release-file {file}: {object} data key {key:?} is not valid base64 ({reason}); encode it with `base64 -w0`, or put the text under stringData"
    )]
    Base64 { file: String, object: String, key: String, reason: String },

    #[error("--release-file {file}: {object} key {key:?} {problem}")]
    BadValue { file: String, object: String, key: String, problem: &'static str },

    #[error("valuesFrom {kind}/{name}: kind must be ConfigMap or Secret")]
    BadKind { kind: String, name: String },
}

fn in_namespace(ns: Option<&str>) -> String {
    ns.map(|n| format!(" in namespace {n:?}")).unwrap_or_default()
}

fn found_list(found: &[String]) -> String {
    if found.is_empty() {
        " (it holds no HelmRelease)".to_string()
    } else {
        format!(" (it holds HelmRelease {})", found.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::ChartError;
    use super::*;
    use crate::cluster::manifests::{IdError, Location, ManifestError};
    use crate::render::RenderError;

    /// The line a binary prints: the error and each of its causes, joined as anyhow's `{:#}` joins them.
    fn printed(err: &(dyn std::error::Error + 'static)) -> String {
        let mut line = err.to_string();
        let mut cause = err.source();
        while let Some(c) = cause {
            line.push_str(&format!(": {c}"));
            cause = c.source();
        }
        line
    }

    #[test]
    fn no_cause_is_printed_twice() {
        let enoent = || std::io::Error::from(std::io::ErrorKind::NotFound);
        let why = enoent().to_string();
        let cases: Vec<(Box<dyn std::error::Error>, String)> = vec![
            (Box::new(Error::Io(enoent())), why.clone()),
            (Box::new(RenderError::Io(enoent())), why.clone()),
            (Box::new(ChartError::Io(enoent())), why.clone()),
            (Box::new(RenderError::Spawn { program: "/x/helm".into(), reason: enoent() }), why.clone()),
            (
                Box::new(ManifestError::Invalid {
                    location: Location { source: None, line: 1 },
                    problem: IdError::Missing("kind"),
                }),
                IdError::Missing("kind").to_string(),
            ),
        ];
        for (err, cause) in cases {
            let line = printed(&*err);
            assert_eq!(line.matches(&cause).count(), 1, "{line}");
        }
    }

    #[test]
    fn kubeconfig_errors_say_what_to_do_for_where_it_came_from() {
        let unreadable =
            |from| Error::KubeconfigUnreadable { path: "/k".into(), from, reason: "gone".into() }.to_string();
        assert_eq!(
            unreadable(KubeconfigFrom::Env),
            "cannot read kubeconfig /k (from KUBECONFIG): gone; fix KUBECONFIG or pass --kubeconfig FILE"
        );
        assert!(unreadable(KubeconfigFrom::Flag).ends_with(
            "; pass --kubeconfig a valid kubeconfig file, or leave it out to use KUBECONFIG or ~/.kube/config"
        ));
        assert_eq!(
            unreadable(KubeconfigFrom::Default),
            "cannot read kubeconfig /k: gone; pass --kubeconfig FILE or set KUBECONFIG"
        );
        let missing = |available: &[&str]| {
            Error::ContextNotFound {
                context: "zz".into(),
                current: false,
                files: "/k".into(),
                available: available.iter().map(|s| s.to_string()).collect(),
            }
            .to_string()
        };
        assert_eq!(missing(&["a", "b"]), r#"context "zz" is not in the kubeconfig (/k); contexts: a, b"#);
        assert_eq!(missing(&[]), r#"context "zz" is not in the kubeconfig (/k); it has no contexts"#);
    }

    #[test]
    fn several_errors_are_one_error_line_each() {
        let several = Error::Several(vec![Error::Failed("a went wrong".into()), Error::Failed("b too".into())]);
        assert_eq!(format!("error: {several}"), "error: a went wrong\nerror: b too");
    }
}
