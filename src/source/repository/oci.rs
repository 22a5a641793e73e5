//! An OCI registry, read as source-controller reads a HelmRepository of `type: oci` (Helm's registry
//! client underneath, [`OciRule::Helm`]) or an OCIRepository ([`OciRule::Flux`]):
//!
//! - A constraint that is itself a version fluxcd's `ParseVersion` reads (`1.2.3`, `v1.2.3`) is pulled as
//!   that tag directly. Otherwise the tags are listed (`GET /v2/<path>/<chart>/tags/list`, following
//!   `Link` pages), `_` turned back into `+` as Helm does, only strict versions kept (`v1.2.3` tags are
//!   dropped), and [`super::select`] picks one.
//! - The tag is pulled with `+` as `_`: the manifest (OCI or Docker v2), whose config must be Helm's and
//!   whose chart layer (`application/vnd.cncf.helm.chart.content.v1.tar+gzip`, or the legacy
//!   `application/tar+gzip`) is fetched and checked against its digest.
//! - Authentication follows the registry's challenge: a 401 with `WWW-Authenticate: Bearer realm=…` gets
//!   a token from the realm (with the basic credentials when given, else anonymously); `Basic` gets the
//!   basic credentials. `insecure`: plain HTTP.
//!
//! An OCIRepository differs (source-controller's `getArtifactRef`): `ref.digest` pulls that manifest and
//! `ref.tag` that tag as written; for `ref.semver` the tags are first kept by `ref.semverFilter`, read as
//! `ParseVersion` reads them (a `v` allowed), `_` as `+` only when `layerSelector.mediaType` is Helm's
//! chart layer, and the newest match wins with no exact-string shortcut. The chart is the first layer of
//! the selected media type, else the first layer; the config's media type is not checked.

use http::HeaderMap;
use http::header::{ACCEPT, AUTHORIZATION, HeaderValue, WWW_AUTHENTICATE};
use serde::Deserialize;
use tokio::sync::Mutex;

use super::client::{Http, Reply};
use super::urls::Url;
use super::{Candidate, Credentials, Fetched, OciReference, OciRule, RepositoryError, body_of, newest_match, select};
use crate::go::semver::Version;

/// Helm's chart layer.
pub const CHART_LAYER: &str = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";
/// The chart layer of Helm's earliest OCI support, still accepted by its client.
const LEGACY_CHART_LAYER: &str = "application/tar+gzip";
/// Helm's config media type.
const CHART_CONFIG: &str = "application/vnd.cncf.helm.config.v1+json";
const MANIFEST_ACCEPT: &str =
    "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json";
const SMALL_LIMIT: usize = 4 << 20;
const CHART_LIMIT: usize = 10 << 20;
/// Tag list pages followed at most.
const MAX_PAGES: usize = 100;

/// A session with one repository of a registry: its address and the authorization earned so far.
struct Registry<'a> {
    http: Http,
    /// `http(s)://host[:port]`.
    base: Url,
    /// `path/chart` in the registry.
    name: String,
    /// `oci://…`, for messages.
    shown: String,
    /// The chart's name, for messages.
    chart: String,
    creds: &'a Credentials,
    authorization: Mutex<Option<HeaderValue>>,
}

