//! The Helm SDK built into each helm-controller, and what a local Helm of another minor version can
//! render differently.
//!
//! helm cozy renders with the local `helm` (`COZYHR_HELM`, else Helm's own `HELM_BIN`, else `helm` on
//! PATH) and reproduces helm-controller's post-render chain itself, so what stays is what the Helm
//! *template engine* does differently. The known list, each with the versions that differ:
//! - `.Capabilities.HelmVersion` is the rendering Helm's own version. helm-controller's SDK is not stamped
//!   with its release, so there it is the source's `vMAJOR.MINOR` (`v4.2`); a released Helm says `v4.2.2`,
//!   and only a Helm built from the module without the stamp says the same;
//! - Helm 4.1 copies a chart default's `null` into the values the templates see (`{a: 1, b: null}`
//!   stays so when a user value is merged into the map); Helm 4.2 drops it (helm/helm#31919);
//! - template functions: `mustToToml` arrived with Helm 4.2.
//!
//! What helm cozy can make exact without that Helm it makes exact (how a document's end is read, in
//! [`crate::render::metadata`]); for the rest, [`differences`] names what applies to the chart at hand,
//! so a user sees one line only when the render can differ.

use std::fmt;
use std::path::Path;

use serde_json::Value;

use super::version::Version;

/// The Helm SDK built into a helm-controller: upstream `helm.sh/helm/v4` at `version`, or, where its
/// go.mod replaces that module, the fluxcd fork `github.com/fluxcd/helm/v4` tagged `fork` (the module
/// proxy serves no fork tag; what each is was matched by the go.sum hash of its module, see
/// [`Splitting`] and docs/flux-exact.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HelmSdk {
    /// The upstream version the SDK stands for (a fork's base version as its tag names it).
    pub version: Version,
    /// The fork's tag, e.g. `v4.2.4-flux.1`.
    pub fork: Option<&'static str>,
}

impl HelmSdk {
    const fn upstream(major: u64, minor: u64, patch: u64) -> HelmSdk {
        HelmSdk { version: Version::new(major, minor, patch), fork: None }
    }

    const fn fork(major: u64, minor: u64, patch: u64, tag: &'static str) -> HelmSdk {
        HelmSdk { version: Version::new(major, minor, patch), fork: Some(tag) }
    }

    /// How this SDK cuts a template's output into documents before helm-controller's post-renderers.
    pub fn splitting(&self) -> Splitting {
        match (self.fork, self.version.major, self.version.minor, self.version.patch) {
            // helm/helm#31940's head: `annotateAndMerge` pre-splits with 4.1's `SplitManifests`, which
            // trims every document at both ends.
            (Some("v4.1.4-flux.1"), ..) => Splitting::Trim,
            // Not to be had here; helm-controller 1.5.4's changelog: the fork "preserves line endings in
            // SplitManifests" (helm/helm#31952, in 4.2.0). Inferred.
            (Some("v4.1.4-flux.3"), ..) => Splitting::Cut,
            // helm commit 51a9837ba: v4.2.3 with the line-anchored separator of 4.2.4 (helm/helm#32327).
            (Some("v4.2.4-flux.1"), ..) => Splitting::Line,
            (_, 4, 0..=1, _) => Splitting::Yaml,
            (_, 4, 2, 0..=3) => Splitting::Cut,
            _ => Splitting::Line,
        }
    }
}

impl fmt::Display for HelmSdk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.fork {
            Some(tag) => write!(f, "{tag} (the fluxcd fork of Helm {})", self.version),
            None => write!(f, "{}", self.version),
        }
    }
}

