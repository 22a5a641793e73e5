//! The command line of the real `kubectl-cozyhr` binary, without a cluster: exit codes, where output goes,
//! usage errors, the one error line when no cluster can be reached, cluster flags before and after the
//! subcommand, and both completion paths (the generated scripts and `__complete` behind
//! `kubectl_complete-cozyhr`). See testsupport/cli.rs for the sandbox every run gets.

#[path = "../../testsupport/cli.rs"]
mod cli;

use cli::{
    ApiRecorder, REFUSED, Sandbox, assert_bare_command_prints_help, assert_completion_scripts_name,
    assert_help_lists_exactly, assert_help_on_stdout, assert_version, help_flags,
};

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-cozyhr");

/// Every visible subcommand; `help_lists_exactly_these_subcommands` keeps the list honest.
const SUBCOMMANDS: &[&str] =
    &["get", "suspend", "resume", "reconcile", "status", "tree", "drift", "completion", "version"];

/// Every subcommand that needs a cluster, with valid arguments and some of its flags.
const CLUSTER_COMMANDS: &[&[&str]] = &[
    &["get"],
    &["get", "web", "db"],
    &["list", "-o", "wide"],
    &["ls", "-o", "yaml", "-l", "app=web"],
    &["get", "-w", "-o", "name"],
    &["get", "--status-selector", "ready=false"],
    &["ls", "-A", "--status-selector=Released=True", "-o", "name"],
    &["suspend", "web"],
    &["suspend", "--all"],
    &["resume", "web", "--timeout", "30s"],
    &["resume", "--all", "--wait=false"],
    &["reconcile", "web"],
    &["reconcile", "web", "--with-source", "--force", "--reset", "--timeout", "1m"],
    &["status", "web"],
    &["tree", "web"],
    &["tree", "web", "-o", "json"],
    &["tree", "-o", "yaml", "web"],
    &["drift", "web"],
    &["drift", "web", "--detailed-exitcode", "-o", "json", "--show-secrets"],
];

#[test]
fn help_lists_exactly_these_subcommands() {
    assert_help_lists_exactly(BIN, SUBCOMMANDS);
}

#[test]
fn help_goes_to_stdout_with_exit_0() {
    assert_help_on_stdout(BIN, "kubectl cozyhr", SUBCOMMANDS);
    // The aliases of get have get's help.
    let sandbox = Sandbox::new();
    for alias in ["list", "ls"] {
        assert!(sandbox.run(BIN, &["help", alias]).printed().contains("Usage: kubectl cozyhr get"), "{alias}");
    }
}

#[test]
fn version_prints_the_workspace_version() {
    assert_version(BIN, "kubectl-cozyhr");
}

