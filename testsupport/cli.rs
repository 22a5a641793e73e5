//! Shared by the binaries' hermetic CLI tests: a real binary run in a sandbox of its own (an empty HOME, a
//! PATH with nothing but what the test puts there, KUBECONFIG naming a file that does not exist, no other
//! environment), and what it printed. No cluster, no helm, no kubectl needed.
//!
//! Where a test must see what a command would ask of a cluster, [`ApiRecorder`] listens on loopback,
//! writes down each request line and refuses every request with a 403, so nothing can be changed and
//! every command ends on one error line.

#![allow(dead_code)] // each test binary uses its own part of this

use std::ffi::{OsStr, OsString};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The exit code of a usage error: 1, as for any bad input (and as kubectl and helm exit), not clap's 2.
pub const USAGE_ERROR: i32 = 1;

/// What a panic or a backtrace would print; never acceptable on stderr.
const CRASH_MARKERS: &[&str] = &["panicked", "RUST_BACKTRACE", "stack backtrace"];

/// A private directory with `home/` and `bin/`, removed when dropped, and the environment of every run.
pub struct Sandbox {
    root: PathBuf,
    env: Vec<(OsString, OsString)>,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let root = std::env::temp_dir().join(format!("cozyhr-cli-test-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root); // a leftover of an earlier process with the same pid
        for dir in ["home", "bin"] {
            std::fs::create_dir_all(root.join(dir)).expect("create the sandbox");
        }
        let mut sandbox = Sandbox { root, env: Vec::new() };
        sandbox.set_env("HOME", sandbox.path("home"));
        sandbox.set_env("PATH", sandbox.path("bin"));
        sandbox.set_env("KUBECONFIG", sandbox.missing_kubeconfig());
        sandbox.set_env("NO_COLOR", "1");
        sandbox
    }

    /// `rel` inside the sandbox.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// What KUBECONFIG names unless a test changes it; never created.
    pub fn missing_kubeconfig(&self) -> PathBuf {
        self.path("no-such-kubeconfig")
    }

    /// What the OS says of a file that does not exist, as an error line quotes it after the file's name.
    pub fn not_found(&self) -> String {
        std::fs::metadata(self.missing_kubeconfig()).expect_err("the missing kubeconfig exists").to_string()
    }

    /// The error line when KUBECONFIG names [`Sandbox::missing_kubeconfig`]: the file, named once and where
    /// it came from, and what to do.
    pub fn unreadable_kubeconfig_from_env(&self) -> String {
        let missing = self.missing_kubeconfig();
        let missing = missing.to_str().expect("a UTF-8 temporary directory");
        format!(
            "error: cannot read kubeconfig {missing} (from KUBECONFIG): {}; fix KUBECONFIG or pass --kubeconfig FILE",
            self.not_found()
        )
    }

    /// The error line when `--kubeconfig` names `missing`, a file that does not exist.
    pub fn unreadable_kubeconfig_from_flag(&self, missing: &str) -> String {
        format!(
            "error: cannot read kubeconfig {missing}: {}; pass --kubeconfig a valid kubeconfig file, or leave it out to use KUBECONFIG or ~/.kube/config",
            self.not_found()
        )
    }

    /// The error line when neither KUBECONFIG nor `--kubeconfig` names a file and ~/.kube/config is missing.
    pub fn unreadable_default_kubeconfig(&self) -> String {
        let default = self.path("home/.kube/config");
        format!(
            "error: cannot read kubeconfig {}: {}; pass --kubeconfig FILE or set KUBECONFIG",
            default.to_str().expect("UTF-8"),
            self.not_found()
        )
    }

    pub fn set_env(&mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) {
        self.remove_env(&key);
        self.env.push((key.as_ref().to_owned(), value.as_ref().to_owned()));
    }

    pub fn remove_env(&mut self, key: impl AsRef<OsStr>) {
        self.env.retain(|(k, _)| k != key.as_ref());
    }

    /// Writes `rel` (and its directories) and returns its path.
    pub fn write(&self, rel: &str, contents: &str) -> PathBuf {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("create the directory");
        std::fs::write(&path, contents).expect("write the file");
        path
    }

    /// Writes an executable script `rel`.
    pub fn write_script(&self, rel: &str, contents: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = self.write(rel, contents);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        path
    }

    /// Runs `program ARGS` in the sandbox (its root is the working directory) with only the sandbox's
    /// environment and stdin closed.
    pub fn run<S: AsRef<OsStr>>(&self, program: impl AsRef<OsStr>, args: &[S]) -> Run {
        self.run_with_stdin(program, args, None)
    }

    /// [`Sandbox::run`] with `stdin` written to the program's standard input (None: closed).
    pub fn run_with_stdin<S: AsRef<OsStr>>(&self, program: impl AsRef<OsStr>, args: &[S], stdin: Option<&str>) -> Run {
        let program = program.as_ref();
        let mut child = Command::new(program)
            .args(args)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&self.root)
            .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {program:?}: {e}"));
        if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
            let text = text.to_string();
            std::thread::spawn(move || {
                let _ = pipe.write_all(text.as_bytes());
            });
        }
        let out = child.wait_with_output().unwrap_or_else(|e| panic!("cannot run {program:?}: {e}"));
        let name = Path::new(program).file_name().unwrap_or(program).to_string_lossy();
        let args: Vec<String> = args.iter().map(|a| a.as_ref().to_string_lossy().into_owned()).collect();
        Run {
            command: format!("{name} {}", args.join(" ")),
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// One finished run.
#[derive(Debug)]
pub struct Run {
    pub command: String,
    /// None when a signal ended it.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    fn assert_no_crash(&self) {
        for marker in CRASH_MARKERS {
            assert!(!self.stderr.contains(marker), "`{}` crashed:\n{}", self.command, self.stderr);
        }
    }

    /// Exit 0, something on stdout, nothing on stderr. Returns stdout.
    pub fn printed(&self) -> &str {
        assert_eq!(self.code, Some(0), "`{}` exit code; stderr:\n{}", self.command, self.stderr);
        assert!(!self.stdout.trim().is_empty(), "`{}` printed nothing on stdout", self.command);
        assert!(self.stderr.is_empty(), "`{}` wrote to stderr:\n{}", self.command, self.stderr);
        &self.stdout
    }

    /// A usage error: exit [`USAGE_ERROR`], nothing on stdout, one `error:` line on stderr that names
    /// `offender` and where the usage is (`--help`), no panic.
    pub fn usage_error(&self, offender: &str) {
        self.assert_no_crash();
        assert_eq!(self.code, Some(USAGE_ERROR), "`{}` exit code; stderr:\n{}", self.command, self.stderr);
        assert!(self.stdout.is_empty(), "`{}` wrote to stdout on a usage error:\n{}", self.command, self.stdout);
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "`{}`: a usage error is one line:\n{}", self.command, self.stderr);
        let line = lines[0];
        assert!(line.starts_with("error: "), "`{}`: {line:?} does not start with `error: `", self.command);
        assert!(line.contains(offender), "`{}`: the error does not name {offender:?}: {line}", self.command);
        assert!(line.ends_with(" --help'"), "`{}`: the error does not say where the usage is: {line}", self.command);
    }

