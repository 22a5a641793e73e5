//! `spec.driftDetection.ignore[]`: which JSON pointers of which objects helm-controller leaves out of its
//! drift detection, and how it leaves them out. Pure logic, after helm-controller 1.6's code
//! (`internal/action/diff.go`, fluxcd/pkg `ssa/jsondiff` and the JSON patch library it applies removals
//! with):
//! - a rule's `paths` apply to an object when its `target` matches the object as helm-controller
//!   compares it (the stored manifest's object with Helm's ownership metadata and its namespace, so
//!   `app.kubernetes.io/managed-by=Helm` is there for a label selector); `group`, `version`, `kind`,
//!   `name` and `namespace` are regular expressions anchored at both ends, an empty one matches anything;
//!   `labelSelector` and `annotationSelector` are Kubernetes label selectors (parsed as apimachinery parses them);
//! - the paths of every matching rule are taken together; **only the last rule without a `target`
//!   counts**: helm-controller keeps rules in a map keyed by their compiled selector, and every rule
//!   without one has the same key, so each replaces the one before (fluxcd/pkg#1157, kept as it is
//!   upstream). `target: {}` is a selector of its own, matching everything, and is not affected;
//! - paths are RFC 6901 JSON pointers (`~1` is `/`, `~0` is `~`), array elements by index (a negative
//!   index counts from the end), no wildcards; the path `""` leaves the whole object out;
//! - the paths are removed from both sides of the comparison; a path that is not there is no error,
//!   and neither is one that goes through a value that is not a mapping or list.
//!
//! [`ignored_paths`] and [`covers`] are what a diff needs to tell which of its changes drift detection
//! does not look at.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::selector::LabelSelector;
use crate::flux::helmrelease::HelmReleaseSpec;
use crate::support::error::DriftError;

/// One `spec.driftDetection.ignore[]` entry as written.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IgnoreRule {
    /// JSON pointers; `null` reads as none, as Go reads it.
    #[serde(default, deserialize_with = "nullable")]
    pub paths: Vec<String>,
    /// Which objects the paths apply to; absent (or `null`): every object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Target>,
}

/// `ignore[].target`: a kustomize-style selector. Every field is optional; empty matches anything.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Target {
    #[serde(default, deserialize_with = "nullable")]
    pub group: String,
    #[serde(default, deserialize_with = "nullable")]
    pub version: String,
    #[serde(default, deserialize_with = "nullable")]
    pub kind: String,
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
    #[serde(default, deserialize_with = "nullable")]
    pub namespace: String,
    #[serde(default, deserialize_with = "nullable")]
    pub label_selector: String,
    #[serde(default, deserialize_with = "nullable")]
    pub annotation_selector: String,
}

/// A field Go would leave at its zero value when the JSON says `null`.
pub(super) fn nullable<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// The rules compiled, with helm-controller's selection of which of them count.
#[derive(Clone, Debug, Default)]
pub struct IgnoreRules {
    rules: Vec<Compiled>,
}

#[derive(Clone, Debug)]
struct Compiled {
    paths: Vec<String>,
    /// None: a rule without a target, which applies to every object.
    selector: Option<Selector>,
}

#[derive(Clone, Debug)]
struct Selector {
    group: Option<regex_lite::Regex>,
    version: Option<regex_lite::Regex>,
    kind: Option<regex_lite::Regex>,
    name: Option<regex_lite::Regex>,
    namespace: Option<regex_lite::Regex>,
    labels: Option<LabelSelector>,
    annotations: Option<LabelSelector>,
}

impl IgnoreRules {
    /// Compiles every rule (an invalid expression or selector in any of them is an error, as it makes
    /// helm-controller's whole comparison fail), then keeps the rules that count: all those with a target
    /// and, of those without, only the last one.
    pub fn compile(rules: &[IgnoreRule]) -> Result<IgnoreRules, DriftError> {
        let mut compiled = Vec::with_capacity(rules.len());
        for (index, rule) in rules.iter().enumerate() {
            let selector = rule.target.as_ref().map(|t| Selector::compile(index, t)).transpose()?;
            compiled.push(Compiled { paths: rule.paths.clone(), selector });
        }
        let last_untargeted = compiled.iter().rposition(|r| r.selector.is_none());
        let rules = compiled
            .into_iter()
            .enumerate()
            .filter(|(i, r)| r.selector.is_some() || Some(*i) == last_untargeted)
            .map(|(_, r)| r)
            .collect();
        Ok(IgnoreRules { rules })
    }

