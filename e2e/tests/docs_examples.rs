//! Every command example in the docs runs (issue 29), so the docs cannot drift from the binaries.
//!
//! Each line of the ```sh blocks of README.md and docs/*.md is read as sh reads it (a trailing `\` joins
//! the next line, `# comments` are cut, `VAR=value` before a command is its environment, `cd DIR` moves
//! the rest of the block). A line whose command is `kubectl cozyhr`, `helm cozy` or `flux cozyhr` is an
//! example, and is run through the real plugin dispatch: kubectl's with the shipped `kubectl-cozyhr` on
//! PATH, Helm 4's with the plugin installed from the checkout, the flux CLI's with `flux-cozyhr` in
//! `~/.fluxcd/plugins` of a throw-away HOME (the by-hand install docs/install.md describes). Every other
//! line of those blocks (installs that download from github.com, `scripts/test.sh`, ...) is in
//! [`NOT_RUN`] with its reason; a line in neither fails the first test, which needs no cluster, and so
//! does an entry of [`NOT_RUN`] the docs no longer have.
//!
//! The examples run in the order of the docs (README.md, then docs/*.md by name), each block from the
//! root of a world whose names are the docs' own: a Git checkout (`origin/main` pushed to a bare
//! repository beside it) with `charts/my-app`, `charts/postgres` and `deploy/my-app.yaml`; namespace
//! `apps` with HelmRelease `my-app` (its values partly from a valuesFrom ConfigMap, installed through
//! `spec.kubeConfig` into the tenant cluster of `scripts/cluster.sh up --tenant`, whose kubeconfig is
//! `charts/my-app/tenant.kubeconfig`), and namespace `tenants` with three releases of `postgres`, two
//! labelled `tier=db` and the third kept suspended, all installed by helm-controller before the first
//! example. The README's `# ... edit a template ...` is done (a key added to my-app's ConfigMap
//! template), so the diffs after it have a change to show.
//!
//! Each example must exit 0, or 2 where it says `--detailed-exitcode`, or the code it accepts itself
//! (`|| [ $? -eq 2 ]`); print something; and not say `error:` when it succeeds. A `get` lists my-app. A
//! diff of my-app must show the edit (and exit 2 with `--detailed-exitcode`) against a Git ref, and
//! against the cluster while the cluster cannot have it (before an apply of it, after a delete). A
//! `--watch` example must print its first round without failing it and still run 3 s later; then it
//! gets SIGINT, as Ctrl-C, and must exit 0. At the end the `tier=db` releases are Flux's again and the
//! third is still suspended: the set handed back is the set applied.
//!
//! `apps` and `tenants` are names no other suite uses: the world is made idempotently (an earlier run's
//! HelmReleases are deleted first) and its HelmReleases are deleted (and so uninstalled) at the end;
//! namespaces stay, as everywhere here.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use cozyhr_e2e::{
    Helm, apply, children, command, cozy_home, env, flux_bin, get_json, kubectl, repo, run, tenant_apply,
    tenant_kubeconfig, wait_hr_ready,
};
use serde_json::Value;

