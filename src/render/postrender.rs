//! Flux's post-render chain, run by `helm-cozy __post-render` as Helm's post-renderer:
//!
//! 1. each `spec.postRenderers[].kustomize` in order: a kustomize build of the manifests with its
//!    `patches` and `images` (helm-controller `internal/postrender/kustomize.go`);
//! 2. `spec.commonMetadata`: labels, then annotations, on `metadata` only, overwriting;
//! 3. always: the origin labels `helm.toolkit.fluxcd.io/name` and `.../namespace`, which win over 2.
//!
//! kustomize is the real one that kubectl embeds (`kubectl kustomize`), never a hand-written patch engine.
//! Steps 2 and 3 are kustomize's builtin LabelTransformer / AnnotationsTransformer with the field specs
//! helm-controller uses, run in one build in that order. Every manifest therefore goes through kustomize
//! at least once, as under helm-controller (which drops comments and normalises formatting).
//!
//! Wiring into Helm: Helm 3 takes an executable (`--post-renderer PATH --post-renderer-args ...`); Helm 4
//! takes only a plugin name, so a throw-away postrenderer/v1 plugin pointing at this binary is written to a
//! private temporary directory and put first on HELM_PLUGINS for the child helm (no install, no signing).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::metadata::{self, Field, Origin, Outcome, Step};
use crate::cluster::manifests::split_documents;
use crate::flux::helmrelease::{CommonMetadata, GROUP};
use crate::flux::spec::HookStrategy;
use crate::support::error::RenderError;
use crate::support::process::run_program;

/// The argument that turns helm-cozy into the post-renderer.
pub const POST_RENDER_ARG: &str = "__post-render";
/// Environment variable with the path of the spec file.
pub const SPEC_ENV: &str = "COZYHR_POSTRENDER_SPEC";
/// Helm 4 drops a post-renderer's stderr; the error is also written here for the parent to print.
pub const LOG_ENV: &str = "COZYHR_POSTRENDER_LOG";
const PLUGIN_NAME: &str = "cozy-postrender";

/// What the post-renderer needs to know about the HelmRelease.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PostRenderSpec {
    pub hr_name: String,
    pub hr_namespace: String,
    /// `spec.postRenderers`, verbatim.
    #[serde(default)]
    pub post_renderers: Vec<Value>,
    #[serde(default)]
    pub common_metadata: Option<CommonMetadata>,
    /// How hooks meet the chain: `spec.postRenderStrategy` as helm-controller's version reads it
    /// ([`crate::controller::Rules::hook_strategy`]).
    #[serde(default)]
    pub post_render_strategy: HookStrategy,
    /// How helm-controller's Helm SDK cuts documents ([`metadata::Splitting`]).
    #[serde(default)]
    pub splitting: metadata::Splitting,
    /// The kubectl whose embedded kustomize runs the chain.
    pub kubectl: PathBuf,
}

/// Runs the chain over a multi-document manifest stream from `origin` (Helm's post-renderer input, or
/// `helm template` output). Helm's documents are read as helm-controller's Helm reads them, which differs
/// from the local Helm at the end of documents ([`metadata::Origin`]); the output of a kustomize build is
/// read as it is, as helm-controller reads it. Hooks go through the chain as `spec.postRenderStrategy`
/// says ([`HookStrategy`]).
pub async fn run(spec: &PostRenderSpec, manifests: &str, origin: Origin) -> Result<String, RenderError> {
    run_documents(spec, metadata::documents_split(manifests, origin, spec.splitting), manifests).await
}

/// [`run`] over the documents of `manifests`.
async fn run_documents(
    spec: &PostRenderSpec,
    docs: Vec<metadata::Document>,
    manifests: &str,
) -> Result<String, RenderError> {
    if docs.is_empty() {
        // Nothing to transform (a chart that renders no objects); kustomize would reject an empty input.
        return Ok(manifests.to_string());
    }
    if spec.post_render_strategy == HookStrategy::Combined {
        return chain(spec, docs).await;
    }
    let (hooks, rest): (Vec<_>, Vec<_>) = docs.into_iter().partition(|d| d.hook);
    match spec.post_render_strategy {
        HookStrategy::Combined | HookStrategy::Separate => Ok(chain(spec, rest).await? + &chain(spec, hooks).await?),
        HookStrategy::NoHooks => {
            // Hooks pass untouched; re-written without steps so that they read as they were cut.
            let untouched = match metadata::apply(&hooks, &[]) {
                Outcome::Done(out) => out,
                Outcome::Unsupported(_) => metadata::stream(&hooks),
            };
            Ok(chain(spec, rest).await? + &untouched)
        }
    }
}

