//! An HTTP(S) Helm repository, read as source-controller reads a HelmRepository for a HelmChart:
//!
//! - `index.yaml` is path-joined onto the repository URL (the query kept), fetched with the basic
//!   credentials, at most 50 MiB; valid JSON is read as JSON, anything else as YAML; `apiVersion` is
//!   required; entries Helm's validation refuses (no name, a version `NewVersion` cannot read, an unknown
//!   type) are dropped.
//! - The version is picked by [`super::select`].
//! - Only `urls[0]` is fetched: a relative URL is resolved against the repository URL with a trailing `/`,
//!   and takes the repository URL's query (Helm's `ResolveReferenceURL`); at most 10 MiB. The basic
//!   credentials go to it only when it is on the repository's scheme and host, or with `passCredentials`.
//!   The index's `digest` of the chart is not checked (source-controller does not either).

use std::collections::BTreeMap;

use http::HeaderMap;
use http::header::AUTHORIZATION;
use serde::Deserialize;

use super::client::Http;
use super::urls::Url;
use super::{Candidate, Credentials, Fetched, RepositoryError, body_of, select};
use crate::go::semver::Version;

/// The largest index source-controller reads.
const INDEX_LIMIT: usize = 50 << 20;
/// The largest chart source-controller downloads.
const CHART_LIMIT: usize = 10 << 20;

/// `index.yaml`, the parts read here.
#[derive(Debug, Deserialize)]
struct Index {
    #[serde(rename = "apiVersion", default)]
    api_version: String,
    #[serde(default)]
    entries: BTreeMap<String, Option<Vec<Option<Entry>>>>,
}

/// One chart version of the index.
#[derive(Debug, Clone, Deserialize)]
pub struct Entry {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub urls: Vec<String>,
    #[serde(default)]
    pub created: Option<String>,
    #[serde(rename = "type", default)]
    pub chart_type: Option<String>,
}

impl Entry {
    /// What Helm's `Metadata.Validate` asks of an index entry (its maintainers and dependencies aside).
    fn valid(&self) -> bool {
        let name_ok = !self.name.is_empty() && self.name != "." && self.name != ".." && !self.name.contains('/');
        let type_ok = matches!(self.chart_type.as_deref(), None | Some("" | "application" | "library"));
        name_ok && type_ok && !self.version.is_empty() && Version::parse(&self.version).is_some()
    }

    fn candidate(&self) -> Candidate {
        Candidate { version: self.version.clone(), created: self.created.as_deref().and_then(|t| t.parse().ok()) }
    }
}

/// The valid entries of each chart of an index's bytes (see the module docs).
pub fn parse_index(bytes: &[u8]) -> Result<BTreeMap<String, Vec<Entry>>, String> {
    if bytes.is_empty() {
        return Err("the index is empty".into());
    }
    let index: Index = match serde_json::from_slice(bytes) {
        Ok(index) => index,
        Err(_) if serde_json::from_slice::<serde_json::Value>(bytes).is_err() => {
            serde_saphyr::from_slice(bytes).map_err(|e| first_line(&e.to_string()))?
        }
        Err(e) => return Err(e.to_string()),
    };
    if index.api_version.is_empty() {
        return Err("it has no apiVersion".into());
    }
    Ok(index
        .entries
        .into_iter()
        .map(|(name, versions)| {
            (name, versions.unwrap_or_default().into_iter().flatten().filter(Entry::valid).collect())
        })
        .collect())
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}

/// The URL of the chart an index entry names (`ResolveReferenceURL`).
pub fn chart_url(repo: &Url, reference: &str) -> Url {
    if let Ok(absolute) = Url::parse(reference) {
        return absolute;
    }
    let base = Url { path: format!("{}/", repo.path.trim_end_matches('/')), ..repo.clone() };
    Url { query: repo.query.clone(), ..base.join(reference) }
}

