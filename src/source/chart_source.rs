//! The chart as its source gives it to helm-controller: the version `.Chart.Version` reads and the Helm
//! release records, which is not always the one in Chart.yaml.
//!
//! - `chartRef` to an OCIRepository, or to an ExternalArtifact whose revision carries a digest
//!   (`latest@sha256:…`, as source-watcher's ArtifactGenerator writes it): helm-controller appends the
//!   first 12 hex digits of the digest as build metadata, `0.3.0+5e79901a2e85` (a semver tag before the
//!   `@` must then be the chart's own version, `+` spelt `_`).
//! - A HelmChart (`chartRef`, or the one helm-controller makes for `spec.chart`): source-controller built
//!   the chart, and its artifact's revision is the version it wrote: `+<12 characters of the revision>`
//!   from a GitRepository or Bucket with `reconcileStrategy: Revision`, `+<generation>` with `valuesFiles`.
//! - An ExternalArtifact whose revision is a plain version: the chart's own.
//!
//! helm cozy renders and installs the local chart with that version, so that `.Chart.Version`, the
//! `helm.sh/chart` label and the recorded chart version are helm-controller's. A source that cannot be
//! read is never a reason to fail: the chart's own version is used, and one line says so.

use crate::cluster::Cluster;
use crate::flux::HelmRelease;
use crate::flux::kind::{self, Kind};
use crate::flux::source::FluxSource;
use crate::flux::verbs::Objects;
use crate::go::semver::Version;

/// The version helm-controller would give this chart, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceVersion {
    /// The chart's own version: the source adds nothing to it.
    Own,
    /// helm-controller gives the chart this version (`source` is `Kind ns/name`); `digest` when it is
    /// the chart's own with the source's digest appended, which the `DisableChartDigestTracking` gate
    /// leaves out.
    Given { version: String, source: String, digest: bool },
    /// The source offers another version of the chart than this one: helm-controller installs that, and
    /// this chart is rendered with its own.
    Other { offered: String, source: String },
    /// What the source gives cannot be told (not readable, no artifact yet, offline): the chart's own
    /// version is used.
    Unknown { why: String },
}

impl SourceVersion {
    /// The version to render and install a chart whose Chart.yaml says `own` with.
    pub fn version<'a>(&'a self, own: &'a str) -> &'a str {
        match self {
            SourceVersion::Given { version, .. } => version,
            _ => own,
        }
    }

    /// The version under helm-controller's `DisableChartDigestTracking` gate: a digest it would append is
    /// not (the chart keeps Chart.yaml's version, as written).
    pub fn without_digest(self) -> SourceVersion {
        match self {
            SourceVersion::Given { digest: true, .. } => SourceVersion::Own,
            other => other,
        }
    }

    /// One line for people when the chart is rendered with a version other than helm-controller's, or
    /// helm-controller's cannot be known.
    pub fn note(&self, own: &str) -> Option<String> {
        match self {
            SourceVersion::Own | SourceVersion::Given { .. } => None,
            SourceVersion::Other { offered, source } => Some(format!(
                "the chart's version is {own}, but its source {source} offers {offered}: rendered as {own} (helm-controller installs {offered})"
            )),
            SourceVersion::Unknown { why } => Some(format!("{why}: rendered with the chart's own version {own}")),
        }
    }
}

/// How helm-controller versions a chart whose Chart.yaml says `own`, loaded from an artifact of `kind`
/// at `revision` (see the module docs).
pub fn from_artifact(kind: &Kind, revision: &str, own: &str, source: &str) -> SourceVersion {
    let given = |version: String, digest: bool| SourceVersion::Given { version, source: source.to_string(), digest };
    let other = |offered: String| SourceVersion::Other { offered, source: source.to_string() };
    if *kind == kind::HELM_CHART {
        return match (Version::parse(revision), Version::parse(own)) {
            (Some(built), Some(mine)) if built.same_as(&mine) => given(revision.to_string(), false),
            (Some(_), Some(_)) => other(revision.to_string()),
            _ => SourceVersion::Unknown {
                why: format!("{source} offers chart version {revision:?}, which is not semver"),
            },
        };
    }
    let digested = *kind == kind::OCI_REPOSITORY || (*kind == kind::EXTERNAL_ARTIFACT && revision.contains(':'));
    if !digested {
        return SourceVersion::Own;
    }
    let Some(mine) = Version::parse(own) else {
        return SourceVersion::Unknown {
            why: format!(
                "the chart's version {own:?} is not semver, so helm-controller cannot add {source}'s digest to it"
            ),
        };
    };
    let invalid = || SourceVersion::Unknown {
        why: format!("{source}'s revision {revision:?} has no digest helm-controller can read"),
    };
    // A semver tag before the digest must be the chart's version (OCI tags spell `+` as `_`).
    let (tag, digest) = match revision.split_once('@') {
        Some((tag, digest)) => (Some(tag), digest),
        None => (None, revision),
    };
    if let Some(tag) = tag.and_then(|t| Version::parse(&t.replace('_', "+")).map(|v| (t, v))) {
        if !tag.1.same_as(&mine) || revision.matches('@').count() != 1 {
            return other(tag.0.replace('_', "+"));
        }
    } else if tag.is_none() && Version::parse(revision).is_some() {
        return invalid();
    }
    // `<algorithm>:<hex>`, of which helm-controller takes the first 12 digits. (It splits the whole
    // revision at ':' when there is no semver tag, so the same digits.)
    let hex = match digest.split(':').collect::<Vec<_>>().as_slice() {
        [_, hex] if hex.len() >= 12 => hex[..12].to_string(),
        _ => return invalid(),
    };
    match mine.with_metadata(&hex) {
        Some(v) => given(v.to_string(), true),
        None => invalid(),
    }
}

