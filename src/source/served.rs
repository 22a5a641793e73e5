//! The chart a HelmRelease's source serves in the cluster: the very archive helm-controller installs,
//! for commands run without a chart directory.
//!
//! The artifact its source names (`chartRef`'s OCIRepository, HelmChart or ExternalArtifact, or the
//! HelmChart helm-controller made for `spec.chart` from a HelmRepository, GitRepository or Bucket) is
//! fetched as [`crate::source::fetch`] fetches it and checked against its digest, then unpacked as Helm
//! loads an archive (every file below the archive's top directory) into a private temporary directory,
//! removed when the [`Served`] is dropped. The archive is what source-controller built: `valuesFiles`
//! are merged into its values.yaml already and its version is the one it wrote, so the chart is loaded as
//! it is ([`ChartDir::packaged`]).
//!
//! Archives are kept in the cache directory by digest (`charts/<algorithm>-<hex>.tgz`), each unpacked once
//! beside it (`charts/<algorithm>-<hex>/`): a second command on the same artifact fetches nothing and
//! renders from the same path (so helm starts ahead, as for a chart directory); an archive whose bytes are
//! not its digest any more is fetched again and unpacked anew.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use crate::cluster::Cluster;
use crate::flux::HelmRelease;
use crate::flux::kind::Kind;
use crate::source::chart::ChartDir;
use crate::source::fetch::Artifact;
use crate::source::release_file::ReleaseFiles;
use crate::support::error::{Error, Result};

/// A chart as its source serves it, unpacked.
#[derive(Debug)]
pub struct Served {
    pub chart: ChartDir,
    pub from: ServedFrom,
    /// Whether the archive was read from the cache rather than fetched.
    pub cached: bool,
    /// The unpacked chart's private directory when there is no cache to keep it in, removed when this is
    /// dropped.
    _dir: Option<tempfile::TempDir>,
}

