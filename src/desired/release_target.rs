//! Where a HelmRelease's Helm release is, as helm-controller recorded it, and whether helm-controller
//! moves it: uninstalls the recorded release and installs anew (`ReleaseTargetChanged` in
//! `internal/action/verify.go`, acted on in `reconcileRelease`).
//!
//! helm-controller compares the HelmRelease with `status.storageNamespace` and the newest
//! `status.history` entry (`name`, `namespace`, `chartName`), in this order: the storage namespace, the
//! release namespace, the (shortened) release name, the chart's name. The first that differs is the
//! reason. Every reason uninstalls the recorded release (from its storage namespace, by its name) and
//! clears the history, the failure counters and `status.storageNamespace`; the next reconcile installs at
//! the new target. One exception: under v1.6 a chart name change alone with
//! `spec.upgrade.chartNameChangeStrategy: InPlaceUpdate` is an upgrade (v1.5 has no such field).
//!
//! Its Helm is configured for the HelmRelease as it is now: the recorded release is found in its own
//! storage namespace by its own name, but the objects of its manifest that carry no namespace are looked
//! for in the *new* release namespace. When the release namespace changed, Helm does not find them there
//! and leaves them where they are (the real helm-controller v1.6.4 logs "ignoring delete failure" and
//! keeps them): [`Move::uninstall`] is the release as that Helm sees it.

use crate::controller::Rules;
use crate::flux::HelmRelease;
use crate::flux::helmrelease::Snapshot;

/// What changed first, in helm-controller's order and words (its log says `release target
/// configuration changed (<reason>)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    StorageNamespace,
    ReleaseNamespace,
    ReleaseName,
    ChartName,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::StorageNamespace => "storage namespace",
            Reason::ReleaseNamespace => "release namespace",
            Reason::ReleaseName => "release name",
            Reason::ChartName => "chart name",
        }
    }
}

/// A release helm-controller uninstalls before it installs at the new target.
#[derive(Debug, Clone)]
pub struct Move {
    pub reason: Reason,
    /// The release it recorded: its name and namespace from the newest history entry, its storage
    /// from `status.storageNamespace`. This is what is uninstalled.
    pub from: Release,
    /// The chart the recorded release was made with.
    pub from_chart: String,
    /// Where the HelmRelease puts its release now.
    pub to: Release,
}

impl Move {
    /// The release as helm-controller's Helm uninstalls it: found by its recorded name in its recorded
    /// storage namespace, its objects without a namespace looked for in the new release namespace.
    pub fn uninstall(&self) -> Release {
        Release {
            name: self.from.name.clone(),
            namespace: self.to.namespace.clone(),
            storage_namespace: self.from.storage_namespace.clone(),
        }
    }

    /// Whether the release namespace changed, so that Helm leaves the objects the recorded manifest gives
    /// no namespace in the recorded release namespace.
    pub fn leaves_unnamespaced(&self) -> bool {
        self.from.namespace != self.to.namespace
    }

    /// Whether the new release is kept where the old one was (same storage namespace and name): the
    /// uninstall empties it, so what follows is an install whatever was stored.
    pub fn same_storage(&self) -> bool {
        self.from.storage_namespace == self.to.storage_namespace && self.from.name == self.to.name
    }

    /// One line for the user: what helm-controller does, and where.
    pub fn describe(&self, rules: &Rules) -> String {
        let (from, to) = (&self.from, &self.to);
        let stored = |r: &Release| format!(" (stored in {})", r.storage_namespace);
        let to_stored = if to.storage_namespace == from.storage_namespace { String::new() } else { stored(to) };
        format!(
            "the release target changed ({}): helm-controller {} uninstalls release {}/{}{} and installs {}/{}{to_stored}",
            self.reason.as_str(),
            rules.version,
            from.namespace,
            from.name,
            stored(from),
            to.namespace,
            to.name
        )
    }

    /// What becomes of the objects the recorded manifest gives no namespace, when Helm does not find them.
    pub fn leaves_note(&self) -> Option<String> {
        self.leaves_unnamespaced().then(|| {
            format!(
                "what its manifest gives no namespace is looked for in {} and stays in {}",
                self.to.namespace, self.from.namespace
            )
        })
    }
}

/// The release helm-controller uninstalls when the HelmRelease is deleted (`reconcileDelete`): the one
/// its status records (by name, in `status.storageNamespace`), its objects without a namespace looked for
/// in the HelmRelease's release namespace; None when nothing is recorded.
pub fn recorded(hr: &HelmRelease) -> Option<Release> {
    let storage = hr.status.as_ref()?.storage_namespace.as_deref().filter(|s| !s.is_empty())?;
    let cur = latest(hr)?;
    Some(Release {
        name: cur.name.clone(),
        namespace: hr.release_namespace().into(),
        storage_namespace: storage.into(),
    })
}

