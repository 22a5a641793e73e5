//! The calls jsonpath-rust makes on `regex`, through this crate.

#[test]
fn jsonpath_match_and_search_work() {
    // JSONPath's match() anchors the I-Regexp; search() does not.
    let anchored = regex::Regex::new("^(?:b.?b)$").unwrap();
    assert!(anchored.is_match("bab"));
    assert!(!anchored.is_match("xbabx"));
    let unanchored = regex::Regex::new("b.?b").unwrap();
    assert!(unanchored.is_match("xbabx"));
    // A pattern read at run time, as jsonpath-rust reads its filters.
    let unclosed = String::from("(");
    assert!(regex::Regex::new(&unclosed).is_err());
}
