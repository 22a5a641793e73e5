//! The document tree every YAML reader of this crate builds (go-yaml v3's rules, the manifests' rules)
//! and the block-style writer writes: [`Node`], the event parser as cozyhr runs it, and [`tree`], which
//! builds a [`Node`] from a document's events. A room of its own below the readers and the writer, so
//! none of them imports another to reach the tree.

use std::borrow::Cow;

use serde_json::Value;
use serde_saphyr::granit_parser::{Options, Parser, ScalarStyle, StrInput};

/// The YAML event parser as cozyhr reads documents with it: comments are not reported (nothing uses them,
/// and collecting them costs the parser about a third of its time).
pub fn parser(text: &str) -> Parser<'_, StrInput<'_>> {
    let mut options = Options::default();
    options.set_emit_comments(false);
    Parser::new_from_str_with_options(text, options)
}

/// The tree of a document's events (`None` for an empty one), its scalars read by `scalar` (the text,
/// its style, whether it is a block scalar running to the end of an unterminated text), mapping keys in
/// document order or `sorted`. A duplicate or non-string key is an error, as is any error of `events` or
/// `scalar`. Both rule sets build their documents here: go-yaml v3's ([`crate::yaml_v3::decode_tree`])
/// and the manifests' ([`crate::yaml::manifest_value`]).
pub fn tree<'a>(
    events: impl Iterator<Item = Result<crate::yaml_block::Ev<'a>, String>>,
    sorted: bool,
    scalar: impl Fn(Cow<'a, str>, ScalarStyle, bool) -> Result<Node<'a>, String>,
) -> Result<Option<Node<'a>>, String> {
    use crate::yaml_block::Ev;
    enum Frame<'a> {
        Seq(Vec<Node<'a>>),
        Map(Vec<(Cow<'a, str>, Node<'a>)>, Option<Cow<'a, str>>),
    }
    let mut stack: Vec<Frame<'a>> = Vec::new();
    let mut root = None;
    for event in events {
        let node = match event? {
            Ev::Scalar(value, style, to_eof) => scalar(value, style, to_eof)?,
            Ev::SeqStart => {
                stack.push(Frame::Seq(Vec::new()));
                continue;
            }
            Ev::MapStart => {
                stack.push(Frame::Map(Vec::new(), None));
                continue;
            }
            Ev::SeqEnd | Ev::MapEnd => match stack.pop() {
                Some(Frame::Seq(items)) => Node::Seq(items),
                Some(Frame::Map(mut pairs, _)) => {
                    if sorted {
                        pairs.sort_by(|a, b| a.0.cmp(&b.0));
                    }
                    let mut keys: Vec<&str> = pairs.iter().map(|(k, _)| &**k).collect();
                    if !sorted {
                        keys.sort_unstable();
                    }
                    if let Some(w) = keys.windows(2).find(|w| w[0] == w[1]) {
                        return Err(format!("duplicate key {:?}", w[0]));
                    }
                    Node::Map(pairs)
                }
                None => return Err("unbalanced collection".into()),
            },
        };
        match stack.last_mut() {
            Some(Frame::Seq(items)) => items.push(node),
            Some(Frame::Map(pairs, pending)) => match (pending.take(), node) {
                (Some(k), node) => pairs.push((k, node)),
                (None, Node::Str(k)) => *pending = Some(k),
                (None, other) => return Err(format!("non-string key {}", other.into_value())),
            },
            None => root = Some(node),
        }
    }
    Ok(root.filter(|n| *n != Node::Null))
}

/// A document as go-yaml v3 decodes it, borrowing from its text: what kustomize holds of an object
/// between reading and writing it. No floats: [`crate::yaml_v3::scalar`] refuses them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Str(Cow<'a, str>),
    Seq(Vec<Node<'a>>),
    /// Keys sorted and unique, as Go writes a map.
    Map(Vec<(Cow<'a, str>, Node<'a>)>),
}

impl<'a> Node<'a> {
    /// The value at `key` of a mapping.
    pub fn get(&self, key: &str) -> Option<&Node<'a>> {
        match self {
            Node::Map(pairs) => pairs.binary_search_by(|(k, _)| (**k).cmp(key)).ok().map(|i| &pairs[i].1),
            _ => None,
        }
    }

    /// The value at `key` of a mapping, inserted (in key order) as `default()` when missing; `None` for
    /// anything but a mapping.
    pub fn entry(&mut self, key: &str, default: impl FnOnce() -> Node<'a>) -> Option<&mut Node<'a>> {
        let Node::Map(pairs) = self else { return None };
        let i = match pairs.binary_search_by(|(k, _)| (**k).cmp(key)) {
            Ok(i) => i,
            Err(i) => {
                pairs.insert(i, (Cow::Owned(key.to_string()), default()));
                i
            }
        };
        Some(&mut pairs[i].1)
    }

    /// Removes `key` from a mapping.
    pub fn remove(&mut self, key: &str) {
        if let Node::Map(pairs) = self
            && let Ok(i) = pairs.binary_search_by(|(k, _)| (**k).cmp(key))
        {
            pairs.remove(i);
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Node::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The same document as a JSON value.
    pub fn into_value(self) -> Value {
        match self {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(b),
            Node::Int(i) => Value::from(i),
            Node::Str(s) => Value::String(s.into_owned()),
            Node::Seq(items) => Value::Array(items.into_iter().map(Node::into_value).collect()),
            Node::Map(pairs) => {
                Value::Object(pairs.into_iter().map(|(k, v)| (k.into_owned(), v.into_value())).collect())
            }
        }
    }
}

impl serde::Serialize for Node<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self {
            Node::Null => s.serialize_unit(),
            Node::Bool(b) => s.serialize_bool(*b),
            Node::Int(i) => s.serialize_i64(*i),
            Node::Str(v) => s.serialize_str(v),
            Node::Seq(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Node::Map(pairs) => {
                let mut map = s.serialize_map(Some(pairs.len()))?;
                for (k, v) in pairs {
                    map.serialize_entry(&**k, v)?;
                }
                map.end()
            }
        }
    }
}
