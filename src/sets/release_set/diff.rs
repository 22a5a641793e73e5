//! `helm cozy diff --all`: every release of the chart diffed as the single diff does (its own values,
//! names and post-rendering), several at a time, then a summary table and the diffs, in the set's order.
//! An error in one release is its row's; the others still run.

use futures::StreamExt as _;
use kube::ResourceExt as _;

use super::Charts;
use crate::cluster::Cluster;
use crate::compare::Against;
use crate::compare::diff::{COMMENT_LIMIT, Format, Plan, PlanOptions, RenderOptions};
use crate::compare::request::{DiffAgainst, DiffRequest};
use crate::desired::UserValues;
use crate::flux::HelmRelease;
use crate::sets::print as printer;
use crate::support::output::StdoutError;

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
    charts: Charts<'_>,
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
            source: &crate::resolve::ReleaseSource::Cluster,
            offline_view: Default::default(),
            options: common.options,
        };
        let outcome = match charts.resolver_for(&here, hr).await {
            Ok(resolver) => crate::compare::release_diff::diff_request(&resolver, Some(&here), &request).await,
            Err(e) => Err(e),
        };
        Entry { namespace, name, outcome: outcome.map_err(|e| e.to_string()) }
    });
    futures::stream::iter(runs).buffered(concurrency.max(1)).collect().await
}

/// Whether any release failed to diff.
pub fn any_error(entries: &[Entry]) -> bool {
    printer::errors(entries) > 0
}

/// Whether any release would change.
pub fn any_change(entries: &[Entry]) -> bool {
    printer::changed(entries).next().is_some()
}

/// Prints the set's diffs as `format` asks ([`render`]).
pub fn print(entries: &[Entry], format: Format, options: RenderOptions) -> Result<(), StdoutError> {
    crate::support::output::write_stdout(render(entries, format, options))
}

/// The set's diffs as `format` asks, by the sets' printer ([`crate::sets::print`]):
/// - `-o json`: one array, an object per release: `namespace`, `name`, and its plan as `diff -o json`
///   gives it, or its `error`;
/// - `-o markdown`: the table, then each changed release's plan as `diff -o markdown` gives it; the whole
///   comment stays under GitHub's limit ([`COMMENT_LIMIT`]) as `review`'s does (the first plan cut to fit,
///   the releases that do not fit counted in a closing line), where it used to keep each plan under it
///   and not the whole;
/// - otherwise the table, then each changed release's diff (`-o summary`: its changed objects) under
///   `=== namespace/name ===`.
pub fn render(entries: &[Entry], format: Format, options: RenderOptions) -> String {
    match format {
        Format::Json => printer::json(entries, options.context),
        Format::Markdown => printer::markdown(String::new(), entries, options.context, COMMENT_LIMIT),
        Format::Diff | Format::Summary => {
            printer::table(entries, options.color) + &printer::diffs(entries, format, options)
        }
    }
}

/// A row of NAMESPACE NAME ADD CHANGE REMOVE ERROR; its diff under `=== namespace/name ===`.
impl printer::Member for Entry {
    const WORDS: printer::Words = printer::Words {
        command: "diff --all",
        who: ["NAMESPACE", "NAME"],
        note: "ERROR",
        markdown_header: "| Namespace | Release | Add | Change | Remove | Error |\n|---|---|---|---|---|---|\n",
        unchanged: "",
        error: "",
        markdown_blank: " ",
        attention: false,
    };

    fn outcome(&self) -> &Result<Plan, String> {
        &self.outcome
    }

    fn who(&self) -> [String; 2] {
        [self.namespace.clone(), self.name.clone()]
    }

    fn markdown_who(&self) -> [String; 2] {
        self.who()
    }

