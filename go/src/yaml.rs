//! The YAML reading and writing the go-yaml rules of this crate are applied over: the event parser as
//! cozyhr reads documents with it, the block-style writer the post-render writes objects with, and the
//! decoding of manifests (and JSON) into values that diff compares. They
//! are here, not in cozyhr, because they are the hot loops of `show` and `diff` on large charts: this
//! crate is built for speed (see the workspace's release profile), and the generic parser is compiled
//! where it is instantiated.

use std::borrow::Cow;

use serde_json::Value;
use serde_saphyr::granit_parser::ScalarStyle;

use crate::yaml_tree::{Node, tree};

/// `value` as block-style YAML (serde-saphyr's writer), keys in the value's order.
pub fn to_string(value: &Node<'_>) -> Result<String, String> {
    let mut out = String::new();
    write(value, &mut out)?;
    Ok(out)
}

/// [`to_string`], appended to `out`: by [`crate::yaml_write`] where it is certain, else by serde-saphyr.
pub fn write(value: &Node<'_>, out: &mut String) -> Result<(), String> {
    #[cfg(debug_assertions)]
    let start = out.len();
    if crate::yaml_write::write(value, out) {
        // Every value the tests write checks the fast writer against serde-saphyr's.
        #[cfg(debug_assertions)]
        assert_eq!(
            out[start..],
            serde_saphyr::to_string(value).map_err(|e| e.to_string())?,
            "the fast writer and serde-saphyr disagree on {value:?}"
        );
        return Ok(());
    }
    out.push_str(&serde_saphyr::to_string(value).map_err(|e| e.to_string())?);
    Ok(())
}

/// One manifest document as a JSON value, read as Helm and kubectl read manifests: YAML 1.1 rules
/// (sigs.k8s.io/yaml), so `defaultMode: 0644` is octal 420, or every such field would show as changed
/// against the cluster. Errors carry no snippet: the caller names the source and line itself.
///
/// A document in block style whose plain scalars are all certain ([`certain_scalar`]) is read by
/// [`crate::yaml_block`], several times faster; in debug builds every such answer is checked against the
/// general reader's.
pub fn manifest_value(text: &str) -> Result<Value, serde_saphyr::Error> {
    let Some(fast) = block_manifest_value(text) else { return general_manifest_value(text) };
    #[cfg(debug_assertions)]
    assert_eq!(
        general_manifest_value(text).ok().as_ref(),
        Some(&fast),
        "the block reader and the general reader disagree on {text:?}"
    );
    Ok(fast)
}

/// [`manifest_value`] by the block reader, where it answers and every plain scalar is certain.
fn block_manifest_value(text: &str) -> Option<Value> {
    let events = crate::yaml_block::events(text)?;
    let tree = tree(events.into_iter().map(Ok), false, |v, style, _| certain_scalar(v, style)).ok()??;
    Some(tree.into_value())
}

/// A scalar whose value is the same under every YAML schema Helm, kubectl and serde-saphyr read
/// manifests with, or an error (the caller then reads the document with the general reader): quoted and
/// block scalars are strings; a plain one is a string only when it starts like no number, bool, null or
/// float can (a letter, `/`, `_`, `.` or `-` before a letter or `-`) and is none of YAML 1.1's words, or
/// is digits then letters (`512Mi`); `null`, `~` and nothing are null, `true` and `false` bools, `0` or a
/// decimal without a leading zero an integer.
pub fn certain_scalar(value: Cow<'_, str>, style: ScalarStyle) -> Result<Node<'_>, String> {
    if style != ScalarStyle::Plain {
        return Ok(Node::Str(value));
    }
    match &*value {
        "" | "~" | "null" => return Ok(Node::Null),
        "true" => return Ok(Node::Bool(true)),
        "false" => return Ok(Node::Bool(false)),
        _ => {}
    }
    let digits = value.strip_prefix('-').unwrap_or(&value);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        if (digits.len() > 1 && digits.starts_with('0')) || *value == *"-0" {
            return Err("leading zero".into());
        }
        return value.parse::<i64>().map(Node::Int).map_err(|_| "beyond 64 bits".into());
    }
    let bytes = value.as_bytes();
    let starts_as_text = match bytes[0] {
        b if b.is_ascii_alphabetic() || b == b'/' || b == b'_' => true,
        b'.' | b'-' => bytes.get(1).is_some_and(|b| b.is_ascii_alphabetic() || *b == b'-'),
        // A quantity or a duration: `512Mi`, `100m`, `30s` (digits, then letters only).
        b'1'..=b'9' => {
            let letters = value.trim_start_matches(|c: char| c.is_ascii_digit());
            !letters.is_empty() && letters.bytes().all(|b| b.is_ascii_alphabetic())
        }
        _ => false,
    };
    // YAML 1.1's booleans and null in any case, and what Rust's or anyone's float parser might take for
    // infinity or NaN.
    let word = value.trim_start_matches(['-', '.']);
    let special =
        ["true", "false", "yes", "no", "on", "off", "y", "n", "null"].iter().any(|w| word.eq_ignore_ascii_case(w))
            || ["inf", "nan"].iter().any(|p| word.get(..3).is_some_and(|head| head.eq_ignore_ascii_case(p)));
    if starts_as_text && !special {
        Ok(Node::Str(value))
    } else {
        Err(format!("plain scalar {value:?} is left to the general reader"))
    }
}

