//! Output conventions shared by both binaries: data on stdout, status on stderr, colour only on a terminal
//! and never with `NO_COLOR`, kubectl-style tables.

use std::io::{IsTerminal, Write};

/// `--color auto|always|never`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Whether to colour a stream: `always` and `never` are obeyed; `auto` means a terminal, without
    /// `NO_COLOR` (https://no-color.org: any non-empty value) and with a TERM other than `dumb`.
    pub fn enabled(self, is_terminal: bool) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                is_terminal
                    && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::env::var("TERM").map_or(true, |t| t != "dumb")
            }
        }
    }

    pub fn for_stdout(self) -> bool {
        self.enabled(std::io::stdout().is_terminal())
    }

    pub fn for_stderr(self) -> bool {
        self.enabled(std::io::stderr().is_terminal())
    }
}

/// A borderless table padded like kubectl's (three spaces between columns, no trailing spaces).
#[derive(Debug, Default)]
pub struct Table {
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Self {
        Table { rows: vec![header.into_iter().map(Into::into).collect()] }
    }

    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    pub fn is_empty(&self) -> bool {
        self.rows.len() <= 1
    }

    pub fn render(&self) -> String {
        let cols = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..cols)
            .map(|c| self.rows.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0))
            .collect();
        let mut out = String::new();
        for row in &self.rows {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                line.push_str(cell);
                if i + 1 < row.len() {
                    let pad = widths[i] - cell.chars().count() + 3;
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }

    pub fn print(&self) -> std::io::Result<()> {
        std::io::stdout().lock().write_all(self.render().as_bytes())
    }
}

/// Status lines on stderr, with the flux CLI's markers.
pub mod status {
    pub fn action(msg: impl std::fmt::Display) {
        eprintln!("► {msg}");
    }
    pub fn waiting(msg: impl std::fmt::Display) {
        eprintln!("◎ {msg}");
    }
    pub fn success(msg: impl std::fmt::Display) {
        eprintln!("✔ {msg}");
    }
    pub fn failure(msg: impl std::fmt::Display) {
        eprintln!("✗ {msg}");
    }
}

/// A compact age like kubectl's: 45s, 12m, 5h, 3d.
pub fn age(since: jiff::Timestamp, now: jiff::Timestamp) -> String {
    let secs = now.duration_since(since).as_secs().max(0);
    match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 2 * 3600 => format!("{}m", s / 60),
        s if s < 2 * 86400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_pads_like_kubectl() {
        let mut t = Table::new(["NAME", "READY"]);
        t.row(["a-long-name", "True"]);
        t.row(["b", ""]);
        assert_eq!(t.render(), "NAME          READY\na-long-name   True\nb\n");
    }

    #[test]
    fn never_and_always_ignore_the_terminal() {
        assert!(!ColorChoice::Never.enabled(true));
        assert!(ColorChoice::Always.enabled(false));
        assert!(!ColorChoice::Auto.enabled(false));
    }

    #[test]
    fn ages() {
        let t0: jiff::Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let at = |s: i64| t0.checked_add(jiff::SignedDuration::from_secs(s)).unwrap();
        assert_eq!(age(t0, at(5)), "5s");
        assert_eq!(age(t0, at(600)), "10m");
        assert_eq!(age(t0, at(3 * 3600)), "3h");
        assert_eq!(age(t0, at(3 * 86400)), "3d");
    }
}