/// The chain over one group of documents: kustomize postRenderers, commonMetadata, origin labels.
async fn chain(spec: &PostRenderSpec, input: Vec<metadata::Document>) -> Result<String, RenderError> {
    if input.is_empty() {
        return Ok(String::new());
    }
    // The documents after the last kustomize build, if any.
    let mut built: Option<Vec<metadata::Document>> = None;
    for (i, pr) in spec.post_renderers.iter().enumerate() {
        let Some(k) = pr.get("kustomize") else { continue };
        let mut kustomization = json!({
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
        });
        for field in ["patches", "images"] {
            if let Some(v) = k.get(field).filter(|v| !v.is_null()) {
                kustomization[field] = v.clone();
            }
        }
        let out = kustomize(&spec.kubectl, built.as_deref().unwrap_or(&input), kustomization, &[])
            .await
            .map_err(|e| RenderError::PostRender(format!("postRenderers[{i}].kustomize: {e}")))?;
        built = Some(metadata::documents(&out, Origin::Kustomize));
    }
    let docs = built.as_deref().unwrap_or(&input);
    let origin_labels = BTreeMap::from([
        (format!("{GROUP}/name"), spec.hr_name.clone()),
        (format!("{GROUP}/namespace"), spec.hr_namespace.clone()),
    ]);
    let common = spec.common_metadata.as_ref();
    let mut steps = Vec::new();
    if let Some(labels) = common.and_then(|c| c.labels.as_ref()) {
        steps.push(Step { field: Field::Labels, entries: labels });
    }
    if let Some(annotations) = common.and_then(|c| c.annotations.as_ref()) {
        steps.push(Step { field: Field::Annotations, entries: annotations });
    }
    steps.push(Step { field: Field::Labels, entries: &origin_labels });
    match metadata::apply(docs, &steps) {
        // Without a kustomize build in front, the documents kept their `# Source:` comments.
        Outcome::Done(out) if built.is_some() => return Ok(restore_sources(&input, &out)),
        Outcome::Done(out) => return Ok(out),
        Outcome::Unsupported(why) => tracing::debug!(%why, "commonMetadata and origin labels through kustomize"),
    }
    // The same steps as ordered transformers of one kustomize build; "fifo" keeps the order of the
    // objects as they came (helm-controller transforms the resource map in place, without sorting).
    let transformers: Vec<(String, Value)> = steps
        .iter()
        .enumerate()
        .map(|(i, step)| {
            let (kind, field) = match step.field {
                Field::Labels => ("LabelTransformer", "labels"),
                Field::Annotations => ("AnnotationsTransformer", "annotations"),
            };
            (format!("step-{i}.yaml"), transformer(&format!("step-{i}"), kind, field, step.entries))
        })
        .collect();
    let kustomization = json!({
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "transformers": transformers.iter().map(|(f, _)| f.as_str()).collect::<Vec<_>>(),
        "sortOptions": { "order": "fifo" },
    });
    let out = kustomize(&spec.kubectl, docs, kustomization, &transformers)
        .await
        .map_err(|e| RenderError::PostRender(format!("commonMetadata and origin labels: {e}")))?;
    Ok(restore_sources(&input, &out))
}

/// Flux's chain over `helm template` output (rendered without a post-renderer), in this process: what
/// `show` and `diff` use. It spares Helm's own post-render pass, which for Helm 4 is a kyaml round trip of
/// every document, and the post-renderer process. `helm template` prints hooks too, so they meet the chain
/// as `spec.postRenderStrategy` says, as under helm-controller. `None` when Helm 4's kind-sorted
/// output hides a template order that decides a value (`metadata::template_order_matters`): the caller
/// then renders through Helm's post-renderer, whose input keeps that order.
pub async fn run_on_template_output(
    spec: &PostRenderSpec,
    manifests: &str,
    helm_major: u32,
) -> Result<Option<String>, RenderError> {
    let origin = if helm_major >= 4 { Origin::Helm4Template } else { Origin::Helm };
    let split = split_documents(manifests);
    if origin == Origin::Helm4Template && metadata::template_order_matters(&split, spec.splitting) {
        return Ok(None);
    }
    run_documents(spec, metadata::documents_of(split, origin, spec.splitting), manifests).await.map(Some)
}

