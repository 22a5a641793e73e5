//! What a command says on stderr about a desired release, once it is resolved: that its chart renders
//! with another version than helm-controller's, that the helm-controller's rules or Helm differ, that
//! helm-controller moves the release.

use super::Desired;
use crate::render::Helm;
use crate::source::chart::ChartDir;

/// Says on stderr when `desired` renders `chart` with another version than helm-controller's, or
/// helm-controller's cannot be known (see [`crate::source::chart_source`]), and the chart reads `.Chart.Version`
/// (else what it renders is the same either way).
pub fn version(desired: &Desired, chart: &ChartDir) {
    if chart.may_use_chart_version() {
        recorded_version(desired, chart);
    }
}

/// [`version`] whatever the templates read: for apply, which records the version in the release.
pub fn recorded_version(desired: &Desired, chart: &ChartDir) {
    if let Some(note) = desired.source_version.note(&chart.meta.version) {
        crate::support::output::progress::warning(note);
    }
}

/// What to know about the helm-controller whose rules the release follows: that its version is unknown,
/// or that the local Helm can render this chart differently from the Helm inside it (one line each).
/// Each line is said once per command: `--all` and `--watch` resolve many releases (or one, many
/// times) with the same controller and Helm.
pub fn controller(desired: &Desired, helm: &Helm) {
    static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    for note in desired.controller_notes(helm) {
        if !said.contains(&note) {
            crate::support::output::progress::warning(&note);
            said.push(note);
        }
    }
}

/// Says on stderr when helm-controller moves the release (uninstalls the one its status records and
/// installs anew, [`crate::desired::release_target`]): what is rendered is then an install at the new target, and
/// `diff` compares with the recorded release, whose objects the new one lacks are removals.
pub fn target_move(desired: &Desired) {
    if let Some(m) = desired.target_move() {
        let line = m.describe(&desired.controller.rules());
        crate::support::output::progress::warning(match m.leaves_note() {
            Some(note) => format!("{line}; {note}"),
            None => line,
        });
    }
}
