//! Helm's release storage (the default Secret driver): `sh.helm.release.v1.<name>.v<N>` Secrets labelled
//! `owner=helm,name=<name>` whose `release` field is base64 of gzip of the release JSON.

use std::io::Read;

use base64::Engine;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::{ListParams, PostParams};
use serde::Deserialize;
use serde_json::Value;

use crate::cluster::Cluster;
use crate::support::error::{Error, Result};

/// The parts of a stored release cozyhr reads. `raw` keeps the whole JSON for exact digests.
#[derive(Debug, Clone, Default)]
pub struct StoredRelease {
    pub name: String,
    pub namespace: String,
    pub version: i64,
    pub status: String,
    pub manifest: String,
    pub config: Value,
    pub chart_name: String,
    pub chart_version: String,
    /// The release's hooks, which Helm keeps apart from `manifest`.
    pub hooks: Vec<StoredHook>,
    pub raw: Value,
    /// The Secret's `modifiedAt` label (Unix seconds of Helm's last update), read by [`history`]: with the
    /// content, it tells a revision Helm wrote again unchanged.
    pub modified_at: Option<String>,
}

/// One hook of a stored release.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct StoredHook {
    /// The template it came from (`chart/templates/x.yaml`).
    #[serde(default)]
    pub path: String,
    #[serde(default)]
    pub manifest: String,
    /// `pre-install`, `test`, ...
    #[serde(default)]
    pub events: Vec<String>,
}

#[derive(Deserialize)]
struct Head {
    #[serde(default)]
    name: String,
    #[serde(default)]
    namespace: String,
    #[serde(default)]
    version: i64,
    #[serde(default)]
    manifest: String,
    #[serde(default)]
    config: Option<Value>,
    #[serde(default)]
    info: Option<Info>,
    #[serde(default)]
    chart: Option<ChartHead>,
    #[serde(default)]
    hooks: Option<Vec<StoredHook>>,
}

#[derive(Deserialize)]
struct Info {
    #[serde(default)]
    status: String,
}

#[derive(Deserialize)]
struct ChartHead {
    #[serde(default)]
    metadata: Option<ChartMeta>,
}

#[derive(Deserialize)]
struct ChartMeta {
    #[serde(default)]
    name: String,
    #[serde(default)]
    version: String,
}

/// The release JSON in the `release` field of a Helm storage Secret (already base64-decoded once by the
/// API): base64 of gzip of the JSON, as Helm writes it (or of the JSON itself, which Helm also reads).
pub fn decode_json(release_field: &[u8]) -> Result<Value> {
    let bad = |reason: String| Error::Invalid { what: "Helm release secret".into(), reason };
    let b64 = base64::engine::general_purpose::STANDARD
        .decode(release_field.trim_ascii())
        .map_err(|e| bad(format!("not base64: {e}")))?;
    let json = if b64.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(b64.as_slice())
            .read_to_end(&mut out)
            .map_err(|e| bad(format!("bad gzip: {e}")))?;
        out
    } else {
        b64
    };
    crate::go::yaml::json_value(&json).map_err(|e| bad(format!("bad JSON: {e}")))
}

/// The `release` field Helm writes for the release JSON `raw`: base64 of gzip (best compression).
pub fn encode_json(raw: &Value) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    // Serialising a JSON value and writing into memory cannot fail.
    let _ = serde_json::to_writer(&mut gz, raw);
    let zipped = gz.finish().unwrap_or_default();
    base64::engine::general_purpose::STANDARD.encode(zipped).into_bytes()
}

/// Decodes the `release` field of a Helm storage Secret (already base64-decoded once by the API).
pub fn decode(release_field: &[u8]) -> Result<StoredRelease> {
    let bad = |reason: String| Error::Invalid { what: "Helm release secret".into(), reason };
    let raw = decode_json(release_field)?;
    let head: Head = serde_json::from_value(raw.clone()).map_err(|e| bad(format!("unexpected shape: {e}")))?;
    let meta = head.chart.and_then(|c| c.metadata);
    Ok(StoredRelease {
        name: head.name,
        namespace: head.namespace,
        version: head.version,
        status: head.info.map(|i| i.status).unwrap_or_default(),
        manifest: head.manifest,
        config: head.config.unwrap_or(Value::Null),
        chart_name: meta.as_ref().map(|m| m.name.clone()).unwrap_or_default(),
        chart_version: meta.map(|m| m.version).unwrap_or_default(),
        hooks: head.hooks.unwrap_or_default(),
        raw,
        modified_at: None,
    })
}

