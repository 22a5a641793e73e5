//! Every flag of `helm cozy`, defined once, with its docs.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use cozyhr_shell::completion::CompletionArgs;
use cozyhr_shell::diff::{DiffLayoutFlags, DiffPrintFlags};
use cozyhr_shell::{ClusterFlags, DocumentFormat, Face, TargetFlags};

#[derive(Debug, Parser)]
#[command(about = "Show, diff, apply and delete a chart exactly as Flux helm-controller would install it")]
pub struct Cli {
    #[command(flatten)]
    pub globals: Globals,

    #[command(subcommand)]
    pub command: Command,
}

/// The flags every chart command takes, before or after it: the cluster flags and the chart directory,
/// under `helm cozy` and under `cozyhr` (where `-C` is `--working-directory`, as Go cozyhr spells it).
#[derive(Debug, Args, Clone)]
pub struct Globals {
    #[command(flatten)]
    pub cluster: ClusterFlags,

    /// The chart directory. Without it: the current directory when it holds a Chart.yaml, else the chart
    /// the HelmRelease's source serves in the cluster (its artifact, fetched and checked as helm-controller
    /// fetches it). review: the repository directory (default: the current one).
    #[arg(short = 'C', long = "chdir", global = true, value_name = "DIR")]
    pub chart_dir: Option<PathBuf>,
}

impl Globals {
    /// Where the chart commands take their chart from (see cozyhr::resolve::ChartPlace).
    pub fn chart_place(&self) -> cozyhr::resolve::ChartPlace {
        cozyhr::resolve::ChartPlace::choose(self.chart_dir.as_deref())
    }
}

/// `--version` of a chart command is the chart's version, as Helm's own commands read it: not this
/// program's (which the command line's top and its other commands print).
pub fn chart_version_flags(mut cmd: clap::Command) -> clap::Command {
    for name in ["show", "values", "diff", "apply"] {
        cmd = cmd.mut_subcommand(name, |c| c.disable_version_flag(true));
    }
    cmd
}

impl Cli {
    /// The command line as it is parsed: named `helm cozy`, the cluster flags spelt as Helm spells them
    /// ([`cozyhr_shell::cluster::for_helm`]).
    pub fn command() -> clap::Command {
        let cmd = cozyhr_shell::face::named(<Cli as clap::CommandFactory>::command(), Face::Helm);
        cozyhr_shell::cluster::for_helm(chart_version_flags(cmd))
    }

    /// Rules clap cannot express: `--watch` follows the working tree, so it cannot diff against a Git ref;
    /// one HelmRelease is named unless `--all`.
    pub fn checked(self) -> Result<Cli, clap::Error> {
        let one = |verb: &str, names: &[String], all: bool| {
            if !all && names.len() > 1 {
                return Err(clap::Error::raw(
                    clap::error::ErrorKind::TooManyValues,
                    format!(
                        "{verb} takes one HelmRelease; for several releases of this chart, use --all (and name them)"
                    ),
                ));
            }
            Ok(())
        };
        if let Command::Diff(d) = &self.command {
            one("diff", &d.names, d.set.all)?;
            if d.set.all
                && (!matches!(d.against, AgainstArg::Live | AgainstArg::Release)
                    || !d.inputs.release.release_file.is_empty())
            {
                return Err(clap::Error::raw(
                    clap::error::ErrorKind::ArgumentConflict,
                    "--all diffs the chart's HelmReleases in the cluster: not with --release-file or --against git:REF",
                ));
            }
        }
        if let Command::Apply(a) = &self.command {
            one("apply", &a.names, a.set.all)?;
            if a.set.all && (a.plain || a.watch) {
                return Err(clap::Error::raw(
                    clap::error::ErrorKind::ArgumentConflict,
                    "--all applies the chart's HelmReleases: not with --plain or --watch",
                ));
            }
        }
        if let Command::Diff(d) = &self.command
            && d.watch
            && matches!(d.against, AgainstArg::Git(_))
        {
            return Err(clap::Error::raw(
                clap::error::ErrorKind::ArgumentConflict,
                "--watch follows the chart directory and the cluster: it does not combine with --against git:REF",
            ));
        }
        if let Command::Diff(d) = &self.command
            && d.inputs.capabilities.is_set()
            && !matches!(d.against, AgainstArg::Git(_))
        {
            return Err(clap::Error::raw(
                clap::error::ErrorKind::ArgumentConflict,
                "--kube-version and --api-versions render without a cluster: diff takes them with --against git:REF (--against live|release renders with the cluster's own)",
            ));
        }
        Ok(self)
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Render the chart as Flux would install it for HelmRelease NAME.
    #[command(alias = "template")]
    Show(ShowArgs),
    /// Print the values Flux would compose for HelmRelease NAME, and where each key came from.
    Values(ValuesArgs),
    /// Show what `apply` would change in the cluster (or in the stored Helm release).
    Diff(DiffArgs),
    /// Suspend HelmRelease NAME, install the chart as Flux would, and record the result as Flux does.
    #[command(aliases = ["install", "upgrade"])]
    Apply(ApplyArgs),
    /// Suspend HelmRelease NAME and uninstall its Helm release; the HelmRelease stays suspended.
    Delete(DeleteArgs),
    /// Review a change across a repository: every chart under PATH it can change, each release of it
    /// diffed between a Git ref and the work tree (or two refs), rendered as Flux would.
    Review(ReviewArgs),
    /// Run as Helm's post-renderer (Flux's post-render chain); started by helm, not by people.
    #[command(name = "__post-render", hide = true)]
    PostRender,
    /// Print shell completion code (bash, zsh, fish, elvish, powershell).
    Completion(CompletionArgs),
    /// Print the version, and the cluster's helm-controller with the Helm inside it.
    Version(cozyhr_shell::version::VersionArgs),
}

/// Extra values on top of what Flux composes, like Helm's own flags.
#[derive(Debug, Args, Clone, Default)]
pub struct ValuesFlags {
    /// A values file to apply on top of the HelmRelease's values (repeatable; later files win).
    #[arg(short = 'f', long = "values", value_name = "FILE")]
    pub values: Vec<PathBuf>,

