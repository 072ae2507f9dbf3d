//! The rewind operations on one session's workspace: record a point, list points, compare, read a
//! file at a point, restore (with an undo point taken first), undo the last restore, prune. The
//! CLI and the language server call these; nothing here knows of either.

use crate::compare::{diff_staged, diff_trees, file_at, Change, FileAt};
use crate::error::{Error, Result};
use crate::ledger::{now, Ledger, Moment, PointRecord, Record};
use crate::points::{Points, Resolved};
use crate::restore::{apply, plan, Plan};
use crate::snapshot::{capture, stage, Exclusions};
use crate::store;
use crate::workspace::Workspace;
use serde::{Deserialize, Serialize};
use sessiontree_core::Session;
use std::collections::HashMap;
use std::path::Path;

/// The rewind store of one session's workspace.
#[derive(Debug, Clone)]
pub struct Rewind {
    workspace: Workspace,
    ledger: Ledger,
    exclusions: Exclusions,
    /// Set when opening found a restore that was interrupted and put its undo point back.
    recovered: Option<String>,
}

/// The entry a point is recorded for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PointTarget {
    /// The session id.
    pub session_id: String,
    /// The session file.
    pub file: Option<String>,
    /// The entry id.
    pub entry_id: String,
    /// The entry's timestamp.
    pub entry_time: Option<String>,
}

impl PointTarget {
    /// The entry `entry_id` of `session`.
    pub fn of(session: &Session, entry_id: &str) -> PointTarget {
        PointTarget {
            session_id: session.session_id().to_owned(),
            file: session.path().map(|p| p.to_string_lossy().into_owned()),
            entry_id: entry_id.to_owned(),
            entry_time: session
                .entry(entry_id)
                .and_then(|e| e.timestamp.as_deref())
                .map(str::to_owned),
        }
    }
}

/// A snapshot that was taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// Its tree id.
    pub tree: String,
    /// Whether it is a tree the store did not keep yet (an unchanged work tree makes none).
    pub new: bool,
}

/// The answer of a compare.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// The point compared from.
    pub point: Resolved,
    /// The second point, when two points are compared (otherwise the work tree as it is now).
    pub other: Option<Resolved>,
    /// The files that differ, from the point to the work tree (or to the second point).
    pub changes: Vec<Change>,
}

/// The answer of a restore or an undo.
#[derive(Debug, Clone)]
pub struct RestoreReport {
    /// The point restored (none for an undo).
    pub point: Option<Resolved>,
    /// The tree the work tree now has.
    pub restored: String,
    /// The undo point taken first (none for a dry run).
    pub undo: Option<String>,
    /// What changed (or would change, for a dry run).
    pub plan: Plan,
    /// Whether files were changed.
    pub dry_run: bool,
}

/// The last restore made in a work tree: what "undo" puts back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct LastRestore {
    undo: String,
    restored: String,
    at: String,
}

/// A restore in progress (removed when it is done): a process that finds it rolls back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Journal {
    undo: String,
    target: String,
    started_at: String,
}

impl Rewind {
    /// The store of the session's workspace (its header's `cwd`). A restore that a killed process
    /// left half done is rolled back first (see [`Rewind::recovered`]).
    pub fn for_session(session: &Session) -> Result<Rewind> {
        Rewind::open(Path::new(session.cwd()), session.path())
    }

    /// The store of the workspace that holds `cwd`, for the session file `session_file` (which a
    /// snapshot leaves out when it lies in the work tree).
    pub fn open(cwd: &Path, session_file: Option<&Path>) -> Result<Rewind> {
        let workspace = Workspace::discover(cwd)?;
        let exclusions = Exclusions::for_session_file(&workspace, session_file);
        let mut rewind = Rewind {
            ledger: Ledger::at(&workspace.ledger_path()),
            workspace,
            exclusions,
            recovered: None,
        };
        if rewind.workspace.journal_path().exists() {
            let _lock = rewind.workspace.lock()?;
            rewind.recovered = rewind.recover()?;
        }
        Ok(rewind)
    }

