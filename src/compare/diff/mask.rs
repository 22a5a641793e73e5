//! Secret masking for display: every Secret value in a plan is replaced by a marker saying whether it
//! changed and how long it is, so that no secret byte reaches the output unless asked for.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::Value;

use crate::cluster::manifests::is_kind;

/// The annotation `kubectl apply` (client-side) stores the whole applied object in. For a Secret it holds
/// the Secret's data in clear, so it is stripped by [`super::normalize()`] and masked by [`mask_secrets`].
pub const LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

pub(super) fn is_secret(obj: &Value) -> bool {
    is_kind(obj, "", "Secret")
}

/// Replaces every Secret value in a pair of versions of one object (old: live or stored, new: desired) so
/// that no secret byte is printed, in helm-diff's convention, where N is the decoded byte length:
/// - a key with the same value on both sides: `REDACTED # (N bytes)`;
/// - a changed, removed or added key: `-------- # (N bytes)` on the old side, `++++++++ # (N bytes)` on the
///   new side.
///
/// `data` values are base64 and compared decoded, `stringData` values are compared as they are (with
/// `stringData` overriding `data`, as the API server merges them). The `last-applied-configuration`
/// annotation, which holds the Secret in clear, is masked the same way. Objects that are not Secrets are
/// returned unchanged.
pub fn mask_secrets(old: Option<&Value>, new: Option<&Value>) -> (Option<Value>, Option<Value>) {
    if !old.is_some_and(is_secret) && !new.is_some_and(is_secret) {
        return (old.cloned(), new.cloned());
    }
    let old_values = old.filter(|o| is_secret(o)).map(secret_values);
    let new_values = new.filter(|n| is_secret(n)).map(secret_values);
    let masked_old = old.map(|o| mask_side(o, old_values.as_ref(), new_values.as_ref(), Side::Old, new));
    let masked_new = new.map(|n| mask_side(n, new_values.as_ref(), old_values.as_ref(), Side::New, old));
    (masked_old, masked_new)
}

/// The effective clear-text value of each key of a Secret.
fn secret_values(obj: &Value) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    if let Some(Value::Object(data)) = obj.get("data") {
        for (k, v) in data {
            out.insert(k.clone(), decoded_bytes(v));
        }
    }
    if let Some(Value::Object(string_data)) = obj.get("stringData") {
        for (k, v) in string_data {
            out.insert(k.clone(), raw_bytes(v));
        }
    }
    out
}

/// Bytes of a `data` value: base64-decoded; a value that is not valid base64 counts as its own text, so
/// it is still compared and measured, never printed.
fn decoded_bytes(v: &Value) -> Vec<u8> {
    match v {
        Value::String(s) => BASE64.decode(s.as_bytes()).unwrap_or_else(|_| s.as_bytes().to_vec()),
        other => raw_bytes(other),
    }
}

fn raw_bytes(v: &Value) -> Vec<u8> {
    match v {
        Value::String(s) => s.as_bytes().to_vec(),
        Value::Null => Vec::new(),
        other => other.to_string().into_bytes(),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Old,
    New,
}

impl Side {
    fn changed_marker(self) -> &'static str {
        match self {
            Side::Old => "--------",
            Side::New => "++++++++",
        }
    }
}

fn mask_side(
    obj: &Value,
    own: Option<&BTreeMap<String, Vec<u8>>>,
    other: Option<&BTreeMap<String, Vec<u8>>>,
    side: Side,
    other_obj: Option<&Value>,
) -> Value {
    let mut out = obj.clone();
    let Some(map) = out.as_object_mut() else { return out };
    if own.is_none() {
        // This side is not a Secret although the other is; nothing of ours to mask.
        return out;
    }
    for (field, decode) in [("data", true), ("stringData", false)] {
        let Some(value) = map.get_mut(field) else { continue };
        match value {
            Value::Object(entries) => {
                for (k, v) in entries.iter_mut() {
                    let len = if decode { decoded_bytes(v).len() } else { raw_bytes(v).len() };
                    let same = match (own.and_then(|o| o.get(k)), other.and_then(|o| o.get(k))) {
                        (Some(a), Some(b)) => a == b,
                        _ => false,
                    };
                    let marker = if same { "REDACTED" } else { side.changed_marker() };
                    *v = Value::String(format!("{marker} # ({len} bytes)"));
                }
            }
            Value::Null => {}
            // Not a mapping: malformed, but it may still hold secret text.
            other_shape => {
                let len = other_shape.to_string().len();
                *other_shape = Value::String(format!("REDACTED # ({len} bytes)"));
            }
        }
    }
    if let Some(Value::Object(metadata)) = map.get_mut("metadata")
        && let Some(Value::Object(annotations)) = metadata.get_mut("annotations")
        && let Some(annotation) = annotations.get_mut(LAST_APPLIED_ANNOTATION)
    {
        *annotation = mask_last_applied(annotation, other_obj, side);
    }
    out
}

