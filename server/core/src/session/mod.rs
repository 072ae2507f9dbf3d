//! A session: the index over one file's entries, the leaf, labels, name and revision, with every
//! SessionManager operation of the agents. Loading lives in `load`, appends in `append`, the file
//! in `persist`, forks in `branched`, naming in `name`, recording entries in the index in
//! `indexing`; this file holds the state and the reads.

mod append;
mod branched;
mod building;
pub(crate) mod columns;
mod deferred;
mod header;
mod indexing;
mod load;
mod name;
mod persist;
mod store;
mod store_bodies;
mod versions;

pub use append::{CompactionArgs, CustomMessageArgs};
pub use load::{FollowOutcome, OpenOptions};
pub use name::NameSource;
pub use persist::{FileState, SyncPolicy};
pub use store::{SessionStore, Since, Written};
pub(crate) use store_bodies::StoreBodies;

use crate::diagnostics::Diagnostic;
use crate::dialect::Dialect;
use crate::entry::{Entry, Parent};
use crate::error::{Error, Result};
use crate::ids::IdSource;
use crate::time::Clock;
use crate::title_slot::TitleSlot;
use indexmap::IndexMap;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// The label in effect on one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelState {
    /// The label text.
    pub label: String,
    /// When the label entry that set it was written (pi shows and carries it).
    pub timestamp: Option<String>,
}

/// What `collectEntriesForBranchSummary` returns.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BranchSummaryCollection {
    /// Entry indices to summarize, oldest first.
    pub entries: Vec<usize>,
    /// The deepest entry on both paths, when there is one.
    pub common_ancestor: Option<String>,
}

/// One open session.
pub struct Session {
    dialect: Dialect,
    file: FileState,
    sync: SyncPolicy,
    /// A fork's closing `fdatasync`, still running after the fork was answered.
    deferred_sync: Option<persist::DeferredSync>,
    /// The omp title slot as it stands on disk (None for pi files and slot-less files).
    slot: Option<TitleSlot>,
    /// The header as held in memory (omp folds the title slot into `title`/`titleSource`).
    header: Map<String, Value>,
    /// The header's format version as read (1 when absent); below 3 the file needs a migrate to write.
    file_version: u64,
    entries: Vec<Entry>,
    /// id → index of the entry that holds it (a later duplicate overwrites, keeping the position,
    /// exactly like a JavaScript `Map`).
    by_id: IndexMap<Arc<str>, usize, foldhash::fast::RandomState>,
    /// The last id-less entry (JavaScript keys them all as `undefined`).
    last_idless: Option<usize>,
    labels: IndexMap<Box<str>, LabelState>,
    leaf: Option<Arc<str>>,
    /// pi: the last `session_info` name in file order (`None` = no name).
    pi_name: Option<String>,
    has_assistant: bool,
    revision: u64,
    diagnostics: Vec<Diagnostic>,
    clock: Arc<dyn Clock>,
    ids: Box<dyn IdSource>,
    /// The open file that file-backed entry bodies are read from.
    source: Option<Arc<crate::entry::BodySource>>,
    /// The store the session is kept in, when it is not a local file (see [`SessionStore`]).
    store: Option<store::StoreLink>,
    /// Each entry's parent resolved to an entry index ([`NO_PARENT`]: none), so paths are walked
    /// without hashing ids. Exact unless `parents_dirty` (a duplicated id, or an id arriving that
    /// an earlier orphan points at), which the next `settle_parents` repairs.
    parents: Vec<u32>,
    /// Each entry's timestamp as `Date.parse` reads it (NaN: not a date), beside `parents` so
    /// sorting children reads no entry.
    times: Vec<f64>,
    /// Each entry's kind as the context rules' walk before the kept range sees it.
    state_kinds: Vec<crate::facts::StateKind>,
    parents_dirty: bool,
    /// Entries whose `parentId` named no entry when they were indexed.
    unresolved_parents: usize,
    /// Some id is held by more than one entry.
    duplicate_ids: bool,
    /// What the `/tree` view reads of each entry, shared with the tree models built from it.
    view_columns: columns::ViewColumns,
    /// The tree of the entries as they stand, made on first use; an entry indexed drops it.
    tree: std::sync::OnceLock<Arc<crate::tree::Tree>>,
    /// What the context builder keeps between builds (the entries it last read, as it read them).
    context_stash: Stash,
}

