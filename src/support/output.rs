//! Output conventions shared by both binaries: data on stdout, status on stderr, colour only on a terminal
//! and never with `NO_COLOR`, kubectl-style tables.

use std::io::{IsTerminal, Write};
use std::sync::OnceLock;

use owo_colors::OwoColorize;

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
    /// `NO_COLOR` (<https://no-color.org>: any non-empty value) and with a TERM other than `dumb`.
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

    fn for_stderr(self) -> bool {
        self.enabled(std::io::stderr().is_terminal())
    }
}

/// The process-wide `--color` choice. A binary sets it once after parsing its flags; until then (and in
/// tests) it is `auto`.
static COLOR: OnceLock<ColorChoice> = OnceLock::new();

pub fn set_color(choice: ColorChoice) {
    // Set once per process; a second call (there is none in the binaries) keeps the first choice.
    let _ = COLOR.set(choice);
}

fn color() -> ColorChoice {
    COLOR.get().copied().unwrap_or_default()
}

/// The command line the user typed to run this process: what status lines and the commands they suggest
/// are named after, so that each face of the binaries names itself (and suggests what that user has).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Face {
    /// `kubectl cozyhr`.
    #[default]
    Kubectl,
    /// `flux cozyhr` (kubectl-cozyhr run as flux-cozyhr).
    Flux,
    /// `helm cozy`.
    Helm,
    /// `cozyhr`: the Go cozyhr's command line (helm-cozy run by that name).
    Cozyhr,
}

impl Face {
    /// The program's file name under this face, as `version` and completion scripts name it.
    pub fn program(self) -> &'static str {
        match self {
            Face::Kubectl => "kubectl-cozyhr",
            Face::Flux => "flux-cozyhr",
            Face::Helm => "helm-cozy",
            Face::Cozyhr => "cozyhr",
        }
    }

    /// This command as the user types it: `kubectl cozyhr`, `flux cozyhr`, `helm cozy` or `cozyhr`.
    pub fn command_name(self) -> &'static str {
        match self {
            Face::Kubectl => "kubectl cozyhr",
            Face::Flux => "flux cozyhr",
            Face::Helm => "helm cozy",
            Face::Cozyhr => "cozyhr",
        }
    }
}

/// The lifecycle verbs the `cozyhr` face has (the rest, status, tree and drift, are kubectl cozyhr's).
const COZYHR_LIFECYCLE: &[&str] = &["suspend", "resume", "reconcile", "get", "list"];

static FACE: OnceLock<Face> = OnceLock::new();

/// Set once by a binary before it runs a command (a second call keeps the first); until then (and in
/// tests) `kubectl cozyhr` and `helm cozy`.
pub fn set_face(face: Face) {
    let _ = FACE.set(face);
}

fn face() -> Face {
    FACE.get().copied().unwrap_or_default()
}

/// How the user runs lifecycle command `verb` (`resume`, `status`, `reconcile`, ...): under the face
/// they called when it has that verb (`flux cozyhr resume`, `cozyhr resume`), else `kubectl cozyhr VERB`.
pub fn lifecycle_command(verb: &str) -> String {
    lifecycle_command_of(face(), verb)
}

fn lifecycle_command_of(face: Face, verb: &str) -> String {
    match face {
        Face::Flux => format!("{} {verb}", face.command_name()),
        Face::Cozyhr if COZYHR_LIFECYCLE.contains(&verb) => format!("{} {verb}", face.command_name()),
        Face::Kubectl | Face::Helm | Face::Cozyhr => format!("{} {verb}", Face::Kubectl.command_name()),
    }
}

/// This command as the user typed it: `kubectl cozyhr`, `flux cozyhr`, `helm cozy` or `cozyhr`.
pub fn command_name() -> &'static str {
    face().command_name()
}

/// The name of the chart commands (show, diff, apply, delete, values) as the user runs them: `cozyhr`
/// under that face, else `helm cozy`; status lines start with it.
pub fn chart_command() -> &'static str {
    if face() == Face::Cozyhr { Face::Cozyhr.command_name() } else { Face::Helm.command_name() }
}

/// How to paint text for one stream: plain unless colour is on for that stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Paint(pub bool);

/// The meaning a cell carries, which decides its colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    Plain,
    Good,
    Bad,
    Warn,
    Dim,
}

impl Paint {
    pub fn stdout() -> Paint {
        Paint(color().for_stdout())
    }

    pub fn stderr() -> Paint {
        Paint(color().for_stderr())
    }

