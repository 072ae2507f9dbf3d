//! What a rewind operation can fail with. Every error names the problem in words a user can act
//! on and has a stable kind (camelCase) that the language server sends as `data.kind`.

use std::path::PathBuf;

/// Anything the rewind store can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The session's workspace (its header's `cwd`) is not inside a git work tree.
    #[error("the workspace {cwd} is not a git repository ({detail}); rewind points need a git work tree, nothing was touched")]
    NotARepository {
        /// The session's `cwd`.
        cwd: PathBuf,
        /// What git said.
        detail: String,
    },
    /// The entry is not in the session.
    #[error("entry {entry} is not in the session")]
    UnknownEntry {
        /// The id asked for.
        entry: String,
    },
    /// Neither the entry nor any entry above it on its path has a rewind point.
    #[error("entry {entry} has no rewind point (none on it or above it on its path); nothing was touched")]
    NoPoint {
        /// The id asked for.
        entry: String,
    },
    /// The snapshot of the point was pruned by the retention rules (or its objects are gone).
    #[error("the snapshot of entry {entry} ({tree}) was pruned; nothing was touched")]
    Pruned {
        /// The entry whose point it is.
        entry: String,
        /// The snapshot's tree id.
        tree: String,
    },
    /// A snapshot named to be bound to an entry is not a tree of the repository.
    #[error("{tree} is not a snapshot of this repository (take one with `sessiontree rewind-point take`)")]
    UnknownSnapshot {
        /// The id given.
        tree: String,
    },
    /// `--undo` with no restore recorded in this work tree.
    #[error("nothing to undo: no restore has been made in {workspace}")]
    NothingToUndo {
        /// The work tree.
        workspace: PathBuf,
    },
    /// The file asked for is not in the snapshot.
    #[error("{path} is not in the snapshot of entry {entry}")]
    NoSuchFile {
        /// Repository-relative path.
        path: String,
        /// The entry whose point it is.
        entry: String,
    },
    /// git is not installed or could not be started.
    #[error("cannot run git ({0}); rewind needs the git command")]
    GitMissing(std::io::Error),
    /// A git command failed.
    #[error("git {command} failed ({status}): {stderr}")]
    Git {
        /// The subcommand and its arguments.
        command: String,
        /// Exit status.
        status: String,
        /// What git printed.
        stderr: String,
    },
    /// A file of the store or of the work tree could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A restore failed part way; the work tree was put back to the undo point.
    #[error("restoring failed at {path} ({cause}); the files were put back as they were before the restore (undo point {undo})")]
    RestoreRolledBack {
        /// Where it failed.
        path: String,
        /// Why.
        cause: String,
        /// The undo point that was put back.
        undo: String,
    },
    /// A restore failed part way and putting back the undo point failed too.
    #[error("restoring failed at {path} ({cause}) and putting the files back failed too ({rollback}); the state before the restore is kept as snapshot {undo}: run `sessiontree rewind FILE --undo` once the cause is fixed")]
    RestoreBroken {
        /// Where it failed.
        path: String,
        /// Why.
        cause: String,
        /// Why the roll-back failed.
        rollback: String,
        /// The undo point.
        undo: String,
    },
    /// The session could not be read.
    #[error(transparent)]
    Session(#[from] sessiontree_core::Error),
}

impl Error {
    /// The stable kind sent as `data.kind`.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::NotARepository { .. } => "notARepository",
            Error::UnknownEntry { .. } => "unknownEntry",
            Error::NoPoint { .. } => "noRewindPoint",
            Error::Pruned { .. } => "snapshotPruned",
            Error::NothingToUndo { .. } => "nothingToUndo",
            Error::UnknownSnapshot { .. } => "unknownSnapshot",
            Error::NoSuchFile { .. } => "noSuchFile",
            Error::GitMissing(_) | Error::Git { .. } => "gitFailed",
            Error::Io { .. } => "io",
            Error::RestoreRolledBack { .. } => "restoreRolledBack",
            Error::RestoreBroken { .. } => "restoreBroken",
            Error::Session(_) => "session",
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// Result of a rewind operation.
pub type Result<T> = std::result::Result<T, Error>;
