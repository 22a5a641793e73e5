//! `spec.chart.spec.valuesFiles` read as source-controller reads them when it builds the HelmChart that
//! helm-controller makes for `spec.chart` (source-controller v1.9.5, `internal/helm/chart/builder_local.go`
//! `mergeFileValues` and `builder_remote.go` `mergeChartValues`):
//!
//! - From a **GitRepository or Bucket** each path is joined to the source's root (the repository, the
//!   bucket) as `securejoin` joins it: `..` cannot climb out of it, `/x` is `<root>/x`. Only a path that
//!   does not exist is skipped with `ignoreMissingValuesFiles`; a directory, or anything else that is not
//!   a regular file, fails. The artifact holds no symbolic links (source-controller's archive leaves them
//!   out), so a path through one is not there either.
//! - From a **HelmRepository** (HTTP or OCI) a path names one of the chart's files as Helm's loader lists
//!   them, relative to the chart (`values.yaml` is the chart's own values; templates, subcharts and
//!   `Chart.yaml` are no such files).
//! - A list of exactly `values.yaml` is no list (`GetValuesFiles`); otherwise the files are merged in
//!   order (later ones win, fluxcd/pkg's `MergeMaps`) and REPLACE the chart's values.yaml
//!   (`OverwriteChartDefaultValues`): the chart's own defaults take part only if listed, and when every
//!   file is missing and skipped the chart's defaults are empty.
//!
//! helm cozy runs from the chart's directory, so it finds the source's root from there: the directory
//! minus `spec.chart.spec.chart` (the chart's path in the source, `./charts/app`), else the top of the
//! Git work tree it lies in. The original cozyhr's `cozyhr.cozystack.io/values-files` annotation names
//! files of the chart directory.

use std::path::{Component, Path, PathBuf};

use crate::flux::HelmRelease;
use crate::source::chart::ChartDir;
use crate::values::Values;

pub use crate::support::error::ValuesFilesError;

/// The annotation the original cozyhr honours to name values files (comma separated, relative to the chart).
pub const VALUES_FILES_ANNOTATION: &str = "cozyhr.cozystack.io/values-files";

/// The values files a HelmRelease lists, and how they are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// As written, in order.
    pub entries: Vec<String>,
    /// `ignoreMissingValuesFiles`.
    pub ignore_missing: bool,
    pub base: Base,
}

/// Where the entries of a [`Listed`] are read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Base {
    /// The root of a GitRepository or Bucket (`kind`) in which the chart lies at `chart` (`spec.chart`).
    SourceRoot { kind: String, name: String, chart: String },
    /// The chart's files, as a chart from a HelmRepository has them.
    ChartFiles,
    /// The chart directory, by the original cozyhr's annotation.
    Annotation,
}

/// The values files of `hr` (`spec.chart.spec.valuesFiles`, else the original cozyhr's annotation), or
/// None when the chart's values.yaml is used as it is: no list, or exactly `values.yaml`.
pub fn listed(hr: &HelmRelease) -> Option<Listed> {
    let chart = hr.spec.chart.as_ref().filter(|c| !c.spec.values_files.is_empty());
    let (entries, ignore_missing, base) = match chart {
        Some(c) => {
            let source = &c.spec.source_ref;
            let base = match source.kind.as_str() {
                "GitRepository" | "Bucket" => Base::SourceRoot {
                    kind: source.kind.clone(),
                    name: source.name.clone(),
                    chart: c.spec.chart.clone(),
                },
                _ => Base::ChartFiles,
            };
            (c.spec.values_files.clone(), c.spec.ignore_missing_values_files.unwrap_or(false), base)
        }
        None => {
            let annotated = hr.metadata.annotations.as_ref().and_then(|a| a.get(VALUES_FILES_ANNOTATION))?;
            let entries: Vec<String> =
                annotated.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect();
            (entries, false, Base::Annotation)
        }
    };
    // source-controller's GetValuesFiles: exactly ["values.yaml"] (after filepath.Clean) is no list.
    let lone_default = matches!(entries.as_slice(), [one] if go_clean(one) == "values.yaml");
    (!entries.is_empty() && !lone_default).then_some(Listed { entries, ignore_missing, base })
}

