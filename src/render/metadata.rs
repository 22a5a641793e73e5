//! Flux's metadata-only post-render steps (`commonMetadata` labels and annotations, then the origin
//! labels) done in process, without a kustomize run.
//!
//! helm-controller runs these steps as kustomize LabelTransformer / AnnotationsTransformer over a kustomize
//! resource map (`internal/postrender/common_renderer.go`, `transformer.go`): every document is decoded with
//! go-yaml v3 into Go values, the keys are set under `metadata.labels` / `metadata.annotations` (created when
//! missing), and each object is written back out as YAML with its keys sorted. Decoding changes meaning in
//! places (YAML 1.2 rules: `yes` is a string, a plain `2001-12-14` becomes a timestamp, `1.0` becomes `1`),
//! kustomize drops its own `config.kubernetes.io/*` annotations and an empty `metadata.annotations`, and it
//! rejects lists and duplicate objects.
//!
//! This module reproduces that for the documents charts almost always render: block and flow collections,
//! strings, booleans, null and decimal integers, with comments, anchors and block scalars. Anything else
//! (an alias, a tag, a float, a plain scalar that go-yaml v3 might read as a number or a timestamp, a
//! non-string key, a duplicate key or object, a `List`, kustomize's own annotations) makes [`apply`]
//! answer [`Outcome::Unsupported`], and the caller runs the real kustomize instead. Being exact on the
//! common case and deferring on the rest keeps Flux's behaviour without a hand-written YAML engine. The
//! scalar rules are go-yaml v3's, in [`crate::go::yaml_v3`].

use std::collections::{BTreeMap, HashSet};

use crate::cluster::manifests::{ObjectId, RawDocument, is_blank_document, split_documents};
use crate::go::yaml_tree::Node;
use crate::go::yaml_v3;

/// Which metadata map a step writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Labels,
    Annotations,
}

impl Field {
    fn key(self) -> &'static str {
        match self {
            Field::Labels => "labels",
            Field::Annotations => "annotations",
        }
    }
}

/// One transformer: set these keys in every object's `metadata.<field>`, overwriting.
#[derive(Clone, Debug)]
pub struct Step<'a> {
    pub field: Field,
    pub entries: &'a BTreeMap<String, String>,
}

#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The transformed stream.
    Done(String),
    /// Why the stream needs the real kustomize (for the debug log).
    Unsupported(String),
}

/// One document of a manifest stream, cut as helm-controller reads it (see [`Origin`]), with the template
/// Helm names for it and whether it is a Helm hook.
#[derive(Clone, Debug)]
pub struct Document {
    pub text: String,
    pub source: Option<String>,
    pub line: usize,
    pub hook: bool,
}

/// The non-blank documents of `stream`, each cut as the newest Helm SDK ([`Splitting::default`]) reads
/// it given where the stream comes from; for a kustomize build, whose documents are read as they are.
pub fn documents(stream: &str, origin: Origin) -> Vec<Document> {
    documents_split(stream, origin, Splitting::default())
}

/// [`documents`], for the Helm SDK whose `splitting` is given.
pub fn documents_split(stream: &str, origin: Origin, splitting: Splitting) -> Vec<Document> {
    documents_of(split_documents(stream), origin, splitting)
}

/// [`documents_split`] of a stream already split.
pub(crate) fn documents_of(docs: Vec<RawDocument>, origin: Origin, splitting: Splitting) -> Vec<Document> {
    let ends = document_ends(&docs, origin, splitting);
    docs.into_iter()
        .zip(ends)
        .filter(|(d, _)| !is_blank_document(&d.text))
        .map(|(d, end)| {
            let text = end.cut(&d.text).to_string();
            let hook = text.contains("helm.sh/hook") && is_hook(&text);
            Document { text, source: d.source, line: d.line, hook }
        })
        .collect()
}

/// Whether a document carries Helm's `helm.sh/hook` annotation.
fn is_hook(text: &str) -> bool {
    matches!(yaml_v3::decode_tree(text), Ok(Some(v))
        if v.get("metadata").and_then(|m| m.get("annotations")).and_then(|a| a.get("helm.sh/hook")).is_some())
}

