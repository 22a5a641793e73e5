//! Running `helm upgrade --install` and `helm uninstall` the way helm-controller configures its Helm
//! actions (internal/action/{install,upgrade}.go): Flux's release name and namespace, the composed values
//! with `--reset-values`, take-ownership on, history capped at `maxHistory`, the HelmRelease's wait and
//! timeout, and Flux's post-render chain.
//!
//! Helm's CLI keeps a release's storage in the namespace it deploys to, while Flux stores it in the
//! HelmRelease's namespace (or `storageNamespace`) and deploys to `targetNamespace`. When the two differ,
//! the release's storage Secrets are moved to the release namespace for the duration of the Helm command
//! and moved back after it, on every exit path; the HelmRelease is suspended meanwhile, so nothing races.

pub use crate::desired::release_target::Release;
use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::{DeleteParams, ListParams, PostParams};

use crate::apply::readiness::HelmWait;
use crate::cluster::Cluster;
use crate::desired::Desired;
use crate::desired::apply_method::ApplyMethod;
use crate::render::postrender::PostRenderSession;
use crate::render::{Helm, RenderError};
use crate::support::error::{Error, Result};

/// How helm-controller would take the release's next action: an upgrade (a release is stored) or an
/// install, with which apply method ([`crate::desired::apply_method`]), and what helm waits for
/// ([`crate::apply::readiness`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mode {
    pub installed: bool,
    pub method: ApplyMethod,
    pub wait: HelmWait,
}

/// The user's knobs on top of what the HelmRelease says.
#[derive(Debug, Clone, Default)]
pub struct UpgradeOptions {
    /// `--dry-run=server`: render and have the API server validate, change nothing.
    pub dry_run: bool,
    /// Force waiting (true) or not (false); None follows the HelmRelease's install/upgrade.disableWait.
    /// How, and who waits, is [`crate::apply::readiness::Waiting`]'s.
    pub wait: Option<bool>,
    /// Overrides the HelmRelease's timeout.
    pub timeout: Option<Duration>,
    /// Pass `--take-ownership` even if the HelmRelease disables it.
    pub take_ownership: bool,
    /// Leave `spec.test` to helm-controller (`--skip-tests`).
    pub skip_tests: bool,
    /// Keep a failed release as it is, without the remediation helm-controller would run
    /// (`--keep-failed`).
    pub keep_failed: bool,
}

impl UpgradeOptions {
    /// How `hr`'s install (or, when `installed`, upgrade) waits (see [`crate::apply::readiness`]): the
    /// HelmRelease's strategy and expressions, these options' `wait` and `timeout`.
    pub fn waiting(&self, hr: &crate::flux::HelmRelease, installed: bool) -> Result<crate::apply::readiness::Waiting> {
        crate::apply::readiness::Waiting::of(hr, installed, self.wait, action_timeout(hr, installed, self.timeout))
    }
}

/// The action's timeout as helm-controller takes it: `spec.install.timeout` or `spec.upgrade.timeout`,
/// else `spec.timeout`, else 5 minutes; `overridden` (`--timeout`) wins.
pub fn action_timeout(hr: &crate::flux::HelmRelease, installed: bool, overridden: Option<Duration>) -> Duration {
    use crate::flux::spec::Actions as _;
    let own = hr.spec.release_settings(installed).timeout;
    overridden.or_else(|| spec_timeout(&hr.spec, own.as_deref())).unwrap_or(crate::flux::spec::DEFAULT_TIMEOUT)
}

/// An action's own timeout, else `spec.timeout` (unparseable ones are left to the default, as the API
/// server's validation keeps them out).
pub fn spec_timeout(spec: &crate::flux::helmrelease::HelmReleaseSpec, own: Option<&str>) -> Option<Duration> {
    let text = own.filter(|t| !t.is_empty()).or(spec.timeout.as_deref())?;
    crate::support::duration::parse(text).ok()
}