    /// The workspace.
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// When opening rolled back an interrupted restore: the undo point that was put back.
    pub fn recovered(&self) -> Option<&str> {
        self.recovered.as_deref()
    }

    /// The session's points.
    pub fn points(&self, session: &Session) -> Result<Points> {
        Points::of(session, &self.workspace, &self.ledger.read()?)
    }

    /// Whether the ledger has a point for this session's entry.
    pub fn has_point(&self, session_id: &str, entry_id: &str) -> Result<bool> {
        Ok(self.ledger.read()?.iter().any(
            |r| matches!(r, Record::Point(p) if p.session == session_id && p.entry == entry_id),
        ))
    }

    /// Takes a snapshot of the work tree and keeps it reachable (a tree the store already keeps
    /// is not stored again).
    pub fn snapshot(&self) -> Result<Snapshot> {
        let _lock = self.workspace.lock()?;
        self.snapshot_locked()
    }

    fn snapshot_locked(&self) -> Result<Snapshot> {
        let tree = capture(&self.workspace, &self.exclusions)?;
        let records = self.ledger.read()?;
        // A tree the ledger knows is kept; any other is added unless the ref has it already
        // (taken but not yet bound to an entry).
        let new = !live_trees(&records).contains_key(tree.as_str())
            && store::keep(&self.workspace, &tree)?;
        Ok(Snapshot { tree, new })
    }

    /// Fails with [`Error::UnknownSnapshot`] unless `tree` names a tree of the repository (a
    /// snapshot another process took, about to be bound).
    pub fn require_snapshot(&self, tree: &str) -> Result<()> {
        let valid = !tree.is_empty() && tree.bytes().all(|b| b.is_ascii_hexdigit());
        let mut reader = self.workspace.git().objects()?;
        match reader.read_with_id(&format!("{tree}^{{tree}}"))? {
            Some((id, _)) if valid && id == tree => Ok(()),
            _ => Err(Error::UnknownSnapshot {
                tree: tree.to_owned(),
            }),
        }
    }

    /// Records `tree` (a snapshot taken with [`Rewind::snapshot`]) as the point of an entry.
    pub fn bind(
        &self,
        session: &Session,
        entry_id: &str,
        moment: Moment,
        tree: &str,
        exact: bool,
        by: &str,
    ) -> Result<()> {
        let target = PointTarget::of(session, entry_id);
        self.bind_target(&target, moment, tree, exact, by)
    }

    /// [`Rewind::bind`] for an entry named without its session at hand.
    pub fn bind_target(
        &self,
        target: &PointTarget,
        moment: Moment,
        tree: &str,
        exact: bool,
        by: &str,
    ) -> Result<()> {
        self.ledger.append(&[Record::Point(PointRecord {
            session: target.session_id.clone(),
            entry: target.entry_id.clone(),
            entry_time: target.entry_time.clone(),
            moment,
            tree: tree.to_owned(),
            exact,
            taken_at: now(),
            by: by.to_owned(),
            file: target.file.clone(),
        })])
    }

    /// Takes a snapshot now and records it as the point of an entry.
    pub fn record(
        &self,
        session: &Session,
        entry_id: &str,
        moment: Moment,
        exact: bool,
        by: &str,
    ) -> Result<Snapshot> {
        let snapshot = self.snapshot()?;
        self.bind(session, entry_id, moment, &snapshot.tree, exact, by)?;
        Ok(snapshot)
    }

    /// The point an entry uses, checked to be still there.
    pub fn resolve(&self, session: &Session, entry_id: &str) -> Result<Resolved> {
        let resolved = self.points(session)?.resolve(session, entry_id)?;
        self.check_present(&resolved)?;
        Ok(resolved)
    }

    /// Fails with [`Error::Pruned`] when the point's snapshot is no longer there.
    pub fn check_present(&self, resolved: &Resolved) -> Result<()> {
        let pruned = || Error::Pruned {
            entry: resolved.point.entry_id.clone(),
            tree: resolved.point.tree.clone(),
        };
        if resolved.point.pruned {
            return Err(pruned());
        }
        let mut reader = self.workspace.git().objects()?;
        match reader.read_with_id(&format!("{}^{{tree}}", resolved.point.tree))? {
            Some(_) => Ok(()),
            None => Err(pruned()),
        }
    }

