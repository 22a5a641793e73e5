//! What `helm cozy diff` shows: an object-level plan (added, changed, removed, unchanged) between the desired
//! objects and the live (or stored) ones, a line-level diff of each changed object's YAML, and the
//! renderings `-o diff|summary|json`.
//!
//! Pure logic: the caller fetches and parses objects ([`crate::manifests`]) and decides colour
//! ([`crate::output::ColorChoice`]); this module only compares and prints into strings.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use owo_colors::OwoColorize as _;
use serde::Serialize;
use serde_json::Value;
use similar::algorithms::{Capture, Replace, myers};
use similar::{ChangeTag, group_diff_ops};

#[cfg(test)]
use crate::manifests::ClusterScoped;
use crate::manifests::{self, ManifestError, ObjectId};

/// Lines of context around each change unless told otherwise (as `diff -u` and helm-diff).
pub const DEFAULT_CONTEXT: usize = 3;

#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    #[error("{id} appears more than once in the {side} objects: the chart renders it twice; make the names unique")]
    Duplicate { id: String, side: &'static str },

    #[error(transparent)]
    Manifest(#[from] ManifestError),
}

/// What applying would do to one object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Add,
    Change,
    Remove,
    Unchanged,
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

/// One object of the plan. `old` and `new` are what is compared and printed: normalised, and with Secret
/// values masked unless [`PlanOptions::show_secrets`]; the raw objects are not kept, so nothing downstream
/// can print a secret by mistake. `old_yaml`/`new_yaml` are their YAML texts (empty for a missing side and
/// for unchanged objects, which are never printed).
#[derive(Clone, Debug)]
pub struct Entry {
    pub id: ObjectId,
    pub action: Action,
    pub old: Option<Value>,
    pub new: Option<Value>,
    pub old_yaml: String,
    pub new_yaml: String,
}

impl Entry {
    /// An unchanged object whose sides are not kept (nothing prints them).
    fn unchanged(id: ObjectId) -> Entry {
        Entry { id, action: Action::Unchanged, old: None, new: None, old_yaml: String::new(), new_yaml: String::new() }
    }

    /// The line diff of this object's YAML (no header), helm-diff style; empty for an unchanged object.
    pub fn diff(&self, context: Option<usize>, color: bool) -> String {
        if self.action == Action::Unchanged {
            return String::new();
        }
        diff_text(&self.old_yaml, &self.new_yaml, context, color)
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

/// How [`plan_with`] prepares objects before comparing them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanOptions {
    /// Apply [`manifests::normalize`] to both sides (default true): without it every live object differs
    /// from its rendering by server-maintained metadata.
    pub normalize: bool,
    /// Print Secret values as they are (default false: masked with [`manifests::mask_secrets`]).
    pub show_secrets: bool,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions { normalize: true, show_secrets: false }
    }
}

/// How a plan is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RenderOptions {
    /// Lines of context around changes; `None` prints whole objects.
    pub context: Option<usize>,
    /// Colour the output; the caller decides with [`crate::output::ColorChoice`].
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

/// Numbers of objects per action.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub add: usize,
    pub change: usize,
    pub remove: usize,
    #[serde(skip)]
    pub unchanged: usize,
}

/// The object-level comparison of desired and live objects, in a deterministic order: by [`ObjectId`]'s
/// order (cluster-scoped first, then namespace, kind, group, name), whatever order the chart rendered in
/// or the cluster listed in, so two runs over the same state print the same bytes.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub entries: Vec<Entry>,
}

/// [`plan_with`] with the default options: normalised, Secrets masked.
pub fn plan(desired: Vec<(ObjectId, Value)>, live: Vec<(ObjectId, Value)>) -> Result<Plan, DiffError> {
    plan_with(desired, live, PlanOptions::default())
}

