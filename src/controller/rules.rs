//! What each helm-controller version does where versions differ (read from the tagged sources of
//! fluxcd/helm-controller; each rule is checked against the real controller in the end-to-end tests).

use super::version::Version;
use crate::flux::helmrelease::Tested;
use crate::flux::spec::HookStrategy;

/// Whether hooks go through the post-render chain (postRenderers, commonMetadata, origin labels).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookRule {
    /// v1.5.0–v1.5.3: Helm 4.1 post-renders every rendered file, hooks included; nothing turns it off.
    Always,
    /// v1.5.4–v1.5.5: `PostRenderStrategyNoHooks` is hard-coded.
    Never,
    /// v1.6.0 and later: `spec.postRenderStrategy` (`combined` by default, `nohooks` with the
    /// `UseHelm3Defaults` feature gate).
    BySpec { helm3_defaults: bool },
}

/// What `spec.upgrade.force` (and `spec.rollback.force`) does when the release is applied server-side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForceWithSsa {
    /// v1.5.0–v1.5.3: Helm is asked to replace and to force conflicts at once, and refuses.
    Fails,
    /// v1.5.4 and later: ignored for server-side apply.
    Ignored,
}

/// The rules of one helm-controller version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    pub version: Version,
    pub hooks: HookRule,
    /// `valuesFrom[].literal` exists (v1.6); before, a `targetPath` value is parsed with Helm's `--set`
    /// rules whatever the field says.
    pub values_from_literal: bool,
    /// `spec.upgrade.chartNameChangeStrategy` exists (v1.6); before, a chart name change always
    /// uninstalls and installs again.
    pub chart_name_change_strategy: bool,
    pub force_with_ssa: ForceWithSsa,
    /// Non-CRD documents in `crds/` are created (v1.5.0–v1.5.4); later they are dropped with a warning.
    pub creates_non_crds_from_crds_dir: bool,
    /// The `Drifted` condition is written when drift detection is enabled or warns (v1.6).
    pub drifted_condition: bool,
    pub tested: Tested,
    /// A `spec.kubeConfig` Secret whose kubeconfig names a file (a certificate authority, token, client
    /// certificate or key) is refused (v1.6.4: fluxcd/pkg `runtime/client.ValidateKubeConfig`); before,
    /// helm-controller read a token file from its own Pod and dropped the other paths.
    pub kubeconfig_files_refused: bool,
    /// A failed install or upgrade is retried rather than left for the next interval when the
    /// `DefaultToRetryOnFailure` feature gate is on (v1.5.2; before, the gate did not exist).
    pub default_to_retry: bool,
    /// The source's digest is appended to the chart's version as build metadata (v1.1 on), unless the
    /// `DisableChartDigestTracking` feature gate is on.
    pub tracks_chart_digest: bool,
}

impl Rules {
    pub fn of(version: Version, feature_gates: &[(String, bool)]) -> Rules {
        let v = |major, minor, patch| Version::new(major, minor, patch);
        let gate = |name: &str| feature_gates.iter().any(|(g, on)| g == name && *on);
        let helm3_defaults = gate("UseHelm3Defaults");
        let hooks = if version < v(1, 5, 4) {
            HookRule::Always
        } else if version < v(1, 6, 0) {
            HookRule::Never
        } else {
            HookRule::BySpec { helm3_defaults }
        };
        Rules {
            version,
            hooks,
            values_from_literal: version >= v(1, 6, 0),
            chart_name_change_strategy: version >= v(1, 6, 0),
            force_with_ssa: if version < v(1, 5, 4) { ForceWithSsa::Fails } else { ForceWithSsa::Ignored },
            creates_non_crds_from_crds_dir: version < v(1, 5, 5),
            drifted_condition: version >= v(1, 6, 0),
            tested: if version < v(1, 6, 3) { Tested::AnyRecord } else { Tested::Finished },
            kubeconfig_files_refused: version >= v(1, 6, 4),
            default_to_retry: version >= v(1, 5, 2) && gate("DefaultToRetryOnFailure"),
            tracks_chart_digest: !gate("DisableChartDigestTracking"),
        }
    }

    /// How hooks meet the post-render chain for a HelmRelease whose `spec.postRenderStrategy` is `spec`.
    pub fn hook_strategy(&self, spec: Option<&str>) -> HookStrategy {
        match self.hooks {
            HookRule::Always => HookStrategy::Combined,
            HookRule::Never => HookStrategy::NoHooks,
            HookRule::BySpec { helm3_defaults } => match spec {
                None | Some("") if helm3_defaults => HookStrategy::NoHooks,
                spec => HookStrategy::from_spec(spec),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(v: &str) -> Rules {
        Rules::of(Version::parse(v).unwrap(), &[])
    }

    #[test]
    fn hooks_follow_the_version_then_the_spec() {
        assert_eq!(rules("v1.5.0").hook_strategy(Some("nohooks")), HookStrategy::Combined);
        assert_eq!(rules("v1.5.3").hook_strategy(None), HookStrategy::Combined);
        assert_eq!(rules("v1.5.4").hook_strategy(Some("combined")), HookStrategy::NoHooks);
        assert_eq!(rules("v1.6.2").hook_strategy(None), HookStrategy::Combined);
        assert_eq!(rules("v1.6.2").hook_strategy(Some("nohooks")), HookStrategy::NoHooks);
        let gated = Rules::of(Version::new(1, 6, 2), &[("UseHelm3Defaults".into(), true)]);
        assert_eq!(gated.hook_strategy(None), HookStrategy::NoHooks);
        assert_eq!(gated.hook_strategy(Some("combined")), HookStrategy::Combined);
    }

    #[test]
    fn fields_and_behaviours_by_version() {
        let old = rules("v1.5.0");
        assert!(!old.values_from_literal && !old.chart_name_change_strategy && !old.drifted_condition);
        assert_eq!(old.force_with_ssa, ForceWithSsa::Fails);
        assert!(old.creates_non_crds_from_crds_dir);
        assert_eq!(rules("v1.5.4").force_with_ssa, ForceWithSsa::Ignored);
        assert!(rules("v1.5.4").creates_non_crds_from_crds_dir);
        assert!(!rules("v1.5.5").creates_non_crds_from_crds_dir);
        let new = rules("v1.6.0");
        assert!(new.values_from_literal && new.chart_name_change_strategy && new.drifted_condition);
        assert_eq!(rules("v1.6.2").tested, Tested::AnyRecord);
        assert_eq!(rules("v1.6.3").tested, Tested::Finished);
        assert!(!rules("v1.6.3").kubeconfig_files_refused && rules("v1.6.4").kubeconfig_files_refused);
        let retry = |v| Rules::of(Version::parse(v).unwrap(), &[("DefaultToRetryOnFailure".into(), true)]);
        assert!(!retry("v1.5.1").default_to_retry && retry("v1.5.2").default_to_retry);
        assert!(!rules("v1.6.4").default_to_retry);
    }
}