/// The `helm upgrade --install` argument vector for a desired release.
fn upgrade_args(
    helm: &Helm,
    desired: &Desired,
    values_file: &Path,
    mode: Mode,
    options: &UpgradeOptions,
) -> Vec<OsString> {
    let Mode { installed, method, wait: helm_wait } = mode;
    use crate::flux::spec::Actions as _;
    let spec = &desired.hr.spec;
    let settings = spec.release_settings(installed);
    let mut args: Vec<OsString> = vec![
        "upgrade".into(),
        "--install".into(),
        desired.release_name.clone().into(),
        desired.chart_dir().as_os_str().to_owned(),
        "--namespace".into(),
        desired.release_namespace.clone().into(),
        "--values".into(),
        values_file.as_os_str().to_owned(),
        // helm-controller sets ResetValues = !preserveValues: the composed values are the whole truth.
        "--reset-values".into(),
        "--history-max".into(),
        spec.max_history().to_string().into(),
    ];
    // Integers helm-controller's Helm holds as int64s, which a values file would make float64s.
    args.extend(crate::render::values_args(&[], &desired.composed.integer_sets));
    if spec.install.as_ref().is_some_and(|i| i.create_namespace) {
        args.push("--create-namespace".into());
    }
    // helm-controller applies the chart's CRDs itself, by its own policy (as helm cozy does: crate::desired::crds).
    args.push("--skip-crds".into());
    if options.take_ownership || !settings.disable_take_ownership {
        args.push("--take-ownership".into());
    }
    if settings.disable_hooks {
        args.push("--no-hooks".into());
    }
    if settings.disable_openapi_validation {
        args.push("--disable-openapi-validation".into());
    }
    if settings.disable_schema_validation {
        args.push("--skip-schema-validation".into());
    }
    // `upgrade.cleanupOnFail`: the objects a failed upgrade created are deleted (an install has none to keep).
    if installed && spec.upgrade.as_ref().is_some_and(|u| u.cleanup_on_fail) {
        args.push("--cleanup-on-fail".into());
    }
    args.push("--timeout".into());
    args.push(format!("{}s", action_timeout(&desired.hr, installed, options.timeout).as_secs()).into());
    let force_replace = crate::desired::apply_method::force_replace(&desired.hr, installed, method);
    args.extend(method_and_wait_args(helm, method.server_side(), force_replace, helm_wait));
    if options.dry_run {
        args.push("--dry-run=server".into());
    }
    args
}

/// Runs `helm upgrade --install` for the desired release with the post-render chain.
pub async fn upgrade(
    cluster: &Cluster,
    helm: &Helm,
    desired: &Desired,
    session: &PostRenderSession,
    mode: Mode,
    options: &UpgradeOptions,
    cancel: impl std::future::Future<Output = String>,
) -> Result<(), RenderError> {
    let values = desired.write_values_file().map_err(|e| RenderError::ValuesFile(e.to_string()))?;
    let mut args = upgrade_args(helm, desired, values.path(), mode, options);
    args.extend(session.helm_args(helm.major)?);
    // The cluster helm cozy was pointed at (under Helm these also arrive as HELM_KUBE* variables).
    args.extend(cluster.helm_args());
    let env = session.helm_env(helm.major);
    let run = || async {
        helm.run_until(&args, &env, cancel).await.map(|_| ()).map_err(|e| match (e, session.error_log()) {
            (RenderError::Failed { program, stderr }, Some(log)) => {
                RenderError::Failed { program, stderr: format!("{log}\n{stderr}") }
            }
            (e, _) => e,
        })
    };
    if options.dry_run {
        // A dry run changes nothing, not even where Helm's storage is (the HelmRelease is not suspended
        // for it): where storage and release namespaces differ, helm finds no release and dry-runs an
        // install, which still has the API server check every object.
        return run().await;
    }
    with_storage_in_release_namespace(cluster, &Release::of(&desired.hr), run).await
}

/// How Helm deletes a release's objects when it waits for the deletion (`--wait`), as
/// helm-controller's `getWaitStrategy` picks it for the uninstall action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UninstallWait {
    /// `spec.uninstall.disableWait`: hooks only, the deletion is not waited for.
    HooksOnly,
    /// `waitStrategy: poller` (the default): helm-controller's poller waits until every object is gone
    /// (kstatus); Helm 4's `watcher` is its kstatus waiter.
    Watcher,
    /// `waitStrategy: legacy`: Helm's own wait.
    Legacy,
}

