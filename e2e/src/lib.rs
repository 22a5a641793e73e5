//! Support for the end-to-end tests: the environment written by `scripts/cluster.sh`, running the real
//! binaries (kubectl with plugin dispatch, Helm 3 and Helm 4), test namespaces and charts, and
//! publishing a chart as an ExternalArtifact for the real helm-controller.
//!
//! Every prerequisite that is missing is a failure whose message says how to get it; nothing skips.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Paths and URLs of the running local control plane (`eval "$(scripts/cluster.sh env)"`).
#[derive(Debug, Clone)]
pub struct Env {
    pub kubeconfig: PathBuf,
    pub kubectl: PathBuf,
    pub helm3: PathBuf,
    pub helm4: PathBuf,
    pub krew: PathBuf,
    pub artifact_dir: PathBuf,
    pub artifact_url: String,
    pub apiserver_url: String,
    /// Directory holding the built `kubectl-cozyhr` and `helm-cozy`.
    pub bin_dir: PathBuf,
    pub repo: PathBuf,
}

fn need(var: &str) -> String {
    match std::env::var(var) {
        Ok(v) if !v.is_empty() => v,
        _ => panic!(
            "${var} is not set: the end-to-end tests need the local control plane. Run `scripts/test.sh`, or \
             `scripts/cluster.sh up && eval \"$(scripts/cluster.sh env)\"` and then `cargo test -p cozyhr-e2e`"
        ),
    }
}

/// The environment, read once. Panics (fails the test) with instructions when the cluster is not up.
pub fn env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| {
        let repo = repo();
        let bin_dir = bin_dir();
        let e = Env {
            kubeconfig: need("KUBECONFIG").into(),
            kubectl: need("KUBECTL").into(),
            helm3: need("HELM3").into(),
            helm4: need("HELM4").into(),
            krew: need("KREW").into(),
            artifact_dir: need("COZYHR_ARTIFACT_DIR").into(),
            artifact_url: need("COZYHR_ARTIFACT_URL"),
            apiserver_url: need("COZYHR_APISERVER_URL"),
            bin_dir,
            repo,
        };
        let probe = Command::new(&e.kubectl).args(["get", "--raw", "/readyz"]).env("KUBECONFIG", &e.kubeconfig).output();
        match probe {
            Ok(o) if o.status.success() => {}
            _ => panic!(
                "the local cluster at {} does not answer: run `scripts/cluster.sh up` (logs: scripts/cluster.sh status)",
                e.apiserver_url
            ),
        }
        e
    })
}

/// The repository checkout.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("e2e/ has a parent").to_path_buf()
}

/// The directory of the built `kubectl-cozyhr` and `helm-cozy` (`COZYHR_BIN_DIR`, else `shipped` in
/// `CARGO_TARGET_DIR` or target/, where scripts/build.sh puts them); fails saying how to build them when
/// they are missing. Needs no cluster.
pub fn bin_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| repo().join("target"));
    let dir = std::env::var_os("COZYHR_BIN_DIR").map(PathBuf::from).unwrap_or_else(|| target.join("shipped"));
    for b in ["kubectl-cozyhr", "helm-cozy"] {
        assert!(
            dir.join(b).is_file(),
            "{} is missing: build the binaries first (scripts/build.sh), or set COZYHR_BIN_DIR",
            dir.join(b).display()
        );
    }
    dir
}

/// The result of running a program, with the helpers assertions need.
#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub line: String,
}

impl Run {
    fn from(line: String, o: Output) -> Self {
        Run {
            code: o.status.code(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
            line,
        }
    }

    /// Asserts exit 0 and returns self.
    #[track_caller]
    pub fn ok(self) -> Self {
        assert_eq!(self.code, Some(0), "`{}` failed\nstdout:\n{}\nstderr:\n{}", self.line, self.stdout, self.stderr);
        self
    }

    /// Asserts the given exit code and returns self.
    #[track_caller]
    pub fn code(self, code: i32) -> Self {
        assert_eq!(
            self.code,
            Some(code),
            "`{}` exited {:?}, expected {code}\nstdout:\n{}\nstderr:\n{}",
            self.line,
            self.code,
            self.stdout,
            self.stderr
        );
        self
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("`{}` did not print JSON: {e}\n{}", self.line, self.stdout))
    }
}

/// A command with the test environment: KUBECONFIG, and PATH starting with the built binaries and the
/// directory of the pinned kubectl (so that kubectl's plugin dispatch finds `kubectl-cozyhr`).
pub fn command(program: impl AsRef<OsStr>) -> Command {
    let e = env();
    let mut c = Command::new(program);
    let kubectl_dir = plugin_path_dir();
    let path = std::env::join_paths(
        [e.bin_dir.clone(), kubectl_dir.clone()]
            .into_iter()
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .expect("PATH is joinable");
    c.env("KUBECONFIG", &e.kubeconfig).env("PATH", path).env("NO_COLOR", "1").stdin(Stdio::null());
    c
}

/// A directory with `kubectl` linked to the pinned kubectl, so that child processes that look kubectl up
/// on PATH get the same one.
fn plugin_path_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let e = env();
        let dir = scratch().join(format!("path-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create PATH dir");
        let link = dir.join("kubectl");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&e.kubectl, &link).expect("link kubectl");
        dir
    })
    .clone()
}

/// Where the tests keep what lives as long as a test process (PATH shims, the Helm homes in statics, which
/// are never dropped) or what a killed process leaves behind: `$COZYHR_RUN/scratch`, removed with the
/// run by `scripts/cluster.sh down`, so that nothing of a test run stays in the system's temp directory.
pub fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = PathBuf::from(need("COZYHR_RUN")).join("scratch");
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
        dir
    })
}

