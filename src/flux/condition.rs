//! Kubernetes-style status conditions as Flux writes them, and the readiness rule the flux CLI applies
//! (kstatus "Current" plus Ready=True).

use serde::{Deserialize, Serialize};

/// One entry of `status.conditions` (metav1.Condition).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default)]
    pub last_transition_time: String,
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub message: String,
}

/// The status fields every Flux kind writes alike, whatever else its status holds: flattened into each
/// kind's status struct.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReconcileStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_handled_reconcile_at: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

pub const READY: &str = "Ready";
pub const RECONCILING: &str = "Reconciling";
pub const STALLED: &str = "Stalled";

/// Finds a condition by type.
pub fn find<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Where a Flux object stands, as far as someone waiting on it cares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Readiness {
    /// The controller has observed the current generation and reports Ready=True.
    Ready(String),
    /// The controller has observed the current generation and reports a failure (Ready=False or Stalled).
    Failed(String),
    /// Not settled yet: the controller has not observed the generation, or is still reconciling.
    Progressing(String),
}

/// The kstatus rule the flux CLI waits on: observedGeneration equals generation, no Reconciling=True, then
/// Stalled or Ready decide.
pub fn readiness(generation: Option<i64>, observed_generation: Option<i64>, conditions: &[Condition]) -> Readiness {
    if let Some(generation) = generation
        && observed_generation.unwrap_or(-1) < generation
    {
        return Readiness::Progressing(format!("waiting for the controller to observe generation {generation}"));
    }
    if let Some(c) = find(conditions, RECONCILING).filter(|c| c.status == "True")
        && find(conditions, STALLED).is_none_or(|s| s.status != "True")
    {
        return Readiness::Progressing(c.message.clone());
    }
    verdict(conditions)
}

/// The controller's verdict from Stalled and Ready alone, for when we know it has finished an attempt we
/// asked for. helm-controller neither advances observedGeneration nor clears Reconciling=True after a
/// failed attempt (it retries with backoff), so requiring either would turn every failure into a timeout.
pub fn verdict(conditions: &[Condition]) -> Readiness {
    if let Some(c) = find(conditions, STALLED).filter(|c| c.status == "True") {
        // Ready=False carries helm-controller's account of the failure (the flux CLI reports it);
        // Stalled only says that it stopped retrying.
        let ready = find(conditions, READY).filter(|r| r.status == "False" && !r.message.is_empty());
        return Readiness::Failed(ready.unwrap_or(c).message.clone());
    }
    match find(conditions, READY) {
        Some(c) if c.status == "True" => Readiness::Ready(c.message.clone()),
        Some(c) if c.status == "False" => Readiness::Failed(c.message.clone()),
        Some(c) => Readiness::Progressing(c.message.clone()),
        None => Readiness::Progressing("waiting to be reconciled".into()),
    }
}

/// Ready=False reasons helm-controller reports before it attempts anything, and does not leave by itself:
/// the source object missing or its artifact unreadable (`ArtifactFailed`), values it cannot compose
/// (`ValuesError`), a Helm configuration it cannot build (`InitFailed`). It retries them on an interval,
/// but only a change (the source created, the values fixed) ends them.
const UNRECOVERABLE_REASONS: [&str; 3] = ["ArtifactFailed", "ValuesError", "InitFailed"];

/// A failure the controller does not get out of by itself, as `reason: message`: Stalled=True (with
/// Ready's account, as [`verdict`] gives it), or Ready=False for one of those reasons. A wait
/// that reads it ends at once instead of at its timeout.
pub fn unrecoverable(conditions: &[Condition]) -> Option<String> {
    let ready = find(conditions, READY).filter(|c| c.status == "False");
    if let Some(stalled) = find(conditions, STALLED).filter(|c| c.status == "True") {
        let said = ready.filter(|r| !r.message.is_empty()).unwrap_or(stalled);
        return Some(format!("{}: {}", said.reason, said.message));
    }
    ready.filter(|c| UNRECOVERABLE_REASONS.contains(&c.reason.as_str())).map(|c| format!("{}: {}", c.reason, c.message))
}