/// How a Helm SDK cuts a template's output into documents before helm-controller's post-renderers
/// (`pkg/action/action.go` `annotateAndMerge`, `pkg/release/v1/util/manifest.go` `SplitManifests`). It
/// decides the end of a block scalar that ends a document (`config.yaml: |` right before a `---`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Splitting {
    /// Helm 4.0-4.1.4 (helm-controller 1.5.0-1.5.2): each template's output is parsed whole as a YAML
    /// stream (`kio.ParseAll`), so every document keeps its ending as YAML reads it.
    Yaml,
    /// The fork v4.1.4-flux.1 (helm-controller 1.5.3): every document cut at `(?:^|\s*\n)---\s*` and
    /// trimmed at both ends, its template's last one too: no block scalar ending a document keeps a
    /// final newline.
    Trim,
    /// Helm 4.2.0-4.2.3 and the fork v4.1.4-flux.3 (helm-controller 1.5.4, 1.5.5, 1.6.0-1.6.2): cut at
    /// `(?:^|\s*\n)---\s*` with leading whitespace trimmed, so a document that is not its template's
    /// last loses its trailing whitespace (`|` reads as `|-`); the last keeps the template's ending.
    Cut,
    /// Helm 4.2.4 and later, and the fork v4.2.4-flux.1 (helm-controller 1.6.3, 1.6.4): cut at
    /// `(?m)^---[ \t]*`, at the line, so every document keeps its trailing whitespace.
    #[default]
    Line,
}

/// The Helm SDK of a helm-controller version (its go.mod: `require helm.sh/helm/v4` and any `replace`).
pub fn sdk_of(controller: Version) -> HelmSdk {
    let (up, fork) = (HelmSdk::upstream, HelmSdk::fork);
    match (controller.major, controller.minor, controller.patch) {
        (1, 5, 0..=1) => up(4, 1, 1),
        (1, 5, 2) => up(4, 1, 3),
        (1, 5, 3) => fork(4, 1, 4, "v4.1.4-flux.1"),
        (1, 5, 4) => fork(4, 1, 4, "v4.1.4-flux.3"),
        (1, 5, _) => up(4, 2, 0),
        (1, 6, 0) => up(4, 2, 1),
        (1, 6, 1..=2) => up(4, 2, 2),
        (1, 6, 3) => fork(4, 2, 4, "v4.2.4-flux.1"),
        (1, 6, 4) => up(4, 2, 4),
        // Older than 1.5 is Helm 3 (not followed here); newer: the newest known.
        _ => up(4, 2, 4),
    }
}

/// Whether a Helm copies chart-default nulls into the coalesced values (before 4.2 in Helm 4).
fn keeps_chart_default_nulls(helm: Version) -> Option<bool> {
    match helm.major {
        4 => Some(helm.minor < 2),
        // Helm 3's coalescing is not compared here.
        _ => None,
    }
}

/// Whether a Helm's template engine has `mustToToml`.
fn has_must_to_toml(helm: Version) -> bool {
    helm >= Version::new(4, 2, 0)
}

/// One way the local Helm can render this chart differently from helm-controller's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HelmDifference {
    /// The chart reads `.Capabilities.HelmVersion`.
    HelmVersion,
    /// The chart's defaults hold a `null` (at this path) that one of the two keeps and the other drops.
    ChartDefaultNull { path: String, kept_by_controller: bool },
    /// The chart calls a template function only one of the two has.
    Function { name: &'static str, in_controller: bool },
}

impl HelmDifference {
    pub fn describe(&self, local: Version, sdk: HelmSdk) -> String {
        match self {
            HelmDifference::HelmVersion => {
                format!(".Capabilities.HelmVersion is {} there, {local} here", controller_helm_version(sdk))
            }
            HelmDifference::ChartDefaultNull { path, kept_by_controller: true } => {
                format!("the chart default {path}: null is kept there, dropped here")
            }
            HelmDifference::ChartDefaultNull { path, kept_by_controller: false } => {
                format!("the chart default {path}: null is dropped there, kept here")
            }
            HelmDifference::Function { name, in_controller: false } => {
                format!("{name} does not exist there (helm-controller fails to render)")
            }
            HelmDifference::Function { name, in_controller: true } => format!("{name} does not exist here"),
        }
    }
}

/// What `.Capabilities.HelmVersion.Version` says under helm-controller with this SDK (its version is not
/// stamped there, a fork's neither).
pub fn controller_helm_version(sdk: HelmSdk) -> String {
    format!("v{}.{}", sdk.version.major, sdk.version.minor)
}

