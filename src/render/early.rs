//! Starting helm before the cluster has answered.
//!
//! Before `show` or `diff` can run `helm template`, the cluster is asked for the HelmRelease, its
//! valuesFrom sources, the stored release and its discovery: a few round trips, while Helm itself spends
//! its first tens of milliseconds starting up before it reads any values. So helm is started at once
//! with the arguments the same release was last rendered with (kept in cozyhr's cache: release name,
//! namespace, chart path, capabilities; never values), its values to come on its standard input. Once the
//! answers are in, the arguments are built as always: if they are the same, the waiting helm gets its
//! values; if anything differs (a new CRD, a changed HelmRelease, a first run), it is killed unread and a
//! new one started. The output is therefore always that of helm run with the right arguments.

use std::ffi::OsString;
use std::path::PathBuf;

use super::helm::Helm;
use crate::support::process::Running;

/// A helm perhaps started ahead, and where the arguments of this render are remembered.
pub struct Early {
    file: Option<PathBuf>,
    guess: Option<(Vec<OsString>, Running)>,
    /// The arguments of the guess (kept after the guess is taken), to skip rewriting the same file.
    guessed: Vec<OsString>,
    remember: bool,
}

impl Early {
    /// Starts helm with the arguments remembered under `key` (what identifies the render: helm, cluster,
    /// HelmRelease, chart directory), if any. Never fails: without a guess, nothing is started.
    pub fn start(helm: &Helm, key: &[&str]) -> Early {
        let mut parts = vec![crate::VERSION, helm.version.as_str()];
        parts.extend_from_slice(key);
        let bin = helm.bin.to_string_lossy();
        parts.push(&bin);
        let name = crate::support::cache::key_name(&parts.join("\0"));
        let file = crate::support::cache::dir().map(|d| d.join("render").join(format!("{name}.json")));
        let guessed: Vec<OsString> = file
            .as_ref()
            .and_then(|f| std::fs::read(f).ok())
            .and_then(|text| serde_json::from_slice::<Vec<String>>(&text).ok())
            .map(|args| args.into_iter().map(OsString::from).collect())
            .unwrap_or_default();
        let guess = (!guessed.is_empty())
            .then(|| helm.spawn(&guessed, &[], true).ok())
            .flatten()
            .map(|running| (guessed.clone(), running));
        tracing::debug!(started = guess.is_some(), "helm started ahead");
        Early { file, guess, guessed, remember: true }
    }

    /// Whether the arguments of this render are worth remembering (not when they name a temporary copy).
    pub(crate) fn remembering(mut self, remember: bool) -> Early {
        self.remember = remember;
        self
    }

    /// The helm started ahead, if it was started with exactly `args`; else it is killed (dropped).
    pub(crate) fn take_if_started_with(&mut self, args: &[OsString]) -> Option<Running> {
        let (guessed, running) = self.guess.take()?;
        let same = guessed == args;
        tracing::debug!(same, "arguments of the helm started ahead");
        same.then_some(running)
    }

    /// Keeps `args` for the next render of the same release (only arguments: values come on stdin); for a
    /// render whose arguments are not to be kept, forgets what was kept, which could only be wrong.
    pub(crate) fn remember(self, args: &[OsString]) {
        if !self.remember {
            if let (Some(file), false) = (&self.file, self.guessed.is_empty()) {
                let _ = std::fs::remove_file(file);
            }
            return;
        }
        if self.guessed == args {
            return;
        }
        let (Some(file), Some(args)) =
            (self.file, args.iter().map(|a| a.to_str().map(String::from)).collect::<Option<Vec<String>>>())
        else {
            return;
        };
        if let Ok(text) = serde_json::to_vec(&args) {
            crate::support::cache::write(&file, &text);
        }
    }
}