/// Lines of the docs' shell blocks that are not run here, each with the reason. An entry is the line as
/// it is read (comment cut, words joined by one space) and covers every place it appears.
const NOT_RUN: &[(&str, &str)] = &[
    (
        "helm cozy diff podinfo -n apps --version 6.7.0",
        "the world's charts come from a directory, not a repository: --version is run against the test ground's Helm and OCI repositories by chart_repositories.rs",
    ),
    (
        "helm cozy apply podinfo -n apps --version 6.7.0",
        "the world's charts come from a directory, not a repository: apply --version and resume are run by chart_repositories.rs",
    ),
    (
        "source ~/.cache/cozyhr-e2e/run/demo/env",
        "the demo's environment (scripts/demo.sh writes it); the suites have their own",
    ),
    (
        "eval \"$(~/cozyhr/scripts/cluster.sh env)\"",
        "the test ground's environment, which scripts/test.sh sets before this suite",
    ),
    (
        "~/cozyhr/scripts/publish-chart.sh charts/my-app my-app apps",
        "the world publishes its my-app the same way (publish) before the first example",
    ),
    (
        "kubectl apply -f deploy/my-app.yaml",
        "kubectl, not cozyhr: the world applies deploy/my-app.yaml itself before the first example",
    ),
    (
        "kubectl delete -f deploy/my-app.yaml",
        "kubectl, not cozyhr: the world's HelmReleases are deleted (and so uninstalled) at the end, by clean()",
    ),
    (
        "kubectl -n apps delete externalartifact my-app",
        "kubectl, not cozyhr: the world's ExternalArtifact stays for the examples after it",
    ),
    (
        "kubectl get namespace apps -o json | sed 's/\"kubernetes\"//' | kubectl replace --raw /api/v1/namespaces/apps/finalize -f -",
        "removes a namespace stuck Terminating; namespaces stay here, as everywhere in the suites",
    ),
    (
        "COZYHR_HELM=/opt/helm-v4.1.1/helm helm cozy diff my-app",
        "needs a Helm built by hand and a Flux 2.8 cluster; flux_as_the_cluster_runs_it.rs renders with COZYHR_HELM under both Fluxes",
    ),
    (
        "GOBIN=/opt/helm-v4.1.1 go install helm.sh/helm/v4/cmd/helm@v4.1.1",
        "builds Helm from its module (minutes); scripts/tools.sh builds the Helm each helm-controller embeds the same way",
    ),
    ("scripts/demo.sh", "starts a cluster of its own and leaves it up; CI (.ci/run) runs it"),
    (
        "helm cozy review git:origin/main...HEAD packages --release-file packages -f platform-values.yaml -n tenant-root --offline",
        "runs in a checkout of Cozystack's repository; review_platform.rs (helm-cozy and e2e) runs it on a repository shaped like it, and examples/ci/review-cozystack.yml's step the same way",
    ),
    ("scripts/test.sh", "the test command itself, which runs this test"),
    (
        "kubectl krew install --manifest=krew-manifest.yaml --archive=kubectl-cozyhr_0.1.0_linux_amd64.tar.gz",
        "needs the published 0.1.0 archive; tests/install.rs installs release.sh's archive with the real krew",
    ),
    (
        "URL=https://github.com/cozystack/cozyhr/releases/download/v0.1.0/helm-cozy-0.1.0-linux-amd64.tar.gz",
        "names a download from github.com (the published release)",
    ),
    (
        "helm plugin install \"$URL\"",
        "downloads from github.com; tests/install.rs installs release.sh's archive with the real Helm 3 and 4",
    ),
    (
        "curl -LO https://github.com/cozystack/cozyhr/releases/download/v0.1.0/cozyhr-keyring.gpg",
        "downloads from github.com; tests/signed_helm_plugin.rs makes a key ring of its own",
    ),
    (
        "helm plugin install \"$URL\" --keyring cozyhr-keyring.gpg",
        "downloads from github.com; tests/signed_helm_plugin.rs installs a signed release.sh archive this way",
    ),
    (
        "helm plugin install oci://ghcr.io/cozystack/cozyhr/helm-cozy:0.1.0 --keyring cozyhr-keyring.gpg",
        "pulls from ghcr.io; tests/signed_helm_plugin.rs installs what release.sh --push put into the test ground's registry this way",
    ),
    (
        "BASE=https://github.com/cozystack/cozyhr/releases/download/v0.1.0",
        "names a download from github.com (the published release)",
    ),
    (
        "curl -LO \"$BASE/helm-cozy-0.1.0-linux-amd64.tar.gz\" -LO \"$BASE/helm-cozy-0.1.0-linux-amd64.tar.gz.prov\" -LO \"$BASE/cozyhr-keyring.gpg\"",
        "downloads from github.com; tests/signed_helm_plugin.rs downloads the three files of a served release with curl",
    ),
    (
        "helm plugin verify helm-cozy-0.1.0-linux-amd64.tar.gz --keyring cozyhr-keyring.gpg",
        "needs the published archive; tests/signed_helm_plugin.rs verifies the downloaded release.sh archive this way",
    ),
    (
        "helm plugin install ./helm-cozy-0.1.0-linux-amd64.tar.gz --keyring cozyhr-keyring.gpg",
        "needs the published archive; tests/signed_helm_plugin.rs installs the downloaded release.sh archive this way",
    ),
    (
        "gpg --no-default-keyring --keyring ./cozyhr-keyring.gpg --verify helm-cozy-0.1.0-linux-amd64.tar.gz.prov",
        "needs the published archive; tests/signed_helm_plugin.rs runs these lines on a downloaded release.sh archive",
    ),
    (
        "gpg --no-default-keyring --keyring ./cozyhr-keyring.gpg --decrypt helm-cozy-0.1.0-linux-amd64.tar.gz.prov | grep \"$(sha256sum helm-cozy-0.1.0-linux-amd64.tar.gz | cut -d' ' -f1)\"",
        "needs the published archive; tests/signed_helm_plugin.rs runs these lines on a downloaded release.sh archive",
    ),
    (
        "tar -xzf helm-cozy-0.1.0-linux-amd64.tar.gz && helm plugin install ./helm-cozy",
        "needs the published archive; tests/signed_helm_plugin.rs (Helm 3) and tests/install.rs (both) install the extracted plugin directory",
    ),
    (
        "FLUXCD_PLUGIN_CATALOG=https://github.com/cozystack/cozyhr/releases/download/v0.1.0/ flux plugin install cozyhr",
        "downloads from github.com; tests/flux_plugin.rs installs from release.sh's catalog served on loopback",
    ),
    (
        "scripts/build.sh && helm plugin install .",
        "the build this suite runs against (scripts/build.sh, before it) and the install its Helm homes do",
    ),
    ("scripts/build.sh", "the build this suite runs against (run before it, by scripts/test.sh)"),
    (
        "cp target/shipped/kubectl-cozyhr kubectl_complete-cozyhr ~/.local/bin/",
        "writes into the user's ~/.local/bin; the suites put target/shipped on PATH instead",
    ),
    (
        "helm plugin install .",
        "the install from the checkout that this suite's Helm homes do (cozy_home: helm plugin install REPO)",
    ),
    (
        "ln -sf \"${KREW_ROOT:-$HOME/.krew}/store/cozyhr/v0.1.0/kubectl_complete-cozyhr\" \"${KREW_ROOT:-$HOME/.krew}/bin/\"",
        "links into a krew install of the published 0.1.0; tests/install.rs links release.sh's the same way",
    ),
    (
        "ln -s \"$(helm env HELM_PLUGINS)/helm-cozy/cozyhr\" ~/.local/bin/cozyhr",
        "writes into the user's ~/.local/bin; tests/install.rs links the installed plugin's cozyhr the same way",
    ),
    (
        "cargo binstall helm-cozy",
        "downloads the published release; tests/install.rs checks the cozyhr its archive carries",
    ),
    (
        "scripts/build.sh && export PATH=$PWD/target/shipped:$PATH",
        "the build this suite runs against; tests/cozyhr_command.rs runs its cozyhr from PATH",
    ),
    (
        "git fetch --no-tags origin main",
        "git, not cozyhr: the world's checkout has origin/main already (pushed when it is made)",
    ),
];

