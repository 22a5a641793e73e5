//! Go's `encoding/json`, the parts helm-controller's digests depend on.
//!
//! Encoding as `json.Encoder` writes: members in struct field order (the caller writes them so, with
//! `omitempty` as the struct says), `map[string]…` keys sorted bytewise, float64 in Go's float format
//! ([`crate::float::format_float_json`]), strings with `<`, `>`, `&`, U+2028 and U+2029 escaped,
//! `\b \f \n \r \t` short escapes and `\u00XX` for other control bytes, and the newline `Encoder.Encode`
//! ends with. Invalid UTF-8 cannot reach us: a `serde_json::Value` only holds valid strings, and Go never
//! writes invalid UTF-8 into the JSON it stores.
//!
//! Decoding as `json.Unmarshal` fills Go struct fields from a parsed `serde_json::Value`: keys matched
//! exactly, else case-insensitively; `null` leaves a field as it is; a type error is remembered (the first
//! one, with Go's message) while decoding goes on.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::float::format_float_json;
use super::time::GoTime;

// ---------------------------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------------------------

/// `Encoder.Encode`'s output: the value `write` writes, then a newline.
pub fn encode(write: impl FnOnce(&mut String)) -> String {
    let mut out = String::new();
    write(&mut out);
    out.push('\n');
    out
}

/// A JSON object being written member by member, in Go struct field order.
pub struct Obj<'a> {
    out: &'a mut String,
    members: usize,
}

impl<'a> Obj<'a> {
    pub fn new(out: &'a mut String) -> Self {
        out.push('{');
        Obj { out, members: 0 }
    }

    /// Starts a member and returns the buffer to write its value into.
    pub fn key(&mut self, key: &str) -> &mut String {
        if self.members > 0 {
            self.out.push(',');
        }
        self.members += 1;
        encode_string(self.out, key);
        self.out.push(':');
        self.out
    }

    pub fn string(&mut self, key: &str, value: &str, omitempty: bool) {
        if !(omitempty && value.is_empty()) {
            encode_string(self.key(key), value);
        }
    }

    /// An `omitempty` string slice.
    pub fn strings(&mut self, key: &str, values: &[String]) {
        if !values.is_empty() {
            encode_list(self.key(key), values, |out, s| encode_string(out, s));
        }
    }

    pub fn end(self) {
        self.out.push('}');
    }
}

/// A slice, each item written by `each`.
pub fn encode_list<T>(out: &mut String, items: &[T], mut each: impl FnMut(&mut String, &T)) {
    out.push('[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        each(out, item);
    }
    out.push(']');
}

/// A `map[string]string`: keys sorted bytewise (the `BTreeMap` order).
pub fn encode_string_map(out: &mut String, map: &BTreeMap<String, String>) {
    let mut o = Obj::new(out);
    for (k, v) in map {
        encode_string(o.key(k), v);
    }
    o.end();
}

/// A Go string as `json.Encoder` (HTML escaping on) writes it.
pub fn encode_string(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{0}'..='\u{1f}' | '<' | '>' | '&' => {
                let b = c as u8;
                out.push_str("\\u00");
                out.push(HEX[usize::from(b >> 4)] as char);
                out.push(HEX[usize::from(b & 0xf)] as char);
            }
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A Go `interface{}` decoded by `json.Unmarshal`: numbers are float64, objects `map[string]any`.
pub fn encode_any(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&format_float_json(n.as_f64().unwrap_or(0.0))),
        Value::String(s) => encode_string(out, s),
        Value::Array(items) => encode_list(out, items, encode_any),
        Value::Object(o) => encode_map(out, o),
    }
}

/// A `map[string]any`: keys sorted bytewise.
pub fn encode_map(out: &mut String, obj: &Map<String, Value>) {
    let mut entries: Vec<(&String, &Value)> = obj.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    let mut o = Obj::new(out);
    for (k, v) in entries {
        encode_any(o.key(k), v);
    }
    o.end();
}

// ---------------------------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------------------------

/// Decoding state: like `json.Unmarshal`, keep going after a type error but remember the first one.
#[derive(Default)]
pub struct Dec {
    pub err: Option<String>,
}

