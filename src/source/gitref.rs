//! Git's plumbing for the sides a comparison of refs reads ([`crate::source::git_sides`]): a chart as it
//! is at a Git ref, materialised from the repository's objects into a private temporary directory, never
//! through the user's checkout: no checkout, no stash,
//! no index of theirs touched. Only read-only plumbing runs (`rev-parse`, `ls-tree`, `cat-file --batch`),
//! with argument vectors and literal pathspecs, and the files are written here.
//!
//! Files keep their repository-relative paths under the temporary root, so relative symlinks (a library
//! chart linked into `charts/`) resolve there as in the working tree; what such a link points at outside
//! the paths asked for is materialised too.
//!
//! It also lists what a commit or the work tree holds ([`Listing`]), reads files of a commit without
//! writing them anywhere, and names the paths that differ between two of them (`review`'s reads).

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use crate::support::error::RenderError;

/// Defined with the other error types (see `crate::support::error`), which wrap it.
pub use crate::support::error::GitError;

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
    /// The directory the tree is written in: the repository's top, as it is at the ref.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Where repository path `rel` is in this tree.
    pub fn path(&self, rel: &Path) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Whether the ref has repository path `rel` (a file, or a directory with files).
    pub fn has(&self, rel: &Path) -> bool {
        std::fs::symlink_metadata(self.path(rel)).is_ok()
    }
}

/// What a commit, or the work tree, holds: every file and symbolic link by repository path (directories
/// are implied; submodules, other repositories, are left out).
#[derive(Debug, Clone, Default)]
pub struct Listing {
    pub entries: BTreeMap<PathBuf, Listed>,
    /// Of the work tree, the files Git does not track (and does not ignore).
    pub untracked: BTreeSet<PathBuf>,
    /// Of a commit, the files Git records as executable.
    executable: BTreeSet<PathBuf>,
    /// The blob of each path of a commit (empty for the work tree, which is read from disk).
    oids: BTreeMap<PathBuf, String>,
}

/// One path of a [`Listing`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listed {
    File,
    /// A symbolic link, and the path it holds (as written, usually relative to the link's directory).
    Link(String),
}

impl Listing {
    /// A listing of the given entries (for tests and callers that list by other means).
    pub fn from_entries(entries: impl IntoIterator<Item = (PathBuf, Listed)>) -> Listing {
        Listing { entries: entries.into_iter().collect(), ..Listing::default() }
    }