/// The repository URL, which must be `http://` or `https://`.
fn repository_url(url: &str) -> Result<Url, RepositoryError> {
    let parsed = Url::parse(url).map_err(|why| RepositoryError::BadUrl { url: url.to_string(), why })?;
    if !matches!(parsed.scheme.as_str(), "http" | "https") {
        let why = "a Helm repository is http:// or https:// (oci:// is an OCI registry)".to_string();
        return Err(RepositoryError::BadUrl { url: parsed.public(), why });
    }
    Ok(parsed)
}

/// The basic-auth header for `url`: only to the repository's own scheme and host unless `passCredentials`.
fn auth_for(repo: &Url, url: &Url, creds: &Credentials) -> HeaderMap {
    let mut headers = HeaderMap::new();
    let same = repo.scheme == url.scheme && repo.host_port() == url.host_port();
    if (same || creds.pass_credentials)
        && let Some(value) = creds.basic_header()
    {
        headers.insert(AUTHORIZATION, value);
    }
    headers
}

/// The valid entries of `chart` in the index at `repo`.
async fn entries(http: &Http, repo: &Url, chart: &str, creds: &Credentials) -> Result<Vec<Entry>, RepositoryError> {
    let index_url = repo.path_join("index.yaml");
    let reply = http.get(&index_url, &auth_for(repo, &index_url, creds), INDEX_LIMIT).await?;
    let bytes = body_of(reply, &index_url, &repo.public())?;
    let mut index = parse_index(&bytes).map_err(|why| RepositoryError::BadIndex { url: index_url.public(), why })?;
    index.remove(chart).ok_or_else(|| RepositoryError::NoChart { chart: chart.to_string(), repo: repo.public() })
}

/// The versions of `chart` at `url`, newest first.
pub async fn versions(url: &str, chart: &str, creds: &Credentials) -> Result<Vec<String>, RepositoryError> {
    let repo = repository_url(url)?;
    let http = Http::new(creds)?;
    let found = entries(&http, &repo, chart, creds).await?;
    Ok(super::newest_first_versions(&found.iter().map(Entry::candidate).collect::<Vec<_>>()))
}

