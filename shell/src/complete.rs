//! Completing a partial command line against its clap definition, for kubectl's plugin completion
//! convention: kubectl (>= 1.26) runs `kubectl_complete-PLUGIN ARGS... WORD` with the plugin's arguments
//! and the word being completed (`""` for a new word), and the plugin prints one candidate per line,
//! then `:4` (cobra's ShellCompDirectiveNoFileComp) so that the shell never falls back to file names.
//!
//! Words are read against the definition, so flags and subcommands are never listed twice; what only a
//! cluster knows (names, namespaces) is the caller's to add. Partial words are never an error.

use std::collections::BTreeMap;

/// cobra's ShellCompDirectiveNoFileComp.
const DIRECTIVE: &str = ":4";

/// A command line definition, built so that global flags are found under every subcommand.
pub struct Definition {
    root: clap::Command,
}

/// The words before the cursor, as the definition reads them.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Line {
    /// The subcommand named (by its name, when an alias was used).
    pub subcommand: Option<String>,
    /// The words after the subcommand that are neither flags nor their values.
    pub positionals: Vec<String>,
    /// The value of each flag given, by the flag's id (clap's field name); the last one given wins.
    values: BTreeMap<String, String>,
}

/// What the word under the cursor should be.
#[derive(Debug, PartialEq, Eq)]
pub enum Word {
    Subcommand,
    Flag,
    /// The value of the flag with this id ("namespace", "output", ...).
    FlagValue(String),
    /// The subcommand's positional argument with this id ("name", "shell", ...).
    Argument(String),
    /// Nothing more is expected.
    Nothing,
}

impl Line {
    /// The value given to the flag with this id.
    pub fn value(&self, id: &str) -> Option<&str> {
        self.values.get(id).map(String::as_str)
    }

    /// The cluster flags on the line ([`crate::ClusterFlags`]'s ids), for the lookups only a cluster
    /// answers.
    pub fn cluster(&self) -> crate::ClusterFlags {
        crate::ClusterFlags {
            kubeconfig: self.value("kubeconfig").map(Into::into),
            context: self.value(crate::cluster::CONTEXT_ID).map(Into::into),
            namespace: self.value("namespace").map(Into::into),
        }
    }
}

impl Definition {
    pub fn new(mut root: clap::Command) -> Definition {
        root.build();
        Definition { root }
    }

    /// Reads `prior` (the words before the cursor) and says what `current` should be. Unknown flags and
    /// words are skipped.
    pub fn read(&self, prior: &[String], current: &str) -> (Line, Word) {
        let mut line = Line::default();
        let mut pending: Option<String> = None;
        let mut cmd = &self.root;
        for word in prior {
            if let Some(id) = pending.take() {
                line.values.insert(id, word.clone());
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
                        Some(v) => {
                            line.values.insert(id, v.to_string());
                        }
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
                    if rest.is_empty() {
                        pending = Some(id)
                    } else {
                        line.values.insert(id, rest.to_string());
                    }
                }
            } else if line.subcommand.is_none() {
                if let Some(sub) = self.root.find_subcommand(word) {
                    line.subcommand = Some(sub.get_name().to_string());
                    cmd = sub;
                }
            } else {
                line.positionals.push(word.clone());
            }
        }
        let word = if let Some(id) = pending {
            Word::FlagValue(id)
        } else if current.starts_with('-') {
            Word::Flag
        } else if line.subcommand.is_none() {
            Word::Subcommand
        } else {
            argument(cmd, line.positionals.len()).map_or(Word::Nothing, |a| Word::Argument(a.get_id().to_string()))
        };
        (line, word)
    }

    /// What the definition itself offers for `word`: visible subcommands, the subcommand's flags, the
    /// possible values of a flag or argument.
    pub fn candidates(&self, line: &Line, word: &Word) -> Vec<String> {
        let cmd = line.subcommand.as_deref().and_then(|s| self.root.find_subcommand(s)).unwrap_or(&self.root);
        match word {
            Word::Subcommand => {
                self.root.get_subcommands().filter(|s| !s.is_hide_set()).map(|s| s.get_name().to_string()).collect()
            }
            Word::Flag => cmd
                .get_arguments()
                .filter(|a| !a.is_hide_set() && !a.is_positional())
                .flat_map(|a| {
                    let long = a.get_long().map(|l| format!("--{l}"));
                    let short = a.get_short().map(|s| format!("-{s}"));
                    long.into_iter().chain(short)
                })
                .collect(),
            Word::FlagValue(id) | Word::Argument(id) => cmd
                .get_arguments()
                .find(|a| a.get_id() == id.as_str())
                .map(|a| {
                    a.get_possible_values()
                        .iter()
                        .filter(|v| !v.is_hide_set())
                        .map(|v| v.get_name().to_string())
                        .collect()
                })
                .unwrap_or_default(),
            Word::Nothing => Vec::new(),
        }
    }
}

fn takes_value(arg: &clap::Arg) -> bool {
    arg.get_action().takes_values() && arg.get_num_args().is_none_or(|n| n.min_values() > 0)
}