/// How long an example that is not `--watch` may take (resume and reconcile wait for helm-controller).
const EXAMPLE_TIMEOUT: Duration = Duration::from_secs(240);
/// How long a `--watch` example may take to print its first round (an apply round installs).
const FIRST_ROUND_TIMEOUT: Duration = Duration::from_secs(120);
/// How long helm-controller may take with the world's releases.
const READY_TIMEOUT: Duration = Duration::from_secs(180);
/// The key the README's "edit a template" adds to my-app's ConfigMap.
const EDIT_MARK: &str = "editedByTheDocs";

// ---------------------------------------------------------------------------------------------------
// Reading the docs

/// Which plugin an example runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Head {
    Kubectl,
    Helm,
    Flux,
}

/// A command example: `HEAD SUBCOMMAND ARGS...`, with its environment prefix, a `> FILE` and the exit
/// codes it accepts itself (`|| [ $? -eq N ]`).
#[derive(Debug, Clone)]
struct Example {
    head: Head,
    env: Vec<(String, String)>,
    args: Vec<String>,
    stdout_to: Option<String>,
    also_ok: Vec<i32>,
}

impl Example {
    fn has(&self, flag: &str) -> bool {
        self.args.iter().any(|a| a == flag || a.starts_with(&format!("{flag}=")))
    }

    fn watches(&self) -> bool {
        self.has("--watch") || self.has("-w")
    }

    fn subcommand(&self) -> &str {
        self.args.first().map(String::as_str).unwrap_or_default()
    }

    /// The value of `-o`/`--output`, if given.
    fn output(&self) -> Option<&str> {
        let i = self.args.iter().position(|a| a == "-o" || a == "--output")?;
        self.args.get(i + 1).map(String::as_str)
    }
}

#[derive(Debug, Clone)]
enum Kind {
    /// A comment alone on its line (or a blank line).
    Comment(String),
    /// `cd DIR`: the rest of the block runs there.
    Cd(String),
    Example(Example),
    /// Any other command: it must be in [`NOT_RUN`].
    Other,
}

/// A line of a shell block, as sh reads it.
#[derive(Debug, Clone)]
struct DocLine {
    /// `README.md:61`.
    place: String,
    /// Which shell block (each starts again from the world's root).
    block: usize,
    /// The words as written, joined by one space, without the comment.
    text: String,
    kind: Kind,
}

/// A word as sh splits it: `text` with the quotes removed, `raw` as written, and whether it expands
/// anything (`$` or a backquote outside single quotes), which this test does not do for an example.
#[derive(Debug, Clone)]
struct Word {
    text: String,
    raw: String,
    expands: bool,
}

/// Splits a line into words as sh does, and cuts a comment (a `#` that starts a word).
fn split_words(line: &str) -> Result<(Vec<Word>, Option<String>), String> {
    let mut words = Vec::new();
    let mut cur: Option<Word> = None;
    let (mut single, mut double) = (false, false);
    let mut chars = line.chars();
    while let Some(ch) = chars.next() {
        if single {
            let w = cur.as_mut().expect("a quote is inside a word");
            w.raw.push(ch);
            if ch == '\'' {
                single = false;
            } else {
                w.text.push(ch);
            }
            continue;
        }
        if !double && ch.is_whitespace() {
            words.extend(cur.take());
            continue;
        }
        if !double && ch == '#' && cur.is_none() {
            let comment: String = chars.collect();
            return Ok((words, Some(comment.trim().to_string())));
        }
        let w = cur.get_or_insert_with(|| Word { text: String::new(), raw: String::new(), expands: false });
        w.raw.push(ch);
        match ch {
            '\'' if !double => single = true,
            '"' => double = !double,
            '\\' => {
                if let Some(next) = chars.next() {
                    w.raw.push(next);
                    w.text.push(next);
                }
            }
            '$' | '`' => {
                w.expands = true;
                w.text.push(ch);
            }
            _ => w.text.push(ch),
        }
    }
    if single || double {
        return Err("a quote is not closed".into());
    }
    words.extend(cur);
    Ok((words, None))
}

const OPERATORS: &[&str] = &[">", ">>", "<", "|", "||", "&&", ";", "&", "2>", "2>&1", "&>"];

fn is_assignment(w: &Word) -> bool {
    let Some((name, _)) = w.raw.split_once('=') else { return false };
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
}

/// What a logical line (continuations joined) is.
fn classify(line: &str) -> Result<(String, Kind), String> {
    let (words, comment) = split_words(line)?;
    let text = words.iter().map(|w| w.raw.as_str()).collect::<Vec<_>>().join(" ");
    let mut rest = words.as_slice();
    let mut assignments = Vec::new();
    while let Some((w, tail)) = rest.split_first() {
        if !is_assignment(w) {
            break;
        }
        assignments.push(w);
        rest = tail;
    }
    let end = rest.iter().position(|w| OPERATORS.contains(&w.raw.as_str())).unwrap_or(rest.len());
    let (argv, ops) = rest.split_at(end);
    if argv.is_empty() && assignments.is_empty() {
        return Ok((text, Kind::Comment(comment.unwrap_or_default())));
    }
    let argv_text: Vec<&str> = argv.iter().map(|w| w.text.as_str()).collect();
    if argv_text.first() == Some(&"cd") && assignments.is_empty() && ops.is_empty() {
        return match argv {
            [_, dir] if !dir.expands => Ok((text, Kind::Cd(dir.text.clone()))),
            _ => Err(format!("`{text}`: this test follows `cd DIR` with one plain directory")),
        };
    }
    let head = match argv_text.get(..2) {
        Some(["kubectl", "cozyhr"]) => Head::Kubectl,
        Some(["helm", "cozy"]) => Head::Helm,
        Some(["flux", "cozyhr"]) => Head::Flux,
        _ => return Ok((text, Kind::Other)),
    };
    if let Some(w) = assignments.iter().copied().chain(argv).find(|w| w.expands) {
        return Err(format!("`{text}`: `{}` expands a variable, which this test does not do", w.raw));
    }
    let env = assignments
        .iter()
        .map(|w| {
            let (k, v) = w.text.split_once('=').expect("an assignment has =");
            (k.to_string(), v.to_string())
        })
        .collect();
    let ops: Vec<&str> = ops.iter().map(|w| w.raw.as_str()).collect();
    let mut i = 0;
    let mut stdout_to = None;
    if ops.first() == Some(&">") {
        match ops.get(1) {
            Some(file) if !OPERATORS.contains(file) && !file.contains('$') => stdout_to = Some(file.to_string()),
            _ => return Err(format!("`{text}`: `>` without a plain file name")),
        }
        i = 2;
    }
    let mut also_ok = Vec::new();
    if let ["||", "[", "$?", "-eq", n, "]", ..] = &ops[i..] {
        also_ok.push(n.parse().map_err(|_| format!("`{text}`: `[ $? -eq {n} ]` is not a number"))?);
        i += 6;
    }
    if i != ops.len() {
        return Err(format!(
            "`{text}`: this test runs one command per example, with at most `> FILE` and `|| [ $? -eq N ]` after it"
        ));
    }
    let args = argv_text[2..].iter().map(|s| s.to_string()).collect();
    Ok((text, Kind::Example(Example { head, env, args, stdout_to, also_ok })))
}

