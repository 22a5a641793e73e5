//! The command line of the real `helm-cozy` binary, without a cluster and without Helm: exit codes, where
//! output goes, usage errors, the one error line when helm, the chart or the cluster is missing, flags
//! before and after the subcommand, and completion (the generated scripts and Helm's completion.yaml).
//! Where a command must get past looking for helm, HELM_BIN names a stub script that answers
//! `helm version` and echoes the arguments of `helm template`. See testsupport/cli.rs for the sandbox.

#[path = "../../testsupport/cli.rs"]
mod cli;

use std::collections::BTreeSet;

use cli::{
    ApiRecorder, REFUSED, Sandbox, assert_bare_command_prints_help, assert_completion_scripts_name,
    assert_help_lists_exactly, assert_help_on_stdout, assert_version, help_flags,
};

const BIN: &str = env!("CARGO_BIN_EXE_helm-cozy");

/// Every visible subcommand; `help_lists_exactly_these_subcommands` keeps the list honest.
const SUBCOMMANDS: &[&str] = &["show", "values", "diff", "apply", "delete", "review", "completion", "version"];

/// Every command that needs helm and a cluster, with valid arguments and some of its flags (the chart
/// directory is given with -C).
const CHART_COMMANDS: &[&[&str]] = &[
    &["show", "web"],
    &["show", "web", "--show-only", "templates/cm*.yaml", "-f", "extra.yaml", "--set", "a=1"],
    &["show", "web", "--plain"],
    &["values", "web"],
    &["values", "web", "--sources", "--with-defaults", "-o", "json"],
    &["diff", "web"],
    &["diff", "web", "--against", "release", "-o", "summary", "--detailed-exitcode", "--context=-1"],
    &["diff", "web", "--show-secrets", "--color", "never", "-o", "json"],
    &["diff", "web", "--against", "git:HEAD", "-o", "markdown"],
    &["apply", "web"],
    &["apply", "web", "--dry-run", "--resume", "--take-ownership", "--timeout", "2m", "--wait=false"],
    &["apply", "web", "--plain"],
    &["delete", "web"],
    &["delete", "web", "--timeout", "1m"],
];

/// A stand-in for helm: `version` says 3.17, `template` prints one ConfigMap that holds its arguments and
/// its `GOGC`, anything else fails naming what it was asked.
const STUB_HELM: &str = r#"#!/bin/sh
case "$1" in
version) echo v3.17.0 ;;
template) printf -- '---\n# Source: c/templates/args.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: args\ndata:\n  args: "%s"\n  gogc: "%s"\n' "$*" "$GOGC" ;;
*) echo "stub helm: not stubbed: $*" >&2; exit 3 ;;
esac
"#;

/// Helm completes these itself for every plugin (and -h, -n with them).
const HELMS_OWN: &[&str] = &["namespace", "kube-context", "kubeconfig", "help", "version"];

/// Environment variables a case adds to the sandbox's.
type Env<'a> = &'a [(&'a str, &'a str)];

/// A sandbox with a chart in `chart/` and the stub helm as HELM_BIN.
fn with_chart_and_stub_helm() -> Sandbox {
    let mut sandbox = Sandbox::new();
    sandbox.write("chart/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n");
    let helm = sandbox.write_script("tools/helm", STUB_HELM);
    sandbox.set_env("HELM_BIN", helm);
    sandbox
}

fn with_chart(args: &[&str]) -> Vec<String> {
    ["-C", "chart"].iter().chain(args).map(|s| s.to_string()).collect()
}

#[test]
fn help_lists_exactly_these_subcommands() {
    let help = assert_help_lists_exactly(BIN, SUBCOMMANDS);
    assert!(!help.contains("__post-render"), "the post-renderer entry point is for helm, not people");
}

#[test]
fn help_goes_to_stdout_with_exit_0() {
    assert_help_on_stdout(BIN, "helm cozy", SUBCOMMANDS);
}

#[test]
fn version_prints_the_workspace_version() {
    assert_version(BIN, "helm-cozy");
    // `helm plugin list` shows the manifest's version.
    let manifest = include_str!("../../plugin.yaml");
    let listed = manifest.lines().find_map(|l| l.strip_prefix("version: ")).expect("plugin.yaml has a version");
    assert_eq!(listed.trim(), cozyhr::VERSION, "plugin.yaml's version");
}