/// kustomize drops comments, and with them Helm 3's `# Source: <template>` lines, which `--show-only`
/// and people rely on. Puts them back in front of each object, matched by object identity. (Helm 4 tracks
/// the template in an annotation instead and restores the comments itself; its input has none.)
fn restore_sources(input: &[metadata::Document], output: &str) -> String {
    let Ok(before) = crate::cluster::manifests::parse_manifests(&metadata::stream(input)) else {
        return output.to_string();
    };
    let sources: std::collections::HashMap<_, _> =
        before.into_iter().filter_map(|m| m.source.map(|s| (m.id, s))).collect();
    if sources.is_empty() {
        return output.to_string();
    }
    let mut out = String::with_capacity(output.len() + sources.len() * 40);
    for doc in split_documents(output) {
        let id =
            crate::cluster::manifests::parse_manifests(&doc.text).ok().and_then(|m| m.into_iter().next()).map(|m| m.id);
        let source = id.as_ref().and_then(|id| sources.get(id)).map(String::as_str);
        push_document(&mut out, source, &doc.text);
    }
    out
}

/// Appends `---`, a `# Source:` line when there is a template to name, and the document.
fn push_document(out: &mut String, source: Option<&str>, text: &str) {
    out.push_str("---\n");
    if let Some(src) = source {
        out.push_str("# Source: ");
        out.push_str(src);
        out.push('\n');
    }
    out.push_str(text.trim_start_matches('\n'));
    if !text.ends_with('\n') {
        out.push('\n');
    }
}

/// Checks `--show-only` globs, so that a bad one is reported before anything is rendered.
pub fn check_show_only(globs: &[String]) -> Result<(), RenderError> {
    show_only_globs(globs).map(drop)
}

/// Helm matches `--show-only` with Go's `filepath.Match`.
fn show_only_globs(globs: &[String]) -> Result<Vec<crate::go::path::Pattern>, RenderError> {
    globs
        .iter()
        .map(|g| crate::go::path::Pattern::new(g).map_err(|e| RenderError::ShowOnly(format!("--show-only {g:?}: {e}"))))
        .collect()
}

/// Keeps the documents whose `# Source:` template matches one of `globs` (Helm's `--show-only`: the path
/// without the chart name, e.g. `templates/cm.yaml`, Go's globs). No glob keeps everything.
pub fn filter_show_only(rendered: &str, globs: &[String]) -> Result<String, RenderError> {
    if globs.is_empty() {
        return Ok(rendered.to_string());
    }
    let patterns = show_only_globs(globs)?;
    let mut out = String::new();
    for doc in split_documents(rendered) {
        let Some(source) = doc.source.as_deref() else { continue };
        // Helm matches the path below the chart's own directory.
        let below_chart = source.split_once('/').map_or(source, |(_, rest)| rest);
        if patterns.iter().any(|p| p.matches(below_chart) || p.matches(source)) {
            // The document's own `# Source:` line is part of its text.
            push_document(&mut out, None, &doc.text);
        }
    }
    if out.is_empty() {
        return Err(RenderError::ShowOnly(format!(
            "--show-only: no rendered object comes from a template matching {} (see the `# Source:` lines of {} show)",
            globs.join(", "),
            crate::support::output::chart_command()
        )));
    }
    Ok(out)
}

fn transformer(name: &str, kind: &str, field: &str, map: &BTreeMap<String, String>) -> Value {
    json!({
        "apiVersion": "builtin",
        "kind": kind,
        "metadata": { "name": name },
        field: map,
        "fieldSpecs": [{ "path": format!("metadata/{field}"), "create": true }],
    })
}

