//! `helm cozy review` on a repository shaped like Cozystack's (testsupport/cozystack_repo.rs), its
//! releases as the platform installs them. The real helm-cozy with the real Helm 3 and Helm 4, and no
//! cluster.

#[path = "../../testsupport/cli.rs"]
mod cli;
#[path = "../../testsupport/cozystack_repo.rs"]
mod cozystack_repo;
#[path = "../../testsupport/git_repo.rs"]
mod git_repo;
#[path = "../../testsupport/tools.rs"]
mod tools;

use cli::Run;
use cozystack_repo::{GENERATED, SOURCES};
use git_repo::GitRepo;
use serde_json::Value;
use tools::Helm;

const BIN: &str = env!("CARGO_BIN_EXE_helm-cozy");

struct Fixture {
    repo: GitRepo,
}

impl Fixture {
    fn new(helm: Helm) -> Fixture {
        let repo = GitRepo::new(helm);
        cozystack_repo::write(&repo.sandbox.path("repo"));
        repo.write("platform-values.yaml", cozystack_repo::PLATFORM_VALUES);
        repo.commit_all("packages");
        Fixture { repo }
    }

    /// `review ARGS` in the repository, releases from the PackageSources, no cluster. The file named by
    /// `-f` is relative to the repository (-C), as PATH is.
    fn review(&self, args: &[&str]) -> Run {
        self.review_of(SOURCES, args)
    }