    /// The pointers ignored for `object` (as helm-controller compares it: see the module docs), in rule
    /// order; empty when no rule applies.
    pub fn paths_for(&self, object: &Value) -> Vec<String> {
        let view = ObjectView::of(object);
        self.rules
            .iter()
            .filter(|r| r.selector.as_ref().is_none_or(|s| s.matches(&view)))
            .flat_map(|r| r.paths.iter().cloned())
            .collect()
    }
}

impl Selector {
    fn compile(rule: usize, t: &Target) -> Result<Selector, DriftError> {
        let regex = |field: &'static str, pattern: &str| -> Result<Option<regex_lite::Regex>, DriftError> {
            if pattern.is_empty() {
                return Ok(None);
            }
            regex_lite::Regex::new(&format!("^(?:{pattern})$")).map(Some).map_err(|e| DriftError::Target {
                rule,
                field,
                value: pattern.to_string(),
                what: "regular expression",
                reason: e.to_string().lines().last().unwrap_or_default().trim().to_string(),
            })
        };
        let selector = |field: &'static str, text: &str| -> Result<Option<LabelSelector>, DriftError> {
            if text.is_empty() {
                return Ok(None);
            }
            LabelSelector::parse(text).map(Some).map_err(|reason| DriftError::Target {
                rule,
                field,
                value: text.to_string(),
                what: "label selector",
                reason,
            })
        };
        Ok(Selector {
            group: regex("group", &t.group)?,
            version: regex("version", &t.version)?,
            kind: regex("kind", &t.kind)?,
            name: regex("name", &t.name)?,
            namespace: regex("namespace", &t.namespace)?,
            labels: selector("labelSelector", &t.label_selector)?,
            annotations: selector("annotationSelector", &t.annotation_selector)?,
        })
    }

    fn matches(&self, o: &ObjectView<'_>) -> bool {
        let re = |r: &Option<regex_lite::Regex>, s: &str| r.as_ref().is_none_or(|r| r.is_match(s));
        re(&self.namespace, o.namespace)
            && re(&self.name, o.name)
            && re(&self.group, o.group)
            && re(&self.version, o.version)
            && re(&self.kind, o.kind)
            && self.labels.as_ref().is_none_or(|s| s.matches(&o.labels))
            && self.annotations.as_ref().is_none_or(|s| s.matches(&o.annotations))
    }
}

/// What a selector looks at, read as `unstructured.Unstructured` reads it: a labels or annotations
/// mapping with a value that is not a string counts as none at all.
struct ObjectView<'a> {
    group: &'a str,
    version: &'a str,
    kind: &'a str,
    name: &'a str,
    namespace: &'a str,
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
}

impl<'a> ObjectView<'a> {
    fn of(object: &'a Value) -> ObjectView<'a> {
        let text = |pointer: &str| object.pointer(pointer).and_then(Value::as_str).unwrap_or_default();
        let api_version = object.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        ObjectView {
            group,
            version,
            kind: text("/kind"),
            name: text("/metadata/name"),
            namespace: text("/metadata/namespace"),
            labels: string_map(object, "/metadata/labels"),
            annotations: string_map(object, "/metadata/annotations"),
        }
    }
}

/// A `map[string]string` of an object as `unstructured.NestedStringMap` reads it: empty when it is not
/// there, not a mapping, or holds a value that is not a string.
pub(super) fn string_map(object: &Value, pointer: &str) -> BTreeMap<String, String> {
    let Some(Value::Object(map)) = object.pointer(pointer) else { return BTreeMap::new() };
    map.iter()
        .map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
        .collect::<Option<BTreeMap<_, _>>>()
        .unwrap_or_default()
}

/// The JSON pointers `spec.driftDetection.ignore` leaves out for `object`, the object as helm-controller
/// compares it: the release's object with Helm's ownership metadata
/// ([`crate::cluster::manifests::add_helm_ownership`]) and its namespace. The spec is read and its rules compiled
/// on every call; to select for many objects, compile once with [`IgnoreRules::compile`].
pub fn ignored_paths(spec: &HelmReleaseSpec, object: &Value) -> Result<Vec<String>, DriftError> {
    let detection = super::DriftDetection::of(spec)?;
    Ok(IgnoreRules::compile(&detection.ignore)?.paths_for(object))
}

/// Whether the field at `pointer` (a JSON pointer into the same object) is one of `paths` or inside one:
/// compared token by token after unescaping, so `/metadata/annotations/a~1b` is under
/// `/metadata/annotations`, and `""` covers everything.
pub fn covers(paths: &[String], pointer: &str) -> bool {
    let field = tokens(pointer);
    paths.iter().any(|p| p.is_empty() || field.starts_with(&tokens(p)))
}

/// One key or index as a JSON pointer token: `~` as `~0`, `/` as `~1`.
pub fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// A pointer's tokens, unescaped, as the JSON patch library splits it: at every `/`, the text before the
/// first one (normally empty) dropped.
fn tokens(pointer: &str) -> Vec<String> {
    pointer.split('/').skip(1).map(unescape).collect()
}

/// RFC 6901: `~1` is `/` and `~0` is `~`, read left to right in one pass (so `~01` is `~1`); any other
/// `~` stays as it is.
pub(super) fn unescape(token: &str) -> String {
    let mut out = String::with_capacity(token.len());
    let mut chars = token.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('~', Some('1')) => {
                chars.next();
                out.push('/');
            }
            ('~', Some('0')) => {
                chars.next();
                out.push('~');
            }
            (c, _) => out.push(c),
        }
    }
    out
}

