//! `get|list|ls [NAME...]`: a table like `flux get hr`, `-o wide|yaml|json|name`, `-l`, `--status-selector`,
//! `-A`, `-w`.

use std::process::ExitCode;

use anyhow::bail;
use cozyhr::cluster::Cluster;
use cozyhr::flux::get::{self, Format, View, Watch};
use cozyhr::flux::{FluxObject, HelmRelease, Objects};
use cozyhr::output::{Paint, stderr_line, write_stdout};

use crate::cli::{GetArgs, Output};

pub async fn run(cluster: &Cluster, args: &GetArgs) -> anyhow::Result<ExitCode> {
    let all = args.scope.all_namespaces;
    if all && !args.names.is_empty() {
        bail!("a HelmRelease cannot be retrieved by name across all namespaces: drop -A or the names");
    }
    if args.selector.is_some() && !args.names.is_empty() {
        bail!("names cannot be combined with a label selector (-l)");
    }
    let objects =
        if all { Objects::<HelmRelease>::all(cluster) } else { Objects::namespaced(cluster, &cluster.namespace) };
    let view = View::new(format(args.output), all, objects.kind(), Paint::stdout());
    let scope = if all { "" } else { &cluster.namespace };
    if args.watch {
        let watch_view = Watch::new(view, &args.names, scope).with_status_selector(args.status_selector.clone());
        watch_view.follow(&objects, args.selector.as_deref()).await?;
        return Ok(ExitCode::SUCCESS);
    }

    let (mut items, missing) = get::fetch(&objects, &args.names, args.selector.as_deref()).await?;
    if let Some(status) = &args.status_selector {
        items.retain(|hr| status.matches(hr.conditions()));
    }
    if items.is_empty() && missing.is_empty() {
        stderr_line(get::no_resources(scope));
        return Ok(ExitCode::SUCCESS);
    }
    if !items.is_empty() {
        let single = args.names.len() == 1;
        write_stdout(view.render(&items, single, jiff::Timestamp::now())?)?;
    }
    // Like kubectl: what exists is printed, then each missing name, and the exit code is 1.
    for e in &missing {
        stderr_line(format_args!("error: {e}"));
    }
    Ok(if missing.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

fn format(output: Option<Output>) -> Format {
    match output {
        None => Format::Table,
        Some(Output::Wide) => Format::Wide,
        Some(Output::Yaml) => Format::Yaml,
        Some(Output::Json) => Format::Json,
        Some(Output::Name) => Format::Name,
    }
}
