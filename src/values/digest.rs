//! Flux `chartutil.DigestValues`: the `configDigest` of a release's values.
//!
//! helm-controller converts the values with `sigs.k8s.io/yaml.JSONObjectToYAMLObject` (integral float64s
//! become ints), sorts map keys recursively (maps inside lists too, since hc 1.4), marshals with go-yaml
//! **v2** ([`crate::go::yaml_v2_emit`]) and hashes the bytes with sha256. Empty values hash the empty
//! string. The tests hold vectors printed by fluxcd/pkg's chartutil with go.yaml.in/yaml/v2 v2.4.4.

use serde_json::Value;

use super::model::Values;
use crate::go::digest::sha256;

/// The go-yaml v2 bytes Flux hashes for `values` ("" for empty values).
pub fn encode_values(values: &Values) -> String {
    if values.is_empty() {
        return String::new();
    }
    crate::go::yaml_v2_emit::marshal(&Value::Object(values.clone()))
}

/// `sha256:<hex>` of [`encode_values`], as stored in `status.history[].configDigest`.
pub fn digest_values(values: &Values) -> String {
    sha256(encode_values(values).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::model::test_support::obj;
    use serde_json::json;

    // Hashes and bytes below come from fluxcd/pkg/chartutil v1.27.1 `DigestValues`/`Encode` (go.yaml.in/yaml/v2
    // v2.4.4) run on the same JSON (decoded with encoding/json, as helm-controller does) in a throwaway Go program.

    #[test]
    fn empty_values_hash_the_empty_string() {
        assert_eq!(encode_values(&Values::new()), "");
        assert_eq!(
            digest_values(&Values::new()),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn sorting_indentation_and_empty_collections() {
        let v = obj(
            json!({"b": 2, "a": {"d": [1, {"z": 1, "y": 2}, [3, {"k": "v", "b": null}]], "c": {}}, "e": [], "f": null, "g": true}),
        );
        assert_eq!(
            encode_values(&v),
            "a:\n  c: {}\n  d:\n  - 1\n  - \"y\": 2\n    z: 1\n  - - 3\n    - b: null\n      k: v\nb: 2\ne: []\nf: null\ng: true\n"
        );
        assert_eq!(digest_values(&v), "sha256:6fe3f4e0bda8451303625897a5634e37604aa8f90c7add3a5156e79353cd1a26");
    }

    #[test]
    fn string_quoting() {
        let v =
            obj(json!({"s": ["true", "yes", "y", "null", "", "1", "1.5", "0x1F", "2001-12-14", "1:20", "- a", "a: b",
            "a #b", "a#b", " lead", "trail ", "it's", "tab\there", "é", "😀", "\u{feff}bom", "-", "---x", "a,b"]}));
        let want = "s:\n- \"true\"\n- \"yes\"\n- \"y\"\n- \"null\"\n- \"\"\n- \"1\"\n- \"1.5\"\n- \"0x1F\"\n- \"2001-12-14\"\n- \"1:20\"\n\
            - '- a'\n- 'a: b'\n- 'a #b'\n- a#b\n- ' lead'\n- 'trail '\n- it's\n- \"tab\\there\"\n- é\n- \"\\U0001F600\"\n\
            - \"\\uFEFF\\x62\\x6F\\x6D\"\n- '-'\n- '---x'\n- a,b\n";
        assert_eq!(encode_values(&v), want);
        assert_eq!(digest_values(&v), "sha256:c8838f3899e435a0a21a76cf636b36bdf9362ef3f988e02b3a115481b1a713be");
    }

    #[test]
    fn multi_line_strings() {
        let v = obj(json!({"ml": ["a\nb", "a\nb\n", "a\nb\n\n", "\n", " a\nb", "a \nb", "tab\tin\nml"]}));
        assert_eq!(
            encode_values(&v),
            "ml:\n- |-\n  a\n  b\n- |\n  a\n  b\n- |+\n  a\n  b\n\n- |2+\n\n- |2-\n   a\n  b\n- \"a \\nb\"\n- \"tab\\tin\\nml\"\n"
        );
        assert_eq!(digest_values(&v), "sha256:09b8345d4de6cdd64f58868155277dfe75273719e60933f4dd1860fa56b2d87e");
    }

    #[test]
    fn numbers() {
        let v = obj(json!({"f": [1.5, 0.1, 1e-7, 1234567.5, 1e21, 1e20, -0.0, 2.0]}));
        assert_eq!(encode_values(&v), "f:\n- 1.5\n- 0.1\n- 1e-07\n- 1.2345675e+06\n- 1e+21\n- 1e+20\n- 0\n- 2\n");
        assert_eq!(digest_values(&v), "sha256:4453418691d6c2540def792748af3cc8e37621ecc59a807c37948f164adfb1ce");
        // encoding/json decodes every number as float64: integers beyond 2^53 are rounded before digesting.
        let big = obj(json!({"i": [9007199254740993u64, 12345678901234567891u64]}));
        assert_eq!(encode_values(&big), "i:\n- 9007199254740992\n- 12345678901234567168\n");
    }

    #[test]
    fn long_keys_multi_line_keys_and_folding_at_80_columns() {
        let long: Vec<String> = (0..20).map(|i| format!("word{i}")).collect();
        let mut v = Values::new();
        v.insert("long".into(), json!(long.join(" ")));
        v.insert("k".repeat(130), json!("v"));
        v.insert("multi\nkey".into(), json!(1));
        v.insert(String::new(), json!("e"));
        v.insert("true".into(), json!("t"));
        let want = format!(
            "\"\": e\n? {}\n: v\nlong: word0 word1 word2 word3 word4 word5 word6 word7 word8 word9 word10 word11 word12\n  \
             word13 word14 word15 word16 word17 word18 word19\n? |-\n  multi\n  key\n: 1\n\"true\": t\n",
            "k".repeat(130)
        );
        assert_eq!(encode_values(&v), want);
        assert_eq!(digest_values(&v), "sha256:d6ba0383b5bfb1bc217dd0b53176e91932ed8d6543600f7157479c4439f8822c");
    }
}