    fn heading(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    fn json(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut item = serde_json::Map::new();
        item.insert("namespace".into(), self.namespace.clone().into());
        item.insert("name".into(), self.name.clone().into());
        item
    }

    /// The plan as `diff -o markdown` gives it, titled with the command that diffs this release alone.
    fn markdown_section(&self, plan: &Plan, context: Option<usize>, room: usize) -> String {
        let title = format!("`{} diff {} -n {}`", crate::support::output::chart_command(), self.name, self.namespace);
        format!("\n{}", plan.render_markdown_within(&title, context, room.saturating_sub(1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::manifests::ObjectId;
    use crate::compare::diff::plan;
    use serde_json::json;

    fn configmap(value: &str) -> (ObjectId, serde_json::Value) {
        let v = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "apps"}, "data": {"k": value}});
        (ObjectId::from_object(&v).unwrap(), v)
    }

    /// `n` releases that change (their ConfigMap's value `filler` words long), one that does not, one in error.
    fn set(n: usize, filler: usize) -> Vec<Entry> {
        let entry = |name: String, new: &str, old: &str| Entry {
            namespace: "apps".into(),
            name,
            outcome: Ok(plan(vec![configmap(new)], vec![configmap(old)]).unwrap()),
        };
        let mut set: Vec<Entry> =
            (0..n).map(|i| entry(format!("web-{i:02}"), &"new ".repeat(filler), &"old ".repeat(filler))).collect();
        set.push(entry("same".into(), "x", "x"));
        set.push(Entry {
            namespace: "apps".into(),
            name: "bad".into(),
            outcome: Err("no ConfigMap | bad-values".into()),
        });
        set
    }

    #[test]
    fn the_table_then_each_changed_release_under_its_heading() {
        let out = render(&set(1, 1), Format::Diff, RenderOptions::default());
        let mut lines = out.lines();
        assert_eq!(lines.next(), Some("NAMESPACE   NAME     ADD   CHANGE   REMOVE   ERROR"));
        assert_eq!(lines.next(), Some("apps        web-00   0     1        0"));
        assert_eq!(lines.next(), Some("apps        same     0     0        0"));
        assert_eq!(lines.next(), Some("apps        bad      -     -        -        no ConfigMap | bad-values"));
        assert_eq!(lines.next(), Some(""));
        assert_eq!(lines.next(), Some("=== apps/web-00 ==="));
        assert_eq!(lines.next(), Some("apps, c, ConfigMap (v1) has changed:"));
        assert!(out.ends_with("Plan: 0 to add, 1 to change, 0 to remove.\n"), "{out}");
        let summary = render(&set(1, 1), Format::Summary, RenderOptions::default());
        assert!(
            summary.ends_with("=== apps/web-00 ===\n~ ConfigMap apps/c\nPlan: 0 to add, 1 to change, 0 to remove.\n"),
            "{summary}"
        );
    }

    #[test]
    fn json_is_an_array_of_plans_and_errors() {
        let out = render(&set(1, 1), Format::Json, RenderOptions::default());
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let keys = |i: usize| v[i].as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(0), ["namespace", "name", "plan"]);
        assert_eq!(v[0]["plan"]["summary"]["change"], 1);
        assert_eq!(keys(2), ["namespace", "name", "error"]);
        assert_eq!(v[2]["error"], "no ConfigMap | bad-values");
    }

    #[test]
    fn markdown_is_the_table_then_each_plan_as_diff_gives_it() {
        let out = render(&set(1, 1), Format::Markdown, RenderOptions::default());
        assert!(
            out.starts_with(
                "| Namespace | Release | Add | Change | Remove | Error |\n|---|---|---|---|---|---|\n\
             | apps | web-00 | 0 | 1 | 0 | |\n| apps | same | 0 | 0 | 0 | |\n\
             | apps | bad | - | - | - | no ConfigMap \\| bad-values |\n\n\
             `helm cozy diff web-00 -n apps`: **Plan: 0 to add, 1 to change, 0 to remove.**\n"
            ),
            "{out}"
        );
        assert!(!out.contains("not shown"), "{out}");
    }

    #[test]
    fn markdown_stays_under_the_comment_limit_and_counts_what_it_left_out() {
        let out = render(&set(40, 600), Format::Markdown, RenderOptions::default());
        assert!(out.len() <= COMMENT_LIMIT, "{}", out.len());
        let (shown, closing) = out.rsplit_once("\n**").expect("a closing line");
        let left: usize = closing.split(' ').next().and_then(|n| n.parse().ok()).expect("a count");
        assert_eq!(
            closing,
            format!(
                "{left} more releases not shown** to keep this comment under 65536 characters: `helm cozy diff --all` prints them all.\n"
            )
        );
        assert!(left > 0 && left < 40, "{left}");
        assert_eq!(shown.matches("`helm cozy diff web-").count() + left, 40);
    }
}
