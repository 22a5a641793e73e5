//! What is known of a cluster's helm-controller: its version, how it was learnt, its feature gates, and
//! what follows from them (its rules, its Helm SDK).

use super::helm_sdk::{self, HelmSdk};
use super::rules::Rules;
use super::version::{NEWEST_KNOWN, Version};

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
    pub fn helm_sdk(&self) -> HelmSdk {
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

    /// One line when the version is not known, or newer than any this build knows (Flux 2.10's
    /// helm-controller v1.7), for commands that follow its rules.
    pub fn unknown_line(&self) -> Option<String> {
        if let Some(v) = self.version.filter(|v| *v > NEWEST_KNOWN) {
            return Some(format!(
                "helm-controller {v} is newer than any this build knows: following helm-controller {NEWEST_KNOWN}'s rules (what changed since is not checked)"
            ));
        }
        match &self.found {
            Found::Unknown { why } if self.version.is_none() && why != "no cluster was asked" => Some(format!(
                "helm-controller's version is unknown ({why}): following helm-controller {NEWEST_KNOWN}'s rules"
            )),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_controller_follows_the_newest_rules() {
        let c = Controller { version: None, found: Found::Unknown { why: "x".into() }, feature_gates: vec![] };
        assert_eq!(c.effective_version(), NEWEST_KNOWN);
        assert!(c.unknown_line().unwrap().contains("unknown (x)"));
        assert_eq!(Controller::offline().unknown_line(), None);
    }

    #[test]
    fn a_newer_controller_is_said_and_follows_the_newest_rules() {
        let found = Found::FluxLabel { flux: "v2.10.1".into() };
        let c = Controller { version: Some(Version::new(1, 7, 1)), found, feature_gates: vec![] };
        // Every rule is v1.6.4's; the rules name the version they are for.
        let newest = Controller { version: Some(NEWEST_KNOWN), ..c.clone() }.rules();
        assert_eq!(Rules { version: NEWEST_KNOWN, ..c.rules() }, newest);
        let line = c.unknown_line().expect("said");
        assert!(line.starts_with("helm-controller v1.7.1 is newer than any this build knows"), "{line}");
    }
}
