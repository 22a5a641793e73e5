//! What a review prints: a table of the releases of the affected charts (chart, release, added, changed,
//! removed, or that nothing changes in the rendered objects, or the error), then each release's diff;
//! `-o markdown` as one pull-request comment (the table, and a folded section per changed release, under
//! GitHub's size limit with a line for what did not fit); `-o json` as one list for CI.

use serde_json::json;

use super::report::{Entry, Release, Report};
use crate::compare::diff::{COMMENT_LIMIT, Format, Plan, RenderOptions};
use crate::support::output::{StdoutError, Table, Tone};

/// What a row says when the rendered objects are the same at both sides.
pub const NO_CHANGE: &str = "no change in the rendered objects";

/// Room kept at the end of a comment for the line on what was left out.
const NOTE_ROOM: usize = 1_024;

/// Prints the report as `format` asks on stdout, after a line on stderr that says what was reviewed.
pub fn print(report: &Report, format: Format, options: RenderOptions) -> Result<(), StdoutError> {
    crate::support::output::stderr_line(format_args!("{}", headline(report)));
    match format {
        Format::Json => crate::support::output::write_stdout(json(report)),
        Format::Markdown => crate::support::output::write_stdout(markdown(report, options.context, COMMENT_LIMIT)),
        Format::Diff | Format::Summary => {
            if report.entries.is_empty() {
                return Ok(());
            }
            let mut out = table(report).render_styled(crate::support::output::Paint(options.color), |h, c| match h {
                "NOTE" if c.starts_with("error") => Tone::Bad,
                "ADD" | "CHANGE" | "REMOVE" if c != "0" && c != "-" => Tone::Warn,
                _ => Tone::Plain,
            });
            if format == Format::Diff {
                for (e, plan) in changed(report) {
                    out.push_str(&format!("\n=== {} · {} ===\n", e.chart.display(), e.release.label()));
                    out.push_str(&plan.render(Format::Diff, options, ""));
                }
            }
            crate::support::output::write_stdout(out)
        }
    }
}

/// The releases whose rendering changes, with their plans.
fn changed(report: &Report) -> impl Iterator<Item = (&Entry, &Plan)> {
    report.entries.iter().filter_map(|e| e.outcome.as_ref().ok().filter(|p| p.has_changes()).map(|p| (e, p)))
}

/// One sentence: what was compared, how many charts were rendered, how many changed.
pub fn headline(report: &Report) -> String {
    let compared = format!("{} → {}", report.old, report.new);
    if report.entries.is_empty() {
        return format!(
            "{compared}: none of the {} chart{} read anything that changed; nothing rendered.",
            report.charts,
            plural(report.charts)
        );
    }
    let changing = changed(report).count();
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

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// CHART RELEASE ADD CHANGE REMOVE NOTE: a row per release.
fn table(report: &Report) -> Table {
    let mut t = Table::new(["CHART", "RELEASE", "ADD", "CHANGE", "REMOVE", "NOTE"]);
    for e in &report.entries {
        let (chart, release) = (e.chart.display().to_string(), e.release.label());
        match &e.outcome {
            Ok(plan) => {
                let c = plan.counts();
                let note = if plan.has_changes() { "" } else { NO_CHANGE };
                t.row([chart, release, c.add.to_string(), c.change.to_string(), c.remove.to_string(), note.into()]);
            }
            Err(error) => t.row([chart, release, "-".into(), "-".into(), "-".into(), format!("error: {error}")]),
        }
    }
    t
}

/// `-o json`: one object per release: `chart` (its path), `release` (`namespace/name`, null for the
/// chart's defaults), `namespace`, `name`, `source` (`cluster`, `file` or `defaults`), `changed`, the
/// counts, and the plan as `diff -o json` gives it, or `error`.
pub fn json(report: &Report) -> String {
    let items: Vec<serde_json::Value> = report
        .entries
        .iter()
        .map(|e| {
            let (namespace, name) = match &e.release {
                Release::Cluster { namespace, name } | Release::File { namespace, name } => {
                    (Some(namespace.as_str()), Some(name.as_str()))
                }
                Release::Defaults => (None, None),
            };
            let mut item = json!({
                "chart": e.chart.display().to_string(),
                "release": namespace.zip(name).map(|(ns, n)| format!("{ns}/{n}")),
                "namespace": namespace,
                "name": name,
                "source": e.release.source(),
            });
            match &e.outcome {
                Ok(plan) => {
                    let c = plan.counts();
                    item["changed"] = json!(plan.has_changes());
                    item["add"] = json!(c.add);
                    item["change"] = json!(c.change);
                    item["remove"] = json!(c.remove);
                    item["plan"] = serde_json::from_str(&plan.render_json(None)).unwrap_or(serde_json::Value::Null);
                }
                Err(error) => {
                    item["changed"] = json!(false);
                    item["error"] = json!(error);
                }
            }
            item
        })
        .collect();
    format!("{}\n", serde_json::to_string_pretty(&items).unwrap_or_else(|_| "[]".into()))
}

/// `-o markdown` within `limit` bytes: a heading, the headline, the table, then a folded section per
/// changed release in the table's order; sections that do not fit are counted in a closing line.
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
    out.push_str("\n| Chart | Release | Add | Change | Remove | |\n|---|---|---|---|---|---|\n");
    for e in &report.entries {
        let (chart, release) = (cell(&e.chart.display().to_string()), cell(&e.release.label()));
        let row = match &e.outcome {
            Ok(plan) => {
                let c = plan.counts();
                let note = if plan.has_changes() { "" } else { NO_CHANGE };
                format!("| {chart} | {release} | {} | {} | {} | {note} |\n", c.add, c.change, c.remove)
            }
            Err(error) => format!("| {chart} | {release} | - | - | - | error: {} |\n", error.replace('|', "\\|")),
        };
        out.push_str(&row);
    }
    let budget = limit.saturating_sub(NOTE_ROOM);
    let sections: Vec<(&Entry, &Plan)> = changed(report).collect();
    let mut shown = 0;
    for (e, plan) in &sections {
        let summary = format!(
            "<code>{}</code> · <code>{}</code>",
            escape(&e.chart.display().to_string()),
            escape(&e.release.label())
        );
        let room = budget.saturating_sub(out.len());
        // The first section is cut to fit rather than left out; later ones go whole or not at all.
        let section = if shown == 0 {
            plan.render_markdown_section(&summary, context, room)
        } else {
            let whole = plan.render_markdown_section(&summary, context, usize::MAX);
            if whole.len() > room {
                break;
            }
            whole
        };
        out.push_str(&section);
        shown += 1;
    }
    let left = sections.len() - shown;
    if left > 0 {
        out.push_str(&format!(
            "\n**{left} more release{} not shown** to keep this comment under {COMMENT_LIMIT} characters: `{} review` prints them all.\n",
            plural(left),
            crate::support::output::chart_command()
        ));
    }
    out
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
        Report { old: "git:main".into(), new: "the work tree".into(), charts: 12, entries }
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
        let empty = Report { old: "git:main".into(), new: "the work tree".into(), charts: 150, entries: Vec::new() };
        assert_eq!(
            headline(&empty),
            "git:main → the work tree: none of the 150 charts read anything that changed; nothing rendered."
        );
        assert_eq!(json(&empty), "[]\n");
    }
}