    /// A value to set on top of everything else, Helm --set syntax (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

impl ValuesFlags {
    pub fn user(&self) -> cozyhr::desired::UserValues {
        cozyhr::desired::UserValues { files: self.values.clone(), sets: self.set.clone() }
    }
}

/// What `apply`, `diff` and `delete` do with a chart directory that is not the HelmRelease's chart (see
/// cozyhr::desired::which_chart).
#[derive(Debug, Args, Clone, Default)]
pub struct ChartCheckFlags {
    /// Go ahead although the chart directory's chart is not the one the HelmRelease deploys (its
    /// HelmRepository's chart, else its last release's), which is otherwise refused as a slip with
    /// nothing changed: a chart renamed on purpose (helm-controller then uninstalls and installs again
    /// unless spec.upgrade.chartNameChangeStrategy is InPlaceUpdate), or a delete from another chart's
    /// directory (outside a chart directory, delete compares no chart).
    #[arg(long = "other-chart")]
    pub other_chart: bool,
}

impl ChartCheckFlags {
    pub fn policy(&self) -> cozyhr::desired::which_chart::OtherChart {
        use cozyhr::desired::which_chart::OtherChart;
        if self.other_chart { OtherChart::Allow } else { OtherChart::Refuse }
    }
}

/// The chart at another version than the HelmRelease names.
#[derive(Debug, Args, Clone, Default)]
pub struct ChartVersionFlags {
    /// The chart at this version or semver range (picked as source-controller picks it), straight from
    /// the repository the HelmRelease's source names (a HelmRepository or OCIRepository), with the
    /// credentials Flux reads: what a version bump would do. Not beside a chart directory; after apply,
    /// resume gives the release back to the source's version.
    #[arg(long = "version", value_name = "VERSION")]
    pub version: Option<String>,
}

impl ChartVersionFlags {
    /// Where the chart comes from, `--version` taken into account.
    pub fn place(&self, place: &cozyhr::resolve::ChartPlace) -> Result<cozyhr::resolve::ChartPlace, cozyhr::Error> {
        place.clone().at_version(self.version.as_deref())
    }
}

/// The HelmRelease and its `valuesFrom` sources from files instead of the cluster.
#[derive(Debug, Args, Clone, Default)]
pub struct ReleaseFileFlags {
    /// Read HelmRelease NAME and the ConfigMaps and Secrets its valuesFrom names from FILE instead of the
    /// cluster: multi-document YAML as `kustomize build` prints it, `-` for stdin (repeatable). Then no
    /// cluster is needed (but for diff --against live|release).
    #[arg(long = "release-file", value_name = "FILE")]
    pub release_file: Vec<PathBuf>,
}

impl ReleaseFileFlags {
    /// Where the release comes from, chosen once from the flags (see
    /// [`cozyhr::resolve::ReleaseSource::choose`]): these files when given, the chart's defaults for
    /// `--plain`, else the cluster; `namespace` is `-n` when given.
    pub fn source(
        &self,
        plain: bool,
        namespace: Option<String>,
    ) -> Result<cozyhr::resolve::ReleaseSource, cozyhr::Error> {
        Ok(cozyhr::resolve::ReleaseSource::choose(&self.release_file, plain, namespace)?)
    }
}

/// What templates see of a cluster when there is none (with --release-file), spelt as Helm spells them.
#[derive(Debug, Args, Clone, Default)]
pub struct CapabilitiesFlags {
    /// With --release-file: the Kubernetes version templates see (.Capabilities.KubeVersion), as `helm
    /// template --kube-version` takes it (default: Helm's built-in one).
    #[arg(long = "kube-version", value_name = "VERSION", requires = "release_file")]
    pub kube_version: Option<String>,

