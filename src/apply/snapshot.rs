//! helm-controller's view of a Helm release: the `status.history` snapshot it records and the digests it
//! verifies on every reconcile (reference §4 "Snapshot fields", "Digests", "(a) No needless upgrade").
//!
//! `helm cozy apply` installs with the helm CLI and then writes the HelmRelease status itself, so every
//! digest here must be byte-for-byte what helm-controller v1.6.2 computes, or it treats the release as
//! "Unmanaged" and upgrades it. The source of truth is:
//! - the snapshot digest (`internal/release/{observation,digest}.go`): sha256 of Go's `json.Encoder` output
//!   of `Observation{name, version, info, chartMetadata, config, manifest, hooks, namespace, ociDigest}` taken
//!   from the release as Helm v4.2.2 *decodes* it from its storage Secret (`json.Unmarshal` into
//!   `release/v1.Release`). So fields unknown to those structs vanish, Helm 3's `"deleted":""` means "zero
//!   time", `version`/`weight` must be JSON integers, config numbers become float64, `config: {}` becomes
//!   `null`, and test hooks are left out.
//! - `observedPostRenderersDigest` / `observedCommonMetadataDigest` (`internal/postrender/build.go`, set by
//!   `summarize()` in `internal/reconcile/release.go`): sha256 of `json.Encoder` output of the typed spec
//!   field, or `""` when the field is nil (absent or `null`); an empty list or object is *not* nil.
//!
//! This module holds those structs (their fields, order and `omitempty`) and helm-controller's steps; Go's
//! encoding rules themselves (JSON, float64, `time.Time`, the `sha256:` digest) are in [`crate::go`].
//!
//! The release must be parsed by serde_json with its `float_roundtrip` feature (enabled for the workspace):
//! without it some config numbers come out one ULP off Go's `ParseFloat` and the digest no longer matches.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Map, Value};

use crate::go::digest;
use crate::go::json::{
    self, Dec, Obj, decode_ptr_slice, encode_any, encode_list, encode_map, encode_string, encode_string_map,
    field_index, value_kind,
};
use crate::go::time::GoTime;

/// `v2.CurrentSnapshotAPIVersion`: snapshots without it skip digest verification (hc ≥ 1.5).
pub const SNAPSHOT_API_VERSION: &str = "v2";

/// A stored release that Helm v4.2.2's `json.Unmarshal` (what helm-controller v1.6.2 runs) rejects, or one
/// that would make helm-controller's `ObserveRelease` panic (a `null` hook). helm-controller can never
/// verify a snapshot of such a release.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("helm-controller cannot decode the stored Helm release: {0}")]
pub struct UndecodableRelease(pub String);

// ---------------------------------------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------------------------------------

/// The snapshot `digest` helm-controller verifies against the stored `release` (the decoded JSON of the
/// storage Secret, written by Helm 3 or Helm 4), for a chart that did not come with an OCI digest.
/// Returns `""` when helm-controller could not decode the release (Go's `Digest` also yields `""` when it
/// cannot encode); use [`try_observation_digest`] to get the reason.
#[cfg(test)]
fn observation_digest(release: &Value) -> String {
    try_observation_digest(release, "").unwrap_or_default()
}

/// The snapshot digest with the snapshot's `ociDigest` (helm-controller copies
/// `status.lastAttemptedRevisionDigest` into the observation on install/upgrade; `""` for none).
#[cfg(test)]
fn try_observation_digest(release: &Value, oci_digest: &str) -> Result<String, UndecodableRelease> {
    observation_json(release, oci_digest).map(|json| digest::sha256(json.as_bytes()))
}

/// The exact bytes helm-controller hashes for the snapshot digest: the `json.Encoder` output (with its
/// trailing newline) of the Observation of `release`.
#[cfg(test)]
fn observation_json(release: &Value, oci_digest: &str) -> Result<String, UndecodableRelease> {
    let (obs, err) = Observation::decode(release);
    if let Some(err) = err {
        return Err(UndecodableRelease(err));
    }
    Ok(obs.encode(oci_digest))
}

/// helm-controller's "is this spec field set" rule for `spec.postRenderers` and `spec.commonMetadata`: the
/// Go field is non-nil. Absent and `null` are unset (the observed digest is then `""`); `[]` and `{}` are set.
#[cfg(test)]
fn spec_field_is_set(field: Option<&Value>) -> bool {
    !matches!(field, None | Some(Value::Null))
}

/// `status.observedPostRenderersDigest` for the HelmRelease's `spec.postRenderers` (pass `None` when the
/// field is absent): `""` when unset, otherwise sha256 of the `json.Encoder` output of `[]v2.PostRenderer`.
/// A value of the wrong JSON type (which the API server's schema never lets through) also gives `""`.
pub fn post_renderers_digest(spec_post_renderers: Option<&Value>) -> String {
    match spec_post_renderers {
        Some(Value::Array(items)) => digest::sha256(json::encode(|out| encode_post_renderers(out, items)).as_bytes()),
        _ => String::new(),
    }
}

/// `status.observedCommonMetadataDigest` for `spec.commonMetadata` (`None` when absent): `""` when unset,
/// otherwise sha256 of the `json.Encoder` output of `*v2.CommonMetadata`.
pub fn common_metadata_digest(cm: Option<&Value>) -> String {
    match cm {
        Some(Value::Object(obj)) => digest::sha256(json::encode(|out| encode_common_metadata(out, obj)).as_bytes()),
        _ => String::new(),
    }
}

/// The `status.history` entry helm-controller records after `action` (`"install"`, `"upgrade"`, …) produced
/// `release`; `config_digest` is the digest of the release's config (`cozyhr::values` computes it).
/// See [`try_snapshot`] for the fields; on an undecodable release the `digest` is `""`.
pub fn snapshot(release: &Value, config_digest: String, action: &str) -> Value {
    build_snapshot(release, config_digest, action, "").0
}

/// Like [`snapshot`], with the chart's OCI digest (`ociDigest`, also part of the digest), and failing when
/// helm-controller could not decode the release.
///
/// Fields, in `v2.Snapshot` order: `apiVersion` ("v2"), `digest`, `name`, `namespace`, `version`, `status`,
/// `action` (omitted when empty), `chartName`, `chartVersion`, `appVersion` (omitted when empty),
/// `configDigest`, `firstDeployed`, `lastDeployed`, `deleted`, `ociDigest` (omitted when empty). Times are
/// `metav1.Time`: UTC, whole seconds. Go marshals a zero time as `null`, which the API server drops for
/// these non-nullable fields (and which a merge patch treats as "remove"), so a zero time is omitted here:
/// the object matches what the API server stores. `testHooks` is not set, as in `ObservedToSnapshot`; see
/// `test_hooks` for the value helm-controller sets after running tests.
pub fn try_snapshot(
    release: &Value,
    config_digest: String,
    action: &str,
    oci_digest: &str,
) -> Result<Value, UndecodableRelease> {
    match build_snapshot(release, config_digest, action, oci_digest) {
        (snap, None) => Ok(snap),
        (_, Some(err)) => Err(UndecodableRelease(err)),
    }
}

/// The snapshot's `testHooks` as helm-controller sets it after a test run (`TestHooksFromRelease`): every
/// hook with the `test` event, by name (a later hook with the same name wins), with `lastStarted`,
/// `lastCompleted` (metav1 times, omitted when zero) and `phase` (omitted when empty). `{}` means no test
/// hook was selected. From v1.6.3 only the hooks `selected` keeps are recorded (`spec.test.filters`);
/// before, `selected` is None and every test hook is.
pub fn test_hooks(release: &Value, selected: Option<&dyn Fn(&str) -> bool>) -> Value {
    let (obs, _) = Observation::decode(release);
    let mut hooks: BTreeMap<String, Value> = BTreeMap::new();
    for hook in obs.all_hooks.iter().flatten().flatten() {
        if !hook.is_test() || selected.is_some_and(|keep| !keep(&hook.name)) {
            continue;
        }
        let mut status = Map::new();
        if let Some(t) = hook.last_run.started_at.filter(|t| !t.is_zero()) {
            status.insert("lastStarted".into(), Value::String(t.metav1()));
        }
        if let Some(t) = hook.last_run.completed_at.filter(|t| !t.is_zero()) {
            status.insert("lastCompleted".into(), Value::String(t.metav1()));
        }
        if !hook.last_run.phase.is_empty() {
            status.insert("phase".into(), Value::String(hook.last_run.phase.clone()));
        }
        hooks.insert(hook.name.clone(), Value::Object(status));
    }
    Value::Object(hooks.into_iter().collect())
}

