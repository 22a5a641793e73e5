//! What `apply` would change, as a [`Plan`]: desired objects (the Flux-exact rendering) against either the
//! live cluster (default) or the stored Helm release (`--against release`, like helm-diff).
//!
//! Against the cluster each desired object goes through a server-side apply dry run as helm-controller's
//! field manager, so server defaulting is not noise and hand edits (drift) show. Objects the stored release
//! has but the rendering no longer does are removals, compared with what is live.

pub mod attention;
pub mod diff;
pub mod drawn;
pub mod drift;
mod git_sides;
pub mod release_diff;
pub mod request;
pub mod two_sides;

use serde_json::Value;

use crate::cluster::Cluster;
use crate::cluster::live::LiveObjects;
use crate::cluster::manifests::{
    ClusterScoped, Manifest, ObjectId, ParsedStream, default_namespaces, parse_manifests_after,
};
use crate::compare::diff::{Plan, PlanOptions, Sides, plan_sides, plan_with};
use crate::support::error::{Error, Result};

/// Which side `desired` is compared with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Against {
    /// The live objects, after a server-side dry run of the desired ones.
    #[default]
    Live,
    /// The manifest stored in the latest Helm release revision.
    Release,
}

fn manifest_error(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Invalid { what: what.into(), reason: e.to_string() }
}

/// Parses a rendered stream and gives namespaced objects without a namespace the release namespace;
/// `scoped` says which kinds are cluster-scoped (the cluster's discovery where a cluster is used:
/// [`crate::cluster::discovery::ClusterApis::cluster_scoped`]).
pub fn desired_objects(rendered: &str, release_namespace: &str, scoped: &ClusterScoped) -> Result<Vec<Manifest>> {
    desired_objects_after(rendered, release_namespace, scoped, &ParsedStream::default())
}

/// The objects a rendering compares by when it is compared with another rendering (a chart at a Git ref,
/// a review): [`desired_objects`], hooks included as objects, test hooks left out as in every diff.
pub fn rendered_objects(
    rendered: &str,
    release_namespace: &str,
    scoped: &ClusterScoped,
) -> Result<Vec<(ObjectId, Value)>> {
    let (plain, hooks) = split_hooks(desired_objects(rendered, release_namespace, scoped)?);
    Ok(plain.into_iter().chain(hooks).map(Manifest::into_pair).collect())
}

/// [`desired_objects`], reusing the objects of documents the stored release has word for word.
fn desired_objects_after(
    rendered: &str,
    release_namespace: &str,
    scoped: &ClusterScoped,
    stored: &ParsedStream,
) -> Result<Vec<Manifest>> {
    let mut manifests = parse_manifests_after(rendered, stored).map_err(|e| manifest_error("rendered manifests", e))?;
    default_namespaces(&mut manifests, release_namespace, |g, k| scoped.contains(g, k));
    Ok(manifests)
}

/// Objects of a stored release manifest, with the same namespace defaulting.
fn stored_objects(manifest: &str, release_namespace: &str, scoped: &ClusterScoped) -> Result<Vec<Manifest>> {
    Ok(stored_stream(manifest, release_namespace, scoped)?.manifests)
}

/// `stored_objects` with the text of each document kept.
fn stored_stream(manifest: &str, release_namespace: &str, scoped: &ClusterScoped) -> Result<ParsedStream> {
    let mut parsed = ParsedStream::parse(manifest).map_err(|e| manifest_error("stored release manifest", e))?;
    default_namespaces(&mut parsed.manifests, release_namespace, |g, k| scoped.contains(g, k));
    Ok(parsed)
}