/// The newest history entry, as helm-controller's `Snapshots.Latest` picks it: the highest version.
pub fn latest(hr: &HelmRelease) -> Option<&Snapshot> {
    let history = &hr.status.as_ref()?.history;
    // max_by_key keeps the last of equal keys; the first is the one the list leads with.
    history.iter().rev().max_by_key(|s| s.version)
}

/// `ReleaseTargetChanged`: the first of the four that differs from what the status recorded, with the
/// recorded release; None when nothing is recorded (no storage namespace or no history) or nothing
/// changed. `chart_name` is the name of the chart about to be installed.
pub fn changed(hr: &HelmRelease, chart_name: &str) -> Option<(Reason, Release, String)> {
    let status = hr.status.as_ref()?;
    let stored_in = status.storage_namespace.as_deref().filter(|s| !s.is_empty())?;
    let cur = latest(hr)?;
    let reason = if hr.storage_namespace() != stored_in {
        Reason::StorageNamespace
    } else if hr.release_namespace() != cur.namespace {
        Reason::ReleaseNamespace
    } else if hr.release_name() != cur.name {
        Reason::ReleaseName
    } else if chart_name != cur.chart_name {
        Reason::ChartName
    } else {
        return None;
    };
    let from =
        Release { name: cur.name.clone(), namespace: cur.namespace.clone(), storage_namespace: stored_in.into() };
    Some((reason, from, cur.chart_name.clone()))
}

/// Whether helm-controller `rules` uninstalls and installs again for `hr` and the chart `chart_name`:
/// every reason does, but a chart name change under v1.6 with `chartNameChangeStrategy: InPlaceUpdate`.
pub fn reinstall(hr: &HelmRelease, chart_name: &str, rules: &Rules) -> Option<Move> {
    let (reason, from, from_chart) = changed(hr, chart_name)?;
    let strategy = hr.spec.upgrade.as_ref().and_then(|u| u.chart_name_change_strategy.as_deref());
    let in_place = rules.chart_name_change_strategy && strategy == Some("InPlaceUpdate");
    if reason == Reason::ChartName && in_place {
        return None;
    }
    Some(Move { reason, from, from_chart, to: Release::of(hr) })
}

/// Which Helm release a HelmRelease makes, and where Flux keeps it: all that uninstalling needs.
#[derive(Debug, Clone)]
pub struct Release {
    pub name: String,
    pub namespace: String,
    pub storage_namespace: String,
}

