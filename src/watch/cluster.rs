//! Cluster watches: `watcher`s on the HelmRelease and on each of its `valuesFrom` ConfigMaps and Secrets,
//! reduced to the changes that matter: the HelmRelease's generation (its spec, not the status a round or
//! helm-controller writes), a source's resourceVersion.

use std::collections::BTreeSet;

use futures::{Stream, StreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::Api;
use kube::runtime::{WatchStreamExt, watcher};
use tokio::sync::mpsc;

use super::round::Change;
use crate::cluster::Cluster;
use crate::flux::HelmRelease;
use crate::flux::helmrelease::ValuesReference;

/// A stream of the changes of object `name` that matter: after the watch's initial listing, each time
/// `fingerprint` of the object differs from the last seen one, or the object appears or goes.
fn object_changes<K>(
    api: Api<K>,
    name: &str,
    fingerprint: fn(&K) -> Option<String>,
) -> impl Stream<Item = Option<K>> + Send + 'static
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug + Send + 'static,
    K::DynamicType: Default,
{
    use watcher::Event;
    // known: None until the first listing is complete; then the fingerprint (None: no such object).
    let mut known: Option<Option<String>> = None;
    let mut listing: Option<(Option<String>, Option<K>)> = None;
    let what = format!("{} {name}", K::kind(&Default::default()));
    let mut warned = false;
    watcher(api, watcher::Config::default().fields(&format!("metadata.name={name}"))).default_backoff().filter_map(
        move |event| {
            let changed = match event {
                // A lost connection is retried by the backoff; the relisting after it is compared below.
                // Said once, so that a watch RBAC forbids is not a silent gap in what starts a round.
                Err(e) => {
                    if !warned {
                        warned = true;
                        crate::support::output::progress::warning(format!(
                            "cannot watch {what} ({e}); retrying: until then its changes start no round"
                        ));
                    }
                    tracing::debug!(error = %e, "watch");
                    None
                }
                Ok(Event::Init) => {
                    listing = Some((None, None));
                    None
                }
                Ok(Event::InitApply(obj)) => {
                    listing = Some((fingerprint(&obj), Some(obj)));
                    None
                }
                Ok(Event::InitDone) => {
                    let (fp, obj) = listing.take().unwrap_or((None, None));
                    let before = known.replace(fp.clone());
                    // The first listing is the baseline; a relisting reports what changed meanwhile.
                    match before {
                        Some(before) if before != fp => Some(obj),
                        _ => None,
                    }
                }
                Ok(Event::Apply(obj)) => {
                    let fp = fingerprint(&obj);
                    if known.as_ref() == Some(&fp) {
                        None
                    } else {
                        known = Some(fp);
                        Some(Some(obj))
                    }
                }
                Ok(Event::Delete(_)) => {
                    known = Some(None);
                    Some(None)
                }
            };
            futures::future::ready(changed)
        },
    )
}

/// The HelmRelease's generation: it moves with its spec only.
fn generation(hr: &HelmRelease) -> Option<String> {
    kube::Resource::meta(hr).generation.map(|g| g.to_string())
}

fn resource_version<K: kube::Resource>(obj: &K) -> Option<String> {
    obj.meta().resource_version.clone()
}

/// The `valuesFrom` sources of a HelmRelease, as (kind, name).
fn sources(refs: &[ValuesReference]) -> BTreeSet<(String, String)> {
    refs.iter().map(|r| (r.kind.clone(), r.name.clone())).collect()
}

/// Watches HelmRelease `hr` (in its namespace) and its `valuesFrom` ConfigMaps and Secrets; sends a
/// [`Change::Object`] for each change that matters. The sources follow the HelmRelease's spec: when it
/// names others, those are watched instead. Runs until `tx` is closed.
pub fn watch_cluster(
    cluster: &Cluster,
    hr: &HelmRelease,
    tx: mpsc::UnboundedSender<Change>,
) -> tokio::task::JoinHandle<()> {
    let client = cluster.client.clone();
    let ns = hr.namespace().to_string();
    let name = hr.name().to_string();
    let mut current = sources(&hr.spec.values_from);
    tokio::spawn(async move {
        let hrs: Api<HelmRelease> = Api::namespaced(client.clone(), &ns);
        let mut hr_changes = object_changes(hrs, &name, generation).boxed();
        let source_changes = |set: &BTreeSet<(String, String)>| {
            let streams = set.iter().filter_map(|(kind, name)| {
                let label = format!("{kind} {name}");
                let stream = match kind.as_str() {
                    "ConfigMap" => {
                        object_changes(Api::<ConfigMap>::namespaced(client.clone(), &ns), name, resource_version)
                            .map(|_| ())
                            .boxed()
                    }
                    "Secret" => object_changes(Api::<Secret>::namespaced(client.clone(), &ns), name, resource_version)
                        .map(|_| ())
                        .boxed(),
                    // Anything else fails the round with a clear message; there is nothing to watch.
                    _ => return None,
                };
                Some(stream.map(move |()| label.clone()))
            });
            futures::stream::select_all(streams)
        };
        let mut source_stream = source_changes(&current);
        loop {
            let change = tokio::select! {
                Some(changed) = hr_changes.next() => {
                    if let Some(hr) = &changed {
                        let now = sources(&hr.spec.values_from);
                        if now != current {
                            source_stream = source_changes(&now);
                            current = now;
                        }
                    }
                    format!("HelmRelease {name}")
                }
                Some(label) = source_stream.next(), if !source_stream.is_empty() => label,
                else => break,
            };
            if tx.send(Change::Object(change)).is_err() {
                break;
            }
        }
    })
}
