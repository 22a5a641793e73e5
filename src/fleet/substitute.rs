//! Flux's post-build variable substitution (`spec.postBuild`), as kustomize-controller runs it on each
//! object of a build (fluxcd/pkg/kustomize `SubstituteVariables`, fluxcd/pkg/envsubst):
//!
//! - The variables: `substituteFrom` in list order (ConfigMap `data`, Secret `data` decoded), later
//!   entries winning, then the inline `substitute` over all. Every key must be a shell variable name, and
//!   newlines are removed from every value.
//! - With no variable at all (and `substituteStrategy` not `Always`) nothing is touched: no defaults, no
//!   `$$` unescaping.
//! - An object labelled or annotated `kustomize.toolkit.fluxcd.io/substitute: disabled` is left alone.
//! - The object's YAML text is substituted and read back, so a value may change type (`replicas: ${n}`).
//! - Syntax: `${var}`; `${var:=default}`, `${var:-default}` (and `:+`, `:?`, which envsubst treats the
//!   same): the default when the variable is unset or empty; `$${var}` and `$$var` escape; `$var` without
//!   braces is left as it is. Strict, as kustomize-controller is by default since v1.9: a variable with no
//!   value and no default is an error.

use std::collections::BTreeMap;

use serde_json::Value;

/// The label or annotation that opts an object out.
pub const DISABLED_MARKER: &str = "kustomize.toolkit.fluxcd.io/substitute";

/// Why a substitution failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubstituteError {
    #[error("variable not set (strict mode): {0:?}")]
    NotSet(String),
    #[error("bad substitution: {0}")]
    Syntax(String),
    #[error("'{0}' is not a valid variable name: names must match ^[_[:alpha:]][_[:alpha:][:digit:]]*$")]
    BadName(String),
}

/// Variables, checked and cleaned as kustomize-controller loads them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Variables(BTreeMap<String, String>);

