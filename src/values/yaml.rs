//! Values YAML, read the way Helm and Flux read it.
//!
//! Both call `sigs.k8s.io/yaml.Unmarshal`: go-yaml **v2** decodes the YAML into Go values (YAML 1.1 rules:
//! `yes`/`no`/`on`/`off`/`y`/`n` are booleans, `017` is octal, `1e3` a float, timestamps stay strings), the
//! result is JSON-encoded and decoded again (so every number becomes a float64, `.inf`/`.nan` are errors, and
//! non-string keys become strings: `1: a` → `"1"`, `true: x` → `"true"`, `y: 1` → `"true"`). Only the first
//! document counts; an empty document is an empty map. We parse with the granit parser (the one beneath
//! serde-saphyr), which gives us the scalar style and the raw text; this module builds the document's tree,
//! expands aliases and merge keys and turns keys and values into JSON as sigs.k8s.io/yaml does, and each
//! scalar is resolved by go-yaml v2's rules in [`crate::go::yaml_v2`]. Each rule was checked against the real
//! Go code (see the tests for the vectors).

use std::collections::HashMap;
use std::rc::Rc;

use serde_json::Value;
use serde_saphyr::granit_parser::{Event, ScalarStyle};

use super::gov::number_from_f64;
use super::model::{Values, ValuesError};
use crate::go::float::format_float_yaml;
use crate::go::yaml_v2::{self, Resolved};

/// Parses a values document. `source_name` says where it came from (e.g. `ConfigMap ns/x key values.yaml`)
/// and starts every error message.
pub fn parse_values(text: &str, source_name: &str) -> Result<Values, ValuesError> {
    let root = build_tree(text, source_name)?;
    let Some(root) = root else { return Ok(Values::new()) };
    let mut dec = Decoder { source_name, budget: MAX_DECODED_NODES };
    match dec.decode(&root)? {
        // A document that is only `~`/`null` decodes to a nil map in Go, which Helm treats as no values.
        Value::Null => Ok(Values::new()),
        Value::Object(map) => Ok(map),
        other => Err(ValuesError::NotAMap { source_name: source_name.to_string(), found: kind_name(&other) }),
    }
}

fn kind_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// Aliases are expanded by decoding the anchored node again (as go-yaml does); this bound stops an
/// alias bomb from exhausting memory.
const MAX_DECODED_NODES: usize = 10_000_000;

#[derive(Debug)]
struct Node {
    line: usize,
    kind: NodeKind,
}

#[derive(Debug)]
enum NodeKind {
    Scalar { value: String, style: ScalarStyle, tag: Option<String> },
    Seq(Vec<Rc<Node>>),
    Map(Vec<(Rc<Node>, Rc<Node>)>),
}

/// Collections under construction while events stream in.
enum Frame {
    Seq { line: usize, anchor: usize, items: Vec<Rc<Node>> },
    Map { line: usize, anchor: usize, pairs: Vec<(Rc<Node>, Rc<Node>)>, key: Option<Rc<Node>> },
}

fn yaml_err(source_name: &str, line: usize, message: impl Into<String>) -> ValuesError {
    ValuesError::Yaml { source_name: source_name.to_string(), line, message: message.into() }
}

/// Builds the node tree of the first document; `None` when there is no document or it is empty.
fn build_tree(text: &str, source_name: &str) -> Result<Option<Rc<Node>>, ValuesError> {
    let mut anchors: HashMap<usize, Rc<Node>> = HashMap::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut root: Option<Rc<Node>> = None;
    for next in crate::go::yaml_tree::parser(text) {
        let (event, span) = next.map_err(|e| {
            let line = e.marker().line().max(1);
            yaml_err(source_name, line, e.info())
        })?;
        let line = span.start.line().max(1);
        let complete: Option<(Rc<Node>, usize)> = match event {
            Event::Scalar(value, style, anchor, tag) => {
                let tag = tag.map(|t| format!("{}{}", t.handle(), t.suffix()));
                Some((Rc::new(Node { line, kind: NodeKind::Scalar { value: value.into_owned(), style, tag } }), anchor))
            }
            Event::SequenceStart(_, anchor, _) => {
                stack.push(Frame::Seq { line, anchor, items: Vec::new() });
                None
            }
            Event::MappingStart(_, anchor, _) => {
                stack.push(Frame::Map { line, anchor, pairs: Vec::new(), key: None });
                None
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(Frame::Seq { line, anchor, items }) => {
                    Some((Rc::new(Node { line, kind: NodeKind::Seq(items) }), anchor))
                }
                Some(Frame::Map { line, anchor, pairs, .. }) => {
                    Some((Rc::new(Node { line, kind: NodeKind::Map(pairs) }), anchor))
                }
                None => return Err(yaml_err(source_name, line, "unbalanced collection end")),
            },
            Event::Alias(id) => match anchors.get(&id) {
                Some(node) => Some((node.clone(), 0)),
                // The anchor exists but its node is still open: it would contain itself.
                None => return Err(yaml_err(source_name, line, "anchor value contains itself or is not defined")),
            },
            // go-yaml's Unmarshal reads only the first document and ignores the rest of the stream.
            Event::DocumentEnd => break,
            _ => None,
        };
        let Some((node, anchor)) = complete else { continue };
        if anchor != 0 {
            anchors.insert(anchor, node.clone());
        }
        match stack.last_mut() {
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map { pairs, key, .. }) => match key.take() {
                Some(k) => pairs.push((k, node)),
                None => *key = Some(node),
            },
            None => root = Some(node),
        }
    }
    Ok(root)
}

