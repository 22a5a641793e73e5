//! CEL expressions as Flux evaluates them: a HelmRelease's `healthCheckExprs` (over the object being
//! waited for, its top-level fields as variables) and `dependsOn[].readyExpr` (over `self` and `dep`).
//!
//! The language is the `cel` crate's: the standard library and macros (`has`, `all`, `exists`,
//! `exists_one`, `map`, `filter`), optional values (`a.?b`, `orValue`), and cel-go's `strings` and
//! `encoders` extensions: the environment of fluxcd/pkg `runtime/cel`, less two things. Not here:
//! `timestamp`/`duration` (left out to keep the binaries small) and cel-go's `sets` extension
//! (`sets.contains`, ...), which the `cel` crate does not have. An expression that uses them fails with
//! one line naming the function; it never passes silently.

use std::sync::{Arc, LazyLock};

use serde_json::Value;

/// Why an expression cannot be used or did not give a boolean.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CelError {
    #[error("invalid CEL expression {expr:?}: {reason}")]
    Invalid { expr: String, reason: String },
    #[error("CEL expression {expr:?} failed: {reason}")]
    Evaluation { expr: String, reason: String },
    #[error("CEL expression {expr:?} gave {got}, not a boolean")]
    NotBoolean { expr: String, got: String },
}

/// The environment every expression is compiled in: built once, shared.
static ENV: LazyLock<Arc<cel::Env>> = LazyLock::new(|| {
    let mut env = cel::Env::stdlib();
    // The extensions register on a fresh environment and cannot collide: a failure is a bug here, and
    // leaves the expression language without them (an expression using them then fails to compile).
    let _ = env.add_extension(cel::extensions::strings);
    let _ = env.add_extension(cel::extensions::encoders);
    Arc::new(env)
});

/// A parsed expression and its source, for messages.
pub struct Expression {
    source: String,
    ast: cel::parser::Expression,
}

impl std::fmt::Debug for Expression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Expression").field(&self.source).finish()
    }
}

impl Expression {
    pub fn compile(source: &str) -> Result<Self, CelError> {
        // The crate's Pratt parser, not its ANTLR one: the same language (standard macros, optional
        // syntax), 0.6 MB less of each binary.
        let parser = cel::parser::PrattParser::new().enable_optional_syntax(true);
        let ast = parser.parse(source).map_err(|e| CelError::Invalid {
            expr: source.to_string(),
            // The parser's report spans lines (a caret under the column): one line is enough here.
            reason: e.to_string().lines().next().unwrap_or("syntax error").trim().to_string(),
        })?;
        Ok(Expression { source: source.to_string(), ast })
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// Evaluates to a boolean with the given variables.
    pub fn eval_bool(&self, variables: &[(&str, &Value)]) -> Result<bool, CelError> {
        let mut context = cel::Context::with_env(Arc::clone(&ENV));
        for (name, value) in variables {
            let value = cel::to_value(value).map_err(|e| self.evaluation(e.to_string()))?;
            context.add_variable_from_value(*name, value);
        }
        self.run(&context)
    }

    /// Evaluates to a boolean with the top-level fields of `object` as variables (`status`, `metadata`,
    /// `spec`, ...), as Flux's health check expressions see an object.
    pub fn eval_bool_on(&self, object: &Value) -> Result<bool, CelError> {
        let fields: Vec<(&str, &Value)> = match object.as_object() {
            Some(map) => map.iter().map(|(k, v)| (k.as_str(), v)).collect(),
            None => Vec::new(),
        };
        self.eval_bool(&fields)
    }

    fn run(&self, context: &cel::Context) -> Result<bool, CelError> {
        match cel::Value::resolve(&self.ast, context) {
            Ok(cel::Value::Bool(b)) => Ok(b),
            Ok(other) => Err(CelError::NotBoolean { expr: self.source.clone(), got: format!("{other:?}") }),
            // A function this implementation lacks is known only when reached: say so, never pass.
            Err(cel::ExecutionError::UndeclaredReference(name)) => Err(self.evaluation(format!(
                "{name:?} is not a variable of this object nor a function {}'s CEL supports (see docs/flux-exact.md, CEL)",
                super::output::chart_command()
            ))),
            Err(e) => Err(self.evaluation(e.to_string())),
        }
    }

    fn evaluation(&self, reason: String) -> CelError {
        CelError::Evaluation { expr: self.source.clone(), reason }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object() -> Value {
        json!({
            "apiVersion": "example.io/v1", "kind": "Widget",
            "metadata": {"name": "w", "generation": 2},
            "status": {"phase": "Running", "observedGeneration": 2,
                       "conditions": [{"type": "Ready", "status": "True"}]}
        })
    }

    fn eval(src: &str) -> Result<bool, CelError> {
        Expression::compile(src)?.eval_bool_on(&object())
    }

    #[test]
    fn what_flux_users_write() {
        assert_eq!(eval("has(status.phase) && status.phase == 'Running'"), Ok(true));
        assert_eq!(eval("status.conditions.filter(e, e.type == 'Ready').all(e, e.status == 'True')"), Ok(true));
        assert_eq!(eval("status.conditions.exists(c, c.type == 'Stalled')"), Ok(false));
        assert_eq!(eval("metadata.generation == status.observedGeneration"), Ok(true));
        assert_eq!(eval("status.phase.lowerAscii().startsWith('run')"), Ok(true));
        assert_eq!(eval("status.phase.matches('^R.*g$')"), Ok(true));
        assert_eq!(eval("status.?reason.orValue('none') == 'none'"), Ok(true));
        assert_eq!(eval("has(status.reason)"), Ok(false));
        assert_eq!(eval("base64.encode(b'ok') == 'b2s='"), Ok(true));
    }

    #[test]
    fn two_objects_by_name() {
        let e = Expression::compile("dep.status.phase == 'Running' && self.metadata.name == 'w'").unwrap();
        let o = object();
        assert_eq!(e.eval_bool(&[("dep", &o), ("self", &o)]), Ok(true));
    }

    #[test]
    fn failures_are_one_line_and_never_a_pass() {
        let bad = Expression::compile("status.phase ==").unwrap_err();
        assert!(matches!(bad, CelError::Invalid { .. }) && !bad.to_string().contains('\n'), "{bad}");
        let unknown = eval("status.phase.frobnicate()").unwrap_err();
        assert!(unknown.to_string().contains("frobnicate"), "{unknown}");
        assert!(matches!(eval("status.missing == 'x'"), Err(CelError::Evaluation { .. })));
        assert!(matches!(eval("status.phase"), Err(CelError::NotBoolean { .. })));
    }
}
