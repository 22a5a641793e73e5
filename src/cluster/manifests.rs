//! Kubernetes manifests as `helm template` and `helm get manifest` print them: a multi-document YAML stream
//! split into objects, and object identity. What the diff does with the objects (normalising, masking,
//! printing) is in [`crate::compare::diff`](mod@crate::compare::diff).
//!
//! Everything here is pure: no cluster access, no environment. Objects are `serde_json::Value`s because the
//! diff must see every field, including ones no typed model knows.

use std::cmp::Ordering;
use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Range;

use serde_json::{Map, Value};

/// Where in a YAML stream a document (or an error in it) is: the template path from the `# Source:` comment
/// Helm writes in front of each document, when there is one, and the 1-based line in the stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub source: Option<String>,
    pub line: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            Some(source) => write!(f, "{source} (line {} of the manifest stream)", self.line),
            None => write!(f, "line {} of the manifest stream", self.line),
        }
    }
}

/// Why an object has no identity.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error("the document is not a mapping (a Kubernetes object)")]
    NotAnObject,
    #[error("the object has no {0}")]
    Missing(&'static str),
}

#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("{location}: invalid YAML: {message}")]
    Yaml { location: Location, message: String },

    /// Not `source`: the problem is in the line already, and a source would print it a second time.
    #[error(
        "{location}: {problem}; every document must be a Kubernetes object with apiVersion, kind and metadata.name"
    )]
    Invalid { location: Location, problem: IdError },
}

/// The identity of an object in a cluster: group, kind, namespace and name. The version is carried for
/// display but is not part of the identity (equality, ordering, hashing): the same Deployment read as
/// `apps/v1` or written as `apps/v1beta2` is one object. The core group is `""`.
#[derive(Clone, Debug)]
pub struct ObjectId {
    pub group: String,
    pub version: Option<String>,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
}

impl ObjectId {
    /// The identity of `obj`, from `apiVersion`, `kind`, `metadata.namespace` and `metadata.name`. An empty
    /// namespace counts as none.
    pub fn from_object(obj: &Value) -> Result<ObjectId, IdError> {
        let map = obj.as_object().ok_or(IdError::NotAnObject)?;
        let metadata = map.get("metadata");
        Self::from_fields(
            map.get("apiVersion").and_then(Value::as_str),
            map.get("kind").and_then(Value::as_str),
            metadata.and_then(|m| m.get("name")).and_then(Value::as_str),
            metadata.and_then(|m| m.get("namespace")).and_then(Value::as_str),
        )
    }

    /// The identity of a document as go-yaml v3 decoded it ([`from_object`](Self::from_object)'s rules).
    pub fn from_node(node: &crate::go::yaml_tree::Node<'_>) -> Result<ObjectId, IdError> {
        use crate::go::yaml_tree::Node;
        if !matches!(node, Node::Map(_)) {
            return Err(IdError::NotAnObject);
        }
        let metadata = node.get("metadata");
        Self::from_fields(
            node.get("apiVersion").and_then(Node::as_str),
            node.get("kind").and_then(Node::as_str),
            metadata.and_then(|m| m.get("name")).and_then(Node::as_str),
            metadata.and_then(|m| m.get("namespace")).and_then(Node::as_str),
        )
    }

    /// From the string fields of an object; an empty one counts as missing.
    fn from_fields(
        api_version: Option<&str>,
        kind: Option<&str>,
        name: Option<&str>,
        namespace: Option<&str>,
    ) -> Result<ObjectId, IdError> {
        fn present(s: Option<&str>) -> Option<&str> {
            s.filter(|s| !s.is_empty())
        }
        let api_version = present(api_version).ok_or(IdError::Missing("apiVersion"))?;
        let kind = present(kind).ok_or(IdError::Missing("kind"))?;
        let name = present(name).ok_or(IdError::Missing("metadata.name"))?;
        let namespace = present(namespace);
        let (group, version) = split_api_version(api_version);
        Ok(ObjectId {
            group: group.to_string(),
            version: Some(version.to_string()),
            kind: kind.to_string(),
            namespace: namespace.map(str::to_string),
            name: name.to_string(),
        })
    }

