//! `kubectl cozyhr drift`: the drift helm-controller's drift detection sees now, found the way it finds
//! it (helm-controller 1.6 `reconcile/state.go` → `action/diff.go` → fluxcd/pkg `ssa/jsondiff`):
//! 1. the desired side is the manifest of the latest stored Helm release (no hooks, no `crds/`), read
//!    from Helm's storage in the release's own cluster ([`crate::desired::target`], `spec.kubeConfig`);
//! 2. each object is normalised ([`normalize`]), gets Helm's ownership label and annotations and, when
//!    namespaced and without one, the release's namespace;
//! 3. an object is left out when it or its live copy carries [`DISABLE_KEY`] `disabled` (label or
//!    annotation, any case), or when an ignore rule ignores its root (`""`);
//! 4. the live object is read and the release's object dry-run applied server-side as helm-controller's
//!    field manager, forced; a dry run without a `resourceVersion` means the object is missing;
//! 5. the ignored paths ([`ignore`]) are removed from the dry run and from the live object, and the two
//!    compared ([`compare`]): labels and annotations by what would be added or replaced, everything else
//!    but metadata and status by equality.
//!
//! Whatever `spec.driftDetection.mode` says, the comparison is made and the report says what
//! helm-controller does with it ([`Mode`]). Secret values are masked unless asked for
//! ([`crate::compare::diff::mask_secrets`]); what is printed reuses the diff's line diff ([`crate::compare::diff::Entry`]).

mod compare;
pub mod ignore;
mod jsondiff;
mod selector;

use futures::StreamExt as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use compare::{Compared, DISABLE_KEY, compare, disabled_by_metadata, normalize, normalize_dry_run};
pub use ignore::{IgnoreRule, IgnoreRules, Target as IgnoreTarget};

use crate::cluster::Cluster;
use crate::cluster::helmstore::StoredRelease;
use crate::cluster::live::LiveObjects;
use crate::cluster::manifests::{Manifest, ObjectId};
use crate::compare::diff::{Action, Entry, RenderOptions, mask_secrets, to_yaml};
use crate::desired::target::Target;
use crate::flux::HelmRelease;
use crate::flux::helmrelease::HelmReleaseSpec;
use crate::support::error::{DriftError, Error, Result};
use crate::support::output::{Paint, Tone};

/// How many dry runs to keep in flight (as the diff's live reads).
const CONCURRENCY: usize = 16;

/// `spec.driftDetection` as written.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DriftDetection {
    #[serde(default, deserialize_with = "ignore::nullable")]
    pub mode: String,
    #[serde(default, deserialize_with = "ignore::nullable")]
    pub ignore: Vec<IgnoreRule>,
}

impl DriftDetection {
    /// The HelmRelease's `spec.driftDetection` (absent: the defaults, mode disabled and no rules).
    pub fn of(spec: &HelmReleaseSpec) -> Result<DriftDetection, DriftError> {
        match spec.extra.get("driftDetection") {
            None | Some(Value::Null) => Ok(DriftDetection::default()),
            Some(v) => DriftDetection::deserialize(v).map_err(|e| DriftError::Spec { reason: e.to_string() }),
        }
    }

    /// helm-controller's `GetMode`: anything but `enabled` and `warn` is disabled.
    pub fn mode(&self) -> Mode {
        match self.mode.as_str() {
            "enabled" => Mode::Enabled,
            "warn" => Mode::Warn,
            _ => Mode::Disabled,
        }
    }
}

/// What helm-controller does with the drift it finds (`spec.driftDetection.mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Reports it and corrects it: creates what is missing, patches drifted fields back.
    Enabled,
    /// Reports it (condition `Drifted=True`, a Warning event `DriftDetected`), changes nothing.
    Warn,
    /// Does not look (the default).
    Disabled,
}