/// What `hr`'s current source gives a chart whose Chart.yaml says `own`, read from the cluster (the
/// source object's status: nothing is downloaded).
pub async fn lookup(cluster: &Cluster, hr: &HelmRelease, own: &str) -> SourceVersion {
    let (kind_name, ns, name) = match crate::flux::sources::chart_source(hr) {
        Ok(s) => s,
        Err(e) => return SourceVersion::Unknown { why: e.to_string() },
    };
    let source = format!("{kind_name} {ns}/{name}");
    let Some(k) = Kind::lookup(&kind_name) else {
        return SourceVersion::Unknown {
            why: format!(
                "the chart's source is of kind {kind_name:?}, which {} does not know",
                crate::support::output::chart_command()
            ),
        };
    };
    let object = match Objects::<FluxSource>::namespaced_with(cluster, &ns, k).get_opt(&name).await {
        Ok(Some(o)) => o,
        Ok(None) => return SourceVersion::Unknown { why: format!("{source} does not exist (yet)") },
        Err(e) => return SourceVersion::Unknown { why: format!("cannot read {source}: {e}") },
    };
    match object.status.as_ref().and_then(|s| s.artifact.as_ref()) {
        Some(artifact) => from_artifact(k, &artifact.revision, own, &source),
        None => SourceVersion::Unknown { why: format!("{source} has no artifact yet") },
    }
}

/// Without a cluster (`--release-file`): what `hr`'s source gives the chart cannot be known (any kind of
/// source may: an ExternalArtifact by its revision, a HelmChart by how it was built).
pub fn offline(hr: &HelmRelease) -> SourceVersion {
    let (kind_name, ns, name) = match crate::flux::sources::chart_source(hr) {
        Ok(s) => s,
        Err(_) => return SourceVersion::Own,
    };
    SourceVersion::Unknown { why: format!("the chart's version as {kind_name} {ns}/{name} gives it cannot be known") }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "sha256:5e79901a2e85f00dcafe0123456789abcdef0123456789abcdef0123456789";

    fn version(kind: &Kind, revision: &str, own: &str) -> SourceVersion {
        from_artifact(kind, revision, own, "S")
    }

    fn given(v: &str) -> SourceVersion {
        let digest = v.contains("+5e79901a2e85");
        SourceVersion::Given { version: v.into(), source: "S".into(), digest }
    }

    #[test]
    fn the_gate_leaves_the_digest_out() {
        let digested = version(&kind::EXTERNAL_ARTIFACT, &format!("latest@{SHA}"), "0.3.0");
        assert_eq!(digested.without_digest(), SourceVersion::Own);
        let built = version(&kind::HELM_CHART, "0.1.0+3", "0.1.0");
        assert_eq!(built.clone().without_digest(), built, "a version source-controller built is kept");
    }

    #[test]
    fn digests_become_build_metadata_as_helm_controller_writes_them() {
        // What source-watcher's ArtifactGenerator writes, and an OCIRepository's tag@digest.
        assert_eq!(version(&kind::EXTERNAL_ARTIFACT, &format!("latest@{SHA}"), "0.3.0"), given("0.3.0+5e79901a2e85"));
        assert_eq!(version(&kind::OCI_REPOSITORY, &format!("0.3.0@{SHA}"), "0.3.0"), given("0.3.0+5e79901a2e85"));
        assert_eq!(version(&kind::OCI_REPOSITORY, SHA, "v1.2"), given("1.2.0+5e79901a2e85"));
        // Chart.yaml's own metadata is replaced; an OCI tag spells + as _.
        assert_eq!(
            version(&kind::OCI_REPOSITORY, &format!("1.0.0_old@{SHA}"), "1.0.0+old"),
            given("1.0.0+5e79901a2e85")
        );
        // A plain version as an ExternalArtifact's revision changes nothing.
        assert_eq!(version(&kind::EXTERNAL_ARTIFACT, "0.3.0", "0.3.0"), SourceVersion::Own);
    }

    #[test]
    fn another_version_at_the_source_is_said() {
        let other = version(&kind::OCI_REPOSITORY, &format!("0.2.0@{SHA}"), "0.3.0");
        assert_eq!(other, SourceVersion::Other { offered: "0.2.0".into(), source: "S".into() });
        assert!(other.note("0.3.0").unwrap().contains("offers 0.2.0: rendered as 0.3.0"));
        assert!(matches!(version(&kind::OCI_REPOSITORY, "sha256:short", "0.3.0"), SourceVersion::Unknown { .. }));
        assert!(matches!(version(&kind::OCI_REPOSITORY, SHA, "not-semver"), SourceVersion::Unknown { .. }));
    }

    #[test]
    fn a_helm_chart_revision_is_the_version_source_controller_built() {
        assert_eq!(version(&kind::HELM_CHART, "0.1.0+3", "0.1.0"), given("0.1.0+3"));
        assert_eq!(version(&kind::HELM_CHART, "0.1.0+4f3a9c2b1d0e", "0.1.0"), given("0.1.0+4f3a9c2b1d0e"));
        assert_eq!(version(&kind::HELM_CHART, "0.1.0", "0.1.0"), given("0.1.0"));
        assert_eq!(
            version(&kind::HELM_CHART, "0.0.9", "0.1.0"),
            SourceVersion::Other { offered: "0.0.9".into(), source: "S".into() }
        );
    }
}
