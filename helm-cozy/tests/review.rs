//! Reviewing a chart change without a cluster: `--release-file`, `--against git:REF` and `-o markdown`,
//! with the real `helm-cozy`, real Helm 3 and Helm 4 and real kubectl (its kustomize runs the
//! postRenderer), on a Git repository each test creates. KUBECONFIG names a file that does not exist, so
//! nothing can reach a cluster. Helm and kubectl are the ones scripts/tools.sh builds (HELM3, HELM4 and
//! KUBECTL when set, else `scripts/tools.sh env` is asked); a missing one fails with how to get it.

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

const HR_NAME: &str = "a-helmrelease-whose-name-is-long-enough";
const TARGET_NS: &str = "tenant-with-a-long-namespace";
const PASSWORD: &str = "correct-horse-battery";

/// The HelmRelease file: valuesFrom a ConfigMap and a Secret (at a targetPath), a kustomize
/// postRenderer, commonMetadata and a targetNamespace; with the ConfigMap and Secret it names.
fn release_file(password_b64: &str) -> String {
    format!(
        r#"apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: {HR_NAME}
  namespace: apps
spec:
  interval: 5m
  targetNamespace: {TARGET_NS}
  chartRef:
    kind: ExternalArtifact
    name: app
  commonMetadata:
    labels:
      team: platform
  postRenderers:
  - kustomize:
      patches:
      - target:
          kind: Service
        patch: |
          - op: add
            path: /metadata/annotations
            value:
              patched-by: kustomize
  valuesFrom:
  - kind: ConfigMap
    name: app-values
  - kind: Secret
    name: app-secret
    valuesKey: password
    targetPath: auth.password
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: app-values
  namespace: apps
data:
  values.yaml: |
    color: blue
---
apiVersion: v1
kind: Secret
metadata:
  name: app-secret
  namespace: apps
data:
  password: {password_b64}
"#
    )
}

fn b64(s: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(s)
}

/// A Git repository in the sandbox: `charts/app` (with the library chart `charts/lib` linked into its
/// `charts/`), `deploy/release.yaml`, committed.
struct Repo {
    repo: GitRepo,
}

impl std::ops::Deref for Repo {
    type Target = GitRepo;
    fn deref(&self) -> &GitRepo {
        &self.repo
    }
}

impl Repo {
    fn new(helm: Helm) -> Repo {
        let repo = GitRepo::new(helm);
        repo.write("charts/lib/Chart.yaml", "apiVersion: v2\nname: lib\nversion: 0.1.0\ntype: library\n");
        repo.write(
            "charts/lib/templates/_labels.tpl",
            "{{- define \"lib.labels\" -}}\napp.kubernetes.io/instance: {{ .Release.Name }}\n{{- end -}}\n",
        );
        repo.write(
            "charts/app/Chart.yaml",
            "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n- name: lib\n  version: 0.1.0\n",
        );
        repo.link("charts/app/charts/lib", "../../lib");
        repo.write("charts/app/values.yaml", "color: red\nport: 80\nauth:\n  password: unset\n");
        repo.write(
            "charts/app/templates/config.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\n  labels: {{- include \"lib.labels\" . | nindent 4 }}\ndata:\n  color: {{ .Values.color | quote }}\n",
        );
        repo.write(
            "charts/app/templates/greeting.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-greeting\ndata:\n  greeting: hello\n",
        );
        repo.write(
            "charts/app/templates/service.yaml",
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  ports:\n  - port: {{ .Values.port }}\n",
        );
        repo.write(
            "charts/app/templates/secret.yaml",
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Release.Name }}-auth\nstringData:\n  password: {{ .Values.auth.password | quote }}\n",
        );
        repo.write("deploy/release.yaml", &release_file(&b64(PASSWORD)));
        repo.commit_all("first");
        Repo { repo }
    }

    /// `helm cozy ARGS` on the app chart.
    fn cozy(&self, args: &[&str]) -> Run {
        self.cozy_on("repo/charts/app", args)
    }

    fn cozy_on(&self, chart: &str, args: &[&str]) -> Run {
        let mut all = vec!["-C", chart];
        all.extend_from_slice(args);
        self.sandbox.run(BIN, &all)
    }
}