impl Mode {
    /// One sentence on what helm-controller does, given whether there is drift now.
    pub fn explain(self, drift: bool) -> &'static str {
        match (self, drift) {
            (Mode::Enabled, true) => {
                "Mode enabled: helm-controller corrects this at its next reconcile (it creates what is missing and patches drifted fields back, without a new Helm revision)."
            }
            (Mode::Enabled, false) => "Mode enabled: helm-controller corrects drift when it finds some.",
            (Mode::Warn, true) => {
                "Mode warn: helm-controller reports this (condition Drifted=True, Warning event DriftDetected) and does not correct it."
            }
            (Mode::Warn, false) => {
                "Mode warn: helm-controller reports drift when it finds some, and does not correct it."
            }
            (Mode::Disabled, _) => {
                "Mode disabled: helm-controller does not look for drift (spec.driftDetection.mode); this is what it would see with warn or enabled."
            }
        }
    }
}

/// What one object of the release is, as drift detection sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum State {
    InSync,
    Drifted,
    /// Not in the cluster: helm-controller's correction would create it.
    Missing,
    Excluded(Exclusion),
    /// The comparison failed for this object (helm-controller's fails the same way).
    Failed(String),
}

/// Why an object is left out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exclusion {
    /// The release's object carries the label or annotation.
    Release,
    /// The live object does.
    Live,
    /// An ignore rule ignores the whole object (path `""`).
    IgnoredWhole,
}

impl State {
    fn name(&self) -> &'static str {
        match self {
            State::InSync => "in-sync",
            State::Drifted => "drifted",
            State::Missing => "missing",
            State::Excluded(_) => "excluded",
            State::Failed(_) => "error",
        }
    }

    fn reason(&self) -> Option<String> {
        match self {
            State::Excluded(Exclusion::Release) => Some(format!("{DISABLE_KEY}: disabled on the release's object")),
            State::Excluded(Exclusion::Live) => Some(format!("{DISABLE_KEY}: disabled on the live object")),
            State::Excluded(Exclusion::IgnoredWhole) => {
                Some("spec.driftDetection.ignore ignores the whole object (path \"\")".into())
            }
            State::Failed(message) => Some(message.clone()),
            _ => None,
        }
    }
}

/// One object's result: its state, the paths ignored for it, and for a drifted or missing object its
/// two sides as printed (masked unless [`Options::show_secrets`]).
#[derive(Clone, Debug)]
pub struct ObjectDrift {
    pub id: ObjectId,
    pub state: State,
    pub ignored: Vec<String>,
    pub entry: Option<Entry>,
}

/// The release compared.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReleaseInfo {
    pub name: String,
    pub namespace: String,
    pub revision: i64,
    pub status: String,
    pub storage_namespace: String,
}

/// Everything `drift` reports.
#[derive(Clone, Debug)]
pub struct Report {
    /// `namespace/name` of the HelmRelease.
    pub helm_release: String,
    pub release: ReleaseInfo,
    pub mode: Mode,
    /// In [`ObjectId`] order.
    pub objects: Vec<ObjectDrift>,
    /// What makes helm-controller not look now whatever the mode (suspended, a release not deployed).
    pub notes: Vec<String>,
}

/// How [`detect`] prepares what it shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Print Secret values as they are (default: masked).
    pub show_secrets: bool,
}

/// The drift of HelmRelease `hr` (which lives in `home`) as helm-controller's drift detection would see
/// it now (see the module docs). Errors that concern the whole comparison (the settings, the stored
/// release, the cluster) are errors; one object's failure is its [`State::Failed`].
pub async fn detect(home: &Cluster, hr: &HelmRelease, options: Options) -> Result<Report> {
    let detection = DriftDetection::of(&hr.spec)?;
    let rules = IgnoreRules::compile(&detection.ignore)?;
    let target = crate::desired::target::resolve(home, hr).await?;
    let cluster = &target.cluster;
    let stored = latest_release(&target, hr).await?;
    let release = release_info(hr, &stored);
    let notes = not_looking_now(hr, &stored);
    let parsed = crate::cluster::manifests::ParsedStream::parse(&stored.manifest).map_err(|e| {
        DriftError::Manifest { release: format!("{}/{}", release.namespace, release.name), reason: e.to_string() }
    })?;
    let apis = crate::cluster::discovery::discover(cluster).await?;
    let live = LiveObjects::new(cluster, apis);
    let (mut objects, pending) = prepare(parsed.manifests, &live, &rules, &release);
    objects.extend(compare_all(&live, pending, options).await?);
    objects.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(Report {
        helm_release: format!("{}/{}", hr.namespace(), hr.name()),
        release,
        mode: detection.mode(),
        objects,
        notes,
    })
}

