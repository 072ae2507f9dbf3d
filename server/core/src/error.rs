//! The engine's errors: typed, each with a message that names the problem and a stable kind string
//! (the server sends it as `data.kind`).

use std::path::PathBuf;

/// Everything an engine call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file could not be read or written.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done ("cannot read", "cannot append to", ...).
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The file does not start with a session header.
    #[error("{path} is not a session file: {detail}; the file was not modified")]
    InvalidHeader {
        /// The file.
        path: PathBuf,
        /// What was found instead.
        detail: String,
    },
    /// No entry has this id.
    #[error("entry {0} not found")]
    EntryNotFound(String),
    /// The file uses an older format; writing would mix versions, so it needs an explicit migrate.
    #[error("{path} uses session format version {version}; run `sessiontree migrate` (it keeps a backup) before writing to it")]
    NeedsMigration {
        /// The file.
        path: PathBuf,
        /// Its version.
        version: u64,
    },
    /// A caller handed the engine something that is not a valid entry or value.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// Another process is in the middle of writing a line; appending now would tear it.
    #[error("{path} ends with an incomplete line (another writer is mid-write); try again")]
    WriterBusy {
        /// The file.
        path: PathBuf,
    },
    /// The operation does not exist in this session's dialect.
    #[error("{0}")]
    Unsupported(String),
    /// A store refused a write because its value was no longer what the session last read
    /// (another writer appended, rewrote or created it first); nothing was written.
    #[error("{path} changed in the store before this write (expected {}, found {}); nothing was written: read what changed and try again", describe_size(*.expected), describe_size(*.actual))]
    StoreConflict {
        /// The session's path.
        path: PathBuf,
        /// The length the write expected (`None`: no value).
        expected: Option<u64>,
        /// The length found (`None`: no value).
        actual: Option<u64>,
    },
    /// The file changed under us in a way appends cannot follow (truncated or replaced).
    #[error("{path} was truncated or replaced by another program; reload it")]
    FileReplaced {
        /// The file.
        path: PathBuf,
    },
}

impl Error {
    /// A stable, machine-readable kind (camelCase), sent to clients as `data.kind`.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                "fileNotFound"
            }
            Error::Io { .. } => "io",
            Error::InvalidHeader { .. } => "invalidHeader",
            Error::EntryNotFound(_) => "entryNotFound",
            Error::NeedsMigration { .. } => "needsMigration",
            Error::InvalidInput(_) => "invalidInput",
            Error::WriterBusy { .. } | Error::StoreConflict { .. } => "writerBusy",
            Error::Unsupported(_) => "unsupported",
            Error::FileReplaced { .. } => "fileReplaced",
        }
    }

    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        Error::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

fn describe_size(size: Option<u64>) -> String {
    match size {
        Some(n) => format!("{n} bytes"),
        None => "no value".to_owned(),
    }
}

/// Engine result.
pub type Result<T, E = Error> = std::result::Result<T, E>;
