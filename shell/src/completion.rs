//! `completion SHELL` of every face: the script clap_complete writes for the command line.

use std::process::ExitCode;

use clap::Args;

#[derive(Debug, Args)]
pub struct CompletionArgs {
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// The completion script of command line `full`, for the program named `name`.
pub fn generate(full: clap::Command, name: &'static str, args: &CompletionArgs) -> anyhow::Result<ExitCode> {
    // Generated into memory first: clap_complete writes with unchecked writes that would panic on a
    // closed pipe.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut completable(full, name), name, &mut script);
    cozyhr::support::output::write_stdout(&script)?;
    Ok(ExitCode::SUCCESS)
}

/// The command line without its hidden subcommands (`__post-render`, which helm runs, not people):
/// clap_complete offers hidden subcommands like any other, and clap cannot remove a subcommand, so the
/// top level is built again from the full one's parts, leaving them out.
pub fn completable(full: clap::Command, name: &'static str) -> clap::Command {
    // Names and versions are static strings to clap: these are the ones the faces give (the tests check).
    let mut cmd = clap::Command::new(name)
        .version(cozyhr::VERSION)
        .propagate_version(full.is_propagate_version_set())
        .subcommand_required(full.is_subcommand_required_set())
        .arg_required_else_help(full.is_arg_required_else_help_set())
        .args(full.get_arguments().cloned())
        .groups(full.get_groups().cloned())
        .subcommands(full.get_subcommands().filter(|s| !s.is_hide_set()).cloned());
    if let Some(bin) = full.get_bin_name() {
        cmd = cmd.bin_name(bin.to_owned());
    }
    if let Some(about) = full.get_about() {
        cmd = cmd.about(about.clone());
    }
    if let Some(about) = full.get_long_about() {
        cmd = cmd.long_about(about.clone());
    }
    cmd
}
