//! Values YAML, read the way Helm and Flux read it.
//!
//! Both call `sigs.k8s.io/yaml.Unmarshal`: go-yaml **v2** decodes the YAML into Go values (YAML 1.1 rules:
//! `yes`/`no`/`on`/`off`/`y`/`n` are booleans, `017` is octal, `1e3` a float, timestamps stay strings), the
//! result is JSON-encoded and decoded again (so every number becomes a float64, `.inf`/`.nan` are errors, and
//! non-string keys become strings: `1: a` → `"1"`, `true: x` → `"true"`, `y: 1` → `"true"`). Only the first
//! document counts; an empty document is an empty map. We parse with the granit parser (the one beneath
//! serde-saphyr), which gives us the scalar style and the raw text, and apply go-yaml v2's resolution rules.
//! Each rule below was checked against the real Go code (see the tests for the vectors).

use std::collections::HashMap;
use std::rc::Rc;

use serde_json::Value;
use serde_saphyr::granit_parser::{Event, Parser, ScalarStyle};

use super::gov::number_from_f64;
use super::{Values, ValuesError};

const CORE: &str = "tag:yaml.org,2002:";

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

/// The YAML event parser as cozyhr reads documents with it: comments are not reported (nothing uses them,
/// and collecting them costs the parser about a third of its time).
pub(crate) fn parser(text: &str) -> Parser<'_, serde_saphyr::granit_parser::StrInput<'_>> {
    let mut options = serde_saphyr::granit_parser::Options::default();
    options.set_emit_comments(false);
    Parser::new_from_str_with_options(text, options)
}

