//! `diff --watch`: the diff at the start and after every change, printed as the command asks, until
//! Ctrl-C. Nothing in the cluster changes, so a signal drops a round at once.

use super::{Ended, Outcome, Round, Stop, Watches, Why, plan_words};
use crate::cluster::Cluster;
use crate::diff::{Format, RenderOptions};
use crate::error::Result;
use crate::pipeline::{DiffRequest, Pipeline};

/// Runs the loop for `request` (which follows the cluster: no release files, no Git ref) and says on
/// stderr how it ended, unless standard output's reader went away (then it ends quietly).
pub async fn diff(
    pipeline: &Pipeline,
    cluster: &Cluster,
    request: &DiffRequest<'_>,
    format: Format,
    options: RenderOptions,
) -> Result<Ended> {
    let stop = Stop::listen()?;
    let hr = crate::pipeline::helmrelease(cluster, request.name).await?;
    let mut watches = Watches::start(cluster, pipeline.chart.path(), &request.user.files, &hr)?;
    let mut round = DiffRound { pipeline, cluster, request, format, options };
    let ended = super::run(&mut round, &mut watches, &stop).await;
    if ended.why != Why::ReaderGone {
        crate::output::stderr_line(format_args!(
            "helm cozy: stopped watching after {} round(s) ({}); nothing was changed",
            ended.rounds, ended.why
        ));
    }
    Ok(ended)
}

struct DiffRound<'a> {
    pipeline: &'a Pipeline,
    cluster: &'a Cluster,
    request: &'a DiffRequest<'a>,
    format: Format,
    options: RenderOptions,
}

impl Round for DiffRound<'_> {
    const CHANGES_CLUSTER: bool = false;

    async fn run(&mut self, _stop: &Stop) -> Outcome {
        let plan = match self.pipeline.diff_request(Some(self.cluster), self.request).await {
            Ok(plan) => plan,
            Err(e) => return Outcome::Failed(e.to_string()),
        };
        match self.request.print(&plan, self.format, self.options) {
            Ok(()) => Outcome::Done(format!("diff printed: {}", plan_words(&plan))),
            Err(e) if e.is_reader_gone() => Outcome::End(Why::ReaderGone),
            Err(e) => Outcome::Failed(e.to_string()),
        }
    }
}