    pub fn tone(self, text: &str, tone: Tone) -> String {
        if !self.0 {
            return text.to_string();
        }
        match tone {
            Tone::Plain => text.to_string(),
            Tone::Good => text.green().to_string(),
            Tone::Bad => text.red().to_string(),
            Tone::Warn => text.yellow().to_string(),
            Tone::Dim => text.dimmed().to_string(),
        }
    }

    pub fn bold(self, text: &str) -> String {
        if self.0 { text.bold().to_string() } else { text.to_string() }
    }
}

/// The tone of a condition status or an event type: True / Normal good, False / Warning bad.
pub fn status_tone(value: &str) -> Tone {
    match value {
        "True" | "Normal" | "deployed" => Tone::Good,
        "False" | "failed" => Tone::Bad,
        "Unknown" | "Warning" => Tone::Warn,
        _ => Tone::Plain,
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

    /// The width of each column over the header and all rows.
    pub fn widths(&self) -> Vec<usize> {
        let cols = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        (0..cols)
            .map(|c| self.rows.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0))
            .collect()
    }

    pub fn render(&self) -> String {
        self.render_styled(Paint(false), |_, _| Tone::Plain)
    }

    /// Renders with each data cell painted by `tone(column header, cell)`. Padding is computed on the
    /// plain text, so colour codes never misalign the columns.
    pub fn render_styled(&self, paint: Paint, tone: impl Fn(&str, &str) -> Tone) -> String {
        let widths = self.widths();
        let header = &self.rows[0];
        let mut out = String::new();
        for (r, row) in self.rows.iter().enumerate() {
            let line = format_row(row, &widths, |c, cell| {
                if r == 0 {
                    cell.to_string()
                } else {
                    paint.tone(cell, tone(header.get(c).map_or("", String::as_str), cell))
                }
            });
            out.push_str(&line);
            out.push('\n');
        }
        out
    }
}

/// One row padded to `widths` (cells wider than their column push the rest right, as kubectl's do in a
/// watch), with `paint` applied to each cell's text after its width is measured.
pub fn format_row(row: &[String], widths: &[usize], paint: impl Fn(usize, &str) -> String) -> String {
    let mut line = String::new();
    for (i, cell) in row.iter().enumerate() {
        line.push_str(&paint(i, cell));
        if i + 1 < row.len() {
            let width = widths.get(i).copied().unwrap_or(0);
            let pad = width.saturating_sub(cell.chars().count()) + 3;
            line.extend(std::iter::repeat_n(' ', pad));
        }
    }
    line.trim_end().to_string()
}

/// YAML the way kubectl prints it: block style, two-space indent, list items at their key's level. Long
/// and multi-line strings are quoted rather than folded so that the text reads back byte for byte.
pub fn to_yaml<T: serde::Serialize>(value: &T) -> Result<String, serde_saphyr::SerializeError> {
    yaml(value, false)
}

/// [`to_yaml`] for a person to read line by line, as a diff shows it: multi-line strings as `|` blocks,
/// long ones folded (`>`).
pub fn to_display_yaml<T: serde::Serialize>(value: &T) -> Result<String, serde_saphyr::SerializeError> {
    yaml(value, true)
}

/// The one YAML writer configuration; only how strings are laid out differs between its uses.
fn yaml<T: serde::Serialize>(value: &T, block_scalars: bool) -> Result<String, serde_saphyr::SerializeError> {
    let mut options = serde_saphyr::SerializerOptions::default();
    options.prefer_block_scalars = block_scalars;
    serde_saphyr::to_string_with_options(value, options)
}

/// Several objects as kubectl prints them for `-o yaml|json`: a `v1` `List`.
pub fn list_object(items: Vec<serde_json::Value>) -> serde_json::Value {
    serde_json::json!({ "apiVersion": "v1", "kind": "List", "items": items, "metadata": { "resourceVersion": "" } })
}

/// Progress lines on stderr (what a command is doing, what it did), with the flux CLI's markers.
pub mod progress {
    use super::{Paint, Tone};