    /// `group/version`, or just `version` for the core group; what `apiVersion` holds.
    pub fn api_version(&self) -> String {
        match (self.group.as_str(), self.version.as_deref()) {
            ("", Some(v)) => v.to_string(),
            ("", None) => String::new(),
            (g, Some(v)) => format!("{g}/{v}"),
            (g, None) => g.to_string(),
        }
    }

    /// The header helm-diff prints for an object: `ns, name, Kind (group/version)`. A cluster-scoped object
    /// has no namespace, so it reads `name, Kind (group/version)` rather than starting with a bare comma.
    pub fn helm_header(&self) -> String {
        let mut out = String::new();
        if let Some(ns) = &self.namespace {
            out.push_str(ns);
            out.push_str(", ");
        }
        out.push_str(&self.name);
        out.push_str(", ");
        out.push_str(&self.kind);
        let api = self.api_version();
        if !api.is_empty() {
            out.push_str(" (");
            out.push_str(&api);
            out.push(')');
        }
        out
    }

    fn key(&self) -> (Option<&str>, &str, &str, &str) {
        (self.namespace.as_deref(), self.kind.as_str(), self.group.as_str(), self.name.as_str())
    }
}

/// `apps/Deployment ns/name`; the core group is left out (`ConfigMap ns/name`) and so is the namespace of a
/// cluster-scoped object (`rbac.authorization.k8s.io/ClusterRole name`).
impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.group.is_empty() {
            write!(f, "{}/", self.group)?;
        }
        write!(f, "{} ", self.kind)?;
        if let Some(ns) = &self.namespace {
            write!(f, "{ns}/")?;
        }
        f.write_str(&self.name)
    }
}

impl PartialEq for ObjectId {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for ObjectId {}

impl Hash for ObjectId {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

/// Cluster-scoped objects first, then by namespace; within a namespace by kind, group and name. This is the
/// order the diff prints in: objects of one kind stay together whatever order the chart rendered them in.
impl Ord for ObjectId {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}

impl PartialOrd for ObjectId {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// One object of a manifest stream, with where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Manifest {
    pub id: ObjectId,
    pub object: Value,
    /// The template path from Helm's `# Source:` comment, if the document had one.
    pub source: Option<String>,
    /// 1-based line of the document's first line in the stream.
    pub line: usize,
}

impl Manifest {
    pub fn location(&self) -> Location {
        Location { source: self.source.clone(), line: self.line }
    }

    pub fn into_pair(self) -> (ObjectId, Value) {
        (self.id, self.object)
    }

    /// Makes the namespace what the API server would store: a namespaced object without one gets
    /// `namespace` (what `helm install -n` does); a cluster-scoped object loses any it has, because the API
    /// server ignores it there and the live object never shows it.
    pub fn default_namespace(&mut self, namespace: &str, cluster_scoped: bool) {
        let metadata =
            self.object.as_object_mut().map(|o| o.entry("metadata").or_insert_with(|| Value::Object(Map::new())));
        let Some(Value::Object(metadata)) = metadata else { return };
        if cluster_scoped {
            metadata.shift_remove("namespace");
            self.id.namespace = None;
        } else if self.id.namespace.is_none() {
            metadata.insert("namespace".into(), Value::String(namespace.to_string()));
            self.id.namespace = Some(namespace.to_string());
        }
    }
}

/// Splits a multi-document YAML stream into objects, in stream order.
///
/// Documents are separated by `---` lines at column 0 (a `...` line ends a document too). A `---` that is
/// part of a block scalar is indented, so it is not a separator; a column-0 `---` always ends a document in
/// YAML, block scalar or not, which is what makes the textual split exact. Documents holding only comments
/// or `null` are skipped. A `List` (or any `*List` kind with `items`) is flattened into its items. Each
/// object keeps the path of the `# Source:` comment in front of it.
pub fn parse_manifests(stream: &str) -> Result<Vec<Manifest>, ManifestError> {
    parse_manifests_after(stream, &ParsedStream::default())
}

/// The objects of a stream together with the text of each document, so that a later stream repeating a
/// document word for word reuses its objects instead of parsing it again ([`parse_manifests_after`]): a
/// diff compares a rendering with the stored release it mostly repeats, and parsing is most of its work.
#[derive(Debug, Default)]
pub struct ParsedStream {
    pub manifests: Vec<Manifest>,
    /// Each document's [`text_key`] → the range of its objects in `manifests`.
    documents: HashMap<String, Range<usize>>,
}

impl ParsedStream {
    /// Parses a stream as [`parse_manifests`] does, keeping each document's text.
    pub fn parse(stream: &str) -> Result<ParsedStream, ManifestError> {
        let docs = split_documents(stream);
        let parsed = crate::support::par::map_ordered(&docs, parse_document);
        let mut out = ParsedStream::default();
        for (doc, parsed) in docs.into_iter().zip(parsed) {
            let start = out.manifests.len();
            out.manifests.extend(parsed?);
            out.documents.insert(text_key(&doc.text).to_string(), start..out.manifests.len());
        }
        Ok(out)
    }