/// `helm cozy diff`: the release rendered as helm-controller would render it on this cluster (one
/// discovery, shared by the render's capabilities and the live reads), compared with the cluster or
/// with the stored release.
///
/// `seen` is this command's discovery and helm-controller's next action on the release, asked for as early
/// as the caller can, and the helm started meanwhile.
pub async fn diff(
    seen: crate::desired::Seen,
    helm: &crate::render::Helm,
    desired: &crate::desired::Desired,
    against: Against,
    options: PlanOptions,
    self_exe: &std::path::Path,
) -> Result<Plan> {
    let view = desired.cluster_view(&seen);
    let crate::desired::Seen { apis, early, target, action } = seen;
    // Live objects and the stored release are the release's own cluster's.
    let cluster = &target.cluster;
    let live = LiveObjects::new(cluster, apis);
    let scoped = live.apis().cluster_scoped();
    // The stored release is read (and its manifest decoded and parsed) while helm renders.
    let release = (desired.release_name.as_str(), desired.release_namespace.as_str());
    // Where helm-controller moves the release, the one it uninstalls is what the new one replaces: its
    // objects the new one lacks are removals. Its Helm looks for the objects its manifest gives no
    // namespace in the new release namespace, as they are read here (see crate::desired::release_target).
    let stored = match desired.target_move() {
        Some(m) => m.uninstall(),
        None => crate::desired::release_target::Release::of(&desired.hr),
    };
    // The live objects of the deployed release's kinds are listed then too (see LiveObjects::prefetch).
    let read_ahead = async {
        let previous =
            previous_release(cluster, &stored.storage_namespace, &stored.name, &stored.namespace, &scoped).await?;
        if against == Against::Live {
            let objects: Vec<&Value> = previous.objects.manifests.iter().map(|m| &m.object).collect();
            live.prefetch(&objects).await;
        }
        Ok::<_, Error>(previous)
    };
    let (rendered, previous) = tokio::try_join!(
        async {
            desired.render_with_crds(helm, &view, self_exe, early).await.map_err(|e| Error::Failed(e.to_string()))
        },
        read_ahead
    )?;
    let objects = desired_objects_after(&rendered.manifests, release.1, &scoped, &previous.objects)?;
    tracing::debug!("rendered objects parsed");
    match against {
        Against::Live => {
            // The chart's CRDs as helm-controller would apply them before Helm runs (never removed).
            let installed = matches!(action, crate::cluster::helmstore::NextAction::Upgrade { .. });
            let non_crds = desired.controller.rules().creates_non_crds_from_crds_dir;
            let crds =
                crate::desired::crds::to_apply(&crate::desired::crds::objects(&rendered.crds)?, &desired.hr, non_crds);
            let policy = crate::desired::crds::policy(&desired.hr, installed)?;
            let method = crate::desired::apply_method::decide(&desired.hr, installed, previous.last.as_ref());
            let crds = crate::desired::crds::observe(&live, &crds, policy, method).await?;
            against_live(&live, release, objects, previous, crds, options, &desired.hr).await
        }
        Against::Release => against_release(objects, previous, options),
    }
}

/// `diff --plain`: the chart rendered alone (`rendered`, see [`crate::resolve::Resolver::render_plain`])
/// against the stored Helm release `release` in the cluster's namespace, as Go cozyhr's `diff --plain`
/// compares them: no HelmRelease is read, nothing is dry-run.
pub async fn plain_against_release(
    cluster: &Cluster,
    rendered: &str,
    release: &str,
    options: PlanOptions,
) -> Result<Plan> {
    let ns = cluster.namespace.as_str();
    let scoped = crate::cluster::discovery::discover(cluster).await?.cluster_scoped();
    let previous = previous_release(cluster, ns, release, ns, &scoped).await?;
    let objects = desired_objects(rendered, ns, &scoped)?;
    against_release(objects, previous, options)
}

/// The plan against the stored release (its manifest and hooks): no cluster reads beyond the release.
fn against_release(desired: Vec<Manifest>, previous: Previous, options: PlanOptions) -> Result<Plan> {
    let (plain, hooks) = split_hooks(desired);
    plan_with(
        plain.into_iter().chain(hooks).map(Manifest::into_pair).collect(),
        previous.objects.manifests.into_iter().chain(previous.hooks).map(Manifest::into_pair).collect(),
        options,
    )
    .map_err(|e| manifest_error("diff", e))
}

