//! Flux-exact values composition, without cluster I/O.
//!
//! helm-controller builds the values of a release from the chart defaults, `valuesFrom` references and
//! `spec.values` (reference/flux-helm-controller.md §1) and fingerprints them as `configDigest` (§4). Every
//! step here mirrors the Go code that does it, quirks included, so that what `helm cozy` renders and records
//! is what the controller would have produced:
//! - [`yaml`]: values YAML parsed the way `sigs.k8s.io/yaml` (go-yaml v2, then JSON) does it.
//! - [`merge`]: Flux `MergeMaps` and Helm's coalescing of chart defaults.
//! - [`strvals`]: Helm's `--set` syntax, used by Flux for `targetPath`.
//! - [`compose`]: the whole Flux algorithm plus the user's `-f`/`--set`, with per-key provenance.
//! - [`digest`]: Flux `DigestValues` (go-yaml v2 bytes, sha256).
//!
//! Values are `serde_json::Value`. Numbers follow what Go holds after the YAML → JSON → `interface{}` round
//! trip (a float64): a number that is integral and fits in i64/u64 is a JSON integer, anything else is an f64.
//! Large YAML integers are therefore rounded to float64 precision exactly as Go rounds them.

pub mod compose;
pub mod digest;
mod gov;
pub mod merge;
pub mod strvals;
pub mod yaml;

pub use compose::{Composed, Inputs, RefData, Source, compose};
pub use digest::{digest_values, encode_values};
pub use merge::{coalesce_with_defaults, merge_maps};
pub use yaml::parse_values;

/// The values of a chart or release: always a mapping at the top.
pub type Values = serde_json::Map<String, serde_json::Value>;

/// Why values could not be read or composed. Every message names the input it came from.
#[derive(Debug, thiserror::Error)]
pub enum ValuesError {
    /// Malformed YAML, or YAML that Helm would refuse (a list at the top, `.inf`, a `null` key...).
    #[error("{source_name}: line {line}: {message}")]
    Yaml { source_name: String, line: usize, message: String },

    /// The document parsed, but its top level is not a mapping (Helm needs a map of values).
    #[error("{source_name}: values must be a YAML mapping, not {found}")]
    NotAMap { source_name: String, found: &'static str },

    /// A `--set` expression or `targetPath` write that Helm's strvals parser rejects.
    #[error("{source_name}: {message}")]
    Strvals { source_name: String, message: String },

    /// A non-optional `valuesFrom` entry whose object or key is missing.
    #[error("{source_name}: not found (mark it optional: true if it may be absent)")]
    MissingRef { source_name: String },
}
