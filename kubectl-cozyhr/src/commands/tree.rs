//! `tree NAME`: the dependsOn graph around a HelmRelease, built by the library from one LIST of
//! HelmReleases (and a read of each object of another kind its releases name); a tree on stdout, or
//! `-o json|yaml`.

use std::process::ExitCode;

use cozyhr::Error;
use cozyhr::cluster::Cluster;
use cozyhr::support::output::{Paint, progress, write_stdout};
use cozyhr::views::get::Format;
use cozyhr::views::tree::{Listing, Ref};

use cozyhr_shell::DocumentFormat;

use crate::cli::TreeArgs;

pub async fn run(cluster: &Cluster, args: &TreeArgs) -> anyhow::Result<ExitCode> {
    let listing = Listing::fetch(cluster).await?;
    if let Some(note) = listing.note() {
        progress::warning(note);
    }
    let mut graph = listing.graph();
    let root = Ref::new(&cluster.namespace, &args.name);
    if graph.get(&root).is_none() {
        let namespace = cluster.namespace.clone();
        return Err(Error::NotFound { kind: "helmrelease", name: args.name.clone(), namespace }.into());
    }
    graph.read_objects(cluster, &root).await;
    let tree = graph.tree(&root);
    let text = match args.output {
        None => tree.render(Paint::stdout()),
        Some(DocumentFormat::Json) => tree.document(Format::Json)?,
        Some(DocumentFormat::Yaml) => tree.document(Format::Yaml)?,
    };
    write_stdout(text)?;
    Ok(ExitCode::SUCCESS)
}
