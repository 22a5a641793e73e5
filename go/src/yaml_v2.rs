//! go-yaml **v2**'s scalar rules (go.yaml.in/yaml/v2 v2.4.4, YAML 1.1), which Helm and Flux apply to values
//! through sigs.k8s.io/yaml: which plain scalar is a bool (`yes`, `on`, `y`, …), null, an int (Go's
//! `ParseInt` syntax: `017` is octal), a float or a timestamp when decoding (`resolve`, `decoder.scalar`),
//! and which string the encoder may write plain (`encoder.stringv`). go-yaml v3's rules, which differ
//! (YAML 1.2), are in [`super::yaml_v3`]; the few checks both versions share are here.

use base64::Engine as _;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use serde_saphyr::granit_parser::ScalarStyle;

use super::strconv::{parse_int, parse_uint};
use super::time::matches_yaml_timestamp_layouts;

const CORE: &str = "tag:yaml.org,2002:";

/// A scalar as go-yaml v2 decodes it into an `interface{}`.
#[derive(Clone, Debug, PartialEq)]
pub enum Resolved {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(String),
}

/// go-yaml v2 `decoder.scalar`: quoted and block scalars without a tag are strings; everything else goes
/// through go-yaml v2's `resolve` (below) with its tag; `!!binary` is base64-decoded; timestamps stay the
/// original text.
pub fn scalar(value: &str, style: ScalarStyle, tag: Option<&str>) -> Result<Resolved, String> {
    if tag.is_none() && style != ScalarStyle::Plain {
        return Ok(Resolved::Str(value.to_string()));
    }
    let tag = tag.unwrap_or("");
    if tag == "tag:yaml.org,2002:binary" {
        let bytes = decode_binary(value).ok_or("!!binary value contains invalid base64 data")?;
        return Ok(Resolved::Str(String::from_utf8_lossy(&bytes).into_owned()));
    }
    resolve(tag, value)
}