/// The verdict on a reconcile request the controller has recorded as handled: [`verdict`], except while
/// Reconciling=True stands beside a Ready that is not False. helm-controller records the request at the
/// end of every attempt, also of one it ends by asking to be requeued at once (a finalizer added, a
/// release uninstalled before its reinstall), and the Ready it leaves then is the previous attempt's; a
/// failed attempt leaves Reconciling=True with Ready=False, which is its answer.
pub fn request_verdict(conditions: &[Condition]) -> Readiness {
    let reconciling = find(conditions, RECONCILING).is_some_and(|c| c.status == "True");
    let failed = find(conditions, READY).is_some_and(|c| c.status == "False")
        || find(conditions, STALLED).is_some_and(|c| c.status == "True");
    if reconciling && !failed {
        let message = find(conditions, RECONCILING).map(|c| c.message.clone()).unwrap_or_default();
        return Readiness::Progressing(message);
    }
    verdict(conditions)
}

/// `--status-selector TYPE=STATUS` as the flux CLI reads it (`flux get --status-selector ready=false`):
/// the object's condition of that type, compared without regard to case, has that status. An object
/// without such a condition does not match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusSelector {
    type_: String,
    status: String,
}

/// Why a status selector cannot be read; said in one line by the command line parser.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum StatusSelectorError {
    #[error("expected CONDITION=STATUS, e.g. ready=false")]
    NoEquals,
    #[error("no condition type before '=' (e.g. ready=false)")]
    NoType,
    #[error("the status must be true, false or unknown, not {0:?}")]
    BadStatus(String),
}

impl std::str::FromStr for StatusSelector {
    type Err = StatusSelectorError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (type_, status) = s.split_once('=').ok_or(StatusSelectorError::NoEquals)?;
        let type_ = type_.trim();
        if type_.is_empty() {
            return Err(StatusSelectorError::NoType);
        }
        // flux compares any value; only these three can ever match a condition (metav1.ConditionStatus), so
        // anything else is a typo that would silently select nothing.
        let status = status.trim();
        if !["true", "false", "unknown"].iter().any(|v| v.eq_ignore_ascii_case(status)) {
            return Err(StatusSelectorError::BadStatus(status.to_string()));
        }
        Ok(StatusSelector { type_: type_.to_string(), status: status.to_string() })
    }
}