/// Runs a command to completion and captures its output.
pub fn run(mut c: Command) -> Run {
    let line = format!(
        "{} {}",
        c.get_program().to_string_lossy(),
        c.get_args().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ")
    );
    let out = c.output().unwrap_or_else(|e| panic!("cannot run `{line}`: {e}"));
    Run::from(line, out)
}

/// The local OCI registry, `127.0.0.1:PORT` (plain HTTP).
pub fn registry() -> String {
    need_var("COZYHR_REGISTRY", "scripts/cluster.sh up")
}

/// The local Helm repository's URL (an HTTP server with an index.yaml).
pub fn helm_repo_url() -> String {
    need_var("COZYHR_HELM_REPO_URL", "scripts/cluster.sh up")
}

/// The local private Helm repository's URL: the artifact server's `/private/helm-repo`, behind HTTP Basic
/// auth ([`private_helm_repo_credentials`]).
pub fn private_helm_repo_url() -> String {
    need_var("COZYHR_PRIVATE_HELM_REPO_URL", "scripts/cluster.sh up")
}

/// The user and password the private Helm repository asks for (test-ground-only, made by
/// `scripts/cluster.sh up`).
pub fn private_helm_repo_credentials() -> (String, String) {
    (
        need_var("COZYHR_PRIVATE_HELM_REPO_USER", "scripts/cluster.sh up"),
        need_var("COZYHR_PRIVATE_HELM_REPO_PASSWORD", "scripts/cluster.sh up"),
    )
}

/// A Secret `NAME-auth` (type Opaque, keys `username` and `password`, as a HelmRepository's `secretRef`
/// reads them) and HelmRepository `name` in `namespace` that reads the private Helm repository with them,
/// as one YAML stream for [`apply`]. [`private_helm_repository`] gives it the right credentials.
pub fn helm_repository_with_auth(namespace: &str, name: &str, username: &str, password: &str) -> String {
    // JSON strings are YAML scalars: whatever a test passes stays one value.
    let quote = |v: &str| serde_json::to_string(v).expect("a string is JSON");
    format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}-auth\n  namespace: {namespace}\ntype: Opaque\nstringData:\n\
         \x20 username: {}\n  password: {}\n---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n\
         \x20 name: {name}\n  namespace: {namespace}\nspec:\n  interval: 1h\n  url: {}\n  secretRef:\n    name: {name}-auth\n",
        quote(username),
        quote(password),
        private_helm_repo_url()
    )
}

/// [`helm_repository_with_auth`] with the private Helm repository's own user and password.
pub fn private_helm_repository(namespace: &str, name: &str) -> String {
    let (username, password) = private_helm_repo_credentials();
    helm_repository_with_auth(namespace, name, &username, &password)
}

/// The URL of the test ground's HTTPS Helm repository, which serves clients with a certificate of its own
/// authority only (`scripts/cluster.sh up`).
pub fn tls_helm_repo_url() -> String {
    need_var("COZYHR_TLS_HELM_REPO_URL", "scripts/cluster.sh up")
}

/// The HTTPS Helm repository's authority, client certificate and key: `(ca.crt, client.crt, client.key)`
/// paths (test-ground-only, made by `scripts/cluster.sh up`).
pub fn tls_helm_repo_pki() -> (PathBuf, PathBuf, PathBuf) {
    let dir = PathBuf::from(need_var("COZYHR_TLS_HELM_REPO_PKI", "scripts/cluster.sh up"));
    (dir.join("ca.crt"), dir.join("admin.crt"), dir.join("admin.key"))
}

/// A Secret `NAME-tls` (type kubernetes.io/tls with `ca.crt`, as a HelmRepository's `certSecretRef`
/// reads it) and HelmRepository `name` in `namespace` that reads the HTTPS Helm repository with it.
pub fn tls_helm_repository(namespace: &str, name: &str) -> String {
    use base64::Engine as _;
    let (ca, cert, key) = tls_helm_repo_pki();
    let b64 = |p: &Path| base64::engine::general_purpose::STANDARD.encode(std::fs::read(p).expect("the test PKI"));
    format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}-tls\n  namespace: {namespace}\ntype: kubernetes.io/tls\ndata:\n\
         \x20 ca.crt: {}\n  tls.crt: {}\n  tls.key: {}\n---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n\
         \x20 name: {name}\n  namespace: {namespace}\nspec:\n  interval: 1h\n  url: {}\n  certSecretRef:\n    name: {name}-tls\n",
        b64(&ca),
        b64(&cert),
        b64(&key),
        tls_helm_repo_url()
    )
}

fn need_var(var: &str, how: &str) -> String {
    env();
    match std::env::var(var) {
        Ok(v) if !v.is_empty() => v,
        _ => panic!("${var} is not set: run `{how}` and `eval \"$(scripts/cluster.sh env)\"` (or scripts/test.sh)"),
    }
}

/// The tenant cluster's kubeconfig (`scripts/cluster.sh up --tenant`): a second API server with its own
/// etcd and certificate authority, and no Flux; also in Secret flux-system/tenant-kubeconfig of the first.
pub fn tenant_kubeconfig() -> PathBuf {
    env();
    need_tenant("COZYHR_TENANT_KUBECONFIG").into()
}

/// The tenant cluster's API server URL.
pub fn tenant_url() -> String {
    env();
    need_tenant("COZYHR_TENANT_URL")
}

fn need_tenant(var: &str) -> String {
    match std::env::var(var) {
        Ok(v) if !v.is_empty() => v,
        _ => panic!(
            "${var} is not set: this test needs the second (tenant) control plane. Run `scripts/test.sh`, or \
             `scripts/cluster.sh up --tenant && eval \"$(scripts/cluster.sh env)\"`"
        ),
    }
}

