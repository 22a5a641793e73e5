//! `helm cozy review` of a fleet repository (issue 54): the shape Flux recommends, `clusters/<name>/`
//! holding Flux Kustomizations that point at overlays over `apps/base/`, built as kustomize-controller
//! builds them. The fixture is the project's own: two clusters (staging, production), a chart from the
//! test ground's Helm repository (its values from a `configMapGenerator` whose hashed name reaches
//! `valuesFrom` through a `nameReference` configuration, as Flux's docs show) and one from its OCI
//! registry (an OCIRepository), `postBuild` substitution from a ConfigMap of the cluster's own build, and
//! an ArtifactGenerator's artifact as a Kustomization's source.
//!
//! Against the real kustomize-controller (v1.9.5: the fleet suites run on the Flux 2.9 set), source-watcher
//! and helm-controller: what review renders of the staging cluster equals what they apply, object for
//! object. Then pull requests, each reviewed exactly, and bad input, one line each.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use cozyhr_e2e::{
    Chart, Helm, apply, condition, cozy_home, eventually, get_json, helm_get, helm_repo_url, kubectl, namespace,
    objects, push_dir_to_git, run, wait_hr_ready,
};
use serde_json::Value;

const READY_TIMEOUT: Duration = Duration::from_secs(240);
/// The value of the staging cluster's Secret, which no review prints.
const SECRET: &str = "s3cret-token-of-staging";

/// The chart of the `web` release: a Deployment and, from 1.1.0, a Service.
fn web_chart(name: &str, version: &str) -> Chart {
    let chart = Chart::new(
        name,
        version,
        "replicas: 1\nimage: nginx:1.27\ngreeting: hello\n",
        &[(
            "deployment.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n  labels:\n    app.kubernetes.io/version: {{ .Chart.Version | quote }}\nspec:\n  replicas: {{ .Values.replicas }}\n  selector:\n    matchLabels: {app: {{ .Release.Name }}}\n  template:\n    metadata:\n      labels: {app: {{ .Release.Name }}}\n    spec:\n      containers:\n      - name: web\n        image: {{ .Values.image }}\n        env:\n        - name: GREETING\n          value: {{ .Values.greeting | quote }}\n",
        )],
    );
    if version != "1.0.0" {
        chart.write(
            "templates/service.yaml",
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  selector: {app: {{ .Release.Name }}}\n  ports:\n  - port: 80\n",
        );
    }
    chart
}

/// The chart of the `cache` release, from the OCI registry.
fn cache_chart(name: &str) -> Chart {
    Chart::new(
        name,
        "1.0.0",
        "replicas: 1\n",
        &[(
            "statefulset.yaml",
            "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  serviceName: {{ .Release.Name }}\n  replicas: {{ .Values.replicas }}\n  selector:\n    matchLabels: {app: {{ .Release.Name }}}\n  template:\n    metadata:\n      labels: {app: {{ .Release.Name }}}\n    spec:\n      containers:\n      - name: cache\n        image: redis:7.2\n",
        )],
    )
}

/// A fleet repository in a work tree of its own, pushed to the test ground's Git server.
struct Fleet {
    dir: tempfile::TempDir,
    /// The namespace of its Flux objects (`flux-system` in a real cluster; one per test here).
    ns: String,
    /// The namespace its apps are released in.
    apps: String,
    repo: String,
    web: String,
}

impl Fleet {
    /// Publishes the charts (web 1.0.0 and 1.1.0, cache 1.0.0) and writes and pushes the repository:
    /// a first commit with nothing of it, then the fleet.
    fn new() -> Fleet {
        let ns = namespace("fleet");
        let id = ns.trim_start_matches("fleet-").to_string();
        let (web, cache) = (format!("fleet-web-{id}"), format!("fleet-cache-{id}"));
        web_chart(&web, "1.0.0").publish_to_helm_repo();
        web_chart(&web, "1.1.0").publish_to_helm_repo();
        let cache_url = cache_chart(&cache).push_oci();
        let dir = tempfile::Builder::new().prefix("cozyhr-fleet-").tempdir().expect("tempdir");
        let fleet = Fleet { dir, apps: format!("{ns}-apps"), repo: format!("fleet-{ns}"), ns, web };
        fleet.write("README.md", "A fleet repository.\n");
        push_dir_to_git(fleet.path(), &fleet.repo);
        fleet.write_fleet(&cache_url);
        fleet.push();
        fleet
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.path().join(rel);
        std::fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }

    fn push(&self) -> String {
        push_dir_to_git(self.path(), &self.repo)
    }

    /// Puts the work tree back as the last commit has it.
    fn reset(&self) {
        git(self.path(), &["checkout", "-q", "--", "."]);
        git(self.path(), &["clean", "-qfd"]);
    }

