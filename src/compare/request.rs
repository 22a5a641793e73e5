//! What `helm cozy diff` of one release compares ([`DiffRequest`]), and how its plan is printed; the
//! comparison itself is [`super::release_diff`].

use crate::cluster::Cluster;
use crate::compare::Against;
use crate::compare::diff::{Plan, PlanOptions};
use crate::desired::UserValues;
use crate::render::ClusterView;
use crate::resolve::ReleaseSource;

/// Whether the live objects of HelmRelease `name` differ from its stored release (helm-controller's
/// drift detection's comparison, [`crate::compare::drift`]), in words for [`DiffRequest::no_differences`].
async fn live_against_release(cluster: &Cluster, name: &str) -> String {
    let command = crate::support::output::chart_command();
    let compared = async {
        let hr = crate::resolve::helmrelease(cluster, name).await?;
        crate::compare::drift::detect(cluster, &hr, Default::default()).await
    };
    match compared.await {
        Ok(report) if report.has_drift() => {
            let c = report.counts();
            format!(
                "but the live objects differ from it ({} drifted, {} missing): {command} diff {name} shows what apply would change",
                c.drifted, c.missing
            )
        }
        Ok(_) => "the live objects match it".into(),
        Err(e) => format!("the live objects were not compared with it ({e})"),
    }
}

/// What `diff` compares the rendering with.
#[derive(Clone, Copy, Debug)]
pub enum DiffAgainst<'a> {
    /// The cluster: its live objects or its stored release.
    Cluster(Against),
    /// The chart (and the release files inside the repository) as they are at a Git ref, as Git spells
    /// it (`origin/main`, a tag, a commit).
    Git(&'a str),
}

/// `helm cozy diff`: what is compared, and how it is rendered.
pub struct DiffRequest<'a> {
    /// The HelmRelease `diff` is about.
    pub name: &'a str,
    pub user: &'a UserValues,
    pub against: DiffAgainst<'a>,
    /// Where the release comes from: the cluster, release files (against a Git ref, those inside the
    /// repository are read as they are at the ref for the old side, and nothing is read from a cluster),
    /// or the chart's defaults (`--plain`, against the stored release).
    pub source: &'a ReleaseSource,
    /// What the charts see without a cluster (a Git ref with release files).
    pub offline_view: ClusterView,
    pub options: PlanOptions,
}

impl DiffRequest<'_> {
    /// Whether this diff reads anything from a cluster: all do but a Git ref with release files.
    pub fn needs_cluster(&self) -> bool {
        !matches!((self.against, self.source), (DiffAgainst::Git(_), ReleaseSource::Files(_)))
    }

    /// Prints `plan` as `format` asks on stdout; a plan without changes is also said in words on stderr
    /// when people read the output, naming what was compared (against the stored release, whether the
    /// live objects match it).
    pub async fn print(
        &self,
        plan: &Plan,
        format: crate::compare::diff::Format,
        options: crate::compare::diff::RenderOptions,
        cluster: Option<&Cluster>,
    ) -> std::result::Result<(), crate::support::output::StdoutError> {
        crate::support::output::write_stdout(plan.render(format, options, &self.title()))?;
        if !plan.has_changes() && format.for_people() {
            let line = self.no_differences(cluster).await;
            crate::support::output::stderr_line(format_args!("{line}"));
        }
        Ok(())
    }

    /// The closing line of a diff without changes, saying only what was compared: "apply would change
    /// nothing" after a comparison with the live objects alone. Against the stored release, the live
    /// objects are compared with that release too (as helm-controller's drift detection compares them),
    /// so that a live edit is not hidden behind "no differences".
    async fn no_differences(&self, cluster: Option<&Cluster>) -> String {
        let command = crate::support::output::chart_command();
        if let ReleaseSource::ChartDefaults = self.source {
            // --plain compares the chart alone with the stored release, and reads no HelmRelease.
            return format!("No differences from the stored Helm release {}.", self.name);
        }
        match (self.against, cluster) {
            (DiffAgainst::Git(git_ref), _) => format!("No differences against git:{git_ref}."),
            (DiffAgainst::Cluster(Against::Live), _) => {
                format!("No differences: {command} apply {} would change nothing.", self.name)
            }
            (DiffAgainst::Cluster(Against::Release), None) => {
                "No differences from the stored Helm release (the live objects were not compared).".into()
            }
            (DiffAgainst::Cluster(Against::Release), Some(cluster)) => {
                let live = live_against_release(cluster, self.name).await;
                format!("No differences from the stored Helm release; {live}.")
            }
        }
    }
    /// What was compared, in Markdown: the first line of `-o markdown`.
    fn title(&self) -> String {
        let against = match self.against {
            DiffAgainst::Cluster(Against::Live) => "the live objects".to_string(),
            DiffAgainst::Cluster(Against::Release) => "the stored Helm release".to_string(),
            DiffAgainst::Git(r) => format!("`git:{r}`"),
        };
        format!("`{} diff {}` against {against}", crate::support::output::chart_command(), self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_markdown_title_says_what_was_compared() {
        let user = UserValues::default();
        let request = |against| DiffRequest {
            name: "podinfo",
            user: &user,
            against,
            source: &ReleaseSource::Cluster,
            offline_view: ClusterView::default(),
            options: PlanOptions::default(),
        };
        assert_eq!(
            request(DiffAgainst::Cluster(Against::Live)).title(),
            "`helm cozy diff podinfo` against the live objects"
        );
        assert_eq!(
            request(DiffAgainst::Cluster(Against::Release)).title(),
            "`helm cozy diff podinfo` against the stored Helm release"
        );
        assert_eq!(
            request(DiffAgainst::Git("origin/main")).title(),
            "`helm cozy diff podinfo` against `git:origin/main`"
        );
    }
}
