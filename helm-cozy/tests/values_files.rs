//! `spec.chart.spec.valuesFiles` as source-controller reads them, and `disableSchemaValidation`, with the
//! real `helm-cozy` and the real Helm 3 and Helm 4, from HelmRelease files (`--release-file`): no cluster
//! (KUBECONFIG names a file that does not exist). A monorepo as Flux's GitRepository sees it: the chart in
//! `charts/app`, the environments' values in `environments/`, the HelmRelease in `deploy/`.

#[path = "../../testsupport/cli.rs"]
mod cli;
#[path = "../../testsupport/git_repo.rs"]
mod git_repo;
#[path = "../../testsupport/tools.rs"]
mod tools;

use cli::Run;
use git_repo::GitRepo;
use tools::Helm;

const BIN: &str = env!("CARGO_BIN_EXE_helm-cozy");

/// A HelmRelease `app` in namespace `apps` of a GitRepository's chart `./charts/app` with `chart_spec`
/// (more lines of `spec.chart.spec`) and `spec` (more lines of `spec`), both indented as under `spec:`.
fn release(chart_spec: &str, spec: &str) -> String {
    format!(
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: app\n  namespace: apps\nspec:\n\
         \x20 interval: 5m\n  chart:\n    spec:\n      chart: ./charts/app\n      sourceRef:\n        kind: GitRepository\n\
         \x20       name: platform\n{chart_spec}{spec}"
    )
}

/// `valuesFiles` lines of `spec.chart.spec`.
fn values_files(files: &[&str]) -> String {
    let mut out = String::from("      valuesFiles:\n");
    for f in files {
        out.push_str(&format!("      - {f}\n"));
    }
    out
}

const PROD: [&str; 2] = ["./charts/app/values.yaml", "environments/prod/values.yaml"];

/// The monorepo, committed: the chart prints its greeting, size and replicas (`none` when unset).
fn monorepo(helm: Helm) -> GitRepo {
    let repo = GitRepo::new(helm);
    repo.write("charts/app/Chart.yaml", "apiVersion: v2\nname: app\nversion: 0.1.0\n");
    repo.write("charts/app/values.yaml", "greeting: from-chart\nsize: small\n");
    repo.write(
        "charts/app/templates/config.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\ndata:\n  summary: \
         {{ printf \"%v/%v/%v\" (.Values.greeting | default \"none\") (.Values.size | default \"none\") (.Values.replicas | default \"none\") | quote }}\n",
    );
    repo.write("environments/prod/values.yaml", "greeting: from-prod\nreplicas: 3\n");
    repo.write("deploy/app.yaml", &release(&values_files(&PROD), ""));
    repo.commit_all("the monorepo");
    repo
}

fn cozy(repo: &GitRepo, chart: &str, args: &[&str]) -> Run {
    let mut all = vec!["-C", chart];
    all.extend_from_slice(args);
    repo.sandbox.run(BIN, &all)
}

fn show(repo: &GitRepo) -> Run {
    cozy(repo, "repo/charts/app", &["show", "app", "--release-file", "repo/deploy/app.yaml"])
}

/// The rendered ConfigMap's summary: `greeting/size/replicas`.
fn summary(shown: &str) -> &str {
    let line = shown.lines().find_map(|l| l.trim().strip_prefix("summary: ")).unwrap_or_default();
    line.trim_matches('"')
}

fn read_from_the_repository_root(helm: Helm) {
    let repo = monorepo(helm);
    // The environment's values over the chart's own, which take part because they are listed.
    let shown = show(&repo);
    assert_eq!(summary(shown.printed()), "from-prod/small/3");
    let sources = cozy(
        &repo,
        "repo/charts/app",
        &["values", "app", "--release-file", "repo/deploy/app.yaml", "--with-defaults", "--sources"],
    );
    // Each leaf with its value and the values file it came from, the later file winning.
    assert_eq!(
        sources.printed(),
        "- path: greeting\n  value: from-prod\n  source: valuesFiles environments/prod/values.yaml\n\
         - path: replicas\n  value: 3\n  source: valuesFiles environments/prod/values.yaml\n\
         - path: size\n  value: small\n  source: valuesFiles ./charts/app/values.yaml\n"
    );

    // `..` cannot climb out of the repository, and `/x` is the repository's x.
    repo.write("deploy/app.yaml", &release(&values_files(&["../../../environments/prod/values.yaml"]), ""));
    assert_eq!(summary(show(&repo).printed()), "from-prod/none/3");
    repo.write("deploy/app.yaml", &release(&values_files(&["/environments/prod/values.yaml", "/x.yaml"]), ""));
    let line =
        show(&repo).one_error_line(&["no values file found at path '/x.yaml' (reference '/x.yaml')"]).to_string();
    assert!(line.starts_with("error: helmrelease apps/app: values files merge error: "), "{line}");

    // A lone values.yaml is no list: the chart's own values.
    repo.write("deploy/app.yaml", &release(&values_files(&["values.yaml"]), ""));
    assert_eq!(summary(show(&repo).printed()), "from-chart/small/none");

    // From a checkout whose layout is not spec.chart's, the Git work tree's top is the root.
    let moved = release(&values_files(&PROD), "").replace("chart: ./charts/app", "chart: ./src/charts/app");
    repo.write("deploy/moved.yaml", &moved);
    let shown = cozy(&repo, "repo/charts/app", &["show", "app", "--release-file", "repo/deploy/moved.yaml"]);
    assert_eq!(summary(shown.printed()), "from-prod/small/3");
    // Outside any checkout, one line says the root cannot be found.
    let copy = repo.sandbox.path("copy");
    std::fs::create_dir_all(copy.join("templates")).expect("mkdir");
    for f in ["Chart.yaml", "values.yaml", "templates/config.yaml"] {
        std::fs::copy(repo.sandbox.path(&format!("repo/charts/app/{f}")), copy.join(f)).expect("copy");
    }
    cozy(&repo, "copy", &["show", "app", "--release-file", "repo/deploy/moved.yaml"]).one_error_line(&[
        "cannot find the root of GitRepository platform, which valuesFiles are relative to",
        "does not end in spec.chart.spec.chart \"./src/charts/app\" and is in no Git work tree",
    ]);
}

