//! When staging may update the tracked files alone (`git add -u`) instead of also walking every
//! folder for new untracked files (`git add -A`): the watcher saw only changes in place since the
//! last staging ([`crate::monitor::Query::only_in_place`]), and nothing it cannot see changed.
//! That is what this module keeps per work tree, in this process, after each staging:
//!
//! - the private index as this process left it (size, time, inode): another process that wrote it
//!   (the CLI, another server, with other session files left out) makes the next staging whole;
//! - the files git reads ignore rules from outside the work tree (`info/exclude`, the global
//!   ignore file, `core.excludesFile`, and the config files that could name another one): one of
//!   them changed, and a file that was ignored may not be any more;
//! - the session files left out ([`Exclusions`]): another session's staging leaves out others.

use crate::snapshot::Exclusions;
use crate::workspace::Workspace;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What a file looked like: `None` when it did not exist.
type Seen = Option<(u64, u64, i64, i64, i64)>;

#[derive(Debug, Clone, PartialEq, Eq)]
struct Settled {
    index: Seen,
    rules: Vec<(PathBuf, Seen)>,
    exclusions: Exclusions,
}

static SETTLED: Mutex<Vec<(PathBuf, Settled)>> = Mutex::new(Vec::new());

/// Whether the state recorded by [`remember`] still holds for this work tree.
pub fn holds(workspace: &Workspace, exclusions: &Exclusions) -> bool {
    let Ok(all) = SETTLED.lock() else {
        return false;
    };
    let Some((_, settled)) = all.iter().find(|(top, _)| top == workspace.toplevel()) else {
        return false;
    };
    settled.exclusions == *exclusions
        && settled.index == seen(&workspace.private_index())
        && settled.rules.iter().all(|(path, was)| seen(path) == *was)
}

/// Records the state after a whole staging (`excludes_file`: git's `core.excludesFile`, if set).
pub fn remember(workspace: &Workspace, exclusions: &Exclusions, excludes_file: Option<PathBuf>) {
    let rules = rule_files(workspace, excludes_file)
        .into_iter()
        .map(|path| {
            let was = seen(&path);
            (path, was)
        })
        .collect();
    let settled = Settled {
        index: seen(&workspace.private_index()),
        rules,
        exclusions: exclusions.clone(),
    };
    if let Ok(mut all) = SETTLED.lock() {
        all.retain(|(top, _)| top != workspace.toplevel());
        all.push((workspace.toplevel().to_path_buf(), settled));
        if all.len() > 4 * crate::monitor::MAX_MONITORS {
            all.remove(0);
        }
    }
}

/// Records the private index again after this process wrote it (a staging in place, a tree).
pub fn index_written(workspace: &Workspace) {
    if let Ok(mut all) = SETTLED.lock() {
        if let Some((_, settled)) = all.iter_mut().find(|(top, _)| top == workspace.toplevel()) {
            settled.index = seen(&workspace.private_index());
        }
    }
}

/// Forgets the work tree: the next staging is whole (after a failure, say).
pub fn forget(workspace: &Workspace) {
    if let Ok(mut all) = SETTLED.lock() {
        all.retain(|(top, _)| top != workspace.toplevel());
    }
}

fn rule_files(workspace: &Workspace, excludes_file: Option<PathBuf>) -> Vec<PathBuf> {
    let mut out = vec![
        workspace.git_dir().join("info/exclude"),
        workspace.git_dir().join("config.worktree"),
        workspace.common_dir().join("info/exclude"),
        workspace.common_dir().join("config"),
        PathBuf::from("/etc/gitconfig"),
    ];
    let env = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let home = env("HOME");
    let xdg = env("XDG_CONFIG_HOME").or_else(|| home.as_ref().map(|h| h.join(".config")));
    if let Some(home) = &home {
        out.push(home.join(".gitconfig"));
    }
    if let Some(xdg) = &xdg {
        out.push(xdg.join("git/config"));
        out.push(xdg.join("git/ignore"));
    }
    out.extend(
        ["GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"]
            .iter()
            .filter_map(|v| env(v)),
    );
    out.extend(excludes_file);
    out
}

#[cfg(not(unix))]
fn seen(_path: &Path) -> Seen {
    None
}

#[cfg(unix)]
fn seen(path: &Path) -> Seen {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    Some((
        meta.ino(),
        meta.size(),
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime_nsec(),
    ))
}