#[test]
fn usage_errors_are_one_line_and_exit_1() {
    let sandbox = with_chart_and_stub_helm();
    let cases: &[(&[&str], &str)] = &[
        (&["nosuch"], "'nosuch'"),
        (&["--bogus", "show", "web"], "'--bogus'"),
        (&["show", "web", "--bogus"], "'--bogus'"),
        (&["values", "web", "--bogus"], "'--bogus'"),
        (&["diff", "web", "--bogus"], "'--bogus'"),
        (&["apply", "web", "--bogus"], "'--bogus'"),
        (&["delete", "web", "--bogus"], "'--bogus'"),
        (&["completion", "bash", "--bogus"], "'--bogus'"),
        (&["version", "--bogus"], "'--bogus'"),
        (&["version", "extra"], "'extra'"),
        (&["show", "web", "db"], "'db'"),
        // A missing required argument or value.
        (&["show"], "<NAME>"),
        (&["values"], "<NAME>"),
        (&["diff"], "<NAME>"),
        (&["apply"], "<NAME>"),
        (&["delete"], "<NAME>"),
        (&["completion"], "<SHELL>"),
        (&["show", "web", "-C"], "--chdir"),
        (&["show", "web", "-n"], "--namespace"),
        (&["show", "web", "-f"], "--values"),
        // A bad value for an enum or typed flag.
        (&["values", "web", "-o", "toml"], "--output"),
        (&["diff", "web", "-o", "yaml"], "--output"),
        (&["diff", "web", "--output=yaml"], "--output"),
        (&["diff", "web", "--color", "sometimes"], "--color"),
        (&["diff", "web", "--against", "git"], "--against"),
        (&["diff", "web", "--against", "git:"], "--against"),
        (&["diff", "web", "-o", "html"], "--output"),
        // --release-file replaces the HelmRelease, which --plain does without; capabilities need it.
        (&["show", "web", "--plain", "--release-file", "hr.yaml"], "--release-file"),
        (&["show", "web", "--kube-version", "v1.30.0"], "--release-file"),
        (&["diff", "web", "--api-versions", "x/v1"], "--release-file"),
        (&["diff", "web", "--release-file", "hr.yaml", "--kube-version", "v1.30.0"], "--against git:REF"),
        (&["values", "web", "--kube-version", "v1.30.0"], "'--kube-version'"),
        (&["show", "web", "--release-file"], "--release-file"),
        // --watch follows the chart directory and the cluster; files or offline capabilities do not move.
        (&["diff", "web", "--watch", "--release-file", "hr.yaml"], "--release-file"),
        (&["diff", "web", "--watch", "--kube-version", "v1.30.0"], "--kube-version"),
        (&["diff", "web", "--watch", "--against", "git:HEAD"], "--watch"),
        (&["diff", "web", "--context", "many"], "--context"),
        (&["completion", "tcsh"], "'tcsh'"),
        (&["apply", "web", "--timeout", "soon"], "--timeout"),
        (&["delete", "web", "--timeout", "5x"], "--timeout"),
        (&["apply", "web", "--wait=maybe"], "--wait"),
        // Flags of another command, or of kubectl cozyhr.
        (&["show", "web", "-o", "json"], "'-o'"),
        (&["delete", "web", "--plain"], "'--plain'"),
        (&["values", "web", "--color", "never"], "'--color'"),
        (&["-A", "show", "web"], "'-A'"),
        (&["--context", "a", "show", "web"], "'--context'"),
        (&["show", "web", "--context", "a"], "'--context'"),
        // --offline requires --plain.
        (&["show", "web", "--offline"], "--plain"),
        // One HelmRelease, unless --all; the set's flags need --all; --all reads the cluster's releases.
        (&["diff", "web", "db"], "--all"),
        (&["apply", "web", "db"], "--all"),
        (&["diff", "web", "-A"], "--all"),
        (&["diff", "web", "-l", "tier=db"], "--all"),
        (&["apply", "web", "--keep-going"], "--all"),
        (&["diff", "--all", "--concurrency", "0"], "--concurrency"),
        (&["diff", "--all", "--release-file", "hr.yaml"], "--release-file"),
        (&["diff", "--all", "--against", "git:HEAD"], "--against git:REF"),
        (&["apply", "--all", "--plain"], "--plain"),
        (&["apply", "--all", "--watch"], "--watch"),
    ];
    for (args, offender) in cases {
        sandbox.run(BIN, &with_chart(args)).usage_error(offender);
    }
    assert_bare_command_prints_help(&sandbox, BIN);
}

