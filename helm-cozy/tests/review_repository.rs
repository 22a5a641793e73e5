//! `helm cozy review git:REF [PATH]` on a repository of charts shaped like Cozystack's: twelve charts under
//! `packages/apps`, a library (`cozy-lib`) linked into eight of them as `charts/cozy-lib ->
//! ../../../library/cozy-lib`, a `file://` dependency on a second library in two, a vendored upstream
//! chart under `charts/` in one, and one whose templates read a file (`.Files`) and whose `.helmignore`
//! leaves Markdown out; HelmRelease manifests in `deploy/` (a GitRepository path, a Helm repository chart
//! name, and Cozystack's ArtifactGenerator). The real helm-cozy with the real Helm 3 and Helm 4, and no
//! cluster (KUBECONFIG names a file that does not exist, or --offline).

#[path = "../../testsupport/cli.rs"]
mod cli;
#[path = "../../testsupport/git_repo.rs"]
mod git_repo;
#[path = "../../testsupport/tools.rs"]
mod tools;

use cli::Run;
use git_repo::GitRepo;
use serde_json::Value;
use tools::Helm;

const BIN: &str = env!("CARGO_BIN_EXE_helm-cozy");

const LIBRARY_USERS: [&str; 8] = ["01", "02", "03", "04", "05", "06", "07", "08"];

/// app-01's Secret value, which no output may show.
const SECRET: &str = "s3cr3t-t0ken-of-app-01";

/// How many objects the library change changes in chart app-NN: its ConfigMap, and app-01's Secret.
fn library_changes(n: &str) -> u64 {
    if n == "01" { 2 } else { 1 }
}

/// The repository, committed on `main`.
struct Fixture {
    repo: GitRepo,
}

impl std::ops::Deref for Fixture {
    type Target = GitRepo;
    fn deref(&self) -> &GitRepo {
        &self.repo
    }
}

fn app(n: &str) -> String {
    format!("packages/apps/app-{n}")
}

