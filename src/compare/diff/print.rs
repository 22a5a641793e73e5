//! Printing a plan: `-o diff|summary|json`, the line diff of each changed object, and the display YAML
//! those line diffs are taken over.

use std::fmt::Write as _;

use owo_colors::OwoColorize as _;
use serde::Serialize;
use serde_json::{Map, Value};
use similar::algorithms::{Capture, Replace, myers};
use similar::{ChangeTag, group_diff_ops};

use super::{Action, Counts, DiffError, Entry, Plan};
use crate::cluster::manifests::ObjectId;

/// Lines of context around each change unless told otherwise (as `diff -u` and helm-diff).
pub const DEFAULT_CONTEXT: usize = 3;

/// What a change under a drift-ignored path means (`spec.driftDetection.ignore`).
pub const DRIFT_IGNORED_NOTE: &str =
    "ignored by spec.driftDetection.ignore: Flux does not correct this; an upgrade still resets it";

/// How a plan is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RenderOptions {
    /// Lines of context around changes; `None` prints whole objects.
    pub context: Option<usize>,
    /// Colour the output; the caller decides with [`crate::support::output::ColorChoice`].
    pub color: bool,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions { context: Some(DEFAULT_CONTEXT), color: false }
    }
}

impl RenderOptions {
    /// From a `--context N` flag the way helm-diff reads it: any negative number means whole objects.
    pub fn with_context_flag(context: i64, color: bool) -> Self {
        RenderOptions { context: usize::try_from(context).ok(), color }
    }
}

/// `-o`: what a plan is printed as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// A header and a line diff per changed object, then the plan line (helm-diff's shape).
    Diff,
    /// One line per changed object, then the plan line.
    Summary,
    /// [`Plan::render_json`].
    Json,
    /// [`Plan::render_markdown`]: a pull-request comment.
    Markdown,
}

impl Format {
    /// Whether people read it: then a plan without changes is also said in words on stderr.
    pub fn for_people(self) -> bool {
        matches!(self, Format::Diff | Format::Summary)
    }
}

impl Plan {
    /// The plan as `format` prints it; `title` says what was compared (the Markdown's first line).
    /// JSON and Markdown are never coloured.
    pub fn render(&self, format: Format, options: RenderOptions, title: &str) -> String {
        match format {
            Format::Diff => self.render_diff(options),
            Format::Summary => self.render_summary(options.color),
            Format::Json => self.render_json(options.context),
            Format::Markdown => self.render_markdown(title, options.context),
        }
    }
}

impl Action {
    /// The marker of `-o summary`.
    pub fn marker(self) -> char {
        match self {
            Action::Add => '+',
            Action::Change => '~',
            Action::Remove => '-',
            Action::Unchanged => ' ',
        }
    }

    fn verb(self) -> &'static str {
        match self {
            Action::Add => "has been added:",
            Action::Change => "has changed:",
            Action::Remove => "has been removed:",
            Action::Unchanged => "is unchanged.",
        }
    }
}

impl Entry {
    /// The line diff of this object's YAML (no header), helm-diff style; empty for an unchanged object.
    pub fn diff(&self, context: Option<usize>, color: bool) -> String {
        if self.action == Action::Unchanged {
            return String::new();
        }
        diff_text(&self.old_yaml, &self.new_yaml, context, color)
    }

    /// One line per path of [`Entry::drift_ignored`], under the header: what Flux does about it.
    pub fn drift_notes(&self, color: bool) -> String {
        let mut out = String::new();
        for path in &self.drift_ignored {
            let line = format!("# {}: {DRIFT_IGNORED_NOTE}", if path.is_empty() { "the whole object" } else { path });
            out.push_str(&if color { line.cyan().to_string() } else { line });
            out.push('\n');
        }
        out
    }

    /// `ns, name, Kind (group/version) has changed:` and its siblings, as helm-diff prints them.
    pub fn header(&self, color: bool) -> String {
        let text = format!("{} {}", self.id.helm_header(), self.action.verb());
        if !color {
            return text;
        }
        match self.action {
            Action::Add => text.green().bold().to_string(),
            Action::Remove => text.red().bold().to_string(),
            Action::Change | Action::Unchanged => text.yellow().bold().to_string(),
        }
    }
}

impl Plan {
    /// `Plan: N to add, M to change, K to remove.`
    pub(crate) fn plan_line(&self) -> String {
        let c = self.counts();
        format!("Plan: {} to add, {} to change, {} to remove.", c.add, c.change, c.remove)
    }