/// README.md, then docs/*.md by name.
fn doc_files() -> Vec<(String, PathBuf)> {
    let root = repo();
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("read docs/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    std::iter::once(root.join("README.md"))
        .chain(docs)
        .map(|p| (p.strip_prefix(&root).expect("under the repository").display().to_string(), p))
        .collect()
}

const SHELL_FENCES: &[&str] = &["sh", "bash", "shell", "zsh", "console"];
const HEADS: &[&str] = &["kubectl cozyhr", "helm cozy", "flux cozyhr"];

/// Every line of every shell block of the docs, and what is wrong with the docs for this test.
fn read_docs() -> (Vec<DocLine>, Vec<String>) {
    let mut lines = Vec::new();
    let mut problems = Vec::new();
    let mut block = 0;
    for (name, path) in doc_files() {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        // (language, line it opened at)
        let mut fence: Option<(String, usize)> = None;
        let mut pending: Option<(usize, String)> = None;
        for (i, raw) in text.lines().enumerate() {
            let n = i + 1;
            let trimmed = raw.trim_start();
            if let Some(lang) = trimmed.strip_prefix("```") {
                if let Some((_, at)) = pending.take() {
                    problems.push(format!("{name}:{at}: a line ends with `\\` and its block ends after it"));
                }
                fence = match fence {
                    None => {
                        block += 1;
                        Some((lang.trim().to_string(), n))
                    }
                    Some(_) => None,
                };
                continue;
            }
            let Some((lang, _)) = &fence else { continue };
            if !SHELL_FENCES.contains(&lang.as_str()) {
                if HEADS.iter().any(|h| trimmed.starts_with(h)) {
                    problems.push(format!(
                        "{name}:{n}: a command example outside a ```sh block is not run: put it in one ({raw})"
                    ));
                }
                continue;
            }
            if lang != "sh" {
                problems.push(format!("{name}:{n}: a ```{lang} block: write shell examples in ```sh blocks"));
                continue;
            }
            let (at, joined) = match pending.take() {
                Some((at, mut so_far)) => {
                    so_far.push(' ');
                    so_far.push_str(raw.trim());
                    (at, so_far)
                }
                None => (n, raw.trim().to_string()),
            };
            if let Some(head) = joined.strip_suffix('\\') {
                pending = Some((at, head.trim_end().to_string()));
                continue;
            }
            let place = format!("{name}:{at}");
            match classify(&joined) {
                Ok((text, kind)) => lines.push(DocLine { place, block, text, kind }),
                Err(e) => problems.push(format!("{place}: {e}")),
            }
        }
        if let Some((_, at)) = fence {
            problems.push(format!("{name}:{at}: a code block is not closed"));
        }
    }
    (lines, problems)
}

fn not_run_reason(text: &str) -> Option<&'static str> {
    NOT_RUN.iter().find(|(t, _)| *t == text).map(|(_, why)| *why)
}

/// The lines that are neither run nor listed, and the listed ones the docs no longer have.
fn classification_problems(lines: &[DocLine]) -> Vec<String> {
    let mut problems = Vec::new();
    for l in lines {
        if matches!(l.kind, Kind::Other) && not_run_reason(&l.text).is_none() {
            problems.push(format!(
                "{}: `{}` is neither a `kubectl cozyhr`/`helm cozy`/`flux cozyhr` example (run) nor in NOT_RUN \
                 (with a reason) in e2e/tests/docs_examples.rs",
                l.place, l.text
            ));
        }
    }
    for (text, _) in NOT_RUN {
        if !lines.iter().any(|l| l.text == *text) {
            problems.push(format!("NOT_RUN lists `{text}`, which no shell block of the docs has any more: drop it"));
        }
    }
    problems
}

/// The examples and the lines not run, one per line with its place, for failure messages.
fn listing(lines: &[DocLine]) -> String {
    let mut out = String::new();
    for l in lines {
        match &l.kind {
            Kind::Example(_) => match not_run_reason(&l.text) {
                None => writeln!(out, "  {}: {}", l.place, l.text),
                Some(why) => writeln!(out, "  {}: {}   [not run: {why}]", l.place, l.text),
            },
            Kind::Other => {
                writeln!(out, "  {}: {}   [not run: {}]", l.place, l.text, not_run_reason(&l.text).unwrap_or("?"))
            }
            Kind::Cd(_) => writeln!(out, "  {}: {}", l.place, l.text),
            Kind::Comment(_) => Ok(()),
        }
        .expect("write to a String");
    }
    out
}

