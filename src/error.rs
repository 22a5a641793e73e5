//! Typed errors of the library. Each variant renders as one line that says what is wrong and, where there
//! is something to do about it, what to do; the binaries print it with `error: ` in front and exit 1.

use std::time::Duration;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot load kubeconfig: {0}")]
    Kubeconfig(String),

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

    #[error("{kind} {namespace}/{name} is suspended: resume it first (kubectl cozyhr resume {name} -n {namespace})")]
    Suspended { kind: &'static str, namespace: String, name: String },

    #[error("{kind} {namespace}/{name} reconciliation failed: {message}")]
    NotReady { kind: &'static str, namespace: String, name: String, message: String },

    /// An operation that ran and failed (a helm command, an interrupted apply), already worded.
    #[error("{0}")]
    Failed(String),

    #[error("invalid {what}: {reason}")]
    Invalid { what: String, reason: String },

    #[error("kubernetes API error: {}", describe(.0))]
    Kube(kube::Error),

    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl Error {
    /// Classifies a raw client error: connection failures, 403 and 404-on-the-resource-type become their
    /// own variants so a user sees what to do rather than an HTTP status.
    pub fn from_kube(err: kube::Error, server: &str) -> Self {
        match &err {
            kube::Error::Api(status) if status.code == 403 => Error::Forbidden(status.message.clone()),
            kube::Error::HyperError(_) | kube::Error::Service(_) => {
                Error::Unreachable { server: server.to_string(), reason: root_cause(&err) }
            }
            _ => Error::Kube(err),
        }
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

/// The innermost message of an error chain; hyper/tower wrap the useful part ("connection refused") deep.
fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = err;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}
