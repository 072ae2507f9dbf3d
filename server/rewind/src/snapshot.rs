//! Taking a snapshot: the work tree's files as one git tree, written through the store's private
//! index (`git add -A` then `git write-tree` with `GIT_INDEX_FILE`). The private index keeps git's
//! stat cache between snapshots, so only files whose size or time changed are read again; the
//! first one is seeded from a copy of the user's index (read, never written) for the same reason.
//!
//! A snapshot holds tracked files and untracked files that are not ignored. Ignored files, `.git`
//! and empty folders are not in it, and neither are session files: the session's own file and
//! every `*.jsonl` beside it are excluded when they lie inside the work tree.

use crate::error::{Error, Result};
use crate::git::Git;
use crate::settled;
use crate::workspace::Workspace;
use std::path::{Path, PathBuf};

/// Paths (relative to the top level) a snapshot leaves out and a restore never touches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Exclusions {
    /// The session files themselves.
    files: Vec<String>,
    /// Folders whose `*.jsonl` files are sessions.
    session_folders: Vec<String>,
}

impl Exclusions {
    /// Leaves out `session_file` and the `*.jsonl` files beside it when they lie in the work tree.
    pub fn for_session_file(workspace: &Workspace, session_file: Option<&Path>) -> Exclusions {
        let mut out = Exclusions::default();
        let Some(file) = session_file else {
            return out;
        };
        let file = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
        let top = std::fs::canonicalize(workspace.toplevel())
            .unwrap_or_else(|_| workspace.toplevel().to_path_buf());
        if let Ok(rel) = file.strip_prefix(&top) {
            let rel = rel.to_string_lossy().into_owned();
            let folder = Path::new(&rel)
                .parent()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default();
            out.files.push(rel);
            out.session_folders.push(folder);
        }
        out
    }

    /// Whether nothing is left out.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.session_folders.is_empty()
    }

    /// Whether `rel` (a path relative to the top level) is left out.
    pub fn contains(&self, rel: &str) -> bool {
        if self.files.iter().any(|f| f == rel) {
            return true;
        }
        let (folder, name) = match rel.rsplit_once('/') {
            Some((folder, name)) => (folder, name),
            None => ("", rel),
        };
        name.ends_with(".jsonl") && self.session_folders.iter().any(|f| f == folder)
    }

    /// Git pathspecs naming the left-out paths.
    fn pathspecs(&self) -> Vec<String> {
        let mut specs: Vec<String> = self
            .files
            .iter()
            .map(|f| format!(":(literal){f}"))
            .collect();
        for folder in &self.session_folders {
            let escaped = escape_glob(folder);
            specs.push(if escaped.is_empty() {
                ":(glob)*.jsonl".to_owned()
            } else {
                format!(":(glob){escaped}/*.jsonl")
            });
        }
        specs
    }
}