impl Release {
    pub fn of(hr: &crate::flux::HelmRelease) -> Release {
        Release {
            name: hr.release_name(),
            namespace: hr.release_namespace().to_string(),
            storage_namespace: hr.storage_namespace().to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::Version;
    use serde_json::json;

    /// A HelmRelease `a` in `flux` whose status records release `flux-a`... as `status` says.
    fn hr(spec: serde_json::Value, status: serde_json::Value) -> HelmRelease {
        serde_json::from_value(json!({
            "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {"name": "a", "namespace": "flux"},
            "spec": spec,
            "status": status,
        }))
        .unwrap()
    }

    /// What helm-controller records after installing `a` of chart `demo` into `apps` (release `apps-a`,
    /// stored in `flux`).
    fn installed_status() -> serde_json::Value {
        json!({
            "storageNamespace": "flux",
            "history": [
                {"name": "apps-a", "namespace": "apps", "version": 2, "chartName": "demo", "status": "deployed"},
                {"name": "apps-a", "namespace": "apps", "version": 1, "chartName": "demo", "status": "superseded"},
            ]
        })
    }

    fn reason(spec: serde_json::Value, chart: &str) -> Option<Reason> {
        changed(&hr(spec, installed_status()), chart).map(|(r, ..)| r)
    }

    #[test]
    fn nothing_changed_or_nothing_recorded() {
        assert_eq!(reason(json!({"targetNamespace": "apps"}), "demo"), None);
        // No storage namespace recorded, or no history: helm-controller looks no further.
        let mut status = installed_status();
        status["storageNamespace"] = json!("");
        assert!(changed(&hr(json!({"targetNamespace": "other"}), status), "demo").is_none());
        assert!(changed(&hr(json!({}), json!({"storageNamespace": "flux"})), "x").is_none());
        assert!(changed(&hr(json!({}), json!(null)), "x").is_none());
    }

    #[test]
    fn each_of_the_four_reasons_in_helm_controllers_order() {
        // The storage namespace first, even when everything else changed too.
        let all = json!({"storageNamespace": "elsewhere", "targetNamespace": "other"});
        assert_eq!(reason(all, "renamed"), Some(Reason::StorageNamespace));
        // A new targetNamespace changes the release name too (other-a): the namespace is named.
        assert_eq!(reason(json!({"targetNamespace": "other"}), "demo"), Some(Reason::ReleaseNamespace));
        // The same namespace, another name.
        let renamed = json!({"targetNamespace": "apps", "releaseName": "b"});
        assert_eq!(reason(renamed, "demo"), Some(Reason::ReleaseName));
        assert_eq!(reason(json!({"targetNamespace": "apps"}), "renamed"), Some(Reason::ChartName));
    }

    #[test]
    fn the_recorded_release_is_the_newest_entry_and_the_status_storage() {
        let mut status = installed_status();
        // Out of order: helm-controller sorts by version.
        status["history"].as_array_mut().unwrap().reverse();
        let (_, from, chart) =
            changed(&hr(json!({"storageNamespace": "s2", "targetNamespace": "apps"}), status), "demo")
                .expect("changed");
        assert_eq!(
            (from.name.as_str(), from.namespace.as_str(), from.storage_namespace.as_str()),
            ("apps-a", "apps", "flux")
        );
        assert_eq!(chart, "demo");
    }

    #[test]
    fn a_long_release_name_is_compared_shortened() {
        let long = "a".repeat(60);
        let spec = json!({"releaseName": long});
        let shortened = crate::flux::release_name::release_name("a", None, Some(&long));
        assert!(shortened.len() <= 53);
        let status = json!({"storageNamespace": "flux", "history": [
            {"name": shortened, "namespace": "flux", "version": 1, "chartName": "demo"}]});
        assert!(changed(&hr(spec, status), "demo").is_none());
    }

    #[test]
    fn chart_name_change_reinstalls_unless_v1_6_updates_in_place() {
        let v15 = Rules::of(Version::new(1, 5, 0), &[]);
        let v16 = Rules::of(Version::new(1, 6, 4), &[]);
        let in_place = json!({"targetNamespace": "apps", "upgrade": {"chartNameChangeStrategy": "InPlaceUpdate"}});
        let reinstalls = |spec: &serde_json::Value, chart: &str, rules: &Rules| {
            reinstall(&hr(spec.clone(), installed_status()), chart, rules).map(|m| m.reason)
        };
        assert_eq!(reinstalls(&in_place, "renamed", &v15), Some(Reason::ChartName));
        assert_eq!(reinstalls(&in_place, "renamed", &v16), None);
        let default = json!({"targetNamespace": "apps"});
        assert_eq!(reinstalls(&default, "renamed", &v16), Some(Reason::ChartName));
        let explicit = json!({"targetNamespace": "apps", "upgrade": {"chartNameChangeStrategy": "UninstallInstall"}});
        assert_eq!(reinstalls(&explicit, "renamed", &v16), Some(Reason::ChartName));
        // InPlaceUpdate is for the chart's name only: any other reason reinstalls under both.
        let moved = json!({"targetNamespace": "other", "upgrade": {"chartNameChangeStrategy": "InPlaceUpdate"}});
        for rules in [&v15, &v16] {
            assert_eq!(reinstalls(&moved, "renamed", rules), Some(Reason::ReleaseNamespace));
            assert_eq!(reinstalls(&moved, "demo", rules), Some(Reason::ReleaseNamespace));
        }
    }

    #[test]
    fn a_move_names_both_places() {
        let v16 = Rules::of(Version::new(1, 6, 4), &[]);
        let m = reinstall(&hr(json!({"targetNamespace": "other"}), installed_status()), "demo", &v16).expect("a move");
        assert_eq!(
            (m.to.name.as_str(), m.to.namespace.as_str(), m.to.storage_namespace.as_str()),
            ("other-a", "other", "flux")
        );
        assert!(!m.same_storage() && m.leaves_unnamespaced());
        assert_eq!(
            m.describe(&v16),
            "the release target changed (release namespace): helm-controller v1.6.4 uninstalls release apps/apps-a (stored in flux) and installs other/other-a"
        );
        assert_eq!(
            m.leaves_note().unwrap(),
            "what its manifest gives no namespace is looked for in other and stays in apps"
        );
        // helm-controller's Helm looks in the new release namespace, for the old release's storage.
        let u = m.uninstall();
        assert_eq!((u.name.as_str(), u.namespace.as_str(), u.storage_namespace.as_str()), ("apps-a", "other", "flux"));
        let renamed =
            reinstall(&hr(json!({"targetNamespace": "apps"}), installed_status()), "x", &v16).expect("a move");
        assert!(renamed.same_storage() && !renamed.leaves_unnamespaced());
        assert!(renamed.leaves_note().is_none());
        let stored = reinstall(
            &hr(json!({"targetNamespace": "apps", "storageNamespace": "s2"}), installed_status()),
            "demo",
            &v16,
        );
        assert!(stored.expect("a move").describe(&v16).ends_with("installs apps/apps-a (stored in s2)"));
    }

    #[test]
    fn a_deletion_uninstalls_the_recorded_release() {
        let r = recorded(&hr(json!({"targetNamespace": "other"}), installed_status())).expect("recorded");
        assert_eq!((r.name.as_str(), r.namespace.as_str(), r.storage_namespace.as_str()), ("apps-a", "other", "flux"));
        assert!(recorded(&hr(json!({}), json!({"storageNamespace": "flux"}))).is_none());
    }
}
