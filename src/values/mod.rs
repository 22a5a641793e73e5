//! Flux-exact values composition, without cluster I/O.
//!
//! helm-controller builds the values of a release from the chart defaults, `valuesFrom` references and
//! `spec.values` (reference/flux-helm-controller.md §1) and fingerprints them as `configDigest` (§4). Every
//! step here mirrors the Go code that does it, quirks included, so that what `helm cozy` renders and records
//! is what the controller would have produced:
//! - [`yaml`]: values YAML parsed the way `sigs.k8s.io/yaml` (go-yaml v2, then JSON) does it.
//! - [`merge`]: Flux `MergeMaps` and Helm's coalescing of chart defaults.
//! - [`strvals`]: Helm's `--set` syntax, used by Flux for `targetPath`.
//! - [`compose()`]: the whole Flux algorithm plus the user's `-f`/`--set`, with per-key provenance.
//! - [`provenance`]: the source of each leaf of the composed values (`values --sources`).
//! - [`digest`]: Flux `DigestValues` (go-yaml v2 bytes, sha256).
//!
//! Values are `serde_json::Value`. Numbers follow what Go holds after the YAML → JSON → `interface{}` round
//! trip (a float64): a number that is integral and fits in i64/u64 is a JSON integer, anything else is an f64.
//! Large YAML integers are therefore rounded to float64 precision exactly as Go rounds them.

pub mod compose;
pub mod digest;
mod gov;
pub mod inputs;
pub mod merge;
pub mod model;
pub mod provenance;
pub mod strvals;
pub mod yaml;

pub use compose::{Composed, compose};
pub use digest::{digest_values, encode_values};
pub use inputs::{Inputs, RefData, Source};
pub use merge::{coalesce_with_defaults, merge_maps};
pub use model::{FetchedRef, Values, ValuesError};
pub use provenance::{Leaf, sources_document};
pub use yaml::parse_values;

/// Values as indented JSON the way Helm prints them (`helm get values -o json`): Helm holds every number
/// as a float64, so an integer beyond 2^53 prints as Go prints that float (12345678901234567890 becomes
/// 12345678901234567000), while our values keep the exact integer for digests.
pub fn to_go_json_pretty(values: &serde_json::Value) -> String {
    const EXACT: u64 = 1 << 53;
    fn walk(v: &serde_json::Value, texts: &mut Vec<String>) -> serde_json::Value {
        use serde_json::Value;
        match v {
            Value::Number(n)
                if n.as_u64().is_some_and(|u| u > EXACT) || n.as_i64().is_some_and(|i| i.unsigned_abs() > EXACT) =>
            {
                let f = n.as_f64().unwrap_or_default();
                texts.push(crate::go::float::format_float_json(f));
                Value::String(format!("\u{0}{}\u{0}", texts.len() - 1))
            }
            Value::Array(a) => Value::Array(a.iter().map(|x| walk(x, texts)).collect()),
            Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), walk(x, texts))).collect()),
            other => other.clone(),
        }
    }
    let mut texts = Vec::new();
    let marked = walk(values, &mut texts);
    let mut out = serde_json::to_string_pretty(&marked).unwrap_or_default();
    for (i, text) in texts.iter().enumerate() {
        out = out.replace(&format!("\"\\u0000{i}\\u0000\""), text);
    }
    out
}

#[cfg(test)]
mod go_json_tests {
    #[test]
    fn big_integers_print_like_go_floats() {
        let v = serde_json::json!({"big": 12345678901234567890u64, "small": 42, "list": [9007199254740993i64]});
        let out = super::to_go_json_pretty(&v);
        assert!(out.contains("\"big\": 12345678901234567000"), "{out}");
        assert!(out.contains("\"small\": 42"), "{out}");
        assert!(out.contains("9007199254740992"), "{out}");
    }
}
