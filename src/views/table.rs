//! The `get` table of any [`FluxObject`], like `flux get`: NAME REVISION SUSPENDED READY MESSAGE, with
//! NAMESPACE first across namespaces, and `-o wide` adding AGE and the kind's own columns.

use crate::flux::helmrelease::HelmRelease;
use crate::flux::object::FluxObject;
use crate::flux::source::FluxSource;
use crate::support::output::{self, Table};

/// What a kind adds to the table: its `-o wide` columns after the common ones, and their cells.
pub trait Tabled: FluxObject {
    fn wide_columns() -> &'static [&'static str] {
        &[]
    }
    fn wide_cells(&self) -> Vec<String> {
        Vec::new()
    }
}

impl Tabled for HelmRelease {
    fn wide_columns() -> &'static [&'static str] {
        &["CHART", "SOURCE", "TARGET"]
    }
    fn wide_cells(&self) -> Vec<String> {
        vec![self.chart_name(), self.source(), self.target_cluster().unwrap_or_else(|| "-".into())]
    }
}

impl Tabled for FluxSource {}

/// Which columns a table shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Columns {
    pub all_namespaces: bool,
    pub wide: bool,
}

impl Columns {
    pub fn header<K: Tabled>(self) -> Vec<&'static str> {
        let mut h = Vec::new();
        if self.all_namespaces {
            h.push("NAMESPACE");
        }
        h.extend(["NAME", "REVISION", "SUSPENDED", "READY"]);
        if self.wide {
            h.push("AGE");
            h.extend(K::wide_columns());
        }
        // MESSAGE stays last even in wide output: it is the long free-text column, and anything after it
        // would be pushed off the screen.
        h.push("MESSAGE");
        h
    }

    pub fn row<K: Tabled>(self, obj: &K, now: jiff::Timestamp) -> Vec<String> {
        let meta = obj.meta();
        let (ready, message) = obj.ready_summary();
        let mut r = Vec::new();
        if self.all_namespaces {
            r.push(meta.namespace.clone().unwrap_or_default());
        }
        r.push(meta.name.clone().unwrap_or_default());
        r.push(obj.revision());
        r.push(if obj.suspended() { "True" } else { "False" }.to_string());
        r.push(ready);
        if self.wide {
            r.push(
                meta.creation_timestamp.as_ref().map(|t| output::age(t.0, now)).unwrap_or_else(|| "<unknown>".into()),
            );
            r.extend(obj.wide_cells());
        }
        r.push(one_line(&message));
        r
    }

    pub fn table<'a, K: Tabled>(self, objs: impl IntoIterator<Item = &'a K>, now: jiff::Timestamp) -> Table {
        let mut t = Table::new(self.header::<K>());
        for obj in objs {
            t.row(self.row(obj, now));
        }
        t
    }
}

/// Messages from helm-controller can span lines (template errors); a table row must not.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flux::HelmRelease;

    fn fixture(json: &str) -> HelmRelease {
        serde_json::from_str(json).expect("fixture parses")
    }

    const READY: &str = r#"{
      "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
      "metadata": {"name": "podinfo", "namespace": "apps", "generation": 2,
                   "creationTimestamp": "2026-01-01T00:00:00Z"},
      "spec": {"interval": "1h", "chartRef": {"kind": "ExternalArtifact", "name": "podinfo"}},
      "status": {
        "observedGeneration": 2,
        "conditions": [{"type": "Ready", "status": "True", "reason": "UpgradeSucceeded",
                        "message": "Helm upgrade succeeded for release apps/podinfo.v2 with chart podinfo@6.5.0",
                        "lastTransitionTime": "2026-01-01T00:01:00Z"}],
        "history": [{"name": "podinfo", "namespace": "apps", "version": 2, "status": "deployed",
                     "chartName": "podinfo", "chartVersion": "6.5.0", "configDigest": "sha256:abc",
                     "digest": "sha256:def"}]
      }
    }"#;

    const NEW: &str = r#"{
      "metadata": {"name": "fresh", "namespace": "apps"},
      "spec": {"suspend": true, "chart": {"spec": {"chart": "redis", "version": "1.x",
               "sourceRef": {"kind": "HelmRepository", "name": "bitnami", "namespace": "flux-system"}}}},
      "status": {"lastAttemptedRevision": "1.2.3"}
    }"#;

    const FAILED: &str = r#"{
      "metadata": {"name": "broken", "namespace": "apps"},
      "spec": {},
      "status": {"conditions": [{"type": "Ready", "status": "False", "reason": "InstallFailed",
                 "message": "Helm install failed:\n  YAML parse error"}]}
    }"#;

    #[test]
    fn plain_rows_like_flux_get() {
        let now: jiff::Timestamp = "2026-01-01T01:00:00Z".parse().unwrap();
        let objs = [fixture(READY), fixture(NEW), fixture(FAILED)];
        let t = Columns::default().table(&objs, now);
        assert_eq!(
            t.render(),
            "NAME      REVISION   SUSPENDED   READY   MESSAGE\n\
             podinfo   6.5.0      False       True    Helm upgrade succeeded for release apps/podinfo.v2 with chart podinfo@6.5.0\n\
             fresh     1.2.3      True        False   waiting to be reconciled\n\
             broken               False       False   Helm install failed: YAML parse error\n"
        );
    }

    #[test]
    fn all_namespaces_and_wide() {
        let now: jiff::Timestamp = "2026-01-01T01:00:00Z".parse().unwrap();
        let cols = Columns { all_namespaces: true, wide: true };
        assert_eq!(
            cols.header::<HelmRelease>(),
            ["NAMESPACE", "NAME", "REVISION", "SUSPENDED", "READY", "AGE", "CHART", "SOURCE", "TARGET", "MESSAGE"]
        );
        let row = cols.row(&fixture(READY), now);
        assert_eq!(row[0], "apps");
        assert_eq!(row[5], "60m");
        assert_eq!(row[6], "podinfo");
        assert_eq!(row[7], "ExternalArtifact/apps/podinfo");
        let row = cols.row(&fixture(NEW), now);
        assert_eq!(row[5], "<unknown>");
        assert_eq!(row[6], "redis");
        assert_eq!(row[7], "HelmRepository/flux-system/bitnami (redis)");
    }
}
