//! What the loop says about itself on stderr: the status line (rewritten in place on a terminal, a line
//! per round elsewhere), a burst of changes in a few words, a round's plan in words.

use std::collections::BTreeSet;
use std::io::IsTerminal;

use super::Change;
use super::watched::Watched;

/// What the loop prints about itself on stderr: on a terminal one line rewritten in place
/// ([`crate::output::show_status`]), else one line per round (logs and CI read those).
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
            crate::output::show_status(text);
        }
    }

    /// Clears the status line (the end of the loop leaves none behind).
    pub fn clear(&mut self) {
        crate::output::clear_status();
    }

    /// The line for a round that ended: the status line on a terminal, a line of its own elsewhere.
    pub fn round(&mut self, line: &str) {
        if self.tty {
            self.show(line);
        } else {
            crate::output::stderr_line(line);
        }
    }

    /// A line that stays (an error, a note), whatever the stream.
    pub fn line(&mut self, line: impl std::fmt::Display) {
        crate::output::stderr_line(line);
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

/// The plan of a round in words: `1 to add, 2 to change, 0 to remove`.
pub(super) fn plan_words(plan: &crate::diff::Plan) -> String {
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
