//! `apply --plain`: `helm upgrade --install` of the chart alone, no HelmRelease.

use crate::cluster::Cluster;
use crate::desired::UserValues;
use crate::resolve::Resolver;
use crate::support::error::Result;

/// `apply --plain`: `helm upgrade --install` of the chart alone into the cluster's namespace; returns
/// helm's output.
pub async fn apply_plain(
    resolver: &Resolver,
    cluster: &Cluster,
    release: &str,
    user: &UserValues,
    dry_run: bool,
    take_ownership: bool,
) -> Result<Vec<u8>> {
    let mut args: Vec<std::ffi::OsString> = vec![
        "upgrade".into(),
        "--install".into(),
        release.into(),
        resolver.chart.path().as_os_str().to_owned(),
        "--namespace".into(),
        cluster.namespace.clone().into(),
    ];
    args.extend(crate::render::values_args(&user.files, &user.sets));
    if dry_run {
        args.push("--dry-run=server".into());
    }
    if take_ownership {
        args.push("--take-ownership".into());
        // Helm 4 applies server-side: the fields another manager set are taken over too, as
        // helm-controller's apply forces its conflicts.
        if resolver.tools.helm.major >= 4 {
            args.push("--force-conflicts".into());
        }
    }
    args.extend(cluster.helm_args());
    Ok(resolver.tools.helm.run(&args, &[]).await?)
}