fn missing_files(helm: Helm) {
    let repo = monorepo(helm);
    let staging = ["./charts/app/values.yaml", "./environments/staging/values.yaml"];
    repo.write("deploy/app.yaml", &release(&values_files(&staging), ""));
    let before = repo.state();
    show(&repo).one_error_line(&[
        "values files merge error: no values file found at path '/environments/staging/values.yaml' (reference './environments/staging/values.yaml')",
        "ignoreMissingValuesFiles",
    ]);
    assert_eq!(repo.state(), before, "nothing changed");

    // Skipped when missing, with ignoreMissingValuesFiles.
    let ignore = "      ignoreMissingValuesFiles: true\n";
    repo.write("deploy/app.yaml", &release(&(values_files(&staging) + ignore), ""));
    assert_eq!(summary(show(&repo).printed()), "from-chart/small/none");
    // Every file missing and skipped: the chart's defaults are replaced by nothing.
    repo.write("deploy/app.yaml", &release(&(values_files(&["a.yaml", "b.yaml"]) + ignore), ""));
    assert_eq!(summary(show(&repo).printed()), "none/none/none");
    // A directory is no values file, ignored or not.
    repo.write("deploy/app.yaml", &release(&(values_files(&["environments/prod", "a.yaml"]) + ignore), ""));
    show(&repo).one_error_line(&[
        "no values file found at path '/environments/prod' (reference 'environments/prod')",
        "is not a regular file",
    ]);
}

/// `diff --against git:REF` reads the valuesFiles outside the chart as they are at the ref.
fn diff_against_a_ref(helm: Helm) {
    let repo = monorepo(helm);
    let diff = ["diff", "app", "--release-file", "repo/deploy/app.yaml", "--against", "git:HEAD"];
    let clean = cozy(&repo, "repo/charts/app", &[&diff[..], &["--detailed-exitcode"]].concat());
    assert_eq!(clean.code, Some(0), "{clean:?}");
    repo.edit("environments/prod/values.yaml", "replicas: 3", "replicas: 5");
    let changed = cozy(&repo, "repo/charts/app", &[&diff[..], &["--detailed-exitcode", "--context=-1"]].concat());
    assert_eq!(changed.code, Some(2), "{changed:?}");
    assert!(
        changed.stdout.contains("from-prod/small/3") && changed.stdout.contains("from-prod/small/5"),
        "{}",
        changed.stdout
    );
}

/// `review` renders both sides with the valuesFiles outside the chart as they are at each side.
fn review_both_sides(helm: Helm) {
    let repo = monorepo(helm);
    repo.write(
        "charts/app/templates/extra.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-extra\ndata: {}\n",
    );
    repo.edit("environments/prod/values.yaml", "replicas: 3", "replicas: 5");
    let out = repo.sandbox.run(BIN, &["-C", "repo", "review", "git:HEAD", "--release-file", "deploy", "--context=-1"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(out.stdout.contains("app-extra"), "{}", out.stdout);
    let (old, new) = ("from-prod/small/3", "from-prod/small/5");
    assert!(out.stdout.contains(old) && out.stdout.contains(new), "{}", out.stdout);
}

/// A values.schema.json the HelmRelease's values violate: rendered when the next action's
/// `disableSchemaValidation` says so (offline, the next action is an install), refused with Helm's
/// message in one line otherwise.
fn schema_validation(helm: Helm) {
    let repo = monorepo(helm);
    repo.write(
        "charts/app/values.schema.json",
        r#"{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {"replicas": {"type": "integer"}}}"#,
    );
    let values = "  values:\n    replicas: three\n";
    let with = |actions: &str| release(&values_files(&PROD), &format!("{values}{actions}"));
    repo.write("deploy/app.yaml", &with("  install:\n    disableSchemaValidation: true\n"));
    assert_eq!(summary(show(&repo).printed()), "from-prod/small/three");
    for actions in ["", "  upgrade:\n    disableSchemaValidation: true\n"] {
        repo.write("deploy/app.yaml", &with(actions));
        let run = show(&repo);
        let line = run.one_error_line(&["values don't meet the specifications of the schema(s)", "replicas"]);
        assert!(line.starts_with("error: values don't meet the specifications"), "Helm's message alone: {line}");
    }
}

#[test]
fn values_files_are_read_from_the_repository_root_helm3() {
    read_from_the_repository_root(Helm::V3);
}

#[test]
fn values_files_are_read_from_the_repository_root_helm4() {
    read_from_the_repository_root(Helm::V4);
}

#[test]
fn missing_values_files_fail_unless_ignored() {
    missing_files(Helm::V4);
}

#[test]
fn diff_against_a_ref_reads_values_files_at_the_ref() {
    diff_against_a_ref(Helm::V4);
}

#[test]
fn review_reads_values_files_at_both_sides() {
    review_both_sides(Helm::V4);
}

#[test]
fn schema_validation_follows_the_next_action_helm3() {
    schema_validation(Helm::V3);
}

#[test]
fn schema_validation_follows_the_next_action_helm4() {
    schema_validation(Helm::V4);
}
