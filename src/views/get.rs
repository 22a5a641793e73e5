//! What `get` prints, as kubectl prints it: the table of [`crate::views::table`] (colouring READY and
//! SUSPENDED), or the objects themselves (`-o yaml|json`, several of them as a `v1` `List`; `-o name`);
//! and for `-w`, what each event of a watch adds to that.

use std::collections::HashMap;

use kube::runtime::watcher::Event;
use serde_json::Value;

use crate::flux::condition::StatusSelector;
use crate::flux::kind::Kind;
use crate::flux::object::FluxObject;
use crate::flux::verbs::Objects;
use crate::support::error::{Error, Result};
use crate::support::output::{self, Paint, Tone};
use crate::views::table::{Columns, Tabled};

/// How `get` prints objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Table,
    /// The table with AGE and the kind's own columns.
    Wide,
    Yaml,
    Json,
    /// `kind.group/name`, one a line.
    Name,
}

/// The objects `get` shows: the named ones, or all those in scope that `selector` matches. A missing name
/// is not a failure of the whole: like kubectl, the caller prints what exists, then each missing one.
pub async fn fetch<K: FluxObject>(
    objects: &Objects<K>,
    names: &[String],
    selector: Option<&str>,
) -> Result<(Vec<K>, Vec<Error>)> {
    if names.is_empty() {
        return Ok((objects.list(selector).await?, Vec::new()));
    }
    let (mut found, mut missing) = (Vec::new(), Vec::new());
    for name in names {
        match objects.get(name).await {
            Ok(obj) => found.push(obj),
            Err(e @ Error::NotFound { .. }) => missing.push(e),
            Err(e) => return Err(e),
        }
    }
    Ok((found, missing))
}

/// What `get` (`list`, `ls`) is asked for.
pub struct Query<'a> {
    /// Names, or every HelmRelease in scope when empty.
    pub names: &'a [String],
    pub all_namespaces: bool,
    pub selector: Option<&'a str>,
    pub status_selector: Option<&'a StatusSelector>,
    pub format: Format,
    /// After listing, a row for every change until interrupted.
    pub watch: bool,
}

/// `get`: the HelmReleases `query` asks for, printed to stdout in its format (followed with `watch`).
/// Like kubectl, what exists is printed, then a line for each missing name: false when any was missing.
pub async fn print(cluster: &crate::cluster::Cluster, query: &Query<'_>) -> Result<bool> {
    use crate::flux::HelmRelease;
    let all = query.all_namespaces;
    if all && !query.names.is_empty() {
        return Err(Error::Failed(
            "a HelmRelease cannot be retrieved by name across all namespaces: drop -A or the names".into(),
        ));
    }
    if query.selector.is_some() && !query.names.is_empty() {
        return Err(Error::Failed("names cannot be combined with a label selector (-l)".into()));
    }
    let objects =
        if all { Objects::<HelmRelease>::all(cluster) } else { Objects::namespaced(cluster, &cluster.namespace) };
    let view = View::new(query.format, all, objects.kind(), Paint::stdout());
    let scope = if all { "" } else { &cluster.namespace };
    if query.watch {
        let watch_view = Watch::new(view, query.names, scope).with_status_selector(query.status_selector.cloned());
        watch_view.follow(&objects, query.selector).await?;
        return Ok(true);
    }
    let (mut items, missing) = fetch(&objects, query.names, query.selector).await?;
    if let Some(status) = query.status_selector {
        items.retain(|hr| status.matches(hr.conditions()));
    }
    if items.is_empty() && missing.is_empty() {
        crate::support::output::stderr_line(no_resources(scope));
        return Ok(true);
    }
    if !items.is_empty() {
        let single = query.names.len() == 1;
        crate::support::output::write_stdout(view.render(&items, single, jiff::Timestamp::now())?)?;
    }
    for e in &missing {
        crate::support::output::stderr_line(format_args!("error: {e}"));
    }
    Ok(missing.is_empty())
}

