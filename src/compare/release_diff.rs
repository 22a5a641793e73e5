//! `helm cozy diff` of one release, whatever it compares with: the cluster's live objects or stored
//! release, the chart alone against the stored release, or the chart as it is at a Git ref
//! (`git_sides.rs`).

use super::request::{DiffAgainst, DiffRequest};
use crate::cluster::Cluster;
use crate::compare::Against;
use crate::compare::diff::{Plan, PlanOptions};
use crate::desired::UserValues;
use crate::resolve::{ReleaseSource, Resolver};
use crate::support::error::{Error, Result};

/// `helm cozy diff`, whatever it compares with: the cluster's live objects or stored release, or
/// the chart as it is at a Git ref; and whatever the release comes from (the request's source).
/// `cluster` is needed unless [`DiffRequest::needs_cluster`] says otherwise (a Git ref with release
/// files renders both sides offline).
pub async fn diff_request(resolver: &Resolver, cluster: Option<&Cluster>, req: &DiffRequest<'_>) -> Result<Plan> {
    let needs_cluster = || {
        Error::Failed("diff against the live objects or the stored release needs a cluster: configure one (--kubeconfig, --context), or compare with a Git ref (--against git:REF --release-file FILE)".into())
    };
    if let ReleaseSource::ChartDefaults = req.source {
        // The chart alone is compared with the release stored in the cluster's namespace, whatever
        // --against says (as Go cozyhr's diff --plain).
        let cluster = cluster.ok_or_else(needs_cluster)?;
        let rendered = resolver.render_plain(Some(cluster), &cluster.namespace, req.name, req.user).await?;
        return crate::compare::plain_against_release(cluster, &rendered, req.name, req.options).await;
    }
    let against = match req.against {
        DiffAgainst::Git(git_ref) => return super::git_sides::diff_against_git(resolver, cluster, git_ref, req).await,
        DiffAgainst::Cluster(against) => against,
    };
    let cluster = cluster.ok_or_else(needs_cluster)?;
    let from = match req.source {
        ReleaseSource::Files(files) => Some(files),
        ReleaseSource::Cluster | ReleaseSource::ChartDefaults => None,
    };
    let (desired, seen) = resolver.desired_on(cluster, from, req.name, req.user).await?;
    crate::compare::diff(seen, &resolver.tools.helm, &desired, against, req.options, &resolver.tools.self_exe).await
}

/// `diff`: what `apply` would change, against the live objects or the stored release.
pub async fn diff(
    resolver: &Resolver,
    cluster: &Cluster,
    name: &str,
    user: &UserValues,
    against: Against,
    options: PlanOptions,
) -> Result<Plan> {
    let (desired, seen) = resolver.desired_on_cluster(cluster, name, user).await?;
    crate::compare::diff(seen, &resolver.tools.helm, &desired, against, options, &resolver.tools.self_exe).await
}