#[test]
fn every_shell_line_in_the_docs_is_run_or_listed_with_a_reason() {
    let (lines, mut problems) = read_docs();
    problems.extend(classification_problems(&lines));
    let examples = lines.iter().filter(|l| matches!(l.kind, Kind::Example(_))).count();
    assert!(examples >= 20, "only {examples} command examples found in the docs:\n{}", listing(&lines));
    assert!(problems.is_empty(), "{}\n\nthe docs' shell lines:\n{}", problems.join("\n"), listing(&lines));

    // The reader can fail: a continuation joined, a comment cut, the codes an example accepts itself.
    let (text, kind) = classify("helm cozy diff a --detailed-exitcode > d.md || [ $? -eq 2 ]   # 2: changes").unwrap();
    assert_eq!(text, "helm cozy diff a --detailed-exitcode > d.md || [ $? -eq 2 ]");
    let Kind::Example(ex) = kind else { panic!("{text} is an example") };
    assert_eq!((ex.head, ex.args.len(), ex.stdout_to.as_deref(), ex.also_ok), (Head::Helm, 3, Some("d.md"), vec![2]));
    let (_, kind) = classify("X=1 kubectl cozyhr get 'a b' # c").unwrap();
    let Kind::Example(ex) = kind else { panic!("an example") };
    assert_eq!((ex.env, ex.args), (vec![("X".into(), "1".into())], vec!["get".to_string(), "a b".into()]));
    assert!(classify("helm cozy show \"$NAME\"").is_err(), "an expansion is refused");
    assert!(classify("kubectl cozyhr get | head").is_err(), "a pipe is refused");
    assert!(matches!(classify("helm plugin install .").unwrap().1, Kind::Other));
}

// ---------------------------------------------------------------------------------------------------
// The world the docs' names live in

const MY_APP_VALUES: &str = "greeting: hello\ncolor: blue\npassword: change-me\n";
const MY_APP_CONFIGMAP: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
data:
  greeting: {{ .Values.greeting | quote }}
  color: {{ .Values.color | quote }}
";
const MY_APP_SECRET: &str = "apiVersion: v1
kind: Secret
metadata:
  name: {{ .Release.Name }}-auth
stringData:
  password: {{ .Values.password | quote }}
";
const POSTGRES_CONFIGMAP: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-postgres
data:
  max_connections: {{ .Values.maxConnections | quote }}
";

/// deploy/my-app.yaml: the HelmRelease and its valuesFrom ConfigMap, as a GitOps repository keeps them
/// (applied to the cluster as they are, and read by `--release-file`).
const MY_APP_RELEASE: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: my-app-values
  namespace: apps
data:
  values.yaml: |
    greeting: hello from valuesFrom
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: my-app
  namespace: apps
spec:
  interval: 1h
  chartRef:
    kind: ExternalArtifact
    name: my-app
  kubeConfig:
    secretRef:
      name: tenant-kubeconfig
  valuesFrom:
    - kind: ConfigMap
      name: my-app-values
  values:
    color: green
  install:
    disableWait: true
  upgrade:
    disableWait: true
";

/// The releases of `postgres` in `tenants`: (name, tier, maxConnections).
const TENANT_DBS: &[(&str, &str, u32)] = &[("db-a", "db", 100), ("db-b", "db", 200), ("warehouse", "analytics", 50)];

/// The release of `postgres` that someone keeps suspended: handing back the `tier=db` set leaves it so.
const KEPT_SUSPENDED: &str = "warehouse";

