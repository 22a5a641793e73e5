//! Normalisation for comparison: [`normalize`] takes out of both sides of the plan what the API server adds,
//! drops or rewrites on its own, so that a rendered object and its live copy compare equal when nothing
//! would be applied.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Map, Value};

use super::mask::{LAST_APPLIED_ANNOTATION, is_secret};
use crate::cluster::manifests::is_kind;

/// Removes what differs between a rendered object and the same object read back from the API server without
/// anyone having changed it, so that equal means "nothing to apply":
/// - server-maintained metadata: managedFields, resourceVersion, uid, creationTimestamp, generation, selfLink,
///   deletionGracePeriodSeconds;
/// - the `last-applied-configuration` annotation (noise, and it leaks Secret data);
/// - empty `annotations`/`labels` maps (the server drops them);
/// - `status`, which the chart does not set;
/// - for a Secret, `stringData` is folded into base64 `data` (later keys of stringData win, as on the server);
///   an empty `data`/`stringData` of a Secret and `data`/`binaryData` of a ConfigMap are dropped, since the
///   server omits them.
pub fn normalize(obj: &mut Value) {
    let secret = is_secret(obj);
    let config_map = is_kind(obj, "", "ConfigMap");
    let Some(map) = obj.as_object_mut() else { return };
    map.shift_remove("status");
    if let Some(Value::Object(metadata)) = map.get_mut("metadata") {
        for field in [
            "managedFields",
            "resourceVersion",
            "uid",
            "creationTimestamp",
            "generation",
            "selfLink",
            "deletionGracePeriodSeconds",
        ] {
            metadata.shift_remove(field);
        }
        if let Some(Value::Object(annotations)) = metadata.get_mut("annotations") {
            annotations.shift_remove(LAST_APPLIED_ANNOTATION);
        }
        for field in ["annotations", "labels"] {
            if metadata.get(field).is_some_and(is_empty_or_null) {
                metadata.shift_remove(field);
            }
        }
    }
    if secret {
        if let Some(Value::Object(string_data)) = map.get("stringData") {
            let mut rest = Map::new();
            let mut encoded = Vec::new();
            for (k, v) in string_data {
                match v {
                    Value::String(s) => encoded.push((k.clone(), Value::String(BASE64.encode(s)))),
                    // Not a string: the server would reject it; leave it visible as it is.
                    other => {
                        rest.insert(k.clone(), other.clone());
                    }
                }
            }
            if !encoded.is_empty() {
                let data = map.entry("data").or_insert_with(|| Value::Object(Map::new()));
                if !data.is_object() {
                    *data = Value::Object(Map::new());
                }
                if let Value::Object(data) = data {
                    for (k, v) in encoded {
                        data.insert(k, v);
                    }
                }
            }
            map.insert("stringData".into(), Value::Object(rest));
        }
        for field in ["data", "stringData"] {
            if map.get(field).is_some_and(is_empty_or_null) {
                map.shift_remove(field);
            }
        }
    }
    if config_map {
        for field in ["data", "binaryData"] {
            if map.get(field).is_some_and(is_empty_or_null) {
                map.shift_remove(field);
            }
        }
    }
}

fn is_empty_or_null(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// [`normalize`] on a copy.
    fn normalized(obj: &Value) -> Value {
        let mut copy = obj.clone();
        normalize(&mut copy);
        copy
    }

    #[test]
    fn normalisation_removes_server_noise() {
        let mut live = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {
                "name": "c", "namespace": "ns", "uid": "1234", "resourceVersion": "99", "generation": 3,
                "creationTimestamp": "2026-01-01T00:00:00Z", "selfLink": "/api/v1/x", "deletionGracePeriodSeconds": 30,
                "managedFields": [{"manager": "helm"}],
                "annotations": {LAST_APPLIED_ANNOTATION: "{}"},
                "labels": {}
            },
            "data": {"a": "1"},
            "status": {"whatever": true}
        });
        normalize(&mut live);
        assert_eq!(
            live,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}, "data": {"a": "1"}})
        );
    }

    #[test]
    fn secret_string_data_becomes_data_like_the_api_server() {
        let desired = json!({
            "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
            "data": {"a": "b2xk", "keep": "eA=="},
            "stringData": {"a": "new", "b": "two"}
        });
        let live = json!({
            "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
            "data": {"keep": "eA==", "a": "bmV3", "b": "dHdv"}
        });
        assert_eq!(normalized(&desired), normalized(&live));
        assert!(normalized(&desired).get("stringData").is_none());
        assert_eq!(
            normalized(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {}}))
                .get("data"),
            None
        );
    }
}
