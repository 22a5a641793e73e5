//! What a review prints: a table of the releases of the affected charts (chart, release, added, changed,
//! removed, or that nothing changes in the rendered objects, or the error), then each release's diff;
//! `-o markdown` as one pull-request comment (the table, and a folded section per changed release, under
//! GitHub's size limit with a line for what did not fit); `-o json` as one list for CI.

use serde_json::json;

use super::report::{Entry, Release, Report};
use crate::compare::diff::{COMMENT_LIMIT, Format, Plan, RenderOptions};
use crate::sets::print as printer;
use crate::support::output::StdoutError;

/// What a row says when the rendered objects are the same at both sides.
pub const NO_CHANGE: &str = "no change in the rendered objects";

/// Prints the report as `format` asks on stdout ([`render`]), after a line on stderr that says what was
/// reviewed.
pub fn print(report: &Report, format: Format, options: RenderOptions) -> Result<(), StdoutError> {
    crate::support::output::stderr_line(format_args!("{}", headline(report)));
    crate::support::output::write_stdout(render(report, format, options))
}

/// The report as `format` asks, by the sets' printer ([`crate::sets::print`]): [`json`](fn@crate::sets::print::json), [`markdown`](fn@crate::sets::print::markdown);
/// for people the table (nothing when no release was rendered), and with `-o diff` each changed release's
/// diff under `=== chart · release ===` (`-o summary` is the table alone).
pub fn render(report: &Report, format: Format, options: RenderOptions) -> String {
    match format {
        Format::Json => json(report),
        Format::Markdown => markdown(report, options.context, COMMENT_LIMIT),
        Format::Diff | Format::Summary if report.entries.is_empty() => String::new(),
        Format::Diff => {
            printer::table(&report.entries, options.color)
                + &printer::attention_list(&report.entries)
                + &printer::diffs(&report.entries, format, options)
        }
        Format::Summary => printer::table(&report.entries, options.color) + &printer::attention_list(&report.entries),
    }
}

/// One sentence: what was compared, how many charts were rendered, how many changed.
pub fn headline(report: &Report) -> String {
    let compared = format!("{} → {}", report.old, report.new);
    if let Some(tally) = &report.fleet {
        return fleet_headline(report, tally, &compared);
    }
    if report.entries.is_empty() {
        return format!(
            "{compared}: none of the {} chart{} read anything that changed; nothing rendered.",
            report.charts,
            plural(report.charts)
        );
    }
    let changing = printer::changed(&report.entries).count();
    let errors = report.errors();
    let mut line = format!(
        "{compared}: {changing} of {} release{} change{} what {} render{} ({} of {} chart{} read what changed; the others were not rendered)",
        report.entries.len(),
        plural(report.entries.len()),
        if changing == 1 { "s" } else { "" },
        if changing == 1 { "it" } else { "they" },
        if changing == 1 { "s" } else { "" },
        report.affected(),
        report.charts,
        plural(report.charts),
    );
    if errors > 0 {
        line.push_str(&format!("; {errors} could not be rendered"));
    }
    line.push('.');
    line
}