    /// `-o diff`: for each changed object a header and its line diff, then the plan line.
    pub fn render_diff(&self, options: RenderOptions) -> String {
        let mut out = String::new();
        for e in self.changes() {
            out.push_str(&e.header(options.color));
            out.push('\n');
            out.push_str(&e.drift_notes(options.color));
            out.push_str(&e.diff(options.context, options.color));
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&self.plan_line());
        out.push('\n');
        out
    }

    /// `-o summary`: one line per changed object with a `+`/`~`/`-` marker, then the plan line.
    pub fn render_summary(&self, color: bool) -> String {
        let mut out = String::new();
        for e in self.changes() {
            let line = format!("{} {}", e.action.marker(), e.id);
            let line = match (color, e.action) {
                (false, _) | (true, Action::Unchanged) => line,
                (true, Action::Add) => line.green().to_string(),
                (true, Action::Remove) => line.red().to_string(),
                (true, Action::Change) => line.yellow().to_string(),
            };
            out.push_str(&line);
            out.push('\n');
        }
        out.push_str(&self.plan_line());
        out.push('\n');
        out
    }

    /// `-o json`: `{"changes":[{"action","group","kind","namespace","name","diff"}],"summary":{"add","change",
    /// "remove"}}`, pretty-printed, never coloured; `diff` is the uncoloured line diff.
    pub fn render_json(&self, context: Option<usize>) -> String {
        #[derive(Serialize)]
        struct Change<'a> {
            action: Action,
            group: &'a str,
            kind: &'a str,
            namespace: Option<&'a str>,
            name: &'a str,
            diff: String,
            #[serde(rename = "driftIgnored", skip_serializing_if = "<[String]>::is_empty")]
            drift_ignored: &'a [String],
        }
        #[derive(Serialize)]
        struct Report<'a> {
            changes: Vec<Change<'a>>,
            summary: Counts,
        }
        let report = Report {
            changes: self
                .changes()
                .map(|e| Change {
                    action: e.action,
                    group: &e.id.group,
                    kind: &e.id.kind,
                    namespace: e.id.namespace.as_deref(),
                    name: &e.id.name,
                    diff: e.diff(context, false),
                    drift_ignored: &e.drift_ignored,
                })
                .collect(),
            summary: self.counts(),
        };
        // Serialising strings, numbers and options into a String cannot fail.
        let mut text = serde_json::to_string_pretty(&report).unwrap_or_default();
        text.push('\n');
        text
    }
}

/// The line diff of two texts in helm-diff's layout: `- ` removed, `+ ` added, two spaces for context, and
/// `...` where unchanged lines are left out. `context: None` prints every line. With `color`, removed lines
/// are red and added ones green. A pure function of its inputs, so it is also the thing to benchmark.
fn diff_text(old: &str, new: &str, context: Option<usize>, color: bool) -> String {
    // Myers over lines with one hook type, as `TextDiff::from_lines` computes it: naming the algorithm
    // keeps the other algorithms (and a dozen copies of their generic code) out of the binary.
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let mut hook = Replace::new(Capture::new());
    // Capturing into memory cannot fail.
    let _ = myers::diff(&mut hook, &old_lines, 0..old_lines.len(), &new_lines, 0..new_lines.len());
    let ops = hook.into_inner().into_ops();
    let groups = match context {
        Some(n) => group_diff_ops(ops, n),
        None => vec![ops],
    };
    let old_len = old.lines().count();
    let mut out = String::new();
    let mut next_old = 0;
    for group in &groups {
        let (Some(first), Some(last)) = (group.first(), group.last()) else { continue };
        if first.old_range().start > next_old {
            out.push_str("...\n");
        }
        next_old = last.old_range().end;
        for op in group {
            for change in op.iter_changes(&old_lines, &new_lines) {
                let line = change.value().trim_end_matches(['\n', '\r']);
                let (prefix, painted) = match change.tag() {
                    ChangeTag::Equal => ("  ", false),
                    ChangeTag::Delete => ("-", true),
                    ChangeTag::Insert => ("+", true),
                };
                let text = match (change.tag(), line.is_empty()) {
                    // No trailing whitespace on blank lines.
                    (ChangeTag::Equal, true) => String::new(),
                    (ChangeTag::Equal, false) => format!("{prefix}{line}"),
                    (_, true) => prefix.to_string(),
                    (_, false) => format!("{prefix} {line}"),
                };
                if color && painted {
                    if change.tag() == ChangeTag::Delete {
                        let _ = writeln!(out, "{}", text.red());
                    } else {
                        let _ = writeln!(out, "{}", text.green());
                    }
                } else {
                    out.push_str(&text);
                    out.push('\n');
                }
            }
        }
    }
    if context.is_some() && next_old < old_len && !groups.iter().all(Vec::is_empty) {
        out.push_str("...\n");
    }
    out
}

