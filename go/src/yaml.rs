//! The YAML reading and writing the go-yaml rules of this crate are applied over: the event parser as
//! cozyhr reads documents with it, the block-style writer the post-render writes objects with, and the
//! decoding of manifests (and JSON) into values that diff compares. They
//! are here, not in cozyhr, because they are the hot loops of `show` and `diff` on large charts: this
//! crate is built for speed (see the workspace's release profile), and the generic parser is compiled
//! where it is instantiated.

use serde_json::Value;
use serde_saphyr::granit_parser::{Options, Parser, StrInput};

/// The YAML event parser as cozyhr reads documents with it: comments are not reported (nothing uses them,
/// and collecting them costs the parser about a third of its time).
pub fn parser(text: &str) -> Parser<'_, StrInput<'_>> {
    let mut options = Options::default();
    options.set_emit_comments(false);
    Parser::new_from_str_with_options(text, options)
}

/// `value` as block-style YAML (serde-saphyr's writer), keys in the value's order.
pub fn to_string(value: &Value) -> Result<String, String> {
    serde_saphyr::to_string(value).map_err(|e| e.to_string())
}

/// One manifest document as a JSON value, read as Helm and kubectl read manifests: YAML 1.1 rules
/// (sigs.k8s.io/yaml), so `defaultMode: 0644` is octal 420, or every such field would show as changed
/// against the cluster. Errors carry no snippet: the caller names the source and line itself.
pub fn manifest_value(text: &str) -> Result<Value, serde_saphyr::Error> {
    let mut options = serde_saphyr::Options::default();
    options.with_snippet = false;
    options.legacy_octal_numbers = true;
    // Nothing reads comments; reporting them costs the parser about a third of its time.
    options.emit_comments = false;
    serde_saphyr::from_str_with_options(text, options)
}

/// JSON text as a value (the stored Helm release, a manifest in JSON form).
pub fn json_value(bytes: &[u8]) -> serde_json::Result<Value> {
    serde_json::from_slice(bytes)
}
