//! go-yaml **v3**'s scalar rules (YAML 1.2: `yes` is a string, a plain `2001-12-14` a timestamp, `1.0` a
//! float), which kustomize applies when helm-controller post-renders. Only the certain part is here: a
//! plain scalar that v3 surely reads as null, a bool, a decimal integer or a string is decoded; one that it
//! might read as anything else is refused with the reason, and the caller leaves the document to the real
//! kustomize. [`decode`] reads a whole document with them, as kustomize's post-render decodes each object.
//! go-yaml v2's rules are in [`super::yaml_v2`].

use std::borrow::Cow;

use serde_json::Value;
use serde_saphyr::granit_parser::{Event, ScalarStyle};

use super::strconv::is_int_syntax;
use super::yaml_block::Ev;
use super::yaml_tree::Node;
use super::yaml_v2::{has_timestamp_prefix, is_yaml_style_float};

/// A scalar without a tag, as go-yaml v3 resolves it (`resolve.go`): quoted and block scalars are
/// strings; a plain one is null, a boolean, a decimal integer or a string, or unsupported when v3 would
/// make it a float, a timestamp, another integer form or a merge key.
pub fn scalar(value: &str, style: ScalarStyle) -> Result<Value, String> {
    scalar_node(Cow::Borrowed(value), style).map(Node::into_value)
}

/// [`scalar`] as a [`Node`] that keeps borrowing `value`.
fn scalar_node(value: Cow<'_, str>, style: ScalarStyle) -> Result<Node<'_>, String> {
    if style != ScalarStyle::Plain {
        return Ok(Node::Str(value));
    }
    match &*value {
        "" | "~" | "null" | "Null" | "NULL" => return Ok(Node::Null),
        "true" | "True" | "TRUE" => return Ok(Node::Bool(true)),
        "false" | "False" | "FALSE" => return Ok(Node::Bool(false)),
        "<<" => return Err("merge key".into()),
        _ => {}
    }
    let bytes = value.as_bytes();
    match bytes[0] {
        // `.5`, `.inf`, `.NaN`: floats.
        b'.' if bytes.len() > 1
            && (bytes[1].is_ascii_digit() || matches!(&value[1..], "inf" | "Inf" | "INF" | "nan" | "NaN" | "NAN")) =>
        {
            Err(format!("float {value:?}"))
        }
        b'0'..=b'9' | b'+' | b'-' => {
            if let Some(i) = decimal_int(&value) {
                return i.map(Node::Int).ok_or_else(|| format!("integer {value:?} beyond 64 bits"));
            }
            if matches!(&*value, "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf" | "-.INF") {
                return Err(format!("float {value:?}"));
            }
            let plain = value.replace('_', "");
            if has_timestamp_prefix(&value) || is_int_syntax(&plain) || is_yaml_style_float(&plain) {
                return Err(format!("plain scalar {value:?} may be a number or timestamp"));
            }
            Ok(Node::Str(value))
        }
        _ => Ok(Node::Str(value)),
    }
}

/// `[-+]?(0|[1-9][0-9]*)`: `Some(Some(i))`, or `Some(None)` when it overflows i64; `None` otherwise.
fn decimal_int(s: &str) -> Option<Option<i64>> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    let decimal =
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && (digits == "0" || !digits.starts_with('0'));
    decimal.then(|| s.strip_prefix('+').unwrap_or(s).parse::<i64>().ok())
}

/// One document as go-yaml v3 decodes it into Go values, or why that is not certain. Mapping keys come
/// out sorted, as Go writes a map. The block-style YAML templates print is read by
/// [`crate::yaml_block`]; anything else by the general parser.
pub fn decode(text: &str) -> Result<Option<Value>, String> {
    decode_tree(text).map(|node| node.map(Node::into_value))
}

/// [`decode`] as a [`Node`], borrowing what it can from `text`.
pub fn decode_tree(text: &str) -> Result<Option<Node<'_>>, String> {
    let Some(events) = crate::yaml_block::events(text) else { return tree(general_events(text)) };
    let fast = tree(events.into_iter().map(Ok));
    // Every document the tests decode checks the block reader against the general parser.
    #[cfg(debug_assertions)]
    assert_eq!(fast, tree(general_events(text)), "the block reader and the general parser disagree on {text:?}");
    fast
}