fn build_snapshot(release: &Value, config_digest: String, action: &str, oci: &str) -> (Value, Option<String>) {
    let (obs, err) = Observation::decode(release);
    let digest = if err.is_some() { String::new() } else { digest::sha256(obs.encode(oci).as_bytes()) };
    let info = obs.info.unwrap_or_default();
    let meta = obs.chart_metadata.unwrap_or_default();
    let mut s = Map::new();
    let mut put = |k: &str, v: Value| {
        s.insert(k.to_string(), v);
    };
    put("apiVersion", SNAPSHOT_API_VERSION.into());
    put("digest", digest.into());
    put("name", obs.name.into());
    put("namespace", obs.namespace.into());
    put("version", obs.version.into());
    put("status", info.status.into());
    if !action.is_empty() {
        put("action", action.into());
    }
    put("chartName", meta.name.into());
    put("chartVersion", meta.version.into());
    if !meta.app_version.is_empty() {
        put("appVersion", meta.app_version.into());
    }
    put("configDigest", config_digest.into());
    for (key, t) in
        [("firstDeployed", info.first_deployed), ("lastDeployed", info.last_deployed), ("deleted", info.deleted)]
    {
        if let Some(t) = t.filter(|t| !t.is_zero()) {
            put(key, t.metav1().into());
        }
    }
    if !oci.is_empty() {
        put("ociDigest", oci.into());
    }
    (Value::Object(s), err)
}

// ---------------------------------------------------------------------------------------------------------
// Helm v4.2.2's release structs, decoded as `json.Unmarshal` does and encoded as `json.Encoder` does
// ---------------------------------------------------------------------------------------------------------

/// Helm's `Info.UnmarshalJSON` / `HookExecution.UnmarshalJSON` first decode into `map[string]any`, turn the
/// exact time keys holding `""` into `null`, and re-marshal the map: so the members reach the typed struct
/// sorted by key, one per distinct key.
fn helm_cleaned_members<'v>(
    d: &mut Dec,
    v: &'v Value,
    what: &str,
    time_keys: &[&str],
) -> Option<Vec<(&'v str, &'v Value)>> {
    static NULL: Value = Value::Null;
    match v {
        Value::Object(o) => {
            let mut members: Vec<(&str, &Value)> = o
                .iter()
                .map(|(k, v)| {
                    let blank = time_keys.contains(&k.as_str()) && v.as_str() == Some("");
                    (k.as_str(), if blank { &NULL } else { v })
                })
                .collect();
            members.sort_by(|a, b| a.0.cmp(b.0));
            Some(members)
        }
        // `null` decodes into a nil map, which re-marshals as `null`: nothing is set.
        Value::Null => Some(Vec::new()),
        other => {
            d.fail(|| {
                format!(
                    "json: cannot unmarshal {} into Go value of type map[string]interface {{}} ({what})",
                    value_kind(other)
                )
            });
            None
        }
    }
}

/// helm `release/v1.Info`.
#[derive(Default, Clone)]
struct Info {
    first_deployed: Option<GoTime>,
    last_deployed: Option<GoTime>,
    deleted: Option<GoTime>,
    description: String,
    status: String,
    notes: String,
    /// `map[string][]runtime.Object`: only nil elements can be decoded into the interface, so a list is
    /// its length (`None` is a nil list).
    resources: Option<BTreeMap<String, Option<usize>>>,
}

impl Info {
    const FIELDS: [&'static str; 7] =
        ["first_deployed", "last_deployed", "deleted", "description", "status", "notes", "resources"];

    /// `Info.UnmarshalJSON`: times are only ever set, the other fields are overwritten.
    fn unmarshal(&mut self, d: &mut Dec, v: &Value) {
        let Some(members) = helm_cleaned_members(d, v, "Info", &Self::FIELDS[..3]) else { return };
        let mut tmp = Info::default();
        for (key, val) in members {
            let field = |name: &str| format!("infoJSON.{name}");
            match field_index(&Self::FIELDS, key) {
                Some(0) => d.time(val, &field("first_deployed"), &mut tmp.first_deployed),
                Some(1) => d.time(val, &field("last_deployed"), &mut tmp.last_deployed),
                Some(2) => d.time(val, &field("deleted"), &mut tmp.deleted),
                Some(3) => d.string(val, &field("description"), &mut tmp.description),
                Some(4) => d.string(val, &field("status"), &mut tmp.status),
                Some(5) => d.string(val, &field("notes"), &mut tmp.notes),
                Some(6) => match val {
                    Value::Null => tmp.resources = None,
                    Value::Object(o) => {
                        let map = tmp.resources.get_or_insert_with(BTreeMap::new);
                        for (kind, list) in o {
                            let len = match list {
                                Value::Null => None,
                                Value::Array(items) => {
                                    if let Some(bad) = items.iter().find(|i| !i.is_null()) {
                                        d.type_error(bad, "infoJSON.resources", "runtime.Object");
                                    }
                                    Some(items.len())
                                }
                                other => {
                                    d.type_error(other, "infoJSON.resources", "[]runtime.Object");
                                    None
                                }
                            };
                            map.insert(kind.clone(), len);
                        }
                    }
                    other => d.type_error(other, "infoJSON.resources", "map[string][]runtime.Object"),
                },
                _ => {}
            }
        }
        if tmp.first_deployed.is_some() {
            self.first_deployed = tmp.first_deployed;
        }
        if tmp.last_deployed.is_some() {
            self.last_deployed = tmp.last_deployed;
        }
        if tmp.deleted.is_some() {
            self.deleted = tmp.deleted;
        }
        self.description = tmp.description;
        self.status = tmp.status;
        self.notes = tmp.notes;
        self.resources = tmp.resources;
    }

    /// `Info.MarshalJSON`: `infoJSON` with zero times left out.
    fn encode(&self, out: &mut String) {
        let mut o = Obj::new(out);
        for (key, t) in [
            ("first_deployed", &self.first_deployed),
            ("last_deployed", &self.last_deployed),
            ("deleted", &self.deleted),
        ] {
            if let Some(t) = t.filter(|t| !t.is_zero()) {
                encode_string(o.key(key), &t.rfc3339_nano());
            }
        }
        o.string("description", &self.description, true);
        o.string("status", &self.status, true);
        o.string("notes", &self.notes, true);
        if let Some(res) = self.resources.as_ref().filter(|r| !r.is_empty()) {
            let mut m = Obj::new(o.key("resources"));
            for (kind, len) in res {
                let out = m.key(kind);
                match len {
                    None => out.push_str("null"),
                    Some(n) => {
                        out.push('[');
                        for i in 0..*n {
                            out.push_str(if i == 0 { "null" } else { ",null" });
                        }
                        out.push(']');
                    }
                }
            }
            m.end();
        }
        o.end();
    }
}

/// helm `release/v1.HookExecution`.
#[derive(Default, Clone)]
struct HookExecution {
    started_at: Option<GoTime>,
    completed_at: Option<GoTime>,
    phase: String,
}

impl HookExecution {
    const FIELDS: [&'static str; 3] = ["started_at", "completed_at", "phase"];

    fn unmarshal(&mut self, d: &mut Dec, v: &Value) {
        let Some(members) = helm_cleaned_members(d, v, "HookExecution", &Self::FIELDS[..2]) else { return };
        let mut tmp = HookExecution::default();
        for (key, val) in members {
            match field_index(&Self::FIELDS, key) {
                Some(0) => d.time(val, "hookExecutionJSON.started_at", &mut tmp.started_at),
                Some(1) => d.time(val, "hookExecutionJSON.completed_at", &mut tmp.completed_at),
                Some(2) => d.string(val, "hookExecutionJSON.phase", &mut tmp.phase),
                _ => {}
            }
        }
        if tmp.started_at.is_some() {
            self.started_at = tmp.started_at;
        }
        if tmp.completed_at.is_some() {
            self.completed_at = tmp.completed_at;
        }
        self.phase = tmp.phase;
    }

    fn encode(&self, out: &mut String) {
        let mut o = Obj::new(out);
        for (key, t) in [("started_at", &self.started_at), ("completed_at", &self.completed_at)] {
            if let Some(t) = t.filter(|t| !t.is_zero()) {
                encode_string(o.key(key), &t.rfc3339_nano());
            }
        }
        o.string("phase", &self.phase, false);
        o.end();
    }
}

/// helm `release/v1.Hook`.
#[derive(Default, Clone)]
struct Hook {
    name: String,
    kind: String,
    path: String,
    manifest: String,
    events: Vec<String>,
    last_run: HookExecution,
    weight: i64,
    delete_policies: Vec<String>,
    output_log_policies: Vec<String>,
}

impl Hook {
    const FIELDS: [&'static str; 9] =
        ["name", "kind", "path", "manifest", "events", "last_run", "weight", "delete_policies", "output_log_policies"];

    fn decode(d: &mut Dec, obj: &Map<String, Value>) -> Hook {
        let mut h = Hook::default();
        for (key, v) in obj {
            match field_index(&Self::FIELDS, key) {
                Some(0) => d.string(v, "Hook.name", &mut h.name),
                Some(1) => d.string(v, "Hook.kind", &mut h.kind),
                Some(2) => d.string(v, "Hook.path", &mut h.path),
                Some(3) => d.string(v, "Hook.manifest", &mut h.manifest),
                Some(4) => d.strings(v, "Hook.events", &mut h.events),
                Some(5) => h.last_run.unmarshal(d, v),
                Some(6) => d.int(v, "Hook.weight", &mut h.weight),
                Some(7) => d.strings(v, "Hook.delete_policies", &mut h.delete_policies),
                Some(8) => d.strings(v, "Hook.output_log_policies", &mut h.output_log_policies),
                _ => {}
            }
        }
        h
    }

    /// helm-controller's `IsHookForEvent(h, HookTest)`.
    fn is_test(&self) -> bool {
        self.events.iter().any(|e| e == "test")
    }

    fn encode(&self, out: &mut String) {
        let mut o = Obj::new(out);
        o.string("name", &self.name, true);
        o.string("kind", &self.kind, true);
        o.string("path", &self.path, true);
        o.string("manifest", &self.manifest, true);
        o.strings("events", &self.events);
        self.last_run.encode(o.key("last_run"));
        if self.weight != 0 {
            let _ = write!(o.key("weight"), "{}", self.weight);
        }
        o.strings("delete_policies", &self.delete_policies);
        o.strings("output_log_policies", &self.output_log_policies);
        o.end();
    }
}

/// helm `chart/v2.Maintainer`.
#[derive(Default, Clone)]
struct Maintainer {
    name: String,
    email: String,
    url: String,
}

/// helm `chart/v2.Dependency`.
#[derive(Default, Clone)]
struct Dependency {
    name: String,
    version: String,
    repository: String,
    condition: String,
    tags: Vec<String>,
    enabled: bool,
    import_values: Vec<Value>,
    alias: String,
}

/// helm `chart/v2.Metadata`.
#[derive(Default, Clone)]
struct Metadata {
    name: String,
    home: String,
    sources: Vec<String>,
    version: String,
    description: String,
    keywords: Vec<String>,
    maintainers: Vec<Option<Maintainer>>,
    icon: String,
    api_version: String,
    condition: String,
    tags: String,
    app_version: String,
    deprecated: bool,
    annotations: Option<BTreeMap<String, String>>,
    kube_version: String,
    dependencies: Vec<Option<Dependency>>,
    type_: String,
}

impl Metadata {
    const FIELDS: [&'static str; 17] = [
        "name",
        "home",
        "sources",
        "version",
        "description",
        "keywords",
        "maintainers",
        "icon",
        "apiVersion",
        "condition",
        "tags",
        "appVersion",
        "deprecated",
        "annotations",
        "kubeVersion",
        "dependencies",
        "type",
    ];