/// `spec.uninstall`, as helm-controller configures Helm's uninstall action
/// (`internal/action/uninstall.go`), for every uninstall it runs: a deletion, a release target change,
/// a remediation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UninstallSettings {
    /// `uninstall.timeout`, else `spec.timeout`, else 5 minutes; the user's `--timeout` wins.
    pub timeout: Duration,
    pub disable_hooks: bool,
    pub keep_history: bool,
    pub wait: UninstallWait,
    /// `deletionPropagation`: `background` (the default), `foreground` or `orphan`.
    pub cascade: String,
}

impl UninstallSettings {
    /// The settings of `hr`'s uninstall; `overridden` is the user's `--timeout`. A deletion propagation or
    /// wait strategy helm-controller does not know is refused (before anything changes).
    pub fn of(hr: &crate::flux::HelmRelease, overridden: Option<Duration>) -> Result<UninstallSettings> {
        let spec = hr.spec.uninstall.clone().unwrap_or_default();
        let timeout = overridden
            .or_else(|| spec_timeout(&hr.spec, spec.timeout.as_deref()))
            .unwrap_or(crate::flux::spec::DEFAULT_TIMEOUT);
        let cascade = spec.deletion_propagation.filter(|p| !p.is_empty()).unwrap_or_else(|| "background".into());
        if !matches!(cascade.as_str(), "background" | "foreground" | "orphan") {
            return Err(Error::Invalid {
                what: "spec.uninstall.deletionPropagation".into(),
                reason: format!("{cascade:?} is not one of background, foreground and orphan"),
            });
        }
        let wait = match (spec.disable_wait, crate::apply::readiness::Strategy::of(hr)?) {
            (true, _) => UninstallWait::HooksOnly,
            (false, crate::apply::readiness::Strategy::Poller) => UninstallWait::Watcher,
            (false, crate::apply::readiness::Strategy::Legacy) => UninstallWait::Legacy,
        };
        Ok(UninstallSettings {
            timeout,
            disable_hooks: spec.disable_hooks,
            keep_history: spec.keep_history,
            wait,
            cascade,
        })
    }
}

/// The `helm uninstall` argument vector for `release` (its storage moved to its namespace, where Helm's
/// CLI looks: see [`uninstall`]), by `hr`'s `spec.uninstall` ([`UninstallSettings`]) for a Helm of
/// major version `helm_major`. The cluster's own flags are the caller's.
pub fn uninstall_args(
    helm_major: u32,
    hr: &crate::flux::HelmRelease,
    release: &Release,
    overridden: Option<Duration>,
) -> Result<Vec<OsString>> {
    let settings = UninstallSettings::of(hr, overridden)?;
    let mut args: Vec<OsString> = vec![
        "uninstall".into(),
        release.name.clone().into(),
        "--namespace".into(),
        release.namespace.clone().into(),
        "--timeout".into(),
        format!("{}s", settings.timeout.as_secs()).into(),
        "--cascade".into(),
        settings.cascade.into(),
    ];
    if settings.disable_hooks {
        args.push("--no-hooks".into());
    }
    if settings.keep_history {
        args.push("--keep-history".into());
    }
    // Helm 4 takes a strategy (its CLI's default is hookOnly, which waits for no deletion); Helm 3's
    // `--wait` is its own wait for the deletion, and without it only hooks are waited for.
    let wait = match (helm_major >= 4, settings.wait) {
        (true, UninstallWait::HooksOnly) => Some("--wait=hookOnly"),
        (true, UninstallWait::Watcher) => Some("--wait=watcher"),
        (true, UninstallWait::Legacy) => Some("--wait=legacy"),
        (false, UninstallWait::HooksOnly) => None,
        (false, UninstallWait::Watcher | UninstallWait::Legacy) => Some("--wait"),
    };
    args.extend(wait.map(OsString::from));
    Ok(args)
}