#[test]
fn every_chart_command_without_helm_fails_in_one_line() {
    let mut sandbox = with_chart_and_stub_helm();
    // Nothing on PATH, no HELM_BIN: what to do is to install helm or name it.
    sandbox.remove_env("HELM_BIN");
    for args in CHART_COMMANDS {
        sandbox.run(BIN, &with_chart(args)).one_error_line(&["helm", "install", "HELM_BIN"]);
    }
    // HELM_BIN naming nothing: the line names it (the whole path, the cause once) and what to do.
    let hint = "set HELM_BIN to a Helm 3.9+ or Helm 4 binary, or unset it to use helm on PATH";
    let no_helm = sandbox.path("no-such-helm");
    sandbox.set_env("HELM_BIN", &no_helm);
    let expected =
        format!("error: cannot run helm {} (from HELM_BIN): {}; {hint}", no_helm.display(), sandbox.not_found());
    for args in CHART_COMMANDS {
        assert_eq!(sandbox.run(BIN, &with_chart(args)).one_error_line(&[]), expected, "{args:?}");
    }
    // HELM_BIN naming a program that fails `helm version`, quietly or saying why.
    for (script, why) in [
        ("#!/bin/sh\nexit 1\n", "exited with code 1 and printed nothing on stderr"),
        ("#!/bin/sh\necho 'not helm' >&2\nexit 2\n", "not helm"),
    ] {
        let broken = sandbox.write_script("tools/broken-helm", script);
        sandbox.set_env("HELM_BIN", &broken);
        let expected = format!("error: `helm version` failed with {} (from HELM_BIN): {why}; {hint}", broken.display());
        for args in CHART_COMMANDS {
            assert_eq!(sandbox.run(BIN, &with_chart(args)).one_error_line(&[]), expected, "{args:?}");
        }
    }
}

#[test]
fn chart_commands_outside_a_chart_fail_in_one_line() {
    let sandbox = with_chart_and_stub_helm();
    let chart_commands = CHART_COMMANDS.iter().filter(|args| args[0] != "delete");
    for args in chart_commands.clone() {
        // The sandbox root (the working directory) has no Chart.yaml: what renders a directory's chart (the
        // chart alone, a Git side) says so; the rest takes the chart the HelmRelease's source serves, from
        // the cluster, which is asked only once everything else is known.
        let needs_a_directory = args.contains(&"--plain") || args.contains(&"git:HEAD");
        let out = sandbox.run(BIN, args);
        if needs_a_directory {
            out.one_error_line(&["needs a chart directory", "-C DIR"]);
        } else {
            out.one_error_line(&["cannot read kubeconfig"]);
        }
        let out = sandbox.run(BIN, &[&["-C", "no-such-dir"][..], args].concat());
        out.one_error_line(&["no-such-dir", "-C DIR"]);
    }
}

#[test]
fn every_chart_command_without_a_kubeconfig_fails_in_one_line() {
    let mut sandbox = with_chart_and_stub_helm();
    // What is wrong (the file, named once and where it came from), what to do for that case. Under Helm,
    // `helm --kubeconfig` reaches the plugin as KUBECONFIG.
    let from_env = sandbox.unreadable_kubeconfig_from_env();
    let other = sandbox.path("other-missing-kubeconfig");
    let other = other.to_str().expect("UTF-8");
    let from_flag = sandbox.unreadable_kubeconfig_from_flag(other);
    for args in CHART_COMMANDS {
        assert_eq!(sandbox.run(BIN, &with_chart(args)).one_error_line(&[]), from_env, "{args:?}");
        let with_flag = with_chart(&[args, &["--kubeconfig", other][..]].concat());
        assert_eq!(sandbox.run(BIN, &with_flag).one_error_line(&[]), from_flag, "{with_flag:?}");
    }
    sandbox.remove_env("KUBECONFIG");
    let default = sandbox.unreadable_default_kubeconfig();
    for args in CHART_COMMANDS.iter().filter(|args| !args.contains(&"--plain")) {
        assert_eq!(sandbox.run(BIN, &with_chart(args)).one_error_line(&[]), default, "{args:?}");
    }
}

