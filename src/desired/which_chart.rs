//! Whether a chart directory holds the chart a HelmRelease deploys.
//!
//! helm-controller treats a HelmRelease whose chart changed name as a moved release: it uninstalls the
//! recorded release and installs the new chart (`ReleaseTargetChanged`, see
//! [`crate::desired::release_target`]). From a workstation, a chart directory whose chart is not the
//! HelmRelease's is almost always the wrong directory (a `cd` slip), and going ahead would uninstall the
//! application. So the commands that change the cluster, or plan a change, refuse it unless the user says
//! the rename is meant.
//!
//! The chart a HelmRelease deploys is, in this order:
//! - the chart its source serves when the HelmRelease names it: `spec.chart.spec.chart` of a
//!   HelmRepository (an OCI or HTTP repository serves charts by name);
//! - else the chart of the release helm-controller last made (the newest `status.history` entry);
//! - else it cannot be told without the artifact (a first install from a GitRepository, Bucket,
//!   OCIRepository or ExternalArtifact): nothing is refused, as nothing can be uninstalled either.

use crate::flux::HelmRelease;
use crate::source::chart::ChartDir;
use crate::support::error::{Error, Result};

/// What a command does with a chart directory that is not the HelmRelease's chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OtherChart {
    /// Refuse before anything changes (apply, delete, diff).
    #[default]
    Refuse,
    /// Say it in one line and go on (show and values only read).
    Warn,
    /// The user said the chart was renamed on purpose (`--other-chart`).
    Allow,
}

/// The chart a HelmRelease deploys, and how that is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deployed {
    pub name: String,
    /// Where the name was read, in words: "its HelmRepository apps/charts serves it", "its last release".
    pub known_from: String,
}

/// The chart `hr` deploys (see the module docs); None when it cannot be told.
pub fn deployed(hr: &HelmRelease) -> Option<Deployed> {
    if hr.spec.chart_ref.is_none()
        && let Some(template) = &hr.spec.chart
        && template.spec.source_ref.kind == "HelmRepository"
        && !template.spec.chart.is_empty()
    {
        let r = &template.spec.source_ref;
        let ns = r.namespace.as_deref().filter(|n| !n.is_empty()).unwrap_or_else(|| hr.namespace());
        return Some(Deployed {
            name: template.spec.chart.clone(),
            known_from: format!("spec.chart of HelmRepository {ns}/{}", r.name),
        });
    }
    let last = crate::desired::release_target::latest(hr).filter(|s| !s.chart_name.is_empty())?;
    Some(Deployed {
        name: last.chart_name.clone(),
        known_from: format!("its last release, {}@{}", last.chart_name, last.chart_version),
    })
}

/// Checks that `chart` is the chart `hr` deploys, as `policy` says: an error naming both charts under
/// [`OtherChart::Refuse`], a warning under [`OtherChart::Warn`].
pub fn check(hr: &HelmRelease, chart: &ChartDir, policy: OtherChart) -> Result<()> {
    if policy == OtherChart::Allow {
        return Ok(());
    }
    let Some(deployed) = deployed(hr).filter(|d| d.name != chart.meta.name) else {
        return Ok(());
    };
    let error = Error::OtherChart {
        dir: chart.path().display().to_string(),
        found: chart.meta.name.clone(),
        hr: format!("{}/{}", hr.namespace(), hr.name()),
        deployed: deployed.name,
        known_from: deployed.known_from,
    };
    match policy {
        OtherChart::Warn => {
            crate::support::output::progress::warning(error.to_string());
            Ok(())
        }
        _ => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hr(spec: serde_json::Value, history: serde_json::Value) -> HelmRelease {
        serde_json::from_value(json!({
            "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {"name": "mine", "namespace": "apps"},
            "spec": spec,
            "status": {"history": history},
        }))
        .expect("a HelmRelease")
    }

    fn snapshot(chart: &str, version: i64) -> serde_json::Value {
        json!({"name": "mine", "namespace": "apps", "version": version, "chartName": chart,
               "chartVersion": "0.1.0", "configDigest": "", "digest": "", "status": "deployed"})
    }

    #[test]
    fn a_helm_repository_names_the_chart_it_serves() {
        let spec =
            json!({"chart": {"spec": {"chart": "podinfo", "sourceRef": {"kind": "HelmRepository", "name": "charts"}}}});
        let d = deployed(&hr(spec, json!([snapshot("old-name", 1)]))).expect("known");
        assert_eq!(d.name, "podinfo", "the source, before the last release");
        assert_eq!(d.known_from, "spec.chart of HelmRepository apps/charts");
    }

    #[test]
    fn otherwise_the_last_release_names_it() {
        let spec = json!({"chartRef": {"kind": "ExternalArtifact", "name": "mine"}});
        let history = json!([snapshot("older", 1), snapshot("my-app", 2)]);
        let d = deployed(&hr(spec, history)).expect("known");
        assert_eq!((d.name.as_str(), d.known_from.as_str()), ("my-app", "its last release, my-app@0.1.0"));
        let git = json!({"chart": {"spec": {"chart": "./charts/mine", "sourceRef": {"kind": "GitRepository", "name": "repo"}}}});
        assert_eq!(deployed(&hr(git, json!([]))), None, "a chart path in a Git source names no chart");
    }

    #[test]
    fn the_refusal_names_both_charts_and_the_way_out() {
        let dir = tempfile::tempdir().expect("a directory");
        std::fs::write(dir.path().join("Chart.yaml"), "apiVersion: v2\nname: hello\nversion: 0.1.0\n").expect("write");
        let chart = ChartDir::open(dir.path()).expect("a chart");
        let spec = json!({"chartRef": {"kind": "ExternalArtifact", "name": "mine"}});
        let release = hr(spec, json!([snapshot("my-app", 1)]));
        let line = check(&release, &chart, OtherChart::Refuse).expect_err("refused").to_string();
        assert!(line.contains("holds chart \"hello\""), "{line}");
        assert!(
            line.contains("helmrelease apps/mine deploys chart \"my-app\" (its last release, my-app@0.1.0)"),
            "{line}"
        );
        assert!(line.contains("--other-chart"), "{line}");
        assert!(!line.contains('\n'), "one line: {line}");
        assert!(check(&release, &chart, OtherChart::Allow).is_ok());
        assert!(check(&release, &chart, OtherChart::Warn).is_ok());
    }
}
