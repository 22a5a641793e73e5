//! Helm's `--set` syntax (`helm.sh/helm/v4/pkg/strvals`), which Flux also uses to write `valuesFrom` data
//! at a `targetPath`.
//!
//! Syntax: `a.b.c=v` nests maps, `a\.b` escapes a dot (any character after `\` is literal), `list[0]=v` and
//! `a[1].b=v` index lists (growing them with `null`s, up to index 65536), `a={x,y}` is a list, `,` separates
//! assignments. Typed mode (`--set`, Flux `targetPath`) infers `true`/`false` (any case), `null`, and base-10
//! int64 without a leading zero (`0` itself is an int); everything else, floats included, is a string.
//! String mode (`--set-string`) keeps every value a string. Writes go *into* existing maps and lists, which is
//! what makes Flux's by-reference quirk observable (see [`super::compose()`]).

use std::cell::RefCell;
use std::rc::Rc;

use super::gov::{GoList, GoMap, GoVal, map_get, map_set, new_map};
#[cfg(test)]
use super::gov::{map_from_json, map_to_json};
#[cfg(test)]
use super::model::Values;

/// A strvals parse failure, worded like Helm's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StrvalsError(pub String);

/// How assigned values are typed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `--set` / `strvals.ParseInto`: bool, int64 and `null` are inferred.
    Typed,
    /// `--set-string` / `strvals.ParseIntoString`: every value is a string.
    String,
}

/// `strvals.ParseInto` / `ParseIntoString`: applies `expr` (one or more comma-separated assignments) to `dest`.
#[cfg(test)]
fn parse_into(expr: &str, dest: &mut Values, mode: Mode) -> Result<(), StrvalsError> {
    with_go(dest, |m| parse_into_go(expr, m, mode == Mode::String))
}

/// Flux `ReplacePathValue`: writes `value` at `path` with type inference; data wrapped in quotes (`'...'` or
/// `"..."`) has all surrounding quote characters trimmed and is written as a string.
#[cfg(test)]
fn replace_path_value(dest: &mut Values, path: &str, value: &str) -> Result<(), StrvalsError> {
    with_go(dest, |m| replace_path_go(m, path, value, false))
}

/// Flux `ReplacePathLiteralValue` (`literal: true`, hc 1.6): writes `value` verbatim as a string; `\.` still
/// escapes a dot in the path.
#[cfg(test)]
fn replace_path_literal_value(dest: &mut Values, path: &str, value: &str) -> Result<(), StrvalsError> {
    with_go(dest, |m| replace_path_go(m, path, value, true))
}

#[cfg(test)]
fn with_go(dest: &mut Values, f: impl FnOnce(&GoMap) -> Result<(), StrvalsError>) -> Result<(), StrvalsError> {
    let m = map_from_json(dest);
    let res = f(&m);
    // Helm leaves partial writes in place on error; so do we, to stay comparable.
    *dest = map_to_json(&m);
    res
}

pub(crate) fn replace_path_go(m: &GoMap, path: &str, value: &str, literal: bool) -> Result<(), StrvalsError> {
    if literal {
        // Escape everything strvals would read as syntax in a value; the backslash first.
        let mut escaped = String::with_capacity(value.len());
        for c in value.chars() {
            if matches!(c, '\\' | ',' | '[' | ']' | '{' | '}') {
                escaped.push('\\');
            }
            escaped.push(c);
        }
        return parse_into_go(&format!("{path}={escaped}"), m, true);
    }
    let single = value.starts_with('\'') && value.ends_with('\'');
    let double = value.starts_with('"') && value.ends_with('"');
    if single || double {
        let trimmed = value.trim_matches(|c| c == '\'' || c == '"');
        return parse_into_go(&format!("{path}={trimmed}"), m, true);
    }
    parse_into_go(&format!("{path}={value}"), m, false)
}

