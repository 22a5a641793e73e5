//! Masterminds/semver v3's `NewConstraint` and `Constraints.Check`: the version ranges source-controller
//! picks a chart version with (a HelmChart's `spec.version`, a HelmRepository's and an OCI registry's
//! tags), so that cozyhr picks the same one.
//!
//! The syntax, as v3.4/v3.5 accept it:
//! - `||` splits OR groups; inside a group, comparisons are separated by spaces or commas (AND).
//! - `A - B` (spaces around the hyphen) is rewritten to `>= A, <= B` before anything else.
//! - A comparison is an operator (`=` or none, `!=`, `>`, `<`, `>=`, `=>`, `<=`, `=<`, `~`, `~>`, `^`)
//!   and a version with an optional `v`, one to three numbers where `x`, `X` or `*` are wildcards, then
//!   an optional pre-release and build metadata. A missing or wildcard part makes the comparison a range
//!   (`1.2` is `1.2.x`; `=1.2` and `1.2` are `~1.2`).
//!
//! The pre-release rule: a version with a pre-release satisfies an AND group only when some comparison of
//! that group names a pre-release itself (`>=1.0.0-0`); then every pre-release may match, not only those
//! of the same `MAJOR.MINOR.PATCH`. So `*`, `>=1.0.0` and `1.x` never match a pre-release, while `*-0` or
//! `>=0.0.0-0` match them all.

use std::cmp::Ordering;
use std::sync::OnceLock;

use regex_lite::Regex;

use crate::semver::{Version, compare_pre};

/// A parsed constraint: OR groups of AND comparisons.
#[derive(Debug, Clone)]
pub struct Constraints {
    groups: Vec<Group>,
}

/// One AND group, and whether any of its comparisons names a pre-release.
#[derive(Debug, Clone)]
struct Group {
    comparisons: Vec<Comparison>,
    prerelease: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    /// `=` or no operator: equality, or a tilde range when a part is missing or a wildcard.
    Equal,
    NotEqual,
    Greater,
    Less,
    GreaterOrEqual,
    LessOrEqual,
    Tilde,
    Caret,
}

/// One comparison: its operator, its version (wildcards as zeros) and which parts were wildcards.
#[derive(Debug, Clone)]
struct Comparison {
    op: Op,
    version: Version,
    /// Some part was missing or a wildcard.
    dirty: bool,
    /// The minor (and so the patch) was missing or a wildcard: `1`, `1.x`.
    minor_dirty: bool,
    /// Only the patch was missing or a wildcard: `1.2`, `1.2.x`.
    patch_dirty: bool,
}

/// Why a constraint cannot be parsed, as `NewConstraint` refuses it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConstraintError {
    /// A group that is not comparisons separated by spaces or commas.
    #[error("improper constraint: {0:?}")]
    Improper(String),
    /// A comparison whose version is not one (`1x`, a pre-release with a leading zero).
    #[error("constraint parser error: {0:?}")]
    Version(String),
}

/// Whitespace as Go's `\s` has it (no vertical tab).
const WS: &str = r"[\t\n\f\r ]";
/// The operators in the order Go's alternation tries them (the empty one second).
const OPS: &str = r"=||!=|>|<|>=|=>|<=|=<|~|~>|\^";

/// The version of a comparison: numbers or wildcards (Go's class also takes `|`), pre-release, metadata.
fn version_pattern() -> String {
    let part = r"[0-9|xX*]+";
    let ids = r"[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*";
    format!(r"v?(?P<major>{part})(?P<minor>\.{part})?(?P<patch>\.{part})?(?P<pre>-{ids})?(?:\+{ids})?")
}

/// The patterns, compiled once: a whole comparison, a comparison found in a group, a valid group, a
/// hyphen range.
struct Patterns {
    one: Regex,
    find: Regex,
    group: Regex,
    range: Regex,
}