    fn write_fleet(&self, cache_url: &str) {
        let (ns, apps, web) = (&self.ns, &self.apps, &self.web);
        let git_url = format!("{}/{}.git", std::env::var("COZYHR_GIT_URL").expect("COZYHR_GIT_URL"), self.repo);
        for cluster in ["staging", "production"] {
            let replicas = if cluster == "staging" { 1 } else { 2 };
            self.write(
                &format!("clusters/{cluster}/flux-system/gotk-sync.yaml"),
                &format!(
                    "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-system\n  namespace: {ns}\nspec:\n  interval: 1m\n  ref:\n    branch: main\n  url: {git_url}\n---\n\
                     apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: flux-system\n  namespace: {ns}\nspec:\n  interval: 10m\n  path: ./clusters/{cluster}\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n"
                ),
            );
            self.write(
                &format!("clusters/{cluster}/flux-system/kustomization.yaml"),
                "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- gotk-sync.yaml\n",
            );
            self.write(
                &format!("clusters/{cluster}/cluster-vars.yaml"),
                &format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cluster-vars\n  namespace: {ns}\ndata:\n  cluster_name: {cluster}\n  cache_replicas: \"{replicas}\"\n"),
            );
            self.write(
                &format!("clusters/{cluster}/infrastructure.yaml"),
                &format!("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: infrastructure\n  namespace: {ns}\nspec:\n  interval: 10m\n  path: ./infrastructure\n  prune: true\n  targetNamespace: {ns}\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n"),
            );
            self.write(
                &format!("clusters/{cluster}/apps.yaml"),
                &format!("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n  namespace: {ns}\nspec:\n  interval: 10m\n  dependsOn:\n  - name: infrastructure\n  path: ./apps/{cluster}\n  prune: true\n  targetNamespace: {apps}\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n  postBuild:\n    substitute:\n      domain: {cluster}.example.com\n    substituteFrom:\n    - kind: ConfigMap\n      name: cluster-vars\n    - kind: Secret\n      name: cluster-secrets\n      optional: true\n"),
            );
            self.write(
                &format!("apps/{cluster}/kustomization.yaml"),
                "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- ../base/web\n- ../base/cache\n- ../base/tools\npatches:\n- path: web-values.yaml\n  target:\n    kind: HelmRelease\n    name: web\n",
            );
            self.write(
                &format!("apps/{cluster}/web-values.yaml"),
                &format!("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: web\nspec:\n  values:\n    image: nginx:1.27-{cluster}\n    greeting: hello from ${{cluster_name}} at ${{domain}}\n"),
            );
        }
        // The ArtifactGenerator of the staging cluster: its dashboards, cut out of the repository.
        self.write(
            "clusters/staging/dashboards.yaml",
            &format!("apiVersion: source.extensions.fluxcd.io/v1beta1\nkind: ArtifactGenerator\nmetadata:\n  name: dashboards\n  namespace: {ns}\nspec:\n  sources:\n  - alias: repo\n    kind: GitRepository\n    name: flux-system\n  artifacts:\n  - name: dashboards\n    copy:\n    - from: \"@repo/dashboards/**\"\n      to: \"@artifact/\"\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: dashboards\n  namespace: {ns}\nspec:\n  interval: 10m\n  path: ./\n  prune: true\n  targetNamespace: {ns}\n  sourceRef:\n    kind: ExternalArtifact\n    name: dashboards\n"),
        );
        self.write(
            "dashboards/web.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-dashboard\ndata:\n  panels: \"3\"\n",
        );
        self.write(
            "infrastructure/sources.yaml",
            &format!("apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: charts\nspec:\n  interval: 1m\n  url: {}\n---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata:\n  name: cache\nspec:\n  interval: 1m\n  url: {cache_url}\n  insecure: true\n  ref:\n    semver: \"1.x\"\n  layerSelector:\n    mediaType: application/vnd.cncf.helm.chart.content.v1.tar+gzip\n    operation: copy\n", helm_repo_url()),
        );
        self.write(
            "apps/base/web/namespace.yaml",
            &format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {apps}\n"),
        );
        self.write(
            "apps/base/web/release.yaml",
            &format!("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: web\nspec:\n  interval: 10m\n  install:\n    disableWait: true\n  upgrade:\n    disableWait: true\n  chart:\n    spec:\n      chart: {web}\n      version: \"1.0.0\"\n      sourceRef:\n        kind: HelmRepository\n        name: charts\n        namespace: {ns}\n  valuesFrom:\n  - kind: ConfigMap\n    name: web-values\n"),
        );
        self.write("apps/base/web/values.yaml", "replicas: 2\n");
        self.write(
            "apps/base/web/kustomizeconfig.yaml",
            "nameReference:\n- kind: ConfigMap\n  version: v1\n  fieldSpecs:\n  - path: spec/valuesFrom/name\n    kind: HelmRelease\n",
        );
        self.write(
            "apps/base/web/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- namespace.yaml\n- release.yaml\nconfigMapGenerator:\n- name: web-values\n  files:\n  - values.yaml\nconfigurations:\n- kustomizeconfig.yaml\n",
        );
        self.write(
            "apps/base/cache/release.yaml",
            &format!("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: cache\nspec:\n  interval: 10m\n  install:\n    disableWait: true\n  upgrade:\n    disableWait: true\n  chartRef:\n    kind: OCIRepository\n    name: cache\n    namespace: {ns}\n  values:\n    replicas: ${{cache_replicas}}\n"),
        );
        self.write(
            "apps/base/cache/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- release.yaml\n",
        );
        // A chart of the repository itself, from the cluster's GitRepository.
        self.write("charts/tools/Chart.yaml", "apiVersion: v2\nname: tools\nversion: 0.1.0\n");
        self.write("charts/tools/values.yaml", "level: info\n");
        self.write(
            "charts/tools/templates/configmap.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-settings\ndata:\n  level: {{ .Values.level | quote }}\n",
        );
        self.write(
            "apps/base/tools/release.yaml",
            &format!("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: tools\nspec:\n  interval: 10m\n  chart:\n    spec:\n      chart: ./charts/tools\n      reconcileStrategy: Revision\n      sourceRef:\n        kind: GitRepository\n        name: flux-system\n        namespace: {ns}\n"),
        );
        self.write(
            "apps/base/tools/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- release.yaml\n- artifact-release.yaml\n",
        );
        // The same chart cut out of the repository by an ArtifactGenerator, as a platform delivers its
        // charts: a HelmRelease whose chartRef is that ExternalArtifact.
        self.write(
            "infrastructure/charts.yaml",
            "apiVersion: source.extensions.fluxcd.io/v1beta1\nkind: ArtifactGenerator\nmetadata:\n  name: charts\nspec:\n  sources:\n  - alias: repo\n    kind: GitRepository\n    name: flux-system\n  artifacts:\n  - name: tools-chart\n    copy:\n    - from: \"@repo/charts/tools/**\"\n      to: \"@artifact/tools/\"\n",
        );
        self.write(
            "apps/base/tools/artifact-release.yaml",
            &format!("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: tools-artifact\nspec:\n  interval: 10m\n  chartRef:\n    kind: ExternalArtifact\n    name: tools-chart\n    namespace: {ns}\n  values:\n    level: warn\n"),
        );
        // A Secret of the staging cluster, for its apps' substitution (optional there); masked in reviews.
        self.write(
            "clusters/staging/cluster-secrets.yaml",
            &format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-secrets\n  namespace: {ns}\nstringData:\n  api_token: {SECRET}\n"),
        );
    }

    /// `helm cozy review ARGS -o json` in the work tree: the rows, stderr and the exit code.
    fn review(&self, args: &[&str]) -> (Vec<Value>, String, Option<i32>) {
        self.review_with(args, |_| {})
    }

    /// As [`Fleet::review`], the command set up by `with` first.
    fn review_with(&self, args: &[&str], with: impl FnOnce(&mut Command)) -> (Vec<Value>, String, Option<i32>) {
        let mut c = cozy_home(Helm::V4).command();
        with(&mut c);
        c.current_dir(self.path()).args(["cozy", "review"]).args(args).args(["-o", "json"]);
        let out = run(c);
        let rows: Vec<Value> = serde_json::from_str(&out.stdout)
            .unwrap_or_else(|e| panic!("review printed no JSON ({e}):\n{}\nstderr:\n{}", out.stdout, out.stderr));
        (rows, out.stderr, out.code)
    }
}