    fn unmarshal(&mut self, d: &mut Dec, obj: &Map<String, Value>) {
        for (key, v) in obj {
            let f = |n: &str| format!("Metadata.{n}");
            match field_index(&Self::FIELDS, key) {
                Some(0) => d.string(v, &f("name"), &mut self.name),
                Some(1) => d.string(v, &f("home"), &mut self.home),
                Some(2) => d.strings(v, &f("sources"), &mut self.sources),
                Some(3) => d.string(v, &f("version"), &mut self.version),
                Some(4) => d.string(v, &f("description"), &mut self.description),
                Some(5) => d.strings(v, &f("keywords"), &mut self.keywords),
                Some(6) => {
                    self.maintainers = decode_ptr_slice(d, v, "Metadata.maintainers", "[]*chart.Maintainer", |d, o| {
                        let mut m = Maintainer::default();
                        for (key, v) in o {
                            match field_index(&["name", "email", "url"], key) {
                                Some(0) => d.string(v, "Maintainer.name", &mut m.name),
                                Some(1) => d.string(v, "Maintainer.email", &mut m.email),
                                Some(2) => d.string(v, "Maintainer.url", &mut m.url),
                                _ => {}
                            }
                        }
                        m
                    })
                }
                Some(7) => d.string(v, &f("icon"), &mut self.icon),
                Some(8) => d.string(v, &f("apiVersion"), &mut self.api_version),
                Some(9) => d.string(v, &f("condition"), &mut self.condition),
                Some(10) => d.string(v, &f("tags"), &mut self.tags),
                Some(11) => d.string(v, &f("appVersion"), &mut self.app_version),
                Some(12) => d.boolean(v, &f("deprecated"), &mut self.deprecated),
                Some(13) => d.string_map(v, &f("annotations"), &mut self.annotations),
                Some(14) => d.string(v, &f("kubeVersion"), &mut self.kube_version),
                Some(15) => {
                    self.dependencies =
                        decode_ptr_slice(d, v, "Metadata.dependencies", "[]*chart.Dependency", decode_dependency)
                }
                Some(16) => d.string(v, &f("type"), &mut self.type_),
                _ => {}
            }
        }
    }

