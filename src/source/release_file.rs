//! A HelmRelease and the ConfigMaps and Secrets its `valuesFrom` names, read from files instead of the
//! cluster (`--release-file`): multi-document YAML as `kustomize build` prints it, or as it lies in a Git
//! repository, so a chart change can be reviewed where no cluster is at hand.
//!
//! Documents are read as `kubectl apply` reads them before the API server stores them (sigs.k8s.io/yaml:
//! go-yaml v2's scalar rules, see [`crate::values::yaml`]); Secret `data` is base64 as the API server
//! takes it, and `stringData` wins over `data` for the same key, as the API server merges them. What the
//! cluster path does with the objects afterwards (the desired release) is the same for both.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde_json::Value;

use crate::cluster::manifests::split_documents;
use crate::flux::HelmRelease;
use crate::values::FetchedRef;

/// Defined with the other error types (see `crate::support::error`), which wrap it.
pub use crate::support::error::ReleaseFileError;

/// One document of a release file: the object and the file it came from.
#[derive(Debug, Clone)]
struct Document {
    file: String,
    object: serde_json::Map<String, Value>,
}

/// The documents of every `--release-file`, in order.
#[derive(Debug, Clone, Default)]
pub struct ReleaseFiles {
    /// How each file is named in messages (`-` is "stdin").
    labels: Vec<String>,
    docs: Vec<Document>,
}

/// What a `--release-file` argument names: a file, or standard input for `-`.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

impl ReleaseFiles {
    /// Reads every file (`-`: standard input, read once) and parses its documents.
    pub fn read(paths: &[PathBuf]) -> Result<ReleaseFiles, ReleaseFileError> {
        Self::parse(read_texts(paths)?)
    }
}

/// Each file's name as messages give it and its text, in order (`-`: standard input).
pub fn read_texts(paths: &[PathBuf]) -> Result<Vec<(String, String)>, ReleaseFileError> {
    let mut texts = Vec::new();
    for path in paths {
        let (label, text) = if is_stdin(path) {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
                .map_err(|e| ReleaseFileError::Read { file: "-".into(), reason: e.to_string() })?;
            ("stdin".to_string(), text)
        } else {
            let label = path.display().to_string();
            let text = std::fs::read_to_string(path)
                .map_err(|e| ReleaseFileError::Read { file: label.clone(), reason: e.to_string() })?;
            (label, text)
        };
        texts.push((label, text));
    }
    Ok(texts)
}

impl ReleaseFiles {
    /// Parses `(label, text)` pairs, as [`read`](Self::read) does with the files' contents.
    pub fn parse(texts: Vec<(String, String)>) -> Result<ReleaseFiles, ReleaseFileError> {
        let mut out = ReleaseFiles::default();
        for (label, text) in texts {
            for doc in split_documents(&text) {
                let source = format!("{label} line {}", doc.line);
                let object = crate::values::parse_values(&doc.text, &source)
                    .map_err(|e| ReleaseFileError::Yaml { file: label.clone(), message: e.to_string() })?;
                if object.is_empty() {
                    continue;
                }
                out.docs.push(Document { file: label.clone(), object });
            }
            out.labels.push(label);
        }
        Ok(out)
    }

    /// Objects already read (those a Kustomization build applies), named `label` in messages.
    pub fn from_objects(
        label: &str,
        objects: impl IntoIterator<Item = serde_json::Map<String, Value>>,
    ) -> ReleaseFiles {
        let docs = objects.into_iter().map(|object| Document { file: label.to_string(), object }).collect();
        ReleaseFiles { labels: vec![label.to_string()], docs }
    }

