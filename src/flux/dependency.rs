//! dependsOn entries that name an object other than a HelmRelease (Flux 2.10's proposal, helm-controller
//! PR #1480, and fluxcd/pkg PR #1229 after it). Such an object is read through discovery and kube's
//! dynamic API, and judged as proposed: `ready: false` asks only that it exists; a `readyExpr` is a CEL
//! expression over `self` (the dependent) and `dep` (the object); otherwise kstatus decides (Current is
//! ready). It is a leaf of the dependsOn graph: nothing is followed from it. Where it cannot be followed
//! (its kind is not served, reading it is forbidden, a namespaced kind is named without a namespace), that
//! is its verdict, in one line, never an error of the command.
//!
//! What an entry names ([`Ref`], a HelmRelease or another object, with helm-controller's defaults) and
//! the CEL rule for `readyExpr` ([`ready_expr_verdict`]) are here for HelmRelease entries too; the graph
//! of releases is [`crate::views::tree`]'s.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use kube::api::{Api, DynamicObject};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::helmrelease::{DependencyReference, HelmRelease};
use crate::cluster::Cluster;
use crate::cluster::discovery::ClusterApis;
use crate::cluster::kstatus::{self, Status};
use crate::support::error::Error;

/// What a dependsOn entry names: a HelmRelease by namespace and name, or (Flux 2.10) another object,
/// which has its apiVersion and kind too. A HelmRelease has neither, so its JSON is what it always was.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ref {
    /// Empty for an object named without a namespace (a cluster-scoped kind, or one that cannot be read).
    pub namespace: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

impl Ref {
    /// A HelmRelease.
    pub fn new(namespace: &str, name: &str) -> Ref {
        Ref { namespace: namespace.to_string(), name: name.to_string(), api_version: None, kind: None }
    }

    pub fn of(hr: &HelmRelease) -> Ref {
        Ref::new(hr.namespace(), hr.name())
    }

    /// What `entry` of `dependent`'s dependsOn names, with the defaults helm-controller gives it (the
    /// dependent's namespace for a HelmRelease only).
    pub fn target(dependent: &HelmRelease, entry: &DependencyReference) -> Ref {
        let namespace = entry.namespace_from(dependent.namespace()).unwrap_or_default();
        if entry.names_helm_release() {
            return Ref::new(namespace, &entry.name);
        }
        Ref {
            namespace: namespace.to_string(),
            name: entry.name.clone(),
            api_version: Some(entry.api_version()),
            kind: Some(entry.kind().to_string()),
        }
    }

    /// Whether it is a HelmRelease (a node of the graph) rather than another object (a leaf).
    pub fn is_release(&self) -> bool {
        self.kind.is_none()
    }

    /// The kind of another object as rows name it: bare for the core group (`ConfigMap`), else with its
    /// apiVersion (`cert-manager.io/v1 Certificate`); None for a HelmRelease.
    fn kind_label(&self) -> Option<String> {
        let kind = self.kind.as_deref()?;
        Some(match self.api_version.as_deref() {
            None | Some("" | "v1") => kind.to_string(),
            Some(api_version) => format!("{api_version} {kind}"),
        })
    }

    /// The name without the namespace: a HelmRelease's bare name, another object's `Kind/name`.
    pub fn local_name(&self) -> String {
        match self.kind_label() {
            Some(kind) => format!("{kind}/{}", self.name),
            None => self.name.clone(),
        }
    }

    /// As a row about a release in `namespace` names it: without the namespace when it is the same.
    pub(crate) fn seen_from(&self, namespace: &str) -> String {
        if self.namespace == namespace || self.namespace.is_empty() { self.local_name() } else { self.to_string() }
    }
}

impl fmt::Display for Ref {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.kind_label(), self.namespace.is_empty()) {
            (None, _) => write!(f, "{}/{}", self.namespace, self.name),
            (Some(kind), true) => write!(f, "{kind}/{}", self.name),
            (Some(kind), false) => write!(f, "{kind}/{}/{}", self.namespace, self.name),
        }
    }
}

/// What reading an object named by a dependsOn entry gave.
#[derive(Clone, Debug, PartialEq)]
pub enum Lookup {
    /// The object, as the API server returned it.
    Found(Value),
    /// It does not exist.
    Missing,
    /// It cannot be read, and why (one line).
    Unfollowed(String),
}

/// The objects other than HelmReleases that some dependsOn entries name, each read once.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lookups(BTreeMap<Ref, Lookup>);

impl Lookups {
    pub fn get(&self, target: &Ref) -> Option<&Lookup> {
        self.0.get(target)
    }
}

impl FromIterator<(Ref, Lookup)> for Lookups {
    fn from_iter<I: IntoIterator<Item = (Ref, Lookup)>>(iter: I) -> Self {
        Lookups(iter.into_iter().collect())
    }
}

