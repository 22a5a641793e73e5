//! `helm cozy review` with a cluster (issue 38), through Helm 4's real plugin dispatch: a chart that the
//! real helm-controller installed three times, each release with its own values, is reviewed as three
//! releases read from the cluster; a chart no HelmRelease of the cluster deploys takes its HelmRelease
//! from the repository's files; with no cluster reachable every release comes from the files.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use cozyhr_e2e::{Chart, Helm, apply, cozy_home, helmrelease, kubectl, namespace, run, wait_hr_ready};
use serde_json::Value;

const READY_TIMEOUT: Duration = Duration::from_secs(240);

fn git(dir: &Path, args: &[&str]) {
    let mut c = Command::new("git");
    c.arg("-C").arg(dir).args(["-c", "user.name=e2e", "-c", "user.email=e2e@cozyhr.invalid"]).args(args);
    run(c).ok();
}

/// `helm cozy -C REPO review ARGS -o json` with `envs`: the rows, as (chart, release, source), and the
/// rows themselves.
fn review(repo: &Path, args: &[&str], envs: &[(&str, &str)]) -> (Vec<(String, String, String)>, Vec<Value>, String) {
    let mut c = cozy_home(Helm::V4).command();
    c.args(["cozy", "-C"]).arg(repo).arg("review").args(args).args(["-o", "json"]);
    for (k, v) in envs {
        c.env(k, v);
    }
    let out = run(c).ok();
    let rows: Vec<Value> = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}:\n{}", out.stdout));
    let keys = rows
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or("-").to_string();
            (s("chart"), s("release"), s("source"))
        })
        .collect();
    (keys, rows, out.stderr)
}

/// The whole new object of the ConfigMap in a row's plan (its diff printed whole).
fn configmap_diff(row: &Value) -> String {
    let changes = row["plan"]["changes"].as_array().cloned().unwrap_or_default();
    changes.iter().find(|c| c["kind"] == "ConfigMap").and_then(|c| c["diff"].as_str()).unwrap_or_default().to_string()
}

#[test]
fn a_chart_deployed_three_times_is_three_releases_with_their_own_values() {
    let name = format!("rv{}", std::process::id() % 100000);
    let chart = Chart::new(
        &name,
        "0.1.0",
        "message: default\nsize: small\n",
        &[(
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  message: {{ .Values.message | quote }}\n  size: {{ .Values.size | quote }}\n",
        )],
    );
    let nss: Vec<String> = (0..3).map(|i| namespace(&format!("review{i}"))).collect();
    for (i, ns) in nss.iter().enumerate() {
        chart.publish("packages", ns);
        kubectl(["create", "configmap", "sizes", "-n", ns, &format!("--from-literal=values.yaml=size: size-{i}\n")])
            .ok();
        apply(&helmrelease(
            ns,
            &format!("web{i}"),
            "packages",
            &format!("values:\n  message: hello-{i}\nvaluesFrom:\n- kind: ConfigMap\n  name: sizes\n"),
        ));
    }
    for (i, ns) in nss.iter().enumerate() {
        wait_hr_ready(ns, &format!("web{i}"), READY_TIMEOUT);
    }

    // The repository: the chart helm-controller installed, a second chart, and HelmRelease files for both.
    let repo = tempfile::tempdir().expect("tempdir");
    let root = repo.path();
    let copy = |from: &Path, to: &Path| {
        std::fs::create_dir_all(to).expect("mkdir");
        let mut cp = Command::new("cp");
        cp.arg("-R").arg(format!("{}/.", from.display())).arg(to);
        run(cp).ok();
    };
    copy(chart.path(), &root.join("packages").join(&name));
    let other = Chart::new(
        &format!("{name}-other"),
        "0.1.0",
        "message: other\n",
        &[(
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  message: {{ .Values.message | quote }}\n",
        )],
    );
    copy(other.path(), &root.join("packages/other"));
    let file_release = |hr: &str, chart: &str, message: &str| {
        format!(
            "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: {hr}\n  namespace: from-files\nspec:\n  interval: 5m\n  chart:\n    spec:\n      chart: {chart}\n      sourceRef:\n        kind: HelmRepository\n        name: packages\n  values:\n    message: {message}\n"
        )
    };
    std::fs::create_dir_all(root.join("deploy")).expect("mkdir");
    std::fs::write(
        root.join("deploy/releases.yaml"),
        format!(
            "{}---\n{}",
            file_release("web-file", &name, "from-a-file"),
            file_release("other", &format!("{name}-other"), "from-a-file")
        ),
    )
    .expect("write");
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "packages"]);

    // Both charts change.
    let edit = |rel: &str| {
        let path = root.join(rel);
        let text = std::fs::read_to_string(&path).expect("read");
        std::fs::write(&path, text.replace("data:\n", "data:\n  reviewed: \"yes\"\n")).expect("write");
    };
    edit(&format!("packages/{name}/templates/cm.yaml"));
    edit("packages/other/templates/cm.yaml");

    // With the cluster: the chart it deploys is its three releases, each rendered with its own values and
    // valuesFrom; the other chart, which no HelmRelease of the cluster deploys, takes the files'.
    let (keys, rows, _) = review(root, &["git:HEAD", "-A", "--release-file", "deploy"], &[]);
    let chart_path = format!("packages/{name}");
    let mut expected: Vec<(String, String, String)> = nss
        .iter()
        .enumerate()
        .map(|(i, ns)| (chart_path.clone(), format!("{ns}/web{i}"), "cluster".to_string()))
        .collect();
    expected.insert(0, ("packages/other".into(), "from-files/other".into(), "file".into()));
    assert_eq!(keys, expected, "by chart path, then release");
    for (i, row) in rows.iter().skip(1).enumerate() {
        assert_eq!(row["changed"], true, "{row}");
        assert_eq!((row["add"].as_u64(), row["change"].as_u64(), row["remove"].as_u64()), (Some(0), Some(1), Some(0)));
        let diff = configmap_diff(row);
        for want in [format!("message: hello-{i}\n"), format!("size: size-{i}\n"), "+   reviewed: \"yes\"\n".into()] {
            assert!(diff.contains(&want), "web{i} lacks {want:?}:\n{diff}");
        }
        // helm-controller's labels, as the post-render chain adds them.
        assert!(diff.contains(&format!("helm.toolkit.fluxcd.io/name: web{i}")), "{diff}");
    }
    assert!(configmap_diff(&rows[0]).contains("message: from-a-file\n"));

    // Only the first namespace: one release.
    let (keys, _, _) = review(root, &["git:HEAD", "-n", &nss[0]], &[]);
    assert_eq!(keys[1..], [(chart_path.clone(), format!("{}/web0", nss[0]), "cluster".to_string())]);

    // No cluster reachable (a kubeconfig whose server answers nothing): the files, said in one line.
    let dead = tempfile::NamedTempFile::new().expect("tempfile");
    std::fs::write(
        dead.path(),
        "apiVersion: v1\nkind: Config\nclusters:\n- name: gone\n  cluster:\n    server: https://127.0.0.1:1\ncontexts:\n- name: gone\n  context:\n    cluster: gone\n    user: nobody\ncurrent-context: gone\nusers:\n- name: nobody\n  user: {}\n",
    )
    .expect("write");
    let (keys, _, stderr) =
        review(root, &["git:HEAD", "--release-file", "deploy"], &[("KUBECONFIG", &dead.path().to_string_lossy())]);
    assert_eq!(
        keys,
        [
            ("packages/other".to_string(), "from-files/other".to_string(), "file".to_string()),
            (chart_path, "from-files/web-file".into(), "file".into()),
        ]
    );
    let warning = stderr.lines().next().unwrap_or_default();
    assert!(
        warning.contains("no HelmReleases from a cluster") && warning.contains("the HelmRelease files are used"),
        "{stderr}"
    );
}

