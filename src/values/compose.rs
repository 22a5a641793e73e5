//! The whole values pipeline of helm-controller (reference §1), then the user's `-f`/`--set` on top.
//!
//! Flux (`chartutil.ChartValuesFromReferences`): `result` starts as `{}`; each `valuesFrom` entry in order is
//! either merged in (`MergeMaps(result, YAML(data))`) or, with a `targetPath`, written with strvals after
//! `result = MergeMaps(result, spec.values)`; finally `MergeMaps(result, spec.values)`. Because `MergeMaps`
//! shares nested maps that only `spec.values` has, a `targetPath` write into such a map changes `spec.values`
//! itself and survives the final merge ("targetPath wins"); if an earlier entry had already created the parent
//! map, the write lands in a merged copy and `spec.values` wins instead. We run the algorithm on Go-shaped
//! shared values (see `gov`) so both outcomes fall out exactly as in Go.
//!
//! The result is what Helm stores as `release.Config`: chart defaults are *not* in it (Helm coalesces them at
//! render time). `valuesFiles` replace the chart's values.yaml as the defaults; [`Composed::coalesced`] shows
//! defaults and values together, and [`Composed::leaves`] where each of their leaves came from (for `helm cozy
//! values --sources`).

use std::collections::BTreeMap;

use serde_json::Value;

use super::gov::{GoMap, GoVal, map_from_json, map_get, map_to_json, new_map};
use super::inputs::{Inputs, Source, ref_label, ref_source, strvals_key};
use super::merge::{coalesce_with_defaults, merge_go, merge_maps};
use super::model::{Values, ValuesError};
use super::provenance::{Leaf, Provenance};
use super::strvals::{parse_into_go, replace_path_go};
use super::yaml::parse_values;

/// The composed values and their provenance.
#[derive(Clone, Debug, Default)]
pub struct Composed {
    /// What Helm stores as `release.Config` (and Flux digests): no chart defaults.
    pub values: Values,
    /// For each top-level key of `values`, the input that last set it.
    pub sources: BTreeMap<String, Source>,
    /// The defaults Helm coalesces under `values`: merged `valuesFiles`, else the chart's values.yaml.
    pub defaults: Values,
    /// `values` coalesced over `defaults`, as templates see them.
    pub coalesced: Values,
    /// For each top-level key of `coalesced`, where it came from.
    pub coalesced_sources: BTreeMap<String, Source>,
    /// The integers of `values` as `--set` expressions (see `integer_sets`).
    pub integer_sets: Vec<String>,
    /// The inputs, kept to tell where each leaf came from ([`Composed::leaves`]).
    pub provenance: Provenance,
}

/// The top-level key a strvals expression writes first (`a\.b.c=1` → `a.b`).
fn first_segment(expr: &str) -> String {
    let mut out = String::new();
    let mut chars = expr.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            '.' | '[' | '=' | ',' => break,
            _ => out.push(c),
        }
    }
    out
}

fn top_keys(m: &GoMap) -> Vec<String> {
    m.borrow().iter().map(|(k, _)| k.clone()).collect()
}

impl Composed {
    /// Every leaf of [`Composed::values`] (with `with_defaults`, of [`Composed::coalesced`]) with its source,
    /// in path order (keys sorted at each level).
    pub fn leaves(&self, with_defaults: bool) -> Vec<Leaf> {
        let values = if with_defaults { &self.coalesced } else { &self.values };
        self.provenance.leaves(values, with_defaults)
    }
}

/// Runs Flux's composition, then the user's files and `--set`s, as described in the module docs.
pub fn compose(inputs: &Inputs) -> Result<Composed, ValuesError> {
    let inline_json = match &inputs.inline {
        Some(Value::Object(m)) => m.clone(),
        _ => Values::new(),
    };
    // A fresh Go-shaped copy of spec.values, as `hr.GetValues()` gives the controller on every reconcile.
    let values: GoMap = map_from_json(&inline_json);
    let mut sources: BTreeMap<String, Source> = BTreeMap::new();
    let (result, tp_owned) = merge_references(inputs, &values, &mut sources)?;
    let result = merge_inline(result, &values, &tp_owned, &mut sources);

    // The user's additions, the way the Helm CLI applies them: files merged in order, then each --set.
    let result = merge_user_files(result, &inputs.user_files, &mut sources);
    apply_user_sets(&result, &inputs.user_sets, &mut sources)?;
    let provenance = Provenance::of(inputs)?;
    Ok(composed(inputs, result, sources, provenance))
}