/// A fleet repository's sentence: the clusters, how many Kustomizations were built again and how many
/// HelmReleases rendered (the others read nothing that changed), how many of those change.
fn fleet_headline(report: &Report, tally: &super::FleetTally, compared: &str) -> String {
    let fleet_changes = |kustomization: bool| {
        printer::changed(&report.entries)
            .filter(|(e, _)| matches!(e.release, Release::Kustomization { .. }) == kustomization)
            .count()
    };
    let (kustomizations, releases) = (fleet_changes(true), fleet_changes(false));
    let unbuilt = match tally.unbuilt {
        0 => String::new(),
        n => format!(", {n} not built at all (nothing that changed reaches {})", if n == 1 { "it" } else { "them" }),
    };
    let mut line = format!(
        "{compared}: {} cluster{}; {} of {} Kustomization{} read what changed and were built at both sides, {} of them changing what {} {}{unbuilt}; ",
        tally.clusters,
        plural(tally.clusters),
        tally.built,
        tally.kustomizations,
        plural(tally.kustomizations),
        kustomizations,
        if kustomizations == 1 { "it" } else { "they" },
        if kustomizations == 1 { "applies" } else { "apply" },
    );
    match (tally.releases, tally.unbuilt) {
        (0, 0) => line.push_str("no HelmRelease"),
        (0, _) => line.push_str("no HelmRelease in what was built"),
        (n, unbuilt) => line.push_str(&format!(
            "{} of {n} HelmRelease{}{} rendered, {releases} changing what {} {}",
            tally.rendered,
            plural(n),
            if unbuilt > 0 { " in what was built" } else { "" },
            if releases == 1 { "it" } else { "they" },
            if releases == 1 { "renders" } else { "render" },
        )),
    }
    let errors = report.errors();
    if errors > 0 {
        line.push_str(&format!("; {errors} could not be built or rendered"));
    }
    line.push('.');
    line
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// `-o json`: one object per release: `chart` (its path), `release` (`namespace/name`, null for the
/// chart's defaults), `namespace`, `name`, `source` (`cluster`, `file` or `defaults`), `changed`, the
/// counts, and the plan as `diff -o json` gives it with whole objects, or `error`.
pub fn json(report: &Report) -> String {
    printer::json(&report.entries, None)
}

/// `-o markdown` within `limit` bytes: a heading, the headline, then the table and a folded section per
/// changed release in the table's order ([`crate::sets::print::markdown`]); sections that do not fit are
/// counted in a closing line.
pub fn markdown(report: &Report, context: Option<usize>, limit: usize) -> String {
    let mut out = format!(
        "#### `{} review`: {} → {}\n\n",
        crate::support::output::chart_command(),
        escape(&report.old),
        escape(&report.new)
    );
    let headline = headline(report);
    let (_, said) = headline.split_once(": ").unwrap_or(("", &headline));
    out.push_str(&format!("{}\n", capitalise(said)));
    if report.entries.is_empty() {
        return out;
    }
    out.push('\n');
    printer::markdown(out, &report.entries, context, limit)
}

/// A row of CHART RELEASE ADD CHANGE REMOVE NOTE (the note says when nothing changes); its diff under
/// `=== chart · release ===`, and in a comment folded under `<details>`.
impl printer::Member for Entry {
    const WORDS: printer::Words = printer::Words {
        command: "review",
        who: ["CHART", "RELEASE"],
        note: "NOTE",
        markdown_header: "| Chart | Release | Add | Change | Remove | |\n|---|---|---|---|---|---|\n",
        unchanged: NO_CHANGE,
        error: "error: ",
        markdown_blank: "  ",
        attention: true,
    };

    fn outcome(&self) -> &Result<Plan, String> {
        &self.outcome
    }

    fn who(&self) -> [String; 2] {
        [self.chart.display().to_string(), self.release.label()]
    }

    fn markdown_who(&self) -> [String; 2] {
        self.who().map(|text| cell(&text))
    }

    fn noun(&self) -> &'static str {
        match self.release {
            Release::Kustomization { .. } => "Kustomization",
            _ => "release",
        }
    }

    fn heading(&self) -> String {
        let [chart, release] = self.who();
        format!("{chart} · {release}")
    }

    fn json(&self) -> serde_json::Map<String, serde_json::Value> {
        let (namespace, name) = match &self.release {
            Release::Cluster { namespace, name }
            | Release::File { namespace, name }
            | Release::Package { namespace, name, .. }
            | Release::Fleet { namespace, name, .. } => (Some(namespace.as_str()), Some(name.as_str())),
            Release::Defaults | Release::Kustomization { .. } => (None, None),
        };
        let mut item = serde_json::Map::new();
        item.insert("chart".into(), json!(self.chart.display().to_string()));
        item.insert("release".into(), json!(namespace.zip(name).map(|(ns, n)| format!("{ns}/{n}"))));
        item.insert("namespace".into(), json!(namespace));
        item.insert("name".into(), json!(name));
        item.insert("source".into(), json!(self.release.source()));
        if let Release::Package { key, .. } = &self.release {
            item.insert("package".into(), json!(key.package));
            item.insert("variant".into(), json!(key.variant));
            item.insert("component".into(), json!(key.component));
        }
        if let Some((cluster, kustomization)) = self.release.fleet() {
            item.insert("cluster".into(), json!(cluster));
            item.insert("kustomization".into(), json!(kustomization));
        }
        item.insert("changed".into(), json!(self.outcome.as_ref().is_ok_and(Plan::has_changes)));
        if let Ok(plan) = &self.outcome {
            let c = plan.counts();
            item.insert("add".into(), json!(c.add));
            item.insert("change".into(), json!(c.change));
            item.insert("remove".into(), json!(c.remove));
        }
        item
    }

    /// One `<details>` section: `chart · release` and the plan line on the fold, the diff inside.
    fn markdown_section(&self, plan: &Plan, context: Option<usize>, room: usize) -> String {
        let [chart, release] = self.who().map(|text| escape(&text));
        plan.render_markdown_section(&format!("<code>{chart}</code> · <code>{release}</code>"), context, room)
    }
}