    /// The entries under directory `dir` (repository-relative; empty: all).
    pub fn under<'a, 'b>(&'a self, dir: &'b Path) -> impl Iterator<Item = (&'a PathBuf, &'a Listed)> + use<'a, 'b> {
        self.entries.range(dir.to_path_buf()..).take_while(move |(p, _)| is_under(p, dir))
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

    /// The best common ancestor of two commits, where a branch left the other (`git merge-base`).
    pub async fn merge_base(&self, a: &str, b: &str) -> Result<String, GitError> {
        let out = git(&self.top, &["merge-base", a, b], None).await?;
        Ok(String::from_utf8_lossy(&out).trim().to_string())
    }

    /// Writes `paths` (repository-relative; an empty path is the whole tree) as they are at `commit`
    /// (which `git_ref` named: said in errors) into a private temporary directory, with whatever their
    /// symlinks point at inside the repository. A path the commit does not have is simply not there
    /// ([`Tree::has`]): a chart or file added since.
    pub async fn materialise(&self, commit: String, git_ref: &str, paths: &[PathBuf]) -> Result<Tree, GitError> {
        let io = |source| GitError::Io { git_ref: git_ref.to_string(), source };
        let dir = crate::support::process::private_dir("cozyhr-git-").map_err(io)?;
        let tree = Tree { dir, commit };
        self.add(&tree, git_ref, paths).await?;
        Ok(tree)
    }

    /// Writes `paths` into `tree` too, as they are at its commit (which `git_ref` named), with what their
    /// symlinks point at; what the tree holds already is left as it is.
    pub async fn add(&self, tree: &Tree, git_ref: &str, paths: &[PathBuf]) -> Result<(), GitError> {
        let io = |source| GitError::Io { git_ref: git_ref.to_string(), source };
        let mut written: BTreeSet<PathBuf> = BTreeSet::new();
        let mut wanted: Vec<PathBuf> = paths.to_vec();
        for _ in 0..MAX_LINK_ROUNDS {
            let entries = self.ls_tree(&tree.commit, &wanted).await?;
            let new: Vec<Entry> =
                entries.into_iter().filter(|e| !written.contains(&e.path) && !tree.has(&e.path)).collect();
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
        Ok(())
    }

    /// Everything `commit` holds (see [`Listing`]); the links' targets are read with `blobs`.
    pub async fn list_commit(&self, commit: &str, blobs: &Blobs) -> Result<Listing, GitError> {
        let entries = self.ls_tree(commit, &[]).await?;
        let targets = blobs.read(entries.iter().filter(|e| e.mode == "120000").map(|e| e.oid.as_str())).await?;
        let mut listing = Listing::default();
        for e in entries {
            let listed = if e.mode == "120000" {
                Listed::Link(targets.get(&e.oid).map(|t| String::from_utf8_lossy(t).into_owned()).unwrap_or_default())
            } else {
                Listed::File
            };
            if e.mode == "100755" {
                listing.executable.insert(e.path.clone());
            }
            listing.oids.insert(e.path.clone(), e.oid);
            listing.entries.insert(e.path, listed);
        }
        Ok(listing)
    }

    /// Everything the work tree holds that Git sees: tracked files as they are on disk now (a deleted one
    /// is not there) and untracked ones Git does not ignore, which [`Listing::untracked`] names too.
    pub async fn list_worktree(&self) -> Result<Listing, GitError> {
        let out = git(&self.top, &["ls-files", "-z", "-t", "--cached", "--others", "--exclude-standard"], None).await?;
        let mut listing = Listing::default();
        for record in out.split(|b| *b == 0).filter(|r| !r.is_empty()) {
            // `-t`: a tag, a space, the path; `?` is a file Git does not track.
            let text = String::from_utf8_lossy(record);
            let Some((tag, path)) = text.split_once(' ') else { continue };
            let rel = PathBuf::from(path);
            if tag == "?" {
                listing.untracked.insert(rel.clone());
            }
            let Ok(meta) = std::fs::symlink_metadata(self.top.join(&rel)) else { continue };
            let listed = if meta.file_type().is_symlink() {
                match std::fs::read_link(self.top.join(&rel)) {
                    Ok(target) => Listed::Link(target.to_string_lossy().into_owned()),
                    Err(_) => continue,
                }
            } else if meta.is_file() {
                Listed::File
            } else {
                continue;
            };
            listing.entries.insert(rel, listed);
        }
        Ok(listing)
    }

    /// A reader of this repository's objects for many small reads (see [`Blobs`]).
    pub fn blobs_reader(&self) -> Blobs {
        Blobs { top: self.top.clone(), cat_file: tokio::sync::Mutex::new(None) }
    }

    /// The tracked paths that differ between commit `old` and commit `new`, or the work tree when `new`
    /// is None (whose untracked files [`Listing::untracked`] names).
    pub async fn changed(&self, old: &str, new: Option<&str>) -> Result<BTreeSet<PathBuf>, GitError> {
        let mut args = vec!["diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", old];
        args.extend(new);
        args.push("--");
        let out = git(&self.top, &args, None).await?;
        Ok(out
            .split(|b| *b == 0)
            .filter(|r| !r.is_empty())
            .map(|r| PathBuf::from(String::from_utf8_lossy(r).into_owned()))
            .collect())
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

impl Listing {
    /// The contents of the files `paths` of a commit's listing, read with `blobs` (what is not a file
    /// there is left out).
    pub async fn read(&self, blobs: &Blobs, paths: &[PathBuf]) -> Result<BTreeMap<PathBuf, Vec<u8>>, GitError> {
        let wanted: Vec<(&PathBuf, &String)> = paths
            .iter()
            .filter(|p| self.entries.get(*p) == Some(&Listed::File))
            .filter_map(|p| self.oids.get(p).map(|oid| (p, oid)))
            .collect();
        let read = blobs.read(wanted.iter().map(|(_, oid)| oid.as_str())).await?;
        Ok(wanted.into_iter().filter_map(|(p, oid)| read.get(oid).map(|b| (p.clone(), b.clone()))).collect())
    }

    /// Writes `paths` of a commit's listing (repository-relative; an empty path is everything) into a
    /// private temporary directory as [`Repo::materialise`] does, links followed inside the repository,
    /// without asking Git for the listing again.
    pub async fn materialise(&self, blobs: &Blobs, commit: &str, paths: &[PathBuf]) -> Result<Tree, GitError> {
        let io = |source| GitError::Io { git_ref: commit.to_string(), source };
        let dir = crate::support::process::private_dir("cozyhr-git-").map_err(io)?;
        let tree = Tree { dir, commit: commit.to_string() };
        let mut chosen: BTreeSet<&PathBuf> = BTreeSet::new();
        let mut wanted: Vec<PathBuf> = paths.to_vec();
        for _ in 0..MAX_LINK_ROUNDS {
            let mut next = Vec::new();
            for want in &wanted {
                for (path, listed) in self.under(want) {
                    if !chosen.insert(path) {
                        continue;
                    }
                    if let Listed::Link(target) = listed
                        && let Some(resolved) = path.parent().and_then(|p| lexical_join(p, Path::new(target)))
                    {
                        next.push(resolved);
                    }
                }
            }
            if next.is_empty() {
                break;
            }
            wanted = next;
        }
        let files: Vec<PathBuf> =
            chosen.iter().filter(|p| self.entries.get(**p) == Some(&Listed::File)).map(|p| (*p).clone()).collect();
        let contents = self.read(blobs, &files).await?;
        for path in chosen {
            let dest = tree.path(path);
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent).map_err(io)?;
            }
            match &self.entries[path] {
                Listed::Link(target) => std::os::unix::fs::symlink(target, &dest).map_err(io)?,
                Listed::File => {
                    let executable = self.executable.contains(path);
                    let content = contents.get(path).map_or(&[][..], Vec::as_slice);
                    write_private(&dest, content, executable).map_err(io)?;
                }
            }
        }
        Ok(tree)
    }
}

/// One `git cat-file --batch` kept running for a repository, so the many small reads of a review (its
/// Chart.yaml files, templates, release files, the files each side renders from) cost one process, not
/// one each. Started at the first read; killed when dropped.
pub struct Blobs {
    top: PathBuf,
    cat_file: tokio::sync::Mutex<Option<CatFile>>,
}

struct CatFile {
    /// Kept so the process lives as long as the reader (and is killed with it).
    _child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    stdout: tokio::io::BufReader<tokio::process::ChildStdout>,
}

impl Blobs {
    /// The contents of the objects `oids`, by object id (one that is missing is left out).
    pub async fn read<'a>(&self, oids: impl Iterator<Item = &'a str>) -> Result<BTreeMap<String, Vec<u8>>, GitError> {
        use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _};
        let oids: Vec<&str> = oids.collect();
        if oids.is_empty() {
            return Ok(BTreeMap::new());
        }
        let failed = |stderr: String| GitError::Failed { command: "cat-file", stderr };
        let mut guard = self.cat_file.lock().await;
        if guard.is_none() {
            *guard = Some(self.start()?);
        }
        let Some(CatFile { stdin, stdout, .. }) = guard.as_mut() else { return Ok(BTreeMap::new()) };
        let requests: String = oids.iter().map(|o| format!("{o}\n")).collect();
        // Written while the answers are read: a large batch would otherwise fill both pipes.
        let write = async {
            stdin.write_all(requests.as_bytes()).await?;
            stdin.flush().await
        };
        let read = async {
            let mut out = BTreeMap::new();
            let mut header = Vec::new();
            for _ in &oids {
                header.clear();
                if stdout.read_until(b'\n', &mut header).await? == 0 {
                    return Err(std::io::Error::other("git cat-file ended early"));
                }
                let line = String::from_utf8_lossy(&header).trim_end().to_string();
                let parts: Vec<&str> = line.split(' ').collect();
                let [oid, _kind, size] = parts[..] else { continue };
                let size: usize =
                    size.parse().map_err(|_| std::io::Error::other(format!("unexpected output: {line}")))?;
                let mut content = vec![0; size + 1];
                stdout.read_exact(&mut content).await?;
                content.pop();
                out.insert(oid.to_string(), content);
            }
            Ok(out)
        };
        let (written, read) = tokio::join!(write, read);
        written.map_err(|e| failed(e.to_string()))?;
        read.map_err(|e| failed(e.to_string()))
    }

