//! The shell both binaries share around their commands, so they behave alike: bad usage is one
//! `error:` line and exit 1 (as kubectl and helm exit), help goes to stdout, a command's error is one
//! `error:` line and exit 1, and a reader that went away (`| head`) is a normal end. [`complete`] reads
//! a partial command line for a shell's completion.
//!
//! What the faces share lives here, defined once: which face runs ([`face`]), the cluster flags
//! ([`cluster`]), how a diff is printed ([`diff`]), `completion` ([`completion`]), `version`
//! ([`version`]), the lifecycle verbs ([`lifecycle`]), the exit codes ([`exit`]), and the values of
//! `--color` and of a document's `-o` ([`Color`], [`DocumentFormat`]).

pub mod cluster;
pub mod complete;
pub mod completion;
pub mod diff;
pub mod exit;
pub mod face;
pub mod lifecycle;
pub mod version;

use std::process::ExitCode;

pub use cluster::{ClusterFlags, TargetFlags};
pub use exit::Exit;
pub use face::Face;

use clap::error::{ContextKind, ErrorKind};

/// `--color auto|always|never`, as both binaries spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Color {
    #[default]
    Auto,
    Always,
    Never,
}

/// `-o yaml|json` of a command that prints one document (`helm cozy values`, `kubectl cozyhr tree`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DocumentFormat {
    Yaml,
    Json,
}

impl From<Color> for cozyhr::support::output::ColorChoice {
    fn from(c: Color) -> Self {
        match c {
            Color::Auto => Self::Auto,
            Color::Always => Self::Always,
            Color::Never => Self::Never,
        }
    }
}

/// Logs to stderr, filtered by `RUST_LOG` when set, else by `default_filter` (`off` keeps a command
/// quiet: its failures are one `error:` line either way). `uptime` stamps each line with the time since
/// start, for reading where the time goes. The filter is a list of `target=level` and `level` directives,
/// as `RUST_LOG` is usually written (`debug`, `cozyhr=trace,kube=debug`); a `RUST_LOG` that is not such a
/// list falls back to `default_filter`.
pub fn init_logging(default_filter: &str, uptime: bool) {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let parse = |s: &str| s.parse::<tracing_subscriber::filter::Targets>().ok();
    let filter =
        std::env::var("RUST_LOG").ok().and_then(|s| parse(&s)).or_else(|| parse(default_filter)).unwrap_or_default();
    let logs = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let registry = tracing_subscriber::registry().with(filter);
    if uptime {
        registry.with(logs.with_timer(tracing_subscriber::fmt::time::uptime())).init();
    } else {
        registry.with(logs.without_time()).init();
    }
}

/// Parses the command line (with `check` for rules clap cannot express), or ends the process: help and
/// version on stdout with exit 0, anything else one line on stderr with exit 1 ([`Exit`]).
pub fn parse<C: clap::Parser>(check: impl FnOnce(C) -> Result<C, clap::Error>) -> C {
    parse_as(C::command(), check)
}

/// [`parse`] by the command line `cmd` (the derived one, adjusted: see the `cozyhr` face).
pub fn parse_as<C: clap::FromArgMatches>(cmd: clap::Command, check: impl FnOnce(C) -> Result<C, clap::Error>) -> C {
    let parsed = cmd.clone().try_get_matches().and_then(|m| C::from_arg_matches(&m)).and_then(check);
    let error = match parsed {
        Ok(cli) => return cli,
        Err(e) => e,
    };
    match error.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => error.exit(),
        // No subcommand at all: the help, as kubectl and helm print it for a bare command.
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let mut cmd = cmd;
            // A closed stdout is no reason to fail here either.
            let _ = cmd.print_help();
            Exit::Success.exit()
        }
        // Flags but no subcommand: clap lists every subcommand, hidden ones and aliases too; the line names
        // the ones people run.
        ErrorKind::MissingSubcommand => {
            let bin = cmd.get_bin_name().unwrap_or_else(|| cmd.get_name());
            let visible: Vec<&str> =
                cmd.get_subcommands().filter(|s| !s.is_hide_set()).map(clap::Command::get_name).collect();
            cozyhr::support::output::stderr_line(format_args!(
                "error: '{bin}' needs a command ({}); see '{bin} --help'",
                visible.join(", ")
            ));
            Exit::Failure.exit()
        }
        _ => {
            cozyhr::support::output::stderr_line(format_args!("{}", usage_line(&error, &cmd)));
            Exit::Failure.exit()
        }
    }
}

/// clap's error as one line: what is wrong (with the values or arguments clap lists under it), clap's
/// suggestion if it has one, and where the usage is.
pub fn usage_line(error: &clap::Error, cmd: &clap::Command) -> String {
    let rendered = error.render().to_string();
    let mut lines = rendered.lines();
    let first = lines.next().unwrap_or_default().trim();
    let mut line = format!("error: {}", first.strip_prefix("error: ").unwrap_or(first));
    // "the following required arguments were not provided:" and "[possible values: ...]" continue on
    // indented lines up to the first blank one.
    for more in lines.take_while(|l| !l.trim().is_empty()).filter(|l| l.starts_with(' ')) {
        if !more.trim_start().starts_with("tip:") {
            line.push(' ');
            line.push_str(more.trim());
        }
    }
    for (kind, value) in error.context() {
        if matches!(kind, ContextKind::SuggestedArg | ContextKind::SuggestedSubcommand | ContextKind::SuggestedValue) {
            line.push_str(&format!(" (did you mean {value}?)"));
        }
    }
    let bin = cmd.get_bin_name().unwrap_or_else(|| cmd.get_name());
    match subcommand_named(cmd, std::env::args().skip(1)) {
        Some(sub) => line.push_str(&format!("; see '{bin} {sub} --help'")),
        None => line.push_str(&format!("; see '{bin} --help'")),
    }
    line
}

/// The first word of the command line that names a subcommand (or one of its aliases) of `cmd`.
fn subcommand_named(cmd: &clap::Command, args: impl Iterator<Item = String>) -> Option<String> {
    args.take_while(|a| a != "--").find_map(|a| {
        cmd.get_subcommands()
            .find(|s| !s.is_hide_set() && (s.get_name() == a || s.get_all_aliases().any(|alias| alias == a)))
            .map(|s| s.get_name().to_string())
    })
}

/// Runs a command on a single-threaded runtime and turns its result into the exit code: an error is one
/// `error:` line (with its causes) and exit 1; output cut off by its reader is a normal end.
pub fn run(command: impl Future<Output = anyhow::Result<ExitCode>>) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            cozyhr::support::output::stderr_line(format_args!("error: cannot start the async runtime: {e}"));
            return Exit::Failure.into();
        }
    };
    match runtime.block_on(command) {
        Ok(code) => code,
        Err(e) if reader_gone(&e) => ExitCode::SUCCESS,
        Err(e) => {
            cozyhr::support::output::stderr_line(format_args!("error: {e:#}"));
            Exit::Failure.into()
        }
    }
}

/// Whether `e` is standard output's reader going away, as the library or a command reports it.
fn reader_gone(e: &anyhow::Error) -> bool {
    use cozyhr::support::output::StdoutError;
    match e.downcast_ref::<cozyhr::Error>() {
        Some(cozyhr::Error::Stdout(e)) => e.is_reader_gone(),
        _ => e.downcast_ref::<StdoutError>().is_some_and(StdoutError::is_reader_gone),
    }
}