impl Fixture {
    fn new(helm: Helm) -> Fixture {
        let repo = GitRepo::new(helm);
        repo.write("README.md", "# Packages\n");
        repo.write("docs/guide.md", "How to add a package.\n");
        repo.write(
            "packages/library/cozy-lib/Chart.yaml",
            "apiVersion: v2\nname: cozy-lib\nversion: 0.1.0\ntype: library\n",
        );
        repo.write(
            "packages/library/cozy-lib/templates/_labels.tpl",
            "{{- define \"cozy-lib.labels\" -}}\napp.kubernetes.io/managed-by: cozystack\napp.kubernetes.io/instance: {{ .Release.Name }}\n{{- end -}}\n",
        );
        repo.write("packages/library/cozy-lib/README.md", "The shared library.\n");
        repo.write(
            "packages/library/common/Chart.yaml",
            "apiVersion: v2\nname: common\nversion: 0.2.0\ntype: library\n",
        );
        repo.write(
            "packages/library/common/templates/_annotations.tpl",
            "{{- define \"common.annotations\" -}}\ncommon.example.com/tier: backend\n{{- end -}}\n",
        );
        for i in 1..=12 {
            let n = format!("{i:02}");
            let dir = app(&n);
            let uses_lib = LIBRARY_USERS.contains(&n.as_str());
            // Half the library's users also name it in Chart.yaml, as a file:// dependency its link satisfies.
            let deps = match i {
                1..=4 => {
                    "dependencies:\n- name: cozy-lib\n  version: 0.1.0\n  repository: file://../../library/cozy-lib\n"
                }
                9 | 10 => {
                    "dependencies:\n- name: common\n  version: 0.2.0\n  repository: file://../../library/common\n"
                }
                11 => "dependencies:\n- name: redis\n  version: 18.1.0\n  repository: https://charts.example.com\n",
                _ => "",
            };
            repo.write(
                &format!("{dir}/Chart.yaml"),
                &format!("apiVersion: v2\nname: app-{n}\nversion: 0.1.{i}\n{deps}"),
            );
            repo.write(
                &format!("{dir}/values.yaml"),
                &format!("replicas: {i}\nmessage: |\n  hello from app-{n}\n  second line\nlimit: 9007199254740993\n"),
            );
            repo.write(&format!("{dir}/README.md"), &format!("# app-{n}\n"));
            let labels = if uses_lib { "\n  labels: {{- include \"cozy-lib.labels\" . | nindent 4 }}" } else { "" };
            let annotations = if matches!(i, 9 | 10) {
                "\n  annotations: {{- include \"common.annotations\" . | nindent 4 }}"
            } else {
                ""
            };
            let file = if i == 12 { "\n  config.toml: {{ .Files.Get \"files/config.toml\" | quote }}" } else { "" };
            repo.write(
                &format!("{dir}/templates/configmap.yaml"),
                &format!(
                    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{{{ .Release.Name }}}}-config{labels}{annotations}\ndata:\n  replicas: {{{{ .Values.replicas | quote }}}}\n  limit: {{{{ .Values.limit | quote }}}}\n  message: |\n    {{{{- .Values.message | nindent 4 }}}}{file}\n"
                ),
            );
            if uses_lib {
                repo.link(&format!("{dir}/charts/cozy-lib"), "../../../library/cozy-lib");
            }
            if i == 1 {
                // A Secret the library labels: its values are masked in every output.
                repo.write(
                    &format!("{dir}/templates/secret.yaml"),
                    &format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{{{ .Release.Name }}}}-auth\n  labels: {{{{- include \"cozy-lib.labels\" . | nindent 4 }}}}\nstringData:\n  token: {SECRET}\n"),
                );
            }
        }
        // A vendored upstream chart, as `helm pull --untar --untardir charts` leaves it.
        let redis = format!("{}/charts/redis", app("11"));
        repo.write(&format!("{redis}/Chart.yaml"), "apiVersion: v2\nname: redis\nversion: 18.1.0\n");
        repo.write(&format!("{redis}/values.yaml"), "port: 6379\n");
        repo.write(
            &format!("{redis}/templates/service.yaml"),
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}-redis\nspec:\n  ports:\n  - port: {{ .Values.port }}\n",
        );
        repo.write(&format!("{redis}/README.md"), "Upstream's README.\n");
        repo.write(&format!("{}/files/config.toml", app("12")), "[server]\nport = 8080\n");
        repo.write(&format!("{}/.helmignore", app("12")), "*.md\n");
        repo.write("deploy/tenants.yaml", TENANTS);
        repo.write("deploy/app-02.yaml", APP_02);
        repo.write("deploy/cozystack/app-03.yaml", APP_03);
        repo.write(
            "deploy/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [tenants.yaml]\n",
        );
        repo.write("deploy/notes.yaml", "{{ this is not YAML }}\n");
        repo.commit_all("packages");
        Fixture { repo }
    }

    /// `helm cozy -C repo review ARGS`.
    fn review(&self, args: &[&str]) -> Run {
        let mut all = vec!["-C", "repo", "review"];
        all.extend_from_slice(args);
        self.sandbox.run(BIN, &all)
    }

    /// `review ARGS -o json`, parsed: (chart, release) of each row, and the rows.
    fn rows(&self, args: &[&str]) -> (Vec<(String, String)>, Vec<Value>) {
        let out = self.review(&[args, &["-o", "json"]].concat());
        assert_eq!(out.code, Some(0), "{out:?}");
        let rows: Vec<Value> = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}:\n{}", out.stdout));
        let keys = rows
            .iter()
            .map(|r| {
                let release = r["release"].as_str().unwrap_or("(chart defaults)");
                (r["chart"].as_str().unwrap_or_default().to_string(), release.to_string())
            })
            .collect();
        (keys, rows)
    }

    fn change_the_library(&self) {
        self.edit(
            "packages/library/cozy-lib/templates/_labels.tpl",
            "managed-by: cozystack",
            "managed-by: cozystack-platform",
        );
    }
}

/// Two HelmReleases of app-01 from its path in a GitRepository, each with values of its own.
const TENANTS: &str = "\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: app-01-a
  namespace: tenant-a
