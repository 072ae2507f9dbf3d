//! Putting a snapshot's files into the work tree. Files absent from the snapshot are removed
//! first (and folders left empty by that), then the snapshot's files that differ are written, each
//! to a temporary file beside it and renamed over the old one, so no file is ever seen half
//! written. Modes are git's: `100755` files are executable, `100644` ones are not (other bits of
//! a file that is replaced are kept), `120000` are symbolic links. Submodules are left alone.
//!
//! Session files are never written or removed: a path the exclusions name, or whose current or
//! snapshot bytes begin like a session file, is skipped and reported. Only the work tree's files
//! change: git's index, HEAD and refs are not touched here.

use crate::compare::{diff_trees, Change, Status};
use crate::error::Result;
use crate::git::ObjectReader;
use crate::snapshot::{file_looks_like_session, looks_like_session, Exclusions};
use crate::workspace::Workspace;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What a restore does to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// The file is created (it is in the snapshot, not in the work tree).
    Added,
    /// The file's bytes or mode are replaced.
    Changed,
    /// The file is removed (it is not in the snapshot).
    Deleted,
}

impl Action {
    /// The word used on the wire and in the CLI.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Added => "added",
            Action::Changed => "changed",
            Action::Deleted => "deleted",
        }
    }
}

/// One file a restore changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileAction {
    /// Path relative to the top level.
    pub path: String,
    /// What happens to it.
    pub action: Action,
    /// The diff line it comes from.
    change: Change,
}

/// What restoring a tree over the current one does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// The files that change, removals first, then writes in path order.
    pub actions: Vec<FileAction>,
    /// Paths left alone, with why (session files, submodules).
    pub skipped: Vec<(String, String)>,
}

/// Works out what putting tree `target` over tree `current` (the work tree now) changes.
pub fn plan(
    workspace: &Workspace,
    exclusions: &Exclusions,
    current: &str,
    target: &str,
) -> Result<Plan> {
    let mut out = Plan::default();
    let mut writes = Vec::new();
    let mut reader = None;
    for change in diff_trees(workspace, current, target)? {
        let path = change.path.clone();
        if exclusions.contains(&path) {
            out.skipped.push((path, "session file".to_owned()));
            continue;
        }
        if change.new_mode == 0o160000 || change.old_mode == 0o160000 {
            out.skipped.push((path, "submodule".to_owned()));
            continue;
        }
        if file_looks_like_session(&workspace.toplevel().join(&path)) {
            out.skipped.push((path, "session file".to_owned()));
            continue;
        }
        if change.status != Status::Deleted && path.ends_with(".jsonl") {
            let reader = match &mut reader {
                Some(reader) => reader,
                None => reader.insert(workspace.git().objects()?),
            };
            if reader
                .read(&change.new_blob)?
                .is_some_and(|c| looks_like_session(&c))
            {
                out.skipped.push((path, "session file".to_owned()));
                continue;
            }
        }
        match change.status {
            Status::Deleted => out.actions.push(FileAction {
                path,
                action: Action::Deleted,
                change,
            }),
            Status::Added => writes.push(FileAction {
                path,
                action: Action::Added,
                change,
            }),
            Status::Modified => writes.push(FileAction {
                path,
                action: Action::Changed,
                change,
            }),
        }
    }
    out.actions.extend(writes);
    Ok(out)
}

/// Carries out a plan. On the first failure it stops and returns the path and the cause; the
/// caller puts the undo point back.
pub fn apply(workspace: &Workspace, plan: &Plan) -> std::result::Result<(), (String, String)> {
    let top = workspace.toplevel();
    let mut emptied: BTreeSet<PathBuf> = BTreeSet::new();
    for action in plan.actions.iter().filter(|a| a.action == Action::Deleted) {
        let path = top.join(&action.path);
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err((action.path.clone(), e.to_string())),
        }
        if let Some(parent) = path.parent() {
            emptied.insert(parent.to_path_buf());
        }
    }
    remove_empty_folders(top, emptied);
    let mut reader = workspace
        .git()
        .objects()
        .map_err(|e| (String::new(), e.to_string()))?;
    for action in plan.actions.iter().filter(|a| a.action != Action::Deleted) {
        write_one(top, &mut reader, action).map_err(|cause| (action.path.clone(), cause))?;
    }
    Ok(())
}

/// Removes the folders a removal left empty, deepest first, up to (not including) the top level.
fn remove_empty_folders(top: &Path, folders: BTreeSet<PathBuf>) {
    let mut folders: Vec<PathBuf> = folders.into_iter().collect();
    folders.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    for folder in folders {
        let mut cursor = Some(folder.as_path());
        while let Some(dir) = cursor {
            if dir == top || !dir.starts_with(top) || std::fs::remove_dir(dir).is_err() {
                break;
            }
            cursor = dir.parent();
        }
    }
}

fn write_one(
    top: &Path,
    reader: &mut ObjectReader,
    action: &FileAction,
) -> std::result::Result<(), String> {
    let change = &action.change;
    let content = reader
        .read(&change.new_blob)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("blob {} is missing from the repository", change.new_blob))?;
    if looks_like_session(&content) {
        // A snapshot that holds a session file (taken before the exclusions knew of it).
        return Ok(());
    }
    let path = top.join(&action.path);
    let parent = path.parent().unwrap_or(top);
    std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = parent.join(format!(".{name}.sessiontree-{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let result = if change.new_mode == 0o120000 {
        write_link(&tmp, &content)
    } else {
        write_file(&tmp, &path, &content, change.new_mode == 0o100755)
    };
    let result = result.and_then(|()| std::fs::rename(&tmp, &path).map_err(|e| e.to_string()));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(unix)]
fn write_link(tmp: &Path, target: &[u8]) -> std::result::Result<(), String> {
    use std::os::unix::ffi::OsStrExt;
    std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(target), tmp).map_err(|e| e.to_string())
}

#[cfg(not(unix))]
fn write_link(tmp: &Path, target: &[u8]) -> std::result::Result<(), String> {
    std::fs::write(tmp, target).map_err(|e| e.to_string())
}

fn write_file(
    tmp: &Path,
    path: &Path,
    content: &[u8],
    executable: bool,
) -> std::result::Result<(), String> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(tmp)
        .map_err(|e| e.to_string())?;
    file.write_all(content).map_err(|e| e.to_string())?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // A replaced file keeps its other permission bits; a new one gets git's 644 / 755.
        let old = std::fs::symlink_metadata(path)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.permissions().mode() & 0o777);
        let base = old.unwrap_or(0o644) & !0o111;
        let mode = if executable {
            base | ((base & 0o444) >> 2)
        } else {
            base
        };
        file.set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(|e| e.to_string())?;
    }
    #[cfg(not(unix))]
    let _ = (path, executable);
    Ok(())
}
