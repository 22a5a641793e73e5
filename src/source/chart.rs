//! A chart directory on disk: the thing a developer stands in.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Defined with the other error types (see `crate::support::error`), which wrap it.
pub use crate::support::error::ChartError;

#[derive(Debug, Clone, Deserialize)]
pub struct ChartMeta {
    pub name: String,
    pub version: String,
    #[serde(default, rename = "appVersion")]
    pub app_version: Option<String>,
}

#[derive(Debug, Clone)]
pub struct ChartDir {
    path: PathBuf,
    pub meta: ChartMeta,
    /// Where the chart lies in a checkout helm cozy wrote itself (a Git ref's tree); None for a chart
    /// directory of the user's, whose checkout is found from its path (see [`crate::source::values_files`]).
    checkout: Option<Checkout>,
    /// The chart as source-controller packaged it (fetched from its source: [`crate::source::served`]):
    /// its `valuesFiles` merged into values.yaml already, its version the one it wrote.
    packaged: bool,
}

/// A chart's place in a checkout of its source: what a GitRepository's `valuesFiles` are read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkout {
    /// The checkout's top directory (the repository's root).
    pub top: PathBuf,
    /// The chart's directory in it (which [`ChartDir::path`] may not be: a review renders some charts
    /// from a private directory of links to it).
    pub dir: PathBuf,
}

impl ChartDir {
    pub fn open(dir: &Path) -> Result<ChartDir, ChartError> {
        let path = std::fs::canonicalize(dir).map_err(|_| ChartError::NotAChart { dir: dir.display().to_string() })?;
        let chart_yaml = path.join("Chart.yaml");
        let text = std::fs::read_to_string(&chart_yaml)
            .map_err(|_| ChartError::NotAChart { dir: dir.display().to_string() })?;
        let meta: ChartMeta = serde_saphyr::from_str(&text)
            .map_err(|e| ChartError::Invalid { path: chart_yaml.display().to_string(), reason: e.to_string() })?;
        if meta.name.is_empty() || meta.version.is_empty() {
            return Err(ChartError::Invalid {
                path: chart_yaml.display().to_string(),
                reason: "name and version are required".into(),
            });
        }
        Ok(ChartDir { path, meta, checkout: None, packaged: false })
    }

    /// This chart, as its source packaged it (see the field).
    pub fn packaged(self) -> ChartDir {
        ChartDir { packaged: true, ..self }
    }

    /// Whether this chart is as its source packaged it: loaded as it is, its `valuesFiles` not read again.
    pub fn is_packaged(&self) -> bool {
        self.packaged
    }

    /// This chart, known to lie at `checkout` (a Git ref's tree helm cozy wrote).
    pub fn in_checkout(self, checkout: Checkout) -> ChartDir {
        ChartDir { checkout: Some(checkout), ..self }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the chart lies in a checkout helm cozy wrote, if it does.
    pub fn checkout(&self) -> Option<&Checkout> {
        self.checkout.as_ref()
    }

    /// Whether any template of the chart or of its subcharts (directories, symlinked ones included, and
    /// packaged ones in charts/) may call `lookup`. Only those need helm to talk to the cluster while
    /// rendering; a mention in a comment just costs that. An unreadable file counts as a yes.
    pub fn may_use_lookup(&self) -> bool {
        mentions(&self.path, &[b"lookup"], 0)
    }

    /// Whether the chart or a subchart (a directory, linked or not, or an archive in charts/) has a
    /// `crds/` directory: only then is Helm asked to print the CRDs (`--include-crds`).
    pub fn has_crds(&self) -> bool {
        has_crds(&self.path, 0)
    }

    /// Whether a template of the chart or of its subcharts may read `.Chart.Version` (a library chart's
    /// helper often does, for the `helm.sh/chart` label). Only then does the version a source gives the
    /// chart change what is rendered.
    pub fn may_use_chart_version(&self) -> bool {
        mentions(&self.path, &[b"Chart.Version"], 0)
    }

    /// Whether a template of the chart or of its subcharts may draw a value anew at every render: Sprig's
    /// random strings, keys and certificates, UUIDs, the time (kept across upgrades, if at all, by a
    /// `lookup` that finds nothing without a cluster). Only then can two renders of the same inputs differ.
    pub fn may_draw_anew(&self) -> bool {
        mentions(&self.path, DRAWN_ANEW, 0)
    }

    /// The chart's own values.yaml text ("" when absent).
    pub fn default_values_text(&self) -> Result<String, ChartError> {
        match std::fs::read_to_string(self.path.join("values.yaml")) {
            Ok(t) => Ok(t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
            Err(e) => Err(e.into()),
        }
    }
}

/// What a template that draws a value anew at every render names (`randAlpha` is also randAlphaNum's
/// start; the `gen` functions make keys and certificates; `now` as a pipeline starts or a call).
const DRAWN_ANEW: &[&[u8]] = &[
    b"randAlpha",
    b"randNumeric",
    b"randAscii",
    b"randBytes",
    b"randInt",
    b"uuidv4",
    b"genCA",
    b"genPrivateKey",
    b"genSelfSignedCert",
    b"genSignedCert",
    b"now |",
    b"(now",
];

/// How deep subcharts may nest before we stop looking (and assume lookup): symlink loops end here.
const MAX_DEPTH: usize = 16;

/// Whether a template of the chart at `chart` or of its subcharts contains one of `needles`.
fn mentions(chart: &Path, needles: &[&[u8]], depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return true;
    }
    if tree_mentions(&chart.join("templates"), needles, depth) {
        return true;
    }
    let Ok(entries) = std::fs::read_dir(chart.join("charts")) else { return false };
    entries.flatten().any(|e| {
        let path = e.path();
        // metadata() follows symlinks: a library chart linked into charts/ is read where it lives.
        match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => mentions(&path, needles, depth + 1),
            Ok(m) if m.is_file() && path.extension().is_some_and(|x| x == "tgz") => archive_mentions(&path, needles),
            Ok(_) => false,
            Err(_) => true,
        }
    })
}

