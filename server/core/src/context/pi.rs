//! Upstream pi's message emission (`dist/core/session-manager.js` `buildSessionContext`): every
//! path entry in order, or — when the path holds a compaction — the last compaction's summary, then
//! the entries before it from `firstKeptEntryId` on, then everything after it. Failed turns and
//! dangling tool calls are kept; pi filters nothing else.

use super::{emit, Emitted, PathRef};
use crate::js;

/// The messages pi builds for `path` (root first), each entry's message by its index.
pub(crate) fn walk(path: PathRef<'_>) -> Vec<Emitted> {
    let mut out = Vec::new();
    let values = path.values;
    let compaction = values.iter().rev().find(|e| js::is_type(e, "compaction"));
    let Some(compaction) = compaction else {
        (0..values.len()).for_each(|i| append(&mut out, path, i));
        return out;
    };
    out.push(Emitted::Made(emit::pi_compaction_summary(compaction)));
    let compaction_id = js::get(compaction, "id");
    let first_kept = js::get(compaction, "firstKeptEntryId");
    let index = values
        .iter()
        .position(|e| {
            js::is_type(e, "compaction") && js::strict_eq(js::get(e, "id"), compaction_id)
        })
        .unwrap_or(0);
    let mut found_first_kept = false;
    for (i, entry) in values[..index].iter().enumerate() {
        found_first_kept |= js::strict_eq(js::get(entry, "id"), first_kept);
        if found_first_kept {
            append(&mut out, path, i);
        }
    }
    (index + 1..values.len()).for_each(|i| append(&mut out, path, i));
    out
}

/// pi's `appendMessage(entry)` for the entry at `i`.
fn append(out: &mut Vec<Emitted>, path: PathRef<'_>, i: usize) {
    let entry = &path.values[i];
    if js::is_type(entry, "message") {
        // A message entry without an object message would crash or feed junk to pi; skip it.
        if path.message(i).is_some() {
            out.push(Emitted::Entry(i));
        }
    } else if js::is_type(entry, "custom_message") {
        out.push(Emitted::Made(emit::pi_custom_message(entry)));
    } else if emit::emits_branch_summary(entry) {
        out.push(Emitted::Made(emit::branch_summary(entry)));
    }
}
