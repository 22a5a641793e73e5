//! Masterminds/semver v3's `NewVersion`, `Version.String`, `Equal` and `SetMetadata`: how Helm and
//! helm-controller read a chart's version and write it back (helm-controller appends a source digest as
//! build metadata, `0.3.0+5e79901a2e85`, and writes `String()`, which normalises `v1.2` to `1.2.0`).
//!
//! `NewVersion` takes an optional `v`, one to three dot-separated numbers, a pre-release after `-` and
//! build metadata after `+`, each a dot-separated list of `[0-9A-Za-z-]+` identifiers (numeric pre-release
//! identifiers without leading zeros).

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

    /// `Equal`: the same version, build metadata aside.
    pub fn same_as(&self, other: &Version) -> bool {
        (self.major, self.minor, self.patch, &self.pre) == (other.major, other.minor, other.patch, &other.pre)
    }

    /// `SetMetadata`: None where the metadata is not valid.
    pub fn with_metadata(&self, metadata: &str) -> Option<Version> {
        identifiers_ok(metadata).then(|| Version { metadata: metadata.to_string(), ..self.clone() })
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
}