/// The documents as a stream again, `---` before each.
pub fn stream(docs: &[Document]) -> String {
    docs.iter().fold(String::new(), |mut out, d| {
        out.push_str("---\n");
        out.push_str(&d.text);
        out.push('\n');
        out
    })
}

/// Runs `steps` in order over every object of `docs`. Each object comes out as `---`, the `# Source:`
/// comment it had (Helm names the template there), and the object as YAML with sorted keys.
pub fn apply(docs: &[Document], steps: &[Step<'_>]) -> Outcome {
    match transform(docs, steps) {
        Ok(out) => Outcome::Done(out),
        Err(why) => Outcome::Unsupported(why),
    }
}

fn transform(docs: &[Document], steps: &[Step<'_>]) -> Result<String, String> {
    let done = crate::support::par::map_ordered(docs, |doc| transform_document(doc, steps));
    let mut out = String::with_capacity(docs.iter().map(|d| d.text.len() + d.text.len() / 4).sum());
    let mut seen = HashSet::with_capacity(docs.len());
    for (doc, result) in docs.iter().zip(done) {
        let Some((id, yaml)) = result? else { continue };
        if let Some(id) = seen.replace(id) {
            return Err(format!("line {}: {id} appears twice", doc.line));
        }
        out.push_str(&yaml);
    }
    Ok(out)
}

/// One document through the steps: its identity and its output text (`---`, `# Source:`, YAML). The
/// identity is what must be unique in kustomize's resource map; lists, which kustomize expands (and
/// rejects when their items lack metadata), are left to it.
fn transform_document(doc: &Document, steps: &[Step<'_>]) -> Result<Option<(ObjectId, String)>, String> {
    let at = |why: String| format!("line {}: {why}", doc.line);
    // kustomize skips empty documents and rejects anything but an object.
    let Some(mut object) = yaml_v3::decode_tree(&doc.text).map_err(at)? else { return Ok(None) };
    let id = ObjectId::from_node(&object).map_err(|e| at(e.to_string()))?;
    if id.kind.ends_with("List") {
        return Err(at(format!("kind {} may be a list", id.kind)));
    }
    let metadata = object
        .entry("metadata", || Node::Null)
        .filter(|m| matches!(m, Node::Map(_)))
        .ok_or_else(|| at("metadata is not a mapping".into()))?;
    set_metadata(metadata, steps).map_err(at)?;
    let mut out = String::with_capacity(doc.text.len() + doc.text.len() / 2 + 64);
    out.push_str("---\n");
    if let Some(source) = &doc.source {
        out.push_str("# Source: ");
        out.push_str(source);
        out.push('\n');
    }
    crate::go::yaml::write(&object, &mut out).map_err(at)?;
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(Some((id, out)))
}

/// Where a manifest stream comes from. It decides how the end of each document is read, which matters for
/// a block scalar that ends a document (`config.yaml: |` as the last lines before a `---`).
///
/// What helm-controller reads there depends on its Helm SDK ([`Splitting`]); the local Helm shows the
/// documents in its own way, so each origin says how to get back to what helm-controller reads. The
/// template is named by the `# Source:` comment, or by Helm 4's `postrenderer.helm.sh/postrender-filename`
/// annotation; a document with neither is read as is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Helm 3 (`helm template`, or its post-renderer input): every document trimmed, one newline added;
    /// Helm 4 post-renderer input: every document re-written by kyaml. In both, a template's last
    /// document is read as it is (with Helm 3 that is right whenever the template ends with a newline,
    /// as templates do; Helm 3 keeps nothing better).
    Helm,
    /// `helm template` of Helm 4: documents keep their whitespace (4.3+), and Helm adds one newline.
    Helm4Template,
    /// A kustomize build: read as it is, as helm-controller reads it.
    Kustomize,
}

pub use crate::controller::helm_sdk::Splitting;

/// How much of a document's end to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    AsIs,
    /// Without trailing whitespace (not the last document of its template).
    Trim,
    /// Without the one newline Helm added after it.
    DropNewline,
}

impl End {
    fn cut(self, text: &str) -> &str {
        match self {
            End::AsIs => text,
            End::Trim => text.trim_end(),
            End::DropNewline => text.strip_suffix('\n').unwrap_or(text),
        }
    }
}

/// The end of each document, given where the stream comes from (see [`Origin`]). A template's last
/// document is taken to be the last one naming it in the stream: documents keep their order within a
/// template, but Helm sorts by kind, so with several kinds in one template this is a guess
/// ([`template_order_matters`] says when the guess could change a value).
fn document_ends(docs: &[RawDocument], origin: Origin, splitting: Splitting) -> Vec<End> {
    let last_end = match origin {
        Origin::Kustomize => return vec![End::AsIs; docs.len()],
        Origin::Helm => End::AsIs,
        Origin::Helm4Template => End::DropNewline,
    };
    // What the SDK leaves of a document's end: all of it, none of it, or all but of its template's last.
    let (last_end, other_end) = match splitting {
        Splitting::Yaml | Splitting::Line => (last_end, last_end),
        Splitting::Trim => (End::Trim, End::Trim),
        Splitting::Cut => (last_end, End::Trim),
    };
    let mut seen = HashSet::new();
    let mut ends = vec![End::AsIs; docs.len()];
    for (i, doc) in docs.iter().enumerate().rev() {
        if let Some(t) = template_of(doc) {
            // Going backwards, the first document of a template met is its last.
            ends[i] = if seen.insert(t) { last_end } else { other_end };
        }
    }
    // Helm 4's `helm template` trims the end of its whole output before its final newline: the stream's
    // last document keeps no ending of its own to go back to, and is read with the newline a template
    // ends with (as templates do).
    if origin == Origin::Helm4Template
        && let Some(last) = ends.last_mut()
        && *last == End::DropNewline
    {
        *last = End::AsIs;
    }
    ends
}

fn template_of(doc: &RawDocument) -> Option<&str> {
    doc.source.as_deref().or_else(|| filename_annotation(&doc.text))
}

/// Whether the kind-sorted `helm template` output of Helm 4 hides something that decides a value, which
/// only an SDK that ends a template's last document otherwise than the others ([`Splitting::Cut`]) can
/// make so: a template rendering several kinds (or hooks, which Helm orders on its own), one of whose
/// documents reads differently as its template's last document than as any other. Helm's post-renderer
/// input keeps the template order; the caller then lets Helm run the post-renderer.
pub(crate) fn template_order_matters(docs: &[RawDocument], splitting: Splitting) -> bool {
    if splitting != Splitting::Cut {
        // Every document of a template ends alike, last or not.
        return false;
    }
    let mut kinds: std::collections::HashMap<&str, HashSet<Option<&str>>> = std::collections::HashMap::new();
    for doc in docs {
        if let Some(t) = template_of(doc) {
            // A hook may be moved anywhere: it counts as a kind of its own.
            let kind = if doc.text.contains("helm.sh/hook") { None } else { kind_line(&doc.text) };
            kinds.entry(t).or_default().insert(kind);
        }
    }
    docs.iter().any(|doc| {
        let mixed = template_of(doc).is_some_and(|t| kinds.get(t).is_some_and(|k| k.len() > 1 || k.contains(&None)));
        mixed && {
            let (trimmed, last) = (End::Trim.cut(&doc.text), End::DropNewline.cut(&doc.text));
            trimmed != last
                && match (yaml_v3::decode(trimmed), yaml_v3::decode(last)) {
                    (Ok(a), Ok(b)) => a != b,
                    // Unreadable here: let Helm's own post-renderer input decide.
                    _ => true,
                }
        }
    })
}
/// The top-level `kind:` of a document, read from its text (a cheap grouping key, not a parse).
fn kind_line(text: &str) -> Option<&str> {
    text.lines().find_map(|l| l.strip_prefix("kind:")).map(str::trim)
}

/// The value of Helm 4's `postrenderer.helm.sh/postrender-filename` annotation as kyaml writes it.
fn filename_annotation(text: &str) -> Option<&str> {
    text.lines().find_map(|l| {
        let value = l.trim_start().strip_prefix("postrenderer.helm.sh/postrender-filename:")?.trim();
        Some(value.trim_matches(|c| c == '\'' || c == '"'))
    })
}

/// Annotation prefixes kustomize uses internally and strips from its output.
const KUSTOMIZE_INTERNAL: [&str; 3] =
    ["config.kubernetes.io/", "internal.config.kubernetes.io/", "kustomize.config.k8s.io/"];

/// `metadata` is a mapping.
fn set_metadata(metadata: &mut Node<'_>, steps: &[Step<'_>]) -> Result<(), String> {
    if let Some(Node::Map(annotations)) = metadata.get("annotations")
        && annotations.iter().any(|(k, _)| KUSTOMIZE_INTERNAL.iter().any(|p| k.starts_with(p)))
    {
        return Err("kustomize-internal annotation".into());
    }
    for step in steps {
        let field = step.field.key();
        let slot = metadata.entry(field, || Node::Null).ok_or("metadata is not a mapping")?;
        if *slot == Node::Null {
            *slot = Node::Map(Vec::new());
        }
        if !matches!(slot, Node::Map(_)) {
            return Err(format!("metadata.{field} is not a mapping"));
        }
        for (k, v) in step.entries {
            if let Some(value) = slot.entry(k, || Node::Null) {
                *value = Node::Str(v.clone().into());
            }
        }
    }
    // kustomize removes an annotations map left empty (or null) once its own bookkeeping is gone.
    if metadata.get("annotations").is_some_and(|a| *a == Node::Null || *a == Node::Map(Vec::new())) {
        metadata.remove("annotations");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn origin() -> BTreeMap<String, String> {
        BTreeMap::from([
            ("helm.toolkit.fluxcd.io/name".to_string(), "app".to_string()),
            ("helm.toolkit.fluxcd.io/namespace".to_string(), "flux".to_string()),
        ])
    }

    fn run(stream: &str, steps: &[Step<'_>]) -> String {
        match apply(&documents(stream, Origin::Kustomize), steps) {
            Outcome::Done(out) => out,
            Outcome::Unsupported(why) => panic!("unsupported: {why}"),
        }
    }

    fn unsupported(stream: &str) -> String {
        let labels = origin();
        match apply(&documents(stream, Origin::Kustomize), &[Step { field: Field::Labels, entries: &labels }]) {
            Outcome::Unsupported(why) => why,
            Outcome::Done(out) => panic!("expected a fallback to kustomize, got:\n{out}"),
        }
    }

    fn cm(body: &str) -> String {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n{body}")
    }

    /// Long strings as real charts render them (a generated certificate's base64, a long description):
    /// written whole, as they were read. (In these debug builds the writer is checked against serde-saphyr.)
    #[test]
    fn long_strings_come_out_as_they_went_in() {
        let cert = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t".repeat(40);
        let about = "Validates every object the operator owns before it is admitted, ".repeat(3);
        let stream = format!(
            "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: w\n  annotations:\n    description: {about}end\nwebhooks:\n- name: v.example.com\n  clientConfig:\n    caBundle: {cert}\n"
        );
        let out = run(&stream, &[]);
        let docs = crate::cluster::manifests::parse_manifests(&out).expect("the output reads back");
        assert_eq!(docs[0].object.pointer("/webhooks/0/clientConfig/caBundle"), Some(&Value::String(cert)));
        assert_eq!(
            docs[0].object.pointer("/metadata/annotations/description"),
            Some(&Value::String(format!("{about}end")))
        );
    }

    #[test]
    fn sets_labels_then_annotations_in_order_and_keeps_sources() {
        let common = BTreeMap::from([
            ("team".to_string(), "platform".to_string()),
            ("helm.toolkit.fluxcd.io/name".to_string(), "common".to_string()),
        ]);
        let notes = BTreeMap::from([("example.com/contact".to_string(), "me".to_string())]);
        let origin = origin();
        let steps = [
            Step { field: Field::Labels, entries: &common },
            Step { field: Field::Annotations, entries: &notes },
            Step { field: Field::Labels, entries: &origin },
        ];
        let stream = "---\n# Source: demo/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a # why\n  labels:\n    keep: \"1\"\n    team: old\ndata:\n  z: \"1\"\n  a: |\n    multi\n    line\n";
        assert_eq!(
            run(stream, &steps),
            "---\n# Source: demo/templates/cm.yaml\napiVersion: v1\ndata:\n  a: |\n    multi\n    line\n  z: \"1\"\nkind: ConfigMap\nmetadata:\n  annotations:\n    example.com/contact: me\n  labels:\n    helm.toolkit.fluxcd.io/name: app\n    helm.toolkit.fluxcd.io/namespace: flux\n    keep: \"1\"\n    team: platform\n  name: a\n"
        );
    }

    #[test]
    fn decodes_plain_scalars_as_go_yaml_v3() {
        let out = run(
            &cm(
                "data:\n  on: yes\n  n: n\n  ver: 1.2.3\n  mem: 512Mi\n  jvm: -Xmx512m\n  dash: -x-\n  t: True\n  i: -42\n  z: 0\n  nul: ~\n  e:\n  q: '0644'\n  dot: .hidden\n  dots: ...x\n",
            ),
            &[],
        );
        let v: Value = serde_saphyr::from_str(&out.replace("---\n", "")).unwrap();
        let d = &v["data"];
        assert_eq!(d["on"], "yes");
        assert_eq!(d["n"], "n");
        assert_eq!(d["ver"], "1.2.3");
        assert_eq!(d["mem"], "512Mi");
        assert_eq!(d["jvm"], "-Xmx512m");
        assert_eq!(d["dash"], "-x-");
        assert_eq!(d["t"], true);
        assert_eq!(d["i"], -42);
        assert_eq!(d["z"], 0);
        assert_eq!(d["nul"], Value::Null);
        assert_eq!(d["e"], Value::Null);
        assert_eq!(d["q"], "0644");
        assert_eq!(d["dot"], ".hidden");
        // Strings YAML 1.1 reads as something else stay quoted on the way out, for Helm's go-yaml.
        for quoted in ["\"yes\"", "\"n\"", "\"0644\""] {
            assert!(out.contains(quoted), "{quoted} in\n{out}");
        }
    }

    #[test]
    fn drops_empty_annotations_and_fills_null_labels_like_kustomize() {
        let labels = origin();
        let out = run(
            &cm("  labels: null\n  annotations: {}\nstatus: null\nspec: {}\n"),
            &[Step { field: Field::Labels, entries: &labels }],
        );
        assert!(!out.contains("annotations"), "{out}");
        assert!(out.contains("helm.toolkit.fluxcd.io/name: app"), "{out}");
        assert!(out.contains("status: null") && out.contains("spec: {}"), "{out}");
    }

    #[test]
    fn defers_to_kustomize_when_go_yaml_v3_might_differ() {
        for (body, why) in [
            ("data:\n  a: &x v\n  b: *x\n", "alias"),
            ("data:\n  d: 2001-12-14\n", "timestamp"),
            ("data:\n  f: 1.0\n", "number"),
            ("data:\n  f: 1e3\n", "number"),
            ("data:\n  o: 0644\n", "number"),
            ("data:\n  h: 0x1F\n", "number"),
            ("data:\n  u: 1_000\n", "number"),
            ("data:\n  f: .5\n", "float"),
            ("data:\n  f: -.inf\n", "float"),
            ("data:\n  b: !!binary aGk=\n", "tagged"),
            ("data:\n  <<: {a: b}\n", "merge"),
            ("data:\n  a: 1\n  a: 2\n", "duplicate"),
            ("data:\n  true: x\n", "non-string key"),
            ("data:\n  big: 99999999999999999999\n", "beyond 64 bits"),
        ] {
            let reason = unsupported(&cm(body));
            assert!(reason.contains(why), "{body:?}: {reason}");
        }
        assert!(unsupported("apiVersion: v1\nkind: List\nmetadata:\n  name: l\nitems: []\n").contains("list"));
        assert!(unsupported(&format!("{}---\n{}", cm(""), cm(""))).contains("twice"));
        assert!(
            unsupported(&cm("  annotations:\n    config.kubernetes.io/index: '1'\n")).contains("kustomize-internal")
        );
        assert!(unsupported("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels: {}\n").contains("metadata.name"));
        assert!(unsupported("- a\n").contains("not a mapping"));
        assert!(unsupported(&cm("  labels: [a]\n")).contains("not a mapping"));
    }

    #[test]
    fn skips_blank_and_null_documents() {
        let out = run(&format!("---\n# Source: x\n---\nnull\n---\n{}", cm("")), &[]);
        assert_eq!(out, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n");
    }

    #[test]
    fn block_scalars_ending_a_document_lose_the_newline_except_in_a_templates_last() {
        let doc = |name: &str, source: &str| {
            format!(
                "---\n# Source: {source}\n{}",
                cm("data:\n  a: |\n    x\n\n").replacen("name: a", &format!("name: {name}"), 1)
            )
        };
        // Helm 3 sorts by kind, so one template's documents need not be adjacent.
        let stream = [doc("a1", "c/t/a.yaml"), doc("b1", "c/t/b.yaml"), doc("a2", "c/t/a.yaml")].concat();
        let out = run_helm(&stream);
        let value = |name: &str| {
            let objs = crate::cluster::manifests::parse_manifests(&out).unwrap();
            objs.into_iter().find(|m| m.id.name == name).unwrap().object["data"]["a"].clone()
        };
        assert_eq!(value("a1"), "x", "{out}");
        assert_eq!(value("a2"), "x\n", "{out}");
        assert_eq!(value("b1"), "x\n", "{out}");
        // Helm 4 names the template in an annotation.
        let helm4 = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a1\n  annotations:\n    postrenderer.helm.sh/postrender-filename: 'c/t/a.yaml'\ndata:\n  a: |\n    x\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a2\n  annotations:\n    postrenderer.helm.sh/postrender-filename: 'c/t/a.yaml'\ndata:\n  a: |\n    x\n";
        let out = run_helm(helm4);
        assert!(out.contains("a: x\n") && out.contains("a: |\n    x\n"), "{out}");
        // Without Helm's view of templates (after a kustomize build) nothing is trimmed.
        assert_eq!(run(&stream, &[]).matches("a: |\n    x\n").count(), 3);
    }

    #[test]
    fn helm_4_1_and_4_2_4_keep_the_newline_of_every_document() {
        // helm-controller 1.5.0-1.5.4: Helm 4.1 parses each template's output whole as YAML; 1.6.4: Helm
        // 4.2.4 cuts at the `---` line. Helm 3's output (trimmed, a newline added) gives it back.
        let stream = "---\n# Source: c/t/a.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: a1\nstringData:\n  a: |\n    x\n---\n# Source: c/t/a.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: a2\nstringData:\n  a: |\n    x\n";
        let cases = [
            (Splitting::Cut, "x", "x\n"),
            (Splitting::Yaml, "x\n", "x\n"),
            (Splitting::Line, "x\n", "x\n"),
            // helm-controller 1.5.3's fork trims every document, its template's last too.
            (Splitting::Trim, "x", "x"),
        ];
        for (splitting, first, last) in cases {
            let docs = documents_split(stream, Origin::Helm, splitting);
            let Outcome::Done(out) = apply(&docs, &[]) else { panic!("unsupported") };
            let objs = crate::cluster::manifests::parse_manifests(&out).unwrap();
            assert_eq!(objs[0].object["stringData"]["a"], first, "{splitting:?}: {out}");
            assert_eq!(objs[1].object["stringData"]["a"], last, "{splitting:?}: {out}");
        }
    }

    #[test]
    fn helm4_template_output_keeps_a_templates_own_ending() {
        // Helm 4.3 `helm template`: documents keep their whitespace and Helm adds a newline after each.
        let doc = |name: &str, tail: &str| {
            format!(
                "---\n# Source: c/t/a.yaml\n{}{tail}\n",
                cm("data:\n  a: |+\n    x\n").replacen("name: a", &format!("name: {name}"), 1)
            )
        };
        // Another template's document after them: the stream's last is read differently (below).
        let other = "---\n# Source: c/t/z.yaml\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: z\n";
        let stream = [doc("a1", "\n"), doc("a2", "\n"), other.to_string()].concat();
        // Helm 4.2.0-4.2.3 cut the first one's ending away; 4.1 and 4.2.4 keep it.
        for (splitting, first) in [(Splitting::Cut, "x"), (Splitting::Line, "x\n\n"), (Splitting::Yaml, "x\n\n")] {
            let out = match apply(&documents_split(&stream, Origin::Helm4Template, splitting), &[]) {
                Outcome::Done(out) => out,
                Outcome::Unsupported(why) => panic!("{why}"),
            };
            let values: Vec<Value> = crate::cluster::manifests::parse_manifests(&out)
                .unwrap()
                .into_iter()
                .filter(|m| m.id.kind == "ConfigMap")
                .map(|m| m.object["data"]["a"].clone())
                .collect();
            assert_eq!(values, [first, "x\n\n"], "{splitting:?}: {out}");
        }
        // The stream's last document: Helm trimmed the output's end, so it is read as ending in the
        // newline its template ends with.
        let last = format!("{}---\n# Source: c/t/b.yaml\n{}", stream, cm("data:\n  a: |\n    x\n"));
        let out = match apply(&documents(&last, Origin::Helm4Template), &[]) {
            Outcome::Done(out) => out,
            Outcome::Unsupported(why) => panic!("{why}"),
        };
        let objects = crate::cluster::manifests::parse_manifests(&out).unwrap();
        assert_eq!(objects.last().unwrap().object["data"]["a"], "x\n", "{out}");
    }

    #[test]
    fn template_order_matters_only_where_a_value_depends_on_it() {
        let cm_block = |name: &str| {
            format!(
                "---\n# Source: c/t/a.yaml\n{}\n\n",
                cm("data:\n  a: |\n    x\n").replacen("name: a", &format!("name: {name}"), 1)
            )
        };
        let order_matters = |stream: &str| template_order_matters(&split_documents(stream), Splitting::Cut);
        let svc = "---\n# Source: c/t/a.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\n\n";
        let plain_cm = format!("---\n# Source: c/t/a.yaml\n{}\n\n", cm("data:\n  a: x\n"));
        // One kind: the stream order is the template order.
        assert!(!order_matters(&[cm_block("a1"), cm_block("a2")].concat()));
        // Two kinds, but no document ends in a block scalar.
        assert!(!order_matters(&[plain_cm.clone(), svc.to_string()].concat()));
        // Two kinds and a block scalar at a document's end: which document was last decides its value.
        assert!(order_matters(&[cm_block("a1"), svc.to_string()].concat()));
        // A hook of the same kind is ordered by Helm on its own.
        let hook =
            cm_block("h").replacen("  name: h\n", "  name: h\n  annotations:\n    helm.sh/hook: pre-install\n", 1);
        assert!(order_matters(&[cm_block("a1"), hook.clone()].concat()));
        // An SDK that keeps every document's ending reads them alike in any order.
        for keeps in [Splitting::Line, Splitting::Yaml, Splitting::Trim] {
            assert!(!template_order_matters(&split_documents(&[cm_block("a1"), hook.clone()].concat()), keeps));
        }
    }

    fn run_helm(stream: &str) -> String {
        match apply(&documents_split(stream, Origin::Helm, Splitting::Cut), &[]) {
            Outcome::Done(out) => out,
            Outcome::Unsupported(why) => panic!("{why}"),
        }
    }
}
