use std::process::ExitCode;

use clap::CommandFactory;

use crate::cli::{Cli, CompletionArgs};

pub fn run(args: &CompletionArgs) -> anyhow::Result<ExitCode> {
    // Generated into memory first: clap_complete writes with unchecked writes that would panic on a
    // closed pipe.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "helm-cozy", &mut script);
    cozyhr::output::write_stdout(&script)?;
    Ok(ExitCode::SUCCESS)
}