/// `kubectl ARGS...` against the tenant cluster.
pub fn tenant_kubectl<I, S>(args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut c = command(&env().kubectl);
    c.env("KUBECONFIG", tenant_kubeconfig()).args(args);
    run(c)
}

/// `kubectl apply` of `yaml` in the tenant cluster (server-side, as the e2e field manager).
pub fn tenant_apply(yaml: &str) -> Run {
    let kubeconfig = tenant_kubeconfig();
    let kubeconfig = kubeconfig.to_string_lossy();
    let args =
        ["--kubeconfig", &kubeconfig, "apply", "--server-side", "--force-conflicts", "--field-manager=e2e", "-f", "-"];
    kubectl_stdin(&args, yaml).ok()
}

/// `kubectl ARGS...` with the pinned kubectl (plugins dispatched by kubectl itself).
pub fn kubectl<I, S>(args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut c = command(&env().kubectl);
    c.args(args);
    run(c)
}

/// `kubectl ARGS...` with YAML on stdin.
pub fn kubectl_stdin(args: &[&str], stdin: &str) -> Run {
    use std::io::Write;
    let mut c = command(&env().kubectl);
    c.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let line = format!("kubectl {}", args.join(" "));
    let mut child = c.spawn().unwrap_or_else(|e| panic!("cannot run `{line}`: {e}"));
    child.stdin.take().expect("stdin piped").write_all(stdin.as_bytes()).expect("write stdin");
    Run::from(line, child.wait_with_output().expect("wait kubectl"))
}

/// `kubectl apply -f -` of a YAML document (server-side, so re-applies are clean).
pub fn apply(yaml: &str) -> Run {
    kubectl_stdin(&["apply", "--server-side", "--force-conflicts", "--field-manager=e2e", "-f", "-"], yaml).ok()
}

/// The object as JSON, or None when it does not exist.
pub fn get_json(kind: &str, namespace: &str, name: &str) -> Option<Value> {
    let r = kubectl(["-n", namespace, "get", kind, name, "-o", "json"]);
    (r.code == Some(0)).then(|| r.json())
}

/// A fresh namespace with a unique name. Namespaces are never deleted (there is no namespace controller
/// in the local control plane, so deletion would hang); `scripts/cluster.sh down` removes everything.
pub fn namespace(prefix: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let name = format!("{prefix}-{}-{}", std::process::id() % 100000, N.fetch_add(1, Ordering::SeqCst));
    kubectl(["create", "namespace", &name]).ok();
    name
}

/// Polls `check` until it returns Some, or fails the test after `timeout` naming `what` and the last
/// observation. (Tests observe the system from outside; the product itself watches.)
#[track_caller]
pub fn eventually<T>(what: &str, timeout: Duration, mut check: impl FnMut() -> Result<T, String>) -> T {
    let start = Instant::now();
    loop {
        match check() {
            Ok(v) => return v,
            Err(last) if start.elapsed() > timeout => {
                panic!("timed out after {timeout:?} waiting for {what}; last: {last}")
            }
            Err(_) => std::thread::sleep(Duration::from_millis(300)),
        }
    }
}

/// The status of condition `type_` of an object, as (status, reason, message).
pub fn condition(obj: &Value, type_: &str) -> Option<(String, String, String)> {
    obj.pointer("/status/conditions")?.as_array()?.iter().find(|c| c["type"] == type_).map(|c| {
        (
            c["status"].as_str().unwrap_or_default().to_string(),
            c["reason"].as_str().unwrap_or_default().to_string(),
            c["message"].as_str().unwrap_or_default().to_string(),
        )
    })
}

/// Waits until a HelmRelease has observed its generation and is Ready=True; returns it.
#[track_caller]
pub fn wait_hr_ready(namespace: &str, name: &str, timeout: Duration) -> Value {
    eventually(&format!("HelmRelease {namespace}/{name} to be Ready"), timeout, || {
        let hr = get_json("helmrelease", namespace, name).ok_or("not found")?;
        let generation = hr.pointer("/metadata/generation").and_then(Value::as_i64);
        let observed = hr.pointer("/status/observedGeneration").and_then(Value::as_i64);
        match condition(&hr, "Ready") {
            Some((s, _, _)) if s == "True" && generation == observed => Ok(hr),
            other => Err(format!("generation {generation:?} observed {observed:?} Ready {other:?}")),
        }
    })
}

/// A Deployment template: it never becomes ready here (the local control plane runs no kubelet), so
/// `helm ... --wait` blocks on it, which is how the tests catch a command while helm runs.
pub const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}-web\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n        - name: web\n          image: registry.invalid/web:1\n";

/// A chart written to a temporary directory.
/// HelmRelease spec lines for Helm's own wait: helm itself runs while the objects are awaited (under the
/// default `poller` helm cozy waits after helm, as helm-controller's waiter would).
pub const LEGACY: &str = "waitStrategy:\n  name: legacy\n";

pub struct Chart {
    pub dir: tempfile::TempDir,
    pub name: String,
}