spec:
  interval: 5m
  chart:
    spec:
      chart: ./packages/apps/app-01
      sourceRef:
        kind: GitRepository
        name: packages
        namespace: flux-system
  values:
    replicas: 3
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: app-01-b
  namespace: tenant-b
spec:
  interval: 5m
  chart:
    spec:
      chart: ./packages/apps/app-01
      sourceRef:
        kind: GitRepository
        name: packages
        namespace: flux-system
  values:
    replicas: 5
";

/// app-02 by its chart name, values from a ConfigMap.
const APP_02: &str = "\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: app-02
  namespace: apps
spec:
  interval: 5m
  chart:
    spec:
      chart: app-02
      sourceRef:
        kind: HelmRepository
        name: packages
  valuesFrom:
  - kind: ConfigMap
    name: app-02-values
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: app-02-values
  namespace: apps
data:
  values.yaml: |
    replicas: 7
";

/// app-03 as Cozystack delivers a package: an ArtifactGenerator and a chartRef to its ExternalArtifact.
const APP_03: &str = "\
apiVersion: source.extensions.fluxcd.io/v1beta1
kind: ArtifactGenerator
metadata:
  name: packages
  namespace: cozy-system
spec:
  sources:
  - alias: packages
    kind: GitRepository
    name: packages
  artifacts:
  - name: packages-app-03
    copy:
    - from: '@packages/packages/apps/app-03/**'
      to: '@artifact/app-03/'
    - from: '@packages/packages/library/cozy-lib/**'
      to: '@artifact/app-03/charts/cozy-lib/'
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: app-03
  namespace: cozy-system
spec:
  interval: 5m
  chartRef:
    kind: ExternalArtifact
    name: packages-app-03
  targetNamespace: tenant-root
";

fn b64(s: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(s)
}

fn defaults(n: &str) -> (String, String) {
    (app(n), "(chart defaults)".to_string())
}