/// How Go's errors name the JSON value they met.
pub fn value_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Go's case-insensitive field-name folding (`foldName`) for ASCII field names: ASCII
/// letters upper-cased, and the two non-ASCII runes whose fold set reaches an ASCII letter (ſ → S, K → K).
fn fold_matches(key: &str, field: &str) -> bool {
    let mut k = key.chars();
    for f in field.chars() {
        let Some(c) = k.next() else { return false };
        let c = match c {
            '\u{17f}' => 'S',
            '\u{212a}' => 'K',
            c => c.to_ascii_uppercase(),
        };
        if c != f.to_ascii_uppercase() {
            return false;
        }
    }
    k.next().is_none()
}

/// The struct field a JSON key lands in: an exact name first, else a case-insensitive one (Go ≥ 1.21).
pub fn field_index(fields: &[&str], key: &str) -> Option<usize> {
    fields.iter().position(|f| *f == key).or_else(|| fields.iter().position(|f| fold_matches(key, f)))
}

impl Dec {
    pub fn fail(&mut self, msg: impl FnOnce() -> String) {
        if self.err.is_none() {
            self.err = Some(msg());
        }
    }

    pub fn type_error(&mut self, v: &Value, field: &str, go_type: &str) {
        self.fail(|| {
            format!("json: cannot unmarshal {} into Go struct field {field} of type {go_type}", value_kind(v))
        });
    }

    /// The members of a JSON object decoded into a Go struct (`null` leaves the struct as is).
    pub fn object<'v>(&mut self, v: &'v Value, field: &str, go_type: &str) -> Option<&'v Map<String, Value>> {
        match v {
            Value::Object(o) => Some(o),
            Value::Null => None,
            other => {
                self.type_error(other, field, go_type);
                None
            }
        }
    }

    pub fn string(&mut self, v: &Value, field: &str, out: &mut String) {
        match v {
            Value::String(s) => *out = s.clone(),
            Value::Null => {}
            other => self.type_error(other, field, "string"),
        }
    }

    /// A Go `int`: only an integer literal that fits in int64 (serde_json keeps those as i64/u64).
    pub fn int(&mut self, v: &Value, field: &str, out: &mut i64) {
        match v {
            Value::Null => {}
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    *out = i;
                } else if n.as_f64().is_some_and(|f| f == 0.0 && f.is_sign_negative()) {
                    // serde_json reads the literal `-0` as -0.0; Go's ParseInt takes it as 0.
                    *out = 0;
                } else {
                    self.fail(|| format!("json: cannot unmarshal number {n} into Go struct field {field} of type int"));
                }
            }
            other => self.type_error(other, field, "int"),
        }
    }

    pub fn boolean(&mut self, v: &Value, field: &str, out: &mut bool) {
        match v {
            Value::Bool(b) => *out = *b,
            Value::Null => {}
            other => self.type_error(other, field, "bool"),
        }
    }

    /// A `[]string` (or a slice of a string type): `null` is a nil slice, a `null` element is "".
    pub fn strings(&mut self, v: &Value, field: &str, out: &mut Vec<String>) {
        match v {
            Value::Null => out.clear(),
            Value::Array(items) => {
                *out = items
                    .iter()
                    .map(|item| {
                        let mut s = String::new();
                        self.string(item, field, &mut s);
                        s
                    })
                    .collect();
            }
            other => self.type_error(other, field, "[]string"),
        }
    }

    /// A `map[string]string`: decodes into the existing map; a `null` value stores "".
    pub fn string_map(&mut self, v: &Value, field: &str, out: &mut Option<BTreeMap<String, String>>) {
        match v {
            Value::Null => *out = None,
            Value::Object(o) => {
                let map = out.get_or_insert_with(BTreeMap::new);
                for (k, item) in o {
                    let mut s = String::new();
                    self.string(item, field, &mut s);
                    map.insert(k.clone(), s);
                }
            }
            other => self.type_error(other, field, "map[string]string"),
        }
    }

    /// A `*time.Time`: `null` is nil, a string is read by `Time.UnmarshalJSON` (RFC 3339).
    pub fn time(&mut self, v: &Value, field: &str, out: &mut Option<GoTime>) {
        match v {
            Value::Null => *out = None,
            Value::String(s) => match GoTime::parse_rfc3339(s) {
                Some(t) => *out = Some(t),
                None => self.fail(|| format!("parsing time {s:?} as RFC 3339 (field {field})")),
            },
            _ => self.fail(|| format!("Time.UnmarshalJSON: input is not a JSON string (field {field})")),
        }
    }
}