/// Reads every object of `targets` that is not a HelmRelease (uncached, as helm-controller reads
/// dependencies), with one discovery for all; asks the cluster nothing when there is none. Never fails:
/// what cannot be read is an [`Lookup::Unfollowed`] of its own.
pub async fn read_all(cluster: &Cluster, targets: impl IntoIterator<Item = Ref>) -> Lookups {
    let targets: BTreeSet<Ref> = targets.into_iter().filter(|t| !t.is_release()).collect();
    if targets.is_empty() {
        return Lookups::default();
    }
    let apis = match crate::cluster::discovery::discover(cluster).await {
        Ok(apis) => apis,
        Err(e) => {
            let why = format!("cannot learn which kinds the cluster serves: {e}");
            return Lookups(targets.into_iter().map(|t| (t, Lookup::Unfollowed(why.clone()))).collect());
        }
    };
    let reads = targets.iter().map(|t| read(cluster, &apis, t));
    let found = futures::future::join_all(reads).await;
    Lookups(targets.into_iter().zip(found).collect())
}

/// One object, through the resource discovery names for its apiVersion and kind.
async fn read(cluster: &Cluster, apis: &ClusterApis, target: &Ref) -> Lookup {
    let api_version = target.api_version.as_deref().unwrap_or_default();
    let kind = target.kind.as_deref().unwrap_or_default();
    if api_version.is_empty() {
        return Lookup::Unfollowed(format!(
            "cannot be followed: the entry names kind {kind} without an apiVersion (only a HelmRelease's is defaulted)"
        ));
    }
    let Some(served) = apis.find(api_version, kind) else {
        return Lookup::Unfollowed(format!("cannot be followed: the cluster does not serve {api_version} {kind}"));
    };
    let resource = served.api_resource();
    let api: Api<DynamicObject> = match (served.namespaced, target.namespace.as_str()) {
        (true, "") => {
            return Lookup::Unfollowed(format!(
                "cannot be followed: {kind} is namespaced and the entry names no namespace (only a HelmRelease's is defaulted)"
            ));
        }
        (true, ns) => Api::namespaced_with(cluster.client.clone(), ns, &resource),
        (false, _) => Api::all_with(cluster.client.clone(), &resource),
    };
    match api.get_opt(&target.name).await {
        Ok(Some(obj)) => match serde_json::to_value(obj) {
            Ok(value) => Lookup::Found(value),
            Err(e) => Lookup::Unfollowed(format!("cannot be followed: the object cannot be read: {e}")),
        },
        Ok(None) => Lookup::Missing,
        Err(e) => Lookup::Unfollowed(match cluster.error(e) {
            Error::Forbidden(why) => format!("cannot be followed: reading it is forbidden ({why})"),
            other => format!("cannot be followed: {other}"),
        }),
    }
}

/// What an object named by a dependsOn entry means for its dependent.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// It lets the dependent proceed: why.
    Ready(String),
    /// It holds the dependent back: why, in helm-controller's words where it has them.
    NotReady(String),
    /// It does not exist: the dependent waits until it is created.
    Missing,
    /// It cannot be followed: why, in one line. Whether it holds the dependent back is not known.
    Unfollowed(String),
}

impl Verdict {
    /// Whether the dependent waits on it.
    pub fn holds(&self) -> bool {
        matches!(self, Verdict::NotReady(_) | Verdict::Missing)
    }
}

/// The verdict on the object `entry` of `dependent`'s dependsOn names (`target`), from what reading it
/// gave (None: it was not read).
pub fn verdict(dependent: &HelmRelease, entry: &DependencyReference, target: &Ref, read: Option<&Lookup>) -> Verdict {
    match read {
        None => Verdict::Unfollowed("not read".into()),
        Some(Lookup::Missing) => Verdict::Missing,
        Some(Lookup::Unfollowed(why)) => Verdict::Unfollowed(why.clone()),
        Some(Lookup::Found(obj)) => match judge(dependent, entry, target, obj) {
            Ok(why) => Verdict::Ready(why),
            Err(why) => Verdict::NotReady(why),
        },
    }
}

/// Whether an existing object lets `dependent` proceed, as proposed for objects other than HelmReleases:
/// `ready: false`, it exists; a `readyExpr`, that expression; otherwise kstatus must say Current. Ok
/// says why it is ready, Err why not.
pub fn judge(
    dependent: &HelmRelease,
    entry: &DependencyReference,
    target: &Ref,
    dep: &Value,
) -> Result<String, String> {
    if entry.existence_only() {
        return Ok("exists (ready: false: only its existence is checked)".into());
    }
    if let Some(source) = entry.ready_expr() {
        return ready_expr_verdict(dependent, source, &target.to_string(), dep);
    }
    let computed = kstatus::compute(dep);
    match computed.status {
        Status::Current => Ok(format!("kstatus Current: {}", computed.message)),
        status => Err(format!("dependency '{target}' is not ready: status {}: {}", status.as_str(), computed.message)),
    }
}

