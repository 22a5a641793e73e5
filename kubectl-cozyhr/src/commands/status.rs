//! `status NAME`: one screen about a HelmRelease (rendered by the library, printed on stdout).

use std::process::ExitCode;

use cozyhr::cluster::Cluster;
use cozyhr::flux::{HelmRelease, Objects};
use cozyhr::support::output::Paint;
use cozyhr::views::status::Report;

use crate::cli::StatusArgs;
use cozyhr::support::output::write_stdout;

pub async fn run(cluster: &Cluster, args: &StatusArgs) -> anyhow::Result<ExitCode> {
    let hr = Objects::<HelmRelease>::namespaced(cluster, &cluster.namespace).get(&args.name).await?;
    let report = Report::gather(cluster, hr).await?;
    write_stdout(report.render(Paint::stdout(), jiff::Timestamp::now()))?;
    Ok(ExitCode::SUCCESS)
}