/// One `kubectl kustomize` build over the documents in a private temporary directory. Each document is a
/// resource file of its own, in order, so that a document cut as helm-controller reads it (see
/// [`metadata::Origin`]) ends where its text ends: kustomize adds a newline after every document of a file
/// but the last.
async fn kustomize(
    kubectl: &Path,
    docs: &[metadata::Document],
    mut kustomization: Value,
    extra: &[(String, Value)],
) -> Result<String, RenderError> {
    let dir = crate::support::process::private_dir("cozyhr-kustomize-")?;
    let mut resources = Vec::new();
    for (i, doc) in docs.iter().enumerate() {
        let file = format!("doc-{i}.yaml");
        write_private(&dir.path().join(&file), doc.text.as_bytes())?;
        resources.push(file);
    }
    kustomization["resources"] = json!(resources);
    write_private(&dir.path().join("kustomization.yaml"), &serde_json::to_vec(&kustomization).map_err(io)?)?;
    for (file, content) in extra {
        write_private(&dir.path().join(file), &serde_json::to_vec(content).map_err(io)?)?;
    }
    let out = run_program(kubectl, &["kustomize".into(), dir.path().as_os_str().to_owned()], &[], None).await?;
    String::from_utf8(out).map_err(|e| RenderError::PostRender(format!("kustomize printed invalid UTF-8: {e}")))
}

fn io(e: serde_json::Error) -> std::io::Error {
    std::io::Error::other(e)
}

/// Writes a file only its owner can read: manifests and values may hold secrets.
pub fn write_private(path: &Path, content: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(path)?;
    f.write_all(content)
}

/// A post-renderer set up for one helm invocation: the spec file, the error log and, for Helm 4, the
/// throw-away plugin, all in one private temporary directory removed on drop (every exit path of the
/// caller, including an error or Ctrl-C that unwinds to it).
pub struct PostRenderSession {
    dir: tempfile::TempDir,
    self_exe: PathBuf,
}

impl PostRenderSession {
    pub fn new(spec: &PostRenderSpec, self_exe: PathBuf) -> Result<Self, RenderError> {
        let dir = crate::support::process::private_dir("cozyhr-postrender-")?;
        write_private(&dir.path().join("spec.json"), &serde_json::to_vec(spec).map_err(io)?)?;
        Ok(PostRenderSession { dir, self_exe })
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("error.log")
    }

    /// The helm flags that select the post-renderer.
    pub fn helm_args(&self, helm_major: u32) -> Result<Vec<OsString>, RenderError> {
        if helm_major >= 4 {
            let plugin = self.dir.path().join("plugins").join(PLUGIN_NAME);
            std::fs::create_dir_all(&plugin)?;
            let manifest = json!({
                "apiVersion": "v1",
                "type": "postrenderer/v1",
                "name": PLUGIN_NAME,
                "version": crate::VERSION,
                "runtime": "subprocess",
                "runtimeConfig": {
                    "platformCommand": [{ "command": self.self_exe, "args": [POST_RENDER_ARG] }]
                }
            });
            // JSON is YAML: Helm reads plugin.yaml with a YAML parser.
            write_private(&plugin.join("plugin.yaml"), &serde_json::to_vec_pretty(&manifest).map_err(io)?)?;
            Ok(vec!["--post-renderer".into(), PLUGIN_NAME.into()])
        } else {
            Ok(vec![
                "--post-renderer".into(),
                self.self_exe.clone().into_os_string(),
                "--post-renderer-args".into(),
                POST_RENDER_ARG.into(),
            ])
        }
    }

    /// Environment for the helm child: where the spec and log are, and (Helm 4) where our plugin is.
    pub fn helm_env(&self, helm_major: u32) -> Vec<(String, OsString)> {
        let mut env = vec![
            (SPEC_ENV.to_string(), self.dir.path().join("spec.json").into_os_string()),
            (LOG_ENV.to_string(), self.log_path().into_os_string()),
        ];
        if helm_major >= 4 {
            let mut paths = vec![self.dir.path().join("plugins")];
            match std::env::var_os("HELM_PLUGINS") {
                Some(existing) => paths.extend(std::env::split_paths(&existing)),
                // Helm's default plugins directory, which setting HELM_PLUGINS would otherwise hide.
                None => {
                    if let Some(data) = helm_data_home() {
                        paths.push(data.join("plugins"));
                    }
                }
            }
            if let Ok(joined) = std::env::join_paths(paths) {
                env.push(("HELM_PLUGINS".into(), joined));
            }
        }
        env
    }