/// The Helm release name Flux gives the HelmRelease: `<targetNamespace>-<name>`, shortened.
fn release() -> String {
    let full = format!("{TARGET_NS}-{HR_NAME}");
    assert!(full.len() > 53, "the name must be long enough to be shortened");
    cozyhr::flux::release_name::release_name(HR_NAME, Some(TARGET_NS), None)
}

fn diff_against_head(helm: Helm) {
    let repo = Repo::new(helm);
    let rel = release();
    assert_eq!(rel.len(), 53);
    let diff_args = ["diff", HR_NAME, "--release-file", "repo/deploy/release.yaml", "--against", "git:HEAD"];

    // Nothing changed yet: exit 0 even with --detailed-exitcode.
    let clean = repo.cozy(&[&diff_args[..], &["--detailed-exitcode"]].concat());
    assert_eq!(clean.code, Some(0), "{clean:?}");
    assert_eq!(clean.stdout, "Plan: 0 to add, 0 to change, 0 to remove.\n");
    assert_eq!(clean.stderr, "No differences against git:HEAD.\n");

    // One template and one value change.
    repo.edit("charts/app/templates/greeting.yaml", "greeting: hello", "greeting: hi");
    repo.edit("charts/app/values.yaml", "port: 80", "port: 8080");
    let before = repo.state();

    let summary = repo.cozy(&[&diff_args[..], &["--detailed-exitcode", "-o", "summary"]].concat());
    assert_eq!(summary.code, Some(2), "{summary:?}");
    assert_eq!(
        summary.stdout,
        format!(
            "~ ConfigMap {TARGET_NS}/{rel}-greeting\n~ Service {TARGET_NS}/{rel}\nPlan: 0 to add, 2 to change, 0 to remove.\n"
        ),
        "{}",
        summary.stderr
    );
    assert!(summary.stderr.is_empty(), "{}", summary.stderr);

    // The whole chain ran on both sides: the postRenderer's patch, commonMetadata, the origin labels, the
    // library subchart through its link; and the diff is only the change.
    let diff = repo.cozy(&[&diff_args[..], &["--context=-1"]].concat());
    assert_eq!(diff.code, Some(0), "{diff:?}");
    for want in [
        "    patched-by: kustomize\n",
        "    team: platform\n",
        &format!("    helm.toolkit.fluxcd.io/name: {HR_NAME}\n"),
        "-   greeting: hello\n+   greeting: hi\n",
        "-   - port: 80\n+   - port: 8080\n",
    ] {
        assert!(diff.stdout.contains(want), "the diff lacks {want:?}:\n{}", diff.stdout);
    }
    assert!(!diff.stdout.contains(PASSWORD));
    assert_eq!(repo.state(), before, "helm cozy diff changed the working tree, the index or HEAD");

    // show renders the same chain with the library chart and the Secret's value at its targetPath.
    let show = repo.cozy(&["show", HR_NAME, "--release-file", "repo/deploy/release.yaml"]);
    let shown = show.printed();
    assert!(shown.contains(&format!("app.kubernetes.io/instance: {rel}")), "{shown}");
    assert!(shown.contains(&format!("password: {PASSWORD}\n")), "{shown}");

    // Committed, the tree is clean again: no differences.
    repo.git(&["commit", "-q", "-am", "second"]);
    let clean = repo.cozy(&[&diff_args[..], &["--detailed-exitcode"]].concat());
    assert_eq!(clean.code, Some(0), "{clean:?}");

    // A change of the HelmRelease file alone (it lives in the repository) is a change too.
    repo.edit("deploy/release.yaml", "color: blue", "color: green");
    let summary = repo.cozy(&[&diff_args[..], &["-o", "summary"]].concat());
    assert_eq!(
        summary.stdout,
        format!("~ ConfigMap {TARGET_NS}/{rel}-config\nPlan: 0 to add, 1 to change, 0 to remove.\n")
    );
}

#[test]
fn diff_against_git_head_lists_exactly_the_changed_objects_helm3() {
    diff_against_head(Helm::V3);
}

#[test]
fn diff_against_git_head_lists_exactly_the_changed_objects_helm4() {
    diff_against_head(Helm::V4);
}