/// The object as YAML for display, deterministically: the top level starts with `apiVersion`, `kind`,
/// `metadata`, and `metadata` with `name`, `namespace`; every other mapping key is sorted (byte order).
/// Input order is not kept on purpose: the API server returns fields in its own order, a chart in the
/// author's, and a diff of the two must show only real changes. `helm cozy values -o yaml` prints with it
/// too, for the same stable order.
pub fn to_yaml(obj: &Value) -> Result<String, DiffError> {
    let canonical = canonical(obj, Level::Top);
    crate::support::output::to_display_yaml(&canonical).map_err(|err| DiffError::Serialize {
        id: ObjectId::from_object(obj).map_or_else(|_| "object".to_string(), |id| id.to_string()),
        message: err.to_string(),
    })
}

#[derive(Clone, Copy)]
enum Level {
    Top,
    Metadata,
    Nested,
}

fn canonical(v: &Value, level: Level) -> Value {
    match v {
        Value::Object(map) => {
            let first: &[&str] = match level {
                Level::Top => &["apiVersion", "kind", "metadata"],
                Level::Metadata => &["name", "namespace"],
                Level::Nested => &[],
            };
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by(|a, b| {
                let rank = |k: &str| first.iter().position(|f| *f == k).unwrap_or(first.len());
                rank(a).cmp(&rank(b)).then_with(|| a.cmp(b))
            });
            let mut out = Map::new();
            for k in keys {
                let child = match level {
                    Level::Top if k == "metadata" => Level::Metadata,
                    _ => Level::Nested,
                };
                out.insert(k.clone(), canonical(&map[k.as_str()], child));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|i| canonical(i, Level::Nested)).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::diff::tests::example;
    use serde_json::json;

    const EXPECTED_PLAIN: &str = "\
old-role, ClusterRole (rbac.authorization.k8s.io/v1) has been removed:
- apiVersion: rbac.authorization.k8s.io/v1
- kind: ClusterRole
- metadata:
-   name: old-role
- rules: []
default, demo, ConfigMap (v1) has changed:
...
  data:
    a: \"1\"
    b: \"2\"
-   c: \"3\"
+   c: three
    d: \"4\"
    e: \"5\"
    f: \"6\"
...
default, fresh, ConfigMap (v1) has been added:
+ apiVersion: v1
+ kind: ConfigMap
+ metadata:
+   name: fresh
+   namespace: default
+ data:
+   x: \"y\"

Plan: 1 to add, 1 to change, 1 to remove.
";

    #[test]
    fn diff_output_without_colour() {
        let p = example();
        assert_eq!(p.render_diff(RenderOptions::default()), EXPECTED_PLAIN);
    }

    #[test]
    fn diff_output_with_colour() {
        let p = example();
        let out = p.render_diff(RenderOptions { context: Some(1), color: true });
        let expected = "\
\x1b[1m\x1b[31mold-role, ClusterRole (rbac.authorization.k8s.io/v1) has been removed:\x1b[39m\x1b[0m
\x1b[31m- apiVersion: rbac.authorization.k8s.io/v1\x1b[39m
\x1b[31m- kind: ClusterRole\x1b[39m
\x1b[31m- metadata:\x1b[39m
\x1b[31m-   name: old-role\x1b[39m
\x1b[31m- rules: []\x1b[39m
\x1b[1m\x1b[33mdefault, demo, ConfigMap (v1) has changed:\x1b[39m\x1b[0m
...
    b: \"2\"
\x1b[31m-   c: \"3\"\x1b[39m
\x1b[32m+   c: three\x1b[39m
    d: \"4\"
...
\x1b[1m\x1b[32mdefault, fresh, ConfigMap (v1) has been added:\x1b[39m\x1b[0m
\x1b[32m+ apiVersion: v1\x1b[39m
\x1b[32m+ kind: ConfigMap\x1b[39m
\x1b[32m+ metadata:\x1b[39m
\x1b[32m+   name: fresh\x1b[39m
\x1b[32m+   namespace: default\x1b[39m
\x1b[32m+ data:\x1b[39m
\x1b[32m+   x: \"y\"\x1b[39m

Plan: 1 to add, 1 to change, 1 to remove.
";
        assert_eq!(out, expected);
        assert!(!p.render_diff(RenderOptions::default()).contains('\x1b'));
    }

    #[test]
    fn whole_object_context() {
        let p = example();
        let out = p.render_diff(RenderOptions::with_context_flag(-1, false));
        assert!(out.contains("default, demo, ConfigMap (v1) has changed:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: demo\n"));
        assert!(!out.contains("..."));
        assert!(out.contains("    g: \"7\"\ndefault, fresh"));
    }

    #[test]
    fn summary_output() {
        let p = example();
        assert_eq!(
            p.render_summary(false),
            "- rbac.authorization.k8s.io/ClusterRole old-role\n~ ConfigMap default/demo\n+ ConfigMap default/fresh\nPlan: 1 to add, 1 to change, 1 to remove.\n"
        );
        assert!(p.render_summary(true).contains("\x1b[32m+ ConfigMap default/fresh\x1b[39m\n"));
    }

    #[test]
    fn json_shape() {
        let p = example();
        let v: Value = serde_json::from_str(&p.render_json(Some(0))).unwrap();
        assert_eq!(v["summary"], json!({"add": 1, "change": 1, "remove": 1}));
        let changes = v["changes"].as_array().unwrap();
        assert_eq!(changes.len(), 3);
        assert_eq!(
            changes[0],
            json!({"action": "remove", "group": "rbac.authorization.k8s.io", "kind": "ClusterRole", "namespace": null, "name": "old-role",
                   "diff": "- apiVersion: rbac.authorization.k8s.io/v1\n- kind: ClusterRole\n- metadata:\n-   name: old-role\n- rules: []\n"})
        );
        assert_eq!(changes[1]["action"], json!("change"));
        assert_eq!(changes[1]["diff"], json!("...\n-   c: \"3\"\n+   c: three\n...\n"));
        assert_eq!(changes[2]["action"], json!("add"));
        assert_eq!(changes[2]["namespace"], json!("default"));
        let keys: Vec<&String> = changes[0].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["action", "group", "kind", "namespace", "name", "diff"]);
    }

    #[test]
    fn yaml_is_deterministic_and_canonical() {
        let a = json!({"spec": {"b": 1, "a": [{"z": 1, "y": "multi\nline\n"}]}, "metadata": {"labels": {"x": "1"}, "namespace": "ns", "name": "n"}, "kind": "K", "apiVersion": "v1"});
        let b = json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "n", "namespace": "ns", "labels": {"x": "1"}}, "spec": {"a": [{"y": "multi\nline\n", "z": 1}], "b": 1}});
        let ya = to_yaml(&a).unwrap();
        assert_eq!(ya, to_yaml(&b).unwrap());
        assert_eq!(
            ya,
            "apiVersion: v1\nkind: K\nmetadata:\n  name: \"n\"\n  namespace: ns\n  labels:\n    x: \"1\"\nspec:\n  a:\n  - \"y\": |\n      multi\n      line\n    z: 1\n  b: 1\n"
        );
    }

    #[test]
    fn diff_text_is_a_pure_line_diff() {
        assert_eq!(diff_text("a\nb\n", "a\nb\n", Some(3), false), "");
        assert_eq!(diff_text("", "x\n", Some(3), false), "+ x\n");
        assert_eq!(diff_text("a\n\nb\n", "a\n\nc\n", Some(3), false), "  a\n\n- b\n+ c\n");
        assert_eq!(diff_text("a\nb\nc\nd\n", "a\nB\nc\nd\n", Some(0), false), "...\n- b\n+ B\n...\n");
        // Two hunks far apart are separated by `...`.
        let old: String = (0..20).map(|i| format!("l{i}\n")).collect();
        let new = old.replace("l2\n", "L2\n").replace("l17\n", "L17\n");
        assert_eq!(
            diff_text(&old, &new, Some(1), false),
            "...\n  l1\n- l2\n+ L2\n  l3\n...\n  l16\n- l17\n+ L17\n  l18\n...\n"
        );
    }
}