impl Chart {
    /// A chart named `name` at `version` with `values.yaml` and the given templates (file name → text).
    pub fn new(name: &str, version: &str, values: &str, templates: &[(&str, &str)]) -> Chart {
        let dir = tempfile::Builder::new().prefix("cozyhr-chart-").tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::write(
            root.join("Chart.yaml"),
            format!("apiVersion: v2\nname: {name}\nversion: {version}\nappVersion: \"1.0\"\ntype: application\n"),
        )
        .expect("write Chart.yaml");
        std::fs::write(root.join("values.yaml"), values).expect("write values.yaml");
        std::fs::create_dir_all(root.join("templates")).expect("mkdir templates");
        for (file, text) in templates {
            std::fs::write(root.join("templates").join(file), text).expect("write template");
        }
        Chart { dir, name: name.to_string() }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Replaces or adds a file relative to the chart root.
    pub fn write(&self, rel: &str, text: &str) {
        let p = self.dir.path().join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(p, text).expect("write chart file");
    }

    /// Packages the chart and publishes it as ExternalArtifact `artifact` in `namespace`
    /// (scripts/publish-chart.sh), so the real helm-controller can fetch it.
    pub fn publish(&self, artifact: &str, namespace: &str) {
        self.publish_with(&[], artifact, namespace);
    }

    /// [`publish`](Self::publish) with the revision source-watcher's ArtifactGenerator writes,
    /// `latest@sha256:<digest>`.
    pub fn publish_digested(&self, artifact: &str, namespace: &str) {
        self.publish_with(&["--digest-revision"], artifact, namespace);
    }

    fn publish_with(&self, flags: &[&str], artifact: &str, namespace: &str) {
        let e = env();
        let mut c = command(e.repo.join("scripts/publish-chart.sh"));
        c.args(flags).arg(self.path()).arg(artifact).arg(namespace).env("KUBECTL", &e.kubectl).env("HELM4", &e.helm4);
        run(c).ok();
    }

    /// Packages the chart (the version its Chart.yaml says) into `dir` with the real Helm 4; returns the
    /// archive's path.
    pub fn package(&self, dir: &Path) -> PathBuf {
        let mut c = command(&env().helm4);
        c.arg("package").arg(self.path()).arg("-d").arg(dir);
        let out = run(c).ok();
        let path = out.stdout.trim().rsplit(": ").next().unwrap_or_default().to_string();
        assert!(Path::new(&path).is_file(), "helm package said: {}", out.stdout);
        path.into()
    }

    /// Pushes the chart to the local OCI registry as `oci://REGISTRY/charts/NAME:VERSION` with the real
    /// Helm 4; returns the repository URL (without the tag).
    pub fn push_oci(&self) -> String {
        let dir = tempfile::tempdir().expect("tempdir");
        let archive = self.package(dir.path());
        let url = format!("oci://{}/charts", registry());
        let mut c = command(&env().helm4);
        c.arg("push").arg(&archive).arg(&url).arg("--plain-http");
        run(c).ok();
        format!("{url}/{}", self.name)
    }

    /// Commits the chart as `charts/NAME` of Git repository `repo` on the local Git server (a bare
    /// repository under `COZYHR_GIT_DIR`, branch main), replacing what was there; returns its URL.
    pub fn push_to_git(&self, repo: &str) -> String {
        let work = tempfile::tempdir().expect("tempdir");
        self.copy_to(&work.path().join("charts").join(&self.name));
        push_dir_to_git(work.path(), repo)
    }

    /// Copies the chart's files into directory `dest` (made if need be).
    pub fn copy_to(&self, dest: &Path) {
        std::fs::create_dir_all(dest).expect("mkdir");
        let mut cp = Command::new("cp");
        cp.arg("-R").arg(format!("{}/.", self.path().display())).arg(dest);
        run(cp).ok();
    }

    /// Adds the chart to the local Helm repository (`COZYHR_HELM_REPO_DIR`, served over HTTP) and rewrites
    /// its index with the real Helm 4.
    pub fn publish_to_helm_repo(&self) {
        self.publish_to_repo("COZYHR_HELM_REPO_DIR", &helm_repo_url());
    }

    /// [`publish_to_helm_repo`](Self::publish_to_helm_repo) for the private Helm repository
    /// (`COZYHR_PRIVATE_HELM_REPO_DIR`, served behind HTTP Basic auth): a HelmRepository reads it with
    /// [`private_helm_repository`].
    pub fn publish_to_private_helm_repo(&self) {
        self.publish_to_repo("COZYHR_PRIVATE_HELM_REPO_DIR", &private_helm_repo_url());
    }

    /// Publishes the chart to the test ground's HTTPS Helm repository ([`tls_helm_repo_url`]).
    pub fn publish_to_tls_helm_repo(&self) {
        self.publish_to_repo("COZYHR_TLS_HELM_REPO_DIR", &tls_helm_repo_url());
    }

    /// Packages the chart into the directory `$DIR_VAR` and rewrites its index for `url`.
    fn publish_to_repo(&self, dir_var: &str, url: &str) {
        // The index is written from the archives present: one test at a time, or one loses the other's.
        static INDEX: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _one = INDEX.lock().unwrap_or_else(|e| e.into_inner());
        let dir = PathBuf::from(need_var(dir_var, "scripts/cluster.sh up"));
        self.package(&dir);
        let mut c = command(&env().helm4);
        c.args(["repo", "index"]).arg(&dir).args(["--url", url]);
        run(c).ok();
    }
}

/// Commits everything in directory `dir` (which becomes a Git work tree, branch main) as Git repository
/// `repo` on the local Git server (a bare repository under `COZYHR_GIT_DIR`), replacing what was there;
/// returns its URL.
pub fn push_dir_to_git(dir: &Path, repo: &str) -> String {
    let root = PathBuf::from(need_var("COZYHR_GIT_DIR", "scripts/cluster.sh up"));
    let bare = root.join(format!("{repo}.git"));
    let git = |dir: &Path, args: &[&str]| {
        let mut c = Command::new("git");
        c.arg("-C").arg(dir).args(["-c", "user.name=e2e", "-c", "user.email=e2e@cozyhr.invalid"]).args(args);
        run(c).ok();
    };
    if !bare.exists() {
        std::fs::create_dir_all(&bare).expect("mkdir bare repository");
        git(&bare, &["init", "-q", "--bare", "-b", "main"]);
    }
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "the repository"]);
    git(dir, &["push", "-q", "--force", &bare.to_string_lossy(), "main"]);
    format!("{}/{repo}.git", need_var("COZYHR_GIT_URL", "scripts/cluster.sh up"))
}