#[test]
fn markdown_for_a_pull_request() {
    let repo = Repo::new(Helm::V4);
    let rel = release();
    let base =
        ["diff", HR_NAME, "--release-file", "repo/deploy/release.yaml", "--against", "git:HEAD", "-o", "markdown"];
    // A template, a value and the Secret's password change.
    repo.edit("charts/app/templates/greeting.yaml", "greeting: hello", "greeting: hi");
    repo.edit("charts/app/values.yaml", "port: 80", "port: 8080");
    let new_password = "another-Secret-42";
    repo.write("deploy/release.yaml", &release_file(&b64(new_password)));
    let out = repo.cozy(&[&base[..], &["--detailed-exitcode"]].concat());
    assert_eq!(out.code, Some(2), "{out:?}");
    let md = &out.stdout;
    let mut lines = md.lines();
    assert_eq!(
        lines.next(),
        Some(
            format!("`helm cozy diff {HR_NAME}` against `git:HEAD`: **Plan: 0 to add, 3 to change, 0 to remove.**")
                .as_str()
        )
    );
    let summaries: Vec<&str> = md.lines().filter(|l| l.starts_with("<details><summary>")).collect();
    assert_eq!(
        summaries,
        [
            format!("<details><summary><code>~ ConfigMap {TARGET_NS}/{rel}-greeting</code> changed</summary>"),
            format!("<details><summary><code>~ Secret {TARGET_NS}/{rel}-auth</code> changed</summary>"),
            format!("<details><summary><code>~ Service {TARGET_NS}/{rel}</code> changed</summary>"),
        ]
    );
    assert_eq!(md.matches("\n```diff\n").count(), 3, "{md}");
    assert_eq!(md.matches("</details>").count(), 3, "{md}");
    for secret in [PASSWORD, new_password] {
        assert!(!md.contains(secret) && !md.contains(&b64(secret)), "{secret} leaked:\n{md}");
    }
    assert!(md.contains("password: \"-------- # (21 bytes)\""), "{md}");
    assert!(!md.contains("left out"));

    // A chart whose change does not fit in one comment: what is left out is said.
    repo.write("charts/app/templates/many.yaml", "{{- range $i := until 300 }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: many-{{ $i }}\ndata:\n{{- range $j := until 8 }}\n  k{{ $j }}: {{ $.Values.filler | quote }}\n{{- end }}\n{{- end }}\n");
    repo.edit(
        "charts/app/values.yaml",
        "port: 8080",
        "port: 8080\nfiller: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    );
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "many"]);
    repo.edit("charts/app/values.yaml", "filler: aaaa", "filler: bbbb");
    let out = repo.cozy(&base);
    assert_eq!(out.code, Some(0), "{:?}", out.stderr);
    let md = &out.stdout;
    assert!(md.chars().count() <= 65_536, "{} characters", md.chars().count());
    assert!(md.len() > 60_000, "the limit was not approached: {}", md.len());
    assert!(
        md.starts_with(&format!("`helm cozy diff {HR_NAME}` against `git:HEAD`: **Plan: 0 to add, 300 to change")),
        "{}",
        &md[..200]
    );
    let blocks = md.matches("<details>").count();
    let left = 300 - blocks;
    assert!(blocks > 0 && left > 0, "{blocks} blocks");
    assert!(
        md.contains(&format!("**{left} changed objects left out** to keep this comment under 65536 characters")),
        "{}",
        &md[md.len().saturating_sub(600)..]
    );
}

