//! The actions of a HelmRelease's spec, typed: `spec.install`, `upgrade`, `test`, `rollback` and
//! `uninstall`, with helm-controller's defaults (`api/v2/helmrelease_types.go`). Every field helm-controller
//! reads is named here, so a field helm cozy does not follow is visible in one place; what a field means
//! is the doc of its accessor. Unknown fields are kept (`extra`), so an object read and written back
//! loses nothing.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

type Extra = BTreeMap<String, Value>;

/// helm-controller's default for every action's timeout (`spec.timeout` unset).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
/// helm-controller's default `spec.maxHistory`.
pub const DEFAULT_MAX_HISTORY: i64 = 5;
/// `retryInterval` of `RetryOnFailure` when the strategy names none (`GetRetryInterval`).
pub const DEFAULT_RETRY_INTERVAL: Duration = Duration::from_secs(300);

/// `spec.install`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Install {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<Strategy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remediation: Option<Remediation>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disable_take_ownership: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disable_wait: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disable_wait_for_jobs: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disable_hooks: bool,
    #[serde(default, rename = "disableOpenAPIValidation", skip_serializing_if = "std::ops::Not::not")]
    pub disable_openapi_validation: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disable_schema_validation: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replace: bool,
    #[serde(default, rename = "skipCRDs", skip_serializing_if = "std::ops::Not::not")]
    pub skip_crds: bool,
    #[serde(default, rename = "crds", skip_serializing_if = "Option::is_none")]
    pub crds: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub create_namespace: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_side_apply: Option<bool>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `spec.upgrade`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Upgrade {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<Strategy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remediation: Option<Remediation>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disable_take_ownership: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disable_wait: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disable_wait_for_jobs: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disable_hooks: bool,
    #[serde(default, rename = "disableOpenAPIValidation", skip_serializing_if = "std::ops::Not::not")]
    pub disable_openapi_validation: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disable_schema_validation: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub force: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub preserve_values: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cleanup_on_fail: bool,
    #[serde(default, rename = "crds", skip_serializing_if = "Option::is_none")]
    pub crds: Option<String>,
    /// `enabled`, `disabled` or `auto` (the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_side_apply: Option<String>,
    /// `UninstallInstall` (the default) or `InPlaceUpdate` (v1.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart_name_change_strategy: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `spec.install.strategy` / `spec.upgrade.strategy`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Strategy {
    /// `RemediateOnFailure` or `RetryOnFailure`.
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_interval: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `spec.install.remediation` / `spec.upgrade.remediation` (`strategy` is the upgrade's only).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Remediation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_test_failures: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remediate_last_failure: Option<bool>,
    /// `rollback` (the default) or `uninstall`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `spec.test`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Test {
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub enable: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ignore_failures: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filters: Option<Vec<TestFilter>>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// One `spec.test.filters` entry: a test hook's name, run alone (with the other included ones) or left out.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TestFilter {
    pub name: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exclude: bool,
}

/// `spec.rollback`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rollback {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disable_wait: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disable_wait_for_jobs: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disable_hooks: bool,
    /// Deprecated and ignored by helm-controller (it logs so).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub recreate: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub force: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cleanup_on_fail: bool,
    /// `enabled`, `disabled` or `auto` (the default: as the release rolled back to was applied).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_side_apply: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `spec.uninstall`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Uninstall {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disable_hooks: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_history: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disable_wait: bool,
    /// `background` (the default), `foreground` or `orphan`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_propagation: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// What an install and an upgrade share, read from whichever of the two the next action is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReleaseSettings {
    pub timeout: Option<String>,
    pub disable_take_ownership: bool,
    pub disable_wait: bool,
    pub disable_wait_for_jobs: bool,
    pub disable_hooks: bool,
    pub disable_openapi_validation: bool,
    pub disable_schema_validation: bool,
}

impl From<&Install> for ReleaseSettings {
    fn from(i: &Install) -> Self {
        ReleaseSettings {
            timeout: i.timeout.clone(),
            disable_take_ownership: i.disable_take_ownership,
            disable_wait: i.disable_wait,
            disable_wait_for_jobs: i.disable_wait_for_jobs,
            disable_hooks: i.disable_hooks,
            disable_openapi_validation: i.disable_openapi_validation,
            disable_schema_validation: i.disable_schema_validation,
        }
    }
}

impl From<&Upgrade> for ReleaseSettings {
    fn from(u: &Upgrade) -> Self {
        ReleaseSettings {
            timeout: u.timeout.clone(),
            disable_take_ownership: u.disable_take_ownership,
            disable_wait: u.disable_wait,
            disable_wait_for_jobs: u.disable_wait_for_jobs,
            disable_hooks: u.disable_hooks,
            disable_openapi_validation: u.disable_openapi_validation,
            disable_schema_validation: u.disable_schema_validation,
        }
    }
}

