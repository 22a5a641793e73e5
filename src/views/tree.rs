//! The `spec.dependsOn` graph of HelmReleases, for `kubectl cozyhr tree` and the dependents that `status`
//! lists: read from one LIST of HelmReleases (no GET per node), then pure functions from that list to a
//! graph, each release judged by helm-controller's own dependency rule, with cycles and missing
//! dependencies found on the way. An entry naming another kind of object (Flux 2.10's dependsOn, see
//! [`crate::flux::dependency`]) is a leaf: the object is read ([`Graph::read_objects`]) and judged, never
//! followed further.

use std::collections::{BTreeMap, BTreeSet};

use kube::Resource;
use serde::{Deserialize, Serialize};

use crate::cluster::Cluster;
use crate::flux::condition;
pub use crate::flux::dependency::Ref;
use crate::flux::dependency::{self, Lookups, Verdict};
use crate::flux::helmrelease::{DependencyReference, HelmRelease};
use crate::flux::object::FluxObject;
use crate::flux::verbs::Objects;
use crate::support::error::{Error, Result};
use crate::support::output::{self, Paint, Table, Tone};
use crate::views::get::{self, Format};

/// Whether HelmRelease `dep` (the one `entry` of `dependent`'s dependsOn names) lets `dependent` proceed,
/// as helm-controller's `checkDependencies` decides: by the entry's `readyExpr` when it has one (a CEL
/// expression over `self`, the dependent, and `dep`; it replaces the built-in rule, as it does unless
/// helm-controller's `AdditiveCELDependencyCheck` gate is on), else by [`dependency_ready`]; with Flux
/// 2.10's `ready: false`, by its existence alone. Err carries helm-controller's DependencyNotReady message
/// (or, for an expression it cannot compile, why it stalls).
pub fn dependency_verdict(
    dependent: &HelmRelease,
    entry: &DependencyReference,
    dep: &HelmRelease,
) -> Result<String, String> {
    if entry.existence_only() {
        return Ok("exists (ready: false: only its existence is checked)".into());
    }
    let Some(source) = entry.ready_expr() else { return dependency_ready(dep) };
    let named = format!("{}/{}", dependent.dependency_namespace(entry), entry.name);
    // A HelmRelease always encodes as JSON; should it not, `dep` is null and the expression says so.
    let them = serde_json::to_value(dep).unwrap_or_default();
    dependency::ready_expr_verdict(dependent, source, &named, &them)
}

/// helm-controller's built-in dependsOn rule (`checkDependencies`): the dependency is ready when the
/// controller has observed its current generation and it reports Ready=True. Ok carries the Ready
/// message; Err says why not.
pub fn dependency_ready(dep: &HelmRelease) -> Result<String, String> {
    let generation = dep.meta().generation.unwrap_or_default();
    let observed = dep.observed_generation().unwrap_or(-1);
    if generation != observed {
        return Err(format!("generation {generation} not yet observed (observed {observed})"));
    }
    match condition::find(dep.conditions(), condition::READY) {
        Some(c) if c.status == "True" => Ok(c.message.clone()),
        Some(c) => Err(format!("Ready={}: {}", c.status, c.message)),
        None => Err("no Ready condition yet".into()),
    }
}

/// The HelmReleases a graph is built from: all namespaces, or only the current one when listing across
/// namespaces is forbidden.
pub struct Listing {
    pub items: Vec<HelmRelease>,
    /// Set when only this namespace could be listed: releases elsewhere are unknown, not missing.
    pub only_namespace: Option<String>,
}

impl Listing {
    /// One LIST across all namespaces (dependsOn crosses them), else one of the current namespace.
    pub async fn fetch(cluster: &Cluster) -> Result<Listing> {
        match Objects::<HelmRelease>::all(cluster).list(None).await {
            Ok(items) => Ok(Listing { items, only_namespace: None }),
            Err(Error::Forbidden(_)) => {
                let items = Objects::<HelmRelease>::namespaced(cluster, &cluster.namespace).list(None).await?;
                Ok(Listing { items, only_namespace: Some(cluster.namespace.clone()) })
            }
            Err(e) => Err(e),
        }
    }

    /// What a user should know about a listing of one namespace only.
    pub fn note(&self) -> Option<String> {
        self.only_namespace.as_ref().map(|ns| {
            format!(
                "HelmReleases cannot be listed across namespaces (forbidden): only namespace {ns} was read, releases elsewhere show as not listed"
            )
        })
    }

    pub fn graph(&self) -> Graph<'_> {
        Graph::new(&self.items, self.only_namespace.as_deref())
    }
}

/// Whether a release in the graph exists: `Unknown` for one in a namespace that could not be listed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Found {
    True,
    False,
    Unknown,
}

/// The dependsOn edges of a set of HelmReleases, both ways.
pub struct Graph<'a> {
    releases: BTreeMap<Ref, &'a HelmRelease>,
    /// Who depends on each release (sorted), whether that release exists or not.
    dependents: BTreeMap<Ref, Vec<Ref>>,
    only_namespace: Option<&'a str>,
    /// The objects other than HelmReleases that entries name, as read ([`Graph::read_objects`]).
    objects: Lookups,
}