#[test]
fn offline_show_takes_helms_capability_flags_and_says_lookup_finds_nothing() {
    let repo = Repo::new(Helm::V4);
    repo.write(
        "charts/app/templates/caps.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: caps\ndata:\n  kube: {{ .Capabilities.KubeVersion.Version | quote }}\n  has: {{ .Capabilities.APIVersions.Has \"example.com/v1/Widget\" | quote }}\n",
    );
    let args = ["show", HR_NAME, "--release-file", "repo/deploy/release.yaml", "-s", "templates/caps.yaml"];
    let out = repo
        .cozy(&[&args[..], &["--kube-version", "v1.31.4", "--api-versions", "example.com/v1/Widget,x.io/v2"]].concat());
    let shown = out.printed();
    assert!(shown.contains("kube: v1.31.4\n") && shown.contains("has: \"true\""), "{shown}");
    // The HelmRelease from standard input.
    let text = std::fs::read_to_string(repo.sandbox.path("repo/deploy/release.yaml")).expect("read");
    let mut all = vec!["-C", "repo/charts/app"];
    all.extend_from_slice(&["show", HR_NAME, "--release-file", "-", "-s", "templates/caps.yaml"]);
    let from_stdin = repo.sandbox.run_with_stdin(BIN, &all, Some(&text));
    assert!(from_stdin.printed().contains("has: \"false\""), "{}", from_stdin.stdout);

    repo.write(
        "charts/app/templates/looks.yaml",
        "{{- $s := lookup \"v1\" \"Secret\" .Release.Namespace \"kept\" }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: looks\ndata:\n  found: {{ empty $s | ternary \"no\" \"yes\" | quote }}\n",
    );
    let out = repo.cozy(&["show", HR_NAME, "--release-file", "repo/deploy/release.yaml", "-s", "templates/looks.yaml"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(out.stdout.contains("found: \"no\""), "{}", out.stdout);
    assert_eq!(out.stderr, "helm cozy: rendering without a cluster: lookup finds nothing (the chart calls lookup)\n");

    // values reads the same files: each leaf with its source, the Secret's value masked.
    let args = ["values", HR_NAME, "--release-file", "repo/deploy/release.yaml", "--sources"];
    assert_eq!(
        repo.cozy(&args).printed(),
        "- path: auth.password\n  value: \"*** (Secret apps/app-secret key password)\"\n  \
         source: Secret/app-secret[password] at auth.password\n\
         - path: color\n  value: blue\n  source: ConfigMap/app-values[values.yaml]\n"
    );
    // With the chart's defaults, the leaves only the chart sets; as JSON with -o json.
    let json = repo.cozy(&[&args[..], &["--with-defaults", "-o", "json"]].concat());
    let rows: serde_json::Value = serde_json::from_str(json.printed()).expect("values --sources -o json is JSON");
    assert_eq!(
        rows,
        serde_json::json!([
            {"path": "auth.password", "value": "*** (Secret apps/app-secret key password)",
             "source": "Secret/app-secret[password] at auth.password"},
            {"path": "color", "value": "blue", "source": "ConfigMap/app-values[values.yaml]"},
            {"path": "port", "value": 80, "source": "chart values.yaml"},
        ])
    );
    assert!(!json.stdout.contains(PASSWORD), "{}", json.stdout);
}

#[test]
fn a_depends_on_written_for_flux_2_10_is_reviewed_like_any_other() {
    let repo = Repo::new(Helm::V4);
    // dependsOn naming objects of other kinds (helm-controller PR #1480) beside a HelmRelease.
    repo.edit(
        "deploy/release.yaml",
        "  interval: 5m\n",
        "  interval: 5m\n  dependsOn:\n  - name: db\n  - apiVersion: v1\n    kind: ConfigMap\n    name: app-values\n    namespace: apps\n    ready: false\n  - apiVersion: cert-manager.io/v1\n    kind: Certificate\n    name: web-tls\n    readyExpr: \"true\"\n",
    );
    repo.commit_all("depends on other kinds");
    let diff_args = ["diff", HR_NAME, "--release-file", "repo/deploy/release.yaml", "--against", "git:HEAD"];
    let clean = repo.cozy(&[&diff_args[..], &["--detailed-exitcode"]].concat());
    assert_eq!((clean.code, clean.stderr.as_str()), (Some(0), "No differences against git:HEAD.\n"), "{clean:?}");
    repo.edit("charts/app/values.yaml", "port: 80", "port: 8080");
    let summary = repo.cozy(&[&diff_args[..], &["-o", "summary"]].concat());
    assert_eq!(summary.code, Some(0), "{summary:?}");
    assert!(summary.stdout.ends_with("Plan: 0 to add, 1 to change, 0 to remove.\n"), "{}", summary.stdout);
    let show = repo.cozy(&["show", HR_NAME, "--release-file", "repo/deploy/release.yaml"]);
    assert!(show.printed().contains("patched-by: kustomize"), "{}", show.stdout);
}

#[test]
fn bad_input_is_one_line_and_changes_nothing() {
    let repo = Repo::new(Helm::V4);
    repo.edit("charts/app/values.yaml", "port: 80", "port: 81");
    let hr = std::fs::read_to_string(repo.sandbox.path("repo/deploy/release.yaml")).expect("read");
    let first_doc = hr.split("---\n").next().expect("the HelmRelease").to_string();
    repo.write("other/no-hr.yaml", &hr.split("---\n").skip(1).collect::<Vec<_>>().join("---\n"));
    repo.write(
        "other/unrelated.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-secret\n  namespace: elsewhere\n",
    );
    repo.write("other/twice.yaml", &format!("{hr}---\n{first_doc}"));
    repo.write("other/bad-base64.yaml", &hr.replace(&b64(PASSWORD), "not*base64!"));
    repo.write("other/no-secret.yaml", hr.split("---\napiVersion: v1\nkind: Secret").next().expect("cut"));
    let before = repo.state();
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["show", HR_NAME, "--release-file", "repo/other/no-hr.yaml"],
            &[&format!("no HelmRelease \"{HR_NAME}\" in --release-file repo/other/no-hr.yaml")],
        ),
        (
            &["diff", HR_NAME, "--release-file", "repo/other/twice.yaml", "--against", "git:HEAD"],
            &[&format!("HelmRelease apps/{HR_NAME} appears more than once in --release-file repo/other/twice.yaml")],
        ),
        (
            &["values", HR_NAME, "--release-file", "repo/other/bad-base64.yaml"],
            &["Secret apps/app-secret data key \"password\" is not valid base64", "stringData"],
        ),
        (
            &[
                "show",
                HR_NAME,
                "--release-file",
                "repo/other/no-secret.yaml",
                "--release-file",
                "repo/other/unrelated.yaml",
            ],
            &[
                "valuesFrom Secret apps/app-secret is not in --release-file repo/other/no-secret.yaml, repo/other/unrelated.yaml",
                "optional: true",
            ],
        ),
        (
            &["diff", HR_NAME, "--release-file", "repo/deploy/release.yaml", "--against", "git:no-such-branch"],
            &["unknown Git ref \"no-such-branch\"", "git fetch"],
        ),
        (
            &["diff", HR_NAME, "--release-file", "repo/deploy/release.yaml", "--against", "git:--output=x"],
            &["unknown Git ref \"--output=x\""],
        ),
    ];
    for (args, expected) in cases {
        repo.cozy(args).one_error_line(expected);
        assert_eq!(repo.state(), before, "{args:?} changed the repository");
    }
    // Outside a repository, --against git:REF says so.
    repo.sandbox.write("elsewhere/Chart.yaml", "apiVersion: v2\nname: e\nversion: 0.1.0\n");
    repo.cozy_on(
        "elsewhere",
        &["diff", HR_NAME, "--release-file", "repo/deploy/release.yaml", "--against", "git:HEAD"],
    )
    .one_error_line(&["is not inside a Git repository"]);
    // --kube-version without --release-file is a usage error.
    repo.cozy(&["show", HR_NAME, "--kube-version", "v1.30.0"]).usage_error("--release-file");
}