    /// `review ARGS` with the release files of `releases`, no cluster.
    fn review_of(&self, releases: &str, args: &[&str]) -> Run {
        let mut all = vec!["-C", "repo", "review", "git:HEAD"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--offline", "--release-file", releases]);
        self.repo.sandbox.run(BIN, &all)
    }

    /// `-o json`: each row's chart and release, and the rows.
    fn rows(&self, args: &[&str]) -> (Vec<(String, String)>, Vec<Value>) {
        self.rows_of(SOURCES, args)
    }

    /// `-o json` with the release files of `releases`: each row's chart and release, and the rows.
    fn rows_of(&self, releases: &str, args: &[&str]) -> (Vec<(String, String)>, Vec<Value>) {
        let out = self.review_of(releases, &[args, &["-o", "json"]].concat());
        let rows: Vec<Value> = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"));
        let keys = rows
            .iter()
            .map(|r| (r["chart"].as_str().unwrap_or("").to_string(), r["release"].as_str().unwrap_or("-").to_string()))
            .collect();
        (keys, rows)
    }
}

fn key(chart: &str, release: &str) -> (String, String) {
    (chart.to_string(), release.to_string())
}

const PLATFORM: [&str; 4] = ["-f", "platform-values.yaml", "-n", "tenant-root"];

fn one_variants_values_file(helm: Helm) {
    let f = Fixture::new(helm);
    f.repo.edit("packages/system/autoscaler/values-azure.yaml", "cloud: azure", "cloud: azure-stack");
    let (keys, rows) = f.rows(&PLATFORM);
    assert_eq!(keys, [key("packages/system/autoscaler", "cozy-autoscaler-azure/autoscaler-azure")], "{rows:?}");
    let row = &rows[0];
    assert_eq!(
        (row["source"].as_str(), row["package"].as_str()),
        (Some("package"), Some("cozystack.autoscaler-azure"))
    );
    assert_eq!(row["change"], 1, "{row}");
    let out = f.review(&[&PLATFORM[..], &["--detailed-exitcode"]].concat());
    assert_eq!(out.code, Some(2), "{out:?}");
    let lines: Vec<String> = out.stdout.lines().map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ")).collect();
    assert!(lines.iter().any(|l| l == "- - --cloud-provider=azure"), "{}", out.stdout);
    assert!(lines.iter().any(|l| l == "+ - --cloud-provider=azure-stack"), "{}", out.stdout);

    // The hetzner variant's file reaches the hetzner release alone, over values.yaml (its own tag).
    f.repo.git(&["checkout", "--", "."]);
    f.repo.edit("packages/system/autoscaler/values-hetzner.yaml", "tag: v1.30.1", "tag: v1.31.0");
    let (keys, rows) = f.rows(&PLATFORM);
    assert_eq!(keys, [key("packages/system/autoscaler", "cozy-autoscaler-hetzner/autoscaler-hetzner")], "{rows:?}");
    let diff = &rows[0]["plan"]["changes"][0]["diff"];
    assert!(diff.as_str().is_some_and(|d| d.contains("registry.k8s.io/autoscaler:v1.31.0")), "{diff}");

    // values.yaml is read by both.
    f.repo.git(&["checkout", "--", "."]);
    f.repo.edit("packages/system/autoscaler/values.yaml", "replicas: 1", "replicas: 2");
    let (keys, _) = f.rows(&PLATFORM);
    assert_eq!(
        keys,
        [
            key("packages/system/autoscaler", "cozy-autoscaler-azure/autoscaler-azure"),
            key("packages/system/autoscaler", "cozy-autoscaler-hetzner/autoscaler-hetzner"),
        ]
    );
}

#[test]
fn a_variants_values_file_reaches_that_variant_alone_helm3() {
    one_variants_values_file(Helm::V3);
}

#[test]
fn a_variants_values_file_reaches_that_variant_alone_helm4() {
    one_variants_values_file(Helm::V4);
}

#[test]
fn a_library_change_reaches_every_release_that_reads_it() {
    let f = Fixture::new(Helm::V4);
    f.repo.edit("packages/library/cozy-lib/templates/_tenant.tpl", "cozystack{{- end", "cozystack-platform{{- end");
    let (keys, rows) = f.rows(&PLATFORM);
    assert_eq!(
        keys,
        [
            key("packages/apps/bucket", "tenant-root/bucket"),
            key("packages/system/operator", "cozy-system/bucket-operator")
        ],
        "{rows:?}"
    );
    for row in &rows {
        assert_eq!((row["changed"].as_bool(), row["change"].as_u64()), (Some(true), Some(1)), "{row}");
    }
}

#[test]
fn without_the_platform_values_an_apps_chart_fails_with_helms_error_alone() {
    let f = Fixture::new(Helm::V4);
    f.repo.edit("packages/apps/bucket/values.yaml", "10Gi", "20Gi");
    let (_, rows) = f.rows(&[]);
    let error = rows[0]["error"].as_str().unwrap_or_default();
    assert!(error.contains("'default' is not a valid tenant identifier"), "{error}");
    assert!(!error.contains("level=") && !error.contains("/tmp") && !error.contains("symbolic link"), "{error}");
    let (_, rows) = f.rows(&["-n", "tenant-root"]);
    let error = rows[0]["error"].as_str().unwrap_or_default();
    assert!(error.contains("_cluster.root-host is the platform's"), "{error}");
    let (keys, rows) = f.rows(&PLATFORM);
    assert_eq!(keys, [key("packages/apps/bucket", "tenant-root/bucket")]);
    assert_eq!(rows[0]["change"], 1, "{rows:?}");
}

#[test]
fn a_packagesource_change_reaches_the_component_it_redefines() {
    let f = Fixture::new(Helm::V4);
    f.repo.edit(
        &format!("{SOURCES}/autoscaler-azure.yaml"),
        "valuesFiles: [values.yaml, values-azure.yaml]",
        "valuesFiles: [values.yaml, values-hetzner.yaml]",
    );
    let (keys, rows) = f.rows(&PLATFORM);
    assert!(keys.contains(&key("packages/system/autoscaler", "cozy-autoscaler-azure/autoscaler-azure")), "{rows:?}");
    assert!(
        !keys.contains(&key("packages/system/autoscaler", "cozy-autoscaler-hetzner/autoscaler-hetzner")),
        "{rows:?}"
    );
}

/// The operator chart gains, in a commit of their own, one object of each kind a risk is about; the test
/// then changes or removes each in the working tree.
const RISKY: [(&str, &str); 6] = [
    (
        "statefulset.yaml",
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: db\nspec:\n  serviceName: db\n  selector:\n    matchLabels: {app: db}\n  template:\n    metadata:\n      labels: {app: db}\n    spec:\n      containers:\n      - {name: db, image: postgres:16}\n  volumeClaimTemplates:\n  - metadata: {name: data}\n    spec:\n      accessModes: [ReadWriteOnce]\n      resources: {requests: {storage: 10Gi}}\n",
    ),
    (
        "service.yaml",
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: db\nspec:\n  clusterIP: None\n  ports:\n  - {port: 5432}\n",
    ),
    (
        "job.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - {name: migrate, image: migrate:1}\n",
    ),
    (
        "pvc.yaml",
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: cache\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 10Gi}}\n",
    ),
    ("namespace.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: operator-work\n"),
    (
        "crd.yaml",
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: buckets.example.org\nspec:\n  group: example.org\n  names: {kind: Bucket, plural: buckets}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema: {openAPIV3Schema: {type: object}}\n",
    ),
];