#[derive(Deserialize)]
struct TagList {
    #[serde(default)]
    tags: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct Manifest {
    #[serde(default)]
    config: Option<Descriptor>,
    #[serde(default)]
    layers: Vec<Descriptor>,
}

#[derive(Deserialize)]
struct Descriptor {
    #[serde(rename = "mediaType", default)]
    media_type: String,
    #[serde(default)]
    digest: String,
}

#[derive(Deserialize)]
struct Token {
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    access_token: Option<String>,
}

impl<'a> Registry<'a> {
    /// The session for `chart` under `url` (`oci://host[:port][/path]`).
    fn open(url: &str, insecure: bool, chart: &str, creds: &'a Credentials) -> Result<Registry<'a>, RepositoryError> {
        let bad = |why: String| RepositoryError::BadUrl { url: url.to_string(), why };
        let parsed = Url::parse(url).map_err(bad)?;
        if parsed.scheme != "oci" {
            return Err(bad("an OCI registry address starts with oci://".into()));
        }
        let path = parsed.path.trim_matches('/');
        let name = if path.is_empty() { chart.to_string() } else { format!("{path}/{chart}") };
        let scheme = if insecure { "http" } else { "https" };
        let base = Url { scheme: scheme.into(), host: parsed.host.clone(), path: String::new(), query: None };
        let shown = format!("oci://{}/{name}", parsed.host);
        let chart = chart.to_string();
        Ok(Registry { http: Http::new(creds)?, base, name, shown, chart, creds, authorization: Mutex::new(None) })
    }

    /// GETs `path` on the registry, answering an authentication challenge once.
    async fn get(
        &self,
        path: &str,
        accept: Option<&'static str>,
        limit: usize,
    ) -> Result<(Url, Reply), RepositoryError> {
        let url = self.base.join(path);
        let mut headers = HeaderMap::new();
        if let Some(accept) = accept {
            headers.insert(ACCEPT, HeaderValue::from_static(accept));
        }
        if let Some(auth) = self.authorization.lock().await.clone() {
            headers.insert(AUTHORIZATION, auth);
        }
        let reply = self.http.get(&url, &headers, limit).await?;
        if reply.status != http::StatusCode::UNAUTHORIZED {
            return Ok((url, reply));
        }
        let challenge = reply.headers.get(WWW_AUTHENTICATE).and_then(|v| v.to_str().ok()).unwrap_or_default();
        let auth = self.answer(challenge).await?;
        headers.insert(AUTHORIZATION, auth.clone());
        *self.authorization.lock().await = Some(auth);
        let reply = self.http.get(&url, &headers, limit).await?;
        Ok((url, reply))
    }

    /// The `Authorization` a challenge asks for: a bearer token from its realm, or the basic credentials.
    async fn answer(&self, challenge: &str) -> Result<HeaderValue, RepositoryError> {
        let unauthorized = || RepositoryError::Unauthorized { repo: self.shown.clone(), status: 401 };
        let (scheme, params) = parse_challenge(challenge);
        if !scheme.eq_ignore_ascii_case("bearer") {
            return self.creds.basic_header().ok_or_else(unauthorized);
        }
        let realm = params.iter().find(|(k, _)| k == "realm").map(|(_, v)| v.as_str()).ok_or_else(unauthorized)?;
        let mut realm = Url::parse(realm).map_err(|why| RepositoryError::BadUrl { url: realm.to_string(), why })?;
        let scope = format!("repository:{}:pull", self.name);
        let mut query: Vec<String> = realm.query.iter().cloned().collect();
        for (key, value) in &params {
            if key == "service" || key == "scope" {
                query.push(format!("{key}={}", encode(value)));
            }
        }
        if !params.iter().any(|(k, _)| k == "scope") {
            query.push(format!("scope={}", encode(&scope)));
        }
        realm.query = Some(query.join("&"));
        let mut headers = HeaderMap::new();
        if let Some(basic) = self.creds.basic_header() {
            headers.insert(AUTHORIZATION, basic);
        }
        let reply = self.http.get(&realm, &headers, SMALL_LIMIT).await?;
        let body = body_of(reply, &realm, &self.shown)?;
        let token: Token = serde_json::from_slice(&body)
            .map_err(|e| RepositoryError::NotAChart { url: realm.public(), why: format!("its token answer: {e}") })?;
        let token = token.token.or(token.access_token).filter(|t| !t.is_empty()).ok_or_else(unauthorized)?;
        let mut value = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| unauthorized())?;
        value.set_sensitive(true);
        Ok(value)
    }

