//! `kubectl-cozyhr __complete ARGS... WORD`: dynamic completion behind `kubectl_complete-cozyhr`, which
//! kubectl (>= 1.26) runs for `kubectl cozyhr <TAB>`. The line is read against the flags in `cli`
//! (cozyhr_shell::complete); HelmRelease names, namespaces and contexts come from the library's lookups.
//! Completion never prints an error: a failed lookup just yields no candidates.

use std::process::ExitCode;

use cozyhr::views::complete::{self, Lookup};
use cozyhr_shell::Face;
use cozyhr_shell::complete::{Definition, Word};

pub const ENTRY: &str = "__complete";

pub async fn run(mut words: Vec<String>) -> anyhow::Result<ExitCode> {
    let current = words.pop().unwrap_or_default();
    // kubectl's plugin completion (`kubectl_complete-cozyhr`): the words are the same under every name.
    let cli = Definition::new(crate::cli::command(Face::Kubectl));
    let (line, word) = cli.read(&words, &current);
    let from_cluster = lookup(&word);
    let candidates = match from_cluster {
        Some(lookup) => complete::candidates(&cozyhr::cluster::Connection::new(line.cluster().options()), lookup).await,
        None => cli.candidates(&line, &word),
    };
    // A HelmRelease already named on the line is not offered again.
    let already = if from_cluster == Some(Lookup::HelmRelease) { line.positionals.as_slice() } else { &[] };
    cozyhr::support::output::write_stdout(cozyhr_shell::complete::reply(candidates, &current, already))?;
    Ok(ExitCode::SUCCESS)
}

/// The words only the kubeconfig or the cluster can complete, by their ids in `cli`.
fn lookup(word: &Word) -> Option<Lookup> {
    match word {
        Word::FlagValue(id) if id == cozyhr_shell::cluster::CONTEXT_ID => Some(Lookup::Context),
        Word::FlagValue(id) if id == "namespace" => Some(Lookup::Namespace),
        Word::Argument(id) if id == "name" || id == "names" => Some(Lookup::HelmRelease),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup_for(line: &str, current: &str) -> Option<Lookup> {
        let words: Vec<String> = line.split_whitespace().map(String::from).collect();
        lookup(&Definition::new(crate::cli::command(Face::Kubectl)).read(&words, current).1)
    }

    #[test]
    fn names_namespaces_and_contexts_are_looked_up() {
        for line in ["get", "ls web", "suspend web", "resume", "reconcile", "status -n apps", "tree", "drift"] {
            assert_eq!(lookup_for(line, ""), Some(Lookup::HelmRelease), "{line}");
        }
        assert_eq!(lookup_for("get -n", ""), Some(Lookup::Namespace));
        assert_eq!(lookup_for("--context", "d"), Some(Lookup::Context));
        for line in [
            "reconcile web",
            "status web",
            "tree web",
            "tree -o",
            "drift web",
            "drift web -o",
            "completion",
            "get -o",
            "",
        ] {
            assert_eq!(lookup_for(line, ""), None, "{line}");
        }
        assert_eq!(lookup_for("get", "-"), None);
    }

    #[test]
    fn the_flags_on_the_line_name_the_cluster() {
        let words: Vec<String> = ["--kubeconfig", "/k", "get", "--context=dev", "-napps"].map(String::from).to_vec();
        let (line, _) = Definition::new(crate::cli::command(Face::Kubectl)).read(&words, "");
        let options = line.cluster().options();
        assert_eq!(options.kubeconfig.as_deref(), Some(std::path::Path::new("/k")));
        assert_eq!((options.context.as_deref(), options.namespace.as_deref()), (Some("dev"), Some("apps")));
    }
}
