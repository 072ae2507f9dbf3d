//! The rewind requests (`sessionTree/rewind*`): a session's points, compare, a file at a point,
//! restore and undo, on the `sessiontree-rewind` store. The point is resolved on the session's
//! actor (a read of the ledger: quick), the git work (snapshots, diffs, writing files) runs on a
//! blocking thread, so the session's queue never waits for git. The session file is never
//! written here.

use crate::backend::Backend;
use crate::errors::{ApiError, ApiResult};
use sessiontree_protocol::{self as proto, ErrorKind};
use sessiontree_rewind as rw;

impl From<rw::Error> for ApiError {
    fn from(err: rw::Error) -> Self {
        let kind = match &err {
            rw::Error::NotARepository { .. } => ErrorKind::NotARepository,
            rw::Error::UnknownEntry { .. } => ErrorKind::EntryNotFound,
            rw::Error::NoPoint { .. } => ErrorKind::NoRewindPoint,
            rw::Error::Pruned { .. } => ErrorKind::SnapshotPruned,
            rw::Error::NothingToUndo { .. } => ErrorKind::NothingToUndo,
            rw::Error::NoSuchFile { .. } | rw::Error::UnknownSnapshot { .. } => {
                ErrorKind::InvalidParams
            }
            rw::Error::GitMissing(_) | rw::Error::Git { .. } => ErrorKind::GitFailed,
            rw::Error::Io { .. } => ErrorKind::Io,
            rw::Error::RestoreRolledBack { .. } => ErrorKind::RestoreRolledBack,
            rw::Error::RestoreBroken { .. } => ErrorKind::RestoreBroken,
            rw::Error::Session(e) => ErrorKind::parse(e.kind()).unwrap_or(ErrorKind::Internal),
        };
        ApiError::new(kind, err.to_string())
    }
}

/// A point on the wire.
pub(crate) fn point(p: &rw::Point) -> proto::RewindPoint {
    proto::RewindPoint {
        entry_id: p.entry_id.clone(),
        moment: match p.moment {
            rw::Moment::Before => proto::RewindMoment::Before,
            rw::Moment::After => proto::RewindMoment::After,
        },
        exact: p.exact,
        source: match p.source {
            rw::Source::Sessiontree => proto::RewindSource::Sessiontree,
            rw::Source::PiRewindHook => proto::RewindSource::PiRewindHook,
        },
        by: p.by.clone(),
        taken_at: p.taken_at.clone(),
        snapshot: p.tree.clone(),
        pruned: p.pruned,
    }
}

/// Why rewind is not offered on a session kept in a store, or `None` for a local session. The
/// store's session may have been written by an agent on another machine: its `cwd` names that
/// machine's work tree, and a folder of the same name here is not it. Restoring into it could
/// overwrite files that have nothing to do with the session, so nothing is read or written.
fn refused_for_store(session: &sessiontree_core::Session) -> Option<String> {
    let store = session.store()?;
    Some(format!(
        "rewind is not available on a session kept in a store ({}): the agent that wrote it may have run on another machine, whose work tree {} is not this machine's folder of that name; nothing was read or written",
        store.path().display(),
        session.cwd()
    ))
}

/// [`refused_for_store`] as the `unsupported` error of a request that would compare or restore.
fn refuse_store(session: &sessiontree_core::Session) -> ApiResult<()> {
    match refused_for_store(session) {
        Some(reason) => Err(ApiError::new(ErrorKind::Unsupported, reason)),
        None => Ok(()),
    }
}

fn used(r: &rw::Resolved) -> proto::UsedRewindPoint {
    proto::UsedRewindPoint {
        asked: r.asked.clone(),
        point: point(&r.point),
    }
}