/// Where a served chart was had from.
#[derive(Debug)]
pub enum ServedFrom {
    /// The artifact its source names in the cluster: the very chart helm-controller installs.
    Cluster(Artifact),
    /// Its repository: `source` (`Kind ns/name`) names the repository, `wanted` says which version or
    /// range was asked for (`--version V`, or the HelmRelease's own without a cluster).
    Repository { source: String, url: String, wanted: String, digest: String, revision: (&'static Kind, String) },
}

impl Served {
    /// One line for people: which chart, from where.
    pub fn describe(&self) -> String {
        let (name, version) = (&self.chart.meta.name, &self.chart.meta.version);
        match &self.from {
            ServedFrom::Cluster(artifact) => {
                let how = if self.cached { "cached" } else { "fetched from the cluster" };
                format!("the chart of {}: {name}@{version} ({how}, {})", artifact.describe(), short(&artifact.digest))
            }
            ServedFrom::Repository { source, url, wanted, digest, .. } => {
                format!("the chart {name}@{version} from its repository ({wanted}; {source}: {url}; {})", short(digest))
            }
        }
    }
}

impl Served {
    /// The version helm-controller would give this chart were its source serving it: known here for a
    /// chart from its repository (for an OCIRepository, the manifest's digest appended); None for the
    /// cluster's artifact, whose source says it ([`crate::source::chart_source::lookup`]).
    pub fn source_version(&self) -> Option<crate::source::chart_source::SourceVersion> {
        match &self.from {
            ServedFrom::Cluster(_) => None,
            ServedFrom::Repository { source, revision: (kind, revision), .. } => {
                Some(crate::source::chart_source::from_artifact(kind, revision, &self.chart.meta.version, source))
            }
        }
    }
}

/// `sha256:0123456789ab` of a digest, for messages.
fn short(digest: &str) -> &str {
    let end = digest.find(':').map_or(0, |i| i + 13).min(digest.len());
    &digest[..end]
}

/// The chart `hr`'s source serves in `cluster` (see the module docs).
pub async fn fetch(cluster: &Cluster, hr: &HelmRelease) -> Result<Served> {
    let what = || format!("the chart of helmrelease {}/{}", hr.namespace(), hr.name());
    let artifact = crate::source::fetch::artifact(cluster, hr).await.map_err(|why| {
        Error::Failed(format!(
            "{} cannot be had from its source: {why} (or run from the chart's directory, -C DIR)",
            what()
        ))
    })?;
    let cache = cache_file(&artifact.digest);
    let (bytes, cached) = match cache.as_deref().and_then(|f| std::fs::read(f).ok()).filter(|b| artifact.matches(b)) {
        Some(bytes) => (bytes, true),
        None => {
            let bytes = artifact.bytes(cluster).await.map_err(|why| Error::Failed(format!("{}: {why}", what())))?;
            if let Some(file) = &cache {
                crate::support::cache::write(file, &bytes);
            }
            (bytes, false)
        }
    };
    let (top, dir) = unpacked(&bytes, cache.as_deref(), !cached)
        .map_err(|why| Error::Failed(format!("{} ({}) cannot be unpacked: {why}", what(), artifact.describe())))?;
    let chart = ChartDir::open(&top)?.packaged();
    Ok(Served { chart, from: ServedFrom::Cluster(artifact), cached, _dir: dir })
}

/// The chart of archive `bytes`: unpacked once beside its copy in the cache (`kept`), at a path that
/// stays the same, so that helm starts ahead of the cluster's answers on the next command as it does for a
/// chart directory (render/early.rs); `anew` when the archive was fetched again. Without a cache, into a
/// private directory, returned to be kept while the chart is used.
fn unpacked(
    bytes: &[u8],
    kept: Option<&Path>,
    anew: bool,
) -> std::result::Result<(PathBuf, Option<tempfile::TempDir>), String> {
    if let Some(top) = kept.and_then(|file| kept_unpacked(file, bytes, anew)) {
        return Ok((top, None));
    }
    let dir = crate::support::process::private_dir("cozyhr-served-").map_err(|e| e.to_string())?;
    let top = unpack(bytes, dir.path())?;
    Ok((top, Some(dir)))
}

/// `hr`'s chart at `version` (a version or a semver range) straight from the repository its source
/// names in `cluster` ([`crate::source::remote`]), picked as source-controller picks it. Unlike an
/// artifact, the archive is the chart as its author packaged it: `valuesFiles` are merged here, as
/// source-controller would merge them.
pub async fn from_repository(cluster: &Cluster, hr: &HelmRelease, version: &str) -> Result<Served> {
    let what = format!("the chart of helmrelease {}/{} at --version {version}", hr.namespace(), hr.name());
    let remote = crate::source::remote::of_cluster(cluster, hr, version).await;
    from_remote(remote, &what, &format!("--version {version}")).await
}

/// [`from_repository`] without a cluster: the HelmRelease and its source objects from release `files`,
/// the credentials Helm's own; at `version`, else at the version the HelmRelease names.
pub async fn from_repository_offline(files: &ReleaseFiles, hr: &HelmRelease, version: Option<&str>) -> Result<Served> {
    let what = format!("the chart of helmrelease {}/{}", hr.namespace(), hr.name());
    let remote = crate::source::remote::of_files(files, hr, version).await;
    let wanted = match (version, &remote) {
        (Some(v), _) => format!("--version {v}"),
        (None, Ok(r)) => format!("version {} as the HelmRelease names it", r.chart.version),
        (None, Err(_)) => String::new(),
    };
    from_remote(remote, &what, &wanted).await
}

async fn from_remote(
    remote: std::result::Result<crate::source::remote::Remote, String>,
    what: &str,
    wanted: &str,
) -> Result<Served> {
    let remote = remote.map_err(|why| Error::Failed(format!("{what} cannot be had: {why}")))?;
    let fetched = crate::source::repository::fetch(&remote.chart, &remote.creds)
        .await
        .map_err(|e| Error::Failed(format!("{what} cannot be had from {}: {e}", remote.source)))?;
    // What the source would name as its artifact's revision: an OCIRepository `TAG@MANIFEST-DIGEST`, a
    // HelmChart the chart's version.
    let revision = match (&fetched.manifest_digest, remote.digested) {
        // Pinned by `ref.digest`: the revision is the digest alone.
        (Some(manifest), true) if fetched.version.starts_with("sha256:") => {
            (&crate::flux::kind::OCI_REPOSITORY, manifest.clone())
        }
        (Some(manifest), true) => {
            (&crate::flux::kind::OCI_REPOSITORY, format!("{}@{manifest}", fetched.version.replace('+', "_")))
        }
        _ => (&crate::flux::kind::HELM_CHART, fetched.version.clone()),
    };
    let from = ServedFrom::Repository {
        revision,
        source: remote.source,
        url: fetched.url.clone(),
        wanted: wanted.to_string(),
        digest: fetched.digest.clone(),
    };
    let cache = cache_file(&fetched.digest);
    if let Some(file) = &cache {
        crate::support::cache::write(file, &fetched.bytes);
    }
    let (top, dir) = unpacked(&fetched.bytes, cache.as_deref(), false)
        .map_err(|why| Error::Failed(format!("{what} cannot be unpacked: {why}")))?;
    // As its author packaged it: valuesFiles are merged here, as source-controller would merge them.
    Ok(Served { chart: ChartDir::open(&top)?, from, cached: false, _dir: dir })
}

/// One line when the repository the source of HelmRelease `name` (in `cluster`'s namespace) names has a
/// newer match for its range than `served`, the chart version source-controller fetched. The repository
/// is asked at most once a minute per HelmRelease and served version (the answer, a line or nothing, is
/// kept in the cache directory): the inner loop's repeated diffs do not pay for it.
pub async fn newer_in_repository(cluster: &Cluster, name: &str, served: &str) -> Option<String> {
    let key = format!("{} {}/{name} {served}", cluster.server, cluster.namespace);
    let kept = crate::support::cache::dir().map(|d| d.join("picks").join(crate::support::cache::key_name(&key)));
    let fresh = |file: &Path| {
        let age = std::fs::metadata(file).and_then(|m| m.modified()).ok()?.elapsed().ok()?;
        (age < std::time::Duration::from_secs(60)).then(|| std::fs::read_to_string(file).ok()).flatten()
    };
    if let Some(line) = kept.as_deref().and_then(fresh) {
        return (!line.is_empty()).then_some(line);
    }
    let hr = crate::flux::Objects::<HelmRelease>::namespaced(cluster, &cluster.namespace).read(name).await.ok()?;
    let line = repository_pick(cluster, &hr).await?.newer_than(served, name);
    if let Some(file) = &kept {
        crate::support::cache::write(file, line.as_deref().unwrap_or_default().as_bytes());
    }
    line
}

/// What the repository `hr`'s source names would give the HelmRelease's range now (a HelmRepository's
/// chart, an OCIRepository by `ref.semver`): to say when it is newer than what source-controller last
/// fetched ([`RepositoryPick::newer_than`]). Asked for at most a few seconds; None when it cannot tell.
pub async fn repository_pick(cluster: &Cluster, hr: &HelmRelease) -> Option<RepositoryPick> {
    let asked = async {
        let range = crate::source::remote::range_of_cluster(cluster, hr).await?;
        let remote = crate::source::remote::of_cluster(cluster, hr, &range).await.ok()?;
        let versions = crate::source::repository::versions(&remote.chart, &remote.creds).await.ok()?;
        let picked = crate::source::repository::pick(&remote.chart, &versions)?;
        Some(RepositoryPick { picked, range, source: remote.source })
    };
    tokio::time::timeout(std::time::Duration::from_secs(3), asked).await.ok()?
}

/// The version a repository gives a range now.
#[derive(Debug, Clone)]
pub struct RepositoryPick {
    pub picked: String,
    pub range: String,
    /// `Kind ns/name` of the source that names the repository.
    pub source: String,
}

impl RepositoryPick {
    /// One line when the pick is newer than `served` (the chart version source-controller last fetched):
    /// source-controller takes it at its next interval.
    pub fn newer_than(&self, served: &str, hr_name: &str) -> Option<String> {
        let (picked, range, source) = (&self.picked, &self.range, &self.source);
        let plain = |v: &str| crate::go::semver::Version::parse(v.split('+').next().unwrap_or(v));
        let newer = match (plain(picked), plain(served)) {
            (Some(p), Some(s)) => p.compare(&s) == std::cmp::Ordering::Greater,
            _ => false,
        };
        newer.then(|| {
            format!(
                "{source}'s repository has {picked} matching {range:?}, newer than the {served} its source fetched: source-controller takes it at its next interval (now: {} {hr_name} --with-source)",
                crate::support::output::lifecycle_command("reconcile")
            )
        })
    }
}

/// The chart of the archive kept at `file` (whose bytes, `bytes`, match its digest), unpacked into the
/// directory beside it (`charts/<algorithm>-<hex>/`, the chart below it): unpacked now when it is not
/// there yet, or `anew` (the archive was fetched again: what was unpacked before is not trusted), into a
/// directory of its own renamed into place, so that a reader never sees half of it. None when the cache
/// cannot be written: the caller unpacks privately.
fn kept_unpacked(file: &Path, bytes: &[u8], anew: bool) -> Option<PathBuf> {
    let kept = file.with_extension("");
    let done = kept.join(UNPACKED);
    if let Ok(top) = std::fs::read_to_string(&done).map_err(|_| ()).and_then(|t| if anew { Err(()) } else { Ok(t) }) {
        let top = kept.join(top.trim());
        if top.join("Chart.yaml").is_file() {
            return Some(top);
        }
    }
    let parent = kept.parent()?;
    let fresh = tempfile::Builder::new().prefix(".unpacking-").tempdir_in(parent).ok()?;
    let top = unpack(bytes, fresh.path()).ok()?;
    let name = top.file_name()?.to_string_lossy().into_owned();
    std::fs::write(fresh.path().join(UNPACKED), &name).ok()?;
    let fresh = fresh.keep();
    let _ = std::fs::remove_dir_all(&kept);
    if std::fs::rename(&fresh, &kept).is_err() {
        // Another command unpacked the same archive first: theirs is as good.
        let _ = std::fs::remove_dir_all(&fresh);
    }
    Some(kept.join(std::fs::read_to_string(&done).ok()?.trim()))
}

/// The file that marks an unpacked archive whole, naming the chart's directory in it.
const UNPACKED: &str = ".cozyhr-unpacked";

/// Where the archive of `digest` is kept; None without a cache directory or for a digest that is not
/// `<algorithm>:<hex>`.
fn cache_file(digest: &str) -> Option<PathBuf> {
    let (algorithm, hex) = digest.split_once(':')?;
    let plain = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric());
    (plain(algorithm) && plain(hex))
        .then(|| crate::support::cache::dir().map(|d| d.join("charts").join(format!("{algorithm}-{hex}.tgz"))))
        .flatten()
}

/// Unpacks the regular files of a gzipped tar archive into `dir`, as Helm loads an archive: the files
/// below its top directory. Returns that directory. Paths that would leave `dir` are refused.
fn unpack(archive: &[u8], dir: &Path) -> std::result::Result<PathBuf, String> {
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(archive));
    let mut top: Option<String> = None;
    for entry in tar.entries().map_err(|e| e.to_string())? {
        let mut entry = entry.map_err(|e| e.to_string())?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry.path().map_err(|e| e.to_string())?.to_string_lossy().into_owned();
        let path = path.trim_start_matches("./");
        let Some((first, rel)) = path.split_once('/') else { continue };
        let safe = !rel.is_empty() && Path::new(rel).components().all(|c| matches!(c, std::path::Component::Normal(_)));
        if !safe {
            return Err(format!("the archive names {path:?}, outside its directory"));
        }
        let top = top.get_or_insert_with(|| first.to_string());
        let dest = dir.join(top.as_str()).join(rel);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        let mut data = Vec::new();
        entry.read_to_end(&mut data).map_err(|e| e.to_string())?;
        std::fs::write(&dest, data).map_err(|e| format!("{}: {e}", dest.display()))?;
    }
    top.map(|t| dir.join(t)).ok_or_else(|| "it holds no chart".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn archive(files: &[(&str, &str)]) -> Vec<u8> {
        let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast()));
        for (path, text) in files {
            let mut header = tar::Header::new_gnu();
            header.set_size(text.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            builder.append_data(&mut header, path, text.as_bytes()).expect("append");
        }
        builder.into_inner().expect("tar").finish().expect("gzip")
    }

