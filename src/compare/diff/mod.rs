//! What `helm cozy diff` shows: an object-level plan (added, changed, removed, unchanged) between the desired
//! objects and the live (or stored) ones.
//!
//! Pure logic: the caller fetches and parses objects ([`crate::cluster::manifests`]) and decides colour
//! ([`crate::support::output::ColorChoice`]); this module only compares and prints into strings. Here: the plan;
//! `normalize.rs`: what is taken out of both sides before comparing ([`normalize()`]); `mask.rs`: Secret
//! values hidden ([`mask_secrets`]); `print.rs`: `-o diff|summary|json` and the display YAML ([`to_yaml`]);
//! `markdown.rs`: `-o markdown`, for a pull-request comment.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

#[cfg(test)]
use crate::cluster::manifests::{self, ClusterScoped};
use crate::cluster::manifests::{ManifestError, ObjectId};

mod markdown;
mod mask;
mod normalize;
mod print;

pub use markdown::COMMENT_LIMIT;
pub use mask::{LAST_APPLIED_ANNOTATION, mask_secrets};
pub use normalize::normalize;
pub use print::{DEFAULT_CONTEXT, DRIFT_IGNORED_NOTE, Format, RenderOptions, to_yaml};

#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    #[error("{id} appears more than once in the {side} objects: the chart renders it twice; make the names unique")]
    Duplicate { id: String, side: &'static str },

    #[error(transparent)]
    Manifest(#[from] ManifestError),

    #[error("cannot print {id} as YAML: {message}")]
    Serialize { id: String, message: String },
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
    /// The HelmRelease's `spec.driftDetection.ignore` paths under which this change lies
    /// ([`Plan::mark_drift_ignored`]): Flux's drift correction leaves them, an upgrade resets them.
    pub drift_ignored: Vec<String>,
}

impl Entry {
    /// An unchanged object whose sides are not kept (nothing prints them).
    fn unchanged(id: ObjectId) -> Entry {
        Entry {
            id,
            action: Action::Unchanged,
            old: None,
            new: None,
            old_yaml: String::new(),
            new_yaml: String::new(),
            drift_ignored: Vec::new(),
        }
    }
}

/// How [`plan_with`] prepares objects before comparing them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanOptions {
    /// Apply [`normalize()`] to both sides (default true): without it every live object differs
    /// from its rendering by server-maintained metadata.
    pub normalize: bool,
    /// Print Secret values as they are (default false: masked with [`mask_secrets`]).
    pub show_secrets: bool,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions { normalize: true, show_secrets: false }
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
/// learnt it more cheaply than by comparing: see [`crate::cluster::live::LiveObjects::observe_all`]).
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
                normalize(&mut v);
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
    let (old, new) = if options.show_secrets { (old, new) } else { mask_secrets(old.as_ref(), new.as_ref()) };
    if action == Action::Unchanged {
        return Ok(Entry { old, new, ..Entry::unchanged(id) });
    }
    let old_yaml = old.as_ref().map(to_yaml).transpose()?.unwrap_or_default();
    let new_yaml = new.as_ref().map(to_yaml).transpose()?.unwrap_or_default();
    // Values can differ yet print the same (e.g. 1 and 1.0); what the user would see decides.
    let action = if action == Action::Change && old_yaml == new_yaml { Action::Unchanged } else { action };
    Ok(Entry { id, action, old, new, old_yaml, new_yaml, drift_ignored: Vec::new() })
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

    /// Marks, without hiding anything, the changes that lie under the paths drift detection ignores for
    /// their object (`ignored`, by object: [`crate::compare::drift::ignore`]): of a changed object, each path
    /// whose value differs between the two sides (`""`, the whole object, when anything does).
    pub fn mark_drift_ignored(&mut self, ignored: &std::collections::HashMap<ObjectId, Vec<String>>) {
        for e in self.entries.iter_mut().filter(|e| e.action == Action::Change) {
            let (Some(paths), Some(old), Some(new)) = (ignored.get(&e.id), &e.old, &e.new) else { continue };
            e.drift_ignored = paths.iter().filter(|p| old.pointer(p) != new.pointer(p)).cloned().collect();
        }
    }
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

    pub(super) fn example() -> Plan {
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
    fn changes_under_drift_ignored_paths_are_marked_not_hidden() {
        let mut p = plan(
            vec![cm("a", json!({"tuned": "1", "other": "after", "same": "s"})), cm("b", json!({"k": "new"}))],
            vec![cm("a", json!({"tuned": "2", "other": "before", "same": "s"})), cm("b", json!({"k": "old"}))],
        )
        .unwrap();
        let a = ObjectId::from_object(&cm("a", json!({})).1).unwrap();
        let marks =
            std::collections::HashMap::from([(a, vec!["/data/tuned".into(), "/data/same".into(), "/nope".into()])]);
        p.mark_drift_ignored(&marks);
        assert_eq!(p.entries[0].drift_ignored, ["/data/tuned"]);
        assert!(p.entries[1].drift_ignored.is_empty());
        let out = p.render_diff(RenderOptions::with_context_flag(0, false));
        assert!(
            out.starts_with(
                "default, a, ConfigMap (v1) has changed:\n# /data/tuned: ignored by spec.driftDetection.ignore: Flux does not correct this; an upgrade still resets it\n...\n-   other: before\n+   other: after\n"
            ),
            "{out}"
        );
        assert!(out.contains("-   tuned: \"2\"\n+   tuned: \"1\"\n"), "the change itself is still shown: {out}");
        let v: Value = serde_json::from_str(&p.render_json(Some(0))).unwrap();
        assert_eq!(v["changes"][0]["driftIgnored"], json!(["/data/tuned"]));
        assert!(v["changes"][1].get("driftIgnored").is_none());
        assert!(
            p.render_markdown("t", Some(0)).contains("<code>/data/tuned</code>: ignored by spec.driftDetection.ignore")
        );
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
        live.1["metadata"]["annotations"] = json!({LAST_APPLIED_ANNOTATION: live.1.to_string()});
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
}