    /// A failure reported as exactly one `error:` line on stderr, exit 1, nothing on stdout; the line
    /// contains each of `expected` (what is wrong, what to do). Returns the line.
    pub fn one_error_line(&self, expected: &[&str]) -> &str {
        self.assert_no_crash();
        assert_eq!(self.code, Some(1), "`{}` exit code; stderr:\n{}", self.command, self.stderr);
        assert!(self.stdout.is_empty(), "`{}` wrote to stdout on failure:\n{}", self.command, self.stdout);
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "`{}`: not one line on stderr:\n{}", self.command, self.stderr);
        let line = lines[0];
        assert!(line.starts_with("error: "), "`{}`: {line:?} does not start with `error: `", self.command);
        assert!(!line.contains("Usage:"), "`{}`: a usage error where a run error was due: {line}", self.command);
        for want in expected {
            assert!(line.contains(want), "`{}`: {line:?} does not say {want:?}", self.command);
        }
        line
    }
}

/// A loopback HTTP listener standing where an API server would be: it records each request line
/// (`GET /apis/...`) and answers every request with a Kubernetes 403 Status.
pub struct ApiRecorder {
    url: String,
    requests: Arc<Mutex<Vec<String>>>,
}

/// The message of the 403 every request gets; it shows up in the binaries' error line.
pub const REFUSED: &str = "refused by the test recorder";

impl ApiRecorder {
    pub fn start() -> ApiRecorder {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let url = format!("http://{}", listener.local_addr().expect("local address"));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&requests);
        // Lives until the test process ends; one thread per connection, so a client that opens several
        // at once has every request line written down.
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let log = Arc::clone(&log);
                std::thread::spawn(move || answer(stream, &log));
            }
        });
        ApiRecorder { url, requests }
    }

    /// A kubeconfig for this listener: context `a` (namespace `ctxns`, the current one) and context `b`
    /// (namespace `bns`), no credentials.
    pub fn kubeconfig(&self) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: recorder\n  cluster:\n    server: {}\n\
             contexts:\n- name: a\n  context: {{cluster: recorder, user: nobody, namespace: ctxns}}\n\
             - name: b\n  context: {{cluster: recorder, user: nobody, namespace: bns}}\n\
             current-context: a\nusers:\n- name: nobody\n  user: {{}}\n",
            self.url
        )
    }

    /// The error line for `context`, which the kubeconfig at `path` (from [`ApiRecorder::kubeconfig`])
    /// lacks: it names the contexts the kubeconfig has.
    pub fn context_not_found(&self, path: impl AsRef<Path>, context: &str) -> String {
        format!(r#"error: context "{context}" is not in the kubeconfig ({}); contexts: a, b"#, path.as_ref().display())
    }

    /// The request lines since the last call, in arrival order.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.requests.lock().expect("the request log"))
    }
}

