//! What rows read of a tree model, by position or key: keys and their parents, filter flags,
//! facts, ids, labels, search strings and the row, kind, role and label texts; an entry's key by
//! id; the row to select for an anchor.

use super::tool_results::CallMap;
use super::{Model, NONE};
use crate::facts::flags::flag;
use crate::facts::{EntryFacts, RowText};
use crate::view::shared_text::SharedText;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

impl Model {
    /// The key at a position.
    pub fn key_at(&self, pos: usize) -> usize {
        self.key[pos] as usize
    }

    /// How many keys (entries in the tree) there are.
    pub fn key_count(&self) -> usize {
        self.key_last_pos.len()
    }

    /// A key's parent key (see `key_parent`).
    pub fn parent_key(&self, k: usize) -> Option<usize> {
        Some(self.key_parent[k])
            .filter(|&p| p != NONE)
            .map(|p| p as usize)
    }

    /// The keys of every position, in order.
    pub fn keys(&self) -> impl Iterator<Item = usize> + '_ {
        self.key.iter().map(|&k| k as usize)
    }

    /// The flags of a position's entry.
    pub fn flags_at(&self, pos: usize) -> u16 {
        self.flags[self.key_at(pos)]
    }

    /// The facts of a position's entry.
    pub fn facts_at(&self, pos: usize) -> &EntryFacts {
        self.key_facts(self.key_at(pos))
    }

    /// The facts of a key's entry.
    pub(crate) fn key_facts(&self, k: usize) -> &Arc<EntryFacts> {
        self.columns.facts(self.key_entry[k] as usize)
    }

    /// The entry id.
    pub fn id(&self, pos: usize) -> Option<&str> {
        self.key_id(self.key_at(pos))
    }

    /// The id of a key's entry.
    pub fn key_id(&self, k: usize) -> Option<&str> {
        self.columns.id(self.key_entry[k] as usize).map(|id| &**id)
    }

    /// The label in effect.
    pub fn label(&self, pos: usize) -> Option<&str> {
        self.key_label(self.key_at(pos))
    }

    /// The label in effect on a key's entry.
    pub fn key_label(&self, k: usize) -> Option<&str> {
        if self.flags[k] & flag::LABELED == 0 {
            return None;
        }
        self.labels.get(&k).map(|l| &**l)
    }

    /// On the path from the root to the leaf.
    pub fn on_active_path(&self, pos: usize) -> bool {
        self.flags_at(pos) & flag::ACTIVE != 0
    }

    /// The session's leaf.
    pub fn is_leaf(&self, pos: usize) -> bool {
        self.flags_at(pos) & flag::LEAF != 0
    }

    /// `type` is missing or not a string (omp's row text throws on it).
    pub fn kind_missing(&self, pos: usize) -> bool {
        self.flags_at(pos) & flag::KIND_MISSING != 0
    }

    /// Whether a position's searchable text matches a query: an unlabeled entry's string is read
    /// from the session's columns (pi's lower-cased).
    pub fn search_matches(&self, pos: usize, query: &crate::view::search::Query) -> bool {
        if self.flags_at(pos) & flag::LABELED == 0 {
            let entry = self.key_entry[self.key_at(pos)] as usize;
            if let Some(text) = self.columns.search_text(entry, self.dialect) {
                return query.matches_column(text);
            }
        }
        query.matches(&self.search(pos))
    }

    /// The searchable text, label first.
    pub fn search(&self, pos: usize) -> Cow<'_, str> {
        let rest = &*self.facts_at(pos).search;
        match self.label(pos) {
            Some(label) if rest.is_empty() => Cow::Borrowed(label),
            Some(label) => Cow::Owned(format!("{label} {rest}")),
            None => Cow::Borrowed(rest),
        }
    }

    /// [`Model::text`] for a row, shared rather than copied.
    #[cfg(test)]
    pub fn row_text(&self, pos: usize) -> SharedText {
        self.row_text_with(pos, None)
    }

    /// [`Model::row_text`], tool calls looked up in `calls` (from [`Model::calls_for`]) when given.
    pub fn row_text_with(&self, pos: usize, calls: Option<&CallMap>) -> SharedText {
        self.text_of(self.key_facts(self.key_at(pos)), calls)
    }

    /// The row text some facts give (a tool result's from its call: in `calls` when given, else
    /// the call the whole walk saw last).
    pub fn text_of(&self, facts: &Arc<EntryFacts>, calls: Option<&CallMap>) -> SharedText {
        match &facts.text {
            RowText::Ready(_) => SharedText::row_of(facts),
            RowText::ToolResult { call_id, tool_name } => {
                let call = call_id.as_deref().and_then(|c| match calls {
                    Some(map) => self.call_in(c, std::slice::from_ref(map)),
                    None => self.call(c),
                });
                match call {
                    Some(call) => call.row_text(self.home.as_deref(), self.dialect).into(),
                    None => format!("[{tool_name}]").into(),
                }
            }
        }
    }

    /// The key of entry `index` (`None`: the walk did not reach it).
    pub fn key_of_entry(&self, index: usize) -> Option<usize> {
        self.key_of_entry
            .get(index)
            .filter(|&&k| k != NONE)
            .map(|&k| k as usize)
    }

    /// The entry `type` for a row.
    pub fn kind_text(&self, pos: usize) -> SharedText {
        let k = self.key_at(pos);
        match self.flags[k] & flag::CATEGORY {
            flag::USER | flag::ASSISTANT | flag::TOOL_RESULT | flag::MESSAGE => {
                SharedText::from_static("message")
            }
            _ => SharedText::kind_of(self.key_facts(k)),
        }
    }

    /// `message.role` for a row.
    pub fn role_text(&self, pos: usize) -> Option<SharedText> {
        self.key_role(self.key_at(pos))
    }

    /// `message.role` for a key's rows.
    pub fn key_role(&self, k: usize) -> Option<SharedText> {
        match self.flags[k] & flag::CATEGORY {
            flag::USER => Some(SharedText::from_static("user")),
            flag::ASSISTANT => Some(SharedText::from_static("assistant")),
            flag::TOOL_RESULT => Some(SharedText::from_static("toolResult")),
            _ => SharedText::role_of(self.key_facts(k)),
        }
    }

    /// The label for a row.
    pub fn label_text(&self, pos: usize) -> Option<SharedText> {
        let k = self.key_at(pos);
        if self.flags[k] & flag::LABELED == 0 {
            return None;
        }
        self.labels.get(&k).map(|l| l.clone().into())
    }

    /// The key of an entry id.
    pub fn key_of(&self, id: &str) -> Option<usize> {
        if let Some(k) = self.leaf_key {
            if self.key_id(k) == Some(id) {
                return Some(k);
            }
        }
        self.key_by_id
            .get_or_init(|| {
                let mut map: HashMap<Arc<str>, usize, foldhash::fast::RandomState> =
                    HashMap::with_capacity_and_hasher(self.key_entry.len(), Default::default());
                for (k, &e) in self.key_entry.iter().enumerate() {
                    if let Some(id) = self.columns.id(e as usize) {
                        map.insert(id.clone(), k);
                    }
                }
                map
            })
            .get(id)
            .copied()
    }

    /// The row to select for an anchor id: the anchor or its nearest visible ancestor (pi walks
    /// `parentId`s, omp the walk's parents); the last row when none is visible or there is no
    /// anchor; `None` when nothing is visible.
    pub fn nearest_visible(
        &self,
        anchor: Option<&str>,
        row_of_key: &[u32],
        visible_count: usize,
    ) -> Option<usize> {
        if visible_count == 0 {
            return None;
        }
        let mut cursor = anchor.and_then(|a| self.key_of(a));
        let mut steps = 0;
        while let Some(k) = cursor {
            if row_of_key[k] != NONE {
                return Some(row_of_key[k] as usize);
            }
            cursor = self.parent_key(k);
            steps += 1;
            if steps > self.key_count() {
                break;
            }
        }
        Some(visible_count - 1)
    }
}