/// Fetches `chart` at the version `constraint` picks from the repository at `url`.
pub async fn fetch(url: &str, chart: &str, constraint: &str, creds: &Credentials) -> Result<Fetched, RepositoryError> {
    let repo = repository_url(url)?;
    let http = Http::new(creds)?;
    let found = entries(&http, &repo, chart, creds).await?;
    let candidates: Vec<Candidate> = found.iter().map(Entry::candidate).collect();
    let available = super::newest_first_versions(&candidates);
    let picked = select(&candidates, constraint)?.ok_or_else(|| RepositoryError::NoMatch {
        chart: chart.to_string(),
        repo: repo.public(),
        version: constraint.to_string(),
        available: available.clone(),
    })?;
    let entry = found.iter().find(|e| e.version == picked.version).ok_or_else(|| RepositoryError::NoChartUrl {
        chart: chart.to_string(),
        version: picked.version.clone(),
        repo: repo.public(),
    })?;
    let first = entry.urls.first().ok_or_else(|| RepositoryError::NoChartUrl {
        chart: chart.to_string(),
        version: entry.version.clone(),
        repo: repo.public(),
    })?;
    let archive_url = chart_url(&repo, first);
    let reply = http.get(&archive_url, &auth_for(&repo, &archive_url, creds), CHART_LIMIT).await?;
    let bytes = body_of(reply, &archive_url, &repo.public())?;
    let digest = super::sha256(&bytes);
    Ok(Fetched {
        version: entry.version.clone(),
        bytes,
        digest,
        url: archive_url.public(),
        available,
        manifest_digest: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const INDEX: &str = "apiVersion: v1
entries:
  podinfo:
  - name: podinfo
    version: 6.5.1
    urls: [podinfo-6.5.1.tgz]
    created: \"2024-02-01T10:00:00.000000000Z\"
  - name: podinfo
    version: \"1.7\"
    urls: [podinfo-1.7.tgz]
  - name: podinfo
    version: not-a-version
    urls: [x.tgz]
  - name: podinfo
    version: 6.6.0-rc.1
    urls: [https://cdn.example.com/podinfo-6.6.0-rc.1.tgz]
  - name: podinfo
    version: 6.4.0
    type: plugin
    urls: [bad-type.tgz]
  - null
  other: null
";

    #[test]
    fn an_index_keeps_the_entries_helm_validates() {
        let index = parse_index(INDEX.as_bytes()).expect("an index");
        let versions: Vec<&str> = index["podinfo"].iter().map(|e| e.version.as_str()).collect();
        assert_eq!(versions, ["6.5.1", "1.7", "6.6.0-rc.1"]);
        assert!(index["other"].is_empty());
        assert!(index["podinfo"][0].candidate().created.is_some());
        assert!(parse_index(b"entries: {}\n").is_err(), "no apiVersion");
        assert!(parse_index(b"").is_err());
        let json = br#"{"apiVersion":"v1","entries":{"a":[{"name":"a","version":"1.0.0","urls":["a.tgz"]}]}}"#;
        assert_eq!(parse_index(json).expect("JSON")["a"].len(), 1);
    }

    #[test]
    fn chart_urls_resolve_against_the_repository_with_its_query() {
        let repo = Url::parse("https://h/charts?sig=abc").expect("url");
        assert_eq!(chart_url(&repo, "podinfo-1.0.0.tgz").public(), "https://h/charts/podinfo-1.0.0.tgz?sig=abc");
        assert_eq!(chart_url(&repo, "../p.tgz").public(), "https://h/p.tgz?sig=abc");
        assert_eq!(chart_url(&repo, "https://cdn/p.tgz").public(), "https://cdn/p.tgz");
        let plain = Url::parse("http://127.0.0.1:8080").expect("url");
        assert_eq!(chart_url(&plain, "p.tgz").public(), "http://127.0.0.1:8080/p.tgz");
    }

    #[test]
    fn credentials_go_to_the_repositorys_host_only_unless_passed() {
        let repo = Url::parse("https://charts.example.com/stable").expect("url");
        let same = Url::parse("https://charts.example.com/stable/p.tgz").expect("url");
        let other = Url::parse("https://cdn.example.com/p.tgz").expect("url");
        let other_port = Url::parse("https://charts.example.com:8443/p.tgz").expect("url");
        let mut creds = Credentials { username: Some("u".into()), password: Some("p".into()), ..Default::default() };
        assert!(auth_for(&repo, &same, &creds).contains_key(AUTHORIZATION));
        assert!(!auth_for(&repo, &other, &creds).contains_key(AUTHORIZATION));
        assert!(!auth_for(&repo, &other_port, &creds).contains_key(AUTHORIZATION));
        creds.pass_credentials = true;
        assert!(auth_for(&repo, &other, &creds).contains_key(AUTHORIZATION));
    }

    #[test]
    fn only_http_repositories_are_helm_repositories() {
        assert!(repository_url("oci://ghcr.io/x").is_err());
        assert!(repository_url("https://user:pw@h/x").is_ok_and(|u| !u.public().contains("pw")));
    }
}

/// Against a real HTTP server: `python3 -m http.server` over a repository written here.
#[cfg(test)]
mod served {
    use super::super::{Repo, RepositoryChart, fetch, versions};
    use super::*;

    /// A child process killed when dropped.
    struct Server(std::process::Child);

    impl Drop for Server {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    fn archive(name: &str, version: &str) -> Vec<u8> {
        let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast()));
        let text = format!("apiVersion: v2\nname: {name}\nversion: {version}\n");
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        builder.append_data(&mut header, format!("{name}/Chart.yaml"), text.as_bytes()).expect("append");
        builder.into_inner().expect("tar").finish().expect("gzip")
    }

    fn free_port() -> u16 {
        std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port()
    }

    async fn serve(dir: &std::path::Path) -> (Server, u16) {
        let port = free_port();
        let child = std::process::Command::new("python3")
            .args(["-m", "http.server", "--bind", "127.0.0.1", &port.to_string()])
            .current_dir(dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("python3 runs");
        let server = Server(child);
        for _ in 0..100 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                return (server, port);
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        panic!("python3 -m http.server did not start on {port}");
    }

    #[tokio::test]
    async fn a_chart_is_fetched_from_a_served_index() {
        let dir = tempfile::tempdir().expect("tempdir");
        let charts = dir.path().join("charts");
        std::fs::create_dir_all(&charts).expect("mkdir");
        for v in ["1.0.0", "1.1.0", "2.0.0-rc.1"] {
            std::fs::write(charts.join(format!("demo-{v}.tgz")), archive("demo", v)).expect("write");
        }
        let index = "apiVersion: v1\nentries:\n  demo:\n  - {name: demo, version: 2.0.0-rc.1, urls: [demo-2.0.0-rc.1.tgz]}\n  - {name: demo, version: 1.1.0, urls: [demo-1.1.0.tgz]}\n  - {name: demo, version: 1.0.0, urls: [/charts/demo-1.0.0.tgz]}\n";
        std::fs::write(charts.join("index.yaml"), index).expect("write");
        let (_server, port) = serve(dir.path()).await;
        let url = format!("http://127.0.0.1:{port}/charts/");
        let chart = |version: &str| RepositoryChart {
            repo: Repo::Http { url: url.clone() },
            chart: "demo".into(),
            version: version.into(),
        };
        let creds = Credentials::default();

        let got = fetch(&chart(""), &creds).await.expect("fetched");
        assert_eq!(got.version, "1.1.0");
        assert_eq!(got.bytes, archive("demo", "1.1.0"));
        assert_eq!(got.digest, crate::go::digest::sha256(&got.bytes));
        assert_eq!(got.url, format!("http://127.0.0.1:{port}/charts/demo-1.1.0.tgz"));
        assert_eq!(got.available, ["2.0.0-rc.1", "1.1.0", "1.0.0"]);
        assert_eq!(fetch(&chart("~1.0"), &creds).await.expect("fetched").version, "1.0.0");
        assert_eq!(fetch(&chart(">=1.0.0-0"), &creds).await.expect("fetched").version, "2.0.0-rc.1");
        assert_eq!(versions(&chart(""), &creds).await.expect("listed"), ["2.0.0-rc.1", "1.1.0", "1.0.0"]);

        let none = fetch(&chart(">=3"), &creds).await.expect_err("no match");
        assert!(none.to_string().contains("newest first: 2.0.0-rc.1, 1.1.0, 1.0.0"), "{none}");
        let missing = RepositoryChart { chart: "nope".into(), ..chart("") };
        assert!(matches!(fetch(&missing, &creds).await, Err(RepositoryError::NoChart { .. })));
        let wrong =
            RepositoryChart { repo: Repo::Http { url: format!("http://127.0.0.1:{port}/elsewhere") }, ..chart("") };
        assert!(matches!(fetch(&wrong, &creds).await, Err(RepositoryError::Status { status: 404, .. })));
    }

    #[tokio::test]
    async fn a_closed_port_answers_at_once() {
        let port = free_port();
        let chart = RepositoryChart {
            repo: Repo::Http { url: format!("http://127.0.0.1:{port}") },
            chart: "x".into(),
            version: String::new(),
        };
        let started = std::time::Instant::now();
        let error = fetch(&chart, &Credentials::default()).await.expect_err("nothing listens");
        assert!(matches!(error, RepositoryError::Unreachable { .. }), "{error}");
        assert!(started.elapsed() < std::time::Duration::from_secs(6));
    }
}