/// The latest release Helm stored for `hr` in the release's own cluster: its manifest is the desired
/// side, as helm-controller takes it. Without one there is nothing to compare, which is an error that
/// says where it was looked for.
async fn latest_release(target: &Target, hr: &HelmRelease) -> Result<StoredRelease> {
    let release_name = hr.release_name();
    let storage = hr.storage_namespace().to_string();
    let Some(stored) = crate::cluster::helmstore::latest(&target.cluster, &storage, &release_name).await? else {
        return Err(DriftError::NoRelease {
            hr: format!("{}/{}", hr.namespace(), hr.name()),
            release: release_name,
            storage,
            remote: !target.shares_discovery_with_home(),
            why: if hr.deleted_by_delete() {
                let resume = crate::support::output::lifecycle_command("resume");
                format!(
                    "it was uninstalled by {} delete ({resume} {} -n {} lets Flux install it again)",
                    crate::support::output::chart_command(),
                    hr.name(),
                    hr.namespace()
                )
            } else {
                "helm-controller has not installed it (yet)".into()
            },
        }
        .into());
    };
    Ok(stored)
}

/// The release compared. Its namespace is the stored release's, which Helm wrote when it installed;
/// the HelmRelease's is the fallback for a release stored without one.
fn release_info(hr: &HelmRelease, stored: &StoredRelease) -> ReleaseInfo {
    let namespace =
        if stored.namespace.is_empty() { hr.release_namespace().to_string() } else { stored.namespace.clone() };
    ReleaseInfo {
        name: stored.name.clone(),
        namespace,
        revision: stored.version,
        status: stored.status.clone(),
        storage_namespace: hr.storage_namespace().to_string(),
    }
}

/// What keeps helm-controller from looking for drift now, whatever the mode (a suspended HelmRelease, a
/// latest release that is not deployed): said with the report, so that the drift it shows is not taken
/// for drift helm-controller is about to act on.
fn not_looking_now(hr: &HelmRelease, stored: &StoredRelease) -> Vec<String> {
    let mut notes = Vec::new();
    if hr.spec.suspend {
        notes.push(format!(
            "helmrelease {}/{} is suspended: helm-controller does not reconcile it, so it does not look for drift either",
            hr.namespace(),
            hr.name()
        ));
    }
    if stored.status != "deployed" {
        notes.push(format!(
            "the latest release, revision {}, is {}: helm-controller looks for drift only in a deployed release (it upgrades or remediates this one first)",
            stored.version, stored.status
        ));
    }
    notes
}

/// An object of the release still to be compared: its id, the object as helm-controller applies it,
/// and the paths ignored for it.
type Pending = (ObjectId, Value, Vec<String>);

/// Makes each object of the release what helm-controller applies (normalised, with Helm's ownership
/// and, when namespaced and without one, the release's namespace) and sorts out those decided without
/// reading the cluster: a kind the cluster does not serve fails, an object disabled on the release's
/// side or ignored whole is excluded. The rest are returned to be compared.
fn prepare(
    manifests: Vec<Manifest>,
    live: &LiveObjects<'_>,
    rules: &IgnoreRules,
    release: &ReleaseInfo,
) -> (Vec<ObjectDrift>, Vec<Pending>) {
    let mut objects = Vec::new();
    let mut pending: Vec<Pending> = Vec::new();
    for m in manifests {
        let mut obj = m.object;
        normalize(&mut obj);
        crate::cluster::manifests::add_helm_ownership(&mut obj, &release.name, &release.namespace);
        let namespaced = match live.resource(&obj) {
            Ok((_, namespaced)) => namespaced,
            Err(e) => {
                objects.push(ObjectDrift {
                    id: m.id,
                    state: State::Failed(e.to_string()),
                    ignored: vec![],
                    entry: None,
                });
                continue;
            }
        };
        if namespaced
            && obj.pointer("/metadata/namespace").and_then(Value::as_str).is_none_or(str::is_empty)
            && let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut)
        {
            meta.insert("namespace".into(), Value::String(release.namespace.clone()));
        }
        let id = ObjectId::from_object(&obj).unwrap_or(m.id);
        let ignored = rules.paths_for(&obj);
        match exclusion(&obj, &ignored) {
            Some(why) => objects.push(ObjectDrift { id, state: State::Excluded(why), ignored, entry: None }),
            None => pending.push((id, obj, ignored)),
        }
    }
    (objects, pending)
}