fn restore_result(rewind: &rw::Rewind, report: rw::RestoreReport) -> proto::RewindRestoreResult {
    proto::RewindRestoreResult {
        workspace: rewind.workspace().toplevel().to_string_lossy().into_owned(),
        point: report.point.as_ref().map(used),
        dry_run: report.dry_run,
        undo_snapshot: report.undo,
        files: report
            .plan
            .actions
            .iter()
            .map(|a| proto::RewindRestoredFile {
                path: a.path.clone(),
                action: match a.action {
                    rw::Action::Added => proto::RewindAction::Added,
                    rw::Action::Changed => proto::RewindAction::Changed,
                    rw::Action::Deleted => proto::RewindAction::Deleted,
                },
            })
            .collect(),
        skipped: report
            .plan
            .skipped
            .iter()
            .map(|(path, reason)| proto::RewindSkippedFile {
                path: path.clone(),
                reason: reason.clone(),
            })
            .collect(),
    }
}

/// Runs git work off the async threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, rw::Error> + Send + 'static,
) -> ApiResult<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::new(ErrorKind::Internal, format!("rewind task failed: {e}")))?
        .map_err(ApiError::from)
}

impl Backend {
    pub(crate) async fn rewind_points(
        &self,
        p: proto::RewindPointsParams,
    ) -> ApiResult<proto::RewindPointsResult> {
        let handle = self.registry.get(&p.uri)?;
        handle
            .read(move |a| {
                if let Some(reason) = refused_for_store(&a.session) {
                    return Ok(proto::RewindPointsResult {
                        available: false,
                        workspace: None,
                        reason: Some(reason),
                        points: Vec::new(),
                    });
                }
                let rewind = match rw::Rewind::for_session(&a.session) {
                    Ok(rewind) => rewind,
                    Err(err @ rw::Error::NotARepository { .. }) => {
                        return Ok(proto::RewindPointsResult {
                            available: false,
                            workspace: None,
                            reason: Some(err.to_string()),
                            points: Vec::new(),
                        })
                    }
                    Err(err) => return Err(err.into()),
                };
                let points = rewind.points(&a.session)?;
                Ok(proto::RewindPointsResult {
                    available: true,
                    workspace: Some(rewind.workspace().toplevel().to_string_lossy().into_owned()),
                    reason: None,
                    points: points.in_order(&a.session).into_iter().map(point).collect(),
                })
            })
            .await
    }

    /// The store and the resolved point(s) of an entry, read on the actor.
    async fn resolve(
        &self,
        uri: &str,
        entry_id: String,
        second: Option<String>,
    ) -> ApiResult<(rw::Rewind, rw::Resolved, Option<rw::Resolved>)> {
        let handle = self.registry.get(uri)?;
        handle
            .read(move |a| {
                refuse_store(&a.session)?;
                let rewind = rw::Rewind::for_session(&a.session)?;
                let points = rewind.points(&a.session)?;
                let resolved = points.resolve(&a.session, &entry_id)?;
                let second = second
                    .map(|id| points.resolve(&a.session, &id))
                    .transpose()?;
                Ok((rewind, resolved, second))
            })
            .await
    }

    pub(crate) async fn rewind_compare(
        &self,
        p: proto::RewindCompareParams,
    ) -> ApiResult<proto::RewindCompareResult> {
        let (rewind, resolved, second) = self.resolve(&p.uri, p.entry_id, p.to_entry_id).await?;
        blocking(move || {
            rewind.check_present(&resolved)?;
            if let Some(second) = &second {
                rewind.check_present(second)?;
            }
            let cmp = rewind.compare_points(resolved, second)?;
            Ok(proto::RewindCompareResult {
                workspace: rewind.workspace().toplevel().to_string_lossy().into_owned(),
                point: used(&cmp.point),
                to: cmp.other.as_ref().map(used),
                files: cmp
                    .changes
                    .iter()
                    .map(|c| proto::RewindChangedFile {
                        path: c.path.clone(),
                        status: match c.status {
                            rw::Status::Added => proto::RewindFileStatus::Added,
                            rw::Status::Modified => proto::RewindFileStatus::Modified,
                            rw::Status::Deleted => proto::RewindFileStatus::Deleted,
                        },
                    })
                    .collect(),
            })
        })
        .await
    }

