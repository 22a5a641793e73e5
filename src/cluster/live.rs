//! The cluster side of a diff: for each desired object, the live object and what the server would make of
//! the desired one (a server-side apply dry run), so server defaulting is not noise and drift shows.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::{StreamExt, TryStreamExt};
use kube::api::{Api, DynamicObject, ListParams, ObjectList, Patch, PatchParams};
use kube::core::GroupVersionKind;
use kube::core::Resource as _;
use kube::discovery::ApiResource;
use serde_json::Value;

use crate::cluster::Cluster;
use crate::cluster::discovery::ClusterApis;
use crate::support::error::{Error, Result};

/// How many requests to keep in flight: enough to hide latency for large charts without flooding the
/// API server's default per-client rate limits.
const CONCURRENCY: usize = 16;

/// From this many objects of one kind in one namespace, one LIST is cheaper than a GET each.
const LIST_FROM: usize = 4;

/// The field manager helm-controller applies with; a dry run as the same manager shows what its apply
/// would change, including fields someone else changed by hand.
pub const FLUX_FIELD_MANAGER: &str = "helm-controller";

/// Per-object result: live state and the server's view of the desired state.
#[derive(Debug, Clone)]
pub struct Observed {
    pub live: Option<Value>,
    /// What the server would make of the desired object; `None` when applying it is known to change
    /// nothing, so it is the live object (see [`LiveObjects::observe_all`]).
    pub desired_on_server: Option<Value>,
}

/// Live reads and dry runs, with the kinds the cluster serves learnt once ([`crate::cluster::discovery`]).
pub struct LiveObjects<'a> {
    cluster: &'a Cluster,
    apis: Arc<ClusterApis>,
    /// Lists read ahead ([`prefetch`](Self::prefetch)), by kind and namespace: name → live object.
    listed: Mutex<HashMap<ListKey, HashMap<String, Value>>>,
}

/// A LIST's kind and namespace.
type ListKey = (GroupVersionKind, Option<String>);

impl<'a> LiveObjects<'a> {
    /// Live reads with this command's discovery.
    pub fn new(cluster: &'a Cluster, apis: ClusterApis) -> Self {
        LiveObjects { cluster, apis: Arc::new(apis), listed: Mutex::default() }
    }

    /// The cluster these objects live in.
    pub fn cluster(&self) -> &Cluster {
        self.cluster
    }

    /// The discovery in use.
    pub fn apis(&self) -> Arc<ClusterApis> {
        self.apis.clone()
    }

    /// The API resource of an object's kind and whether it is namespaced.
    pub fn resource(&self, obj: &Value) -> Result<(ApiResource, bool)> {
        let (api_version, kind) = type_of(obj)?;
        if let Some(found) = served(&self.apis, api_version, kind) {
            return Ok(found);
        }
        Err(Error::Invalid {
            what: format!("object kind {api_version}/{kind}"),
            reason: "the cluster does not serve it (is its CRD installed?)".into(),
        })
    }

    /// Whether the cluster serves an object's kind.
    pub fn serves(&self, obj: &Value) -> bool {
        type_of(obj).is_ok_and(|(api_version, kind)| served(&self.apis, api_version, kind).is_some())
    }

    fn api(&self, ar: &ApiResource, namespaced: bool, namespace: Option<&str>) -> Api<DynamicObject> {
        match (namespaced, namespace) {
            (true, Some(ns)) => Api::namespaced_with(self.cluster.client.clone(), ns, ar),
            (true, None) => Api::default_namespaced_with(self.cluster.client.clone(), ar),
            (false, _) => Api::all_with(self.cluster.client.clone(), ar),
        }
    }

    /// The API of an object's kind, in its namespace (the default one when it names none).
    pub fn api_for(&self, obj: &Value) -> Result<Api<DynamicObject>> {
        let (ar, namespaced) = self.resource(obj)?;
        Ok(self.api(&ar, namespaced, namespace_of(obj)))
    }

    /// The live object, if it exists.
    pub async fn get(&self, obj: &Value) -> Result<Option<Value>> {
        let (ar, namespaced) = self.resource(obj)?;
        let api = self.api(&ar, namespaced, namespace_of(obj));
        let live = api.get_opt(name_of(obj)?).await.map_err(|e| self.cluster.error(e))?;
        live.map(to_value).transpose()
    }

