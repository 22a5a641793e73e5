//! Go-shaped values: what helm-controller holds in memory while it composes values.
//!
//! Flux's `MergeMaps` copies nested maps *by reference* and Helm's strvals then writes into them in place, so
//! a `targetPath` write can change `spec.values` itself (reference §1). Reproducing that observable result is
//! easiest by modelling Go's reference semantics directly: maps and slices are shared, mutable cells, and
//! everything else is a plain value. Numbers keep Go's two shapes: `float64` from JSON/YAML decoding and
//! `int64` from strvals type inference.

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::Value;

pub(crate) use crate::go::float::number_from_f64;

/// A Go `map[string]interface{}`. Insertion order is kept only so output reads naturally; Go has none.
pub(crate) type GoMap = Rc<RefCell<Vec<(String, GoVal)>>>;
/// A Go `[]interface{}`. Its length never changes in place: strvals grows a slice by allocating a new one.
pub(crate) type GoList = Rc<RefCell<Vec<GoVal>>>;

#[derive(Clone, Debug)]
pub(crate) enum GoVal {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Map(GoMap),
    List(GoList),
}

pub(crate) fn new_map() -> GoMap {
    Rc::new(RefCell::new(Vec::new()))
}

pub(crate) fn map_get(m: &GoMap, key: &str) -> Option<GoVal> {
    m.borrow().iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
}

pub(crate) fn map_set(m: &GoMap, key: &str, val: GoVal) {
    let mut entries = m.borrow_mut();
    match entries.iter_mut().find(|(k, _)| k == key) {
        Some(slot) => slot.1 = val,
        None => entries.push((key.to_string(), val)),
    }
}

impl GoVal {
    /// A fresh, unshared Go value, as `json.Unmarshal` would build it: every number is a float64.
    pub(crate) fn from_json(v: &Value) -> GoVal {
        match v {
            Value::Null => GoVal::Null,
            Value::Bool(b) => GoVal::Bool(*b),
            Value::Number(n) => GoVal::Float(n.as_f64().unwrap_or(0.0)),
            Value::String(s) => GoVal::Str(s.clone()),
            Value::Array(a) => GoVal::List(Rc::new(RefCell::new(a.iter().map(GoVal::from_json).collect()))),
            Value::Object(o) => GoVal::Map(map_from_json(o)),
        }
    }

    pub(crate) fn to_json(&self) -> Value {
        match self {
            GoVal::Null => Value::Null,
            GoVal::Bool(b) => Value::Bool(*b),
            GoVal::Int(i) => Value::from(*i),
            GoVal::Float(f) => number_from_f64(*f),
            GoVal::Str(s) => Value::String(s.clone()),
            GoVal::List(l) => Value::Array(l.borrow().iter().map(GoVal::to_json).collect()),
            GoVal::Map(m) => Value::Object(map_to_json(m)),
        }
    }
}

pub(crate) fn map_from_json(o: &serde_json::Map<String, Value>) -> GoMap {
    Rc::new(RefCell::new(o.iter().map(|(k, v)| (k.clone(), GoVal::from_json(v))).collect()))
}

pub(crate) fn map_to_json(m: &GoMap) -> serde_json::Map<String, Value> {
    m.borrow().iter().map(|(k, v)| (k.clone(), v.to_json())).collect()
}