/// Removes each of `paths` from `doc`, in order, as JSON patch `remove` operations applied by
/// helm-controller (evanphx/json-patch with missing paths allowed and negative indexes supported): a
/// path that is not there, or that goes through a scalar or `null`, changes nothing. Err, as there,
/// when the last token of a path into a list is not an index (`/spec/ports/name`, `/list/-`).
pub fn remove_paths(doc: &mut Value, paths: &[String]) -> Result<(), String> {
    for path in paths {
        remove_path(doc, path)?;
    }
    Ok(())
}

fn remove_path(doc: &mut Value, path: &str) -> Result<(), String> {
    let split: Vec<&str> = path.split('/').collect();
    let Some((last, parents)) = split.split_last() else { return Ok(()) };
    if split.len() < 2 && !path.is_empty() {
        // No `/` at all: the library finds no parent, which counts as missing.
        return Ok(());
    }
    let mut current = doc;
    for part in parents.iter().skip(1) {
        let part = unescape(part);
        current = match current {
            Value::Object(map) => match map.get_mut(&part) {
                Some(next) => next,
                None => return Ok(()),
            },
            Value::Array(items) => match index(&part, items.len()) {
                Some(i) if i < items.len() => &mut items[i],
                _ => return Ok(()),
            },
            _ => return Ok(()),
        };
        if !matches!(current, Value::Object(_) | Value::Array(_)) {
            return Ok(());
        }
    }
    let key = unescape(last);
    match current {
        Value::Object(map) => {
            map.shift_remove(&key);
        }
        Value::Array(items) => {
            let n: i64 = key
                .parse()
                .map_err(|_| format!("ignore path {path:?}: {key:?} is not an index into the list at that place"))?;
            let len = items.len() as i64;
            let i = if n < 0 { n + len } else { n };
            if (0..len).contains(&i) {
                items.remove(i as usize);
            }
        }
        _ => {}
    }
    Ok(())
}

