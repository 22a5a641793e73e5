//! helm-controller's version, and which one each Flux release ships.

use std::fmt;

/// A version as major, minor and patch (a pre-release or build suffix is not kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
}

impl Version {
    pub const fn new(major: u64, minor: u64, patch: u64) -> Version {
        Version { major, minor, patch }
    }

    /// `v1.5.0`, `1.5.0`, `v4.3.1+g1234`: None for anything else.
    pub fn parse(text: &str) -> Option<Version> {
        let v = crate::go::semver::Version::parse(text.trim())?;
        Some(Version::new(v.major, v.minor, v.patch))
    }

    /// The same major and minor version.
    pub fn same_minor(&self, other: &Version) -> bool {
        (self.major, self.minor) == (other.major, other.minor)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The newest helm-controller whose rules this build knows; an unknown or newer version gets its rules.
pub const NEWEST_KNOWN: Version = Version::new(1, 6, 4);

/// helm-controller's version for a Flux distribution version (flux2's
/// `manifests/bases/helm-controller/kustomization.yaml` at each tag). A patch newer than any known gets
/// its line's newest known helm-controller.
pub fn for_flux(flux: &Version) -> Option<Version> {
    let v = |minor, patch| Some(Version::new(1, minor, patch));
    match (flux.major, flux.minor, flux.patch) {
        (2, 8, 0) => v(5, 0),
        (2, 8, 1) => v(5, 1),
        (2, 8, 2) => v(5, 2),
        (2, 8, 3..=5) => v(5, 3),
        (2, 8, 6..=7) => v(5, 4),
        (2, 8, _) => v(5, 5),
        (2, 9, 0) => v(6, 1),
        (2, 9, 1..=2) => v(6, 2),
        (2, 9, 3..=4) => v(6, 3),
        (2, 9, _) => v(6, 4),
        // Flux 2.10's (its api module is served; the controller itself cannot be built here to check its
        // rules, which are taken from NEWEST_KNOWN's: see Controller::newer_line).
        (2, 10, 0) => v(7, 0),
        (2, 10, _) => v(7, 1),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_and_order() {
        assert_eq!(Version::parse("v1.5.0"), Some(Version::new(1, 5, 0)));
        assert_eq!(Version::parse("4.3.1+g1234"), Some(Version::new(4, 3, 1)));
        assert_eq!(Version::parse("latest"), None);
        assert!(Version::new(1, 5, 4) < Version::new(1, 6, 0));
        assert_eq!(Version::new(4, 1, 1).to_string(), "v4.1.1");
    }

    /// One row per Flux patch release (flux2's manifests at each tag): its helm-controller.
    #[test]
    fn flux_versions_name_their_helm_controller() {
        let rows = [
            ("v2.8.0", "v1.5.0"),
            ("v2.8.1", "v1.5.1"),
            ("v2.8.2", "v1.5.2"),
            ("v2.8.3", "v1.5.3"),
            ("v2.8.4", "v1.5.3"),
            ("v2.8.5", "v1.5.3"),
            ("v2.8.6", "v1.5.4"),
            ("v2.8.7", "v1.5.4"),
            ("v2.8.8", "v1.5.5"),
            ("v2.9.0", "v1.6.1"),
            ("v2.9.1", "v1.6.2"),
            ("v2.9.2", "v1.6.2"),
            ("v2.9.3", "v1.6.3"),
            ("v2.9.4", "v1.6.3"),
            ("v2.9.5", "v1.6.4"),
        ];
        let hc = |f: &str| for_flux(&Version::parse(f).unwrap()).map(|v| v.to_string());
        for (flux, controller) in rows {
            assert_eq!(hc(flux).as_deref(), Some(controller), "Flux {flux}");
        }
        // A later patch than any known: its line's newest known.
        assert_eq!(hc("v2.8.9").as_deref(), Some("v1.5.5"));
        assert_eq!(hc("v2.9.6").as_deref(), Some("v1.6.4"));
        assert_eq!(hc("v2.7.0"), None);
        assert_eq!(hc("v2.10.0").as_deref(), Some("v1.7.0"));
        assert_eq!(hc("v2.10.1").as_deref(), Some("v1.7.1"));
        assert_eq!(hc("v2.11.0"), None);
    }
}