/// A `readyExpr` as helm-controller evaluates it: over `self`, the dependent, and `dep`, the object named
/// (`named` in messages). Ok says it is true; Err carries helm-controller's DependencyNotReady message or,
/// for an expression it cannot compile, why it stalls.
pub fn ready_expr_verdict(dependent: &HelmRelease, source: &str, named: &str, dep: &Value) -> Result<String, String> {
    let expr = crate::support::cel::Expression::compile(source)
        .map_err(|e| format!("readyExpr cannot be used, helm-controller stalls on it (InvalidCELExpression): {e}"))?;
    // A HelmRelease always encodes as JSON; should it not, `self` is null and the expression says so.
    let me = serde_json::to_value(dependent).unwrap_or_default();
    match expr.eval_bool(&[("self", &me), ("dep", dep)]) {
        Ok(true) => Ok(format!("readyExpr is true: {source}")),
        Ok(false) => Err(format!("dependency '{named}' is not ready according to readyExpr eval")),
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn dependent(entries: Value) -> HelmRelease {
        serde_json::from_value(json!({
            "metadata": {"name": "web", "namespace": "apps"},
            "spec": {"dependsOn": entries}
        }))
        .expect("fixture parses")
    }

    /// The verdict of `web`'s only entry on `dep`.
    fn judged(entry: Value, dep: &Value) -> Result<String, String> {
        let hr = dependent(json!([entry]));
        let target = Ref::target(&hr, &hr.spec.depends_on[0]);
        judge(&hr, &hr.spec.depends_on[0], &target, dep)
    }

    fn deployment(available: bool) -> Value {
        let (ready, status) = if available { (1, "True") } else { (0, "False") };
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "api", "namespace": "apps", "generation": 1},
            "spec": {"replicas": 1},
            "status": {"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1, "readyReplicas": ready,
                       "availableReplicas": ready,
                       "conditions": [{"type": "Available", "status": status}]}
        })
    }

    fn config_map() -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "apps",
               "annotations": {"stage": "done"}}, "data": {"mode": "blue"}})
    }

    #[test]
    fn without_ready_or_an_expression_kstatus_decides() {
        let entry = json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "api", "namespace": "apps"});
        assert!(judged(entry.clone(), &deployment(true)).expect("ready").starts_with("kstatus Current"));
        let held = judged(entry, &deployment(false)).expect_err("not ready");
        assert!(held.starts_with("dependency 'apps/v1 Deployment/apps/api' is not ready: status InProgress"), "{held}");
        // A ConfigMap is always current; a custom kind by its Ready condition.
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "settings", "namespace": "apps"});
        assert!(judged(cm, &config_map()).is_ok());
        let cert = json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "name": "web-tls",
                          "namespace": "apps"});
        let issuing = json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
                             "metadata": {"name": "web-tls", "namespace": "apps"},
                             "status": {"conditions": [{"type": "Ready", "status": "False", "message": "Issuing"}]}});
        assert_eq!(
            judged(cert, &issuing),
            Err("dependency 'cert-manager.io/v1 Certificate/apps/web-tls' is not ready: status InProgress: Issuing"
                .into())
        );
    }

    #[test]
    fn ready_false_asks_for_existence_alone_and_wins_over_an_expression() {
        let entry = json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "api", "namespace": "apps",
                           "ready": false, "readyExpr": "false"});
        assert!(judged(entry, &deployment(false)).expect("exists").starts_with("exists"));
    }

    #[test]
    fn a_ready_expr_sees_self_and_dep() {
        let entry = |expr: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "settings", "namespace": "apps", "readyExpr": expr});
        // PR #1229's existence check.
        assert_eq!(judged(entry("true"), &config_map()), Ok("readyExpr is true: true".into()));
        let both = "dep.data.mode == 'blue' && self.metadata.name == 'web'";
        assert!(judged(entry(both), &config_map()).is_ok());
        assert_eq!(
            judged(entry("dep.metadata.annotations.stage == 'later'"), &config_map()),
            Err("dependency 'ConfigMap/apps/settings' is not ready according to readyExpr eval".into())
        );
        let invalid = judged(entry("dep.data =="), &config_map()).expect_err("cannot compile");
        assert!(invalid.contains("InvalidCELExpression"), "{invalid}");
        // The Deployment is not available, but the expression alone decides.
        let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "api", "namespace": "apps",
                            "readyExpr": "dep.spec.replicas == 1"});
        assert!(judged(deploy, &deployment(false)).is_ok());
    }

    #[test]
    fn what_was_read_gives_the_verdict() {
        let hr = dependent(json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "settings", "namespace": "apps"}]));
        let (entry, target) = (&hr.spec.depends_on[0], Ref::target(&hr, &hr.spec.depends_on[0]));
        let read = |l: Lookup| verdict(&hr, entry, &target, Some(&l));
        assert!(matches!(read(Lookup::Found(config_map())), Verdict::Ready(_)));
        assert_eq!(read(Lookup::Missing), Verdict::Missing);
        assert!(read(Lookup::Missing).holds());
        let unserved = read(Lookup::Unfollowed("the cluster does not serve v1 ConfigMap".into()));
        assert!(!unserved.holds(), "what cannot be followed is not known to hold anything back");
        assert!(matches!(verdict(&hr, entry, &target, None), Verdict::Unfollowed(_)));
    }
}
