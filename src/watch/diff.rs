//! `diff --watch`: the diff at the start and after every change, printed as the command asks, until
//! Ctrl-C. Nothing in the cluster changes, so a signal drops a round at once.

use super::driver::run;
use super::round::{Ended, Outcome, Round, Why};
use super::status_line::plan_words;
use super::stop::Stop;
use super::watches::Watches;
use crate::cluster::Cluster;
use crate::compare::diff::{Format, RenderOptions};
use crate::compare::request::DiffRequest;
use crate::resolve::Resolver;
use crate::support::error::Result;

/// Runs the loop for `request` (which follows the cluster: no release files, no Git ref) and says on
/// stderr how it ended, unless standard output's reader went away (then it ends quietly).
pub async fn diff(
    resolver: &Resolver,
    cluster: &Cluster,
    request: &DiffRequest<'_>,
    format: Format,
    options: RenderOptions,
) -> Result<Ended> {
    let stop = Stop::listen()?;
    let hr = crate::resolve::helmrelease(cluster, request.name).await?;
    let mut watches = Watches::start(cluster, resolver.chart.path(), &request.user.files, std::slice::from_ref(&hr))?;
    let mut round = DiffRound { resolver, cluster, request, format, options };
    let ended = run(&mut round, &mut watches, &stop).await;
    say_how_it_ended(&ended);
    Ok(ended)
}

struct DiffRound<'a> {
    resolver: &'a Resolver,
    cluster: &'a Cluster,
    request: &'a DiffRequest<'a>,
    format: Format,
    options: RenderOptions,
}

impl Round for DiffRound<'_> {
    const CHANGES_CLUSTER: bool = false;

    async fn run(&mut self, _stop: &Stop) -> Outcome {
        let plan =
            match crate::compare::release_diff::diff_request(self.resolver, Some(self.cluster), self.request).await {
                Ok(plan) => plan,
                Err(e) => return Outcome::Failed(e.to_string()),
            };
        match self.request.print(&plan, self.format, self.options, Some(self.cluster)).await {
            Ok(()) => Outcome::Done(format!("diff printed: {}", plan_words(&plan))),
            Err(e) if e.is_reader_gone() => Outcome::End(Why::ReaderGone),
            Err(e) => Outcome::Failed(e.to_string()),
        }
    }
}

/// `diff --all --watch`: the set's diffs ([`crate::sets::release_set::diff`]) at the start and after every
/// change of the chart, the -f files, or any of the set's HelmReleases and their valuesFrom sources.
pub async fn diff_all(
    resolver: &Resolver,
    cluster: &Cluster,
    selection: &crate::sets::release_set::Selection,
    common: &crate::sets::release_set::diff::Common<'_>,
    concurrency: usize,
    format: Format,
    options: RenderOptions,
) -> Result<Ended> {
    let stop = Stop::listen()?;
    let set = crate::sets::release_set::select(cluster, &resolver.chart.meta.name, selection).await?;
    let mut watches = Watches::start(cluster, resolver.chart.path(), &common.user.files, &set)?;
    let mut round = DiffAllRound { resolver, cluster, selection, common, concurrency, format, options };
    let ended = run(&mut round, &mut watches, &stop).await;
    say_how_it_ended(&ended);
    Ok(ended)
}

struct DiffAllRound<'a> {
    resolver: &'a Resolver,
    cluster: &'a Cluster,
    selection: &'a crate::sets::release_set::Selection,
    common: &'a crate::sets::release_set::diff::Common<'a>,
    concurrency: usize,
    format: Format,
    options: RenderOptions,
}

impl Round for DiffAllRound<'_> {
    const CHANGES_CLUSTER: bool = false;

    async fn run(&mut self, _stop: &Stop) -> Outcome {
        use crate::sets::release_set::diff::{diff_all, print};
        // The set again: a HelmRelease may have been added, relabelled or removed since.
        let set = match crate::sets::release_set::select(self.cluster, &self.resolver.chart.meta.name, self.selection)
            .await
        {
            Ok(set) => set,
            Err(e) => return Outcome::Failed(e.to_string()),
        };
        let charts = crate::sets::release_set::Charts::Directory(self.resolver);
        let entries = diff_all(charts, self.cluster, &set, self.common, self.concurrency).await;
        match print(&entries, self.format, self.options) {
            Ok(()) => {
                let changed = entries.iter().filter(|e| e.outcome.as_ref().is_ok_and(|p| p.has_changes())).count();
                let failed = entries.iter().filter(|e| e.outcome.is_err()).count();
                Outcome::Done(format!("{} releases diffed: {changed} with changes, {failed} failed", entries.len()))
            }
            Err(e) if e.is_reader_gone() => Outcome::End(Why::ReaderGone),
            Err(e) => Outcome::Failed(e.to_string()),
        }
    }
}

/// How the loop ended, on stderr, unless standard output's reader went away (then it ends quietly).
fn say_how_it_ended(ended: &Ended) {
    if ended.why != Why::ReaderGone {
        crate::support::output::stderr_line(format_args!(
            "{}: stopped watching after {} round(s) ({}); nothing was changed",
            crate::support::output::chart_command(),
            ended.rounds,
            ended.why
        ));
    }
}
