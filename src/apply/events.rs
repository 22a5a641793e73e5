//! The Events an apply or delete records on the HelmRelease, as helm-controller records its own (reporter
//! `helm-cozy`, so a reader can tell who acted).

use kube::Resource;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};

use crate::cluster::Cluster;
use crate::flux::HelmRelease;
use crate::support::output::progress;

/// The API server refuses an Event note over 1024 bytes.
const EVENT_NOTE_MAX: usize = 1024;

/// Records an Event of `type_` with `reason` and `note` on `hr`. An Event is a courtesy to people and
/// tools watching: failing to record one is said, and fails nothing.
pub(super) async fn emit(cluster: &Cluster, hr: &HelmRelease, type_: EventType, reason: &str, note: &str) {
    let note = truncate(note, EVENT_NOTE_MAX);
    let ev = Event { type_, reason: reason.into(), note: Some(note), action: "Apply".into(), secondary: None };
    let recorder = Recorder::new(cluster.client.clone(), Reporter { controller: "helm-cozy".into(), instance: None });
    if let Err(e) = recorder.publish(&ev, &hr.object_ref(&())).await {
        progress::failure(format!("cannot record the {reason} event: {e}"));
    }
}

/// Cuts `s` to at most `max` bytes on a character boundary, marking the cut.
fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max.saturating_sub(3);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_fit_the_event_limit_on_a_char_boundary() {
        let long = "é".repeat(800);
        let t = truncate(&long, EVENT_NOTE_MAX);
        assert!(t.len() <= EVENT_NOTE_MAX && t.ends_with("..."), "{}", t.len());
        assert_eq!(truncate("short", EVENT_NOTE_MAX), "short");
    }
}
