//! The Kubernetes Events recorded about a Flux object (core v1, selected by `involvedObject`), newest
//! last, the way `kubectl describe` lists them.

use k8s_openapi::api::core::v1::Event;
use kube::api::{Api, ListParams};

use crate::cluster::Cluster;
use crate::support::error::Result;

/// One event, reduced to what a status screen shows.
#[derive(Clone, Debug, PartialEq)]
pub struct EventLine {
    pub type_: String,
    pub reason: String,
    /// When it last happened (lastTimestamp, else eventTime, else creation).
    pub last_seen: Option<jiff::Timestamp>,
    pub count: i32,
    pub from: String,
    pub message: String,
}

/// Events whose involvedObject is `kind` `namespace/name`, oldest first. `limit` keeps the newest ones.
pub async fn for_object(
    cluster: &Cluster,
    kind: &str,
    namespace: &str,
    name: &str,
    limit: usize,
) -> Result<Vec<EventLine>> {
    let api: Api<Event> = Api::namespaced(cluster.client.clone(), namespace);
    let fields = format!("involvedObject.kind={kind},involvedObject.name={name},involvedObject.namespace={namespace}");
    let list = api.list(&ListParams::default().fields(&fields)).await.map_err(|e| cluster.error(e))?;
    let mut lines: Vec<EventLine> = list.items.into_iter().map(line).collect();
    lines.sort_by_key(|e| e.last_seen);
    let skip = lines.len().saturating_sub(limit);
    Ok(lines.split_off(skip))
}

fn line(e: Event) -> EventLine {
    let last_seen =
        e.last_timestamp.map(|t| t.0).or(e.event_time.map(|t| t.0)).or(e.metadata.creation_timestamp.map(|t| t.0));
    let from =
        e.source.and_then(|s| s.component).filter(|c| !c.is_empty()).or(e.reporting_component).unwrap_or_default();
    EventLine {
        type_: e.type_.unwrap_or_default(),
        reason: e.reason.unwrap_or_default(),
        last_seen,
        count: e.count.unwrap_or(1),
        from,
        message: e.message.unwrap_or_default(),
    }
}