pub(crate) fn parse_into_go(expr: &str, dest: &GoMap, string_mode: bool) -> Result<(), StrvalsError> {
    let mut p = Parser { chars: expr.chars().collect(), pos: 0, string_mode };
    loop {
        match p.key(dest, 0) {
            Ok(()) => continue,
            Err(Stop::Eof) => return Ok(()),
            Err(Stop::Err(m)) => return Err(StrvalsError(m)),
        }
    }
}

const MAX_INDEX: i64 = 65536;
const MAX_NESTED_NAME_LEVEL: usize = 30;

/// Go's `io.EOF` is a normal end for strvals (e.g. `a=` sets `""` and stops); everything else is an error.
enum Stop {
    Eof,
    Err(String),
}

fn err<T>(m: impl Into<String>) -> Result<T, Stop> {
    Err(Stop::Err(m.into()))
}

enum ValList {
    List(Vec<GoVal>),
    NotList,
    Eof,
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    string_mode: bool,
}

/// Go's `%T`-style name of a value, for the type-assertion messages Helm surfaces.
fn go_type(v: &GoVal) -> &'static str {
    match v {
        GoVal::Null => "nil",
        GoVal::Bool(_) => "bool",
        GoVal::Int(_) => "int64",
        GoVal::Float(_) => "float64",
        GoVal::Str(_) => "string",
        GoVal::Map(_) => "map[string]interface {}",
        GoVal::List(_) => "[]interface {}",
    }
}

fn not_a(v: &GoVal, want: &str) -> Stop {
    Stop::Err(format!("unable to parse key: interface conversion: interface {{}} is {}, not {want}", go_type(v)))
}

impl Parser {
    fn read(&mut self) -> Option<char> {
        let c = self.chars.get(self.pos).copied();
        if c.is_some() {
            self.pos += 1;
        }
        c
    }

    /// Go `runesUntil`: text up to one of `stop` (returned as the second item, `None` at end of input);
    /// a backslash makes the next character literal.
    fn runes_until(&mut self, stop: &[char]) -> (String, Option<char>) {
        let mut v = String::new();
        while let Some(c) = self.read() {
            if stop.contains(&c) {
                return (v, Some(c));
            }
            if c == '\\' {
                match self.read() {
                    Some(next) => v.push(next),
                    None => return (v, None),
                }
            } else {
                v.push(c);
            }
        }
        (v, None)
    }

    fn typed(&self, s: String) -> GoVal {
        if self.string_mode {
            return GoVal::Str(s);
        }
        if s.eq_ignore_ascii_case("true") {
            return GoVal::Bool(true);
        }
        if s.eq_ignore_ascii_case("false") {
            return GoVal::Bool(false);
        }
        if s.eq_ignore_ascii_case("null") {
            return GoVal::Null;
        }
        if s == "0" {
            return GoVal::Int(0);
        }
        // A leading zero keeps the text a string (so `0755` survives as written).
        if !s.is_empty()
            && !s.starts_with('0')
            && let Ok(i) = s.parse::<i64>()
        {
            return GoVal::Int(i);
        }
        GoVal::Str(s)
    }

