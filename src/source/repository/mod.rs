//! A chart read straight from its repository, as source-controller reads it for a HelmChart: for
//! `--version V`, for use without a cluster, and to tell when the repository has a newer match than the
//! artifact the cluster serves.
//!
//! - An HTTP(S) Helm repository ([`helm_index`]): `index.yaml` path-joined onto the URL, the version picked
//!   from its entries, the chart's `urls[0]` resolved against the repository URL and downloaded.
//! - An OCI registry ([`oci`]): the tags listed (with Helm's `_`→`+`), the version picked, the manifest's
//!   Helm chart layer downloaded and checked against its digest.
//!
//! The version is picked as source-controller picks it ([`select`]): a version string equal to the
//! constraint wins outright; otherwise the constraint (empty: `*`) is a Masterminds/semver one
//! ([`crate::go::semver_constraint`], pre-releases only when the constraint names one), the candidates are
//! the versions fluxcd's `ParseVersion` reads (exactly three numbers, `v` allowed), and the highest wins
//! (ties: the newest `created`). Errors are one line that says what to do; credentials never appear in
//! them, in a URL or in [`Credentials`]' `Debug`.

mod client;
pub mod helm_index;
pub mod oci;
mod urls;

use std::cmp::Ordering;
use std::fmt;

use crate::go::semver::Version;
use crate::go::semver_constraint::Constraints;

/// A chart in a repository, and the version constraint to pick it by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepositoryChart {
    pub repo: Repo,
    pub chart: String,
    /// A Masterminds/semver constraint or an exact version; `""` means `*`.
    pub version: String,
}

/// Where the chart is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Repo {
    /// A Helm repository served over HTTP(S): the URL `index.yaml` is found under.
    Http { url: String },
    /// An OCI registry: `oci://host[:port]/path`, the chart at `path/<chart>`; `insecure`: plain HTTP;
    /// `rule`: how its tags are read, by Helm or by source-controller's OCIRepository.
    Oci { url: String, insecure: bool, rule: OciRule },
}

/// How an OCI registry's tags are read as versions and which layer is the chart: a HelmRepository of
/// `type: oci` goes through Helm's registry client, an OCIRepository through source-controller's own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum OciRule {
    /// Helm's: `_` is `+`, strict versions only, the config and the layer Helm's chart media types.
    #[default]
    Helm,
    /// An OCIRepository's: `reference` says how the wanted version is read; the tags that match
    /// `semver_filter` (a regular expression, unanchored) are read as fluxcd's `ParseVersion` reads them,
    /// `_` as `+` only when `layer` is Helm's chart media type; the chart is the first layer of media type
    /// `layer`, else the first layer.
    Flux { reference: OciReference, semver_filter: Option<String>, layer: Option<String> },
}

/// Which of an OCIRepository's `ref` fields the wanted version is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OciReference {
    /// `ref.semver` (or `--version`): a constraint, or a version pulled as its tag.
    Semver,
    /// `ref.tag` (`latest` when `ref` names nothing): the tag as written.
    Tag,
    /// `ref.digest`: the manifest of that digest.
    Digest,
}

impl Repo {
    /// The repository's URL, as given.
    pub fn url(&self) -> &str {
        match self {
            Repo::Http { url } | Repo::Oci { url, .. } => url,
        }
    }
}

/// How to authenticate to the repository, as a HelmRepository's `secretRef` and `certSecretRef` give it.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Credentials {
    pub username: Option<String>,
    pub password: Option<String>,
    /// A CA (PEM) trusted besides the system's roots.
    pub ca_pem: Option<String>,
    /// A client certificate (PEM) and its key, presented when both are given.
    pub cert_pem: Option<String>,
    pub key_pem: Option<String>,
    /// Accept any server certificate.
    pub insecure_skip_verify: bool,
    /// HelmRepository `passCredentials`: send the basic credentials to a chart URL on another host too
    /// (otherwise only to the repository's own scheme and host, as Helm does).
    pub pass_credentials: bool,
}

/// Never prints a secret: which fields are set, not what they hold.
impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let set = |o: &Option<String>| if o.is_some() { "<set>" } else { "<none>" };
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .field("password", &set(&self.password))
            .field("ca_pem", &set(&self.ca_pem))
            .field("cert_pem", &set(&self.cert_pem))
            .field("key_pem", &set(&self.key_pem))
            .field("insecure_skip_verify", &self.insecure_skip_verify)
            .field("pass_credentials", &self.pass_credentials)
            .finish()
    }
}

