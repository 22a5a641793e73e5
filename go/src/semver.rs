//! Masterminds/semver v3's `NewVersion`, `Version.String`, `Equal` and `SetMetadata`: how Helm and
//! helm-controller read a chart's version and write it back (helm-controller appends a source digest as
//! build metadata, `0.3.0+5e79901a2e85`, and writes `String()`, which normalises `v1.2` to `1.2.0`).
//!
//! `NewVersion` takes an optional `v`, one to three dot-separated numbers, a pre-release after `-` and
//! build metadata after `+`, each a dot-separated list of `[0-9A-Za-z-]+` identifiers (numeric pre-release
//! identifiers without leading zeros).
//!
//! Also `StrictNewVersion` ([`Version::parse_strict`]: exactly three numbers, no `v`, no leading zeros),
//! fluxcd/pkg's `version.ParseVersion` ([`Version::parse_flux`]: strict, a leading `v` allowed), with which
//! source-controller reads the versions of a repository's index and tags, and `Compare`
//! ([`Version::compare`]: SemVer precedence, build metadata aside).

use std::cmp::Ordering;
use std::fmt;

/// A version as Masterminds/semver holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pub pre: String,
    pub metadata: String,
}

fn identifiers_ok(s: &str) -> bool {
    !s.is_empty() && s.split('.').all(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
}

fn pre_ok(s: &str) -> bool {
    identifiers_ok(s)
        && s.split('.').all(|id| !(id.len() > 1 && id.starts_with('0') && id.bytes().all(|b| b.is_ascii_digit())))
}

impl Version {
    /// `semver.NewVersion`: None where it returns an error.
    pub fn parse(text: &str) -> Option<Version> {
        let s = text.strip_prefix('v').unwrap_or(text);
        let (rest, metadata) = match s.split_once('+') {
            Some((r, m)) => (r, Some(m)),
            None => (s, None),
        };
        let (core, pre) = match rest.split_once('-') {
            Some((c, p)) => (c, Some(p)),
            None => (rest, None),
        };
        let mut numbers = [0u64; 3];
        let parts: Vec<&str> = core.split('.').collect();
        if parts.is_empty() || parts.len() > 3 {
            return None;
        }
        for (slot, part) in numbers.iter_mut().zip(&parts) {
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            *slot = part.parse().ok()?;
        }
        if pre.is_some_and(|p| !pre_ok(p)) || metadata.is_some_and(|m| !identifiers_ok(m)) {
            return None;
        }
        Some(Version {
            major: numbers[0],
            minor: numbers[1],
            patch: numbers[2],
            pre: pre.unwrap_or_default().to_string(),
            metadata: metadata.unwrap_or_default().to_string(),
        })
    }

    /// `StrictNewVersion`: exactly `MAJOR.MINOR.PATCH` without leading zeros or `v`, then an optional
    /// pre-release and build metadata. None where it returns an error.
    pub fn parse_strict(text: &str) -> Option<Version> {
        let core = text.split('+').next().unwrap_or_default();
        let core = core.split_once('-').map_or(core, |(c, _)| c);
        let parts: Vec<&str> = core.split('.').collect();
        let plain =
            |p: &&str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) && !(p.len() > 1 && p.starts_with('0'));
        if parts.len() != 3 || !parts.iter().all(plain) {
            return None;
        }
        Version::parse(text)
    }

    /// fluxcd/pkg `version.ParseVersion`: [`Version::parse_strict`] with a leading `v` allowed, which
    /// source-controller reads index versions and OCI tags with (`1.2` and `1.2.3.4` are not versions).
    pub fn parse_flux(text: &str) -> Option<Version> {
        Version::parse_strict(text.strip_prefix('v').unwrap_or(text))?;
        Version::parse(text)
    }

    /// `Compare`: SemVer precedence. Build metadata is ignored; a pre-release is lower than its release;
    /// pre-release identifiers compare numerically when both are numbers, numbers lower than words.
    pub fn compare(&self, other: &Version) -> Ordering {
        let core = (self.major, self.minor, self.patch).cmp(&(other.major, other.minor, other.patch));
        if core != Ordering::Equal {
            return core;
        }
        match (self.pre.is_empty(), other.pre.is_empty()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => compare_pre(&self.pre, &other.pre),
        }
    }

    /// `Equal`: the same version, build metadata aside.
    pub fn same_as(&self, other: &Version) -> bool {
        (self.major, self.minor, self.patch, &self.pre) == (other.major, other.minor, other.patch, &other.pre)
    }

    /// `SetMetadata`: None where the metadata is not valid.
    pub fn with_metadata(&self, metadata: &str) -> Option<Version> {
        identifiers_ok(metadata).then(|| Version { metadata: metadata.to_string(), ..self.clone() })
    }
}