    /// Reads ahead the LISTs that [`get_all`](Self::get_all) of `objs` would make, so that a later
    /// `get_all` of the same kinds and namespaces costs no request. diff calls it with the deployed
    /// release's objects while helm renders: an unchanged release renders the same kinds. Best effort: a
    /// LIST that fails here is made again (and its error reported) by `get_all`.
    pub async fn prefetch(&self, objs: &[&Value]) {
        let Ok(groups) = list_groups(objs) else { return };
        let lists = groups.into_iter().filter(|(_, ix)| ix.len() >= LIST_FROM).map(|(key, ix)| async move {
            let listed = self.list(objs[ix[0]], key.1.as_deref()).await.ok()?;
            Some((key, listed))
        });
        let lists: Vec<_> = futures::stream::iter(lists).buffer_unordered(CONCURRENCY).collect().await;
        if let Ok(mut cache) = self.listed.lock() {
            cache.extend(lists.into_iter().flatten());
        }
    }

    /// One LIST of the kind of `like` in `namespace`: name → live object (with apiVersion and kind, which
    /// a LIST leaves out of its items). The items are read straight into JSON values, the form the diff
    /// compares, rather than through typed object metadata.
    async fn list(&self, like: &Value, namespace: Option<&str>) -> Result<HashMap<String, Value>> {
        let (ar, namespaced) = self.resource(like)?;
        let namespace = namespaced.then(|| namespace.unwrap_or(self.cluster.client.default_namespace()));
        let url = DynamicObject::url_path(&ar, namespace);
        let request = kube::core::Request::new(url)
            .list(&ListParams::default())
            .map_err(|e| Error::Invalid { what: format!("list of {}", ar.kind), reason: e.to_string() })?;
        let list: ObjectList<WithoutManagedFields> =
            self.cluster.client.request(request).await.map_err(|e| self.cluster.error(e))?;
        Ok(list
            .items
            .into_iter()
            .filter_map(|WithoutManagedFields(mut o)| {
                let name = o.pointer("/metadata/name").and_then(Value::as_str)?.to_string();
                let fields = o.as_object_mut()?;
                fields.insert("apiVersion".into(), ar.api_version.clone().into());
                fields.insert("kind".into(), ar.kind.clone().into());
                Some((name, o))
            })
            .collect())
    }

    /// The live objects for many objects, in input order: one LIST per kind and namespace holding at
    /// least `LIST_FROM` of them (or read ahead by [`prefetch`](Self::prefetch)), a GET for the others,
    /// all concurrently.
    pub async fn get_all(&self, objs: &[&Value]) -> Result<Vec<Option<Value>>> {
        let groups = list_groups(objs)?;
        let mut out = vec![None; objs.len()];
        let prefetched: Vec<(ListKey, HashMap<String, Value>)> = match self.listed.lock() {
            Ok(mut cache) => groups.keys().filter_map(|k| cache.remove(k).map(|l| (k.clone(), l))).collect(),
            Err(_) => Vec::new(),
        };
        let mut prefetched: HashMap<ListKey, HashMap<String, Value>> = prefetched.into_iter().collect();
        let (listed, single): (Vec<_>, Vec<_>) =
            groups.into_iter().partition(|(key, ix)| ix.len() >= LIST_FROM || prefetched.contains_key(key));
        let listed: Vec<_> = listed.into_iter().map(|(key, ix)| (prefetched.remove(&key), key, ix)).collect();
        let lists = futures::stream::iter(listed.into_iter().map(|(ahead, key, ix)| async move {
            let mut by_name = match ahead {
                Some(l) => l,
                None => self.list(objs[ix[0]], key.1.as_deref()).await?,
            };
            let mut found = Vec::with_capacity(ix.len());
            for i in ix {
                found.push((i, by_name.remove(name_of(objs[i])?)));
            }
            Ok::<_, Error>(found)
        }));
        let mut lists = lists.buffer_unordered(CONCURRENCY);
        while let Some(found) = lists.try_next().await? {
            for (i, live) in found {
                out[i] = live;
            }
        }
        let singles: Vec<usize> = single.into_iter().flat_map(|(_, ix)| ix).collect();
        let got: Vec<Option<Value>> = futures::stream::iter(singles.iter().map(|&i| self.get(objs[i])))
            .buffered(CONCURRENCY)
            .try_collect()
            .await?;
        for (i, live) in singles.into_iter().zip(got) {
            out[i] = live;
        }
        Ok(out)
    }

