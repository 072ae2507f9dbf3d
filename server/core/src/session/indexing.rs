//! Recording entries in a session's index, in file order: ids, parents, times and what the
//! context walk reads of each, the labels, the pi name and the view's columns; a second header
//! is reported and left out. Load, live follow and appends all come here.

use super::{LabelState, Session, NO_PARENT};
use crate::diagnostics::Diagnostic;
use crate::entry::Entry;
use serde_json::Value;

impl Session {
    /// Room for `more` entries (before inserting many at once).
    pub(crate) fn reserve(&mut self, more: usize) {
        self.entries.reserve(more);
        self.parents.reserve(more);
        self.times.reserve(more);
        self.state_kinds.reserve(more);
        self.by_id.reserve(more);
    }

    /// Records one entry in the index, in file order (load, live follow and appends all come here).
    pub(crate) fn insert(&mut self, mut entry: Entry) {
        self.tree = Default::default();
        let previous = self.entries.last().and_then(|e| e.id.clone());
        if self.index_entry(&entry, self.entries.len(), previous.as_deref()) {
            self.leaf = entry.id.clone();
            self.view_columns.push(&mut entry, self.dialect, true);
            self.entries.push(entry);
        }
    }

    /// [`Session::insert`] for entries read from the file, in order, after those indexed
    /// already. The first list becomes the session's entries without being copied (opening a
    /// file whose parts are read while earlier ones are indexed: see `building`).
    pub(crate) fn index_read(&mut self, mut entries: Vec<Entry>) {
        self.tree = Default::default();
        self.context_stash = Default::default();
        let mut kept = Vec::with_capacity(if entries.iter().any(|e| e.kind() == "session") {
            entries.len()
        } else {
            0
        });
        let before = self.entries.last().and_then(|e| e.id.clone());
        let mut next = self.entries.len();
        let mut previous: Option<usize> = None;
        for i in 0..entries.len() {
            let previous_id = match previous {
                Some(p) => entries[p].id.as_deref(),
                None => before.as_deref(),
            };
            let keep = self.index_entry(&entries[i], next, previous_id);
            if keep {
                next += 1;
                previous = Some(i);
                self.view_columns.push(&mut entries[i], self.dialect, false);
            }
            if kept.capacity() > 0 {
                kept.push(keep);
            }
        }
        if let Some(last) = previous {
            self.leaf = entries[last].id.clone();
        }
        if !kept.is_empty() {
            let mut keep = kept.into_iter();
            entries.retain(|_| keep.next().unwrap_or(true));
        }
        if self.entries.is_empty() {
            self.entries = entries;
        } else {
            self.entries.append(&mut entries);
        }
    }

    /// Indexes `entry` as it will stand at `index` (after the entry with id `previous`, if any);
    /// `false` when it is not kept (a second header). The caller moves the leaf.
    fn index_entry(&mut self, entry: &Entry, index: usize, previous: Option<&str>) -> bool {
        use crate::diagnostics::DiagnosticKind as K;
        if entry.kind() == "session" {
            self.diagnostics.push(Diagnostic::new(
                K::ExtraHeader,
                Some(entry.line).filter(|&l| l > 0),
                "a second session header; ignored, as the agents ignore it",
            ));
            return false;
        }
        match entry.id.clone() {
            Some(id) => {
                if self.unresolved_parents > 0 {
                    // An earlier orphan may name this id.
                    self.parents_dirty = true;
                }
                match self.by_id.entry(id) {
                    indexmap::map::Entry::Occupied(mut slot) => {
                        self.parents_dirty = true;
                        self.duplicate_ids = true;
                        self.diagnostics.push(Diagnostic::new(
                            K::DuplicateId,
                            Some(entry.line).filter(|&l| l > 0),
                            format!(
                                "id {} is used again; the agents keep only this later entry under it",
                                slot.key()
                            ),
                        ));
                        // The id keeps its first position in the map (pi's order), as `insert` does.
                        *slot.get_mut() = index;
                    }
                    indexmap::map::Entry::Vacant(slot) => {
                        slot.insert(index);
                    }
                }
            }
            None => {
                self.last_idless = Some(index);
                let (kind, message) = if entry.is_object {
                    (K::MissingId, "entry has no string id")
                } else {
                    (
                        K::NotAnObject,
                        "line is JSON but not an object; the agents keep it as an id-less entry",
                    )
                };
                self.diagnostics.push(Diagnostic::new(
                    kind,
                    Some(entry.line).filter(|&l| l > 0),
                    message,
                ));
            }
        }
        let parent = match entry.parent.id() {
            // Usually the entry just before: no lookup (unless the entry names itself, whose id
            // now maps to it).
            Some(p) if Some(p) == previous && entry.id() != Some(p) => {
                u32::try_from(index - 1).unwrap_or(NO_PARENT)
            }
            Some(p) => match self.by_id.get(p) {
                Some(&i) => u32::try_from(i).unwrap_or(NO_PARENT),
                None => {
                    self.unresolved_parents += 1;
                    NO_PARENT
                }
            },
            None => NO_PARENT,
        };
        self.parents.push(parent);
        self.times.push(entry.time_ms);
        self.state_kinds
            .push(crate::facts::StateKind::of(entry.kind(), entry.role()));
        match entry.kind() {
            "label" => self.apply_label(entry),
            "session_info" => {
                let value = entry.json();
                self.pi_name = value
                    .get("name")
                    .and_then(Value::as_str)
                    .map(|n| crate::js::trim(n).to_owned())
                    .filter(|n| !n.is_empty());
            }
            "message" if !self.has_assistant => {
                self.has_assistant = entry.role() == Some("assistant");
            }
            _ => {}
        }
        true
    }

    fn apply_label(&mut self, entry: &Entry) {
        let value = entry.json();
        let Some(target) = value.get("targetId").and_then(Value::as_str) else {
            return;
        };
        let label = match value.get("label") {
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            Some(Value::Bool(true)) => Some("true".to_owned()),
            Some(Value::Number(n)) if n.as_f64() != Some(0.0) => Some(crate::json::to_line(n)),
            _ => None,
        };
        match label {
            // A JavaScript Map keeps a key's position when it is set again.
            Some(label) => {
                let timestamp = entry.timestamp.as_deref().map(str::to_owned);
                self.labels
                    .insert(target.into(), LabelState { label, timestamp });
            }
            None => {
                self.labels.shift_remove(target);
            }
        }
    }
}