#[test]
fn a_context_the_kubeconfig_lacks_is_named_with_those_it_has() {
    let recorder = ApiRecorder::start();
    let mut sandbox = with_chart_and_stub_helm();
    let kubectl = sandbox.write_script("tools/kubectl", "#!/bin/sh\necho \"stub kubectl: $*\" >&2\nexit 3\n");
    sandbox.set_env("COZYHR_KUBECTL", kubectl);
    let kubeconfig = sandbox.write("kubeconfig", &recorder.kubeconfig());
    sandbox.set_env("KUBECONFIG", &kubeconfig);
    let expected = recorder.context_not_found(&kubeconfig, "zz");
    for args in CHART_COMMANDS {
        // --kube-context, or HELM_KUBECONTEXT as Helm hands it over.
        let with_flag = with_chart(&[args, &["--kube-context", "zz"][..]].concat());
        assert_eq!(sandbox.run(BIN, &with_flag).one_error_line(&[]), expected, "{with_flag:?}");
        sandbox.set_env("HELM_KUBECONTEXT", "zz");
        assert_eq!(sandbox.run(BIN, &with_chart(args)).one_error_line(&[]), expected, "{args:?}");
        sandbox.remove_env("HELM_KUBECONTEXT");
    }
    assert!(recorder.take().is_empty(), "a context that is not there is found out before asking the cluster");
}

#[test]
fn flags_before_and_after_the_subcommand_reach_the_same_error() {
    let sandbox = with_chart_and_stub_helm();
    let other = sandbox.path("other-missing-kubeconfig");
    let other = other.to_str().expect("UTF-8");
    for sub in ["show", "values", "diff", "apply", "delete"] {
        let groups: Vec<Vec<Vec<&str>>> = vec![
            vec![
                vec!["-C", "chart", sub, "web"],
                vec![sub, "web", "-C", "chart"],
                vec!["--chdir=chart", sub, "web"],
                vec![sub, "--chdir", "chart", "web"],
            ],
            vec![
                vec!["--kubeconfig", other, sub, "web", "-C", "chart"],
                vec!["-C", "chart", sub, "web", "--kubeconfig", other],
            ],
            vec![
                vec!["-n", "ns1", "-C", "chart", sub, "web"],
                vec!["-C", "chart", sub, "web", "-n", "ns1"],
                vec!["-C", "chart", sub, "--namespace=ns1", "web"],
            ],
            vec![
                vec!["--kube-context", "b", "-C", "chart", sub, "web"],
                vec!["-C", "chart", sub, "web", "--kube-context=b"],
            ],
        ];
        for spellings in groups {
            let line = sandbox.run(BIN, &spellings[0]).one_error_line(&[]).to_string();
            for spelling in &spellings[1..] {
                assert_eq!(sandbox.run(BIN, spelling).one_error_line(&[]), line, "{spelling:?} and {:?}", spellings[0]);
            }
            // Past the chart directory: the error is the cluster's, naming the kubeconfig in use.
            let kubeconfig = if spellings[0].contains(&other) {
                other.to_string()
            } else {
                sandbox.missing_kubeconfig().display().to_string()
            };
            assert!(line.contains(&kubeconfig), "{:?}: {line}", spellings[0]);
        }
    }
}

