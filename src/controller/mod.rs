//! The helm-controller a cluster runs, and what follows from its version.
//!
//! helm cozy is exact for one helm-controller at a time: the one that will take the release back. What
//! differs between helm-controller versions (which hooks are post-rendered, which HelmRelease fields
//! exist, what the Helm SDK inside renders) is a rule of [`Rules`], chosen by the version found here.
//! The version is learnt as a user with ordinary rights can learn it ([`detect()`]): the image tag of the
//! helm-controller Deployment, else the Flux version label and schema of the HelmRelease CRD. It is
//! asked once per command, beside discovery, and not kept on disk: a Flux upgrade must be seen by the
//! next command, and the one request costs what a revalidation would.
//!
//! - [`mod@detect`]: reading the cluster;
//! - [`rules`]: what each version does;
//! - [`helm_sdk`]: the Helm built into each version, and what a different local Helm can change.

pub mod detect;
pub mod helm_sdk;
pub mod rules;

use std::fmt;

pub use detect::detect;
pub use helm_sdk::{HelmDifference, HelmSdk, Splitting, differences};
pub use rules::{ForceWithSsa, HookRule, Rules};

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

/// How the version was learnt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// The image tag of a helm-controller Deployment (`namespace/name`).
    Image { deployment: String, image: String },
    /// The `app.kubernetes.io/version` label (the Flux version) of the HelmRelease CRD.
    FluxLabel { flux: String },
    /// The HelmRelease CRD's schema, which only tells the oldest version it can be.
    CrdSchema,
    /// Named by [`VERSION_ENV`] for a command run without a cluster.
    Env,
    /// Nothing readable said; `why` says what was tried.
    Unknown { why: String },
}

/// The helm-controller of a cluster, as far as it could be learnt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Controller {
    /// None when unknown: the newest rules apply ([`NEWEST_KNOWN`]).
    pub version: Option<Version>,
    pub found: Found,
    /// Its `--feature-gates` (read from the Deployment only), e.g. `UseHelm3Defaults=true`.
    pub feature_gates: Vec<(String, bool)>,
}

/// The environment variable that names the helm-controller version for commands run without a cluster
/// (`show --release-file`, `diff --against git:REF --release-file`, `review`), e.g. `v1.5.0`.
pub const VERSION_ENV: &str = "COZYHR_HELM_CONTROLLER_VERSION";

impl Controller {
    /// No cluster to ask (a command run offline): the version [`VERSION_ENV`] names, else the newest rules.
    pub fn offline() -> Controller {
        if let Some(text) = std::env::var_os(VERSION_ENV).filter(|v| !v.is_empty()) {
            let text = text.to_string_lossy().into_owned();
            if let Some(version) = Version::parse(&text) {
                return Controller { version: Some(version), found: Found::Env, feature_gates: Vec::new() };
            }
            crate::support::output::stderr_line(format_args!(
                "{}: {VERSION_ENV}={text:?} is not a version (like v1.5.0): following helm-controller {NEWEST_KNOWN}'s rules",
                crate::support::output::command_name()
            ));
        }
        Controller {
            version: None,
            found: Found::Unknown { why: "no cluster was asked".into() },
            feature_gates: Vec::new(),
        }
    }

    /// The version whose rules apply: the one found, else the newest known.
    pub fn effective_version(&self) -> Version {
        self.version.unwrap_or(NEWEST_KNOWN)
    }

    /// What this helm-controller does, rule by rule.
    pub fn rules(&self) -> Rules {
        Rules::of(self.effective_version(), &self.feature_gates)
    }

    /// The Helm SDK built into it (for an unknown version: the newest known one's).
    pub fn helm_sdk(&self) -> helm_sdk::HelmSdk {
        helm_sdk::sdk_of(self.effective_version())
    }

    /// Whether a feature gate is on.
    pub fn gate(&self, name: &str) -> bool {
        self.feature_gates.iter().any(|(g, on)| g == name && *on)
    }

    /// `v1.5.0 (Flux v2.8.0 ...)`, or `unknown (...)`, for `version` and `status`.
    pub fn describe(&self) -> String {
        match (&self.version, &self.found) {
            (Some(v), Found::Image { deployment, image }) => {
                format!("{v} (image {image} of Deployment {deployment})")
            }
            (Some(v), Found::FluxLabel { flux }) => format!("{v} (Flux {flux}, from the HelmRelease CRD's labels)"),
            (Some(v), Found::CrdSchema) => format!("{v} or later (from the HelmRelease CRD's schema)"),
            (Some(v), Found::Env) => format!("{v} (named by {VERSION_ENV})"),
            (_, Found::Unknown { why }) => format!("unknown ({why}): the rules of {NEWEST_KNOWN} apply"),
            (None, _) => format!("unknown: the rules of {NEWEST_KNOWN} apply"),
        }
    }

    /// One line when the version is not known, for commands that follow its rules.
    pub fn unknown_line(&self) -> Option<String> {
        match &self.found {
            Found::Unknown { why } if self.version.is_none() && why != "no cluster was asked" => Some(format!(
                "helm-controller's version is unknown ({why}): following helm-controller {NEWEST_KNOWN}'s rules"
            )),
            _ => None,
        }
    }
}

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
        assert_eq!(hc("v2.10.0"), None);
    }

    #[test]
    fn an_unknown_controller_follows_the_newest_rules() {
        let c = Controller { version: None, found: Found::Unknown { why: "x".into() }, feature_gates: vec![] };
        assert_eq!(c.effective_version(), NEWEST_KNOWN);
        assert!(c.unknown_line().unwrap().contains("unknown (x)"));
        assert_eq!(Controller::offline().unknown_line(), None);
    }
}