/// A HelmRelease manifest whose chart is ExternalArtifact `artifact` in the same namespace.
pub fn helmrelease(namespace: &str, name: &str, artifact: &str, extra_spec: &str) -> String {
    let mut spec = String::new();
    for line in extra_spec.lines() {
        spec.push_str("  ");
        spec.push_str(line);
        spec.push('\n');
    }
    format!(
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: {name}\n  namespace: {namespace}\nspec:\n  \
         interval: 1h\n  chartRef:\n    kind: ExternalArtifact\n    name: {artifact}\n  install:\n    disableWait: true\n  \
         upgrade:\n    disableWait: true\n{spec}"
    )
}

/// The newest stored revision of Helm release `release` in `namespace`, decoded as Helm stores it
/// (base64, gzip, JSON), or None when there is none.
pub fn stored_release(namespace: &str, release: &str) -> Option<Value> {
    use base64::Engine as _;
    use std::io::Read as _;
    let r =
        kubectl(["-n", namespace, "get", "secrets", "-l", &format!("owner=helm,name={release}"), "-o", "json"]).ok();
    let items = r.json()["items"].as_array().cloned().unwrap_or_default();
    let newest = items.into_iter().max_by_key(|s| {
        s.pointer("/metadata/labels/version").and_then(Value::as_str).and_then(|v| v.parse::<i64>().ok())
    })?;
    let b64 = base64::engine::general_purpose::STANDARD;
    let field = b64.decode(newest.pointer("/data/release")?.as_str()?).expect("Secret data is base64");
    let gz = b64.decode(&field).expect("Helm's release field is base64");
    let mut json = String::new();
    flate2::read::GzDecoder::new(&gz[..]).read_to_string(&mut json).expect("Helm's release is gzipped JSON");
    Some(serde_json::from_str(&json).expect("a release is JSON"))
}

/// Helm release Secrets (`sh.helm.release.v1.NAME.vN`) in a namespace, by name → labels.
pub fn helm_release_secrets(namespace: &str, release: &str) -> BTreeMap<String, Value> {
    let r =
        kubectl(["-n", namespace, "get", "secrets", "-l", &format!("owner=helm,name={release}"), "-o", "json"]).ok();
    r.json()["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|s| {
                    (s["metadata"]["name"].as_str().unwrap_or_default().to_string(), s["metadata"]["labels"].clone())
                })
                .collect()
        })
        .unwrap_or_default()
}

/// One test per Helm major version for each scenario `fn(Helm)`: `name::helm3` and `name::helm4`
/// (`cargo test -p cozyhr-e2e name` runs both).
#[macro_export]
macro_rules! helm_tests {
    ($($name:ident => $scenario:ident;)*) => {$(
        mod $name {
            #[test]
            fn helm3() {
                super::$scenario($crate::Helm::V3);
            }

            #[test]
            fn helm4() {
                super::$scenario($crate::Helm::V4);
            }
        }
    )*};
}

/// Which Helm a test drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Helm {
    V3,
    V4,
}

impl Helm {
    pub fn bin(self) -> &'static Path {
        match self {
            Helm::V3 => &env().helm3,
            Helm::V4 => &env().helm4,
        }
    }
}

/// A throw-away Helm home (plugins, config, cache, data) with the cozy plugin installed from the
/// repository checkout, for one Helm major version.
pub struct HelmHome {
    pub helm: Helm,
    pub dir: tempfile::TempDir,
}

impl HelmHome {
    pub fn new(helm: Helm) -> HelmHome {
        let dir = tempfile::Builder::new().prefix("helm-home-").tempdir_in(scratch()).expect("tempdir");
        HelmHome { helm, dir }
    }

    /// A command running this Helm with the isolated home.
    pub fn command(&self) -> Command {
        let root = self.dir.path();
        let mut c = command(self.helm.bin());
        // Helm 4 installs plugins under $HELM_DATA_HOME/plugins whatever HELM_PLUGINS says; Helm 3 into
        // HELM_PLUGINS. Pointing both at one place makes install, list and run agree on both.
        c.env("HELM_PLUGINS", root.join("data").join("plugins"))
            .env("HELM_CONFIG_HOME", root.join("config"))
            .env("HELM_CACHE_HOME", root.join("cache"))
            .env("HELM_DATA_HOME", root.join("data"));
        c
    }

    pub fn run<I, S>(&self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut c = self.command();
        c.args(args);
        run(c)
    }

    /// `helm plugin install <repo>` (Helm 4: a local directory is a development install, no signature).
    pub fn install_plugin_from_repo(&self) -> Run {
        // The install hook builds into the checkout's bin/: one install at a time per test process.
        static REPO_INSTALL: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _guard = REPO_INSTALL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        std::fs::create_dir_all(self.dir.path().join("data").join("plugins")).expect("mkdir plugins");
        let repo = env().repo.to_string_lossy().into_owned();
        self.run(["plugin", "install", repo.as_str()])
    }
}

// ---------------------------------------------------------------------------------------------------
// Comparing what helm cozy renders with what helm-controller stored

/// The pinned Helm 4 (no plugins needed) reading what helm-controller stored.
pub fn helm_get(args: &[&str]) -> Run {
    let mut c = command(&env().helm4);
    c.arg("get").args(args);
    run(c).ok()
}