/// Compares `desired` (what the chart renders) with `live` (what the cluster, or the stored release, has).
/// An object only in `desired` is added, only in `live` removed; in both, changed when its YAML differs
/// after normalisation. An identity that appears twice on one side is an error rather than a silent choice.
pub fn plan_with(
    desired: Vec<(ObjectId, Value)>,
    live: Vec<(ObjectId, Value)>,
    options: PlanOptions,
) -> Result<Plan, DiffError> {
    plan_sides(Sides { desired, live, unchanged: Vec::new() }, options)
}

/// The two sides of a comparison, and the desired objects already known to be unchanged (the caller
/// learnt it more cheaply than by comparing: see [`crate::live::LiveObjects::observe_all`]).
#[derive(Debug, Default)]
pub struct Sides {
    pub desired: Vec<(ObjectId, Value)>,
    pub live: Vec<(ObjectId, Value)>,
    pub unchanged: Vec<ObjectId>,
}

/// [`plan_with`] over [`Sides`]: the known-unchanged objects count as desired objects for duplicates.
pub fn plan_sides(sides: Sides, options: PlanOptions) -> Result<Plan, DiffError> {
    let mut live_by_id = BTreeMap::new();
    for (id, obj) in sides.live {
        if live_by_id.contains_key(&id) {
            return Err(DiffError::Duplicate { id: id.to_string(), side: "live" });
        }
        live_by_id.insert(id, obj);
    }
    let mut seen = BTreeSet::new();
    let mut entries = Vec::with_capacity(sides.desired.len() + sides.unchanged.len() + live_by_id.len());
    for id in sides.unchanged {
        if !seen.insert(id.clone()) {
            return Err(DiffError::Duplicate { id: id.to_string(), side: "desired" });
        }
        live_by_id.remove(&id);
        entries.push(Entry::unchanged(id));
    }
    for (id, new) in sides.desired {
        if !seen.insert(id.clone()) {
            return Err(DiffError::Duplicate { id: id.to_string(), side: "desired" });
        }
        let old = live_by_id.remove(&id);
        entries.push(entry(id, old, Some(new), options)?);
    }
    for (id, old) in live_by_id {
        entries.push(entry(id, Some(old), None, options)?);
    }
    entries.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(Plan { entries })
}

/// The whole comparison from two manifest streams (e.g. `helm template` output against `helm get manifest`):
/// parse, give namespaced objects without a namespace `namespace`, and plan. No I/O, so it is also the path
/// to benchmark end to end.
#[cfg(test)]
fn plan_streams(
    desired: &str,
    live: &str,
    namespace: &str,
    scope: &ClusterScoped,
    options: PlanOptions,
) -> Result<Plan, DiffError> {
    let side = |stream: &str| -> Result<Vec<(ObjectId, Value)>, DiffError> {
        let mut parsed = manifests::parse_manifests(stream)?;
        manifests::default_namespaces(&mut parsed, namespace, |g, k| scope.contains(g, k));
        Ok(parsed.into_iter().map(manifests::Manifest::into_pair).collect())
    };
    plan_with(side(desired)?, side(live)?, options)
}

fn entry(id: ObjectId, old: Option<Value>, new: Option<Value>, options: PlanOptions) -> Result<Entry, DiffError> {
    let prepare = |v: Option<Value>| {
        v.map(|mut v| {
            if options.normalize {
                manifests::normalize(&mut v);
            }
            v
        })
    };
    let (old, new) = (prepare(old), prepare(new));
    // Compare before masking: masking keeps a changed Secret key visible as changed, but comparing the
    // real values is the simpler guarantee.
    let action = match (&old, &new) {
        (Some(o), Some(n)) if o == n => Action::Unchanged,
        (Some(_), Some(_)) => Action::Change,
        (None, Some(_)) => Action::Add,
        (Some(_), None) | (None, None) => Action::Remove,
    };
    let (old, new) =
        if options.show_secrets { (old, new) } else { manifests::mask_secrets(old.as_ref(), new.as_ref()) };
    if action == Action::Unchanged {
        return Ok(Entry { old, new, ..Entry::unchanged(id) });
    }
    let old_yaml = old.as_ref().map(manifests::to_yaml).transpose()?.unwrap_or_default();
    let new_yaml = new.as_ref().map(manifests::to_yaml).transpose()?.unwrap_or_default();
    // Values can differ yet print the same (e.g. 1 and 1.0); what the user would see decides.
    let action = if action == Action::Change && old_yaml == new_yaml { Action::Unchanged } else { action };
    Ok(Entry { id, action, old, new, old_yaml, new_yaml })
}