/// The tree of a document's events, with v3's scalar rules and keys sorted as Go writes a map.
fn tree<'a>(events: impl Iterator<Item = Result<Ev<'a>, String>>) -> Result<Option<Node<'a>>, String> {
    crate::yaml_tree::tree(events, true, |value, style, to_eof| {
        // A block scalar running to the end of the text without a line break has none in go-yaml
        // (libyaml); the parsers add one, as if the break were there.
        let value = match value {
            Cow::Borrowed(v) if to_eof => Cow::Borrowed(v.strip_suffix('\n').unwrap_or(v)),
            Cow::Owned(mut v) if to_eof => {
                if v.ends_with('\n') {
                    v.pop();
                }
                Cow::Owned(v)
            }
            v => v,
        };
        scalar_node(value, style)
    })
}

/// [`decode`] by the general parser alone, for tests that compare the two readers.
#[cfg(test)]
pub(crate) fn decode_general(text: &str) -> Result<Option<Value>, String> {
    tree(general_events(text)).map(|node| node.map(Node::into_value))
}

/// The general parser's events as [`Ev`]s: a second document, a tag or an alias is an error here.
fn general_events(text: &str) -> impl Iterator<Item = Result<Ev<'_>, String>> {
    let mut documents = 0;
    // The parser's positions count characters.
    let eof = (!text.ends_with('\n')).then(|| text.chars().count());
    crate::yaml_tree::parser(text).filter_map(move |next| {
        let (event, span) = match next {
            Ok(e) => e,
            Err(e) => return Some(Err(format!("YAML: {}", e.info()))),
        };
        Some(Ok(match event {
            Event::DocumentStart(..) => {
                documents += 1;
                if documents > 1 {
                    return Some(Err("more than one document".into()));
                }
                return None;
            }
            Event::Scalar(_, _, _, Some(_)) => return Some(Err("tagged scalar".into())),
            Event::Scalar(value, style, _, None) => {
                let to_eof =
                    matches!(style, ScalarStyle::Literal | ScalarStyle::Folded) && eof == Some(span.end.index());
                Ev::Scalar(value, style, to_eof)
            }
            Event::SequenceStart(_, _, tag) | Event::MappingStart(_, _, tag) if tag.is_some() => {
                return Some(Err("tagged collection".into()));
            }
            Event::SequenceStart(..) => Ev::SeqStart,
            Event::MappingStart(..) => Ev::MapStart,
            Event::SequenceEnd => Ev::SeqEnd,
            Event::MappingEnd => Ev::MapEnd,
            Event::Alias(_) | Event::UnresolvedAlias(_) => return Some(Err("alias".into())),
            _ => return None,
        }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Printed by Go 1.26 with go.yaml.in/yaml/v3 v3.0.4: what `yaml.Unmarshal` of `a: <text>` into a
    /// `map[string]interface{}` holds. `None` where [`scalar`] refuses: Go made it a float, a timestamp or
    /// a non-decimal integer, or (marked) a string that only looks like a number.
    #[test]
    fn plain_scalars_decode_like_go_or_are_refused() {
        let cases: Vec<(&str, Option<Value>)> = vec![
            ("yes", Some("yes".into())),
            ("n", Some("n".into())),
            ("1.2.3", Some("1.2.3".into())),
            ("512Mi", Some("512Mi".into())),
            ("-Xmx512m", Some("-Xmx512m".into())),
            ("True", Some(true.into())),
            ("-42", Some((-42).into())),
            ("0", Some(0.into())),
            ("~", Some(Value::Null)),
            ("", Some(Value::Null)),
            ("0644", None),
            (".hidden", Some(".hidden".into())),
            ("...x", Some("...x".into())),
            ("1.0", None),
            ("1e3", None),
            ("0x1F", None),
            ("1_000", None),
            (".5", None),
            ("-.inf", None),
            ("2001-12-14", None),
            ("99999999999999999999", None),
            ("0o17", None),
            ("+12", Some(12.into())),
            ("-0", Some(0.into())),
            ("0b101", None),
            // Go: strings (ParseFloat and ParseUint fail on the range); refused as they look like numbers.
            ("1e400", None),
            ("0x1FFFFFFFFFFFFFFFFF", None),
            ("08", None),
            ("12:30:00", Some("12:30:00".into())),
            ("+", Some("+".into())),
            ("2001-12-14  21:59:43", None),
            ("1-2", Some("1-2".into())),
        ];
        for (text, go) in cases {
            assert_eq!(scalar(text, ScalarStyle::Plain).ok(), go, "{text}");
        }
        assert_eq!(scalar("yes", ScalarStyle::SingleQuoted), Ok("yes".into()));
    }
}