    /// A forced server-side apply dry run of `desired` as helm-controller's field manager: the object as
    /// helm-controller's apply would leave it. `live` is what is there now (None: nothing).
    pub async fn dry_run(&self, desired: &Value, live: Option<&Value>) -> Result<Value> {
        let (ar, namespaced) = self.resource(desired)?;
        let api = self.api(&ar, namespaced, namespace_of(desired));
        let name = name_of(desired)?;
        let params = PatchParams::apply(FLUX_FIELD_MANAGER).force().dry_run();
        let applied = match api.patch(name, &params, &Patch::Apply(desired)).await {
            // The namespace does not exist yet (helm would create it with --create-namespace): nothing
            // for the server to default against, so the object is added as rendered.
            Err(kube::Error::Api(s)) if s.code == 404 && live.is_none() => return Ok(desired.clone()),
            other => other,
        }
        .map_err(|e| match e {
            kube::Error::Api(s) if s.code == 422 || s.code == 400 => Error::Invalid {
                what: format!("{} {}", ar.kind, name),
                reason: format!("the API server rejects it: {}", s.message),
            },
            e => self.cluster.error(e),
        })?;
        to_value(applied)
    }

    /// Live state and the server's view of each desired object, in input order.
    ///
    /// The dry run is skipped where its answer is known: when an object is exactly what the deployed
    /// release last applied (`as_applied[i]`) and every field of it is already live with the same value,
    /// applying it again as the same field manager changes nothing (it sets only values that are there,
    /// and it removes nothing, because the fields the manager owns are those of that same object); its
    /// [`Observed::desired_on_server`] is then `None`. Anything else (a changed object, drift, a field the
    /// server writes differently, a new object) gets the dry run. This keeps a diff of a large, mostly
    /// unchanged release to a few LISTs.
    pub async fn observe_all(&self, desired: &[&Value], as_applied: &[bool]) -> Result<Vec<Observed>> {
        let live = self.get_all(desired).await?;
        let settled: Vec<bool> = (0..desired.len())
            .map(|i| {
                as_applied.get(i).copied().unwrap_or(false)
                    && live[i].as_ref().is_some_and(|l| is_subset(desired[i], l))
            })
            .collect();
        let dry_runs = settled.iter().filter(|s| !**s).count();
        tracing::debug!(objects = desired.len(), dry_runs, "live objects read");
        let each = desired.iter().zip(live).zip(settled).map(|((d, live), settled)| async move {
            let desired_on_server = match &live {
                Some(_) if settled => None,
                _ => Some(self.dry_run(d, live.as_ref()).await?),
            };
            Ok::<_, Error>(Observed { live, desired_on_server })
        });
        futures::stream::iter(each).buffered(CONCURRENCY).try_collect().await
    }
}

/// Every field of `desired` is in `live` with the same value: mappings by key, lists element by element
/// with the same length (the server may add defaulted fields inside elements, not elements). A null in
/// `desired` asks the server to remove a field, which is not a plain value, so it never counts as present.
fn is_subset(desired: &Value, live: &Value) -> bool {
    match (desired, live) {
        (Value::Object(d), Value::Object(l)) => d.iter().all(|(k, dv)| l.get(k).is_some_and(|lv| is_subset(dv, lv))),
        (Value::Array(d), Value::Array(l)) => d.len() == l.len() && d.iter().zip(l).all(|(dv, lv)| is_subset(dv, lv)),
        (Value::Null, _) => false,
        (d, l) => d == l,
    }
}

fn to_value(o: DynamicObject) -> Result<Value> {
    serde_json::to_value(o).map_err(|e| Error::Invalid { what: "live object".into(), reason: e.to_string() })
}

