//! The YAML reading and writing the go-yaml rules of this crate are applied over: the event parser as
//! cozyhr reads documents with it, and the block-style writer the post-render writes objects with. They
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
