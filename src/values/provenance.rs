//! Where each leaf of the composed values came from, for `helm cozy values --sources`.
//!
//! A leaf is a value that is not a mapping: a scalar, a null or a list (Flux's `MergeMaps` and Helm's
//! coalescing replace a list whole, so a list is one leaf, written `a` rather than `a[0]`), or an empty
//! mapping. Its path is written as `--set` writes it (`image.tag`, `annotations.example\.com/x`).
//!
//! The source of a leaf is found by value rather than by replaying the composition: every input (a *step*)
//! is kept as the values it writes on its own, lowest precedence first (the chart's values.yaml or its
//! `valuesFiles`, each `valuesFrom` entry, `spec.values`, each `-f` file, each `--set`; a `targetPath` or
//! `--set` write is the mapping it makes from nothing), and a leaf's source is the last step that holds the
//! same value at its path. That follows helm-controller's by-reference quirks (a `targetPath` write that
//! survives the final merge with `spec.values`, or one that does not, see `compose`) without modelling
//! them twice. A leaf that no step holds as it is, a list that strvals wrote into element by element, goes
//! to the last `targetPath`/`--set` write into it, else to the last step that holds its path.
//!
//! A leaf that came from a Secret (or a list a Secret wrote into) is masked: [`Leaf::shown_value`].

use serde_json::Value;

use super::gov::{map_to_json, new_map};
use super::inputs::{Inputs, Source, ref_label, ref_source, strvals_key};
use super::model::{Values, ValuesError};
use super::strvals::{parse_into_go, replace_path_go};
use super::yaml::parse_values;

/// One input of the composition and the values it writes on its own.
#[derive(Clone, Debug)]
struct Step {
    source: Source,
    values: Values,
    /// The chart's values.yaml or a `valuesFiles` entry: a source only of the values coalesced over them.
    default: bool,
    /// A strvals write (`targetPath`, `--set`), which may write into a list in place.
    write: bool,
    /// For data read from a Secret, what the mask names: `Secret NS/NAME key KEY`.
    secret: Option<String>,
}

/// The inputs of one composition as steps (see the module docs), lowest precedence first.
#[derive(Clone, Debug, Default)]
pub struct Provenance {
    steps: Vec<Step>,
}

/// One leaf of the composed values.
#[derive(Clone, Debug, PartialEq)]
pub struct Leaf {
    /// The key path, as `--set` writes it: `image.tag`, `dotted\.key`.
    pub path: String,
    /// The value, unmasked.
    pub value: Value,
    /// The input that set it (None only if no input holds its path, which composition never produces).
    pub source: Option<Source>,
    /// The Secret it came from (`Secret NS/NAME key KEY`): its value is not to be shown.
    pub secret: Option<String>,
}

impl Leaf {
    /// The value to print: for a leaf from a Secret, `*** (Secret NS/NAME key KEY)`.
    pub fn shown_value(&self) -> Value {
        match &self.secret {
            Some(label) => Value::String(format!("*** ({label})")),
            None => self.value.clone(),
        }
    }
}

impl Provenance {
    /// The steps of `inputs`. Fails only where [`super::compose()`] fails on the same inputs.
    pub(crate) fn of(inputs: &Inputs) -> Result<Provenance, ValuesError> {
        let mut steps = default_steps(inputs);
        for rd in &inputs.refs {
            let Some(data) = &rd.data else { continue };
            let r = &rd.reference;
            let label = ref_label(&inputs.namespace, r);
            let (values, write) = match r.target_path.as_deref().filter(|t| !t.is_empty()) {
                Some(tp) => (written(&label, |m| replace_path_go(m, tp, data, rd.literal).map_err(|e| e.0))?, true),
                None => (parse_values(data, &label)?, false),
            };
            let secret = (r.kind == "Secret").then_some(label);
            steps.push(Step { source: ref_source(r), values, default: false, write, secret });
        }
        if let Some(Value::Object(inline)) = &inputs.inline {
            steps.push(step(Source::Inline, inline.clone()));
        }
        for (file, values) in &inputs.user_files {
            steps.push(step(Source::UserFile(file.clone()), values.clone()));
        }
        for expr in &inputs.user_sets {
            let values = written(&format!("--set {expr}"), |m| parse_into_go(expr, m, false).map_err(|e| e.0))?;
            steps.push(Step { write: true, ..step(Source::UserSet(expr.clone()), values) });
        }
        Ok(Provenance { steps })
    }