fn tree_mentions(dir: &Path, needles: &[&[u8]], depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return true;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return false };
    entries.flatten().any(|e| {
        let path = e.path();
        match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => tree_mentions(&path, needles, depth + 1),
            Ok(_) => std::fs::read(&path).map_or(true, |bytes| contains(&bytes, needles)),
            Err(_) => true,
        }
    })
}

/// A packaged subchart: the whole archive, unpacked, is searched (values and docs included).
fn has_crds(chart: &Path, depth: usize) -> bool {
    if depth > MAX_DEPTH || chart.join("crds").is_dir() {
        return true;
    }
    let Ok(entries) = std::fs::read_dir(chart.join("charts")) else { return false };
    entries.flatten().any(|e| {
        let path = e.path();
        match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => has_crds(&path, depth + 1),
            // A tar header names each file: a crds/ entry shows as "/crds/" (a mention elsewhere costs
            // only the flag).
            Ok(m) if m.is_file() && path.extension().is_some_and(|x| x == "tgz") => {
                archive_mentions(&path, &[b"/crds/"])
            }
            Ok(_) => false,
            Err(_) => true,
        }
    })
}

fn archive_mentions(path: &Path, needles: &[&[u8]]) -> bool {
    use std::io::Read;
    let Ok(file) = std::fs::File::open(path) else { return true };
    let mut bytes = Vec::new();
    match flate2::read::GzDecoder::new(file).read_to_end(&mut bytes) {
        Ok(_) => contains(&bytes, needles),
        Err(_) => true,
    }
}

fn contains(bytes: &[u8], needles: &[&[u8]]) -> bool {
    needles.iter().any(|needle| bytes.windows(needle.len()).any(|w| w == *needle))
}

/// A private temporary copy of a chart directory (symlinked subcharts copied as directories, `.git`
/// left out), removed when dropped.
pub fn private_copy(from: &Path) -> std::io::Result<tempfile::TempDir> {
    let dir = crate::support::process::private_dir("cozyhr-chart-")?;
    copy_tree(from, dir.path(), 0)?;
    Ok(dir)
}

/// Writes `version` as the version of the chart in `dir` (a private copy): Chart.yaml's top-level
/// `version:` line is replaced, the rest of the file kept as it is.
pub fn set_version(dir: &Path, version: &str) -> std::io::Result<()> {
    let path = dir.join("Chart.yaml");
    let text = std::fs::read_to_string(&path)?;
    std::fs::write(&path, with_version(&text, version))
}

/// `text` (a Chart.yaml) with its top-level `version` set to `version` (added when there is none).
fn with_version(text: &str, version: &str) -> String {
    let line = format!("version: {}", serde_json::Value::String(version.to_string()));
    let mut found = false;
    let mut out: Vec<String> = text
        .lines()
        .map(|l| {
            let key = l.strip_prefix("version").map(str::trim_start);
            if !found && key.is_some_and(|rest| rest.starts_with(':')) {
                found = true;
                line.clone()
            } else {
                l.to_string()
            }
        })
        .collect();
    if !found {
        out.push(line);
    }
    let mut joined = out.join("\n");
    joined.push('\n');
    joined
}