/// A table cell: a code span, `|` escaped.
fn cell(text: &str) -> String {
    format!("`{}`", text.replace('|', "\\|"))
}

/// Text inside HTML or a heading: `<`, `>` and `&` would be markup.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::manifests::ObjectId;
    use crate::compare::diff::plan;
    use crate::sets::review::Release;
    use serde_json::json;
    use std::path::PathBuf;

    fn cm(name: &str, value: &str) -> (ObjectId, serde_json::Value) {
        let v = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}, "data": {"k": value}});
        (ObjectId::from_object(&v).unwrap(), v)
    }

    fn report(n: usize, filler: usize) -> Report {
        let entries =
            (0..n)
                .map(|i| Entry {
                    chart: PathBuf::from(format!("charts/app-{i:02}")),
                    release: Release::File { namespace: "apps".into(), name: format!("app-{i:02}") },
                    outcome: Ok(
                        plan(vec![cm("c", &"new ".repeat(filler))], vec![cm("c", &"old ".repeat(filler))]).unwrap()
                    ),
                })
                .chain(std::iter::once(Entry {
                    chart: PathBuf::from("charts/same"),
                    release: Release::Defaults,
                    outcome: Ok(plan(vec![cm("c", "x")], vec![cm("c", "x")]).unwrap()),
                }))
                .chain(std::iter::once(Entry {
                    chart: PathBuf::from("charts/broken"),
                    release: Release::Defaults,
                    outcome: Err("git:main: helm template failed: boom".into()),
                }))
                .collect();
        Report { old: "git:main".into(), new: "the work tree".into(), charts: 12, entries, fleet: None }
    }

    fn deployment(name: &str, image: &str) -> (ObjectId, serde_json::Value) {
        let v = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
            "spec": {"template": {"spec": {"containers": [{"name": "agent", "image": image}, {"name": "sidecar", "image": image}]}}}});
        (ObjectId::from_object(&v).unwrap(), v)
    }

    #[test]
    fn one_image_change_many_containers_share_is_one_line() {
        let entry = |chart: &str, release: Release, extra: bool| {
            let mut old = vec![deployment("agent", "quay.io/cilium/cilium:v1.6.0")];
            let mut new = vec![deployment("agent", "quay.io/cilium/cilium:v1.6.1")];
            if extra {
                old.push(deployment("web", "nginx:1.27"));
                new.push(deployment("web", "nginx:1.28"));
            }
            Entry { chart: PathBuf::from(chart), release, outcome: Ok(plan(new, old).unwrap()) }
        };
        let fleet = |name: &str| Release::Fleet {
            cluster: "clusters/a".into(),
            kustomization: "flux-system/apps".into(),
            namespace: "kube-system".into(),
            name: name.into(),
        };
        let entries = vec![
            entry("cilium", fleet("cilium"), false),
            entry("cilium", fleet("cilium-b"), true),
            entry(
                "(objects)",
                Release::Kustomization { cluster: "clusters/a".into(), kustomization: "flux-system/extra".into() },
                false,
            ),
        ];
        let report = Report { old: "git:main".into(), new: "the work tree".into(), charts: 0, entries, fleet: None };
        let text = render(&report, Format::Summary, RenderOptions::default());
        let after = text.split_once("What to see first:\n").map(|(_, a)| a).unwrap_or_else(|| panic!("{text}"));
        assert_eq!(
            after,
            "  image  quay.io/cilium/cilium v1.6.0 → v1.6.1: 6 containers in 2 releases and 1 Kustomization (cilium · kube-system/cilium in clusters/a, cilium · kube-system/cilium-b in clusters/a, (objects) · Kustomization flux-system/extra in clusters/a)\n  \
             image  nginx 1.27 → 1.28: 2 containers in 1 release (cilium · kube-system/cilium-b in clusters/a)\n"
        );
        let md = markdown(&report, Some(3), COMMENT_LIMIT);
        assert!(md.contains("- image `quay.io/cilium/cilium v1.6.0 → v1.6.1`: 6 containers in 2 releases and 1 Kustomization (`cilium` · `kube-system/cilium in clusters/a`, "), "{md}");
    }

    #[test]
    fn markdown_folds_one_section_per_changed_release_under_a_table() {
        let md = markdown(&report(8, 1), Some(3), COMMENT_LIMIT);
        let mut lines = md.lines();
        assert_eq!(lines.next(), Some("#### `helm cozy review`: git:main → the work tree"));
        assert!(md.contains("\n8 of 10 releases change what they render (10 of 12 charts read what changed; the others were not rendered); 1 could not be rendered.\n"), "{md}");
        assert!(md.contains("| `charts/app-00` | `apps/app-00` | 0 | 1 | 0 |  |\n"), "{md}");
        assert!(
            md.contains("| `charts/same` | `(chart defaults)` | 0 | 0 | 0 | no change in the rendered objects |\n"),
            "{md}"
        );
        assert!(md.contains(
            "| `charts/broken` | `(chart defaults)` | - | - | - | error: git:main: helm template failed: boom |\n"
        ));
        assert_eq!(md.matches("<details>").count(), 8);
        assert_eq!(md.matches("</details>").count(), 8);
        assert!(md.contains("<details><summary><code>charts/app-03</code> · <code>apps/app-03</code>: Plan: 0 to add, 1 to change, 0 to remove.</summary>"));
        // Folded, the comment is the heading, the headline, the table and one line per section.
        let folded = md
            .lines()
            .filter(|l| l.starts_with('#') || l.starts_with('|') || l.starts_with("<details>") || l.starts_with("8 of"))
            .count();
        assert_eq!(folded, 22, "heading, headline, 2 + 10 table lines, 8 folds: one screen");
        assert!(!md.contains("not shown"));
    }

    #[test]
    fn markdown_stays_under_the_limit_and_counts_what_it_left_out() {
        let md = markdown(&report(40, 600), Some(3), COMMENT_LIMIT);
        assert!(md.len() <= COMMENT_LIMIT, "{}", md.len());
        let shown = md.matches("<details>").count();
        assert!(shown > 0 && shown < 40, "{shown}");
        assert!(
            md.contains(&format!(
                "**{} more releases not shown** to keep this comment under 65536 characters",
                40 - shown
            )),
            "{}",
            &md[md.len() - 300..]
        );
    }

    #[test]
    fn json_has_a_row_per_release_with_chart_release_and_changed() {
        let v: serde_json::Value = serde_json::from_str(&json(&report(1, 1))).unwrap();
        let rows = v.as_array().unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0]["chart"], "charts/app-00");
        assert_eq!(rows[0]["release"], "apps/app-00");
        assert_eq!(rows[0]["changed"], true);
        assert_eq!(rows[0]["change"], 1);
        assert_eq!(rows[0]["source"], "file");
        assert_eq!(rows[1]["release"], serde_json::Value::Null);
        assert_eq!(rows[1]["changed"], false);
        assert_eq!(rows[2]["error"], "git:main: helm template failed: boom");
    }

    #[test]
    fn nothing_affected_is_said_in_one_line() {
        let empty = Report {
            old: "git:main".into(),
            new: "the work tree".into(),
            charts: 150,
            entries: Vec::new(),
            fleet: None,
        };
        assert_eq!(
            headline(&empty),
            "git:main → the work tree: none of the 150 charts read anything that changed; nothing rendered."
        );
        assert_eq!(json(&empty), "[]\n");
    }
}