#[test]
fn cluster_flags_before_and_after_the_subcommand_ask_the_cluster_the_same() {
    let recorder = ApiRecorder::start();
    // Under Helm, -n and --kube-context reach the plugin as HELM_NAMESPACE and HELM_KUBECONTEXT.
    let cases: &[(Env, &[&str], &str)] = &[
        (&[], &[], "ctxns"),
        (&[], &["-n", "ns1"], "ns1"),
        (&[], &["--namespace=ns1"], "ns1"),
        (&[("HELM_NAMESPACE", "ns1")], &[], "ns1"),
        (&[("HELM_NAMESPACE", "other")], &["-n", "ns1"], "ns1"),
        (&[], &["--kube-context", "b"], "bns"),
        (&[("HELM_KUBECONTEXT", "b")], &[], "bns"),
        (&[("HELM_KUBECONTEXT", "b")], &["-n", "ns1"], "ns1"),
        // Helm hands over an empty HELM_NAMESPACE when -n was not given: the context's namespace.
        (&[("HELM_NAMESPACE", ""), ("HELM_KUBECONTEXT", "")], &[], "ctxns"),
    ];
    // The commands that ask for the HelmRelease before anything else: delete by a GET; values and apply,
    // which render it, by a LIST of its one name as show and diff do, then (refused, as for a user who
    // may not list HelmReleases) a GET.
    for sub in ["values", "apply", "delete"] {
        for (env, flags, namespace) in cases {
            let helmreleases = format!("GET /apis/helm.toolkit.fluxcd.io/v2/namespaces/{namespace}/helmreleases");
            let mut expected = vec![format!("{helmreleases}/web")];
            if sub != "delete" {
                expected.insert(0, format!("{helmreleases}?&fieldSelector=metadata.name%3Dweb"));
            }
            let mut sandbox = with_chart_and_stub_helm();
            // apply looks for kubectl before it asks the cluster; this one is never run.
            let kubectl = sandbox.write_script("tools/kubectl", "#!/bin/sh\necho \"stub kubectl: $*\" >&2\nexit 3\n");
            sandbox.set_env("COZYHR_KUBECTL", kubectl);
            for (k, v) in *env {
                sandbox.set_env(k, v);
            }
            let kubeconfig = sandbox.write("kubeconfig", &recorder.kubeconfig());
            let kubeconfig_flag = ["--kubeconfig", kubeconfig.to_str().expect("UTF-8")];
            let base = ["-C", "chart", sub, "web"];
            // The flags before and after the subcommand, with KUBECONFIG ...
            sandbox.set_env("KUBECONFIG", &kubeconfig);
            for spelling in [[flags, &base[..]].concat(), [&base[..], flags].concat()] {
                sandbox.run(BIN, &spelling).one_error_line(&[REFUSED]);
                assert_eq!(recorder.take(), expected, "{env:?} {spelling:?} asked something else");
            }
            // ... and with --kubeconfig before or after it while KUBECONFIG names nothing.
            sandbox.set_env("KUBECONFIG", sandbox.missing_kubeconfig());
            for spelling in
                [[&kubeconfig_flag[..], flags, &base].concat(), [&base[..], flags, &kubeconfig_flag].concat()]
            {
                sandbox.run(BIN, &spelling).one_error_line(&[REFUSED]);
                assert_eq!(recorder.take(), expected, "{env:?} {spelling:?} asked something else");
            }
        }
    }
}

#[test]
fn apply_without_kubectl_fails_in_one_line_before_changing_anything() {
    let recorder = ApiRecorder::start();
    let mut sandbox = with_chart_and_stub_helm();
    let kubeconfig = sandbox.write("kubeconfig", &recorder.kubeconfig());
    sandbox.set_env("KUBECONFIG", kubeconfig);
    for args in CHART_COMMANDS.iter().filter(|args| args[0] == "apply" && !args.contains(&"--plain")) {
        sandbox.run(BIN, &with_chart(args)).one_error_line(&["kubectl", "install kubectl", "COZYHR_KUBECTL"]);
        let changes: Vec<String> = recorder.take().into_iter().filter(|r| !r.starts_with("GET ")).collect();
        assert!(changes.is_empty(), "{args:?} tried to change the cluster without kubectl: {changes:?}");
    }
}

