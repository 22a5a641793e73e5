//! One module per command.

pub mod complete;
mod completion;
mod drift;
mod status;
mod tree;
mod version;

use std::process::ExitCode;

use cozyhr::cluster::Cluster;
use cozyhr_shell::lifecycle;

use crate::cli::{Cli, ClusterFlags, Command, Face};

pub async fn run(cli: Cli, face: Face) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Get(args) => lifecycle::get(&connect(&cli.cluster).await?, &args).await,
        Command::Suspend(args) => lifecycle::suspend(&connect(&cli.cluster).await?, &args).await,
        Command::Resume(args) => lifecycle::resume(&connect(&cli.cluster).await?, &args).await,
        Command::Reconcile(args) => lifecycle::reconcile(&connect(&cli.cluster).await?, &args).await,
        Command::Status(args) => {
            // status reaches the release's own cluster too, to say whether it can be reached from here.
            let options = cozyhr::cluster::ClusterOptions { target: args.target.options(), ..cli.cluster.options() };
            status::run(&options.connect().await?, &args).await
        }
        Command::Tree(args) => tree::run(&connect(&cli.cluster).await?, &args).await,
        Command::Drift(args) => {
            // The release may live in another cluster (spec.kubeConfig), reached as status reaches it.
            let options = cozyhr::cluster::ClusterOptions { target: args.target.options(), ..cli.cluster.options() };
            drift::run(&options.connect().await?, &args).await
        }
        Command::Completion(args) => completion::run(face, &args),
        Command::Version(args) => version::run(face, &args, &cli.cluster.options()).await,
    }
}

async fn connect(flags: &ClusterFlags) -> anyhow::Result<Cluster> {
    Ok(flags.options().connect().await?)
}
