//! One module per command.

pub mod complete;
mod drift;
mod status;
mod tree;

use std::process::ExitCode;

use cozyhr_shell::{Face, lifecycle};

use crate::cli::{Cli, Command};

pub async fn run(cli: Cli, face: Face) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Get(args) => lifecycle::get(&cli.cluster.connect().await?, &args).await,
        Command::Suspend(args) => lifecycle::suspend(&cli.cluster.connect().await?, &args).await,
        Command::Resume(args) => lifecycle::resume(&cli.cluster.connect().await?, &args).await,
        Command::Reconcile(args) => lifecycle::reconcile(&cli.cluster.connect().await?, &args).await,
        Command::Status(args) => {
            // status reaches the release's own cluster too, to say whether it can be reached from here.
            status::run(&cli.cluster.connect_for(&args.target).await?, &args).await
        }
        Command::Tree(args) => tree::run(&cli.cluster.connect().await?, &args).await,
        Command::Drift(args) => {
            // The release may live in another cluster (spec.kubeConfig), reached as status reaches it.
            drift::run(&cli.cluster.connect_for(&args.target).await?, &args).await
        }
        // The script for the program `face` names (`kubectl-cozyhr`, or `flux-cozyhr` run on its own).
        Command::Completion(args) => {
            cozyhr_shell::completion::generate(crate::cli::command(face), face.program(), &args)
        }
        Command::Version(args) => {
            cozyhr_shell::version::version(face.program(), &args, &cli.cluster.options(), false).await
        }
    }
}