    /// The repository's tags, as the registry lists them.
    async fn tags(&self) -> Result<Vec<String>, RepositoryError> {
        let mut tags = Vec::new();
        let mut next = Some(format!("/v2/{}/tags/list", self.name));
        for _ in 0..MAX_PAGES {
            let Some(path) = next.take() else { break };
            let (url, reply) = self.get(&path, None, SMALL_LIMIT).await?;
            next = reply.headers.get(http::header::LINK).and_then(|l| l.to_str().ok()).and_then(next_page);
            if reply.status == http::StatusCode::NOT_FOUND {
                return Err(RepositoryError::NoChart { chart: self.chart.clone(), repo: self.shown.clone() });
            }
            let body = body_of(reply, &url, &self.shown)?;
            let list: TagList = serde_json::from_slice(&body)
                .map_err(|e| RepositoryError::BadIndex { url: url.public(), why: e.to_string() })?;
            tags.extend(list.tags.unwrap_or_default());
        }
        Ok(tags)
    }
}

/// `Bearer realm="…",service="…"` → `("Bearer", [(realm, …), (service, …)])`.
fn parse_challenge(header: &str) -> (String, Vec<(String, String)>) {
    let (scheme, rest) = header.trim().split_once(' ').unwrap_or((header.trim(), ""));
    let mut params = Vec::new();
    let mut rest = rest.trim();
    while let Some((key, after)) = rest.split_once('=') {
        let key = key.trim().trim_start_matches(',').trim().to_ascii_lowercase();
        let (value, remaining) = match after.strip_prefix('"') {
            Some(quoted) => quoted.split_once('"').unwrap_or((quoted, "")),
            None => after.split_once(',').unwrap_or((after, "")),
        };
        params.push((key, value.to_string()));
        rest = remaining.trim_start_matches([',', ' ']);
    }
    (scheme.to_string(), params)
}

/// The next page of a `Link: </v2/…?last=…>; rel="next"` header.
fn next_page(link: &str) -> Option<String> {
    let (target, rel) = link.split_once(';')?;
    rel.contains("next").then(|| target.trim().trim_start_matches('<').trim_end_matches('>').to_string())
}

/// Percent-encodes a query value (unreserved characters kept).
fn encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Whether tags spell a version's `+` as `_`: always through Helm, for an OCIRepository only when its
/// layer is Helm's chart.
fn underscore_is_plus(rule: &OciRule) -> bool {
    match rule {
        OciRule::Helm => true,
        OciRule::Flux { layer, .. } => layer.as_deref() == Some(CHART_LAYER),
    }
}

/// The tag of `version` in the registry.
fn tag_of(rule: &OciRule, version: &str) -> String {
    if underscore_is_plus(rule) { version.replace('+', "_") } else { version.to_string() }
}

/// The versions among a registry's `tags` that `rule` reads: Helm's strict versions with `_` as `+`, or an
/// OCIRepository's tags that match its `semverFilter` and that `ParseVersion` reads.
fn versions_of(rule: &OciRule, tags: &[String]) -> Result<Vec<String>, RepositoryError> {
    let plus = |t: &String| if underscore_is_plus(rule) { t.replace('_', "+") } else { t.clone() };
    match rule {
        OciRule::Helm => Ok(tags.iter().map(plus).filter(|t| Version::parse_strict(t).is_some()).collect()),
        OciRule::Flux { semver_filter, .. } => {
            let filter = match semver_filter.as_deref().filter(|f| !f.is_empty()) {
                Some(f) => Some(regex_lite::Regex::new(f).map_err(|e| RepositoryError::BadConstraint {
                    version: format!("semverFilter {f}"),
                    why: e.to_string(),
                })?),
                None => None,
            };
            let kept = tags.iter().filter(|t| filter.as_ref().is_none_or(|f| f.is_match(t)));
            Ok(kept.map(plus).filter(|t| Version::parse_flux(t).is_some()).collect())
        }
    }
}

/// Newest first, as the registry's candidates.
fn candidates(tags: &[String]) -> Vec<Candidate> {
    tags.iter().map(|t| Candidate { version: t.clone(), created: None }).collect()
}

/// The versions of `chart` under `url` that `rule` reads, newest first.
pub async fn versions(
    url: &str,
    insecure: bool,
    rule: &OciRule,
    chart: &str,
    creds: &Credentials,
) -> Result<Vec<String>, RepositoryError> {
    let registry = Registry::open(url, insecure, chart, creds)?;
    Ok(super::newest_first_versions(&candidates(&versions_of(rule, &registry.tags().await?)?)))
}

/// Fetches `chart` from the registry at `url`: at the version `wanted` picks, or, for an OCIRepository's
/// `ref.tag` or `ref.digest`, at that tag or manifest.
pub async fn fetch(
    url: &str,
    insecure: bool,
    rule: &OciRule,
    chart: &str,
    wanted: &str,
    creds: &Credentials,
) -> Result<Fetched, RepositoryError> {
    let registry = Registry::open(url, insecure, chart, creds)?;
    let listed = async { versions_of(rule, &registry.tags().await?) };
    let (version, reference, available) = match rule {
        OciRule::Flux { reference: OciReference::Digest, .. } => (wanted.to_string(), wanted.to_string(), vec![]),
        OciRule::Flux { reference: OciReference::Tag, .. } => {
            let version = if underscore_is_plus(rule) { wanted.replace('_', "+") } else { wanted.to_string() };
            (version, wanted.to_string(), vec![])
        }
        _ => {
            let listed = listed.await;
            let available = listed.as_ref().map(|t| super::newest_first_versions(&candidates(t))).unwrap_or_default();
            let version = if Version::parse_flux(wanted).is_some() {
                wanted.to_string()
            } else {
                picked(rule, &registry, &listed?, wanted)?
            };
            (version.clone(), tag_of(rule, &version), available)
        }
    };
    let (bytes, digest, blob_url, manifest) = pull(&registry, rule, &reference, &version).await?;
    Ok(Fetched { version, bytes, digest, url: blob_url, available, manifest_digest: Some(manifest) })
}

/// The version `rule` picks among `versions` for `constraint`: Helm's exact string first, an
/// OCIRepository's newest match.
fn picked(
    rule: &OciRule,
    registry: &Registry<'_>,
    versions: &[String],
    constraint: &str,
) -> Result<String, RepositoryError> {
    let found = candidates(versions);
    let pick = match rule {
        OciRule::Helm => select(&found, constraint)?,
        OciRule::Flux { .. } => newest_match(&found, constraint)?,
    };
    pick.map(|c| c.version.clone()).ok_or_else(|| RepositoryError::NoMatch {
        chart: registry.chart.clone(),
        repo: registry.shown.clone(),
        version: constraint.to_string(),
        available: super::newest_first_versions(&found),
    })
}

/// The chart layer of the manifest `reference` (a tag or a digest) names, for `version`: its bytes,
/// digest and URL, and the manifest's digest (what an OCIRepository's revision names).
async fn pull(
    registry: &Registry<'_>,
    rule: &OciRule,
    reference: &str,
    version: &str,
) -> Result<(Vec<u8>, String, String, String), RepositoryError> {
    let (url, reply) = registry
        .get(&format!("/v2/{}/manifests/{reference}", registry.name), Some(MANIFEST_ACCEPT), SMALL_LIMIT)
        .await?;
    if reply.status == http::StatusCode::NOT_FOUND {
        let available = match registry.tags().await {
            Ok(tags) => versions_of(rule, &tags).map(|t| super::newest_first_versions(&candidates(&t))),
            Err(e) => Err(e),
        };
        return Err(RepositoryError::NoMatch {
            chart: registry.chart.clone(),
            repo: registry.shown.clone(),
            version: version.to_string(),
            available: available.unwrap_or_default(),
        });
    }
    let body = body_of(reply, &url, &registry.shown)?;
    let manifest_digest = super::sha256(&body);
    let not_chart = |why: String| RepositoryError::NotAChart { url: format!("{}:{reference}", registry.shown), why };
    let manifest: Manifest = serde_json::from_slice(&body).map_err(|e| not_chart(format!("its manifest: {e}")))?;
    let layer = chart_layer(rule, &manifest).map_err(not_chart)?;
    if !layer.digest.starts_with("sha256:") || layer.digest.contains(['/', '?', '#']) {
        return Err(not_chart(format!("its chart layer's digest {:?} is not sha256", layer.digest)));
    }
    let (blob_url, reply) =
        registry.get(&format!("/v2/{}/blobs/{}", registry.name, layer.digest), None, CHART_LIMIT).await?;
    let bytes = body_of(reply, &blob_url, &registry.shown)?;
    let got = super::sha256(&bytes);
    if got != layer.digest {
        return Err(RepositoryError::DigestMismatch { url: blob_url.public(), want: layer.digest.clone(), got });
    }
    Ok((bytes, got, blob_url.public(), manifest_digest))
}

/// The layer that holds the chart: Helm's (its config and layer media types), or the one an
/// OCIRepository's `layerSelector` selects.
fn chart_layer<'m>(rule: &OciRule, manifest: &'m Manifest) -> Result<&'m Descriptor, String> {
    match rule {
        OciRule::Helm => {
            if manifest.config.as_ref().is_none_or(|c| c.media_type != CHART_CONFIG) {
                return Err(format!("its config is not {CHART_CONFIG}"));
            }
            manifest
                .layers
                .iter()
                .find(|l| l.media_type == CHART_LAYER || l.media_type == LEGACY_CHART_LAYER)
                .ok_or_else(|| format!("it has no {CHART_LAYER} layer"))
        }
        OciRule::Flux { layer, .. } => {
            let selected = layer.as_deref().and_then(|m| manifest.layers.iter().find(|l| l.media_type == m));
            selected.or(manifest.layers.first()).ok_or_else(|| "its manifest has no layers".to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_are_read_as_registries_write_them() {
        let (scheme, params) = parse_challenge(
            r#"Bearer realm="https://auth.example.com/token",service="registry.example.com",scope="repository:charts/podinfo:pull""#,
        );
        assert_eq!(scheme, "Bearer");
        assert_eq!(
            params,
            [
                ("realm".to_string(), "https://auth.example.com/token".to_string()),
                ("service".to_string(), "registry.example.com".to_string()),
                ("scope".to_string(), "repository:charts/podinfo:pull".to_string()),
            ]
        );
        assert_eq!(parse_challenge(r#"Basic realm="Registry Realm""#).0, "Basic");
        assert_eq!(encode("repository:a/b:pull"), "repository%3Aa%2Fb%3Apull");
    }

    #[test]
    fn tag_pages_follow_the_link_header() {
        assert_eq!(
            next_page(r#"</v2/c/tags/list?last=1.2.3&n=100>; rel="next""#).as_deref(),
            Some("/v2/c/tags/list?last=1.2.3&n=100")
        );
        assert_eq!(next_page("garbage"), None);
    }

    #[test]
    fn an_oci_address_names_the_chart_below_its_path() {
        let creds = Credentials::default();
        let r = Registry::open("oci://127.0.0.1:5000/charts/", true, "podinfo", &creds).expect("opens");
        assert_eq!((r.base.public().as_str(), r.name.as_str()), ("http://127.0.0.1:5000", "charts/podinfo"));
        assert_eq!(r.shown, "oci://127.0.0.1:5000/charts/podinfo");
        let r = Registry::open("oci://ghcr.io", false, "podinfo", &creds).expect("opens");
        assert_eq!((r.base.scheme.as_str(), r.name.as_str()), ("https", "podinfo"));
        assert!(Registry::open("https://ghcr.io/x", false, "p", &creds).is_err());
    }

    #[test]
    fn tags_are_helms_strict_versions_with_plus_for_underscore() {
        let raw: Vec<String> =
            ["1.0.0", "1.1.0_build.5", "v1.2.0", "1.3", "latest", "2.0.0-rc.1"].map(String::from).to_vec();
        let tags = versions_of(&OciRule::Helm, &raw).expect("no filter");
        assert_eq!(tags, ["1.0.0", "1.1.0+build.5", "2.0.0-rc.1"]);
        let found = candidates(&tags);
        assert_eq!(select(&found, "").expect("ok").map(|c| c.version.as_str()), Some("1.1.0+build.5"));
    }

    fn flux(filter: Option<&str>, layer: Option<&str>) -> OciRule {
        OciRule::Flux {
            reference: OciReference::Semver,
            semver_filter: filter.map(String::from),
            layer: layer.map(String::from),
        }
    }

    #[test]
    fn an_oci_repository_reads_tags_as_source_controller_does() {
        let raw: Vec<String> =
            ["1.0.0", "v1.2.0", "1.3.0_build.5", "1.4.0-rc.1", "latest", "1.5.0-dev.3"].map(String::from).to_vec();
        // `v` allowed; `_` kept as written unless the layer is Helm's chart.
        assert_eq!(versions_of(&flux(None, None), &raw).expect("ok"), ["1.0.0", "v1.2.0", "1.4.0-rc.1", "1.5.0-dev.3"]);
        assert_eq!(
            versions_of(&flux(None, Some(CHART_LAYER)), &raw).expect("ok"),
            ["1.0.0", "v1.2.0", "1.3.0+build.5", "1.4.0-rc.1", "1.5.0-dev.3"]
        );
        // The filter is unanchored, on the tag as the registry lists it.
        assert_eq!(versions_of(&flux(Some(".*-dev.*"), None), &raw).expect("ok"), ["1.5.0-dev.3"]);
        assert_eq!(versions_of(&flux(Some("^v"), None), &raw).expect("ok"), ["v1.2.0"]);
        assert!(versions_of(&flux(Some("("), None), &raw).is_err(), "a filter that is no expression");
        // No exact-string shortcut: `1.0.0-rc.1` as a range takes the newest pre-release too.
        let found = candidates(&["1.0.0-rc.1".to_string(), "1.0.0-rc.2".to_string()]);
        assert_eq!(newest_match(&found, ">=1.0.0-rc.1").expect("ok").map(|c| c.version.as_str()), Some("1.0.0-rc.2"));
    }

    #[test]
    fn the_chart_layer_is_the_selected_one_else_the_first() {
        let layer = |m: &str, d: &str| Descriptor { media_type: m.into(), digest: d.into() };
        let manifest = Manifest {
            config: Some(layer("application/vnd.example.config", "sha256:c")),
            layers: vec![layer("application/x-first", "sha256:1"), layer(CHART_LAYER, "sha256:2")],
        };
        assert_eq!(chart_layer(&flux(None, Some(CHART_LAYER)), &manifest).expect("ok").digest, "sha256:2");
        assert_eq!(chart_layer(&flux(None, None), &manifest).expect("ok").digest, "sha256:1");
        assert_eq!(chart_layer(&flux(None, Some("application/x-none")), &manifest).expect("ok").digest, "sha256:1");
        assert!(chart_layer(&OciRule::Helm, &manifest).is_err(), "Helm checks the config's media type");
    }
}
