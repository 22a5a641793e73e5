//! The words of values composition: the values of a chart or release, a `valuesFrom` entry with its
//! text, and why values could not be read or composed.

/// The values of a chart or release: always a mapping at the top.
pub type Values = serde_json::Map<String, serde_json::Value>;

/// One `valuesFrom` entry with the text it points at (None: optional and missing), read from the cluster
/// or from files.
#[derive(Debug, Clone, PartialEq)]
pub struct FetchedRef {
    pub reference: crate::flux::helmrelease::ValuesReference,
    pub data: Option<String>,
}

/// Fixtures shared by the values tests.
#[cfg(test)]
pub(crate) mod test_support {
    use super::Values;
    use serde_json::Value;

    /// A `json!({...})` literal as [`Values`].
    pub(crate) fn obj(v: Value) -> Values {
        match v {
            Value::Object(m) => m,
            _ => panic!("test fixture is not an object"),
        }
    }
}

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
