//! A session flattened once, to ask many views of: all rows, a window, pi's folding, a search
//! typed key by key; the filter / search / folding layout kept between calls.

use super::flatten::Model;
use super::layout::Layout;
use super::rows::compute_in;
use super::{RowsView, ViewState};
use crate::session::Session;
use std::path::Path;

/// A session flattened once (every entry parsed once), to compute many views from: keep it while
/// the session's revision does not change.
#[derive(Debug)]
pub struct TreeModel {
    pub(super) model: Model,
    pub(super) leaf: Option<String>,
    /// The last layout computed (filter, search, folding), reused while they stay the same.
    layout: std::sync::Mutex<Option<std::sync::Arc<Layout>>>,
}

impl TreeModel {
    /// Flattens a session; `home` shortens tool-call paths to `~`.
    pub fn new(session: &Session, home: Option<&Path>) -> TreeModel {
        TreeModel {
            model: Model::build(session, home),
            leaf: session.leaf_id().map(str::to_owned),
            layout: Default::default(),
        }
    }

    /// [`compute_rows`] on the prepared session: every visible row.
    pub fn rows(&self, state: &ViewState) -> RowsView {
        compute_with(
            &self.model,
            state,
            state.selected.as_deref().or(self.leaf.as_deref()),
            true,
        )
    }

    /// The view as the agent shows it after `state.search` was typed key by key into a selector
    /// opened on `state.selected` (or the leaf): with omp's fuzzy search the selection can end up
    /// elsewhere than with [`TreeModel::rows`], which resolves the selection once. All rows.
    pub fn typed(&self, state: &ViewState) -> RowsView {
        typed_search(
            &self.model,
            state,
            state.selected.as_deref().or(self.leaf.as_deref()),
            true,
        )
    }

    /// The view with some entries folded, as pi's `/tree` folds them (Ctrl+← / Alt+←): their
    /// descendants are hidden and pi draws `⊞` on them. omp has no folding of its own: its view
    /// folds by the same rule and draws no marker (the rows' `foldable` / `folded` say it), so
    /// with nothing folded its lines are omp's.
    pub fn rows_folded(&self, state: &ViewState, folded: &[String]) -> RowsView {
        compute_folded(
            &self.model,
            state,
            state.selected.as_deref().or(self.leaf.as_deref()),
            true,
            folded,
        )
    }

    /// Like [`TreeModel::rows`], but only the rows inside the window are built: `rows` holds
    /// `window.start..window.end`, while `selected`, `window` and `parent_row` stay absolute row
    /// numbers among all visible rows (`visible_count` of them). The text lines are the same.
    pub fn window(&self, state: &ViewState) -> RowsView {
        self.window_folded(state, &[])
    }

    /// [`TreeModel::window`] with folding (see [`TreeModel::rows_folded`]). The filter /
    /// search / folding layout is kept between calls, so moving the selection or the window
    /// costs only the rows in the window.
    pub fn window_folded(&self, state: &ViewState, folded: &[String]) -> RowsView {
        let layout = self.layout_for(state, folded);
        compute_in(
            &self.model,
            &layout,
            state,
            state.selected.as_deref().or(self.leaf.as_deref()),
            false,
            None,
        )
    }

    /// The layout of a filter, search and folding: the last one, or one built now (and kept).
    pub(super) fn layout_for(
        &self,
        state: &ViewState,
        folded: &[String],
    ) -> std::sync::Arc<Layout> {
        let mut cached = self
            .layout
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match cached.as_ref() {
            Some(l) if l.is_for(state.filter, &state.search, folded) => l.clone(),
            _ => {
                let l = std::sync::Arc::new(Layout::build(
                    &self.model,
                    state.filter,
                    &state.search,
                    folded,
                ));
                *cached = Some(l.clone());
                l
            }
        }
    }

    /// The number of entries in the flattened tree.
    pub fn len(&self) -> usize {
        self.model.nodes.len()
    }

    /// Whether the tree is empty.
    pub fn is_empty(&self) -> bool {
        self.model.nodes.is_empty()
    }
}

pub(super) fn compute_with(
    model: &Model,
    state: &ViewState,
    anchor: Option<&str>,
    all_rows: bool,
) -> RowsView {
    compute_folded(model, state, anchor, all_rows, &[])
}

fn compute_folded(
    model: &Model,
    state: &ViewState,
    anchor: Option<&str>,
    all_rows: bool,
    folded: &[String],
) -> RowsView {
    let layout = Layout::build(model, state.filter, &state.search, folded);
    compute_in(model, &layout, state, anchor, all_rows, None)
}

/// The view after `state.search` is typed one character at a time into a selector opened on
/// `anchor` with `state.filter` (each keystroke keeps the selection on the nearest visible
/// ancestor of the previous one, through empty results).
pub(super) fn typed_search(
    model: &Model,
    state: &ViewState,
    anchor: Option<&str>,
    all_rows: bool,
) -> RowsView {
    let query = state.search.clone();
    let mut step = ViewState {
        search: String::new(),
        ..state.clone()
    };
    let mut anchor: Option<String> = anchor.map(str::to_owned);
    let mut view = compute_with(
        model,
        &step,
        anchor.as_deref(),
        all_rows && query.is_empty(),
    );
    if let Some(id) = view.selected_id() {
        anchor = Some(id.to_owned());
    }
    let count = query.chars().count();
    for (n, (i, c)) in query.char_indices().enumerate() {
        step.search = query[..i + c.len_utf8()].to_owned();
        view = compute_with(model, &step, anchor.as_deref(), all_rows && n + 1 == count);
        if let Some(id) = view.selected_id() {
            anchor = Some(id.to_owned());
        }
    }
    view
}