impl StatusSelector {
    /// Whether `conditions` satisfy the selector. Like flux, the last condition of the type decides (there
    /// is normally one).
    pub fn matches(&self, conditions: &[Condition]) -> bool {
        conditions
            .iter()
            .rev()
            .find(|c| c.type_.eq_ignore_ascii_case(&self.type_))
            .is_some_and(|c| c.status.eq_ignore_ascii_case(&self.status))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cond(t: &str, s: &str, msg: &str) -> Condition {
        Condition { type_: t.into(), status: s.into(), message: msg.into(), ..Default::default() }
    }

    #[test]
    fn a_missing_source_or_a_stall_ends_a_wait_and_a_dependency_does_not() {
        let because = |reason: &str| Condition { reason: reason.into(), ..cond(READY, "False", "why") };
        let missing = [because("ArtifactFailed")];
        assert_eq!(unrecoverable(&missing).as_deref(), Some("ArtifactFailed: why"));
        assert_eq!(unrecoverable(&[because("ValuesError")]).as_deref(), Some("ValuesError: why"));
        assert_eq!(unrecoverable(&[because("DependencyNotReady")]), None, "a dependency may become ready");
        assert_eq!(unrecoverable(&[because("SourceNotReady")]), None, "a source may become ready");
        let stalled =
            [Condition { reason: "RetriesExceeded".into(), ..cond(STALLED, "True", "") }, because("UpgradeFailed")];
        assert_eq!(unrecoverable(&stalled).as_deref(), Some("UpgradeFailed: why"));
        assert_eq!(unrecoverable(&[cond(READY, "True", "ok")]), None);
    }

    #[test]
    fn unobserved_generation_is_progressing_even_if_ready() {
        let r = readiness(Some(3), Some(2), &[cond(READY, "True", "ok")]);
        assert!(matches!(r, Readiness::Progressing(_)), "{r:?}");
    }

    #[test]
    fn reconciling_wins_over_stale_ready() {
        let r =
            readiness(Some(2), Some(2), &[cond(READY, "True", "old"), cond(RECONCILING, "True", "Running 'upgrade'")]);
        assert_eq!(r, Readiness::Progressing("Running 'upgrade'".into()));
    }

    #[test]
    fn a_handled_request_ended_with_a_requeue_is_still_going() {
        let requeued = [cond(READY, "True", "the previous attempt"), cond(RECONCILING, "True", "Running 'install'")];
        assert_eq!(request_verdict(&requeued), Readiness::Progressing("Running 'install'".into()));
        let failed = [cond(READY, "False", "upgrade failed"), cond(RECONCILING, "True", "retrying")];
        assert_eq!(request_verdict(&failed), Readiness::Failed("upgrade failed".into()));
        assert_eq!(request_verdict(&[cond(READY, "True", "done")]), Readiness::Ready("done".into()));
    }

    #[test]
    fn stalled_and_ready_false_fail() {
        assert_eq!(
            readiness(Some(1), Some(1), &[cond(STALLED, "True", "retries exceeded")]),
            Readiness::Failed("retries exceeded".into())
        );
        assert_eq!(readiness(Some(1), Some(1), &[cond(READY, "False", "boom")]), Readiness::Failed("boom".into()));
        assert_eq!(
            readiness(Some(1), Some(1), &[cond(STALLED, "True", "retries exceeded"), cond(READY, "False", "boom")]),
            Readiness::Failed("boom".into())
        );
    }

    #[test]
    fn verdict_ignores_a_lagging_observed_generation() {
        let failed = [cond(READY, "False", "install failed")];
        assert!(matches!(readiness(Some(1), None, &failed), Readiness::Progressing(_)));
        assert_eq!(verdict(&failed), Readiness::Failed("install failed".into()));
        // helm-controller leaves Reconciling=True behind a failed attempt it will retry.
        assert_eq!(
            verdict(&[cond(RECONCILING, "True", "x"), cond(READY, "False", "y")]),
            Readiness::Failed("y".into())
        );
        assert!(matches!(verdict(&[]), Readiness::Progressing(_)));
    }

    #[test]
    fn ready_true_is_ready_and_missing_is_waiting() {
        assert_eq!(readiness(Some(1), Some(1), &[cond(READY, "True", "fine")]), Readiness::Ready("fine".into()));
        assert_eq!(readiness(Some(1), Some(1), &[]), Readiness::Progressing("waiting to be reconciled".into()));
    }

    #[test]
    fn status_selectors_read_like_flux() {
        let conditions = [cond(READY, "False", "boom"), cond("Released", "True", "ok")];
        let sel = |s: &str| s.parse::<StatusSelector>().expect(s);
        assert!(sel("ready=false").matches(&conditions));
        assert!(sel("Ready=FALSE").matches(&conditions));
        assert!(!sel("ready=true").matches(&conditions));
        assert!(sel("released=true").matches(&conditions));
        // No such condition: no match, whatever the status asked for.
        assert!(!sel("stalled=false").matches(&conditions));
        assert!(!sel("ready=unknown").matches(&[]));
        assert_eq!("ready".parse::<StatusSelector>(), Err(StatusSelectorError::NoEquals));
        assert_eq!("=false".parse::<StatusSelector>(), Err(StatusSelectorError::NoType));
        assert_eq!("ready=no".parse::<StatusSelector>(), Err(StatusSelectorError::BadStatus("no".into())));
        assert_eq!("ready=".parse::<StatusSelector>(), Err(StatusSelectorError::BadStatus(String::new())));
    }
}