/// Builds the node tree of the first document; `None` when there is no document or it is empty.
fn build_tree(text: &str, source_name: &str) -> Result<Option<Rc<Node>>, ValuesError> {
    let mut anchors: HashMap<usize, Rc<Node>> = HashMap::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut root: Option<Rc<Node>> = None;
    for next in parser(text) {
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
                let r = resolve_node(value, *style, tag.as_deref())
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
        Ok(match resolve_node(value, *style, tag.as_deref()).map_err(err)? {
            Resolved::Str(s) => s,
            Resolved::Bool(b) => b.to_string(),
            Resolved::Int(i) => i.to_string(),
            // sigs.k8s.io/yaml formats float keys with 32-bit precision.
            Resolved::Float(f) => format_go_float(f, true),
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
                let shown = format_go_float(f, false);
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

/// A scalar as go-yaml v2 decodes it into an `interface{}`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Resolved {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(String),
}

/// go-yaml v2 `decoder.scalar`: quoted and block scalars without a tag are strings; everything else goes
/// through `resolve` with its tag; `!!binary` is base64-decoded; timestamps stay the original text.
fn resolve_node(value: &str, style: ScalarStyle, tag: Option<&str>) -> Result<Resolved, String> {
    if tag.is_none() && style != ScalarStyle::Plain {
        return Ok(Resolved::Str(value.to_string()));
    }
    let tag = tag.unwrap_or("");
    if tag == "tag:yaml.org,2002:binary" {
        let bytes = base64_decode(value).ok_or("!!binary value contains invalid base64 data")?;
        return Ok(Resolved::Str(String::from_utf8_lossy(&bytes).into_owned()));
    }
    resolve(tag, value)
}

/// go-yaml v2 `resolve(tag, in)`. Unknown tags keep the text as a string; a core tag that does not match the
/// text is an error, except that an integer is accepted as `!!float`.
pub(crate) fn resolve(tag: &str, s: &str) -> Result<Resolved, String> {
    let resolvable = matches!(tag.strip_prefix(CORE), Some("str" | "bool" | "int" | "float" | "null" | "timestamp"))
        || tag.is_empty();
    if !resolvable {
        return Ok(Resolved::Str(s.to_string()));
    }
    let (rtag, out) =
        resolve_plain(s, tag.is_empty() || tag == "tag:yaml.org,2002:timestamp", tag == "tag:yaml.org,2002:str");
    let want = tag.strip_prefix(CORE).unwrap_or("");
    if want.is_empty() || want == rtag || want == "str" {
        if want == "str" {
            return Ok(Resolved::Str(s.to_string()));
        }
        return Ok(out);
    }
    if let ("float", Resolved::Int(i)) = (want, &out) {
        return Ok(Resolved::Float(*i as f64));
    }
    Err(format!("cannot decode !!{rtag} `{s}` as a !!{want}"))
}

/// The untagged branch of go-yaml v2 `resolve`: returns the short tag it resolved to and the value.
pub(crate) fn resolve_plain(s: &str, timestamps: bool, force_str: bool) -> (&'static str, Resolved) {
    let hint = match s.as_bytes().first() {
        None => b'N',
        Some(b'+' | b'-') => b'S',
        Some(b'0'..=b'9') => b'D',
        Some(b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~') => b'M',
        Some(b'.') => b'.',
        Some(_) => 0,
    };
    if hint == 0 || force_str {
        return ("str", Resolved::Str(s.to_string()));
    }
    match s {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return ("bool", Resolved::Bool(true));
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return ("bool", Resolved::Bool(false));
        }
        "" | "~" | "null" | "Null" | "NULL" => return ("null", Resolved::Null),
        ".nan" | ".NaN" | ".NAN" => return ("float", Resolved::Float(f64::NAN)),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => return ("float", Resolved::Float(f64::INFINITY)),
        "-.inf" | "-.Inf" | "-.INF" => return ("float", Resolved::Float(f64::NEG_INFINITY)),
        _ => {}
    }
    match hint {
        b'.' if is_dot_float(s) => {
            if let Some(f) = s.parse::<f64>().ok().filter(|f| f.is_finite()) {
                return ("float", Resolved::Float(f));
            }
        }
        b'D' | b'S' => {
            if timestamps && is_go_timestamp(s) {
                return ("timestamp", Resolved::Str(s.to_string()));
            }
            let plain: String = s.chars().filter(|&c| c != '_').collect();
            if let Some(i) = go_parse_int(&plain) {
                return ("int", Resolved::Int(i));
            }
            if let Some(u) = go_parse_uint(&plain) {
                return ("int", Resolved::Uint(u));
            }
            if is_yaml_style_float(&plain) {
                // Go's ParseFloat fails on overflow (1e400), and the text then stays a string.
                if let Some(f) = plain.parse::<f64>().ok().filter(|f| f.is_finite()) {
                    return ("float", Resolved::Float(f));
                }
            }
            // go-yaml also tries "0b"/"-0b" itself, but Go's base-0 ParseInt already covers both.
        }
        _ => {}
    }
    ("str", Resolved::Str(s.to_string()))
}

/// Go `strconv.ParseInt(s, 0, 64)` on text without underscores.
pub(crate) fn go_parse_int(s: &str) -> Option<i64> {
    let (neg, digits) = match s.as_bytes().first()? {
        b'+' => (false, &s[1..]),
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    let u = go_parse_uint(digits)?;
    if neg { if u <= 1u64 << 63 { Some((u as i64).wrapping_neg()) } else { None } } else { i64::try_from(u).ok() }
}

/// Go `strconv.ParseUint(s, 0, 64)`: `0x`/`0o`/`0b` prefixes, a leading `0` means octal, no sign.
pub(crate) fn go_parse_uint(s: &str) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let b = s.as_bytes();
    let (radix, digits) = if b[0] == b'0' {
        match b.get(1).map(u8::to_ascii_lowercase) {
            Some(b'b') if b.len() >= 3 => (2, &s[2..]),
            Some(b'o') if b.len() >= 3 => (8, &s[2..]),
            Some(b'x') if b.len() >= 3 => (16, &s[2..]),
            _ => (8, &s[1..]),
        }
    } else {
        (10, s)
    };
    if digits.is_empty() {
        // Only "0" gets here ("0" strips to nothing and is zero).
        return Some(0);
    }
    if !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// go-yaml's `yamlStyleFloat`: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
pub(crate) fn is_yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// What Go's `ParseFloat` accepts for text starting with a dot: `.5`, `.5e3`.
fn is_dot_float(s: &str) -> bool {
    s.starts_with('.') && is_yaml_style_float(s)
}

/// go-yaml v2 `parseTimestamp`: four digits and a dash, then one of its accepted Go layouts.
pub(crate) fn is_go_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    parse_go_time(s).is_some()
}

/// Matches Go `time.Parse` with the layouts "2006-1-2T15:4:5.999999999Z07:00" (also with `t`),
/// "2006-1-2 15:4:5.999999999" and "2006-1-2", including Go's range checks.
fn parse_go_time(s: &str) -> Option<()> {
    let b = s.as_bytes();
    let mut i = 0usize;
    // Go's getnum for 1-or-2-digit fields: one digit, and a second one if present.
    let num12 = |i: &mut usize| -> Option<u32> {
        let d1 = *b.get(*i).filter(|c| c.is_ascii_digit())?;
        *i += 1;
        let mut n = u32::from(d1 - b'0');
        if let Some(d2) = b.get(*i).filter(|c| c.is_ascii_digit()) {
            n = n * 10 + u32::from(d2 - b'0');
            *i += 1;
        }
        Some(n)
    };
    let year: u32 = s.get(0..4)?.parse().ok()?;
    i += 4;
    if b.get(i) != Some(&b'-') {
        return None;
    }
    i += 1;
    let month = num12(&mut i)?;
    if b.get(i) != Some(&b'-') {
        return None;
    }
    i += 1;
    let day = num12(&mut i)?;
    if !(1..=12).contains(&month) || day < 1 || day > days_in(month, year) {
        return None;
    }
    if i == b.len() {
        return Some(());
    }
    let with_zone = match b[i] {
        b'T' | b't' => true,
        b' ' => false,
        _ => return None,
    };
    i += 1;
    let hour = num12(&mut i)?;
    if b.get(i) != Some(&b':') {
        return None;
    }
    i += 1;
    let min = num12(&mut i)?;
    if b.get(i) != Some(&b':') {
        return None;
    }
    i += 1;
    let sec = num12(&mut i)?;
    if hour > 23 || min > 59 || sec > 59 {
        return None;
    }
    if matches!(b.get(i), Some(b'.' | b',')) && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
        i += 1;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    if with_zone {
        match b.get(i) {
            Some(b'Z') => i += 1,
            Some(b'+' | b'-') => {
                let z = b.get(i..i + 6)?;
                if z[3] != b':' || !z[1..3].iter().chain(&z[4..6]).all(u8::is_ascii_digit) {
                    return None;
                }
                let (hh, mm) = (
                    u32::from(z[1] - b'0') * 10 + u32::from(z[2] - b'0'),
                    u32::from(z[4] - b'0') * 10 + u32::from(z[5] - b'0'),
                );
                if hh > 24 || mm > 60 {
                    return None;
                }
                i += 6;
            }
            _ => return None,
        }
    }
    (i == b.len()).then_some(())
}

fn days_in(month: u32, year: u32) -> u32 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Go `strconv.FormatFloat(f, 'g', -1, 64 or 32)`, with go-yaml's names for the non-finite values.
pub(crate) fn format_go_float(f: f64, bits32: bool) -> String {
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf".into() } else { "-.inf".into() };
    }
    crate::go::format_float_g(f, bits32)
}

/// Standard base64 with padding, as Go's `base64.StdEncoding` (no whitespace allowed except line breaks,
/// which go-yaml's scanner has already folded away).
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let s: Vec<u8> = s.bytes().filter(|c| *c != b'\n' && *c != b'\r').collect();
    if !s.len().is_multiple_of(4) {
        return None;
    }
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        })
    };
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    for (n, chunk) in s.chunks(4).enumerate() {
        let last = n == s.len() / 4 - 1;
        let pad = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && !last) {
            return None;
        }
        let mut acc = 0u32;
        for &c in &chunk[..4 - pad] {
            acc = (acc << 6) | val(c)?;
        }
        acc <<= 6 * pad as u32;
        let bytes = [(acc >> 16) as u8, (acc >> 8) as u8, acc as u8];
        out.extend_from_slice(&bytes[..3 - pad]);
    }
    Some(out)
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

    #[test]
    fn go_float_formatting() {
        assert_eq!(format_go_float(1.5, false), "1.5");
        assert_eq!(format_go_float(1e21, false), "1e+21");
        assert_eq!(format_go_float(1e-7, false), "1e-07");
        assert_eq!(format_go_float(0.0001, false), "0.0001");
        assert_eq!(format_go_float(123456.0, false), "123456");
        assert_eq!(format_go_float(1234567.5, false), "1.2345675e+06");
        assert_eq!(format_go_float(0.1, true), "0.1");
        assert_eq!(format_go_float(1.23456789, true), "1.2345679");
    }
}