/// The positional argument a word is when `before` words came before it: one that repeats (a list of
/// names) takes every word from its place on.
fn argument(cmd: &clap::Command, before: usize) -> Option<&clap::Arg> {
    let repeats = |a: &clap::Arg| {
        matches!(a.get_action(), clap::ArgAction::Append) || a.get_num_args().is_some_and(|n| n.max_values() > 1)
    };
    let mut left = before;
    for arg in cmd.get_positionals() {
        if left == 0 || repeats(arg) {
            return Some(arg);
        }
        left -= 1;
    }
    None
}

/// What the plugin prints: the candidates that start with `prefix` and are not in `already`, sorted and
/// unique, one a line, then the directive.
pub fn reply(candidates: impl IntoIterator<Item = String>, prefix: &str, already: &[String]) -> String {
    let mut out = String::new();
    for c in filter(candidates, prefix, already) {
        out.push_str(&c);
        out.push('\n');
    }
    out.push_str(DIRECTIVE);
    out.push('\n');
    out
}

fn filter(candidates: impl IntoIterator<Item = String>, prefix: &str, already: &[String]) -> Vec<String> {
    let mut out: Vec<String> =
        candidates.into_iter().filter(|c| c.starts_with(prefix) && !already.contains(c)).collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Arg, ArgAction, Command};

    /// A small definition shaped like the plugins': global flags, a list of names, one name, an enum.
    fn definition() -> Definition {
        Definition::new(
            Command::new("tool")
                .arg(Arg::new("namespace").short('n').long("namespace").global(true))
                .arg(Arg::new("context").long("context").global(true))
                .arg(Arg::new("hidden").long("hidden").hide(true).global(true))
                .subcommand(
                    Command::new("get")
                        .visible_alias("ls")
                        .arg(Arg::new("names").action(ArgAction::Append))
                        .arg(Arg::new("all").short('A').long("all").action(ArgAction::SetTrue))
                        .arg(Arg::new("output").short('o').long("output").value_parser(["json", "yaml"])),
                )
                .subcommand(Command::new("status").arg(Arg::new("name").required(true)))
                .subcommand(Command::new("completion").arg(Arg::new("shell").value_parser(["bash", "zsh"])))
                .subcommand(Command::new("secret").hide(true)),
        )
    }

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn offered(line: &str, current: &str) -> Vec<String> {
        let def = definition();
        let (line, word) = def.read(&words(line), current);
        filter(def.candidates(&line, &word), current, &[])
    }

    #[test]
    fn flags_with_values_are_skipped_and_remembered() {
        let def = definition();
        let (line, word) = def.read(&words("-n apps --context=dev ls"), "");
        assert_eq!(word, Word::Argument("names".into()));
        assert_eq!(line.subcommand.as_deref(), Some("get"));
        assert_eq!((line.value("namespace"), line.value("context")), (Some("apps"), Some("dev")));
        let (line, _) = def.read(&words("status -napps -n other"), "");
        assert_eq!(line.value("namespace"), Some("other"), "the last one wins");
        // A boolean flag does not swallow the next word.
        let (line, word) = def.read(&words("get -A web"), "");
        assert_eq!((line.positionals, word), (vec!["web".to_string()], Word::Argument("names".into())));
        let (_, word) = def.read(&words("get --namespace"), "");
        assert_eq!(word, Word::FlagValue("namespace".into()));
    }

    #[test]
    fn arguments_are_counted_against_the_definition() {
        let def = definition();
        assert_eq!(def.read(&words("status"), "").1, Word::Argument("name".into()));
        assert_eq!(def.read(&words("status web"), "").1, Word::Nothing);
        assert_eq!(def.read(&words("get a b c"), "").1, Word::Argument("names".into()));
        assert_eq!(def.read(&words("completion bash"), "").1, Word::Nothing);
        assert_eq!(def.read(&words("--bogus"), "").1, Word::Subcommand);
    }

    #[test]
    fn candidates_come_from_the_definition() {
        assert_eq!(offered("", ""), ["completion", "get", "help", "status"]);
        assert_eq!(offered("", "s"), ["status"]);
        assert_eq!(offered("get -o", "y"), ["yaml"]);
        assert_eq!(offered("completion", ""), ["bash", "zsh"]);
        assert_eq!(offered("get", "--"), ["--all", "--context", "--help", "--namespace", "--output"]);
        assert_eq!(offered("status web", "-"), ["--context", "--help", "--namespace", "-h", "-n"]);
        assert_eq!(offered("get", ""), Vec::<String>::new());
    }

    #[test]
    fn the_reply_filters_by_prefix_without_repeats_and_ends_with_the_directive() {
        let c = ["web", "worker", "db", "web"].map(String::from);
        assert_eq!(reply(c.clone(), "w", &[]), "web\nworker\n:4\n");
        assert_eq!(reply(c, "", &["web".into()]), "db\nworker\n:4\n");
        assert_eq!(reply(Vec::new(), "x", &[]), ":4\n");
    }
}
