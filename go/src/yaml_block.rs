//! The block-style YAML that chart templates print, read line by line without the general parser.
//!
//! A rendered manifest is almost always the same small part of YAML: block mappings and sequences,
//! one-line plain, single- and double-quoted scalars, literal block scalars, empty flow collections and
//! comments. The general event parser reads it at about 24 MB/s, and reading each of a large chart's
//! documents is most of the post-render's time, so that part is read here, as the same events, several
//! times faster. Anything else (anchors, aliases, tags, folded or indented block headers, flow
//! collections with content, multi-line flow scalars, complex keys, tabs, unusual line breaks) is
//! declined, and the caller reads the document with the general parser: this reader only ever answers
//! for documents it fully understands, and in debug builds its callers ([`super::yaml_v3::decode`],
//! [`super::yaml::manifest_value`]) check every answer against the general parser's.

use std::borrow::Cow;

use serde_saphyr::granit_parser::ScalarStyle;

/// What the reader produces: the parser events [`super::yaml_tree::tree`] builds documents from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ev<'a> {
    /// A scalar, its style, and whether it is a block scalar that runs to the end of a text without a
    /// final line break.
    Scalar(Cow<'a, str>, ScalarStyle, bool),
    MapStart,
    MapEnd,
    SeqStart,
    SeqEnd,
}

/// The document's events, or `None` when it is not within the part of YAML read here.
pub fn events(text: &str) -> Option<Vec<Ev<'_>>> {
    // Line breaks and spaces other than `\n` and ` `, a byte-order mark and control characters are left
    // to the general parser, which knows every rule about them.
    if text.bytes().any(|b| (b < 0x20 && b != b'\n') || b == 0x7f)
        || (!text.is_ascii() && text.contains(['\u{85}', '\u{2028}', '\u{2029}', '\u{feff}']))
    {
        return None;
    }
    let lines: Vec<Line<'_>> = text.split('\n').map(Line::new).collect();
    let mut reader = Reader { lines, at: 0, out: Vec::with_capacity(64), terminated: text.ends_with('\n') };
    // `split` gives an empty last line after a final line break; it is no line of the document.
    if reader.terminated {
        reader.lines.pop();
    }
    // `---` and `...` at the start of a line begin or end a document, whatever follows them.
    if reader.lines.iter().any(Line::is_document_marker) {
        return None;
    }
    reader.skip_blank();
    if reader.at == reader.lines.len() {
        return Some(Vec::new());
    }
    if reader.lines[reader.at].indent != 0 {
        return None;
    }
    reader.node(0)?;
    reader.skip_blank();
    (reader.at == reader.lines.len()).then_some(reader.out)
}

#[derive(Clone, Copy, Debug)]
struct Line<'a> {
    indent: usize,
    /// The line without its indentation (trailing spaces kept).
    content: &'a str,
}

impl<'a> Line<'a> {
    fn new(raw: &'a str) -> Line<'a> {
        let content = raw.trim_start_matches(' ');
        Line { indent: raw.len() - content.len(), content }
    }

    /// Empty, spaces only, or a comment: no part of the document outside block scalars.
    fn is_blank(&self) -> bool {
        self.content.is_empty() || self.content.starts_with('#')
    }

    fn is_seq_item(&self) -> bool {
        self.content == "-" || self.content.starts_with("- ")
    }

    fn is_document_marker(&self) -> bool {
        self.indent == 0
            && ["---", "..."]
                .iter()
                .any(|m| self.content.strip_prefix(m).is_some_and(|rest| rest.is_empty() || rest.starts_with(' ')))
    }
}

struct Reader<'a> {
    lines: Vec<Line<'a>>,
    at: usize,
    out: Vec<Ev<'a>>,
    terminated: bool,
}

impl<'a> Reader<'a> {
    fn skip_blank(&mut self) {
        while self.at < self.lines.len() && self.lines[self.at].is_blank() {
            self.at += 1;
        }
    }