    /// With --release-file: an API templates see in .Capabilities.APIVersions, group/version or
    /// group/version/Kind, as `helm template --api-versions` takes it (repeatable, comma-separated).
    #[arg(long = "api-versions", value_name = "VERSION", value_delimiter = ',', requires = "release_file")]
    pub api_versions: Vec<String>,
}

impl CapabilitiesFlags {
    /// What a chart sees rendered without a cluster with these capabilities.
    pub fn view(&self) -> cozyhr::render::ClusterView {
        let apis = self.api_versions.iter().map(|a| a.trim().to_string()).filter(|a| !a.is_empty()).collect();
        cozyhr::desired::offline_view(self.kube_version.clone(), apis)
    }

    pub fn is_set(&self) -> bool {
        self.kube_version.is_some() || !self.api_versions.is_empty()
    }
}

/// What `show` and `diff` render the chart with besides the HelmRelease: -f and --set on top, the
/// HelmRelease from files instead of the cluster (and the capabilities templates see without one), and
/// the release's own cluster.
#[derive(Debug, Args)]
pub struct RenderInputs {
    #[command(flatten)]
    pub values: ValuesFlags,

    #[command(flatten)]
    pub release: ReleaseFileFlags,

    #[command(flatten)]
    pub capabilities: CapabilitiesFlags,

    #[command(flatten)]
    pub target: TargetFlags,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The HelmRelease (with --plain: the Helm release name).
    pub name: String,

    /// Render the chart alone, as `helm install` into -n would: no HelmRelease, no Flux post-rendering
    /// (with the cluster's capabilities and lookup when a cluster is configured).
    #[arg(long, conflicts_with = "release_file")]
    pub plain: bool,

    /// With --plain: use no cluster at all (Helm's built-in capabilities, lookup finds nothing).
    #[arg(long, requires = "plain")]
    pub offline: bool,

    /// Only print objects rendered from templates matching this glob, e.g. templates/cm*.yaml (repeatable).
    #[arg(long = "show-only", short = 's', value_name = "GLOB")]
    pub show_only: Vec<String>,

    #[command(flatten)]
    pub chart_version: ChartVersionFlags,

    #[command(flatten)]
    pub inputs: RenderInputs,
}

#[derive(Debug, Args)]
pub struct ValuesArgs {
    /// The HelmRelease.
    pub name: String,

    /// Instead of the values, list each leaf (a key path such as image.tag; a list is one leaf) with its
    /// value and the source that set it (chart values.yaml, valuesFiles FILE, ConfigMap/NAME[KEY],
    /// Secret/NAME[KEY], spec.values, -f FILE, --set EXPR): a YAML list of {path, value, source}, or JSON
    /// with -o json. Values from a Secret are masked.
    #[arg(long)]
    pub sources: bool,

    /// Print the values merged over the chart's defaults (what templates see), not only what Helm stores.
    #[arg(long = "with-defaults")]
    pub with_defaults: bool,

    #[command(flatten)]
    pub chart_version: ChartVersionFlags,

    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = DocumentFormat::Yaml)]
    pub output: DocumentFormat,

