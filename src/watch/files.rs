//! File notifications: the notifier ([`notify`]: inotify, FSEvents, kqueue) asked for what [`Watched`]
//! names, and its events that are changes (not reads) of covered paths sent on as [`Change::File`].

use notify::Watcher as _;
use tokio::sync::mpsc;

use super::round::Change;
use super::watched::Watched;
use crate::support::error::WatchError;

/// Whether a notification is a change of content or of the directory (not a read: inotify also reports
/// opens, and every render opens the chart's files).
fn is_change(kind: &notify::EventKind) -> bool {
    use notify::event::{AccessKind, AccessMode, EventKind, MetadataKind, ModifyKind};
    match kind {
        EventKind::Create(_) | EventKind::Remove(_) | EventKind::Any => true,
        EventKind::Modify(ModifyKind::Metadata(MetadataKind::AccessTime)) => false,
        EventKind::Modify(_) => true,
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) | EventKind::Other => false,
    }
}

/// The files watched for changes; dropping it stops the notifications.
pub struct FileWatch {
    _watcher: notify::RecommendedWatcher,
}

/// Starts watching `watched`; relevant changes arrive on `tx`.
pub fn watch_files(watched: &Watched, tx: mpsc::UnboundedSender<Change>) -> Result<FileWatch, WatchError> {
    let filter = watched.clone();
    // The notifier calls this on its own thread; an unbounded channel never blocks it.
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        let Ok(event) = res else { return };
        if !is_change(&event.kind) {
            return;
        }
        for path in event.paths {
            if filter.covers(&path) {
                let _ = tx.send(Change::File(path));
            }
        }
    })
    .map_err(WatchError::Start)?;
    for (dir, recursive) in watched.watches() {
        let mode = if recursive { notify::RecursiveMode::Recursive } else { notify::RecursiveMode::NonRecursive };
        watcher.watch(&dir, mode).map_err(|source| WatchError::Watch { path: dir.clone(), source })?;
    }
    Ok(FileWatch { _watcher: watcher })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::debounce::{QUIET, debounce};
    use super::super::watched::chart_beside_library;
    use super::*;

    #[test]
    fn reads_are_no_change() {
        use notify::event::{AccessKind, AccessMode, CreateKind, EventKind, ModifyKind, RenameMode};
        assert!(!is_change(&EventKind::Access(AccessKind::Open(AccessMode::Any))));
        assert!(!is_change(&EventKind::Access(AccessKind::Close(AccessMode::Read))));
        assert!(is_change(&EventKind::Access(AccessKind::Close(AccessMode::Write))));
        assert!(is_change(&EventKind::Modify(ModifyKind::Name(RenameMode::To))));
        assert!(is_change(&EventKind::Create(CreateKind::File)));
    }

    #[tokio::test]
    async fn file_saves_arrive_and_reads_do_not() {
        let dir = chart_beside_library();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let w = Watched::for_chart(&root.join("chart"), &[]);
        let (tx, mut rx) = mpsc::unbounded_channel();
        let _watch = watch_files(&w, tx).unwrap();
        // Reading is no change.
        std::fs::read_to_string(root.join("lib/templates/_h.tpl")).unwrap();
        assert!(tokio::time::timeout(Duration::from_millis(300), rx.recv()).await.is_err(), "a read started a round");
        // A save through the link's target (the library chart) is.
        std::fs::write(root.join("lib/templates/_h.tpl"), "{{/* x */}}").unwrap();
        let burst = tokio::time::timeout(Duration::from_secs(5), debounce(&mut rx, QUIET)).await.unwrap().unwrap();
        assert!(burst.iter().any(|c| matches!(c, Change::File(p) if p.ends_with("_h.tpl"))), "{burst:?}");
    }
}
