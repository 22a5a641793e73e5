//! Which charts a change can change the rendering of, decided from paths alone (and, where it matters,
//! a chart's `.helmignore` and whether its templates read files), so that an untouched chart is never
//! rendered.
//!
//! A changed path counts for a chart when it lies in what the chart reads ([`super::charts::Layout`]) at
//! either side and Helm would load it and use it: `.helmignore` does not leave it out, and it is one of
//! the files every chart is made of (`Chart.yaml`, `Chart.lock`, `values*.yaml`, `values.schema.json`,
//! `.helmignore`, anything under `templates/`, `crds/` or `charts/`), or the chart's templates read
//! files (`.Files`), which can read any file. So a README changes nothing, unless the chart renders it.
//! Each rule applies inside the chart or subchart that holds the path.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::charts::{Chart, Layout};
use crate::source::git_sides::{Side, Sides};
use crate::source::helmignore::HelmIgnore;
use crate::support::error::Result;

/// An affected chart (an index into the charts) and the changed paths that make it so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touched {
    pub chart: usize,
    pub paths: Vec<PathBuf>,
}

/// The charts `changed` can change the rendering of, in the charts' order.
pub async fn select(sides: &Sides, charts: &[Chart], changed: &BTreeSet<PathBuf>) -> Result<Vec<Touched>> {
    let mut out = Vec::new();
    for (i, chart) in charts.iter().enumerate() {
        let mut paths = BTreeSet::new();
        for (side, layout) in [(&sides.old, &chart.old), (&sides.new, &chart.new)] {
            let Some(layout) = layout else { continue };
            let candidates: Vec<(&PathBuf, PathBuf)> =
                changed.iter().flat_map(|p| layout.places(p).map(move |at| (p, at))).collect();
            if candidates.is_empty() {
                continue;
            }
            let view = ChartView::read(sides, side, layout, candidates.iter().map(|(_, at)| at.as_path())).await?;
            paths.extend(candidates.iter().filter(|(_, at)| view.uses(at)).map(|(p, _)| (*p).clone()));
        }
        if !paths.is_empty() {
            out.push(Touched { chart: i, paths: paths.into_iter().collect() });
        }
    }
    Ok(out)
}

/// What the rules need to know of one chart at one side: the files it sees (by path in the chart), its
/// and its subcharts' `.helmignore`, and which of them have templates that read files.
pub struct ChartView {
    files: BTreeSet<PathBuf>,
    ignores: BTreeMap<PathBuf, HelmIgnore>,
    reads_files: BTreeSet<PathBuf>,
}

impl ChartView {
    /// Reads what deciding on the paths `at` (in the chart) needs, and no more: the `.helmignore` of
    /// each (sub)chart they lie in, and its templates only where a path is not one of the files every
    /// chart is made of (then whether the templates read files decides).
    async fn read(sides: &Sides, side: &Side, layout: &Layout, at: impl Iterator<Item = &Path>) -> Result<ChartView> {
        let files: BTreeSet<PathBuf> = layout.files(&side.listing).collect();
        let mut roots: BTreeMap<PathBuf, bool> = BTreeMap::new();
        for a in at {
            let root = root_of(a, &files);
            let inner = a.strip_prefix(&root).unwrap_or(a).to_string_lossy().replace('\\', "/");
            *roots.entry(root).or_default() |= !is_input(&inner, &HelmIgnore::default(), false);
        }
        let mut wanted: Vec<(PathBuf, PathBuf)> = Vec::new();
        for (root, other_files) in &roots {
            let ignore = root.join(".helmignore");
            let templates = root.join("templates");
            for f in files.iter().filter(|f| **f == ignore || (*other_files && f.starts_with(&templates))) {
                if let Some(repo) = layout.repository_path(f) {
                    wanted.push((f.clone(), repo));
                }
            }
        }
        let texts = sides.read(side, &wanted.iter().map(|(_, r)| r.clone()).collect::<Vec<_>>()).await?;
        let text = |at: &Path| wanted.iter().find(|(f, _)| f == at).and_then(|(_, r)| texts.get(r));
        let mut view = ChartView { files: files.clone(), ignores: BTreeMap::new(), reads_files: BTreeSet::new() };
        for (root, other_files) in roots {
            let ignore = text(&root.join(".helmignore")).map(|b| HelmIgnore::parse(&String::from_utf8_lossy(b)));
            let templates = root.join("templates");
            if other_files
                && files
                    .iter()
                    .filter(|f| f.starts_with(&templates))
                    .any(|f| text(f).is_none_or(|b| b.windows(6).any(|w| w == b".Files")))
            {
                view.reads_files.insert(root.clone());
            }
            view.ignores.insert(root, ignore.unwrap_or_default());
        }
        Ok(view)
    }

