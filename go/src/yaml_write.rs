//! The block-style writer of [`crate::yaml::to_string`], fast on the documents charts render.
//!
//! serde-saphyr's writer decides how to write each string by checking it against every rule of YAML
//! (numbers of both schemas, timestamps, indicators, control characters) and builds each key as a string
//! of its own. On a large chart that is most of the post-render's time. This writer takes the part whose
//! form is certain: mappings, sequences, null, booleans, integers, keys of letters, digits and `-_./`,
//! short plain strings of a small alphabet, and `|` / `|-` block strings of printable ASCII. Any other
//! single-line string is written by serde-saphyr itself, alone (a value is written the same wherever it
//! stands, when it fits on one line); an unusual key, a string serde-saphyr folds over lines or another
//! multi-line string makes [`write()`] decline, and the caller writes the whole document with serde-saphyr.
//! Debug builds check every answer against serde-saphyr's.

use std::borrow::Cow;
use std::fmt::Write as _;

use crate::yaml_tree::Node;

/// Appends `value` to `out` as serde-saphyr writes it, or leaves `out` as it was and answers `false`.
pub fn write(value: &Node<'_>, out: &mut String) -> bool {
    let start = out.len();
    let done = node(value, 0, Place::Top, out).is_some();
    if !done {
        out.truncate(start);
    }
    done
}

/// Where a value is written: what precedes it on its line decides how a collection starts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// At the start of the document.
    Top,
    /// After `key:`.
    MapValue,
    /// After `- `.
    SeqItem,
}

/// Writes `value`, whose collections' entries are indented by `indent`, ending with a newline.
fn node(value: &Node<'_>, indent: usize, place: Place, out: &mut String) -> Option<()> {
    match value {
        Node::Map(map) if !map.is_empty() => mapping(map, indent, place, out),
        Node::Seq(items) if !items.is_empty() => sequence(items, indent, place, out),
        Node::Map(_) => inline(place, "{}", out),
        Node::Seq(_) => inline(place, "[]", out),
        Node::Null => inline(place, "null", out),
        Node::Bool(b) => inline(place, if *b { "true" } else { "false" }, out),
        Node::Int(n) => {
            space(place, out);
            let _ = writeln!(out, "{n}");
            Some(())
        }
        Node::Str(s) if s.contains('\n') => block_string(s, indent, place, out),
        Node::Str(s) => {
            space(place, out);
            string(s, out)?;
            out.push('\n');
            Some(())
        }
    }
}

/// A scalar on the line it follows.
fn inline(place: Place, text: &str, out: &mut String) -> Option<()> {
    space(place, out);
    out.push_str(text);
    out.push('\n');
    Some(())
}

/// The space between `key:` and a value on the same line.
fn space(place: Place, out: &mut String) {
    if place == Place::MapValue {
        out.push(' ');
    }
}

fn mapping(map: &[(Cow<'_, str>, Node<'_>)], indent: usize, place: Place, out: &mut String) -> Option<()> {
    let mut first = true;
    let inner = if place == Place::Top { 0 } else { indent };
    if place == Place::MapValue {
        out.push('\n');
    }
    for (key, value) in map {
        // After `- `, the first key shares the dash's line.
        if !(first && place == Place::SeqItem) {
            pad(inner, out);
        }
        first = false;
        if !plain_key(key) {
            return None;
        }
        out.push_str(key);
        out.push(':');
        // A sequence under a key starts at the key's column; a mapping two columns right.
        let child = match value {
            Node::Seq(items) if !items.is_empty() => inner,
            _ => inner + 2,
        };
        node(value, child, Place::MapValue, out)?;
    }
    Some(())
}

fn sequence(items: &[Node<'_>], indent: usize, place: Place, out: &mut String) -> Option<()> {
    let mut first = true;
    if place == Place::MapValue {
        out.push('\n');
    }
    for item in items {
        if !(first && place == Place::SeqItem) {
            pad(indent, out);
        }
        first = false;
        out.push_str("- ");
        node(item, indent + 2, Place::SeqItem, out)?;
    }
    Some(())
}

fn pad(n: usize, out: &mut String) {
    out.extend(std::iter::repeat_n(' ', n));
}

/// A key written plain: letters, digits and `-_./`, starting with a letter, and no word YAML reads as
/// something else. Anything else may be quoted by serde-saphyr.
fn plain_key(key: &str) -> bool {
    key.as_bytes().first().is_some_and(u8::is_ascii_alphabetic)
        && key.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'/'))
        && !special_word(key)
}