/// kubectl's wording for an empty result (on stderr, exit 0); `namespace` is empty across all of them.
pub fn no_resources(namespace: &str) -> String {
    if namespace.is_empty() {
        "No resources found".into()
    } else {
        format!("No resources found in {namespace} namespace.")
    }
}

/// How `get` shows objects of one kind.
#[derive(Clone, Copy, Debug)]
pub struct View {
    format: Format,
    columns: Columns,
    kind: &'static Kind,
    paint: Paint,
}

impl View {
    pub fn new(format: Format, all_namespaces: bool, kind: &'static Kind, paint: Paint) -> View {
        View { format, columns: Columns { all_namespaces, wide: format == Format::Wide }, kind, paint }
    }

    fn is_table(&self) -> bool {
        matches!(self.format, Format::Table | Format::Wide)
    }

    /// `items` as one output. `single` (one object asked for by name) prints a document as itself rather
    /// than as a List, as kubectl does.
    pub fn render<K: Tabled>(&self, items: &[K], single: bool, now: jiff::Timestamp) -> Result<String> {
        match self.format {
            Format::Table | Format::Wide => Ok(self.columns.table(items, now).render_styled(self.paint, tone)),
            Format::Name => Ok(items.iter().map(|obj| format!("{}\n", self.name_of(obj))).collect()),
            Format::Yaml | Format::Json => {
                let mut values = items.iter().map(|obj| self.object_value(obj)).collect::<Result<Vec<_>>>()?;
                let value = match (single, values.len()) {
                    (true, 1) => values.remove(0),
                    _ => output::list_object(values),
                };
                encode(self.format, &value)
            }
        }
    }

    /// One object as a watch prints it: a table row padded to `widths`, or a document.
    fn render_one<K: Tabled>(&self, obj: &K, widths: &[usize], now: jiff::Timestamp) -> Result<String> {
        match self.format {
            Format::Table | Format::Wide => {
                let row = self.columns.row(obj, now);
                let header = self.columns.header::<K>();
                let line = output::format_row(&row, widths, |c, cell| self.paint.tone(cell, tone(header[c], cell)));
                Ok(format!("{line}\n"))
            }
            Format::Name => Ok(format!("{}\n", self.name_of(obj))),
            Format::Yaml => Ok(format!("---\n{}", encode(Format::Yaml, &self.object_value(obj)?)?)),
            Format::Json => encode(Format::Json, &self.object_value(obj)?),
        }
    }

    fn name_of<K: FluxObject>(&self, obj: &K) -> String {
        self.kind.resource_name(obj.meta().name.as_deref().unwrap_or_default())
    }

    /// The object as kubectl prints it: without `metadata.managedFields` (kubectl hides them by default).
    fn object_value<K: FluxObject>(&self, obj: &K) -> Result<Value> {
        let mut v =
            serde_json::to_value(obj).map_err(|e| Error::Failed(format!("encoding a {}: {e}", self.kind.kind)))?;
        if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("managedFields");
        }
        Ok(v)
    }
}

fn tone(header: &str, cell: &str) -> Tone {
    match header {
        "READY" => output::status_tone(cell),
        "SUSPENDED" if cell == "True" => Tone::Warn,
        _ => Tone::Plain,
    }
}

/// A value as `-o yaml` or `-o json` prints it (JSON indented like kubectl's).
pub fn encode(format: Format, value: &Value) -> Result<String> {
    if format == Format::Yaml {
        return output::to_yaml(value).map_err(|e| Error::Failed(format!("encoding YAML: {e}")));
    }
    // kubectl indents JSON by four spaces.
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    serde::Serialize::serialize(value, &mut serde_json::Serializer::with_formatter(&mut buf, fmt))
        .map_err(|e| Error::Failed(format!("encoding JSON: {e}")))?;
    let mut s = String::from_utf8(buf).map_err(|e| Error::Failed(format!("encoding JSON: {e}")))?;
    s.push('\n');
    Ok(s)
}