#[test]
fn images_and_risks_are_flagged_in_the_table_json_and_markdown() {
    let f = Fixture::new(Helm::V4);
    let operator = |file: &str| format!("packages/system/operator/templates/{file}");
    for (file, text) in RISKY {
        f.repo.write(&operator(file), text);
    }
    f.repo.commit_all("risky objects");
    // An image (hetzner's tag), an immutable selector (both autoscalers), and each risk in the operator.
    f.repo.edit("packages/system/autoscaler/values-hetzner.yaml", "tag: v1.30.1", "tag: v1.31.0");
    f.repo.edit(
        "packages/system/autoscaler/templates/deployment.yaml",
        "    matchLabels: {app: {{ .Release.Name }}}",
        "    matchLabels: {app: {{ .Release.Name }}, tier: scaler}",
    );
    f.repo.edit(&operator("statefulset.yaml"), "storage: 10Gi", "storage: 20Gi");
    f.repo.edit(&operator("service.yaml"), "clusterIP: None", "clusterIP: 10.96.0.10");
    f.repo.edit(&operator("job.yaml"), "image: migrate:1", "image: migrate:2");
    f.repo.edit(&operator("pvc.yaml"), "storage: 10Gi", "storage: 5Gi");
    for gone in ["namespace.yaml", "crd.yaml"] {
        std::fs::remove_file(f.repo.sandbox.path(&format!("repo/{}", operator(gone)))).expect("remove a template");
    }

    let (keys, rows) = f.rows(&PLATFORM);
    let row = |release: &str| {
        let i = keys.iter().position(|(_, r)| r == release).unwrap_or_else(|| panic!("{release} not in {keys:?}"));
        &rows[i]
    };
    let risks = |release: &str| -> Vec<String> {
        let r = row(release)["risks"].as_array().cloned().unwrap_or_default();
        r.iter()
            .map(|r| format!("{}: {}", r["object"].as_str().unwrap_or(""), r["what"].as_str().unwrap_or("")))
            .collect()
    };
    let hetzner = row("cozy-autoscaler-hetzner/autoscaler-hetzner");
    assert_eq!(
        hetzner["images"],
        serde_json::json!([{"object": "Deployment autoscaler-hetzner", "container": "autoscaler",
            "before": "registry.k8s.io/autoscaler:v1.30.1", "after": "registry.k8s.io/autoscaler:v1.31.0"}])
    );
    assert_eq!(risks("cozy-autoscaler-azure/autoscaler-azure").len(), 1);
    assert!(
        risks("cozy-autoscaler-azure/autoscaler-azure")[0]
            .starts_with("Deployment autoscaler-azure: spec.selector is immutable")
    );
    assert_eq!(row("cozy-autoscaler-azure/autoscaler-azure")["images"], serde_json::json!([]));
    let operator_risks = risks("cozy-system/bucket-operator");
    for expected in [
        "StatefulSet db: spec.volumeClaimTemplates is immutable",
        "Service db: spec.clusterIP is immutable",
        "Job migrate: spec.template is immutable",
        "PersistentVolumeClaim cache: spec.resources.requests.storage shrinks",
        "Namespace operator-work: removed",
        "CustomResourceDefinition buckets.example.org: removed",
    ] {
        assert!(operator_risks.iter().any(|r| r.starts_with(expected)), "{expected} not in {operator_risks:?}");
    }
    assert_eq!(operator_risks.len(), 6, "{operator_risks:?}");

    // The table counts them in the note and lists them after it.
    let table = f.review(&[&PLATFORM[..], &["-o", "summary"]].concat()).stdout;
    let line = |release: &str| table.lines().find(|l| l.contains(release)).unwrap_or_default().to_string();
    assert!(line("autoscaler-hetzner").ends_with("1 image, 1 risk"), "{table}");
    assert!(line("bucket-operator").ends_with("1 image, 6 risks"), "{table}");
    assert!(table.contains("What to see first:"), "{table}");
    assert!(
        table.contains("image  Deployment autoscaler-hetzner, container autoscaler: registry.k8s.io/autoscaler:v1.30.1 → registry.k8s.io/autoscaler:v1.31.0"),
        "{table}"
    );
    assert!(table.contains("risk   CustomResourceDefinition buckets.example.org: removed"), "{table}");

    // The Markdown says them before the diffs.
    let md = f.review(&[&PLATFORM[..], &["-o", "markdown"]].concat()).stdout;
    let first = md.find("**What to see first**").unwrap_or_else(|| panic!("{md}"));
    assert!(md[first..].contains("image of `Deployment autoscaler-hetzner`, container `autoscaler`: `registry.k8s.io/autoscaler:v1.30.1` → `registry.k8s.io/autoscaler:v1.31.0`"), "{md}");
    assert!(
        md[first..].contains("**risk**: `PersistentVolumeClaim cache`: spec.resources.requests.storage shrinks"),
        "{md}"
    );
    assert!(md[first..].contains("**risk**: `Namespace operator-work`: removed"), "{md}");
    assert!(md.find("```diff").is_none_or(|diff| diff > first), "the list comes before the diffs: {md}");
}