    /// [`parse`](Self::parse) file by file, leaving out the files that are not YAML documents (a
    /// directory of manifests may hold templates and other texts): the files read, and each file left
    /// out with why. `parsed` keeps what was parsed, by file and text, for the next call: the two sides
    /// of a review mostly hold the same files.
    pub fn parse_each(
        texts: Vec<(String, String)>,
        parsed: &mut std::collections::HashMap<(String, String), Result<ReleaseFiles, String>>,
    ) -> (ReleaseFiles, Vec<(String, String)>) {
        let mut out = ReleaseFiles::default();
        let mut left_out = Vec::new();
        for (label, text) in texts {
            let key = (label.clone(), text);
            let one = parsed.entry(key).or_insert_with_key(|(label, text)| {
                ReleaseFiles::parse(vec![(label.clone(), text.clone())]).map_err(|e| e.to_string())
            });
            match one {
                Ok(files) => {
                    out.labels.extend(files.labels.iter().cloned());
                    out.docs.extend(files.docs.iter().cloned());
                }
                Err(why) => left_out.push((label, why.clone())),
            }
        }
        (out, left_out)
    }

    /// Every HelmRelease of the files, in order, each in the namespace it would be applied in (a
    /// document without one: `default_namespace`); one that is not a valid HelmRelease is left out.
    pub fn helmreleases(&self, default_namespace: &str) -> Vec<HelmRelease> {
        self.objects(crate::flux::helmrelease::GROUP, crate::flux::helmrelease::KIND)
            .filter_map(|o| {
                let mut object = o.clone();
                if let Some(Value::Object(m)) = object.get_mut("metadata")
                    && m.get("namespace").and_then(Value::as_str).is_none_or(str::is_empty)
                {
                    m.insert("namespace".into(), Value::String(default_namespace.to_string()));
                }
                serde_json::from_value(Value::Object(object)).ok()
            })
            .collect()
    }

    /// The objects of `kind` in API `group` ("" for the core group), whatever their version.
    pub fn objects<'a>(
        &'a self,
        group: &'a str,
        kind: &'a str,
    ) -> impl Iterator<Item = &'a serde_json::Map<String, Value>> + 'a {
        self.docs.iter().filter(move |d| is_kind(&d.object, group, kind)).map(|d| &d.object)
    }

    /// The files, as messages name them.
    pub fn files(&self) -> String {
        self.labels.join(", ")
    }

    /// HelmRelease `name`: in `namespace` when given, else in whichever namespace the files put it (a
    /// document without one is in `default_namespace`). Exactly one must match.
    pub fn helmrelease(
        &self,
        name: &str,
        namespace: Option<&str>,
        default_namespace: &str,
    ) -> Result<HelmRelease, ReleaseFileError> {
        let releases: Vec<(&Document, String, String)> = self
            .docs
            .iter()
            .filter(|d| is_kind(&d.object, crate::flux::helmrelease::GROUP, crate::flux::helmrelease::KIND))
            .map(|d| (d, meta(&d.object, "name"), meta(&d.object, "namespace")))
            .map(|(d, n, ns)| (d, n, if ns.is_empty() { default_namespace.to_string() } else { ns }))
            .collect();
        let matching: Vec<&(&Document, String, String)> =
            releases.iter().filter(|(_, n, ns)| n == name && namespace.is_none_or(|want| want == ns)).collect();
        let (doc, _, ns) = match matching.as_slice() {
            [] => {
                return Err(ReleaseFileError::NotFound {
                    name: name.to_string(),
                    namespace: namespace.map(String::from),
                    files: self.files(),
                    found: releases.iter().map(|(_, n, ns)| format!("{ns}/{n}")).collect(),
                });
            }
            [one] => *one,
            [first, rest @ ..] => {
                let mut namespaces: Vec<String> = matching.iter().map(|(_, _, ns)| ns.clone()).collect();
                namespaces.sort();
                namespaces.dedup();
                return Err(if namespaces.len() == 1 || rest.iter().all(|r| r.2 == first.2) {
                    ReleaseFileError::Twice { name: name.to_string(), namespace: first.2.clone(), files: self.files() }
                } else {
                    ReleaseFileError::Ambiguous { name: name.to_string(), namespaces, files: self.files() }
                });
            }
        };
        let mut object = doc.object.clone();
        // The namespace it would be applied in, as the API server would store it.
        if let Some(Value::Object(m)) = object.get_mut("metadata") {
            m.insert("namespace".into(), Value::String(ns.clone()));
        }
        serde_json::from_value(Value::Object(object)).map_err(|e| ReleaseFileError::BadHelmRelease {
            file: doc.file.clone(),
            name: name.to_string(),
            reason: e.to_string(),
        })
    }

    /// Every `valuesFrom` source of `hr`, from the files, as the cluster path fetches them: a missing
    /// object or key is only forgiven when the reference is `optional`.
    pub fn values_from(&self, hr: &HelmRelease) -> Result<Vec<FetchedRef>, ReleaseFileError> {
        let ns = hr.namespace();
        let mut out = Vec::new();
        for r in &hr.spec.values_from {
            if r.kind != "ConfigMap" && r.kind != "Secret" {
                return Err(ReleaseFileError::BadKind { kind: r.kind.clone(), name: r.name.clone() });
            }
            let key = r.key();
            let object = format!("{} {ns}/{}", r.kind, r.name);
            let found: Vec<&Document> = self
                .docs
                .iter()
                .filter(|d| is_kind(&d.object, "", &r.kind) && meta(&d.object, "name") == r.name)
                .filter(|d| {
                    let dns = meta(&d.object, "namespace");
                    dns == ns || dns.is_empty()
                })
                .collect();
            let doc = match found.as_slice() {
                [] if r.optional => None,
                [] => {
                    return Err(ReleaseFileError::MissingSource { object, files: self.files() });
                }
                [one] => Some(*one),
                _ => {
                    return Err(ReleaseFileError::SourceTwice { object, files: self.files() });
                }
            };
            let data = match doc {
                None => None,
                Some(doc) => {
                    let data = source_data(doc, &r.kind, &object)?;
                    match data.get(key) {
                        Some(text) => Some(text.clone()),
                        None if r.optional => None,
                        None => {
                            return Err(ReleaseFileError::MissingKey {
                                object,
                                key: key.to_string(),
                                file: doc.file.clone(),
                            });
                        }
                    }
                }
            };
            out.push(FetchedRef { reference: r.clone(), data });
        }
        Ok(out)
    }
}

