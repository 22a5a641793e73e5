//! Cozystack's own kinds, typed: the objects of API group `cozystack.io` (version `v1alpha1`) that the
//! platform's operator and API turn into Flux objects, read from the repository beside the charts as
//! the [`crate::flux`] model reads Flux's.
//!
//! - [`package_source::PackageSource`]: a package's variants, each a list of components that are charts;
//!   the operator makes of each component an artifact (an ArtifactGenerator's copies) and, for a
//!   component with `install`, a HelmRelease of it.
//! - [`application_definition::ApplicationDefinition`]: how Cozystack's API releases a component without
//!   `install` in a tenant's namespace (the release's name prefix, the artifact it releases).
//!
//! Only the fields cozyhr reads are typed. Each kind is read leniently where the API server is lenient
//! and a missing field means "none" (absent and `null` alike, as YAML writes an empty key), and strictly
//! where its schema is strict: a field of the wrong type (a list where a name is due) makes the document
//! unreadable, an error its caller reports or leaves the document out with; the API server would refuse
//! such an object, so no cluster holds it.
//!
//! This folder sits low: it reads documents and knows nothing of where they come from (release files,
//! Git sides) or what is made of them (`crate::source::package_source` makes the releases).

use serde::Deserialize;

pub mod application_definition;
pub mod package_source;

pub use application_definition::ApplicationDefinition;
pub use package_source::PackageSource;

/// The API group of Cozystack's kinds.
pub const GROUP: &str = "cozystack.io";
/// The API version cozyhr reads them at.
pub const VERSION: &str = "v1alpha1";

/// The part of an object's `metadata` cozyhr reads of Cozystack's kinds (both are cluster-scoped, so no
/// namespace).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    #[serde(default)]
    pub name: Option<String>,
    /// `null` reads as none, as the API server stores it.
    #[serde(default, deserialize_with = "nullable")]
    pub annotations: std::collections::BTreeMap<String, String>,
}

impl Metadata {
    /// The object's name, empty when it has none.
    pub fn name(&self) -> &str {
        self.name.as_deref().unwrap_or("")
    }

    /// The annotation `key`, if set.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations.get(key).map(String::as_str)
    }
}

/// A field left at its empty value when the document says `null` (an empty YAML key), as when absent.
fn nullable<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}