    #[command(flatten)]
    pub values: ValuesFlags,

    #[command(flatten)]
    pub release: ReleaseFileFlags,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The HelmRelease (with --all: only these of the chart's HelmReleases).
    #[arg(required_unless_present = "all", value_name = "NAME")]
    pub names: Vec<String>,

    #[command(flatten)]
    pub set: SetFlags,

    /// Compare with the live objects (`live`, after a server-side dry run), the stored Helm release
    /// manifest (`release`), or the chart as it is at a Git ref (`git:REF`, e.g. git:origin/main: the chart
    /// directory, and a --release-file inside the repository, as at REF, rendered the same way; the
    /// checkout is not touched).
    #[arg(long, value_parser = parse_against, default_value = "live", value_name = "live|release|git:REF")]
    pub against: AgainstArg,

    #[command(flatten)]
    pub chart_version: ChartVersionFlags,

    /// The chart alone (its own values, -f and --set; no HelmRelease is read), against the Helm release
    /// NAME stored in the namespace, as Go cozyhr's diff --plain compares them.
    #[arg(long, conflicts_with_all = ["all", "release_file", "watch", "kube_version", "api_versions"])]
    pub plain: bool,

    #[command(flatten)]
    pub chart_check: ChartCheckFlags,

    #[command(flatten)]
    pub print: DiffPrintFlags,

    #[command(flatten)]
    pub layout: DiffLayoutFlags,

    /// Print the diff again on every change of the chart (linked charts included), the -f files, the
    /// HelmRelease or its valuesFrom sources, until Ctrl-C. It follows the cluster: not with
    /// --release-file, --kube-version, --api-versions or --against git:REF.
    #[arg(long, conflicts_with_all = ["detailed_exitcode", "release_file", "kube_version", "api_versions"])]
    pub watch: bool,

    #[command(flatten)]
    pub inputs: RenderInputs,
}

/// `--all`: the chart's HelmReleases instead of one (see cozyhr::sets::release_set).
#[derive(Debug, Args)]
pub struct SetFlags {
    /// Every HelmRelease in the namespace (-A: in all) that deploys this chart: by the chart name of the
    /// release helm-controller last made, else its spec.chart where none exists yet. Narrowed by -l and
    /// by the names given.
    #[arg(long)]
    pub all: bool,

    /// With --all: the HelmReleases of every namespace.
    #[arg(short = 'A', long = "all-namespaces", requires = "all")]
    pub all_namespaces: bool,

    /// With --all: only HelmReleases with these labels (kubectl's selector syntax, e.g. tier=db,env!=prod).
    #[arg(short = 'l', long = "selector", requires = "all", value_name = "SELECTOR")]
    pub selector: Option<String>,

    /// With --all: how many releases at a time (default: one per core).
    #[arg(long, requires = "all", value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub concurrency: Option<u16>,
}

impl DiffArgs {
    /// The one HelmRelease named (without --all there is exactly one).
    pub fn name(&self) -> &str {
        self.names.first().map(String::as_str).unwrap_or_default()
    }
}

impl ApplyArgs {
    /// The one HelmRelease named (without --all there is exactly one).
    pub fn name(&self) -> &str {
        self.names.first().map(String::as_str).unwrap_or_default()
    }
}

impl SetFlags {
    pub fn selection(&self, names: &[String]) -> cozyhr::sets::release_set::Selection {
        cozyhr::sets::release_set::Selection {
            all_namespaces: self.all_namespaces,
            selector: self.selector.clone(),
            names: names.to_vec(),
        }
    }

