//! One module per command.

mod completion;
mod version;

use std::process::ExitCode;

use crate::cli::{Cli, Command};

pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Completion(args) => completion::run(&args),
        Command::Version => version::run(),
    }
}