#[test]
fn the_ci_workflows_review_step_reviews_a_pull_request() {
    let wf = cozyhr_e2e::workflow("review.yml");
    let step = |name: &str| cozyhr_e2e::workflow_step(&wf, name);
    let script = step("review");
    assert!(script.contains("helm cozy review \"git:origin/$GITHUB_BASE_REF...HEAD\""), "{script}");
    assert!(step("install helm cozy").contains("--keyring cozyhr-keyring.gpg"), "the install verifies the release");
    assert!(step("comment").contains("--body-file review.md"));

    // A repository and its origin, as actions/checkout leaves a pull request: main on origin, the pull
    // request's head checked out with the base branch's history.
    let world = tempfile::tempdir().expect("tempdir");
    let (origin, work) = (world.path().join("origin.git"), world.path().join("work"));
    std::fs::create_dir_all(&work).expect("mkdir");
    git(world.path(), &["init", "-q", "--bare", "-b", "main", &origin.to_string_lossy()]);
    git(&work, &["init", "-q", "-b", "main"]);
    let chart = Chart::new(
        "shop",
        "0.1.0",
        "replicas: 1\n",
        &[(
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  replicas: {{ .Values.replicas | quote }}\n",
        )],
    );
    let mut cp = Command::new("cp");
    cp.arg("-R").arg(format!("{}/.", chart.path().display())).arg(work.join("charts/shop"));
    std::fs::create_dir_all(work.join("charts/shop")).expect("mkdir");
    run(cp).ok();
    std::fs::create_dir_all(work.join("deploy")).expect("mkdir");
    std::fs::write(
        work.join("deploy/shop.yaml"),
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: shop\n  namespace: shops\nspec:\n  interval: 5m\n  chart:\n    spec:\n      chart: ./charts/shop\n      sourceRef:\n        kind: GitRepository\n        name: charts\n  values:\n    replicas: 2\n",
    )
    .expect("write");
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "shop"]);
    git(&work, &["remote", "add", "origin", &origin.to_string_lossy()]);
    git(&work, &["push", "-q", "origin", "main"]);
    git(&work, &["checkout", "-q", "-b", "pull-request"]);
    std::fs::write(work.join("charts/shop/values.yaml"), "replicas: 1\nextra: true\n").expect("write");
    let template = work.join("charts/shop/templates/cm.yaml");
    let text = std::fs::read_to_string(&template).expect("read");
    std::fs::write(&template, text.replace("data:\n", "data:\n  extra: {{ .Values.extra | quote }}\n")).expect("write");
    git(&work, &["commit", "-q", "-am", "extra"]);
    git(&work, &["fetch", "-q", "origin"]);

    // The step's script as GitHub runs it (bash -e), with the workflow's env, Helm 4 with the plugin
    // and kubectl on PATH.
    cozyhr_e2e::run_workflow_step(&wf, &script, &work, &world.path().join("bin"));
    let md = std::fs::read_to_string(work.join("review.md")).expect("review.md");
    assert!(
        md.starts_with("#### `helm cozy review`: the merge base of git:origin/main and git:HEAD → git:HEAD\n"),
        "{md}"
    );
    assert!(md.contains("| `charts/shop` | `shops/shop` | 0 | 1 | 0 |  |\n"), "{md}");
    assert!(md.contains("+   extra: \"true\"\n"), "{md}");
    assert!(md.contains("    replicas: \"2\"\n"), "the HelmRelease file's values: {md}");
}
