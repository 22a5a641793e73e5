//! One module per command.

mod apply;
mod completion;
mod context;
mod delete;
mod diff;
mod show;
mod values;
mod version;

use std::process::ExitCode;

use crate::cli::{Cli, Command};

pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match &cli.command {
        Command::Show(args) => show::run(&cli.cluster, &cli.chart_dir, args).await,
        Command::Values(args) => values::run(&cli.cluster, &cli.chart_dir, args).await,
        Command::Diff(args) => diff::run(&cli.cluster, &cli.chart_dir, args).await,
        Command::Apply(args) => apply::run(&cli.cluster, &cli.chart_dir, args).await,
        Command::Delete(args) => delete::run(&cli.cluster, &cli.chart_dir, args).await,
        Command::PostRender => {
            cozyhr::render::postrender::main_post_render().await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Completion(args) => completion::run(args),
        Command::Version => version::run(),
    }
}