impl Plan {
    pub fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for e in &self.entries {
            match e.action {
                Action::Add => c.add += 1,
                Action::Change => c.change += 1,
                Action::Remove => c.remove += 1,
                Action::Unchanged => c.unchanged += 1,
            }
        }
        c
    }

    /// Whether applying would change anything (what `--detailed-exitcode` turns into exit code 2).
    pub fn has_changes(&self) -> bool {
        self.changes().next().is_some()
    }

    /// The entries that are not unchanged, in plan order.
    pub fn changes(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter().filter(|e| e.action != Action::Unchanged)
    }

    /// `Plan: N to add, M to change, K to remove.`
    fn plan_line(&self) -> String {
        let c = self.counts();
        format!("Plan: {} to add, {} to change, {} to remove.", c.add, c.change, c.remove)
    }

    /// `-o diff`: for each changed object a header and its line diff, then the plan line.
    pub fn render_diff(&self, options: RenderOptions) -> String {
        let mut out = String::new();
        for e in self.changes() {
            out.push_str(&e.header(options.color));
            out.push('\n');
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> (ObjectId, Value) {
        (ObjectId::from_object(&v).unwrap(), v)
    }

    fn cm(name: &str, data: Value) -> (ObjectId, Value) {
        obj(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}, "data": data}),
        )
    }

    #[test]
    fn known_unchanged_objects_are_unchanged_and_count_for_duplicates() {
        let (id, obj) = cm("same", json!({"k": "v"}));
        let sides = Sides {
            desired: vec![cm("new", json!({}))],
            // The live side of a known-unchanged object is not a removal.
            live: vec![(id.clone(), obj.clone())],
            unchanged: vec![id.clone()],
        };
        let plan = plan_sides(sides, PlanOptions::default()).unwrap();
        assert_eq!(plan.counts(), Counts { add: 1, change: 0, remove: 0, unchanged: 1 });
        let twice = Sides { desired: vec![(id.clone(), obj)], live: Vec::new(), unchanged: vec![id] };
        assert!(matches!(plan_sides(twice, PlanOptions::default()), Err(DiffError::Duplicate { .. })));
    }

    fn example() -> Plan {
        let desired = vec![
            cm("demo", json!({"a": "1", "b": "2", "c": "three", "d": "4", "e": "5", "f": "6", "g": "7"})),
            cm("fresh", json!({"x": "y"})),
            cm("same", json!({"k": "v"})),
        ];
        let mut live_demo = cm("demo", json!({"a": "1", "b": "2", "c": "3", "d": "4", "e": "5", "f": "6", "g": "7"}));
        live_demo.1["metadata"]["resourceVersion"] = json!("42");
        live_demo.1["metadata"]["uid"] = json!("abc");
        let live = vec![
            cm("same", json!({"k": "v"})),
            obj(
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "old-role"}, "rules": []}),
            ),
            live_demo,
        ];
        plan(desired, live).unwrap()
    }

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
    fn plan_counts_and_order() {
        let p = example();
        assert_eq!(p.counts(), Counts { add: 1, change: 1, remove: 1, unchanged: 1 });
        assert!(p.has_changes());
        let order: Vec<String> = p.entries.iter().map(|e| format!("{:?} {}", e.action, e.id)).collect();
        assert_eq!(
            order,
            [
                "Remove rbac.authorization.k8s.io/ClusterRole old-role",
                "Change ConfigMap default/demo",
                "Add ConfigMap default/fresh",
                "Unchanged ConfigMap default/same"
            ]
        );
        let same = vec![cm("a", json!({"k": "v"}))];
        let p = plan(same.clone(), same).unwrap();
        assert!(!p.has_changes());
        assert_eq!(p.render_diff(RenderOptions::default()), "Plan: 0 to add, 0 to change, 0 to remove.\n");
    }

    #[test]
    fn duplicates_are_errors() {
        let err = plan(vec![cm("a", json!({})), cm("a", json!({"x": "1"}))], vec![]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "ConfigMap default/a appears more than once in the desired objects: the chart renders it twice; make the names unique"
        );
    }

    #[test]
    fn version_changes_alone_match_the_same_object() {
        let d = obj(
            json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h", "namespace": "n"}}),
        );
        let l = obj(
            json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h", "namespace": "n"}}),
        );
        let p = plan(vec![d], vec![l]).unwrap();
        assert_eq!(p.counts(), Counts { add: 0, change: 1, remove: 0, unchanged: 0 });
        assert!(
            p.render_diff(RenderOptions::default())
                .contains("- apiVersion: autoscaling/v1\n+ apiVersion: autoscaling/v2\n")
        );
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

    const PLAIN: &str = "correct-horse-battery";

    fn secret(data: Value) -> (ObjectId, Value) {
        obj(
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default"}, "data": data}),
        )
    }

    #[test]
    fn secrets_are_masked_in_every_rendering() {
        use base64::Engine as _;
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let mut live = secret(json!({"password": b64(PLAIN), "user": b64("admin-user")}));
        live.1["metadata"]["annotations"] = json!({manifests::LAST_APPLIED_ANNOTATION: live.1.to_string()});
        let mut desired = secret(json!({"user": b64("admin-user")}));
        desired.1["stringData"] = json!({"password": "another-Secret-42"});
        let p = plan(vec![desired], vec![live]).unwrap();
        assert_eq!(p.counts().change, 1);
        let diff = p.render_diff(RenderOptions::with_context_flag(-1, false));
        assert!(
            diff.contains("-   password: \"-------- # (21 bytes)\"\n+   password: \"++++++++ # (17 bytes)\"\n"),
            "{diff}"
        );
        assert!(diff.contains("    user: \"REDACTED # (10 bytes)\"\n"), "{diff}");
        let everything = format!("{diff}{}{}{:?}", p.render_summary(true), p.render_json(None), p.entries);
        for s in [PLAIN, "another-Secret-42", "admin-user"] {
            assert!(!everything.contains(s), "{s} leaked");
            assert!(!everything.contains(&b64(s)), "base64 of {s} leaked");
        }

        let shown = plan_with(
            vec![secret(json!({"password": b64("a")}))],
            vec![secret(json!({"password": b64("b")}))],
            PlanOptions { show_secrets: true, ..PlanOptions::default() },
        )
        .unwrap();
        assert!(shown.render_diff(RenderOptions::default()).contains(&b64("a")));
    }

    #[test]
    fn plans_from_manifest_streams() {
        let stored = "---\n# Source: demo/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\ndata:\n  a: \"1\"\n";
        let rendered = "---\n# Source: demo/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\n  namespace: rel\ndata:\n  a: \"2\"\n---\n# Source: demo/templates/ns.yaml\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: extra\n";
        let p = plan_streams(rendered, stored, "rel", &ClusterScoped::builtin(), PlanOptions::default()).unwrap();
        assert_eq!(
            p.render_summary(false),
            "+ Namespace extra\n~ ConfigMap rel/demo\nPlan: 1 to add, 1 to change, 0 to remove.\n"
        );
        let err = plan_streams("a: [", "", "rel", &ClusterScoped::builtin(), PlanOptions::default()).unwrap_err();
        assert!(err.to_string().starts_with("line 1 of the manifest stream: invalid YAML"), "{err}");
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