/// Whether a Helm whose `helm version` is `local_text` renders exactly as the `sdk` inside helm-controller.
pub fn renders_as_controller(local_text: &str, sdk: HelmSdk) -> bool {
    local_text.trim() == controller_helm_version(sdk)
}

/// What can differ between rendering `chart_dir` (with the coalesced chart `defaults`) with the local
/// Helm (`helm version` said `local_text`) and with the `sdk` inside helm-controller. Empty when the
/// chart touches none of the known differences.
pub fn differences(local_text: &str, sdk: HelmSdk, chart_dir: &Path, defaults: &Value) -> Vec<HelmDifference> {
    let Some(local) = Version::parse(local_text) else { return Vec::new() };
    let reads_version = !renders_as_controller(local_text, sdk);
    let there = sdk.version;
    if local.same_minor(&there) && !reads_version {
        return Vec::new();
    }
    let templates = template_texts(chart_dir);
    let mut found = Vec::new();
    if reads_version && templates.iter().any(|t| t.contains("Capabilities.HelmVersion")) {
        found.push(HelmDifference::HelmVersion);
    }
    if let (Some(kept_there), Some(kept_here)) = (keeps_chart_default_nulls(there), keeps_chart_default_nulls(local))
        && kept_there != kept_here
        && let Some(path) = first_null_in_map(defaults, &mut Vec::new())
    {
        found.push(HelmDifference::ChartDefaultNull { path, kept_by_controller: kept_there });
    }
    if has_must_to_toml(there) != has_must_to_toml(local) && templates.iter().any(|t| t.contains("mustToToml")) {
        found.push(HelmDifference::Function { name: "mustToToml", in_controller: has_must_to_toml(there) });
    }
    found
}

/// The one line for [`differences`], or None when there are none.
pub fn line(local_text: &str, sdk: HelmSdk, controller: Version, found: &[HelmDifference]) -> Option<String> {
    let local = Version::parse(local_text)?;
    if found.is_empty() {
        return None;
    }
    let what: Vec<String> = found.iter().map(|d| d.describe(local, sdk)).collect();
    Some(format!(
        "helm-controller {controller} renders with Helm {sdk}, this render with Helm {}, and this chart can differ: {}; set COZYHR_HELM to a Helm {} built without a version stamp to render exactly as it does (docs/flux-exact.md)",
        local_text.trim(),
        what.join("; "),
        sdk.version,
    ))
}

/// The first `null` that sits in a map of the defaults (dotted path), as a user's map merged into it
/// would keep or drop it. A top-level null counts too.
fn first_null_in_map(value: &Value, path: &mut Vec<String>) -> Option<String> {
    let Value::Object(map) = value else { return None };
    for (k, v) in map {
        path.push(k.clone());
        let hit = match v {
            Value::Null => Some(path.join(".")),
            Value::Object(_) => first_null_in_map(v, path),
            _ => None,
        };
        path.pop();
        if hit.is_some() {
            return hit;
        }
    }
    None
}

/// The text of every template of the chart and its subcharts (`templates/` under the chart and under
/// each `charts/*` directory, followed through links); unreadable files are skipped.
fn template_texts(chart_dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut dirs = vec![chart_dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        collect(&dir.join("templates"), &mut out, 0);
        if let Ok(subcharts) = std::fs::read_dir(dir.join("charts")) {
            dirs.extend(subcharts.flatten().map(|e| e.path()).filter(|p| p.is_dir()));
        }
    }
    out
}