    fn line(marker: &str, tone: Tone, msg: impl std::fmt::Display) {
        super::stderr_line(format_args!("{} {msg}", Paint::stderr().tone(marker, tone)));
    }
    pub fn action(msg: impl std::fmt::Display) {
        line("►", Tone::Plain, msg);
    }
    pub fn waiting(msg: impl std::fmt::Display) {
        line("◎", Tone::Plain, msg);
    }
    pub fn success(msg: impl std::fmt::Display) {
        line("✔", Tone::Good, msg);
    }
    pub fn warning(msg: impl std::fmt::Display) {
        line("⚠️", Tone::Warn, msg);
    }
    pub fn failure(msg: impl std::fmt::Display) {
        line("✗", Tone::Bad, msg);
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
    fn suggested_lifecycle_commands_are_the_callers_own_where_it_has_them() {
        assert_eq!(lifecycle_command_of(Face::Kubectl, "resume"), "kubectl cozyhr resume");
        assert_eq!(lifecycle_command_of(Face::Flux, "resume"), "flux cozyhr resume");
        assert_eq!(lifecycle_command_of(Face::Flux, "status"), "flux cozyhr status");
        assert_eq!(lifecycle_command_of(Face::Helm, "resume"), "kubectl cozyhr resume");
        assert_eq!(lifecycle_command_of(Face::Cozyhr, "resume"), "cozyhr resume");
        assert_eq!(lifecycle_command_of(Face::Cozyhr, "reconcile"), "cozyhr reconcile");
        // Go cozyhr's command line has no status: the plugin that has it.
        assert_eq!(lifecycle_command_of(Face::Cozyhr, "status"), "kubectl cozyhr status");
    }

    #[test]
    fn table_pads_like_kubectl() {
        let mut t = Table::new(["NAME", "READY"]);
        t.row(["a-long-name", "True"]);
        t.row(["b", ""]);
        assert_eq!(t.render(), "NAME          READY\na-long-name   True\nb\n");
    }

    #[test]
    fn styled_cells_pad_on_plain_width() {
        let mut t = Table::new(["NAME", "READY", "MESSAGE"]);
        t.row(["a", "True", "ok"]);
        let out = t.render_styled(Paint(true), |h, c| if h == "READY" { status_tone(c) } else { Tone::Plain });
        let plain: String = {
            // Strip ANSI escapes: the visible layout must equal the unstyled one.
            let mut s = String::new();
            let mut esc = false;
            for ch in out.chars() {
                match (esc, ch) {
                    (false, '\u{1b}') => esc = true,
                    (true, 'm') => esc = false,
                    (true, _) => {}
                    (false, c) => s.push(c),
                }
            }
            s
        };
        assert_ne!(out, plain, "colour was applied");
        assert_eq!(plain, t.render());
    }

    #[test]
    fn yaml_is_block_style_and_reads_back() {
        let v = serde_json::json!({"a": {"b": [1, {"c": "x"}]}, "m": "line1\nline2", "long": "w ".repeat(60)});
        let y = to_yaml(&v).unwrap();
        assert!(y.starts_with("a:\n  b:\n  - 1\n  - c: x\n"), "{y}");
        let back: serde_json::Value = serde_saphyr::from_str(&y).unwrap();
        assert_eq!(back, v);
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

/// Writes one line to stderr, where progress, warnings and errors go. Unlike `eprintln!`, a stderr
/// nobody reads any more (`2>&1 | head`) is no panic: the command goes on and ends as it would have,
/// an `apply` included, rather than stopping half-way.
pub fn stderr_line(line: impl std::fmt::Display) {
    clear_status();
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Whether a status line ([`show_status`]) is on the terminal now, without its newline.
static STATUS_SHOWN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Shows `text` as the status line: the last line of a terminal on stderr, rewritten in place (`--watch`
/// says so what it is doing). Whatever this module writes next clears it first, so no output lands after
/// it. The caller shows one only when stderr is a terminal.
pub fn show_status(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "\r\x1b[2K{text}");
    let _ = err.flush();
    STATUS_SHOWN.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Clears the status line, if one is shown.
pub fn clear_status() {
    if STATUS_SHOWN.swap(false, std::sync::atomic::Ordering::Relaxed) {
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K");
        let _ = err.flush();
    }
}

/// Writes data to stdout, all of it. A closed pipe (`| head`, `| less` then `q`) is
/// [`StdoutError::ReaderGone`], which the binaries turn into a quiet exit 0, as ripgrep and kubectl end:
/// it travels as an error so that everything on the way out (temporary files) is dropped as usual.
pub fn write_stdout(bytes: impl AsRef<[u8]>) -> Result<(), StdoutError> {
    clear_status();
    let mut out = std::io::stdout().lock();
    out.write_all(bytes.as_ref()).and_then(|()| out.flush()).map_err(|e| match e.kind() {
        std::io::ErrorKind::BrokenPipe => StdoutError::ReaderGone,
        _ => StdoutError::Io(e),
    })
}

/// Why writing to stdout stopped.
#[derive(Debug, thiserror::Error)]
pub enum StdoutError {
    /// The reader went away: a normal end, not a failure.
    #[error("the reader of the output went away")]
    ReaderGone,
    #[error("writing to stdout: {0}")]
    Io(std::io::Error),
}

impl StdoutError {
    pub fn is_reader_gone(&self) -> bool {
        matches!(self, StdoutError::ReaderGone)
    }
}
