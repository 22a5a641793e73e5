//! What `apply` would change, as a [`Plan`]: desired objects (the Flux-exact rendering) against either the
//! live cluster (default) or the stored Helm release (`--against release`, like helm-diff).
//!
//! Against the cluster each desired object goes through a server-side apply dry run as helm-controller's
//! field manager, so server defaulting is not noise and hand edits (drift) show. Objects the stored release
//! has but the rendering no longer does are removals, compared with what is live.

use serde_json::Value;

use crate::cluster::Cluster;
use crate::diff::{Plan, PlanOptions, plan_with};
use crate::error::{Error, Result};
use crate::live::LiveObjects;
use crate::manifests::{ClusterScoped, Manifest, ObjectId, parse_manifests};

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

/// Parses a rendered stream and gives namespaced objects without a namespace the release namespace, with
/// the cluster's own idea of which kinds are cluster-scoped when a cluster is at hand.
pub async fn desired_objects(
    rendered: &str,
    release_namespace: &str,
    live: Option<&LiveObjects<'_>>,
) -> Result<Vec<Manifest>> {
    let mut manifests = parse_manifests(rendered).map_err(|e| manifest_error("rendered manifests", e))?;
    let builtin = ClusterScoped::builtin();
    for m in &mut manifests {
        let cluster_scoped = match live {
            Some(l) => l.cluster_scoped(&m.object).await?,
            None => builtin.contains(&m.id.group, &m.id.kind),
        };
        m.default_namespace(release_namespace, cluster_scoped);
    }
    Ok(manifests)
}

/// Objects of a stored release manifest, with the same namespace defaulting.
pub fn stored_objects(manifest: &str, release_namespace: &str) -> Result<Vec<Manifest>> {
    let mut manifests = parse_manifests(manifest).map_err(|e| manifest_error("stored release manifest", e))?;
    let builtin = ClusterScoped::builtin();
    for m in &mut manifests {
        let cluster_scoped = builtin.contains(&m.id.group, &m.id.kind);
        m.default_namespace(release_namespace, cluster_scoped);
    }
    Ok(manifests)
}

/// The plan against the stored release (its manifest and hooks): no cluster reads beyond the release.
pub fn against_release(desired: Vec<Manifest>, previous: Previous, options: PlanOptions) -> Result<Plan> {
    let (plain, hooks) = split_hooks(desired);
    plan_with(
        plain.into_iter().chain(hooks).map(Manifest::into_pair).collect(),
        previous.objects.into_iter().chain(previous.hooks).map(Manifest::into_pair).collect(),
        options,
    )
    .map_err(|e| manifest_error("diff", e))
}

/// The latest stored release, as far as the diff needs it.
#[derive(Debug, Default)]
pub struct Previous {
    /// The objects of its manifest (see [`stored_objects`]).
    pub objects: Vec<Manifest>,
    /// Its hooks but tests, which Helm stores apart from the manifest.
    pub hooks: Vec<Manifest>,
    /// Whether it is `deployed`: its manifest is then what was last applied to every object.
    pub deployed: bool,
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
pub async fn against_live(
    live: &LiveObjects<'_>,
    release: (&str, &str),
    desired: Vec<Manifest>,
    previous: Previous,
    options: PlanOptions,
) -> Result<Plan> {
    let (desired, desired_hooks) = split_hooks(desired);
    let owned = |m: &Manifest| with_helm_ownership(&m.object, release.0, release.1);
    let objects: Vec<Value> = desired.iter().map(owned).collect();
    // What the deployed release applied to each desired object, as Helm sent it.
    let applied: std::collections::HashMap<&ObjectId, Value> = if previous.deployed {
        previous.objects.iter().map(|m| (&m.id, owned(m))).collect()
    } else {
        Default::default()
    };
    let last_applied: Vec<Option<&Value>> = desired.iter().map(|m| applied.get(&m.id)).collect();
    let observed = live.observe_all(&objects, &last_applied).await?;
    let mut desired_pairs = Vec::with_capacity(desired.len());
    let mut live_pairs = Vec::new();
    for (m, o) in desired.iter().zip(observed) {
        desired_pairs.push((m.id.clone(), o.desired_on_server));
        if let Some(l) = o.live {
            live_pairs.push((m.id.clone(), l));
        }
    }
    let wanted: std::collections::BTreeSet<&ObjectId> = desired.iter().map(|m| &m.id).collect();
    let gone: Vec<&Manifest> = previous.objects.iter().filter(|m| !wanted.contains(&m.id)).collect();
    let gone_objects: Vec<Value> = gone.iter().map(|m| m.object.clone()).collect();
    for (m, l) in gone.iter().zip(live.get_all(&gone_objects).await?) {
        if let Some(l) = l {
            live_pairs.push((m.id.clone(), l));
        }
    }
    desired_pairs.extend(desired_hooks.into_iter().map(Manifest::into_pair));
    live_pairs.extend(previous.hooks.into_iter().map(Manifest::into_pair));
    plan_with(desired_pairs, live_pairs, options).map_err(|e| manifest_error("diff", e))
}

/// The object as Helm sends it to the API server: Helm adds its ownership label and annotations to every
/// object it applies. Without them, a dry run as helm-controller's field manager would "remove" them.
pub fn with_helm_ownership(obj: &Value, release_name: &str, release_namespace: &str) -> Value {
    let mut obj = obj.clone();
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
    obj
}

/// The latest stored release revision, if any, as [`Previous`] for the diff.
pub async fn previous_release(
    cluster: &Cluster,
    storage_namespace: &str,
    release: &str,
    release_namespace: &str,
) -> Result<Previous> {
    let Some(r) = crate::helmstore::latest(cluster, storage_namespace, release).await? else {
        return Ok(Previous::default());
    };
    let mut hooks = Vec::new();
    for h in &r.hooks {
        if !is_test_hook(&h.events.iter().map(String::as_str).collect::<Vec<_>>()) {
            hooks.extend(stored_objects(&format!("# Source: {}\n{}", h.path, h.manifest), release_namespace)?);
        }
    }
    let objects = stored_objects(&r.manifest, release_namespace)?;
    Ok(Previous { objects, hooks, deployed: r.status == "deployed" })
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
        let (plain, hooks) = split_hooks(stored_objects(stream, "ns").unwrap());
        let names = |v: &[Manifest]| v.iter().map(|m| m.id.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&plain), ["plain"]);
        assert_eq!(names(&hooks), ["hook", "both"]);
    }
}
