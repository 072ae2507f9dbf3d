//! Comparing two snapshots (a point and the work tree as it is now, or two points) and reading one
//! file of a snapshot. Only git's object store is read.

use crate::error::{Error, Result};
use crate::workspace::Workspace;

/// How a file changed from the older state to the newer one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Only in the newer state.
    Added,
    /// In both, with other bytes or another mode.
    Modified,
    /// Only in the older state.
    Deleted,
}

impl Status {
    /// The word used on the wire and in the CLI.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Added => "added",
            Status::Modified => "modified",
            Status::Deleted => "deleted",
        }
    }
}

/// One file that differs between two trees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Path relative to the work tree's top level.
    pub path: String,
    /// From the older tree to the newer one.
    pub status: Status,
    /// Git mode in the older tree (`0` when absent).
    pub old_mode: u32,
    /// Git mode in the newer tree (`0` when absent).
    pub new_mode: u32,
    /// Blob id in the older tree (empty when absent).
    pub old_blob: String,
    /// Blob id in the newer tree (empty when absent).
    pub new_blob: String,
}

/// The files that differ from tree `from` to tree `to`, in path order.
pub fn diff_trees(workspace: &Workspace, from: &str, to: &str) -> Result<Vec<Change>> {
    if from == to {
        return Ok(Vec::new());
    }
    let out = workspace
        .git()
        .run(["diff-tree", "-r", "-z", "--no-renames", "--raw", from, to])?;
    parse_raw(&out)
}

/// The files that differ from tree `from` to the private index, which [`crate::snapshot::stage`]
/// has just brought up to the work tree: the same changes as [`diff_trees`] from `from` to a new
/// snapshot, without writing that snapshot's trees (at 100,000 files, a third of a compare's
/// time went to writing the trees of every changed folder and reading them back).
pub fn diff_staged(workspace: &Workspace, from: &str) -> Result<Vec<Change>> {
    let out = workspace.private_git().run([
        "diff-index",
        "--cached",
        "-z",
        "--no-renames",
        "--ignore-submodules=none",
        "--raw",
        from,
    ])?;
    parse_raw(&out)
}

/// Parses `git diff-tree -r -z --raw` (or `git diff-index --raw`) output: `:old new oldsha newsha X\0path\0` per file.
fn parse_raw(out: &[u8]) -> Result<Vec<Change>> {
    let mut changes = Vec::new();
    let mut fields = out.split(|&b| b == 0);
    while let Some(meta) = fields.next() {
        if meta.is_empty() {
            continue;
        }
        let meta = String::from_utf8_lossy(meta);
        let Some(path) = fields.next() else {
            break;
        };
        let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        let [old_mode, new_mode, old_blob, new_blob, status] = parts[..] else {
            return Err(Error::Git {
                command: "diff-tree".to_owned(),
                status: "output".to_owned(),
                stderr: format!("unexpected line {meta:?}"),
            });
        };
        let zero = |s: &str| s.bytes().all(|b| b == b'0');
        let status = match status.chars().next() {
            Some('A') => Status::Added,
            Some('D') => Status::Deleted,
            _ => Status::Modified,
        };
        changes.push(Change {
            path: String::from_utf8_lossy(path).into_owned(),
            status,
            old_mode: u32::from_str_radix(old_mode, 8).unwrap_or(0),
            new_mode: u32::from_str_radix(new_mode, 8).unwrap_or(0),
            old_blob: if zero(old_blob) {
                String::new()
            } else {
                old_blob.to_owned()
            },
            new_blob: if zero(new_blob) {
                String::new()
            } else {
                new_blob.to_owned()
            },
        });
    }
    Ok(changes)
}

/// One file as a snapshot holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileAt {
    /// Git mode: `100644`, `100755` or `120000` (a symbolic link, whose content is its target).
    pub mode: u32,
    /// The exact bytes.
    pub content: Vec<u8>,
}

/// The file `path` of tree `tree`, or `None` when the tree has no such file.
pub fn file_at(workspace: &Workspace, tree: &str, path: &str) -> Result<Option<FileAt>> {
    let listing = workspace.git().run([
        "ls-tree",
        "-z",
        "--full-tree",
        tree,
        "--",
        &format!(":(literal){path}"),
    ])?;
    let Some(line) = listing.split(|&b| b == 0).find(|l| !l.is_empty()) else {
        return Ok(None);
    };
    let line = String::from_utf8_lossy(line);
    let Some((meta, _)) = line.split_once('\t') else {
        return Ok(None);
    };
    let parts: Vec<&str> = meta.split(' ').collect();
    let [mode, kind, blob] = parts[..] else {
        return Ok(None);
    };
    if kind != "blob" {
        return Ok(None);
    }
    let mut reader = workspace.git().objects()?;
    let Some(content) = reader.read(blob)? else {
        return Ok(None);
    };
    Ok(Some(FileAt {
        mode: u32::from_str_radix(mode, 8).unwrap_or(0o100644),
        content,
    }))
}