/// A multi-document YAML stream as JSON objects keyed by `apiVersion kind namespace/name`, parsed by
/// kubectl (sigs.k8s.io/yaml, as Helm and the API machinery parse manifests) without a cluster and
/// without defaulting anything (`label --local` removing a label nobody has; it adds an empty
/// `metadata.labels`, which is dropped again).
pub fn objects(yaml: &str) -> BTreeMap<String, Value> {
    let r = kubectl_stdin(&["label", "--local", "-f", "-", "-o", "json", "cozyhr-e2e-none-"], yaml);
    assert_eq!(r.code, Some(0), "kubectl could not parse the manifests:\n{}\n{yaml}", r.stderr);
    let mut out = BTreeMap::new();
    for v in serde_json::Deserializer::from_str(&r.stdout).into_iter::<Value>() {
        let mut v = v.expect("kubectl prints JSON objects");
        if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut)
            && meta.get("labels").is_some_and(|l| l.as_object().is_some_and(|m| m.is_empty()))
        {
            meta.remove("labels");
        }
        let key = format!(
            "{} {} {}/{}",
            v["apiVersion"].as_str().unwrap_or_default(),
            v["kind"].as_str().unwrap_or_default(),
            v.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or_default(),
            v.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default()
        );
        assert!(out.insert(key.clone(), v).is_none(), "{key} appears twice in\n{yaml}");
    }
    out
}

/// Compares two object sets object by object, with a readable message for the first difference.
#[track_caller]
pub fn assert_same_objects(ours: &BTreeMap<String, Value>, theirs: &BTreeMap<String, Value>, what: &str) {
    let ours_keys: Vec<&String> = ours.keys().collect();
    let theirs_keys: Vec<&String> = theirs.keys().collect();
    assert_eq!(ours_keys, theirs_keys, "{what}: helm cozy show and helm-controller's release have different objects");
    for (key, o) in ours {
        let t = &theirs[key];
        assert_eq!(
            o,
            t,
            "{what}: {key} differs\nhelm cozy show:\n{}\nhelm-controller stored:\n{}",
            serde_json::to_string_pretty(o).unwrap(),
            serde_json::to_string_pretty(t).unwrap()
        );
    }
}

pub fn find<'a>(objs: &'a BTreeMap<String, Value>, kind: &str, name: &str) -> &'a Value {
    objs.values()
        .find(|v| v["kind"] == kind && v.pointer("/metadata/name").and_then(Value::as_str) == Some(name))
        .unwrap_or_else(|| panic!("no {kind} {name} in {:?}", objs.keys().collect::<Vec<_>>()))
}

/// The messages helm-controller logged while reconciling HelmRelease NS/NAME, in order.
pub fn controller_log(ns: &str, name: &str) -> Vec<String> {
    let log = Path::new(&std::env::var("COZYHR_RUN").expect("COZYHR_RUN is set by scripts/cluster.sh env"))
        .join("logs/helm-controller.log");
    let text = std::fs::read_to_string(&log).unwrap_or_else(|e| panic!("cannot read {}: {e}", log.display()));
    let key = format!("\"HelmRelease\": {{\"name\":\"{name}\",\"namespace\":\"{ns}\"}}");
    text.lines().filter(|l| l.contains(&key)).map(|l| l.split('\t').nth(2).unwrap_or_default().to_string()).collect()
}

/// The Helm home of this test binary with the cozy plugin installed from the checkout, one per Helm
/// major version (the install hook runs a cargo build, so it is done once).
pub fn cozy_home(helm: Helm) -> &'static HelmHome {
    static V3: OnceLock<HelmHome> = OnceLock::new();
    static V4: OnceLock<HelmHome> = OnceLock::new();
    let cell = match helm {
        Helm::V3 => &V3,
        Helm::V4 => &V4,
    };
    cell.get_or_init(|| {
        let h = HelmHome::new(helm);
        h.install_plugin_from_repo().ok();
        h
    })
}

/// `helm cozy ARGS... -C CHART -n NS` through the real Helm's plugin dispatch.
pub fn cozy(helm: Helm, chart: &Path, ns: &str, args: &[&str]) -> Run {
    let mut c = cozy_home(helm).command();
    c.arg("cozy").args(args).arg("-C").arg(chart).args(["-n", ns]);
    run(c)
}

/// `helm cozy ARGS... -n NS` through the real Helm's plugin dispatch, run in `dir` without `-C`: from a
/// directory that holds no chart, the chart is the one the HelmRelease's source serves.
pub fn cozy_in(helm: Helm, dir: &Path, ns: &str, args: &[&str]) -> Run {
    let mut c = cozy_home(helm).command();
    c.current_dir(dir).arg("cozy").args(args).args(["-n", ns]);
    run(c)
}

/// The API server's version as it reports it (`gitVersion`).
pub fn server_version() -> String {
    let v = kubectl(["version", "-o", "json"]).ok().json();
    v.pointer("/serverVersion/gitVersion").and_then(Value::as_str).expect("serverVersion.gitVersion").to_string()
}

/// Hands HelmRelease NS/NAME back to Flux (`kubectl cozyhr resume`) and asserts that helm-controller finds
/// the release in sync and runs no Helm action: what `helm cozy apply` wrote is accepted as its own.
#[track_caller]
pub fn resume_without_an_upgrade(ns: &str, name: &str) {
    let actions = |log: &[String]| log.iter().filter(|m| m.starts_with("running '")).count();
    let before = actions(&controller_log(ns, name));
    assert!(before >= 1, "helm-controller's own action is in its log (else this proves nothing): {before}");
    let revision_before = helm_revision(ns, name);
    let resumed = kubectl(["cozyhr", "resume", name, "-n", ns, "--timeout", "2m"]).ok();
    // Read the moment resume returned: it returns once helm-controller has answered the hand-back.
    assert_eq!(helm_revision(ns, name), revision_before, "helm-controller made a new Helm revision after resume");
    assert!(
        resumed.stderr.contains("helm-controller found the release in sync and did nothing"),
        "resume says what helm-controller did:\n{}",
        resumed.stderr
    );
    wait_hr_ready(ns, name, Duration::from_secs(120));
    eventually(&format!("helm-controller to find {ns}/{name} in sync"), Duration::from_secs(30), || {
        let log = controller_log(ns, name);
        if log.iter().any(|m| m == "release in-sync with desired state") { Ok(()) } else { Err(format!("{log:#?}")) }
    });
    let log = controller_log(ns, name);
    assert_eq!(actions(&log), before, "helm-controller ran a Helm action after resume: {log:#?}");
}

