use std::process::ExitCode;

use cozyhr::cluster::ClusterOptions;
use cozyhr_shell::version::VersionArgs;

use crate::cli::Face;

pub async fn run(face: Face, args: &VersionArgs, cluster: &ClusterOptions) -> anyhow::Result<ExitCode> {
    cozyhr_shell::version::version(face.program(), args, cluster, false).await
}
