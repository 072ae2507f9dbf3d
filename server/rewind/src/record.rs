//! Which entries are rewind boundaries, and recording points for a session followed live (no
//! agent bridge): the server sees the boundaries only when their lines reach the file, so a point
//! it takes is exact only when the file did not grow while the snapshot was taken and, for a user
//! message, no later entry of its turn had been written yet (see `docs/rewind.md`).

use crate::error::Result;
use crate::ledger::Moment;
use crate::operations::{PointTarget, Rewind, Snapshot};
use serde_json::Value;
use sessiontree_core::{Entry, Session};
use std::path::{Path, PathBuf};

/// The boundary an entry is: a user message (its point is the files before the agent acted) or a
/// turn-ending assistant message (any stop reason but `toolUse`: the files after the turn).
pub fn boundary(entry: &Entry) -> Option<Moment> {
    if entry.kind() != "message" {
        return None;
    }
    match entry.role()? {
        "user" => Some(Moment::Before),
        "assistant" => {
            let value = entry.json();
            let stop = value
                .get("message")
                .and_then(|m| m.get("stopReason"))
                .and_then(Value::as_str);
            (stop != Some("toolUse")).then_some(Moment::After)
        }
        _ => None,
    }
}

/// Entries appended to a followed session, as the server read them.
#[derive(Debug, Clone)]
pub struct Appended {
    /// The session's `cwd`.
    pub cwd: PathBuf,
    /// The session file.
    pub file: PathBuf,
    /// The file's length when the entries were read.
    pub file_len: u64,
    /// The last boundary among the new entries.
    pub boundary: PointTarget,
    /// Its kind.
    pub moment: Moment,
    /// Whether entries were appended after it in the same read.
    pub followed: bool,
}

impl Appended {
    /// The last boundary among `new_ids` (entries of `session` just read), if any.
    pub fn of(session: &Session, new_ids: &[String], file_len: u64) -> Option<Appended> {
        let file = session.path()?.to_path_buf();
        let (position, moment) = new_ids
            .iter()
            .enumerate()
            .rev()
            .find_map(|(n, id)| Some((n, boundary(session.entry(id)?)?)))?;
        Some(Appended {
            cwd: PathBuf::from(session.cwd()),
            boundary: PointTarget::of(session, &new_ids[position]),
            file,
            file_len,
            moment,
            followed: position + 1 < new_ids.len(),
        })
    }
}

/// What live recording did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The entry.
    pub entry_id: String,
    /// Before or after.
    pub moment: Moment,
    /// The snapshot.
    pub snapshot: Snapshot,
    /// Whether the point is exact.
    pub exact: bool,
}

/// Takes the point of the last boundary that was appended. Nothing is recorded when the entry has
/// a point already (the bridge records exact ones at the agent's own boundary). A workspace that
/// is not a git work tree is an error the caller may ignore.
pub fn record_live(appended: &Appended) -> Result<Option<Recorded>> {
    let rewind = Rewind::open(&appended.cwd, Some(&appended.file))?;
    if rewind.has_point(&appended.boundary.session_id, &appended.boundary.entry_id)? {
        return Ok(None);
    }
    let snapshot = rewind.snapshot()?;
    if rewind.has_point(&appended.boundary.session_id, &appended.boundary.entry_id)? {
        // The bridge recorded it while the snapshot was taken.
        return Ok(None);
    }
    let grew = file_len(&appended.file) != Some(appended.file_len);
    let exact = !grew && !appended.followed;
    rewind.bind_target(
        &appended.boundary,
        appended.moment,
        &snapshot.tree,
        exact,
        "server",
    )?;
    Ok(Some(Recorded {
        entry_id: appended.boundary.entry_id.clone(),
        moment: appended.moment,
        snapshot,
        exact,
    }))
}

fn file_len(path: &Path) -> Option<u64> {
    std::fs::metadata(path).ok().map(|m| m.len())
}