    /// The files that differ between an entry's point and the work tree now, or between two
    /// entries' points when `other` is given.
    pub fn compare(
        &self,
        session: &Session,
        entry_id: &str,
        other: Option<&str>,
    ) -> Result<Comparison> {
        let point = self.resolve(session, entry_id)?;
        let other = other.map(|id| self.resolve(session, id)).transpose()?;
        self.compare_points(point, other)
    }

    /// [`Rewind::compare`] for points already resolved (the slow part, without the session).
    pub fn compare_points(&self, point: Resolved, other: Option<Resolved>) -> Result<Comparison> {
        let changes = match &other {
            Some(other) => diff_trees(&self.workspace, &point.point.tree, &other.point.tree)?,
            None => {
                // The work tree as it is now: staged in the private index and compared there,
                // without writing it as a snapshot.
                let _lock = self.workspace.lock()?;
                stage(&self.workspace, &self.exclusions)?;
                diff_staged(&self.workspace, &point.point.tree)?
            }
        };
        let changes = changes
            .into_iter()
            .filter(|c| !self.exclusions.contains(&c.path))
            .collect();
        Ok(Comparison {
            point,
            other,
            changes,
        })
    }

    /// One file as an entry's point holds it (`None`: not in the point).
    pub fn file_at(
        &self,
        session: &Session,
        entry_id: &str,
        path: &str,
    ) -> Result<(Resolved, Option<FileAt>)> {
        let point = self.resolve(session, entry_id)?;
        let file = self.file_at_point(&point, path)?;
        Ok((point, file))
    }

    /// [`Rewind::file_at`] for a point already resolved.
    pub fn file_at_point(&self, point: &Resolved, path: &str) -> Result<Option<FileAt>> {
        file_at(&self.workspace, &point.point.tree, path)
    }

    /// Restores the work tree's files to an entry's point. The current files are kept first as
    /// the undo point; a failure part way puts them back and says so.
    pub fn restore(
        &self,
        session: &Session,
        entry_id: &str,
        dry_run: bool,
    ) -> Result<RestoreReport> {
        let point = self.resolve(session, entry_id)?;
        self.restore_point(point, dry_run)
    }

    /// [`Rewind::restore`] for a point already resolved.
    pub fn restore_point(&self, point: Resolved, dry_run: bool) -> Result<RestoreReport> {
        self.check_present(&point)?;
        let mut report = self.restore_tree(&point.point.tree, dry_run)?;
        report.point = Some(point);
        Ok(report)
    }