/// The azure autoscaler as an ArtifactGenerator file (with a Merge) and a HelmRelease file, and as the
/// PackageSource's component: the same release, rendered to the same objects, for what both reach.
#[test]
fn artifact_generator_files_and_packagesources_agree() {
    let f = Fixture::new(Helm::V4);
    let azure = |rows: &[Value], keys: &[(String, String)], source: &str| -> Value {
        let i = keys
            .iter()
            .position(|k| k == &key("packages/system/autoscaler", "cozy-autoscaler-azure/autoscaler-azure"))
            .unwrap_or_else(|| panic!("no azure release from the {source}: {keys:?}"));
        assert_eq!(rows[i]["source"].as_str(), Some(source), "{}", rows[i]);
        rows[i]["plan"].clone()
    };
    for (file, from, to) in [
        ("packages/system/autoscaler/values-azure.yaml", "cloud: azure", "cloud: azure-stack"),
        ("packages/system/autoscaler/values.yaml", "replicas: 1", "replicas: 3"),
        (
            "packages/system/autoscaler/templates/deployment.yaml",
            "replicas: {{ .Values.replicas }}",
            "replicas: {{ add1 .Values.replicas }}",
        ),
    ] {
        f.repo.git(&["checkout", "--", "."]);
        f.repo.edit(file, from, to);
        let (pkg_keys, pkg_rows) = f.rows(&PLATFORM);
        let (gen_keys, gen_rows) = f.rows_of(GENERATED, &PLATFORM);
        let (packaged, generated) = (azure(&pkg_rows, &pkg_keys, "package"), azure(&gen_rows, &gen_keys, "file"));
        assert_eq!(packaged, generated, "{file}");
        let changes = generated["changes"].as_array().map_or(0, Vec::len);
        assert_eq!(changes, 1, "{file}: {generated}");
    }
    // The merged values file: azure's cloud over values.yaml's image and replicas.
    let (keys, rows) = f.rows_of(GENERATED, &PLATFORM);
    let diff = azure(&rows, &keys, "file")["changes"][0]["diff"].as_str().unwrap_or_default().to_string();
    assert!(diff.contains("--cloud-provider=azure") && diff.contains("registry.k8s.io/autoscaler:v1.30.0"), "{diff}");
}

/// `diff --against git` takes review's path: a PackageSource's component, and an ArtifactGenerator file's
/// HelmRelease, are built at each side as review builds them, to the same plan.
#[test]
fn diff_against_git_builds_the_release_as_review_does() {
    let f = Fixture::new(Helm::V4);
    let diff = |release_file: &str| -> Run {
        let release_file = format!("repo/{release_file}");
        let args = ["-C", "repo/packages/system/autoscaler", "diff", "autoscaler-azure", "-n", "cozy-autoscaler-azure"];
        // Whole objects, as review's JSON has them.
        let rest = [
            "--against",
            "git:HEAD",
            "--release-file",
            &release_file,
            "--detailed-exitcode",
            "-o",
            "json",
            "--context=-1",
        ];
        f.repo.sandbox.run(BIN, &[&args[..], &rest[..]].concat())
    };
    let package_file = format!("{SOURCES}/autoscaler-azure.yaml");
    let generator_file = format!("{GENERATED}/autoscaler-azure.yaml");
    for file in [&package_file, &generator_file] {
        let clean = diff(file);
        assert_eq!(clean.code, Some(0), "nothing changed yet: {clean:?}");
    }
    f.repo.edit("packages/system/autoscaler/values-azure.yaml", "cloud: azure", "cloud: azure-stack");
    let plans: Vec<Value> = [&package_file, &generator_file]
        .into_iter()
        .map(|file| {
            let out = diff(file);
            assert_eq!(out.code, Some(2), "{out:?}");
            serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"))
        })
        .collect();
    assert_eq!(plans[0], plans[1]);
    let diff_text = plans[0]["changes"][0]["diff"].as_str().unwrap_or_default();
    assert!(diff_text.contains("--cloud-provider=azure-stack"), "{}", plans[0]);
    // The same change as review shows it for that release.
    let (keys, rows) = f.rows(&PLATFORM);
    assert_eq!(keys, [key("packages/system/autoscaler", "cozy-autoscaler-azure/autoscaler-azure")]);
    assert_eq!(rows[0]["plan"]["changes"], plans[0]["changes"]);
    // A release no file defines is one line naming what the files have.
    let out = f.repo.sandbox.run(
        BIN,
        &[
            "-C",
            "repo/packages/system/autoscaler",
            "diff",
            "nothing",
            "-n",
            "cozy-autoscaler-azure",
            "--against",
            "git:HEAD",
            "--release-file",
            &format!("repo/{package_file}"),
        ],
    );
    assert_eq!(out.code, Some(1), "{out:?}");
    assert_eq!(out.stderr.lines().count(), 1, "{out:?}");
}