fn tenant_release(name: &str, tier: &str, max: u32) -> String {
    format!(
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: {name}\n  namespace: tenants\n  \
         labels:\n    tier: {tier}\nspec:\n  interval: 1h\n  chartRef:\n    kind: ExternalArtifact\n    name: postgres\n  \
         install:\n    disableWait: true\n  upgrade:\n    disableWait: true\n  values:\n    maxConnections: {max}\n"
    )
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a file has a parent")).expect("mkdir");
    std::fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

fn git(dir: &Path, args: &[&str]) {
    let mut c = Command::new("git");
    c.arg("-C")
        .arg(dir)
        .args(["-c", "user.name=e2e", "-c", "user.email=e2e@cozyhr.invalid", "-c", "commit.gpgsign=false"])
        .args(args)
        .stdin(Stdio::null());
    run(c).ok();
}

/// scripts/publish-chart.sh DIR ARTIFACT NS: the chart as an ExternalArtifact helm-controller installs.
fn publish(dir: &Path, artifact: &str, ns: &str) {
    let e = env();
    let mut c = command(e.repo.join("scripts/publish-chart.sh"));
    c.arg(dir).arg(artifact).arg(ns).env("KUBECTL", &e.kubectl).env("HELM4", &e.helm4);
    run(c).ok();
}

fn helmrelease_names(ns: &str) -> Vec<String> {
    let r = kubectl(["-n", ns, "get", "helmreleases", "-o", "name"]);
    if r.code != Some(0) {
        return Vec::new();
    }
    r.stdout.lines().map(str::to_string).collect()
}

/// Deletes the world's HelmReleases, resumed first so helm-controller uninstalls them; never panics
/// (it also runs while a failed test unwinds).
fn clean() {
    for ns in ["apps", "tenants"] {
        for hr in helmrelease_names(ns) {
            let _ = kubectl(["-n", ns, "patch", &hr, "--type", "merge", "-p", r#"{"spec":{"suspend":false}}"#]);
        }
        let _ =
            kubectl(["-n", ns, "delete", "helmreleases", "--all", "--ignore-not-found", "--wait", "--timeout=120s"]);
    }
}

fn namespace_yaml(name: &str) -> String {
    format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {name}\n")
}

struct World {
    _dir: tempfile::TempDir,
    /// The checkout: charts/, deploy/.
    root: PathBuf,
    /// HOME for the flux CLI, with `flux-cozyhr` in .fluxcd/plugins.
    flux_home: tempfile::TempDir,
}

impl Drop for World {
    fn drop(&mut self) {
        clean();
    }
}

impl World {
    fn build() -> World {
        let e = env();
        // Helm 4 with the plugin installed from the checkout, before anything is timed.
        cozy_home(Helm::V4);
        clean();

        let dir = tempfile::Builder::new().prefix("cozyhr-docs-world-").tempdir().expect("tempdir");
        let root = dir.path().join("work");
        let my_app = root.join("charts/my-app");
        write(
            &my_app.join("Chart.yaml"),
            "apiVersion: v2\nname: my-app\nversion: 0.1.0\nappVersion: \"1.0\"\ntype: application\n",
        );
        write(&my_app.join("values.yaml"), MY_APP_VALUES);
        write(&my_app.join("templates/configmap.yaml"), MY_APP_CONFIGMAP);
        write(&my_app.join("templates/secret.yaml"), MY_APP_SECRET);
        // What the docs' examples leave in the chart directory is not part of the chart.
        write(&my_app.join(".helmignore"), "tenant.kubeconfig\ndiff.md\n");
        let postgres = root.join("charts/postgres");
        write(&postgres.join("Chart.yaml"), "apiVersion: v2\nname: postgres\nversion: 0.1.0\ntype: application\n");
        write(&postgres.join("values.yaml"), "maxConnections: 100\n");
        write(&postgres.join("templates/configmap.yaml"), POSTGRES_CONFIGMAP);
        write(&root.join("deploy/my-app.yaml"), MY_APP_RELEASE);
        write(&root.join(".gitignore"), "charts/my-app/tenant.kubeconfig\ncharts/my-app/diff.md\n");

        // A checkout whose origin/main is what was committed.
        let origin = dir.path().join("origin.git");
        std::fs::create_dir_all(&origin).expect("mkdir origin.git");
        git(&origin, &["init", "-q", "--bare", "-b", "main"]);
        git(&root, &["init", "-q", "-b", "main"]);
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-q", "-m", "my-app and postgres, as Flux deploys them"]);
        git(&root, &["remote", "add", "origin", &origin.to_string_lossy()]);
        git(&root, &["push", "-q", "-u", "origin", "main"]);

        // The clusters: apps and tenants here, apps in the tenant, which my-app installs into.
        apply(&namespace_yaml("apps"));
        apply(&namespace_yaml("tenants"));
        tenant_apply(&namespace_yaml("apps"));
        let kubeconfig = std::fs::read(tenant_kubeconfig()).expect("read the tenant's kubeconfig");
        apply(&format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: tenant-kubeconfig\n  namespace: apps\ndata:\n  value: {}\n",
            base64::engine::general_purpose::STANDARD.encode(&kubeconfig)
        ));
        publish(&my_app, "my-app", "apps");
        publish(&postgres, "postgres", "tenants");
        // The --target-kubeconfig example's file, beside the chart (after publishing, and .helmignore'd).
        std::fs::copy(tenant_kubeconfig(), my_app.join("tenant.kubeconfig")).expect("copy the tenant kubeconfig");
        apply(MY_APP_RELEASE);
        for (name, tier, max) in TENANT_DBS {
            apply(&tenant_release(name, tier, *max));
        }
        wait_hr_ready("apps", "my-app", READY_TIMEOUT);
        for (name, _, _) in TENANT_DBS {
            wait_hr_ready("tenants", name, READY_TIMEOUT);
        }
        kubectl([
            "-n",
            "tenants",
            "patch",
            "helmrelease",
            KEPT_SUSPENDED,
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"suspend":true}}"#,
        ])
        .ok();

        // flux cozyhr, installed by hand as docs/install.md says: flux-cozyhr in ~/.fluxcd/plugins.
        let flux_home = tempfile::Builder::new().prefix("cozyhr-docs-flux-").tempdir().expect("tempdir");
        let plugins = flux_home.path().join(".fluxcd/plugins");
        std::fs::create_dir_all(&plugins).expect("mkdir plugins");
        std::fs::copy(e.bin_dir.join("kubectl-cozyhr"), plugins.join("flux-cozyhr")).expect("copy flux-cozyhr");
        World { _dir: dir, root, flux_home }
    }

    /// The command an example runs, through its plugin dispatch.
    fn command(&self, ex: &Example, cwd: &Path) -> Command {
        let mut c = match ex.head {
            Head::Kubectl => command(&env().kubectl),
            Head::Helm => cozy_home(Helm::V4).command(),
            Head::Flux => {
                let mut c = command(flux_bin());
                c.env("HOME", self.flux_home.path()).env_remove("FLUXCD_PLUGINS");
                c
            }
        };
        let plugin = match ex.head {
            Head::Kubectl | Head::Flux => "cozyhr",
            Head::Helm => "cozy",
        };
        c.arg(plugin).args(&ex.args).current_dir(cwd);
        for (k, v) in &ex.env {
            c.env(k, v);
        }
        c
    }
}

// ---------------------------------------------------------------------------------------------------
// Running an example

/// A started example, its output collected as it comes; killed (its whole process group) when dropped.
struct Running {
    child: Child,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

fn collect(pipe: impl Read + Send + 'static, into: Arc<Mutex<String>>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { break };
            let mut text = into.lock().unwrap_or_else(|p| p.into_inner());
            text.push_str(&line);
            text.push('\n');
        }
    })
}