struct Decoder<'a> {
    source_name: &'a str,
    budget: usize,
}

impl Decoder<'_> {
    fn spend(&mut self, line: usize) -> Result<(), ValuesError> {
        self.budget = self
            .budget
            .checked_sub(1)
            .ok_or_else(|| yaml_err(self.source_name, line, "document contains excessive aliasing"))?;
        Ok(())
    }

    fn decode(&mut self, node: &Node) -> Result<Value, ValuesError> {
        self.spend(node.line)?;
        match &node.kind {
            NodeKind::Scalar { value, style, tag } => {
                let r = yaml_v2::scalar(value, *style, tag.as_deref())
                    .map_err(|m| yaml_err(self.source_name, node.line, m))?;
                self.scalar_to_json(r, node.line)
            }
            NodeKind::Seq(items) => Ok(Value::Array(items.iter().map(|n| self.decode(n)).collect::<Result<_, _>>()?)),
            NodeKind::Map(pairs) => {
                let mut out = Values::new();
                self.decode_pairs(pairs, &mut out)?;
                Ok(Value::Object(out))
            }
        }
    }

    /// go-yaml v2 applies pairs in order into one Go map: a later key overwrites an earlier one (duplicates are
    /// not an error outside strict mode) and a merge key (`<<`) writes the merged map's keys at its position,
    /// so keys before a `<<` are overwritten by it and keys after it win.
    fn decode_pairs(&mut self, pairs: &[(Rc<Node>, Rc<Node>)], out: &mut Values) -> Result<(), ValuesError> {
        for (k, v) in pairs {
            if is_merge_key(k) {
                self.merge(v, out)?;
                continue;
            }
            let key = self.decode_key(k)?;
            let val = self.decode(v)?;
            out.insert(key, val);
        }
        Ok(())
    }

    fn merge(&mut self, node: &Node, out: &mut Values) -> Result<(), ValuesError> {
        let want_map =
            || yaml_err(self.source_name, node.line, "map merge requires map or sequence of maps as the value");
        match &node.kind {
            NodeKind::Map(pairs) => self.decode_pairs(pairs, out),
            NodeKind::Seq(items) => {
                // Earlier maps take precedence, so go-yaml applies them last.
                for item in items.iter().rev() {
                    let NodeKind::Map(pairs) = &item.kind else { return Err(want_map()) };
                    self.decode_pairs(pairs, out)?;
                }
                Ok(())
            }
            NodeKind::Scalar { .. } => Err(want_map()),
        }
    }

    /// Keys go through go-yaml (typed) and then `sigs.k8s.io/yaml`'s key conversion to strings.
    fn decode_key(&mut self, node: &Node) -> Result<String, ValuesError> {
        self.spend(node.line)?;
        let err = |m: String| yaml_err(self.source_name, node.line, m);
        let NodeKind::Scalar { value, style, tag } = &node.kind else {
            return Err(err("invalid map key: a list or mapping cannot be a key".into()));
        };
        Ok(match yaml_v2::scalar(value, *style, tag.as_deref()).map_err(err)? {
            Resolved::Str(s) => s,
            Resolved::Bool(b) => b.to_string(),
            Resolved::Int(i) => i.to_string(),
            // sigs.k8s.io/yaml formats float keys with 32-bit precision.
            Resolved::Float(f) => format_float_yaml(f, true),
            Resolved::Uint(u) => return Err(err(format!("unsupported map key of type: uint64, key: {u}"))),
            Resolved::Null => return Err(err(format!("unsupported map key of type: <nil>, key: {value:?}"))),
        })
    }

    fn scalar_to_json(&self, r: Resolved, line: usize) -> Result<Value, ValuesError> {
        Ok(match r {
            Resolved::Null => Value::Null,
            Resolved::Bool(b) => Value::Bool(b),
            // The JSON round trip turns every Go integer into a float64, rounding large ones.
            Resolved::Int(i) => number_from_f64(i as f64),
            Resolved::Uint(u) => number_from_f64(u as f64),
            Resolved::Float(f) if f.is_finite() => number_from_f64(f),
            Resolved::Float(f) => {
                let shown = format_float_yaml(f, false);
                return Err(yaml_err(
                    self.source_name,
                    line,
                    format!("json: unsupported value: {shown} (quote it to keep a string)"),
                ));
            }
            Resolved::Str(s) => Value::String(s),
        })
    }
}

