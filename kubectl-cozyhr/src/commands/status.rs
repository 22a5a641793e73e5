//! `status NAME`: one screen about a HelmRelease (rendered by the library, printed on stdout).

use std::process::ExitCode;

use cozyhr::cluster::Cluster;
use cozyhr::flux::report::Report;
use cozyhr::flux::{HelmRelease, Objects};
use cozyhr::output::Paint;

use crate::cli::StatusArgs;
use cozyhr::output::write_stdout;

pub async fn run(cluster: &Cluster, args: &StatusArgs) -> anyhow::Result<ExitCode> {
    let hr = Objects::<HelmRelease>::namespaced(cluster, &cluster.namespace).get(&args.name).await?;
    let report = Report::gather(cluster, hr).await?;
    write_stdout(report.render(Paint::stdout(), jiff::Timestamp::now()))?;
    Ok(ExitCode::SUCCESS)
}
