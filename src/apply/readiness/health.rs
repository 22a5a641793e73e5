//! A HelmRelease's `spec.healthCheckExprs`: CEL expressions that decide, for the objects of one API group
//! (and kind), what kstatus would otherwise decide, as Flux's CEL status reader does
//! (fluxcd/pkg `runtime/cel`): an object whose `status.observedGeneration` lags its generation is in
//! progress; else `inProgress`, `failed` and `current` are tried in that order and the first true one
//! wins; none true is in progress. The expressions see the object's top-level fields (`status`,
//! `metadata`, `spec`, ...). An expression that fails to evaluate leaves the status unknown, which is
//! never ready.

use std::collections::HashMap;

use serde_json::Value;

use crate::cluster::kstatus::{Status, Verdict, group_kind};
use crate::support::cel::Expression;
use crate::support::error::{Error, Result};

/// One entry's expressions.
#[derive(Debug)]
struct Evaluator {
    current: Expression,
    failed: Option<Expression>,
    in_progress: Option<Expression>,
}

/// The compiled `healthCheckExprs`, by API group and kind (`None`: every kind of the group).
#[derive(Debug, Default)]
pub struct HealthChecks {
    by_kind: HashMap<(String, Option<String>), Evaluator>,
}

/// The outcome of an evaluation: a verdict, or why there is none (the object's status is then unknown).
pub type Evaluated = std::result::Result<Verdict, String>;

impl HealthChecks {
    /// Compiles `spec.healthCheckExprs`; an invalid entry is refused here, before anything changes (where
    /// helm-controller would stall the release on it).
    pub fn of(spec: &std::collections::BTreeMap<String, Value>) -> Result<HealthChecks> {
        let mut checks = HealthChecks::default();
        let entries = spec.get("healthCheckExprs").and_then(Value::as_array).cloned().unwrap_or_default();
        for (i, entry) in entries.iter().enumerate() {
            let field = |f: &str| entry.get(f).and_then(Value::as_str).unwrap_or_default().to_string();
            let (api_version, kind) = (field("apiVersion"), field("kind"));
            let what = format!("spec.healthCheckExprs[{i}] ({api_version} {kind})");
            let invalid = |reason: String| Error::Invalid { what: what.clone(), reason };
            let group = api_version.rsplit_once('/').map(|(g, _)| g).unwrap_or("").to_string();
            let key = (group, Some(kind).filter(|k| !k.is_empty()));
            if checks.by_kind.contains_key(&key) {
                return Err(invalid("a second health check for the same group and kind".into()));
            }
            let compile = |name: &str| -> Result<Option<Expression>> {
                match entry.get(name).and_then(Value::as_str).filter(|s| !s.is_empty()) {
                    None => Ok(None),
                    Some(src) => Expression::compile(src).map(Some).map_err(|e| invalid(format!("{name}: {e}"))),
                }
            };
            let current = compile("current")?.ok_or_else(|| invalid("the expression current is required".into()))?;
            let evaluator = Evaluator { current, failed: compile("failed")?, in_progress: compile("inProgress")? };
            checks.by_kind.insert(key, evaluator);
        }
        Ok(checks)
    }

    pub fn is_empty(&self) -> bool {
        self.by_kind.is_empty()
    }

    /// The verdict of the expressions for this object's kind, or None when none apply to it.
    pub fn evaluate(&self, obj: &Value) -> Option<Evaluated> {
        let (group, kind) = group_kind(obj);
        let evaluator = self
            .by_kind
            .get(&(group.to_string(), Some(kind.to_string())))
            .or_else(|| self.by_kind.get(&(group.to_string(), None)))?;
        Some(evaluator.evaluate(obj))
    }
}

impl Evaluator {
    fn evaluate(&self, obj: &Value) -> Evaluated {
        let generation = obj.pointer("/metadata/generation").and_then(Value::as_i64);
        let observed = obj.pointer("/status/observedGeneration").and_then(Value::as_i64);
        if let (Some(g), Some(o)) = (generation, observed)
            && g != o
        {
            return Ok(Verdict::new(Status::InProgress, format!("generation {g} not observed yet (observed {o})")));
        }
        let tries = [
            (self.in_progress.as_ref(), Status::InProgress, "inProgress"),
            (self.failed.as_ref(), Status::Failed, "failed"),
            (Some(&self.current), Status::Current, "current"),
        ];
        for (expr, status, name) in tries {
            let Some(expr) = expr else { continue };
            if expr.eval_bool_on(obj).map_err(|e| e.to_string())? {
                return Ok(Verdict::new(status, format!("healthCheckExprs {name}: {}", expr.source())));
            }
        }
        Ok(Verdict::new(Status::InProgress, format!("healthCheckExprs current is false: {}", self.current.source())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn checks(entries: Value) -> Result<HealthChecks> {
        let spec: std::collections::BTreeMap<String, Value> =
            serde_json::from_value(json!({ "healthCheckExprs": entries })).unwrap();
        HealthChecks::of(&spec)
    }

    fn widget(phase: &str) -> Value {
        json!({"apiVersion": "example.io/v1", "kind": "Widget", "metadata": {"generation": 1},
               "status": {"phase": phase, "observedGeneration": 1}})
    }

    #[test]
    fn in_progress_then_failed_then_current() {
        let c = checks(json!([{ "apiVersion": "example.io/v1", "kind": "Widget",
            "current": "status.phase == 'Running'", "failed": "status.phase == 'Broken'",
            "inProgress": "status.phase == 'Broken' && false" }]))
        .unwrap();
        let status = |phase: &str| c.evaluate(&widget(phase)).unwrap().unwrap().status;
        assert_eq!(status("Running"), Status::Current);
        assert_eq!(status("Broken"), Status::Failed);
        assert_eq!(status("Pending"), Status::InProgress);
        let mut lagging = widget("Running");
        lagging["metadata"]["generation"] = json!(2);
        assert_eq!(c.evaluate(&lagging).unwrap().unwrap().status, Status::InProgress);
        assert!(c.evaluate(&json!({"apiVersion": "v1", "kind": "ConfigMap"})).is_none());
    }

    #[test]
    fn a_group_entry_covers_its_kinds_and_errors_are_unknown() {
        let c = checks(json!([{ "apiVersion": "example.io/v1", "current": "status.ready == true" }])).unwrap();
        let e = c.evaluate(&widget("Running")).unwrap();
        assert!(e.is_err(), "a missing field is an evaluation error, not a verdict: {e:?}");
    }

    #[test]
    fn invalid_entries_are_refused() {
        let missing = checks(json!([{ "apiVersion": "example.io/v1", "kind": "Widget" }])).unwrap_err();
        assert!(missing.to_string().contains("current is required"), "{missing}");
        let bad = checks(json!([{ "apiVersion": "example.io/v1", "kind": "Widget", "current": "status.phase ==" }]))
            .unwrap_err();
        assert!(bad.to_string().contains("healthCheckExprs[0]"), "{bad}");
        let twice = json!({ "apiVersion": "example.io/v1", "kind": "Widget", "current": "true" });
        assert!(checks(json!([twice.clone(), twice])).is_err());
    }
}
