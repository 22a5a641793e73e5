//! Kubernetes label selectors as `k8s.io/apimachinery/pkg/labels.Parse` reads and matches them: the
//! syntax of `kubectl get -l` (`a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`, `a>1`,
//! `a<1`, comma-separated, all of them must hold). helm-controller's drift ignore rules select objects
//! with it, by labels (`target.labelSelector`) and by annotations (`target.annotationSelector`, the same
//! syntax and rules, values included).
//!
//! Written after apimachinery's lexer and parser, so that what it accepts, rejects and matches is the
//! same, down to its odd corners (`a in ()` is the set of the empty value, `a=` means the empty value).

use std::collections::{BTreeMap, BTreeSet};

/// A parsed selector: every requirement must hold. No requirement selects everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Requirement {
    key: String,
    op: Op,
    values: BTreeSet<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    In,
    NotIn,
    Exists,
    DoesNotExist,
    GreaterThan,
    LessThan,
}

impl LabelSelector {
    /// Parses `text` as `labels.Parse` does; Err is its reason, worded after apimachinery's.
    pub fn parse(text: &str) -> Result<LabelSelector, String> {
        let tokens = lex(text)?;
        Parser { tokens, position: 0 }.parse().map(|requirements| LabelSelector { requirements })
    }

    /// Whether a set of labels (or annotations) satisfies every requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }
}

