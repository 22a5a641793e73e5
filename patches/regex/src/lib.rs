//! The `regex` crate's API, served by `regex-lite`.
//!
//! cozyhr itself matches regular expressions for drift ignore targets (`cozyhr::drift::ignore`), with
//! regex-lite directly. `regex` comes in through kube-client, which reads
//! kubeconfig auth-provider token paths with jsonpath-rust, which uses `regex` for JSONPath's `match()` and
//! `search()` filter functions alone. With its default features (Unicode tables, literal optimisations,
//! lazy DFAs) the regex engine was 1.4 MiB of helm-cozy; regex-lite has the same API for what
//! jsonpath-rust calls (`Regex::new`, `is_match`), a small fraction of the code, and differs only in
//! speed and in treating `\w`, `\d` and case folding as ASCII: no kubeconfig token path uses a filter.
//! The `cel` crate (crate::cel) calls the same two for CEL's `matches()`, where an ASCII `\w` is the one
//! difference from cel-go's RE2 a health check expression could meet.
//! `patches/regex/tests` runs the calls jsonpath-rust makes.
pub use regex_lite::*;