#[test]
fn usage_errors_are_one_line_and_exit_1() {
    let sandbox = Sandbox::new();
    let cases: &[(&[&str], &str)] = &[
        (&["nosuch"], "'nosuch'"),
        (&["--bogus", "get"], "'--bogus'"),
        (&["get", "--bogus"], "'--bogus'"),
        (&["suspend", "web", "--bogus"], "'--bogus'"),
        (&["resume", "web", "--bogus"], "'--bogus'"),
        (&["reconcile", "web", "--bogus"], "'--bogus'"),
        (&["status", "web", "--bogus"], "'--bogus'"),
        (&["tree", "web", "--bogus"], "'--bogus'"),
        (&["drift", "web", "--bogus"], "'--bogus'"),
        (&["completion", "bash", "--bogus"], "'--bogus'"),
        (&["version", "--bogus"], "'--bogus'"),
        (&["version", "extra"], "'extra'"),
        (&["status", "web", "db"], "'db'"),
        (&["reconcile", "web", "db"], "'db'"),
        (&["tree", "web", "db"], "'db'"),
        (&["drift", "web", "db"], "'db'"),
        // A missing required argument.
        (&["status"], "<NAME>"),
        (&["reconcile"], "<NAME>"),
        (&["tree"], "<NAME>"),
        (&["drift"], "<NAME>"),
        (&["suspend"], "<NAMES>"),
        (&["resume"], "<NAMES>"),
        (&["completion"], "<SHELL>"),
        (&["get", "-n"], "--namespace"),
        (&["get", "--kubeconfig"], "--kubeconfig"),
        (&["get", "--context"], "--context"),
        // A bad value for an enum or typed flag.
        (&["get", "-o", "table"], "--output"),
        (&["get", "--output=table"], "--output"),
        (&["tree", "web", "-o", "wide"], "--output"),
        (&["tree", "web", "-o", "name"], "--output"),
        (&["drift", "web", "-o", "yaml"], "--output"),
        (&["drift", "web", "--detailed-exitcode=yes"], "--detailed-exitcode"),
        (&["drift", "web", "--target-context", "c"], "--target-kubeconfig"),
        // A status selector that is not CONDITION=STATUS with STATUS true, false or unknown.
        (&["get", "--status-selector", "ready"], "--status-selector"),
        (&["get", "--status-selector=ready=no"], "--status-selector"),
        (&["get", "--status-selector", "=false"], "--status-selector"),
        (&["get", "--status-selector"], "--status-selector"),
        (&["tree", "web", "--status-selector", "ready=false"], "'--status-selector'"),
        (&["--color", "sometimes", "get"], "--color"),
        (&["get", "--color=sometimes"], "--color"),
        (&["completion", "tcsh"], "'tcsh'"),
        (&["resume", "web", "--wait=maybe"], "--wait"),
        (&["resume", "web", "--timeout", "soon"], "--timeout"),
        (&["reconcile", "web", "--timeout", "5x"], "--timeout"),
        (&["-v", "loud", "get"], "--v"),
        // Conflicts: names with --all, -A with a one-release command.
        (&["suspend", "web", "--all"], "--all"),
        (&["resume", "--all", "web"], "--all"),
        (&["-A", "status", "web"], "-A/--all-namespaces"),
        (&["-A", "reconcile", "web"], "-A/--all-namespaces"),
        (&["-A", "tree", "web"], "-A/--all-namespaces"),
        (&["-A", "drift", "web"], "-A/--all-namespaces"),
        (&["drift", "web", "-A"], "'-A'"),
        (&["tree", "web", "-A"], "'-A'"),
        (&["status", "web", "-A"], "'-A'"),
        (&["get", "--all"], "'--all'"),
        // helm cozy's spelling is not kubectl's.
        (&["--kube-context", "a", "get"], "'--kube-context'"),
        (&["get", "--kube-context", "a"], "'--kube-context'"),
    ];
    for (args, offender) in cases {
        sandbox.run(BIN, args).usage_error(offender);
    }
    assert_bare_command_prints_help(&sandbox, BIN);
}

#[test]
fn every_cluster_command_without_a_kubeconfig_fails_in_one_line() {
    let mut sandbox = Sandbox::new();
    // What is wrong (the file, named once and where it came from), what to do for that case.
    let from_env = sandbox.unreadable_kubeconfig_from_env();
    let other = sandbox.path("other-missing-kubeconfig");
    let other = other.to_str().expect("UTF-8");
    let from_flag = sandbox.unreadable_kubeconfig_from_flag(other);
    for args in CLUSTER_COMMANDS {
        assert_eq!(sandbox.run(BIN, args).one_error_line(&[]), from_env, "{args:?}");
        let with_flag = [args, &["--kubeconfig", other][..]].concat();
        assert_eq!(sandbox.run(BIN, &with_flag).one_error_line(&[]), from_flag, "{with_flag:?}");
    }
    // No KUBECONFIG and no ~/.kube/config: the same, naming the default file.
    sandbox.remove_env("KUBECONFIG");
    let default = sandbox.unreadable_default_kubeconfig();
    for args in CLUSTER_COMMANDS {
        assert_eq!(sandbox.run(BIN, args).one_error_line(&[]), default, "{args:?}");
    }
}

