//! `get|list|ls [NAME...]`: a table like `flux get hr`, `-o wide|yaml|json|name`, `-l`, `-A`, `-w`.

use std::collections::HashMap;
use std::pin::pin;
use std::process::ExitCode;

use anyhow::{Context, bail};
use cozyhr::Error;
use cozyhr::cluster::Cluster;
use cozyhr::flux::table::Columns;
use cozyhr::flux::{FluxObject, HelmRelease, Objects};
use cozyhr::output::{self, Paint, Table, Tone};
use futures::StreamExt;
use kube::Resource;
use kube::runtime::watcher::Event;
use serde_json::Value;

use crate::cli::{GetArgs, Output};
use cozyhr::output::write_stdout;

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
    let view =
        View { format: args.output, columns: Columns { all_namespaces: all, wide: args.output == Some(Output::Wide) } };
    if args.watch {
        return watch(&objects, args, &view, cluster).await;
    }

    let mut items = Vec::new();
    let mut missing = Vec::new();
    if args.names.is_empty() {
        items = objects.list(args.selector.as_deref()).await?;
    } else {
        for name in &args.names {
            match objects.get(name).await {
                Ok(hr) => items.push(hr),
                // Like kubectl: print what exists, report each missing name, exit 1.
                Err(e @ Error::NotFound { .. }) => missing.push(e),
                Err(e) => return Err(e.into()),
            }
        }
    }
    if items.is_empty() && missing.is_empty() {
        cozyhr::output::stderr_line(format_args!("{}", no_resources(if all { "" } else { &cluster.namespace })));
        return Ok(ExitCode::SUCCESS);
    }
    if !items.is_empty() {
        // One named object prints as itself, anything else as a List, as kubectl does.
        let single = args.names.len() == 1;
        write_stdout(&view.render_all(&items, single)?)?;
    }
    for e in &missing {
        cozyhr::output::stderr_line(format_args!("error: {e}"));
    }
    Ok(if missing.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// kubectl's wording for an empty result (on stderr, exit 0).
fn no_resources(namespace: &str) -> String {
    if namespace.is_empty() {
        "No resources found".into()
    } else {
        format!("No resources found in {namespace} namespace.")
    }
}

struct View {
    format: Option<Output>,
    columns: Columns,
}

impl View {
    fn is_table(&self) -> bool {
        matches!(self.format, None | Some(Output::Wide))
    }

    fn table(&self, items: &[HelmRelease]) -> Table {
        self.columns.table(items, jiff::Timestamp::now())
    }

    fn render_all(&self, items: &[HelmRelease], single: bool) -> anyhow::Result<String> {
        match self.format {
            None | Some(Output::Wide) => Ok(self.table(items).render_styled(Paint::stdout(), tone)),
            Some(Output::Name) => Ok(items.iter().map(|hr| format!("{}\n", name_of(hr))).collect()),
            Some(format) => {
                let mut values = items.iter().map(object_value).collect::<anyhow::Result<Vec<_>>>()?;
                let value = match (single, values.len()) {
                    (true, 1) => values.remove(0),
                    _ => output::list_object(values),
                };
                encode(format, &value)
            }
        }
    }

    /// One object as a watch prints it: a table row padded to the header's widths, or a document.
    fn render_one(&self, hr: &HelmRelease, widths: &[usize]) -> anyhow::Result<String> {
        match self.format {
            None | Some(Output::Wide) => {
                let row = self.columns.row(hr, jiff::Timestamp::now());
                let header = self.columns.header::<HelmRelease>();
                let paint = Paint::stdout();
                let line = output::format_row(&row, widths, |c, cell| paint.tone(cell, tone(header[c], cell)));
                Ok(format!("{line}\n"))
            }
            Some(Output::Name) => Ok(format!("{}\n", name_of(hr))),
            Some(Output::Yaml) => Ok(format!("---\n{}", encode(Output::Yaml, &object_value(hr)?)?)),
            Some(format) => encode(format, &object_value(hr)?),
        }
    }
}

fn tone(header: &str, cell: &str) -> Tone {
    match header {
        "READY" => output::status_tone(cell),
        "SUSPENDED" if cell == "True" => Tone::Warn,
        _ => Tone::Plain,
    }
}

fn name_of(hr: &HelmRelease) -> String {
    HelmRelease::flux_kind(&()).resource_name(hr.name())
}

/// The object as kubectl prints it: without `metadata.managedFields` (kubectl hides them by default).
fn object_value(hr: &HelmRelease) -> anyhow::Result<Value> {
    let mut v = serde_json::to_value(hr).context("encoding a HelmRelease")?;
    if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    Ok(v)
}

fn encode(format: Output, value: &Value) -> anyhow::Result<String> {
    Ok(match format {
        Output::Yaml => output::to_yaml(value).context("encoding YAML")?,
        _ => {
            // kubectl indents JSON by four spaces.
            let mut buf = Vec::new();
            let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
            serde::Serialize::serialize(value, &mut serde_json::Serializer::with_formatter(&mut buf, fmt))
                .context("encoding JSON")?;
            let mut s = String::from_utf8(buf).context("encoding JSON")?;
            s.push('\n');
            s
        }
    })
}

/// `-w`: the current objects first (table with header), then one row per change until Ctrl-C. A row is
/// printed only when what it shows changed, so status heartbeats do not repeat identical lines.
async fn watch(
    objects: &Objects<HelmRelease>,
    args: &GetArgs,
    view: &View,
    cluster: &Cluster,
) -> anyhow::Result<ExitCode> {
    let wanted = |hr: &HelmRelease| args.names.is_empty() || args.names.iter().any(|n| n == hr.name());
    let key = |hr: &HelmRelease| (hr.meta().namespace.clone().unwrap_or_default(), hr.name().to_string());
    let mut stream = pin!(objects.watch(args.selector.as_deref()));
    let mut ctrl_c = pin!(tokio::signal::ctrl_c());
    let mut batch: Vec<HelmRelease> = Vec::new();
    let mut shown: HashMap<(String, String), String> = HashMap::new();
    let mut widths: Option<Vec<usize>> = None;
    loop {
        let event = tokio::select! {
            _ = &mut ctrl_c => return Ok(ExitCode::SUCCESS),
            event = stream.next() => event,
        };
        let Some(event) = event else { return Ok(ExitCode::SUCCESS) };
        let changed: Vec<HelmRelease> = match event {
            // Before the first listing completes an error is fatal (no CRD, forbidden, unreachable);
            // afterwards the watcher re-lists with backoff, so a blip is only reported.
            Err(e) if widths.is_none() => return Err(e.into()),
            Err(e) => {
                output::progress::warning(format!("watch interrupted, retrying: {e}"));
                continue;
            }
            Ok(Event::Init) => {
                batch.clear();
                continue;
            }
            Ok(Event::InitApply(hr)) => {
                if wanted(&hr) {
                    batch.push(hr);
                }
                continue;
            }
            Ok(Event::InitDone) if widths.is_none() => {
                batch.sort_by_key(key);
                let table = view.table(&batch);
                if batch.is_empty() {
                    cozyhr::output::stderr_line(format_args!(
                        "{}",
                        no_resources(if args.scope.all_namespaces { "" } else { &cluster.namespace })
                    ));
                } else if view.is_table() {
                    write_stdout(table.render_styled(Paint::stdout(), tone))?;
                }
                widths = Some(table.widths());
                if view.is_table() {
                    for hr in &batch {
                        shown.insert(key(hr), view.render_one(hr, &[])?);
                    }
                    continue;
                }
                std::mem::take(&mut batch)
            }
            Ok(Event::InitDone) => std::mem::take(&mut batch),
            Ok(Event::Apply(hr)) => vec![hr],
            Ok(Event::Delete(hr)) => {
                if wanted(&hr) {
                    shown.remove(&key(&hr));
                    write_stdout(&view.render_one(&hr, widths.as_deref().unwrap_or_default())?)?;
                }
                continue;
            }
        };
        for hr in changed.iter().filter(|hr| wanted(hr)) {
            // Compare on the unpadded rendering: widths do not change what a row says.
            let fingerprint = view.render_one(hr, &[])?;
            if shown.get(&key(hr)) == Some(&fingerprint) {
                continue;
            }
            shown.insert(key(hr), fingerprint);
            write_stdout(&view.render_one(hr, widths.as_deref().unwrap_or_default())?)?;
        }
    }
}