    /// The objects of a document with exactly this text, if this stream had one.
    fn objects_of(&self, text: &str) -> Option<&[Manifest]> {
        self.documents.get(text_key(text)).and_then(|r| self.manifests.get(r.clone()))
    }
}

/// What identifies a document's text for [`ParsedStream`]: without the line breaks before it (a `---`
/// line leaves one) and the whitespace after it, which change nothing in what it holds.
fn text_key(text: &str) -> &str {
    text.trim_start_matches(['\n', '\r']).trim_end()
}

/// [`parse_manifests`], reusing the objects of documents that `known` already parsed (the same text gives
/// the same objects; namespaces defaulted on them since stay, which defaulting again keeps).
pub fn parse_manifests_after(stream: &str, known: &ParsedStream) -> Result<Vec<Manifest>, ManifestError> {
    let docs = split_documents(stream);
    let mut out = Vec::with_capacity(docs.len());
    let parse = |doc: &RawDocument| match known.objects_of(&doc.text) {
        Some(objects) => Ok(objects
            .iter()
            .map(|m| Manifest {
                id: m.id.clone(),
                object: m.object.clone(),
                source: doc.source.clone(),
                line: doc.line,
            })
            .collect()),
        None => parse_document(doc),
    };
    for parsed in crate::support::par::map_ordered(&docs, parse) {
        out.extend(parsed?);
    }
    Ok(out)
}

fn parse_document(doc: &RawDocument) -> Result<Vec<Manifest>, ManifestError> {
    let location = Location { source: doc.source.clone(), line: doc.line };
    let mut out = Vec::new();
    if is_blank_document(&doc.text) {
        return Ok(out);
    }
    // YAML 1.1, as Helm and kubectl read it (see the function's doc).
    let value: Value = crate::go::yaml::manifest_value(&doc.text).map_err(|err| {
        let (line, message) = match err.location() {
            Some(l) => (
                doc.line + (l.line() as usize).saturating_sub(1),
                format!("{} (column {})", strip_position(&err), l.column()),
            ),
            None => (doc.line, strip_position(&err)),
        };
        ManifestError::Yaml { location: Location { source: doc.source.clone(), line }, message }
    })?;
    flatten(value, &location, &mut out)?;
    Ok(out)
}

fn flatten(value: Value, location: &Location, out: &mut Vec<Manifest>) -> Result<(), ManifestError> {
    if value.is_null() {
        return Ok(());
    }
    // A list has `items` and no name of its own; the name check keeps a custom kind that merely ends in
    // "List" and has a top-level `items` field from being taken apart.
    let is_list = value.get("kind").and_then(Value::as_str).is_some_and(|k| k.ends_with("List"))
        && value.get("items").is_some_and(Value::is_array)
        && value.pointer("/metadata/name").is_none();
    if is_list {
        if let Value::Object(mut map) = value
            && let Some(Value::Array(items)) = map.remove("items")
        {
            for item in items {
                flatten(item, location, out)?;
            }
        }
        return Ok(());
    }
    let id = ObjectId::from_object(&value)
        .map_err(|problem| ManifestError::Invalid { location: location.clone(), problem })?;
    out.push(Manifest { id, object: value, source: location.source.clone(), line: location.line });
    Ok(())
}

/// One document of a stream as text, with the template path of its `# Source:` comment and its first line.
pub(crate) struct RawDocument {
    pub(crate) text: String,
    pub(crate) source: Option<String>,
    pub(crate) line: usize,
}

/// Splits a stream at its document markers (see [`parse_manifests`]); blank documents are dropped.
pub(crate) fn split_documents(stream: &str) -> Vec<RawDocument> {
    let stream = stream.strip_prefix('\u{feff}').unwrap_or(stream);
    let mut docs = Vec::new();
    // A document is what its marker line carries, then a run of whole lines of the stream, copied once.
    let mut head = String::new();
    let mut body_from: Option<usize> = None;
    let mut start_line = 1;
    let mut offset = 0;
    let finish = |head: &mut String, body: Option<&str>, line| {
        let mut text = std::mem::take(head);
        text.push_str(body.unwrap_or_default());
        finish_document(text, line)
    };
    for (idx, raw) in stream.split_inclusive('\n').enumerate() {
        let line_no = idx + 1;
        let line = raw.trim_end_matches(['\n', '\r']);
        let rest = line.strip_prefix("---").filter(|r| r.is_empty() || r.starts_with([' ', '\t']));
        if let Some(rest) = rest {
            docs.push(finish(&mut head, body_from.take().map(|f| &stream[f..offset]), start_line));
            start_line = line_no;
            // Content on the marker line (`--- # Source: x`, `--- {json}`) belongs to the new document; the
            // marker becomes spaces so columns in error messages stay right.
            if !rest.trim().is_empty() {
                head.push_str("   ");
                head.push_str(rest);
            }
            head.push('\n');
        } else if line == "..." {
            docs.push(finish(&mut head, body_from.take().map(|f| &stream[f..offset]), start_line));
        } else if body_from.is_none() {
            if head.is_empty() {
                start_line = line_no;
            }
            body_from = Some(offset);
        }
        offset += raw.len();
    }
    docs.push(finish(&mut head, body_from.map(|f| &stream[f..]), start_line));
    docs.retain(|d| !d.text.trim().is_empty());
    docs
}

fn finish_document(text: String, line: usize) -> RawDocument {
    let source = text
        .lines()
        .map(str::trim)
        .take_while(|l| l.is_empty() || l.starts_with('#'))
        .find_map(|l| l.strip_prefix("# Source:").map(|s| s.trim().to_string()))
        .filter(|s| !s.is_empty());
    RawDocument { text, source, line }
}

/// A document with nothing but comments and blank lines.
pub(crate) fn is_blank_document(text: &str) -> bool {
    text.lines().map(str::trim).all(|l| l.is_empty() || l.starts_with('#'))
}

/// The parser's message on one line, without its own "at line L, column C": that line counts from the start
/// of the document, not of the stream, so we print our own.
fn strip_position(err: &serde_saphyr::Error) -> String {
    let text = err.without_snippet().to_string();
    let first = text.lines().next().unwrap_or_default().trim();
    match first.rfind(" at line ") {
        Some(i) if first[i..].contains(", column ") => first[..i].to_string(),
        _ => first.to_string(),
    }
}

fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.split_once('/').unwrap_or(("", api_version))
}

/// The set of cluster-scoped kinds, by (group, kind). The built-in list covers the Kubernetes APIs a chart
/// commonly ships; a caller with cluster access should use discovery results instead (`from_kinds`)
/// or add to the list ([`Self::insert`]), because a CRD can define cluster-scoped kinds of its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterScoped {
    kinds: BTreeSet<(String, String)>,
}