/// The values files of `hr` read for `chart`, each with the entry as written, in order; None when the
/// chart's values.yaml is used as it is (see [`listed`]). Some, even empty, replaces the chart's defaults.
pub fn read(hr: &HelmRelease, chart: &ChartDir) -> Result<Option<Vec<(String, Values)>>, ValuesFilesError> {
    let Some(listed) = listed(hr) else { return Ok(None) };
    let mut out = Vec::new();
    match &listed.base {
        Base::SourceRoot { kind, name, chart: in_source } => {
            let root = source_root(chart, kind, name, in_source)?;
            for entry in &listed.entries {
                out.extend(read_in_source(&root, entry, listed.ignore_missing)?.map(|v| (entry.clone(), v)));
            }
        }
        Base::ChartFiles => {
            for entry in &listed.entries {
                out.extend(read_chart_file(chart, entry, listed.ignore_missing)?.map(|v| (entry.clone(), v)));
            }
        }
        Base::Annotation => {
            for entry in &listed.entries {
                out.push((entry.clone(), read_annotated(chart, entry)?));
            }
        }
    }
    // OverwriteChartDefaultValues: a chart without values.yaml has nothing to replace, and fails the build.
    if listed.base != Base::Annotation && !chart.path().join("values.yaml").is_file() {
        return Err(ValuesFilesError::NoChartValues { chart: chart.path().display().to_string() });
    }
    Ok(Some(out))
}

/// `hr`'s values files that lie outside `chart`'s directory, as paths on disk (what a watch follows
/// besides the chart); nothing when the source's root cannot be found.
pub fn outside_chart(hr: &HelmRelease, chart: &ChartDir) -> Vec<PathBuf> {
    let Some(Listed { entries, base: Base::SourceRoot { kind, name, chart: in_source }, .. }) = listed(hr) else {
        return Vec::new();
    };
    let Ok(root) = source_root(chart, &kind, &name, &in_source) else { return Vec::new() };
    entries.iter().map(|e| root.join(secure_clean(e))).filter(|p| !p.starts_with(chart.path())).collect()
}

/// The repository paths of `hr`'s values files for a chart at repository path `chart` (a GitRepository
/// or Bucket source's: the root is the repository's top unless `spec.chart` says a deeper one), which a
/// Git ref's tree must hold to render it; nothing for values files among the chart's own files.
pub fn repository_paths(hr: &HelmRelease, chart: &Path) -> Vec<PathBuf> {
    let Some(Listed { entries, base: Base::SourceRoot { chart: in_source, .. }, .. }) = listed(hr) else {
        return Vec::new();
    };
    let root = strip_chart_path(chart, &in_source).unwrap_or_default();
    entries.iter().map(|e| root.join(secure_clean(e))).filter(|p| !p.as_os_str().is_empty()).collect()
}

/// The root of the source a chart lies in at `in_source` (`spec.chart.spec.chart`): the chart's directory
/// minus that path, else the top of the checkout it lies in (one helm cozy wrote, or the Git work tree).
fn source_root(chart: &ChartDir, kind: &str, name: &str, in_source: &str) -> Result<PathBuf, ValuesFilesError> {
    let (dir, top) = match chart.checkout() {
        Some(c) => (c.dir.as_path(), Some(c.top.clone())),
        None => (chart.path(), None),
    };
    if let Some(root) = strip_chart_path(dir, in_source) {
        return Ok(root);
    }
    top.or_else(|| crate::source::gitref::work_tree_top(dir)).ok_or_else(|| ValuesFilesError::NoSourceRoot {
        what: format!("{kind} {name}"),
        chart: dir.display().to_string(),
        in_source: in_source.to_string(),
    })
}

/// `dir` without its last components when they are `in_source` (cleaned as source-controller joins it).
fn strip_chart_path(dir: &Path, in_source: &str) -> Option<PathBuf> {
    let rel = secure_clean(in_source);
    let mut root = dir.to_path_buf();
    for part in rel.components().rev() {
        if root.file_name() != Some(part.as_os_str()) {
            return None;
        }
        root.pop();
    }
    Some(root)
}

/// `path` as securejoin reads it below a root, without symbolic links (an artifact has none): `.` and
/// empty parts dropped, `..` going up but never above the root, a leading `/` the root itself. The
/// result is relative (empty: the root).
pub fn secure_clean(path: &str) -> PathBuf {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts.iter().collect()
}

/// Go's `filepath.Clean` on a `/`-separated path, as source-controller cleans a HelmRepository chart's
/// file names: `..` above the start kept (`../x`), a leading `/` kept, `.` for nothing.
fn go_clean(path: &str) -> String {
    let rooted = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            ".." if rooted => {}
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_string(),
        (false, false) => joined,
    }
}