/// Which action's remediation and retry apply: helm-controller picks them by
/// `status.lastAttemptedReleaseAction`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReleaseAction {
    Install,
    Upgrade,
}

/// What helm-controller does after an action failed, by the action's strategy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnFailure {
    /// `RemediateOnFailure` (the default): remediate (roll back an upgrade, uninstall an install) while
    /// retries last.
    Remediate,
    /// `RetryOnFailure`: leave the failed release and try again after the interval; never remediate.
    Retry { interval: Duration },
}

/// The remediation of one action, with helm-controller's defaults applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActiveRemediation {
    pub action: ReleaseAction,
    /// Negative: retry forever.
    pub retries: i64,
    pub ignore_test_failures: Option<bool>,
    pub remediate_last_failure: bool,
    /// Uninstall instead of roll back (always for an install).
    pub uninstalls: bool,
}

impl ActiveRemediation {
    /// `RetriesExhausted`: the failures counted for this action passed the retries.
    pub fn retries_exhausted(&self, failures: i64) -> bool {
        self.retries >= 0 && failures > self.retries
    }

    /// `MustIgnoreTestFailures`: its own `ignoreTestFailures`, else `spec.test.ignoreFailures`.
    pub fn ignores_test_failures(&self, test_ignore_failures: bool) -> bool {
        self.ignore_test_failures.unwrap_or(test_ignore_failures)
    }
}

/// Parses a Go duration of the spec, for `field` (an unparseable one is an error of the spec, reported
/// by the caller with the field's name).
pub fn duration(field: &str, text: Option<&str>) -> Result<Option<Duration>, String> {
    match text.filter(|t| !t.is_empty()) {
        None => Ok(None),
        Some(t) => {
            crate::support::duration::parse(t).map(Some).map_err(|e| format!("{field}: {t:?} is not a duration: {e}"))
        }
    }
}

fn remediation_of(action: ReleaseAction, r: Option<&Remediation>) -> ActiveRemediation {
    let retries = r.and_then(|r| r.retries).unwrap_or(0);
    let upgrade = action == ReleaseAction::Upgrade;
    ActiveRemediation {
        action,
        retries,
        ignore_test_failures: r.and_then(|r| r.ignore_test_failures),
        // An upgrade remediates its last failure by default when it retries at all; an install does not.
        remediate_last_failure: r.and_then(|r| r.remediate_last_failure).unwrap_or(upgrade && retries > 0),
        uninstalls: !upgrade || r.and_then(|r| r.strategy.as_deref()) == Some("uninstall"),
    }
}

fn strategy_of(s: Option<&Strategy>, default_to_retry: bool) -> OnFailure {
    let retry = |s: Option<&Strategy>| {
        let interval = s
            .and_then(|s| s.retry_interval.as_deref())
            .and_then(|t| crate::support::duration::parse(t).ok())
            .unwrap_or(DEFAULT_RETRY_INTERVAL);
        OnFailure::Retry { interval }
    };
    match s {
        Some(s) if s.name == "RetryOnFailure" => retry(Some(s)),
        None if default_to_retry => retry(None),
        _ => OnFailure::Remediate,
    }
}

/// The typed actions of a HelmRelease spec, read by helm-controller's accessors.
pub trait Actions {
    fn install_spec(&self) -> Option<&Install>;
    fn upgrade_spec(&self) -> Option<&Upgrade>;

    /// The settings of the next action: the upgrade's when the release is `installed`, else the install's.
    fn release_settings(&self, installed: bool) -> ReleaseSettings {
        if installed {
            self.upgrade_spec().map(ReleaseSettings::from).unwrap_or_default()
        } else {
            self.install_spec().map(ReleaseSettings::from).unwrap_or_default()
        }
    }

    /// `GetActiveRemediation` for the action last attempted.
    fn remediation(&self, action: ReleaseAction) -> ActiveRemediation {
        match action {
            ReleaseAction::Install => remediation_of(action, self.install_spec().and_then(|i| i.remediation.as_ref())),
            ReleaseAction::Upgrade => remediation_of(action, self.upgrade_spec().and_then(|u| u.remediation.as_ref())),
        }
    }

    /// `GetActiveRetry`: the action's strategy; with the `DefaultToRetryOnFailure` gate (v1.5.2+) a
    /// strategy left unset is `RetryOnFailure`.
    fn on_failure(&self, action: ReleaseAction, default_to_retry: bool) -> OnFailure {
        match action {
            ReleaseAction::Install => {
                strategy_of(self.install_spec().and_then(|i| i.strategy.as_ref()), default_to_retry)
            }
            ReleaseAction::Upgrade => {
                strategy_of(self.upgrade_spec().and_then(|u| u.strategy.as_ref()), default_to_retry)
            }
        }
    }
}