    /// Every leaf of `values` with its source among the steps (the chart defaults' only `with_defaults`).
    pub fn leaves(&self, values: &Values, with_defaults: bool) -> Vec<Leaf> {
        let steps: Vec<&Step> = self.steps.iter().filter(|s| with_defaults || !s.default).collect();
        let mut found = Vec::new();
        walk(values, &mut Vec::new(), &mut found);
        found
            .into_iter()
            .map(|(keys, value)| {
                let (source, secret) = attribute(&steps, &keys, value);
                Leaf { path: path_text(&keys), value: value.clone(), source, secret }
            })
            .collect()
    }
}

/// A step that is neither a default nor a write nor a Secret's.
fn step(source: Source, values: Values) -> Step {
    Step { source, values, default: false, write: false, secret: None }
}

/// The chart's values.yaml, or the `valuesFiles` that replace it, one step each.
fn default_steps(inputs: &Inputs) -> Vec<Step> {
    let defaults = match &inputs.values_files {
        Some(files) => files.iter().map(|(label, v)| (Source::ValuesFile(label.clone()), v.clone())).collect(),
        None => vec![(Source::ChartDefaults, inputs.chart_defaults.clone())],
    };
    defaults.into_iter().map(|(source, values)| Step { default: true, ..step(source, values) }).collect()
}

/// The mapping a strvals write makes from nothing; an error names `label`.
fn written(label: &str, write: impl FnOnce(&super::gov::GoMap) -> Result<(), String>) -> Result<Values, ValuesError> {
    let m = new_map();
    write(&m).map_err(|message| ValuesError::Strvals { source_name: label.to_string(), message })?;
    Ok(map_to_json(&m))
}

/// The leaves under `m`, keys sorted at each level, with their key paths.
fn walk<'a>(m: &'a Values, keys: &mut Vec<String>, out: &mut Vec<(Vec<String>, &'a Value)>) {
    let mut names: Vec<&String> = m.keys().collect();
    names.sort();
    for name in names {
        keys.push(name.clone());
        match &m[name.as_str()] {
            Value::Object(inner) if !inner.is_empty() => walk(inner, keys, out),
            leaf => out.push((keys.clone(), leaf)),
        }
        keys.pop();
    }
}

/// What `values` holds at `keys`, if anything.
fn lookup<'a>(values: &'a Values, keys: &[String]) -> Option<&'a Value> {
    let (first, rest) = keys.split_first()?;
    rest.iter().try_fold(values.get(first)?, |v, k| v.as_object()?.get(k))
}

/// The source of the leaf `keys` = `value` and, if it came from a Secret, that Secret's label: the last
/// step holding `value` there; failing that, the last write into it, else the last step holding the path,
/// masked if any Secret's step holds the path.
fn attribute(steps: &[&Step], keys: &[String], value: &Value) -> (Option<Source>, Option<String>) {
    if let Some(s) = steps.iter().rev().find(|s| lookup(&s.values, keys) == Some(value)) {
        return (Some(s.source.clone()), s.secret.clone());
    }
    let holding: Vec<&Step> = steps.iter().rev().copied().filter(|s| lookup(&s.values, keys).is_some()).collect();
    let chosen = holding.iter().find(|s| s.write).or_else(|| holding.first());
    let secret = chosen.and_then(|s| s.secret.clone()).or_else(|| holding.iter().find_map(|s| s.secret.clone()));
    (chosen.map(|s| s.source.clone()), secret)
}

/// A key path in `--set` syntax.
fn path_text(keys: &[String]) -> String {
    keys.iter().map(|k| strvals_key(k)).collect::<Vec<_>>().join(".")
}

