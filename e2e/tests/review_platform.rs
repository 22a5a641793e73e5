//! `helm cozy review` of a repository shaped like Cozystack's (testsupport/cozystack_repo.rs) through
//! Helm 4's real plugin dispatch: with a cluster, a package release reads the values the platform
//! injects from the `cozystack-values` Secret of its namespace, as helm-controller would; and
//! examples/ci/review-cozystack.yml's review step, run as GitHub runs it on a pull request, reviews the
//! releases the PackageSources define with the example platform values.

#[path = "../../testsupport/cozystack_repo.rs"]
mod cozystack_repo;

use std::path::Path;
use std::process::Command;

use cozyhr_e2e::{Helm, cozy_home, kubectl, namespace, run};
use cozystack_repo::SOURCES;
use serde_json::Value;

fn git(dir: &Path, args: &[&str]) {
    let mut c = Command::new("git");
    c.arg("-C").arg(dir).args(["-c", "user.name=e2e", "-c", "user.email=e2e@cozyhr.invalid"]).args(args);
    run(c).ok();
}

/// A Cozystack-shaped repository, committed on main, in a temporary directory.
fn repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    cozystack_repo::write(dir.path());
    git(dir.path(), &["init", "-q", "-b", "main"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "packages"]);
    dir
}

fn edit(root: &Path, rel: &str, from: &str, to: &str) {
    let path = root.join(rel);
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(text.contains(from), "{rel} lacks {from:?}");
    std::fs::write(&path, text.replacen(from, to, 1)).expect("write");
}

/// `helm cozy -C REPO review ARGS -o json`: the rows.
fn review(repo: &Path, args: &[&str]) -> Vec<Value> {
    let mut c = cozy_home(Helm::V4).command();
    c.args(["cozy", "-C"]).arg(repo).arg("review").args(args).args(["-o", "json"]);
    let out = run(c);
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}\n{}", out.stdout, out.stderr))
}

#[test]
fn with_a_cluster_a_package_release_reads_the_platform_values_from_its_secret() {
    // A tenant namespace (cozy-lib wants `tenant-`), and the platform's values where Cozystack keeps them.
    let tenant = namespace("tenant-review");
    let values = "_cluster:\n  root-host: from-the-cluster.example\n";
    kubectl([
        "create",
        "secret",
        "generic",
        "cozystack-values",
        "-n",
        &tenant,
        &format!("--from-literal=values.yaml={values}"),
    ])
    .ok();
    let repo = repository();
    edit(repo.path(), "packages/apps/bucket/values.yaml", "size: 10Gi", "size: 20Gi");

    let rows = review(repo.path(), &["git:HEAD", "--release-file", SOURCES, "-n", &tenant]);
    assert_eq!(rows.len(), 1, "{rows:?}");
    let row = &rows[0];
    assert_eq!(row["release"].as_str(), Some(format!("{tenant}/bucket").as_str()), "{row}");
    assert_eq!((row["source"].as_str(), row["change"].as_u64()), (Some("package"), Some(1)), "{row}");
    let diff = row["plan"]["changes"][0]["diff"].as_str().unwrap_or_default();
    assert!(diff.contains("host: from-the-cluster.example"), "the Secret's values: {diff}");

    // Offline the Secret is not read: the chart fails on the platform's value, as helm template would.
    let rows = review(repo.path(), &["git:HEAD", "--release-file", SOURCES, "-n", &tenant, "--offline"]);
    let error = rows[0]["error"].as_str().unwrap_or_default();
    assert!(error.contains("_cluster.root-host is the platform's"), "{rows:?}");
}

#[test]
fn the_cozystack_workflows_review_step_reviews_a_pull_request_as_the_platform_installs_it() {
    let wf = cozyhr_e2e::workflow("review-cozystack.yml");
    let step = |name: &str| cozyhr_e2e::workflow_step(&wf, name);
    let script = step("review");
    let env = |k: &str| wf["env"][k].as_str().unwrap_or_default().to_string();

    // Cozystack's repository on origin, with the example platform values where the workflow reads them;
    // a pull request changes the hetzner variant's image tag and a cozy-lib helper.
    let world = tempfile::tempdir().expect("tempdir");
    let (origin, work) = (world.path().join("origin.git"), world.path().join("work"));
    git(world.path(), &["init", "-q", "--bare", "-b", "main", &origin.to_string_lossy()]);
    cozystack_repo::write(&work);
    let platform_values = work.join(env("PLATFORM_VALUES"));
    std::fs::create_dir_all(platform_values.parent().expect("a parent")).expect("mkdir");
    std::fs::copy(cozyhr_e2e::repo().join("examples/ci/cozystack-platform-values.yaml"), &platform_values)
        .expect("copy the example platform values");
    git(&work, &["init", "-q", "-b", "main"]);
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "packages"]);
    git(&work, &["remote", "add", "origin", &origin.to_string_lossy()]);
    git(&work, &["push", "-q", "origin", "main"]);
    git(&work, &["checkout", "-q", "-b", "pull-request"]);
    edit(&work, "packages/system/autoscaler/values-hetzner.yaml", "tag: v1.30.1", "tag: v1.31.0");
    edit(&work, "packages/library/cozy-lib/templates/_tenant.tpl", "cozystack{{- end", "cozystack-platform{{- end");
    git(&work, &["commit", "-q", "-am", "bump"]);
    git(&work, &["fetch", "-q", "origin"]);

    // The step's script as GitHub runs it (bash -e), with the workflow's env, Helm 4 with the plugin and
    // kubectl on PATH.
    cozyhr_e2e::run_workflow_step(&wf, &script, &work, &world.path().join("bin"));
    let md = std::fs::read_to_string(work.join("review.md")).expect("review.md");
    let tenant = env("TENANT");
    // The hetzner release alone of the autoscaler's; both releases that read cozy-lib; no error.
    for row in [
        "| `packages/system/autoscaler` | `cozy-autoscaler-hetzner/autoscaler-hetzner` | 0 | 1 | 0 | 1 image |"
            .to_string(),
        // An application under its ApplicationDefinition's prefix (packages/system/bucket-rd).
        format!("| `packages/apps/bucket` | `{tenant}/bucket-bucket` | 0 | 1 | 0 |"),
        "| `packages/system/operator` | `cozy-system/bucket-operator` | 0 | 1 | 0 |".into(),
    ] {
        assert!(md.contains(&row), "{row} not in:\n{md}");
    }
    assert!(!md.contains("autoscaler-azure") && !md.contains("error: "), "{md}");
    assert!(
        md.contains("image of `Deployment autoscaler-hetzner`, container `autoscaler`: `registry.k8s.io/autoscaler:v1.30.1` → `registry.k8s.io/autoscaler:v1.31.0`"),
        "{md}"
    );
}
