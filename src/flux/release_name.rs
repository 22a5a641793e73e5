//! Helm release naming as helm-controller does it (reference §2).

/// Helm refuses release names longer than this.
pub const MAX_RELEASE_NAME_LEN: usize = 53;

/// The Helm release name of a HelmRelease (`api/v2 GetReleaseName` + `internal/release ShortenName`):
/// `spec.releaseName`, else `<targetNamespace>-<name>`, else `<name>`; a result longer than 53 bytes becomes
/// its first 40 bytes, `-`, and the first 12 hex digits of the sha256 of the full name.
pub fn release_name(hr_name: &str, target_namespace: Option<&str>, release_name: Option<&str>) -> String {
    let full = match (release_name.filter(|r| !r.is_empty()), target_namespace.filter(|t| !t.is_empty())) {
        (Some(r), _) => r.to_string(),
        (None, Some(ns)) => format!("{ns}-{hr_name}"),
        (None, None) => hr_name.to_string(),
    };
    shorten_name(&full)
}

/// Flux `ShortenName`. Lengths are in bytes, as in Go; names are DNS labels in practice, so ASCII.
fn shorten_name(name: &str) -> String {
    if name.len() <= MAX_RELEASE_NAME_LEN {
        return name.to_string();
    }
    let hex = crate::go::digest::sha256_hex(name.as_bytes());
    let head = String::from_utf8_lossy(&name.as_bytes()[..MAX_RELEASE_NAME_LEN - 13]);
    format!("{head}-{}", &hex[..12])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_of_release_name_target_namespace_and_name() {
        assert_eq!(release_name("app", None, None), "app");
        assert_eq!(release_name("app", Some("prod"), None), "prod-app");
        assert_eq!(release_name("app", Some("prod"), Some("custom")), "custom");
        assert_eq!(release_name("app", Some(""), Some("")), "app");
    }

    #[test]
    fn names_up_to_53_bytes_are_kept() {
        let n53 = "a".repeat(53);
        assert_eq!(release_name(&n53, None, None), n53);
    }

    #[test]
    fn longer_names_are_shortened_with_a_hash() {
        // Vectors computed independently (python hashlib) per Go: name[:40] + "-" + fmt.Sprintf("%x", sha256.Sum256(name))[:12].
        let n54 = "a".repeat(54);
        let got = release_name(&n54, None, None);
        assert_eq!(got.len(), 53);
        assert_eq!(got, format!("{}-{}", "a".repeat(40), "a3f01b693925"));
        let ns = "some-very-long-target-namespace-name";
        let got = release_name("and-an-equally-long-helmrelease", Some(ns), None);
        assert_eq!(got, "some-very-long-target-namespace-name-and-ff32ab276a8b");
    }
}