    fn key(&mut self, data: &GoMap, level: usize) -> Result<(), Stop> {
        let (k, last) = self.runes_until(&['=', '[', ',', '.']);
        let Some(last) = last else {
            if k.is_empty() {
                return Err(Stop::Eof);
            }
            return err(format!("key {k:?} has no value"));
        };
        match last {
            '[' => {
                let i = self.key_index()?;
                let list = match map_get(data, &k) {
                    Some(GoVal::List(l)) => l,
                    Some(other) => return Err(not_a(&other, "[]interface {}")),
                    None => Rc::new(RefCell::new(Vec::new())),
                };
                let (list, res) = self.list_item(list, i, level);
                set(data, &k, GoVal::List(list));
                res
            }
            '=' => match self.val_list()? {
                ValList::List(vl) => {
                    set(data, &k, GoVal::List(Rc::new(RefCell::new(vl))));
                    Ok(())
                }
                ValList::Eof => {
                    set(data, &k, GoVal::Str(String::new()));
                    Err(Stop::Eof)
                }
                ValList::NotList => {
                    // Go reassigns the error from the value conversion, so reaching the end here is
                    // still a success; the next key() call then ends the parse.
                    let rs = self.val();
                    let v = self.typed(rs);
                    set(data, &k, v);
                    Ok(())
                }
            },
            ',' => {
                set(data, &k, GoVal::Str(String::new()));
                err(format!("key {k:?} has no value (cannot end with ,)"))
            }
            _ => {
                // '.': descend into (and write through) the existing map, or a new one.
                let level = level + 1;
                if level > MAX_NESTED_NAME_LEVEL {
                    return err(format!(
                        "value name nested level is greater than maximum supported nested level of {MAX_NESTED_NAME_LEVEL}"
                    ));
                }
                let inner = match map_get(data, &k) {
                    Some(GoVal::Map(m)) => m,
                    Some(other) => return Err(not_a(&other, "map[string]interface {}")),
                    None => new_map(),
                };
                let res = self.key(&inner, level);
                let empty = inner.borrow().is_empty();
                if res.is_ok() && empty {
                    return err(format!("key map {k:?} has no value"));
                }
                if !empty {
                    set(data, &k, GoVal::Map(inner));
                }
                res
            }
        }
    }

    fn key_index(&mut self) -> Result<i64, Stop> {
        let (v, last) = self.runes_until(&[']']);
        if last.is_none() {
            return err("error parsing index: EOF");
        }
        // Go's Atoi: optional sign, decimal digits, int range.
        v.parse::<i64>()
            .map_err(|_| Stop::Err(format!("error parsing index: strconv.Atoi: parsing {v:?}: invalid syntax")))
    }

    /// Go `listItem`: returns the (possibly new) list and the outcome; the caller stores the list either way.
    fn list_item(&mut self, list: GoList, i: i64, level: usize) -> (GoList, Result<(), Stop>) {
        if i < 0 {
            return (list, err(format!("negative {i} index not allowed")));
        }
        let (k, last) = self.runes_until(&['[', '.', '=']);
        if !k.is_empty() {
            // Go prints the rune slice with %q: ['x' 'y'].
            let runes: Vec<String> = k.chars().map(|c| format!("{c:?}")).collect();
            return (list, err(format!("unexpected data at end of array index: [{}]", runes.join(" "))));
        }
        let Some(last) = last else { return (list, Err(Stop::Eof)) };
        match last {
            '=' => {
                let v = match self.val_list() {
                    Ok(ValList::List(vl)) => GoVal::List(Rc::new(RefCell::new(vl))),
                    Ok(ValList::Eof) => GoVal::Str(String::new()),
                    Ok(ValList::NotList) => {
                        let rs = self.val();
                        self.typed(rs)
                    }
                    Err(e) => return (list, Err(e)),
                };
                set_index(list, i, v)
            }
            '[' => {
                let next_i = match self.key_index() {
                    Ok(n) => n,
                    Err(e) => return (list, Err(e)),
                };
                let existing = list.borrow().get(i as usize).cloned();
                let crt = match existing {
                    Some(GoVal::List(l)) => l,
                    None | Some(GoVal::Null) => Rc::new(RefCell::new(Vec::new())),
                    Some(other) => return (list, Err(not_a(&other, "[]interface {}"))),
                };
                let (list2, res) = self.list_item(crt, next_i, level);
                if res.is_err() {
                    return (list, res);
                }
                set_index(list, i, GoVal::List(list2))
            }
            _ => {
                // '.': a map element, written in place when it already is one. A non-map element is
                // replaced by a new map directly in the (possibly shared) list, as Go does.
                let inner = {
                    let mut l = list.borrow_mut();
                    match l.get_mut(i as usize) {
                        Some(GoVal::Map(m)) => m.clone(),
                        Some(slot) => {
                            let m = new_map();
                            *slot = GoVal::Map(m.clone());
                            m
                        }
                        None => new_map(),
                    }
                };
                if let Err(e) = self.key(&inner, level) {
                    return (list, Err(e));
                }
                set_index(list, i, GoVal::Map(inner))
            }
        }
    }