#[test]
fn plain_offline_show_needs_no_cluster_and_hands_the_flags_to_helm() {
    let mut sandbox = with_chart_and_stub_helm();
    let status = "helm cozy: --offline: rendering with Helm's defaults";
    let cases: &[(Env, &[&[&str]], &str)] = &[
        (
            &[],
            &[
                &["-C", "chart", "show", "web", "--plain", "--offline"],
                &["show", "--offline", "--plain", "web", "--chdir=chart"],
            ],
            "--namespace default",
        ),
        (
            &[],
            &[
                &["-n", "ns1", "-C", "chart", "show", "web", "--plain", "--offline"],
                &["-C", "chart", "show", "web", "--plain", "--offline", "-n", "ns1"],
                &["show", "web", "--plain", "--namespace", "ns1", "--offline", "-C", "chart"],
            ],
            "--namespace ns1",
        ),
        (&[("HELM_NAMESPACE", "ns1")], &[&["-C", "chart", "show", "web", "--plain", "--offline"]], "--namespace ns1"),
        (
            &[],
            &[&[
                "-C",
                "chart",
                "show",
                "web",
                "--plain",
                "--offline",
                "-f",
                "more.yaml",
                "--set",
                "a=1",
                "--values",
                "last.yaml",
            ]],
            "--values more.yaml --values last.yaml --set a=1",
        ),
    ];
    for (env, spellings, expected) in cases {
        for (k, v) in *env {
            sandbox.set_env(k, v);
        }
        let first = sandbox.run(BIN, spellings[0]);
        assert_eq!(first.code, Some(0), "{:?}: {}", spellings[0], first.stderr);
        // The manifest on stdout, one status line on stderr.
        assert!(
            first.stdout.contains(expected),
            "{:?} did not give helm {expected:?}:\n{}",
            spellings[0],
            first.stdout
        );
        assert!(first.stdout.contains("kind: ConfigMap"), "{}", first.stdout);
        let status_lines: Vec<&str> = first.stderr.lines().collect();
        assert!(
            status_lines.len() == 1 && status_lines[0].starts_with(status),
            "{:?}:\n{}",
            spellings[0],
            first.stderr
        );
        for spelling in &spellings[1..] {
            let out = sandbox.run(BIN, spelling);
            assert_eq!(
                (out.code, &out.stdout, &out.stderr),
                (first.code, &first.stdout, &first.stderr),
                "{spelling:?} and {:?}",
                spellings[0]
            );
        }
        for (k, _) in *env {
            sandbox.remove_env(k);
        }
    }
}

/// A HelmRelease written for Flux 2.10, whose dependsOn names objects of other kinds (helm-controller PR
/// #1480: `apiVersion`, `kind`, `ready`) beside a HelmRelease.
const FLUX_2_10_RELEASE: &str = "apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: web
  namespace: apps
spec:
  chart:
    spec:
      chart: c
      sourceRef: {kind: HelmRepository, name: charts}
  dependsOn:
  - name: db
  - apiVersion: v1
    kind: ConfigMap
    name: settings
    namespace: apps
    readyExpr: \"true\"
  - apiVersion: cert-manager.io/v1
    kind: Certificate
    name: web-tls
    namespace: apps
    ready: false
  - apiVersion: example.com/v1
    kind: Widget
    name: w
    ready: true
    readyExpr: dep.status.phase == 'Running'
  values:
    color: blue
";

#[test]
fn a_release_file_whose_depends_on_names_other_kinds_renders_without_a_cluster() {
    let mut sandbox = with_chart_and_stub_helm();
    sandbox.write("hr.yaml", FLUX_2_10_RELEASE);
    // The post-render chain is found before rendering; without postRenderers kubectl is never run.
    let kubectl =
        sandbox.write_script("tools/kubectl", "#!/bin/sh\necho \"stub kubectl: not stubbed: $*\" >&2\nexit 3\n");
    sandbox.set_env("COZYHR_KUBECTL", kubectl);
    // Any request would reach the recorder: none may be made.
    let recorder = ApiRecorder::start();
    let kubeconfig = sandbox.write("kubeconfig", &recorder.kubeconfig());
    sandbox.set_env("KUBECONFIG", &kubeconfig);
    let show = sandbox.run(BIN, &with_chart(&["show", "web", "-n", "apps", "--release-file", "hr.yaml"]));
    let shown = show.printed();
    assert!(shown.contains("kind: ConfigMap") && shown.contains("helm.toolkit.fluxcd.io/name: web"), "{shown}");
    let values = sandbox.run(BIN, &with_chart(&["values", "web", "-n", "apps", "--release-file", "hr.yaml"]));
    assert_eq!(values.printed(), "color: blue\n");
    assert_eq!(recorder.take(), [] as [String; 0], "the release file is all these commands read");
}