/// Why the release's object is left out before its live copy is read, if it is: its own label or
/// annotation [`DISABLE_KEY`] is looked at first, then the ignore rules for its root path `""`.
fn exclusion(obj: &Value, ignored: &[String]) -> Option<Exclusion> {
    if disabled_by_metadata(obj) {
        Some(Exclusion::Release)
    } else if ignored.iter().any(String::is_empty) {
        Some(Exclusion::IgnoredWhole)
    } else {
        None
    }
}

/// Reads the live copies of `pending` together, then compares each ([`compare_one`]), `CONCURRENCY`
/// at a time, in `pending`'s order. The first error that concerns more than one object fails all.
async fn compare_all(live: &LiveObjects<'_>, pending: Vec<Pending>, options: Options) -> Result<Vec<ObjectDrift>> {
    let lives = {
        let desired: Vec<&Value> = pending.iter().map(|(_, obj, _)| obj).collect();
        live.get_all(&desired).await?
    };
    let each = pending.into_iter().zip(lives).map(|(pending, current)| compare_one(live, pending, current, options));
    let judged: Vec<Result<ObjectDrift>> = futures::stream::iter(each).buffered(CONCURRENCY).collect().await;
    judged.into_iter().collect()
}

/// One object against its live copy `current`: excluded when the live copy disables drift detection,
/// else dry-run applied and judged ([`judge`]). An object the server refuses fails alone, as it does in
/// helm-controller's dry run; any other error is the cluster's and fails the comparison.
async fn compare_one(
    live: &LiveObjects<'_>,
    (id, obj, ignored): Pending,
    current: Option<Value>,
    options: Options,
) -> Result<ObjectDrift> {
    if current.as_ref().is_some_and(disabled_by_metadata) {
        return Ok(ObjectDrift { id, state: State::Excluded(Exclusion::Live), ignored, entry: None });
    }
    let on_server = match live.dry_run(&obj, current.as_ref()).await {
        Ok(v) => v,
        // The server refuses this object (helm-controller's dry run fails on it too).
        Err(e @ Error::Invalid { .. }) => {
            return Ok(ObjectDrift { id, state: State::Failed(e.to_string()), ignored, entry: None });
        }
        Err(e) => return Err(e),
    };
    judge(id, obj, current, on_server, ignored, options)
}

/// One object's verdict from its release object, its live copy and the dry run's answer.
fn judge(
    id: ObjectId,
    desired: Value,
    live: Option<Value>,
    mut on_server: Value,
    ignored: Vec<String>,
    options: Options,
) -> Result<ObjectDrift> {
    let created = on_server.pointer("/metadata/resourceVersion").and_then(Value::as_str).is_none_or(str::is_empty);
    if created {
        // What helm-controller would create is the release's object itself.
        let mut shown = desired;
        if let Some(meta) = shown.get_mut("metadata").and_then(Value::as_object_mut)
            && meta.get("creationTimestamp").is_some_and(Value::is_null)
        {
            meta.shift_remove("creationTimestamp");
        }
        let entry = shown_entry(&id, Action::Add, None, Some(shown), options)?;
        return Ok(ObjectDrift { id, state: State::Missing, ignored, entry: Some(entry) });
    }
    let Some(mut live) = live else {
        return Ok(ObjectDrift {
            id,
            state: State::Failed("the dry run answers for an object that is not there".into()),
            ignored,
            entry: None,
        });
    };
    normalize_dry_run(&mut on_server);
    let removed =
        ignore::remove_paths(&mut on_server, &ignored).and_then(|()| ignore::remove_paths(&mut live, &ignored));
    if let Err(reason) = removed {
        return Ok(ObjectDrift { id, state: State::Failed(reason), ignored, entry: None });
    }
    let c = compare(&live, &on_server);
    if !c.drifted {
        return Ok(ObjectDrift { id, state: State::InSync, ignored, entry: None });
    }
    let entry = shown_entry(&id, Action::Change, Some(c.live), Some(c.release), options)?;
    Ok(ObjectDrift { id, state: State::Drifted, ignored, entry: Some(entry) })
}