fn copy_tree(from: &Path, to: &Path, depth: usize) -> std::io::Result<()> {
    if depth > MAX_DEPTH {
        return Err(std::io::Error::other(format!("{}: nested too deep (a symlink loop?)", from.display())));
    }
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        // metadata() follows symlinks: a linked library chart is copied as the directory it points at.
        let meta = std::fs::metadata(entry.path())?;
        if meta.is_dir() {
            if entry.file_name() == ".git" {
                continue;
            }
            std::fs::create_dir_all(&target)?;
            copy_tree(&entry.path(), &target, depth + 1)?;
        } else if meta.is_file() {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// What `helm template` cannot be told: the `.Release.Revision` of an upgrade (it always renders 1).
/// When the chart's templates mention it, a private copy of the chart gets the number written in place
/// of `.Release.Revision` and `$.Release.Revision`. Other spellings (`$root.Release.Revision`, inside
/// `with .Release`) and packaged subcharts are not reached (docs/design.md, known gaps).
pub fn at_revision(dir: &Path, revision: i64) -> std::io::Result<Option<tempfile::TempDir>> {
    if !mentions(dir, &[b"Revision"], 0) {
        return Ok(None);
    }
    let copy = private_copy(dir)?;
    rewrite_templates(copy.path(), revision, 0)?;
    Ok(Some(copy))
}

fn rewrite_templates(chart: &Path, revision: i64, depth: usize) -> std::io::Result<()> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    rewrite_tree(&chart.join("templates"), revision)?;
    let Ok(entries) = std::fs::read_dir(chart.join("charts")) else { return Ok(()) };
    for e in entries.flatten() {
        if e.file_type()?.is_dir() {
            rewrite_templates(&e.path(), revision, depth + 1)?;
        }
    }
    Ok(())
}

fn rewrite_tree(dir: &Path, revision: i64) -> std::io::Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(()) };
    for e in entries.flatten() {
        let path = e.path();
        if e.file_type()?.is_dir() {
            rewrite_tree(&path, revision)?;
        } else if let Ok(text) = std::fs::read_to_string(&path) {
            let new = with_revision(&text, revision);
            if new != text {
                std::fs::write(&path, new)?;
            }
        }
    }
    Ok(())
}

