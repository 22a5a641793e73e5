//! A release helm-controller uninstalls before it installs again: the chart's name is not the one of the
//! release it keeps (`status.history[0].chartName`). helm-controller v1.5 always reinstalls then; v1.6
//! unless `spec.upgrade.chartNameChangeStrategy` is `InPlaceUpdate` (`ReleaseTargetChanged` in its
//! HelmRelease reconciler). A Helm upgrade in place would leave the release as helm-controller never
//! makes it, so helm cozy uninstalls first too, and the action planned after it is an install.

use super::prepare::Release;
use super::{ApplyRequest, Voice};
use crate::controller::Rules;
use crate::error::{Error, Result};
use crate::flux::HelmRelease;
use crate::output::progress;

/// Uninstalls the release when helm-controller would, before the action is planned.
pub(super) async fn run(req: &ApplyRequest<'_>, release: &Release, voice: Voice) -> Result<()> {
    let (cluster, desired) = (&release.target.cluster, &release.desired);
    let chart = &req.pipeline.chart.meta.name;
    let Some(kept) = desired.hr.latest_snapshot().map(|s| s.chart_name.as_str()).filter(|n| !n.is_empty()) else {
        return Ok(());
    };
    let rules = desired.controller.rules();
    if kept == chart || !reinstalls(&desired.hr, &rules) || !super::plan::installed(cluster, desired).await? {
        return Ok(());
    }
    if voice.says() {
        progress::action(format!(
            "the chart is {chart}, the release's is {kept}: helm-controller {} uninstalls the release and installs it again, and so does helm cozy",
            rules.version
        ));
    }
    let helm = &req.pipeline.helm;
    let args = crate::install::uninstall_args(helm.major, &desired.hr, &release.storage, req.options.timeout)?;
    // Not stopped by a signal half-way: the signal is answered by the action that follows.
    crate::install::uninstall(cluster, helm, &release.storage, &args, std::future::pending())
        .await
        .map_err(|e| Error::Failed(format!("uninstalling the release of chart {kept} before installing {chart}: {e}")))
}

/// Whether a chart name change reinstalls, for this helm-controller and HelmRelease.
fn reinstalls(hr: &HelmRelease, rules: &Rules) -> bool {
    let strategy = hr.spec.upgrade.as_ref().and_then(|u| u.chart_name_change_strategy.as_deref());
    !rules.chart_name_change_strategy || strategy != Some("InPlaceUpdate")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::Version;

    #[test]
    fn a_chart_name_change_reinstalls_unless_v1_6_updates_in_place() {
        let hr = |upgrade: serde_json::Value| -> HelmRelease {
            serde_json::from_value(serde_json::json!({
                "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
                "metadata": {"name": "a", "namespace": "n"},
                "spec": {"upgrade": upgrade}
            }))
            .unwrap()
        };
        let v15 = Rules::of(Version::new(1, 5, 0), &[]);
        let v16 = Rules::of(Version::new(1, 6, 2), &[]);
        let in_place = hr(serde_json::json!({"chartNameChangeStrategy": "InPlaceUpdate"}));
        assert!(reinstalls(&in_place, &v15));
        assert!(!reinstalls(&in_place, &v16));
        assert!(reinstalls(&hr(serde_json::json!({})), &v16));
    }
}
