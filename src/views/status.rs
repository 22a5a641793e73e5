//! The report `kubectl cozyhr status` prints: one screen about a HelmRelease — conditions, history, counters, suspension, dependsOn with
//! each dependency's readiness, the dependents and which of them wait on it, and recent Events. Gathering
//! talks to the cluster; rendering is pure.

use kube::Resource;

use crate::cluster::Cluster;
use crate::flux::condition::Condition;
use crate::flux::dependency::{self, Verdict};
use crate::flux::events::{self, EventLine};
use crate::flux::helmrelease::{DependencyReference, HelmRelease, HelmReleaseStatus};
use crate::flux::kind;
use crate::flux::object::FluxObject;
use crate::flux::verbs::Objects;
use crate::support::error::Result;
use crate::support::output::{self, Paint, Table, Tone};
use crate::views::tree::{Dependent, Listing, Ref, dependency_verdict};

/// How many history entries and events the screen shows.
pub const HISTORY_LIMIT: usize = 5;
pub const EVENTS_LIMIT: usize = 10;

/// A dependency as helm-controller sees it right now.
#[derive(Clone, Debug, PartialEq)]
pub struct Dependency {
    /// What the entry names: a HelmRelease, or (Flux 2.10) an object of another kind.
    pub target: Ref,
    /// Whether it lets the release proceed; None when it cannot be followed (`message` says why).
    pub ready: Option<bool>,
    pub message: String,
    /// `readyExpr` is set (and evaluated): that CEL expression decides instead of the built-in rule.
    pub ready_expr: Option<String>,
}

/// Reads every dependency (uncached, like helm-controller) and judges it. An object of another kind that
/// cannot be followed says why in its row; it never fails the screen.
pub async fn dependencies(cluster: &Cluster, hr: &HelmRelease) -> Result<Vec<Dependency>> {
    let objects = dependency::read_all(cluster, hr.spec.depends_on.iter().map(|d| Ref::target(hr, d))).await;
    let mut out = Vec::new();
    for dep in &hr.spec.depends_on {
        let target = Ref::target(hr, dep);
        let (ready, message) = if target.is_release() {
            release_verdict(cluster, hr, dep, &target).await?
        } else {
            match dependency::verdict(hr, dep, &target, objects.get(&target)) {
                Verdict::Ready(why) => (Some(true), why),
                Verdict::NotReady(why) => (Some(false), why),
                Verdict::Missing if target.namespace.is_empty() => (Some(false), format!("{target} not found")),
                Verdict::Missing => {
                    (Some(false), format!("{} not found in namespace {:?}", target.local_name(), target.namespace))
                }
                Verdict::Unfollowed(why) => (None, why),
            }
        };
        // With `ready: false` the expression is not evaluated: only existence counts.
        let ready_expr = dep.ready_expr().filter(|_| !dep.existence_only()).map(str::to_string);
        out.push(Dependency { target, ready, message, ready_expr });
    }
    Ok(out)
}

/// A HelmRelease dependency, read and judged by helm-controller's rule.
async fn release_verdict(
    cluster: &Cluster,
    hr: &HelmRelease,
    dep: &DependencyReference,
    target: &Ref,
) -> Result<(Option<bool>, String)> {
    let objects = Objects::<HelmRelease>::namespaced(cluster, &target.namespace);
    Ok(match objects.get_opt(&target.name).await? {
        None => (Some(false), format!("helmrelease not found in namespace {:?}", target.namespace)),
        Some(obj) => match dependency_verdict(hr, dep, &obj) {
            Ok(m) => (Some(true), m),
            Err(m) => (Some(false), m),
        },
    })
}

/// Everything the status screen shows.
pub struct Report {
    pub hr: HelmRelease,
    pub dependencies: Vec<Dependency>,
    /// The releases that depend on this one ([`crate::views::tree::Graph::dependents_of`]).
    pub dependents: Vec<Dependent>,
    /// Said under the dependents when they could not all be seen (only one namespace could be listed).
    pub dependents_note: Option<String>,
    pub events: Vec<EventLine>,
    /// The cluster the HelmRelease lives in (its API server).
    pub home_server: String,
    /// Where the release itself is, when `spec.kubeConfig` names another cluster: reached, or why not.
    pub target: Option<std::result::Result<crate::desired::target::Target, String>>,
    /// The helm-controller that reconciles it, whose rules helm cozy follows.
    pub controller: crate::controller::Controller,
}

