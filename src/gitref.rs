//! A chart as it is at a Git ref (`helm cozy diff --against git:REF`), materialised from the repository's
//! objects into a private temporary directory, never through the user's checkout: no checkout, no stash,
//! no index of theirs touched. Only read-only plumbing runs (`rev-parse`, `ls-tree`, `cat-file --batch`),
//! with argument vectors and literal pathspecs, and the files are written here.
//!
//! Files keep their repository-relative paths under the temporary root, so relative symlinks (a library
//! chart linked into `charts/`) resolve there as in the working tree; what such a link points at outside
//! the paths asked for is materialised too.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use crate::error::RenderError;

/// Defined with the other error types (see `crate::error`), which wrap it.
pub use crate::error::GitError;

/// The repository a directory is in.
#[derive(Debug, Clone)]
pub struct Repo {
    /// Its top-level directory, canonical.
    top: PathBuf,
}

/// Paths of a ref written into a private temporary directory, removed when dropped.
#[derive(Debug)]
pub struct Tree {
    dir: tempfile::TempDir,
    /// The commit the ref named.
    pub commit: String,
}

impl Tree {
    /// Where repository path `rel` is in this tree.
    pub fn path(&self, rel: &Path) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Whether the ref has repository path `rel` (a file, or a directory with files).
    pub fn has(&self, rel: &Path) -> bool {
        std::fs::symlink_metadata(self.path(rel)).is_ok()
    }
}

/// How many rounds of "a symlink points at something not yet written" are followed; loops end here.
const MAX_LINK_ROUNDS: usize = 16;

impl Repo {
    /// The repository `dir` is in.
    pub async fn of(dir: &Path) -> Result<Repo, GitError> {
        let out = git(dir, &["rev-parse", "--show-toplevel"], None).await.map_err(|e| match e {
            GitError::Failed { .. } => GitError::NotARepo { dir: dir.display().to_string() },
            e => e,
        })?;
        let top = String::from_utf8_lossy(&out).trim().to_string();
        let top = std::fs::canonicalize(&top).unwrap_or_else(|_| PathBuf::from(top));
        Ok(Repo { top })
    }

    pub fn top(&self) -> &Path {
        &self.top
    }

    /// `path` relative to the repository's top, if it lies inside it (symlinks resolved).
    pub fn relative(&self, path: &Path) -> Option<PathBuf> {
        let canonical = std::fs::canonicalize(path).ok()?;
        canonical.strip_prefix(&self.top).ok().map(Path::to_path_buf)
    }

    /// The commit `git_ref` names; an unknown ref is one clear error.
    pub async fn commit(&self, git_ref: &str) -> Result<String, GitError> {
        let unknown = || GitError::UnknownRef { git_ref: git_ref.to_string(), repo: self.top.display().to_string() };
        // A ref that starts with `-` would be read as an option.
        if git_ref.starts_with('-') {
            return Err(unknown());
        }
        let spec = format!("{git_ref}^{{commit}}");
        let out = git(&self.top, &["rev-parse", "--verify", "--quiet", "--end-of-options", &spec], None)
            .await
            .map_err(|e| match e {
                GitError::Failed { .. } => unknown(),
                e => e,
            })?;
        Ok(String::from_utf8_lossy(&out).trim().to_string())
    }

    /// Writes `paths` (repository-relative; an empty path is the whole tree) as they are at `git_ref`
    /// into a private temporary directory, with whatever their symlinks point at inside the repository.
    /// A path the ref does not have is simply not there ([`Tree::has`]): a chart or file added since.
    pub async fn materialise(&self, git_ref: &str, paths: &[PathBuf]) -> Result<Tree, GitError> {
        let commit = self.commit(git_ref).await?;
        let io = |source| GitError::Io { git_ref: git_ref.to_string(), source };
        let dir = crate::process::private_dir("cozyhr-git-").map_err(io)?;
        let tree = Tree { dir, commit };
        let mut written: BTreeSet<PathBuf> = BTreeSet::new();
        let mut wanted: Vec<PathBuf> = paths.to_vec();
        for _ in 0..MAX_LINK_ROUNDS {
            let entries = self.ls_tree(&tree.commit, &wanted).await?;
            let new: Vec<Entry> = entries.into_iter().filter(|e| !written.contains(&e.path)).collect();
            if new.is_empty() {
                break;
            }
            let blobs = self.blobs(&new).await?;
            let mut next = Vec::new();
            for e in &new {
                let Some(content) = blobs.get(&e.oid) else { continue };
                let dest = tree.path(&e.path);
                if let Some(parent) = dest.parent() {
                    std::fs::create_dir_all(parent).map_err(io)?;
                }
                if e.mode == "120000" {
                    let target = String::from_utf8_lossy(content).into_owned();
                    std::os::unix::fs::symlink(&target, &dest).map_err(io)?;
                    // A relative link to another place in the repository: that place is needed too.
                    if let Some(resolved) = e.path.parent().and_then(|p| lexical_join(p, Path::new(&target)))
                        && !written.iter().any(|w| is_under(&resolved, w))
                    {
                        next.push(resolved);
                    }
                } else {
                    write_private(&dest, content, e.mode == "100755").map_err(io)?;
                }
                written.insert(e.path.clone());
            }
            if next.is_empty() {
                break;
            }
            wanted = next;
        }
        Ok(tree)
    }