/// Two pre-releases by their dot-separated identifiers; the shorter list is lower when one is a prefix of
/// the other.
pub fn compare_pre(a: &str, b: &str) -> Ordering {
    let (mut left, mut right) = (a.split('.'), b.split('.'));
    loop {
        match (left.next(), right.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) if x == y => continue,
            (Some(x), Some(y)) => return compare_identifier(x, y),
        }
    }
}

/// Two different pre-release identifiers: numbers (that fit 64 bits) by value and below words, words by
/// their bytes.
fn compare_identifier(x: &str, y: &str) -> Ordering {
    let number = |s: &str| if s.bytes().all(|b| b.is_ascii_digit()) { s.parse::<u64>().ok() } else { None };
    match (number(x), number(y)) {
        (Some(a), Some(b)) if a > b => Ordering::Greater,
        // Equal values in different spellings cannot pass validation; Go answers "less" for them.
        (Some(_), Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => x.cmp(y),
    }
}

/// `Version.String()`.
impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if !self.pre.is_empty() {
            write!(f, "-{}", self.pre)?;
        }
        if !self.metadata.is_empty() {
            write!(f, "+{}", self.metadata)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string(v: &str) -> Option<String> {
        Version::parse(v).map(|v| v.to_string())
    }

    #[test]
    fn parses_and_prints_as_masterminds_does() {
        assert_eq!(string("1.2.3").as_deref(), Some("1.2.3"));
        assert_eq!(string("v1.2").as_deref(), Some("1.2.0"));
        assert_eq!(string("1").as_deref(), Some("1.0.0"));
        assert_eq!(string("1.2.3-rc.1+build.5").as_deref(), Some("1.2.3-rc.1+build.5"));
        assert_eq!(string("0.3.0+5e79901a2e85").as_deref(), Some("0.3.0+5e79901a2e85"));
        for bad in ["", "v", "1.2.3.4", "1..2", "a.b.c", "1.2.3-01", "1.2.3+", "1.2.3-", "1.2.3+a..b", "1.2.3_4"] {
            assert_eq!(string(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn equal_ignores_metadata_and_set_metadata_replaces_it() {
        let a = Version::parse("1.2.3+old").unwrap();
        assert!(a.same_as(&Version::parse("v1.2.3").unwrap()));
        assert!(!a.same_as(&Version::parse("1.2.3-rc.1").unwrap()));
        assert_eq!(a.with_metadata("0123456789ab").unwrap().to_string(), "1.2.3+0123456789ab");
        assert!(a.with_metadata("no_underscores").is_none());
    }

    #[test]
    fn strict_and_flux_parsing_want_three_numbers() {
        for good in ["1.2.3", "0.0.0", "1.2.3-rc.1+b.2", "10.20.30-0"] {
            assert!(Version::parse_strict(good).is_some(), "{good}");
            assert!(Version::parse_flux(good).is_some(), "{good}");
        }
        for bad in ["v1.2.3", "1.2", "1", "01.2.3", "1.02.3", "1.2.3.4", "1.2+3.4", "1.2.3-", "1.2.3-01", ""] {
            assert!(Version::parse_strict(bad).is_none(), "{bad}");
        }
        assert_eq!(Version::parse_flux("v1.2.3").map(|v| v.to_string()).as_deref(), Some("1.2.3"));
        for bad in ["v1.2", "1.7", "vv1.2.3", "v01.2.3"] {
            assert!(Version::parse_flux(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn compare_follows_semver_precedence() {
        let order = [
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-alpha.beta",
            "1.0.0-beta",
            "1.0.0-beta.2",
            "1.0.0-beta.11",
            "1.0.0-rc.1",
            "1.0.0",
            "1.0.1",
            "1.1.0",
            "2.0.0",
        ];
        for pair in order.windows(2) {
            let (a, b) = (Version::parse(pair[0]).unwrap(), Version::parse(pair[1]).unwrap());
            assert_eq!(a.compare(&b), Ordering::Less, "{} < {}", pair[0], pair[1]);
            assert_eq!(b.compare(&a), Ordering::Greater, "{} > {}", pair[1], pair[0]);
        }
        let with_meta = Version::parse("1.0.0+build.9").unwrap();
        assert_eq!(with_meta.compare(&Version::parse("v1.0.0+other").unwrap()), Ordering::Equal);
        assert_eq!(compare_pre("1.x", "1"), Ordering::Greater);
        assert_eq!(compare_pre("2", "10"), Ordering::Less);
        assert_eq!(compare_pre("a-b", "a"), Ordering::Greater);
    }
}