/// `.Release.Revision` and `$.Release.Revision` (not `$x.Release.Revision`, not `.Foo.Release.Revision`)
/// replaced by the number.
fn with_revision(text: &str, revision: i64) -> String {
    const FIELD: &str = ".Release.Revision";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(FIELD) {
        let (before, after) = rest.split_at(at);
        let after_field = &after[FIELD.len()..];
        let ends = !after_field.starts_with(|c: char| c.is_alphanumeric() || c == '_');
        let prev = before.chars().next_back();
        let root_dollar = prev == Some('$')
            && !before[..before.len() - 1].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$');
        let plain_dot = !prev.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == '.' || c == ')');
        if ends && (root_dollar || plain_dot) {
            out.push_str(if root_dollar { &before[..before.len() - 1] } else { before });
            out.push_str(&revision.to_string());
        } else {
            out.push_str(before);
            out.push_str(FIELD);
        }
        rest = after_field;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_without_chart_yaml_is_a_clear_error() {
        let d = tempfile::tempdir().unwrap();
        let e = ChartDir::open(d.path()).unwrap_err().to_string();
        assert!(e.contains("no Chart.yaml") && e.contains("-C DIR"), "{e}");
    }

    #[test]
    fn lookup_is_found_in_templates_and_linked_or_packaged_subcharts() {
        use std::io::Write;
        let d = tempfile::tempdir().unwrap();
        let chart = d.path().join("app");
        std::fs::create_dir_all(chart.join("templates/sub")).unwrap();
        std::fs::write(chart.join("Chart.yaml"), "apiVersion: v2\nname: app\nversion: 1.0.0\n").unwrap();
        std::fs::write(chart.join("templates/sub/cm.yaml"), "kind: ConfigMap\n").unwrap();
        let c = ChartDir::open(&chart).unwrap();
        assert!(!c.may_use_lookup());

        // A library chart linked into charts/, as platform monorepos do.
        let lib = d.path().join("lib");
        std::fs::create_dir_all(lib.join("templates")).unwrap();
        std::fs::write(
            lib.join("templates/_h.tpl"),
            "{{ define \"x\" }}{{ lookup \"v1\" \"Secret\" \"\" \"\" }}{{ end }}",
        )
        .unwrap();
        std::fs::create_dir_all(chart.join("charts")).unwrap();
        std::os::unix::fs::symlink(&lib, chart.join("charts/lib")).unwrap();
        assert!(c.may_use_lookup());
        std::fs::remove_file(chart.join("charts/lib")).unwrap();

        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(b"templates/secret.yaml ... {{ lookup \"v1\" }}").unwrap();
        std::fs::write(chart.join("charts/packaged-1.0.0.tgz"), gz.finish().unwrap()).unwrap();
        assert!(c.may_use_lookup());
    }

    #[test]
    fn revision_is_written_in_for_the_spellings_that_mean_the_root() {
        assert_eq!(with_revision("r: {{ .Release.Revision }}", 7), "r: {{ 7 }}");
        assert_eq!(with_revision("r: {{ $.Release.Revision | quote }}", 7), "r: {{ 7 | quote }}");
        assert_eq!(with_revision("{{ add1 .Release.Revision }}", 12), "{{ add1 12 }}");
        assert_eq!(with_revision("{{(.Release.Revision)}}", 3), "{{(3)}}");
        for kept in ["{{ $root.Release.Revision }}", "{{ .Values.Release.Revision }}", "{{ .Release.RevisionX }}"] {
            assert_eq!(with_revision(kept, 7), kept);
        }
    }

    #[test]
    fn a_copy_at_a_revision_rewrites_templates_of_linked_subcharts_too() {
        let d = tempfile::tempdir().unwrap();
        let chart = d.path().join("app");
        let lib = d.path().join("lib");
        for dir in [chart.join("templates"), chart.join("charts"), lib.join("templates")] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(chart.join("Chart.yaml"), "apiVersion: v2\nname: app\nversion: 1.0.0\n").unwrap();
        std::fs::write(chart.join("templates/cm.yaml"), "rev: {{ .Release.Revision }}\n").unwrap();
        std::fs::write(lib.join("templates/_l.tpl"), "{{ define \"l\" }}{{ $.Release.Revision }}{{ end }}").unwrap();
        std::os::unix::fs::symlink(&lib, chart.join("charts/lib")).unwrap();
        let copy = at_revision(&chart, 4).unwrap().expect("the chart mentions the revision");
        assert_eq!(std::fs::read_to_string(copy.path().join("templates/cm.yaml")).unwrap(), "rev: {{ 4 }}\n");
        let l = std::fs::read_to_string(copy.path().join("charts/lib/templates/_l.tpl")).unwrap();
        assert_eq!(l, "{{ define \"l\" }}{{ 4 }}{{ end }}");
        // The developer's files are untouched.
        assert!(std::fs::read_to_string(lib.join("templates/_l.tpl")).unwrap().contains(".Release.Revision"));
        std::fs::write(chart.join("templates/cm.yaml"), "rev: none\n").unwrap();
        std::fs::write(lib.join("templates/_l.tpl"), "").unwrap();
        assert!(at_revision(&chart, 4).unwrap().is_none());
    }

    #[test]
    fn a_version_is_written_into_chart_yaml_and_read_back() {
        let text = "apiVersion: v2\nname: app\nversion: 0.3.0 # bumped by CI\nappVersion: \"1.0\"\ndependencies:\n- name: lib\n  version: 1.0.0\n";
        let out = with_version(text, "0.3.0+5e79901a2e85");
        assert_eq!(
            out,
            "apiVersion: v2\nname: app\nversion: \"0.3.0+5e79901a2e85\"\nappVersion: \"1.0\"\ndependencies:\n- name: lib\n  version: 1.0.0\n"
        );
        let meta: ChartMeta = serde_saphyr::from_str(&out).unwrap();
        assert_eq!(meta.version, "0.3.0+5e79901a2e85");
    }

    #[test]
    fn reads_name_and_version() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("Chart.yaml"), "apiVersion: v2\nname: demo\nversion: 1.2.3\n").unwrap();
        let c = ChartDir::open(d.path()).unwrap();
        assert_eq!((c.meta.name.as_str(), c.meta.version.as_str()), ("demo", "1.2.3"));
    }
}