    pub(crate) async fn rewind_file(
        &self,
        p: proto::RewindFileParams,
    ) -> ApiResult<proto::RewindFileResult> {
        let (rewind, resolved, _) = self.resolve(&p.uri, p.entry_id, None).await?;
        blocking(move || {
            rewind.check_present(&resolved)?;
            let file = rewind.file_at_point(&resolved, &p.path)?;
            let (text, binary) = match &file {
                Some(f) => match std::str::from_utf8(&f.content) {
                    Ok(text) => (Some(text.to_owned()), false),
                    Err(_) => (None, true),
                },
                None => (None, false),
            };
            Ok(proto::RewindFileResult {
                point: used(&resolved),
                exists: file.is_some(),
                mode: file.as_ref().map(|f| format!("{:o}", f.mode)),
                text,
                binary,
            })
        })
        .await
    }

    pub(crate) async fn rewind_restore(
        &self,
        p: proto::RewindRestoreParams,
    ) -> ApiResult<proto::RewindRestoreResult> {
        let (rewind, resolved, _) = self.resolve(&p.uri, p.entry_id, None).await?;
        blocking(move || {
            let report = rewind.restore_point(resolved, p.dry_run)?;
            Ok(restore_result(&rewind, report))
        })
        .await
    }

    pub(crate) async fn rewind_undo(
        &self,
        p: proto::RewindUndoParams,
    ) -> ApiResult<proto::RewindRestoreResult> {
        let handle = self.registry.get(&p.uri)?;
        let rewind = handle
            .read(|a| {
                refuse_store(&a.session)?;
                Ok(rw::Rewind::for_session(&a.session)?)
            })
            .await?;
        blocking(move || {
            let report = rewind.undo(p.dry_run)?;
            Ok(restore_result(&rewind, report))
        })
        .await
    }
}

/// Records the rewind point of the last boundary among the entries the actor just read from the
/// file, appended by another process (the agent, with no bridge). The snapshot runs on a blocking
/// thread; a workspace that is not a git work tree is skipped quietly.
pub(crate) fn record_followed(
    session: &sessiontree_core::Session,
    from: usize,
    uri: &str,
    shared: &std::sync::Arc<crate::Shared>,
) {
    use sessiontree_core::session::FileState;
    let entries = session.entries();
    let ids: Vec<String> = entries[from.min(entries.len())..]
        .iter()
        .filter_map(|e| e.id().map(str::to_owned))
        .collect();
    let file_len = match session.file_state() {
        FileState::Written { len, pending, .. } => len + pending,
        _ => return,
    };
    let Some(appended) = rw::record::Appended::of(session, &ids, file_len) else {
        return;
    };
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let (uri, shared) = (uri.to_owned(), shared.clone());
    runtime.spawn(async move {
        let recorded = tokio::task::spawn_blocking(move || rw::record::record_live(&appended)).await;
        match recorded {
            Ok(Ok(Some(r))) => {
                tracing::debug!(entry = %r.entry_id, exact = r.exact, new = r.snapshot.new, "rewind point recorded");
                let point = proto::RewindPoint {
                    entry_id: r.entry_id,
                    moment: match r.moment {
                        rw::Moment::Before => proto::RewindMoment::Before,
                        rw::Moment::After => proto::RewindMoment::After,
                    },
                    exact: r.exact,
                    source: proto::RewindSource::Sessiontree,
                    by: "server".to_owned(),
                    taken_at: None,
                    snapshot: r.snapshot.tree,
                    pruned: false,
                };
                shared
                    .notify::<proto::DidRecordRewindPoint>(proto::DidRecordRewindPointParams { uri, point })
                    .await;
            }
            Ok(Ok(None)) | Ok(Err(rw::Error::NotARepository { .. })) => {}
            Ok(Err(err)) => tracing::warn!("rewind point not recorded: {err}"),
            Err(err) => tracing::warn!("rewind point not recorded: {err}"),
        }
    });
}