fn library_change_lists_exactly_its_eight_dependents(helm: Helm) {
    let f = Fixture::new(helm);
    f.change_the_library();
    let before = f.state();

    let (keys, rows) = f.rows(&["git:HEAD", "packages", "--offline"]);
    assert_eq!(keys, LIBRARY_USERS.map(defaults));
    for (row, n) in rows.iter().zip(LIBRARY_USERS) {
        assert_eq!((row["changed"].as_bool(), row["change"].as_u64()), (Some(true), Some(library_changes(n))), "{row}");
        assert_eq!(row["source"], "defaults");
    }

    // The table, each release's diff, and what was reviewed.
    let out = f.review(&["git:HEAD", "packages", "--offline", "--detailed-exitcode"]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert_eq!(
        out.stderr,
        "git:HEAD → the work tree: 8 of 8 releases change what they render (8 of 12 charts read what changed; the others were not rendered).\n"
    );
    for n in LIBRARY_USERS {
        let row = out.stdout.lines().find(|l| l.starts_with(&format!("{} ", app(n)))).expect("a row");
        let changes = library_changes(n).to_string();
        assert_eq!(row.split_whitespace().collect::<Vec<_>>()[1..], ["(chart", "defaults)", "0", &changes, "0"]);
        let section = out.stdout.split(&format!("=== {} · (chart defaults) ===\n", app(n))).nth(1).expect("its diff");
        let section = section.split("\n===").next().unwrap_or_default();
        assert!(section.starts_with(&format!("default, app-{n}-config, ConfigMap (v1) has changed:\n")), "{section}");
        assert!(
            section.contains("-     app.kubernetes.io/managed-by: cozystack\n+     app.kubernetes.io/managed-by: cozystack-platform\n"),
            "{section}"
        );
    }
    // app-01's Secret changed (its labels) and is shown masked, here and in JSON.
    let secret =
        out.stdout.split("default, app-01-auth, Secret (v1) has changed:\n").nth(1).expect("the Secret's diff");
    assert!(secret.contains(&format!("token: \"REDACTED # ({} bytes)\"", SECRET.len())), "{secret}");
    let json = f.review(&["git:HEAD", "packages", "--offline", "-o", "json"]);
    for shown in [&out.stdout, &json.stdout] {
        assert!(!shown.contains(SECRET) && !shown.contains(&b64(SECRET)), "the Secret's value leaked:\n{shown}");
    }
    assert_eq!(f.state(), before, "review changed the working tree, the index or HEAD");

    // The same answers between two commits, and for a pull request (its base and head).
    f.git(&["checkout", "-q", "-b", "topic"]);
    f.commit_all("library");
    let (two_refs, _) = f.rows(&["git:main..topic", "packages", "--offline"]);
    assert_eq!(two_refs, keys);
    f.git(&["checkout", "-q", "main"]);
    f.edit(&format!("{}/values.yaml", app("12")), "replicas: 12", "replicas: 120");
    f.commit_all("main moves on");
    let (pull_request, _) = f.rows(&["git:main...topic", "packages", "--offline"]);
    assert_eq!(pull_request, keys, "main's own change since topic left it is not topic's");
    let (both, _) = f.rows(&["git:topic..main", "packages", "--offline"]);
    assert_eq!(both, [&keys[..], &[defaults("12")]].concat());
}

#[test]
fn a_library_change_lists_exactly_its_eight_dependents_helm3() {
    library_change_lists_exactly_its_eight_dependents(Helm::V3);
}

#[test]
fn a_library_change_lists_exactly_its_eight_dependents_helm4() {
    library_change_lists_exactly_its_eight_dependents(Helm::V4);
}

#[test]
fn a_values_change_lists_that_chart_alone() {
    let f = Fixture::new(Helm::V4);
    f.edit(&format!("{}/values.yaml", app("05")), "replicas: 5", "replicas: 6");
    let (keys, rows) = f.rows(&["git:HEAD", "--offline"]);
    assert_eq!(keys, [defaults("05")]);
    let changes = &rows[0]["plan"]["changes"];
    assert_eq!(changes.as_array().map(Vec::len), Some(1), "{changes}");
    assert_eq!(changes[0]["name"], "app-05-config");
    f.commit_all("five");
    let (keys, _) = f.rows(&["git:HEAD~1..HEAD", "--offline"]);
    assert_eq!(keys, [defaults("05")]);
}

#[test]
fn readmes_and_docs_list_nothing() {
    let f = Fixture::new(Helm::V4);
    f.edit("README.md", "Packages", "All packages");
    f.edit("docs/guide.md", "How", "Here is how");
    f.edit(&format!("{}/README.md", app("01")), "app-01", "app one");
    f.edit("packages/library/cozy-lib/README.md", "shared", "common");
    f.edit(&format!("{}/charts/redis/README.md", app("11")), "Upstream", "Vendored");
    // app-12 reads files, but its .helmignore leaves Markdown out of the chart.
    f.edit(&format!("{}/README.md", app("12")), "app-12", "app twelve");
    let out = f.review(&["git:HEAD", "--offline", "--detailed-exitcode", "-o", "json"]);
    assert_eq!((out.code, out.stdout.as_str()), (Some(0), "[]\n"), "{out:?}");
    assert_eq!(
        out.stderr,
        "git:HEAD → the work tree: none of the 12 charts read anything that changed; nothing rendered.\n"
    );
    let text = f.review(&["git:HEAD", "--offline"]);
    assert_eq!((text.code, text.stdout.as_str()), (Some(0), ""), "{text:?}");
    f.commit_all("docs");
    let (keys, _) = f.rows(&["git:HEAD~1..HEAD", "--offline"]);
    assert!(keys.is_empty(), "{keys:?}");
}

#[test]
fn file_dependencies_vendored_charts_and_files_a_chart_reads_count() {
    let f = Fixture::new(Helm::V4);
    // The library two charts name as file:// dependencies (their charts/ does not hold it: it is linked
    // in for rendering, as source-controller builds it).
    f.edit("packages/library/common/templates/_annotations.tpl", "tier: backend", "tier: frontend");
    let (keys, rows) = f.rows(&["git:HEAD", "--offline"]);
    assert_eq!(keys, [defaults("09"), defaults("10")]);
    assert!(rows.iter().all(|r| r["change"] == 1), "{rows:?}");
    f.git(&["checkout", "-q", "."]);

    // A vendored upstream chart's template.
    f.edit(&format!("{}/charts/redis/values.yaml", app("11")), "6379", "6380");
    let out = f.review(&["git:HEAD", "--offline"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let table: Vec<Vec<&str>> = out.stdout.lines().take(2).map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(
        table,
        [
            vec!["CHART", "RELEASE", "ADD", "CHANGE", "REMOVE", "NOTE"],
            vec![app("11").as_str(), "(chart", "defaults)", "0", "1", "0"]
        ]
    );
    assert!(out.stdout.contains("default, app-11-redis, Service (v1) has changed:\n"), "{}", out.stdout);
    assert!(out.stdout.contains("-   - port: 6379\n+   - port: 6380\n"), "{}", out.stdout);
    f.git(&["checkout", "-q", "."]);

    // A file the chart's templates read.
    f.edit(&format!("{}/files/config.toml", app("12")), "8080", "9090");
    let out = f.review(&["git:HEAD", "--offline"]);
    assert!(out.stdout.contains("port = 9090"), "{}", out.stdout);
    let (keys, _) = f.rows(&["git:HEAD", "--offline"]);
    assert_eq!(keys, [defaults("12")]);
}

#[test]
fn helmrelease_files_give_each_release_its_values() {
    let f = Fixture::new(Helm::V4);
    f.change_the_library();
    let (keys, rows) = f.rows(&["git:HEAD", "--release-file", "deploy"]);
    let mut expected = vec![
        (app("01"), "tenant-a/app-01-a".to_string()),
        (app("01"), "tenant-b/app-01-b".to_string()),
        (app("02"), "apps/app-02".to_string()),
        (app("03"), "cozy-system/app-03".to_string()),
    ];
    expected.extend(["04", "05", "06", "07", "08"].map(defaults));
    assert_eq!(keys, expected);
    let source: Vec<&str> = rows.iter().map(|r| r["source"].as_str().unwrap_or_default()).collect();
    assert_eq!(source[..4], ["file"; 4]);
    // No cluster can be reached here (KUBECONFIG names no file): said once, and the files are used.
    let out = f.review(&["git:HEAD", "--release-file", "deploy", "-o", "summary"]);
    let first = out.stderr.lines().next().unwrap_or_default();
    assert!(
        first.contains("no HelmReleases from a cluster (cannot read kubeconfig")
            && first.ends_with("the HelmRelease files are used (--offline reads no cluster)"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stderr.lines().count(), 2, "{}", out.stderr);
    // Each release is rendered with its own name, namespace and values (the label names the release).
    let out = f.review(&["git:HEAD", "--release-file", "deploy", "--context=-1"]);
    for (release, namespace, replicas) in [
        ("app-01-a", "tenant-a", "3"),
        ("app-01-b", "tenant-b", "5"),
        ("app-02", "apps", "7"),
        ("app-03", "tenant-root", "3"),
    ] {
        let section = out.stdout.split(&format!("/{release} ===\n")).nth(1).expect("its diff");
        let section = section.split("\n===").next().unwrap_or_default();
        assert!(section.contains(&format!("    namespace: {namespace}\n")), "{release}:\n{section}");
        assert!(section.contains(&format!("    replicas: \"{replicas}\"\n")), "{release}:\n{section}");
        assert!(
            section.contains(&format!(
                "app.kubernetes.io/instance: {}",
                if release == "app-03" { "tenant-root-app-03" } else { release }
            )),
            "{section}"
        );
    }
    f.git(&["checkout", "-q", "."]);

    // A HelmRelease's own values changed, its chart did not: that release alone.
    f.edit("deploy/tenants.yaml", "replicas: 5", "replicas: 6");
    let (keys, rows) = f.rows(&["git:HEAD", "--release-file", "deploy"]);
    assert_eq!(keys, [(app("01"), "tenant-b/app-01-b".to_string())]);
    assert_eq!(rows[0]["change"], 1);
    // Its valuesFrom ConfigMap changed.
    f.git(&["checkout", "-q", "."]);
    f.edit("deploy/app-02.yaml", "replicas: 7", "replicas: 8");
    let (keys, _) = f.rows(&["git:HEAD", "--release-file", "deploy"]);
    assert_eq!(keys, [(app("02"), "apps/app-02".to_string())]);
}

#[test]
fn markdown_for_a_library_change_folds_on_one_screen() {
    let f = Fixture::new(Helm::V4);
    f.change_the_library();
    let out = f.review(&["git:HEAD", "--offline", "-o", "markdown"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let md = &out.stdout;
    // Folded, a reader sees the heading, one sentence, the table and one line per release.
    let folded: Vec<&str> = md.lines().filter(|l| !l.is_empty()).take_while(|l| !l.starts_with("```")).collect();
    assert!(folded[0] == "#### `helm cozy review`: git:HEAD → the work tree", "{md}");
    assert_eq!(
        folded[1],
        "8 of 8 releases change what they render (8 of 12 charts read what changed; the others were not rendered)."
    );
    assert_eq!(md.matches("<details>").count(), 8, "{md}");
    let screen = md
        .lines()
        .filter(|l| l.starts_with('#') || l.starts_with('|') || l.starts_with("<details>") || l.starts_with("8 of"))
        .count();
    assert!(screen <= 2 + 2 + 8 + 8, "{screen} lines folded");
    assert!(!md.contains(SECRET), "the Secret's value leaked:\n{md}");
    // Each section expands to that release's diff.
    for n in LIBRARY_USERS {
        let summary = format!(
            "<details><summary><code>{}</code> · <code>(chart defaults)</code>: Plan: 0 to add, {} to change, 0 to remove.</summary>",
            app(n),
            library_changes(n)
        );
        let section = md.split(&summary).nth(1).and_then(|s| s.split("</details>").next()).expect("a section");
        assert!(section.starts_with("\n\n```diff\n"), "{section}");
        assert!(section.contains(&format!("default, app-{n}-config, ConfigMap (v1) has changed:\n")), "{section}");
        assert!(section.contains("+     app.kubernetes.io/managed-by: cozystack-platform\n"), "{section}");
    }
}

#[test]
fn bad_input_is_one_line_and_a_chart_that_fails_is_its_own_row() {
    let f = Fixture::new(Helm::V4);
    f.change_the_library();
    let before = f.state();
    f.review(&["git:no-such-branch", "--offline"]).one_error_line(&["unknown Git ref \"no-such-branch\"", "git fetch"]);
    f.review(&["git:HEAD", "docs", "--offline"])
        .one_error_line(&["no chart under docs", "name a directory that holds charts"]);
    f.review(&["git:HEAD", "no-such-dir", "--offline"]).one_error_line(&["no chart under no-such-dir"]);
    f.review(&["git:HEAD..", "--offline"]).usage_error("git:HEAD..");
    f.review(&["HEAD", "--offline"]).usage_error("HEAD");
    f.sandbox.write("elsewhere/Chart.yaml", "apiVersion: v2\nname: e\nversion: 0.1.0\n");
    let out = f.sandbox.run(BIN, &["-C", "elsewhere", "review", "git:HEAD", "--offline"]);
    out.one_error_line(&["is not inside a Git repository"]);
    assert_eq!(f.state(), before);

    // One chart no longer renders in the work tree: its row says so, the other seven are shown.
    f.write(&format!("{}/templates/broken.yaml", app("06")), "{{ .Values.replicas | no_such_function }}\n");
    let out = f.review(&["git:HEAD", "--offline"]);
    assert_eq!(out.code, Some(1), "{out:?}");
    let row = out.stdout.lines().find(|l| l.starts_with(&app("06"))).expect("its row");
    assert!(row.contains("error: the work tree: ") && row.contains("no_such_function"), "{row}");
    assert_eq!(out.stdout.matches(" ===\n").count(), 7, "{}", out.stdout);
    let last = out.stderr.lines().last().unwrap_or_default();
    assert_eq!(last, "error: 1 of 8 releases could not be rendered (see their rows above)");
}
