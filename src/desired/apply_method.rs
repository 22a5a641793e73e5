//! The apply method as helm-controller decides it (internal/action/{install,upgrade}.go): server-side
//! apply on install unless `spec.install.serverSideApply: false`; on upgrade `spec.upgrade.serverSideApply`
//! (`enabled`, `disabled`, or `auto`, the default: the method of the release's last revision, which Helm 4
//! records as `apply_method: ssa`; a revision made by Helm 3, by helm-controller before 1.5 or by the
//! original Go cozyhr has none and was applied client-side). Conflicts are forced only when applying
//! server-side, and `spec.upgrade.force` replaces objects only when applying client-side.
//!
//! Helm 4 is told the method (`--server-side=true|false`); Helm 3 has only client-side apply, so where
//! helm-controller would apply server-side, one line says what Helm 3 does instead. The chart's CRDs are
//! applied by helm cozy itself ([`crate::desired::crds`]), with helm-controller's method whatever the local Helm.

use serde_json::Value;

use crate::cluster::helmstore::StoredRelease;
use crate::flux::HelmRelease;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApplyMethod {
    ServerSide,
    ClientSide,
}

impl ApplyMethod {
    pub fn server_side(self) -> bool {
        self == ApplyMethod::ServerSide
    }
}

/// helm-controller's method for the next action on `hr`'s release: an upgrade when `installed`, with
/// `last` the release's newest stored revision.
pub fn decide(hr: &HelmRelease, installed: bool, last: Option<&StoredRelease>) -> ApplyMethod {
    let method = |ssa: bool| if ssa { ApplyMethod::ServerSide } else { ApplyMethod::ClientSide };
    if !installed {
        return method(hr.spec.install.as_ref().and_then(|i| i.server_side_apply) != Some(false));
    }
    match hr.spec.upgrade.as_ref().and_then(|u| u.server_side_apply.as_deref()) {
        Some("enabled") => ApplyMethod::ServerSide,
        Some("disabled") => ApplyMethod::ClientSide,
        _ => method(last.and_then(|r| r.raw.get("apply_method")).and_then(Value::as_str) == Some("ssa")),
    }
}

/// Whether `spec.upgrade.force` asks for objects to be replaced (client-side apply only).
pub fn force_replace(hr: &HelmRelease, installed: bool, method: ApplyMethod) -> bool {
    installed && !method.server_side() && hr.spec.upgrade.as_ref().is_some_and(|u| u.force)
}

/// The line to say under Helm 3 when helm-controller would apply server-side.
pub fn helm3_note(method: ApplyMethod) -> Option<&'static str> {
    method.server_side().then_some(
        "helm-controller applies this release server-side; Helm 3 applies it client-side (a three-way merge patch) and records no apply method, so helm-controller's next upgrade applies it client-side too unless spec.upgrade.serverSideApply is enabled",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hr(spec: Value) -> HelmRelease {
        serde_json::from_value(serde_json::json!({"metadata": {"name": "a", "namespace": "n"}, "spec": spec})).unwrap()
    }

    fn stored(apply_method: Option<&str>) -> StoredRelease {
        let raw = match apply_method {
            Some(m) => serde_json::json!({"apply_method": m}),
            None => serde_json::json!({}),
        };
        StoredRelease { raw, ..Default::default() }
    }

    #[test]
    fn install_is_server_side_unless_disabled() {
        assert_eq!(decide(&hr(serde_json::json!({})), false, None), ApplyMethod::ServerSide);
        let off = hr(serde_json::json!({"install": {"serverSideApply": false}}));
        assert_eq!(decide(&off, false, None), ApplyMethod::ClientSide);
    }

    #[test]
    fn upgrade_follows_the_last_revision_unless_told() {
        let auto = hr(serde_json::json!({}));
        assert_eq!(decide(&auto, true, Some(&stored(Some("ssa")))), ApplyMethod::ServerSide);
        assert_eq!(decide(&auto, true, Some(&stored(Some("csa")))), ApplyMethod::ClientSide);
        // Helm 3, helm-controller before 1.5, the original cozyhr: no method recorded.
        assert_eq!(decide(&auto, true, Some(&stored(None))), ApplyMethod::ClientSide);
        let enabled = hr(serde_json::json!({"upgrade": {"serverSideApply": "enabled"}}));
        assert_eq!(decide(&enabled, true, Some(&stored(None))), ApplyMethod::ServerSide);
        let disabled = hr(serde_json::json!({"upgrade": {"serverSideApply": "disabled", "force": true}}));
        assert_eq!(decide(&disabled, true, Some(&stored(Some("ssa")))), ApplyMethod::ClientSide);
        assert!(force_replace(&disabled, true, ApplyMethod::ClientSide));
        assert!(!force_replace(&disabled, true, ApplyMethod::ServerSide));
    }
}