impl Credentials {
    /// The basic credentials, when both parts are non-empty (Helm sends them only then).
    fn basic(&self) -> Option<(&str, &str)> {
        match (self.username.as_deref(), self.password.as_deref()) {
            (Some(u), Some(p)) if !u.is_empty() && !p.is_empty() => Some((u, p)),
            _ => None,
        }
    }

    /// `Authorization: Basic …` of [`Credentials::basic`].
    fn basic_header(&self) -> Option<http::HeaderValue> {
        use base64::Engine as _;
        let (user, password) = self.basic()?;
        let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        let mut value = http::HeaderValue::from_str(&format!("Basic {token}")).ok()?;
        value.set_sensitive(true);
        Some(value)
    }
}

/// A chart fetched from its repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The chart version picked, as the repository spells it.
    pub version: String,
    /// The archive (a gzipped tar).
    pub bytes: Vec<u8>,
    /// `sha256:<hex>` of [`Fetched::bytes`].
    pub digest: String,
    /// Where the archive came from, without credentials.
    pub url: String,
    /// The versions the repository offers, newest first.
    pub available: Vec<String>,
    /// From an OCI registry: the digest of the tag's manifest, which an OCIRepository's revision names
    /// (`TAG@sha256:…`) and helm-controller appends to the chart's version.
    pub manifest_digest: Option<String>,
}

/// Why a chart cannot be had from its repository: one line that says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RepositoryError {
    #[error("{url} is not a repository address: {why}")]
    BadUrl { url: String, why: String },
    #[error("cannot reach {url}: {why} (check the address, the network, and that the repository is up)")]
    Unreachable { url: String, why: String },
    #[error("wrong or missing credentials for {repo} ({status}): pass the repository's username and password")]
    Unauthorized { repo: String, status: u16 },
    #[error("{url} answered {status}")]
    Status { url: String, status: u16 },
    #[error("TLS: {why}")]
    Tls { why: String },
    #[error("{url} is larger than {limit} bytes, the most source-controller reads")]
    TooLarge { url: String, limit: usize },
    #[error("the index of {url} cannot be read: {why}")]
    BadIndex { url: String, why: String },
    #[error("chart {chart:?} is not in {repo}: check the chart's name")]
    NoChart { chart: String, repo: String },
    #[error("{version:?} is not a version constraint: {why}")]
    BadConstraint { version: String, why: String },
    #[error("no version of chart {chart:?} in {repo} matches {version:?}; {}", list_versions(.available))]
    NoMatch { chart: String, repo: String, version: String, available: Vec<String> },
    #[error("chart {chart:?} {version} has no download URL in the index of {repo}")]
    NoChartUrl { chart: String, version: String, repo: String },
    #[error("{url} is not a Helm chart: {why}")]
    NotAChart { url: String, why: String },
    #[error("the archive fetched from {url} is not its digest {want} (it is {got}): fetch it again")]
    DigestMismatch { url: String, want: String, got: String },
}

/// "the versions there, newest first: …" (at most 10), or that there are none.
fn list_versions(available: &[String]) -> String {
    const SHOWN: usize = 10;
    if available.is_empty() {
        return "it has no versions at all".into();
    }
    let mut text = format!("the versions there, newest first: {}", available[..available.len().min(SHOWN)].join(", "));
    if available.len() > SHOWN {
        text.push_str(&format!(" ({} more)", available.len() - SHOWN));
    }
    text
}

/// A version a repository offers: its string, and its `created` time when the index gives one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub version: String,
    pub created: Option<jiff::Timestamp>,
}

/// The candidate source-controller picks for `constraint` (see the module docs); None when none matches.
pub fn select<'a>(candidates: &'a [Candidate], constraint: &str) -> Result<Option<&'a Candidate>, RepositoryError> {
    if !constraint.is_empty()
        && let Some(exact) = candidates.iter().find(|c| c.version == constraint)
    {
        return Ok(Some(exact));
    }
    newest_match(candidates, constraint)
}

