//! One line for one image change, however many containers it reaches: a tag bump in a values file that
//! many releases (or a chart's variants) share is one fact, and "What to see first" says it once, with
//! how many containers in how many releases and where, instead of a line per container.

use std::collections::BTreeMap;

use crate::compare::attention::ImageChange;

/// An image change seen in more than one container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub before: Option<String>,
    pub after: Option<String>,
    pub containers: usize,
    /// The members it is seen in (their indices), in order.
    pub members: Vec<usize>,
}

/// The image changes of `changes` (member index, change) that occur in more than one container, in the
/// order each was first seen.
pub fn groups<'a>(changes: impl IntoIterator<Item = (usize, &'a ImageChange)>) -> Vec<Group> {
    let mut order: Vec<(Option<String>, Option<String>)> = Vec::new();
    let mut by_change: BTreeMap<(Option<String>, Option<String>), Group> = BTreeMap::new();
    for (member, change) in changes {
        let key = (change.before.clone(), change.after.clone());
        let group = by_change.entry(key.clone()).or_insert_with(|| {
            order.push(key);
            Group { before: change.before.clone(), after: change.after.clone(), containers: 0, members: Vec::new() }
        });
        group.containers += 1;
        if !group.members.contains(&member) {
            group.members.push(member);
        }
    }
    order.into_iter().filter_map(|k| by_change.remove(&k)).filter(|g| g.containers > 1).collect()
}

impl Group {
    /// Whether `change` is this group's.
    pub fn has(&self, change: &ImageChange) -> bool {
        self.before == change.before && self.after == change.after
    }

    /// `cilium v1.6.0 → v1.6.1` (the repository once when both sides share it), or `a:1 → b:2`, `(none)`
    /// for a side without the container.
    pub fn change(&self) -> String {
        let side = |s: &Option<String>| s.clone().unwrap_or_else(|| "(none)".into());
        match (self.before.as_deref().map(split), self.after.as_deref().map(split)) {
            (Some((repo_a, tag_a)), Some((repo_b, tag_b)))
                if repo_a == repo_b && !tag_a.is_empty() && !tag_b.is_empty() =>
            {
                format!("{repo_a} {tag_a} → {tag_b}")
            }
            _ => format!("{} → {}", side(&self.before), side(&self.after)),
        }
    }
}

/// An image reference as repository and tag or digest (`repo`, `v1` of `repo:v1`; `repo`, `sha256:...` of
/// `repo@sha256:...`); the tag is empty when there is none.
fn split(image: &str) -> (&str, &str) {
    if let Some((repo, digest)) = image.split_once('@') {
        return (repo, digest);
    }
    match image.rsplit_once(':') {
        // A colon before the last slash is a registry's port, not a tag.
        Some((repo, tag)) if !tag.contains('/') => (repo, tag),
        _ => (image, ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(object: &str, before: &str, after: &str) -> ImageChange {
        ImageChange {
            object: object.into(),
            container: "c".into(),
            before: Some(before.into()),
            after: Some(after.into()),
        }
    }

    #[test]
    fn the_same_change_in_many_containers_is_one_group() {
        let a = change("DaemonSet cilium", "quay.io/cilium/cilium:v1.6.0", "quay.io/cilium/cilium:v1.6.1");
        let b = change("Deployment operator", "quay.io/cilium/cilium:v1.6.0", "quay.io/cilium/cilium:v1.6.1");
        let once = change("Deployment web", "nginx:1.27", "nginx:1.28");
        let got = groups([(0, &a), (0, &b), (1, &a), (2, &once)]);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].containers, 3);
        assert_eq!(got[0].members, [0, 1]);
        assert_eq!(got[0].change(), "quay.io/cilium/cilium v1.6.0 → v1.6.1");
        assert!(got[0].has(&b) && !got[0].has(&once));
    }

    #[test]
    fn repositories_and_ports_are_told_apart() {
        let g =
            |b: &str, a: &str| Group { before: Some(b.into()), after: Some(a.into()), containers: 2, members: vec![0] };
        assert_eq!(g("localhost:5000/web:1", "localhost:5000/web:2").change(), "localhost:5000/web 1 → 2");
        assert_eq!(g("a/web:1", "b/web:1").change(), "a/web:1 → b/web:1");
        assert_eq!(g("web@sha256:aa", "web@sha256:bb").change(), "web sha256:aa → sha256:bb");
        let gone = Group { before: Some("web:1".into()), after: None, containers: 2, members: vec![0] };
        assert_eq!(gone.change(), "web:1 → (none)");
    }
}