/// `helm uninstall` as `args` ([`uninstall_args`]) say, of `release` from Flux's storage, stopped
/// gracefully when `cancel` resolves (the storage goes back to Flux's namespace either way).
pub async fn uninstall(
    cluster: &Cluster,
    helm: &Helm,
    release: &Release,
    args: &[OsString],
    cancel: impl std::future::Future<Output = String>,
) -> Result<(), RenderError> {
    let mut args = args.to_vec();
    args.extend(cluster.helm_args());
    let run = || async { helm.run_until(&args, &[], cancel).await.map(|_| ()) };
    with_storage_in_release_namespace(cluster, release, run).await
}

/// `helm test` of the release (its test hooks, `filters` as Helm's `--filter` arguments), each hook
/// awaited up to `timeout`, as helm-controller's test action runs them.
pub async fn test(
    cluster: &Cluster,
    helm: &Helm,
    release: &Release,
    timeout: Duration,
    filters: &[String],
    cancel: impl std::future::Future<Output = String>,
) -> Result<(), RenderError> {
    let mut args: Vec<OsString> = vec!["test".into(), release.name.clone().into(), "--namespace".into()];
    args.push(release.namespace.clone().into());
    args.push("--timeout".into());
    args.push(format!("{}s", timeout.as_secs()).into());
    for f in filters {
        args.push("--filter".into());
        args.push(f.into());
    }
    args.extend(cluster.helm_args());
    let run = || async { helm.run_until(&args, &[], cancel).await.map(|_| ()) };
    with_storage_in_release_namespace(cluster, release, run).await
}

/// `helm rollback` of the release to revision `to`, as helm-controller's rollback remediation runs it.
pub async fn rollback(
    cluster: &Cluster,
    helm: &Helm,
    release: &Release,
    to: i64,
    options: &RollbackOptions,
    cancel: impl std::future::Future<Output = String>,
) -> Result<(), RenderError> {
    let args = rollback_args(helm, release, to, options, cluster);
    let run = || async { helm.run_until(&args, &[], cancel).await.map(|_| ()) };
    with_storage_in_release_namespace(cluster, release, run).await
}

/// How a rollback runs (`spec.rollback`, with what the release rolled back to says of its method).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RollbackOptions {
    pub timeout: Duration,
    /// Helm's own wait; None when helm cozy waits after it (helm-controller's poller) or not at all.
    pub helm_wait: HelmWait,
    pub disable_hooks: bool,
    pub cleanup_on_fail: bool,
    pub server_side: bool,
    pub force_replace: bool,
    pub max_history: i64,
}

fn rollback_args(helm: &Helm, release: &Release, to: i64, o: &RollbackOptions, cluster: &Cluster) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec!["rollback".into(), release.name.clone().into(), to.to_string().into()];
    args.extend(["--namespace".into(), release.namespace.clone().into()]);
    args.extend(["--timeout".into(), format!("{}s", o.timeout.as_secs()).into()]);
    args.extend(["--history-max".into(), o.max_history.to_string().into()]);
    if o.disable_hooks {
        args.push("--no-hooks".into());
    }
    if o.cleanup_on_fail {
        args.push("--cleanup-on-fail".into());
    }
    args.extend(method_and_wait_args(helm, o.server_side, o.force_replace, o.helm_wait));
    args.extend(cluster.helm_args());
    args
}

/// How Helm applies and waits, as helm-controller asks it: under Helm 4 the method helm-controller decides
/// ([`crate::desired::apply_method`]), conflicts forced only server-side as helm-controller forces them, objects
/// replaced only client-side; Helm's own wait only under `legacy` (under `poller` helm waits for hooks
/// and helm cozy waits after it as helm-controller's waiter does, [`crate::apply::readiness`]). Helm 3 applies
/// client-side, always waits for hooks, and `--wait` is its legacy wait.
fn method_and_wait_args(helm: &Helm, server_side: bool, force_replace: bool, wait: HelmWait) -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::new();
    if helm.major >= 4 {
        args.push(format!("--server-side={server_side}").into());
        if server_side {
            args.push("--force-conflicts".into());
        } else if force_replace {
            args.push("--force-replace".into());
        }
        match wait {
            HelmWait::HooksOnly => args.push("--wait=hookOnly".into()),
            HelmWait::Legacy { jobs } => {
                args.push("--wait=legacy".into());
                if jobs {
                    args.push("--wait-for-jobs".into());
                }
            }
        }
    } else {
        if force_replace {
            args.push("--force".into());
        }
        if let HelmWait::Legacy { jobs } = wait {
            args.push("--wait".into());
            if jobs {
                args.push("--wait-for-jobs".into());
            }
        }
    }
    args
}