/// go-yaml v2 `resolve(tag, in)`. Unknown tags keep the text as a string; a core tag that does not match the
/// text is an error, except that an integer is accepted as `!!float`.
fn resolve(tag: &str, s: &str) -> Result<Resolved, String> {
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
fn resolve_plain(s: &str, timestamps: bool, force_str: bool) -> (&'static str, Resolved) {
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
            if timestamps && is_timestamp(s) {
                return ("timestamp", Resolved::Str(s.to_string()));
            }
            let plain: String = s.chars().filter(|&c| c != '_').collect();
            if let Some(i) = parse_int(&plain) {
                return ("int", Resolved::Int(i));
            }
            if let Some(u) = parse_uint(&plain) {
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

/// go-yaml's `yamlStyleFloat` (v2 and v3 alike): `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
pub fn is_yaml_style_float(s: &str) -> bool {
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

/// go-yaml v2 `parseTimestamp` (v3's is the same): [`has_timestamp_prefix`], then one of its Go layouts.
fn is_timestamp(s: &str) -> bool {
    has_timestamp_prefix(s) && matches_yaml_timestamp_layouts(s)
}

/// go-yaml's quick check before it tries a timestamp (v2 and v3 alike): exactly four digits, then `-`.
pub fn has_timestamp_prefix(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() > 4 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-'
}

/// go-yaml v2 `encoder.stringv`'s `canUsePlain`: the string reads back as itself when written plain (it
/// resolves to `!!str` and is no YAML 1.1 base-60 float).
pub fn can_use_plain(s: &str) -> bool {
    resolve_plain(s, true, false).0 == "str" && !is_base60_float(s)
}

/// `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`, go-yaml's YAML 1.1 base-60 float check.
fn is_base60_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    if !b.get(i).is_some_and(u8::is_ascii_digit) {
        return false;
    }
    i += 1;
    while b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while b.get(i) == Some(&b':') {
        i += 1;
        // [0-5]?[0-9]: one or two digits, the first of two at most 5.
        let d1 = b.get(i).filter(|c| c.is_ascii_digit());
        let d2 = b.get(i + 1).filter(|c| c.is_ascii_digit());
        match (d1, d2) {
            (Some(a), Some(_)) if *a <= b'5' => i += 2,
            (Some(_), _) => i += 1,
            (None, _) => return false,
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        while b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == b'_') {
            i += 1;
        }
    }
    i == b.len()
}

/// Go's `base64.StdEncoding`, which go-yaml decodes `!!binary` with: padding required, non-zero bits after
/// the last byte ignored (Go's non-strict mode).
const STD_ENCODING: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(DecodePaddingMode::RequireCanonical),
);

/// A `!!binary` scalar's bytes: `base64.StdEncoding.DecodeString`, which skips line breaks (go-yaml's
/// scanner has already folded the others away) and allows no other whitespace.
fn decode_binary(s: &str) -> Option<Vec<u8>> {
    let s: Vec<u8> = s.bytes().filter(|c| *c != b'\n' && *c != b'\r').collect();
    STD_ENCODING.decode(s).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Printed by Go 1.26: `regexp.MustCompile(yamlStyleFloat).MatchString` (go-yaml's pattern).
    #[test]
    fn yaml_style_float_matches_go() {
        const CASES: &[(&str, bool)] = &[
            ("1.0", true),
            ("1.", true),
            (".5", true),
            ("1e3", true),
            ("-1.5E-3", true),
            ("08", true),
            ("1.2.3", false),
            ("e3", false),
            ("1e", false),
            (".", false),
            ("1.5x", false),
            ("+.5", true),
            ("-.5e+7", true),
            ("1e+", false),
            ("..5", false),
            ("+-1", false),
            ("1_0", false),
            ("", false),
            ("1E05", true),
            ("0.e1", true),
            (".e1", false),
        ];
        for (s, go) in CASES {
            assert_eq!(is_yaml_style_float(s), *go, "{s}");
        }
    }

    /// Printed by Go 1.26: go-yaml v2's `base60float` pattern, matched by `regexp`.
    #[test]
    fn base60_float_matches_go() {
        const CASES: &[(&str, bool)] = &[
            ("1:20", true),
            ("190:20:30", true),
            ("1:60", false),
            ("1:5", true),
            ("-1:30.5", true),
            ("+1_0:3_0", false),
            ("1:555", false),
            ("1:", false),
            (":30", false),
            ("1:30.", true),
            ("1:30.5_", true),
            ("a:30", false),
            ("12:30:00", true),
            ("1:2:3:4", true),
            ("1::2", false),
            ("1:30x", false),
        ];
        for (s, go) in CASES {
            assert_eq!(is_base60_float(s), *go, "{s}");
        }
    }

    /// Printed by Go 1.26 with go.yaml.in/yaml/v2 v2.4.4: what `yaml.Unmarshal` of `a: <text>` into a
    /// `map[string]interface{}` holds (`int` and `int64` both as `Int`).
    #[test]
    fn plain_scalars_resolve_like_go() {
        use Resolved::*;
        let cases: Vec<(&str, Resolved)> = vec![
            ("yes", Bool(true)),
            ("Off", Bool(false)),
            ("y", Bool(true)),
            ("n", Bool(false)),
            ("~", Null),
            ("null", Null),
            ("true", Bool(true)),
            ("0x1F", Int(31)),
            ("-0x1F", Int(-31)),
            ("0o17", Int(15)),
            ("017", Int(15)),
            ("08", Float(8.0)),
            ("0b101", Int(5)),
            ("-0b101", Int(-5)),
            ("1_000", Int(1000)),
            ("+12", Int(12)),
            ("1e3", Float(1000.0)),
            (".5", Float(0.5)),
            ("+.5", Float(0.5)),
            ("-.inf", Float(f64::NEG_INFINITY)),
            ("1e400", Str("1e400".into())),
            ("12:30:00", Str("12:30:00".into())),
            ("2001-12-14", Str("2001-12-14".into())),
            ("9223372036854775808", Uint(9223372036854775808)),
            ("18446744073709551616", Float(1.8446744073709552e19)),
            ("-9223372036854775809", Float(-9.223372036854776e18)),
            ("0x", Str("0x".into())),
            ("._5", Str("._5".into())),
            (".5e3", Float(500.0)),
            ("+", Str("+".into())),
        ];
        for (text, go) in cases {
            assert_eq!(scalar(text, ScalarStyle::Plain, None), Ok(go), "{text}");
        }
        assert!(matches!(scalar(".NaN", ScalarStyle::Plain, None), Ok(Float(f)) if f.is_nan()));
    }

    /// Printed by Go 1.26 with go.yaml.in/yaml/v2 v2.4.4: whether `yaml.Marshal` writes the string plain
    /// (`true`) or double-quoted.
    #[test]
    fn can_use_plain_matches_go() {
        const CASES: &[(&str, bool)] = &[
            ("abc", true),
            ("yes", false),
            ("1:20", false),
            ("1.5", false),
            ("", false),
            ("2001-12-14", false),
            ("2001-12-14 21:59:43", false),
            ("0x1G", true),
            ("1_0", false),
            ("on", false),
            ("y", false),
            (".inf", false),
            ("~", false),
            ("+1", false),
            ("1e400", true),
        ];
        for (s, go) in CASES {
            assert_eq!(can_use_plain(s), *go, "{s}");
        }
    }

    /// Printed by Go 1.26: `base64.StdEncoding.DecodeString` of each text (`None` for an error).
    #[test]
    fn binary_decodes_like_go_std_encoding() {
        const CASES: &[(&str, Option<&str>)] = &[
            ("aGVsbG8=", Some("hello")),
            ("aGk=", Some("hi")),
            ("aGl=", Some("hi")),
            ("aGk", None),
            ("aGk==", None),
            ("a\nGk=\r\n", Some("hi")),
            ("aG k=", None),
            ("", Some("")),
            ("aGk=aGk=", None),
            ("====", None),
            ("aA==", Some("h")),
            ("aB==", Some("h")),
            ("Q===", None),
            ("aGVsbA", None),
        ];
        for (text, go) in CASES {
            assert_eq!(decode_binary(text).as_deref(), go.map(str::as_bytes), "{text:?}");
        }
    }
}
