//! Upstream pi's message emission (`dist/core/session-manager.js` `buildSessionContext`): every
//! path entry in order, or — when the path holds a compaction — the last compaction's summary, then
//! the entries before it from `firstKeptEntryId` on, then everything after it. Failed turns and
//! dangling tool calls are kept; pi filters nothing else.

use super::{emit, js};
use serde_json::Value;

/// The messages pi builds for `path` (root first).
pub(crate) fn messages(path: &[Value]) -> Vec<Value> {
    let mut out = Vec::new();
    let compaction = path.iter().rev().find(|e| js::is_type(e, "compaction"));
    let Some(compaction) = compaction else {
        path.iter().for_each(|entry| append(&mut out, entry));
        return out;
    };
    out.push(emit::pi_compaction_summary(compaction));
    let compaction_id = js::get(compaction, "id");
    let first_kept = js::get(compaction, "firstKeptEntryId");
    let index = path
        .iter()
        .position(|e| {
            js::is_type(e, "compaction") && js::strict_eq(js::get(e, "id"), compaction_id)
        })
        .unwrap_or(0);
    let mut found_first_kept = false;
    for entry in &path[..index] {
        found_first_kept |= js::strict_eq(js::get(entry, "id"), first_kept);
        if found_first_kept {
            append(&mut out, entry);
        }
    }
    for entry in path.iter().skip(index + 1) {
        append(&mut out, entry);
    }
    out
}

/// pi's `appendMessage(entry)`.
fn append(out: &mut Vec<Value>, entry: &Value) {
    if js::is_type(entry, "message") {
        // A message entry without an object message would crash or feed junk to pi; skip it.
        if let Some(message @ Value::Object(_)) = js::get(entry, "message") {
            out.push(message.clone());
        }
    } else if js::is_type(entry, "custom_message") {
        out.push(emit::pi_custom_message(entry));
    } else if emit::emits_branch_summary(entry) {
        out.push(emit::branch_summary(entry));
    }
}
