//! Merging values: Flux `MergeMaps` and Helm's coalescing of chart defaults.

use serde_json::Value;

use super::gov::{GoMap, GoVal, map_get, map_set, new_map};
use super::model::Values;

/// Flux `chartutil.MergeMaps(a, b)`: `b` wins; when both sides hold a map at a key the maps are merged
/// recursively, anything else (lists included) is replaced whole. `null` in `b` is a value, not a deletion.
///
/// On owned JSON values the by-reference sharing of the Go function is invisible; [`super::compose()`] runs the
/// Go-shaped variant, which is where the sharing changes the outcome.
pub fn merge_maps(a: &Values, b: &Values) -> Values {
    let mut out = a.clone();
    for (k, v) in b {
        match (out.get_mut(k), v) {
            (Some(Value::Object(dst)), Value::Object(src)) => {
                let merged = merge_maps(dst, src);
                *dst = merged;
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out
}

/// `MergeMaps` on Go-shaped values, sharing exactly what Go shares: the result is a new map, but every
/// nested map or list that is not itself merged is the very same object as in `a` or `b`.
pub(crate) fn merge_go(a: &GoMap, b: &GoMap) -> GoMap {
    let out = new_map();
    out.borrow_mut().extend(a.borrow().iter().cloned());
    for (k, v) in b.borrow().iter() {
        if let (GoVal::Map(src), Some(GoVal::Map(dst))) = (v, map_get(&out, k)) {
            map_set(&out, k, GoVal::Map(merge_go(&dst, src)));
            continue;
        }
        map_set(&out, k, v.clone());
    }
    out
}

/// Helm's coalescing of chart defaults under user values (`chartutil.CoalesceValues` for the top-level chart,
/// Helm 4.2): user maps deep-merge with default maps; any other user value replaces the default; a user `null`
/// deletes the default key; `null`s inside the defaults never leak into the result. Subchart and `global`
/// propagation is not modelled: this is the `values --sources` view, not a renderer.
pub fn coalesce_with_defaults(user: &Values, defaults: &Values) -> Values {
    let mut out = user.clone();
    for (key, def) in defaults {
        match out.get_mut(key) {
            Some(Value::Null) => {
                out.remove(key);
            }
            Some(Value::Object(dst)) => {
                if let Value::Object(src) = def {
                    let mut src = src.clone();
                    clean_nils(&mut src);
                    coalesce_tables(dst, &src);
                }
                // A user map over a default scalar: Helm warns and keeps the user's map.
            }
            Some(_) => {}
            None => match def {
                Value::Null => {}
                Value::Object(src) => {
                    let mut src = src.clone();
                    clean_nils(&mut src);
                    out.insert(key.clone(), Value::Object(src));
                }
                other => {
                    out.insert(key.clone(), other.clone());
                }
            },
        }
    }
    out
}

/// Helm `coalesceTablesFullKey(dst, src, merge=false)`: `dst` (user) wins. A user `null` deletes the key
/// only where the default had a non-null value; elsewhere it stays `null`.
fn coalesce_tables(dst: &mut Values, src: &Values) {
    for (key, val) in src {
        match dst.get_mut(key) {
            Some(Value::Null) if !val.is_null() => {
                dst.remove(key);
            }
            None => {
                dst.insert(key.clone(), val.clone());
            }
            Some(Value::Object(d)) => {
                if let Value::Object(s) = val {
                    coalesce_tables(d, s);
                }
            }
            Some(_) => {}
        }
    }
}

/// Helm `cleanNilValues`: drops `null` keys from default maps, recursively through maps (not lists).
fn clean_nils(m: &mut Values) {
    m.retain(|_, v| !v.is_null());
    for v in m.values_mut() {
        if let Value::Object(sub) = v {
            clean_nils(sub);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::model::test_support::obj;
    use serde_json::json;

    #[test]
    fn merge_recurses_into_maps_and_replaces_lists_and_scalars() {
        let a = obj(json!({"m": {"x": 1, "y": {"z": 1}}, "l": [1, 2, 3], "s": "a", "keep": true}));
        let b = obj(json!({"m": {"y": {"w": 2}}, "l": [9], "s": {"now": "map"}}));
        let got = merge_maps(&a, &b);
        assert_eq!(
            Value::Object(got),
            json!({"m": {"x": 1, "y": {"z": 1, "w": 2}}, "l": [9], "s": {"now": "map"}, "keep": true})
        );
    }

    #[test]
    fn merge_null_is_a_value_and_map_replaces_scalar_and_back() {
        let a = obj(json!({"a": {"x": 1}, "b": 1}));
        let b = obj(json!({"a": null, "b": {"y": 2}}));
        assert_eq!(Value::Object(merge_maps(&a, &b)), json!({"a": null, "b": {"y": 2}}));
        let c = obj(json!({"b": 3}));
        assert_eq!(Value::Object(merge_maps(&merge_maps(&a, &b), &c)), json!({"a": null, "b": 3}));
    }

    #[test]
    fn merge_go_shares_unmerged_nested_maps() {
        let a = GoVal::from_json(&json!({"both": {"x": 1}}));
        let b = GoVal::from_json(&json!({"both": {"y": 2}, "only_b": {"z": 3}}));
        let (GoVal::Map(a), GoVal::Map(b)) = (a, b) else { panic!("maps expected") };
        let out = merge_go(&a, &b);
        let (Some(GoVal::Map(ob)), Some(GoVal::Map(bb))) = (map_get(&out, "only_b"), map_get(&b, "only_b")) else {
            panic!("maps expected")
        };
        assert!(std::rc::Rc::ptr_eq(&ob, &bb), "a map only in b is shared, as in Go");
        let (Some(GoVal::Map(o)), Some(GoVal::Map(bm))) = (map_get(&out, "both"), map_get(&b, "both")) else {
            panic!("maps expected")
        };
        assert!(!std::rc::Rc::ptr_eq(&o, &bm), "a merged map is a new map");
    }

    #[test]
    fn coalesce_user_over_defaults() {
        let defaults = obj(json!({
            "image": {"repo": "x", "tag": "1", "pullPolicy": null},
            "replicas": 1,
            "drop": "me",
            "nilDefault": null,
            "list": [1, 2],
            "table": {"a": 1},
        }));
        let user = obj(json!({
            "image": {"tag": "2", "extra": null, "repo": null},
            "drop": null,
            "list": [3],
            "table": "scalar wins",
            "userOnlyNull": null,
        }));
        let got = coalesce_with_defaults(&user, &defaults);
        assert_eq!(
            Value::Object(got),
            json!({
                // user null deletes the default `repo`; a user null with no default stays.
                "image": {"tag": "2", "extra": null},
                "list": [3],
                "table": "scalar wins",
                "userOnlyNull": null,
                "replicas": 1,
            })
        );
    }

    #[test]
    fn coalesce_user_map_over_default_scalar_keeps_user_map() {
        let got =
            coalesce_with_defaults(&obj(json!({"a": {"b": 1}})), &obj(json!({"a": "s", "c": {"d": null, "e": 1}})));
        assert_eq!(Value::Object(got), json!({"a": {"b": 1}, "c": {"e": 1}}));
    }
}
