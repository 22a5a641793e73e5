//! `helm cozy apply --all`: every release of the chart applied as a single apply applies it (suspended,
//! applied, its status written), in `dependsOn` order where releases of the set depend on each other,
//! several at a time within an order's wave. After the first failure no new apply starts, unless
//! `keep_going`; a release whose dependency in the set failed or was skipped is skipped either way.

use std::collections::BTreeSet;
use std::sync::Mutex;

use futures::StreamExt as _;

use super::{Charts, key, waves};
use crate::apply::{ApplyRequest, Outcome};
use crate::cluster::Cluster;
use crate::flux::HelmRelease;
use crate::support::error::Result;
use crate::support::output::{Table, Tone};

/// What became of one release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fate {
    Applied,
    Failed(String),
    Skipped(String),
}

/// One row of the final table.
#[derive(Debug, Clone)]
pub struct Row {
    pub namespace: String,
    pub name: String,
    pub result: Fate,
}

/// How the set is applied.
pub struct Plan {
    pub concurrency: usize,
    pub keep_going: bool,
}

/// What every release of the set is applied with: the user's values and flags, as for one release.
#[derive(Clone)]
pub struct Common {
    pub user: crate::desired::UserValues,
    pub options: crate::apply::install::UpgradeOptions,
    pub resume: bool,
}

/// Applies every release of `set` (of `cluster`, each in its namespace) with its chart from `charts` and
/// `common`'s values and options; the rows come back in the set's order.
pub async fn apply_all(
    cluster: &Cluster,
    charts: Charts<'_>,
    common: &Common,
    set: &[HelmRelease],
    plan: &Plan,
) -> Result<Vec<Row>> {
    let order = waves(set)?;
    let results: Mutex<Vec<Option<Fate>>> = Mutex::new(vec![None; set.len()]);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let index: std::collections::BTreeMap<(String, String), usize> =
        set.iter().enumerate().map(|(i, hr)| (key(hr), i)).collect();
    for wave in order {
        let runs = wave.into_iter().map(|i| {
            let (results, stop, index) = (&results, &stop, &index);
            async move {
                let hr = &set[i];
                let (namespace, name) = key(hr);
                let unfinished: BTreeSet<String> = hr
                    .spec
                    .depends_on
                    .iter()
                    .filter(|d| d.names_helm_release())
                    .filter_map(|d| {
                        let at = *index.get(&(hr.dependency_namespace(d).to_string(), d.name.clone()))?;
                        let done = results.lock().ok()?.get(at).cloned().flatten();
                        (done != Some(Fate::Applied)).then(|| format!("{}/{}", hr.dependency_namespace(d), d.name))
                    })
                    .collect();
                let result = if !unfinished.is_empty() {
                    Fate::Skipped(format!(
                        "depends on {}, which was not applied",
                        unfinished.into_iter().collect::<Vec<_>>().join(", ")
                    ))
                } else if stop.load(std::sync::atomic::Ordering::SeqCst) {
                    Fate::Skipped("not started after an earlier failure (--keep-going goes on)".into())
                } else {
                    let here: Cluster = cluster.in_namespace(&namespace);
                    match apply_one(&here, charts, common, hr, &name).await {
                        Ok(Outcome::Applied | Outcome::DryRun | Outcome::Resumed) => Fate::Applied,
                        Err(e) => {
                            if !plan.keep_going {
                                stop.store(true, std::sync::atomic::Ordering::SeqCst);
                            }
                            Fate::Failed(e.to_string())
                        }
                    }
                };
                if let Ok(mut r) = results.lock() {
                    r[i] = Some(result);
                }
            }
        });
        futures::stream::iter(runs).buffer_unordered(plan.concurrency.max(1)).collect::<Vec<()>>().await;
    }
    let results = results.into_inner().unwrap_or_default();
    Ok(set
        .iter()
        .zip(results)
        .map(|(hr, r)| {
            let (namespace, name) = key(hr);
            Row { namespace, name, result: r.unwrap_or(Fate::Skipped("not reached".into())) }
        })
        .collect())
}

/// One release of the set applied as a single apply applies it, with its chart from `charts`.
async fn apply_one(
    here: &Cluster,
    charts: Charts<'_>,
    common: &Common,
    hr: &HelmRelease,
    name: &str,
) -> Result<Outcome> {
    let resolver = charts.resolver_for(here, hr).await?;
    let Common { user, options, resume } = common.clone();
    crate::apply::apply(ApplyRequest { cluster: here, resolver: &resolver, name, user, options, resume }).await
}

/// NAMESPACE NAME RESULT MESSAGE, coloured by result.
pub fn table(rows: &[Row], color: bool) -> String {
    let mut t = Table::new(["NAMESPACE", "NAME", "RESULT", "MESSAGE"]);
    for r in rows {
        let (word, message) = match &r.result {
            Fate::Applied => ("applied", String::new()),
            Fate::Failed(m) => ("failed", m.clone()),
            Fate::Skipped(m) => ("skipped", m.clone()),
        };
        t.row([r.namespace.clone(), r.name.clone(), word.to_string(), message]);
    }
    t.render_styled(crate::support::output::Paint(color), |h, c| match (h, c) {
        ("RESULT", "applied") => Tone::Good,
        ("RESULT", "failed") => Tone::Bad,
        ("RESULT", "skipped") => Tone::Warn,
        _ => Tone::Plain,
    })
}
