//! `helm cozy values NAME`: the values Flux would compose, and (`--sources`) where each leaf came from.

use std::process::ExitCode;

use cozyhr::render::Tools;
use cozyhr::resolve::ChartPlace;
use cozyhr::resolve::ReleaseSource;
use cozyhr::resolve::Resolver;
use serde_json::Value;

use cozyhr_shell::{ClusterFlags, DocumentFormat};

use crate::cli::ValuesArgs;
use crate::commands::or_what_is_there;

pub async fn run(cluster: &ClusterFlags, place: &ChartPlace, args: &ValuesArgs) -> anyhow::Result<ExitCode> {
    let place = &args.chart_version.place(place)?;
    let desired = match args.release.source(false, cluster.options().namespace)? {
        ReleaseSource::Files(files) => {
            let namespace = files.namespace.as_deref().unwrap_or("default");
            let resolver = Resolver::open_place(place, Tools::locate().await?)?
                .for_release_files(&files, &args.name, namespace)
                .await?;
            resolver.desired_from_files(&files, namespace, &args.name, &args.values.user())?
        }
        ReleaseSource::Cluster | ReleaseSource::ChartDefaults => {
            let opened = Resolver::open_place(place, Tools::locate().await?)?;
            let cluster = cluster.connect().await?;
            let resolver = or_what_is_there(opened.for_release(&cluster, &args.name).await, &cluster, None).await?;
            let desired = resolver.desired(&cluster, &args.name, &args.values.user()).await;
            or_what_is_there(desired, &cluster, Some(&resolver.chart)).await?
        }
    };
    let composed = &desired.composed;
    let text = if args.sources {
        // Every leaf with its value (from Secrets masked) and the source that set it.
        let doc = cozyhr::values::sources_document(&composed.leaves(args.with_defaults));
        match args.output {
            DocumentFormat::Json => format!("{}\n", cozyhr::values::to_go_json_pretty(&doc)),
            DocumentFormat::Yaml => cozyhr::support::output::to_display_yaml(&doc)?,
        }
    } else {
        let values =
            Value::Object(if args.with_defaults { composed.coalesced.clone() } else { composed.values.clone() });
        match args.output {
            DocumentFormat::Json => format!("{}\n", cozyhr::values::to_go_json_pretty(&values)),
            DocumentFormat::Yaml => cozyhr::compare::diff::to_yaml(&values)?,
        }
    };
    cozyhr::support::output::write_stdout(text)?;
    Ok(ExitCode::SUCCESS)
}