    fn encode(&self, out: &mut String) {
        let mut o = Obj::new(out);
        o.string("name", &self.name, true);
        o.string("home", &self.home, true);
        o.strings("sources", &self.sources);
        o.string("version", &self.version, true);
        o.string("description", &self.description, true);
        o.strings("keywords", &self.keywords);
        if !self.maintainers.is_empty() {
            let out = o.key("maintainers");
            encode_list(out, &self.maintainers, |out, m| match m {
                None => out.push_str("null"),
                Some(m) => {
                    let mut o = Obj::new(out);
                    o.string("name", &m.name, true);
                    o.string("email", &m.email, true);
                    o.string("url", &m.url, true);
                    o.end();
                }
            });
        }
        o.string("icon", &self.icon, true);
        o.string("apiVersion", &self.api_version, true);
        o.string("condition", &self.condition, true);
        o.string("tags", &self.tags, true);
        o.string("appVersion", &self.app_version, true);
        if self.deprecated {
            o.key("deprecated").push_str("true");
        }
        if let Some(a) = self.annotations.as_ref().filter(|a| !a.is_empty()) {
            encode_string_map(o.key("annotations"), a);
        }
        o.string("kubeVersion", &self.kube_version, true);
        if !self.dependencies.is_empty() {
            let out = o.key("dependencies");
            encode_list(out, &self.dependencies, |out, dep| match dep {
                None => out.push_str("null"),
                Some(dep) => {
                    let mut o = Obj::new(out);
                    o.string("name", &dep.name, false);
                    o.string("version", &dep.version, true);
                    o.string("repository", &dep.repository, false);
                    o.string("condition", &dep.condition, true);
                    o.strings("tags", &dep.tags);
                    if dep.enabled {
                        o.key("enabled").push_str("true");
                    }
                    if !dep.import_values.is_empty() {
                        encode_list(o.key("import-values"), &dep.import_values, encode_any);
                    }
                    o.string("alias", &dep.alias, true);
                    o.end();
                }
            });
        }
        o.string("type", &self.type_, true);
        o.end();
    }
}

fn decode_dependency(d: &mut Dec, o: &Map<String, Value>) -> Dependency {
    const FIELDS: [&str; 8] =
        ["name", "version", "repository", "condition", "tags", "enabled", "import-values", "alias"];
    let mut dep = Dependency::default();
    for (key, v) in o {
        match field_index(&FIELDS, key) {
            Some(0) => d.string(v, "Dependency.name", &mut dep.name),
            Some(1) => d.string(v, "Dependency.version", &mut dep.version),
            Some(2) => d.string(v, "Dependency.repository", &mut dep.repository),
            Some(3) => d.string(v, "Dependency.condition", &mut dep.condition),
            Some(4) => d.strings(v, "Dependency.tags", &mut dep.tags),
            Some(5) => d.boolean(v, "Dependency.enabled", &mut dep.enabled),
            Some(6) => match v {
                Value::Null => dep.import_values.clear(),
                Value::Array(items) => dep.import_values = items.clone(),
                other => d.type_error(other, "Dependency.import-values", "[]interface {}"),
            },
            Some(7) => d.string(v, "Dependency.alias", &mut dep.alias),
            _ => {}
        }
    }
    dep
}

/// helm-controller's `release.Observation`, with the hooks before the test-hook filter.
#[derive(Default)]
struct Observation {
    name: String,
    version: i64,
    info: Option<Info>,
    chart_metadata: Option<Metadata>,
    config: Option<Map<String, Value>>,
    manifest: String,
    all_hooks: Option<Vec<Option<Hook>>>,
    namespace: String,
}

impl Observation {
    const RELEASE_FIELDS: [&'static str; 9] =
        ["name", "info", "chart", "config", "manifest", "hooks", "version", "namespace", "apply_method"];

    /// `json.Unmarshal` into helm `release/v1.Release` (only what the observation reads is kept; the rest of
    /// the chart — templates, files, values, schema, lock — is assumed decodable, as Helm wrote it).
    fn decode(release: &Value) -> (Observation, Option<String>) {
        let mut d = Dec::default();
        let mut obs = Observation::default();
        let Some(obj) = d.object(release, "Release", "release.Release") else {
            if release.is_null() {
                d.fail(|| "the release is null".into());
            }
            return (obs, d.err);
        };
        for (key, v) in obj {
            match field_index(&Self::RELEASE_FIELDS, key) {
                Some(0) => d.string(v, "Release.name", &mut obs.name),
                Some(1) => match v {
                    Value::Null => obs.info = None,
                    v => obs.info.get_or_insert_with(Info::default).unmarshal(&mut d, v),
                },
                Some(2) => match v {
                    Value::Null => obs.chart_metadata = None,
                    v => {
                        if let Some(chart) = d.object(v, "Release.chart", "chart.Chart") {
                            for (key, v) in chart {
                                if field_index(&["metadata"], key).is_some() {
                                    match v {
                                        Value::Null => obs.chart_metadata = None,
                                        v => {
                                            if let Some(m) = d.object(v, "Chart.metadata", "chart.Metadata") {
                                                obs.chart_metadata
                                                    .get_or_insert_with(Metadata::default)
                                                    .unmarshal(&mut d, m);
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                },
                Some(3) => match v {
                    Value::Null => obs.config = None,
                    Value::Object(o) => {
                        let cfg = obs.config.get_or_insert_with(Map::new);
                        for (k, v) in o {
                            cfg.insert(k.clone(), v.clone());
                        }
                    }
                    other => d.type_error(other, "Release.config", "map[string]interface {}"),
                },
                Some(4) => d.string(v, "Release.manifest", &mut obs.manifest),
                Some(5) => {
                    obs.all_hooks = match v {
                        Value::Null => None,
                        v => Some(decode_ptr_slice(&mut d, v, "Release.hooks", "[]*release.Hook", Hook::decode)),
                    }
                }
                Some(6) => d.int(v, "Release.version", &mut obs.version),
                Some(7) => d.string(v, "Release.namespace", &mut obs.namespace),
                Some(8) => {
                    let mut apply_method = String::new();
                    d.string(v, "Release.apply_method", &mut apply_method);
                }
                _ => {}
            }
        }
        if obs.all_hooks.iter().flatten().any(Option::is_none) {
            d.fail(|| "a hook is null (helm-controller's ObserveRelease dereferences it and panics)".into());
        }
        (obs, d.err)
    }

    /// `Observation.Encode` after `ObserveRelease` with the default filter (`IgnoreHookTestEvents`).
    fn encode(&self, oci_digest: &str) -> String {
        let mut out = String::with_capacity(4096 + self.manifest.len());
        let mut o = Obj::new(&mut out);
        o.string("name", &self.name, false);
        let _ = write!(o.key("version"), "{}", self.version);
        self.info.clone().unwrap_or_default().encode(o.key("info"));
        self.chart_metadata.clone().unwrap_or_default().encode(o.key("chartMetadata"));
        match self.config.as_ref().filter(|c| !c.is_empty()) {
            Some(cfg) => encode_map(o.key("config"), cfg),
            None => o.key("config").push_str("null"),
        }
        o.string("manifest", &self.manifest, false);
        let kept: Vec<&Hook> = self.all_hooks.iter().flatten().flatten().filter(|h| !h.is_test()).collect();
        if kept.is_empty() {
            o.key("hooks").push_str("null");
        } else {
            encode_list(o.key("hooks"), &kept, |out, h| h.encode(out));
        }
        o.string("namespace", &self.namespace, false);
        o.string("ociDigest", oci_digest, true);
        o.end();
        out.push('\n');
        out
    }
}

// ---------------------------------------------------------------------------------------------------------
// HelmRelease spec fields: []v2.PostRenderer and *v2.CommonMetadata (decoded case-sensitively by the
// Kubernetes client, then re-encoded by json.Encoder)
// ---------------------------------------------------------------------------------------------------------

fn member<'v>(obj: &'v Map<String, Value>, key: &str) -> Option<&'v Value> {
    obj.get(key).filter(|v| !v.is_null())
}

fn encode_post_renderers(out: &mut String, items: &[Value]) {
    encode_list(out, items, |out, pr| {
        let mut o = Obj::new(out);
        if let Some(Value::Object(k)) = pr.as_object().and_then(|pr| member(pr, "kustomize")) {
            let mut ko = Obj::new(o.key("kustomize"));
            if let Some(Value::Array(patches)) =
                member(k, "patches").filter(|p| p.as_array().is_some_and(|a| !a.is_empty()))
            {
                encode_list(ko.key("patches"), patches, |out, p| {
                    let empty = Map::new();
                    let p = p.as_object().unwrap_or(&empty);
                    let mut po = Obj::new(out);
                    po.string("patch", member(p, "patch").and_then(Value::as_str).unwrap_or(""), false);
                    if let Some(Value::Object(t)) = member(p, "target") {
                        let mut to = Obj::new(po.key("target"));
                        for key in
                            ["group", "version", "kind", "namespace", "name", "annotationSelector", "labelSelector"]
                        {
                            to.string(key, member(t, key).and_then(Value::as_str).unwrap_or(""), true);
                        }
                        to.end();
                    }
                    po.end();
                });
            }
            if let Some(Value::Array(images)) =
                member(k, "images").filter(|i| i.as_array().is_some_and(|a| !a.is_empty()))
            {
                encode_list(ko.key("images"), images, |out, img| {
                    let empty = Map::new();
                    let img = img.as_object().unwrap_or(&empty);
                    let mut io = Obj::new(out);
                    let s = |k: &str| member(img, k).and_then(Value::as_str).unwrap_or("");
                    io.string("name", s("name"), false);
                    io.string("newName", s("newName"), true);
                    io.string("newTag", s("newTag"), true);
                    io.string("digest", s("digest"), true);
                    io.end();
                });
            }
            ko.end();
        }
        o.end();
    });
}

fn encode_common_metadata(out: &mut String, cm: &Map<String, Value>) {
    let mut o = Obj::new(out);
    for key in ["annotations", "labels"] {
        if let Some(Value::Object(m)) = member(cm, key) {
            let map: BTreeMap<String, String> =
                m.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string())).collect();
            if !map.is_empty() {
                encode_string_map(o.key(key), &map);
            }
        }
    }
    o.end();
}

#[cfg(test)]
mod tests {
    //! Expected values come from throw-away Go programs (kept out of the repository) that run helm-controller
    //! v1.6.2's own `internal/release` (ObserveRelease, Digest, ObservedToSnapshot, TestHooksFromRelease) and
    //! `internal/postrender` (Digest, CommonMetadataDigest) over Helm v4.2.2's `json.Unmarshal` of the same
    //! fixtures. The `helm*` fixtures are real `helm install --dry-run=client -o json` output of Helm 3.22.0 and
    //! Helm 4.3.1 (same shape as the storage Secret), edited to the state a finished install/upgrade stores.
    use super::*;

    fn parse(text: &str) -> Value {
        serde_json::from_str(text).expect("fixture is JSON")
    }

    const HELM3_INSTALLED: &str = r##"{"name":"demo","info":{"first_deployed":"2026-11-29T19:56:24.2598067+02:00","last_deployed":"2026-11-29T19:56:24.2598067+02:00","deleted":"","description":"Install complete","status":"deployed","notes":"Thanks for installing demo-chart <3 & enjoy.\n"},"chart":{"metadata":{"name":"demo-chart","home":"https://example.com/?a=1&b=2","version":"1.2.3+build.7","description":"A chart with <html> & \"quotes\" — ünïcödé ✓","keywords":["demo","a&b"],"maintainers":[{"name":"Jane <Doe>","email":"jane@example.com"}],"apiVersion":"v2","appVersion":"v2.0 <beta>","annotations":{"a-first":"2","category":"Test & Demo","z-last":"1"},"kubeVersion":">=1.20.0-0"},"lock":null,"templates":[{"name":"templates/cm.yaml","data":"YXBpVmVyc2lvbjogdjEKa2luZDogQ29uZmlnTWFwCm1ldGFkYXRhOgogIG5hbWU6IHt7IC5SZWxlYXNlLk5hbWUgfX0tY20KZGF0YToKICBuYW1lOiB7eyAuVmFsdWVzLm5hbWUgfCBxdW90ZSB9fQogIHJhdGlvOiB7eyAuVmFsdWVzLnJhdGlvIHwgcXVvdGUgfX0K"}],"values":{"name":"default","ratio":0.1,"replicas":1},"schema":null,"files":null},"config":{"below21":123456789012345680000,"big":12345678901234567000,"bigint":9007199254740992,"ctrl":"bell\u0007 back\b form\f cr\r del nul\u0000 esc\u001b","e21":1e+21,"huge":1.5e+300,"multi":"line one\nline \"two\"\ttab \\ backslash\n","name":"<b>bold</b> & co","neg":-42,"negzero":0,"nested":{"Aa":2,"a b":3,"empty":{},"emptyList":[],"list":["a",1,2.25,{"":"empty","M":"x","a":[true,false,null],"z":1}],"nil":null,"zz":1},"ratio":0.5,"replicas":3,"small":1e-06,"third":0.3333333333333333,"tiny":1e-07,"uni":"日本語 ✓   sep   para 😀"},"manifest":"---\n# Source: demo-chart/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo-cm\ndata:\n  name: \"<b>bold</b> & co\"\n  ratio: \"0.5\"\n","hooks":[{"name":"demo-pre","kind":"ConfigMap","path":"demo-chart/templates/pre.yaml","manifest":"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo-pre\n  annotations:\n    \"helm.sh/hook\": pre-install,pre-upgrade\n    \"helm.sh/hook-weight\": \"-5\"\ndata: {a: \"<&>\"}","events":["pre-install","pre-upgrade"],"last_run":{"started_at":"2026-11-29T19:56:23.1+02:00","completed_at":"2026-11-29T19:56:24.000000001+02:00","phase":"Succeeded"},"weight":-5},{"name":"demo-test","kind":"Pod","path":"demo-chart/templates/test.yaml","manifest":"apiVersion: v1\nkind: Pod\nmetadata:\n  name: demo-test\n  annotations:\n    \"helm.sh/hook\": test\n    \"helm.sh/hook-delete-policy\": before-hook-creation,hook-succeeded\nspec:\n  containers: [{name: t, image: busybox, command: [\"true\"]}]\n  restartPolicy: Never","events":["test"],"last_run":{"started_at":"","completed_at":"","phase":""},"delete_policies":["before-hook-creation","hook-succeeded"]}],"version":1,"namespace":"scratch"}"##;
    const HELM4_UPGRADED: &str = r##"{"name":"demo","info":{"first_deployed":"2026-11-29T17:50:00.5Z","last_deployed":"2026-11-29T17:56:24.586696375Z","description":"Upgrade complete","status":"deployed","notes":"Thanks for installing demo-chart <3 & enjoy.\n"},"chart":{"metadata":{"name":"demo-chart","home":"https://example.com/?a=1&b=2","version":"1.2.3+build.7","description":"A chart with <html> & \"quotes\" — ünïcödé ✓","keywords":["demo","a&b"],"maintainers":[{"name":"Jane <Doe>","email":"jane@example.com"}],"apiVersion":"v2","appVersion":"v2.0 <beta>","annotations":{"a-first":"2","category":"Test & Demo","z-last":"1"},"kubeVersion":">=1.20.0-0"},"lock":null,"templates":[{"name":"templates/cm.yaml","data":"YXBpVmVyc2lvbjogdjEKa2luZDogQ29uZmlnTWFwCm1ldGFkYXRhOgogIG5hbWU6IHt7IC5SZWxlYXNlLk5hbWUgfX0tY20KZGF0YToKICBuYW1lOiB7eyAuVmFsdWVzLm5hbWUgfCBxdW90ZSB9fQogIHJhdGlvOiB7eyAuVmFsdWVzLnJhdGlvIHwgcXVvdGUgfX0K","modtime":"2026-11-29T17:55:49.723844615Z"}],"values":{"name":"default","ratio":0.1,"replicas":1},"schema":null,"schemamodtime":"0001-01-01T00:00:00Z","files":null,"modtime":"2026-11-29T17:55:49.664253455Z"},"config":{"below21":123456789012345680000,"big":12345678901234567000,"bigint":9007199254740992,"ctrl":"bell\u0007 back\b form\f cr\r del nul\u0000 esc\u001b","e21":1e+21,"huge":1.5e+300,"multi":"line one\nline \"two\"\ttab \\ backslash\n","name":"<b>bold</b> & co","neg":-42,"negzero":0,"nested":{"Aa":2,"a b":3,"empty":{},"emptyList":[],"list":["a",1,2.25,{"":"empty","M":"x","a":[true,false,null],"z":1}],"nil":null,"zz":1},"ratio":0.5,"replicas":3,"small":1e-06,"third":0.3333333333333333,"tiny":1e-07,"uni":"日本語 ✓   sep   para 😀"},"manifest":"---\n# Source: demo-chart/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo-cm\ndata:\n  name: \"<b>bold</b> & co\"\n  ratio: \"0.5\"\n\n","hooks":[{"name":"demo-pre","kind":"ConfigMap","path":"demo-chart/templates/pre.yaml","manifest":"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo-pre\n  annotations:\n    \"helm.sh/hook\": pre-install,pre-upgrade\n    \"helm.sh/hook-weight\": \"-5\"\ndata: {a: \"<&>\"}\n","events":["pre-install","pre-upgrade"],"last_run":{"started_at":"2026-11-29T17:56:24.1Z","completed_at":"2026-11-29T17:56:24.2Z","phase":"Succeeded"},"weight":-5},{"name":"demo-test","kind":"Pod","path":"demo-chart/templates/test.yaml","manifest":"apiVersion: v1\nkind: Pod\nmetadata:\n  name: demo-test\n  annotations:\n    \"helm.sh/hook\": test\n    \"helm.sh/hook-delete-policy\": before-hook-creation,hook-succeeded\nspec:\n  containers: [{name: t, image: busybox, command: [\"true\"]}]\n  restartPolicy: Never\n","events":["test"],"last_run":{"started_at":"2026-11-29T17:57:00.999999999Z","completed_at":"2026-11-29T17:57:05Z","phase":"Succeeded"},"delete_policies":["before-hook-creation","hook-succeeded"]}],"version":2,"namespace":"scratch","apply_method":"ssa"}"##;
    const HELM3_DRYRUN_NO_VALUES: &str = r##"{"name":"demo","info":{"first_deployed":"2026-11-29T17:56:24.89482679Z","last_deployed":"2026-11-29T17:56:24.89482679Z","deleted":"","description":"Dry run complete","status":"pending-install","notes":"Thanks for installing demo-chart <3 & enjoy.\n"},"chart":{"metadata":{"name":"demo-chart","home":"https://example.com/?a=1&b=2","version":"1.2.3+build.7","description":"A chart with <html> & \"quotes\" — ünïcödé ✓","keywords":["demo","a&b"],"maintainers":[{"name":"Jane <Doe>","email":"jane@example.com"}],"apiVersion":"v2","appVersion":"v2.0 <beta>","annotations":{"a-first":"2","category":"Test & Demo","z-last":"1"},"kubeVersion":">=1.20.0-0"},"lock":null,"templates":[{"name":"templates/cm.yaml","data":"YXBpVmVyc2lvbjogdjEKa2luZDogQ29uZmlnTWFwCm1ldGFkYXRhOgogIG5hbWU6IHt7IC5SZWxlYXNlLk5hbWUgfX0tY20KZGF0YToKICBuYW1lOiB7eyAuVmFsdWVzLm5hbWUgfCBxdW90ZSB9fQogIHJhdGlvOiB7eyAuVmFsdWVzLnJhdGlvIHwgcXVvdGUgfX0K"}],"values":{"name":"default","ratio":0.1,"replicas":1},"schema":null,"files":null},"manifest":"---\n# Source: demo-chart/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo-cm\ndata:\n  name: \"default\"\n  ratio: \"0.1\"\n","hooks":[{"name":"demo-pre","kind":"ConfigMap","path":"demo-chart/templates/pre.yaml","manifest":"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo-pre\n  annotations:\n    \"helm.sh/hook\": pre-install,pre-upgrade\n    \"helm.sh/hook-weight\": \"-5\"\ndata: {a: \"<&>\"}","events":["pre-install","pre-upgrade"],"last_run":{"started_at":"","completed_at":"","phase":""},"weight":-5},{"name":"demo-test","kind":"Pod","path":"demo-chart/templates/test.yaml","manifest":"apiVersion: v1\nkind: Pod\nmetadata:\n  name: demo-test\n  annotations:\n    \"helm.sh/hook\": test\n    \"helm.sh/hook-delete-policy\": before-hook-creation,hook-succeeded\nspec:\n  containers: [{name: t, image: busybox, command: [\"true\"]}]\n  restartPolicy: Never","events":["test"],"last_run":{"started_at":"","completed_at":"","phase":""},"delete_policies":["before-hook-creation","hook-succeeded"]}],"version":1,"namespace":"scratch"}"##;
    const HELM4_EMPTY_CONFIG: &str = r##"{"name":"demo","info":{"first_deployed":"2026-11-29T17:56:25.062849953Z","last_deployed":"2026-11-29T17:56:25.062849953Z","description":"Dry run complete","status":"pending-install","notes":"Thanks for installing demo-chart <3 & enjoy.\n"},"chart":{"metadata":{"name":"demo-chart","home":"https://example.com/?a=1&b=2","version":"1.2.3+build.7","description":"A chart with <html> & \"quotes\" — ünïcödé ✓","keywords":["demo","a&b"],"maintainers":[{"name":"Jane <Doe>","email":"jane@example.com"}],"apiVersion":"v2","appVersion":"v2.0 <beta>","annotations":{"a-first":"2","category":"Test & Demo","z-last":"1"},"kubeVersion":">=1.20.0-0"},"lock":null,"templates":[{"name":"templates/cm.yaml","data":"YXBpVmVyc2lvbjogdjEKa2luZDogQ29uZmlnTWFwCm1ldGFkYXRhOgogIG5hbWU6IHt7IC5SZWxlYXNlLk5hbWUgfX0tY20KZGF0YToKICBuYW1lOiB7eyAuVmFsdWVzLm5hbWUgfCBxdW90ZSB9fQogIHJhdGlvOiB7eyAuVmFsdWVzLnJhdGlvIHwgcXVvdGUgfX0K","modtime":"2026-11-29T17:55:49.723844615Z"}],"values":{"name":"default","ratio":0.1,"replicas":1},"schema":null,"schemamodtime":"0001-01-01T00:00:00Z","files":null,"modtime":"2026-11-29T17:55:49.664253455Z"},"manifest":"---\n# Source: demo-chart/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo-cm\ndata:\n  name: \"default\"\n  ratio: \"0.1\"\n\n","hooks":[{"name":"demo-pre","kind":"ConfigMap","path":"demo-chart/templates/pre.yaml","manifest":"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo-pre\n  annotations:\n    \"helm.sh/hook\": pre-install,pre-upgrade\n    \"helm.sh/hook-weight\": \"-5\"\ndata: {a: \"<&>\"}\n","events":["pre-install","pre-upgrade"],"last_run":{"phase":""},"weight":-5},{"name":"demo-test","kind":"Pod","path":"demo-chart/templates/test.yaml","manifest":"apiVersion: v1\nkind: Pod\nmetadata:\n  name: demo-test\n  annotations:\n    \"helm.sh/hook\": test\n    \"helm.sh/hook-delete-policy\": before-hook-creation,hook-succeeded\nspec:\n  containers: [{name: t, image: busybox, command: [\"true\"]}]\n  restartPolicy: Never\n","events":["test"],"last_run":{"phase":""},"delete_policies":["before-hook-creation","hook-succeeded"]}],"version":1,"namespace":"scratch","apply_method":"ssa","config":{}}"##;
    const EDGE_SHAPES: &str = r##"{"name":"edge","NAMESPACE":"edge-ns","version":7,"apply_method":"csa","labels":{"x":"y"},"unknown":[1,2],"info":{"first_deployed":"2024-02-29T23:59:59.1234567891234-05:30","last_deployed":"2024-03-01T05:29:59+00:00","deleted":"0001-01-01T00:00:00Z","description":" <x>","status":"superseded","notes":"","resources":{"v1/Service":null,"v1/Pod":[],"x":[null,null]},"extra":5},"chart":{"metadata":{"name":"edge-chart","version":"0.0.1","sources":["https://a",null],"keywords":["k",null],"maintainers":[null,{},{"name":"m","url":"https://m?x=1&y=2"}],"annotations":{"b":null,"a":"x"},"deprecated":true,"type":"application","icon":"i","condition":"c","tags":"t","Home":"h","dependencies":[{"name":"dep","repository":"","enabled":true,"tags":["t"],"import-values":[1,2.5,1e-07,{"child":"a","parent":"b"},"s",null]},null,{}],"unknownMeta":1},"lock":null,"templates":[],"values":null,"schema":null,"files":[]},"config":{"only":{},"n":100,"f":-1.25e-10,"list":[[],{},[null]]},"manifest":"","hooks":[{"name":"t1","events":["test"],"last_run":{"phase":""}},{"name":"t2","events":["post-install","test"],"last_run":null}]}"##;
    const BARE: &str = r##"{"name":"bare","version":1,"info":null,"chart":null,"hooks":[{"name":"h","events":["post-upgrade"],"weight":0,"last_run":null,"delete_policies":["hook-succeeded"],"output_log_policies":["hook-failed"]}]}"##;
    const FOLDED: &str = r##"{"name":"fold","NaMe":"fold2","Info":{"Status":"a","status":"b","NOTES":"n","Deleted":null,"Description":"\u212aelvin"},"chart":{"METADATA":{"appversion":"1","KubeVersion":"k","ſources":["s"]}},"version":-0,"hooks":[{"name":"h","LAST_RUN":{"Phase":"p","STARTED_AT":"2020-01-01T00:00:00+01:00"}}]}"##;
    const STRINGS: &str = r##"{"name":"strings","namespace":"ns","version":3,"config":{"ctrl":"bell\u0007 back\b form\f cr\r tab\t nl\n del\u007f nul\u0000 esc\u001b us\u001f","html":"<script>&amp;</script>","quote":"\"q\" \\ /","seps":"\u2028\u2029","astral":"\ud83d\ude00 é 日本","keys":{"<k>":1,"&":2,"é":3,"Z":4,"a":5,"":6}},"manifest":"kind: ConfigMap\n# <&>\n"}"##;

    /// (fixture, helm-controller digest without and with `ociDigest: sha256:0123abc`).
    const RELEASE_DIGESTS: &[(&str, &str, &str)] = &[
        (
            HELM3_INSTALLED,
            "sha256:83513fb06e4c3c9785d5b708c02e0acae894bc02119f5f9cca7b624c3720c3df",
            "sha256:1e5573fb7d50bda8802a4f9788453e40246c4504e7746ca959baec084cfa0f7c",
        ),
        (
            HELM4_UPGRADED,
            "sha256:10b7807d83e72cb88ef56c2abf8fa28857496b0cad868eb13535870aa83c134a",
            "sha256:e1603c2f20d2ec2ec0dfd8f9404deafa11f3b7960ff8005f58d424b7f97a028d",
        ),
        (
            HELM3_DRYRUN_NO_VALUES,
            "sha256:548cc75757a6428fcb29ecb8c9f67f7e7b40e98078e98600af3e00587483efd9",
            "sha256:b25346598f7b253560504f8d16799dd01d4b38cc1e7052101390dc77de37e8da",
        ),
        (
            HELM4_EMPTY_CONFIG,
            "sha256:bb684cfbf93ab8a9237b1ec2bd530bd59d06d093b50a61897b37ef3b57bfddb8",
            "sha256:66177662baabe2b82eaf4969f7265db47129b635dd3ca1788cc52cf18be44d5f",
        ),
        (
            EDGE_SHAPES,
            "sha256:670e51a18fae840528e2039807060661cd8320413b820a83a69c7735bfe2e1a5",
            "sha256:b74624b159daef5d5b6ef911cb5714e0c8c84b52ff390301903285aa317c7790",
        ),
        (
            BARE,
            "sha256:e3dd24981a02ecc3ce2ed7036d0e3309da364146e55c5e1d87eb238315ddae14",
            "sha256:3a814abc497e06836efe281bac413a6fbeaa1afa8d9bebc7d0cfb289d9764078",
        ),
        (
            FOLDED,
            "sha256:c9b3705b5ac5b665b43a7fdbfce0127f66eadc163fcc77bcfc458956a3315239",
            "sha256:d94d9ac0244afeb84c92367dd30a4cc13ecfd0eddefae7837ce47deb89ea7cfe",
        ),
        (
            STRINGS,
            "sha256:0c983b505bd7dfa60f7a204b0c0b54819a997d348fbe5eda1ce28c4d55512ccb",
            "sha256:de751b9dcb12b659d30f5941027472b14081bec159fd4d94493c823a10676fb5",
        ),
    ];

    /// Releases Helm v4.2.2 refuses to decode (or that make ObserveRelease panic), with Go's message.
    const UNDECODABLE: &[(&str, &str)] = &[
        (
            r##"{"name":"x","info":{"deleted":"yesterday"}}"##,
            "Go: parsing time \"yesterday\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"yesterday\" as \"2006\"",
        ),
        (
            r##"{"name":"x","config":[1]}"##,
            "Go: json: cannot unmarshal array into Go struct field Release.config of type map[string]interface {}",
        ),
        (
            r##"{"name":"x","info":"deployed"}"##,
            "Go: json: cannot unmarshal string into Go struct field Release.info of type map[string]interface {}",
        ),
        (r##"{"name":1}"##, "Go: json: cannot unmarshal number into Go struct field Release.name of type string"),
        (
            r##"{"name":"x","hooks":[null]}"##,
            "Go: panic: runtime error: invalid memory address or nil pointer dereference",
        ),
        (
            r##"{"name":"x","info":{"resources":{"v1/Pod":[{"kind":"Pod"}]}}}"##,
            "Go: json: cannot unmarshal object into Go struct field Release.info.resources of type runtime.Object",
        ),
        (r##"{"name":"x","info":{"first_deployed":5}}"##, "Go: Time.UnmarshalJSON: input is not a JSON string"),
        (
            r##"{"name":"x","version":1.5}"##,
            "Go: json: cannot unmarshal number 1.5 into Go struct field Release.version of type int",
        ),
        (
            r##"{"name":"x","version":"1"}"##,
            "Go: json: cannot unmarshal string into Go struct field Release.version of type int",
        ),
        (
            r##"{"name":"x","hooks":[{"name":"h","weight":2.0}]}"##,
            "Go: json: cannot unmarshal number 2.0 into Go struct field Hook.hooks.weight of type int",
        ),
    ];

    /// Go's exact `Observation.Encode` output.
    const OBSERVATION_BYTES: &[(&str, &str)] = &[
        (
            EDGE_SHAPES,
            r##"{"name":"edge","version":7,"info":{"first_deployed":"2024-02-29T23:59:59.123456789-05:30","last_deployed":"2024-03-01T05:29:59Z","description":"\u2028\u003cx\u003e","status":"superseded","resources":{"v1/Pod":[],"v1/Service":null,"x":[null,null]}},"chartMetadata":{"name":"edge-chart","home":"h","sources":["https://a",""],"version":"0.0.1","keywords":["k",""],"maintainers":[null,{},{"name":"m","url":"https://m?x=1\u0026y=2"}],"icon":"i","condition":"c","tags":"t","deprecated":true,"annotations":{"a":"x","b":""},"dependencies":[{"name":"dep","repository":"","tags":["t"],"enabled":true,"import-values":[1,2.5,1e-7,{"child":"a","parent":"b"},"s",null]},null,{"name":"","repository":""}],"type":"application"},"config":{"f":-1.25e-10,"list":[[],{},[null]],"n":100,"only":{}},"manifest":"","hooks":null,"namespace":"edge-ns"}
"##,
        ),
        (
            BARE,
            r##"{"name":"bare","version":1,"info":{},"chartMetadata":{},"config":null,"manifest":"","hooks":[{"name":"h","events":["post-upgrade"],"last_run":{"phase":""},"delete_policies":["hook-succeeded"],"output_log_policies":["hook-failed"]}],"namespace":""}
"##,
        ),
        (
            STRINGS,
            r##"{"name":"strings","version":3,"info":{},"chartMetadata":{},"config":{"astral":"😀 é 日本","ctrl":"bell\u0007 back\b form\f cr\r tab\t nl\n del nul\u0000 esc\u001b us\u001f","html":"\u003cscript\u003e\u0026amp;\u003c/script\u003e","keys":{"":6,"\u0026":2,"\u003ck\u003e":1,"Z":4,"a":5,"é":3},"quote":"\"q\" \\ /","seps":"\u2028\u2029"},"manifest":"kind: ConfigMap\n# \u003c\u0026\u003e\n","hooks":null,"namespace":"ns"}
"##,
        ),
        (
            HELM3_INSTALLED,
            r##"{"name":"demo","version":1,"info":{"first_deployed":"2026-11-29T19:56:24.2598067+02:00","last_deployed":"2026-11-29T19:56:24.2598067+02:00","description":"Install complete","status":"deployed","notes":"Thanks for installing demo-chart \u003c3 \u0026 enjoy.\n"},"chartMetadata":{"name":"demo-chart","home":"https://example.com/?a=1\u0026b=2","version":"1.2.3+build.7","description":"A chart with \u003chtml\u003e \u0026 \"quotes\" — ünïcödé ✓","keywords":["demo","a\u0026b"],"maintainers":[{"name":"Jane \u003cDoe\u003e","email":"jane@example.com"}],"apiVersion":"v2","appVersion":"v2.0 \u003cbeta\u003e","annotations":{"a-first":"2","category":"Test \u0026 Demo","z-last":"1"},"kubeVersion":"\u003e=1.20.0-0"},"config":{"below21":123456789012345680000,"big":12345678901234567000,"bigint":9007199254740992,"ctrl":"bell\u0007 back\b form\f cr\r del nul\u0000 esc\u001b","e21":1e+21,"huge":1.5e+300,"multi":"line one\nline \"two\"\ttab \\ backslash\n","name":"\u003cb\u003ebold\u003c/b\u003e \u0026 co","neg":-42,"negzero":0,"nested":{"Aa":2,"a b":3,"empty":{},"emptyList":[],"list":["a",1,2.25,{"":"empty","M":"x","a":[true,false,null],"z":1}],"nil":null,"zz":1},"ratio":0.5,"replicas":3,"small":0.000001,"third":0.3333333333333333,"tiny":1e-7,"uni":"日本語 ✓ \u2028 sep \u2029 para 😀"},"manifest":"---\n# Source: demo-chart/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo-cm\ndata:\n  name: \"\u003cb\u003ebold\u003c/b\u003e \u0026 co\"\n  ratio: \"0.5\"\n","hooks":[{"name":"demo-pre","kind":"ConfigMap","path":"demo-chart/templates/pre.yaml","manifest":"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo-pre\n  annotations:\n    \"helm.sh/hook\": pre-install,pre-upgrade\n    \"helm.sh/hook-weight\": \"-5\"\ndata: {a: \"\u003c\u0026\u003e\"}","events":["pre-install","pre-upgrade"],"last_run":{"started_at":"2026-11-29T19:56:23.1+02:00","completed_at":"2026-11-29T19:56:24.000000001+02:00","phase":"Succeeded"},"weight":-5}],"namespace":"scratch"}
"##,
        ),
    ];

    /// `json.Marshal(ObservedToSnapshot(obs))` with Action "install" and OCIDigest "" (config digests are
    /// helm-controller's too).
    const SNAPSHOTS: &[(&str, &str)] = &[
        (
            HELM3_INSTALLED,
            r##"{"apiVersion":"v2","digest":"sha256:83513fb06e4c3c9785d5b708c02e0acae894bc02119f5f9cca7b624c3720c3df","name":"demo","namespace":"scratch","version":1,"status":"deployed","action":"install","chartName":"demo-chart","chartVersion":"1.2.3+build.7","appVersion":"v2.0 \u003cbeta\u003e","configDigest":"sha256:e09a88ae77df1131d61605dabf7f5b2ce613761a27f04e2b105a4d5cb40d4182","firstDeployed":"2026-11-29T17:56:24Z","lastDeployed":"2026-11-29T17:56:24Z","deleted":null}"##,
        ),
        (
            HELM4_UPGRADED,
            r##"{"apiVersion":"v2","digest":"sha256:10b7807d83e72cb88ef56c2abf8fa28857496b0cad868eb13535870aa83c134a","name":"demo","namespace":"scratch","version":2,"status":"deployed","action":"install","chartName":"demo-chart","chartVersion":"1.2.3+build.7","appVersion":"v2.0 \u003cbeta\u003e","configDigest":"sha256:e09a88ae77df1131d61605dabf7f5b2ce613761a27f04e2b105a4d5cb40d4182","firstDeployed":"2026-11-29T17:50:00Z","lastDeployed":"2026-11-29T17:56:24Z","deleted":null}"##,
        ),
        (
            EDGE_SHAPES,
            r##"{"apiVersion":"v2","digest":"sha256:670e51a18fae840528e2039807060661cd8320413b820a83a69c7735bfe2e1a5","name":"edge","namespace":"edge-ns","version":7,"status":"superseded","action":"install","chartName":"edge-chart","chartVersion":"0.0.1","configDigest":"sha256:25cccff94e0116c587e34fe377daa5ece37ff078eec80475c42d4da09d08f21a","firstDeployed":"2024-03-01T05:29:59Z","lastDeployed":"2024-03-01T05:29:59Z","deleted":null}"##,
        ),
        (
            BARE,
            r##"{"apiVersion":"v2","digest":"sha256:e3dd24981a02ecc3ce2ed7036d0e3309da364146e55c5e1d87eb238315ddae14","name":"bare","namespace":"","version":1,"status":"","action":"install","chartName":"","chartVersion":"","configDigest":"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","firstDeployed":null,"lastDeployed":null,"deleted":null}"##,
        ),
    ];

    /// `json.Marshal(TestHooksFromRelease(rls))`.
    const TEST_HOOKS: &[(&str, &str)] = &[
        (HELM3_INSTALLED, r##"{"demo-test":{"lastStarted":null,"lastCompleted":null}}"##),
        (
            HELM4_UPGRADED,
            r##"{"demo-test":{"lastStarted":"2026-11-29T17:57:00Z","lastCompleted":"2026-11-29T17:57:05Z","phase":"Succeeded"}}"##,
        ),
        (
            EDGE_SHAPES,
            r##"{"t1":{"lastStarted":null,"lastCompleted":null},"t2":{"lastStarted":null,"lastCompleted":null}}"##,
        ),
        (BARE, r##"{}"##),
    ];

    /// HelmRelease objects and helm-controller's observedPostRenderersDigest / observedCommonMetadataDigest.
    const SPEC_DIGESTS: &[(&str, &str, &str)] = &[
        (
            r##"{"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "metadata": {"name": "x", "namespace": "y"}, "spec": {}}"##,
            "",
            "",
        ),
        (
            r##"{"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "metadata": {"name": "x", "namespace": "y"}, "spec": {"postRenderers": null, "commonMetadata": null}}"##,
            "",
            "",
        ),
        (
            r##"{"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "metadata": {"name": "x", "namespace": "y"}, "spec": {"postRenderers": [], "commonMetadata": {}}}"##,
            "sha256:37517e5f3dc66819f61f5a7bb8ace1921282415f10551d2defa5c3eb0985b570",
            "sha256:ca3d163bab055381827226140568f3bef7eaac187cebd76878e0b63e9e442356",
        ),
        (
            r##"{"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "metadata": {"name": "x", "namespace": "y"}, "spec": {"postRenderers": [{}], "commonMetadata": {"labels": {}, "annotations": {}}}}"##,
            "sha256:501de836b88be0a82b9af264bee8fa768a66abb5ac670b802bf7f696171b0e96",
            "sha256:ca3d163bab055381827226140568f3bef7eaac187cebd76878e0b63e9e442356",
        ),
        (
            r##"{"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "metadata": {"name": "x", "namespace": "y"}, "spec": {"postRenderers": [{"kustomize": {"images": [{"name": "nginx", "newTag": "1.25", "newName": "registry.example.com/nginx", "digest": "sha256:abc"}, {"name": "busybox"}], "patches": [{"target": {"labelSelector": "app=web,tier in (a,b)", "kind": "Deployment", "name": "web", "group": "apps", "version": "v1", "namespace": "prod", "annotationSelector": "x=<y>&z"}, "patch": "- op: add\n  path: /metadata/labels/team\n  value: \"a&b <c>\"\n"}, {"patch": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: \"  ✓ \\t\"\n"}, {"patch": "", "target": {}}]}}, {"kustomize": {}}, {"kustomize": {"patches": [], "images": []}}, {}], "commonMetadata": {"labels": {"z": "1", "a": "<2>", "app.kubernetes.io/name": "x&y"}, "annotations": {"note": "line1\nline2  ", "b": ""}}}}"##,
            "sha256:6f37d3c0ee0b7c6f6a0237606ae4f72ad9985c7c83704602bbe4f795735423c3",
            "sha256:bf70e874278adff6d459cc5cfd9accce1112abb69ef427f6d830dbf3c95588e9",
        ),
    ];

    #[test]
    fn snapshot_digest_matches_helm_controller_for_helm3_and_helm4_releases() {
        for (i, (fixture, plain, with_oci)) in RELEASE_DIGESTS.iter().enumerate() {
            let release = parse(fixture);
            assert_eq!(observation_digest(&release), *plain, "fixture #{i}");
            assert_eq!(try_observation_digest(&release, "sha256:0123abc").as_deref(), Ok(*with_oci), "fixture #{i}");
        }
    }

    #[test]
    fn observation_bytes_are_go_json_encoder_output() {
        for (i, (fixture, bytes)) in OBSERVATION_BYTES.iter().enumerate() {
            let json = observation_json(&parse(fixture), "").unwrap();
            assert_eq!(json, *bytes, "fixture #{i}");
            assert!(json.ends_with("}\n"), "Encoder.Encode appends a newline");
        }
    }

    #[test]
    fn helm3_blank_times_unknown_fields_and_test_hooks_are_left_out() {
        let json = observation_json(&parse(HELM3_INSTALLED), "").unwrap();
        // Helm 3 writes `"deleted":""` and `"started_at":""`: zero times, omitted by Helm 4's MarshalJSON.
        assert!(HELM3_INSTALLED.contains(r#""deleted":"""#) && !json.contains("deleted"));
        assert!(json.contains(r#""first_deployed":"2026-11-29T19:56:24.2598067+02:00""#), "offset kept");
        assert!(json.contains(r#""started_at":"2026-11-29T19:56:23.1+02:00""#));
        assert!(json.contains(r#""completed_at":"2026-11-29T19:56:24.000000001+02:00""#));
        // The test hook is filtered out, the pre-install hook stays.
        assert!(json.contains(r#""name":"demo-pre""#) && !json.contains("demo-test"));
        // Numbers in config are float64, HTML characters escaped.
        assert!(json.contains(r#""big":12345678901234567000"#) && json.contains(r#""tiny":1e-7"#));
        assert!(json.contains(r#""name":"\u003cb\u003ebold\u003c/b\u003e \u0026 co""#));
        // Helm 4's apply_method is not part of the observation.
        assert!(!observation_json(&parse(HELM4_UPGRADED), "").unwrap().contains("ssa"));
    }

    #[test]
    fn empty_or_missing_config_is_null() {
        for fixture in [HELM3_DRYRUN_NO_VALUES, HELM4_EMPTY_CONFIG, BARE] {
            assert!(observation_json(&parse(fixture), "").unwrap().contains(r#""config":null"#));
        }
        // Only test hooks left: `hooks` is null, as after IgnoreHookTestEvents.
        assert!(observation_json(&parse(EDGE_SHAPES), "").unwrap().contains(r#""hooks":null"#));
    }

    #[test]
    fn undecodable_releases_are_reported() {
        for (fixture, go_error) in UNDECODABLE {
            let release = parse(fixture);
            assert!(try_observation_digest(&release, "").is_err(), "{fixture} must fail like {go_error}");
            assert_eq!(observation_digest(&release), "", "{fixture}");
            assert!(try_snapshot(&release, String::new(), "install", "").is_err());
            assert_eq!(snapshot(&release, String::new(), "install")["digest"], "");
        }
    }

    /// Go's snapshot JSON without its `null`s (zero metav1.Time), which the API server drops.
    fn without_nulls(go: &str) -> Value {
        let mut v = parse(go);
        v.as_object_mut().unwrap().retain(|_, v| !v.is_null());
        v
    }

    #[test]
    fn snapshot_matches_observed_to_snapshot() {
        for (i, (fixture, go)) in SNAPSHOTS.iter().enumerate() {
            let want = without_nulls(go);
            let config_digest = want["configDigest"].as_str().unwrap().to_string();
            let got = snapshot(&parse(fixture), config_digest, "install");
            assert_eq!(got, want, "fixture #{i}");
            let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
            assert_eq!(keys(&got), keys(&want), "field order of v2.Snapshot, fixture #{i}");
        }
        let snap = try_snapshot(&parse(HELM4_UPGRADED), "sha256:cfg".into(), "upgrade", "sha256:0123abc").unwrap();
        assert_eq!(snap["action"], "upgrade");
        assert_eq!(snap["ociDigest"], "sha256:0123abc");
        assert_eq!(snap["digest"], RELEASE_DIGESTS[1].2);
        assert_eq!(snap.as_object().unwrap().keys().next_back().map(String::as_str), Some("ociDigest"));
        let bare = snapshot(&parse(BARE), "d".into(), "");
        assert!(
            bare.get("action").is_none() && bare.get("appVersion").is_none() && bare.get("firstDeployed").is_none()
        );
    }

    #[test]
    fn test_hooks_match_test_hooks_from_release() {
        for (i, (fixture, go)) in TEST_HOOKS.iter().enumerate() {
            let mut want = parse(go);
            for status in want.as_object_mut().unwrap().values_mut() {
                status.as_object_mut().unwrap().retain(|_, v| !v.is_null());
            }
            assert_eq!(test_hooks(&parse(fixture), None), want, "fixture #{i}");
        }
    }

    #[test]
    fn spec_digests_match_helm_controller() {
        for (i, (hr, post_renderers, common_metadata)) in SPEC_DIGESTS.iter().enumerate() {
            let hr = parse(hr);
            let pr = hr.pointer("/spec/postRenderers");
            let cm = hr.pointer("/spec/commonMetadata");
            assert_eq!(post_renderers_digest(pr), *post_renderers, "postRenderers #{i}");
            assert_eq!(common_metadata_digest(cm), *common_metadata, "commonMetadata #{i}");
            assert_eq!(spec_field_is_set(pr), !post_renderers.is_empty());
            assert_eq!(spec_field_is_set(cm), !common_metadata.is_empty());
        }
    }
}