impl Report {
    pub async fn gather(cluster: &Cluster, hr: HelmRelease) -> Result<Report> {
        let dependencies = dependencies(cluster, &hr).await?;
        // Nothing names its dependents: finding them takes a LIST, across namespaces where allowed. A
        // release one may read but not list still gets the rest of its screen.
        let (dependents, dependents_note) = match Listing::fetch(cluster).await {
            Ok(listing) => (listing.graph().dependents_of(&Ref::of(&hr)), listing.note()),
            Err(e) => (Vec::new(), Some(format!("dependents unknown: {e}"))),
        };
        let (events, controller) = tokio::join!(
            events::for_object(cluster, kind::HELM_RELEASE.kind, hr.namespace(), hr.name(), EVENTS_LIMIT),
            crate::controller::detect(cluster),
        );
        let events = events?;
        // Reaching the release's own cluster is part of the answer, not a reason to fail the screen.
        let target = match (&hr.spec.kube_config, &hr.spec.service_account_name) {
            (None, None) => None,
            _ => Some(crate::desired::target::resolve_quietly(cluster, &hr).await.map_err(|e| e.to_string())),
        };
        Ok(Report {
            hr,
            dependencies,
            dependents,
            dependents_note,
            events,
            home_server: cluster.server.clone(),
            target,
            controller,
        })
    }

    /// The screen, top to bottom: the fields about the release, where and as whom it is installed and
    /// how far its reconciling has come, then one section per table.
    pub fn render(&self, paint: Paint, now: jiff::Timestamp) -> String {
        let status = self.hr.status.clone().unwrap_or_default();
        let mut out = String::new();
        self.release_fields(&mut out, paint);
        self.target_fields(&mut out, paint);
        progress_fields(&mut out, &self.hr, &status);
        let conditions = conditions_table(&status.reconcile.conditions, now).render_styled(paint, tone_of("STATUS"));
        section(&mut out, "Conditions", None, Some(conditions));
        section(&mut out, "History", None, history_table(&status, paint, now));
        section(&mut out, "Depends on", None, self.dependencies_table(paint));
        section(&mut out, "Dependents", self.dependents_note.as_deref(), self.dependents_table(paint));
        section(&mut out, "Events", None, self.events_table(paint, now));
        out
    }

    /// Which release this is and who acts on it: its name, whether Flux leaves it alone (suspended, said
    /// as a warning because nothing happens to it until it is resumed), its readiness, its source, the
    /// Helm release it makes, the cluster the HelmRelease lives in and the helm-controller reconciling it.
    fn release_fields(&self, out: &mut String, paint: Paint) {
        let hr = &self.hr;
        field(out, "Name", hr.name().to_string());
        field(out, "Namespace", hr.namespace().to_string());
        field(
            out,
            "Suspended",
            if hr.spec.suspend {
                paint.tone("True (Flux does not act on this release until it is resumed)", Tone::Warn)
            } else {
                "False".into()
            },
        );
        let (ready, message) = hr.ready_summary();
        field(out, "Ready", format!("{} {}", paint.tone(&ready, output::status_tone(&ready)), message));
        field(out, "Source", hr.source());
        field(
            out,
            "Release",
            format!("{}/{} (storage namespace {})", hr.release_namespace(), hr.release_name(), hr.storage_namespace()),
        );
        field(out, "Lives in", format!("{} (the HelmRelease)", self.home_server));
        field(
            out,
            "Reconciled by",
            format!("helm-controller {} with Helm {}", self.controller.describe(), self.controller.helm_sdk()),
        );
    }

    /// `Installs into` only when `spec.kubeConfig` names another cluster, `Acts as` only when
    /// `spec.serviceAccountName` is set: a release in its own cluster with helm-controller's rights needs
    /// neither line.
    fn target_fields(&self, out: &mut String, paint: Paint) {
        if let Some(kind) = self.hr.target_cluster() {
            field(out, "Installs into", self.installs_into(kind, paint));
        }
        if let Some(sa) = self.hr.spec.service_account_name.as_deref().filter(|s| !s.is_empty()) {
            field(out, "Acts as", self.acts_as(sa));
        }
    }

