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
        Command::Show(args) => stop_on_signal(show::run(&cli.cluster, &cli.chart_dir, args)).await,
        Command::Values(args) => stop_on_signal(values::run(&cli.cluster, &cli.chart_dir, args)).await,
        Command::Diff(args) => stop_on_signal(diff::run(&cli.cluster, &cli.chart_dir, args)).await,
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

/// The reader of our output went away (`| head`, `| less` then `q`): a normal end, as in ripgrep. Carried
/// as an error so that everything on the way out (temporary files) is dropped as usual.
#[derive(Debug, thiserror::Error)]
#[error("the reader of the output went away")]
pub struct ReaderGone;

/// Writes data to stdout; a closed pipe becomes [`ReaderGone`].
pub fn write_stdout(bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(ReaderGone.into()),
        other => Ok(other?),
    }
}

/// Exit status after SIGINT/SIGTERM, as shells report a process stopped by SIGINT.
const INTERRUPTED: u8 = 130;

/// Runs a command that changes nothing until SIGINT or SIGTERM. On a signal the command is dropped, so
/// its temporary files (values, which may hold Secret data) are removed and its helm child is killed.
async fn stop_on_signal(command: impl Future<Output = anyhow::Result<ExitCode>>) -> anyhow::Result<ExitCode> {
    let interrupted = cozyhr::render::interrupted();
    tokio::select! {
        result = command => result,
        signal = interrupted => {
            eprintln!("helm cozy: interrupted by {signal}; nothing was changed");
            Ok(ExitCode::from(INTERRUPTED))
        }
    }
}