/// Every stored revision of release `name` in `storage_namespace`, newest first.
pub async fn history(cluster: &Cluster, storage_namespace: &str, name: &str) -> Result<Vec<StoredRelease>> {
    let api: Api<Secret> = Api::namespaced(cluster.client.clone(), storage_namespace);
    let lp = ListParams::default().labels(&format!("owner=helm,name={name}"));
    let list = api.list(&lp).await.map_err(|e| cluster.error(e))?;
    let mut out = Vec::new();
    for s in list.items {
        let Some(field) = s.data.as_ref().and_then(|d| d.get("release")) else { continue };
        let mut release = decode(&field.0)?;
        release.modified_at = s.metadata.labels.as_ref().and_then(|l| l.get("modifiedAt")).cloned();
        out.push(release);
    }
    out.sort_by_key(|r| std::cmp::Reverse(r.version));
    Ok(out)
}

/// Every stored revision of a release at one moment, newest first: what an action is seen to have
/// written is what differs between two of them ([`Storage::written_since`]), which is how helm-controller's
/// storage observers see Helm's writes.
#[derive(Debug, Clone, Default)]
pub struct Storage {
    pub revisions: Vec<StoredRelease>,
}

impl Storage {
    pub async fn read(cluster: &Cluster, storage_namespace: &str, name: &str) -> Result<Storage> {
        Ok(Storage { revisions: history(cluster, storage_namespace, name).await? })
    }

    pub fn get(&self, version: i64) -> Option<&StoredRelease> {
        self.revisions.iter().find(|r| r.version == version)
    }

    pub fn newest(&self) -> Option<&StoredRelease> {
        self.revisions.first()
    }

    /// The revisions created or updated since `before` (another content, or updated again: a later
    /// `modifiedAt`), newest first.
    pub fn written_since(&self, before: &Storage) -> Vec<&StoredRelease> {
        self.revisions
            .iter()
            .filter(|r| match before.get(r.version) {
                None => true,
                Some(b) => b.raw != r.raw || b.modified_at != r.modified_at,
            })
            .collect()
    }

    /// The revisions `before` held that are gone now (purged by an uninstall, or pruned), newest first.
    pub fn deleted_since<'a>(&self, before: &'a Storage) -> Vec<&'a StoredRelease> {
        before.revisions.iter().filter(|b| self.get(b.version).is_none()).collect()
    }
}

/// What helm-controller's next action on a release would be, as its templates see it
/// (`.Release.IsInstall`, `.Release.IsUpgrade`, `.Release.Revision`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextAction {
    Install,
    /// An upgrade to this revision (the newest stored one plus one).
    Upgrade {
        revision: i64,
    },
}

/// Every stored revision's number and `status` label (no release is decoded), in no order.
async fn revision_labels(cluster: &Cluster, storage_namespace: &str, name: &str) -> Result<Vec<(i64, String)>> {
    let api: Api<Secret> = Api::namespaced(cluster.client.clone(), storage_namespace);
    let lp = ListParams::default().labels(&format!("owner=helm,name={name}"));
    let list = api.list_metadata(&lp).await.map_err(|e| cluster.error(e))?;
    Ok(list
        .items
        .iter()
        .filter_map(|s| {
            let labels = s.metadata.labels.as_ref()?;
            Some((labels.get("version")?.parse::<i64>().ok()?, labels.get("status").cloned().unwrap_or_default()))
        })
        .collect())
}

/// The newest stored revision's number and `status` label (no release is decoded).
pub async fn newest_labels(cluster: &Cluster, storage_namespace: &str, name: &str) -> Result<Option<(i64, String)>> {
    Ok(revision_labels(cluster, storage_namespace, name).await?.into_iter().max_by_key(|(v, _)| *v))
}

/// The numbers of the stored revisions of release `name` (no release is decoded).
pub async fn history_revisions(cluster: &Cluster, storage_namespace: &str, name: &str) -> Result<Vec<i64>> {
    Ok(revision_labels(cluster, storage_namespace, name).await?.into_iter().map(|(v, _)| v).collect())
}