    pub fn concurrency(&self) -> usize {
        cozyhr::sets::release_set::concurrency(self.concurrency.map(usize::from))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgainstArg {
    Live,
    Release,
    /// `git:REF`: the ref as Git spells it.
    Git(String),
}

fn parse_against(value: &str) -> Result<AgainstArg, String> {
    match value {
        "live" => Ok(AgainstArg::Live),
        "release" => Ok(AgainstArg::Release),
        _ => match value.strip_prefix("git:").filter(|r| !r.is_empty()) {
            Some(git_ref) => Ok(AgainstArg::Git(git_ref.to_string())),
            None => Err("expected live, release or git:REF (a branch, tag or commit, e.g. git:origin/main)".into()),
        },
    }
}

#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// The HelmRelease (with --plain: the Helm release name; with --all: only these of the chart's
    /// HelmReleases).
    #[arg(required_unless_present = "all", value_name = "NAME")]
    pub names: Vec<String>,

    #[command(flatten)]
    pub set: SetFlags,

    /// With --all: go on applying the others after a release fails (without it, no new apply starts).
    #[arg(long = "keep-going", requires = "all")]
    pub keep_going: bool,

    #[command(flatten)]
    pub chart_check: ChartCheckFlags,

    #[command(flatten)]
    pub chart_version: ChartVersionFlags,

    /// Resume the HelmRelease after a successful apply, handing it back to Flux.
    #[arg(long)]
    pub resume: bool,

    /// Render and have the API server validate every object (server-side dry run); change nothing.
    #[arg(long = "dry-run")]
    pub dry_run: bool,

    /// Adopt existing objects that Helm does not own yet (helm-controller does this unless disabled).
    #[arg(long = "take-ownership")]
    pub take_ownership: bool,

    /// Do not run the chart's tests that spec.test asks for: the status says they are awaited, and
    /// helm-controller runs them once the release is handed back.
    #[arg(long = "skip-tests")]
    pub skip_tests: bool,

    /// After a failure, keep the failed release as it is for inspection, without the remediation
    /// helm-controller would run (a rollback or an uninstall); the status says what it does on resume.
    #[arg(long = "keep-failed")]
    pub keep_failed: bool,

    /// How long helm may take (default: the HelmRelease's timeout, else 5m).
    #[arg(long, value_parser = cozyhr::support::duration::parse, value_name = "DURATION")]
    pub timeout: Option<std::time::Duration>,

    /// Wait for the objects to become ready (default: as the HelmRelease's install/upgrade.disableWait says).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub wait: Option<bool>,

    /// Install the chart alone with helm: no HelmRelease, no Flux post-rendering, no status.
    #[arg(long)]
    pub plain: bool,

    // Its help names the face's own `resume` (`apply_watch_help`).
    #[arg(long, conflicts_with_all = ["resume", "dry_run", "plain"], help = apply_watch_help())]
    pub watch: bool,

    #[command(flatten)]
    pub values: ValuesFlags,

    #[command(flatten)]
    pub target: TargetFlags,
}

/// `apply --watch`'s help. It names the command that hands the HelmRelease back as the face running says
/// it: `cozyhr resume` under `cozyhr`, else `kubectl cozyhr resume`.
fn apply_watch_help() -> String {
    format!(
        "Apply again on every change of the chart (linked charts included), the -f files, the HelmRelease or its valuesFrom sources; the HelmRelease stays suspended until `{}`. Ctrl-C ends the loop after the round in progress",
        cozyhr::support::output::lifecycle_command("resume")
    )
}

#[derive(Debug, Args)]
pub struct ReviewArgs {
    /// What to compare: git:REF (the ref against the work tree), git:A..B (commit A against commit B) or
    /// git:A...B (B against where it branched from A, as a pull request shows it).
    #[arg(value_parser = parse_review_refs, value_name = "git:REF")]
    pub refs: String,

    /// The charts to review: those under PATH (default: the directory of -C, else the current one;
    /// PATH and --release-file are relative to -C when it is given, as if started there).
    #[arg(value_name = "PATH")]
    pub path: Option<PathBuf>,

    /// HelmReleases (and the ConfigMaps and Secrets their valuesFrom names) from these files or
    /// directories of YAML (repeatable; other kinds and files that are not YAML are skipped), for the
    /// charts no HelmRelease of the cluster deploys, or all when no cluster is reached. Those inside the
    /// repository are read as they are at each side.
    #[arg(long = "release-file", value_name = "PATH")]
    pub release_file: Vec<PathBuf>,

    /// Read no cluster: the HelmReleases of --release-file, else each chart with its own defaults.
    #[arg(long)]
    pub offline: bool,

    /// The HelmReleases of every namespace (default: the namespace of -n, else the context's).
    #[arg(short = 'A', long = "all-namespaces", conflicts_with = "offline")]
    pub all_namespaces: bool,

    /// Only HelmReleases with these labels (kubectl's selector syntax, e.g. tier=db,env!=prod).
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR", conflicts_with = "offline")]
    pub selector: Option<String>,

    /// How many releases render at a time (default: one per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub concurrency: Option<u16>,