fn type_of(obj: &Value) -> Result<(&str, &str)> {
    let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
    if api_version.is_empty() || kind.is_empty() {
        return Err(Error::Invalid {
            what: "manifest object".into(),
            reason: "apiVersion and kind are required".into(),
        });
    }
    Ok((api_version, kind))
}

fn gvk_of(obj: &Value) -> Result<GroupVersionKind> {
    let (api_version, kind) = type_of(obj)?;
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    Ok(GroupVersionKind::gvk(group, version, kind))
}

/// Objects grouped by kind and namespace (indices into `objs`).
fn list_groups(objs: &[&Value]) -> Result<HashMap<ListKey, Vec<usize>>> {
    let mut groups: HashMap<ListKey, Vec<usize>> = HashMap::new();
    for (i, obj) in objs.iter().enumerate() {
        groups.entry((gvk_of(obj)?, namespace_of(obj).map(String::from))).or_default().push(i);
    }
    Ok(groups)
}

/// The kube-rs resource of a served kind.
fn served(apis: &ClusterApis, api_version: &str, kind: &str) -> Option<(ApiResource, bool)> {
    let k = apis.find(api_version, kind)?;
    let ar = ApiResource {
        group: k.group.clone(),
        version: k.version.clone(),
        api_version: k.api_version(),
        kind: k.kind.clone(),
        plural: k.plural.clone(),
    };
    Some((ar, k.namespaced))
}

fn name_of(obj: &Value) -> Result<&str> {
    obj.pointer("/metadata/name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .ok_or_else(|| Error::Invalid { what: "manifest object".into(), reason: "metadata.name is required".into() })
}

fn namespace_of(obj: &Value) -> Option<&str> {
    obj.pointer("/metadata/namespace").and_then(Value::as_str).filter(|n| !n.is_empty())
}

/// A live object from a LIST, read without `metadata.managedFields`: nothing in a diff looks at them
/// (normalising drops them), and on objects applied server-side they are as large as the rest of the
/// object, so skipping them while decoding saves building and freeing half of every listed object.
#[derive(Clone, Debug)]
struct WithoutManagedFields(Value);

impl<'de> serde::Deserialize<'de> for WithoutManagedFields {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        use serde::de::{IgnoredAny, MapAccess, Visitor};
        /// A JSON object, with the values under `skip` passed over unread; `metadata` is read by `Metadata`.
        struct Object {
            top: bool,
        }
        impl<'de> Visitor<'de> for Object {
            type Value = serde_json::Map<String, Value>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a Kubernetes object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Self::Value, A::Error> {
                let mut out = serde_json::Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    if self.top && key == "metadata" {
                        let metadata = map.next_value_seed(Seed(Object { top: false }))?;
                        out.insert(key, Value::Object(metadata));
                    } else if !self.top && key == "managedFields" {
                        map.next_value::<IgnoredAny>()?;
                    } else {
                        out.insert(key, map.next_value()?);
                    }
                }
                Ok(out)
            }
        }
        struct Seed(Object);
        impl<'de> serde::de::DeserializeSeed<'de> for Seed {
            type Value = serde_json::Map<String, Value>;
            fn deserialize<D2: serde::Deserializer<'de>>(self, d: D2) -> std::result::Result<Self::Value, D2::Error> {
                d.deserialize_map(self.0)
            }
        }
        d.deserialize_map(Object { top: true }).map(|m| WithoutManagedFields(Value::Object(m)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn listed_objects_are_read_without_their_managed_fields_only() {
        let object = json!({
            "metadata": {"name": "a", "managedFields": [{"manager": "helm", "fieldsV1": {"f:data": {}}}], "labels": {"x": "1"}},
            "data": {"managedFields": "kept: not metadata"},
            "spec": {"metadata": {"managedFields": "kept: not the object's metadata"}},
        });
        let list = json!({"apiVersion": "v1", "kind": "ConfigMapList", "metadata": {}, "items": [object]});
        let read: ObjectList<WithoutManagedFields> = serde_json::from_value(list).unwrap();
        let mut want = object.clone();
        want["metadata"].as_object_mut().unwrap().remove("managedFields");
        assert_eq!(read.items[0].0, want);
        let keys: Vec<&String> = read.items[0].0["metadata"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["name", "labels"], "the order of the fields is kept");
    }
}