    /// Ends the `git cat-file` it started (it exits at the end of its input), and waits for it.
    pub async fn close(&self) {
        if let Some(CatFile { _child: mut child, stdin, .. }) = self.cat_file.lock().await.take() {
            drop(stdin);
            let _ = child.wait().await;
        }
    }

    fn start(&self) -> Result<CatFile, GitError> {
        let git = which::which("git").map_err(|_| GitError::Missing)?;
        let mut child = tokio::process::Command::new(git)
            .arg("-C")
            .arg(&self.top)
            .args(["cat-file", "--batch"])
            .env("GIT_OPTIONAL_LOCKS", "0")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| GitError::Failed { command: "cat-file", stderr: e.to_string() })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(GitError::Failed { command: "cat-file", stderr: "no pipes".into() });
        };
        Ok(CatFile { _child: child, stdin, stdout: tokio::io::BufReader::new(stdout) })
    }
}

/// One blob or link of `ls-tree`.
#[derive(Debug, Clone)]
struct Entry {
    mode: String,
    oid: String,
    path: PathBuf,
}

/// Whether `path` is `dir` or inside it (an empty `dir` is the whole tree).
pub(crate) fn is_under(path: &Path, dir: &Path) -> bool {
    dir.as_os_str().is_empty() || path.starts_with(dir)
}