fn is_merge_key(node: &Node) -> bool {
    match &node.kind {
        NodeKind::Scalar { value, style, tag } => {
            value == "<<"
                && ((tag.is_none() && *style == ScalarStyle::Plain)
                    || tag.as_deref() == Some("tag:yaml.org,2002:merge"))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(y: &str) -> Value {
        Value::Object(parse_values(y, "test").unwrap_or_else(|e| panic!("{y:?}: {e}")))
    }

    fn a(y: &str) -> Value {
        p(y)["a"].clone()
    }

    fn e(y: &str) -> String {
        parse_values(y, "ConfigMap ns/x key values.yaml").unwrap_err().to_string()
    }

    // Expected values come from helm.sh/helm/v4 `common.ReadValues` (sigs.k8s.io/yaml v1.6.0, go.yaml.in/yaml/v2
    // v2.4.4) in a throwaway Go program; Go's float64 results are written here as the equivalent JSON number.

    #[test]
    fn yaml_1_1_booleans_and_nulls() {
        for t in ["yes", "Yes", "YES", "on", "On", "y", "Y", "true", "TRUE"] {
            assert_eq!(a(&format!("a: {t}")), json!(true), "{t}");
        }
        for f in ["no", "off", "Off", "n", "N", "false", "False"] {
            assert_eq!(a(&format!("a: {f}")), json!(false), "{f}");
        }
        for s in ["yES", "tRue", "nO "] {
            assert!(a(&format!("a: {s}")).is_string(), "{s}");
        }
        for n in ["~", "null", "Null", "NULL", ""] {
            assert_eq!(a(&format!("a: {n}")), Value::Null, "{n:?}");
        }
        assert_eq!(a("a: \"yes\""), json!("yes"));
        assert_eq!(a("a: |\n  yes\n"), json!("yes\n"));
    }

    #[test]
    fn numbers_as_go_sees_them() {
        let cases = [
            ("0x1F", json!(31)),
            ("-0x1F", json!(-31)),
            ("0x_1F", json!(31)),
            ("0o17", json!(15)),
            ("017", json!(15)),
            ("08", json!(8)),
            ("0b101", json!(5)),
            ("-0b101", json!(-5)),
            ("1_000", json!(1000)),
            ("+12", json!(12)),
            ("1e3", json!(1000)),
            ("1e+3", json!(1000)),
            ("1.5e3", json!(1500)),
            ("1.0", json!(1)),
            ("3.", json!(3)),
            ("-0", json!(0)),
            (".5", json!(0.5)),
            ("+.5", json!(0.5)),
            ("0.1", json!(0.1)),
            // Beyond 2^53 the float64 round trip rounds, as in Go.
            ("9007199254740993", json!(9007199254740992u64)),
            ("12345678901234567891", json!(12345678901234567168u64)),
            ("9223372036854775807", json!(9223372036854775808u64)),
            ("1e20", json!(1e20)),
            // Not numbers for go-yaml v2.
            ("1e400", json!("1e400")),
            ("12:30:00", json!("12:30:00")),
            ("1:2", json!("1:2")),
            ("2001-12-14", json!("2001-12-14")),
            ("2001-12-14T21:59:43.10-05:00", json!("2001-12-14T21:59:43.10-05:00")),
        ];
        for (y, want) in cases {
            assert_eq!(a(&format!("a: {y}")), want, "{y}");
        }
    }

    #[test]
    fn non_finite_floats_are_errors() {
        assert_eq!(
            e("x: 1\na: .inf"),
            "ConfigMap ns/x key values.yaml: line 2: json: unsupported value: .inf (quote it to keep a string)"
        );
        assert!(e("a: -.inf").contains("-.inf"));
        assert!(e("a: .nan").contains(".nan"));
        assert_eq!(a("a: '.inf'"), json!(".inf"));
    }

    #[test]
    fn tags() {
        assert_eq!(a("a: !!str 12"), json!("12"));
        assert_eq!(a("a: !!int \"12\""), json!(12));
        assert_eq!(a("a: !!float 1"), json!(1));
        assert_eq!(a("a: !!bool yes"), json!(true));
        assert_eq!(a("a: !foo 12"), json!("12"));
        assert_eq!(a("a: !!binary aGVsbG8="), json!("hello"));
        assert_eq!(a("a: !!timestamp 2001-12-14"), json!("2001-12-14"));
        assert_eq!(e("a: !!int abc"), "ConfigMap ns/x key values.yaml: line 1: cannot decode !!str `abc` as a !!int");
        assert!(e("a: !!null x").ends_with("cannot decode !!str `x` as a !!null"));
    }

    #[test]
    fn keys_become_strings() {
        assert_eq!(
            p("1: a\ntrue: x\n1.5: q\n0.1: z\n1e3: w\ny: 2"),
            json!({"1": "a", "true": "x", "1.5": "q", "0.1": "z", "1000": "w"})
                .as_object()
                .map(|m| {
                    let mut m = m.clone();
                    // `y` is a YAML 1.1 boolean, so the key `y` is "true" and overwrites the earlier `true` key.
                    m.insert("true".into(), json!(2));
                    Value::Object(m)
                })
                .unwrap_or_default()
        );
        assert_eq!(p("1e7: a"), json!({"1e+07": "a"}));
        assert!(e("~: x").contains("unsupported map key of type: <nil>"));
        assert!(e("null: x").contains("unsupported map key"));
        assert!(e("18446744073709551615: x").contains("unsupported map key of type: uint64"));
        assert!(e("? [a]\n: x").contains("invalid map key"));
    }

    #[test]
    fn duplicates_anchors_and_merge_keys() {
        assert_eq!(p("a: 1\na: 2"), json!({"a": 2}));
        assert_eq!(p("a: &x {b: 1}\nc: *x"), json!({"a": {"b": 1}, "c": {"b": 1}}));
        assert_eq!(
            p("base: &b {x: 1, z: 2}\nd:\n  <<: *b\n  z: 3"),
            json!({"base": {"x": 1, "z": 2}, "d": {"x": 1, "z": 3}})
        );
        // go-yaml v2 applies `<<` in place: it overwrites keys written before it.
        assert_eq!(p("d:\n  z: 3\n  <<: {z: 4}"), json!({"d": {"z": 4}}));
        // In a list of merges the first map wins.
        assert_eq!(p("d:\n  <<: [{z: 1}, {z: 2, w: 2}]"), json!({"d": {"z": 1, "w": 2}}));
        assert!(e("a: *x").contains("line 1"));
        assert!(e("a:\n  <<: 1").contains("map merge requires map"));
    }

    #[test]
    fn documents() {
        assert_eq!(p(""), json!({}));
        assert_eq!(p("# only a comment\n"), json!({}));
        assert_eq!(p("---\n"), json!({}));
        assert_eq!(p("~"), json!({}));
        // Only the first document counts, even when a later one is malformed.
        assert_eq!(p("a: 1\n---\nb: 2"), json!({"a": 1}));
        assert_eq!(p("a: 1\n---\nb: ["), json!({"a": 1}));
        assert_eq!(p("%YAML 1.1\n---\na: 1"), json!({"a": 1}));
        assert_eq!(e("- a\n- b"), "ConfigMap ns/x key values.yaml: values must be a YAML mapping, not a list");
        assert_eq!(e("foo"), "ConfigMap ns/x key values.yaml: values must be a YAML mapping, not a string");
    }

    #[test]
    fn syntax_errors_name_source_and_line() {
        assert_eq!(
            e("a: 1\n  b: 2"),
            "ConfigMap ns/x key values.yaml: line 2: mapping values are not allowed in this context"
        );
        assert!(e("a: b: c").starts_with("ConfigMap ns/x key values.yaml: line 1: "));
        assert!(e("x: 1\na: [1, 2").starts_with("ConfigMap ns/x key values.yaml: line 2: "));
    }
}