/// `--release-file packages`: the PackageSources in the platform chart's sources/ and the
/// ApplicationDefinitions in the -rd charts are read from inside their charts (nothing else of a chart
/// is), and an application is released under its definition's prefix.
#[test]
fn an_application_is_released_under_its_definitions_prefix() {
    let f = Fixture::new(Helm::V4);
    f.repo.edit("packages/apps/bucket/values.yaml", "10Gi", "20Gi");
    let (keys, rows) = f.rows_of("packages", &PLATFORM);
    assert_eq!(keys, [key("packages/apps/bucket", "tenant-root/bucket-bucket")], "{rows:?}");
    assert_eq!(rows[0]["name"].as_str(), Some("bucket-bucket"));
    let diff = rows[0]["plan"]["changes"][0]["diff"].as_str().unwrap_or_default();
    assert!(diff.contains("name: bucket-bucket"), "{diff}");
    // The definition's prefix changes the release.
    f.repo.edit("packages/system/bucket-rd/cozyrds/bucket.yaml", "prefix: bucket-", "prefix: b-");
    let (keys, _) = f.rows_of("packages", &PLATFORM);
    assert!(keys.contains(&key("packages/apps/bucket", "tenant-root/b-bucket")), "{keys:?}");
}

/// A values file that cannot be read or is not YAML is one line and exit 1 before anything renders,
/// even when nothing would.
#[test]
fn a_bad_values_file_is_one_line_before_anything_renders() {
    let f = Fixture::new(Helm::V4);
    f.repo.write("broken.yaml", "a: [\n");
    for (file, says) in [("missing.yaml", "cannot read"), ("broken.yaml", "broken.yaml")] {
        let out = f.review(&["-f", file]);
        assert_eq!(out.code, Some(1), "{out:?}");
        assert_eq!(out.stdout, "", "{out:?}");
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{out:?}");
        assert!(lines[0].contains(file) && lines[0].contains(says), "{out:?}");
    }
}

/// A chart that draws values anew at every render (a password, a checksum of one: kept by `lookup` in a
/// cluster, drawn again offline at each side) is reviewed for what the commit changed, not for the draws.
#[test]
fn values_drawn_anew_at_every_render_are_no_change() {
    let f = Fixture::new(Helm::V4);
    let chart = "packages/system/vault";
    f.repo.write(&format!("{chart}/Chart.yaml"), "apiVersion: v2\nname: vault\nversion: 1.0.0\n");
    f.repo.write(
        &format!("{chart}/templates/secret.yaml"),
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: vault\n  annotations:\n    checksum: {{ randAlphaNum 16 | sha256sum }}\nstringData:\n  password: {{ randAlphaNum 16 }}\n  user: admin\n",
    );
    f.repo.write(
        &format!("{chart}/templates/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: vault\ndata:\n  level: info\n",
    );
    f.repo.commit_all("vault");
    f.repo.edit(&format!("{chart}/templates/cm.yaml"), "level: info", "level: debug");
    let kinds = |rows: &[Value]| -> Vec<String> {
        let changes = rows[0]["plan"]["changes"].as_array().cloned().unwrap_or_default();
        changes.iter().map(|c| c["kind"].as_str().unwrap_or("").to_string()).collect()
    };
    let (keys, rows) = f.rows(&PLATFORM);
    assert_eq!(keys, [key(chart, "-")], "{rows:?}");
    assert_eq!(kinds(&rows), ["ConfigMap"], "the Secret's draws are no change: {rows:?}");
    // What is not drawn is compared as always: a change to it shows.
    f.repo.edit(&format!("{chart}/templates/secret.yaml"), "user: admin", "user: root");
    let (_, rows) = f.rows(&PLATFORM);
    assert_eq!(kinds(&rows), ["ConfigMap", "Secret"], "{rows:?}");
}
