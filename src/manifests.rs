//! Kubernetes manifests as `helm template` and `helm get manifest` print them: a multi-document YAML stream
//! split into objects, object identity, normalisation for comparison, deterministic YAML for display, and
//! Secret masking.
//!
//! Everything here is pure: no cluster access, no environment. Objects are `serde_json::Value`s because the
//! diff must see every field, including ones no typed model knows.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Range;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Map, Value};

/// The annotation `kubectl apply` (client-side) stores the whole applied object in. For a Secret it holds
/// the Secret's data in clear, so it is stripped by [`normalize`] and masked by [`mask_secrets`].
pub const LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

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

    #[error("cannot print {id} as YAML: {message}")]
    Serialize { id: String, message: String },
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
        let api_version = non_empty_str(map.get("apiVersion")).ok_or(IdError::Missing("apiVersion"))?;
        let kind = non_empty_str(map.get("kind")).ok_or(IdError::Missing("kind"))?;
        let metadata = map.get("metadata");
        let name = non_empty_str(metadata.and_then(|m| m.get("name"))).ok_or(IdError::Missing("metadata.name"))?;
        let namespace = non_empty_str(metadata.and_then(|m| m.get("namespace")));
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
        let parsed = crate::par::map_ordered(&docs, parse_document);
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
    for parsed in crate::par::map_ordered(&docs, parse) {
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
    let mut options = serde_saphyr::Options::default();
    // The snippet is multi-line; we report one line with our own location instead.
    options.with_snippet = false;
    // Helm and kubectl read YAML as YAML 1.1 (sigs.k8s.io/yaml): `defaultMode: 0644` is octal 420 there,
    // and must be here too, or every such field would show as changed against the cluster.
    options.legacy_octal_numbers = true;
    // Nothing here reads comments; reporting them costs the parser about a third of its time.
    options.emit_comments = false;
    let value: Value = serde_saphyr::from_str_with_options(&doc.text, options).map_err(|err| {
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
    let mut text = String::new();
    let mut start_line = 1;
    for (idx, raw) in stream.split_inclusive('\n').enumerate() {
        let line_no = idx + 1;
        let line = raw.trim_end_matches(['\n', '\r']);
        let rest = line.strip_prefix("---").filter(|r| r.is_empty() || r.starts_with([' ', '\t']));
        if let Some(rest) = rest {
            docs.push(finish_document(std::mem::take(&mut text), start_line));
            start_line = line_no;
            // Content on the marker line (`--- # Source: x`, `--- {json}`) belongs to the new document; the
            // marker becomes spaces so columns in error messages stay right.
            if !rest.trim().is_empty() {
                text.push_str("   ");
                text.push_str(rest);
            }
            text.push('\n');
        } else if line == "..." {
            docs.push(finish_document(std::mem::take(&mut text), start_line));
        } else {
            if text.is_empty() {
                start_line = line_no;
            }
            text.push_str(raw);
        }
    }
    docs.push(finish_document(text, start_line));
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

fn non_empty_str(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_str).filter(|s| !s.is_empty())
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

fn is_kind(obj: &Value, group: &str, kind: &str) -> bool {
    let Some(api_version) = obj.get("apiVersion").and_then(Value::as_str) else { return false };
    split_api_version(api_version).0 == group && obj.get("kind").and_then(Value::as_str) == Some(kind)
}

fn is_secret(obj: &Value) -> bool {
    is_kind(obj, "", "Secret")
}

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

/// [`normalize`] on a copy.
#[cfg(test)]
fn normalized(obj: &Value) -> Value {
    let mut copy = obj.clone();
    normalize(&mut copy);
    copy
}

fn is_empty_or_null(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

/// The object as YAML for display, deterministically: the top level starts with `apiVersion`, `kind`,
/// `metadata`, and `metadata` with `name`, `namespace`; every other mapping key is sorted (byte order).
/// Input order is not kept on purpose: the API server returns fields in its own order, a chart in the
/// author's, and a diff of the two must show only real changes.
pub fn to_yaml(obj: &Value) -> Result<String, ManifestError> {
    let canonical = canonical(obj, Level::Top);
    serde_saphyr::to_string(&canonical).map_err(|err| ManifestError::Serialize {
        id: ObjectId::from_object(obj).map_or_else(|_| "object".to_string(), |id| id.to_string()),
        message: err.to_string(),
    })
}

#[derive(Clone, Copy)]
enum Level {
    Top,
    Metadata,
    Nested,
}

fn canonical(v: &Value, level: Level) -> Value {
    match v {
        Value::Object(map) => {
            let first: &[&str] = match level {
                Level::Top => &["apiVersion", "kind", "metadata"],
                Level::Metadata => &["name", "namespace"],
                Level::Nested => &[],
            };
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by(|a, b| {
                let rank = |k: &str| first.iter().position(|f| *f == k).unwrap_or(first.len());
                rank(a).cmp(&rank(b)).then_with(|| a.cmp(b))
            });
            let mut out = Map::new();
            for k in keys {
                let child = match level {
                    Level::Top if k == "metadata" => Level::Metadata,
                    _ => Level::Nested,
                };
                out.insert(k.clone(), canonical(&map[k.as_str()], child));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|i| canonical(i, Level::Nested)).collect()),
        other => other.clone(),
    }
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

    #[test]
    fn yaml_is_deterministic_and_canonical() {
        let a = json!({"spec": {"b": 1, "a": [{"z": 1, "y": "multi\nline\n"}]}, "metadata": {"labels": {"x": "1"}, "namespace": "ns", "name": "n"}, "kind": "K", "apiVersion": "v1"});
        let b = json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "n", "namespace": "ns", "labels": {"x": "1"}}, "spec": {"a": [{"y": "multi\nline\n", "z": 1}], "b": 1}});
        let ya = to_yaml(&a).unwrap();
        assert_eq!(ya, to_yaml(&b).unwrap());
        assert_eq!(
            ya,
            "apiVersion: v1\nkind: K\nmetadata:\n  name: \"n\"\n  namespace: ns\n  labels:\n    x: \"1\"\nspec:\n  a:\n  - \"y\": |\n      multi\n      line\n    z: 1\n  b: 1\n"
        );
    }

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
