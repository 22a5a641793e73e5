//! Turns of the builds that share one staged tree. kustomize-controller builds each Kustomization in a
//! copy of its own; here the builds of all clusters share one copy of a side, and a build whose path
//! needs a kustomization file of its own writes it into that copy for as long as kustomize reads it
//! ([`super::generate`]). So builds run side by side except where one writes a file another reads:
//!
//! - a build reads what its [`Reads`] say, and writes at most one file;
//! - a look at the tree (cutting an artifact) reads anything; working out what a build reads is done
//!   again in a turn that reads what it found, until both agree;
//! - a turn waits while a turn already taken writes a file it reads, or reads the file it writes.
//!
//! Turns are taken by tasks of one thread (the review's): waiting is an await, never a blocked thread.

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};

use tokio::sync::Notify;

use super::kustomization::Kustomization;
use super::reads::Reads;

/// The turns taken in one tree.
#[derive(Default)]
pub struct Turns {
    taken: RefCell<Vec<Taken>>,
    next: Cell<u64>,
    ended: Notify,
}

/// What a turn reads (None: anything) and writes.
struct Taken {
    id: u64,
    reads: Option<Reads>,
    writes: Option<PathBuf>,
}

/// A turn, given back when dropped.
pub struct Turn<'a> {
    turns: &'a Turns,
    id: u64,
}

impl Turns {
    /// A turn to look at anything in the tree, while nothing is written.
    pub async fn look(&self) -> Turn<'_> {
        self.take(None, None).await
    }

    /// A turn to build with what `reads` says, writing `writes` (a path in the tree) if any.
    pub async fn build(&self, reads: &Reads, writes: Option<&Path>) -> Turn<'_> {
        self.take(Some(reads.clone()), writes.map(Path::to_path_buf)).await
    }

    /// What a build of `k` in the tree at `root` reads ([`Reads::of_kustomization`]), as no build has
    /// written it: while a build writes, worked out again in a turn that reads it until both agree
    /// (nothing it read was being written).
    pub async fn reads(&self, root: &Path, k: &Kustomization) -> Reads {
        // Worked out in one go (no other task runs meanwhile): only a file written now can mislead it.
        let writing = self.taken.borrow().iter().any(|t| t.writes.is_some());
        let mut reads = Reads::of_kustomization(root, k);
        if !writing {
            return reads;
        }
        loop {
            let _turn = self.build(&reads, None).await;
            let again = Reads::of_kustomization(root, k);
            if again == reads {
                return reads;
            }
            reads = again;
        }
    }

    async fn take(&self, reads: Option<Reads>, writes: Option<PathBuf>) -> Turn<'_> {
        let wanted = Taken { id: self.next.get(), reads, writes };
        self.next.set(wanted.id + 1);
        loop {
            // Created before looking, so that a turn given back in between still wakes it.
            let ended = self.ended.notified();
            if !self.taken.borrow().iter().any(|t| t.clashes(&wanted)) {
                let id = wanted.id;
                self.taken.borrow_mut().push(wanted);
                return Turn { turns: self, id };
            }
            ended.await;
        }
    }
}

impl Taken {
    fn clashes(&self, other: &Taken) -> bool {
        let reads = |t: &Taken, file: &Path| t.reads.as_ref().is_none_or(|r| r.touches(file));
        self.writes.as_deref().is_some_and(|f| reads(other, f))
            || other.writes.as_deref().is_some_and(|f| reads(self, f))
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        self.turns.taken.borrow_mut().retain(|t| t.id != self.id);
        self.turns.ended.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reads(dir: &str) -> Reads {
        let mut r = Reads::default();
        r.add_dir(PathBuf::from(dir));
        r
    }

    #[tokio::test]
    async fn a_write_waits_only_for_what_reads_its_file() {
        let turns = Turns::default();
        let staging = turns.build(&reads("apps/staging"), None).await;
        // Another path's file is written at once.
        let other = Path::new("clusters/edge/kustomization.yaml");
        let edge = tokio::time::timeout(
            std::time::Duration::from_millis(50),
            turns.build(&reads("clusters/edge"), Some(other)),
        )
        .await
        .expect("no clash");
        // A file the first build reads waits for it; a look waits for any write.
        let mine = Path::new("apps/staging/kustomization.yaml");
        let wait = std::time::Duration::from_millis(50);
        assert!(tokio::time::timeout(wait, turns.build(&reads("apps/staging"), Some(mine))).await.is_err());
        assert!(tokio::time::timeout(wait, turns.look()).await.is_err());
        drop(edge);
        let look = tokio::time::timeout(wait, turns.look()).await.expect("nothing written now");
        drop((look, staging));
        tokio::time::timeout(wait, turns.build(&reads("apps/staging"), Some(mine)))
            .await
            .expect("nothing reads it now");
    }
}
