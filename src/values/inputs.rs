//! What a composition takes: its inputs, lowest precedence first, and the name of each kind of source a
//! value can come from. Shared by the composition ([`super::compose()`]) and the provenance of its leaves
//! ([`super::provenance`]).

use std::fmt;

use serde_json::Value;

use super::model::Values;
use crate::flux::helmrelease::ValuesReference;

/// One `valuesFrom` entry with the data it points at.
#[derive(Clone, Debug)]
pub struct RefData {
    pub reference: ValuesReference,
    /// The text under `valuesKey` (Secret data already base64-decoded); `None` when the object or key is
    /// missing, which only an `optional` entry tolerates.
    pub data: Option<String>,
    /// `valuesFrom[].literal` (hc 1.6): write the data at `targetPath` verbatim, as a string.
    pub literal: bool,
}

/// Everything that goes into a release's values, lowest precedence first.
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    /// The HelmRelease namespace: `valuesFrom` objects are read from it (used in labels and errors).
    pub namespace: String,
    /// The chart's own values.yaml.
    pub chart_defaults: Values,
    /// `spec.chart.spec.valuesFiles`, parsed, with a label each; when Some (even empty: every file was
    /// missing and skipped) their merge replaces `chart_defaults`, as source-controller packages the chart.
    pub values_files: Option<Vec<(String, Values)>>,
    /// `spec.valuesFrom`, in order.
    pub refs: Vec<RefData>,
    /// `spec.values`.
    pub inline: Option<Value>,
    /// The user's `-f FILE`s, parsed, with the file name.
    pub user_files: Vec<(String, Values)>,
    /// The user's `--set` expressions, in order.
    pub user_sets: Vec<String>,
}

/// Where a value came from: a top-level key ([`Composed::sources`](super::Composed::sources)) or a leaf
/// ([`Composed::leaves`](super::Composed::leaves)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    ChartDefaults,
    ValuesFile(String),
    ValuesFrom { kind: String, name: String, key: String, target_path: Option<String> },
    Inline,
    UserFile(String),
    UserSet(String),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::ChartDefaults => write!(f, "chart values.yaml"),
            Source::ValuesFile(label) => write!(f, "valuesFiles {label}"),
            Source::ValuesFrom { kind, name, key, target_path: None } => write!(f, "{kind}/{name}[{key}]"),
            Source::ValuesFrom { kind, name, key, target_path: Some(tp) } => {
                write!(f, "{kind}/{name}[{key}] at {tp}")
            }
            Source::Inline => write!(f, "spec.values"),
            Source::UserFile(file) => write!(f, "-f {file}"),
            Source::UserSet(expr) => write!(f, "--set {expr}"),
        }
    }
}

/// The HelmRelease-side part of a ref's label, e.g. `ConfigMap ns/x key values.yaml`, used in errors.
pub(super) fn ref_label(namespace: &str, r: &ValuesReference) -> String {
    format!("{} {}/{} key {}", r.kind, namespace, r.name, r.key())
}

pub(super) fn ref_source(r: &ValuesReference) -> Source {
    Source::ValuesFrom {
        kind: r.kind.clone(),
        name: r.name.clone(),
        key: r.key().to_string(),
        target_path: r.target_path.clone().filter(|t| !t.is_empty()),
    }
}

/// A map key as a strvals path segment: the characters strvals reads as syntax escaped.
pub(super) fn strvals_key(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    for c in key.chars() {
        if matches!(c, '.' | '[' | ']' | ',' | '=' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