    /// The next line that is part of the document, without moving.
    fn peek(&mut self) -> Option<Line<'a>> {
        self.skip_blank();
        self.lines.get(self.at).copied()
    }

    /// A block collection starting at the current line, whose entries are at `indent`.
    fn node(&mut self, indent: usize) -> Option<()> {
        let line = self.peek()?;
        if line.is_seq_item() { self.sequence(indent) } else { self.mapping(indent) }
    }

    fn mapping(&mut self, indent: usize) -> Option<()> {
        self.out.push(Ev::MapStart);
        while let Some(line) = self.peek() {
            if line.indent < indent {
                break;
            }
            if line.indent > indent || line.is_seq_item() {
                return None;
            }
            let (key, style, rest) = split_key(line.content)?;
            self.out.push(Ev::Scalar(key, style, false));
            self.at += 1;
            self.value(indent, rest, true)?;
        }
        self.out.push(Ev::MapEnd);
        Some(())
    }

    fn sequence(&mut self, indent: usize) -> Option<()> {
        self.out.push(Ev::SeqStart);
        while let Some(line) = self.peek() {
            if line.indent < indent || (line.indent == indent && !line.is_seq_item()) {
                break;
            }
            if line.indent > indent {
                return None;
            }
            let after = line.content.strip_prefix('-')?;
            let rest = after.trim_start_matches(' ');
            // A mapping that starts on the item's line: its keys line up after `- `.
            if !rest.is_empty() && !rest.starts_with('#') && split_key(rest).is_some() {
                let column = indent + 1 + (after.len() - rest.len());
                self.lines[self.at] = Line { indent: column, content: rest };
                self.mapping(column)?;
                continue;
            }
            if rest.starts_with("- ") || rest == "-" {
                return None;
            }
            self.at += 1;
            self.value(indent, rest, false)?;
        }
        self.out.push(Ev::SeqEnd);
        Some(())
    }

    /// The value after `key:` (`in_mapping`) or `- ` at `indent`: `rest` is the rest of that line.
    fn value(&mut self, indent: usize, rest: &'a str, in_mapping: bool) -> Option<()> {
        let rest = rest.trim_matches(' ');
        if rest.is_empty() || rest.starts_with('#') {
            // The value is on the lines below: a nested collection, a sequence at the key's own
            // indentation (YAML allows it under a mapping key), or nothing (null).
            return match self.peek() {
                Some(next) if next.indent > indent => self.node(next.indent),
                Some(next) if in_mapping && next.indent == indent && next.is_seq_item() => self.sequence(indent),
                _ => {
                    self.out.push(Ev::Scalar(Cow::Borrowed(""), ScalarStyle::Plain, false));
                    Some(())
                }
            };
        }
        match rest.as_bytes()[0] {
            b'|' => self.literal(indent, rest),
            b'"' => {
                let (value, after) = double_quoted(rest)?;
                self.scalar_then_end(value, ScalarStyle::DoubleQuoted, after, indent)
            }
            b'\'' => {
                let (value, after) = single_quoted(rest)?;
                self.scalar_then_end(value, ScalarStyle::SingleQuoted, after, indent)
            }
            b'[' | b'{' => {
                let (open, close) =
                    if rest.starts_with('[') { (Ev::SeqStart, Ev::SeqEnd) } else { (Ev::MapStart, Ev::MapEnd) };
                let after = rest.strip_prefix("[]").or_else(|| rest.strip_prefix("{}"))?;
                if !ends_line(after) {
                    return None;
                }
                self.out.push(open);
                self.out.push(close);
                self.no_continuation(indent)
            }
            _ => {
                let value = plain(rest)?;
                self.scalar_then_end(Cow::Borrowed(value), ScalarStyle::Plain, "", indent)
            }
        }
    }

    /// A one-line scalar: nothing may follow it but a comment, and no more-indented line may continue it.
    fn scalar_then_end(&mut self, value: Cow<'a, str>, style: ScalarStyle, after: &str, indent: usize) -> Option<()> {
        if !ends_line(after) {
            return None;
        }
        self.out.push(Ev::Scalar(value, style, false));
        self.no_continuation(indent)
    }

    /// The next line of the document must not be more indented than `indent`: that would continue a
    /// scalar over several lines (or be an error), which the general parser reads.
    fn no_continuation(&mut self, indent: usize) -> Option<()> {
        match self.peek() {
            Some(next) if next.indent > indent => None,
            _ => Some(()),
        }
    }

    /// `|`, `|-` or `|+` (a comment may follow), then the lines more indented than `indent`.
    fn literal(&mut self, indent: usize, header: &str) -> Option<()> {
        let chomp = match header.as_bytes().get(1) {
            None | Some(b' ') => Chomp::Clip,
            Some(b'-') => Chomp::Strip,
            Some(b'+') => Chomp::Keep,
            Some(_) => return None,
        };
        let after = &header[if chomp == Chomp::Clip { 1 } else { 2 }..];
        if !ends_line(after) {
            return None;
        }
        // The block's own indentation is that of its first non-blank line; blank lines before it must
        // not be longer.
        let start = self.at;
        let mut i = start;
        while i < self.lines.len() && self.lines[i].content.is_empty() {
            i += 1;
        }
        let block_indent = self.lines.get(i).map(|l| l.indent).filter(|&n| n > indent)?;
        let mut end = start;
        let mut last_content = None;
        for (j, line) in self.lines.iter().enumerate().skip(start) {
            // A line of spaces only: `Line::new` took them all as indentation.
            if line.content.is_empty() {
                if line.indent > block_indent {
                    return None;
                }
            } else if line.indent < block_indent {
                break;
            } else {
                last_content = Some(j);
            }
            end = j + 1;
        }
        let last = last_content?;
        let mut text = String::new();
        for line in &self.lines[start..=last] {
            if !line.content.is_empty() {
                text.extend(std::iter::repeat_n(' ', line.indent - block_indent));
                text.push_str(line.content);
            }
            text.push('\n');
        }
        // Blank lines after the last content line: kept only by `|+`; the block ends at the last of them.
        let trailing = end - last - 1;
        match chomp {
            Chomp::Clip => {}
            Chomp::Strip => {
                text.pop();
            }
            Chomp::Keep => text.extend(std::iter::repeat_n('\n', trailing)),
        }
        let at_eof = end == self.lines.len() && !self.terminated;
        if at_eof && (trailing > 0 || chomp == Chomp::Keep) {
            // How the general parser ends such a block at the very end of a text is left to it.
            return None;
        }
        self.at = end;
        self.out.push(Ev::Scalar(Cow::Owned(text), ScalarStyle::Literal, at_eof));
        Some(())
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Chomp {
    Clip,
    Strip,
    Keep,
}

/// Nothing but spaces and perhaps a comment after a scalar.
fn ends_line(after: &str) -> bool {
    let t = after.trim_start_matches(' ');
    // A comment needs a space before it.
    t.is_empty() || (t.starts_with('#') && after.len() > t.len())
}

/// `key: rest` or `key:` — a plain, single- or double-quoted key on one line; `None` for anything else.
fn split_key(content: &str) -> Option<(Cow<'_, str>, ScalarStyle, &str)> {
    let (key, style, after) = match content.as_bytes().first()? {
        b'"' => {
            let (k, after) = double_quoted(content)?;
            (k, ScalarStyle::DoubleQuoted, after)
        }
        b'\'' => {
            let (k, after) = single_quoted(content)?;
            (k, ScalarStyle::SingleQuoted, after)
        }
        _ => {
            let bytes = content.as_bytes();
            let colon =
                (0..bytes.len()).find(|&i| bytes[i] == b':' && matches!(bytes.get(i + 1), None | Some(b' ')))?;
            let key = content[..colon].trim_end_matches(' ');
            // `plain` cuts a comment off: a key with ` #` in it comes back shorter.
            if plain(key)? != key {
                return None;
            }
            (Cow::Borrowed(key), ScalarStyle::Plain, &content[colon..])
        }
    };
    let rest = after.strip_prefix(':')?;
    if !(rest.is_empty() || rest.starts_with(' ')) {
        return None;
    }
    Some((key, style, rest))
}

/// A plain scalar that fills the rest of a line (a comment aside): its text, or `None` where YAML gives
/// it another meaning or the general parser is needed.
fn plain(rest: &str) -> Option<&str> {
    // One pass: the value ends at ` #`; `: ` before that makes it a mapping.
    let bytes = rest.as_bytes();
    let mut end = bytes.len();
    for i in 0..bytes.len() {
        match (bytes[i], bytes.get(i + 1)) {
            (b' ', Some(b'#')) => {
                end = i;
                break;
            }
            (b':', Some(b' ')) => return None,
            _ => {}
        }
    }
    let value = rest[..end].trim_end_matches(' ');
    let first = *value.as_bytes().first()?;
    let second = value.as_bytes().get(1).copied();
    let indicator = match first {
        b'-' | b'?' | b':' => matches!(second, None | Some(b' ')),
        b',' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*' | b'!' | b'|' | b'>' | b'\'' | b'"' | b'%' | b'@'
        | b'`' => true,
        _ => false,
    };
    if indicator || value.ends_with(':') || value == "---" || value == "..." {
        return None;
    }
    Some(value)
}

/// A double-quoted scalar closed on its line: its value and what follows the closing quote.
fn double_quoted(s: &str) -> Option<(Cow<'_, str>, &str)> {
    let body = s.strip_prefix('"')?;
    let bytes = body.as_bytes();
    let mut i = 0;
    let mut out: Option<String> = None;
    let mut plain_from = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => return Some((quoted_value(body, i, out, plain_from), &body[i + 1..])),
            b'\\' => {
                let o = out.get_or_insert_with(String::new);
                o.push_str(&body[plain_from..i]);
                let (c, used) = escape(&body[i + 1..])?;
                o.push(c);
                i += 1 + used;
                plain_from = i;
            }
            _ => i += 1,
        }
    }
    None
}