/// One piece of a watch's output, in order.
#[derive(Debug, PartialEq, Eq)]
pub enum Print {
    Stdout(String),
    /// A line on stderr.
    Stderr(String),
    /// A warning, printed as a progress line.
    Warning(String),
}

/// `get -w`: the current objects first (the table with its header, or nothing but the objects for the
/// other formats), then one row or document per change. A row is printed only when what it shows
/// changed, so status heartbeats do not repeat identical lines.
pub struct Watch<K> {
    view: View,
    /// Only these objects (all when empty).
    names: Vec<String>,
    /// Only objects whose conditions match (`--status-selector`).
    status: Option<StatusSelector>,
    /// The namespace watched, empty across all of them: for the empty result.
    namespace: String,
    /// The objects of a listing until it completes.
    batch: Vec<K>,
    /// What each object's row said last (unpadded), by namespace and name.
    shown: HashMap<(String, String), String>,
    /// The table's column widths, once the first listing has completed.
    widths: Option<Vec<usize>>,
}

impl<K: Tabled> Watch<K> {
    pub fn new(view: View, names: &[String], namespace: &str) -> Self {
        Watch {
            view,
            names: names.to_vec(),
            status: None,
            namespace: namespace.to_string(),
            batch: Vec::new(),
            shown: HashMap::new(),
            widths: None,
        }
    }

    /// Only objects that `status` selects (`--status-selector`). One that stops matching is printed
    /// once more, so that its last row does not stand for a state it has left; then no more.
    pub fn with_status_selector(mut self, status: Option<StatusSelector>) -> Self {
        self.status = status;
        self
    }

    fn selected(&self, obj: &K) -> bool {
        self.status.as_ref().is_none_or(|s| s.matches(obj.conditions()))
    }

    /// `-w`: prints what each event of the watch of `objects` (matching `selector`) adds, until Ctrl-C or
    /// the watch's end.
    pub async fn follow(mut self, objects: &Objects<K>, selector: Option<&str>) -> Result<()> {
        use futures::StreamExt;
        let mut stream = std::pin::pin!(objects.watch(selector));
        let mut ctrl_c = std::pin::pin!(tokio::signal::ctrl_c());
        loop {
            let event = tokio::select! {
                _ = &mut ctrl_c => return Ok(()),
                event = stream.next() => event,
            };
            let Some(event) = event else { return Ok(()) };
            for print in self.event(event, jiff::Timestamp::now())? {
                match print {
                    Print::Stdout(text) => output::write_stdout(text)?,
                    Print::Stderr(line) => output::stderr_line(line),
                    Print::Warning(warning) => output::progress::warning(warning),
                }
            }
        }
    }

    /// What to print for one event of the watch, at `now`; an error that ends the watch is returned.
    pub fn event(&mut self, event: Result<Event<K>>, now: jiff::Timestamp) -> Result<Vec<Print>> {
        let mut out = Vec::new();
        let changed = match event {
            // Before the first listing completes an error is fatal (no CRD, forbidden, unreachable);
            // afterwards the watcher re-lists with backoff, so a blip is only reported.
            Err(e) if self.widths.is_none() => return Err(e),
            Err(e) => return Ok(vec![Print::Warning(format!("watch interrupted, retrying: {e}"))]),
            Ok(Event::Init) => {
                self.batch.clear();
                return Ok(out);
            }
            Ok(Event::InitApply(obj)) => {
                if wanted(&self.names, &obj) && self.selected(&obj) {
                    self.batch.push(obj);
                }
                return Ok(out);
            }
            Ok(Event::InitDone) if self.widths.is_none() => {
                self.batch.sort_by_key(key);
                let table = self.view.columns.table(&self.batch, now);
                if self.batch.is_empty() {
                    out.push(Print::Stderr(no_resources(&self.namespace)));
                } else if self.view.is_table() {
                    out.push(Print::Stdout(table.render_styled(self.view.paint, tone)));
                }
                self.widths = Some(table.widths());
                if self.view.is_table() {
                    for obj in &self.batch {
                        self.shown.insert(key(obj), self.view.render_one(obj, &[], now)?);
                    }
                    return Ok(out);
                }
                std::mem::take(&mut self.batch)
            }
            Ok(Event::InitDone) => std::mem::take(&mut self.batch),
            Ok(Event::Apply(obj)) => vec![obj],
            Ok(Event::Delete(obj)) => {
                let was_shown = self.shown.remove(&key(&obj)).is_some();
                if wanted(&self.names, &obj) && (was_shown || self.selected(&obj)) {
                    out.push(Print::Stdout(self.view.render_one(&obj, self.widths(), now)?));
                }
                return Ok(out);
            }
        };
        for obj in changed.iter().filter(|obj| wanted(&self.names, *obj)) {
            if !self.selected(obj) {
                if self.shown.remove(&key(obj)).is_some() {
                    out.push(Print::Stdout(self.view.render_one(obj, self.widths(), now)?));
                }
                continue;
            }
            // Compared on the unpadded rendering: widths do not change what a row says.
            let fingerprint = self.view.render_one(obj, &[], now)?;
            if self.shown.get(&key(obj)) == Some(&fingerprint) {
                continue;
            }
            self.shown.insert(key(obj), fingerprint);
            out.push(Print::Stdout(self.view.render_one(obj, self.widths(), now)?));
        }
        Ok(out)
    }