/// Whether helm-controller records and runs the test hook `name` under `filters` (`isTestHookSelected`).
pub fn test_hook_selected(filters: &[TestFilter], name: &str) -> bool {
    let mut include = false;
    let mut included = false;
    for f in filters {
        if f.exclude {
            if f.name == name {
                return false;
            }
            continue;
        }
        include = true;
        included |= f.name == name;
    }
    !include || included
}

/// How hooks meet the post-renderers (`spec.postRenderStrategy` of helm-controller ≥ 1.6).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HookStrategy {
    /// Hooks and templates in one stream (Helm 4's and helm-controller's default).
    #[default]
    Combined,
    /// Hooks and templates post-rendered as two streams.
    Separate,
    /// Hooks not post-rendered (Helm 3's behaviour; helm-controller's default with `UseHelm3Defaults`).
    NoHooks,
}

impl HookStrategy {
    /// The strategy a HelmRelease names; anything else (helm-controller's API allows nothing else) and
    /// none are the default.
    pub fn from_spec(value: Option<&str>) -> HookStrategy {
        match value {
            Some("separate") => HookStrategy::Separate,
            Some("nohooks") => HookStrategy::NoHooks,
            _ => HookStrategy::Combined,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_strategy_as_the_spec_names_it() {
        assert_eq!(HookStrategy::from_spec(Some("nohooks")), HookStrategy::NoHooks);
        assert_eq!(HookStrategy::from_spec(Some("separate")), HookStrategy::Separate);
        assert_eq!(HookStrategy::from_spec(None), HookStrategy::Combined);
        assert_eq!(HookStrategy::from_spec(Some("anything")), HookStrategy::Combined);
    }

    struct Spec(Option<Install>, Option<Upgrade>);
    impl Actions for Spec {
        fn install_spec(&self) -> Option<&Install> {
            self.0.as_ref()
        }
        fn upgrade_spec(&self) -> Option<&Upgrade> {
            self.1.as_ref()
        }
    }

    fn spec(install: Value, upgrade: Value) -> Spec {
        Spec(serde_json::from_value(install).ok(), serde_json::from_value(upgrade).ok())
    }

    #[test]
    fn remediation_defaults_are_helm_controllers() {
        let none = spec(Value::Null, Value::Null);
        let up = none.remediation(ReleaseAction::Upgrade);
        assert_eq!((up.retries, up.remediate_last_failure, up.uninstalls), (0, false, false));
        assert!(up.retries_exhausted(1) && !up.retries_exhausted(0));
        let s = spec(
            serde_json::json!({"remediation": {"retries": 3, "remediateLastFailure": true}}),
            serde_json::json!({"remediation": {"retries": 1}}),
        );
        let up = s.remediation(ReleaseAction::Upgrade);
        // remediateLastFailure defaults to retries > 0 for an upgrade.
        assert!(up.remediate_last_failure && !up.uninstalls && !up.retries_exhausted(1) && up.retries_exhausted(2));
        let install = s.remediation(ReleaseAction::Install);
        assert!(install.uninstalls && install.remediate_last_failure && install.retries == 3);
        let forever = spec(Value::Null, serde_json::json!({"remediation": {"retries": -1, "strategy": "uninstall"}}));
        let up = forever.remediation(ReleaseAction::Upgrade);
        assert!(!up.retries_exhausted(1000) && up.uninstalls);
        assert!(up.ignores_test_failures(true) && !up.ignores_test_failures(false));
    }

    #[test]
    fn strategies_and_the_default_to_retry_gate() {
        let none = spec(Value::Null, Value::Null);
        assert_eq!(none.on_failure(ReleaseAction::Upgrade, false), OnFailure::Remediate);
        assert_eq!(
            none.on_failure(ReleaseAction::Upgrade, true),
            OnFailure::Retry { interval: DEFAULT_RETRY_INTERVAL }
        );
        let retry = spec(
            serde_json::json!({"strategy": {"name": "RetryOnFailure", "retryInterval": "30s"}}),
            serde_json::json!({"strategy": {"name": "RemediateOnFailure"}}),
        );
        assert_eq!(
            retry.on_failure(ReleaseAction::Install, false),
            OnFailure::Retry { interval: Duration::from_secs(30) }
        );
        // An explicit RemediateOnFailure is not changed by the gate.
        assert_eq!(retry.on_failure(ReleaseAction::Upgrade, true), OnFailure::Remediate);
    }

    #[test]
    fn unknown_fields_survive_a_round_trip() {
        let text = serde_json::json!({"enable": true, "filters": [{"name": "a", "exclude": true}], "future": 1});
        let test: Test = serde_json::from_value(text.clone()).unwrap();
        assert!(test.enable && test.filters.as_ref().unwrap()[0].exclude);
        assert_eq!(serde_json::to_value(&test).unwrap(), text);
        let install: Install =
            serde_json::from_value(serde_json::json!({"crds": "CreateReplace", "skipCRDs": true})).unwrap();
        assert_eq!((install.crds.as_deref(), install.skip_crds), (Some("CreateReplace"), true));
    }
}