/// One entry of a GitRepository's or Bucket's list, below `root`: its values, or None when it does not
/// exist and `ignore_missing` skips it.
fn read_in_source(root: &Path, entry: &str, ignore_missing: bool) -> Result<Option<Values>, ValuesFilesError> {
    let rel = secure_clean(entry);
    let path = root.join(&rel);
    // source-controller names the joined path without the root: `/charts/app/values.yaml`.
    let shown = if rel.as_os_str().is_empty() { String::new() } else { format!("/{}", rel.display()) };
    let not_found =
        |why: String| ValuesFilesError::NotFound { shown: shown.clone(), reference: entry.to_string(), why };
    if let Some(link) = first_link(root, &rel) {
        return match ignore_missing {
            true => Ok(None),
            false => Err(not_found(format!(
                "{} is a symbolic link, which source-controller leaves out of the source's artifact",
                link.display()
            ))),
        };
    }
    match std::fs::metadata(&path) {
        // Go's os.IsNotExist: ENOENT only (a file where a directory should be is not "missing").
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && ignore_missing => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(not_found(format!(
            "{} does not exist (spec.chart.spec.ignoreMissingValuesFiles: true skips missing files)",
            path.display()
        ))),
        Err(e) => Err(not_found(format!("{}: {e}", path.display()))),
        Ok(meta) if !meta.is_file() => Err(not_found(format!("{} is not a regular file", path.display()))),
        Ok(_) => parse_file(&path, entry).map(Some),
    }
}

/// The first symbolic link on the way from `root` down to `root/rel`, if any.
fn first_link(root: &Path, rel: &Path) -> Option<PathBuf> {
    let mut at = root.to_path_buf();
    for part in rel.components() {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => return Some(at),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
    None
}

/// Reads and parses a values file as source-controller does (`os.ReadFile`, then sigs.k8s.io/yaml).
fn parse_file(path: &Path, entry: &str) -> Result<Values, ValuesFilesError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ValuesFilesError::Unreadable { reference: entry.to_string(), reason: e.to_string() })?;
    crate::values::parse_values(&text, entry)
        .map_err(|e| ValuesFilesError::Unmarshal { reference: entry.to_string(), reason: e.to_string() })
}

/// One entry of a HelmRepository chart's list: `values.yaml` is the chart's values; another must be one
/// of the chart's files as Helm's loader lists them (not Chart.yaml, Chart.lock, values.schema.json, a
/// template or a subchart; not left out by `.helmignore`). None when missing and skipped.
fn read_chart_file(chart: &ChartDir, entry: &str, ignore_missing: bool) -> Result<Option<Values>, ValuesFilesError> {
    let name = go_clean(entry);
    if name == "values.yaml" {
        let text = chart
            .default_values_text()
            .map_err(|e| ValuesFilesError::Unreadable { reference: entry.to_string(), reason: e.to_string() })?;
        return crate::values::parse_values(&text, entry)
            .map(Some)
            .map_err(|e| ValuesFilesError::Unmarshal { reference: entry.to_string(), reason: e.to_string() });
    }
    let path = chart.path().join(&name);
    let why = match chart_file_absence(chart, &name) {
        None if path.is_file() => return parse_file(&path, entry).map(Some),
        None => format!("the chart has no file {name}"),
        Some(why) => why,
    };
    match ignore_missing {
        true => Ok(None),
        false => Err(ValuesFilesError::NotInChart { reference: entry.to_string(), why }),
    }
}

/// Why `name` (cleaned) is not among the files Helm's loader gives a chart, if it is not.
fn chart_file_absence(chart: &ChartDir, name: &str) -> Option<String> {
    const NOT_FILES: [&str; 5] =
        ["Chart.yaml", "Chart.lock", "values.schema.json", "requirements.yaml", "requirements.lock"];
    if name.starts_with('/') || name == ".." || name.starts_with("../") {
        return Some(format!("{name} is outside the chart"));
    }
    if NOT_FILES.contains(&name) || name.starts_with("templates/") || name.starts_with("charts/") {
        return Some(format!("Helm does not load {name} as one of the chart's files"));
    }
    let ignore = std::fs::read_to_string(chart.path().join(".helmignore")).unwrap_or_default();
    crate::source::helmignore::HelmIgnore::parse(&ignore)
        .excludes(name)
        .then(|| format!("the chart's .helmignore leaves {name} out of the package"))
}