    /// The other cluster (`kind` names the kubeconfig's source) and whether it was reached: a cluster that
    /// cannot be reached is said here, in its row, instead of failing the screen.
    fn installs_into(&self, kind: String, paint: Paint) -> String {
        match &self.target {
            Some(Ok(t)) => match &t.place {
                crate::desired::target::Place::Remote { server, via_flag, .. } => format!(
                    "{server} ({kind}{}): {}",
                    via_flag.as_ref().map(|v| format!(", {v}")).unwrap_or_default(),
                    paint.tone("reached", Tone::Good)
                ),
                crate::desired::target::Place::Home => kind,
            },
            Some(Err(e)) => format!("{kind}: {}", paint.tone(&format!("not reached: {e}"), Tone::Bad)),
            None => kind,
        }
    }

    /// The service account `sa` helm-controller impersonates, and whether helm cozy does too: when the
    /// user may not impersonate it, helm cozy's view is the user's own rights, which the reader must know.
    fn acts_as(&self, sa: &str) -> String {
        let account = crate::desired::target::service_account_user(self.hr.namespace(), sa);
        let how = match &self.target {
            Some(Ok(t)) => match &t.identity {
                crate::desired::target::Identity::ServiceAccount(_) => {
                    format!("{} impersonates it too", crate::support::output::chart_command())
                }
                _ => format!(
                    "you may not impersonate it: {} would use your own rights",
                    crate::support::output::chart_command()
                ),
            },
            _ => "helm-controller impersonates it".to_string(),
        };
        format!("{account} (spec.serviceAccountName; {how})")
    }

    /// The dependencies' table, or None when there are none. A `readyExpr` is named after the message
    /// unless the message already quotes it, so the rule that decided is always on the row.
    fn dependencies_table(&self, paint: Paint) -> Option<String> {
        if self.dependencies.is_empty() {
            return None;
        }
        let mut t = Table::new(["NAMESPACE", "NAME", "READY", "MESSAGE"]);
        for d in &self.dependencies {
            let mut message = d.message.clone();
            if let Some(expr) = &d.ready_expr
                && !message.contains(expr.as_str())
            {
                message.push_str(&format!(" (readyExpr {expr:?})"));
            }
            t.row([d.target.namespace.clone(), d.target.local_name(), ready_cell(d.ready).into(), message]);
        }
        Some(t.render_styled(paint, tone_of("READY")))
    }

    /// The dependents' table, or None when there are none. Suspended and waiting dependents are warned
    /// about: they are the ones this release holds back.
    fn dependents_table(&self, paint: Paint) -> Option<String> {
        if self.dependents.is_empty() {
            return None;
        }
        let mut t = Table::new(["NAMESPACE", "NAME", "READY", "SUSPENDED", "WAITING ON THIS", "MESSAGE"]);
        for d in &self.dependents {
            let flag = |b: bool| if b { "True" } else { "False" }.to_string();
            t.row([
                d.namespace.clone(),
                d.name.clone(),
                d.ready.clone(),
                flag(d.suspended),
                flag(d.waiting),
                one_line(&d.message),
            ]);
        }
        Some(t.render_styled(paint, |h, c| match h {
            "READY" => output::status_tone(c),
            "SUSPENDED" | "WAITING ON THIS" if c == "True" => Tone::Warn,
            _ => Tone::Plain,
        }))
    }

    /// The recent Events' table, or None when there are none. A repeated Event says how often it was
    /// seen, since Kubernetes folds repeats into one.
    fn events_table(&self, paint: Paint, now: jiff::Timestamp) -> Option<String> {
        if self.events.is_empty() {
            return None;
        }
        let mut t = Table::new(["TYPE", "REASON", "AGE", "FROM", "MESSAGE"]);
        for e in &self.events {
            let age = e.last_seen.map(|t| output::age(t, now)).unwrap_or_else(|| "<unknown>".into());
            let age = if e.count > 1 { format!("{age} (x{})", e.count) } else { age };
            t.row([e.type_.clone(), e.reason.clone(), age, e.from.clone(), one_line(&e.message)]);
        }
        Some(t.render_styled(paint, tone_of("TYPE")))
    }
}

