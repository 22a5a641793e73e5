//! `apply` and `delete` of a HelmRelease's chart from a local directory, without racing Flux.
//!
//! `run` is the whole of an apply, as a sequence of named steps, each in the room of its idea:
//!
//! 1. `prepare::resolve`: the HelmRelease, its values and chart (`Desired`), the cluster its release lives
//!    in and as whom (`Target`), and the post-render session: derived once, handed to every later step;
//! 2. `prepare::render_and_check`: render and post-render as helm-controller would, pick the CRDs, check
//!    the policies and waits: a chart that cannot be installed changes nothing, not even the suspension;
//! 3. `dry_run::run` (`--dry-run`): helm's server dry run and every object through the API server;
//! 4. [`crate::apply::handback::compare`]: whether the chart is the source's (else helm-controller must replace
//!    it once handed back);
//! 5. [`crate::apply::release_lease::acquire`]: one apply at a time per release, until the status is written;
//! 6. `take_over::take_over`: suspend, put back storage an interrupted run left, lift a stale lock;
//!    then `retarget::run`: a release whose target changed (namespaces, name, chart) is uninstalled
//!    where it is, as helm-controller does before it installs anew;
//! 7. `plan::decide`: install or upgrade, the apply method, the CRD policy and how to wait, from what
//!    the storage holds now;
//! 8. `action::run`: the CRDs, then `helm upgrade --install`, then helm-controller's wait;
//! 9. `test::run`: the chart's tests when `spec.test` asks for them;
//! 10. `remediate::run`: after a failure, the remediation helm-controller would run (a rollback or an
//!     uninstall), as `record::Book::decide` decides it;
//! 11. `record::Book::write`: the status helm-controller would write and its Events; when
//!     helm-controller would try again at once (retries left after a remediation), steps 7 to 11 run
//!     again, as its next reconcile does (`reconcile`); any other failure ends the apply here;
//! 12. `hand_back::mark`: mark the release when its chart is not the source's;
//! 13. `hand_back::proceed`: nudge dependents, then hand back to Flux (`--resume`) or say how; the
//!     lease is released after it.
//!
//! On failure the status says Ready=False with helm-controller's reason and the release stays
//! suspended. Ctrl-C or SIGTERM stops helm (the child is killed when its future is dropped), records that
//! the apply was interrupted, and removes temporary files on the way out. `apply --watch` runs the same
//! steps once per round ([`apply_round`]); [`delete`] shares the take-over.

mod action;
mod cleanup;
mod delete;
pub mod deleted;
mod dry_run;
mod events;
pub mod field_managers;
mod hand_back;
pub mod handback;
pub mod install;
pub(crate) mod observe;
pub mod plain;
mod plan;
mod prepare;
pub mod readiness;
mod record;
pub mod release_lease;
pub mod release_lock;
pub(crate) mod remediate;
mod request;
mod retarget;
pub mod snapshot;
pub(crate) mod status;
mod take_over;
pub(crate) mod test;

pub use delete::delete;
use request::Voice;
pub use request::{ApplyRequest, Outcome};

use crate::support::error::Result;

/// Applies the chart for the HelmRelease; see the module docs.
pub async fn apply(req: ApplyRequest<'_>) -> Result<Outcome> {
    // Listening from the start: a SIGINT while the storage is being moved is then handled (once helm
    // runs) instead of killing the process half-way.
    let interrupted = crate::support::process::interrupted();
    run(req, interrupted, Voice::Command).await
}

/// One round of `apply --watch` ([`crate::watch`]): the same apply, stopped only when `interrupted`
/// resolves (the loop's second Ctrl-C: the first one lets the round finish), and quiet about what the
/// loop says once for all rounds (the suspension, the hand-back) and about what its round line says.
pub async fn apply_round(
    req: ApplyRequest<'_>,
    interrupted: impl std::future::Future<Output = String>,
) -> Result<Outcome> {
    run(req, interrupted, Voice::Round).await
}

