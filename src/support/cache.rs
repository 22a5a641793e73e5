//! cozyhr's own cache directory: `$XDG_CACHE_HOME/cozyhr` (else `~/.cache/cozyhr`). Everything kept there
//! only spares work (Helm's version per binary, the cluster's discovery, the arguments of the last render):
//! trouble reading or writing it means doing the work, never an error. Nothing secret is kept there.

use std::path::{Path, PathBuf};

/// The directory; None without a home directory.
pub fn dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("cozyhr"))
}

/// A short file name for a key: the first 8 bytes of its SHA-256 in hex.
pub fn key_name(key: &str) -> String {
    let mut hex = cozyhr_go::digest::sha256_hex(key.as_bytes());
    hex.truncate(16);
    hex
}

/// Writes `file` whole (aside, then renamed over it, so a concurrent reader never sees half of it), only
/// readable by the user. Best effort.
pub fn write(file: &Path, contents: &[u8]) {
    let Some(dir) = file.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    // NamedTempFile is created 0600.
    if let Ok(tmp) = tempfile::NamedTempFile::new_in(dir)
        && std::fs::write(tmp.path(), contents).is_ok()
    {
        let _ = tmp.persist(file);
    }
}
