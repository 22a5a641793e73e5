use std::process::ExitCode;

use clap::CommandFactory;

use crate::cli::{Cli, CompletionArgs};

pub fn run(args: &CompletionArgs) -> anyhow::Result<ExitCode> {
    generate(Cli::command(), "helm-cozy", args)
}

/// The completion script of command line `full`, for the program named `name`.
pub fn generate(full: clap::Command, name: &'static str, args: &CompletionArgs) -> anyhow::Result<ExitCode> {
    // Generated into memory first: clap_complete writes with unchecked writes that would panic on a
    // closed pipe.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut completable(full, name), name, &mut script);
    cozyhr::output::write_stdout(&script)?;
    Ok(ExitCode::SUCCESS)
}

/// The command line without its hidden subcommands (`__post-render`, which helm runs, not people):
/// clap_complete offers hidden subcommands like any other, and clap cannot remove a subcommand, so the
/// top level is built again from the full one's parts, leaving them out.
fn completable(full: clap::Command, name: &'static str) -> clap::Command {
    // Names and versions are static strings to clap: these are the ones cli.rs gives (the test checks).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completable_is_the_full_command_but_its_hidden_subcommands() {
        let (mut full, mut completable) = (Cli::command(), completable(Cli::command(), "helm-cozy"));
        let visible = |cmd: &clap::Command| -> Vec<String> {
            cmd.get_subcommands().filter(|s| !s.is_hide_set()).map(|s| s.get_name().to_owned()).collect()
        };
        assert_eq!(completable.get_name(), full.get_name());
        assert_eq!(visible(&completable), visible(&full));
        assert!(completable.get_subcommands().all(|s| !s.is_hide_set()));
        assert!(full.get_subcommands().any(|s| s.is_hide_set()), "nothing hidden: completable is not needed");
        // Whatever a user sees of the top level (help lists no hidden subcommand) is the same.
        assert_eq!(completable.render_long_help().to_string(), full.render_long_help().to_string());
        assert_eq!(completable.render_long_version(), full.render_long_version());
        completable.debug_assert();
    }
}