    #[test]
    fn an_archive_unpacks_as_helm_loads_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let bytes = archive(&[
            ("podinfo/Chart.yaml", "apiVersion: v2\nname: podinfo\nversion: 6.5.0\n"),
            ("podinfo/templates/cm.yaml", "kind: ConfigMap\n"),
        ]);
        let top = unpack(&bytes, dir.path()).expect("unpacked");
        assert_eq!(top, dir.path().join("podinfo"));
        let chart = ChartDir::open(&top).expect("a chart");
        assert_eq!((chart.meta.name.as_str(), chart.meta.version.as_str()), ("podinfo", "6.5.0"));
        assert!(top.join("templates/cm.yaml").is_file());
    }

    #[test]
    fn a_path_out_of_the_archive_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut raw = tar::Builder::new(flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast()));
        let mut header = tar::Header::new_gnu();
        let text = b"x";
        header.set_size(1);
        header.set_mode(0o644);
        // set_path refuses "..": write the name into the header as a hostile archive would.
        header.as_old_mut().name[..15].copy_from_slice(b"chart/../../evi");
        header.set_cksum();
        raw.append(&header, &text[..]).expect("append");
        let bytes = raw.into_inner().expect("tar").finish().expect("gzip");
        assert!(unpack(&bytes, dir.path()).is_err());
        assert!(unpack(&archive(&[]), dir.path()).is_err(), "an empty archive holds no chart");
    }

    #[test]
    fn an_archive_is_unpacked_once_at_a_path_that_stays() {
        let cache = tempfile::tempdir().expect("tempdir");
        let file = cache.path().join("sha256-abc.tgz");
        let bytes = archive(&[("podinfo/Chart.yaml", "apiVersion: v2\nname: podinfo\nversion: 6.5.0\n")]);
        std::fs::write(&file, &bytes).expect("write");
        let first = kept_unpacked(&file, &bytes, false).expect("unpacked");
        assert_eq!(first, cache.path().join("sha256-abc/podinfo"));
        std::fs::write(first.join("marker"), "x").expect("write");
        assert_eq!(kept_unpacked(&file, &bytes, false), Some(first.clone()), "the same path, not unpacked again");
        assert!(first.join("marker").is_file());
        assert_eq!(kept_unpacked(&file, &bytes, true), Some(first.clone()), "anew: the same path");
        assert!(!first.join("marker").exists(), "anew: unpacked again");
    }

    #[test]
    fn a_newer_pick_of_the_repository_is_said() {
        let pick = RepositoryPick { picked: "1.1.1".into(), range: "1.x".into(), source: "HelmRepository a/r".into() };
        let line = pick.newer_than("1.1.0", "app").expect("newer");
        assert!(
            line.starts_with("HelmRepository a/r's repository has 1.1.1 matching \"1.x\", newer than the 1.1.0"),
            "{line}"
        );
        assert_eq!(pick.newer_than("1.1.1", "app"), None);
        assert_eq!(pick.newer_than("1.1.1+abc", "app"), None, "build metadata aside");
        assert_eq!(pick.newer_than("2.0.0", "app"), None);
    }

    #[test]
    fn archives_are_kept_by_digest() {
        let file = cache_file("sha256:abc123").expect("a place");
        assert!(file.ends_with("charts/sha256-abc123.tgz"), "{}", file.display());
        assert_eq!(cache_file("sha256:../../x"), None);
        assert_eq!(cache_file("nodigest"), None);
        assert_eq!(short("sha256:0123456789abcdef"), "sha256:0123456789ab");
    }
}