/// Whether `helm uninstall` has something to do for `release`: a revision is stored that is not
/// uninstalled, or (without `keep_history`) one is stored at all, which Helm then purges, as
/// helm-controller's uninstall of a release uninstalled with its history kept does.
pub async fn uninstall_needed(cluster: &Cluster, release: &Release, keep_history: bool) -> Result<bool> {
    let newest = crate::cluster::helmstore::newest_labels(cluster, &release.storage_namespace, &release.name).await?;
    Ok(match newest {
        None => false,
        Some((_, status)) => status != "uninstalled" || !keep_history,
    })
}

/// Runs `f` with the release's storage Secrets in the release namespace (where Helm's CLI looks), then
/// puts whatever Helm left there back into Flux's storage namespace, also when `f` failed.
async fn with_storage_in_release_namespace<F, Fut>(
    cluster: &Cluster,
    release: &Release,
    f: F,
) -> Result<(), RenderError>
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<(), RenderError>>,
{
    let (storage, release_ns) = (&release.storage_namespace, &release.namespace);
    if storage == release_ns {
        return f().await;
    }
    let relocation = |e: Error| RenderError::Storage(format!("{storage} and {release_ns}: {e}"));
    move_storage(cluster, &release.name, storage, release_ns).await.map_err(relocation)?;
    let result = f().await;
    let back = move_storage(cluster, &release.name, release_ns, storage).await.map_err(relocation);
    match (result, back) {
        (Ok(()), back) => back,
        (Err(e), Ok(())) => Err(e),
        // The storage left where Flux does not look needs the user's hand first: it leads.
        (Err(e), Err(RenderError::Storage(back))) => Err(RenderError::Storage(format!("{back} (after: {e})"))),
        (Err(e), Err(_)) => Err(e),
    }
}

/// Puts back Helm storage Secrets of `release` that an interrupted command (killed while helm ran, so that
/// the move back never happened) left in the release namespace, where Flux does not look. Done before
/// anything else reads the storage, so that the next action and the history written after it are what
/// really happened. Returns how many were moved.
pub async fn recover_storage(cluster: &Cluster, release: &Release) -> Result<usize> {
    let (storage, release_ns) = (&release.storage_namespace, &release.namespace);
    if storage == release_ns {
        return Ok(0);
    }
    let left: Api<Secret> = Api::namespaced(cluster.client.clone(), release_ns);
    let lp = ListParams::default().labels(&format!("owner=helm,name={}", release.name));
    let count = left.list_metadata(&lp).await.map_err(|e| cluster.error(e))?.items.len();
    if count > 0 {
        move_storage(cluster, &release.name, release_ns, storage).await?;
    }
    Ok(count)
}