impl<'a> Graph<'a> {
    /// The graph of `items`; `only_namespace` says that only that namespace was listed.
    pub fn new(items: &'a [HelmRelease], only_namespace: Option<&'a str>) -> Graph<'a> {
        let releases: BTreeMap<Ref, &HelmRelease> = items.iter().map(|hr| (Ref::of(hr), hr)).collect();
        let mut dependents: BTreeMap<Ref, BTreeSet<Ref>> = BTreeMap::new();
        for (from, hr) in &releases {
            for to in depends_on(hr) {
                dependents.entry(to).or_default().insert(from.clone());
            }
        }
        let dependents = dependents.into_iter().map(|(k, v)| (k, v.into_iter().collect())).collect();
        Graph { releases, dependents, only_namespace, objects: Lookups::default() }
    }

    /// The graph, with the objects other than HelmReleases that entries name as read.
    pub fn with_objects(mut self, objects: Lookups) -> Graph<'a> {
        self.objects = objects;
        self
    }

    /// Reads the objects other than HelmReleases that the releases of the tree around `root` name, so
    /// that the tree shows each with its verdict; asks the cluster nothing when they name none.
    pub async fn read_objects(&mut self, cluster: &Cluster, root: &Ref) {
        let mut around = self.closure(root, Direction::DependsOn);
        around.extend(self.closure(root, Direction::Dependents));
        let named: Vec<Ref> = around
            .iter()
            .filter_map(|r| self.get(r))
            .flat_map(|hr| targets(hr).into_iter().map(|(to, _)| to))
            .filter(|to| !to.is_release())
            .collect();
        self.objects = dependency::read_all(cluster, named).await;
    }

    /// The releases reached from `root` in one direction, `root` included.
    fn closure(&self, root: &Ref, direction: Direction) -> BTreeSet<Ref> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![root.clone()];
        while let Some(r) = todo.pop() {
            if seen.insert(r.clone()) {
                match direction {
                    Direction::DependsOn => todo.extend(self.depends_on(&r)),
                    Direction::Dependents => todo.extend(self.dependents(&r).iter().cloned()),
                }
            }
        }
        seen
    }

    pub fn get(&self, r: &Ref) -> Option<&'a HelmRelease> {
        self.releases.get(r).copied()
    }

    fn found(&self, r: &Ref) -> Found {
        match (self.releases.contains_key(r), self.only_namespace) {
            (true, _) => Found::True,
            (false, Some(ns)) if ns != r.namespace => Found::Unknown,
            (false, _) => Found::False,
        }
    }

    /// The releases `r` depends on, in the order written (a missing or unknown release has no known
    /// dependencies; objects of other kinds are not releases).
    pub fn depends_on(&self, r: &Ref) -> Vec<Ref> {
        self.get(r).map(depends_on).unwrap_or_default()
    }

    /// Who depends on `r`, sorted by namespace and name.
    pub fn dependents(&self, r: &Ref) -> &[Ref] {
        self.dependents.get(r).map(Vec::as_slice).unwrap_or_default()
    }

    /// The direct dependencies that hold `r` back under helm-controller's rule: missing, or not Ready at
    /// their current generation, or whose `readyExpr` is not true ([`dependency_verdict`]); objects of
    /// other kinds by their verdict ([`dependency::verdict`]; one that was not read holds nothing back).
    pub fn waits_on(&self, r: &Ref) -> Vec<Ref> {
        let Some(hr) = self.get(r) else { return Vec::new() };
        let mut out = Vec::new();
        for dep in &hr.spec.depends_on {
            let to = Ref::target(hr, dep);
            let holds = match (to.is_release(), self.found(&to), self.get(&to)) {
                (false, _, _) => self.object_verdict(hr, dep, &to).holds(),
                (true, Found::False, _) => true,
                (true, _, Some(obj)) => dependency_verdict(hr, dep, obj).is_err(),
                _ => false,
            };
            if holds && !out.contains(&to) {
                out.push(to);
            }
        }
        out
    }

    /// The verdict on the object of another kind that `entry` of `dependent` names (`to`).
    fn object_verdict(&self, dependent: &HelmRelease, entry: &DependencyReference, to: &Ref) -> Verdict {
        dependency::verdict(dependent, entry, to, self.objects.get(to))
    }

    /// An object of another kind as a tree shows it: a leaf with `dependent`'s verdict on it.
    fn object_node(&self, dependent: &HelmRelease, entry: &DependencyReference, to: &Ref) -> Node {
        let (found, ready, message) = match self.object_verdict(dependent, entry, to) {
            Verdict::Ready(why) => (Found::True, "True", why),
            Verdict::NotReady(why) => (Found::True, "False", why),
            Verdict::Missing => (Found::False, "", String::new()),
            Verdict::Unfollowed(why) => (Found::Unknown, "", why),
        };
        Node { ready: ready.into(), message, ..Node::blank(to, found) }
    }

    /// One release as a tree shows it, without its branches.
    pub fn node(&self, r: &Ref) -> Node {
        let mut node = Node { waiting_on: self.waits_on(r), ..Node::blank(r, self.found(r)) };
        if let Some(hr) = self.get(r) {
            node.target = hr.target_cluster();
            (node.ready, node.message) = hr.ready_summary();
            node.reason =
                condition::find(hr.conditions(), condition::READY).map(|c| c.reason.clone()).unwrap_or_default();
            node.suspended = hr.suspended();
        }
        node
    }

    /// The tree around `root`: what it depends on and what depends on it, both transitively. Each release
    /// is expanded once per direction: later appearances are marked `repeated`, and an edge back to a
    /// release on the path from the root is marked `cycle` and recorded in [`Tree::cycles`].
    pub fn tree(&self, root: &Ref) -> Tree {
        let mut found = Findings::default();
        let mut release = self.expand(root, Direction::DependsOn, &mut Vec::new(), &mut BTreeSet::new(), &mut found);
        let up = self.expand(root, Direction::Dependents, &mut Vec::new(), &mut BTreeSet::new(), &mut found);
        release.dependents = up.dependents;
        Tree {
            release,
            cycles: found.cycles.into_iter().collect(),
            missing: found.missing.into_iter().collect(),
            listed_namespace: self.only_namespace.map(str::to_string),
        }
    }

    fn expand(
        &self,
        r: &Ref,
        direction: Direction,
        path: &mut Vec<Ref>,
        seen: &mut BTreeSet<Ref>,
        found: &mut Findings,
    ) -> Node {
        let mut node = self.node(r);
        if let Some(at) = path.iter().position(|p| p == r) {
            node.cycle = true;
            // Recorded in dependsOn order (each depends on the next), starting from its least member, so
            // that the same cycle met in both directions is one.
            let mut cycle = path[at..].to_vec();
            if direction == Direction::Dependents {
                cycle.reverse();
            }
            if let Some(start) = cycle.iter().enumerate().min_by_key(|(_, r)| *r).map(|(i, _)| i) {
                cycle.rotate_left(start);
            }
            found.cycles.insert(cycle);
            return node;
        }
        if !seen.insert(r.clone()) {
            node.repeated = true;
            return node;
        }
        if node.found == Found::False {
            found.missing.insert(r.clone());
        }
        path.push(r.clone());
        match direction {
            Direction::DependsOn => node.depends_on = self.depends_on_branches(r, path, seen, found),
            Direction::Dependents => {
                let next = self.dependents(r).to_vec();
                node.dependents = next.iter().map(|n| self.expand(n, direction, path, seen, found)).collect();
            }
        }
        path.pop();
        node
    }

    /// What `r` depends on, in the order written: each release expanded, each object of another kind a
    /// leaf (a missing one is recorded with the missing releases).
    fn depends_on_branches(
        &self,
        r: &Ref,
        path: &mut Vec<Ref>,
        seen: &mut BTreeSet<Ref>,
        found: &mut Findings,
    ) -> Vec<Node> {
        let Some(hr) = self.get(r) else { return Vec::new() };
        let mut branches = Vec::new();
        for (to, entry) in targets(hr) {
            if to.is_release() {
                branches.push(self.expand(&to, Direction::DependsOn, path, seen, found));
                continue;
            }
            let leaf = self.object_node(hr, entry, &to);
            if leaf.found == Found::False {
                found.missing.insert(to);
            }
            branches.push(leaf);
        }
        branches
    }
}

