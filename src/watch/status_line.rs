//! What the loop says about itself on stderr: the status line (rewritten in place on a terminal, a line
//! per round elsewhere), each round's lines, a burst of changes in a few words, a round's plan in words.

use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::time::Instant;

use super::round::{Change, Outcome};
use super::watched::Watched;
use crate::support::output::{Paint, Tone};

/// What the loop prints about itself on stderr: on a terminal one line rewritten in place
/// ([`crate::support::output::show_status`]), else one line per round (logs and CI read those).
pub struct StatusLine {
    tty: bool,
}

impl StatusLine {
    pub fn new() -> StatusLine {
        StatusLine { tty: std::io::stderr().is_terminal() }
    }

    /// On a terminal, replaces the status line with `text`; elsewhere nothing.
    pub fn show(&mut self, text: &str) {
        if self.tty {
            crate::support::output::show_status(text);
        }
    }

    /// Clears the status line (the end of the loop leaves none behind).
    pub fn clear(&mut self) {
        crate::support::output::clear_status();
    }

    /// The line for a round that ended: the status line on a terminal, a line of its own elsewhere.
    pub fn round(&mut self, line: &str) {
        if self.tty {
            self.show(line);
        } else {
            crate::support::output::stderr_line(line);
        }
    }

    /// A line that stays (an error, a note), whatever the stream.
    pub fn line(&mut self, line: impl std::fmt::Display) {
        crate::support::output::stderr_line(line);
    }
}

impl Default for StatusLine {
    fn default() -> Self {
        StatusLine::new()
    }
}

/// What the changes of a burst were, in a few words: `templates/cm.yaml`, `values.yaml and 2 more`.
pub fn describe(changes: &[Change], watched: &Watched) -> String {
    let names: Vec<String> = changes
        .iter()
        .map(|c| match c {
            Change::Start => "start".to_string(),
            Change::File(p) => watched.describe(p),
            Change::Object(o) => o.clone(),
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    match names.as_slice() {
        [] => "nothing".into(),
        [one] => one.clone(),
        [first, rest @ ..] => format!("{first} and {} more", rest.len()),
    }
}

/// The lines of one loop's rounds on stderr: each round's working line, its end, and the note that a
/// round is being finished after a signal.
pub(super) struct RoundLines<'a> {
    status: StatusLine,
    paint: Paint,
    watched: &'a Watched,
    /// What is watched, in a few words ([`super::Watches::what`]).
    what: &'a str,
}

/// A round as its lines name it: its number, what started it, and when (for how long it took).
pub(super) struct RoundStart {
    number: u32,
    cause: String,
    started: Instant,
}

impl<'a> RoundLines<'a> {
    pub(super) fn new(watched: &'a Watched, what: &'a str) -> RoundLines<'a> {
        RoundLines { status: StatusLine::new(), paint: Paint::stderr(), watched, what }
    }

    /// Round `number` starts for `burst`: its working line stays until the round prints (output clears it
    /// first) or ends.
    pub(super) fn start(&mut self, number: u32, burst: &[Change]) -> RoundStart {
        let cause = describe(burst, self.watched);
        self.status.show(&format!("◎ round {number} ({cause}): working…"));
        RoundStart { number, cause, started: Instant::now() }
    }

    /// A signal came during a round that changes the cluster: the round is finished first, and a second
    /// signal stops helm.
    pub(super) fn finishing(&mut self) {
        self.status.line(format!(
            "{} finishing this round, then stopping (Ctrl-C again stops helm now)",
            self.paint.tone("◎", Tone::Plain)
        ));
    }

    /// The line of a round that ended: done, or failed with its error on a line above. A round that ends
    /// the loop, or that a signal dropped (None), has none.
    pub(super) fn ended(&mut self, round: &RoundStart, outcome: Option<&Outcome>) {
        let RoundStart { number, cause, started } = round;
        let took = started.elapsed();
        let stamp = jiff::Zoned::now().strftime("%H:%M:%S");
        let (paint, what) = (self.paint, self.what);
        match outcome {
            Some(Outcome::Done(text)) => self.status.round(&format!(
                "{} {stamp} round {number} ({cause}): {text} in {:.2}s; watching {what} (Ctrl-C to stop)",
                paint.tone("✔", Tone::Good),
                took.as_secs_f64()
            )),
            Some(Outcome::Failed(error)) => {
                self.status.line(format!("{} {error}", paint.tone("✗", Tone::Bad)));
                self.status.round(&format!(
                    "{} {stamp} round {number} ({cause}): failed in {:.2}s; watching {what} for the next change (Ctrl-C to stop)",
                    paint.tone("✗", Tone::Bad),
                    took.as_secs_f64()
                ));
            }
            Some(Outcome::End(_)) | None => {}
        }
    }

    /// Clears the status line: the loop leaves none behind.
    pub(super) fn clear(&mut self) {
        self.status.clear();
    }
}

/// The plan of a round in words: `1 to add, 2 to change, 0 to remove`.
pub(super) fn plan_words(plan: &crate::compare::diff::Plan) -> String {
    let c = plan.counts();
    format!("{} to add, {} to change, {} to remove", c.add, c.change, c.remove)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn bursts_are_described_briefly() {
        let w = Watched { trees: vec![PathBuf::from("/c")], files: vec![] };
        let f = |s: &str| Change::File(PathBuf::from(s));
        assert_eq!(describe(&[f("/c/values.yaml")], &w), "values.yaml");
        assert_eq!(
            describe(&[f("/c/a"), f("/c/b"), Change::Object("ConfigMap x".into())], &w),
            "ConfigMap x and 2 more"
        );
    }
}