/// The text under each key of a ConfigMap (`data`) or Secret (`data` decoded, then `stringData`).
fn source_data(doc: &Document, kind: &str, object: &str) -> Result<BTreeMap<String, String>, ReleaseFileError> {
    let bad = |key: &str, problem| ReleaseFileError::BadValue {
        file: doc.file.clone(),
        object: object.to_string(),
        key: key.to_string(),
        problem,
    };
    let mut out = BTreeMap::new();
    let strings = |field: &str| -> Result<Vec<(String, String)>, ReleaseFileError> {
        match doc.object.get(field) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Object(m)) => m
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) => Ok((k.clone(), s.clone())),
                    _ => Err(bad(k, "is not a string")),
                })
                .collect(),
            Some(_) => Err(bad(field, "is not a mapping")),
        }
    };
    if kind == "Secret" {
        for (key, encoded) in strings("data")? {
            // Go's encoding/json reads []byte with the standard alphabet and padding; line breaks are skipped.
            let compact: String = encoded.chars().filter(|c| !matches!(c, '\n' | '\r')).collect();
            let bytes = base64::engine::general_purpose::STANDARD.decode(compact.as_bytes()).map_err(|e| {
                ReleaseFileError::Base64 {
                    file: doc.file.clone(),
                    object: object.to_string(),
                    key: key.clone(),
                    reason: e.to_string(),
                }
            })?;
            let text = String::from_utf8(bytes).map_err(|_| bad(&key, "is not UTF-8 text"))?;
            out.insert(key, text);
        }
        out.extend(strings("stringData")?);
    } else {
        out.extend(strings("data")?);
    }
    Ok(out)
}