impl Drop for Running {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let mut kill = Command::new("kill");
            kill.args(["-KILL", "--", &format!("-{}", self.child.id())]);
            let _ = kill.status();
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Running {
    fn start(mut c: Command, stdout_file: Option<std::fs::File>) -> Running {
        c.process_group(0).stderr(Stdio::piped());
        match stdout_file {
            Some(f) => c.stdout(f),
            None => c.stdout(Stdio::piped()),
        };
        let mut child = c.spawn().unwrap_or_else(|e| panic!("cannot start {:?}: {e}", c.get_program()));
        let stdout = Arc::new(Mutex::new(String::new()));
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut readers = vec![collect(child.stderr.take().expect("stderr piped"), Arc::clone(&stderr))];
        if let Some(out) = child.stdout.take() {
            readers.push(collect(out, Arc::clone(&stdout)));
        }
        Running { child, stdout, stderr, readers }
    }

    fn stdout(&self) -> String {
        self.stdout.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    /// Waits at most `within` for the exit; the exit code, or None after a timeout (then it is killed).
    fn wait(mut self, within: Duration) -> (Result<Option<i32>, String>, String, String) {
        let start = Instant::now();
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break Ok(status.code()),
                Ok(None) if start.elapsed() > within => break Err(format!("still running after {within:?}")),
                Ok(None) => std::thread::sleep(Duration::from_millis(50)),
                Err(e) => break Err(format!("cannot wait: {e}")),
            }
        };
        if status.is_err() {
            drop(self);
            return (status, String::new(), String::new());
        }
        for r in std::mem::take(&mut self.readers) {
            let _ = r.join();
        }
        (status, self.stdout(), self.stderr())
    }

    /// SIGINT to the plugin (Ctrl-C), found under its dispatcher: helm runs helm-cozy as a child, kubectl
    /// execs kubectl-cozyhr.
    fn interrupt(&self) {
        let pid = self.child.id();
        let plugin = children(pid)
            .into_iter()
            .find(|(_, comm)| ["helm-cozy", "kubectl-cozyhr", "flux-cozyhr"].contains(&comm.as_str()))
            .map(|(p, _)| p)
            .unwrap_or(pid);
        let mut kill = Command::new("kill");
        kill.args(["-INT", &plugin.to_string()]);
        run(kill).ok();
    }
}

/// What the examples have done to my-app so far.
struct Seen {
    /// The README's "edit a template" was done.
    edited: bool,
    /// Whether my-app's objects carry the edit: not before an apply of the edited chart, yes after one,
    /// not after a delete; unknown once helm-controller has had it back (resume, reconcile).
    live_has_edit: Option<bool>,
}

impl Seen {
    /// Whether `ex`, a `helm cozy diff` of my-app, must show the edit (and with --detailed-exitcode
    /// exit 2): against a Git ref whenever the working tree has it, against the cluster when the
    /// cluster does not.
    fn diff_must_show_the_edit(&self, ex: &Example) -> bool {
        let is_diff = ex.head == Head::Helm && ex.subcommand() == "diff" && !ex.has("--all") && !ex.watches();
        if !is_diff || !ex.args.iter().any(|a| a == "my-app") || !self.edited {
            return false;
        }
        let against_git = ex.args.windows(2).any(|w| w[0] == "--against" && w[1].starts_with("git:"));
        against_git || self.live_has_edit == Some(false)
    }

    /// What an example that ran did to my-app.
    fn after(&mut self, ex: &Example) {
        if !ex.args.iter().any(|a| a == "my-app") {
            return;
        }
        match (ex.head, ex.subcommand()) {
            (Head::Helm, "apply") if self.edited && !ex.has("--dry-run") => self.live_has_edit = Some(true),
            (Head::Helm, "delete") => self.live_has_edit = Some(false),
            (Head::Kubectl | Head::Flux, "resume" | "reconcile") => self.live_has_edit = None,
            _ => {}
        }
    }
}

/// The last `max` characters of a command's output, for a failure message.
fn tail(text: &str, max: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= max {
        return text.to_string();
    }
    format!("[...]{}", chars[chars.len() - max..].iter().collect::<String>())
}

