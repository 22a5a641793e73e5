//! How a diff is printed and what its exit code says, for every command that prints one: `helm cozy
//! diff` and `review` (and `cozyhr diff`), and `kubectl cozyhr drift`.

use std::process::ExitCode;

use clap::Args;

use crate::Color;
use crate::exit::Exit;

/// The values of a diff's `-o`: each command prints the formats it has.
pub trait DiffOutput: clap::ValueEnum + Clone + Send + Sync + std::fmt::Debug + 'static {
    /// The format without `-o`, as `-o` spells it.
    const DEFAULT: &'static str;
    /// The help of `-o` (without a closing period, as clap shows doc comments).
    const HELP: &'static str;
}

/// What a diff shows and what its exit code says.
#[derive(Debug, Args)]
pub struct DiffPrintFlags<F: DiffOutput = DiffFormat> {
    /// Print Secret values instead of masking them.
    #[arg(long = "show-secrets")]
    pub show_secrets: bool,

    /// Exit with 2 when there are changes (0 when none, 1 on error).
    #[arg(long = "detailed-exitcode")]
    pub detailed_exitcode: bool,

    #[arg(short = 'o', long = "output", value_enum, default_value = F::DEFAULT, help = F::HELP, value_name = "FORMAT")]
    pub output: F,
}

impl<F: DiffOutput> DiffPrintFlags<F> {
    /// How the plan compares: Secrets masked unless --show-secrets.
    pub fn plan_options(&self) -> cozyhr::compare::diff::PlanOptions {
        cozyhr::compare::diff::PlanOptions { show_secrets: self.show_secrets, ..Default::default() }
    }

    /// The exit code of a diff that found `changed`: [`Exit::Changes`] with --detailed-exitcode.
    pub fn exit_code(&self, changed: bool) -> ExitCode {
        Exit::changes_if(self.detailed_exitcode, changed).into()
    }
}

impl DiffPrintFlags<DiffFormat> {
    pub fn format(&self) -> cozyhr::compare::diff::Format {
        match self.output {
            DiffFormat::Diff => cozyhr::compare::diff::Format::Diff,
            DiffFormat::Summary => cozyhr::compare::diff::Format::Summary,
            DiffFormat::Json => cozyhr::compare::diff::Format::Json,
            DiffFormat::Markdown => cozyhr::compare::diff::Format::Markdown,
        }
    }
}

/// `-o` of a chart's diff (`diff`, `review`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DiffFormat {
    Diff,
    Summary,
    Json,
    Markdown,
}

impl DiffOutput for DiffFormat {
    const DEFAULT: &'static str = "diff";
    const HELP: &'static str = "Output format: a unified diff per object, only the object list and plan, JSON, or Markdown for a pull-request comment (collapsible diffs, under 65,536 characters). Over several releases (--all, review) a table of them comes first; summary prints the table alone";
}

/// How a chart's diff is laid out (`kubectl cozyhr` has a global `--color`, and its `--context` is the
/// kubeconfig's: drift prints with the default context).
#[derive(Debug, Args)]
pub struct DiffLayoutFlags {
    /// Lines of context around each change; -1 prints whole objects.
    #[arg(long, default_value_t = 3, allow_negative_numbers = true, value_name = "N")]
    pub context: i64,

    /// When to colour the diff.
    #[arg(long, value_enum, default_value_t = Color::Auto, value_name = "WHEN")]
    pub color: Color,
}

impl DiffLayoutFlags {
    /// How the plan is printed: context lines, and colour when stdout is a terminal that takes it.
    pub fn render_options(&self) -> cozyhr::compare::diff::RenderOptions {
        let color = cozyhr::support::output::ColorChoice::from(self.color).for_stdout();
        cozyhr::compare::diff::RenderOptions::with_context_flag(self.context, color)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        print: DiffPrintFlags,
    }

    #[test]
    fn the_default_format_is_a_value_of_the_format() {
        let cli = Cli::try_parse_from(["cli"]).expect("parses");
        assert_eq!(cli.print.output, DiffFormat::Diff);
        assert_eq!(cli.print.exit_code(true), ExitCode::SUCCESS);
        let cli = Cli::try_parse_from(["cli", "-o", "json", "--detailed-exitcode"]).expect("parses");
        assert_eq!(cli.print.output, DiffFormat::Json);
        assert_eq!(cli.print.exit_code(true), ExitCode::from(Exit::Changes));
        assert_eq!(cli.print.exit_code(false), ExitCode::SUCCESS);
    }
}