fn patterns() -> &'static Patterns {
    static PATTERNS: OnceLock<Patterns> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        let v = version_pattern();
        let plain = v.replace("?P<major>", "").replace("?P<minor>", "").replace("?P<patch>", "").replace("?P<pre>", "");
        let compile = |p: String| Regex::new(&p).unwrap_or_else(|e| panic!("a constant pattern: {e}"));
        Patterns {
            one: compile(format!(r"^{WS}*(?P<op>{OPS}){WS}*(?P<version>{v}){WS}*$")),
            find: compile(format!(r"(?:{OPS}){WS}*{plain}")),
            group: compile(format!(
                r"^{WS}*(?:{OPS}){WS}*{plain}{WS}*(?:(?:{WS}+|,{WS}*)(?:{OPS}){WS}*{plain}{WS}*)*$"
            )),
            range: compile(format!(r"{WS}*(?P<low>{plain}){WS}+-{WS}+(?P<high>{plain}){WS}*")),
        }
    })
}

/// `x`, `X` or `*`.
fn wildcard(part: &str) -> bool {
    matches!(part, "x" | "X" | "*")
}

/// Rewrites each `A - B` as `>= A, <= B `, in the text where it was found, first occurrence first.
fn rewrite_ranges(text: &str) -> String {
    let found: Vec<(String, String)> = patterns()
        .range
        .captures_iter(text)
        .filter_map(|c| {
            Some((
                c.get(0)?.as_str().to_string(),
                format!(">= {}, <= {} ", c.name("low")?.as_str(), c.name("high")?.as_str()),
            ))
        })
        .collect();
    let mut out = text.to_string();
    for (whole, replacement) in found {
        out = out.replacen(&whole, &replacement, 1);
    }
    out
}

impl Comparison {
    /// One comparison as the group pattern found it.
    fn parse(text: &str) -> Result<Comparison, ConstraintError> {
        let improper = || ConstraintError::Improper(text.to_string());
        let caps = patterns().one.captures(text).ok_or_else(improper)?;
        let group = |name: &str| caps.name(name).map_or("", |m| m.as_str());
        let op = match group("op") {
            "" | "=" => Op::Equal,
            "!=" => Op::NotEqual,
            ">" => Op::Greater,
            "<" => Op::Less,
            ">=" | "=>" => Op::GreaterOrEqual,
            "<=" | "=<" => Op::LessOrEqual,
            "~" | "~>" => Op::Tilde,
            "^" => Op::Caret,
            _ => return Err(improper()),
        };
        let (major, minor, patch, pre) = (group("major"), group("minor"), group("patch"), group("pre"));
        let (minor, patch) = (minor.trim_start_matches('.'), patch.trim_start_matches('.'));
        let (text_version, dirty, minor_dirty, patch_dirty) = if wildcard(major) {
            (format!("0.0.0{pre}"), true, false, false)
        } else if minor.is_empty() || wildcard(minor) {
            (format!("{major}.0.0{pre}"), true, true, false)
        } else if patch.is_empty() || wildcard(patch) {
            (format!("{major}.{minor}.0{pre}"), true, false, true)
        } else {
            (group("version").to_string(), false, false, false)
        };
        let version = Version::parse(&text_version).ok_or_else(|| ConstraintError::Version(text.to_string()))?;
        Ok(Comparison { op, version, dirty, minor_dirty, patch_dirty })
    }

    /// Whether `v` satisfies this comparison; `prerelease`: whether its group lets pre-releases match.
    fn check(&self, v: &Version, prerelease: bool) -> bool {
        if !v.pre.is_empty() && !prerelease {
            return false;
        }
        let c = &self.version;
        match self.op {
            Op::Equal if self.dirty => self.tilde(v),
            Op::Equal => v.compare(c) == Ordering::Equal,
            Op::NotEqual => self.not_equal(v),
            Op::Greater => self.greater(v),
            Op::Less => v.compare(c) == Ordering::Less,
            Op::GreaterOrEqual => v.compare(c) != Ordering::Less,
            Op::LessOrEqual => self.less_or_equal(v),
            Op::Tilde => self.tilde(v),
            Op::Caret => self.caret(v),
        }
    }

