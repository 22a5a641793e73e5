//! `helm cozy apply --watch` and `helm cozy diff --watch` end to end (issue 13), under the real Helm 3 and
//! Helm 4 with the plugin installed from the checkout, against the real kube-apiserver and helm-controller:
//! a save in the chart, in its values or in a linked library chart reaches the cluster within 2 s, one
//! round per edit; a template that does not parse fails its round and the loop goes on; SIGINT ends the
//! loop cleanly (the HelmRelease suspended with the last round's status, no temporary file, and
//! helm-controller in sync after resume); an edit of a valuesFrom ConfigMap alone starts a diff, and a
//! `diff --watch` whose reader goes away ends at once, quietly; a resume under `apply --watch` ends it.
//!
//! Every wait is bounded and names what it waited for; the watching process is killed when a test fails.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cozyhr_e2e::{
    Chart, Helm, apply, children, condition, cozy_home, dir_entries, eventually, get_json, helm_tests, helmrelease,
    kubectl, namespace, wait_hr_ready,
};
use serde_json::Value;

const READY_TIMEOUT: Duration = Duration::from_secs(120);

/// The bound the issue sets from a save to the changed object in the cluster.
const SAVE_TO_CLUSTER: Duration = Duration::from_secs(2);

/// How long a round may take to be reported (a first round renders, discovers and installs).
const ROUND_TIMEOUT: Duration = Duration::from_secs(60);

/// A `helm cozy … --watch` running in the background, its output collected line by line as it comes.
/// Killed when dropped (a failing test leaves nothing running).
struct Watching {
    child: Child,
    stdout: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<Vec<String>>>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

impl Drop for Watching {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn collect(pipe: impl Read + Send + 'static, into: Arc<Mutex<Vec<String>>>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { break };
            into.lock().unwrap_or_else(|p| p.into_inner()).push(line);
        }
    })
}

impl Watching {
    /// `helm cozy ARGS... -C CHART -n NS` with TMPDIR set to `tmp`.
    fn start(helm: Helm, chart: &Path, ns: &str, tmp: &Path, args: &[&str]) -> Watching {
        let mut c = cozy_home(helm).command();
        c.arg("cozy")
            .args(args)
            .arg("-C")
            .arg(chart)
            .args(["-n", ns])
            .env("TMPDIR", tmp)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().expect("spawn helm cozy --watch");
        let (stdout, stderr) = (Arc::default(), Arc::default());
        let readers = vec![
            collect(child.stdout.take().expect("stdout piped"), Arc::clone(&stdout)),
            collect(child.stderr.take().expect("stderr piped"), Arc::clone(&stderr)),
        ];
        Watching { child, stdout, stderr, readers }
    }

