//! The ledger: which snapshot is the rewind point of which entry. One JSON object a line in
//! `<common git dir>/sessiontree/ledger.jsonl`, appended whole in one write (so writers in several
//! processes never interleave) and never rewritten: a pruned snapshot gets a `pruned` line of its
//! own, which is how a pruned point is reported as such. Session files are never written for this.
//!
//! A point is keyed by the session id and the entry id; it also keeps the entry's timestamp, which
//! a branched session copies with the id, so the points a branched session inherited are found
//! even when its parent file has moved.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// What a point's files are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Moment {
    /// A user message: the files before the agent acted on it.
    Before,
    /// A turn-ending assistant message: the files after that turn.
    After,
}

impl Moment {
    /// The word used on the wire and in the CLI.
    pub fn as_str(self) -> &'static str {
        match self {
            Moment::Before => "before",
            Moment::After => "after",
        }
    }
}

/// One recorded point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PointRecord {
    /// The session id (its header's `id`).
    pub session: String,
    /// The entry id.
    pub entry: String,
    /// The entry's own `timestamp` (copied with it into branched sessions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_time: Option<String>,
    /// Before or after.
    pub moment: Moment,
    /// The snapshot's tree id.
    pub tree: String,
    /// Whether the snapshot was taken exactly at the boundary (see `docs/rewind.md`).
    pub exact: bool,
    /// When it was taken (ISO 8601, UTC).
    pub taken_at: String,
    /// Who took it: `bridge` (in the agent, at its own boundary), `server` (following the file
    /// live) or `cli`.
    pub by: String,
    /// The session file at the time (retention reads its labels to pin labelled entries).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// One line of the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Record {
    /// A rewind point.
    Point(PointRecord),
    /// The state a restore replaced, in one work tree (kept while it is the last one).
    #[serde(rename_all = "camelCase")]
    Undo {
        /// The snapshot's tree id.
        tree: String,
        /// The work tree's top level.
        worktree: String,
        /// When it was taken.
        taken_at: String,
    },
    /// A snapshot the retention rules pruned.
    #[serde(rename_all = "camelCase")]
    Pruned {
        /// The tree id.
        tree: String,
        /// When.
        pruned_at: String,
    },
}

/// The ledger file of a repository.
#[derive(Debug, Clone)]
pub struct Ledger {
    path: PathBuf,
}

impl Ledger {
    /// The ledger at `path` (created on the first append).
    pub fn at(path: &Path) -> Ledger {
        Ledger {
            path: path.to_path_buf(),
        }
    }

    /// Every record, in the order written. Lines that do not parse are skipped (and logged): the
    /// file is only ever appended to by us, so one can only be a torn write of a killed process.
    pub fn read(&self) -> Result<Vec<Record>> {
        let text = match std::fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(Error::io(&self.path, e)),
        };
        let mut out = Vec::new();
        for (n, line) in text.split(|&b| b == b'\n').enumerate() {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<Record>(line) {
                Ok(record) => out.push(record),
                Err(err) => tracing::warn!(
                    "{}: line {} is not a ledger record ({err}); skipped",
                    self.path.display(),
                    n + 1
                ),
            }
        }
        Ok(out)
    }

    /// Appends records, each as one whole line, in one write.
    pub fn append(&self, records: &[Record]) -> Result<()> {
        if records.is_empty() {
            return Ok(());
        }
        let mut text = Vec::new();
        for record in records {
            // Serializing these plain structs cannot fail.
            if let Ok(line) = serde_json::to_vec(record) {
                text.extend_from_slice(&line);
                text.push(b'\n');
            }
        }
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .map_err(|e| Error::io(&self.path, e))?;
        file.write_all(&text)
            .and_then(|()| file.sync_data())
            .map_err(|e| Error::io(&self.path, e))
    }
}

/// Now, as the ledger writes times.
pub fn now() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}
