//! `kubectl-cozyhr __complete ARGS... WORD`: dynamic completion for kubectl's plugin completion
//! convention (kubectl >= 1.26 runs `kubectl_complete-cozyhr` with the plugin's arguments and the word
//! being completed, `""` for a new word). Prints one candidate per line, then `:4` (cobra's
//! ShellCompDirectiveNoFileComp) so the shell never falls back to file names.
//!
//! The words are read against the clap definition in `cli`, so flags and subcommands are never listed
//! twice; only HelmRelease names, namespaces and contexts come from the cluster and the kubeconfig.
//! Completion must never print an error, so every failure just yields no candidates.

use std::process::ExitCode;
use std::time::Duration;

use clap::CommandFactory;
use cozyhr::cluster::ClusterOptions;
use cozyhr::flux::{HelmRelease, Objects};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams};

use crate::cli::Cli;

pub const ENTRY: &str = "__complete";
/// cobra's ShellCompDirectiveNoFileComp.
const DIRECTIVE: &str = ":4";
/// A completion that waits on an unreachable cluster is worse than none.
const LOOKUP_TIMEOUT: Duration = Duration::from_secs(5);

/// What the word under the cursor should be.
#[derive(Debug, PartialEq, Eq)]
pub enum Expect {
    Subcommand,
    Flag,
    /// The value of the flag with this id (clap's field name: "namespace", "context", "output", ...).
    FlagValue(String),
    /// HelmRelease names of the namespace.
    Release,
    Shell,
    Nothing,
}

/// The command line read so far.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Position {
    pub subcommand: Option<String>,
    pub positionals: Vec<String>,
    pub kubeconfig: Option<String>,
    pub context: Option<String>,
    pub namespace: Option<String>,
}

/// Reads `prior` (the words before the cursor) against the clap definition and says what `current`
/// should be.
pub fn analyse(prior: &[String], current: &str) -> (Position, Expect) {
    let mut root = Cli::command();
    root.build();
    let mut pos = Position::default();
    let mut pending: Option<String> = None;
    let mut cmd = root.clone();
    for word in prior {
        if let Some(id) = pending.take() {
            record(&mut pos, &id, word);
            continue;
        }
        if let Some(long) = word.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            if let Some(arg) = cmd.get_arguments().find(|a| a.get_long() == Some(name)) {
                let id = arg.get_id().to_string();
                match value {
                    Some(v) => record(&mut pos, &id, v),
                    None if takes_value(arg) => pending = Some(id),
                    None => {}
                }
            }
        } else if let Some(shorts) = word.strip_prefix('-').filter(|s| !s.is_empty()) {
            let mut chars = shorts.chars();
            if let Some(c) = chars.next()
                && let Some(arg) = cmd.get_arguments().find(|a| a.get_short() == Some(c))
                && takes_value(arg)
            {
                let id = arg.get_id().to_string();
                let rest = chars.as_str().trim_start_matches('=');
                if rest.is_empty() { pending = Some(id) } else { record(&mut pos, &id, rest) }
            }
        } else if pos.subcommand.is_none() {
            if let Some(sub) = root.find_subcommand(word) {
                pos.subcommand = Some(sub.get_name().to_string());
                cmd = sub.clone();
            }
        } else {
            pos.positionals.push(word.clone());
        }
    }
    let expect = if let Some(id) = pending {
        Expect::FlagValue(id)
    } else if current.starts_with('-') {
        Expect::Flag
    } else {
        match pos.subcommand.as_deref() {
            None => Expect::Subcommand,
            Some("get" | "suspend" | "resume") => Expect::Release,
            Some("reconcile" | "status") if pos.positionals.is_empty() => Expect::Release,
            Some("completion") if pos.positionals.is_empty() => Expect::Shell,
            Some(_) => Expect::Nothing,
        }
    };
    (pos, expect)
}

fn takes_value(arg: &clap::Arg) -> bool {
    arg.get_action().takes_values() && arg.get_num_args().is_none_or(|n| n.min_values() > 0)
}

fn record(pos: &mut Position, id: &str, value: &str) {
    match id {
        "kubeconfig" => pos.kubeconfig = Some(value.to_string()),
        "context" => pos.context = Some(value.to_string()),
        "namespace" => pos.namespace = Some(value.to_string()),
        _ => {}
    }
}

/// Candidates that start with `prefix` and are not already on the line, sorted and unique.
pub fn filter(candidates: impl IntoIterator<Item = String>, prefix: &str, already: &[String]) -> Vec<String> {
    let mut out: Vec<String> =
        candidates.into_iter().filter(|c| c.starts_with(prefix) && !already.contains(c)).collect();
    out.sort();
    out.dedup();
    out
}