fn escape_glob(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Whether `bytes` begin like a session file (a header or an omp title slot): such a file is never
/// written, replaced or removed by a restore, whatever a snapshot holds.
pub fn looks_like_session(bytes: &[u8]) -> bool {
    bytes.starts_with(br#"{"type":"session""#) || bytes.starts_with(br#"{"type":"title""#)
}

/// Whether the file at `path` begins like a session file.
pub fn file_looks_like_session(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 32];
    match std::fs::File::open(path) {
        Ok(mut f) => {
            let n = f.read(&mut head).unwrap_or(0);
            looks_like_session(&head[..n])
        }
        Err(_) => false,
    }
}

/// Writes the work tree's current files as a tree and returns its id. The caller holds the
/// work tree's lock. Nothing but the private index and git's object store is written.
pub fn capture(workspace: &Workspace, exclusions: &Exclusions) -> Result<String> {
    // write-tree goes through the same settings as the staging: written without the fsmonitor
    // settings, the private index would lose the watcher's token.
    let tree = stage(workspace, exclusions)?.line(["write-tree"]);
    match &tree {
        Ok(_) => settled::index_written(workspace),
        Err(_) => settled::forget(workspace),
    }
    tree
}

/// Brings the private index up to the work tree's current files (`git add -A`: the blobs of the
/// files that changed are written, no tree is). The caller holds the work tree's lock. A compare
/// stops here and reads the index against the point's tree; a snapshot goes on to write a tree.
/// When this process watches the work tree ([`crate::monitor`]), git asks the watcher which
/// tracked files changed instead of looking at all of them, and when the watcher saw changes in
/// place only (and [`settled`] holds), `git add -u` updates the tracked files without walking the
/// folders for new ones. The returned command carries those settings for the caller's next
/// command on the private index.
pub fn stage(workspace: &Workspace, exclusions: &Exclusions) -> Result<Git> {
    let index = workspace.private_index();
    let dir = workspace.state_dir();
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let seeded = !index.exists() && seed_from_user_index(workspace, &index);
    let query = crate::monitor::query(workspace);
    let in_place =
        query.as_ref().is_some_and(|q| q.only_in_place) && settled::holds(workspace, exclusions);
    let watched = query.is_some();
    let git = workspace.private_git().with_fsmonitor(query);
    let staged = if in_place {
        add(&git, exclusions, Add::TrackedOnly)
    } else {
        match add(&git, exclusions, Add::All) {
            Err(_) if seeded => {
                // The user's index had something our git could not use (a split index, say):
                // start from an empty private index instead.
                let _ = std::fs::remove_file(&index);
                add(&git, exclusions, Add::All)
            }
            other => other,
        }
    };
    match staged {
        Ok(()) if in_place => settled::index_written(workspace),
        Ok(()) if watched => settled::remember(workspace, exclusions, excludes_file(workspace)),
        Ok(()) => {}
        Err(err) => {
            settled::forget(workspace);
            return Err(err);
        }
    }
    Ok(git)
}

/// Git's `core.excludesFile`, when set (its rules are read as `info/exclude`'s are).
fn excludes_file(workspace: &Workspace) -> Option<PathBuf> {
    let value = workspace
        .git()
        .line(["config", "--path", "--get", "core.excludesFile"])
        .ok()?;
    (!value.is_empty()).then(|| workspace.toplevel().join(value))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Add {
    /// `git add -A`: tracked files updated, new untracked ones added.
    All,
    /// `git add -u`: tracked files updated only.
    TrackedOnly,
}

fn add(git: &Git, exclusions: &Exclusions, what: Add) -> Result<()> {
    let specs = exclusions.pathspecs();
    let flag = match what {
        Add::All => "-A",
        Add::TrackedOnly => "-u",
    };
    let mut args: Vec<String> = vec!["add".into(), flag.into(), "--".into(), ".".into()];
    args.extend(specs.iter().map(|s| format!(":(exclude,{}", &s[2..])));
    git.run(&args)?;
    if !exclusions.is_empty() {
        // A path left out now may be in the private index from an earlier snapshot.
        let mut rm: Vec<String> = ["rm", "-r", "--cached", "-q", "--ignore-unmatch", "--"]
            .map(String::from)
            .to_vec();
        rm.extend(specs);
        git.run(&rm)?;
    }
    Ok(())
}

/// Copies the user's index (with its modification time, which git's racy-entry check compares
/// against) as the first private index, so the first snapshot does not read every tracked file.
fn seed_from_user_index(workspace: &Workspace, index: &PathBuf) -> bool {
    let user = workspace.user_index();
    let Ok(meta) = std::fs::metadata(&user) else {
        return false;
    };
    let tmp = index.with_extension("seed");
    if std::fs::copy(&user, &tmp).is_err() {
        let _ = std::fs::remove_file(&tmp);
        return false;
    }
    if let (Ok(modified), Ok(file)) = (
        meta.modified(),
        std::fs::OpenOptions::new().write(true).open(&tmp),
    ) {
        let _ = file.set_modified(modified);
    }
    std::fs::rename(&tmp, index).is_ok()
}