/// The two sides as printed: Secret values masked unless asked for, then YAML.
fn shown_entry(
    id: &ObjectId,
    action: Action,
    old: Option<Value>,
    new: Option<Value>,
    options: Options,
) -> Result<Entry> {
    let (old, new) = if options.show_secrets { (old, new) } else { mask_secrets(old.as_ref(), new.as_ref()) };
    let yaml = |v: &Option<Value>| -> Result<String> {
        v.as_ref()
            .map(to_yaml)
            .transpose()
            .map(Option::unwrap_or_default)
            .map_err(|e| Error::Invalid { what: "drift".into(), reason: e.to_string() })
    };
    let (old_yaml, new_yaml) = (yaml(&old)?, yaml(&new)?);
    Ok(Entry { id: id.clone(), action, old, new, old_yaml, new_yaml, drift_ignored: Vec::new() })
}

/// Numbers of objects per state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    pub drifted: usize,
    pub missing: usize,
    pub in_sync: usize,
    pub excluded: usize,
    pub errors: usize,
}

impl Report {
    pub fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for o in &self.objects {
            match o.state {
                State::InSync => c.in_sync += 1,
                State::Drifted => c.drifted += 1,
                State::Missing => c.missing += 1,
                State::Excluded(_) => c.excluded += 1,
                State::Failed(_) => c.errors += 1,
            }
        }
        c
    }

    /// Whether helm-controller would find drift (an object drifted or missing): what
    /// `--detailed-exitcode` turns into exit code 2.
    pub fn has_drift(&self) -> bool {
        self.objects.iter().any(|o| matches!(o.state, State::Drifted | State::Missing))
    }

    /// The objects that could not be compared, each as `id: reason`.
    pub fn failures(&self) -> Vec<String> {
        self.objects
            .iter()
            .filter_map(|o| match &o.state {
                State::Failed(why) => Some(format!("{}: {why}", o.id)),
                _ => None,
            })
            .collect()
    }

    /// The report for people: a line diff per drifted object (`-` live, `+` the release), the missing
    /// objects whole, one line per excluded or failed object, then the counts and what helm-controller
    /// does about it.
    pub fn render_text(&self, options: RenderOptions) -> String {
        let paint = Paint(options.color);
        let mut out = String::new();
        for o in &self.objects {
            let header = o.id.helm_header();
            let (line, tone) = match &o.state {
                State::InSync => continue,
                State::Drifted => (format!("{header} has drifted from the release (- live, + release):"), Tone::Warn),
                State::Missing => (format!("{header} is missing: helm-controller would create it:"), Tone::Good),
                State::Excluded(_) => {
                    (format!("{header} is excluded: {}", o.state.reason().unwrap_or_default()), Tone::Dim)
                }
                State::Failed(why) => (format!("{header} cannot be compared: {why}"), Tone::Bad),
            };
            let line = paint.tone(&line, tone);
            out.push_str(&if matches!(o.state, State::Drifted | State::Missing) { paint.bold(&line) } else { line });
            out.push('\n');
            if let Some(e) = &o.entry {
                out.push_str(&e.diff(options.context, options.color));
            }
        }
        if !out.is_empty() {
            out.push('\n');
        }
        let c = self.counts();
        let r = &self.release;
        let mut summary = format!("Release {}/{} revision {}: ", r.namespace, r.name, r.revision);
        if self.has_drift() {
            summary.push_str(&format!("{} drifted, {} missing, {} in sync", c.drifted, c.missing, c.in_sync));
        } else {
            summary.push_str(&format!("no drift, {} in sync", c.in_sync));
        }
        if c.excluded > 0 {
            summary.push_str(&format!(", {} excluded", c.excluded));
        }
        if c.errors > 0 {
            summary.push_str(&format!(", {} not compared", c.errors));
        }
        summary.push_str(".\n");
        out.push_str(&summary);
        out.push_str(self.mode.explain(self.has_drift()));
        out.push('\n');
        out
    }

    /// `-o json`: the HelmRelease, the release, the mode, every object with its state (and `reason`,
    /// `ignoredPaths`, and for drifted and missing objects the uncoloured line `diff`), and the counts.
    pub fn render_json(&self, context: Option<usize>) -> String {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Object<'a> {
            group: &'a str,
            version: Option<&'a str>,
            kind: &'a str,
            namespace: Option<&'a str>,
            name: &'a str,
            state: &'static str,
            #[serde(skip_serializing_if = "Option::is_none")]
            reason: Option<String>,
            ignored_paths: &'a [String],
            #[serde(skip_serializing_if = "Option::is_none")]
            diff: Option<String>,
        }
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Json<'a> {
            helm_release: &'a str,
            release: &'a ReleaseInfo,
            mode: Mode,
            drift: bool,
            objects: Vec<Object<'a>>,
            summary: Counts,
            notes: &'a [String],
        }
        let report = Json {
            helm_release: &self.helm_release,
            release: &self.release,
            mode: self.mode,
            drift: self.has_drift(),
            objects: self
                .objects
                .iter()
                .map(|o| Object {
                    group: &o.id.group,
                    version: o.id.version.as_deref(),
                    kind: &o.id.kind,
                    namespace: o.id.namespace.as_deref(),
                    name: &o.id.name,
                    state: o.state.name(),
                    reason: o.state.reason(),
                    ignored_paths: &o.ignored,
                    diff: o.entry.as_ref().map(|e| e.diff(context, false)),
                })
                .collect(),
            summary: self.counts(),
            notes: &self.notes,
        };
        // Strings, numbers and options into a String cannot fail.
        let mut text = serde_json::to_string_pretty(&report).unwrap_or_default();
        text.push('\n');
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Answers printed by the Go libraries helm-controller 1.6 builds with (wI2L/jsondiff v0.7.1 with
    /// `Rationalize()`, evanphx/json-patch v5.9.11 removals with missing paths allowed and negative
    /// indexes, k8s.io/apimachinery v0.36.2 `labels.Parse`), for the cases of testdata/cases.py, by
    /// testdata/govec (`python3 cases.py | go run ./govec`, joined line by line into go-vectors.jsonl).
    #[test]
    fn the_ports_answer_as_the_go_libraries_answer() {
        let vectors = include_str!("testdata/go-vectors.jsonl");
        let mut checked = 0;
        for line in vectors.lines() {
            let v: Value = serde_json::from_str(line).expect("a vector is JSON");
            let (case, go) = (&v["case"], &v["go"]);
            if let Some(selector) = case.get("selector").and_then(Value::as_str) {
                let labels: std::collections::BTreeMap<String, String> =
                    serde_json::from_value(case["labels"].clone()).unwrap_or_default();
                let ours = match selector::LabelSelector::parse(selector) {
                    Ok(s) => json!({"match": s.matches(&labels)}),
                    Err(_) => json!({"error": true}),
                };
                assert_eq!(&ours, go, "selector {selector:?} on {labels:?}");
            } else if let Some(paths) = case.get("paths") {
                let paths: Vec<String> = serde_json::from_value(paths.clone()).unwrap();
                let mut doc = case["doc"].clone();
                let ours = match ignore::remove_paths(&mut doc, &paths) {
                    Ok(()) => json!({"doc": doc}),
                    Err(_) => json!({"error": true}),
                };
                assert_eq!(&ours, go, "removing {paths:?}");
            } else {
                let ops = jsondiff::compare(&case["src"], &case["tgt"]);
                let ours: Vec<Value> = ops
                    .iter()
                    .map(|o| {
                        let kind = match o.kind {
                            jsondiff::OpKind::Add => "add",
                            jsondiff::OpKind::Replace => "replace",
                            jsondiff::OpKind::Remove => "remove",
                        };
                        json!([kind, o.path])
                    })
                    .collect();
                assert_eq!(&Value::Array(ours), go, "patch from {} to {}", case["src"], case["tgt"]);
            }
            checked += 1;
        }
        assert!(checked > 90, "{checked} vectors");
    }

    fn spec(drift: Value) -> HelmReleaseSpec {
        serde_json::from_value(json!({"driftDetection": drift})).unwrap()
    }

    #[test]
    fn the_mode_is_helm_controllers_reading_of_it() {
        assert_eq!(DriftDetection::of(&HelmReleaseSpec::default()).unwrap().mode(), Mode::Disabled);
        assert_eq!(DriftDetection::of(&spec(json!({"mode": "warn"}))).unwrap().mode(), Mode::Warn);
        assert_eq!(
            DriftDetection::of(&spec(json!({"mode": "enabled", "ignore": null}))).unwrap().mode(),
            Mode::Enabled
        );
        assert_eq!(DriftDetection::of(&spec(json!({"mode": "Enabled"}))).unwrap().mode(), Mode::Disabled);
        assert_eq!(DriftDetection::of(&spec(Value::Null)).unwrap(), DriftDetection::default());
        let err = DriftDetection::of(&spec(json!({"ignore": "nope"}))).unwrap_err().to_string();
        assert!(err.starts_with("spec.driftDetection cannot be read: "), "{err}");
    }

    #[test]
    fn ignored_paths_for_a_diff_come_from_the_spec() {
        let s = spec(
            json!({"ignore": [{"paths": ["/data/a"], "target": {"kind": "ConfigMap"}}, {"paths": ["/spec/replicas"]}]}),
        );
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
        assert_eq!(ignore::ignored_paths(&s, &cm).unwrap(), ["/data/a", "/spec/replicas"]);
    }

    fn id(kind: &str, name: &str) -> ObjectId {
        ObjectId::from_object(
            &json!({"apiVersion": "v1", "kind": kind, "metadata": {"name": name, "namespace": "apps"}}),
        )
        .unwrap()
    }

    fn report(objects: Vec<ObjectDrift>, mode: Mode) -> Report {
        Report {
            helm_release: "apps/web".into(),
            release: ReleaseInfo {
                name: "web".into(),
                namespace: "apps".into(),
                revision: 2,
                status: "deployed".into(),
                storage_namespace: "apps".into(),
            },
            mode,
            objects,
            notes: vec![],
        }
    }

    #[test]
    fn the_report_shows_drift_missing_excluded_and_the_mode() {
        let live = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "apps"}, "data": {"k": "by-hand"}});
        let mut release = live.clone();
        release["data"]["k"] = json!("v");
        let drifted = judge(
            id("ConfigMap", "cm"),
            release.clone(),
            Some(live.clone()),
            {
                let mut r = release.clone();
                r["metadata"]["resourceVersion"] = json!("5");
                r
            },
            vec![],
            Options::default(),
        )
        .unwrap();
        assert_eq!(drifted.state, State::Drifted);
        let mut gone = release.clone();
        gone["metadata"]["name"] = json!("gone");
        let missing = judge(id("ConfigMap", "gone"), gone.clone(), None, gone, vec![], Options::default()).unwrap();
        assert_eq!(missing.state, State::Missing);
        let excluded = ObjectDrift {
            id: id("ConfigMap", "skip"),
            state: State::Excluded(Exclusion::Live),
            ignored: vec![],
            entry: None,
        };
        let r = report(vec![drifted, excluded, missing], Mode::Warn);
        assert!(r.has_drift());
        assert_eq!(
            r.render_text(RenderOptions { context: Some(0), color: false }),
            "apps, cm, ConfigMap (v1) has drifted from the release (- live, + release):\n\
             ...\n\
             -   k: by-hand\n\
             +   k: v\n\
             apps, skip, ConfigMap (v1) is excluded: helm.toolkit.fluxcd.io/driftDetection: disabled on the live object\n\
             apps, gone, ConfigMap (v1) is missing: helm-controller would create it:\n\
             + apiVersion: v1\n\
             + kind: ConfigMap\n\
             + metadata:\n\
             +   name: gone\n\
             +   namespace: apps\n\
             + data:\n\
             +   k: v\n\
             \n\
             Release apps/web revision 2: 1 drifted, 1 missing, 0 in sync, 1 excluded.\n\
             Mode warn: helm-controller reports this (condition Drifted=True, Warning event DriftDetected) and does not correct it.\n"
        );
        let json: Value = serde_json::from_str(&r.render_json(Some(0))).unwrap();
        assert_eq!(json["summary"], json!({"drifted": 1, "missing": 1, "inSync": 0, "excluded": 1, "errors": 0}));
        assert_eq!(json["objects"][0]["state"], "drifted");
        assert_eq!(json["objects"][0]["diff"], "...\n-   k: by-hand\n+   k: v\n");
        assert_eq!(json["objects"][1]["reason"], "helm.toolkit.fluxcd.io/driftDetection: disabled on the live object");
        assert_eq!((json["mode"].clone(), json["drift"].clone()), (json!("warn"), json!(true)));

        let quiet = report(
            vec![ObjectDrift { id: id("ConfigMap", "cm"), state: State::InSync, ignored: vec![], entry: None }],
            Mode::Disabled,
        );
        assert!(!quiet.has_drift());
        assert_eq!(
            quiet.render_text(RenderOptions::default()),
            "Release apps/web revision 2: no drift, 1 in sync.\nMode disabled: helm-controller does not look for drift (spec.driftDetection.mode); this is what it would see with warn or enabled.\n"
        );
    }

    #[test]
    fn secrets_are_masked_in_what_is_shown() {
        use base64::Engine as _;
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let secret = |v: &str| json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "apps", "resourceVersion": "3"}, "data": {"password": b64(v)}});
        let o = judge(
            id("Secret", "s"),
            secret("release-pw"),
            Some(secret("hand-pw")),
            secret("release-pw"),
            vec![],
            Options::default(),
        )
        .unwrap();
        assert_eq!(o.state, State::Drifted);
        let r = report(vec![o], Mode::Warn);
        let everything = format!("{}{}", r.render_text(RenderOptions::default()), r.render_json(None));
        for s in ["release-pw", "hand-pw"] {
            assert!(!everything.contains(s) && !everything.contains(&b64(s)), "{s} leaked:\n{everything}");
        }
        assert!(everything.contains("-   password: \"-------- # (7 bytes)\""), "{everything}");
        let shown = judge(
            id("Secret", "s"),
            secret("a"),
            Some(secret("b")),
            secret("a"),
            vec![],
            Options { show_secrets: true },
        )
        .unwrap();
        assert!(shown.entry.unwrap().new_yaml.contains(&b64("a")));
    }

    #[test]
    fn ignored_paths_are_removed_from_both_sides_and_bad_ones_fail_the_object() {
        let obj = |v: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "apps", "resourceVersion": "1"}, "data": {"k": v, "l": "same"}});
        let o = judge(
            id("ConfigMap", "c"),
            obj("v"),
            Some(obj("hand")),
            obj("v"),
            vec!["/data/k".into()],
            Options::default(),
        )
        .unwrap();
        assert_eq!(o.state, State::InSync);
        let o = judge(
            id("ConfigMap", "c"),
            obj("v"),
            Some(obj("v")),
            obj("v"),
            vec!["/data/k/0".into(), "/list/x".into()],
            Options::default(),
        )
        .unwrap();
        assert_eq!(o.state, State::InSync, "a path through a scalar or a missing one changes nothing");
        let mut with_list = obj("v");
        with_list["list"] = json!([1]);
        let o = judge(
            id("ConfigMap", "c"),
            with_list.clone(),
            Some(with_list.clone()),
            with_list,
            vec!["/list/x".into()],
            Options::default(),
        )
        .unwrap();
        assert!(matches!(o.state, State::Failed(_)), "{:?}", o.state);
    }
}
