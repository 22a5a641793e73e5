//! What a review found: one [`Entry`] per release of each affected chart, in a [`Report`].

use std::path::PathBuf;

use crate::compare::diff::Plan;

/// Who a reviewed rendering is for.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Release {
    /// A HelmRelease of the cluster.
    Cluster { namespace: String, name: String },
    /// A HelmRelease of the files given.
    File { namespace: String, name: String },
    /// A component of a variant of a PackageSource of the files given, released as the platform releases
    /// it ([`crate::source::package_source`]).
    /// `shared`: another PackageSource releases the same namespace and name from this chart (Cozystack's
    /// computeplane and kubernetes applications both release `kubernetes`), so the label names the
    /// package.
    Package { namespace: String, name: String, key: crate::source::package_source::Key, shared: bool },
    /// The chart alone, with its own values (no HelmRelease deploys it, or none was looked for).
    Defaults,
    /// A HelmRelease a Flux Kustomization of a fleet repository applies to `cluster` (the path its
    /// reconciliation starts from, see [`crate::fleet::clusters`]).
    Fleet { cluster: String, kustomization: String, namespace: String, name: String },
    /// The objects a Flux Kustomization (`namespace/name`) applies to `cluster`, compared as objects.
    Kustomization { cluster: String, kustomization: String },
}

impl Release {
    /// `namespace/name` (after it a package's name when another releases the same, and its variant when
    /// not `default`), or `(chart defaults)`.
    pub fn label(&self) -> String {
        match self {
            Release::Cluster { namespace, name } | Release::File { namespace, name } => format!("{namespace}/{name}"),
            Release::Package { namespace, name, key, shared } => {
                let package = shared.then(|| format!("package {}", key.package));
                let variant = (key.variant != "default").then(|| format!("variant {}", key.variant));
                let about: Vec<String> = package.into_iter().chain(variant).collect();
                if about.is_empty() {
                    format!("{namespace}/{name}")
                } else {
                    format!("{namespace}/{name} ({})", about.join(", "))
                }
            }
            Release::Defaults => "(chart defaults)".into(),
            Release::Fleet { cluster, namespace, name, .. } => format!("{namespace}/{name} in {cluster}"),
            Release::Kustomization { cluster, kustomization } => format!("Kustomization {kustomization} in {cluster}"),
        }
    }

    /// The fleet cluster and the Kustomization, for what a fleet repository's builds apply.
    pub fn fleet(&self) -> Option<(&str, &str)> {
        match self {
            Release::Fleet { cluster, kustomization, .. } | Release::Kustomization { cluster, kustomization } => {
                Some((cluster, kustomization))
            }
            _ => None,
        }
    }

    /// Where it was found: `cluster`, `file`, `package` or `defaults`.
    pub fn source(&self) -> &'static str {
        match self {
            Release::Cluster { .. } => "cluster",
            Release::File { .. } => "file",
            Release::Package { .. } => "package",
            Release::Defaults => "defaults",
            Release::Fleet { .. } => "fleet",
            Release::Kustomization { .. } => "kustomization",
        }
    }
}

/// One release of one affected chart, and what the change does to it.
pub struct Entry {
    /// The chart's directory, relative to the repository's top.
    pub chart: PathBuf,
    pub release: Release,
    pub outcome: std::result::Result<Plan, String>,
}

/// What a review found.
pub struct Report {
    /// The two sides, as people name them (`git:main`, `the work tree`).
    pub old: String,
    pub new: String,
    /// How many charts lie under PATH (at either side).
    pub charts: usize,
    /// One entry per release of each affected chart, by chart path, then release.
    pub entries: Vec<Entry>,
    /// For a fleet repository: what was built and rendered.
    pub fleet: Option<FleetTally>,
}

/// How much of a fleet repository a review built and rendered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FleetTally {
    pub clusters: usize,
    /// Kustomizations at either side, and those built at both (the others read nothing that changed).
    pub kustomizations: usize,
    pub built: usize,
    /// Kustomizations built at neither side (nothing that changed reaches them, nothing needs them).
    pub unbuilt: usize,
    /// HelmReleases at either side in what was built, and those rendered (the others read nothing that
    /// changed).
    pub releases: usize,
    pub rendered: usize,
}

impl Report {
    pub fn any_change(&self) -> bool {
        crate::sets::print::changed(&self.entries).next().is_some()
    }

    pub fn errors(&self) -> usize {
        crate::sets::print::errors(&self.entries)
    }

    /// How many charts were rendered.
    pub fn affected(&self) -> usize {
        let mut charts: Vec<&PathBuf> = self.entries.iter().map(|e| &e.chart).collect();
        charts.dedup();
        charts.len()
    }
}

#[cfg(test)]
mod tests {
    use super::Release;
    use crate::source::package_source::Key;

    #[test]
    fn a_package_release_says_its_variant_and_its_package_where_another_shares_its_name() {
        let package = |variant: &str, shared| Release::Package {
            namespace: "tenant-root".into(),
            name: "kubernetes".into(),
            key: Key {
                package: "cozystack.kubernetes-application".into(),
                variant: variant.into(),
                component: "kubernetes".into(),
            },
            shared,
        };
        assert_eq!(package("default", false).label(), "tenant-root/kubernetes");
        assert_eq!(package("kubevirt", false).label(), "tenant-root/kubernetes (variant kubevirt)");
        assert_eq!(
            package("kubevirt", true).label(),
            "tenant-root/kubernetes (package cozystack.kubernetes-application, variant kubevirt)"
        );
        assert_eq!(
            package("default", true).label(),
            "tenant-root/kubernetes (package cozystack.kubernetes-application)"
        );
    }
}
