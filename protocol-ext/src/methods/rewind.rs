//! Rewind (code with the conversation): the session's rewind points, comparing the workspace's
//! files with a point, reading a file as a point holds it, restoring and undoing, and the
//! notification of a newly recorded point.

use crate::{Direction, Notification, Request};
use serde::{Deserialize, Serialize};

/// Before the agent acted (a user message) or after the turn (a turn-ending assistant message).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum RewindMoment {
    /// The files before the agent acted on the user message.
    Before,
    /// The files after the turn.
    After,
}

/// Who recorded a rewind point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum RewindSource {
    /// sessiontree (the bridge in the agent, the server following the file, or the CLI).
    Sessiontree,
    /// The pi-rewind-hook extension (read only).
    PiRewindHook,
}

/// One entry's rewind point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RewindPoint {
    /// The entry the point belongs to.
    pub entry_id: String,
    /// Before or after.
    pub moment: RewindMoment,
    /// Taken exactly at the agent's boundary (the bridge always is; the server following the
    /// file only when nothing was written while it took the snapshot).
    pub exact: bool,
    /// Who recorded it.
    pub source: RewindSource,
    /// Who took it: `bridge`, `server`, `cli`, `piRewindHook`.
    pub by: String,
    /// When it was taken (ISO 8601), when known.
    #[serde(default)]
    pub taken_at: Option<String>,
    /// The snapshot (a git tree id).
    pub snapshot: String,
    /// The snapshot was pruned: it can be listed, not compared or restored.
    #[serde(default)]
    pub pruned: bool,
}

/// The point an entry uses: its own, or the nearest one above it on its path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsedRewindPoint {
    /// The entry asked for.
    pub asked: String,
    /// The point used (`point.entryId` differs from `asked` when it is one above).
    pub point: RewindPoint,
}

request!(
    /// The session's rewind points (entries whose workspace files can be compared and restored).
    RewindPoints, "sessionTree/rewindPoints", ClientToServer, RewindPointsParams, RewindPointsResult
);

/// Params of [`RewindPoints`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RewindPointsParams {
    /// The session.
    pub uri: String,
}

/// Result of [`RewindPoints`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RewindPointsResult {
    /// Whether the session's workspace (its header's `cwd`) is a git work tree.
    pub available: bool,
    /// The work tree's top level.
    #[serde(default)]
    pub workspace: Option<String>,
    /// Why points are not available.
    #[serde(default)]
    pub reason: Option<String>,
    /// The points, in the session's entry order.
    pub points: Vec<RewindPoint>,
}

/// How a file differs from the point to the work tree (or to the second point).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum RewindFileStatus {
    /// Added since the point.
    Added,
    /// Changed since the point.
    Modified,
    /// Deleted since the point.
    Deleted,
}

/// One file that differs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RewindChangedFile {
    /// Path relative to the work tree's top level.
    pub path: String,
    /// How it differs.
    pub status: RewindFileStatus,
}

request!(
    /// The files that differ between an entry's point and the work tree now (or a second point).
    RewindCompare, "sessionTree/rewindCompare", ClientToServer, RewindCompareParams, RewindCompareResult
);

/// Params of [`RewindCompare`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RewindCompareParams {
    /// The session.
    pub uri: String,
    /// The entry whose point (or the nearest above) is compared.
    pub entry_id: String,
    /// Compare with this entry's point instead of the work tree.
    #[serde(default)]
    pub to_entry_id: Option<String>,
}

/// Result of [`RewindCompare`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RewindCompareResult {
    /// The work tree's top level (paths are relative to it).
    pub workspace: String,
    /// The point compared from.
    pub point: UsedRewindPoint,
    /// The second point, when one was asked for.
    #[serde(default)]
    pub to: Option<UsedRewindPoint>,
    /// The files that differ, in path order.
    pub files: Vec<RewindChangedFile>,
}

request!(
    /// One file as an entry's point holds it (for read-only diff documents).
    RewindFile, "sessionTree/rewindFile", ClientToServer, RewindFileParams, RewindFileResult
);

/// Params of [`RewindFile`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RewindFileParams {
    /// The session.
    pub uri: String,
    /// The entry whose point (or the nearest above) is read.
    pub entry_id: String,
    /// Path relative to the work tree's top level.
    pub path: String,
}

/// Result of [`RewindFile`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RewindFileResult {
    /// The point read.
    pub point: UsedRewindPoint,
    /// Whether the point has this file.
    pub exists: bool,
    /// Its git mode (`100644`, `100755`, `120000`).
    #[serde(default)]
    pub mode: Option<String>,
    /// Its content, when it is UTF-8 text.
    #[serde(default)]
    pub text: Option<String>,
    /// The content is not UTF-8 (then `text` is absent).
    #[serde(default)]
    pub binary: bool,
}

/// What a restore does to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum RewindAction {
    /// Created (in the point, not in the work tree).
    Added,
    /// Replaced.
    Changed,
    /// Removed (not in the point).
    Deleted,
}

/// One file a restore changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RewindRestoredFile {
    /// Path relative to the work tree's top level.
    pub path: String,
    /// What happens to it.
    pub action: RewindAction,
}

/// A file a restore leaves alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RewindSkippedFile {
    /// Path relative to the work tree's top level.
    pub path: String,
    /// Why (`session file`, `submodule`).
    pub reason: String,
}

request!(
    /// Restores the workspace's files to an entry's point (an undo point is taken first).
    RewindRestore, "sessionTree/rewindRestore", ClientToServer, RewindRestoreParams, RewindRestoreResult
);

/// Params of [`RewindRestore`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RewindRestoreParams {
    /// The session.
    pub uri: String,
    /// The entry whose point (or the nearest above) is restored.
    pub entry_id: String,
    /// Say what would change and touch nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// Result of [`RewindRestore`] and [`RewindUndo`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RewindRestoreResult {
    /// The work tree's top level.
    pub workspace: String,
    /// The point restored (absent for an undo).
    #[serde(default)]
    pub point: Option<UsedRewindPoint>,
    /// Nothing was changed.
    #[serde(default)]
    pub dry_run: bool,
    /// The undo point taken first (absent for a dry run).
    #[serde(default)]
    pub undo_snapshot: Option<String>,
    /// The files changed (or that would change), removals first.
    pub files: Vec<RewindRestoredFile>,
    /// The files left alone.
    pub skipped: Vec<RewindSkippedFile>,
}

request!(
    /// Puts back the files the last restore in the session's work tree replaced.
    RewindUndo, "sessionTree/rewindUndo", ClientToServer, RewindUndoParams, RewindRestoreResult
);

/// Params of [`RewindUndo`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RewindUndoParams {
    /// The session (its workspace is the one undone).
    pub uri: String,
    /// Say what would change and touch nothing.
    #[serde(default)]
    pub dry_run: bool,
}

notification!(
    /// A rewind point was recorded for an entry of an open session (the row gets its mark).
    DidRecordRewindPoint, "sessionTree/didRecordRewindPoint", DidRecordRewindPointParams
);

/// Params of [`DidRecordRewindPoint`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DidRecordRewindPointParams {
    /// The session.
    pub uri: String,
    /// The point.
    pub point: RewindPoint,
}