/// Masks the object embedded in a `last-applied-configuration` annotation, comparing it with the other side's
/// embedded object; anything that does not parse is replaced whole.
fn mask_last_applied(annotation: &Value, other_obj: Option<&Value>, side: Side) -> Value {
    let text = annotation.as_str().unwrap_or_default();
    let Ok(embedded) = serde_json::from_str::<Value>(text) else {
        return Value::String(format!("REDACTED # ({} bytes)", text.len()));
    };
    let other_embedded = other_obj
        .and_then(|o| o.pointer("/metadata/annotations"))
        .and_then(|a| a.get(LAST_APPLIED_ANNOTATION))
        .and_then(Value::as_str)
        .and_then(|t| serde_json::from_str::<Value>(t).ok());
    let masked = if side == Side::New {
        mask_secrets(other_embedded.as_ref(), Some(&embedded)).1
    } else {
        mask_secrets(Some(&embedded), other_embedded.as_ref()).0
    };
    match masked {
        Some(m) if is_secret(&m) => Value::String(m.to_string()),
        // The annotation claims to be something other than a Secret, yet sits on one: do not trust it.
        _ => Value::String(format!("REDACTED # ({} bytes)", text.len())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::diff::to_yaml;
    use serde_json::json;

    const PLAIN: &str = "hunter2-Sup3rSecret";

    fn secret(data: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "ns"}, "type": "Opaque", "data": data})
    }

    fn assert_no_leak(text: &str, secrets: &[&str]) {
        for s in secrets {
            assert!(!text.contains(s), "{s:?} leaked into:\n{text}");
            let b64 = BASE64.encode(s);
            assert!(!text.contains(&b64), "base64 of {s:?} leaked into:\n{text}");
        }
    }

    #[test]
    fn masking_marks_unchanged_changed_added_and_removed_keys() {
        let old = secret(json!({
            "same": BASE64.encode(PLAIN),
            "changed": BASE64.encode("old-value"),
            "removed": BASE64.encode("gone-value"),
        }));
        let new = secret(json!({
            "same": BASE64.encode(PLAIN),
            "changed": BASE64.encode("new-value-longer"),
            "added": BASE64.encode("fresh-value"),
        }));
        let (mo, mn) = mask_secrets(Some(&old), Some(&new));
        let (mo, mn) = (mo.unwrap(), mn.unwrap());
        assert_eq!(
            mo["data"],
            json!({"same": "REDACTED # (19 bytes)", "changed": "-------- # (9 bytes)", "removed": "-------- # (10 bytes)"})
        );
        assert_eq!(
            mn["data"],
            json!({"same": "REDACTED # (19 bytes)", "changed": "++++++++ # (16 bytes)", "added": "++++++++ # (11 bytes)"})
        );
        let text = format!("{}{}", to_yaml(&mo).unwrap(), to_yaml(&mn).unwrap());
        assert_no_leak(&text, &[PLAIN, "old-value", "gone-value", "new-value-longer", "fresh-value"]);
    }

    #[test]
    fn masking_compares_string_data_with_decoded_data() {
        let old = secret(json!({"k": BASE64.encode(PLAIN)}));
        let new = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"k": PLAIN}});
        let (mo, mn) = mask_secrets(Some(&old), Some(&new));
        assert_eq!(mo.unwrap()["data"]["k"], json!("REDACTED # (19 bytes)"));
        let mn = mn.unwrap();
        assert_eq!(mn["stringData"]["k"], json!("REDACTED # (19 bytes)"));
        assert_no_leak(&mn.to_string(), &[PLAIN]);
    }

    #[test]
    fn masking_one_sided_secrets_and_last_applied() {
        let embedded = secret(json!({"token": BASE64.encode(PLAIN)}));
        let mut added = secret(json!({"token": BASE64.encode(PLAIN), "bad": "%%not base64%%"}));
        added["metadata"]["annotations"] = json!({LAST_APPLIED_ANNOTATION: embedded.to_string(), "other": "kept"});
        let (none, mn) = mask_secrets(None, Some(&added));
        assert!(none.is_none());
        let mn = mn.unwrap();
        assert_eq!(mn["data"]["token"], json!("++++++++ # (19 bytes)"));
        assert_eq!(mn["data"]["bad"], json!("++++++++ # (14 bytes)"));
        assert_eq!(mn["metadata"]["annotations"]["other"], json!("kept"));
        let la: Value =
            serde_json::from_str(mn["metadata"]["annotations"][LAST_APPLIED_ANNOTATION].as_str().unwrap()).unwrap();
        assert_eq!(la["data"]["token"], json!("++++++++ # (19 bytes)"));
        assert_no_leak(&to_yaml(&mn).unwrap(), &[PLAIN, "%%not base64%%"]);

        let mut garbled = secret(json!({}));
        garbled["metadata"]["annotations"] = json!({LAST_APPLIED_ANNOTATION: format!("{{broken {PLAIN}")});
        let (mo, _) = mask_secrets(Some(&garbled), None);
        assert_no_leak(&mo.unwrap().to_string(), &[PLAIN]);
    }

    #[test]
    fn masking_leaves_other_kinds_alone_and_hides_malformed_data() {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": PLAIN}});
        assert_eq!(mask_secrets(Some(&cm), Some(&cm)), (Some(cm.clone()), Some(cm)));

        let odd = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": PLAIN});
        let (mo, _) = mask_secrets(Some(&odd), None);
        assert_no_leak(&mo.unwrap().to_string(), &[PLAIN]);
    }
}