/// [`manifest_value`] by serde-saphyr, for any document.
fn general_manifest_value(text: &str) -> Result<Value, serde_saphyr::Error> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certain_scalars_and_the_rest() {
        let plain = |s: &str| certain_scalar(s.into(), ScalarStyle::Plain).ok().map(Node::into_value);
        assert_eq!(plain("nginx"), Some("nginx".into()));
        assert_eq!(plain("app.kubernetes.io/name"), Some("app.kubernetes.io/name".into()));
        assert_eq!(plain("--port=8080"), Some("--port=8080".into()));
        assert_eq!(plain(".dockerconfigjson"), Some(".dockerconfigjson".into()));
        assert_eq!(plain("512Mi"), Some("512Mi".into()));
        assert_eq!(plain("8080"), Some(8080.into()));
        assert_eq!(plain("-1"), Some((-1).into()));
        assert_eq!(plain("~"), Some(Value::Null));
        assert_eq!(plain("true"), Some(true.into()));
        for other in [
            "0644",
            "1.0",
            "1e3",
            "yes",
            "No",
            "on",
            "y",
            "True",
            "NULL",
            ".inf",
            "-.inf",
            "Infinity",
            "nan",
            "0x1F",
            "1_000",
            "12:30",
            "2001-12-14",
            "-0",
            "99999999999999999999",
            "1.2.3",
            "<<",
            "*a",
            "@x",
        ] {
            assert_eq!(plain(other), None, "{other}");
        }
        assert_eq!(certain_scalar("0644".into(), ScalarStyle::DoubleQuoted), Ok(Node::Str("0644".into())));
    }

    /// A key twice in one mapping, not next to each other in document order: both rule sets refuse the
    /// document (the manifests' reading then leaves it to serde-saphyr).
    #[test]
    fn a_duplicate_key_is_refused_in_either_order() {
        let text = "metadata:\n  name: web\n  labels: {}\n  name: api\n";
        assert_eq!(block_manifest_value(text), None);
        assert_eq!(crate::yaml_v3::decode(text), Err("duplicate key \"name\"".to_string()));
        assert!(block_manifest_value("metadata:\n  name: x\n  namespace: web\n").is_some());
    }

    /// Documents built from scalars that mean different things to YAML 1.1 and 1.2, in the places
    /// manifests put them: wherever the block reader answers, its value is serde-saphyr's (manifest_value
    /// asserts it in debug builds), and it answers for the usual ones.
    #[test]
    fn manifests_read_by_the_block_reader_agree_with_the_general_reader() {
        let scalars = [
            "a",
            "yes",
            "0644",
            "0",
            "-1",
            "1.0",
            "512Mi",
            "100m",
            "~",
            "null",
            "true",
            "True",
            "2001-12-14",
            "a b",
            "a#b",
            "-x",
            "--flag=1",
            "\"q\"",
            "'q'",
            "é",
            "",
            ".hidden",
            "/path",
            "1e",
            "12h",
            "[]",
            "{}",
            "'0644'",
            "x # c",
        ];
        let mut next = crate::yaml_block::pick(0x9e37_79b9_7f4a_7c15);
        let mut fast = 0;
        for _ in 0..3000 {
            let mut doc = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n");
            for k in 0..1 + next(3) {
                let s = scalars[next(scalars.len())];
                match next(4) {
                    0 => doc.push_str(&format!("k{k}: {s}\n")),
                    1 => doc.push_str(&format!("k{k}:\n- {s}\n- name: {}\n", scalars[next(scalars.len())])),
                    2 => doc.push_str(&format!("k{k}: |\n  {s}\n")),
                    _ => doc.push_str(&format!("k{k}:\n  n: {s}\n")),
                }
            }
            let general = general_manifest_value(&doc).ok();
            assert_eq!(manifest_value(&doc).ok(), general, "{doc:?}");
            if block_manifest_value(&doc).is_some() {
                fast += 1;
            }
        }
        assert!(fast > 500, "only {fast} of 3000 documents read by the block reader");
    }
}