/// The next action from the storage Secrets' labels alone (no release is decoded): an upgrade when a
/// release is stored and not uninstalled, else an install (as `helm upgrade --install` decides).
pub async fn next_action(cluster: &Cluster, storage_namespace: &str, name: &str) -> Result<NextAction> {
    Ok(match newest_labels(cluster, storage_namespace, name).await? {
        Some((version, status)) if status != "uninstalled" => NextAction::Upgrade { revision: version + 1 },
        _ => NextAction::Install,
    })
}

/// Sets the status and description of stored revision `revision`, as Helm's storage driver updates a
/// release (the `release` field, and the `status` and `modifiedAt` labels). The replace carries the
/// Secret's resourceVersion, so a concurrent writer makes it fail and nothing is changed. Returns the
/// release JSON as written.
pub async fn set_status(
    cluster: &Cluster,
    storage_namespace: &str,
    name: &str,
    revision: i64,
    status: &str,
    description: &str,
) -> Result<Value> {
    let api: Api<Secret> = Api::namespaced(cluster.client.clone(), storage_namespace);
    let secret_name = format!("sh.helm.release.v1.{name}.v{revision}");
    let mut secret = api.get(&secret_name).await.map_err(|e| cluster.error(e))?;
    let bad =
        |reason: &str| Error::Invalid { what: format!("Helm release secret {secret_name}"), reason: reason.into() };
    let field = secret.data.as_ref().and_then(|d| d.get("release")).ok_or_else(|| bad("it has no release field"))?;
    let mut raw = decode_json(&field.0)?;
    let info = raw.get_mut("info").and_then(Value::as_object_mut).ok_or_else(|| bad("its release has no info"))?;
    info.insert("status".into(), status.into());
    info.insert("description".into(), description.into());
    secret.data.get_or_insert_default().insert("release".into(), k8s_openapi::ByteString(encode_json(&raw)));
    let labels = secret.metadata.labels.get_or_insert_default();
    labels.insert("status".into(), status.into());
    labels.insert("modifiedAt".into(), jiff::Timestamp::now().as_second().to_string());
    api.replace(&secret_name, &PostParams::default(), &secret).await.map_err(|e| cluster.error(e))?;
    Ok(raw)
}

/// The newest stored revision, if any. Only that one is decoded: Helm labels each Secret with its
/// revision, and a release of a large chart is megabytes of gzipped JSON per revision.
pub async fn latest(cluster: &Cluster, storage_namespace: &str, name: &str) -> Result<Option<StoredRelease>> {
    let api: Api<Secret> = Api::namespaced(cluster.client.clone(), storage_namespace);
    let lp = ListParams::default().labels(&format!("owner=helm,name={name}"));
    let list = api.list(&lp).await.map_err(|e| cluster.error(e))?;
    let revision = |s: &Secret| s.metadata.labels.as_ref()?.get("version")?.parse::<i64>().ok();
    if list.items.iter().any(|s| revision(s).is_none()) {
        // Not labelled as Helm labels them: decode them all and go by the revision inside.
        return Ok(history(cluster, storage_namespace, name).await?.into_iter().next());
    }
    let newest = list.items.iter().max_by_key(|s| revision(s));
    newest.and_then(|s| s.data.as_ref()?.get("release")).map(|field| decode(&field.0)).transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(json: &str) -> Vec<u8> {
        encode_json(&serde_json::from_str(json).unwrap())
    }

    #[test]
    fn decodes_gzipped_release() {
        let r = decode(&encode(
            r#"{"name":"demo","namespace":"apps","version":3,"manifest":"---\nkind: ConfigMap\n",
               "config":{"a":1},"info":{"status":"deployed"},"chart":{"metadata":{"name":"demo","version":"0.1.0"}}}"#,
        ))
        .unwrap();
        assert_eq!((r.name.as_str(), r.namespace.as_str(), r.version), ("demo", "apps", 3));
        assert_eq!(r.status, "deployed");
        assert_eq!((r.chart_name.as_str(), r.chart_version.as_str()), ("demo", "0.1.0"));
        assert_eq!(r.config["a"], 1);
    }

    #[test]
    fn a_release_survives_encoding_as_helm_writes_it() {
        let raw = serde_json::json!({"name": "a", "info": {"status": "pending-upgrade"}, "config": {"n": 1.5}});
        assert_eq!(decode_json(&encode_json(&raw)).unwrap(), raw);
        assert_eq!(decode(&encode_json(&raw)).unwrap().status, "pending-upgrade");
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(decode(b"%%%").is_err());
        assert!(decode(b"aGVsbG8=").is_err());
    }
}
