//! Go's `path.Match` (the same as `filepath.Match` with `/` as the separator), which Helm's
//! `--show-only` matches template paths with: `*` is any run of characters but `/`, `?` one character
//! but `/`, `[...]` a class (`[^...]` negated, `a-z` ranges), `\` quotes the next character. The whole
//! pattern is checked for syntax, not only the part a name reached, as Go does since 1.16.

/// A pattern Go rejects with `path.ErrBadPattern`; the reason says where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("syntax error in pattern: {0}")]
pub struct BadPattern(&'static str);

#[derive(Debug, PartialEq)]
enum Token {
    /// `*`: any run of non-separator characters (one token for several stars in a row).
    Star,
    /// `?`: one non-separator character.
    One,
    /// `[...]`: one non-separator character in (or, negated, not in) the ranges.
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
    Literal(char),
}

/// A checked pattern, to match many names with.
#[derive(Debug)]
pub struct Pattern(Vec<Token>);

impl Pattern {
    pub fn new(pattern: &str) -> Result<Pattern, BadPattern> {
        let mut tokens = Vec::new();
        let mut chars = pattern.chars().peekable();
        while let Some(c) = chars.next() {
            let token = match c {
                '*' if tokens.last() == Some(&Token::Star) => continue,
                '*' => Token::Star,
                '?' => Token::One,
                '\\' => Token::Literal(chars.next().ok_or(BadPattern("a trailing \\"))?),
                '[' => {
                    let negated = chars.next_if_eq(&'^').is_some();
                    let mut ranges = Vec::new();
                    loop {
                        if !ranges.is_empty() && chars.next_if_eq(&']').is_some() {
                            break;
                        }
                        let lo = class_char(&mut chars)?;
                        // A range whose end is before its start is allowed, and matches nothing.
                        let hi = if chars.next_if_eq(&'-').is_some() { class_char(&mut chars)? } else { lo };
                        ranges.push((lo, hi));
                    }
                    Token::Class { negated, ranges }
                }
                c => Token::Literal(c),
            };
            tokens.push(token);
        }
        Ok(Pattern(tokens))
    }

    /// Whether the pattern matches all of `name`.
    pub fn matches(&self, name: &str) -> bool {
        let name: Vec<char> = name.chars().collect();
        matches_at(&self.0, &name)
    }
}

/// `path.Match(pattern, name)`.
pub fn path_match(pattern: &str, name: &str) -> Result<bool, BadPattern> {
    Ok(Pattern::new(pattern)?.matches(name))
}

/// One character of a class, quoted or not: `-` and `]` must be quoted there, and the class must go on.
fn class_char(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Result<char, BadPattern> {
    let c = match chars.next() {
        None => return Err(BadPattern("an unterminated [")),
        Some('-' | ']') => return Err(BadPattern("an unquoted - or ] in a class")),
        Some('\\') => chars.next().ok_or(BadPattern("a trailing \\"))?,
        Some(c) => c,
    };
    if chars.peek().is_none() {
        return Err(BadPattern("an unterminated ["));
    }
    Ok(c)
}

fn matches_at(tokens: &[Token], name: &[char]) -> bool {
    let Some((token, rest)) = tokens.split_first() else { return name.is_empty() };
    match token {
        // The shortest run first; a star never crosses a separator.
        Token::Star => {
            let run = name.iter().take_while(|&&c| c != '/').count();
            (0..=run).any(|n| matches_at(rest, &name[n..]))
        }
        _ => match name.split_first() {
            Some((&c, name)) if one(token, c) => matches_at(rest, name),
            _ => false,
        },
    }
}

/// Whether a single-character token matches `c`.
fn one(token: &Token, c: char) -> bool {
    match token {
        Token::One => c != '/',
        Token::Class { negated, ranges } => c != '/' && ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != *negated,
        Token::Literal(l) => *l == c,
        Token::Star => unreachable!("a star is matched by matches_at"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cases of Go's `path.Match` tests (pattern, name, match, bad pattern); go1.26's `path.Match`
    /// gives the same answer for each, and for the cases below.
    #[test]
    fn agrees_with_go() {
        let cases: &[(&str, &str, bool, bool)] = &[
            ("abc", "abc", true, false),
            ("*", "abc", true, false),
            ("*c", "abc", true, false),
            ("a*", "a", true, false),
            ("a*", "abc", true, false),
            ("a*", "ab/c", false, false),
            ("a*/b", "abc/b", true, false),
            ("a*/b", "a/c/b", false, false),
            ("a*b*c*d*e*/f", "axbxcxdxe/f", true, false),
            ("a*b*c*d*e*/f", "axbxcxdxexxx/f", true, false),
            ("a*b*c*d*e*/f", "axbxcxdxe/xxx/f", false, false),
            ("a*b*c*d*e*/f", "axbxcxdxexxx/fff", false, false),
            ("a*b?c*x", "abxbbxdbxebxczzx", true, false),
            ("a*b?c*x", "abxbbxdbxebxczzy", false, false),
            ("ab[c]", "abc", true, false),
            ("ab[b-d]", "abc", true, false),
            ("ab[e-g]", "abc", false, false),
            ("ab[^c]", "abc", false, false),
            ("ab[^b-d]", "abc", false, false),
            ("ab[^e-g]", "abc", true, false),
            ("a\\*b", "a*b", true, false),
            ("a\\*b", "ab", false, false),
            ("a?b", "a☺b", true, false),
            ("a[^a]b", "a☺b", true, false),
            ("a???b", "a☺b", false, false),
            ("a[^a][^a][^a]b", "a☺b", false, false),
            ("[a-ζ]*", "α", true, false),
            ("*[a-ζ]", "A", false, false),
            ("a?b", "a/b", false, false),
            ("a*b", "a/b", false, false),
            ("[\\]a]", "]", true, false),
            ("[\\-]", "-", true, false),
            ("[x\\-]", "x", true, false),
            ("[x\\-]", "-", true, false),
            ("[x\\-]", "z", false, false),
            ("[\\-x]", "x", true, false),
            ("[\\-x]", "-", true, false),
            ("[\\-x]", "a", false, false),
            ("[]a]", "]", false, true),
            ("[-]", "-", false, true),
            ("[x-]", "x", false, true),
            ("[x-]", "-", false, true),
            ("[x-]", "z", false, true),
            ("[-x]", "x", false, true),
            ("[-x]", "-", false, true),
            ("[-x]", "a", false, true),
            ("\\", "a", false, true),
            ("[a-b-c]", "a", false, true),
            ("[", "a", false, true),
            ("[^", "a", false, true),
            ("[^bc", "a", false, true),
            ("a[", "a", false, true),
            ("a[", "ab", false, true),
            ("a[", "x", false, true),
            ("a/b[", "x", false, true),
            ("*x", "xxx", true, false),
        ];
        for &(pattern, name, matched, bad) in cases {
            match path_match(pattern, name) {
                Ok(m) => {
                    assert!(!bad, "{pattern:?} is a bad pattern in Go");
                    assert_eq!(m, matched, "{pattern:?} against {name:?}");
                }
                Err(e) => assert!(bad, "{pattern:?} is a good pattern in Go: {e}"),
            }
        }
    }

    #[test]
    fn template_paths_as_show_only_uses_them() {
        assert_eq!(path_match("templates/cm*.yaml", "templates/cm-a.yaml"), Ok(true));
        assert_eq!(path_match("templates/*.yaml", "templates/sub/cm.yaml"), Ok(false));
        assert_eq!(path_match("charts/*/templates/*.yaml", "charts/lib/templates/x.yaml"), Ok(true));
    }
}