impl Requirement {
    fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let value = labels.get(&self.key);
        match self.op {
            Op::In => value.is_some_and(|v| self.values.contains(v)),
            Op::NotIn => value.is_none_or(|v| !self.values.contains(v)),
            Op::Exists => value.is_some(),
            Op::DoesNotExist => value.is_none(),
            Op::GreaterThan | Op::LessThan => {
                let (Some(have), Some(want)) = (value, self.values.iter().next()) else { return false };
                let (Ok(have), Ok(want)) = (have.parse::<i64>(), want.parse::<i64>()) else { return false };
                if self.op == Op::GreaterThan { have > want } else { have < want }
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    End,
    ClosedPar,
    Comma,
    /// `!`
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier(String),
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

impl Token {
    /// The text a token stands for, as the parser's messages quote it.
    fn literal(&self) -> &str {
        match self {
            Token::End => "",
            Token::ClosedPar => ")",
            Token::Comma => ",",
            Token::DoesNotExist => "!",
            Token::DoubleEquals => "==",
            Token::Equals => "=",
            Token::GreaterThan => ">",
            Token::Identifier(s) => s,
            Token::In => "in",
            Token::LessThan => "<",
            Token::NotEquals => "!=",
            Token::NotIn => "notin",
            Token::OpenPar => "(",
        }
    }
}

/// The symbols and keywords the lexer knows (apimachinery's `string2token`).
fn keyword(s: &str) -> Option<Token> {
    Some(match s {
        ")" => Token::ClosedPar,
        "," => Token::Comma,
        "!" => Token::DoesNotExist,
        "==" => Token::DoubleEquals,
        "=" => Token::Equals,
        ">" => Token::GreaterThan,
        "in" => Token::In,
        "<" => Token::LessThan,
        "!=" => Token::NotEquals,
        "notin" => Token::NotIn,
        "(" => Token::OpenPar,
        _ => return None,
    })
}

fn is_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

fn is_special(c: char) -> bool {
    matches!(c, '=' | '!' | '(' | ')' | ',' | '>' | '<')
}

/// The whole selector as tokens, ending with [`Token::End`].
fn lex(text: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if is_whitespace(c) {
            i += 1;
        } else if is_special(c) {
            // The longest run of symbols that is still a known token (`!=` over `!`).
            let mut buffer = String::new();
            let mut last: Option<(Token, usize)> = None;
            let mut j = i;
            while j < chars.len() && is_special(chars[j]) {
                buffer.push(chars[j]);
                match keyword(&buffer) {
                    Some(t) => last = Some((t, j + 1)),
                    None if last.is_some() => break,
                    None => {}
                }
                j += 1;
            }
            let Some((token, end)) = last else {
                return Err(format!("error expected: keyword found '{buffer}'"));
            };
            tokens.push(token);
            i = end;
        } else {
            let start = i;
            while i < chars.len() && !is_whitespace(chars[i]) && !is_special(chars[i]) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            tokens.push(match keyword(&word) {
                Some(t) => t,
                None => Token::Identifier(word),
            });
        }
    }
    tokens.push(Token::End);
    Ok(tokens)
}

struct Parser {
    tokens: Vec<Token>,
    position: usize,
}

impl Parser {
    /// The next token without consuming it. In value position the keywords `in` and `notin` are plain
    /// identifiers (apimachinery's `Values` context).
    fn lookahead(&self, values: bool) -> Token {
        let t = self.tokens.get(self.position).cloned().unwrap_or(Token::End);
        match t {
            Token::In | Token::NotIn if values => Token::Identifier(t.literal().to_string()),
            other => other,
        }
    }

    fn consume(&mut self, values: bool) -> Token {
        let t = self.lookahead(values);
        if self.position < self.tokens.len() {
            self.position += 1;
        }
        t
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, String> {
        let mut requirements = Vec::new();
        loop {
            match self.lookahead(true) {
                Token::Identifier(_) | Token::DoesNotExist => {
                    requirements.push(self.requirement()?);
                    match self.consume(true) {
                        Token::End => return Ok(requirements),
                        Token::Comma => match self.lookahead(true) {
                            Token::Identifier(_) | Token::DoesNotExist => {}
                            t => return Err(format!("found '{}', expected: identifier after ','", t.literal())),
                        },
                        t => return Err(format!("found '{}', expected: ',' or 'end of string'", t.literal())),
                    }
                }
                Token::End => return Ok(requirements),
                t => return Err(format!("found '{}', expected: !, identifier, or 'end of string'", t.literal())),
            }
        }
    }

    fn requirement(&mut self) -> Result<Requirement, String> {
        let mut op = None;
        let mut token = self.consume(true);
        if token == Token::DoesNotExist {
            op = Some(Op::DoesNotExist);
            token = self.consume(true);
        }
        let Token::Identifier(key) = token else {
            return Err(format!("found '{}', expected: identifier", token.literal()));
        };
        validate_key(&key)?;
        if matches!(self.lookahead(true), Token::End | Token::Comma) && op.is_none() {
            op = Some(Op::Exists);
        }
        if let Some(op) = op {
            return Ok(Requirement { key, op, values: BTreeSet::new() });
        }
        let (op, values) = match self.consume(false) {
            Token::In => (Op::In, self.values()?),
            Token::NotIn => (Op::NotIn, self.values()?),
            Token::Equals | Token::DoubleEquals => (Op::In, self.exact_value()?),
            Token::NotEquals => (Op::NotIn, self.exact_value()?),
            Token::GreaterThan => (Op::GreaterThan, self.exact_value()?),
            Token::LessThan => (Op::LessThan, self.exact_value()?),
            t => return Err(format!("found '{}', expected: in, notin, =, ==, !=, gt, lt", t.literal())),
        };
        for v in &values {
            validate_value(v)?;
        }
        if matches!(op, Op::GreaterThan | Op::LessThan) && values.iter().any(|v| v.parse::<i64>().is_err()) {
            return Err(format!("for 'Gt', 'Lt' operators, the value must be an integer: {values:?}"));
        }
        Ok(Requirement { key, op, values })
    }

    /// `( v1, v2 )` after `in`/`notin`; `()` is the set of the empty value.
    fn values(&mut self) -> Result<BTreeSet<String>, String> {
        let t = self.consume(true);
        if t != Token::OpenPar {
            return Err(format!("found '{}' expected: '('", t.literal()));
        }
        match self.lookahead(true) {
            Token::Identifier(_) | Token::Comma => {
                let set = self.identifiers()?;
                let t = self.consume(true);
                if t != Token::ClosedPar {
                    return Err(format!("found '{}', expected: ')'", t.literal()));
                }
                Ok(set)
            }
            Token::ClosedPar => {
                self.consume(true);
                Ok(BTreeSet::from([String::new()]))
            }
            t => Err(format!("found '{}', expected: ',', ')' or identifier", t.literal())),
        }
    }

    /// The list inside the parentheses; empty items (`(,a)`, `(a,)`, `(a,,b)`) are the empty value.
    fn identifiers(&mut self) -> Result<BTreeSet<String>, String> {
        let mut set = BTreeSet::new();
        loop {
            match self.consume(true) {
                Token::Identifier(v) => {
                    set.insert(v);
                    match self.lookahead(true) {
                        Token::Comma => continue,
                        Token::ClosedPar => return Ok(set),
                        t => return Err(format!("found '{}', expected: ',' or ')'", t.literal())),
                    }
                }
                Token::Comma => {
                    if set.is_empty() {
                        set.insert(String::new());
                    }
                    match self.lookahead(true) {
                        Token::ClosedPar => {
                            set.insert(String::new());
                            return Ok(set);
                        }
                        Token::Comma => {
                            self.consume(true);
                            set.insert(String::new());
                        }
                        _ => {}
                    }
                }
                t => return Err(format!("found '{}', expected: ',', or identifier", t.literal())),
            }
        }
    }

    /// The one value after `=`, `==`, `!=`, `>` or `<`; nothing before a comma or the end is the empty value.
    fn exact_value(&mut self) -> Result<BTreeSet<String>, String> {
        if matches!(self.lookahead(true), Token::End | Token::Comma) {
            return Ok(BTreeSet::from([String::new()]));
        }
        match self.consume(true) {
            Token::Identifier(v) => Ok(BTreeSet::from([v])),
            t => Err(format!("found '{}', expected: identifier", t.literal())),
        }
    }
}

/// A label key: a qualified name, `[prefix/]name` (apimachinery's `IsQualifiedName`).
fn validate_key(key: &str) -> Result<(), String> {
    let bad = |why: &str| Err(format!("invalid label key {key:?}: {why}"));
    let (prefix, name) = match key.split('/').collect::<Vec<_>>().as_slice() {
        [name] => (None, *name),
        [prefix, name] => (Some(*prefix), *name),
        _ => return bad("a qualified name has at most one '/'"),
    };
    if let Some(prefix) = prefix {
        if prefix.is_empty() {
            return bad("the prefix part must be non-empty");
        }
        if prefix.len() > 253 || !is_dns_subdomain(prefix) {
            return bad("the prefix part must be a DNS subdomain (lower case alphanumerics, '-' and '.')");
        }
    }
    if name.is_empty() {
        return bad("the name part must be non-empty");
    }
    if name.len() > 63 || !is_label_text(name) {
        return bad(
            "the name part must be at most 63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric",
        );
    }
    Ok(())
}

/// A label value: empty, or at most 63 alphanumerics, '-', '_', '.', beginning and ending alphanumeric.
fn validate_value(value: &str) -> Result<(), String> {
    if value.is_empty() || (value.len() <= 63 && is_label_text(value)) {
        Ok(())
    } else {
        Err(format!(
            "invalid label value {value:?}: at most 63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric"
        ))
    }
}

fn is_label_text(s: &str) -> bool {
    let bytes = s.as_bytes();
    let alnum = |b: &u8| b.is_ascii_alphanumeric();
    bytes.first().is_some_and(alnum)
        && bytes.last().is_some_and(alnum)
        && bytes.iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

fn is_dns_subdomain(s: &str) -> bool {
    s.split('.').all(|part| {
        let bytes = part.as_bytes();
        let alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
        bytes.first().is_some_and(alnum)
            && bytes.last().is_some_and(alnum)
            && bytes.iter().all(|b| alnum(b) || *b == b'-')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn matches(selector: &str, pairs: &[(&str, &str)]) -> bool {
        LabelSelector::parse(selector).unwrap_or_else(|e| panic!("{selector:?}: {e}")).matches(&labels(pairs))
    }

    #[test]
    fn equality_sets_and_existence_match_as_kubernetes_matches_them() {
        let l = &[("app", "web"), ("tier", "front"), ("n", "5")];
        assert!(matches("app=web", l));
        assert!(matches("app==web,tier=front", l));
        assert!(!matches("app=db", l));
        assert!(matches("app!=db", l));
        assert!(matches("missing!=x", l), "!= holds for a missing key");
        assert!(matches("app in (web, db)", l));
        assert!(!matches("app notin (web)", l));
        assert!(matches("missing notin (x)", l));
        assert!(matches("app", l));
        assert!(matches("!missing", l));
        assert!(!matches("!app", l));
        assert!(matches("n>4,n<6", l));
        assert!(!matches("app>1", l), "a value that is not a number is never greater");
        assert!(matches("", l) && matches("  ", l), "no requirement selects everything");
        assert!(matches("helm.toolkit.fluxcd.io/name=web", &[("helm.toolkit.fluxcd.io/name", "web")]));
        // The empty value: `a=` and `a in ()`.
        assert!(matches("empty=", &[("empty", "")]));
        assert!(matches("empty==", &[("empty", "")]));
        assert!(matches("empty in ()", &[("empty", "")]));
        assert!(matches("x in (,a)", &[("x", "")]));
        // `in` and `notin` are values where a value is expected.
        assert!(matches("kind=in", &[("kind", "in")]));
    }

    #[test]
    fn what_kubernetes_rejects_is_rejected() {
        for bad in [
            "app=web,",
            "=web",
            "app in web",
            "app in (web",
            "app >",
            "app>x",
            "a/b/c=d",
            "-app=x",
            "app=-x",
            "app=web extra",
            "!app=web",
            "app=(x)",
            &format!("app={}", "v".repeat(64)),
        ] {
            assert!(LabelSelector::parse(bad).is_err(), "{bad:?} parsed");
        }
        assert_eq!(LabelSelector::parse("app=web,").unwrap_err(), "found '', expected: identifier after ','");
        assert_eq!(LabelSelector::parse("app in web").unwrap_err(), "found 'web' expected: '('");
    }
}