    fn stdout(&self) -> Vec<String> {
        self.stdout.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn stderr(&self) -> Vec<String> {
        self.stderr.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The output so far, for failure messages.
    fn dump(&self) -> String {
        format!("stdout:\n{}\nstderr:\n{}", self.stdout().join("\n"), self.stderr().join("\n"))
    }

    /// The lines that end a round (`✔ … round N (…): …` or `✗ … round N (…): failed …`).
    fn rounds(&self) -> Vec<String> {
        self.stderr().into_iter().filter(|l| l.contains(" round ") && l.contains("; watching ")).collect()
    }

    /// Waits for the line of round `n` and returns it; fails if the process exits first.
    #[track_caller]
    fn round(&mut self, n: usize) -> String {
        let start = Instant::now();
        loop {
            let rounds = self.rounds();
            if let Some(line) = rounds.get(n - 1) {
                return line.clone();
            }
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                panic!("helm cozy --watch exited with {status} before round {n}\n{}", self.dump());
            }
            assert!(start.elapsed() < ROUND_TIMEOUT, "no round {n} within {ROUND_TIMEOUT:?}\n{}", self.dump());
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The helm-cozy process that helm runs as the plugin.
    fn plugin_pid(&self) -> u32 {
        let helm = self.child.id();
        eventually("helm to run helm-cozy", Duration::from_secs(10), || {
            children(helm)
                .into_iter()
                .find(|(_, comm)| comm == "helm-cozy")
                .map(|(pid, _)| pid)
                .ok_or_else(|| format!("children of helm {helm}: {:?}", children(helm)))
        })
    }

    /// SIGINT to the plugin (as Ctrl-C would), then waits at most 60 s for everything to exit; returns
    /// the exit code and the output.
    fn interrupt(self) -> (Option<i32>, Vec<String>, Vec<String>) {
        let plugin = self.plugin_pid();
        let mut kill = std::process::Command::new("kill");
        kill.args(["-INT", &plugin.to_string()]);
        cozyhr_e2e::run(kill).ok();
        self.exit_within(Duration::from_secs(60), "SIGINT")
    }

    /// Waits at most `within` for everything to exit after `what`; returns the exit code and the output.
    fn exit_within(mut self, within: Duration, what: &str) -> (Option<i32>, Vec<String>, Vec<String>) {
        let start = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                break status;
            }
            assert!(start.elapsed() < within, "no exit within {within:?} of {what}\n{}", self.dump());
            std::thread::sleep(Duration::from_millis(100));
        };
        for r in std::mem::take(&mut self.readers) {
            let _ = r.join();
        }
        (status.code(), self.stdout(), self.stderr())
    }
}

fn hr(ns: &str, name: &str) -> Value {
    get_json("helmrelease", ns, name).unwrap_or_else(|| panic!("HelmRelease {ns}/{name} is missing"))
}

fn suspended(obj: &Value) -> bool {
    obj.pointer("/spec/suspend").and_then(Value::as_bool).unwrap_or(false)
}

/// `data.KEY` of ConfigMap NS/NAME, if both exist.
fn cm_data(ns: &str, name: &str, key: &str) -> Option<String> {
    get_json("configmap", ns, name)?.pointer(&format!("/data/{key}")).and_then(Value::as_str).map(str::to_string)
}

/// Saves a file as editors do: the new text into a temporary file beside it, then renamed over it.
fn save(path: &Path, text: &str) {
    let tmp = path.with_file_name(format!(".{}.swp", path.file_name().and_then(|n| n.to_str()).unwrap_or("x")));
    std::fs::write(&tmp, text).expect("write the swap file");
    std::fs::rename(&tmp, path).expect("rename over the file");
}

/// Saves `path` and waits (polling every 50 ms) until `check` sees the change in the cluster, which must
/// happen within [`SAVE_TO_CLUSTER`].
#[track_caller]
fn save_and_see(w: &Watching, path: &Path, text: &str, what: &str, check: impl Fn() -> bool) {
    let saved = Instant::now();
    save(path, text);
    loop {
        if check() {
            return;
        }
        assert!(
            saved.elapsed() < SAVE_TO_CLUSTER,
            "{what}: the cluster does not carry the change {SAVE_TO_CLUSTER:?} after the save\n{}",
            w.dump()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  message: {{ .Values.message | quote }}\n  greeting: {{ include \"lib.greeting\" . | quote }}\n";

/// A chart `demo` whose library subchart `lib` is a symlink to a directory beside it (kept alive by the
/// returned TempDir), as library charts shared between charts are kept.
fn chart_with_a_linked_library() -> (Chart, tempfile::TempDir) {
    let lib = tempfile::Builder::new().prefix("cozyhr-lib-").tempdir().expect("tempdir");
    std::fs::write(lib.path().join("Chart.yaml"), "apiVersion: v2\nname: lib\nversion: 0.1.0\ntype: library\n")
        .expect("write lib/Chart.yaml");
    std::fs::create_dir_all(lib.path().join("templates")).expect("mkdir lib/templates");
    std::fs::write(lib.path().join("templates/_greeting.tpl"), "{{- define \"lib.greeting\" -}}hello{{- end -}}\n")
        .expect("write the library template");
    let chart = Chart::new("demo", "0.1.0", "message: one\n", &[("cm.yaml", CM)]);
    chart.write(
        "Chart.yaml",
        "apiVersion: v2\nname: demo\nversion: 0.1.0\ntype: application\ndependencies:\n  - name: lib\n    version: 0.1.0\n",
    );
    std::fs::create_dir_all(chart.path().join("charts")).expect("mkdir charts");
    std::os::unix::fs::symlink(lib.path(), chart.path().join("charts/lib")).expect("link the library chart");
    (chart, lib)
}

// ---------------------------------------------------------------------------------------------------
// apply --watch: template, value, library chart, a syntax error and the edit after it; SIGINT; resume

fn apply_watch(helm: Helm) {
    let ns = namespace(&format!("hcw-apply-{helm:?}").to_lowercase());
    let (chart, lib) = chart_with_a_linked_library();
    chart.publish("a", &ns);
    apply(&helmrelease(&ns, "a", "a", ""));
    wait_hr_ready(&ns, "a", READY_TIMEOUT);
    assert_eq!(cm_data(&ns, "a-cm", "greeting").as_deref(), Some("hello"), "helm-controller installed the chart");

    let tmp = tempfile::tempdir().expect("tempdir");
    let mut w = Watching::start(helm, chart.path(), &ns, tmp.path(), &["apply", "a", "--watch"]);
    let first = w.round(1);
    assert!(first.contains("round 1 (start): applied"), "{first}\n{}", w.dump());
    assert!(suspended(&hr(&ns, "a")), "the HelmRelease is suspended while watching");

    // 1. A template.
    let cm_path = chart.path().join("templates/cm.yaml");
    save_and_see(&w, &cm_path, &format!("{CM}  edited: \"yes\"\n"), "a template edit", || {
        cm_data(&ns, "a-cm", "edited").as_deref() == Some("yes")
    });
    let line = w.round(2);
    assert!(line.contains("(templates/cm.yaml): applied: 0 to add, 1 to change"), "{line}\n{}", w.dump());

    // 2. A value.
    save_and_see(&w, &chart.path().join("values.yaml"), "message: two\n", "a values.yaml edit", || {
        cm_data(&ns, "a-cm", "message").as_deref() == Some("two")
    });
    let line = w.round(3);
    assert!(line.contains("(values.yaml): applied"), "{line}\n{}", w.dump());

    // 3. The library chart, outside the chart directory, reached through the link.
    let library = lib.path().join("templates/_greeting.tpl");
    save_and_see(&w, &library, "{{- define \"lib.greeting\" -}}hello-from-lib{{- end -}}\n", "a library edit", || {
        cm_data(&ns, "a-cm", "greeting").as_deref() == Some("hello-from-lib")
    });
    let line = w.round(4);
    assert!(line.contains("_greeting.tpl): applied"), "{line}\n{}", w.dump());

    // 4. A template that does not parse: the round fails, saying why, and nothing is applied.
    let extra = chart.path().join("templates/extra.yaml");
    save(&extra, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }-extra\n");
    let line = w.round(5);
    assert!(line.contains("(templates/extra.yaml): failed"), "{line}\n{}", w.dump());
    let stderr = w.stderr().join("\n");
    assert!(stderr.contains("extra.yaml"), "the error names the template:\n{stderr}");
    assert_eq!(get_json("configmap", &ns, "a-extra"), None, "a failed round applied something");

    // 5. The next good edit is applied.
    save_and_see(
        &w,
        &extra,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-extra\ndata:\n  ok: \"yes\"\n",
        "the edit after a syntax error",
        || cm_data(&ns, "a-extra", "ok").as_deref() == Some("yes"),
    );
    let line = w.round(6);
    assert!(line.contains("(templates/extra.yaml): applied: 1 to add"), "{line}\n{}", w.dump());

    // One round per edit: nothing more came (an editor's rename dance or our own status writes would).
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(w.rounds().len(), 6, "one round at the start and one per edit:\n{}", w.dump());
    let plan_lines = w.stdout().iter().filter(|l| l.starts_with("Plan: ")).count();
    assert_eq!(plan_lines, 5, "a plan line per round that rendered:\n{}", w.dump());
    assert!(w.stdout().iter().any(|l| l == &format!("+ ConfigMap {ns}/a-extra")), "{}", w.dump());

    // SIGINT: the loop ends between rounds, cleanly.
    let (code, _stdout, stderr) = w.interrupt();
    assert!(matches!(code, Some(0 | 130)), "exit {code:?} after SIGINT\n{}", stderr.join("\n"));
    let last = stderr.last().cloned().unwrap_or_default();
    assert!(last.contains(&format!("kubectl cozyhr resume a -n {ns}")), "the last line says how to hand back: {last}");
    assert_eq!(dir_entries(tmp.path()), Vec::<String>::new(), "temporary files left behind");

    let obj = hr(&ns, "a");
    assert!(suspended(&obj), "the HelmRelease stays suspended after the loop");
    let (ready, _, message) = condition(&obj, "Ready").expect("Ready");
    assert_eq!(ready, "True", "{message}");
    assert!(
        message.starts_with(&format!("Helm upgrade succeeded for release {ns}/a.v")),
        "the status says what was last applied: {message}"
    );
    assert_eq!(obj.pointer("/status/history/0/status").and_then(Value::as_str), Some("deployed"), "{}", obj["status"]);

    // Handed back: the rounds applied a local chart, which helm-controller must not take for its
    // source's. resume says so and has it install the source's chart (the edits undone).
    let resumed = kubectl(["cozyhr", "resume", "a", "-n", &ns, "--timeout", "2m"]).ok();
    assert!(resumed.stderr.contains("runs a local chart"), "{}", resumed.stderr);
    eventually("helm-controller to install the source's chart", READY_TIMEOUT, || {
        let back = cm_data(&ns, "a-cm", "greeting").as_deref() == Some("hello");
        if back && get_json("configmap", &ns, "a-extra").is_none() {
            Ok(())
        } else {
            Err("the local chart still runs".into())
        }
    });

    // Resumed under a running loop, the HelmRelease is Flux's again: the loop ends rather than take it back.
    let mut w = Watching::start(helm, chart.path(), &ns, tmp.path(), &["apply", "a", "--watch"]);
    w.round(1);
    assert!(suspended(&hr(&ns, "a")), "apply --watch suspends the HelmRelease\n{}", w.dump());
    kubectl(["cozyhr", "resume", "a", "-n", &ns, "--wait=false"]).ok();
    let (code, _stdout, stderr) = w.exit_within(Duration::from_secs(30), "kubectl cozyhr resume");
    assert_eq!(code, Some(0), "exit after resume\n{}", stderr.join("\n"));
    let last = stderr.last().cloned().unwrap_or_default();
    assert!(last.contains("helmrelease a was resumed"), "the last line says why the loop ended: {last}");
    assert!(!suspended(&hr(&ns, "a")), "the loop took the HelmRelease back after resume");
}

helm_tests! {
    apply_watch_applies_each_save_and_ends_cleanly_on_sigint => apply_watch;
}

// ---------------------------------------------------------------------------------------------------
// diff --watch: a valuesFrom ConfigMap edited in the cluster, no file changed

fn diff_watch(helm: Helm) {
    let ns = namespace(&format!("hcw-diff-{helm:?}").to_lowercase());
    let chart = Chart::new(
        "demo",
        "0.1.0",
        "message: default\n",
        &[(
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  message: {{ .Values.message | quote }}\n",
        )],
    );
    chart.publish("a", &ns);
    apply(&format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: vals\n  namespace: {ns}\ndata:\n  values.yaml: \"message: one\"\n"
    ));
    apply(&helmrelease(&ns, "a", "a", "valuesFrom:\n  - kind: ConfigMap\n    name: vals\n"));
    wait_hr_ready(&ns, "a", READY_TIMEOUT);
    assert_eq!(cm_data(&ns, "a-cm", "message").as_deref(), Some("one"));
    let generation = hr(&ns, "a").pointer("/metadata/generation").cloned();

    let tmp = tempfile::tempdir().expect("tempdir");
    let mut w = Watching::start(helm, chart.path(), &ns, tmp.path(), &["diff", "a", "--watch"]);
    let first = w.round(1);
    assert!(first.contains("round 1 (start): diff printed: 0 to add, 0 to change"), "{first}\n{}", w.dump());
    let printed = w.stdout().len();

    kubectl([
        "-n",
        &ns,
        "patch",
        "configmap",
        "vals",
        "--type",
        "merge",
        "-p",
        r#"{"data":{"values.yaml":"message: two"}}"#,
    ])
    .ok();
    let line = w.round(2);
    assert!(line.contains("(ConfigMap vals): diff printed: 0 to add, 1 to change"), "{line}\n{}", w.dump());
    let diff: Vec<String> = w.stdout()[printed..].to_vec();
    assert!(diff.iter().any(|l| l.starts_with('-') && l.contains("message: one")), "{diff:#?}");
    assert!(diff.iter().any(|l| l.starts_with('+') && l.contains("message: two")), "{diff:#?}");

    let (code, _stdout, stderr) = w.interrupt();
    assert!(matches!(code, Some(0 | 130)), "exit {code:?} after SIGINT\n{}", stderr.join("\n"));
    assert_eq!(dir_entries(tmp.path()), Vec::<String>::new(), "temporary files left behind");
    let obj = hr(&ns, "a");
    assert!(!suspended(&obj), "diff --watch changes nothing: the HelmRelease is not suspended");
    assert_eq!(obj.pointer("/metadata/generation").cloned(), generation, "diff --watch changed the HelmRelease");
    assert_eq!(cm_data(&ns, "a-cm", "message").as_deref(), Some("one"), "diff --watch applied something");

    // Its reader going away (`| head` ended, `less` quit) ends the loop at once, quietly, with exit 0:
    // the first line of the first round's summary is read, then the pipe is closed while the loop waits.
    let mut c = cozy_home(helm).command();
    c.args(["cozy", "diff", "a", "--watch", "-o", "summary", "-C"])
        .arg(chart.path())
        .args(["-n", &ns])
        .env("TMPDIR", tmp.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("spawn helm cozy diff --watch");
    let stderr = Arc::default();
    let reader = collect(child.stderr.take().expect("stderr piped"), Arc::clone(&stderr));
    let mut plan = String::new();
    BufReader::new(child.stdout.take().expect("stdout piped")).read_line(&mut plan).expect("read the first plan");
    assert!(plan.starts_with("~ ConfigMap") && plan.contains("/a-cm"), "first line of -o summary: {plan:?}");
    // The reader was dropped with the line read: the pipe's read end is closed.
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if start.elapsed() > Duration::from_secs(15) {
            let _ = child.kill();
            panic!("diff --watch still running 15 s after its reader went away");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = reader.join();
    let stderr = stderr.lock().unwrap_or_else(|p| p.into_inner()).join("\n");
    assert_eq!(status.code(), Some(0), "exit after the reader went away; stderr:\n{stderr}");
    for word in ["error", "panicked", "stopped watching", "Broken pipe"] {
        assert!(!stderr.contains(word), "a closed reader is a quiet end, but stderr says {word:?}:\n{stderr}");
    }
    assert_eq!(dir_entries(tmp.path()), Vec::<String>::new(), "temporary files left behind");
}

helm_tests! {
    diff_watch_prints_a_diff_when_a_values_from_configmap_changes => diff_watch;
}
