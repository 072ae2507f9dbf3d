//! What a filter, a search and pi's folding make of the flattened tree: the visible rows, each
//! row's parent and children, pi's structure, and the id of every row; independent of the
//! selection and the window.

use super::flatten::{self, Model};
use super::{search, visibility, FilterMode};
use crate::dialect::Dialect;

/// What a filter, search and folding make of the flattened tree, independent of the selection
/// and window: kept by [`TreeModel`] so that moving the window or the selection is cheap.
#[derive(Debug)]
pub(super) struct Layout {
    pub(super) filter: FilterMode,
    pub(super) search: String,
    pub(super) folded: Vec<String>,
    pub(super) visible: Vec<usize>,
    /// key → its row ([`flatten::NONE`]: hidden).
    pub(super) row_of_key: Vec<u32>,
    pub(super) folded_key: Vec<bool>,
    pub(super) pi: Option<flatten::pi_layout::PiStructure>,
    /// Each row's parent row ([`flatten::NONE`]: none).
    pub(super) parent_rows: Vec<u32>,
    pub(super) child_rows: Vec<u32>,
    pub(super) ids: RowIds,
    /// How many rows are visible in all (more than `visible` holds for a prefix model).
    pub(super) visible_count: usize,
    /// How many positions the whole walk has.
    pub(super) total: usize,
    /// The visible row number of `visible[0]` (a prefix model that starts down the leaf's path
    /// leaves the rows above it out).
    pub(super) offset: usize,
}

impl Layout {
    pub(super) fn build(
        model: &Model,
        filter: FilterMode,
        search: &str,
        folded: &[String],
    ) -> Layout {
        Layout::build_with(model, filter, search, folded, None)
    }

    /// The layout of a prefix model ([`flatten::Model::build_prefix`]): its visible rows are
    /// rows `offset..offset + visible.len()` of `visible_count`, re-laid out knowing what lies
    /// `beyond` it.
    pub(super) fn of_prefix(
        model: &Model,
        filter: FilterMode,
        beyond: &flatten::pi_layout::Beyond,
        visible_count: usize,
        total: usize,
        offset: usize,
    ) -> Layout {
        let mut layout = Layout::build_with(model, filter, "", &[], Some(beyond));
        layout.visible_count = visible_count;
        layout.total = total;
        layout.offset = offset;
        layout.ids.offset = offset;
        layout
    }

    fn build_with(
        model: &Model,
        filter: FilterMode,
        search: &str,
        folded: &[String],
        beyond: Option<&flatten::pi_layout::Beyond>,
    ) -> Layout {
        let dialect = model.dialect;
        let query = search::Query::new(search, dialect);
        let mut visible = visibility::visible(model, filter, &query);
        // Descendants of folded entries are hidden, as pi hides them (by the tree's parents, in
        // flattened order, whatever the filter shows); omp has no folding of its own and gets
        // the same.
        let mut folded_key = vec![false; model.key_count()];
        if !folded.is_empty() {
            for id in folded {
                if let Some(k) = model.key_of(id) {
                    folded_key[k] = true;
                }
            }
            let mut skip = vec![false; model.key_count()];
            for k in model.keys() {
                if let Some(p) = model.parent_key(k) {
                    if folded_key[p] || skip[p] {
                        skip[k] = true;
                    }
                }
            }
            visible.retain(|&pos| !skip[model.key_at(pos)]);
        }
        // Rows and positions fit in `u32`s (`flatten::NONE`: hidden), like the model's keys.
        let mut row_of: Vec<u32> = vec![flatten::NONE; model.nodes.len()];
        let mut row_of_key: Vec<u32> = vec![flatten::NONE; model.key_count()];
        for (row, &pos) in visible.iter().enumerate() {
            row_of[pos] = row as u32;
            row_of_key[model.key_at(pos)] = row as u32;
        }
        let mut pi = (dialect == Dialect::Pi)
            .then(|| flatten::pi_layout::pi_structure(model, &visible, &row_of, beyond));
        // pi's structure found the parents and child counts; the layout keeps them.
        let parent_rows = match &mut pi {
            Some(s) => std::mem::take(&mut s.parent_row),
            None => flatten::pi_layout::visible_parents(model, &visible, &row_of),
        };
        let child_rows = match &mut pi {
            Some(s) => std::mem::take(&mut s.child_rows),
            None => {
                let mut counts = vec![0u32; visible.len()];
                for &p in parent_rows.iter().filter(|&&p| p != flatten::NONE) {
                    counts[p as usize] += 1;
                }
                counts
            }
        };
        let ids = RowIds {
            offset: 0,
            columns: model.columns.clone(),
            row_entries: visible
                .iter()
                .map(|&p| model.key_entry[model.key_at(p)])
                .collect(),
        };
        Layout {
            filter,
            search: search.to_owned(),
            folded: folded.to_vec(),
            visible_count: visible.len(),
            total: model.nodes.len(),
            offset: 0,
            visible,
            row_of_key,
            folded_key,
            pi,
            parent_rows,
            child_rows,
            ids,
        }
    }

    pub(super) fn is_for(&self, filter: FilterMode, search: &str, folded: &[String]) -> bool {
        self.filter == filter && self.search == search && self.folded == folded
    }
}

/// The id of every visible row: the session's ids by entry, and each row's entry.
#[derive(Debug, Clone, Default)]
pub(super) struct RowIds {
    /// The row number of `row_entries[0]`.
    pub(super) offset: usize,
    pub(super) columns: crate::session::columns::ViewColumns,
    pub(super) row_entries: std::sync::Arc<[u32]>,
}

impl RowIds {
    pub(super) fn get(&self, row: usize) -> Option<&str> {
        self.row_entries
            .get(row.checked_sub(self.offset)?)
            .and_then(|&e| self.columns.id(e as usize))
            .map(|id| &**id)
    }
}