/// Moves Helm's storage Secrets of `release` from one namespace to another (create, then delete).
async fn move_storage(cluster: &Cluster, release: &str, from: &str, to: &str) -> Result<()> {
    let src: Api<Secret> = Api::namespaced(cluster.client.clone(), from);
    let dst: Api<Secret> = Api::namespaced(cluster.client.clone(), to);
    let lp = ListParams::default().labels(&format!("owner=helm,name={release}"));
    for s in src.list(&lp).await.map_err(|e| cluster.error(e))?.items {
        let name = s.metadata.name.clone().unwrap_or_default();
        let copy = Secret {
            metadata: kube::api::ObjectMeta {
                name: Some(name.clone()),
                namespace: Some(to.to_string()),
                labels: s.metadata.labels.clone(),
                annotations: s.metadata.annotations.clone(),
                ..Default::default()
            },
            data: s.data.clone(),
            type_: s.type_.clone(),
            ..Default::default()
        };
        match dst.create(&PostParams::default(), &copy).await {
            Ok(_) => {}
            Err(kube::Error::Api(e)) if e.code == 409 => {
                dst.replace(&name, &PostParams::default(), &copy).await.map_err(|e| cluster.error(e))?;
            }
            Err(e) => return Err(cluster.error(e)),
        }
        src.delete(&name, &DeleteParams::default()).await.map_err(|e| cluster.error(e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hr(spec: serde_json::Value) -> crate::flux::HelmRelease {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {"name": "a", "namespace": "flux"},
            "spec": spec,
        }))
        .unwrap()
    }

    fn release() -> Release {
        Release { name: "apps-a".into(), namespace: "apps".into(), storage_namespace: "flux".into() }
    }

    fn args(major: u32, spec: serde_json::Value, overridden: Option<Duration>) -> Vec<String> {
        let args = uninstall_args(major, &hr(spec), &release(), overridden).unwrap();
        args.iter().map(|a| a.to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn the_defaults_wait_for_the_deletion_as_helm_controller_does() {
        let base = ["uninstall", "apps-a", "--namespace", "apps", "--timeout", "300s", "--cascade", "background"];
        let with = |wait: &[&str]| base.iter().chain(wait).map(|s| s.to_string()).collect::<Vec<_>>();
        // helm-controller's poller waits for every object to be gone: Helm 4's watcher, Helm 3's --wait.
        assert_eq!(args(4, serde_json::json!({}), None), with(&["--wait=watcher"]));
        assert_eq!(args(3, serde_json::json!({}), None), with(&["--wait"]));
        let legacy = serde_json::json!({"waitStrategy": {"name": "legacy"}});
        assert_eq!(args(4, legacy.clone(), None), with(&["--wait=legacy"]));
        assert_eq!(args(3, legacy, None), with(&["--wait"]));
    }

    #[test]
    fn spec_uninstall_becomes_helms_flags() {
        let spec = serde_json::json!({"timeout": "10m", "uninstall": {
            "timeout": "90s", "disableHooks": true, "keepHistory": true, "disableWait": true,
            "deletionPropagation": "orphan"}});
        let expected = [
            "uninstall",
            "apps-a",
            "--namespace",
            "apps",
            "--timeout",
            "90s",
            "--cascade",
            "orphan",
            "--no-hooks",
            "--keep-history",
        ];
        let mut helm4: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
        helm4.push("--wait=hookOnly".into());
        assert_eq!(args(4, spec.clone(), None), helm4);
        // Helm 3 waits for hooks only unless told --wait.
        assert_eq!(args(3, spec, None), expected);
        let foreground = serde_json::json!({"uninstall": {"deletionPropagation": "foreground"}});
        assert!(args(4, foreground, None).windows(2).any(|w| w == ["--cascade", "foreground"]));
    }

    #[test]
    fn the_timeout_is_the_uninstalls_else_the_specs_and_the_users_wins() {
        let timeout = |spec, overridden| {
            let a = args(4, spec, overridden);
            a[a.iter().position(|a| a == "--timeout").unwrap() + 1].clone()
        };
        assert_eq!(timeout(serde_json::json!({"timeout": "2m"}), None), "120s");
        assert_eq!(timeout(serde_json::json!({"timeout": "2m", "uninstall": {"timeout": "30s"}}), None), "30s");
        let users = Some(Duration::from_secs(7));
        assert_eq!(timeout(serde_json::json!({"timeout": "2m", "uninstall": {"timeout": "30s"}}), users), "7s");
    }

    #[test]
    fn what_helm_controller_does_not_know_is_refused() {
        let bad = hr(serde_json::json!({"uninstall": {"deletionPropagation": "sideways"}}));
        let e = uninstall_args(4, &bad, &release(), None).unwrap_err().to_string();
        assert!(e.contains("spec.uninstall.deletionPropagation") && e.contains("sideways"), "{e}");
        let bad = hr(serde_json::json!({"waitStrategy": {"name": "eager"}}));
        assert!(uninstall_args(4, &bad, &release(), None).is_err());
    }
}