/// The Helm release revision HelmRelease NS/NAME's history names last (0 before any).
pub fn helm_revision(ns: &str, name: &str) -> i64 {
    let hr = get_json("helmrelease", ns, name).unwrap_or_else(|| panic!("HelmRelease {ns}/{name} is missing"));
    hr.pointer("/status/history/0/version").and_then(Value::as_i64).unwrap_or_default()
}

/// The names in `dir` (a temporary directory a command was given), sorted: empty when it left nothing.
pub fn dir_entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Every file under `dir`, in subdirectories too.
pub fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() { out.extend(files_under(&path)) } else { out.push(path) }
    }
    out
}

/// Direct children of a process, as (pid, command name), from /proc.
pub fn children(parent: u32) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("read /proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // "pid (comm) state ppid ...": comm may contain spaces, so split at the last ')'.
        let Some((head, rest)) = stat.rsplit_once(')') else { continue };
        let comm = head.split_once('(').map(|(_, c)| c).unwrap_or_default().to_string();
        let ppid = rest.split_whitespace().nth(1).and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(parent) {
            found.push((pid, comm));
        }
    }
    found
}

/// Whether a process is still running (a zombie waiting to be reaped is not).
pub fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(')').map(|(_, rest)| rest.trim_start().starts_with('Z')))
        .is_some_and(|zombie| !zombie)
}

/// Runs `c` with its stdout a pipe whose reader is already gone (`| head` after the first line, `less`
/// then `q`), for every write to meet the closed pipe; returns the exit status and stderr.
pub fn into_closed_pipe(mut c: Command) -> (std::process::ExitStatus, String) {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let out = c.stdout(writer).stderr(Stdio::piped()).output().expect("run the command");
    (out.status, String::from_utf8_lossy(&out.stderr).into_owned())
}

// ---------------------------------------------------------------------------------------------------
// Releases as users get them: scripts/release.sh's output, served over http

/// The flux CLI built from its Go module by scripts/tools.sh (`$FLUX`).
pub fn flux_bin() -> PathBuf {
    need_var("FLUX", "scripts/cluster.sh up (scripts/tools.sh build builds the flux CLI)").into()
}

/// oras built from its Go module by scripts/tools.sh (`$ORAS`): what `scripts/release.sh --push` pushes the
/// Helm plugin's OCI artifact with (it reads `ORAS` too).
pub fn oras_bin() -> PathBuf {
    need_var("ORAS", "scripts/cluster.sh up (scripts/tools.sh build builds oras)").into()
}

/// The Python of the venv scripts/tools.sh makes (jsonschema and PyYAML installed), `$COZYHR_PYTHON`.
pub fn python() -> PathBuf {
    need_var("COZYHR_PYTHON", "scripts/cluster.sh up (scripts/tools.sh build makes the venv)").into()
}

/// The k9s Go module's directory (its plugin schema and upstream plugin files), `$K9S_DIR`.
pub fn k9s_dir() -> PathBuf {
    need_var("K9S_DIR", "scripts/cluster.sh up (scripts/tools.sh build downloads the k9s module)").into()
}

/// This machine's platform in Go's words (os, arch), as release archives name it.
pub fn platform() -> (&'static str, &'static str) {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    };
    (os, arch)
}

/// Serves the files of a directory (no subdirectories) over http on loopback until the process ends;
/// 404 for anything else (such as a `.prov` that is not there). Returns `http://127.0.0.1:PORT`. Files are
/// read per request, so the directory may be filled after this returns.
pub fn serve(dir: &Path) -> String {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let addr = listener.local_addr().expect("addr");
    let dir = dir.to_path_buf();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
            let mut request = String::new();
            if reader.read_line(&mut request).is_err() {
                continue;
            }
            let mut line = String::new();
            while reader.read_line(&mut line).map(|n| n > 0 && line != "\r\n").unwrap_or(false) {
                line.clear();
            }
            let mut parts = request.split_whitespace();
            let method = parts.next().unwrap_or_default().to_string();
            let name = parts.next().unwrap_or_default().trim_start_matches('/').to_string();
            let file = (!name.contains('/') && !name.is_empty()).then(|| dir.join(&name));
            // Helm 3 takes an http URL for an archive only when it is served as gzip.
            let kind = if name.ends_with(".gz") || name.ends_with(".tgz") {
                "application/gzip"
            } else {
                "application/octet-stream"
            };
            let _ = match file.and_then(|f| std::fs::read(f).ok()) {
                Some(body) => {
                    let head = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    );
                    stream
                        .write_all(head.as_bytes())
                        .and_then(|_| if method == "HEAD" { Ok(()) } else { stream.write_all(&body) })
                }
                None => stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
            };
        }
    });
    format!("http://{addr}")
}

/// A release made by scripts/release.sh for this machine's platform from the binaries under test, in a
/// temporary directory served over http (the archives' URLs point there).
pub struct ServedRelease {
    pub dir: tempfile::TempDir,
    pub url: String,
    pub version: String,
}

