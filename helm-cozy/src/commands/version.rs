use std::process::ExitCode;

use cozyhr::cluster::ClusterOptions;
use cozyhr_shell::version::VersionArgs;

pub async fn run(args: &VersionArgs, cluster: &ClusterOptions) -> anyhow::Result<ExitCode> {
    cozyhr_shell::version::version("helm-cozy", args, cluster, true).await
}