    fn not_equal(&self, v: &Version) -> bool {
        let c = &self.version;
        if self.dirty {
            if c.major != v.major {
                return true;
            }
            if self.minor_dirty {
                return false;
            }
            if c.minor != v.minor {
                return true;
            }
            if self.patch_dirty {
                return (!v.pre.is_empty() || !c.pre.is_empty()) && compare_pre(&v.pre, &c.pre) != Ordering::Equal;
            }
            if c.patch != v.patch {
                return true;
            }
        }
        v.compare(c) != Ordering::Equal
    }

    fn greater(&self, v: &Version) -> bool {
        let c = &self.version;
        if !self.dirty {
            return v.compare(c) == Ordering::Greater;
        }
        match v.major.cmp(&c.major) {
            Ordering::Greater => true,
            Ordering::Less => false,
            // `>1` wants 2 or above; `>1.2` wants 1.3 or above.
            Ordering::Equal if self.minor_dirty => false,
            Ordering::Equal if self.patch_dirty => v.minor > c.minor,
            Ordering::Equal => v.compare(c) == Ordering::Greater,
        }
    }

    fn less_or_equal(&self, v: &Version) -> bool {
        let c = &self.version;
        if !self.dirty {
            return v.compare(c) != Ordering::Greater;
        }
        !(v.major > c.major || (v.major == c.major && v.minor > c.minor && !self.minor_dirty))
    }

    /// `~1.2.3` is `>=1.2.3 <1.3.0`, `~1` is `>=1.0.0 <2.0.0`, `~0.0.0` (not dirty) anything at or above.
    fn tilde(&self, v: &Version) -> bool {
        let c = &self.version;
        if v.compare(c) == Ordering::Less {
            return false;
        }
        if (c.major, c.minor, c.patch) == (0, 0, 0) && !self.minor_dirty && !self.patch_dirty {
            return true;
        }
        v.major == c.major && (v.minor == c.minor || self.minor_dirty)
    }

    /// `^1.2.3` is `>=1.2.3 <2.0.0`, `^0.2.3` is `>=0.2.3 <0.3.0`, `^0.0.3` is `=0.0.3`, `^0` is `<1.0.0`,
    /// `^0.0` is `<0.1.0`.
    fn caret(&self, v: &Version) -> bool {
        let c = &self.version;
        if v.compare(c) == Ordering::Less {
            return false;
        }
        if c.major > 0 || self.minor_dirty {
            return v.major == c.major;
        }
        if v.major > 0 {
            return false;
        }
        if c.minor > 0 || self.patch_dirty {
            return v.minor == c.minor;
        }
        if v.minor > 0 {
            return false;
        }
        v.patch == c.patch
    }
}

impl Constraints {
    /// `semver.NewConstraint`. An empty text is an error, as there (source-controller reads an empty
    /// version as `*` before it gets here).
    pub fn parse(text: &str) -> Result<Constraints, ConstraintError> {
        let text = rewrite_ranges(text);
        let mut groups = Vec::new();
        for group in text.split("||") {
            if !patterns().group.is_match(group) {
                return Err(ConstraintError::Improper(group.to_string()));
            }
            let comparisons = patterns()
                .find
                .find_iter(group)
                .map(|m| Comparison::parse(m.as_str()))
                .collect::<Result<Vec<_>, _>>()?;
            let prerelease = comparisons.iter().any(|c| !c.version.pre.is_empty());
            groups.push(Group { comparisons, prerelease });
        }
        Ok(Constraints { groups })
    }