#[test]
fn a_context_the_kubeconfig_lacks_is_named_with_those_it_has() {
    let recorder = ApiRecorder::start();
    let mut sandbox = Sandbox::new();
    let kubeconfig = sandbox.write("kubeconfig", &recorder.kubeconfig());
    let kubeconfig = kubeconfig.to_str().expect("UTF-8");
    let expected = recorder.context_not_found(kubeconfig, "zz");
    for args in CLUSTER_COMMANDS {
        // Given with --kubeconfig (while KUBECONFIG names nothing) ...
        let with_flag = [&["--kubeconfig", kubeconfig, "--context", "zz"][..], args].concat();
        assert_eq!(sandbox.run(BIN, &with_flag).one_error_line(&[]), expected, "{with_flag:?}");
    }
    // ... or with KUBECONFIG.
    sandbox.set_env("KUBECONFIG", kubeconfig);
    for args in CLUSTER_COMMANDS {
        let with_context = [args, &["--context=zz"][..]].concat();
        assert_eq!(sandbox.run(BIN, &with_context).one_error_line(&[]), expected, "{with_context:?}");
    }
    // A current-context that is not there, none at all, and a kubeconfig without contexts.
    let gone = sandbox.write("gone", &recorder.kubeconfig().replace("current-context: a", "current-context: gone"));
    let gone = gone.to_str().expect("UTF-8");
    let unset = sandbox.write("unset", &recorder.kubeconfig().replace("current-context: a", ""));
    let unset = unset.to_str().expect("UTF-8");
    let empty = sandbox.write("empty", "apiVersion: v1\nkind: Config\n");
    let empty = empty.to_str().expect("UTF-8");
    let cases: &[(&[&str], String)] = &[
        (
            &["--kubeconfig", gone, "get"],
            format!(r#"error: current-context "gone" is not in the kubeconfig ({gone}); contexts: a, b"#),
        ),
        (
            &["--kubeconfig", unset, "get"],
            format!(
                "error: the kubeconfig ({unset}) sets no current-context; contexts: a, b (choose one with kubectl config use-context NAME)"
            ),
        ),
        (
            &["--kubeconfig", empty, "get", "--context", "zz"],
            format!(r#"error: context "zz" is not in the kubeconfig ({empty}); it has no contexts"#),
        ),
    ];
    for (args, expected) in cases {
        assert_eq!(sandbox.run(BIN, args).one_error_line(&[]), expected, "{args:?}");
    }
    assert!(recorder.take().is_empty(), "a context that is not there is found out before asking the cluster");
}

/// Pairs (or more) of spellings that must parse the same: flags before and after the subcommand.
fn same_meaning_spellings(other_kubeconfig: &str) -> Vec<Vec<Vec<&str>>> {
    vec![
        vec![vec!["-A", "get"], vec!["get", "-A"], vec!["--all-namespaces", "get"], vec!["get", "--all-namespaces"]],
        vec![vec!["-n", "ns1", "get"], vec!["get", "-n", "ns1"], vec!["--namespace=ns1", "get"], vec!["get", "-nns1"]],
        vec![vec!["--context", "b", "get"], vec!["get", "--context", "b"], vec!["get", "--context=b"]],
        vec![vec!["--kubeconfig", other_kubeconfig, "get"], vec!["get", "--kubeconfig", other_kubeconfig]],
        vec![vec!["-A", "suspend", "--all"], vec!["suspend", "--all", "-A"], vec!["suspend", "-A", "--all"]],
        vec![vec!["-A", "resume", "--all", "--wait=false"], vec!["resume", "--all", "--wait=false", "-A"]],
        vec![
            vec!["-n", "ns1", "status", "web"],
            vec!["status", "web", "-n", "ns1"],
            vec!["status", "-n", "ns1", "web"],
        ],
        vec![vec!["--context", "b", "reconcile", "web"], vec!["reconcile", "web", "--context", "b"]],
        vec![
            vec!["-n", "ns1", "tree", "web"],
            vec!["tree", "web", "-n", "ns1"],
            vec!["tree", "--namespace=ns1", "web"],
        ],
        vec![vec!["-n", "ns1", "suspend", "web"], vec!["suspend", "web", "--namespace", "ns1"]],
        vec![vec!["--color", "never", "get"], vec!["get", "--color", "never"], vec!["get", "--color=never"]],
        vec![vec!["-v", "0", "get"], vec!["get", "-v", "0"], vec!["get", "--v=0"]],
    ]
}

#[test]
fn cluster_flags_before_and_after_the_subcommand_reach_the_same_error() {
    let sandbox = Sandbox::new();
    let other = sandbox.path("other-missing-kubeconfig");
    let other = other.to_str().expect("UTF-8");
    for spellings in same_meaning_spellings(other) {
        let first = sandbox.run(BIN, &spellings[0]);
        let line = first.one_error_line(&[]);
        if spellings[0].contains(&other) {
            assert!(line.contains(other), "{:?} does not read the --kubeconfig file: {line}", spellings[0]);
        }
        for spelling in &spellings[1..] {
            let out = sandbox.run(BIN, spelling);
            assert_eq!(out.one_error_line(&[]), line, "{spelling:?} and {:?} differ", spellings[0]);
        }
    }
}

#[test]
fn cluster_flags_before_and_after_the_subcommand_ask_the_cluster_the_same() {
    let recorder = ApiRecorder::start();
    let mut sandbox = Sandbox::new();
    let kubeconfig = sandbox.write("kubeconfig", &recorder.kubeconfig());
    sandbox.set_env("KUBECONFIG", &kubeconfig);
    // The same flags given with --kubeconfig while KUBECONFIG names nothing.
    let flag_sandbox = Sandbox::new();
    let kubeconfig = kubeconfig.to_str().expect("UTF-8");

    let cases: &[(&[&[&str]], &str)] = &[
        (&[&["get"], &["list"], &["ls"]], "GET /apis/helm.toolkit.fluxcd.io/v2/namespaces/ctxns/helmreleases?"),
        (
            &[&["-A", "get"], &["get", "-A"], &["--all-namespaces", "ls"]],
            "GET /apis/helm.toolkit.fluxcd.io/v2/helmreleases?",
        ),
        (
            &[&["-n", "ns1", "get"], &["get", "-n", "ns1"], &["get", "--namespace=ns1"]],
            "GET /apis/helm.toolkit.fluxcd.io/v2/namespaces/ns1/helmreleases?",
        ),
        (
            &[&["--context", "b", "get"], &["get", "--context", "b"]],
            "GET /apis/helm.toolkit.fluxcd.io/v2/namespaces/bns/helmreleases?",
        ),
        // -n wins over the context's namespace, wherever either is.
        (
            &[&["--context", "b", "get", "-n", "ns1"], &["-n", "ns1", "get", "--context=b"]],
            "GET /apis/helm.toolkit.fluxcd.io/v2/namespaces/ns1/helmreleases?",
        ),
        (
            &[&["-A", "suspend", "--all"], &["suspend", "--all", "-A"]],
            "GET /apis/helm.toolkit.fluxcd.io/v2/helmreleases?",
        ),
        (
            &[&["-n", "ns1", "suspend", "--all"], &["suspend", "--all", "-n", "ns1"]],
            "GET /apis/helm.toolkit.fluxcd.io/v2/namespaces/ns1/helmreleases?",
        ),
        (
            &[&["-n", "ns1", "suspend", "web"], &["suspend", "web", "-n", "ns1"]],
            "GET /apis/helm.toolkit.fluxcd.io/v2/namespaces/ns1/helmreleases/web",
        ),
        (
            &[&["--context", "b", "resume", "web"], &["resume", "web", "--context", "b"]],
            "GET /apis/helm.toolkit.fluxcd.io/v2/namespaces/bns/helmreleases/web",
        ),
        (
            &[&["-n", "ns1", "reconcile", "web"], &["reconcile", "web", "-n", "ns1"]],
            "GET /apis/helm.toolkit.fluxcd.io/v2/namespaces/ns1/helmreleases/web",
        ),
        (
            &[&["-n", "ns1", "status", "web"], &["status", "web", "-n", "ns1"]],
            "GET /apis/helm.toolkit.fluxcd.io/v2/namespaces/ns1/helmreleases/web",
        ),
        (
            &[&["-n", "ns1", "drift", "web"], &["drift", "web", "-n", "ns1", "-o", "json"]],
            "GET /apis/helm.toolkit.fluxcd.io/v2/namespaces/ns1/helmreleases/web",
        ),
    ];
    for (spellings, expected) in cases {
        for spelling in *spellings {
            let out = sandbox.run(BIN, spelling);
            out.one_error_line(&[REFUSED]);
            assert_eq!(recorder.take(), [*expected], "{spelling:?} asked something else");

            // --kubeconfig before and after the subcommand, instead of KUBECONFIG.
            for with_flag in [
                [&["--kubeconfig", kubeconfig][..], spelling].concat(),
                [spelling, &["--kubeconfig", kubeconfig][..]].concat(),
            ] {
                flag_sandbox.run(BIN, &with_flag).one_error_line(&[REFUSED]);
                assert_eq!(recorder.take(), [*expected], "{with_flag:?} asked something else");
            }
        }
    }
}

#[test]
fn completion_scripts_name_every_subcommand_and_flag() {
    let flags = [
        "all-namespaces",
        "namespace",
        "context",
        "kubeconfig",
        "output",
        "selector",
        "status-selector",
        "watch",
        "with-source",
        "detailed-exitcode",
        "show-secrets",
    ];
    assert_completion_scripts_name(BIN, &[SUBCOMMANDS, &["list", "ls", "kubectl-cozyhr"], &flags].concat());
}

/// `__complete WORDS...`: the candidates it printed, after checking the protocol (exit 0, nothing on
/// stderr, cobra's no-file directive last).
fn complete(sandbox: &Sandbox, words: &[&str]) -> Vec<String> {
    let out = sandbox.run(BIN, &[&["__complete"][..], words].concat());
    assert_eq!(out.code, Some(0), "__complete {words:?}: {}", out.stderr);
    assert!(out.stderr.is_empty(), "__complete {words:?} wrote to stderr:\n{}", out.stderr);
    let mut lines: Vec<String> = out.stdout.lines().map(String::from).collect();
    assert_eq!(lines.pop().as_deref(), Some(":4"), "__complete {words:?} must end with :4:\n{}", out.stdout);
    lines
}

#[test]
fn dynamic_completion_offers_subcommands_and_values_without_a_cluster() {
    let sandbox = Sandbox::new();
    let mut all: Vec<&str> = SUBCOMMANDS.iter().copied().chain(["help"]).collect();
    all.sort();
    let cases: &[(&[&str], &[&str])] = &[
        (&[], &all),
        (&[""], &all),
        (&["re"], &["reconcile", "resume"]),
        (&["s"], &["status", "suspend"]),
        (&["-n", "apps", "--context", "dev", "st"], &["status"]),
        (&["get", "-o", ""], &["json", "name", "wide", "yaml"]),
        (&["ls", "--output", "y"], &["yaml"]),
        (&["--color", ""], &["always", "auto", "never"]),
        (&["status", "web", "--color", "n"], &["never"]),
        (&["completion", ""], &["bash", "elvish", "fish", "powershell", "zsh"]),
        (&["completion", "z"], &["zsh"]),
        (&["reconcile", "--f"], &["--force"]),
        (&["tr"], &["tree"]),
        (&["tree", "web", "-o", ""], &["json", "yaml"]),
        (&["get", "--status"], &["--status-selector"]),
        // Names, namespaces and contexts need a cluster or a kubeconfig: nothing, and no error.
        (&["get", ""], &[]),
        (&["status", ""], &[]),
        (&["tree", ""], &[]),
        (&["get", "--status-selector", ""], &[]),
        (&["-n", ""], &[]),
        (&["--context", ""], &[]),
        (&["reconcile", "web", ""], &[]),
        (&["completion", "bash", ""], &[]),
        // An unknown flag is skipped, never an error.
        (&["--bogus", ""], &all),
    ];
    for (words, expected) in cases {
        assert_eq!(complete(&sandbox, words), *expected, "__complete {words:?}");
    }
}

#[test]
fn dynamic_completion_offers_the_flags_help_lists() {
    let sandbox = Sandbox::new();
    for sub in SUBCOMMANDS {
        let help = sandbox.run(BIN, &[sub, "-h"]);
        let flags = help_flags(help.printed());
        let mut longs: Vec<String> = flags.iter().filter_map(|f| f.long.as_ref().map(|l| format!("--{l}"))).collect();
        let mut all: Vec<String> =
            longs.iter().cloned().chain(flags.iter().filter_map(|f| f.short.map(|s| format!("-{s}")))).collect();
        longs.sort();
        all.sort();
        assert_eq!(complete(&sandbox, &[sub, "--"]), longs, "__complete {sub} --");
        assert_eq!(complete(&sandbox, &[sub, "-"]), all, "__complete {sub} -");
    }
}

#[test]
fn dynamic_completion_reads_contexts_from_the_kubeconfig() {
    let recorder = ApiRecorder::start();
    let mut sandbox = Sandbox::new();
    let kubeconfig = sandbox.write("kubeconfig", &recorder.kubeconfig());
    let kubeconfig = kubeconfig.to_str().expect("UTF-8");
    // From --kubeconfig on the line, before or after the subcommand, while KUBECONFIG names nothing.
    assert_eq!(complete(&sandbox, &["--kubeconfig", kubeconfig, "--context", ""]), ["a", "b"]);
    assert_eq!(complete(&sandbox, &["get", "--kubeconfig", kubeconfig, "--context", "b"]), ["b"]);
    assert_eq!(complete(&sandbox, &["--kubeconfig", kubeconfig, "status", "web", "--context", ""]), ["a", "b"]);
    sandbox.set_env("KUBECONFIG", kubeconfig);
    assert_eq!(complete(&sandbox, &["--context", ""]), ["a", "b"]);
    assert_eq!(complete(&sandbox, &["get", "--context", "a"]), ["a"]);
    assert!(recorder.take().is_empty(), "contexts come from the kubeconfig alone");
}

#[test]
fn dynamic_completion_of_names_asks_the_cluster_and_keeps_its_refusal_quiet() {
    let recorder = ApiRecorder::start();
    let mut sandbox = Sandbox::new();
    let kubeconfig = sandbox.write("kubeconfig", &recorder.kubeconfig());
    sandbox.set_env("KUBECONFIG", &kubeconfig);
    let cases: &[(&[&str], &str)] = &[
        (&["get", ""], "GET /apis/helm.toolkit.fluxcd.io/v2/namespaces/ctxns/helmreleases?"),
        (&["-n", "ns1", "status", "w"], "GET /apis/helm.toolkit.fluxcd.io/v2/namespaces/ns1/helmreleases?"),
        (&["resume", "--context", "b", ""], "GET /apis/helm.toolkit.fluxcd.io/v2/namespaces/bns/helmreleases?"),
        (
            &["suspend", "web", "--namespace=ns1", ""],
            "GET /apis/helm.toolkit.fluxcd.io/v2/namespaces/ns1/helmreleases?",
        ),
        (&["tree", "-n", "ns1", ""], "GET /apis/helm.toolkit.fluxcd.io/v2/namespaces/ns1/helmreleases?"),
        (&["get", "-n", ""], "GET /api/v1/namespaces?"),
    ];
    for (words, expected) in cases {
        assert!(complete(&sandbox, words).is_empty(), "__complete {words:?}");
        assert_eq!(recorder.take(), [*expected], "__complete {words:?}");
    }
}

#[test]
fn the_kubectl_completion_helper_runs_the_plugin() {
    use std::os::unix::fs::PermissionsExt;
    let helper = concat!(env!("CARGO_MANIFEST_DIR"), "/../kubectl_complete-cozyhr");
    let mode = std::fs::metadata(helper).expect("kubectl_complete-cozyhr at the repository root").permissions().mode();
    assert_eq!(mode & 0o111, 0o111, "kubectl runs kubectl_complete-cozyhr directly: it must be executable");
    // kubectl finds both on PATH; the helper finds the plugin there too.
    let sandbox = Sandbox::new();
    std::os::unix::fs::symlink(BIN, sandbox.path("bin/kubectl-cozyhr")).expect("link the plugin into PATH");
    let out = sandbox.run(helper, &["re"]);
    assert_eq!((out.code, out.stdout.as_str(), out.stderr.as_str()), (Some(0), "reconcile\nresume\n:4\n", ""));
    let out = sandbox.run(helper, &["get", "-o", ""]);
    assert_eq!((out.code, out.stdout.as_str(), out.stderr.as_str()), (Some(0), "json\nname\nwide\nyaml\n:4\n", ""));
}

#[test]
fn tree_lists_all_namespaces_once_then_only_its_own_when_that_is_forbidden() {
    let recorder = ApiRecorder::start();
    let mut sandbox = Sandbox::new();
    let kubeconfig = sandbox.write("kubeconfig", &recorder.kubeconfig());
    sandbox.set_env("KUBECONFIG", &kubeconfig);
    // One LIST for the whole graph, never a GET per release; the recorder forbids it, so the namespace
    // is listed instead (and forbidden too: that is the error).
    for spelling in [&["-n", "ns1", "tree", "web"][..], &["tree", "web", "-n", "ns1", "-o", "json"]] {
        sandbox.run(BIN, spelling).one_error_line(&[REFUSED]);
        assert_eq!(
            recorder.take(),
            [
                "GET /apis/helm.toolkit.fluxcd.io/v2/helmreleases?",
                "GET /apis/helm.toolkit.fluxcd.io/v2/namespaces/ns1/helmreleases?"
            ],
            "{spelling:?}"
        );
    }
}