/// What `hr`'s dependsOn entries name, in the order written, each once (with the first entry naming it).
fn targets(hr: &HelmRelease) -> Vec<(Ref, &DependencyReference)> {
    let mut out: Vec<(Ref, &DependencyReference)> = Vec::new();
    for dep in &hr.spec.depends_on {
        let to = Ref::target(hr, dep);
        if !out.iter().any(|(seen, _)| *seen == to) {
            out.push((to, dep));
        }
    }
    out
}

/// The releases `hr` depends on, in the order written, each once (objects of other kinds are leaves, not
/// edges between releases).
fn depends_on(hr: &HelmRelease) -> Vec<Ref> {
    targets(hr).into_iter().map(|(to, _)| to).filter(Ref::is_release).collect()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    DependsOn,
    Dependents,
}

#[derive(Default)]
struct Findings {
    cycles: BTreeSet<Vec<Ref>>,
    missing: BTreeSet<Ref>,
}

/// One release in a tree, with its branches in one direction (the root has both); or an object of another
/// kind that a release depends on (a leaf, with `apiVersion` and `kind`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Node {
    pub namespace: String,
    pub name: String,
    /// An object of another kind (Flux 2.10's dependsOn): its apiVersion and kind; absent for a release.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Whether it exists; `Unknown` for a release in a namespace that could not be listed, or an object
    /// that cannot be followed (its `message` says why).
    pub found: Found,
    /// The Ready condition's status as `get` shows it (no condition reads False); empty when not found.
    pub ready: String,
    pub suspended: bool,
    /// The Ready condition's reason and message (helm-controller's DependencyNotReady says which
    /// dependency it waits for).
    pub reason: String,
    pub message: String,
    /// The direct dependencies that hold it back under helm-controller's rule.
    #[serde(default)]
    pub waiting_on: Vec<Ref>,
    /// Closes a cycle: the release is already on the path from the root (its branches are not repeated).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cycle: bool,
    /// Shown with its branches elsewhere in the same direction (reached by two paths).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub repeated: bool,
    /// Where the release is installed when not into the cluster the HelmRelease lives in
    /// (`spec.kubeConfig`: `secret/NAME`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<Node>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependents: Vec<Node>,
}

