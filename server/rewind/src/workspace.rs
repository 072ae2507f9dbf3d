//! A session's workspace as git sees it: the work tree that holds the session's `cwd`, its git
//! folders, and where the rewind store keeps its own files. Everything the store writes lives in
//! `<git dir>/sessiontree/` (the private index, the last restore, the restore journal; per work
//! tree) and `<common git dir>/sessiontree/ledger.jsonl` (the points; shared by the repository's
//! work trees, as the one ref `refs/sessiontree/snapshots` is). The user's index, HEAD, branches
//! and stash are never written.

use crate::error::{Error, Result};
use crate::git::Git;
use std::fs::File;
use std::path::{Path, PathBuf};

/// The empty tree of a SHA-1 repository.
const EMPTY_TREE_SHA1: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
/// The empty tree of a SHA-256 repository.
const EMPTY_TREE_SHA256: &str = "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321";

/// A git work tree that holds a session's `cwd`.
#[derive(Debug, Clone)]
pub struct Workspace {
    toplevel: PathBuf,
    git_dir: PathBuf,
    common_dir: PathBuf,
    empty_tree: &'static str,
}

impl Workspace {
    /// Finds the work tree that holds `cwd`; an error names why there is none.
    pub fn discover(cwd: &Path) -> Result<Workspace> {
        let not_repo = |detail: String| Error::NotARepository {
            cwd: cwd.to_path_buf(),
            detail,
        };
        if !cwd.is_dir() {
            return Err(not_repo("the folder does not exist".to_owned()));
        }
        let out = Git::at(cwd)
            .run([
                "rev-parse",
                "--is-bare-repository",
                "--absolute-git-dir",
                "--git-common-dir",
                "--show-object-format",
                "--show-toplevel",
            ])
            .map_err(|err| match err {
                Error::Git { stderr, .. } => not_repo(stderr),
                other => other,
            })?;
        let text = String::from_utf8_lossy(&out);
        let lines: Vec<&str> = text.lines().collect();
        if lines.first() == Some(&"true") {
            return Err(not_repo("it is a bare repository".to_owned()));
        }
        let [_, git_dir, common_dir, format, toplevel] = lines[..] else {
            return Err(not_repo("it is not inside a work tree".to_owned()));
        };
        let common = PathBuf::from(common_dir);
        let common_dir = if common.is_absolute() {
            common
        } else {
            cwd.join(common)
        };
        Ok(Workspace {
            toplevel: PathBuf::from(toplevel),
            git_dir: PathBuf::from(git_dir),
            common_dir: std::fs::canonicalize(&common_dir).unwrap_or(common_dir),
            empty_tree: if format == "sha256" {
                EMPTY_TREE_SHA256
            } else {
                EMPTY_TREE_SHA1
            },
        })
    }

    /// The work tree's top level (what a snapshot covers).
    pub fn toplevel(&self) -> &Path {
        &self.toplevel
    }

    /// This work tree's git folder.
    pub fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    /// The repository's common git folder (the same as [`Workspace::git_dir`] but in a linked
    /// work tree).
    pub fn common_dir(&self) -> &Path {
        &self.common_dir
    }

    /// The empty tree of the repository's object format.
    pub fn empty_tree(&self) -> &str {
        self.empty_tree
    }

    /// Plain git commands at the top level.
    pub fn git(&self) -> Git {
        Git::at(&self.toplevel).with_attr_source(self.empty_tree)
    }

    /// Git commands that use the store's private index.
    pub fn private_git(&self) -> Git {
        self.git().with_index(&self.private_index())
    }

    /// The store's folder for this work tree.
    pub fn state_dir(&self) -> PathBuf {
        self.git_dir.join("sessiontree")
    }

    /// The private index (git's stat cache is kept between snapshots).
    pub fn private_index(&self) -> PathBuf {
        self.state_dir().join("index")
    }

    /// The ledger of points, shared by the repository's work trees.
    pub fn ledger_path(&self) -> PathBuf {
        self.common_dir.join("sessiontree").join("ledger.jsonl")
    }

    /// The last restore made in this work tree (what "undo" puts back).
    pub fn last_restore_path(&self) -> PathBuf {
        self.state_dir().join("last-restore.json")
    }

    /// Present only while a restore is changing files.
    pub fn journal_path(&self) -> PathBuf {
        self.state_dir().join("restore-journal.json")
    }

    /// The user's own index (read only, to seed the private one).
    pub fn user_index(&self) -> PathBuf {
        self.git_dir.join("index")
    }

    /// Takes the work tree's store lock: snapshots and restores of one work tree, from any process,
    /// run one at a time.
    pub fn lock(&self) -> Result<StoreLock> {
        let dir = self.state_dir();
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        let path = dir.join("lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        #[cfg(unix)]
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|e| Error::io(&path, e.into()))?;
        Ok(StoreLock { _file: file })
    }
}

/// Held while the store or the work tree is being changed; released on drop (and by the kernel
/// when the process dies).
#[derive(Debug)]
pub struct StoreLock {
    _file: File,
}