/// Subcommands, flags and enum values straight from the clap definition.
fn static_candidates(pos: &Position, expect: &Expect) -> Vec<String> {
    let mut root = Cli::command();
    root.build();
    let cmd = pos.subcommand.as_deref().and_then(|s| root.find_subcommand(s)).unwrap_or(&root);
    match expect {
        Expect::Subcommand => {
            root.get_subcommands().filter(|s| !s.is_hide_set()).map(|s| s.get_name().to_string()).collect()
        }
        Expect::Flag => cmd
            .get_arguments()
            .filter(|a| !a.is_hide_set() && !a.is_positional())
            .flat_map(|a| {
                let long = a.get_long().map(|l| format!("--{l}"));
                let short = a.get_short().map(|s| format!("-{s}"));
                long.into_iter().chain(short)
            })
            .collect(),
        Expect::FlagValue(id) => cmd
            .get_arguments()
            .find(|a| a.get_id() == id.as_str())
            .map(|a| {
                a.get_possible_values().iter().filter(|v| !v.is_hide_set()).map(|v| v.get_name().to_string()).collect()
            })
            .unwrap_or_default(),
        Expect::Shell => ["bash", "zsh", "fish", "elvish", "powershell"].map(String::from).to_vec(),
        Expect::Release | Expect::Nothing => Vec::new(),
    }
}

async fn cluster_candidates(pos: &Position, expect: &Expect) -> Vec<String> {
    let options = ClusterOptions {
        kubeconfig: pos.kubeconfig.clone().map(Into::into),
        context: pos.context.clone(),
        namespace: pos.namespace.clone(),
    };
    let lookup = async {
        match expect {
            Expect::FlagValue(id) if id == "context" => {
                let kubeconfig = match &options.kubeconfig {
                    Some(path) => kube::config::Kubeconfig::read_from(path).ok()?,
                    None => kube::config::Kubeconfig::read().ok()?,
                };
                Some(kubeconfig.contexts.into_iter().map(|c| c.name).collect())
            }
            Expect::FlagValue(id) if id == "namespace" => {
                let cluster = options.connect().await.ok()?;
                let api: Api<Namespace> = Api::all(cluster.client);
                let list = api.list_metadata(&ListParams::default()).await.ok()?;
                Some(list.items.into_iter().filter_map(|n| n.metadata.name).collect())
            }
            Expect::Release => {
                let cluster = options.connect().await.ok()?;
                let items = Objects::<HelmRelease>::namespaced(&cluster, &cluster.namespace).list(None).await.ok()?;
                Some(items.iter().map(|hr| hr.name().to_string()).collect())
            }
            _ => None,
        }
    };
    tokio::time::timeout(LOOKUP_TIMEOUT, lookup).await.ok().flatten().unwrap_or_default()
}

pub async fn run(mut words: Vec<String>) -> anyhow::Result<ExitCode> {
    let current = words.pop().unwrap_or_default();
    let (pos, expect) = analyse(&words, &current);
    let mut candidates = static_candidates(&pos, &expect);
    candidates.extend(cluster_candidates(&pos, &expect).await);
    let already = if expect == Expect::Release { pos.positionals.clone() } else { Vec::new() };
    let mut out = String::new();
    for c in filter(candidates, &current, &already) {
        out.push_str(&c);
        out.push('\n');
    }
    out.push_str(DIRECTIVE);
    out.push('\n');
    cozyhr::output::write_stdout(&out)?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn first_word_is_a_subcommand() {
        let (pos, expect) = analyse(&[], "");
        assert_eq!(expect, Expect::Subcommand);
        let names = filter(static_candidates(&pos, &expect), "re", &[]);
        assert_eq!(names, ["reconcile", "resume"]);
    }

    #[test]
    fn flags_with_values_are_skipped_and_remembered() {
        let (pos, expect) = analyse(&words("-n apps --context=dev get"), "");
        assert_eq!(expect, Expect::Release);
        assert_eq!(pos.subcommand.as_deref(), Some("get"));
        assert_eq!(pos.namespace.as_deref(), Some("apps"));
        assert_eq!(pos.context.as_deref(), Some("dev"));
        let (pos, expect) = analyse(&words("status -napps"), "po");
        assert_eq!((pos.namespace.as_deref(), expect), (Some("apps"), Expect::Release));
        // A boolean flag does not swallow the next word.
        let (pos, _) = analyse(&words("get -A web"), "");
        assert_eq!(pos.positionals, ["web"]);
    }

    #[test]
    fn values_of_enum_flags_and_flag_names() {
        let (pos, expect) = analyse(&words("get -o"), "y");
        assert_eq!(expect, Expect::FlagValue("output".into()));
        assert_eq!(filter(static_candidates(&pos, &expect), "y", &[]), ["yaml"]);
        let (pos, expect) = analyse(&words("reconcile web"), "--f");
        assert_eq!(expect, Expect::Flag);
        assert_eq!(filter(static_candidates(&pos, &expect), "--f", &[]), ["--force"]);
        let (_, expect) = analyse(&words("get"), "--namespace");
        assert_eq!(expect, Expect::Flag);
        let (_, expect) = analyse(&words("get --namespace"), "");
        assert_eq!(expect, Expect::FlagValue("namespace".into()));
    }

    #[test]
    fn names_complete_once_for_single_name_commands() {
        assert_eq!(analyse(&words("reconcile"), "").1, Expect::Release);
        assert_eq!(analyse(&words("reconcile web"), "").1, Expect::Nothing);
        assert_eq!(analyse(&words("suspend web"), "").1, Expect::Release);
        assert_eq!(analyse(&words("completion"), "").1, Expect::Shell);
    }

    #[test]
    fn filter_by_prefix_without_repeats() {
        let c = ["web", "worker", "db", "web"].map(String::from);
        assert_eq!(filter(c.clone(), "w", &[]), ["web", "worker"]);
        assert_eq!(filter(c, "", &["web".into()]), ["db", "worker"]);
    }
}