pub(crate) use crate::tree::NO_PARENT;

/// A value a floor above the session keeps with it between calls (the context builder keeps the
/// entries it last read), of a type the session does not know; dropped when the entries are
/// read again.
#[derive(Default)]
pub(crate) struct Stash(std::sync::Mutex<Option<Box<dyn std::any::Any + Send>>>);

impl Stash {
    /// Takes the kept value when it is a `T`.
    pub(crate) fn take<T: 'static>(&self) -> Option<T> {
        let kept = self.0.lock().unwrap_or_else(|e| e.into_inner()).take()?;
        kept.downcast::<T>().ok().map(|v| *v)
    }

    /// Keeps `value` (in place of what was kept).
    pub(crate) fn put<T: Send + 'static>(&self, value: T) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(Box::new(value));
    }

    /// Drops what is kept.
    pub(crate) fn forget(&self) {
        drop(self.0.lock().unwrap_or_else(|e| e.into_inner()).take());
    }
}

impl std::fmt::Debug for Stash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Stash")
    }
}

/// What [`Session::raw_texts`] gives.
#[derive(Clone, Copy)]
pub struct RawTexts<'a> {
    entries: &'a [Entry],
    path: &'a std::path::Path,
}

impl RawTexts<'_> {
    /// [`Session::for_each_raw`] for the entries at `range` (clamped to the entries).
    pub fn for_each_in(
        &self,
        range: std::ops::Range<usize>,
        mut f: impl FnMut(usize, &str),
    ) -> Result<()> {
        let end = range.end.min(self.entries.len());
        let start = range.start.min(end);
        crate::entry::for_each_body(&self.entries[start..end], |k, body| {
            let bytes = body.map_err(|e| Error::io("cannot read", self.path, e))?;
            // `from_utf8` checks valid text many times faster than the lossy decoder walks it.
            match std::str::from_utf8(bytes) {
                Ok(text) => f(start + k, text),
                Err(_) => f(start + k, &String::from_utf8_lossy(bytes)),
            }
            Ok(())
        })
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("dialect", &self.dialect)
            .field("file", &self.file)
            .field("entries", &self.entries.len())
            .field("leaf", &self.leaf)
            .field("revision", &self.revision)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// Which agent's rules this session follows.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Where the session lives on disk (or will, once the agent's rule creates it).
    pub fn path(&self) -> Option<&std::path::Path> {
        self.file.path()
    }

    /// The file's state (in memory, deferred, written).
    pub fn file_state(&self) -> &FileState {
        &self.file
    }

    /// The session header as held in memory (`getHeader()`).
    pub fn header(&self) -> &Map<String, Value> {
        &self.header
    }

    /// The session id (`getSessionId()`).
    pub fn session_id(&self) -> &str {
        self.header.get("id").and_then(Value::as_str).unwrap_or("")
    }

    /// The working directory recorded in the header.
    pub fn cwd(&self) -> &str {
        self.header.get("cwd").and_then(Value::as_str).unwrap_or("")
    }

    /// The omp title slot as on disk.
    pub fn title_slot(&self) -> Option<&TitleSlot> {
        self.slot.as_ref()
    }

    /// The session name (`getSessionName()`): pi's last `session_info`, omp's title.
    pub fn session_name(&self) -> Option<&str> {
        match self.dialect {
            Dialect::Pi => self.pi_name.as_deref(),
            Dialect::Omp => self
                .header
                .get("title")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty()),
        }
    }

    /// omp's title source (`"user"` / `"auto"`).
    pub fn title_source(&self) -> Option<&str> {
        self.header.get("titleSource").and_then(Value::as_str)
    }

    /// The format version the file was written in.
    pub fn file_version(&self) -> u64 {
        self.file_version
    }

    /// Counter bumped by every change (append, leaf move, reload, followed lines).
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Problems found in the file.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// The current leaf (`getLeafId()`); `None` = before the first entry.
    pub fn leaf_id(&self) -> Option<&str> {
        self.leaf.as_deref()
    }

    /// Every entry in file order (`getEntries()`).
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The entry at an index of [`Session::entries`].
    pub fn entry_at(&self, index: usize) -> Option<&Entry> {
        self.entries.get(index)
    }

    /// Calls `f` with every entry's index and JSON text, in file order. Bodies in the file are read
    /// in large sequential chunks (a whole-session pass costs one read of the file, not one per
    /// entry).
    pub fn for_each_raw(&self, f: impl FnMut(usize, &str)) -> Result<()> {
        self.raw_texts().for_each_in(0..self.entries.len(), f)
    }

    /// The entries' JSON texts, to be read in parts on several threads (the session itself
    /// is not shared between threads).
    pub fn raw_texts(&self) -> RawTexts<'_> {
        RawTexts {
            entries: &self.entries,
            path: self.file.path().unwrap_or(std::path::Path::new("")),
        }
    }

    /// The entry with this id (`getEntry(id)`; a later duplicate wins).
    pub fn entry(&self, id: &str) -> Option<&Entry> {
        self.index_of(id).map(|i| &self.entries[i])
    }

    /// The index of the entry holding this id.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).copied()
    }

    /// Whether an entry has this id.
    pub fn contains(&self, id: &str) -> bool {
        self.by_id.contains_key(id)
    }

    /// The label in effect on an entry (`getLabel(id)`).
    pub fn label(&self, id: &str) -> Option<&str> {
        self.labels.get(id).map(|l| l.label.as_str())
    }

    /// The label and when it was set.
    pub fn label_state(&self, id: &str) -> Option<&LabelState> {
        self.labels.get(id)
    }

    /// Every label in effect, in the order the agents' label map holds them.
    pub fn labels(&self) -> impl Iterator<Item = (&str, &LabelState)> {
        self.labels.iter().map(|(k, v)| (&**k, v))
    }

    /// Direct children of an entry (`getChildren(parentId)`), in insertion order; `None` asks for
    /// the entries whose `parentId` is `null`.
    pub fn children(&self, parent: Option<&str>) -> Vec<usize> {
        match self.dialect {
            // pi scans its id map: one entry per id (the later duplicate), at the id's first
            // position, and one for the id-less entries.
            Dialect::Pi => self
                .pi_id_map_slots()
                .into_iter()
                .filter(|&i| match (&self.entries[i].parent, parent) {
                    (Parent::Null, None) => true,
                    (Parent::Id(p), Some(want)) => &**p == want,
                    _ => false,
                })
                .collect(),
            Dialect::Omp => {
                let matches = |p: &Parent| match (p, parent) {
                    (Parent::Null, None) => true,
                    (Parent::Id(p), Some(want)) => &**p == want,
                    _ => false,
                };
                (0..self.entries.len())
                    .filter(|&i| matches(&self.entries[i].parent))
                    .collect()
            }
        }
    }

    /// `getChildren(p)` for every parent key at once, in one pass (the per-call scan of pi's
    /// `getChildren` would make asking for every id quadratic). Keys are the `parentId` values;
    /// [`Parent::Missing`] holds `getChildren(undefined)`.
    pub fn children_lists(&self) -> HashMap<Parent, Vec<usize>> {
        match self.dialect {
            Dialect::Pi => {
                let mut lists: HashMap<Parent, Vec<usize>> = HashMap::new();
                for i in self.pi_id_map_slots() {
                    lists
                        .entry(self.entries[i].parent.clone())
                        .or_default()
                        .push(i);
                }
                lists
            }
            Dialect::Omp => self.omp_children_map(),
        }
    }

    /// omp's children map (parent id → children in insertion order), made on demand: entries
    /// only ever join the index at its end, so file order is insertion order. Kept out of the
    /// index because few readers need it and building it per entry at open was a tenth of it.
    fn omp_children_map(&self) -> HashMap<Parent, Vec<usize>> {
        let mut lists: HashMap<Parent, Vec<usize>> = HashMap::new();
        for (i, entry) in self.entries.iter().enumerate() {
            lists.entry(entry.parent.clone()).or_default().push(i);
        }
        lists
    }

    /// The entries of pi's id map in its iteration order: one per id (the later duplicate, at the
    /// id's first position), and one slot for all id-less entries (key `undefined`: the last of
    /// them, at the first one's position).
    fn pi_id_map_slots(&self) -> Vec<usize> {
        let mut slots: Vec<usize> = self.by_id.values().copied().collect();
        if let (Some(first), Some(last)) = (
            self.entries.iter().position(|e| e.id().is_none()),
            self.last_idless,
        ) {
            // The id map keeps first-insertion order: the slot goes after the ids seen before it.
            let before: std::collections::HashSet<&str> =
                self.entries[..first].iter().filter_map(Entry::id).collect();
            slots.insert(before.len().min(slots.len()), last);
        }
        slots
    }

    /// `getChildren(undefined)`: the entries without a `parentId` (the id-less, non-object
    /// lines among them), in the order each dialect keeps them.
    pub fn children_of_undefined(&self) -> Vec<usize> {
        match self.dialect {
            Dialect::Pi => self
                .pi_id_map_slots()
                .into_iter()
                .filter(|&i| self.entries[i].parent == Parent::Missing)
                .collect(),
            Dialect::Omp => (0..self.entries.len())
                .filter(|&i| self.entries[i].parent == Parent::Missing)
                .collect(),
        }
    }

    /// The path from the root to `from` (default: the leaf), root first, as entry indices
    /// (`getBranch(fromId)`). Stops at the first repeated entry, so parent cycles cannot hang it.
    pub fn branch_path(&self, from: Option<&str>) -> Vec<usize> {
        let start = match from {
            Some(id) => Some(id),
            None => self.leaf.as_deref(),
        };
        let mut path = Vec::new();
        let mut seen = vec![0u64; self.entries.len().div_ceil(64)];
        let mut cursor = start.and_then(|id| self.index_of(id));
        while let Some(i) = cursor {
            let (word, bit) = (i / 64, 1u64 << (i % 64));
            if seen[word] & bit != 0 {
                break;
            }
            seen[word] |= bit;
            path.push(i);
            cursor = self.parent_index(i);
        }
        path.reverse();
        path
    }

    /// The index of the entry an entry's `parentId` names (the later one of a duplicated id).
    pub fn parent_index(&self, index: usize) -> Option<usize> {
        if self.parents_dirty {
            return self.entries[index]
                .parent
                .id()
                .and_then(|p| self.index_of(p));
        }
        match self.parents.get(index) {
            Some(&p) if p != NO_PARENT => Some(p as usize),
            _ => None,
        }
    }

    /// Every entry's parent index ([`NO_PARENT`]: none, or the entry itself when it names its own
    /// id) when the tree is that simple: ids unique, every entry with an id, parents resolved.
    pub(crate) fn plain_parents(&self) -> Option<&[u32]> {
        (!self.duplicate_ids && !self.parents_dirty && self.last_idless.is_none())
            .then_some(&self.parents[..])
    }

    /// Each entry's timestamp in epoch milliseconds (NaN: not a date), in entry order.
    pub(crate) fn times(&self) -> &[f64] {
        &self.times
    }

    /// Each entry's [`StateKind`](crate::facts::StateKind).
    pub(crate) fn state_kinds(&self) -> &[crate::facts::StateKind] {
        &self.state_kinds
    }

    /// The index that holds an entry's id (the later entry of a duplicated id; the entry itself
    /// for id-less entries).
    pub fn canonical_index(&self, index: usize) -> usize {
        if !self.duplicate_ids {
            return index;
        }
        self.entries
            .get(index)
            .and_then(Entry::id)
            .and_then(|id| self.index_of(id))
            .unwrap_or(index)
    }

    /// Re-resolves every entry's parent after a change that made the kept ones stale.
    pub(crate) fn settle_parents(&mut self) {
        if !self.parents_dirty {
            return;
        }
        let mut unresolved = 0;
        self.parents = self
            .entries
            .iter()
            .map(|e| match e.parent.id() {
                Some(p) => match self.by_id.get(p) {
                    Some(&i) => u32::try_from(i).unwrap_or(NO_PARENT),
                    None => {
                        unresolved += 1;
                        NO_PARENT
                    }
                },
                None => NO_PARENT,
            })
            .collect();
        self.unresolved_parents = unresolved;
        self.parents_dirty = false;
    }

    /// The ids along [`Session::branch_path`].
    pub fn branch_ids(&self, from: Option<&str>) -> Vec<Option<&str>> {
        self.branch_path(from)
            .into_iter()
            .map(|i| self.entries[i].id())
            .collect()
    }

    /// `collectEntriesForBranchSummary(oldLeafId, targetId)`: the entries abandoned when moving
    /// from `old_leaf` to `target`, oldest first, and their common ancestor.
    pub fn collect_entries_for_branch_summary(
        &self,
        old_leaf: Option<&str>,
        target: &str,
    ) -> BranchSummaryCollection {
        let Some(old_leaf) = old_leaf.filter(|l| !l.is_empty()) else {
            return BranchSummaryCollection::default();
        };
        let old_path: std::collections::HashSet<Option<&str>> = self
            .branch_path(Some(old_leaf))
            .into_iter()
            .map(|i| self.entries[i].id())
            .collect();
        let common = self
            .branch_path(Some(target))
            .into_iter()
            .rev()
            .map(|i| self.entries[i].id())
            .find(|id| old_path.contains(id))
            .flatten();
        let mut entries = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut current = Some(old_leaf);
        while let Some(id) = current {
            if Some(id) == common {
                break;
            }
            let Some(i) = self.index_of(id) else { break };
            // The agents loop forever on a parent cycle here; we stop at the first repeat.
            if !seen.insert(i) {
                break;
            }
            entries.push(i);
            current = self.entries[i].parent.id();
        }
        entries.reverse();
        BranchSummaryCollection {
            entries,
            common_ancestor: common.map(str::to_owned),
        }
    }

    /// Forgets the entries the last context build read (see [`crate::context::session_context`]),
    /// so that the next build reads them again: for measuring a build from the file.
    pub fn forget_context_reads(&self) {
        self.context_stash.forget();
    }

    /// What the context builder keeps with the session between builds.
    pub(crate) fn context_stash(&self) -> &Stash {
        &self.context_stash
    }

    /// The tree, when it is built already.
    pub(crate) fn built_tree(&self) -> Option<Arc<crate::tree::Tree>> {
        self.tree.get().cloned()
    }

    /// Keeps `tree`, built elsewhere from this session's entries as they stand, as [`Session::tree`].
    pub(crate) fn keep_tree(&self, tree: crate::tree::Tree) -> Arc<crate::tree::Tree> {
        Arc::clone(self.tree.get_or_init(|| Arc::new(tree)))
    }

    /// `getTree()`.
    pub fn tree(&self) -> Arc<crate::tree::Tree> {
        Arc::clone(
            self.tree
                .get_or_init(|| Arc::new(crate::tree::Tree::build(self))),
        )
    }

    /// `branch(id)`: moves the leaf; writes nothing.
    pub fn branch(&mut self, id: &str) -> Result<()> {
        if !self.contains(id) {
            return Err(Error::EntryNotFound(id.to_owned()));
        }
        self.leaf = Some(id.into());
        self.revision += 1;
        Ok(())
    }

    /// `resetLeaf()`: the next append starts a new root; writes nothing.
    pub fn reset_leaf(&mut self) {
        self.leaf = None;
        self.revision += 1;
    }

    /// What the `/tree` view reads of each entry.
    pub(crate) fn view_columns(&self) -> &columns::ViewColumns {
        &self.view_columns
    }

    /// Whether any entry is an assistant message (the agents create the file only then).
    pub fn has_assistant(&self) -> bool {
        self.has_assistant
    }

    /// A fresh entry id, unused in this session (8 hex characters; 100 tries, then a longer id).
    pub(crate) fn fresh_id(&mut self) -> String {
        for _ in 0..100 {
            let id = self.ids.entry_id(self.dialect);
            if !self.by_id.contains_key(id.as_str()) {
                return id;
            }
        }
        self.ids.fallback_entry_id(self.dialect)
    }

    /// The clock's now, as an ISO string.
    pub(crate) fn now_iso(&self) -> String {
        crate::time::format_iso(self.clock.now_ms())
    }
}