/// Flux's loop over `valuesFrom`, starting from an empty `result`: each entry in order, a missing one
/// skipped when `optional` and an error otherwise; with a `targetPath`, `result = MergeMaps(result,
/// spec.values)` and then the strvals write into it (which may land in `values` itself, see the module
/// docs); without, its YAML merged in. Records in `sources` the ref that set each top-level key, and
/// returns `result` with, per key, whether a targetPath write set it last (which decides the final merge).
fn merge_references(
    inputs: &Inputs,
    values: &GoMap,
    sources: &mut BTreeMap<String, Source>,
) -> Result<(GoMap, BTreeMap<String, bool>), ValuesError> {
    let mut result: GoMap = new_map();
    let mut tp_owned: BTreeMap<String, bool> = BTreeMap::new();
    for rd in &inputs.refs {
        let r = &rd.reference;
        let label = ref_label(&inputs.namespace, r);
        let Some(data) = &rd.data else {
            if r.optional {
                continue;
            }
            return Err(ValuesError::MissingRef { source_name: label });
        };
        match r.target_path.as_deref().filter(|t| !t.is_empty()) {
            Some(tp) => {
                result = merge_go(&result, values);
                replace_path_go(&result, tp, data, rd.literal).map_err(|e| ValuesError::Strvals {
                    source_name: format!("{label} targetPath {tp}"),
                    message: e.0,
                })?;
                let key = first_segment(tp);
                sources.insert(key.clone(), ref_source(r));
                tp_owned.insert(key, true);
            }
            None => {
                let parsed = map_from_json(&parse_values(data, &label)?);
                for k in top_keys(&parsed) {
                    sources.insert(k.clone(), ref_source(r));
                    tp_owned.insert(k, false);
                }
                result = merge_go(&result, &parsed);
            }
        }
    }
    Ok((result, tp_owned))
}

/// Flux's last step, `MergeMaps(result, spec.values)`: spec.values is what set each of its keys last,
/// except a key a targetPath write set last that keeps that write.
fn merge_inline(
    result: GoMap,
    values: &GoMap,
    tp_owned: &BTreeMap<String, bool>,
    sources: &mut BTreeMap<String, Source>,
) -> GoMap {
    // The final merge with spec.values. A key whose value it leaves unchanged after a targetPath write kept
    // that write (the by-reference quirk), so the write is what set it last.
    let before: BTreeMap<String, Value> =
        top_keys(values).into_iter().filter_map(|k| map_get(&result, &k).map(|v| (k, v.to_json()))).collect();
    let result = merge_go(&result, values);
    for k in top_keys(values) {
        let unchanged = before.get(&k).zip(map_get(&result, &k)).is_some_and(|(b, a)| *b == a.to_json());
        if !(unchanged && tp_owned.get(&k).copied().unwrap_or(false)) {
            sources.insert(k, Source::Inline);
        }
    }
    result
}

/// The user's `-f` files merged over `result` in order, each the source of its top-level keys.
fn merge_user_files(
    mut result: GoMap,
    user_files: &[(String, Values)],
    sources: &mut BTreeMap<String, Source>,
) -> GoMap {
    for (file, vals) in user_files {
        let m = map_from_json(vals);
        for k in top_keys(&m) {
            sources.insert(k, Source::UserFile(file.clone()));
        }
        result = merge_go(&result, &m);
    }
    result
}

/// The user's `--set`s written into `result` in order, each the source of every top-level key it names.
fn apply_user_sets(
    result: &GoMap,
    user_sets: &[String],
    sources: &mut BTreeMap<String, Source>,
) -> Result<(), ValuesError> {
    for expr in user_sets {
        parse_into_go(expr, result, false)
            .map_err(|e| ValuesError::Strvals { source_name: format!("--set {expr}"), message: e.0 })?;
        let key = first_segment(expr);
        // A multi-assignment `--set a=1,b=2` names every key it touches.
        for part in split_assignments(expr) {
            sources.insert(first_segment(&part), Source::UserSet(expr.clone()));
        }
        sources.entry(key).or_insert_with(|| Source::UserSet(expr.clone()));
    }
    Ok(())
}