/// The leaves as the document `values --sources` prints: a list of `{path, value, source}`, values from
/// Secrets masked, the source as [`Source`] displays it (null if unknown).
pub fn sources_document(leaves: &[Leaf]) -> Value {
    let rows = leaves.iter().map(|l| {
        let mut row = serde_json::Map::new();
        row.insert("path".into(), Value::String(l.path.clone()));
        row.insert("value".into(), l.shown_value());
        row.insert("source".into(), l.source.as_ref().map_or(Value::Null, |s| Value::String(s.to_string())));
        Value::Object(row)
    });
    Value::Array(rows.collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flux::helmrelease::ValuesReference;
    use crate::values::compose::compose;
    use crate::values::inputs::RefData;
    use crate::values::model::test_support::obj;
    use serde_json::json;

    fn reference(kind: &str, name: &str, key: Option<&str>, target_path: Option<&str>, data: &str) -> RefData {
        RefData {
            reference: ValuesReference {
                kind: kind.into(),
                name: name.into(),
                values_key: key.map(str::to_string),
                target_path: target_path.map(str::to_string),
                optional: false,
                literal: false,
            },
            data: Some(data.into()),
            literal: false,
        }
    }

    fn cm(name: &str, target_path: Option<&str>, data: &str) -> RefData {
        reference("ConfigMap", name, None, target_path, data)
    }

    /// `path = value <- source` for each leaf (the value as shown), for compact assertions.
    fn rows(inputs: &Inputs, with_defaults: bool) -> Vec<String> {
        let composed = compose(inputs).unwrap_or_else(|e| panic!("{e}"));
        let leaves = composed.leaves(with_defaults);
        let source = |l: &Leaf| l.source.as_ref().map_or("?".to_string(), ToString::to_string);
        leaves.iter().map(|l| format!("{} = {} <- {}", l.path, l.shown_value(), source(l))).collect()
    }

    fn inline_and_refs(inline: Value, refs: Vec<RefData>) -> Inputs {
        Inputs { namespace: "ns".into(), refs, inline: Some(inline), ..Default::default() }
    }

    #[test]
    fn a_set_names_only_the_leaf_it_wrote() {
        let inputs = Inputs {
            chart_defaults: obj(json!({"image": {"repository": "nginx", "tag": "1.27"}, "replicas": 1})),
            inline: Some(json!({"replicas": 2})),
            user_sets: vec!["image.tag=1.29".into()],
            ..Default::default()
        };
        assert_eq!(
            rows(&inputs, true),
            [
                r#"image.repository = "nginx" <- chart values.yaml"#,
                r#"image.tag = "1.29" <- --set image.tag=1.29"#,
                "replicas = 2 <- spec.values",
            ]
        );
        // Without the defaults, only what Helm stores.
        assert_eq!(
            rows(&inputs, false),
            [r#"image.tag = "1.29" <- --set image.tag=1.29"#, "replicas = 2 <- spec.values"]
        );
    }

    #[test]
    fn every_kind_of_source_in_precedence_order() {
        let inputs = Inputs {
            namespace: "ns".into(),
            values_files: Some(vec![
                ("values.yaml".into(), obj(json!({"a": {"x": 1, "y": 1, "z": 1}, "keep": true}))),
                ("prod.yaml".into(), obj(json!({"a": {"x": 2}}))),
            ]),
            // (Not `y`: YAML 1.1 reads it as true.)
            refs: vec![cm("base", None, "b: {p: 1, q: 1}"), cm("tp", Some("b.q"), "2")],
            inline: Some(json!({"a": {"y": 3}, "c": "inline"})),
            user_files: vec![("my.yaml".into(), obj(json!({"c": "file", "d": 4})))],
            user_sets: vec!["d=5,e=6".into()],
            ..Default::default()
        };
        assert_eq!(
            rows(&inputs, true),
            [
                "a.x = 2 <- valuesFiles prod.yaml",
                "a.y = 3 <- spec.values",
                "a.z = 1 <- valuesFiles values.yaml",
                "b.p = 1 <- ConfigMap/base[values.yaml]",
                "b.q = 2 <- ConfigMap/tp[values.yaml] at b.q",
                r#"c = "file" <- -f my.yaml"#,
                "d = 5 <- --set d=5,e=6",
                "e = 6 <- --set d=5,e=6",
                "keep = true <- valuesFiles values.yaml",
            ]
        );
    }

    #[test]
    fn follows_who_wins_between_target_path_and_inline() {
        // targetPath wins when spec.values alone created the parent map...
        let inputs = inline_and_refs(json!({"a": {"x": 1, "y": 2}}), vec![cm("tp", Some("a.x"), "5")]);
        assert_eq!(rows(&inputs, false), ["a.x = 5 <- ConfigMap/tp[values.yaml] at a.x", "a.y = 2 <- spec.values"]);
        // ...spec.values wins when an earlier entry created it...
        let refs = vec![cm("base", None, "a: {z: 0}"), cm("tp", Some("a.x"), "5")];
        let inputs = inline_and_refs(json!({"a": {"x": 1}}), refs);
        assert_eq!(rows(&inputs, false), ["a.x = 1 <- spec.values", "a.z = 0 <- ConfigMap/base[values.yaml]"]);
        // ...and a write into spec.values' own map beats a later entry.
        let refs = vec![cm("tp", Some("a.x"), "5"), cm("later", None, "a: {x: 7, q: 1}")];
        let inputs = inline_and_refs(json!({"a": {"x": 1}}), refs);
        assert_eq!(
            rows(&inputs, false),
            ["a.q = 1 <- ConfigMap/later[values.yaml]", "a.x = 5 <- ConfigMap/tp[values.yaml] at a.x"]
        );
    }

    #[test]
    fn a_list_is_one_leaf() {
        // Replaced whole by a later source.
        let inputs = Inputs {
            chart_defaults: obj(json!({"args": ["--a", "--b"], "ports": [{"port": 80}]})),
            user_files: vec![("my.yaml".into(), obj(json!({"args": ["--c"]})))],
            ..Default::default()
        };
        assert_eq!(
            rows(&inputs, true),
            [r#"args = ["--c"] <- -f my.yaml"#, r#"ports = [{"port":80}] <- chart values.yaml"#]
        );
        // Written into element by element: the last write into it.
        let refs = vec![cm("i", Some("l[0]"), "9"), cm("j", Some("l[1].k"), "w")];
        let inputs = inline_and_refs(json!({"l": [1, {"k": "v"}]}), refs);
        assert_eq!(rows(&inputs, false), [r#"l = [9,{"k":"w"}] <- ConfigMap/j[values.yaml] at l[1].k"#]);
        // A --set that writes a whole new list.
        let inputs = Inputs { user_sets: vec!["l={x,y}".into()], ..Default::default() };
        assert_eq!(rows(&inputs, false), [r#"l = ["x","y"] <- --set l={x,y}"#]);
    }

    #[test]
    fn values_from_a_secret_are_masked() {
        let secret = reference("Secret", "creds", Some("password"), Some("auth.password"), "hunter2");
        let whole = reference("Secret", "all", None, None, "db: {user: admin}\nl: [a]");
        let written = cm("cm", Some("l[1]"), "b");
        let inputs = Inputs {
            namespace: "apps".into(),
            chart_defaults: obj(json!({"auth": {"user": "me"}})),
            refs: vec![secret, whole, written],
            ..Default::default()
        };
        assert_eq!(
            rows(&inputs, true),
            [
                r#"auth.password = "*** (Secret apps/creds key password)" <- Secret/creds[password] at auth.password"#,
                r#"auth.user = "me" <- chart values.yaml"#,
                r#"db.user = "*** (Secret apps/all key values.yaml)" <- Secret/all[values.yaml]"#,
                // A ConfigMap wrote into a list from a Secret: the list is masked too.
                r#"l = "*** (Secret apps/all key values.yaml)" <- ConfigMap/cm[values.yaml] at l[1]"#,
            ]
        );
        let composed = compose(&inputs).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(composed.leaves(false)[0].value, json!("hunter2"), "unmasked in the library");
    }

    #[test]
    fn odd_keys_empty_maps_and_nulls() {
        let inputs = Inputs {
            chart_defaults: obj(json!({"gone": "x", "empty": {"k": 1}})),
            inline: Some(json!({"gone": null, "empty": {}, "example.com/size": 1, "n": {"m": {}}})),
            ..Default::default()
        };
        assert_eq!(
            rows(&inputs, false),
            [
                "empty = {} <- spec.values",
                r"example\.com/size = 1 <- spec.values",
                "gone = null <- spec.values",
                "n.m = {} <- spec.values",
            ]
        );
        // Coalesced, null deletes the default and an empty map takes the default's keys.
        assert_eq!(
            rows(&inputs, true),
            ["empty.k = 1 <- chart values.yaml", r"example\.com/size = 1 <- spec.values", "n.m = {} <- spec.values"]
        );
    }

    #[test]
    fn the_document_lists_path_value_and_source() {
        let inputs = Inputs {
            namespace: "ns".into(),
            refs: vec![reference("Secret", "s", Some("k"), Some("p"), "v")],
            user_sets: vec!["a.b=1".into()],
            ..Default::default()
        };
        let composed = compose(&inputs).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            sources_document(&composed.leaves(false)),
            json!([
                {"path": "a.b", "value": 1, "source": "--set a.b=1"},
                {"path": "p", "value": "*** (Secret ns/s key k)", "source": "Secret/s[k] at p"},
            ])
        );
        let mut leaf = composed.leaves(false)[0].clone();
        leaf.source = None;
        assert_eq!(sources_document(&[leaf])[0]["source"], Value::Null);
    }
}