impl ClusterScoped {
    const BUILTIN: &'static [(&'static str, &'static str)] = &[
        ("", "Namespace"),
        ("", "Node"),
        ("", "PersistentVolume"),
        ("", "ComponentStatus"),
        ("rbac.authorization.k8s.io", "ClusterRole"),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ("apiregistration.k8s.io", "APIService"),
        ("storage.k8s.io", "StorageClass"),
        ("storage.k8s.io", "CSIDriver"),
        ("storage.k8s.io", "CSINode"),
        ("storage.k8s.io", "VolumeAttachment"),
        ("storage.k8s.io", "VolumeAttributesClass"),
        ("scheduling.k8s.io", "PriorityClass"),
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
        ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"),
        ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"),
        ("networking.k8s.io", "IngressClass"),
        ("networking.k8s.io", "IPAddress"),
        ("networking.k8s.io", "ServiceCIDR"),
        ("node.k8s.io", "RuntimeClass"),
        ("certificates.k8s.io", "CertificateSigningRequest"),
        ("certificates.k8s.io", "ClusterTrustBundle"),
        ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
        ("resource.k8s.io", "DeviceClass"),
    ];

    /// The built-in list of common cluster-scoped Kubernetes kinds.
    pub fn builtin() -> Self {
        Self::from_kinds(Self::BUILTIN.iter().copied())
    }

    /// Exactly these (group, kind) pairs, e.g. every resource discovery reports as not namespaced.
    fn from_kinds<G: Into<String>, K: Into<String>>(kinds: impl IntoIterator<Item = (G, K)>) -> Self {
        ClusterScoped { kinds: kinds.into_iter().map(|(g, k)| (g.into(), k.into())).collect() }
    }

    pub fn insert(&mut self, group: impl Into<String>, kind: impl Into<String>) {
        self.kinds.insert((group.into(), kind.into()));
    }

    pub fn contains(&self, group: &str, kind: &str) -> bool {
        // A BTreeSet of owned tuples cannot be queried with borrowed ones; the list is small.
        self.kinds.iter().any(|(g, k)| g == group && k == kind)
    }
}