    /// The post-renderer's own error message, if it wrote one (Helm 4 hides its stderr).
    pub fn error_log(&self) -> Option<String> {
        std::fs::read_to_string(self.log_path()).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
    }
}

fn helm_data_home() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("HELM_DATA_HOME") {
        return Some(d.into());
    }
    let base = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))?;
    Some(base.join("helm"))
}

/// The body of `helm-cozy __post-render`: manifests on stdin, the chain, result on stdout. Errors also go
/// to the log file named by [`LOG_ENV`].
pub async fn main_post_render() -> Result<(), RenderError> {
    let result = async {
        let spec_path = std::env::var_os(SPEC_ENV).ok_or_else(|| {
            RenderError::PostRender(format!(
                "{SPEC_ENV} is not set: this mode is run by {}",
                crate::support::output::chart_command()
            ))
        })?;
        let spec: PostRenderSpec = serde_json::from_slice(&std::fs::read(&spec_path)?)
            .map_err(|e| RenderError::PostRender(format!("bad spec file: {e}")))?;
        let mut input = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut input)?;
        let output = run(&spec, &input, Origin::Helm).await?;
        match crate::support::output::write_stdout(output) {
            // Helm stopped reading (it was stopped itself): nothing more to do, and nothing to say.
            Err(crate::support::output::StdoutError::ReaderGone) | Ok(()) => Ok::<(), RenderError>(()),
            Err(crate::support::output::StdoutError::Io(e)) => Err(e.into()),
        }
    }
    .await;
    if let Err(e) = &result
        && let Some(log) = std::env::var_os(LOG_ENV)
    {
        let _ = write_private(Path::new(&log), e.to_string().as_bytes());
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    const STREAM: &str = "---\n# Source: demo/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n# Source: demo/templates/svc.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  name: b\n";

    #[test]
    fn show_only_matches_paths_below_the_chart() {
        let out = filter_show_only(STREAM, &["templates/svc.yaml".into()]).unwrap();
        assert!(out.contains("kind: Service") && !out.contains("ConfigMap"), "{out}");
        let out = filter_show_only(STREAM, &["templates/*.yaml".into()]).unwrap();
        assert!(out.contains("kind: Service") && out.contains("ConfigMap"), "{out}");
        assert!(filter_show_only(STREAM, &["templates/none.yaml".into()]).is_err());
    }

    fn spec(strategy: HookStrategy) -> PostRenderSpec {
        PostRenderSpec {
            hr_name: "app".into(),
            hr_namespace: "flux".into(),
            post_renderers: Vec::new(),
            common_metadata: None,
            post_render_strategy: strategy,
            splitting: Default::default(),
            // Never run: without kustomize postRenderers these documents stay in process.
            kubectl: "/nonexistent/kubectl".into(),
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn hooks_meet_the_chain_as_the_post_render_strategy_says() {
        let stream = "---\n# Source: demo/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n# Source: demo/templates/hook.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: h\n  annotations:\n    helm.sh/hook: pre-install\n";
        let labelled = |out: &str, name: &str| {
            let objs = crate::cluster::manifests::parse_manifests(out).unwrap();
            let obj = &objs.iter().find(|m| m.id.name == name).unwrap().object;
            obj.pointer("/metadata/labels/helm.toolkit.fluxcd.io~1name").is_some()
        };
        for (strategy, hook_labelled) in
            [(HookStrategy::Combined, true), (HookStrategy::Separate, true), (HookStrategy::NoHooks, false)]
        {
            let out = run(&spec(strategy), stream, Origin::Helm).await.unwrap();
            assert!(labelled(&out, "a"), "{strategy:?}: {out}");
            assert_eq!(labelled(&out, "h"), hook_labelled, "{strategy:?}: {out}");
            assert!(out.contains("# Source: demo/templates/hook.yaml"), "{strategy:?}: {out}");
        }
    }

    #[test]
    fn sources_come_back_after_kustomize() {
        let kustomized = "apiVersion: v1\nkind: Service\nmetadata:\n  name: b\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n";
        let out = restore_sources(&metadata::documents(STREAM, Origin::Helm), kustomized);
        assert_eq!(
            out,
            "---\n# Source: demo/templates/svc.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  name: b\n---\n# Source: demo/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
        );
    }
}