    /// Whether a change of the file at `at` (its path in the chart) can change what the chart renders.
    pub fn uses(&self, at: &Path) -> bool {
        let root = root_of(at, &self.files);
        let inner = at.strip_prefix(&root).unwrap_or(at).to_string_lossy().replace('\\', "/");
        let default = HelmIgnore::default();
        let ignore = self.ignores.get(&root).unwrap_or(&default);
        is_input(&inner, ignore, self.reads_files.contains(&root))
    }
}

/// The chart or subchart that holds chart path `at`: "" for the chart itself, `charts/NAME` (and deeper)
/// for a subchart directory with its own Chart.yaml.
pub fn root_of(at: &Path, files: &BTreeSet<PathBuf>) -> PathBuf {
    let parts: Vec<&std::ffi::OsStr> = at.iter().collect();
    let mut root = PathBuf::new();
    let mut i = 0;
    while i + 2 < parts.len() && parts[i] == "charts" {
        let candidate = root.join("charts").join(parts[i + 1]);
        if !files.contains(&candidate.join("Chart.yaml")) {
            break;
        }
        root = candidate;
        i += 2;
    }
    root
}

/// Whether a file at `inner` (relative to the chart or subchart holding it) is something Helm loads and
/// renders from: see the module's words. `reads_files`: the chart's templates use `.Files`.
pub fn is_input(inner: &str, ignore: &HelmIgnore, reads_files: bool) -> bool {
    if ignore.excludes(inner) {
        return false;
    }
    const MADE_OF: [&str; 4] = ["Chart.yaml", "Chart.lock", "values.schema.json", ".helmignore"];
    const DIRECTORIES: [&str; 3] = ["templates/", "crds/", "charts/"];
    let values_file =
        !inner.contains('/') && inner.starts_with("values") && (inner.ends_with(".yaml") || inner.ends_with(".yml"));
    MADE_OF.contains(&inner) || values_file || DIRECTORIES.iter().any(|d| inner.starts_with(d)) || reads_files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chart_is_made_of_its_templates_values_and_subcharts_and_not_its_readme() {
        let none = HelmIgnore::default();
        for input in [
            "Chart.yaml",
            "values.yaml",
            "values-prod.yaml",
            "values.schema.json",
            "templates/deploy.yaml",
            "templates/_helpers.tpl",
            "crds/widget.yaml",
            "charts/redis-1.0.0.tgz",
            ".helmignore",
        ] {
            assert!(is_input(input, &none, false), "{input}");
        }
        for not in ["README.md", "docs/values.yaml", "LICENSE", "ci/test-values.yaml", "templates/.swp"] {
            assert!(!is_input(not, &none, false), "{not}");
        }
        // A chart whose templates read files reads any file Helm loads; .helmignore still leaves some out.
        assert!(is_input("files/config.toml", &none, true));
        let ignore = HelmIgnore::parse("*.md\n");
        assert!(!is_input("README.md", &ignore, true));
        assert!(!is_input("templates/NOTES.md", &ignore, false));
    }

    #[test]
    fn rules_apply_inside_the_subchart_that_holds_the_path() {
        let files: BTreeSet<PathBuf> =
            ["Chart.yaml", "charts/lib/Chart.yaml", "charts/lib/charts/inner/Chart.yaml", "charts/plain/x.yaml"]
                .into_iter()
                .map(PathBuf::from)
                .collect();
        assert_eq!(root_of(Path::new("templates/a.yaml"), &files), PathBuf::new());
        assert_eq!(root_of(Path::new("charts/lib/README.md"), &files), PathBuf::from("charts/lib"));
        assert_eq!(
            root_of(Path::new("charts/lib/charts/inner/values.yaml"), &files),
            PathBuf::from("charts/lib/charts/inner")
        );
        assert_eq!(root_of(Path::new("charts/plain/x.yaml"), &files), PathBuf::new(), "no Chart.yaml: not a subchart");
        assert_eq!(root_of(Path::new("charts/lib"), &files), PathBuf::new(), "the link itself belongs to the chart");

        let view = ChartView {
            files: files.clone(),
            ignores: BTreeMap::new(),
            reads_files: BTreeSet::from([PathBuf::from("charts/lib/charts/inner")]),
        };
        assert!(!view.uses(Path::new("charts/lib/README.md")), "a subchart's README");
        assert!(view.uses(Path::new("charts/lib/templates/_labels.tpl")));
        assert!(view.uses(Path::new("charts/lib/charts/inner/notes.txt")), "a subchart that reads files");
        assert!(view.uses(Path::new("charts/lib")), "a relinked library");
        assert!(!view.uses(Path::new("README.md")));
    }
}
