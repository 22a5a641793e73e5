//! The two states a comparison of Git refs reads: a commit, and the work tree or a second commit; their
//! files, and for a review what each holds ([`Listing`]) and the paths that differ. `review` lists both
//! sides whole ([`Sides::open`]); one release's `diff --against git:REF` reads only the paths it renders
//! ([`Sides::against_work_tree`]). Only Git's read-only plumbing runs (see [`crate::source::gitref`]): no
//! checkout, no index of the user's touched.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::source::gitref::{Blobs, Listing, Repo, Tree};
use crate::support::error::{Error, Result};

/// The refs a review compares, as the command line spells them after `git:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refs {
    /// `REF`: the ref against the work tree.
    WorkTree { old: String },
    /// `A..B`: commit A against commit B.
    Commits { old: String, new: String },
    /// `A...B`: where B branched from A (their merge base) against B, as a pull request shows it.
    MergeBase { base: String, new: String },
}

impl Refs {
    /// `REF`, `A..B` or `A...B`; None for an empty ref on either side.
    pub fn parse(spec: &str) -> Option<Refs> {
        let nonempty = |s: &str| (!s.is_empty()).then(|| s.to_string());
        if let Some((a, b)) = spec.split_once("...") {
            return Some(Refs::MergeBase { base: nonempty(a)?, new: nonempty(b)? });
        }
        if let Some((a, b)) = spec.split_once("..") {
            return Some(Refs::Commits { old: nonempty(a)?, new: nonempty(b)? });
        }
        Some(Refs::WorkTree { old: nonempty(spec)? })
    }
}

/// One side: a commit, or the work tree.
pub struct Side {
    /// As people name it: `git:REF` or `the work tree`.
    pub label: String,
    /// The commit, None for the work tree.
    pub commit: Option<String>,
    /// What it holds; empty when it was not listed ([`Sides::against_work_tree`]).
    pub listing: Listing,
    /// A listed commit's files are read with it.
    blobs: Option<Blobs>,
}

/// The repository, its two sides, and the paths that differ between them.
pub struct Sides {
    pub repo: Repo,
    pub old: Side,
    pub new: Side,
    /// Repository paths added, changed or removed (untracked files of the work tree included).
    pub changed: BTreeSet<PathBuf>,
}

impl Sides {
    /// The repository `dir` is in, and the two sides `refs` names (see [`Refs::parse`]), each listed,
    /// and what differs between them: the Git commands of each run side by side.
    pub async fn open(dir: &Path, refs: &str) -> Result<Sides> {
        let parsed = Refs::parse(refs).ok_or_else(|| Error::Invalid {
            what: format!("git:{refs}"),
            reason: "name a ref (git:REF), two refs (git:A..B), or a pull request's base and head (git:A...B)".into(),
        })?;
        let repo = Repo::of(dir).await?;
        let commit_side = |label: String, commit: String| {
            let repo = repo.clone();
            async move {
                let blobs = repo.blobs_reader();
                let listing = repo.list_commit(&commit, &blobs).await?;
                Ok::<_, Error>(Side { label, commit: Some(commit), listing, blobs: Some(blobs) })
            }
        };
        let (old, new, mut changed) = match parsed {
            Refs::WorkTree { old } => {
                let commit_and_changes = async {
                    let commit = repo.commit(&old).await?;
                    tokio::try_join!(commit_side(format!("git:{old}"), commit.clone()), async {
                        Ok(repo.changed(&commit, None).await?)
                    })
                };
                let ((old, changed), listing) =
                    tokio::try_join!(commit_and_changes, async { Ok(repo.list_worktree().await?) })?;
                (old, Side { label: "the work tree".into(), commit: None, listing, blobs: None }, changed)
            }
            Refs::Commits { old, new } => {
                let (a, b) = tokio::try_join!(repo.commit(&old), repo.commit(&new))?;
                tokio::try_join!(
                    commit_side(format!("git:{old}"), a.clone()),
                    commit_side(format!("git:{new}"), b.clone()),
                    async { Ok(repo.changed(&a, Some(&b)).await?) },
                )?
            }
            Refs::MergeBase { base, new } => {
                let (a, b) = tokio::try_join!(repo.commit(&base), repo.commit(&new))?;
                let merge_base = repo.merge_base(&a, &b).await?;
                tokio::try_join!(
                    commit_side(format!("the merge base of git:{base} and git:{new}"), merge_base.clone()),
                    commit_side(format!("git:{new}"), b.clone()),
                    async { Ok(repo.changed(&merge_base, Some(&b)).await?) },
                )?
            }
        };
        changed.extend(new.listing.untracked.iter().cloned());
        Ok(Sides { repo, old, new, changed })
    }

