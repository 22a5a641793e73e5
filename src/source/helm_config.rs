//! Helm's own credentials for a repository, as `helm pull` reads them: an HTTP(S) repository's from
//! Helm's repository configuration (`$HELM_REPOSITORY_CONFIG`, else `helm/repositories.yaml` under the
//! user's configuration directory), matched by URL; an OCI registry's from Helm's registry configuration
//! (`$HELM_REGISTRY_CONFIG`, else `helm/registry/config.json`), a Docker config that `helm registry login`
//! writes. Used where there is no cluster to read a source's Secrets from.

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::Value;

use crate::source::repository::Credentials;

#[derive(Default, Deserialize)]
struct RepositoryFile {
    #[serde(default)]
    repositories: Vec<Entry>,
}

/// One entry of `repositories.yaml` (Helm's `repo.Entry`).
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    #[serde(default)]
    url: String,
    #[serde(default)]
    username: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    cert_file: String,
    #[serde(default)]
    key_file: String,
    #[serde(default)]
    ca_file: String,
    #[serde(default, rename = "insecure_skip_tls_verify")]
    insecure_skip_tls_verify: bool,
    #[serde(default, rename = "pass_credentials_all")]
    pass_credentials_all: bool,
}

/// The credentials Helm keeps for the repository at `url`: none when it keeps none (or its configuration
/// cannot be read, which `helm pull` would not mind either for a public repository).
pub fn credentials(url: &str) -> Credentials {
    if let Some(rest) = url.strip_prefix("oci://") {
        let host = rest.split('/').next().unwrap_or_default();
        return registry_credentials(host);
    }
    let Some(text) =
        config_file("HELM_REPOSITORY_CONFIG", "repositories.yaml").and_then(|f| std::fs::read_to_string(f).ok())
    else {
        return Credentials::default();
    };
    from_repositories(&text, url)
}

fn from_repositories(text: &str, url: &str) -> Credentials {
    let Ok(file) = serde_saphyr::from_str::<RepositoryFile>(text) else { return Credentials::default() };
    let same = |a: &str| a.trim_end_matches('/') == url.trim_end_matches('/');
    let Some(entry) = file.repositories.into_iter().find(|e| same(&e.url)) else { return Credentials::default() };
    let text_of = |path: &str| (!path.is_empty()).then(|| std::fs::read_to_string(path).ok()).flatten();
    let some = |s: String| (!s.is_empty()).then_some(s);
    Credentials {
        cert_pem: text_of(&entry.cert_file),
        key_pem: text_of(&entry.key_file),
        ca_pem: text_of(&entry.ca_file),
        username: some(entry.username),
        password: some(entry.password),
        insecure_skip_verify: entry.insecure_skip_tls_verify,
        pass_credentials: entry.pass_credentials_all,
    }
}

fn registry_credentials(host: &str) -> Credentials {
    let Some(text) =
        config_file("HELM_REGISTRY_CONFIG", "registry/config.json").and_then(|f| std::fs::read_to_string(f).ok())
    else {
        return Credentials::default();
    };
    match docker_config_auth(&text, &format!("oci://{host}")) {
        Some((u, p)) => Credentials { username: Some(u), password: Some(p), ..Credentials::default() },
        None => Credentials::default(),
    }
}

/// The username and password a `.dockerconfigjson` holds for the registry of `url`.
pub fn docker_config_auth(json: &str, url: &str) -> Option<(String, String)> {
    use base64::Engine as _;
    let host = url.split("://").nth(1).unwrap_or(url).split('/').next()?;
    let config: Value = serde_json::from_str(json).ok()?;
    let auths = config.get("auths")?.as_object()?;
    let entry = auths.iter().find(|(k, _)| {
        let k = k.split("://").nth(1).unwrap_or(k);
        k.split('/').next() == Some(host)
    })?;
    let entry = entry.1;
    if let (Some(u), Some(p)) =
        (entry.get("username").and_then(Value::as_str), entry.get("password").and_then(Value::as_str))
    {
        return Some((u.to_string(), p.to_string()));
    }
    let auth = entry.get("auth")?.as_str()?;
    let decoded = String::from_utf8(base64::engine::general_purpose::STANDARD.decode(auth).ok()?).ok()?;
    let (u, p) = decoded.split_once(':')?;
    Some((u.to_string(), p.to_string()))
}

/// `$VAR`, else `FILE` under Helm's configuration directory (`$HELM_CONFIG_HOME`, else
/// `$XDG_CONFIG_HOME/helm`, else `~/.config/helm`).
fn config_file(var: &str, file: &str) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(var).filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let home = std::env::var_os("HELM_CONFIG_HOME").filter(|v| !v.is_empty()).map(PathBuf::from).or_else(|| {
        let config = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
        Some(config.join("helm"))
    })?;
    Some(home.join(file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_docker_config_gives_the_registrys_credentials() {
        let json =
            r#"{"auths":{"127.0.0.1:5000":{"auth":"Y296eTpzM2NyZXQ="},"ghcr.io":{"username":"u","password":"p"}}}"#;
        assert_eq!(docker_config_auth(json, "oci://127.0.0.1:5000/charts"), Some(("cozy".into(), "s3cret".into())));
        assert_eq!(docker_config_auth(json, "oci://ghcr.io/org/charts"), Some(("u".into(), "p".into())));
        assert_eq!(docker_config_auth(json, "oci://quay.io/x"), None);
    }

    #[test]
    fn an_entry_is_found_by_its_url() {
        let text = "apiVersion: \"\"\nrepositories:\n- name: other\n  url: https://other.example\n\
                    - name: private\n  url: https://charts.example/private/\n  username: cozy\n  password: s3cret\n\
                    \x20 pass_credentials_all: true\n";
        let creds = from_repositories(text, "https://charts.example/private");
        assert_eq!((creds.username.as_deref(), creds.password.as_deref()), (Some("cozy"), Some("s3cret")));
        assert!(creds.pass_credentials);
        assert_eq!(from_repositories(text, "https://nowhere.example"), Credentials::default());
        assert_eq!(from_repositories("not: [yaml", "https://charts.example/private"), Credentials::default());
    }
}