/// The steps of an apply, in order (see the module docs).
async fn run(
    req: ApplyRequest<'_>,
    interrupted: impl std::future::Future<Output = String>,
    voice: Voice,
) -> Result<Outcome> {
    let Some(release) = prepare::resolve(&req, voice).await? else {
        return Ok(Outcome::Resumed);
    };
    let checked = prepare::render_and_check(&req, &release, voice).await?;
    // A changed target is uninstalled first, as helm-controller does it: checked before anything changes.
    retarget::check(&release).await?;
    if req.options.dry_run {
        return dry_run::run(&req, &release, &checked, interrupted).await;
    }
    let sameness = hand_back::compare(&req, &release, voice).await;
    let lease = crate::apply::release_lease::acquire(
        &release.target.own,
        &release.desired.storage_namespace,
        &release.desired.release_name,
        req.options.timeout,
    )
    .await?;
    let interrupted = futures::FutureExt::shared(interrupted);
    let applied = async {
        let why = voice.says().then_some("so Flux does not race this apply");
        let (home, release_cluster) = (req.cluster, &release.target.cluster);
        take_over::take_over(home, release_cluster, req.name, &release.storage, req.options.timeout, why).await?;
        retarget::run(&req, &release, &checked, voice).await?;
        let (mut attempt, most) = (1, most_attempts(&release.desired.hr));
        let (hr, stored) = loop {
            match reconcile(&req, &release, &checked, interrupted.clone(), voice, attempt).await? {
                record::Written::Applied(applied) => break *applied,
                record::Written::Again if attempt < most => attempt += 1,
                record::Written::Again => {
                    return Err(crate::support::error::Error::Failed(format!(
                        "stopped after {most} attempts, each failed and remediated, more than the retries allow; resume the HelmRelease to let helm-controller go on (the status says where this one stopped)"
                    )));
                }
            }
        };
        let hr = hand_back::mark(&req, &hr, &stored, &sameness).await?;
        hand_back::proceed(&req, &hr, voice).await
    }
    .await;
    lease.release().await;
    applied.map(|()| Outcome::Applied)
}

/// A bound on the loop: every attempt that ends in a remediation counts a failure of its action, and
/// the loop goes on only while that action's retries last, so no more attempts than both actions'
/// retries and their last failures (an uninstall strategy turns an upgrade into an install) are made.
fn most_attempts(hr: &crate::flux::HelmRelease) -> u32 {
    use crate::flux::spec::{Actions as _, ReleaseAction};
    let allowed = |action| u32::try_from(hr.spec.remediation(action).retries.max(0)).unwrap_or(u32::MAX);
    allowed(ReleaseAction::Install).saturating_add(allowed(ReleaseAction::Upgrade)).saturating_add(3)
}

/// One reconcile as helm-controller's: the plan from what the storage holds now, the install or upgrade,
/// the tests, the remediation, the status written (steps 7 to 11 of the module docs).
async fn reconcile(
    req: &ApplyRequest<'_>,
    release: &prepare::Release,
    checked: &prepare::Checked,
    interrupted: impl std::future::Future<Output = String> + Clone,
    voice: Voice,
    attempt: u32,
) -> Result<record::Written> {
    let plan = plan::decide(req, release, voice).await?;
    let mut book = record::Book::open(req, release, &plan).await?;
    let ended = action::run(req, release, checked, &plan, interrupted.clone(), voice).await?;
    book.action(&ended, ended.after.clone());
    if book.applied() {
        book.test(test::run(req, release, interrupted.clone(), voice).await?);
    }
    if let Some(decision) = book.decide(req.options.keep_failed).cloned()
        && !req.options.keep_failed
    {
        let failed = book.failed_snapshot();
        let remedied = remediate::run(req, release, &decision, &failed, interrupted, voice).await?;
        book.remediation(remedied);
    }
    book.write(checked, voice, attempt).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hr(spec: serde_json::Value) -> crate::flux::HelmRelease {
        serde_json::from_value(serde_json::json!({"metadata": {"name": "app", "namespace": "apps"}, "spec": spec}))
            .expect("a HelmRelease")
    }

    #[test]
    fn the_loop_is_bounded_by_the_retries() {
        assert_eq!(most_attempts(&hr(serde_json::json!({}))), 3);
        let many = hr(
            serde_json::json!({"install": {"remediation": {"retries": 2}}, "upgrade": {"remediation": {"retries": 40}}}),
        );
        assert_eq!(most_attempts(&many), 45, "more than 20 retries are taken");
        let endless = hr(serde_json::json!({"upgrade": {"remediation": {"retries": -1}}}));
        assert_eq!(most_attempts(&endless), 3, "-1 stops after the first remediation anyway");
    }
}