impl Node {
    /// What `r` is, with nothing known about it yet.
    fn blank(r: &Ref, found: Found) -> Node {
        Node {
            namespace: r.namespace.clone(),
            name: r.name.clone(),
            api_version: r.api_version.clone(),
            kind: r.kind.clone(),
            found,
            ready: String::new(),
            suspended: false,
            reason: String::new(),
            message: String::new(),
            waiting_on: Vec::new(),
            cycle: false,
            repeated: false,
            target: None,
            depends_on: Vec::new(),
            dependents: Vec::new(),
        }
    }

    fn reference(&self) -> Ref {
        Ref {
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            api_version: self.api_version.clone(),
            kind: self.kind.clone(),
        }
    }
}

/// What `kubectl cozyhr tree NAME` shows, and prints as JSON or YAML.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tree {
    /// The release asked for: `dependsOn` holds what it depends on, `dependents` what depends on it.
    pub release: Node,
    /// Each dependsOn cycle met, every release depending on the next and the last on the first.
    #[serde(default)]
    pub cycles: Vec<Vec<Ref>>,
    /// Releases (and objects of other kinds) depended on that do not exist.
    #[serde(default)]
    pub missing: Vec<Ref>,
    /// Set when only this namespace could be listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listed_namespace: Option<String>,
}

const HEADER: [&str; 6] = ["NAMESPACE", "NAME", "READY", "SUSPENDED", "WAITING ON", "MESSAGE"];

impl Tree {
    /// The tree as a table in the style of `kubectl tree`: the release, then a `depends on` and a
    /// `required by` branch, then a line per cycle and missing release.
    pub fn render(&self, paint: Paint) -> String {
        let mut t = Table::new(HEADER);
        row(&mut t, &self.release, "", self.listed_namespace.as_deref());
        let branches: Vec<(&str, Direction, &[Node])> = [
            ("depends on", Direction::DependsOn, self.release.depends_on.as_slice()),
            ("required by", Direction::Dependents, self.release.dependents.as_slice()),
        ]
        .into_iter()
        .filter(|(_, _, nodes)| !nodes.is_empty())
        .collect();
        for (i, (label, direction, nodes)) in branches.iter().enumerate() {
            let last = i + 1 == branches.len();
            t.row([String::new(), format!("{}{label}", if last { "└── " } else { "├── " })]);
            self.branch(&mut t, nodes, *direction, if last { "    " } else { "│   " });
        }
        let mut out = t.render_styled(paint, |header, cell| match header {
            "READY" => output::status_tone(cell),
            "SUSPENDED" if cell == "True" => Tone::Warn,
            "WAITING ON" if !cell.is_empty() => Tone::Warn,
            _ => Tone::Plain,
        });
        for cycle in &self.cycles {
            let mut names: Vec<String> = cycle.iter().map(Ref::to_string).collect();
            names.extend(cycle.first().map(Ref::to_string));
            let what = paint.tone("dependsOn cycle:", Tone::Bad);
            out.push_str(&format!(
                "{what} {} (while one of them is not Ready, none of them can become Ready)\n",
                names.join(" → ")
            ));
        }
        let mut elsewhere = Vec::new();
        collect_targets(&self.release, &mut elsewhere);
        elsewhere.sort();
        elsewhere.dedup();
        for (r, target) in elsewhere {
            out.push_str(&format!(
                "installs into another cluster: {r} (spec.kubeConfig, {target}); the HelmRelease lives in this one\n"
            ));
        }
        for missing in &self.missing {
            let what = paint.tone("missing:", Tone::Bad);
            out.push_str(&format!("{what} {missing} does not exist: what depends on it waits until it is created\n"));
        }
        out
    }

    /// The tree as `-o json` or `-o yaml` prints it (another format prints it as JSON).
    pub fn document(&self, format: Format) -> Result<String> {
        let value = serde_json::to_value(self).map_err(|e| Error::Failed(format!("encoding the tree: {e}")))?;
        get::encode(if format == Format::Yaml { Format::Yaml } else { Format::Json }, &value)
    }

    fn branch(&self, t: &mut Table, nodes: &[Node], direction: Direction, prefix: &str) {
        for (i, node) in nodes.iter().enumerate() {
            let last = i + 1 == nodes.len();
            row(t, node, &format!("{prefix}{}", if last { "└── " } else { "├── " }), self.listed_namespace.as_deref());
            let next = match direction {
                Direction::DependsOn => &node.depends_on,
                Direction::Dependents => &node.dependents,
            };
            self.branch(t, next, direction, &format!("{prefix}{}", if last { "    " } else { "│   " }));
        }
    }
}