/// Runs one example in `cwd`; the problems found (empty when it did what the docs say).
fn run_example(world: &World, ex: &Example, cwd: &Path, seen: &Seen) -> Vec<String> {
    let c = world.command(ex, cwd);
    let file = ex.stdout_to.as_ref().map(|f| {
        std::fs::File::create(cwd.join(f)).unwrap_or_else(|e| panic!("create {}: {e}", cwd.join(f).display()))
    });
    let mut problems = Vec::new();
    let mut running = Running::start(c, file);
    if ex.watches() {
        // The first round, then 3 s more of running, then Ctrl-C.
        let start = Instant::now();
        let first = loop {
            let stderr = running.stderr();
            let round =
                stderr.lines().find(|l| l.contains(" round 1 ") && l.contains("; watching ")).map(str::to_string);
            let printed = match ex.head {
                Head::Helm => round,
                Head::Kubectl | Head::Flux => running.stdout().lines().next().map(str::to_string),
            };
            if let Some(line) = printed {
                break Ok(line);
            }
            if running.exited() {
                break Err("exited before its first round".to_string());
            }
            if start.elapsed() > FIRST_ROUND_TIMEOUT {
                break Err(format!("no first round within {FIRST_ROUND_TIMEOUT:?}"));
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        match first {
            Ok(line) => {
                if line.contains("failed") || line.starts_with('✗') {
                    problems.push(format!("its first round failed: {line}"));
                }
                std::thread::sleep(Duration::from_secs(3));
                if running.exited() {
                    problems.push("it stopped watching 3 s after its first round".into());
                } else {
                    running.interrupt();
                }
            }
            Err(e) => problems.push(e),
        }
        let (code, stdout, stderr) = running.wait(Duration::from_secs(60));
        match code {
            Ok(Some(0)) => {}
            Ok(other) => problems.push(format!("exited {other:?} after Ctrl-C, not 0")),
            Err(e) => problems.push(format!("{e} after Ctrl-C")),
        }
        return with_output(problems, &stdout, &stderr);
    }

    let (code, mut stdout, stderr) = running.wait(EXAMPLE_TIMEOUT);
    if let Some(f) = &ex.stdout_to {
        stdout = std::fs::read_to_string(cwd.join(f)).unwrap_or_default();
    }
    let mut allowed = vec![0];
    if ex.has("--detailed-exitcode") {
        allowed.push(2);
    }
    allowed.extend(&ex.also_ok);
    let code = match code {
        Ok(code) => code,
        Err(e) => return with_output(vec![e], &stdout, &stderr),
    };
    if !code.is_some_and(|c| allowed.contains(&c)) {
        problems.push(format!("exited {code:?}, not one of {allowed:?}"));
    }
    if stdout.trim().is_empty() && stderr.trim().is_empty() {
        problems.push("printed nothing".into());
    }
    if code == Some(0)
        && let Some(line) = stderr.lines().find(|l| l.starts_with("error:"))
    {
        problems.push(format!("succeeded saying `{line}`"));
    }
    // What the docs say the example shows.
    if seen.diff_must_show_the_edit(ex) {
        if matches!(ex.output(), None | Some("diff" | "markdown")) && !stdout.contains(EDIT_MARK) {
            problems.push(format!("does not show the README's template edit ({EDIT_MARK})"));
        }
        if ex.has("--detailed-exitcode") && code != Some(2) {
            problems.push(format!("exited {code:?} with --detailed-exitcode and the template edit to show, not 2"));
        }
    }
    if matches!(ex.subcommand(), "get" | "list" | "ls")
        && ex.head != Head::Helm
        && !ex.has("--status-selector")
        && !stdout.lines().any(|l| l.split_whitespace().any(|w| w == "my-app" || w == "helmrelease/my-app"))
    {
        problems.push("does not list my-app".into());
    }
    with_output(problems, &stdout, &stderr)
}

fn with_output(mut problems: Vec<String>, stdout: &str, stderr: &str) -> Vec<String> {
    // Shown with the test's output (on failure, or with --nocapture): what each example said.
    eprintln!("stdout:\n{}\nstderr:\n{}", tail(stdout, 1500), tail(stderr, 1500));
    if !problems.is_empty() {
        problems.push(format!("stdout:\n{}\nstderr:\n{}", tail(stdout, 3000), tail(stderr, 3000)));
    }
    problems
}

/// The README's "# ... edit a template ...", done in the chart directory the block is in.
fn edit_a_template(cwd: &Path) -> Result<(), String> {
    let path = cwd.join("templates/configmap.yaml");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("no template to edit at {}: {e}", path.display()))?;
    std::fs::write(&path, format!("{text}  {EDIT_MARK}: \"yes\"\n")).map_err(|e| e.to_string())
}

fn suspended(ns: &str, name: &str) -> Option<bool> {
    let hr: Value = get_json("helmrelease", ns, name)?;
    Some(hr.pointer("/spec/suspend").and_then(Value::as_bool).unwrap_or(false))
}

#[test]
fn every_command_example_in_the_docs_runs() {
    let (lines, mut problems) = read_docs();
    problems.extend(classification_problems(&lines));
    assert!(problems.is_empty(), "{}\n\nthe docs' shell lines:\n{}", problems.join("\n"), listing(&lines));
    eprintln!("the docs' shell lines:\n{}", listing(&lines));

    let world = World::build();
    let mut failures = Vec::new();
    let mut ran = Vec::new();
    let mut seen = Seen { edited: false, live_has_edit: Some(false) };
    let mut block = 0;
    let mut cwd = world.root.clone();
    for l in &lines {
        if l.block != block {
            block = l.block;
            cwd = world.root.clone();
        }
        match &l.kind {
            Kind::Cd(dir) => {
                cwd = cwd.join(dir);
                if !cwd.is_dir() {
                    failures.push(format!("{}: `{}`: the world has no {}", l.place, l.text, cwd.display()));
                    break;
                }
            }
            Kind::Comment(c) if c.contains("edit a template") => match edit_a_template(&cwd) {
                Ok(()) => seen.edited = true,
                Err(e) => failures.push(format!("{}: `# {c}`: {e}", l.place)),
            },
            Kind::Example(ex) if not_run_reason(&l.text).is_none() => {
                let start = Instant::now();
                eprintln!("--- {}: {}", l.place, l.text);
                let found = run_example(&world, ex, &cwd, &seen);
                seen.after(ex);
                let rel = cwd.strip_prefix(&world.root).unwrap_or(&cwd).display().to_string();
                let ok = if found.is_empty() { "ok" } else { "FAILED" };
                ran.push(format!("  {ok:6} {:5.1}s  {}: {}", start.elapsed().as_secs_f64(), l.place, l.text));
                if !found.is_empty() {
                    failures.push(format!("{}: `{}` (in ./{rel}):\n{}", l.place, l.text, found.join("\n")));
                }
            }
            Kind::Comment(_) | Kind::Example(_) | Kind::Other => {}
        }
    }
    eprintln!("examples run:\n{}", ran.join("\n"));

    // The set handed back is the one applied: the tier=db releases are Flux's again, the one kept
    // suspended stays so.
    for (name, tier, _) in TENANT_DBS {
        let want = *name == KEPT_SUSPENDED;
        if suspended("tenants", name) != Some(want) {
            failures.push(format!(
                "after the docs' examples, tenants/{name} (tier={tier}) is suspended: {:?}, expected {want} \
                 (`apply --all -n tenants -l tier=db` and the resume that hands its set back)",
                suspended("tenants", name)
            ));
        }
    }
    assert!(failures.is_empty(), "{} problems with the docs' examples:\n\n{}", failures.len(), failures.join("\n\n"));
    assert!(seen.edited, "the README's `# ... edit a template ...` was not found, so the diffs showed no change");
}
