//! `helm cozy delete NAME`: uninstall the release and keep Flux from reinstalling it.

use std::process::ExitCode;

use cozyhr_shell::ClusterFlags;

use crate::cli::DeleteArgs;

pub async fn run(cluster: &ClusterFlags, args: &DeleteArgs) -> anyhow::Result<ExitCode> {
    let helm = cozyhr::render::Helm::locate().await?;
    let cluster = cluster.connect_for(&args.target).await?;
    cozyhr::apply::delete(&cluster, &helm, &args.name, args.timeout).await?;
    Ok(ExitCode::SUCCESS)
}