    /// The blobs and links under `paths` at `commit` (submodules are left out: they are other repositories).
    async fn ls_tree(&self, commit: &str, paths: &[PathBuf]) -> Result<Vec<Entry>, GitError> {
        let mut args: Vec<OsString> =
            ["--literal-pathspecs", "ls-tree", "-r", "-z", "--full-tree", commit, "--"].map(OsString::from).to_vec();
        args.extend(paths.iter().filter(|p| !p.as_os_str().is_empty()).map(|p| p.as_os_str().to_owned()));
        let out = git_os(&self.top, &args, None).await?;
        let mut entries = Vec::new();
        for record in out.split(|b| *b == 0).filter(|r| !r.is_empty()) {
            let text = String::from_utf8_lossy(record);
            let Some((meta, path)) = text.split_once('\t') else { continue };
            let mut parts = meta.split(' ');
            let (Some(mode), Some(kind), Some(oid)) = (parts.next(), parts.next(), parts.next()) else { continue };
            if kind != "blob" {
                continue;
            }
            entries.push(Entry { mode: mode.to_string(), oid: oid.to_string(), path: PathBuf::from(path) });
        }
        Ok(entries)
    }

    /// The contents of the entries' blobs, by object id, from one `git cat-file --batch`.
    async fn blobs(&self, entries: &[Entry]) -> Result<BTreeMap<String, Vec<u8>>, GitError> {
        let mut input = String::new();
        for e in entries {
            input.push_str(&e.oid);
            input.push('\n');
        }
        let out = git(&self.top, &["cat-file", "--batch"], Some(input.as_bytes())).await?;
        let mut blobs = BTreeMap::new();
        let mut rest = &out[..];
        while !rest.is_empty() {
            let Some(eol) = rest.iter().position(|b| *b == b'\n') else { break };
            let header = String::from_utf8_lossy(&rest[..eol]).into_owned();
            rest = &rest[eol + 1..];
            let mut parts = header.split(' ');
            let (Some(oid), Some(_kind), Some(size)) = (parts.next(), parts.next(), parts.next()) else {
                return Err(GitError::Failed { command: "cat-file", stderr: format!("unexpected output: {header}") });
            };
            let size: usize = size.parse().map_err(|_| GitError::Failed {
                command: "cat-file",
                stderr: format!("unexpected output: {header}"),
            })?;
            if rest.len() < size {
                return Err(GitError::Failed { command: "cat-file", stderr: "output cut short".into() });
            }
            blobs.insert(oid.to_string(), rest[..size].to_vec());
            rest = rest.get(size + 1..).unwrap_or_default();
        }
        Ok(blobs)
    }
}

/// One blob or link of `ls-tree`.
#[derive(Debug)]
struct Entry {
    mode: String,
    oid: String,
    path: PathBuf,
}

/// Whether `path` is `dir` or inside it (an empty `dir` is the whole tree).
fn is_under(path: &Path, dir: &Path) -> bool {
    dir.as_os_str().is_empty() || path.starts_with(dir)
}

/// `base/target` with `.` and `..` worked out by name, as a repository path; None when it leaves the
/// repository or `target` is absolute (such a link points at the machine, not at the repository).
fn lexical_join(base: &Path, target: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in base.join(target).components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// A file of the tree, private like every file that may hold values (0600, or 0700 if executable).
fn write_private(path: &Path, content: &[u8], executable: bool) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(if executable { 0o700 } else { 0o600 })
        .open(path)?;
    f.write_all(content)
}

async fn git(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Result<Vec<u8>, GitError> {
    let args: Vec<OsString> = args.iter().map(OsString::from).collect();
    git_os(dir, &args, stdin).await
}

async fn git_os(dir: &Path, args: &[OsString], stdin: Option<&[u8]>) -> Result<Vec<u8>, GitError> {
    let git = which::which("git").map_err(|_| GitError::Missing)?;
    let command = match args.iter().map(|a| a.to_string_lossy()).find(|a| !a.starts_with('-')).as_deref() {
        Some("rev-parse") => "rev-parse",
        Some("ls-tree") => "ls-tree",
        Some("cat-file") => "cat-file",
        _ => "command",
    };
    let mut full: Vec<OsString> = vec!["-C".into(), dir.as_os_str().to_owned()];
    full.extend(args.iter().cloned());
    crate::process::run_program(&git, &full, &[], stdin).await.map_err(|e| match e {
        RenderError::Spawn { .. } => GitError::Missing,
        RenderError::Failed { stderr, .. } => GitError::Failed { command, stderr },
        other => GitError::Failed { command, stderr: other.to_string() },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_followed_by_name_inside_the_repository_only() {
        assert_eq!(lexical_join(Path::new("charts/app/charts"), Path::new("../../lib")), Some("charts/lib".into()));
        assert_eq!(lexical_join(Path::new("a"), Path::new("./b/../c")), Some("a/c".into()));
        assert_eq!(lexical_join(Path::new("a"), Path::new("../../outside")), None);
        assert_eq!(lexical_join(Path::new("a"), Path::new("/etc/passwd")), None);
        assert!(is_under(Path::new("charts/lib/x"), Path::new("charts/lib")));
        assert!(!is_under(Path::new("charts/library"), Path::new("charts/lib")));
        assert!(is_under(Path::new("any"), Path::new("")));
    }
}