fn git(dir: &Path, args: &[&str]) {
    let mut c = Command::new("git");
    c.arg("-C").arg(dir).args(["-c", "user.name=e2e", "-c", "user.email=e2e@cozyhr.invalid"]).args(args);
    run(c).ok();
}

/// A row's key: (cluster, source, release or kustomization, changed).
fn key(row: &Value) -> (String, String, String, bool) {
    let s = |k: &str| row[k].as_str().unwrap_or("-").to_string();
    let who = if row["source"] == "kustomization" { s("kustomization") } else { s("release") };
    (s("cluster"), s("source"), who, row["changed"].as_bool().unwrap_or(false))
}

/// The objects a row's plan adds, read from their whole diffs (`+ ` lines), by `Kind namespace/name`.
fn added(row: &Value) -> BTreeMap<String, Value> {
    let mut yaml = String::new();
    for change in row["plan"]["changes"].as_array().into_iter().flatten().filter(|c| c["action"] == "add") {
        yaml.push_str("---\n");
        for line in change["diff"].as_str().unwrap_or_default().lines() {
            yaml.push_str(line.strip_prefix("+ ").unwrap_or_else(|| panic!("not an added line: {line:?}")));
            yaml.push('\n');
        }
    }
    by_kind_and_name(objects(&yaml))
}

