//! The chart's tests, as helm-controller runs them after a successful install or upgrade when
//! `spec.test.enable` is set (`internal/action/test.go`): Helm's test action on the release, with
//! `spec.test.filters` (an excluded name is never run; with any included name only those run),
//! `spec.test.timeout` (else `spec.timeout`), and the verdict read back from the stored release's hooks.
//! `--skip-tests` leaves them to helm-controller, and says so.

use std::time::Duration;

use super::prepare::Release;
use super::request::{ApplyRequest, Voice};
use crate::cluster::helmstore::Storage;
use crate::flux::spec::TestFilter;
use crate::support::error::Result;
use crate::support::output::progress;

/// How the tests went.
pub(super) enum TestRun {
    /// Not asked for by the HelmRelease.
    NotEnabled,
    /// Asked for, left to helm-controller (`--skip-tests`).
    Skipped,
    /// Ran; the storage after them (the release with its hooks' last runs).
    Passed {
        after: Storage,
    },
    Failed {
        error: String,
        after: Storage,
    },
    Interrupted {
        signal: String,
    },
}

/// Helm's `--filter` arguments for `filters`: `name=X` to run, `!name=X` to leave out.
pub fn filter_args(filters: &[TestFilter]) -> Vec<String> {
    filters.iter().map(|f| if f.exclude { format!("!name={}", f.name) } else { format!("name={}", f.name) }).collect()
}

/// The test timeout: `spec.test.timeout`, else `spec.timeout`, else five minutes; `--timeout` wins.
pub fn timeout(hr: &crate::flux::HelmRelease, overridden: Option<Duration>) -> Duration {
    let own = hr.spec.test.as_ref().and_then(|t| t.timeout.as_deref());
    overridden
        .or_else(|| crate::apply::install::spec_timeout(&hr.spec, own))
        .unwrap_or(crate::flux::spec::DEFAULT_TIMEOUT)
}

/// Runs the tests of the release just installed or upgraded, when the HelmRelease asks for them.
pub(super) async fn run(
    req: &ApplyRequest<'_>,
    release: &Release,
    interrupted: impl std::future::Future<Output = String>,
    voice: Voice,
) -> Result<TestRun> {
    let hr = &release.desired.hr;
    if !hr.spec.tests_enabled() {
        return Ok(TestRun::NotEnabled);
    }
    if req.options.skip_tests {
        if voice.says() {
            progress::warning(
                "tests not run (--skip-tests): the status says they are awaited, and helm-controller runs them once the release is handed back",
            );
        }
        return Ok(TestRun::Skipped);
    }
    let filters = hr.spec.test.as_ref().and_then(|t| t.filters.clone()).unwrap_or_default();
    let timeout = timeout(hr, req.options.timeout);
    let (cluster, storage) = (&release.target.cluster, &release.storage);
    if voice.says() {
        progress::action(format!(
            "helm test {}/{} as helm-controller runs it (spec.test, timeout {})",
            storage.namespace,
            storage.name,
            crate::support::duration::go_string(timeout)
        ));
    }
    let ran = crate::apply::install::test(
        cluster,
        &req.resolver.tools.helm,
        storage,
        timeout,
        &filter_args(&filters),
        interrupted,
    )
    .await;
    let after = Storage::read(cluster, &storage.storage_namespace, &storage.name).await?;
    Ok(match ran {
        Ok(()) => TestRun::Passed { after },
        Err(crate::render::RenderError::Interrupted { signal, .. }) => TestRun::Interrupted { signal },
        Err(e) => TestRun::Failed { error: super::action::helm_message(&e), after },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flux::spec::test_hook_selected;

    fn f(name: &str, exclude: bool) -> TestFilter {
        TestFilter { name: name.into(), exclude }
    }

    #[test]
    fn filters_select_as_helm_controller_selects() {
        assert!(test_hook_selected(&[], "a"));
        let only_a = [f("a", false)];
        assert!(test_hook_selected(&only_a, "a") && !test_hook_selected(&only_a, "b"));
        let not_b = [f("b", true)];
        assert!(test_hook_selected(&not_b, "a") && !test_hook_selected(&not_b, "b"));
        let both = [f("a", false), f("a", true)];
        assert!(!test_hook_selected(&both, "a"));
        assert_eq!(filter_args(&[f("a", false), f("b", true)]), ["name=a", "!name=b"]);
    }
}
