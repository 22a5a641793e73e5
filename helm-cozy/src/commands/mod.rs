//! One module per command.

mod completion;
mod version;

use std::process::ExitCode;

use crate::cli::{Cli, Command};

pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Show(_) => anyhow::bail!("show: not wired yet"),
        Command::PostRender => {
            cozyhr::render::postrender::main_post_render().await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Completion(args) => completion::run(&args),
        Command::Version => version::run(),
    }
}
