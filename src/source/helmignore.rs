//! A chart's `.helmignore`, read as Helm's chart loader reads it (helm.sh/helm pkg/ignore): which files of
//! a chart directory Helm leaves out of the chart it loads. `helm cozy review` uses it to tell a change
//! Helm never sees from one it renders.
//!
//! The rules, as Helm has them: one pattern per line (blank lines and `#` comments skipped), matched with
//! Go's `filepath.Match` against the path relative to the chart, or against its last element when the
//! pattern has no `/`; a leading `/` anchors nothing more (the path is already relative); a trailing `/`
//! only matches directories; `**` is refused. A leading `!` is Helm's negation, whose meaning is its own:
//! a path that does NOT match a negated pattern is ignored. `templates/.?*` is always added. The loader
//! walks the directory and skips an ignored directory with everything in it.

use cozyhr_go::path::Pattern;

/// The rules of one chart's `.helmignore`, with Helm's default rule.
#[derive(Debug)]
pub struct HelmIgnore {
    rules: Vec<Rule>,
}

#[derive(Debug)]
struct Rule {
    pattern: Pattern,
    /// Matched against the last path element only (no `/` in the pattern).
    base_only: bool,
    negate: bool,
    dir_only: bool,
}

impl Default for HelmIgnore {
    /// No `.helmignore`: only Helm's default rule.
    fn default() -> Self {
        HelmIgnore::parse("")
    }
}

impl HelmIgnore {
    /// The rules of a `.helmignore` text. Lines Helm would refuse (`**`, a malformed pattern) make Helm
    /// fail to load the chart; here they are left out, so the files they name count as read.
    pub fn parse(text: &str) -> HelmIgnore {
        let mut rules = Vec::new();
        for line in std::iter::once("templates/.?*").chain(text.trim_start_matches('\u{feff}').lines()) {
            if let Some(rule) = Rule::parse(line) {
                rules.push(rule);
            }
        }
        HelmIgnore { rules }
    }

    /// Whether Helm leaves `path` (relative to the chart, `/`-separated) out of the chart: the file
    /// itself, or a directory it is in.
    pub fn excludes(&self, path: &str) -> bool {
        let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        (1..parts.len()).any(|n| self.ignores(&parts[..n].join("/"), true)) || self.ignores(&parts.join("/"), false)
    }

    /// Helm's `Rules.Ignore(path, fileInfo)`, rule by rule in order.
    fn ignores(&self, path: &str, is_dir: bool) -> bool {
        if path.is_empty() || path == "." {
            return false;
        }
        let base = path.rsplit('/').next().unwrap_or(path);
        for rule in &self.rules {
            let matched = rule.pattern.matches(if rule.base_only { base } else { path });
            if rule.negate {
                if (rule.dir_only && !is_dir) || !matched {
                    return true;
                }
                continue;
            }
            if rule.dir_only && !is_dir {
                continue;
            }
            if matched {
                return true;
            }
        }
        false
    }
}

impl Rule {
    fn parse(line: &str) -> Option<Rule> {
        let mut rule = line.trim();
        if rule.is_empty() || rule.starts_with('#') || rule.contains("**") {
            return None;
        }
        // Helm checks the pattern as written, the `!` included.
        Pattern::new(rule).ok()?;
        let negate = rule.starts_with('!');
        if negate {
            rule = &rule[1..];
        }
        let dir_only = rule.ends_with('/');
        rule = rule.trim_end_matches('/');
        let base_only = !rule.contains('/');
        let rule = rule.strip_prefix('/').unwrap_or(rule);
        Some(Rule { pattern: Pattern::new(rule).ok()?, base_only, negate, dir_only })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helms_default_rule_leaves_out_dotfiles_in_templates() {
        let none = HelmIgnore::default();
        assert!(none.excludes("templates/.swp"));
        assert!(!none.excludes("templates/a.yaml"));
        assert!(!none.excludes("README.md"));
    }

    #[test]
    fn patterns_match_the_base_name_or_the_path_and_directories_take_their_files() {
        let rules = HelmIgnore::parse("# editors\n*.swp\n.git/\ndocs/\nci/*.yaml\n/tests\n\n**/nothing\n");
        assert!(rules.excludes("templates/deploy.yaml.swp"));
        assert!(rules.excludes(".git/config"));
        assert!(rules.excludes("docs/README.md"));
        assert!(!rules.excludes("docs"), "docs/ matches directories only");
        assert!(rules.excludes("ci/values.yaml"));
        assert!(!rules.excludes("ci/deep/values.yaml"), "a star does not cross a /");
        assert!(rules.excludes("tests/x.yaml"));
        assert!(!rules.excludes("values.yaml"));
        assert!(!rules.excludes("templates/nothing"), "a ** rule is left out, as Helm refuses it");
    }

    #[test]
    fn negation_is_helms_own() {
        // Helm ignores what does NOT match a negated pattern, whatever came before.
        let rules = HelmIgnore::parse("!keep.yaml\n");
        assert!(rules.excludes("values.yaml"));
        assert!(!rules.excludes("keep.yaml"));
    }
}