/// The highest candidate `constraint` (empty: `*`) matches, with no exact-string shortcut: how an
/// OCIRepository's `ref.semver` picks its tag.
pub fn newest_match<'a>(
    candidates: &'a [Candidate],
    constraint: &str,
) -> Result<Option<&'a Candidate>, RepositoryError> {
    let wanted = if constraint.is_empty() { "*" } else { constraint };
    let constraints = Constraints::parse(wanted)
        .map_err(|e| RepositoryError::BadConstraint { version: constraint.to_string(), why: e.to_string() })?;
    let mut matching: Vec<(usize, Version, &Candidate)> = candidates
        .iter()
        .enumerate()
        .filter_map(|(i, c)| Version::parse_flux(&c.version).map(|v| (i, v, c)))
        .filter(|(_, v, _)| constraints.check(v))
        .collect();
    matching.sort_by(|a, b| newest_first(&(a.1.clone(), a.2.created, a.0), &(b.1.clone(), b.2.created, b.0)));
    Ok(matching.first().map(|(_, _, c)| *c))
}

/// Highest version first; equal versions (build metadata aside) by the newest `created`, then the later
/// in the repository's order.
fn newest_first(
    a: &(Version, Option<jiff::Timestamp>, usize),
    b: &(Version, Option<jiff::Timestamp>, usize),
) -> Ordering {
    b.0.compare(&a.0).then_with(|| b.1.cmp(&a.1)).then_with(|| b.2.cmp(&a.2))
}

/// The candidates' versions that fluxcd's `ParseVersion` reads, newest first (what the repository can
/// offer a constraint).
pub fn newest_first_versions(candidates: &[Candidate]) -> Vec<String> {
    let mut parsed: Vec<(Version, Option<jiff::Timestamp>, usize)> = candidates
        .iter()
        .enumerate()
        .filter_map(|(i, c)| Version::parse_flux(&c.version).map(|v| (v, c.created, i)))
        .collect();
    parsed.sort_by(newest_first);
    parsed.into_iter().map(|(_, _, i)| candidates[i].version.clone()).collect()
}

/// Fetches `chart` from its repository: the version picked as source-controller picks it, its archive
/// and digest (see the module docs).
pub async fn fetch(chart: &RepositoryChart, creds: &Credentials) -> Result<Fetched, RepositoryError> {
    match &chart.repo {
        Repo::Http { url } => helm_index::fetch(url, &chart.chart, &chart.version, creds).await,
        Repo::Oci { url, insecure, rule } => {
            oci::fetch(url, *insecure, rule, &chart.chart, &chart.version, creds).await
        }
    }
}

/// The versions of `chart.chart` the repository offers, newest first, without downloading a chart: for
/// telling whether the repository has a newer match than what a cluster serves.
pub async fn versions(chart: &RepositoryChart, creds: &Credentials) -> Result<Vec<String>, RepositoryError> {
    match &chart.repo {
        Repo::Http { url } => helm_index::versions(url, &chart.chart, creds).await,
        Repo::Oci { url, insecure, rule } => oci::versions(url, *insecure, rule, &chart.chart, creds).await,
    }
}

/// The version `chart`'s repository gives its constraint among `versions` (what [`versions`] listed),
/// as the source that names it picks: None when none matches, or when the chart is pinned by tag or
/// digest (no range to pick in).
pub fn pick(chart: &RepositoryChart, versions: &[String]) -> Option<String> {
    let candidates: Vec<Candidate> = versions.iter().map(|v| Candidate { version: v.clone(), created: None }).collect();
    let picked = match &chart.repo {
        Repo::Oci { rule: OciRule::Flux { reference: OciReference::Semver, .. }, .. } => {
            newest_match(&candidates, &chart.version)
        }
        Repo::Oci { rule: OciRule::Flux { .. }, .. } => return None,
        _ => select(&candidates, &chart.version),
    };
    Some(picked.ok()??.version.clone())
}

/// The body of a successful reply; 401 and 403 as [`RepositoryError::Unauthorized`] for `repo`, any
/// other failure as the status `url` answered.
fn body_of(reply: client::Reply, url: &urls::Url, repo: &str) -> Result<Vec<u8>, RepositoryError> {
    match reply.status.as_u16() {
        200..=299 => Ok(reply.body),
        status @ (401 | 403) => Err(RepositoryError::Unauthorized { repo: repo.to_string(), status }),
        status => Err(RepositoryError::Status { url: url.public(), status }),
    }
}

