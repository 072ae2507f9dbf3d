//! One description of an entry: the text of the row the agent of the session's dialect draws for
//! it in its `/tree` selector, without the gutter, the markers, the label and the cut to the
//! panel's width. Every surface that names an entry (rows, tree nodes, the outline, workspace
//! symbols, hover, the CLI) names it with this text, read by entry index from a tree model.

use super::flatten::Model;
use super::shared_text::SharedText;
use super::TreeModel;
use crate::dialect::Dialect;
use crate::entry::Entry;
use crate::session::columns::ViewColumns;
use crate::session::Session;

/// The descriptions of a session's entries, read from its tree model (built from that session
/// at the same revision); shareable between threads.
pub struct EntryTexts<'a> {
    model: &'a Model,
    entries: &'a [Entry],
    columns: &'a ViewColumns,
    dialect: Dialect,
}

impl TreeModel {
    /// The descriptions of `session`'s entries (the session this model was built from, at the
    /// same revision).
    pub fn entry_texts<'a>(&'a self, session: &'a Session) -> EntryTexts<'a> {
        EntryTexts {
            model: &self.model,
            entries: session.entries(),
            columns: session.view_columns(),
            dialect: session.dialect(),
        }
    }

    /// [`EntryTexts::text`] of one entry.
    pub fn entry_text(&self, session: &Session, index: usize) -> SharedText {
        self.entry_texts(session).text(index)
    }

    /// Makes the walk's map of tool calls now, before many entries' texts are read (each tool
    /// result's text looks its call up in it).
    pub fn prepare_entry_texts(&self) {
        self.model.prepare_tool_texts();
    }
}

impl EntryTexts<'_> {
    /// The row text of entry `index`. An entry the walk reached reads as its row does (id-less
    /// entries share one node, as in the agents); one it did not reach (the header, an entry
    /// replaced by a later one with its id) reads as its own facts would. A tool result's text
    /// comes from its call, the one the walk saw last.
    pub fn text(&self, index: usize) -> SharedText {
        let model = self.model;
        if let Some(k) = model.key_of_entry(index) {
            return model.text_of(model.key_facts(k), None);
        }
        let Some(entry) = self.entries.get(index) else {
            return SharedText::default();
        };
        let scanned = self.columns.facts_or_make(index, entry, self.dialect);
        model.text_of(&scanned.facts, None)
    }

    /// `message.role` as entry `index`'s row shows it (`None`: not a message).
    pub fn role(&self, index: usize) -> Option<SharedText> {
        match self.model.key_of_entry(index) {
            Some(k) => self.model.key_role(k),
            None => self
                .entries
                .get(index)
                .and_then(Entry::role)
                .map(SharedText::from),
        }
    }

    /// The label in effect on entry `index`'s row (on its id, for an entry the walk did not
    /// reach).
    pub fn label(&self, index: usize) -> Option<&str> {
        let k = match self.model.key_of_entry(index) {
            Some(k) => k,
            None => self.model.key_of(self.entries.get(index)?.id()?)?,
        };
        self.model.key_label(k)
    }
}
