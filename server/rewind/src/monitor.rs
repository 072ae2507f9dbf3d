//! Watching a work tree so that staging it in the private index does not `lstat` every file.
//!
//! Git asks a `core.fsmonitor` hook (protocol 2) which paths changed since the token the private
//! index holds, and looks only at those; every other tracked file is taken as unchanged. Here the
//! answer comes from an inotify watch of every folder of the work tree that this process keeps
//! (Linux only; elsewhere, and in the CLI, git looks at every file as before). Before each staging
//! the kernel's queue is read to the end in the calling thread ([`query`]): every change made
//! before that moment is then known, and is appended to a journal file of NUL-terminated paths.
//! The token is `ID:LENGTH` of that journal; the hook prints the journal from the token git gives
//! it up to the current length. A token of another journal (another process, a journal started
//! anew after the kernel's queue overflowed, a private index written without the monitor) gets
//! git's "everything may have changed" answer (`/`), so git looks at every file once.
//!
//! Git reads every folder for new untracked files (`git add -A` uses no untracked cache) unless the
//! watcher saw only changes in place since the last staging ([`Query::only_in_place`]): then the
//! tracked files are all there is to update (`git add -u`). Only the server turns the
//! monitor on ([`watch_work_trees`]); a process keeps at most [`MAX_MONITORS`] work trees watched.

use crate::workspace::Workspace;
use std::path::PathBuf;

/// What git needs to ask this process's watcher: the hook, the token that ends its answer and the
/// journal it reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    /// The hook script (run with `sh`).
    pub hook: PathBuf,
    /// `ID:LENGTH`: the journal and how much of it holds every change seen so far.
    pub token: String,
    /// The journal of changed paths.
    pub journal: PathBuf,
    /// Since the previous query of this journal, files were only changed or removed in place:
    /// no path was created or moved in, and no `.gitignore` changed. Then no new untracked file
    /// can have appeared inside the work tree, and staging may leave out the walk for them
    /// ([`crate::snapshot::stage`] checks the ignore rules kept outside it).
    pub only_in_place: bool,
}

/// How many work trees one process watches at most (the least recently used is dropped).
pub const MAX_MONITORS: usize = 8;

/// Turns the watching of work trees on (the server) or off (the default, and the CLI: a process
/// that stages once gains nothing from a watch it would have to start first).
pub fn watch_work_trees(on: bool) {
    imp::set_enabled(on);
}

/// Reads every change seen so far and says how git can ask for them; `None` when the work tree is
/// not watched (turned off, not Linux, or the watch could not be set up), and git then looks at
/// every file.
pub fn query(workspace: &Workspace) -> Option<Query> {
    imp::query(workspace)
}

/// The hook git runs (`sh HOOK 2 TOKEN`): the journal's paths after the token git holds, or `/`
/// (look at everything) when that token is not of the current journal.
const HOOK: &str = r#"#!/bin/sh
# git's fsmonitor hook (protocol 2) for sessiontree's private index. The process that runs git sets
# SESSIONTREE_FSMONITOR_TOKEN (ID:LENGTH) and SESSIONTREE_FSMONITOR_JOURNAL (NUL-terminated paths).
token="$SESSIONTREE_FSMONITOR_TOKEN"
id="${token%:*}"
end="${token##*:}"
case "$2" in
"$id:"*) start="${2##*:}" ;;
*) start="" ;;
esac
case "$start$end" in
'' | *[!0-9]*) printf '%s\0/\0' "$token"; exit 0 ;;
esac
if [ -z "$start" ] || [ "$start" -gt "$end" ]; then
    printf '%s\0/\0' "$token"
    exit 0
fi
printf '%s\0' "$token"
if [ "$end" -gt "$start" ]; then
    tail -c +"$((start + 1))" "$SESSIONTREE_FSMONITOR_JOURNAL" | head -c "$((end - start))"
fi
"#;

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::Query;
    use crate::workspace::Workspace;

    pub fn set_enabled(_on: bool) {}

    pub fn query(_workspace: &Workspace) -> Option<Query> {
        None
    }
}

#[cfg(target_os = "linux")]
mod inotify;
#[cfg(target_os = "linux")]
use inotify as imp;