/// `sha256:<hex>` of `bytes`.
fn sha256(bytes: &[u8]) -> String {
    crate::go::digest::sha256(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidates(versions: &[&str]) -> Vec<Candidate> {
        versions.iter().map(|v| Candidate { version: v.to_string(), created: None }).collect()
    }

    fn pick(versions: &[&str], constraint: &str) -> Option<String> {
        select(&candidates(versions), constraint).expect("a constraint").map(|c| c.version.clone())
    }

    /// The sample of the project's reference notes (sc 1.9, semver v3.5).
    const SAMPLE: &[&str] =
        &["0.9.0-alpha", "1.0.0-rc.1", "1.0.0", "1.1.0-rc.1", "1.5.0", "2.0.0-beta.1", "v1.6.0", "1.8.0+build.1"];

    #[test]
    fn the_newest_match_wins_and_pre_releases_need_asking_for() {
        for stable in ["", "*", ">=1.0.0", "1.x", "1", "<2.0.0"] {
            assert_eq!(pick(SAMPLE, stable).as_deref(), Some("1.8.0+build.1"), "{stable:?}");
        }
        assert_eq!(pick(SAMPLE, ">=1.0.0-0").as_deref(), Some("2.0.0-beta.1"));
        assert_eq!(pick(SAMPLE, "^1.0.0-0").as_deref(), Some("1.8.0+build.1"));
        assert_eq!(pick(SAMPLE, "~1.1.0-0").as_deref(), Some("1.1.0-rc.1"));
        assert_eq!(pick(SAMPLE, ">1.0.0-rc.0 <1.1.0").as_deref(), Some("1.1.0-rc.1"));
        assert_eq!(pick(SAMPLE, "~1.6").as_deref(), Some("v1.6.0"), "the index string, verbatim");
        assert_eq!(pick(SAMPLE, ">=3"), None);
    }

    #[test]
    fn an_exact_string_wins_before_semver() {
        assert_eq!(pick(&["1.7", "1.8.0"], "1.7").as_deref(), Some("1.7"), "not a semver, pinned by its string");
        assert_eq!(pick(&["1.7", "1.8.0"], "*").as_deref(), Some("1.8.0"), "1.7 is not a candidate otherwise");
        assert_eq!(pick(&["1.7", "1.2.3.4"], ">=1"), None);
        assert_eq!(pick(&["1.0.0-rc.1", "1.0.0"], "1.0.0-rc.1").as_deref(), Some("1.0.0-rc.1"));
        assert!(select(&candidates(&["1.0.0"]), ">= nope").is_err());
    }

    #[test]
    fn equal_versions_go_to_the_newest_created() {
        let at = |s: &str| Some(s.parse::<jiff::Timestamp>().expect("a time"));
        let list = vec![
            Candidate { version: "1.0.0+a".into(), created: at("2024-01-01T00:00:00Z") },
            Candidate { version: "1.0.0+b".into(), created: at("2024-06-01T00:00:00Z") },
            Candidate { version: "0.9.0".into(), created: at("2025-01-01T00:00:00Z") },
        ];
        assert_eq!(select(&list, "*").expect("ok").map(|c| c.version.as_str()), Some("1.0.0+b"));
        assert_eq!(newest_first_versions(&list), ["1.0.0+b", "1.0.0+a", "0.9.0"]);
    }

    #[test]
    fn messages_are_one_line_and_list_versions_newest_first() {
        let many: Vec<String> = (0..13).rev().map(|i| format!("1.{i}.0")).collect();
        let error = RepositoryError::NoMatch {
            chart: "podinfo".into(),
            repo: "https://charts.example.com".into(),
            version: ">=9".into(),
            available: many,
        };
        let text = error.to_string();
        assert!(!text.contains('\n'));
        assert!(text.contains("matches \">=9\"; the versions there, newest first: 1.12.0, 1.11.0,"), "{text}");
        assert!(text.ends_with("1.3.0 (3 more)"), "{text}");
    }

    #[test]
    fn credentials_debug_hides_secrets() {
        let creds = Credentials {
            username: Some("me".into()),
            password: Some("hunter2".into()),
            key_pem: Some("-----BEGIN PRIVATE KEY-----".into()),
            ..Default::default()
        };
        let text = format!("{creds:?}");
        assert!(!text.contains("hunter2") && !text.contains("PRIVATE"), "{text}");
        assert!(creds.basic_header().is_some_and(|h| h.is_sensitive()));
        assert_eq!(Credentials { username: Some("me".into()), ..Default::default() }.basic(), None);
    }
}
