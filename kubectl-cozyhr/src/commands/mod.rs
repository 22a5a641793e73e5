//! One module per command.

pub mod complete;
mod completion;
mod get;
mod reconcile;
mod status;
mod suspend;
mod version;

use std::process::ExitCode;

use anyhow::Context;
use cozyhr::cluster::Cluster;

use crate::cli::{Cli, ClusterFlags, Command};

pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Get(args) => get::run(&connect(&cli.cluster).await?, &args).await,
        Command::Suspend(args) => suspend::suspend(&connect(&cli.cluster).await?, &args).await,
        Command::Resume(args) => suspend::resume(&connect(&cli.cluster).await?, &args).await,
        Command::Reconcile(args) => reconcile::run(&connect(&cli.cluster).await?, &args).await,
        Command::Status(args) => status::run(&connect(&cli.cluster).await?, &args).await,
        Command::Completion(args) => completion::run(&args),
        Command::Version => version::run(),
    }
}

async fn connect(flags: &ClusterFlags) -> anyhow::Result<Cluster> {
    Ok(flags.options().connect().await?)
}

/// Writes data to stdout; a closed pipe (`| head`) ends the program quietly like kubectl.
fn print(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        other => other.context("writing to stdout"),
    }
}
