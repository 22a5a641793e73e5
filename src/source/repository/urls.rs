//! The few URL operations repositories need, as Go's `net/url` and `path` do them: parsing
//! `scheme://[user@]host[:port]/path?query`, resolving a reference against a base (RFC 3986, as
//! `URL.ResolveReference`), `path.Join` of a file onto the path, and printing without the user part.

/// An absolute URL, split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    pub scheme: String,
    /// `host[:port]`, without any `user:password@`.
    pub host: String,
    /// Starts with `/` (or is empty).
    pub path: String,
    pub query: Option<String>,
}

impl Url {
    /// `scheme://[userinfo@]host[:port][/path][?query][#fragment]`; the user part and the fragment are
    /// dropped (credentials are passed apart, never in a URL).
    pub fn parse(text: &str) -> Result<Url, String> {
        let (scheme, rest) = text.split_once("://").ok_or_else(|| format!("{text:?} is not an absolute URL"))?;
        let scheme_ok = scheme.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
            && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
        if !scheme_ok {
            return Err(format!("{text:?} has no valid scheme"));
        }
        let rest = rest.split('#').next().unwrap_or_default();
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, rest) = rest.split_at(end);
        let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        if host.is_empty() {
            return Err(format!("{text:?} names no host"));
        }
        let (path, query) = match rest.split_once('?') {
            Some((p, q)) => (p, Some(q.to_string())),
            None => (rest, None),
        };
        Ok(Url { scheme: scheme.to_ascii_lowercase(), host: host.to_string(), path: path.to_string(), query })
    }

    /// The URL as messages and [`super::Fetched::url`] give it: no credentials in it.
    pub fn public(&self) -> String {
        let query = self.query.as_deref().map(|q| format!("?{q}")).unwrap_or_default();
        format!("{}://{}{}{query}", self.scheme, self.host, self.path)
    }

    /// What an HTTP request is sent to (the same as [`Url::public`]; never a user part).
    pub fn request_target(&self) -> String {
        let mut target = self.public();
        if self.path.is_empty() {
            let at = self.scheme.len() + 3 + self.host.len();
            target.insert(at, '/');
        }
        target
    }

    /// `host[:port]`, lowercase, for "same host" checks.
    pub fn host_port(&self) -> String {
        self.host.to_ascii_lowercase()
    }

    /// This URL with `name` path-joined onto its path (`path.Join`, cleaned), the query kept.
    pub fn path_join(&self, name: &str) -> Url {
        Url { path: clean(&format!("{}/{name}", self.path)), ..self.clone() }
    }

    /// `reference` resolved against this URL (`URL.ResolveReference`).
    pub fn join(&self, reference: &str) -> Url {
        if let Ok(absolute) = Url::parse(reference) {
            return absolute;
        }
        let reference = reference.split('#').next().unwrap_or_default();
        if let Some(rest) = reference.strip_prefix("//") {
            return Url::parse(&format!("{}://{rest}", self.scheme)).unwrap_or_else(|_| self.clone());
        }
        let (path, query) = match reference.split_once('?') {
            Some((p, q)) => (p, Some(q.to_string())),
            None => (reference, None),
        };
        if path.is_empty() {
            return Url { query: query.or_else(|| self.query.clone()), ..self.clone() };
        }
        let merged = if path.starts_with('/') {
            path.to_string()
        } else {
            let dir = self.path.rfind('/').map_or("/", |i| &self.path[..=i]);
            format!("{dir}{path}")
        };
        Url { path: remove_dots(&merged), query, ..self.clone() }
    }
}

/// RFC 3986's remove_dot_segments on an absolute path, keeping a trailing slash.
fn remove_dots(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let last = segments.len().saturating_sub(1);
    let mut trailing = false;
    for (i, segment) in segments.iter().enumerate() {
        match *segment {
            "." => trailing = i == last,
            ".." => {
                out.pop();
                trailing = i == last;
            }
            s => {
                out.push(s);
                trailing = false;
            }
        }
    }
    let mut joined = format!("/{}", out.join("/"));
    if trailing && !joined.ends_with('/') {
        joined.push('/');
    }
    joined
}

/// Go's `path.Clean` of an absolute path: no empty, `.` or `..` segments, no trailing slash.
fn clean(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            s => out.push(s),
        }
    }
    format!("/{}", out.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).expect("a URL")
    }

    #[test]
    fn parsing_drops_credentials_and_fragments() {
        let u = url("https://user:secret@charts.example.com:8443/stable/?token=1#x");
        assert_eq!(u.host, "charts.example.com:8443");
        assert_eq!(u.public(), "https://charts.example.com:8443/stable/?token=1");
        assert!(!format!("{u:?}").contains("secret"));
        assert_eq!(url("http://127.0.0.1:8080").request_target(), "http://127.0.0.1:8080/");
        assert!(Url::parse("charts.example.com/x").is_err());
        assert!(Url::parse("https:///x").is_err());
    }

    #[test]
    fn index_yaml_is_path_joined_keeping_the_query() {
        assert_eq!(url("https://h/charts/").path_join("index.yaml").public(), "https://h/charts/index.yaml");
        assert_eq!(url("https://h").path_join("index.yaml").public(), "https://h/index.yaml");
        assert_eq!(url("https://h/a//b/../c?sig=1").path_join("index.yaml").public(), "https://h/a/c/index.yaml?sig=1");
    }

    #[test]
    fn references_resolve_as_go_does() {
        let base = url("https://h/charts/index.yaml");
        assert_eq!(base.join("podinfo-1.0.0.tgz").public(), "https://h/charts/podinfo-1.0.0.tgz");
        assert_eq!(base.join("../other/p.tgz").public(), "https://h/other/p.tgz");
        assert_eq!(base.join("/abs/p.tgz").public(), "https://h/abs/p.tgz");
        assert_eq!(base.join("//cdn.example.com/p.tgz").public(), "https://cdn.example.com/p.tgz");
        assert_eq!(base.join("http://other/p.tgz?x=1").public(), "http://other/p.tgz?x=1");
        assert_eq!(base.join("./sub/./p.tgz").public(), "https://h/charts/sub/p.tgz");
    }
}
