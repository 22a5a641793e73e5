//! `helm cozy diff --all`: every release of the chart diffed as the single diff does (its own values,
//! names and post-rendering), several at a time, then a summary table and the diffs, in the set's order.
//! An error in one release is its row's; the others still run.

use futures::StreamExt as _;
use kube::ResourceExt as _;

use crate::cluster::Cluster;
use crate::compare::Against;
use crate::compare::diff::{Format, Plan, PlanOptions, RenderOptions};
use crate::desired::UserValues;
use crate::flux::HelmRelease;
use crate::pipeline::{DiffAgainst, DiffRequest, Pipeline};
use crate::support::output::{StdoutError, Table, Tone};

/// One release's diff, or why there is none.
pub struct Entry {
    pub namespace: String,
    pub name: String,
    pub outcome: Result<Plan, String>,
}

/// What every release of the set is diffed with: the user's values and flags, as for one release.
pub struct Common<'a> {
    pub user: &'a UserValues,
    pub against: Against,
    pub options: PlanOptions,
}

/// Diffs every release of `set`, `concurrency` at a time; the entries come back in the set's order.
pub async fn diff_all(
    pipeline: &Pipeline,
    cluster: &Cluster,
    set: &[HelmRelease],
    common: &Common<'_>,
    concurrency: usize,
) -> Vec<Entry> {
    let runs = set.iter().map(|hr| async move {
        let (namespace, name) = (hr.namespace().to_string(), hr.name_any());
        let here = cluster.in_namespace(&namespace);
        let request = DiffRequest {
            name: &name,
            user: common.user,
            against: DiffAgainst::Cluster(common.against),
            source: &crate::source::ReleaseSource::Cluster,
            offline_view: Default::default(),
            options: common.options,
        };
        let outcome = pipeline.diff_request(Some(&here), &request).await.map_err(|e| e.to_string());
        Entry { namespace, name, outcome }
    });
    futures::stream::iter(runs).buffered(concurrency.max(1)).collect().await
}

/// Whether any release failed to diff.
pub fn any_error(entries: &[Entry]) -> bool {
    entries.iter().any(|e| e.outcome.is_err())
}

/// Whether any release would change.
pub fn any_change(entries: &[Entry]) -> bool {
    entries.iter().any(|e| e.outcome.as_ref().is_ok_and(Plan::has_changes))
}

/// Prints the set's diffs as `format` asks: JSON as one array (an entry per release: its plan, or its
/// error); otherwise the summary table first, then each release's diff under a heading.
pub fn print(entries: &[Entry], format: Format, options: RenderOptions) -> Result<(), StdoutError> {
    if format == Format::Json {
        let items: Vec<serde_json::Value> = entries
            .iter()
            .map(|e| match &e.outcome {
                Ok(plan) => {
                    let plan: serde_json::Value =
                        serde_json::from_str(&plan.render(format, options, "")).unwrap_or(serde_json::Value::Null);
                    serde_json::json!({"namespace": e.namespace, "name": e.name, "plan": plan})
                }
                Err(error) => serde_json::json!({"namespace": e.namespace, "name": e.name, "error": error}),
            })
            .collect();
        let text = serde_json::to_string_pretty(&items).unwrap_or_default();
        return crate::support::output::write_stdout(format!("{text}\n"));
    }
    let mut out = if format == Format::Markdown {
        markdown_table(entries)
    } else {
        let color = options.color;
        let paint = crate::support::output::Paint(color);
        table(entries).render_styled(paint, |h, c| match h {
            "ERROR" if !c.is_empty() => Tone::Bad,
            "ADD" | "CHANGE" | "REMOVE" if c != "0" && c != "-" => Tone::Warn,
            _ => Tone::Plain,
        })
    };
    for e in entries {
        let Ok(plan) = &e.outcome else { continue };
        if !plan.has_changes() {
            continue;
        }
        let title = format!("`{} diff {} -n {}`", crate::support::output::chart_command(), e.name, e.namespace);
        if format == Format::Markdown {
            out.push('\n');
            out.push_str(&plan.render(format, options, &title));
        } else {
            out.push_str(&format!("\n=== {}/{} ===\n", e.namespace, e.name));
            out.push_str(&plan.render(format, options, &title));
        }
    }
    crate::support::output::write_stdout(out)
}

/// NAMESPACE NAME ADD CHANGE REMOVE ERROR: a row per release.
fn table(entries: &[Entry]) -> Table {
    let mut t = Table::new(["NAMESPACE", "NAME", "ADD", "CHANGE", "REMOVE", "ERROR"]);
    for e in entries {
        match &e.outcome {
            Ok(plan) => {
                let c = plan.counts();
                t.row([
                    e.namespace.clone(),
                    e.name.clone(),
                    c.add.to_string(),
                    c.change.to_string(),
                    c.remove.to_string(),
                    String::new(),
                ]);
            }
            Err(error) => {
                t.row([e.namespace.clone(), e.name.clone(), "-".into(), "-".into(), "-".into(), error.clone()])
            }
        }
    }
    t
}

fn markdown_table(entries: &[Entry]) -> String {
    let mut out = String::from("| Namespace | Release | Add | Change | Remove | Error |\n|---|---|---|---|---|---|\n");
    for e in entries {
        let row = match &e.outcome {
            Ok(plan) => {
                let c = plan.counts();
                format!("| {} | {} | {} | {} | {} | |\n", e.namespace, e.name, c.add, c.change, c.remove)
            }
            Err(error) => format!("| {} | {} | - | - | - | {} |\n", e.namespace, e.name, error.replace('|', "\\|")),
        };
        out.push_str(&row);
    }
    out
}