fn meta(object: &serde_json::Map<String, Value>, field: &str) -> String {
    object.get("metadata").and_then(|m| m.get(field)).and_then(Value::as_str).unwrap_or_default().to_string()
}

/// Whether the object is of `kind` in API `group` ("" for the core group), whatever its version.
fn is_kind(object: &serde_json::Map<String, Value>, group: &str, kind: &str) -> bool {
    let api_version = object.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    let g = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    g == group && object.get("kind").and_then(Value::as_str) == Some(kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: web
  namespace: apps
spec:
  values:
    replicas: 2
  valuesFrom:
  - kind: ConfigMap
    name: web-values
  - kind: Secret
    name: web-secret
    valuesKey: password
    targetPath: auth.password
  - kind: Secret
    name: absent
    optional: true
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-values
  namespace: apps
data:
  values.yaml: |
    color: blue
---
apiVersion: v1
kind: Secret
metadata:
  name: web-secret
  namespace: apps
data:
  password: aHVudGVyMg==
stringData:
  other: x
";

    fn files(text: &str) -> ReleaseFiles {
        ReleaseFiles::parse(vec![("hr.yaml".into(), text.into())]).unwrap()
    }

    #[test]
    fn reads_the_helmrelease_and_its_sources() {
        let f = files(FILE);
        let hr = f.helmrelease("web", None, "default").unwrap();
        assert_eq!(hr.namespace(), "apps");
        let refs = f.values_from(&hr).unwrap();
        let data: Vec<Option<&str>> = refs.iter().map(|r| r.data.as_deref()).collect();
        assert_eq!(data, [Some("color: blue\n"), Some("hunter2"), None]);
        assert!(f.helmrelease("web", Some("apps"), "default").is_ok());
    }

    #[test]
    fn bad_input_is_one_clear_line() {
        let f = files(FILE);
        let e = f.helmrelease("db", None, "default").unwrap_err().to_string();
        assert_eq!(e, "no HelmRelease \"db\" in --release-file hr.yaml (it holds HelmRelease apps/web)");
        let e = f.helmrelease("web", Some("other"), "default").unwrap_err().to_string();
        assert!(e.contains("in namespace \"other\""), "{e}");

        let twice = files(&format!("{FILE}---\n{}", FILE.split("---").next().unwrap()));
        let e = twice.helmrelease("web", None, "default").unwrap_err().to_string();
        assert_eq!(e, "HelmRelease apps/web appears more than once in --release-file hr.yaml: keep one");
        let two_ns = files(&format!("{FILE}---\n{}", FILE.split("---").next().unwrap().replace("apps", "prod")));
        let e = two_ns.helmrelease("web", None, "default").unwrap_err().to_string();
        assert!(e.contains("(apps, prod)") && e.contains("-n NAMESPACE"), "{e}");

        let bad = files(&FILE.replace("aHVudGVyMg==", "not*base64"));
        let hr = bad.helmrelease("web", None, "default").unwrap();
        let e = bad.values_from(&hr).unwrap_err().to_string();
        assert!(
            e.starts_with("--release-file hr.yaml: Secret apps/web-secret data key \"password\" is not valid base64"),
            "{e}"
        );

        let missing = files(FILE.split("---\napiVersion: v1\nkind: Secret").next().unwrap());
        let hr = missing.helmrelease("web", None, "default").unwrap();
        let e = missing.values_from(&hr).unwrap_err().to_string();
        assert_eq!(
            e,
            "valuesFrom Secret apps/web-secret is not in --release-file hr.yaml (add it to one of them, or mark the reference optional: true)"
        );
    }

    #[test]
    fn string_data_wins_and_a_document_without_namespace_takes_the_default() {
        let text = FILE.replace("  namespace: apps\n", "").replace("other: x", "password: plain");
        let f = files(&text);
        let hr = f.helmrelease("web", None, "tenant").unwrap();
        assert_eq!(hr.namespace(), "tenant");
        let refs = f.values_from(&hr).unwrap();
        assert_eq!(refs[1].data.as_deref(), Some("plain"));
    }
}