/// An index token into a list of `len` elements: Go's `strconv.Atoi`, a negative one counted from the end.
fn index(token: &str, len: usize) -> Option<usize> {
    let n: i64 = token.parse().ok()?;
    let len = i64::try_from(len).ok()?;
    let i = if n < 0 { n + len } else { n };
    usize::try_from(i).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(value: Value) -> IgnoreRules {
        let rules: Vec<IgnoreRule> = serde_json::from_value(value).expect("rules parse");
        IgnoreRules::compile(&rules).expect("rules compile")
    }

    fn cm(name: &str, labels: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": name, "namespace": "apps", "labels": labels,
                            "annotations": {"meta.helm.sh/release-name": "web"}}})
    }

    #[test]
    fn only_the_last_rule_without_a_target_counts() {
        let r = rules(json!([
            {"paths": ["/data/first"]},
            {"paths": ["/data/targeted"], "target": {"kind": "ConfigMap"}},
            {"paths": ["/data/second"]},
            {"paths": ["/data/everything"], "target": {}},
            {"paths": ["/data/third"], "target": null},
        ]));
        assert_eq!(r.paths_for(&cm("a", json!({}))), ["/data/targeted", "/data/everything", "/data/third"]);
    }

    #[test]
    fn targets_are_anchored_expressions_and_selectors() {
        let r = rules(json!([
            {"paths": ["/kind-config"], "target": {"kind": "Config"}},
            {"paths": ["/kind"], "target": {"kind": "Config.*", "version": "v1", "group": ""}},
            {"paths": ["/name"], "target": {"name": "web-(a|b)"}},
            {"paths": ["/ns"], "target": {"namespace": "app"}},
            {"paths": ["/labels"], "target": {"labelSelector": "app.kubernetes.io/managed-by=Helm,tier in (front)"}},
            {"paths": ["/annotations"], "target": {"annotationSelector": "meta.helm.sh/release-name=web"}},
            {"paths": ["/apps"], "target": {"group": "apps"}},
        ]));
        let obj = cm("web-a", json!({"app.kubernetes.io/managed-by": "Helm", "tier": "front"}));
        assert_eq!(r.paths_for(&obj), ["/kind", "/name", "/labels", "/annotations"]);
        assert_eq!(r.paths_for(&cm("web-ab", json!({"tier": "back"}))), ["/kind", "/annotations"]);
        // A label that is not a string makes the labels read as none.
        assert_eq!(r.paths_for(&cm("x", json!({"tier": "front", "n": 1}))), ["/kind", "/annotations"]);
    }

    #[test]
    fn an_invalid_target_is_an_error_naming_the_rule_and_field() {
        let bad: Vec<IgnoreRule> = serde_json::from_value(json!([
            {"paths": ["/a"]},
            {"paths": ["/b"], "target": {"name": "web-("}},
        ]))
        .unwrap();
        let err = IgnoreRules::compile(&bad).unwrap_err().to_string();
        assert!(
            err.starts_with("spec.driftDetection.ignore[1].target.name \"web-(\" is not a valid regular expression"),
            "{err}"
        );
        let bad: Vec<IgnoreRule> =
            serde_json::from_value(json!([{"paths": [], "target": {"labelSelector": "a in b"}}])).unwrap();
        let err = IgnoreRules::compile(&bad).unwrap_err().to_string();
        assert!(err.contains("ignore[0].target.labelSelector \"a in b\" is not a valid label selector"), "{err}");
    }

    #[test]
    fn removal_follows_json_patch_with_escapes_and_missing_paths() {
        let mut doc = json!({
            "metadata": {"annotations": {"a/b": "1", "c~d": "2", "keep": "3"}},
            "spec": {"ports": [{"port": 1}, {"port": 2}, {"port": 3}], "n": 1},
            "data": {"x": "1"}
        });
        let paths: Vec<String> = [
            "/metadata/annotations/a~1b",
            "/metadata/annotations/c~0d",
            "/spec/ports/-1",
            "/spec/ports/0/port",
            "/nothing/here",
            "/spec/n/deeper",
            "/spec/ports/9",
            "/spec/ports/-9",
            "/data/x",
            "no-slash",
        ]
        .map(String::from)
        .to_vec();
        remove_paths(&mut doc, &paths).unwrap();
        assert_eq!(
            doc,
            json!({"metadata": {"annotations": {"keep": "3"}}, "spec": {"ports": [{}, {"port": 2}], "n": 1}, "data": {}})
        );
        let err = remove_paths(&mut doc, &["/spec/ports/name".to_string()]).unwrap_err();
        assert!(err.contains("not an index"), "{err}");
        // Removals go one after the other: indexes move.
        let mut list = json!({"l": [0, 1, 2]});
        remove_paths(&mut list, &["/l/0".into(), "/l/0".into()]).unwrap();
        assert_eq!(list, json!({"l": [2]}));
    }

    #[test]
    fn a_pointer_is_covered_by_its_path_and_by_the_paths_above_it() {
        let paths: Vec<String> = ["/data/a~1b", "/metadata/labels"].map(String::from).to_vec();
        assert!(covers(&paths, "/data/a~1b"));
        assert!(covers(&paths, "/metadata/labels/x"));
        assert!(!covers(&paths, "/data/a"));
        assert!(!covers(&paths, "/metadata/label"));
        assert!(!covers(&paths, "/data"));
        assert!(covers(&["".to_string()], "/anything"));
        assert_eq!(escape("a/b~c"), "a~1b~0c");
        assert_eq!(unescape("~01"), "~1");
    }
}