impl ServedRelease {
    /// `scripts/release.sh [EXTRA...] VERSION` with DIST, BASE_URL and TARGETS set, and the environment
    /// `envs` (e.g. GNUPGHOME for --sign).
    pub fn new(extra: &[&str], envs: &[(&str, &Path)]) -> ServedRelease {
        let e = env();
        let dir = tempfile::Builder::new().prefix("cozyhr-dist-").tempdir().expect("tempdir");
        let url = serve(dir.path());
        let version = env!("CARGO_PKG_VERSION").to_string();
        let (os, arch) = platform();
        let mut c = Command::new(e.repo.join("scripts/release.sh"));
        c.args(extra)
            .arg(&version)
            .env("DIST", dir.path())
            .env("KREW_MANIFEST", dir.path().join("krew-manifest.yaml"))
            .env("BASE_URL", &url)
            .env("TARGETS", format!("{os}/{arch}"))
            .env("COZYHR_PREBUILT", &e.bin_dir)
            .stdin(Stdio::null());
        for (k, v) in envs {
            c.env(k, v);
        }
        run(c).ok();
        ServedRelease { dir, url, version }
    }

    pub fn path(&self, file: &str) -> PathBuf {
        self.dir.path().join(file)
    }

    /// The Helm plugin for every platform, `helm-cozy-VERSION.tgz` (the OCI artifact's layer).
    pub fn every_platform_archive(&self) -> String {
        format!("helm-cozy-{}.tgz", self.version)
    }

    /// This platform's archive name for a tool: `kubectl-cozyhr`, `helm-cozy` or `flux-cozyhr`.
    pub fn archive(&self, tool: &str) -> String {
        let (os, arch) = platform();
        let v = &self.version;
        match tool {
            "helm-cozy" => format!("helm-cozy-{v}-{os}-{arch}.tar.gz"),
            other => format!("{other}_{v}_{os}_{arch}.tar.gz"),
        }
    }
}

/// The Flux the local control plane runs (`scripts/cluster.sh up --flux 2.8|2.9`).
#[derive(Debug, Clone)]
pub struct Flux {
    /// `2.8` or `2.9`.
    pub line: String,
    /// helm-controller's version, `v1.5.0` or `v1.6.4`.
    pub helm_controller: String,
    /// A Helm built at the SDK version that helm-controller embeds, and that version (`v4.1.1`, `v4.2.2`).
    pub controller_helm: PathBuf,
    pub controller_helm_version: String,
}

impl Flux {
    /// Flux 2.8 (helm-controller v1.5.x), as Cozystack runs it.
    pub fn is_2_8(&self) -> bool {
        self.line == "2.8"
    }

    /// Whether helm-controller's Helm SDK keeps the ending of a document that is not its template's last
    /// (Helm 4.1's YAML stream in v1.5.0, 4.2.4's line cut from v1.6.3), or trims it (4.2.0-4.2.3).
    pub fn keeps_document_endings(&self) -> bool {
        self.is_2_8() || !matches!(self.helm_controller.as_str(), "v1.6.0" | "v1.6.1" | "v1.6.2")
    }
}

pub fn flux() -> &'static Flux {
    static FLUX: OnceLock<Flux> = OnceLock::new();
    FLUX.get_or_init(|| {
        let how = "scripts/cluster.sh up [--flux 2.8|2.9]";
        Flux {
            line: need_var("COZYHR_FLUX", how),
            helm_controller: need_var("HELM_CONTROLLER_VERSION", how),
            controller_helm: need_var("HELM_CONTROLLER_HELM", how).into(),
            controller_helm_version: need_var("HELM_CONTROLLER_HELM_VERSION", how),
        }
    })
}

// ---------------------------------------------------------------------------------------------------
// The CI workflows of examples/ci/, run as GitHub runs a step.

/// A GitHub Actions workflow of the checkout (`examples/ci/NAME`), read with PyYAML (the test ground's
/// venv) as JSON.
pub fn workflow(name: &str) -> Value {
    let path = repo().join("examples/ci").join(name);
    let mut c = Command::new(python());
    c.args(["-c", "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))"]).arg(&path);
    serde_json::from_str(&run(c).ok().stdout).expect("the workflow as JSON")
}

/// The `run` script of step `name` of the workflow's job `review` (empty when there is none).
pub fn workflow_step(wf: &Value, name: &str) -> String {
    let steps = wf["jobs"]["review"]["steps"].as_array().cloned().unwrap_or_default();
    steps.iter().find(|s| s["name"] == name).and_then(|s| s["run"].as_str()).unwrap_or_default().to_string()
}

/// Runs `script` as GitHub runs a step (bash -e) in the checkout `work` of a pull request against
/// `main`, with the workflow's env, and Helm 4 with the plugin installed and kubectl on PATH (linked into
/// `bin`); asserts it succeeds.
pub fn run_workflow_step(wf: &Value, script: &str, work: &Path, bin: &Path) -> Run {
    std::fs::create_dir_all(bin).expect("mkdir");
    std::os::unix::fs::symlink(&env().helm4, bin.join("helm")).expect("link helm");
    std::os::unix::fs::symlink(&env().kubectl, bin.join("kubectl")).expect("link kubectl");
    let mut sh = Command::new("bash");
    sh.args(["-e", "-c", script]).current_dir(work);
    for (k, v) in cozy_home(Helm::V4).command().get_envs() {
        if let Some(v) = v {
            sh.env(k, v);
        }
    }
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    sh.env("PATH", path).env("GITHUB_BASE_REF", "main");
    for (k, v) in wf["env"].as_object().cloned().unwrap_or_default() {
        sh.env(k, v.as_str().unwrap_or_default());
    }
    run(sh).ok()
}