fn by_kind_and_name(objs: BTreeMap<String, Value>) -> BTreeMap<String, Value> {
    objs.into_values()
        .map(|v| {
            let k = format!(
                "{} {}",
                v["kind"].as_str().unwrap_or_default(),
                v.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default()
            );
            (k, v)
        })
        .collect()
}

/// The objects without their namespace (Helm stores a release's manifest without the namespaces it
/// installs them in).
fn without_namespaces(objs: BTreeMap<String, Value>) -> BTreeMap<String, Value> {
    objs.into_iter()
        .map(|(k, mut v)| {
            if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
                m.remove("namespace");
            }
            (k, v)
        })
        .collect()
}

/// Whether every field of `ours` is in `live` with the same value (`live` adds defaults and status).
fn within(ours: &Value, live: &Value, at: &str) -> Result<(), String> {
    match (ours, live) {
        (Value::Object(a), Value::Object(b)) => {
            a.iter().try_for_each(|(k, v)| within(v, b.get(k).unwrap_or(&Value::Null), &format!("{at}.{k}")))
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            a.iter().zip(b).enumerate().try_for_each(|(i, (x, y))| within(x, y, &format!("{at}[{i}]")))
        }
        (a, b) if a == b => Ok(()),
        (a, b) => Err(format!("{at}: review has {a}, the cluster {b}")),
    }
}

