//! A fleet's Kustomizations as rows: each one built again at both sides (it reads what changed)
//! compares what it applies as objects, Secrets masked as every plan masks them; one whose build fails is
//! its own row, with the side it failed at.

use std::path::PathBuf;

use serde_json::Value;

use super::super::report::{Entry, Release};
use super::super::request::Request;
use crate::cluster::manifests::ObjectId;
use crate::fleet::clusters::{Built, ClusterBuild};

/// An entry per Kustomization built at both sides (its objects compared) or failing; and how many
/// Kustomizations there were, were built again, and were built at neither side.
pub(super) fn entries(
    cluster: &str,
    old: &ClusterBuild,
    new: &ClusterBuild,
    (old_label, new_label): (&str, &str),
    req: &Request<'_>,
) -> (Vec<Entry>, (usize, usize, usize)) {
    let mut keys: Vec<String> = Vec::new();
    for b in old.builds.iter().chain(&new.builds) {
        if !keys.contains(&b.kustomization.key()) {
            keys.push(b.kustomization.key());
        }
    }
    let find = |c: &'_ ClusterBuild, key: &str| c.builds.iter().find(|b| b.kustomization.key() == key).cloned();
    let mut entries = Vec::new();
    let (mut built, mut unbuilt) = (0, 0);
    for key in &keys {
        let (o, n) = (find(old, key), find(new, key));
        unbuilt += [&o, &n].iter().any(|b| b.as_ref().is_some_and(|b| b.deferred)) as usize;
        let again = n.as_ref().is_none_or(|b| b.built);
        built += again as usize;
        let failed = [&o, &n].iter().any(|b| b.as_ref().is_some_and(|b| b.outcome.is_err()));
        if !again && !failed {
            continue;
        }
        let objects = |b: &Option<Built>, label: &str| -> std::result::Result<Vec<(ObjectId, Value)>, String> {
            match b {
                None => Ok(Vec::new()),
                Some(b) => match &b.outcome {
                    Ok(objs) => Ok(objs
                        .iter()
                        .filter_map(|o| {
                            let v = Value::Object(o.clone());
                            Some((ObjectId::from_object(&v).ok()?, v))
                        })
                        .collect()),
                    Err(why) => Err(format!("{label}: {why}")),
                },
            }
        };
        let outcome = objects(&o, old_label).and_then(|old_objs| {
            let new_objs = objects(&n, new_label)?;
            crate::compare::diff::plan_with(new_objs, old_objs, req.options).map_err(|e| e.to_string())
        });
        entries.push(Entry {
            chart: PathBuf::from("(objects)"),
            release: Release::Kustomization { cluster: cluster.to_string(), kustomization: key.clone() },
            outcome,
        });
    }
    (entries, (keys.len(), built, unbuilt))
}