/// Words of a few letters that some YAML schema reads as a boolean, null or float, in any case.
fn special_word(s: &str) -> bool {
    const WORDS: [&str; 11] = ["y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf"];
    s.len() <= 5 && WORDS.iter().any(|w| w.eq_ignore_ascii_case(s))
}

/// serde-saphyr writes a string it would write plain as a folded block (`>-`) from 81 characters on, at
/// any depth; one this long or shorter is surely on one line.
const SHORT: usize = 64;

/// A single-line string: plain when it is letters, digits, spaces inside and `-_./=+@,`, starts with a
/// letter or `/`, holds no `: `, is no special word and is [`SHORT`]; double-quoted when it is digits
/// alone; else as serde-saphyr writes it alone, unless that takes several lines (a folded block), whose
/// indentation depends on where it stands: `None`.
fn string(s: &str, out: &mut String) -> Option<()> {
    let bytes = s.as_bytes();
    let plain = bytes.first().is_some_and(|b| b.is_ascii_alphabetic() || *b == b'/')
        && !s.ends_with(' ')
        && s.len() <= SHORT
        && bytes.iter().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b' ' | b'-' | b'_' | b'.' | b'/' | b'=' | b'+' | b'@' | b',')
        })
        && !special_word(s);
    if plain {
        out.push_str(s);
    } else if bytes.iter().all(u8::is_ascii_digit) && !bytes.is_empty() {
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        let text = serde_saphyr::to_string(&s).ok()?;
        let text = text.strip_suffix('\n').unwrap_or(&text);
        if text.contains('\n') {
            return None;
        }
        out.push_str(text);
    }
    Some(())
}

