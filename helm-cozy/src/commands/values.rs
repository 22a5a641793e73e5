//! `helm cozy values NAME`: the values Flux would compose, and where each top-level key came from.

use std::process::ExitCode;

use cozyhr::pipeline::Pipeline;
use cozyhr::source::ReleaseSource;
use cozyhr::support::output::Table;
use serde_json::Value;

use cozyhr_shell::{ClusterFlags, DocumentFormat};

use crate::cli::ValuesArgs;
use crate::commands::helmrelease_hint;

pub async fn run(cluster: &ClusterFlags, chart_dir: &std::path::Path, args: &ValuesArgs) -> anyhow::Result<ExitCode> {
    let pipeline = Pipeline::open(chart_dir).await?;
    let desired = match args.release.source(false, cluster.options().namespace)? {
        ReleaseSource::Files(files) => {
            let namespace = files.namespace.as_deref().unwrap_or("default");
            pipeline.desired_from_files(&files, namespace, &args.name, &args.values.user())?
        }
        ReleaseSource::Cluster | ReleaseSource::ChartDefaults => {
            let cluster = cluster.connect().await?;
            pipeline.desired(&cluster, &args.name, &args.values.user()).await.map_err(helmrelease_hint)?
        }
    };
    let composed = &desired.composed;
    if args.sources {
        let (values, sources) = if args.with_defaults {
            (&composed.coalesced, &composed.coalesced_sources)
        } else {
            (&composed.values, &composed.sources)
        };
        let mut table = Table::new(["KEY", "SOURCE"]);
        for key in values.keys() {
            table.row([key.clone(), sources.get(key).map(ToString::to_string).unwrap_or_default()]);
        }
        cozyhr::support::output::write_stdout(table.render())?;
        return Ok(ExitCode::SUCCESS);
    }
    let values = Value::Object(if args.with_defaults { composed.coalesced.clone() } else { composed.values.clone() });
    let text = match args.output {
        DocumentFormat::Json => format!("{}\n", cozyhr::values::to_go_json_pretty(&values)),
        DocumentFormat::Yaml => cozyhr::compare::diff::to_yaml(&values)?,
    };
    cozyhr::support::output::write_stdout(text)?;
    Ok(ExitCode::SUCCESS)
}