    fn val(&mut self) -> String {
        self.runes_until(&[',']).0
    }

    fn val_list(&mut self) -> Result<ValList, Stop> {
        match self.read() {
            None => return Ok(ValList::Eof),
            Some('{') => {}
            Some(_) => {
                self.pos -= 1;
                return Ok(ValList::NotList);
            }
        }
        let mut list = Vec::new();
        loop {
            let (rs, last) = self.runes_until(&[',', '}']);
            match last {
                None => return err("list must terminate with '}'"),
                Some('}') => {
                    if let Some(c) = self.read()
                        && c != ','
                    {
                        self.pos -= 1;
                    }
                    list.push(self.typed(rs));
                    return Ok(ValList::List(list));
                }
                _ => list.push(self.typed(rs)),
            }
        }
    }
}

fn set(data: &GoMap, key: &str, val: GoVal) {
    if !key.is_empty() {
        map_set(data, key, val);
    }
}

/// Go `setIndex`: within the current length the element is replaced in place (visible through every alias of
/// the slice); beyond it a new, longer slice padded with `null` is made.
fn set_index(list: GoList, index: i64, val: GoVal) -> (GoList, Result<(), Stop>) {
    if index < 0 {
        return (list, err(format!("negative {index} index not allowed")));
    }
    if index > MAX_INDEX {
        return (list, err(format!("index of {index} is greater than maximum supported index of {MAX_INDEX}")));
    }
    let index = index as usize;
    let len = list.borrow().len();
    if len <= index {
        let mut grown = list.borrow().clone();
        grown.resize(index + 1, GoVal::Null);
        grown[index] = val;
        return (Rc::new(RefCell::new(grown)), Ok(()));
    }
    list.borrow_mut()[index] = val;
    (list, Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn run(dest: Value, expr: &str, mode: Mode) -> Result<Value, String> {
        let Value::Object(mut m) = dest else { panic!("fixture must be an object") };
        parse_into(expr, &mut m, mode).map_err(|e| e.0)?;
        Ok(Value::Object(m))
    }

    fn set(expr: &str) -> Result<Value, String> {
        run(json!({}), expr, Mode::Typed)
    }

    // Every expected value below was produced by helm.sh/helm/v4 v4.2.2 strvals.ParseInto / ParseIntoString
    // (and fluxcd/pkg/chartutil v1.27.1 ReplacePath*Value) in a throwaway Go program.

    #[test]
    fn type_inference() {
        assert_eq!(
            set("a=true,b=FALSE,c=null,d=0,e=10,f=010,g=1.5,h=-3,i=+4,j=1e3,k=9223372036854775808,l=abc,m=").unwrap(),
            json!({"a": true, "b": false, "c": null, "d": 0, "e": 10, "f": "010", "g": "1.5", "h": -3, "i": 4,
                   "j": "1e3", "k": "9223372036854775808", "l": "abc", "m": ""})
        );
        assert_eq!(
            run(json!({}), "a=true,b=10,c=null", Mode::String).unwrap(),
            json!({"a": "true", "b": "10", "c": "null"})
        );
    }

    #[test]
    fn nesting_escapes_and_lists() {
        assert_eq!(set("a.b.c=1").unwrap(), json!({"a": {"b": {"c": 1}}}));
        assert_eq!(set(r"a\.b.c=1").unwrap(), json!({"a.b": {"c": 1}}));
        assert_eq!(set("a={x,2,true}").unwrap(), json!({"a": ["x", 2, true]}));
        assert_eq!(set("a={}").unwrap(), json!({"a": [""]}));
        assert_eq!(set("a[2]=x").unwrap(), json!({"a": [null, null, "x"]}));
        assert_eq!(set("a[1].b=x").unwrap(), json!({"a": [null, {"b": "x"}]}));
        assert_eq!(set("a[0][1]=x").unwrap(), json!({"a": [[null, "x"]]}));
        assert_eq!(set("a[0]={1,2}").unwrap(), json!({"a": [[1, 2]]}));
        assert_eq!(set(r"a=x\,y,b=c=d").unwrap(), json!({"a": "x,y", "b": "c=d"}));
        assert_eq!(set("a=b,c.d=e").unwrap(), json!({"a": "b", "c": {"d": "e"}}));
        // A bare index without `=` stops parsing successfully and leaves an empty list behind.
        assert_eq!(set("a[0]").unwrap(), json!({"a": []}));
    }

    #[test]
    fn writes_into_existing_structures() {
        let dest = json!({"a": {"keep": 1}, "l": [1, {"k": "v"}, 3]});
        assert_eq!(
            run(dest, "a.new=2,l[1].x=y,l[2].z=w,l[4]=five", Mode::Typed).unwrap(),
            json!({"a": {"keep": 1, "new": 2}, "l": [1, {"k": "v", "x": "y"}, {"z": "w"}, null, "five"]})
        );
    }

    #[test]
    fn errors_match_helm() {
        assert_eq!(set("a").unwrap_err(), "key \"a\" has no value");
        assert_eq!(set("a,b=1").unwrap_err(), "key \"a\" has no value (cannot end with ,)");
        assert_eq!(set("a[-1]=x").unwrap_err(), "negative -1 index not allowed");
        assert_eq!(set("a[65537]=x").unwrap_err(), "index of 65537 is greater than maximum supported index of 65536");
        assert_eq!(set("a={1,2").unwrap_err(), "list must terminate with '}'");
        assert_eq!(set("a[x]=1").unwrap_err(), "error parsing index: strconv.Atoi: parsing \"x\": invalid syntax");
        assert_eq!(set("a[0]x=1").unwrap_err(), "unexpected data at end of array index: ['x']");
        assert_eq!(set("a.=1").unwrap_err(), "key map \"a\" has no value");
        assert_eq!(
            run(json!({"a": "s"}), "a.b=1", Mode::Typed).unwrap_err(),
            "unable to parse key: interface conversion: interface {} is string, not map[string]interface {}"
        );
        assert_eq!(
            run(json!({"a": {"b": 1}}), "a[0]=1", Mode::Typed).unwrap_err(),
            "unable to parse key: interface conversion: interface {} is map[string]interface {}, not []interface {}"
        );
        let deep = format!("{}=1", vec!["k"; 32].join("."));
        assert_eq!(
            set(&deep).unwrap_err(),
            "value name nested level is greater than maximum supported nested level of 30"
        );
    }

    #[test]
    fn flux_replace_path_value() {
        let mut m = Values::new();
        replace_path_value(&mut m, "a.b", "1.5").unwrap();
        replace_path_value(&mut m, "a.c", "\"true\"").unwrap();
        // Quotes must match at both ends to count.
        replace_path_value(&mut m, "a.d", "'x'\"").unwrap();
        replace_path_value(&mut m, "a.e", "'1,2'").unwrap_err();
        assert_eq!(Value::Object(m), json!({"a": {"b": "1.5", "c": "true", "d": "'x'\"", "e": "1"}}));

        let mut m = Values::new();
        replace_path_literal_value(&mut m, r"cfg\.yaml", "a=1,b=[x]{y}\\z\nnext: 2").unwrap();
        assert_eq!(Value::Object(m), json!({"cfg.yaml": "a=1,b=[x]{y}\\z\nnext: 2"}));
    }
}