#[test]
fn helm_runs_with_a_lazier_collector_unless_the_user_set_one() {
    let mut sandbox = with_chart_and_stub_helm();
    let show = ["-C", "chart", "show", "web", "--plain", "--offline"];
    for (gogc, expected) in [(None, "gogc: \"400\""), (Some("50"), "gogc: \"50\""), (Some("off"), "gogc: \"off\"")] {
        match gogc {
            Some(v) => sandbox.set_env("GOGC", v),
            None => sandbox.remove_env("GOGC"),
        }
        let out = sandbox.run(BIN, &show);
        assert_eq!(out.code, Some(0), "GOGC={gogc:?}: {}", out.stderr);
        assert!(out.stdout.contains(expected), "GOGC={gogc:?}: helm did not get {expected}:\n{}", out.stdout);
    }
}

#[test]
fn completion_scripts_name_every_subcommand_and_flag() {
    let flags = [
        "chdir",
        "kube-context",
        "namespace",
        "kubeconfig",
        "values",
        "set",
        "show-only",
        "plain",
        "offline",
        "sources",
        "with-defaults",
        "output",
        "against",
        "show-secrets",
        "detailed-exitcode",
        "context",
        "color",
        "resume",
        "dry-run",
        "take-ownership",
        "timeout",
        "wait",
        "release-file",
        "kube-version",
        "api-versions",
    ];
    assert_completion_scripts_name(BIN, &[SUBCOMMANDS, &["helm-cozy"], &flags].concat());
}

#[test]
fn show_only_errors_are_one_clean_line() {
    let sandbox = with_chart_and_stub_helm();
    let status = "helm cozy: --offline: rendering with Helm's defaults";
    // Nothing matches: found out after rendering, so after the status line; --show-only said once.
    let out =
        sandbox.run(BIN, &with_chart(&["show", "web", "--plain", "--offline", "--show-only", "templates/no.yaml"]));
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert!(lines.len() == 2 && lines[0].starts_with(status), "{}", out.stderr);
    assert_eq!(
        lines[1],
        "error: --show-only: no rendered object comes from a template matching templates/no.yaml (see the `# Source:` lines of helm cozy show)"
    );
    // A glob that is not one: found out before anything else, with or without a cluster.
    for args in [&["show", "web", "--plain", "--offline", "--show-only", "["][..], &["show", "web", "-s", "["]] {
        let line = sandbox.run(BIN, &with_chart(args)).one_error_line(&[]).to_string();
        assert!(line.starts_with(r#"error: --show-only "[": "#), "{args:?}: {line}");
        assert_eq!(line.matches("--show-only").count(), 1, "{args:?}: {line}");
        assert!(!line.contains("post-render"), "{args:?}: {line}");
    }
}

#[test]
fn completion_scripts_do_not_offer_the_post_renderer() {
    let sandbox = Sandbox::new();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = sandbox.run(BIN, &["completion", shell]);
        assert!(!out.printed().contains("__post-render"), "`completion {shell}` offers __post-render");
    }
}

/// completion.yaml, read line by line: it only uses `name:`, `commands:` and per command `flags: [..]`
/// and `validArgs: [..]`; anything else is an error here, so a new shape is read on purpose.
#[derive(Debug, Default)]
struct CompletionCommand {
    name: String,
    flags: Vec<String>,
    valid_args: Vec<String>,
}

fn read_completion_yaml(text: &str) -> (String, Vec<CompletionCommand>) {
    let list = |s: &str| -> Vec<String> {
        let inner =
            s.trim().strip_prefix('[').and_then(|s| s.strip_suffix(']')).unwrap_or_else(|| panic!("not a [list]: {s}"));
        inner.split(',').map(|w| w.trim().to_string()).filter(|w| !w.is_empty()).collect()
    };
    let (mut name, mut commands) = (String::new(), Vec::<CompletionCommand>::new());
    let mut in_commands = false;
    for line in text.lines().filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#')) {
        if let Some(n) = line.strip_prefix("name: ") {
            name = n.trim().to_string();
        } else if line == "commands:" {
            in_commands = true;
        } else if let Some(n) = line.strip_prefix("  - name: ").filter(|_| in_commands) {
            commands.push(CompletionCommand { name: n.trim().to_string(), ..Default::default() });
        } else if let (Some(flags), Some(cmd)) = (line.strip_prefix("    flags: "), commands.last_mut()) {
            cmd.flags = list(flags);
        } else if let (Some(args), Some(cmd)) = (line.strip_prefix("    validArgs: "), commands.last_mut()) {
            cmd.valid_args = list(args);
        } else {
            panic!("completion.yaml: a line this test does not read: {line:?}");
        }
    }
    (name, commands)
}