/// What the composition hands on: `result` as JSON with the sources of the keys it holds, the defaults
/// Helm coalesces under it ([`effective_defaults`]) and the two coalesced with their sources, and the
/// integers strvals wrote ([`integer_sets_of`]).
fn composed(inputs: &Inputs, result: GoMap, mut sources: BTreeMap<String, Source>, provenance: Provenance) -> Composed {
    let values_out = map_to_json(&result);
    sources.retain(|k, _| values_out.contains_key(k));

    let (defaults, default_sources) = effective_defaults(inputs);
    let coalesced = coalesce_with_defaults(&values_out, &defaults);
    let coalesced_sources = coalesced
        .keys()
        .filter_map(|k| sources.get(k).or_else(|| default_sources.get(k)).map(|s| (k.clone(), s.clone())))
        .collect();
    let mut integer_sets = Vec::new();
    integer_sets_of(&GoVal::Map(result), "", &mut integer_sets);
    Composed { values: values_out, sources, defaults, coalesced, coalesced_sources, integer_sets, provenance }
}

/// `--set PATH=N` for every integer in the composed values, the ones strvals wrote (a `targetPath`, a
/// `--set`). helm-controller hands Helm its values in memory, where those stay Go int64s; helm reads a
/// values file as JSON, where every number is a float64, which templates print differently (`1e+06` for
/// 1000000) and which rounds beyond 2^53. Given again with `--set` after the values, they are int64s in
/// helm too. (Numbers from YAML or JSON sources are float64s under helm-controller as well: not these.)
fn integer_sets_of(v: &GoVal, path: &str, out: &mut Vec<String>) {
    match v {
        GoVal::Int(i) => out.push(format!("{path}={i}")),
        GoVal::Map(m) => {
            for (k, v) in m.borrow().iter() {
                let key = strvals_key(k);
                integer_sets_of(v, &if path.is_empty() { key } else { format!("{path}.{key}") }, out);
            }
        }
        GoVal::List(l) if !path.is_empty() => {
            for (i, v) in l.borrow().iter().enumerate() {
                integer_sets_of(v, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// Splits `a=1,b=2` into its assignments (escaped commas and commas inside `{...}` lists stay).
fn split_assignments(expr: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let (mut depth, mut chars) = (0usize, expr.chars());
    while let Some(c) = chars.next() {
        let cur = parts.last_mut().expect("parts is never empty");
        match c {
            '\\' => {
                cur.push(c);
                cur.extend(chars.next());
            }
            '{' => {
                depth += 1;
                cur.push(c);
            }
            '}' => {
                depth = depth.saturating_sub(1);
                cur.push(c);
            }
            ',' if depth == 0 => parts.push(String::new()),
            _ => cur.push(c),
        }
    }
    parts.into_iter().filter(|p| !p.is_empty()).collect()
}

/// `valuesFiles` (merged in order, later ones winning) replace the chart's values.yaml; otherwise the
/// chart's values apply.
fn effective_defaults(inputs: &Inputs) -> (Values, BTreeMap<String, Source>) {
    let Some(files) = &inputs.values_files else {
        let src = inputs.chart_defaults.keys().map(|k| (k.clone(), Source::ChartDefaults)).collect();
        return (inputs.chart_defaults.clone(), src);
    };
    let mut merged = Values::new();
    let mut src = BTreeMap::new();
    for (label, vals) in files {
        merged = merge_maps(&merged, vals);
        for k in vals.keys() {
            src.insert(k.clone(), Source::ValuesFile(label.clone()));
        }
    }
    (merged, src)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flux::helmrelease::ValuesReference;
    use crate::values::inputs::RefData;
    use crate::values::model::test_support::obj;
    use serde_json::json;

    fn cm(name: &str, target_path: Option<&str>, data: &str) -> RefData {
        RefData {
            reference: ValuesReference {
                kind: "ConfigMap".into(),
                name: name.into(),
                values_key: None,
                target_path: target_path.map(str::to_string),
                optional: false,
                literal: false,
            },
            data: Some(data.into()),
            literal: false,
        }
    }

    fn run(inline: Value, refs: Vec<RefData>) -> Composed {
        let inputs = Inputs { namespace: "ns".into(), refs, inline: Some(inline), ..Default::default() };
        compose(&inputs).unwrap_or_else(|e| panic!("{e}"))
    }

    // Expected results were produced by running fluxcd/pkg/chartutil v1.27.1 (MergeMaps, ReplacePathValue,
    // helm v4 ReadValues) through the loop of ChartValuesFromReferences in a throwaway Go program.

    #[test]
    fn target_path_wins_when_inline_alone_created_the_parent() {
        let c = run(json!({"a": {"x": 1}}), vec![cm("tp", Some("a.x"), "5")]);
        assert_eq!(Value::Object(c.values), json!({"a": {"x": 5}}));
        assert_eq!(c.sources["a"].to_string(), "ConfigMap/tp[values.yaml] at a.x");
        let c = run(json!({"a": {"x": 1}}), vec![cm("tp", Some("a.y"), "2")]);
        assert_eq!(Value::Object(c.values), json!({"a": {"x": 1, "y": 2}}));
    }

    #[test]
    fn inline_wins_when_an_earlier_ref_created_the_parent() {
        let c = run(json!({"a": {"x": 1}}), vec![cm("base", None, "a: {z: 0}"), cm("tp", Some("a.x"), "5")]);
        assert_eq!(Value::Object(c.values), json!({"a": {"z": 0, "x": 1}}));
        assert_eq!(c.sources["a"], Source::Inline);
    }

    #[test]
    fn sharing_reaches_nested_maps_and_lists() {
        // `a` is merged (fresh), but `a.b` exists only inline and is shared: the write survives.
        let c = run(json!({"a": {"b": {"x": 1}}}), vec![cm("base", None, "a: {z: 0}"), cm("tp", Some("a.b.x"), "5")]);
        assert_eq!(Value::Object(c.values), json!({"a": {"z": 0, "b": {"x": 5}}}));
        // In-place list element writes mutate the inline list too.
        let c = run(json!({"l": [1, {"k": "v"}]}), vec![cm("i", Some("l[0]"), "9"), cm("j", Some("l[1].k"), "w")]);
        assert_eq!(Value::Object(c.values), json!({"l": [9, {"k": "w"}]}));
        // Growing a list makes a new one, so inline's list wins again.
        let c = run(json!({"l": [1]}), vec![cm("g", Some("l[3]"), "9")]);
        assert_eq!(Value::Object(c.values), json!({"l": [1]}));
    }

    #[test]
    fn integers_strvals_wrote_are_given_again_with_set() {
        // Numbers from YAML and JSON (inline, whole refs) are float64s for helm-controller too: not these.
        let c = run(
            json!({"inline": 7, "l": [1, {"k": "v"}]}),
            vec![
                cm("yaml", None, "fromYaml: 3"),
                cm("big", Some("limits.bytes"), "1000000"),
                cm("dotted", Some("annotations.example\\.com/size"), "-12"),
                cm("listed", Some("l[1].n"), "9007199254740993"),
                cm("text", Some("name"), "007"),
            ],
        );
        assert_eq!(
            c.integer_sets,
            ["l[1].n=9007199254740993", "limits.bytes=1000000", "annotations.example\\.com/size=-12"]
        );
        assert_eq!(c.values["l"][1]["n"], json!(9007199254740993_i64), "kept exact");
    }

    #[test]
    fn a_mutated_inline_map_beats_later_refs() {
        let c = run(json!({"a": {"x": 1}}), vec![cm("tp", Some("a.x"), "5"), cm("later", None, "a: {x: 7, q: 1}")]);
        assert_eq!(Value::Object(c.values), json!({"a": {"x": 5, "q": 1}}));
    }

    #[test]
    fn refs_without_inline_quoted_and_literal_data() {
        let mut lit = cm("lit", Some("s"), "x,y");
        lit.literal = true;
        let c = run(Value::Null, vec![cm("a", None, "a: 1\nb: yes"), cm("m", Some("mode"), "'0755'"), lit]);
        assert_eq!(Value::Object(c.values), json!({"a": 1, "b": true, "mode": "0755", "s": "x,y"}));
        assert_eq!(c.sources["b"].to_string(), "ConfigMap/a[values.yaml]");
    }

    #[test]
    fn optional_and_missing_refs_and_bad_data() {
        let mut missing = cm("gone", None, "");
        missing.data = None;
        let inputs = Inputs { namespace: "ns".into(), refs: vec![missing.clone()], ..Default::default() };
        assert_eq!(
            compose(&inputs).unwrap_err().to_string(),
            "ConfigMap ns/gone key values.yaml: not found (mark it optional: true if it may be absent)"
        );
        missing.reference.optional = true;
        let inputs = Inputs { namespace: "ns".into(), refs: vec![missing], ..Default::default() };
        assert!(compose(&inputs).unwrap().values.is_empty());
        let inputs = Inputs { namespace: "ns".into(), refs: vec![cm("bad", None, "- a")], ..Default::default() };
        assert_eq!(
            compose(&inputs).unwrap_err().to_string(),
            "ConfigMap ns/bad key values.yaml: values must be a YAML mapping, not a list"
        );
        let inputs = Inputs { namespace: "ns".into(), refs: vec![cm("tp", Some("a[x]"), "1")], ..Default::default() };
        assert!(
            compose(&inputs).unwrap_err().to_string().starts_with("ConfigMap ns/tp key values.yaml targetPath a[x]: ")
        );
    }

    #[test]
    fn user_files_and_sets_go_on_top_with_sources() {
        let inputs = Inputs {
            namespace: "ns".into(),
            chart_defaults: obj(json!({"replicas": 1, "image": {"tag": "1", "repo": "r"}, "gone": "x"})),
            refs: vec![cm("base", None, "image: {tag: '2'}")],
            inline: Some(json!({"inline": true, "gone": null})),
            user_files: vec![("my.yaml".into(), obj(json!({"image": {"pull": "Always"}})))],
            user_sets: vec!["image.tag=3,extra=x".into(), r"dotted\.key=1".into()],
            ..Default::default()
        };
        let c = compose(&inputs).unwrap();
        assert_eq!(
            Value::Object(c.values.clone()),
            json!({"image": {"tag": 3, "pull": "Always"}, "inline": true, "gone": null, "extra": "x", "dotted.key": 1})
        );
        assert_eq!(c.sources["image"], Source::UserSet("image.tag=3,extra=x".into()));
        assert_eq!(c.sources["extra"], Source::UserSet("image.tag=3,extra=x".into()));
        assert_eq!(c.sources["dotted.key"], Source::UserSet(r"dotted\.key=1".into()));
        assert_eq!(c.sources["inline"], Source::Inline);
        // Chart defaults fill in underneath; `gone: null` deletes the default.
        assert_eq!(
            Value::Object(c.coalesced),
            json!({"image": {"tag": 3, "pull": "Always", "repo": "r"}, "inline": true, "extra": "x", "dotted.key": 1, "replicas": 1})
        );
        assert_eq!(c.coalesced_sources["replicas"], Source::ChartDefaults);
    }

    #[test]
    fn values_files_replace_chart_defaults() {
        let inputs = Inputs {
            chart_defaults: obj(json!({"fromChart": 1})),
            values_files: Some(vec![
                ("values.yaml".into(), obj(json!({"a": {"x": 1, "z": 0}}))),
                ("prod.yaml".into(), obj(json!({"a": {"y": 2, "z": 9}}))),
            ]),
            ..Default::default()
        };
        let c = compose(&inputs).unwrap();
        assert!(c.values.is_empty());
        assert_eq!(Value::Object(c.defaults), json!({"a": {"x": 1, "y": 2, "z": 9}}), "later files win");
        assert_eq!(c.coalesced_sources["a"], Source::ValuesFile("prod.yaml".into()));
        assert!(!c.coalesced.contains_key("fromChart"));
    }

    #[test]
    fn values_files_all_skipped_leave_empty_defaults() {
        // OverwriteChartDefaultValues gets an empty (non-nil) map: the chart's values.yaml becomes empty.
        let inputs = Inputs {
            chart_defaults: obj(json!({"fromChart": 1})),
            values_files: Some(Vec::new()),
            ..Default::default()
        };
        let c = compose(&inputs).unwrap();
        assert!(c.defaults.is_empty() && c.coalesced.is_empty(), "{:?}", c.coalesced);
        let inputs = Inputs { chart_defaults: obj(json!({"fromChart": 1})), values_files: None, ..Default::default() };
        assert_eq!(Value::Object(compose(&inputs).unwrap().defaults), json!({"fromChart": 1}));
    }
}
