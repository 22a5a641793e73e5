//! The verbs that act on several objects at once (`suspend`, `resume`, by name or `--all`), written once
//! for every [`FluxObject`] of a typed kind, as the flux CLI's bulk commands are.

use super::object::FluxObject;
use super::verbs::Objects;
use crate::cluster::Cluster;
use crate::support::error::{Error, Result};
use crate::support::output::progress;

/// One object to act on, with the handle for its namespace.
pub struct Target<K: FluxObject> {
    pub objects: Objects<K>,
    pub name: String,
}

/// Which objects: the named ones in the cluster's namespace, or with `all` every one in it (in every
/// namespace with `all_namespaces`), narrowed by a label `selector` and, for HelmReleases, to those that
/// deploy `chart` ([`super::HelmRelease::deploys`]).
pub struct Selection<'a> {
    pub names: &'a [String],
    pub all: bool,
    pub all_namespaces: bool,
    pub selector: Option<&'a str>,
    pub chart: Option<&'a str>,
}

impl<K: FluxObject<DynamicType = ()>> Target<K> {
    fn new(cluster: &Cluster, namespace: &str, name: &str) -> Self {
        Target { objects: Objects::namespaced(cluster, namespace), name: name.to_string() }
    }

    /// The objects `selection` names. Named objects are each read first, so a typo changes nothing;
    /// `--all` that finds none is an error, as in the flux CLI.
    pub async fn resolve(cluster: &Cluster, selection: &Selection<'_>) -> Result<Vec<Target<K>>> {
        let here = &cluster.namespace;
        if !selection.all {
            let objects = Objects::<K>::namespaced(cluster, here);
            if selection.all_namespaces {
                let kind = objects.kind().kind;
                return Err(Error::Failed(format!("-A needs --all: a {kind} is named within one namespace (-n)")));
            }
            for name in selection.names {
                objects.get(name).await?;
            }
            return Ok(selection.names.iter().map(|n| Target::new(cluster, here, n)).collect());
        }
        let objects =
            if selection.all_namespaces { Objects::<K>::all(cluster) } else { Objects::namespaced(cluster, here) };
        let mut items = objects.list(selection.selector).await?;
        if let Some(chart) = selection.chart {
            items.retain(|o| o.deploys_chart(chart));
        }
        if items.is_empty() {
            let scope =
                if selection.all_namespaces { "any namespace".to_string() } else { format!("{here} namespace") };
            return Err(Error::NoneFound { kind: objects.kind().kind, scope });
        }
        use kube::ResourceExt as _;
        Ok(items.iter().map(|o| Target::new(cluster, &o.namespace().unwrap_or_default(), &o.name_any())).collect())
    }

    pub fn namespace(&self) -> &str {
        &self.objects.namespace
    }
}

/// `suspend`: `spec.suspend: true` on every HelmRelease `selection` names, saying so of each.
pub async fn suspend(cluster: &Cluster, selection: &Selection<'_>) -> Result<()> {
    for t in Target::<super::HelmRelease>::resolve(cluster, selection).await? {
        progress::action(format!("suspending helmrelease {} in {} namespace", t.name, t.namespace()));
        t.objects.set_suspend(&t.name, true).await?;
        progress::success("helmrelease suspended");
    }
    Ok(())
}

/// What the flux CLI says once an object has reconciled: `KIND NAME reconciliation completed`, then
/// `VERB revision R` when it has one (`applied` for a HelmRelease, `fetched` for a source).
pub fn reconciled<K: FluxObject>(kind: &str, name: &str, obj: &K, verb: &str) {
    progress::success(format!("{kind} {name} reconciliation completed"));
    let revision = obj.revision();
    if !revision.is_empty() {
        progress::success(format!("{verb} revision {revision}"));
    }
}