/// One `Key:  value` line, the keys padded to one column so the values line up.
fn field(out: &mut String, key: &str, value: String) {
    out.push_str(&format!("{:<15}{value}\n", format!("{key}:")));
}

/// How far reconciling has come: the generations seen and attempted, the last attempt, the failure
/// counters, and whether the last `reconcile.fluxcd.io/requestedAt` was handled (only when one was made).
fn progress_fields(out: &mut String, hr: &HelmRelease, status: &HelmReleaseStatus) {
    field(
        out,
        "Generation",
        format!(
            "{} (observed {}, last attempted {})",
            hr.meta().generation.unwrap_or_default(),
            status.reconcile.observed_generation.map_or("-".into(), |g| g.to_string()),
            status.last_attempted_generation.map_or("-".into(), |g| g.to_string()),
        ),
    );
    if let Some(rev) = &status.last_attempted_revision {
        let action = status.last_attempted_release_action.as_deref().unwrap_or("-");
        field(out, "Last attempt", format!("revision {rev}, action {action}"));
    }
    field(
        out,
        "Failures",
        format!(
            "{} (install {}, upgrade {})",
            status.failures.unwrap_or(0),
            status.install_failures.unwrap_or(0),
            status.upgrade_failures.unwrap_or(0)
        ),
    );
    let annotations = hr.meta().annotations.clone().unwrap_or_default();
    if let Some(requested) = annotations.get(crate::flux::verbs::REQUESTED_AT) {
        let handled = status.reconcile.last_handled_reconcile_at.as_deref() == Some(requested.as_str());
        field(out, "Last request", format!("{requested} ({})", if handled { "handled" } else { "not handled yet" }));
    }
}

/// A section of the screen: a blank line and its title, a note when it has one, then its table indented,
/// or `<none>` for a table without rows (an empty table would print only its header).
fn section(out: &mut String, title: &str, note: Option<&str>, table: Option<String>) {
    out.push_str(&format!("\n{title}:\n"));
    if let Some(note) = note {
        out.push_str(&format!("  ({note})\n"));
    }
    match table {
        Some(table) => out.push_str(&indent(&table)),
        None => out.push_str("  <none>\n"),
    }
}

/// Colours column `column` by status (True, False, Warning…) and leaves the others plain: one column per
/// table carries the verdict the eye looks for.
fn tone_of(column: &'static str) -> impl Fn(&str, &str) -> Tone {
    move |h, c| if h == column { output::status_tone(c) } else { Tone::Plain }
}

/// The newest `HISTORY_LIMIT` entries of `status.history`, or None when there are none. Digests are
/// shortened to fit one screen.
fn history_table(status: &HelmReleaseStatus, paint: Paint, now: jiff::Timestamp) -> Option<String> {
    if status.history.is_empty() {
        return None;
    }
    let mut t = Table::new(["REVISION", "CHART", "STATUS", "ACTION", "DEPLOYED", "CONFIG DIGEST"]);
    for s in status.history.iter().take(HISTORY_LIMIT) {
        let deployed = s.last_deployed.as_deref().map(|d| timestamp_with_age(d, now)).unwrap_or_default();
        t.row([
            s.version.to_string(),
            format!("{}@{}", s.chart_name, s.chart_version),
            s.status.clone(),
            s.action.clone().unwrap_or_default(),
            deployed,
            short_digest(&s.config_digest),
        ]);
    }
    Some(t.render_styled(paint, tone_of("STATUS")))
}

/// A dependency's READY: Unknown for one that cannot be followed.
fn ready_cell(ready: Option<bool>) -> &'static str {
    match ready {
        Some(true) => "True",
        Some(false) => "False",
        None => "Unknown",
    }
}

fn conditions_table(conditions: &[Condition], now: jiff::Timestamp) -> Table {
    let mut t = Table::new(["TYPE", "STATUS", "REASON", "AGE", "MESSAGE"]);
    if conditions.is_empty() {
        t.row(["<none>"]);
    }
    for c in conditions {
        let age = c.last_transition_time.parse::<jiff::Timestamp>().map(|t| output::age(t, now)).unwrap_or_default();
        t.row([c.type_.clone(), c.status.clone(), c.reason.clone(), age, one_line(&c.message)]);
    }
    t
}

