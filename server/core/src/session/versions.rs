//! Format migrations v1 → v2 → v3, as both agents do them, in memory, when a legacy file is
//! opened (writing the result is the explicit `migrate`).
//!
//! One deliberate difference: v1 entries get ids derived from the session id and their position
//! instead of random ones, so that reloading a legacy file shows the same ids every time.

use crate::entry::Entry;
use serde_json::{Map, Value};
use std::collections::HashSet;

/// Applies the migrations the header's version calls for; `entries` are the values after the
/// header, in file order.
pub fn migrate_entries(
    header: &mut Map<String, Value>,
    entries: Vec<Entry>,
    session_id: String,
) -> Vec<Entry> {
    let version = header.get("version").and_then(Value::as_u64).unwrap_or(1);
    if version >= 3 {
        return entries;
    }
    let mut values: Vec<(Value, usize)> = entries.iter().map(|e| (e.json(), e.line)).collect();
    if version < 2 {
        header.insert("version".into(), 2.into());
        let mut used = HashSet::new();
        let mut prev: Option<String> = None;
        // The compaction index counts the header as 0.
        let mut assigned: Vec<Option<String>> = vec![None; values.len()];
        for n in 0..values.len() {
            let is_header = values[n].0.get("type").and_then(Value::as_str) == Some("session");
            if is_header || !values[n].0.is_object() {
                continue;
            }
            let id = stable_id(&session_id, n, &mut used);
            assigned[n] = Some(id.clone());
            let parent_value = prev.as_deref().map_or(Value::Null, Value::from);
            let first_kept =
                if values[n].0.get("type").and_then(Value::as_str) == Some("compaction") {
                    values[n]
                        .0
                        .get("firstKeptEntryIndex")
                        .filter(|ix| ix.is_number())
                        .map(|ix| {
                            ix.as_f64()
                                .filter(|f| f.fract() == 0.0 && *f >= 1.0)
                                .and_then(|f| {
                                    let target = f as usize - 1;
                                    let t = values.get(target)?;
                                    if t.0.get("type").and_then(Value::as_str) == Some("session") {
                                        return None;
                                    }
                                    assigned.get(target).cloned().flatten()
                                })
                        })
                } else {
                    None
                };
            if let Value::Object(map) = &mut values[n].0 {
                map.insert("id".into(), id.as_str().into());
                map.insert("parentId".into(), parent_value);
                if let Some(first_kept) = first_kept {
                    if let Some(target) = first_kept {
                        map.insert("firstKeptEntryId".into(), target.into());
                    }
                    map.shift_remove("firstKeptEntryIndex");
                }
            }
            prev = Some(id);
        }
    }
    header.insert("version".into(), 3.into());
    for (value, _) in &mut values {
        if value.get("type").and_then(Value::as_str) == Some("message") {
            if let Some(message) = value.get_mut("message").and_then(Value::as_object_mut) {
                if message.get("role").and_then(Value::as_str) == Some("hookMessage") {
                    message.insert("role".into(), "custom".into());
                }
            }
        }
    }
    entries
        .into_iter()
        .zip(values)
        .map(|(original, (value, line))| {
            if original.is_object {
                let mut e = Entry::from_value(&value);
                e.line = line;
                e
            } else {
                original
            }
        })
        .collect()
}

fn stable_id(session_id: &str, n: usize, used: &mut HashSet<String>) -> String {
    let mut salt = 0u32;
    loop {
        let name = format!("{session_id}:{n}:{salt}");
        let id = uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, name.as_bytes())
            .simple()
            .to_string()[..8]
            .to_owned();
        if used.insert(id.clone()) {
            return id;
        }
        salt += 1;
    }
}