#[test]
fn review_renders_what_kustomize_controller_and_helm_controller_apply() {
    assert!(
        std::env::var("KUSTOMIZE_CONTROLLER").is_ok_and(|v| !v.is_empty()),
        "$KUSTOMIZE_CONTROLLER is not set: the fleet suites need kustomize-controller, which the test ground runs with the Flux 2.9 set: scripts/cluster.sh up --flux 2.9"
    );
    let fleet = Fleet::new();
    let (ns, apps) = (&fleet.ns, &fleet.apps);
    // The staging cluster, bootstrapped as `flux bootstrap` leaves it: its GitRepository and entry.
    apply(&std::fs::read_to_string(fleet.path().join("clusters/staging/flux-system/gotk-sync.yaml")).expect("read"));
    for k in ["flux-system", "infrastructure", "apps", "dashboards"] {
        eventually(&format!("Kustomization {ns}/{k} to be Ready"), READY_TIMEOUT, || {
            let o = get_json("kustomization.kustomize.toolkit.fluxcd.io", ns, k).ok_or("not there yet")?;
            match condition(&o, "Ready") {
                Some((s, _, _)) if s == "True" => Ok(()),
                other => Err(format!("{other:?}")),
            }
        });
    }
    for hr in ["web", "cache", "tools", "tools-artifact"] {
        wait_hr_ready(apps, hr, READY_TIMEOUT);
    }

    // Everything of the fleet is added since the first commit; the cluster is the fleet's staging.
    let (rows, stderr, _) = fleet.review(&["git:HEAD~1"]);
    // The kustomize binary (v5.8.1, as kustomize-controller pins it) builds the same as kubectl's.
    let kustomize = std::env::var("KUSTOMIZE").expect("KUSTOMIZE: run with eval \"$(scripts/cluster.sh env)\"");
    let (by_kustomize, _, _) = fleet.review_with(&["git:HEAD~1"], |c| _ = c.env("COZYHR_KUSTOMIZE", &kustomize));
    assert_eq!(by_kustomize, rows, "the same review built by {kustomize}");
    assert!(stderr.contains("2 clusters; 7 of 7 Kustomizations"), "{stderr}");
    assert!(stderr.contains("8 of 8 HelmReleases rendered"), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "clusters/staging is the cluster at {}",
            std::env::var("COZYHR_APISERVER_URL").unwrap_or_default()
        )),
        "{stderr}"
    );
    assert!(!serde_json::to_string(&rows).expect("json").contains(SECRET), "the Secret's value is masked");
    let staging: Vec<&Value> = rows.iter().filter(|r| r["cluster"] == "clusters/staging").collect();
    let kustomizations: BTreeSet<String> =
        staging.iter().filter(|r| r["source"] == "kustomization").map(|r| key(r).2).collect();
    let expected: BTreeSet<String> =
        ["flux-system", "infrastructure", "apps", "dashboards"].iter().map(|k| format!("{ns}/{k}")).collect();
    assert_eq!(kustomizations, expected);

    // Each Kustomization: the objects review builds are those kustomize-controller applied (its
    // inventory), each field as the cluster has it.
    for row in staging.iter().filter(|r| r["source"] == "kustomization") {
        let (_, _, k, _) = key(row);
        let name = k.rsplit('/').next().expect("ns/name");
        let live_k = get_json("kustomization.kustomize.toolkit.fluxcd.io", ns, name).expect("the Kustomization");
        let inventory: BTreeSet<String> = live_k
            .pointer("/status/inventory/entries")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|e| e["id"].as_str())
            .map(|id| {
                let parts: Vec<&str> = id.split('_').collect();
                format!("{} {}", parts[3], parts[1])
            })
            .collect();
        let ours = added(row);
        assert_eq!(
            ours.keys().cloned().collect::<BTreeSet<_>>(),
            inventory,
            "Kustomization {k}: review's objects and kustomize-controller's inventory"
        );
        for (id, object) in &ours {
            let (kind, obj_name) = id.split_once(' ').expect("kind name");
            let group = object["apiVersion"].as_str().unwrap_or_default().split_once('/').map(|(g, _)| g).unwrap_or("");
            let resource = if group.is_empty() { kind.to_string() } else { format!("{kind}.{group}") };
            let namespace = object.pointer("/metadata/namespace").and_then(Value::as_str);
            let live = kubectl_get(&resource, namespace, obj_name);
            let mut object = object.clone();
            if kind == "Secret" {
                // Masked in a review: its keys are there, not its values.
                let masked = object.as_object_mut().and_then(|o| o.remove("data")).expect("a Secret's data");
                let live_keys: BTreeSet<&String> = live["data"].as_object().expect("live data").keys().collect();
                assert_eq!(masked.as_object().expect("data").keys().collect::<BTreeSet<_>>(), live_keys);
            }
            within(&object, &live, &format!("{k}: {id}")).unwrap_or_else(|e| panic!("{e}"));
        }
    }

    // Each release: the objects review renders are those helm-controller installed.
    for release in ["web", "cache", "tools", "tools-artifact"] {
        let row = staging
            .iter()
            .find(|r| r["name"] == release && r["source"] == "fleet")
            .unwrap_or_else(|| panic!("no row of {release}: {rows:#?}"));
        let ours = without_namespaces(added(row));
        let stored =
            without_namespaces(by_kind_and_name(objects(&helm_get(&["manifest", release, "-n", apps]).stdout)));
        cozyhr_e2e::assert_same_objects(&ours, &stored, release);
    }

    // A substitution variable with no value and no default fails review's build as it fails
    // kustomize-controller's, with the same words.
    let patch = fleet.path().join("apps/staging/web-values.yaml");
    fleet.write(
        "apps/staging/web-values.yaml",
        &std::fs::read_to_string(&patch).expect("read").replace("${domain}", "${region}"),
    );
    let (rows, _, _) = fleet.review(&["git:HEAD"]);
    let ours = rows
        .iter()
        .find(|r| {
            r["cluster"] == "clusters/staging"
                && r["kustomization"] == format!("{ns}/apps")
                && r["source"] == "kustomization"
        })
        .and_then(|r| r["error"].as_str())
        .unwrap_or_else(|| panic!("no error row of apps: {rows:#?}"))
        .to_string();
    let ours = ours.strip_prefix("the work tree: ").unwrap_or_else(|| panic!("{ours}")).to_string();
    fleet.push();
    let now = format!("reconcile.fluxcd.io/requestedAt={}", std::process::id());
    kubectl(["annotate", "--overwrite", "-n", ns, "gitrepository/flux-system", &now]).ok();
    kubectl(["annotate", "--overwrite", "-n", ns, "kustomization.kustomize.toolkit.fluxcd.io/apps", &now]).ok();
    let theirs = eventually("kustomize-controller to fail the apps build", READY_TIMEOUT, || {
        let o = get_json("kustomization.kustomize.toolkit.fluxcd.io", ns, "apps").ok_or("gone")?;
        match condition(&o, "Ready") {
            Some((s, _, message)) if s == "False" && message.contains("region") => Ok(message),
            other => Err(format!("{other:?}")),
        }
    });
    assert!(theirs.contains(&ours), "kustomize-controller says: {theirs}\nreview says: {ours}");
}

/// The live object (`namespace`: None for a cluster-scoped one).
fn kubectl_get(resource: &str, namespace: Option<&str>, name: &str) -> Value {
    let r = match namespace {
        None => kubectl(["get", resource, name, "-o", "json"]),
        Some(ns) => kubectl(["get", resource, name, "-n", ns, "-o", "json"]),
    };
    assert_eq!(r.code, Some(0), "kubectl get {resource} {name} -n {namespace:?}: {}", r.stderr);
    r.json()
}