fn answer(stream: TcpStream, log: &Mutex<Vec<String>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(&stream);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
        return;
    }
    let request_line = request_line.trim_end().trim_end_matches(" HTTP/1.1").to_string();
    log.lock().expect("the request log").push(request_line);
    let mut body_len = 0;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            body_len = value.trim().parse().unwrap_or(0);
        }
    }
    let _ = reader.by_ref().take(body_len).read_to_end(&mut Vec::new());
    let body = format!(
        r#"{{"kind":"Status","apiVersion":"v1","metadata":{{}},"status":"Failure","message":"{REFUSED}","reason":"Forbidden","code":403}}"#
    );
    let response = format!(
        "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let _ = (&stream).write_all(response.as_bytes());
}

/// `bin --help` lists exactly `subcommands` (the test's list, kept honest by this). Returns the help.
pub fn assert_help_lists_exactly(bin: &str, subcommands: &[&str]) -> String {
    let help = Sandbox::new().run(bin, &["--help"]);
    assert_eq!(help_subcommands(help.printed()), subcommands, "update SUBCOMMANDS (and the tests using it)");
    help.stdout
}

/// Help goes to stdout with exit 0: `--help`, `-h` and `help` show `Usage: {usage}`, and for each of
/// `subcommands`, `help SUB`, `SUB --help` and `SUB -h` show `Usage: {usage} SUB`.
pub fn assert_help_on_stdout(bin: &str, usage: &str, subcommands: &[&str]) {
    let sandbox = Sandbox::new();
    let top = format!("Usage: {usage}");
    for args in [&["--help"][..], &["-h"], &["help"]] {
        assert!(sandbox.run(bin, args).printed().contains(&top), "{args:?}");
    }
    for sub in subcommands {
        let usage = format!("{top} {sub}");
        for args in [["help", sub], [sub, "--help"], [sub, "-h"]] {
            let out = sandbox.run(bin, &args);
            assert!(out.printed().contains(&usage), "{args:?} does not show {usage:?}:\n{}", out.stdout);
        }
    }
}

/// No subcommand: the help on stdout with exit 0, as kubectl and helm print it for a bare command.
pub fn assert_bare_command_prints_help(sandbox: &Sandbox, bin: &str) {
    let out = sandbox.run(bin, &[] as &[&str]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(out.stderr.is_empty() && out.stdout.contains("Commands:"), "{out:?}");
}

/// `version`, `--version` and `-V` print `{name} VERSION`, VERSION being the workspace's.
pub fn assert_version(bin: &str, name: &str) {
    assert_eq!(cozyhr::VERSION, env!("CARGO_PKG_VERSION"));
    let expected = format!("{name} {}\n", cozyhr::VERSION);
    let sandbox = Sandbox::new();
    for args in [&["version", "--client"][..], &["--version"], &["-V"]] {
        assert_eq!(sandbox.run(bin, args).printed(), expected, "{args:?}");
    }
    // `version` also asks the cluster: the sandbox's kubeconfig cannot be read, which is said in one line.
    sandbox.run(bin, &["version"]).one_error_line(&["kubeconfig"]);
}

/// `completion SHELL` prints, for every shell, a script that has each of `names` as a word.
pub fn assert_completion_scripts_name(bin: &str, names: &[&str]) {
    let sandbox = Sandbox::new();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = sandbox.run(bin, &["completion", shell]);
        let script = words(out.printed());
        for name in names {
            assert!(script.contains(name), "`completion {shell}` does not mention {name}");
        }
    }
}

/// The words of `text` (runs of letters, digits, `-` and `_`, without leading dashes), to tell a subcommand named in a script
/// from a substring of something else.
pub fn words(text: &str) -> std::collections::BTreeSet<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .map(|w| w.trim_start_matches('-'))
        .filter(|w| !w.is_empty())
        .collect()
}

/// The subcommands listed under `Commands:` in a `--help` output, without clap's own `help`.
pub fn help_subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| l.trim() != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        // A wrapped description is indented further than the names.
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(String::from)
        .collect()
}

/// A flag as `--help` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelpFlag {
    pub short: Option<char>,
    pub long: Option<String>,
}

/// The flags under `Options:` in a `--help` output.
pub fn help_flags(help: &str) -> Vec<HelpFlag> {
    let mut flags = Vec::new();
    for line in help.lines().skip_while(|l| l.trim() != "Options:").skip(1) {
        if line.trim().is_empty() {
            break;
        }
        let spec = line.trim_start();
        if !spec.starts_with('-') || line.len() - spec.len() > 6 {
            continue; // a wrapped description
        }
        let mut flag = HelpFlag { short: None, long: None };
        for part in spec.split_whitespace().take(2) {
            let part = part.trim_end_matches(',');
            if let Some(long) = part.strip_prefix("--") {
                let long = long.split(['=', '[', '<']).next().unwrap_or_default();
                flag.long = Some(long.to_string());
            } else if let Some(short) = part.strip_prefix('-').filter(|s| s.chars().count() == 1) {
                flag.short = short.chars().next();
            }
        }
        assert!(flag.short.is_some() || flag.long.is_some(), "cannot read the flag in {line:?}");
        flags.push(flag);
    }
    assert!(!flags.is_empty(), "no Options: in\n{help}");
    flags
}