/// A string with line breaks as a literal block (`|` when it ends with one line break, `|-` with none),
/// its lines two columns right of `indent - 2`; `None` for anything else.
fn block_string(s: &str, indent: usize, place: Place, out: &mut String) -> Option<()> {
    let body = match s.strip_suffix('\n') {
        Some(b) if b.is_empty() || b.ends_with('\n') => return None,
        Some(b) => {
            space(place, out);
            out.push_str("|\n");
            b
        }
        None => {
            space(place, out);
            out.push_str("|-\n");
            s
        }
    };
    // A first line of text starting with a space needs an indentation indicator; other characters other
    // forms.
    let first_text = body.split('\n').find(|l| !l.is_empty());
    if first_text.is_none_or(|l| l.starts_with(' '))
        || !body.bytes().all(|b| (b' '..=b'~').contains(&b) || b == b'\n' || b == b'\t')
    {
        return None;
    }
    let lines = if place == Place::Top { 2 } else { indent };
    for line in body.split('\n') {
        if !line.is_empty() {
            pad(lines, out);
            out.push_str(line);
        }
        out.push('\n');
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use serde_json::{Value, json};

    use crate::yaml_tree::Node;

    /// A JSON value as a document (integers only).
    fn node(value: &Value) -> Node<'static> {
        match value {
            Value::Null => Node::Null,
            Value::Bool(b) => Node::Bool(*b),
            Value::Number(n) => Node::Int(n.as_i64().expect("an integer")),
            Value::String(s) => Node::Str(Cow::Owned(s.clone())),
            Value::Array(items) => Node::Seq(items.iter().map(node).collect()),
            Value::Object(map) => Node::Map(map.iter().map(|(k, v)| (Cow::Owned(k.clone()), node(v))).collect()),
        }
    }

    /// The fast writer's text, checked against serde-saphyr's; `None` when it declined.
    fn fast(value: &Value) -> Option<String> {
        let value = &node(value);
        let mut out = String::new();
        if !super::write(value, &mut out) {
            assert!(out.is_empty(), "a declined value left {out:?} behind");
            return None;
        }
        assert_eq!(out, serde_saphyr::to_string(value).unwrap(), "for {value:?}");
        Some(out)
    }

    #[test]
    fn writes_what_charts_render() {
        let object = json!({
            "apiVersion": "v1",
            "data": {"config.yaml": "server:\n  port: 8001\n\n  name: x", "index": "0", "script.sh": "#!/bin/sh\n\techo hi\n"},
            "kind": "ConfigMap",
            "metadata": {"annotations": {"note": "a b, c=d"}, "labels": {"app.kubernetes.io/name": "web"}, "name": "web"},
            "spec": {"ports": [{"name": "http", "port": 80, "targetPort": -1}], "empty": {}, "none": [], "off_": null,
                     "nested": [[1, 2], [{"a": true}], "x\ny\n", {"b": {"c": false}}], "big": 9223372036854775807i64}
        });
        let text = fast(&object).expect("written by the fast writer");
        assert!(text.contains("  config.yaml: |-\n    server:\n      port: 8001\n\n      name: x\n"), "{text}");
        assert!(text.contains("  ports:\n  - name: http\n"), "{text}");
    }

    #[test]
    fn strings_it_cannot_be_sure_of_go_to_serde_saphyr() {
        for s in [
            "",
            " a",
            "a ",
            "yes",
            "No",
            "ON",
            "null",
            "~",
            "-",
            ".",
            "1.2.3",
            "0x1f",
            "2020-01-01",
            "12:30",
            "a: b",
            "a #b",
            "@a",
            "'q'",
            "\"q\"",
            "a\tb",
            "é",
            "a\u{2028}b",
            "*x",
            "&x",
            "!x",
            "%x",
            "`x",
            "[a]",
            "{a}",
            "? a",
            "- a",
        ] {
            fast(&json!({"k": s, "l": [s, {"m": s}]})).expect("single-line strings are written, some by serde-saphyr");
        }
        // A key that may need quotes, multi-line strings of other forms, long strings that serde-saphyr folds
        // over several lines: serde-saphyr writes it all.
        for long in ["word ".repeat(20) + "end", "a#b".repeat(30), "QUJD".repeat(30)] {
            assert_eq!(fast(&json!({"k": {"l": long.clone()}})), None, "{long}");
            assert_eq!(fast(&json!([long])), None);
        }
        // Up to 80 characters they stay on one line, written here (some by serde-saphyr).
        for n in [63, 64, 65, 80] {
            fast(&json!({"k": ["a".repeat(n), "a ".repeat(n / 2), "7".repeat(n + 40)]})).expect("one line each");
        }
        for v in [
            json!({"a b": 1}),
            json!({"1": 1}),
            json!({"yes": 1}),
            json!({"k": "x\n\n"}),
            json!({"k": " x\ny"}),
            json!({"k": "x\r\ny"}),
            json!({"k": "é\nx"}),
            json!({"k": "a\u{7}\nb"}),
        ] {
            assert_eq!(fast(&v), None, "{v}");
        }
    }

    /// Generated values over a wide alphabet and every nesting: whatever the fast writer writes is what
    /// serde-saphyr writes, and it writes most of them.
    #[test]
    fn agrees_with_serde_saphyr_on_generated_values() {
        const ALPHABET: &[&str] = &[
            "a",
            "Z",
            "0",
            "7",
            " ",
            "-",
            "_",
            ".",
            "/",
            "=",
            "+",
            "@",
            ",",
            ":",
            "#",
            "'",
            "\"",
            "\n",
            "\t",
            "!",
            "&",
            "*",
            "?",
            "|",
            ">",
            "%",
            "`",
            "[",
            "{",
            "~",
            "\\",
            "é",
            "yes",
            "null",
            "true",
            "1e3",
            "lorem ipsum dolor sit amet ",
            "consectetur-adipiscing-elit",
        ];
        let mut next = crate::yaml_block::pick(0x51f1_5eed_c0ff_ee11);
        fn value(next: &mut impl FnMut(usize) -> usize, depth: usize) -> Value {
            let string = |next: &mut dyn FnMut(usize) -> usize| {
                let n = next(8);
                (0..n).map(|_| ALPHABET[next(ALPHABET.len())]).collect::<String>()
            };
            match next(if depth > 3 { 5 } else { 8 }) {
                0 => Value::Null,
                1 => Value::Bool(next(2) == 0),
                2 => json!(next(100_000) as i64 - 50_000),
                3 | 4 => Value::String(string(next)),
                5 => {
                    // Keys mostly of the plain kind.
                    let keys = ["name", "app.kubernetes.io/part-of", "x_y", "a", "k8s"];
                    let mut map = serde_json::Map::new();
                    for _ in 0..next(4) {
                        let key = if next(4) == 0 { string(next) } else { keys[next(keys.len())].to_string() };
                        map.insert(key, value(next, depth + 1));
                    }
                    Value::Object(map)
                }
                _ => Value::Array((0..next(4)).map(|_| value(next, depth + 1)).collect()),
            }
        }
        let mut written = 0;
        for _ in 0..20_000 {
            if fast(&value(&mut next, 0)).is_some() {
                written += 1;
            }
        }
        assert!(written > 10_000, "the fast writer wrote only {written} of 20000 values");
    }
}
