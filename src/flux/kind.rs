//! The Flux kinds cozyhr knows by name: group, version and plural for building API paths, and the names
//! messages and `-o name` use. One table, so that a verb written over [`super::FluxObject`] can name any of
//! them and `--with-source` can follow a reference by kind.

/// Static facts about one Flux kind.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Kind {
    pub kind: &'static str,
    pub group: &'static str,
    pub version: &'static str,
    pub plural: &'static str,
    /// The lower-case singular the flux CLI and kubectl print ("helmrelease").
    pub display: &'static str,
}

impl Kind {
    pub fn api_version(&self) -> String {
        format!("{}/{}", self.group, self.version)
    }

    /// kubectl's `-o name` form: `helmrelease.helm.toolkit.fluxcd.io/NAME`.
    pub fn resource_name(&self, name: &str) -> String {
        format!("{}.{}/{name}", self.display, self.group)
    }

    /// The known kind with this `kind` (as written in a source reference), if any.
    pub fn lookup(kind: &str) -> Option<&'static Kind> {
        ALL.iter().copied().find(|k| k.kind == kind)
    }
}

const SOURCE_GROUP: &str = "source.toolkit.fluxcd.io";

pub const HELM_RELEASE: Kind = Kind {
    kind: "HelmRelease",
    group: "helm.toolkit.fluxcd.io",
    version: "v2",
    plural: "helmreleases",
    display: "helmrelease",
};
pub const HELM_CHART: Kind =
    Kind { kind: "HelmChart", group: SOURCE_GROUP, version: "v1", plural: "helmcharts", display: "helmchart" };
pub const HELM_REPOSITORY: Kind = Kind {
    kind: "HelmRepository",
    group: SOURCE_GROUP,
    version: "v1",
    plural: "helmrepositories",
    display: "helmrepository",
};
pub const GIT_REPOSITORY: Kind = Kind {
    kind: "GitRepository",
    group: SOURCE_GROUP,
    version: "v1",
    plural: "gitrepositories",
    display: "gitrepository",
};
pub const OCI_REPOSITORY: Kind = Kind {
    kind: "OCIRepository",
    group: SOURCE_GROUP,
    version: "v1",
    plural: "ocirepositories",
    display: "ocirepository",
};
pub const BUCKET: Kind =
    Kind { kind: "Bucket", group: SOURCE_GROUP, version: "v1", plural: "buckets", display: "bucket" };
pub const EXTERNAL_ARTIFACT: Kind = Kind {
    kind: "ExternalArtifact",
    group: SOURCE_GROUP,
    version: "v1",
    plural: "externalartifacts",
    display: "externalartifact",
};
/// source-watcher's generator of ExternalArtifacts.
pub const ARTIFACT_GENERATOR: Kind = Kind {
    kind: "ArtifactGenerator",
    group: "source.extensions.fluxcd.io",
    version: "v1beta1",
    plural: "artifactgenerators",
    display: "artifactgenerator",
};

const ALL: &[&Kind] = &[
    &HELM_RELEASE,
    &HELM_CHART,
    &HELM_REPOSITORY,
    &GIT_REPOSITORY,
    &OCI_REPOSITORY,
    &BUCKET,
    &EXTERNAL_ARTIFACT,
    &ARTIFACT_GENERATOR,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_like_kubectl() {
        assert_eq!(HELM_RELEASE.resource_name("x"), "helmrelease.helm.toolkit.fluxcd.io/x");
        assert_eq!(Kind::lookup("OCIRepository"), Some(&OCI_REPOSITORY));
        assert_eq!(Kind::lookup("Nope"), None);
    }
}