/// One escape of a double-quoted scalar after its backslash: the character and how many bytes it took.
fn escape(s: &str) -> Option<(char, usize)> {
    let c = match *s.as_bytes().first()? {
        b'\\' => '\\',
        b'"' => '"',
        b'/' => '/',
        b'n' => '\n',
        b't' => '\t',
        b'r' => '\r',
        b'0' => '\0',
        b'a' => '\u{7}',
        b'b' => '\u{8}',
        b'e' => '\u{1b}',
        b'f' => '\u{c}',
        b'v' => '\u{b}',
        b'x' => return hex(s, 2),
        b'u' => return hex(s, 4),
        b'U' => return hex(s, 8),
        _ => return None,
    };
    Some((c, 1))
}

fn hex(s: &str, digits: usize) -> Option<(char, usize)> {
    let h = s.get(1..1 + digits)?;
    if !h.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    char::from_u32(u32::from_str_radix(h, 16).ok()?).map(|c| (c, 1 + digits))
}

/// A single-quoted scalar closed on its line (`''` is a quote): its value and what follows it.
fn single_quoted(s: &str) -> Option<(Cow<'_, str>, &str)> {
    let body = s.strip_prefix('\'')?;
    let mut out: Option<String> = None;
    let mut from = 0;
    let mut search = 0;
    loop {
        let q = search + body[search..].find('\'')?;
        if body[q + 1..].starts_with('\'') {
            out.get_or_insert_with(String::new).push_str(&body[from..=q]);
            from = q + 2;
            search = q + 2;
            continue;
        }
        return Some((quoted_value(body, q, out, from), &body[q + 1..]));
    }
}

