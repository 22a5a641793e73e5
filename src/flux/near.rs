//! What is there when a HelmRelease is not: the names close to the one typed, the namespaces where that
//! name exists, and the HelmReleases of the namespace that deploy the chart directory, said after the
//! "not found" line so that the likely fix is in front of the user.

use std::collections::BTreeSet;

use kube::ResourceExt;

use crate::cluster::Cluster;
use crate::flux::HelmRelease;
use crate::flux::verbs::Objects;

/// How many names a hint lists at most.
const MAX_NAMES: usize = 4;

/// What a HelmRelease `name` not found in `cluster`'s namespace may have meant, in one clause (None when
/// nothing comes close): read with the user's rights; a list that is forbidden or fails adds nothing.
/// `chart`: the chart directory's chart name, when the command runs from one.
pub async fn hint(cluster: &Cluster, name: &str, chart: Option<&str>) -> Option<String> {
    let here = Objects::<HelmRelease>::namespaced(cluster, &cluster.namespace).list(None).await.unwrap_or_default();
    let everywhere = Objects::<HelmRelease>::all(cluster).list(None).await.unwrap_or_default();
    let elsewhere: BTreeSet<String> = everywhere
        .iter()
        .filter(|hr| hr.name_any() == name && hr.namespace() != cluster.namespace)
        .map(|hr| hr.namespace().to_string())
        .collect();
    let names: Vec<String> = here.iter().map(ResourceExt::name_any).collect();
    let of_chart: Vec<String> =
        chart.map(|c| here.iter().filter(|hr| hr.deploys(c)).map(ResourceExt::name_any).collect()).unwrap_or_default();
    words(&Found { name, close: close(name, &names), elsewhere: elsewhere.into_iter().collect(), of_chart, chart })
}

/// What was found, for [`words`].
struct Found<'a> {
    name: &'a str,
    close: Vec<String>,
    elsewhere: Vec<String>,
    of_chart: Vec<String>,
    chart: Option<&'a str>,
}

/// The hint in words: each finding a clause, in the order a user would act on them.
fn words(found: &Found) -> Option<String> {
    let list = |names: &[String]| {
        let mut shown = names.iter().take(MAX_NAMES).cloned().collect::<Vec<_>>().join(", ");
        if names.len() > MAX_NAMES {
            shown.push_str(&format!(" and {} more", names.len() - MAX_NAMES));
        }
        shown
    };
    let mut clauses = Vec::new();
    if !found.close.is_empty() {
        clauses.push(format!("did you mean {}", list(&found.close)));
    }
    if let Some(first) = found.elsewhere.first() {
        let namespaces = if found.elsewhere.len() == 1 { "namespace" } else { "namespaces" };
        clauses.push(format!("{} exists in {namespaces} {} (-n {first})", found.name, list(&found.elsewhere)));
    }
    if let Some(chart) = found.chart.filter(|_| !found.of_chart.is_empty() && found.close != found.of_chart) {
        clauses.push(format!("HelmReleases here that deploy chart {chart}: {}", list(&found.of_chart)));
    }
    (!clauses.is_empty()).then(|| clauses.join("; "))
}

/// The names within a small edit distance of `name` (a typo), closest first.
fn close(name: &str, names: &[String]) -> Vec<String> {
    let limit = (name.chars().count() / 3).max(1);
    let mut scored: Vec<(usize, &String)> = names
        .iter()
        .map(|n| (strsim::damerau_levenshtein(name, n), n))
        .filter(|(d, n)| *d <= limit || (n.starts_with(name) && name.len() >= 3))
        .collect();
    scored.sort();
    scored.into_iter().map(|(_, n)| n.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_typo_finds_the_name_it_missed() {
        assert_eq!(close("my-ap", &names(&["my-app", "other", "mine"])), names(&["my-app"]));
        assert_eq!(close("web", &names(&["web-frontend", "db"])), names(&["web-frontend"]), "a prefix");
        assert!(close("zzz", &names(&["my-app"])).is_empty());
    }

    #[test]
    fn the_hint_says_what_is_there_in_one_line() {
        let found = Found {
            name: "my-ap",
            close: names(&["my-app"]),
            elsewhere: names(&["staging"]),
            of_chart: names(&["my-app", "my-app-2"]),
            chart: Some("hello"),
        };
        assert_eq!(
            words(&found).as_deref(),
            Some(
                "did you mean my-app; my-ap exists in namespace staging (-n staging); HelmReleases here that deploy chart hello: my-app, my-app-2"
            )
        );
        let two = Found { elsewhere: names(&["a", "b"]), close: vec![], of_chart: vec![], ..found };
        assert_eq!(words(&two).as_deref(), Some("my-ap exists in namespaces a, b (-n a)"));
        let nothing = Found { name: "x", close: vec![], elsewhere: vec![], of_chart: vec![], chart: Some("hello") };
        assert_eq!(words(&nothing), None);
        let many = Found { of_chart: names(&["a", "b", "c", "d", "e", "f"]), ..nothing };
        assert_eq!(words(&many).as_deref(), Some("HelmReleases here that deploy chart hello: a, b, c, d and 2 more"));
    }
}