#[test]
fn status_lines_name_the_command_that_ran() {
    let mut repo = Repo::new(Helm::V4);
    repo.write(
        "charts/app/templates/looks.yaml",
        "{{- $s := lookup \"v1\" \"Secret\" .Release.Namespace \"kept\" }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: looks\n",
    );
    let helm = repo.cozy(&["show", "app", "--plain", "--offline", "-s", "templates/looks.yaml"]);
    assert!(helm.stderr.starts_with("helm cozy: --offline: rendering with Helm's defaults"), "{}", helm.stderr);
    // The same binary as Go cozyhr's command line (the release archive's launcher says so with COZYHR_FACE).
    repo.repo.sandbox.set_env("COZYHR_FACE", "cozyhr");
    let cozyhr = repo.cozy(&["show", "app", "--plain", "--offline", "-s", "templates/looks.yaml"]);
    assert_eq!(cozyhr.code, Some(0), "{cozyhr:?}");
    assert!(cozyhr.stderr.starts_with("cozyhr: --offline: rendering with Helm's defaults"), "{}", cozyhr.stderr);
    let diff = repo.cozy(&["diff", HR_NAME, "--release-file", "repo/deploy/release.yaml", "--against", "git:HEAD"]);
    assert!(!diff.stderr.contains("helm cozy"), "{}", diff.stderr);
}