impl Default for ClusterScoped {
    fn default() -> Self {
        Self::builtin()
    }
}

/// [`Manifest::default_namespace`] for every manifest, with `is_cluster_scoped(group, kind)` deciding the
/// scope (e.g. `|g, k| scope.contains(g, k)` with a [`ClusterScoped`]).
pub fn default_namespaces(manifests: &mut [Manifest], namespace: &str, is_cluster_scoped: impl Fn(&str, &str) -> bool) {
    for m in manifests {
        let cluster = is_cluster_scoped(&m.id.group, &m.id.kind);
        m.default_namespace(namespace, cluster);
    }
}

/// Makes the object as Helm sends it to the API server: Helm adds its ownership label and annotations to
/// every object it applies. Without them, a dry run as helm-controller's field manager would "remove" them.
pub fn add_helm_ownership(obj: &mut Value, release_name: &str, release_namespace: &str) {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        let labels = meta.entry("labels").or_insert_with(|| Value::Object(Default::default()));
        if let Some(l) = labels.as_object_mut() {
            l.insert("app.kubernetes.io/managed-by".into(), "Helm".into());
        }
        let annotations = meta.entry("annotations").or_insert_with(|| Value::Object(Default::default()));
        if let Some(a) = annotations.as_object_mut() {
            a.insert("meta.helm.sh/release-name".into(), release_name.into());
            a.insert("meta.helm.sh/release-namespace".into(), release_namespace.into());
        }
    }
}