impl Variables {
    /// Adds `vars` over those already here (later sources win); a key that is not a variable name is an
    /// error, as it fails the build.
    pub fn extend(&mut self, vars: impl IntoIterator<Item = (String, String)>) -> Result<(), SubstituteError> {
        for (k, v) in vars {
            if !is_name(&k) {
                return Err(SubstituteError::BadName(k));
            }
            self.0.insert(k, v.replace('\n', ""));
        }
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// Whether `object` opts out of substitution.
pub fn disabled(object: &serde_json::Map<String, Value>) -> bool {
    let meta = object.get("metadata");
    ["labels", "annotations"].iter().any(|field| {
        meta.and_then(|m| m.get(*field)).and_then(|m| m.get(DISABLED_MARKER)).and_then(Value::as_str)
            == Some("disabled")
    })
}

/// `text` with its `${...}` expanded from `vars`.
pub fn expand(text: &str, vars: &Variables) -> Result<String, SubstituteError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(escaped) = after.strip_prefix('$') {
            // `$$` writes one `$`; what follows is read as text.
            out.push('$');
            rest = escaped;
            continue;
        }
        let Some(inner) = after.strip_prefix('{') else {
            out.push('$');
            rest = after;
            continue;
        };
        let end =
            closing(inner).ok_or_else(|| SubstituteError::Syntax(format!("unclosed ${{{}", first_line(inner))))?;
        out.push_str(&expression(&inner[..end], vars)?);
        rest = &inner[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The index of the `}` that closes an expression, counting nested `${`.
fn closing(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'$' if bytes.get(i + 1) == Some(&b'{') => {
                depth += 1;
                i += 1;
            }
            b'}' if depth == 0 => return Some(i),
            b'}' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    None
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or_default()
}

/// One `${...}` body.
fn expression(body: &str, vars: &Variables) -> Result<String, SubstituteError> {
    if let Some(name) = body.strip_prefix('#') {
        return Ok(value(name, vars)?.chars().count().to_string());
    }
    let name_end = body.find(|c: char| !(c == '_' || c.is_ascii_alphanumeric())).unwrap_or(body.len());
    let (name, op) = body.split_at(name_end);
    if name.is_empty() || !is_name(name) {
        return Err(SubstituteError::Syntax(format!("${{{body}}}")));
    }
    let set = vars.0.get(name);
    match op {
        "" => value(name, vars),
        ",," => Ok(value(name, vars)?.to_lowercase()),
        "^^" => Ok(value(name, vars)?.to_uppercase()),
        "," => Ok(first_mapped(&value(name, vars)?, |c| c.to_lowercase().collect())),
        "^" => Ok(first_mapped(&value(name, vars)?, |c| c.to_uppercase().collect())),
        _ => {
            let default = [":=", ":-", ":+", ":?"].iter().find_map(|p| op.strip_prefix(p));
            match default {
                Some(default) => match set.filter(|v| !v.is_empty()) {
                    Some(v) => Ok(v.clone()),
                    None => expand(default, vars),
                },
                None => Err(SubstituteError::Syntax(format!("${{{body}}}"))),
            }
        }
    }
}

fn value(name: &str, vars: &Variables) -> Result<String, SubstituteError> {
    vars.0.get(name).cloned().ok_or_else(|| SubstituteError::NotSet(name.to_string()))
}

fn first_mapped(s: &str, f: impl Fn(char) -> String) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => f(c) + chars.as_str(),
        None => String::new(),
    }
}

/// `object` substituted as kustomize-controller substitutes it: its YAML text expanded and read back.
/// None when it is left as it is (opted out).
pub fn object(
    object: &serde_json::Map<String, Value>,
    vars: &Variables,
) -> Result<Option<serde_json::Map<String, Value>>, SubstituteError> {
    if disabled(object) {
        return Ok(None);
    }
    let text = cozyhr_go::yaml_v2_emit::marshal(&Value::Object(object.clone()));
    let expanded = expand(&text, vars)?;
    if expanded == text {
        return Ok(None);
    }
    crate::values::parse_values(&expanded, "the substituted object")
        .map(Some)
        .map_err(|e| SubstituteError::Syntax(format!("the substituted object is not YAML: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Variables {
        let mut v = Variables::default();
        v.extend(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string()))).unwrap();
        v
    }

    #[test]
    fn expands_as_flux_envsubst() {
        let v = vars(&[("cluster", "staging"), ("empty", ""), ("Name", "Web")]);
        assert_eq!(expand("env: ${cluster}", &v).unwrap(), "env: staging");
        assert_eq!(expand("${missing:=dflt} ${empty:-x} ${cluster:=no}", &v).unwrap(), "dflt x staging");
        assert_eq!(expand("${missing:-${cluster}-b}", &v).unwrap(), "staging-b");
        assert_eq!(expand("$${cluster} $$cluster $cluster", &v).unwrap(), "${cluster} $cluster $cluster");
        assert_eq!(expand("${Name,,} ${Name^^} ${#cluster}", &v).unwrap(), "web WEB 7");
        assert_eq!(expand("${missing}", &v), Err(SubstituteError::NotSet("missing".into())));
        assert!(matches!(expand("${missing-d}", &v), Err(SubstituteError::Syntax(_))));
        assert!(matches!(expand("${ cluster }", &v), Err(SubstituteError::Syntax(_))));
        assert!(matches!(expand("${cluster", &v), Err(SubstituteError::Syntax(_))));
    }

    #[test]
    fn variables_are_names_without_newlines() {
        let mut v = Variables::default();
        assert_eq!(v.extend([("a-b".to_string(), "x".to_string())]), Err(SubstituteError::BadName("a-b".into())));
        v.extend([("a".to_string(), "x\ny\n".to_string())]).unwrap();
        assert_eq!(expand("${a}", &v).unwrap(), "xy");
    }

    #[test]
    fn objects_change_type_and_opt_out() {
        let v = vars(&[("n", "3")]);
        let o: serde_json::Map<String, Value> = serde_json::from_value(serde_json::json!({
            "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replicas": "${n}"}
        }))
        .unwrap();
        let out = object(&o, &v).unwrap().unwrap();
        assert_eq!(out["spec"]["replicas"], 3);
        let mut off = o.clone();
        off["metadata"]["annotations"] = serde_json::json!({DISABLED_MARKER: "disabled"});
        assert_eq!(object(&off, &v).unwrap(), None);
    }
}