#[test]
fn pull_requests_are_reviewed_exactly() {
    let fleet = Fleet::new();
    let (ns, web_chart_name) = (&fleet.ns, &fleet.web);
    let rows_of = |rows: &[Value]| -> BTreeSet<(String, String, String, bool)> { rows.iter().map(key).collect() };
    let web = |cluster: &str, changed: bool| {
        (format!("clusters/{cluster}"), "fleet".to_string(), format!("{}/web", fleet.apps), changed)
    };
    let cache = |cluster: &str, changed: bool| {
        (format!("clusters/{cluster}"), "fleet".to_string(), format!("{}/cache", fleet.apps), changed)
    };
    let k = |cluster: &str, name: &str, changed: bool| {
        (format!("clusters/{cluster}"), "kustomization".to_string(), format!("{ns}/{name}"), changed)
    };

    // A chart version bump in base: both clusters' web releases, with the chart's diff.
    fleet.write(
        "apps/base/web/release.yaml",
        &std::fs::read_to_string(fleet.path().join("apps/base/web/release.yaml"))
            .expect("read")
            .replace("version: \"1.0.0\"", "version: \"1.1.0\""),
    );
    let (rows, stderr, _) = fleet.review(&["git:HEAD"]);
    assert_eq!(
        rows_of(&rows),
        BTreeSet::from([
            web("staging", true),
            web("production", true),
            k("staging", "apps", true),
            k("production", "apps", true)
        ]),
        "{stderr}"
    );
    assert!(
        stderr.contains("2 of 7 Kustomizations") && stderr.contains("2 of 8 HelmReleases rendered, 2 changing"),
        "{stderr}"
    );
    let staging_web = rows.iter().find(|r| key(r) == web("staging", true)).expect("row");
    let kinds: Vec<(&str, &str)> = staging_web["plan"]["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| (c["kind"].as_str().unwrap_or(""), c["action"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(kinds, [("Deployment", "change"), ("Service", "add")], "{staging_web:#}");
    assert_eq!(staging_web["chart"], web_chart_name.as_str());
    fleet.reset();

    // One cluster's values patch: that cluster only.
    fleet.write(
        "apps/staging/web-values.yaml",
        &std::fs::read_to_string(fleet.path().join("apps/staging/web-values.yaml"))
            .expect("read")
            .replace("nginx:1.27-staging", "nginx:1.28-staging"),
    );
    let (rows, stderr, _) = fleet.review(&["git:HEAD"]);
    assert_eq!(rows_of(&rows), BTreeSet::from([web("staging", true), k("staging", "apps", true)]), "{stderr}");
    let images = &rows.iter().find(|r| key(r) == web("staging", true)).expect("row")["images"];
    assert_eq!(images[0]["before"], "nginx:1.27-staging");
    assert_eq!(images[0]["after"], "nginx:1.28-staging");
    fleet.reset();

    // A substitution value: the cluster's variables change what its apps Kustomization applies.
    fleet.write(
        "clusters/production/cluster-vars.yaml",
        &std::fs::read_to_string(fleet.path().join("clusters/production/cluster-vars.yaml"))
            .expect("read")
            .replace("cache_replicas: \"2\"", "cache_replicas: \"3\""),
    );
    let (rows, stderr, _) = fleet.review(&["git:HEAD"]);
    assert_eq!(
        rows_of(&rows),
        BTreeSet::from([
            cache("production", true),
            k("production", "flux-system", true),
            k("production", "apps", true)
        ]),
        "{stderr}"
    );
    fleet.reset();

    // A plain manifest: its object only, no release rendered.
    fleet.write(
        "dashboards/web.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-dashboard\ndata:\n  panels: \"4\"\n",
    );
    let (rows, stderr, _) = fleet.review(&["git:HEAD"]);
    assert_eq!(rows_of(&rows), BTreeSet::from([k("staging", "dashboards", true)]), "{stderr}");
    assert!(stderr.contains("0 of 8 HelmReleases rendered"), "{stderr}");
    fleet.reset();

    // A chart of the repository: its releases in both clusters, no Kustomization built again.
    fleet.write(
        "charts/tools/templates/configmap.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-settings\ndata:\n  level: {{ .Values.level | quote }}\n  format: json\n",
    );
    let (rows, stderr, _) = fleet.review(&["git:HEAD", "--offline"]);
    let tools =
        |cluster: &str| (format!("clusters/{cluster}"), "fleet".to_string(), format!("{}/tools", fleet.apps), true);
    let artifact = |cluster: &str| {
        (format!("clusters/{cluster}"), "fleet".to_string(), format!("{}/tools-artifact", fleet.apps), true)
    };
    assert_eq!(
        rows_of(&rows),
        BTreeSet::from([tools("staging"), tools("production"), artifact("staging"), artifact("production")]),
        "{stderr}"
    );
    assert!(stderr.contains("without a cluster (--offline)") && stderr.contains("0 of 7 Kustomizations"), "{stderr}");
    fleet.reset();

    // A change no build reads: nothing built again, nothing rendered; the apps Kustomizations (which lead
    // to no other Kustomization and hold no object another one reads) not built at all.
    fleet.write("README.md", "A fleet repository, described.\n");
    let (rows, stderr, code) = fleet.review(&["git:HEAD"]);
    assert!(rows.is_empty(), "{rows:#?}");
    assert!(
        stderr.contains("0 of 7 Kustomizations")
            && stderr.contains("2 not built at all")
            && stderr.contains("no HelmRelease in what was built"),
        "{stderr}"
    );
    assert_eq!(code, Some(0));
    fleet.reset();
}

#[test]
fn bad_input_is_one_line_and_the_other_rows_still_shown() {
    let fleet = Fleet::new();
    let ns = &fleet.ns;
    // A Kustomization whose path is missing.
    fleet.write(
        "clusters/production/apps.yaml",
        &std::fs::read_to_string(fleet.path().join("clusters/production/apps.yaml"))
            .expect("read")
            .replace("./apps/production", "./apps/prod"),
    );
    // A substitution variable with no value and no default.
    fleet.write(
        "apps/staging/web-values.yaml",
        &std::fs::read_to_string(fleet.path().join("apps/staging/web-values.yaml"))
            .expect("read")
            .replace("${domain}", "${region}"),
    );
    let (rows, stderr, code) = fleet.review(&["git:HEAD"]);
    let error = |cluster: &str, k: &str| -> String {
        rows.iter()
            .find(|r| {
                r["cluster"] == cluster && r["kustomization"] == format!("{ns}/{k}") && r["source"] == "kustomization"
            })
            .and_then(|r| r["error"].as_str())
            .unwrap_or_else(|| panic!("no error row of {k} in {cluster}: {rows:#?}"))
            .to_string()
    };
    assert_eq!(error("clusters/production", "apps"), "the work tree: kustomization path not found: apps/prod");
    assert_eq!(
        error("clusters/staging", "apps"),
        "the work tree: post build failed for 'HelmRelease.v2.helm.toolkit.fluxcd.io/web': envsubst error: variable substitution failed: variable not set (strict mode): \"region\""
    );
    assert_eq!(code, Some(1));
    assert!(stderr.lines().last().is_some_and(|l| l.starts_with("Error: ") || l.starts_with("error: ")), "{stderr}");
    fleet.reset();

    // A chart that cannot be fetched: that release's row; the other cluster's row still rendered.
    fleet.write("apps/staging/kustomization.yaml", &std::fs::read_to_string(fleet.path().join("apps/staging/kustomization.yaml")).expect("read").replace("- path: web-values.yaml", "- patch: '[{\"op\": \"replace\", \"path\": \"/spec/chart/spec/version\", \"value\": \"9.9.9\"}]'\n  target:\n    kind: HelmRelease\n    name: web\n- path: web-values.yaml"));
    fleet.write(
        "apps/production/web-values.yaml",
        &std::fs::read_to_string(fleet.path().join("apps/production/web-values.yaml"))
            .expect("read")
            .replace("nginx:1.27-production", "nginx:1.28-production"),
    );
    let (rows, _, _) = fleet.review(&["git:HEAD"]);
    let web = |cluster: &str| {
        rows.iter()
            .find(|r| r["cluster"] == cluster && r["name"] == "web")
            .unwrap_or_else(|| panic!("no web row in {cluster}: {rows:#?}"))
    };
    let why = web("clusters/staging")["error"].as_str().unwrap_or_default().to_string();
    assert!(why.contains("9.9.9") && !why.contains('\n'), "{why}");
    assert_eq!(web("clusters/production")["changed"], true);
}

/// The job `review`'s script of the GitLab CI recipe, its lines joined as the runner runs them.
fn gitlab_script(ci: &Value) -> String {
    let lines = ci["review"]["script"].as_array().cloned().unwrap_or_default();
    lines.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("\n")
}

#[test]
fn the_fleet_ci_recipes_review_a_pull_request() {
    let fleet = Fleet::new();
    // As the CI checkout leaves a pull request: the base branch on origin, the head checked out.
    let origin = format!("{}/{}.git", std::env::var("COZYHR_GIT_DIR").expect("COZYHR_GIT_DIR"), fleet.repo);
    git(fleet.path(), &["remote", "add", "origin", &origin]);
    git(fleet.path(), &["fetch", "-q", "origin"]);
    git(fleet.path(), &["checkout", "-q", "-b", "pull-request"]);
    let patch = fleet.path().join("apps/staging/web-values.yaml");
    fleet.write(
        "apps/staging/web-values.yaml",
        &std::fs::read_to_string(&patch).expect("read").replace("nginx:1.27-staging", "nginx:1.28-staging"),
    );
    git(fleet.path(), &["commit", "-qam", "staging: nginx 1.28"]);
    let expect = |md: &str, runner: &str| {
        assert!(md.starts_with("#### `helm cozy review`: "), "{runner}: {md}");
        assert!(md.contains(&format!("`{}/web in clusters/staging`", fleet.apps)), "{runner}: {md}");
        assert!(!md.contains("in clusters/production`"), "{runner}: only staging changes: {md}");
        assert!(
            md.contains("`nginx 1.27-staging → 1.28-staging`") || md.contains("`nginx:1.28-staging`"),
            "{runner}: {md}"
        );
    };

    // GitHub Actions: the `review` step, as a runner runs it.
    let wf = cozyhr_e2e::workflow("review-fleet.yml");
    let script = cozyhr_e2e::workflow_step(&wf, "review");
    assert!(
        script.contains("helm cozy review \"git:origin/$GITHUB_BASE_REF...HEAD\" --offline -o markdown"),
        "{script}"
    );
    let bin = tempfile::tempdir().expect("tempdir");
    cozyhr_e2e::run_workflow_step(&wf, &script, fleet.path(), &bin.path().join("github"));
    expect(&std::fs::read_to_string(fleet.path().join("review.md")).expect("review.md"), "GitHub Actions");
    std::fs::remove_file(fleet.path().join("review.md")).expect("rm");

    // GitLab CI: the job's script, its lines in one shell with the merge request's variables.
    let ci = cozyhr_e2e::workflow("review-fleet.gitlab-ci.yml");
    let script = gitlab_script(&ci);
    assert!(script.contains("git:origin/$CI_MERGE_REQUEST_TARGET_BRANCH_NAME...HEAD"), "{script}");
    let gitlab = bin.path().join("gitlab");
    std::fs::create_dir_all(&gitlab).expect("mkdir");
    std::os::unix::fs::symlink(&cozyhr_e2e::env().helm4, gitlab.join("helm")).expect("link helm");
    std::os::unix::fs::symlink(&cozyhr_e2e::env().kubectl, gitlab.join("kubectl")).expect("link kubectl");
    let mut sh = Command::new("bash");
    sh.args(["-eo", "pipefail", "-c", &script]).current_dir(fleet.path());
    for (k, v) in cozy_home(Helm::V4).command().get_envs() {
        if let Some(v) = v {
            sh.env(k, v);
        }
    }
    sh.env("PATH", format!("{}:{}", gitlab.display(), std::env::var("PATH").unwrap_or_default()));
    sh.env("CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "main");
    for (k, v) in ci["variables"].as_object().cloned().unwrap_or_default() {
        sh.env(k, v.as_str().unwrap_or_default());
    }
    run(sh).ok();
    expect(&std::fs::read_to_string(fleet.path().join("review.md")).expect("review.md"), "GitLab CI");
}

/// Builds kept from one run to the next: the same review run again gives the same rows and asks kustomize
/// only for the build that holds a Secret (the staging cluster's entry: never kept).
#[test]
fn a_review_run_again_builds_only_what_was_not_kept() {
    let fleet = Fleet::new();
    fleet.write(
        "apps/production/web-values.yaml",
        &std::fs::read_to_string(fleet.path().join("apps/production/web-values.yaml"))
            .expect("read")
            .replace("nginx:1.27-production", "nginx:1.28-production"),
    );
    // kustomize through a wrapper that writes down what it is asked to build (the wrapper is part of what
    // names a kept build, so both runs use the same one).
    let wrapper = tempfile::tempdir().expect("tempdir");
    let (kustomize, asked) = (wrapper.path().join("kustomize"), wrapper.path().join("asked"));
    let real = std::env::var("KUSTOMIZE").expect("KUSTOMIZE: run with eval \"$(scripts/cluster.sh env)\"");
    std::fs::write(&kustomize, format!("#!/bin/sh\necho \"$*\" >> '{}'\nexec '{real}' \"$@\"\n", asked.display()))
        .expect("write");
    std::fs::set_permissions(&kustomize, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let review = || fleet.review_with(&["git:HEAD", "--offline"], |c| _ = c.env("COZYHR_KUSTOMIZE", &kustomize));

    let (first, stderr, code) = review();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(first.iter().any(|r| r["cluster"] == "clusters/production" && r["changed"] == true), "{first:#?}");
    let built_first = std::fs::read_to_string(&asked).expect("kustomize was asked");
    std::fs::remove_file(&asked).expect("rm");

    let (again, stderr, code) = review();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(again, first, "{stderr}");
    let built_again = std::fs::read_to_string(&asked).unwrap_or_default();
    let dirs: BTreeSet<&str> = built_again.lines().filter_map(|l| l.split_whitespace().last()).collect();
    assert!(
        !dirs.is_empty() && dirs.iter().all(|d| d.ends_with("/clusters/staging")),
        "built again: {built_again}\nbuilt the first time: {built_first}"
    );
    assert!(built_first.lines().count() > built_again.lines().count(), "{built_first}");
}