/// A `[]*T`: `null` is a nil slice, a `null` element a nil pointer.
pub fn decode_ptr_slice<T>(
    d: &mut Dec,
    v: &Value,
    field: &str,
    go_type: &str,
    mut decode: impl FnMut(&mut Dec, &Map<String, Value>) -> T,
) -> Vec<Option<T>> {
    match v {
        Value::Null => Vec::new(),
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                Value::Null => None,
                Value::Object(o) => Some(decode(d, o)),
                other => {
                    d.type_error(other, field, go_type);
                    None
                }
            })
            .collect(),
        other => {
            d.type_error(other, field, go_type);
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Value {
        serde_json::from_str(text).expect("fixture is JSON")
    }

    #[test]
    fn floats_format_like_go() {
        // (JSON literal in the stored release, what Go's encoder writes for the float64 it decodes to)
        const CASES: &[(&str, &str)] = &[
            ("0", "0"),
            ("-0", "-0"),
            ("1", "1"),
            ("-1", "-1"),
            ("0.5", "0.5"),
            ("2.25", "2.25"),
            ("0.1", "0.1"),
            ("0.3333333333333333", "0.3333333333333333"),
            ("100", "100"),
            ("1e15", "1000000000000000"),
            ("1e20", "100000000000000000000"),
            ("1e21", "1e+21"),
            ("123456789012345678901", "123456789012345680000"),
            ("12345678901234567890", "12345678901234567000"),
            ("9007199254740993", "9007199254740992"),
            ("1e-6", "0.000001"),
            ("9.999999999999999e-7", "0.000001"),
            ("1e-7", "1e-7"),
            ("1.5e-10", "1.5e-10"),
            ("-1.25e-10", "-1.25e-10"),
            ("1.5e300", "1.5e+300"),
            ("1.7976931348623157e308", "1.7976931348623157e+308"),
            ("5e-324", "5e-324"),
            ("2.2250738585072014e-308", "2.2250738585072014e-308"),
            // Exact ties between two shortest candidates: Go takes the even digit, Rust's `{}` the odd one.
            ("1748103125955531.25", "1748103125955531.2"),
            ("-1866661216161838.25", "-1866661216161838.2"),
            ("1363092253102635.25", "1363092253102635.2"),
            ("4.35", "4.35"),
            ("0.000001234", "0.000001234"),
            ("999999999999999999999", "1e+21"),
            ("1e+22", "1e+22"),
            ("123.456e5", "12345600"),
            ("8.41e21", "8.41e+21"),
            ("-0.0", "-0"),
            ("1E2", "100"),
        ];
        for (literal, go) in CASES {
            let mut out = String::new();
            encode_any(&mut out, &parse(literal));
            assert_eq!(out, *go, "{literal}");
        }
    }

    #[test]
    fn serde_json_parses_floats_correctly_rounded() {
        // Without serde_json's `float_roundtrip` feature this parses one ULP off and the digest breaks.
        let v = parse("123456789012345680000");
        assert_eq!(v.as_f64(), Some(1.2345678901234568e20));
    }

    #[test]
    fn strings_escape_like_go_encoder() {
        let mut out = String::new();
        encode_string(&mut out, "a\u{8}\u{c}\n\r\t\u{0}\u{1f}\u{7f}<>&\u{2028}\u{2029}\"\\/é😀");
        assert_eq!(
            out,
            r#""a\b\f\n\r\t\u0000\u001f\u007f\u003c\u003e\u0026\u2028\u2029\"\\/é😀""#.replace("\\u007f", "\u{7f}")
        );
    }
}