#[test]
fn completion_yaml_offers_every_subcommand_and_flag() {
    let (name, commands) = read_completion_yaml(include_str!("../../completion.yaml"));
    let manifest = include_str!("../../plugin.yaml");
    let plugin = manifest.lines().find_map(|l| l.strip_prefix("name: ")).expect("plugin.yaml has a name");
    assert_eq!(name, plugin.trim(), "completion.yaml's name must be the plugin's");

    let listed: BTreeSet<&str> = commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(listed, SUBCOMMANDS.iter().copied().collect(), "completion.yaml's commands");

    let sandbox = Sandbox::new();
    for cmd in &commands {
        let help = sandbox.run(BIN, &[cmd.name.as_str(), "-h"]);
        let flags = help_flags(help.printed());
        let (shorts, longs): (Vec<&String>, Vec<&String>) = cmd.flags.iter().partition(|f| f.chars().count() == 1);
        // Stale entries: everything listed is a flag of the command.
        for f in &cmd.flags {
            let known = flags
                .iter()
                .any(|h| h.long.as_deref() == Some(f.as_str()) || h.short.map(String::from).as_ref() == Some(f));
            assert!(known, "completion.yaml: {} lists {f}, which `helm cozy {} -h` does not have", cmd.name, cmd.name);
        }
        // Missing entries: every flag of a chart command but Helm's own (completion and version have
        // only the global ones, which mean nothing to them).
        if !["completion", "version"].contains(&cmd.name.as_str()) {
            for flag in flags.iter().filter(|h| !h.long.as_deref().is_some_and(|l| HELMS_OWN.contains(&l))) {
                let long = flag.long.as_ref().expect("every flag of helm cozy has a long form");
                assert!(longs.contains(&long), "completion.yaml: {} lacks {long}", cmd.name);
                if let Some(short) = flag.short {
                    let short = short.to_string();
                    assert!(shorts.contains(&&short), "completion.yaml: {} lacks {short} (of {long})", cmd.name);
                }
            }
        }
        // Helm pairs the i-th one-letter flag with the i-th long flag.
        for (i, short) in shorts.iter().enumerate() {
            let paired = longs.get(i).map(|s| s.as_str());
            let real = flags
                .iter()
                .find(|h| h.short.map(String::from).as_ref() == Some(*short))
                .and_then(|h| h.long.as_deref());
            assert_eq!(
                paired, real,
                "completion.yaml: {}: Helm would pair -{short} with {paired:?}, not {real:?}",
                cmd.name
            );
        }
    }

    // The shells `completion` accepts.
    let completion = commands.iter().find(|c| c.name == "completion").expect("completion");
    let help = sandbox.run(BIN, &["completion", "-h"]);
    let possible = help
        .printed()
        .split("[possible values: ")
        .nth(1)
        .and_then(|s| s.split(']').next())
        .expect("the shells in completion -h");
    let possible: BTreeSet<&str> = possible.split(',').map(str::trim).collect();
    assert_eq!(
        completion.valid_args.iter().map(String::as_str).collect::<BTreeSet<_>>(),
        possible,
        "completion.yaml: completion's validArgs"
    );
}
