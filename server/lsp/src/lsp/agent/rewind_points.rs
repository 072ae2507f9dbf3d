//! Rewind points recorded by a live agent's bridge (at the agent's own boundaries, see
//! `docs/rewind.md`): which sessions' points the bridge records (the server then records none of
//! its own while following the file), and its `rewindPoint` events relayed to the editors as
//! `didRecordRewindPoint`, so the row gets its mark at once.

use super::driver::Driver;
use crate::Shared;
use serde_json::Value;
use sessiontree_protocol as proto;
use std::path::Path;

/// Notes whether the agent attached to the session at `path` (if any) records its rewind points
/// (refreshed with every status the manager sends: attach, detach, the bridge's state).
pub fn note(shared: &Shared, path: &Path, driver: Option<&Driver>) {
    let on = driver.is_some_and(|d| d.snapshot().rewind_points);
    shared.set_rewind_by_bridge(path, on);
}

/// Relays a bridge's `rewindPoint` event for the session at `path` (its document `uri`); an
/// event about another session file (the agent moved on) is left out.
pub async fn relay(shared: &Shared, uri: &str, path: &Path, event: &Value) {
    let text = |key: &str| event.get(key).and_then(Value::as_str).map(str::to_owned);
    let same_file = |f: &str| {
        Path::new(f) == path || std::fs::canonicalize(f).ok() == std::fs::canonicalize(path).ok()
    };
    if text("sessionFile").is_some_and(|f| !same_file(&f)) {
        return;
    }
    let (Some(entry_id), Some(snapshot)) = (text("entryId"), text("snapshot")) else {
        return;
    };
    let point = proto::RewindPoint {
        entry_id,
        moment: if text("moment").as_deref() == Some("before") {
            proto::RewindMoment::Before
        } else {
            proto::RewindMoment::After
        },
        exact: event.get("exact") == Some(&Value::Bool(true)),
        source: proto::RewindSource::Sessiontree,
        by: "bridge".to_owned(),
        taken_at: text("takenAt"),
        snapshot,
        pruned: false,
    };
    shared
        .notify::<proto::DidRecordRewindPoint>(proto::DidRecordRewindPointParams {
            uri: uri.to_owned(),
            point,
        })
        .await;
}