/// Every release of the tree that installs into another cluster, with where.
fn collect_targets(node: &Node, out: &mut Vec<(String, String)>) {
    if let Some(target) = &node.target {
        out.push((node.reference().to_string(), target.clone()));
    }
    for n in node.depends_on.iter().chain(&node.dependents) {
        collect_targets(n, out);
    }
}

fn row(t: &mut Table, node: &Node, prefix: &str, listed: Option<&str>) {
    let here = node.reference();
    let mut name = format!("{prefix}{}", here.local_name());
    if node.cycle {
        name.push_str(" (cycle)");
    } else if node.repeated {
        name.push_str(" (see above)");
    }
    let (ready, suspended, message) = match (node.found, here.is_release()) {
        (Found::True, true) => {
            let message = one_line(&node.message);
            let message = if node.reason.is_empty() { message } else { format!("{}: {message}", node.reason) };
            (node.ready.clone(), if node.suspended { "True" } else { "False" }.to_string(), message)
        }
        // An object of another kind is never suspended; its message is the verdict, or why it cannot be
        // followed.
        (Found::True, false) => (node.ready.clone(), "-".into(), one_line(&node.message)),
        (Found::Unknown, false) => ("-".into(), "-".into(), one_line(&node.message)),
        (Found::False, _) => ("-".into(), "-".into(), "not found: helm-controller waits until it is created".into()),
        (Found::Unknown, true) => (
            "-".into(),
            "-".into(),
            format!("not listed (only namespace {} could be listed)", listed.unwrap_or_default()),
        ),
    };
    let waiting: Vec<String> = node.waiting_on.iter().map(|r| r.seen_from(&here.namespace)).collect();
    t.row([node.namespace.clone(), name, ready, suspended, waiting.join(", "), message]);
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A release that depends on another, as `status` lists it: whether it waits on that release right now.
#[derive(Clone, Debug, PartialEq)]
pub struct Dependent {
    pub namespace: String,
    pub name: String,
    pub ready: String,
    pub suspended: bool,
    /// It is held back by the release it depends on (that one is not Ready by helm-controller's rule).
    pub waiting: bool,
    pub message: String,
}

impl Graph<'_> {
    /// The releases that depend on `r` directly, and which of them it holds back.
    pub fn dependents_of(&self, r: &Ref) -> Vec<Dependent> {
        self.dependents(r)
            .iter()
            .map(|d| {
                let node = self.node(d);
                Dependent {
                    waiting: node.waiting_on.contains(r),
                    namespace: node.namespace,
                    name: node.name,
                    ready: node.ready,
                    suspended: node.suspended,
                    message: if node.reason.is_empty() {
                        node.message
                    } else {
                        format!("{}: {}", node.reason, node.message)
                    },
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A HelmRelease in `ns` with `ready` ("True", "False", or "" for no status) depending on `deps`
    /// (`name` or `ns/name`).
    fn hr(ns: &str, name: &str, ready: &str, deps: &[&str]) -> HelmRelease {
        let deps: Vec<serde_json::Value> = deps
            .iter()
            .map(|d| match d.split_once('/') {
                Some((ns, name)) => serde_json::json!({"name": name, "namespace": ns}),
                None => serde_json::json!({"name": d}),
            })
            .collect();
        let mut obj = serde_json::json!({
            "metadata": {"name": name, "namespace": ns, "generation": 1},
            "spec": {"dependsOn": deps},
        });
        if !ready.is_empty() {
            let reason = if ready == "True" { "InstallSucceeded" } else { "InstallFailed" };
            obj["status"] = serde_json::json!({"observedGeneration": 1, "conditions": [
                {"type": "Ready", "status": ready, "reason": reason, "message": format!("{name} {ready}")}]});
        }
        serde_json::from_value(obj).expect("fixture parses")
    }

    fn r(ns: &str, name: &str) -> Ref {
        Ref::new(ns, name)
    }

    fn names(nodes: &[Node]) -> Vec<String> {
        nodes.iter().map(|n| n.reference().to_string()).collect()
    }

    /// HelmRelease `name` in `ns` with these dependsOn entries, as written.
    fn hr_entries(ns: &str, name: &str, ready: &str, entries: serde_json::Value) -> HelmRelease {
        let mut h = hr(ns, name, ready, &[]);
        h.spec.depends_on = serde_json::from_value(entries).expect("entries parse");
        h
    }

    fn object(api_version: &str, kind: &str, ns: &str, name: &str) -> Ref {
        Ref { api_version: Some(api_version.into()), kind: Some(kind.into()), ..r(ns, name) }
    }

    /// Release `web` of `apps` and what it depends on: release `db` twice (by bare name, and spelt out in
    /// full), then objects of other kinds, each as it was read: ConfigMap `settings` (found, with a
    /// `readyExpr`), Deployment `api` (found, not available), ConfigMap `gone` (missing, existence only)
    /// and a Widget the cluster does not serve. `portal` depends on web, and a HelmRelease named like the
    /// ConfigMap is there to show it is not what web depends on.
    fn web_with_objects() -> ([HelmRelease; 4], Lookups) {
        use crate::flux::dependency::Lookup;
        use serde_json::json;
        let web = hr_entries(
            "apps",
            "web",
            "False",
            json!([
                {"name": "db"},
                {"apiVersion": "v1", "kind": "ConfigMap", "name": "settings", "namespace": "apps", "readyExpr": "true"},
                {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api", "namespace": "apps"},
                {"apiVersion": "v1", "kind": "ConfigMap", "name": "gone", "namespace": "apps", "ready": false},
                {"apiVersion": "example.com/v1", "kind": "Widget", "name": "w", "namespace": "apps"},
                {"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "name": "db"},
            ]),
        );
        let items = [
            hr("apps", "db", "True", &[]),
            web,
            hr("apps", "settings", "False", &[]),
            hr("apps", "portal", "", &["web"]),
        ];
        let unavailable = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api"},
                                 "spec": {"replicas": 1}, "status": {"replicas": 1, "updatedReplicas": 1}});
        let objects: Lookups = [
            (
                object("v1", "ConfigMap", "apps", "settings"),
                Lookup::Found(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}})),
            ),
            (object("apps/v1", "Deployment", "apps", "api"), Lookup::Found(unavailable)),
            (object("v1", "ConfigMap", "apps", "gone"), Lookup::Missing),
            (
                object("example.com/v1", "Widget", "apps", "w"),
                Lookup::Unfollowed("cannot be followed: the cluster does not serve example.com/v1 Widget".into()),
            ),
        ]
        .into_iter()
        .collect();
        (items, objects)
    }

    /// web's tree, the objects read as [`web_with_objects`] has them.
    fn web_tree() -> Tree {
        let (items, objects) = web_with_objects();
        Graph::new(&items, None).with_objects(objects).tree(&r("apps", "web"))
    }

    #[test]
    fn objects_of_other_kinds_are_waited_on_but_are_not_edges() {
        let (items, objects) = web_with_objects();
        let graph = Graph::new(&items, None).with_objects(objects);
        // Only releases are edges: the entry spelt out in full is the same release as the bare name.
        assert_eq!(graph.depends_on(&r("apps", "web")), [r("apps", "db")]);
        assert_eq!(graph.dependents(&r("apps", "settings")), [] as [Ref; 0]);
        // Not available, and missing: web waits on both; what cannot be followed is not known to hold it.
        assert_eq!(
            graph.waits_on(&r("apps", "web")),
            [object("apps/v1", "Deployment", "apps", "api"), object("v1", "ConfigMap", "apps", "gone")]
        );
    }

    #[test]
    fn objects_of_other_kinds_are_leaves_judged_as_proposed() {
        let tree = web_tree();
        assert_eq!(
            names(&tree.release.depends_on),
            [
                "apps/db",
                "ConfigMap/apps/settings",
                "apps/v1 Deployment/apps/api",
                "ConfigMap/apps/gone",
                "example.com/v1 Widget/apps/w"
            ]
        );
        assert!(tree.release.depends_on[1..].iter().all(|n| n.depends_on.is_empty() && n.dependents.is_empty()));
        assert_eq!(tree.missing, [object("v1", "ConfigMap", "apps", "gone")]);
        assert_eq!(
            tree.render(Paint(false)),
            "NAMESPACE   NAME                              READY   SUSPENDED   WAITING ON                               MESSAGE\n\
             apps        web                               False   False       apps/v1 Deployment/api, ConfigMap/gone   InstallFailed: web False\n\
             \x20           ├── depends on\n\
             apps        │   ├── db                        True    False                                                InstallSucceeded: db True\n\
             apps        │   ├── ConfigMap/settings        True    -                                                    readyExpr is true: true\n\
             apps        │   ├── apps/v1 Deployment/api    False   -                                                    dependency 'apps/v1 Deployment/apps/api' is not ready: status InProgress: Available: 0/1\n\
             apps        │   ├── ConfigMap/gone            -       -                                                    not found: helm-controller waits until it is created\n\
             apps        │   └── example.com/v1 Widget/w   -       -                                                    cannot be followed: the cluster does not serve example.com/v1 Widget\n\
             \x20           └── required by\n\
             apps            └── portal                    False   False       web                                      waiting to be reconciled\n\
             missing: ConfigMap/apps/gone does not exist: what depends on it waits until it is created\n"
        );
    }

    #[test]
    fn objects_of_other_kinds_keep_their_kind_in_the_json() {
        let tree = web_tree();
        let json = tree.document(Format::Json).expect("encodes");
        assert_eq!(serde_json::from_str::<Tree>(&json).expect("decodes"), tree);
        let value: serde_json::Value = serde_json::from_str(&json).expect("JSON");
        let down = &value["release"]["dependsOn"];
        assert!(down[0].get("kind").is_none() && down[0].get("apiVersion").is_none(), "{down:#}");
        assert_eq!((down[2]["apiVersion"].as_str(), down[2]["kind"].as_str()), (Some("apps/v1"), Some("Deployment")));
        assert_eq!((down[4]["found"].as_str(), down[4]["ready"].as_str()), (Some("Unknown"), Some("")));
        assert_eq!(
            value["release"]["waitingOn"][0],
            serde_json::json!({"namespace": "apps", "name": "api", "apiVersion": "apps/v1", "kind": "Deployment"})
        );
    }

    #[test]
    fn objects_never_read_hold_nothing_back() {
        // Objects that were never read hold nothing back and say so; the releases are judged as ever.
        let (items, _) = web_with_objects();
        let unread = Graph::new(&items, None);
        assert!(unread.waits_on(&r("apps", "web")).is_empty());
        assert_eq!(unread.tree(&r("apps", "web")).release.depends_on[2].message, "not read");
    }

    #[test]
    fn a_ready_expr_replaces_the_built_in_rule() {
        let with_expr = |expr: &str| {
            let mut b = hr("x", "b", "", &["a"]);
            b.spec.depends_on[0].ready_expr = Some(expr.into());
            b
        };
        // a is not Ready, but the expression looks elsewhere: it alone decides.
        let mut a = hr("x", "a", "False", &[]);
        a.metadata.annotations = Some([("stage".to_string(), "done".to_string())].into());
        let b = with_expr("dep.metadata.annotations.stage == 'done' && self.metadata.name == 'b'");
        assert!(dependency_verdict(&b, &b.spec.depends_on[0], &a).is_ok());
        let b = with_expr("dep.metadata.annotations.stage == 'later'");
        assert_eq!(
            dependency_verdict(&b, &b.spec.depends_on[0], &a),
            Err("dependency 'x/a' is not ready according to readyExpr eval".into())
        );
        assert_eq!(Graph::new(&[a.clone(), b.clone()], None).waits_on(&r("x", "b")), [r("x", "a")]);
        let b = with_expr("dep.status.nothing == 1");
        assert!(dependency_verdict(&b, &b.spec.depends_on[0], &a).unwrap_err().contains("failed"));
        let b = with_expr("dep.status ==");
        assert!(dependency_verdict(&b, &b.spec.depends_on[0], &a).unwrap_err().contains("InvalidCELExpression"));
    }

    #[test]
    fn a_chain_shows_who_waits_on_whom_both_ways() {
        // c depends on b, b on a; a failed.
        let items = [hr("x", "a", "False", &[]), hr("x", "b", "False", &["a"]), hr("x", "c", "", &["b"])];
        let graph = Graph::new(&items, None);
        let tree = graph.tree(&r("x", "b"));
        assert_eq!(tree.release.waiting_on, [r("x", "a")]);
        assert_eq!(names(&tree.release.depends_on), ["x/a"]);
        assert_eq!(names(&tree.release.dependents), ["x/c"]);
        assert_eq!(tree.release.dependents[0].waiting_on, [r("x", "b")]);
        assert!(tree.cycles.is_empty() && tree.missing.is_empty());

        let from_a = graph.tree(&r("x", "a"));
        assert!(from_a.release.waiting_on.is_empty());
        let b = &from_a.release.dependents[0];
        assert_eq!((b.name.as_str(), names(&b.dependents)), ("b", vec!["x/c".to_string()]));
        let dependents = graph.dependents_of(&r("x", "a"));
        assert_eq!(dependents.len(), 1);
        assert!(dependents[0].waiting, "{dependents:?}");
        assert_eq!(dependents[0].message, "InstallFailed: b False");

        // A Ready dependency at its current generation holds nothing back; an unobserved one does.
        let mut newer = hr("x", "a", "True", &[]);
        let items = [newer.clone(), hr("x", "b", "True", &["a"])];
        assert!(Graph::new(&items, None).waits_on(&r("x", "b")).is_empty());
        newer.metadata.generation = Some(2);
        let items = [newer, hr("x", "b", "True", &["a"])];
        assert_eq!(Graph::new(&items, None).waits_on(&r("x", "b")), [r("x", "a")]);
    }

    #[test]
    fn dependencies_cross_namespaces_and_default_to_their_dependent_s() {
        let items = [
            hr("infra", "cni", "True", &[]),
            hr("apps", "db", "True", &["infra/cni"]),
            hr("apps", "web", "False", &["db", "infra/cni"]),
            // Same name, other namespace: not a dependency of web.
            hr("other", "db", "False", &[]),
        ];
        let graph = Graph::new(&items, None);
        assert_eq!(graph.depends_on(&r("apps", "web")), [r("apps", "db"), r("infra", "cni")]);
        assert_eq!(graph.dependents(&r("infra", "cni")), [r("apps", "db"), r("apps", "web")]);
        let tree = graph.tree(&r("infra", "cni"));
        // web is reached from cni directly and through db: shown once with its branches.
        let up = &tree.release.dependents;
        assert_eq!(names(up), ["apps/db", "apps/web"]);
        assert_eq!(names(&up[0].dependents), ["apps/web"]);
        assert!(!up[0].dependents[0].repeated && up[1].repeated, "{up:?}");
        assert!(graph.waits_on(&r("apps", "web")).is_empty());
    }

    #[test]
    fn missing_dependencies_are_flagged_and_waited_on() {
        let items = [hr("x", "b", "False", &["a", "y/gone"])];
        let graph = Graph::new(&items, None);
        let tree = graph.tree(&r("x", "b"));
        assert_eq!(tree.missing, [r("x", "a"), r("y", "gone")]);
        assert_eq!(tree.release.waiting_on, [r("x", "a"), r("y", "gone")]);
        assert_eq!(tree.release.depends_on[0].found, Found::False);
        let text = tree.render(Paint(false));
        assert!(text.contains("missing: x/a does not exist"), "{text}");
        assert!(text.contains("-       -           ") && text.contains("not found"), "{text}");

        // Only x could be listed: y/gone may well exist.
        let graph = Graph::new(&items, Some("x"));
        let tree = graph.tree(&r("x", "b"));
        assert_eq!(tree.missing, [r("x", "a")]);
        assert_eq!(tree.release.depends_on[1].found, Found::Unknown);
        assert_eq!(tree.release.waiting_on, [r("x", "a")]);
        assert!(tree.render(Paint(false)).contains("not listed (only namespace x could be listed)"));
    }

    #[test]
    fn cycles_are_flagged_once_whichever_way_they_are_met() {
        let items = [hr("x", "a", "False", &["b"]), hr("x", "b", "False", &["a"]), hr("x", "c", "", &["a"])];
        let graph = Graph::new(&items, None);
        let tree = graph.tree(&r("x", "b"));
        assert_eq!(tree.cycles, [vec![r("x", "a"), r("x", "b")]]);
        let a = &tree.release.depends_on[0];
        assert_eq!((a.name.as_str(), a.cycle), ("a", false));
        assert!(a.depends_on[0].cycle && a.depends_on[0].depends_on.is_empty());
        // Up: a depends on b, c on a, b on a again (the cycle).
        assert_eq!(names(&tree.release.dependents), ["x/a"]);
        assert_eq!(names(&tree.release.dependents[0].dependents), ["x/b", "x/c"]);
        assert!(tree.release.dependents[0].dependents[0].cycle);
        let text = tree.render(Paint(false));
        assert!(text.contains("dependsOn cycle: x/a → x/b → x/a"), "{text}");

        // A release that depends on itself.
        let items = [hr("x", "self", "", &["self"])];
        let tree = Graph::new(&items, None).tree(&r("x", "self"));
        assert_eq!(tree.cycles, [vec![r("x", "self")]]);
    }

    #[test]
    fn renders_a_tree_and_its_json_reads_back() {
        let items = [
            hr("x", "a", "False", &[]),
            hr("x", "b", "False", &["a"]),
            hr("x", "c", "", &["b"]),
            hr("x", "d", "True", &["b"]),
        ];
        let tree = Graph::new(&items, None).tree(&r("x", "b"));
        assert_eq!(
            tree.render(Paint(false)),
            "NAMESPACE   NAME              READY   SUSPENDED   WAITING ON   MESSAGE\n\
             x           b                 False   False       a            InstallFailed: b False\n\
             \x20           ├── depends on\n\
             x           │   └── a         False   False                    InstallFailed: a False\n\
             \x20           └── required by\n\
             x               ├── c         False   False       b            waiting to be reconciled\n\
             x               └── d         True    False       b            InstallSucceeded: d True\n"
        );
        let json = tree.document(Format::Json).expect("encodes");
        let yaml = tree.document(Format::Yaml).expect("encodes");
        assert_eq!(serde_saphyr::from_str::<Tree>(&yaml).expect("decodes"), tree);
        assert_eq!(serde_json::from_str::<Tree>(&json).expect("decodes"), tree);
        let value: serde_json::Value = serde_json::from_str(&json).expect("JSON");
        assert_eq!(value["release"]["dependsOn"][0]["name"], "a");
        assert_eq!(value["release"]["dependents"][1]["waitingOn"][0]["name"], "b");
        assert_eq!(value["cycles"], serde_json::json!([]));
    }

    #[test]
    fn dependency_rule_needs_observed_generation_and_ready_true() {
        let dep = |generation: i64, observed: i64, ready: &str| -> HelmRelease {
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": "dep", "namespace": "a", "generation": generation},
                "status": {"observedGeneration": observed,
                           "conditions": [{"type": "Ready", "status": ready, "message": "m"}]}
            }))
            .expect("fixture parses")
        };
        assert_eq!(dependency_ready(&dep(2, 2, "True")), Ok("m".into()));
        assert!(dependency_ready(&dep(3, 2, "True")).unwrap_err().contains("not yet observed"));
        assert!(dependency_ready(&dep(2, 2, "False")).unwrap_err().contains("Ready=False"));
        let none = hr("a", "d", "", &[]);
        assert!(dependency_ready(&none).is_err());
    }
}