    /// Values for every release at both sides, over each one's own: those the platform injects when it
    /// installs them (Cozystack's `_cluster` and `_namespace`), for a review without the platform.
    #[command(flatten)]
    pub values: ValuesFlags,

    #[command(flatten)]
    pub print: DiffPrintFlags,

    #[command(flatten)]
    pub layout: DiffLayoutFlags,

    #[command(flatten)]
    pub capabilities: CapabilitiesFlags,
}

/// `git:REF`, `git:A..B` or `git:A...B`: the part after `git:`.
fn parse_review_refs(value: &str) -> Result<String, String> {
    match value.strip_prefix("git:") {
        Some(refs) if cozyhr::source::git_sides::Refs::parse(refs).is_some() => Ok(refs.to_string()),
        _ => Err("expected git:REF, git:A..B or git:A...B (a branch, tag or commit, e.g. git:origin/main)".into()),
    }
}

#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// The HelmRelease.
    pub name: String,

    #[command(flatten)]
    pub chart_check: ChartCheckFlags,

    /// How long helm uninstall may take (default: spec.uninstall.timeout, else spec.timeout, else 5m).
    #[arg(long, value_parser = cozyhr::support::duration::parse, value_name = "DURATION")]
    pub timeout: Option<std::time::Duration>,

    #[command(flatten)]
    pub target: TargetFlags,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// completion.yaml (what `helm completion` offers for `helm cozy`) lists every flag of every
    /// command, but the cluster flags that Helm completes itself.
    #[test]
    fn completion_yaml_lists_every_flag() {
        let text = include_str!("../../completion.yaml");
        let helms_own = ["namespace", "kube-context", "kubeconfig", "help", "version"];
        for cmd in Cli::command().get_subcommands().filter(|c| !c.is_hide_set() && c.get_name() != "help") {
            let name = cmd.get_name();
            let listed: Vec<&str> = text
                .split("  - name: ")
                .find(|block| block.lines().next() == Some(name))
                .and_then(|block| block.lines().find_map(|l| l.trim().strip_prefix("flags: [")))
                .map(|l| l.trim_end_matches(']').split(',').map(str::trim).collect())
                .unwrap_or_default();
            for arg in cmd.get_arguments().filter(|a| !a.is_positional()) {
                let Some(long) = arg.get_long() else { continue };
                if helms_own.contains(&long) {
                    continue;
                }
                assert!(listed.contains(&long), "completion.yaml: {name} lacks --{long} (has {listed:?})");
                if let Some(short) = arg.get_short() {
                    let short = short.to_string();
                    assert!(listed.contains(&short.as_str()), "completion.yaml: {name} lacks -{short}");
                }
            }
        }
    }

    /// `apply --watch` says how to hand the HelmRelease back under the face that runs (in tests, none is
    /// set: `helm cozy`, whose resume is kubectl cozyhr's).
    #[test]
    fn apply_watch_names_the_faces_resume() {
        let cmd = Cli::command();
        let apply = cmd.find_subcommand("apply").expect("apply");
        let watch = apply.get_arguments().find(|a| a.get_id() == "watch").expect("--watch");
        let help = watch.get_help().expect("a help").to_string();
        assert!(help.contains("suspended until `kubectl cozyhr resume`. Ctrl-C"), "{help}");
    }

    /// The completion script is made from the command line without `__post-render`, and the rest of it
    /// is the same.
    #[test]
    fn completable_is_the_full_command_but_its_hidden_subcommands() {
        let mut full = Cli::command();
        let mut completable = cozyhr_shell::completion::completable(Cli::command(), "helm-cozy");
        let visible = |cmd: &clap::Command| -> Vec<String> {
            cmd.get_subcommands().filter(|s| !s.is_hide_set()).map(|s| s.get_name().to_owned()).collect()
        };
        assert_eq!(completable.get_name(), full.get_name());
        assert_eq!(visible(&completable), visible(&full));
        assert!(completable.get_subcommands().all(|s| !s.is_hide_set()));
        assert!(full.get_subcommands().any(|s| s.is_hide_set()), "nothing hidden: completable is not needed");
        // Whatever a user sees of the top level (help lists no hidden subcommand) is the same.
        assert_eq!(completable.render_long_help().to_string(), full.render_long_help().to_string());
        assert_eq!(completable.render_long_version(), full.render_long_version());
        completable.debug_assert();
    }
}