    fn widths(&self) -> &[usize] {
        self.widths.as_deref().unwrap_or_default()
    }
}

fn wanted<K: FluxObject>(names: &[String], obj: &K) -> bool {
    names.is_empty() || names.iter().any(|n| n == obj.meta().name.as_deref().unwrap_or_default())
}

fn key<K: FluxObject>(obj: &K) -> (String, String) {
    (obj.meta().namespace.clone().unwrap_or_default(), obj.meta().name.clone().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flux::HelmRelease;
    use crate::flux::kind::HELM_RELEASE;

    fn release(name: &str, ready: &str, message: &str) -> HelmRelease {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": "apps", "managedFields": [{"manager": "kubectl"}]},
            "spec": {},
            "status": {"conditions": [{"type": "Ready", "status": ready, "message": message}]}
        }))
        .expect("fixture parses")
    }

    fn view(format: Format) -> View {
        View::new(format, false, &HELM_RELEASE, Paint(false))
    }

    fn now() -> jiff::Timestamp {
        "2026-01-01T00:00:00Z".parse().expect("a timestamp")
    }

    #[test]
    fn names_documents_and_lists_like_kubectl() {
        let items = [release("web", "True", "ok"), release("db", "False", "failed")];
        let names = view(Format::Name).render(&items, false, now()).unwrap();
        assert_eq!(names, "helmrelease.helm.toolkit.fluxcd.io/web\nhelmrelease.helm.toolkit.fluxcd.io/db\n");

        let one = view(Format::Json).render(&items[..1], true, now()).unwrap();
        assert!(one.starts_with("{\n    \"apiVersion\": \"helm.toolkit.fluxcd.io/v2\",\n"), "{one}");
        assert!(one.ends_with("}\n") && !one.contains("managedFields"), "{one}");
        // One object found by listing is still a List.
        let listed = view(Format::Yaml).render(&items[..1], false, now()).unwrap();
        assert!(
            listed.starts_with("apiVersion: v1\nkind: List\nitems:\n- apiVersion: helm.toolkit.fluxcd.io/v2\n"),
            "{listed}"
        );
        assert!(!listed.contains("managedFields"), "{listed}");
    }

    #[test]
    fn empty_results_are_worded_like_kubectl() {
        assert_eq!(no_resources("apps"), "No resources found in apps namespace.");
        assert_eq!(no_resources(""), "No resources found");
    }

    fn stdout(prints: Vec<Print>) -> String {
        prints
            .into_iter()
            .map(|p| match p {
                Print::Stdout(s) => s,
                other => panic!("not stdout: {other:?}"),
            })
            .collect()
    }

    #[test]
    fn a_watch_prints_the_table_then_a_padded_row_per_change() {
        let mut watch = Watch::new(view(Format::Table), &[], "apps");
        for event in
            [Event::Init, Event::InitApply(release("web", "True", "ok")), Event::InitApply(release("db", "True", "ok"))]
        {
            assert_eq!(watch.event(Ok(event), now()).unwrap(), []);
        }
        assert_eq!(
            stdout(watch.event(Ok(Event::InitDone), now()).unwrap()),
            "NAME   REVISION   SUSPENDED   READY   MESSAGE\n\
             db                False       True    ok\n\
             web               False       True    ok\n"
        );
        // The same row again (a status heartbeat) prints nothing; a change prints the row at the table's widths.
        assert_eq!(watch.event(Ok(Event::Apply(release("web", "True", "ok"))), now()).unwrap(), []);
        assert_eq!(
            stdout(watch.event(Ok(Event::Apply(release("web", "False", "failed"))), now()).unwrap()),
            "web               False       False   failed\n"
        );
        assert_eq!(
            stdout(watch.event(Ok(Event::Delete(release("db", "True", "ok"))), now()).unwrap()),
            "db                False       True    ok\n"
        );
        // After the first listing, an error is a warning and the watch goes on.
        let blip = Error::Failed("gone".into());
        assert_eq!(
            watch.event(Err(blip), now()).unwrap(),
            [Print::Warning("watch interrupted, retrying: gone".into())]
        );
    }

    #[test]
    fn a_watch_of_names_prints_documents_and_nothing_else() {
        let mut watch = Watch::new(view(Format::Name), &["web".to_string()], "apps");
        for event in
            [Event::Init, Event::InitApply(release("web", "True", "ok")), Event::InitApply(release("db", "True", "ok"))]
        {
            assert_eq!(watch.event(Ok(event), now()).unwrap(), []);
        }
        assert_eq!(
            stdout(watch.event(Ok(Event::InitDone), now()).unwrap()),
            "helmrelease.helm.toolkit.fluxcd.io/web\n"
        );
        assert_eq!(watch.event(Ok(Event::Apply(release("db", "False", "x"))), now()).unwrap(), []);
    }

    #[test]
    fn a_watch_with_nothing_to_show_says_so_and_fails_on_an_early_error() {
        let mut watch = Watch::<HelmRelease>::new(view(Format::Wide), &[], "");
        assert!(watch.event(Err(Error::Failed("no CRD".into())), now()).is_err());
        watch.event(Ok(Event::Init), now()).unwrap();
        assert_eq!(watch.event(Ok(Event::InitDone), now()).unwrap(), [Print::Stderr("No resources found".into())]);
    }

    #[test]
    fn a_watch_with_a_status_selector_shows_what_matches_and_the_row_that_leaves() {
        let selector = "ready=false".parse().ok();
        let mut watch = Watch::new(view(Format::Table), &[], "apps").with_status_selector(selector);
        for event in
            [Event::Init, Event::InitApply(release("web", "True", "ok")), Event::InitApply(release("db", "False", "x"))]
        {
            assert_eq!(watch.event(Ok(event), now()).unwrap(), []);
        }
        assert_eq!(
            stdout(watch.event(Ok(Event::InitDone), now()).unwrap()),
            "NAME   REVISION   SUSPENDED   READY   MESSAGE\n\
             db                False       False   x\n"
        );
        // web is Ready: not shown. db becomes Ready: its row is printed once, then no more.
        assert_eq!(watch.event(Ok(Event::Apply(release("web", "True", "still"))), now()).unwrap(), []);
        assert_eq!(
            stdout(watch.event(Ok(Event::Apply(release("db", "True", "ok"))), now()).unwrap()),
            "db                False       True    ok\n"
        );
        assert_eq!(watch.event(Ok(Event::Apply(release("db", "True", "ok again"))), now()).unwrap(), []);
        assert_eq!(
            stdout(watch.event(Ok(Event::Apply(release("web", "False", "broke"))), now()).unwrap()),
            "web               False       False   broke\n"
        );
    }
}