    /// `git_ref` against the work tree of the repository `dir` is in, neither listed nor compared: the
    /// ref's files are written out as they are asked for ([`on_disk`](Self::on_disk), [`add`](Self::add)).
    pub async fn against_work_tree(dir: &Path, git_ref: &str) -> Result<Sides> {
        let repo = Repo::of(dir).await?;
        let commit = repo.commit(git_ref).await?;
        let old =
            Side { label: format!("git:{git_ref}"), commit: Some(commit), listing: Listing::default(), blobs: None };
        let new = Side { label: "the work tree".into(), commit: None, listing: Listing::default(), blobs: None };
        Ok(Sides { repo, old, new, changed: BTreeSet::new() })
    }

    /// Ends what reading the sides started (see [`Blobs::close`]).
    pub async fn close(&self) {
        for blobs in [&self.old.blobs, &self.new.blobs].into_iter().flatten() {
            blobs.close().await;
        }
    }

    /// `scope` (relative to `dir` unless absolute) as a path relative to the repository's top. A path
    /// outside the repository is an error; one that exists at neither side is found empty later.
    pub fn scope(&self, dir: &Path, scope: &Path) -> Result<PathBuf> {
        let joined = if scope.is_absolute() { scope.to_path_buf() } else { dir.join(scope) };
        if let Some(rel) = self.repo.relative(&joined) {
            return Ok(rel);
        }
        // Not on disk (a directory the work tree no longer has): by name, from the top.
        let absolute = if joined.is_absolute() {
            joined.clone()
        } else {
            std::env::current_dir().map(|d| d.join(&joined)).unwrap_or(joined.clone())
        };
        lexical(&absolute).strip_prefix(self.repo.top()).map(Path::to_path_buf).map_err(|_| {
            Error::Failed(format!("{} is outside the repository at {}", scope.display(), self.repo.top().display()))
        })
    }

    /// The contents of the files `paths` at `side` (what is not a file there is left out).
    pub async fn read(&self, side: &Side, paths: &[PathBuf]) -> Result<BTreeMap<PathBuf, Vec<u8>>> {
        match &side.blobs {
            Some(blobs) => Ok(side.listing.read(blobs, paths).await?),
            None => Ok(paths
                .iter()
                .filter(|p| side.listing.entries.contains_key(*p))
                .filter_map(|p| std::fs::read(self.repo.top().join(p)).ok().map(|b| (p.clone(), b)))
                .collect()),
        }
    }

    /// Where `side`'s files of `paths` can be read from disk: the work tree itself, or a private
    /// temporary copy of those paths of the commit (links followed, see [`Repo::materialise`]).
    pub async fn on_disk(&self, side: &Side, paths: &[PathBuf]) -> Result<OnDisk> {
        match (&side.commit, &side.blobs) {
            (Some(commit), Some(blobs)) => Ok(OnDisk::Tree(side.listing.materialise(blobs, commit, paths).await?)),
            (Some(commit), None) => Ok(OnDisk::Tree(self.repo.materialise(commit.clone(), &side.label, paths).await?)),
            (None, _) => Ok(OnDisk::WorkTree(self.repo.top().to_path_buf())),
        }
    }

    /// Writes `paths` too into a commit's copy made by [`on_disk`](Self::on_disk) (the work tree has
    /// them already), as they are at that commit, links followed.
    pub async fn add(&self, on_disk: &OnDisk, paths: &[PathBuf]) -> Result<()> {
        match on_disk {
            OnDisk::Tree(tree) => Ok(self.repo.add(tree, &tree.commit, paths).await?),
            OnDisk::WorkTree(_) => Ok(()),
        }
    }
}

/// A side's files on disk.
pub enum OnDisk {
    WorkTree(PathBuf),
    Tree(Tree),
}

impl OnDisk {
    /// The repository's top, as the side has it.
    pub fn root(&self) -> &Path {
        match self {
            OnDisk::WorkTree(top) => top,
            OnDisk::Tree(tree) => tree.root(),
        }
    }

    /// Where repository path `rel` is.
    pub fn path(&self, rel: &Path) -> PathBuf {
        match self {
            OnDisk::WorkTree(top) => top.join(rel),
            OnDisk::Tree(tree) => tree.path(rel),
        }
    }

    /// Whether the side has repository path `rel` (a file, or a directory with files).
    pub fn has(&self, rel: &Path) -> bool {
        std::fs::symlink_metadata(self.path(rel)).is_ok()
    }
}

/// `path` with `.` and `..` worked out by name.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_are_one_two_or_a_pull_request() {
        assert_eq!(Refs::parse("origin/main"), Some(Refs::WorkTree { old: "origin/main".into() }));
        assert_eq!(Refs::parse("v1..v2"), Some(Refs::Commits { old: "v1".into(), new: "v2".into() }));
        assert_eq!(Refs::parse("main...topic"), Some(Refs::MergeBase { base: "main".into(), new: "topic".into() }));
        assert_eq!(Refs::parse(""), None);
        assert_eq!(Refs::parse("..b"), None);
        assert_eq!(Refs::parse("a..."), None);
    }
}