fn timestamp_with_age(ts: &str, now: jiff::Timestamp) -> String {
    match ts.parse::<jiff::Timestamp>() {
        Ok(t) => format!("{ts} ({} ago)", output::age(t, now)),
        Err(_) => ts.to_string(),
    }
}

/// `sha256:` and the first 12 hex digits: enough to compare by eye, short enough for one screen.
fn short_digest(d: &str) -> String {
    match d.split_once(':') {
        Some((algo, hex)) if hex.len() > 12 => format!("{algo}:{}", &hex[..12]),
        _ => d.to_string(),
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn indent(s: &str) -> String {
    s.lines().map(|l| format!("  {l}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hr(json: serde_json::Value) -> HelmRelease {
        serde_json::from_value(json).expect("fixture parses")
    }

    #[test]
    fn dependency_namespace_defaults_to_the_dependent() {
        let h = hr(serde_json::json!({
            "metadata": {"name": "app", "namespace": "apps"},
            "spec": {"dependsOn": [{"name": "db"}, {"name": "cni", "namespace": "kube-system"}]}
        }));
        assert_eq!(h.dependency_namespace(&h.spec.depends_on[0]), "apps");
        assert_eq!(h.dependency_namespace(&h.spec.depends_on[1]), "kube-system");
    }

    #[test]
    fn renders_one_screen() {
        let h = hr(serde_json::json!({
            "metadata": {"name": "app", "namespace": "apps", "generation": 3,
                         "annotations": {"reconcile.fluxcd.io/requestedAt": "t1"}},
            "spec": {"chartRef": {"kind": "ExternalArtifact", "name": "app"}, "suspend": true},
            "status": {
                "observedGeneration": 3, "lastHandledReconcileAt": "t1", "failures": 2, "installFailures": 1,
                "conditions": [{"type": "Ready", "status": "False", "reason": "InstallFailed",
                                "message": "boom", "lastTransitionTime": "2026-01-01T00:00:00Z"}],
                "history": [{"version": 1, "chartName": "app", "chartVersion": "0.1.0", "status": "failed",
                             "action": "install", "lastDeployed": "2026-01-01T00:00:00Z",
                             "configDigest": "sha256:0123456789abcdef0123"}]
            }
        }));
        let report = Report {
            hr: h,
            dependencies: vec![Dependency {
                target: Ref::new("apps", "db"),
                ready: Some(false),
                message: "Ready=False: nope".into(),
                ready_expr: None,
            }],
            dependents: vec![Dependent {
                namespace: "web".into(),
                name: "front".into(),
                ready: "False".into(),
                suspended: false,
                waiting: true,
                message: "DependencyNotReady: dependency 'apps/app' is not ready".into(),
            }],
            dependents_note: None,
            events: vec![EventLine {
                type_: "Warning".into(),
                reason: "InstallFailed".into(),
                last_seen: "2026-01-01T00:00:00Z".parse().ok(),
                count: 2,
                from: "helm-controller".into(),
                message: "Helm install failed".into(),
            }],
            home_server: "https://mgmt:6443/".into(),
            target: None,
            controller: crate::controller::Controller::offline(),
        };
        let now: jiff::Timestamp = "2026-01-01T00:05:00Z".parse().unwrap();
        let out = report.render(Paint(false), now);
        assert!(out.contains("Suspended:     True"), "{out}");
        assert!(out.contains("Failures:      2 (install 1, upgrade 0)"), "{out}");
        assert!(out.contains("Last request:  t1 (handled)"), "{out}");
        assert!(out.contains("  Ready   False    InstallFailed   5m    boom"), "{out}");
        assert!(out.contains("1          app@0.1.0   failed   install"), "{out}");
        assert!(out.contains("sha256:0123456789ab\n"), "{out}");
        assert!(out.contains("apps        db     False   Ready=False: nope"), "{out}");
        assert!(
            out.contains(
                "web         front   False   False       True              DependencyNotReady: dependency 'apps/app' is not ready"
            ),
            "{out}"
        );
        assert!(out.contains("Warning   InstallFailed   5m (x2)   helm-controller   Helm install failed"), "{out}");
    }

    #[test]
    fn lists_objects_of_other_kinds_among_the_dependencies() {
        let h = hr(serde_json::json!({"metadata": {"name": "app", "namespace": "apps"}}));
        let object = |api_version: &str, kind: &str, ns: &str, name: &str| Ref {
            api_version: Some(api_version.into()),
            kind: Some(kind.into()),
            ..Ref::new(ns, name)
        };
        let report = Report {
            hr: h,
            dependencies: vec![
                Dependency {
                    target: object("v1", "ConfigMap", "apps", "settings"),
                    ready: Some(true),
                    message: "exists (ready: false: only its existence is checked)".into(),
                    ready_expr: None,
                },
                Dependency {
                    target: object("cert-manager.io/v1", "Certificate", "apps", "web-tls"),
                    ready: Some(false),
                    message: "readyExpr is false".into(),
                    ready_expr: Some("dep.status.ok".into()),
                },
                Dependency {
                    target: object("example.com/v1", "Widget", "", "w"),
                    ready: None,
                    message: "cannot be followed: the cluster does not serve example.com/v1 Widget".into(),
                    ready_expr: None,
                },
            ],
            dependents: vec![],
            dependents_note: None,
            events: vec![],
            home_server: "https://mgmt:6443/".into(),
            target: None,
            controller: crate::controller::Controller::offline(),
        };
        let out = report.render(Paint(false), jiff::Timestamp::UNIX_EPOCH);
        let section: Vec<&str> =
            out.lines().skip_while(|l| *l != "Depends on:").skip(1).take_while(|l| !l.is_empty()).collect();
        assert_eq!(
            section,
            [
                "  NAMESPACE   NAME                                     READY     MESSAGE",
                "  apps        ConfigMap/settings                       True      exists (ready: false: only its existence is checked)",
                "  apps        cert-manager.io/v1 Certificate/web-tls   False     readyExpr is false (readyExpr \"dep.status.ok\")",
                "              example.com/v1 Widget/w                  Unknown   cannot be followed: the cluster does not serve example.com/v1 Widget",
            ],
            "{out}"
        );
    }

    #[test]
    fn names_the_release_helm_controller_makes() {
        let h = hr(serde_json::json!({
            "metadata": {"name": "app", "namespace": "apps"},
            "spec": {"chartRef": {"kind": "ExternalArtifact", "name": "app"}, "targetNamespace": "prod"}
        }));
        let report = Report {
            hr: h,
            dependencies: vec![],
            dependents: vec![],
            dependents_note: Some("only namespace apps was read".into()),
            events: vec![],
            home_server: "https://mgmt:6443/".into(),
            target: None,
            controller: crate::controller::Controller::offline(),
        };
        let out = report.render(Paint(false), jiff::Timestamp::UNIX_EPOCH);
        assert!(out.contains("prod/prod-app (storage namespace apps)"), "{out}");
        assert!(out.contains("Lives in:      https://mgmt:6443/ (the HelmRelease)"), "{out}");
        assert!(!out.contains("Installs into:"), "{out}");
        assert!(out.contains("Dependents:\n  (only namespace apps was read)\n  <none>\n"), "{out}");
    }

    #[test]
    fn says_where_a_release_of_another_cluster_is_and_whether_it_was_reached() {
        let h = hr(serde_json::json!({
            "metadata": {"name": "cilium", "namespace": "tenant-a"},
            "spec": {"chartRef": {"kind": "ExternalArtifact", "name": "cilium"},
                     "kubeConfig": {"secretRef": {"name": "admin-kubeconfig"}},
                     "serviceAccountName": "deployer"}
        }));
        let report = Report {
            hr: h,
            dependencies: vec![],
            dependents: vec![],
            dependents_note: None,
            events: vec![],
            home_server: "https://mgmt:6443/".into(),
            target: Some(Err("cannot reach https://k8s.tenant-a.svc:6443/".into())),
            controller: crate::controller::Controller::offline(),
        };
        let out = report.render(Paint(false), jiff::Timestamp::UNIX_EPOCH);
        assert!(
            out.contains(
                "Installs into: secret/admin-kubeconfig: not reached: cannot reach https://k8s.tenant-a.svc:6443/"
            ),
            "{out}"
        );
        assert!(
            out.contains("Acts as:       system:serviceaccount:tenant-a:deployer (spec.serviceAccountName; helm-controller impersonates it)"),
            "{out}"
        );
    }
}