/// One entry of the original cozyhr's annotation: a file of the chart directory.
fn read_annotated(chart: &ChartDir, entry: &str) -> Result<Values, ValuesFilesError> {
    let path = Path::new(entry);
    if path.is_absolute() || path.components().any(|c| c == Component::ParentDir) {
        return Err(ValuesFilesError::OutsideChart { entry: entry.to_string() });
    }
    parse_file(&chart.path().join(path), entry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::chart::Checkout;
    use serde_json::{Value, json};

    fn hr(kind: &str, chart: &str, files: &[&str], ignore_missing: bool) -> HelmRelease {
        let spec = json!({"chart": {"spec": {
            "chart": chart,
            "sourceRef": {"kind": kind, "name": "repo"},
            "valuesFiles": files,
            "ignoreMissingValuesFiles": ignore_missing,
        }}});
        serde_json::from_value(json!({"metadata": {"name": "app", "namespace": "apps"}, "spec": spec})).unwrap()
    }

    /// A monorepo: `charts/app` (values `{replicas: 1, from: chart}`), `environments/prod/values.yaml`
    /// (`{replicas: 3}`), a directory `environments/dir.yaml`, a link `environments/link.yaml` to the
    /// prod file; and a file beside the repository that `..` must never reach.
    fn monorepo() -> (tempfile::TempDir, ChartDir) {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("outside.yaml"), "escaped: true\n").unwrap();
        let root = tmp.path().join("repo");
        let write = |rel: &str, text: &str| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write("charts/app/Chart.yaml", "apiVersion: v2\nname: app\nversion: 0.1.0\n");
        write("charts/app/values.yaml", "replicas: 1\nfrom: chart\n");
        write("charts/app/values-prod.yaml", "replicas: 5\n");
        write("charts/app/templates/cm.yaml", "kind: ConfigMap\n");
        write("environments/prod/values.yaml", "replicas: 3\n");
        std::fs::create_dir_all(root.join("environments/dir.yaml")).unwrap();
        std::os::unix::fs::symlink("prod/values.yaml", root.join("environments/link.yaml")).unwrap();
        let chart = ChartDir::open(&root.join("charts/app")).unwrap();
        (tmp, chart)
    }

    fn values(read: Option<Vec<(String, Values)>>) -> Vec<(String, Value)> {
        read.expect("files take part").into_iter().map(|(l, v)| (l, Value::Object(v))).collect()
    }

    #[test]
    fn paths_are_joined_below_the_root_as_securejoin_joins_them() {
        assert_eq!(secure_clean("./charts/app/values.yaml"), Path::new("charts/app/values.yaml"));
        assert_eq!(secure_clean("/environments/prod/values.yaml"), Path::new("environments/prod/values.yaml"));
        assert_eq!(secure_clean("../../environments//prod/./values.yaml"), Path::new("environments/prod/values.yaml"));
        assert_eq!(secure_clean("charts/../../../outside.yaml"), Path::new("outside.yaml"));
        assert_eq!(secure_clean("/"), Path::new(""));
        // A HelmRepository chart's names are only cleaned: what climbs out stays outside.
        assert_eq!(go_clean("./values.yaml"), "values.yaml");
        assert_eq!(go_clean("a/./b/../c/"), "a/c");
        assert_eq!(go_clean("../x"), "../x");
        assert_eq!(go_clean("/x/../../y"), "/y");
        assert_eq!(go_clean(""), ".");
    }

    #[test]
    fn the_source_root_is_the_chart_directory_minus_its_path_in_the_source() {
        let r = Path::new("/r/charts/app");
        assert_eq!(strip_chart_path(r, "./charts/app"), Some(PathBuf::from("/r")));
        assert_eq!(strip_chart_path(r, "charts/app/"), Some(PathBuf::from("/r")));
        assert_eq!(strip_chart_path(r, "app"), Some(PathBuf::from("/r/charts")));
        assert_eq!(strip_chart_path(r, "."), Some(PathBuf::from("/r/charts/app")));
        assert_eq!(strip_chart_path(r, "./charts/other"), None);
        assert_eq!(strip_chart_path(Path::new("/app"), "deep/charts/app"), None);
    }

    #[test]
    fn a_lone_values_yaml_is_no_list() {
        for lone in ["values.yaml", "./values.yaml"] {
            assert_eq!(listed(&hr("GitRepository", "./charts/app", &[lone], false)), None);
            assert_eq!(listed(&hr("HelmRepository", "app", &[lone], false)), None);
        }
        let two = listed(&hr("Bucket", "./charts/app", &["values.yaml", "x.yaml"], true)).unwrap();
        assert!(two.ignore_missing);
        assert_eq!(
            two.base,
            Base::SourceRoot { kind: "Bucket".into(), name: "repo".into(), chart: "./charts/app".into() }
        );
        assert_eq!(listed(&hr("HelmRepository", "app", &["a.yaml"], false)).unwrap().base, Base::ChartFiles);
        assert_eq!(listed(&hr("GitRepository", "./charts/app", &[], false)), None);
        // With more entries `values.yaml` is the source root's, not the chart's: missing here.
        let (_tmp, chart) = monorepo();
        let err = read(
            &hr("GitRepository", "./charts/app", &["values.yaml", "environments/prod/values.yaml"], false),
            &chart,
        );
        assert!(err.unwrap_err().to_string().starts_with(
            "values files merge error: no values file found at path '/values.yaml' (reference 'values.yaml'): "
        ));
    }

    #[test]
    fn a_git_repositorys_files_are_read_from_the_repository_root() {
        let (_tmp, chart) = monorepo();
        let files = ["./charts/app/values.yaml", "environments/prod/values.yaml"];
        let got = values(read(&hr("GitRepository", "./charts/app", &files, false), &chart).unwrap());
        assert_eq!(
            got,
            [
                ("./charts/app/values.yaml".to_string(), json!({"replicas": 1, "from": "chart"})),
                ("environments/prod/values.yaml".to_string(), json!({"replicas": 3})),
            ]
        );
        // `..` cannot climb out of the root, and a leading `/` is the root.
        let climbing = ["../../environments/prod/values.yaml", "/environments/prod/values.yaml"];
        let got = values(read(&hr("GitRepository", "./charts/app", &climbing, false), &chart).unwrap());
        assert!(got.iter().all(|(_, v)| *v == json!({"replicas": 3})), "{got:?}");
        let err = read(&hr("Bucket", "./charts/app", &["a.yaml", "../outside.yaml"], false), &chart).unwrap_err();
        assert!(err.to_string().contains("no values file found at path '/a.yaml' (reference 'a.yaml')"), "{err}");
        let err = read(&hr("Bucket", "./charts/app", &["../outside.yaml", "b.yaml"], true), &chart).unwrap();
        assert_eq!(err, Some(Vec::new()), "the file beside the repository is never read");
    }

    #[test]
    fn missing_files_fail_unless_ignored_and_anything_else_fails_anyway() {
        let (_tmp, chart) = monorepo();
        let files = ["./charts/app/values.yaml", "./charts/app/values-staging.yaml"];
        let err = read(&hr("GitRepository", "./charts/app", &files, false), &chart).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("values files merge error: no values file found at path '/charts/app/values-staging.yaml' (reference './charts/app/values-staging.yaml'): "),
            "{text}"
        );
        assert!(text.contains("does not exist (spec.chart.spec.ignoreMissingValuesFiles: true skips missing files)"));
        assert!(!text.contains('\n'));
        let got = values(read(&hr("GitRepository", "./charts/app", &files, true), &chart).unwrap());
        assert_eq!(got.len(), 1, "the missing file is skipped: {got:?}");
        // Every file missing and ignored: an empty list, which still replaces the chart's values.
        let none = ["a.yaml", "b/c.yaml"];
        assert_eq!(read(&hr("GitRepository", "./charts/app", &none, true), &chart).unwrap(), Some(Vec::new()));
        // A directory is no values file, ignored or not; nor is a symbolic link (not in the artifact).
        for ignore in [false, true] {
            let dir = ["environments/prod/values.yaml", "environments/dir.yaml"];
            let err = read(&hr("GitRepository", "./charts/app", &dir, ignore), &chart).unwrap_err().to_string();
            assert!(err.contains("at path '/environments/dir.yaml' (reference 'environments/dir.yaml')"), "{err}");
            assert!(err.ends_with("environments/dir.yaml is not a regular file"), "{err}");
        }
        let link = ["environments/link.yaml", "environments/prod/values.yaml"];
        let err = read(&hr("GitRepository", "./charts/app", &link, false), &chart).unwrap_err().to_string();
        assert!(err.contains("is a symbolic link, which source-controller leaves out"), "{err}");
        let got = values(read(&hr("GitRepository", "./charts/app", &link, true), &chart).unwrap());
        assert_eq!(got.len(), 1, "{got:?}");
        // A file under a regular file: ENOTDIR is not "missing" for Go either.
        let under = ["charts/app/values.yaml/x.yaml", "a.yaml"];
        assert!(read(&hr("GitRepository", "./charts/app", &under, true), &chart).is_err());
    }

    #[test]
    fn bad_yaml_and_a_chart_without_values_yaml_fail_in_source_controllers_words() {
        let (tmp, chart) = monorepo();
        std::fs::write(tmp.path().join("repo/bad.yaml"), "a: [\n").unwrap();
        let err = read(&hr("GitRepository", "charts/app", &["bad.yaml", "a.yaml"], true), &chart).unwrap_err();
        assert!(err.to_string().starts_with("values files merge error: unmarshaling values from 'bad.yaml' failed: "));
        std::fs::remove_file(chart.path().join("values.yaml")).unwrap();
        let err = read(&hr("GitRepository", "charts/app", &["environments/prod/values.yaml"], false), &chart);
        assert!(
            err.unwrap_err()
                .to_string()
                .starts_with("values files merge error: failed to locate values file: values.yaml")
        );
    }

    #[test]
    fn without_a_matching_path_the_checkouts_top_is_the_root_or_it_is_said() {
        let (tmp, chart) = monorepo();
        let files = ["environments/prod/values.yaml", "charts/app/values.yaml"];
        // spec.chart names another path: no parent of the chart directory fits, and no Git work tree.
        let wrong = hr("GitRepository", "./charts/other", &files, false);
        let err = read(&wrong, &chart).unwrap_err().to_string();
        assert!(
            err.starts_with("cannot find the root of GitRepository repo, which valuesFiles are relative to: "),
            "{err}"
        );
        assert!(err.contains("does not end in spec.chart.spec.chart \"./charts/other\""), "{err}");
        // A checkout helm cozy wrote knows its top (a review's chart may be a directory of links).
        let top = tmp.path().join("repo");
        let known = chart.clone().in_checkout(Checkout { top: top.clone(), dir: top.join("charts/app") });
        assert_eq!(values(read(&wrong, &known).unwrap()).len(), 2);
        assert_eq!(outside_chart(&wrong, &known), [top.join("environments/prod/values.yaml")]);
    }

    #[test]
    fn a_helm_repository_charts_files_are_its_own() {
        let (_tmp, chart) = monorepo();
        let files = ["values.yaml", "./values-prod.yaml"];
        let got = values(read(&hr("HelmRepository", "app", &files, false), &chart).unwrap());
        assert_eq!(got[1], ("./values-prod.yaml".to_string(), json!({"replicas": 5})));
        for (outside, why) in [
            ("../../environments/prod/values.yaml", "is outside the chart"),
            ("/values.yaml", "is outside the chart"),
            ("templates/cm.yaml", "Helm does not load templates/cm.yaml as one of the chart's files"),
            ("Chart.yaml", "Helm does not load Chart.yaml"),
            ("values-nope.yaml", "the chart has no file values-nope.yaml"),
        ] {
            let err = read(&hr("HelmRepository", "app", &["values.yaml", outside], false), &chart).unwrap_err();
            let text = err.to_string();
            let head = format!(
                "values files merge error: failed to merge chart values: no values file found at path '{outside}': "
            );
            assert!(text.starts_with(&head) && text.contains(why), "{text}");
            let skipped = values(read(&hr("HelmRepository", "app", &["values.yaml", outside], true), &chart).unwrap());
            assert_eq!(skipped.len(), 1);
        }
        std::fs::write(chart.path().join(".helmignore"), "values-prod.yaml\n").unwrap();
        let err = read(&hr("HelmRepository", "app", &files, false), &chart).unwrap_err();
        assert!(err.to_string().contains(".helmignore leaves values-prod.yaml out"), "{err}");
    }

    #[test]
    fn a_git_refs_tree_needs_the_files_outside_the_chart() {
        let files = ["./charts/app/values.yaml", "/environments/prod/values.yaml", "../x.yaml"];
        let paths = repository_paths(&hr("GitRepository", "./charts/app", &files, false), Path::new("charts/app"));
        assert_eq!(paths, ["charts/app/values.yaml", "environments/prod/values.yaml", "x.yaml"].map(PathBuf::from));
        // A deeper source root: the chart's repository path minus spec.chart.
        let paths = repository_paths(&hr("GitRepository", "app", &["prod.yaml", "b"], false), Path::new("sub/app"));
        assert_eq!(paths, ["sub/prod.yaml", "sub/b"].map(PathBuf::from));
        assert!(repository_paths(&hr("HelmRepository", "app", &["a", "b"], false), Path::new("app")).is_empty());
    }
}