/// A quoted scalar's value, its body ending at `end`: the text itself when it held no escape, else what
/// was built (escapes resolved up to `from`) and the rest.
fn quoted_value(body: &str, end: usize, built: Option<String>, from: usize) -> Cow<'_, str> {
    match built {
        None => Cow::Borrowed(&body[..end]),
        Some(mut o) => {
            o.push_str(&body[from..end]);
            Cow::Owned(o)
        }
    }
}

/// A deterministic stream of choices for generated test documents: `next(n)` is in `0..n`.
#[cfg(test)]
pub(crate) fn pick(mut seed: u64) -> impl FnMut(usize) -> usize {
    move |n| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml_v3::decode;

    use crate::yaml_v3::decode_general as general;

    /// Documents as chart templates print them: each is read here, and to the same value as the general
    /// parser reads it (decode asserts that in debug builds, and the test compares again).
    #[test]
    fn reads_what_templates_print_as_the_general_parser_does() {
        let docs = [
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    app.kubernetes.io/name: x\ndata:\n  k: \"v\"\n",
            "# Source: c/templates/x.yaml\napiVersion: v1\nkind: Secret\ntype: Opaque\ndata:\n  password: \"cGFzcw==\"\n\n",
            "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: 'nginx:1.25'\n        args:\n          - --port=8080\n          - -v\n        env:\n        - name: A\n          value: \"1\"\n        ports: []\n        resources: {}\n",
            "a:\n  b: |\n    line 1\n      indented\n\n    line 3\n  c: |-\n    no newline\n  d: |+\n    kept\n\n  e: x\n",
            "config: |\n  # not a comment\n  key = value\n",
            "s: 'it''s'\nd: \"tab\\there \\u00e9 \\\"q\\\" \\\\ \\x41\"\n",
            "n: 0644\nf: 1.5\nb: true\nyes: yes\nnull: ~\ne:\nz: 0\nneg: -1\nver: 1.2.3\nq: \"0644\"\nmem: 512Mi\nurl: http://x:80/p#frag\n",
            "items:\n- 1\n-\n  a: b\n- - nested\n",
            "k: v # comment\n# full line\n  # indented comment\nk2: v2\n",
            "key with spaces: v\n\"quoted key\": 1\n'single': 2\na:b: c\n",
            "top: |\n  no final newline",
            "x: |-\n  a\n  b",
            "list:\n- name: a\n  value: b\n- name: c\n",
            "m:\n  - a\n  - b\nn: c\n",
            "emptymap: {}  # none\nemptylist: [] \n",
            "unicode: héllo wörld ✓\n",
            "",
            "# only a comment\n",
        ];
        for doc in docs {
            let fast_path = events(doc).is_some();
            let value = decode(doc);
            let general = general(doc);
            assert_eq!(value, general, "{doc:?}");
            // Every document above but the list of lists is within what is read here.
            if !doc.contains("- - ") {
                assert!(fast_path, "declined: {doc:?}");
            }
        }
    }

    /// What is left to the general parser.
    #[test]
    fn leaves_the_rest_to_the_general_parser() {
        let docs = [
            "a: &x 1\nb: *x\n",
            "a: !!str 1\n",
            "a: >\n  folded\n",
            "a: |2\n  indented\n",
            "a: [1, 2]\n",
            "a: {b: 1}\n",
            "a: \"multi\n  line\"\n",
            "a: plain\n  continued\n",
            "? complex\n: key\n",
            "a:\tb\n",
            "a: b\r\n",
            "  indented: root\n",
            "a: b: c\n",
            "a: - b\n",
            "---\na: 1\n",
            "--- a: 1\n",
            "a: 1\n--- b: 2\n",
            "a: 1\n...\n",
            "a: 'x' y\n",
            "a: \"\\N\"\n",
            "just a scalar\n",
            // A block scalar with blank lines, or kept line breaks, at the end of an unterminated text.
            "a: |\n  x\n\n  ",
            "a: |+\n  x",
        ];
        for doc in docs {
            assert!(events(doc).is_none(), "read here: {doc:?}");
            // Either way, decode answers as the general parser does.
            assert_eq!(decode(doc), general(doc), "{doc:?}");
        }
    }

    /// Many documents built from scalars that mean different things to YAML, in every place a template
    /// puts one: wherever this reader answers, its value is the general parser's.
    #[test]
    fn agrees_with_the_general_parser_on_generated_documents() {
        let scalars = [
            "a",
            "yes",
            "no",
            "on",
            "0644",
            "0",
            "-1",
            "+1",
            "1.0",
            "1e3",
            ".5",
            "0x1F",
            "~",
            "null",
            "true",
            "True",
            "2001-12-14",
            "12:30",
            "a b",
            "a#b",
            "a #b",
            "a: b",
            "a:b",
            "-x",
            "- x",
            "?x",
            ":x",
            "[x]",
            "{x}",
            "*x",
            "&x",
            "!x",
            "%x",
            "@x",
            "`x",
            "\"q\"",
            "'q'",
            "'it''s'",
            "\"a\\\"b\"",
            "\"\\u00e9\"",
            "é",
            "",
            "-",
            "--",
            "---",
            "...",
            "a,b",
            "|",
            ">",
            "#c",
            "x # c",
            "'a' # c",
            "\"a\" #c",
            "[]",
            "{}",
            "'' ",
            "\"\"",
        ];
        let mut next = pick(0x2545_f491_4f6c_dd1d);
        let mut read_here = 0;
        for _ in 0..4000 {
            let mut doc = String::new();
            for k in 0..1 + next(4) {
                let s = scalars[next(scalars.len())];
                match next(6) {
                    0 => doc.push_str(&format!("k{k}: {s}\n")),
                    1 => doc.push_str(&format!("k{k}:\n- {s}\n- {}\n", scalars[next(scalars.len())])),
                    2 => doc.push_str(&format!(
                        "k{k}:\n  - {s}\n  # c\n  - x: {}\n    y: z\n",
                        scalars[next(scalars.len())]
                    )),
                    3 => doc.push_str(&format!("{s}: k{k}\n")),
                    4 => doc.push_str(&format!("k{k}: |\n  {s}\n\n  {}\n", scalars[next(scalars.len())])),
                    _ => doc.push_str(&format!("k{k}:\n  n{k}: {s}\n\n  m: {}\n", scalars[next(scalars.len())])),
                }
            }
            if events(&doc).is_some() {
                read_here += 1;
            }
            assert_eq!(decode(&doc), general(&doc), "{doc:?}");
        }
        assert!(read_here > 1000, "only {read_here} of 4000 documents read here");
    }
}
