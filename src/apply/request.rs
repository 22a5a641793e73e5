//! What an apply is asked (the request), how it ends (the outcome), and who speaks for it (the command, or
//! a `--watch` round): the words every step of an apply shares.

use crate::apply::install::UpgradeOptions;
use crate::cluster::Cluster;
use crate::desired::UserValues;
use crate::resolve::Resolver;

/// How an apply ended, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Applied,
    DryRun,
    /// A round of `apply --watch` found the HelmRelease resumed since the loop suspended it: Flux owns the
    /// release again, and nothing was changed.
    Resumed,
}

#[derive(Clone)]
pub struct ApplyRequest<'a> {
    pub cluster: &'a Cluster,
    /// The chart and the helm that installs it.
    pub resolver: &'a Resolver,
    pub name: &'a str,
    pub user: UserValues,
    pub options: UpgradeOptions,
    pub resume: bool,
}

/// Who speaks for an apply: the command itself, or a watch loop that prints one line per round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Voice {
    Command,
    Round,
}

impl Voice {
    pub(super) fn says(self) -> bool {
        self == Voice::Command
    }
}