/// The latest stored release, as far as the diff needs it.
#[derive(Debug, Default)]
pub struct Previous {
    /// The objects of its manifest (see `stored_objects`), with the text of each document.
    pub objects: ParsedStream,
    /// Its hooks but tests, which Helm stores apart from the manifest.
    pub hooks: Vec<Manifest>,
    /// Whether it is `deployed`: its manifest is then what was last applied to every object.
    pub deployed: bool,
    /// The revision itself, for how helm-controller would apply the next one.
    pub last: Option<crate::cluster::helmstore::StoredRelease>,
}

/// Helm's hook annotation.
const HOOK_ANNOTATION: &str = "helm.sh/hook";

/// The hook events of an object (`helm.sh/hook`, comma-separated), empty for a plain object.
fn hook_events(obj: &Value) -> Vec<&str> {
    obj.pointer("/metadata/annotations")
        .and_then(|a| a.get(HOOK_ANNOTATION))
        .and_then(Value::as_str)
        .map(|h| h.split(',').map(str::trim).filter(|e| !e.is_empty()).collect())
        .unwrap_or_default()
}

/// A hook that only `helm test` runs: `apply` never touches it.
fn is_test_hook(events: &[&str]) -> bool {
    !events.is_empty() && events.iter().all(|e| matches!(*e, "test" | "test-success" | "test-failure"))
}

/// Splits rendered objects into plain objects and hooks, leaving out test hooks (as helm-diff does
/// without `--include-tests`). Hooks are actions Helm runs, often deleted afterwards, so the diff compares
/// them with the hooks of the stored release rather than with the cluster.
pub fn split_hooks(objects: Vec<Manifest>) -> (Vec<Manifest>, Vec<Manifest>) {
    let mut plain = Vec::new();
    let mut hooks = Vec::new();
    for m in objects {
        let events = hook_events(&m.object);
        if events.is_empty() {
            plain.push(m);
        } else if !is_test_hook(&events) {
            hooks.push(m);
        }
    }
    (plain, hooks)
}

/// The plan against the cluster: `desired` after a server dry run vs. live; objects of the previous
/// release that are no longer desired are removals of what is live. Hooks are compared with the previous
/// release's hooks ([`split_hooks`]).
async fn against_live(
    live: &LiveObjects<'_>,
    release: (&str, &str),
    desired: Vec<Manifest>,
    previous: Previous,
    crds: Vec<(ObjectId, Value, Option<Value>)>,
    options: PlanOptions,
    hr: &crate::flux::HelmRelease,
) -> Result<Plan> {
    let (mut desired, desired_hooks) = split_hooks(desired);
    // Whether each desired object is exactly what the deployed release applied. Compared before Helm's
    // ownership metadata is added below, which would be the same on both sides.
    let as_applied: Vec<bool> = if previous.deployed {
        let applied: std::collections::HashMap<&ObjectId, &Value> =
            previous.objects.manifests.iter().map(|m| (&m.id, &m.object)).collect();
        desired.iter().map(|m| applied.get(&m.id) == Some(&&m.object)).collect()
    } else {
        vec![false; desired.len()]
    };
    for m in &mut desired {
        crate::cluster::manifests::add_helm_ownership(&mut m.object, release.0, release.1);
    }
    let drift_ignored = drift_ignored_paths(hr, &desired);
    let objects: Vec<&Value> = desired.iter().map(|m| &m.object).collect();
    let observed = live.observe_all(&objects, &as_applied).await?;
    let mut sides = Sides::default();
    for (m, o) in desired.iter().zip(observed) {
        match (o.desired_on_server, o.live) {
            (None, _) => sides.unchanged.push(m.id.clone()),
            (Some(d), l) => {
                sides.desired.push((m.id.clone(), d));
                sides.live.extend(l.map(|l| (m.id.clone(), l)));
            }
        }
    }
    let wanted: std::collections::BTreeSet<&ObjectId> = desired.iter().map(|m| &m.id).collect();
    let mut gone: Vec<&Manifest> = Vec::new();
    for m in previous.objects.manifests.iter().filter(|m| !wanted.contains(&m.id)) {
        if live.serves(&m.object) {
            gone.push(m);
        } else {
            // Its kind is gone from the cluster (a CRD deleted), and the objects with it; the release still
            // lists the object, and apply drops it from the release: a removal of what the release holds.
            sides.live.push((m.id.clone(), m.object.clone()));
        }
    }
    let gone_objects: Vec<&Value> = gone.iter().map(|m| &m.object).collect();
    for (m, l) in gone.iter().zip(live.get_all(&gone_objects).await?) {
        if let Some(l) = l {
            sides.live.push((m.id.clone(), l));
        }
    }
    for (id, on_server, current) in crds {
        sides.desired.push((id.clone(), on_server));
        sides.live.extend(current.map(|l| (id, l)));
    }
    sides.desired.extend(desired_hooks.into_iter().map(Manifest::into_pair));
    sides.live.extend(previous.hooks.into_iter().map(Manifest::into_pair));
    let plan = plan_sides(sides, options).map_err(|e| manifest_error("diff", e)).map(|mut plan| {
        plan.mark_drift_ignored(&drift_ignored);
        plan
    });
    // Freeing thousands of parsed objects takes longer than printing the plan: done beside it.
    crate::support::par::drop_later((desired, previous.objects));
    plan
}