/// Whether `obj` is of `kind` in `group` (`""` for the core group), whatever the version.
pub(crate) fn is_kind(obj: &Value, group: &str, kind: &str) -> bool {
    let Some(api_version) = obj.get("apiVersion").and_then(Value::as_str) else { return false };
    split_api_version(api_version).0 == group && obj.get("kind").and_then(Value::as_str) == Some(kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_splits_at_its_markers_with_sources_and_first_lines() {
        let stream = "\u{feff}a: 1\r\n---\n# Source: t/x.yaml\nb: 2\n--- # Source: t/y.yaml\nc: 3\n...\n\nd: 4\n---\n# only a comment\n---\t{e: 5}\n---";
        let docs: Vec<_> = split_documents(stream).into_iter().map(|d| (d.text, d.source, d.line)).collect();
        let some = |s: &str| Some(s.to_string());
        assert_eq!(
            docs,
            [
                ("a: 1\r\n".to_string(), None, 1),
                ("\n# Source: t/x.yaml\nb: 2\n".to_string(), some("t/x.yaml"), 2),
                ("    # Source: t/y.yaml\nc: 3\n".to_string(), some("t/y.yaml"), 5),
                ("\nd: 4\n".to_string(), None, 8),
                ("\n# only a comment\n".to_string(), None, 10),
                ("   \t{e: 5}\n".to_string(), None, 12),
            ]
        );
    }

    #[test]
    fn documents_seen_before_are_reused_and_others_parsed() {
        let before = "# Source: a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n\n---\n\
                      # Source: b.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n";
        let mut known = ParsedStream::parse(before).unwrap();
        // Marks what comes from `known`: a reused document carries the mark, a parsed one cannot.
        known.manifests[0].object["data"]["k"] = "from-known".into();
        known.manifests[1].object["data"] = serde_json::json!({"k": "from-known"});
        let after = "---\n# Source: c.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n\
                     ---\n# Source: a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n---\n\
                     # Source: b.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  k: changed\n";
        let parsed = parse_manifests_after(after, &known).unwrap();
        let names: Vec<&str> = parsed.iter().map(|m| m.id.name.as_str()).collect();
        assert_eq!(names, ["c", "a", "b"]);
        assert_eq!(parsed[1].object["data"]["k"], "from-known", "the same text (but for blank lines around it)");
        assert_eq!(parsed[2].object["data"]["k"], "changed", "another text");
        // Where each object is in the new stream, not the old one.
        assert_eq!((parsed[1].line, parsed[1].source.as_deref()), (7, Some("a.yaml")));
    }
    use serde_json::json;

    fn id(v: Value) -> ObjectId {
        ObjectId::from_object(&v).unwrap()
    }

    #[test]
    fn splits_helm_template_output() {
        let stream = "\
---
# Source: demo/templates/cm.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: demo
data:
  script: |
    echo start
    ---
    echo after an indented separator
---
# Source: demo/templates/empty.yaml
# only a comment, e.g. a template switched off by a condition
---

---
# Source: demo/templates/deploy.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: prod
";
        let docs = parse_manifests(stream).unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0].source.as_deref(), Some("demo/templates/cm.yaml"));
        assert_eq!(docs[0].line, 1);
        assert_eq!(docs[0].object["data"]["script"], json!("echo start\n---\necho after an indented separator\n"));
        assert_eq!(docs[1].source.as_deref(), Some("demo/templates/deploy.yaml"));
        assert_eq!(docs[1].line, 17);
        assert_eq!(docs[1].id.to_string(), "apps/Deployment prod/web");
    }

    #[test]
    fn stream_without_leading_separator_and_with_document_end_markers() {
        let stream = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n...\n--- {\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"b\"}}\n";
        let docs = parse_manifests(stream).unwrap();
        let names: Vec<_> = docs.iter().map(|d| d.id.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(docs[1].line, 5);
    }

    #[test]
    fn scalars_are_read_as_helm_and_kubectl_read_them() {
        let docs = parse_manifests(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nspec: {mode: 0644, on: yes, port: 8080, ratio: 1.5}\n",
        )
        .unwrap();
        assert_eq!(docs[0].object["spec"], json!({"mode": 420, "on": true, "port": 8080, "ratio": 1.5}));
    }

    #[test]
    fn empty_and_null_documents_are_skipped() {
        assert!(parse_manifests("").unwrap().is_empty());
        assert!(parse_manifests("---\n---\n# c\n---\nnull\n---\n~\n").unwrap().is_empty());
    }

    #[test]
    fn lists_are_flattened() {
        let stream = "\
# Source: demo/templates/list.yaml
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: one}
- apiVersion: v1
  kind: ConfigMapList
  items:
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: two}
";
        let docs = parse_manifests(stream).unwrap();
        let names: Vec<_> = docs.iter().map(|d| d.id.name.as_str()).collect();
        assert_eq!(names, ["one", "two"]);
        let not_a_list = "apiVersion: example.com/v1\nkind: AllowList\nmetadata: {name: x}\nitems: [a]\n";
        assert_eq!(parse_manifests(not_a_list).unwrap()[0].id.kind, "AllowList");
        assert!(docs.iter().all(|d| d.source.as_deref() == Some("demo/templates/list.yaml")));
    }

    #[test]
    fn parse_errors_name_the_source_and_line() {
        let stream = "\
---
# Source: demo/templates/ok.yaml
apiVersion: v1
kind: ConfigMap
metadata: {name: ok}
---
# Source: demo/templates/bad.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: bad
  labels: [unclosed
";
        let err = parse_manifests(stream).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("demo/templates/bad.yaml (line "), "{msg}");
        assert!(!msg.contains('\n'), "{msg}");
        assert_eq!(
            msg,
            "demo/templates/bad.yaml (line 12 of the manifest stream): invalid YAML: unclosed bracket '[' (column 11)"
        );
    }

    #[test]
    fn documents_that_are_not_objects_are_refused() {
        let err = parse_manifests("# Source: x/t.yaml\n- a\n- b\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "x/t.yaml (line 1 of the manifest stream): the document is not a mapping (a Kubernetes object); every document must be a Kubernetes object with apiVersion, kind and metadata.name"
        );
        let err = parse_manifests("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: x-\n").unwrap_err();
        assert!(err.to_string().contains("the object has no metadata.name"), "{err}");
    }

    #[test]
    fn identity_of_core_and_grouped_kinds() {
        let cm = id(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}}));
        assert_eq!(cm.group, "");
        assert_eq!(cm.version.as_deref(), Some("v1"));
        assert_eq!(cm.to_string(), "ConfigMap ns/c");
        assert_eq!(cm.helm_header(), "ns, c, ConfigMap (v1)");

        let d1 =
            id(json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w", "namespace": "ns"}}));
        let d2 = id(
            json!({"apiVersion": "apps/v1beta2", "kind": "Deployment", "metadata": {"name": "w", "namespace": "ns"}}),
        );
        assert_eq!(d1, d2, "the version is not part of the identity");
        assert_eq!(d1.to_string(), "apps/Deployment ns/w");
        assert_eq!(d1.helm_header(), "ns, w, Deployment (apps/v1)");

        let other_group = id(
            json!({"apiVersion": "extensions.example.com/v1", "kind": "Deployment", "metadata": {"name": "w", "namespace": "ns"}}),
        );
        assert_ne!(d1, other_group);

        let cr = id(
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "r", "namespace": ""}}),
        );
        assert_eq!(cr.namespace, None);
        assert_eq!(cr.to_string(), "rbac.authorization.k8s.io/ClusterRole r");
        assert_eq!(cr.helm_header(), "r, ClusterRole (rbac.authorization.k8s.io/v1)");
        assert!(cr < cm, "cluster-scoped objects sort first");

        let no_version = ObjectId { version: None, ..cm.clone() };
        assert_eq!(no_version, cm);
        assert_eq!(no_version.helm_header(), "ns, c, ConfigMap");
    }

    #[test]
    fn namespaces_are_defaulted_by_scope() {
        let stream = "\
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: d, namespace: other}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: r, namespace: leaked}
---
apiVersion: example.com/v1
kind: ClusterThing
metadata: {name: t}
";
        let mut docs = parse_manifests(stream).unwrap();
        let mut scope = ClusterScoped::builtin();
        scope.insert("example.com", "ClusterThing");
        default_namespaces(&mut docs, "rel", |g, k| scope.contains(g, k));
        let ids: Vec<String> = docs.iter().map(|d| d.id.to_string()).collect();
        assert_eq!(
            ids,
            [
                "ConfigMap rel/c",
                "ConfigMap other/d",
                "rbac.authorization.k8s.io/ClusterRole r",
                "example.com/ClusterThing t"
            ]
        );
        assert_eq!(docs[0].object["metadata"]["namespace"], json!("rel"));
        assert!(docs[2].object["metadata"].get("namespace").is_none());

        // Discovery results replace the built-in list.
        let discovered = ClusterScoped::from_kinds([("", "Namespace")]);
        assert!(!discovered.contains("rbac.authorization.k8s.io", "ClusterRole"));
        assert!(ClusterScoped::default().contains("apiextensions.k8s.io", "CustomResourceDefinition"));
        assert!(!ClusterScoped::default().contains("", "ConfigMap"));
    }
}