impl crate::tree::TreeIndex for Session {
    fn entries(&self) -> &[Entry] {
        &self.entries
    }
    fn plain_parents(&self) -> Option<&[u32]> {
        Session::plain_parents(self)
    }
    fn times(&self) -> &[f64] {
        &self.times
    }
    fn canonical_index(&self, index: usize) -> usize {
        Session::canonical_index(self, index)
    }
    fn parent_index(&self, index: usize) -> Option<usize> {
        Session::parent_index(self, index)
    }
    fn last_idless(&self) -> Option<usize> {
        self.last_idless
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// pi keeps `name.trim()`: JavaScript's `trim`, which leaves U+0085 (next line) where Rust's
    /// `trim` takes it, and takes U+FEFF where Rust's keeps it.
    #[test]
    fn pi_names_are_trimmed_as_javascript_trims_them() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let file = dir.path().join("named.jsonl");
        let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#;
        for (name, want) in [
            (r"\u0085named", Some("\u{85}named")),
            (r"\ufeff named\u2028", Some("named")),
            (r"\u0085", Some("\u{85}")),
            (r"\u3000\t", None),
        ] {
            let info = format!(
                r#"{{"type":"session_info","id":"i","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","name":"{name}"}}"#
            );
            std::fs::write(&file, format!("{header}\n{info}\n")).unwrap_or_else(|e| panic!("{e}"));
            let session =
                Session::open(&file, OpenOptions::default()).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(session.session_name(), want, "{name}");
        }
    }

    /// Each entry's text as in the file; a line that is not UTF-8 comes decoded as the reader
    /// decodes it (invalid bytes as U+FFFD), never skipped.
    #[test]
    fn every_raw_text_is_given_even_one_that_is_not_utf8() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let file = crate::test_sessions::session_with_a_line_not_utf8(dir.path());
        let session =
            Session::open(&file, OpenOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        let mut texts = Vec::new();
        session
            .for_each_raw(|i, raw| texts.push((i, raw.to_owned())))
            .unwrap_or_else(|e| panic!("{e}"));
        let ids: Vec<Option<&str>> = texts
            .iter()
            .map(|(i, _)| session.entries()[*i].id())
            .collect();
        assert_eq!(ids, [Some("a"), Some("l"), Some("b")]);
        assert!(
            texts[2]
                .1
                .ends_with(r#""text":"\u00e9 é"}],"timestamp":2}}"#),
            "{}",
            texts[2].1
        );
        assert_eq!(
            texts[1].1,
            "{\"type\":\"label\",\"id\":\"l\",\"parentId\":\"a\",\"label\":\"\u{fffd}\"}"
        );
    }
}
