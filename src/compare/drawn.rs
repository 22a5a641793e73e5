//! Values a chart draws anew at every render. Sprig's random strings, keys and certificates, UUIDs and
//! the time differ between any two renders. A chart usually keeps them across upgrades by a `lookup` of
//! the live object, which finds nothing without a cluster. Two sides rendered offline (`review`, `diff
//! --against git`) would then differ in every such value on every run, and a reviewer would be told of a
//! change the commit did not make.
//!
//! So where one side's objects, rendered a second time from the same inputs, differ from the first
//! render, those values were drawn anew: the other side's value at the same place is taken as the same
//! (it was drawn by the same template, or by its new version; which of the two cannot be known offline).
//! Everything else of the object is compared as always.

use serde_json::Value;

use crate::cluster::manifests::ObjectId;

/// `new` with each value that `first` and `again` (one side rendered twice from the same inputs) disagree
/// on replaced by `first`'s, where `new` has a value of the same kind at the same place.
pub fn pin(
    first: &[(ObjectId, Value)],
    again: &[(ObjectId, Value)],
    new: Vec<(ObjectId, Value)>,
) -> Vec<(ObjectId, Value)> {
    new.into_iter()
        .map(|(id, mut object)| {
            if let (Some(first), Some(again)) = (find(first, &id), find(again, &id)) {
                pin_value(first, again, &mut object);
            }
            (id, object)
        })
        .collect()
}

/// The object of identity `id` in `side`.
fn find<'a>(side: &'a [(ObjectId, Value)], id: &ObjectId) -> Option<&'a Value> {
    side.iter().find(|(i, _)| i == id).map(|(_, v)| v)
}

/// Whether any object of `a` differs from the object of the same identity in `b` (or is not there).
pub fn any_differs(a: &[(ObjectId, Value)], b: &[(ObjectId, Value)]) -> bool {
    a.len() != b.len() || a.iter().any(|(id, v)| find(b, id).is_none_or(|w| w != v))
}

fn pin_value(first: &Value, again: &Value, new: &mut Value) {
    if first == again {
        return;
    }
    match (first, again, new) {
        (Value::Object(f), Value::Object(a), Value::Object(n)) => {
            for (key, f_value) in f {
                if let (Some(a_value), Some(n_value)) = (a.get(key), n.get_mut(key)) {
                    pin_value(f_value, a_value, n_value);
                }
            }
        }
        (Value::Array(f), Value::Array(a), Value::Array(n)) if f.len() == a.len() && f.len() == n.len() => {
            for ((f_item, a_item), n_item) in f.iter().zip(a).zip(n.iter_mut()) {
                pin_value(f_item, a_item, n_item);
            }
        }
        (first, _, new) if same_kind(first, new) && !first.is_object() && !first.is_array() => *new = first.clone(),
        _ => {}
    }
}

fn same_kind(a: &Value, b: &Value) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> (ObjectId, Value) {
        (ObjectId::from_object(&v).unwrap(), v)
    }

    fn secret(password: &str, user: &str) -> (ObjectId, Value) {
        obj(json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "a"},
            "stringData": {"password": password, "user": user}}))
    }

    #[test]
    fn a_value_drawn_anew_is_taken_from_the_first_render() {
        let (first, again) = (vec![secret("x1", "admin")], vec![secret("y2", "admin")]);
        let pinned = pin(&first, &again, vec![secret("z3", "admin")]);
        assert_eq!(pinned, first, "only the drawn value differed");
        // A value both renders agree on is compared as it is: a real change stays.
        let pinned = pin(&first, &again, vec![secret("z3", "root")]);
        assert_eq!(pinned, vec![secret("x1", "root")]);
        assert!(any_differs(&pinned, &first));
    }

    #[test]
    fn objects_and_shapes_of_their_own_are_left_alone() {
        let first = vec![secret("x1", "admin")];
        // Both renders agree: nothing is drawn anew, nothing pinned.
        assert_eq!(pin(&first, &first, vec![secret("z3", "admin")]), vec![secret("z3", "admin")]);
        // A value that became a list is a change of the template, not a draw.
        let list = obj(json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "a"},
            "stringData": {"password": ["a"], "user": "admin"}}));
        assert_eq!(pin(&first, &[secret("y2", "admin")], vec![list.clone()]), vec![list]);
        // An object the first render does not have is not touched.
        let other = obj(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "a"}}));
        assert_eq!(pin(&first, &[secret("y2", "admin")], vec![other.clone()]), vec![other]);
    }

    #[test]
    fn differing_sets_of_objects_are_told() {
        let a = vec![secret("x", "u")];
        assert!(!any_differs(&a, &a.clone()));
        assert!(any_differs(&a, &[]));
        assert!(any_differs(&a, &[secret("y", "u")]));
    }
}