/// The paths `spec.driftDetection.ignore` leaves out of drift detection for each desired object (as
/// Helm applies it, so as helm-controller selects it), for the diff to mark the changes under them.
/// Nothing when the rules do not compile: helm-controller then compares nothing at all, which is for
/// `kubectl cozyhr drift` to say.
fn drift_ignored_paths(
    hr: &crate::flux::HelmRelease,
    desired: &[Manifest],
) -> std::collections::HashMap<ObjectId, Vec<String>> {
    let rules = crate::compare::drift::DriftDetection::of(&hr.spec)
        .and_then(|d| crate::compare::drift::IgnoreRules::compile(&d.ignore))
        .inspect_err(|e| tracing::debug!(error = %e, "drift ignore rules not used for marking"));
    let Ok(rules) = rules else { return Default::default() };
    desired
        .iter()
        .filter_map(|m| {
            let paths = rules.paths_for(&m.object);
            (!paths.is_empty()).then(|| (m.id.clone(), paths))
        })
        .collect()
}

/// The latest stored release revision, if any, as [`Previous`] for the diff.
async fn previous_release(
    cluster: &Cluster,
    storage_namespace: &str,
    release: &str,
    release_namespace: &str,
    scoped: &ClusterScoped,
) -> Result<Previous> {
    let Some(r) = crate::cluster::helmstore::latest(cluster, storage_namespace, release).await? else {
        return Ok(Previous::default());
    };
    let mut hooks = Vec::new();
    for h in &r.hooks {
        if !is_test_hook(&h.events.iter().map(String::as_str).collect::<Vec<_>>()) {
            hooks.extend(stored_objects(&format!("# Source: {}\n{}", h.path, h.manifest), release_namespace, scoped)?);
        }
    }
    let objects = stored_stream(&r.manifest, release_namespace, scoped)?;
    let deployed = r.status == "deployed";
    // The manifest is parsed above; the rest of the revision is kept for its apply method.
    let last = Some(crate::cluster::helmstore::StoredRelease { manifest: String::new(), ..r });
    Ok(Previous { objects, hooks, deployed, last })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_are_split_off_and_tests_left_out() {
        let stream = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n---\n\
                      apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hook\n  annotations:\n    helm.sh/hook: pre-install, post-upgrade\n---\n\
                      apiVersion: v1\nkind: Pod\nmetadata:\n  name: test\n  annotations:\n    helm.sh/hook: test-success,test\n---\n\
                      apiVersion: v1\nkind: Pod\nmetadata:\n  name: both\n  annotations:\n    helm.sh/hook: test,post-install\n";
        let (plain, hooks) = split_hooks(stored_objects(stream, "ns", &ClusterScoped::builtin()).unwrap());
        let names = |v: &[Manifest]| v.iter().map(|m| m.id.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&plain), ["plain"]);
        assert_eq!(names(&hooks), ["hook", "both"]);
    }
}