fn collect(dir: &Path, out: &mut Vec<String>, depth: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() && depth < 8 {
            collect(&path, out, depth + 1);
        } else if let Ok(text) = std::fs::read_to_string(&path) {
            out.push(text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// One row per helm-controller release: its go.mod's `helm.sh/helm/v4` (and `replace`), and how that
    /// SDK splits documents.
    #[test]
    fn each_controller_names_its_helm_and_its_splitting() {
        use Splitting::*;
        let rows: [(&str, &str, Option<&str>, Splitting); 11] = [
            ("v1.5.0", "v4.1.1", None, Yaml),
            ("v1.5.1", "v4.1.1", None, Yaml),
            ("v1.5.2", "v4.1.3", None, Yaml),
            ("v1.5.3", "v4.1.4", Some("v4.1.4-flux.1"), Trim),
            ("v1.5.4", "v4.1.4", Some("v4.1.4-flux.3"), Cut),
            ("v1.5.5", "v4.2.0", None, Cut),
            ("v1.6.0", "v4.2.1", None, Cut),
            ("v1.6.1", "v4.2.2", None, Cut),
            ("v1.6.2", "v4.2.2", None, Cut),
            ("v1.6.3", "v4.2.4", Some("v4.2.4-flux.1"), Line),
            ("v1.6.4", "v4.2.4", None, Line),
        ];
        for (hc, helm, fork, splitting) in rows {
            let sdk = sdk_of(Version::parse(hc).unwrap());
            assert_eq!((sdk.version.to_string().as_str(), sdk.fork, sdk.splitting()), (helm, fork, splitting), "{hc}");
        }
        // A newer helm-controller than any known: the newest known SDK.
        assert_eq!(sdk_of(Version::new(1, 7, 0)), sdk_of(Version::new(1, 6, 4)));
        assert_eq!(sdk_of(Version::new(1, 6, 3)).to_string(), "v4.2.4-flux.1 (the fluxcd fork of Helm v4.2.4)");
        assert_eq!(sdk_of(Version::new(1, 6, 4)).to_string(), "v4.2.4");
    }

    #[test]
    fn upstream_helm_splits_as_its_source_does() {
        let of = |text: &str| HelmSdk { version: Version::parse(text).unwrap(), fork: None }.splitting();
        // pkg/action: 4.1 parses each template's output as one YAML stream.
        for v in ["v4.1.1", "v4.1.3", "v4.1.4"] {
            assert_eq!(of(v), Splitting::Yaml, "{v}");
        }
        // pkg/release/v1/util/manifest.go: `(?:^|\s*\n)---\s*` in 4.2.0-4.2.3 ...
        for v in ["v4.2.0", "v4.2.1", "v4.2.2", "v4.2.3"] {
            assert_eq!(of(v), Splitting::Cut, "{v}");
        }
        // ... `(?m)^---[ \t]*` from 4.2.4 (and in 4.3).
        for v in ["v4.2.4", "v4.3.0", "v4.3.2"] {
            assert_eq!(of(v), Splitting::Line, "{v}");
        }
    }

    #[test]
    fn only_what_the_chart_touches_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("templates")).unwrap();
        std::fs::write(dir.path().join("templates/cm.yaml"), "v: {{ .Capabilities.HelmVersion.Version }}").unwrap();
        let (h41, h42) = (HelmSdk::upstream(4, 1, 1), HelmSdk::upstream(4, 2, 2));
        let defaults = json!({"m": {"a": 1, "b": null}});
        // The Helm helm-controller embeds, unstamped: nothing differs.
        assert!(differences("v4.2", h42, dir.path(), &defaults).is_empty());
        // A released Helm of the same minor: only the version it reports.
        assert_eq!(differences("v4.2.2", h42, dir.path(), &defaults), vec![HelmDifference::HelmVersion]);
        let found = differences("v4.3.1", h41, dir.path(), &defaults);
        assert_eq!(
            found,
            vec![
                HelmDifference::HelmVersion,
                HelmDifference::ChartDefaultNull { path: "m.b".into(), kept_by_controller: true }
            ]
        );
        // 4.2 and 4.3 agree about nulls: only the version differs.
        assert_eq!(differences("v4.3.1", h42, dir.path(), &defaults), vec![HelmDifference::HelmVersion]);
        let line = line("v4.3.1", h41, Version::new(1, 5, 0), &found).unwrap();
        assert!(line.contains("Helm v4.1.1") && line.contains("m.b: null is kept there"), "{line}");
        assert!(line.contains("is v4.1 there, v4.3.1 here"), "{line}");
        std::fs::write(dir.path().join("templates/cm.yaml"), "v: {{ .Values | mustToToml }}").unwrap();
        assert_eq!(
            differences("v4.3.1", h41, dir.path(), &json!({})),
            vec![HelmDifference::Function { name: "mustToToml", in_controller: false }]
        );
    }
}