/// `base/target` with `.` and `..` worked out by name, as a repository path; None when it leaves the
/// repository or `target` is absolute (such a link points at the machine, not at the repository).
pub(crate) fn lexical_join(base: &Path, target: &Path) -> Option<PathBuf> {
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

/// The top of the Git work tree `dir` lies in (`git rev-parse --show-toplevel`), canonical; None outside
/// one, or without git. Asked synchronously: it is one short read, needed where values are composed.
pub fn work_tree_top(dir: &Path) -> Option<PathBuf> {
    let git = which::which("git").ok()?;
    let out = std::process::Command::new(git)
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "--show-toplevel"])
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let top = String::from_utf8(out.stdout).ok().filter(|_| out.status.success())?;
    let top = top.trim_end_matches('\n');
    (!top.is_empty()).then(|| std::fs::canonicalize(top).unwrap_or_else(|_| PathBuf::from(top)))
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
        Some("ls-files") => "ls-files",
        Some("diff") => "diff",
        Some("merge-base") => "merge-base",
        _ => "command",
    };
    let mut full: Vec<OsString> = vec!["-C".into(), dir.as_os_str().to_owned()];
    full.extend(args.iter().cloned());
    // Never refresh the user's index: `git diff` would, and review promises to leave the checkout as it is.
    let env = [("GIT_OPTIONAL_LOCKS".to_string(), OsString::from("0"))];
    crate::support::process::run_program(&git, &full, &env, stdin).await.map_err(|e| match e {
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