    /// `Constraints.Check`: some OR group whose every comparison `version` satisfies.
    pub fn check(&self, version: &Version) -> bool {
        self.groups.iter().any(|g| g.comparisons.iter().all(|c| c.check(version, g.prerelease)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(constraint: &str, version: &str) -> bool {
        let c = Constraints::parse(constraint).unwrap_or_else(|e| panic!("{constraint:?}: {e}"));
        c.check(&Version::parse(version).unwrap_or_else(|| panic!("{version:?} is a version")))
    }

    fn assert_table(table: &[(&str, &str, bool)]) {
        for &(constraint, version, want) in table {
            assert_eq!(check(constraint, version), want, "{constraint:?} on {version:?}");
        }
    }

    #[test]
    fn parsing_accepts_and_refuses_as_masterminds() {
        let count =
            |s: &str| Constraints::parse(s).map(|c| c.groups.iter().map(|g| g.comparisons.len()).collect::<Vec<_>>());
        assert_eq!(count(">= 1.1"), Ok(vec![1]));
        assert_eq!(count(">40.50.60, < 50.70"), Ok(vec![2]));
        assert_eq!(count(">= 1.2.3 < 2.0 || => 3.0 < 4"), Ok(vec![2, 2]));
        assert_eq!(count("2.0 - 3.1 || ~4"), Ok(vec![2, 1]));
        assert_eq!(count("1.0.0 - 2.0.0, <=2.0.0"), Ok(vec![3]));
        assert_eq!(count("11.4.7 ~1.2.3"), Ok(vec![2]));
        assert_eq!(count("v2.3.5-20161202202307-sha.e8fc5e5"), Ok(vec![1]));
        assert_eq!(count("  ^ 1.2  "), Ok(vec![1]));
        for bad in [
            "",
            " ",
            ">= foo",
            "FOO >= 1.2.3",
            "1.2.3.4",
            "5.6.78.9",
            "11.4.7~ 1.2.3",
            "v1.2.3-alpha.01",
            "1x",
            "1.2 -1.3",
            ">>1",
            "1 ||",
            "=<>1",
        ] {
            assert!(Constraints::parse(bad).is_err(), "{bad:?} is refused");
        }
    }

    #[test]
    fn exact_and_not_equal() {
        assert_table(&[
            ("1.2.3", "1.2.3", true),
            ("=1.2.3", "1.2.3+meta", true),
            ("v1.2.3", "1.2.3", true),
            ("= 2.0", "2.0.0", true),
            ("= 2.0", "2.0.9", true),
            ("= 2.0", "2.1.0", false),
            ("1.2.3", "1.2.4", false),
            ("1.2.3-beta.1", "1.2.3-beta.1", true),
            ("1.2.3-beta.1", "1.2.3", false),
            ("!=1.2.3", "1.2.3", false),
            ("!=1.2.3", "1.2.4", true),
            ("!=4.1", "4.1.9", false),
            ("!=4.1", "4.2.0", true),
            ("!=4.x", "4.9.9", false),
            ("!=4.x", "5.0.0", true),
            ("!=4.1.x", "4.1.0", false),
            ("!=1.2.3", "1.2.3-rc.1", false),
            ("!=1.2.3-rc.1", "1.2.3-rc.2", true),
            ("!=1.2.x-rc.1", "1.2.3-rc.1", false),
            ("!=1.2.x-rc.1", "1.2.3-rc.2", true),
        ]);
    }

    #[test]
    fn greater_and_less() {
        assert_table(&[
            (">1.2.3", "1.2.4", true),
            (">1.2.3", "1.2.3", false),
            (">1", "1.9.9", false),
            (">1", "2.0.0", true),
            (">1.2", "1.2.9", false),
            (">1.2", "1.3.0", true),
            (">1.x", "1.5.0", false),
            ("<1.2.3", "1.2.2", true),
            ("<1.2.3", "1.2.3", false),
            ("<2", "1.9.9", true),
            ("<2", "2.0.0", false),
            (">=1.2.3", "1.2.3", true),
            ("=>1.2.3", "1.2.3", true),
            (">=1.2.3", "1.2.2", false),
            (">= 1.2", "1.2.0", true),
            ("<=1.2.3", "1.2.3", true),
            ("=<1.2.3", "1.2.4", false),
            ("<=1.2", "1.2.9", true),
            ("<=1.2", "1.3.0", false),
            ("<=1", "1.9.9", true),
            ("<=1", "2.0.0", false),
            ("<=1.x", "1.99.0", true),
        ]);
    }

    #[test]
    fn tilde_caret_and_wildcards() {
        assert_table(&[
            ("*", "1.2.3", true),
            ("x", "0.0.1", true),
            ("~0.0.0", "1.2.3", true),
            ("0.x.x", "1.2.3", false),
            ("0.0.x", "1.2.3", false),
            ("1.x", "1.9.0", true),
            ("1.X", "2.0.0", false),
            ("1.2.*", "1.2.7", true),
            ("1.2.*", "1.3.0", false),
            ("~1.2.3", "1.2.9", true),
            ("~1.2.3", "1.3.0", false),
            ("~1.2.3", "1.2.2", false),
            ("~>1.2", "1.2.0", true),
            ("~1", "1.9.9", true),
            ("~1", "2.0.0", false),
            ("~1.x", "1.5.0", true),
            ("^1.2.3", "1.9.0", true),
            ("^1.2.3", "2.0.0", false),
            ("^1.2.3", "1.2.2", false),
            ("^0.2.3", "0.2.9", true),
            ("^0.2.3", "0.3.0", false),
            ("^0.0.3", "0.0.3", true),
            ("^0.0.3", "0.0.4", false),
            ("^0", "0.9.9", true),
            ("^0", "1.0.0", false),
            ("^0.0", "0.0.9", true),
            ("^0.0", "0.1.0", false),
            ("^0.0.0", "1.2.3", false),
            ("~*", "2.1.1", true),
            // Read from the code (no test of theirs): `^*` is not "any", as its doc comment says, but only
            // versions at 0.0.x with patch 0, its zero major and minor taken as numbers.
            ("^*", "5.0.0", false),
            ("^*", "0.0.0", true),
        ]);
    }

    #[test]
    fn ranges_and_groups() {
        assert_table(&[
            ("1.2 - 1.4.5", "1.2.0", true),
            ("1.2 - 1.4.5", "1.4.5", true),
            ("1.2 - 1.4.5", "1.4.6", false),
            ("1.1 - 2", "2.9.0", true),
            ("1.1 - 2", "3.0.0", false),
            (">= 1.2.3, < 2.0", "1.9.9", true),
            (">= 1.2.3 < 2.0", "2.0.0", false),
            (">= 1.2.3, < 2.0 || => 3.0, < 4", "3.5.0", true),
            (">= 1.2.3, < 2.0 || => 3.0, < 4", "2.5.0", false),
            ("<1.0 || >2.0", "2.1.0", true),
            ("<1.0||>2.0", "1.5.0", false),
        ]);
    }

    #[test]
    fn pre_releases_match_only_when_their_group_names_one() {
        assert_table(&[
            ("*", "1.2.3-beta", false),
            (">=1.0.0", "1.2.0-rc.1", false),
            ("1.x", "1.1.0-rc.1", false),
            ("<2.0.0", "2.0.0-beta.1", false),
            (">=1.0.0-0", "1.0.0-rc.1", true),
            (">=1.0.0-0", "2.0.0-beta.1", true),
            (">=1.0.0-0", "0.9.0-alpha", false),
            ("^1.0.0-0", "1.1.0-rc.1", true),
            ("^1.0.0-0", "2.0.0-beta.1", false),
            ("~1.1.0-0", "1.1.0-rc.1", true),
            ("~1.1.0-0", "1.0.0-rc.1", false),
            ("*-0", "0.9.0-alpha", true),
            (">=0.0.0-0", "0.9.0-alpha", true),
            (">1.0.0-rc.0 <1.1.0", "1.0.0-rc.1", true),
            (">1.0.0-rc.0 <1.1.0", "1.1.0-rc.1", true),
            (">1.0.0-rc.0 <1.1.0", "1.5.0", false),
            // The other group's pre-release does not open this one.
            (">=2.0.0 || >=1.0.0-0 <1.5.0", "2.1.0-rc.1", false),
            (">=2.0.0 || >=1.0.0-0 <1.5.0", "1.4.0-rc.1", true),
            ("1.2.3-beta.1", "1.2.3-beta.2", false),
            (">1.2.3-beta.1", "1.2.3-beta.2", true),
            (">1.2.3-beta.1", "1.2.3-beta.1", false),
            (">=1.2.3-beta.1 <1.2.3", "1.2.3-alpha", false),
        ]);
    }
}