    /// Puts back the files the last restore in this work tree replaced (the user's own edits
    /// included). An undo is itself a restore: undoing twice puts the restore back.
    pub fn undo(&self, dry_run: bool) -> Result<RestoreReport> {
        let path = self.workspace.last_restore_path();
        let last: LastRestore = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                Error::io(
                    &path,
                    std::io::Error::other(format!("not a restore record: {e}")),
                )
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::NothingToUndo {
                    workspace: self.workspace.toplevel().to_path_buf(),
                })
            }
            Err(e) => return Err(Error::io(&path, e)),
        };
        let mut reader = self.workspace.git().objects()?;
        if reader
            .read_with_id(&format!("{}^{{tree}}", last.undo))?
            .is_none()
        {
            return Err(Error::Pruned {
                entry: "the last restore's undo point".to_owned(),
                tree: last.undo,
            });
        }
        drop(reader);
        self.restore_tree(&last.undo, dry_run)
    }

    fn restore_tree(&self, target: &str, dry_run: bool) -> Result<RestoreReport> {
        let _lock = self.workspace.lock()?;
        if dry_run {
            let current = capture(&self.workspace, &self.exclusions)?;
            let plan = plan(&self.workspace, &self.exclusions, &current, target)?;
            return Ok(RestoreReport {
                point: None,
                restored: target.to_owned(),
                undo: None,
                plan,
                dry_run,
            });
        }
        let undo = self.snapshot_locked()?;
        self.ledger.append(&[Record::Undo {
            tree: undo.tree.clone(),
            worktree: self.workspace.toplevel().to_string_lossy().into_owned(),
            taken_at: now(),
        }])?;
        let plan = plan(&self.workspace, &self.exclusions, &undo.tree, target)?;
        self.write_json(
            &self.workspace.journal_path(),
            &Journal {
                undo: undo.tree.clone(),
                target: target.to_owned(),
                started_at: now(),
            },
        )?;
        if let Err((path, cause)) = apply(&self.workspace, &plan) {
            return Err(match self.roll_back(&undo.tree) {
                Ok(()) => Error::RestoreRolledBack {
                    path,
                    cause,
                    undo: undo.tree,
                },
                Err(rollback) => Error::RestoreBroken {
                    path,
                    cause,
                    rollback: rollback.to_string(),
                    undo: undo.tree,
                },
            });
        }
        self.write_json(
            &self.workspace.last_restore_path(),
            &LastRestore {
                undo: undo.tree.clone(),
                restored: target.to_owned(),
                at: now(),
            },
        )?;
        self.remove_journal()?;
        Ok(RestoreReport {
            point: None,
            restored: target.to_owned(),
            undo: Some(undo.tree),
            plan,
            dry_run,
        })
    }

    /// Puts the work tree back to `undo` after a failed or interrupted restore.
    fn roll_back(&self, undo: &str) -> Result<()> {
        let now_tree = capture(&self.workspace, &self.exclusions)?;
        let back = plan(&self.workspace, &self.exclusions, &now_tree, undo)?;
        apply(&self.workspace, &back).map_err(|(path, cause)| Error::Io {
            path: path.into(),
            source: std::io::Error::other(cause),
        })?;
        self.remove_journal()
    }

    /// Rolls back a restore a killed process left half done; the caller holds the lock.
    fn recover(&self) -> Result<Option<String>> {
        let path = self.workspace.journal_path();
        let journal: Journal = match std::fs::read(&path) {
            Ok(bytes) => match serde_json::from_slice(&bytes) {
                Ok(journal) => journal,
                // Torn before the restore changed anything (it is written before any file).
                Err(_) => {
                    self.remove_journal()?;
                    return Ok(None);
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(&path, e)),
        };
        tracing::warn!(
            "a restore to {} was interrupted; putting back {}",
            journal.target,
            journal.undo
        );
        self.roll_back(&journal.undo)?;
        Ok(Some(journal.undo))
    }

    fn remove_journal(&self) -> Result<()> {
        let path = self.workspace.journal_path();
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::io(&path, e)),
        }
    }

    /// Writes a small JSON file atomically (temporary file, sync, rename).
    fn write_json<T: Serialize>(&self, path: &Path, value: &T) -> Result<()> {
        use std::io::Write;
        let tmp = path.with_extension("tmp");
        let bytes = serde_json::to_vec(value).map_err(|e| Error::io(path, e.into()))?;
        let mut file = std::fs::File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
        file.write_all(&bytes)
            .and_then(|()| file.sync_data())
            .map_err(|e| Error::io(&tmp, e))?;
        std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
    }

    /// The ledger (for retention).
    pub(crate) fn ledger(&self) -> &Ledger {
        &self.ledger
    }
}

/// The trees the ledger says are kept (last event not a prune), with the latest time each was
/// recorded.
pub(crate) fn live_trees(records: &[Record]) -> HashMap<&str, &str> {
    let mut out: HashMap<&str, &str> = HashMap::new();
    for record in records {
        match record {
            Record::Point(p) => {
                out.insert(&p.tree, &p.taken_at);
            }
            Record::Undo { tree, taken_at, .. } => {
                out.insert(tree, taken_at);
            }
            Record::Pruned { tree, .. } => {
                out.remove(tree.as_str());
            }
        }
    }
    out
}
