//! The `/tree` view: what each agent's tree selector shows for a session and a view state (filter,
//! search, selection, size), as structured rows for rich clients and as the exact text lines of the
//! agent's `/tree`; plus the navigation and /branch decisions taken when a row is picked.
//!
//! `flatten` orders the tree, `visibility` filters it, `text` builds each row's text, `search`
//! and `fuzzy` match queries, `window` sizes and moves the window, `render` draws the lines,
//! `navigate` and `branch_pick` decide what picking a row does.

pub mod branch_pick;
mod first_window;
mod flatten;
pub mod fuzzy;
mod fuzzy_ascii;
pub mod navigate;
mod path_cut;
mod render;
pub mod search;
mod search_verdicts;
mod shared_text;
#[cfg(test)]
mod testkit;
mod visibility;
pub mod window;

pub use first_window::{first_window, first_window_cut_below};
pub use shared_text::SharedText;
pub use visibility::FilterMode;
pub use window::{Move, Window};

use crate::dialect::Dialect;
use crate::session::Session;
use flatten::Model;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The part of a first search that does not depend on the query, done ahead: each full chunk's
/// search strings laid out end to end (60–80% of a first search at 100k and 1M entries).
/// Made from a session and run on any thread (a background one, once the session is open); a
/// search that comes first does the work itself, and the other waits for it.
pub struct SearchWarmUp {
    columns: crate::session::columns::ViewColumns,
    dialect: Dialect,
}

impl SearchWarmUp {
    /// Shares the session's view columns (one reference per 4096 entries).
    pub fn new(session: &Session) -> SearchWarmUp {
        SearchWarmUp {
            columns: session.view_columns().clone(),
            dialect: session.dialect(),
        }
    }

    /// Lays the search strings out.
    pub fn run(self) {
        self.columns.warm_search_texts(self.dialect);
    }
}

/// What the selector is showing: filter, search query, selected entry, size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewState {
    /// The filter mode.
    pub filter: FilterMode,
    /// The search query as typed.
    pub search: String,
    /// The selected entry id (`None`: the leaf, as the selector opens).
    pub selected: Option<String>,
    /// Terminal width in cells.
    pub width: usize,
    /// Terminal height in rows.
    pub height: usize,
}

impl Default for ViewState {
    fn default() -> Self {
        ViewState {
            filter: FilterMode::Default,
            search: String::new(),
            selected: None,
            width: 120,
            height: 40,
        }
    }
}

/// One gutter column of a row (three terminal cells wide).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GutterCell {
    /// Nothing.
    Space,
    /// `│`: an ancestor's siblings continue below.
    Line,
    /// `├─`: this row's connector, more siblings follow.
    Branch,
    /// `└─`: this row's connector, the last sibling.
    Last,
    /// `…`: omp compressed older levels.
    Ellipsis,
}

/// One visible row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    /// Entry id (`None` for id-less lines).
    pub id: Option<String>,
    /// Index of the entry in the session.
    pub entry_index: usize,
    /// Entry `type`.
    pub kind: SharedText,
    /// `message.role` for messages.
    pub role: Option<SharedText>,
    /// Indentation level as the agent draws it.
    pub depth: usize,
    /// Row index of the nearest visible ancestor.
    pub parent_row: Option<usize>,
    /// This row's connector, when its parent branches.
    pub connector: Option<GutterCell>,
    /// pi: can be folded (has visible children and is a root or starts a branch); drawn `⊟` in
    /// its connector.
    pub foldable: bool,
    /// pi: folded (drawn `⊞`; its descendants are hidden).
    pub folded: bool,
    /// The gutter as drawn (one cell per level); filled for rows inside the window.
    pub gutter: Vec<GutterCell>,
    /// The gutter prefix text as drawn; filled for rows inside the window.
    pub prefix: Option<String>,
    /// On the path from the root to the leaf (drawn with `• `).
    pub on_active_path: bool,
    /// The session's leaf.
    pub is_leaf: bool,
    /// The label in effect.
    pub label: Option<SharedText>,
    /// The row text after the label.
    pub text: SharedText,
    /// Character ranges of `text` hit by the search.
    pub matched: Vec<(usize, usize)>,
    /// Has visible children.
    pub has_children: bool,
    /// The selected row.
    pub selected: bool,
}

/// The computed view.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RowsView {
    /// Whose selector this is.
    pub dialect: Dialect,
    /// The state it was computed for (with the selection resolved).
    pub state: ViewState,
    /// The visible rows, in order: all of them ([`compute_rows`], [`TreeModel::rows`]) or the
    /// window's ([`TreeModel::window`]); `rows[0]` is visible row number `first_row`.
    pub rows: Vec<Row>,
    /// The visible row number of `rows[0]`.
    pub first_row: usize,
    /// How many rows are visible in all.
    pub visible_count: usize,
    /// The selected row.
    pub selected: Option<usize>,
    /// The rows shown.
    pub window: Window,
    /// Rows before filtering (entries in the tree).
    pub total: usize,
    /// The agent's own render would throw here (omp on an entry without a string `type` in the
    /// window); the message it throws. `text_lines` still draws the rows.
    pub agent_error: Option<String>,
    lines: Vec<String>,
    #[serde(skip)]
    ids: RowIds,
}

/// The id of every visible row: the session's ids by entry, and each row's entry.
#[derive(Debug, Clone, Default)]
struct RowIds {
    /// The row number of `row_entries[0]`.
    offset: usize,
    columns: crate::session::columns::ViewColumns,
    row_entries: std::sync::Arc<[u32]>,
}

impl RowIds {
    fn get(&self, row: usize) -> Option<&str> {
        self.row_entries
            .get(row.checked_sub(self.offset)?)
            .and_then(|&e| self.columns.id(e as usize))
            .map(|id| &**id)
    }
}

impl RowsView {
    /// The lines of the agent's `/tree` list at the state's width and height.
    pub fn text_lines(&self) -> &[String] {
        &self.lines
    }

    /// The selected entry id.
    pub fn selected_id(&self) -> Option<&str> {
        self.selected.and_then(|s| self.ids.get(s))
    }

    /// The entry id selected after a move (Up/Down wrap; page moves stop at the ends).
    pub fn moved(&self, how: Move) -> Option<&str> {
        window::move_selection(self.selected, self.visible_count, self.window.max_rows, how)
            .and_then(|s| self.ids.get(s))
    }

    /// The built row for a visible row number, if it was built.
    pub fn row(&self, number: usize) -> Option<&Row> {
        number
            .checked_sub(self.first_row)
            .and_then(|i| self.rows.get(i))
    }
}

#[cfg(test)]
fn cells_of(prefix: &str) -> Vec<GutterCell> {
    prefix
        .chars()
        .step_by(3)
        .map(|c| match c {
            '│' => GutterCell::Line,
            '├' => GutterCell::Branch,
            '└' => GutterCell::Last,
            '…' => GutterCell::Ellipsis,
            _ => GutterCell::Space,
        })
        .collect()
}

/// Computes the view of a session for a state. `home` shortens tool-call paths to `~`.
pub fn compute_rows(session: &Session, state: &ViewState, home: Option<&Path>) -> RowsView {
    TreeModel::new(session, home).rows(state)
}

/// A session flattened once (every entry parsed once), to compute many views from: keep it while
/// the session's revision does not change.
#[derive(Debug)]
pub struct TreeModel {
    model: Model,
    leaf: Option<String>,
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

    /// pi's view with some entries folded (Ctrl+← / Alt+←): their descendants are hidden and they
    /// show `⊞`. omp has no folding; its view ignores `folded`.
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

    /// [`TreeModel::window`] with pi's folding (see [`TreeModel::rows_folded`]). The filter /
    /// search / folding layout is kept between calls, so moving the selection or the window
    /// costs only the rows in the window.
    pub fn window_folded(&self, state: &ViewState, folded: &[String]) -> RowsView {
        let layout = {
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
        };
        compute_in(
            &self.model,
            &layout,
            state,
            state.selected.as_deref().or(self.leaf.as_deref()),
            false,
            None,
        )
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

fn compute_with(
    model: &Model,
    state: &ViewState,
    anchor: Option<&str>,
    all_rows: bool,
) -> RowsView {
    compute_folded(model, state, anchor, all_rows, &[])
}

/// What a filter, search and folding make of the flattened tree, independent of the selection
/// and window: kept by [`TreeModel`] so that moving the window or the selection is cheap.
#[derive(Debug)]
struct Layout {
    filter: FilterMode,
    search: String,
    folded: Vec<String>,
    visible: Vec<usize>,
    /// key → its row ([`flatten::NONE`]: hidden).
    row_of_key: Vec<u32>,
    folded_key: Vec<bool>,
    pi: Option<flatten::pi_layout::PiStructure>,
    /// Each row's parent row ([`flatten::NONE`]: none).
    parent_rows: Vec<u32>,
    child_rows: Vec<u32>,
    ids: RowIds,
    /// How many rows are visible in all (more than `visible` holds for a prefix model).
    visible_count: usize,
    /// How many positions the whole walk has.
    total: usize,
    /// The visible row number of `visible[0]` (a prefix model that starts down the leaf's path
    /// leaves the rows above it out).
    offset: usize,
}

impl Layout {
    fn build(model: &Model, filter: FilterMode, search: &str, folded: &[String]) -> Layout {
        Layout::build_with(model, filter, search, folded, None)
    }

    /// The layout of a prefix model ([`flatten::Model::build_prefix`]): its visible rows are
    /// rows `offset..offset + visible.len()` of `visible_count`, re-laid out knowing what lies
    /// `beyond` it.
    fn of_prefix(
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
        // pi: descendants of folded entries are hidden (by `parentId`, in flattened order).
        let mut folded_key = vec![false; model.key_count()];
        if dialect == Dialect::Pi && !folded.is_empty() {
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

    fn is_for(&self, filter: FilterMode, search: &str, folded: &[String]) -> bool {
        self.filter == filter && self.search == search && self.folded == folded
    }
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

fn compute_in(
    model: &Model,
    layout: &Layout,
    state: &ViewState,
    anchor: Option<&str>,
    all_rows: bool,
    calls: Option<flatten::CallMap>,
) -> RowsView {
    let dialect = model.dialect;
    let query = search::Query::new(&state.search, dialect);
    let visible = &layout.visible;
    let folded_key = &layout.folded_key;
    let pi = &layout.pi;
    let parent_rows = &layout.parent_rows;
    let child_rows = &layout.child_rows;
    let visible_count = layout.visible_count;
    // Row numbers are the whole view's; the layout's vectors start at row `off`.
    let off = layout.offset;
    let selected = model
        .nearest_visible(anchor, &layout.row_of_key, visible_count - off)
        .map(|s| s + off);
    // omp marks every row carrying the selected id (duplicated ids); pi only the selected index.
    let selected_key = selected.map(|s| model.key_at(visible[s - off]));
    let max_rows = window::window_size(dialect, state.height);
    let win = window::centered(selected, visible_count, max_rows);

    let deepest = visible[win.start - off..win.end - off]
        .iter()
        .map(|&p| model.nodes[p].depth as usize)
        .max()
        .unwrap_or(0);

    let built = if all_rows {
        0..visible_count
    } else {
        win.start..win.end
    };
    // A window's tool results find their calls in one pass over the session's call records
    // (unless the caller made that pass already).
    let window_calls = match calls {
        Some(calls) => Some(calls),
        None if built.len() < 4096 => model.calls_for(&visible[built.start - off..built.end - off]),
        None => None,
    };
    let build = |range: std::ops::Range<usize>, rows: &mut Vec<Row>| {
        let mut highlighter = search::Highlighter::new();
        for (at, &pos) in visible
            .iter()
            .enumerate()
            .skip(range.start - off)
            .take(range.len())
        {
            let row = at + off;
            let node = &model.nodes[pos];
            let text = model.row_text_with(pos, window_calls.as_ref());
            let in_window = row >= win.start && row < win.end;
            let (depth, connector, foldable) = match &pi {
                Some(s) => {
                    let r = s.rows[at];
                    let depth = if s.multiple_roots {
                        r.indent.saturating_sub(1)
                    } else {
                        r.indent
                    };
                    let connector =
                        (r.show_connector && !r.is_virtual_root_child).then_some(if r.is_last {
                            GutterCell::Last
                        } else {
                            GutterCell::Branch
                        });
                    (depth as usize, connector, r.foldable)
                }
                None => {
                    let connector = (node.parent.is_some() && node.sibling_count > 1).then_some(
                        if node.is_last {
                            GutterCell::Last
                        } else {
                            GutterCell::Branch
                        },
                    );
                    (node.depth as usize, connector, false)
                }
            };
            let drawn = in_window.then(|| match &pi {
                Some(s) => render::pi_prefix(s, at, folded_key[model.key_at(pos)]),
                None => render::omp_prefix(model, pos, state.width, deepest),
            });
            let (prefix, gutter) = match drawn {
                Some(p) => (Some(p.text), p.cells),
                None => (None, Vec::new()),
            };
            let matched = highlighter.ranges(&query, &text);
            rows.push(Row {
                id: model.id(pos).map(str::to_owned),
                entry_index: node.entry as usize,
                kind: model.kind_text(pos),
                role: model.role_text(pos),
                depth,
                parent_row: Some(parent_rows[at])
                    .filter(|&p| p != flatten::NONE)
                    .map(|p| p as usize + off),
                connector,
                foldable,
                folded: folded_key[model.key_at(pos)],
                gutter,
                prefix,
                on_active_path: model.on_active_path(pos),
                is_leaf: model.is_leaf(pos),
                label: model.label_text(pos),
                text,
                matched,
                has_children: child_rows[at] > 0,
                selected: match dialect {
                    Dialect::Pi => Some(row) == selected,
                    Dialect::Omp => selected_key == Some(model.key_at(pos)),
                },
            });
        }
    };
    let mut rows = Vec::with_capacity(built.len());
    if built.len() < 4096 {
        build(built.clone(), &mut rows);
    } else {
        // Every row of a big view: two halves on two threads (the tool calls' map made first).
        model.prepare_tool_texts();
        let mid = built.start + built.len() / 2;
        let ((), part) = crate::parallel::join(
            || build(built.start..mid, &mut rows),
            || {
                let mut part = Vec::with_capacity(built.end - mid);
                build(mid..built.end, &mut part);
                part
            },
        );
        rows.extend(part);
    }

    let line_rows: Vec<render::LineRow<'_>> = rows[win.start - built.start..win.end - built.start]
        .iter()
        .map(|r| render::LineRow {
            selected: r.selected,
            prefix: r.prefix.as_deref().unwrap_or(""),
            body: render::row_body(
                r.folded && r.connector.is_none(),
                r.on_active_path,
                r.label.as_deref(),
                &r.text,
            ),
        })
        .collect();
    let lines = match dialect {
        Dialect::Pi => render::pi_lines(
            &line_rows,
            selected,
            visible_count,
            state.filter,
            state.width,
        ),
        Dialect::Omp => render::omp_lines(
            &line_rows,
            win,
            visible_count,
            layout.total,
            state.filter,
            &state.search,
            state.width,
        ),
    };
    drop(line_rows);
    let mut resolved = state.clone();
    resolved.selected = selected
        .and_then(|s| model.id(visible[s - off]).map(str::to_owned))
        .or(resolved.selected);
    let ids = layout.ids.clone();
    let agent_error = (dialect == Dialect::Omp
        && visible[win.start - off..win.end - off]
            .iter()
            .any(|&p| model.kind_missing(p)))
    .then(|| "undefined is not an object (evaluating 'entry.type.replaceAll')".to_owned());
    RowsView {
        agent_error,
        dialect,
        state: resolved,
        rows,
        first_row: built.start,
        visible_count,
        selected,
        window: win,
        total: layout.total,
        ids,
        lines,
    }
}

/// The view after `state.search` is typed one character at a time into a selector opened on
/// `anchor` with `state.filter` (each keystroke keeps the selection on the nearest visible
/// ancestor of the previous one, through empty results).
fn typed_search(
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

/// A render as the fixtures record it: the lines, or `{"error": message}` when the agent throws.
fn fixture_lines(view: RowsView) -> serde_json::Value {
    match view.agent_error {
        Some(message) => serde_json::json!({ "error": message }),
        None => serde_json::Value::from(view.lines),
    }
}

/// The fixtures' `treeRender` object: `{width, terminalHeight, filters: {mode: [lines]},
/// searches: {query: [lines]}}` — every filter mode with no search, and each query typed into the
/// default mode.
pub fn tree_render_fixture(
    session: &Session,
    searches: &[String],
    width: usize,
    height: usize,
    home: Option<&Path>,
) -> serde_json::Value {
    let model = Model::build(session, home);
    let mut filters = serde_json::Map::new();
    for mode in FilterMode::ALL {
        let state = ViewState {
            filter: mode,
            search: String::new(),
            selected: None,
            width,
            height,
        };
        let view = compute_with(&model, &state, session.leaf_id(), false);
        filters.insert(mode.as_str().to_owned(), fixture_lines(view));
    }
    let mut by_query = serde_json::Map::new();
    for q in searches {
        let state = ViewState {
            filter: FilterMode::Default,
            search: q.clone(),
            selected: None,
            width,
            height,
        };
        let view = typed_search(&model, &state, session.leaf_id(), false);
        by_query.insert(q.clone(), fixture_lines(view));
    }
    serde_json::json!({
        "width": width,
        "terminalHeight": height,
        "filters": filters,
        "searches": by_query,
    })
}

/// What `inspect --json` adds as `treeRender`: [`tree_render_fixture`] at the given size (the
/// fixtures use 120×40) with `$HOME` taken from the environment.
pub fn tree_render_for_inspect(
    session: &Session,
    searches: &[String],
    width: Option<usize>,
    height: Option<usize>,
) -> serde_json::Value {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    tree_render_fixture(
        session,
        searches,
        width.unwrap_or(120),
        height.unwrap_or(40),
        home.as_deref(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use testkit::Kit;

    fn lines(k: &Kit, state: &ViewState) -> Vec<String> {
        compute_rows(&k.session, state, None).text_lines().to_vec()
    }

    #[test]
    fn seed_example_tree() {
        let state = ViewState::default();
        let pi = Kit::seed_example(Dialect::Pi);
        assert_eq!(
            lines(&pi, &state),
            [
                "  • user: Start task",
                "  • assistant: Plan",
                "  ├⊟ • user: Try approach A",
                "  │     • assistant: A result",
                "› │     • [milestone] user: Continue A",
                "  └⊟ user: Try approach B",
                "        assistant: B result",
                "  (5/7)",
            ]
        );
        let omp = Kit::seed_example(Dialect::Omp);
        assert_eq!(
            lines(&omp, &state),
            [
                "  • user: Start task",
                "  • assistant: Plan",
                "  ├─ • user: Try approach A",
                "  │  • assistant: A result",
                "› │  • [milestone] user: Continue A",
                "  └─ user: Try approach B",
                "     assistant: B result",
            ]
        );
    }

    #[test]
    fn filters_on_the_seed_example() {
        let pi = Kit::seed_example(Dialect::Pi);
        let user_only = ViewState {
            filter: FilterMode::UserOnly,
            ..ViewState::default()
        };
        assert_eq!(
            lines(&pi, &user_only),
            [
                "  • user: Start task",
                "  ├⊟ • user: Try approach A",
                "› │     • [milestone] user: Continue A",
                "  └─ user: Try approach B",
                "  (3/4) [user]",
            ]
        );
        let labeled = ViewState {
            filter: FilterMode::LabeledOnly,
            ..ViewState::default()
        };
        assert_eq!(
            lines(&pi, &labeled),
            ["› • [milestone] user: Continue A", "  (1/1) [labeled]"]
        );
        let omp = Kit::seed_example(Dialect::Omp);
        let all = ViewState {
            filter: FilterMode::All,
            ..ViewState::default()
        };
        let omp_all = lines(&omp, &all);
        assert_eq!(omp_all.last().map(String::as_str), Some("[all]"));
        assert!(omp_all.iter().any(|l| l.contains("[label: milestone]")));
        let search = ViewState {
            search: "approach".into(),
            ..ViewState::default()
        };
        assert_eq!(
            lines(&omp, &search),
            ["› ├─ • user: Try approach A", "  └─ user: Try approach B"],
            "the selection falls back to the nearest visible ancestor of the leaf"
        );
        let nothing = ViewState {
            search: "zzzz".into(),
            ..ViewState::default()
        };
        assert_eq!(
            lines(&omp, &nothing),
            [
                "No entries match search \"zzzz\"",
                "Press Backspace to clear the search",
                "(0/8)"
            ]
        );
        assert_eq!(lines(&pi, &nothing), ["  No entries found", "  (0/0)"]);
    }

    #[test]
    fn structured_rows_and_moves() {
        let k = Kit::seed_example(Dialect::Pi);
        let state = ViewState {
            search: "approach".into(),
            ..ViewState::default()
        };
        let view = compute_rows(&k.session, &state, None);
        let texts: Vec<&str> = view.rows.iter().map(|r| r.text.as_str()).collect();
        assert_eq!(texts, ["user: Try approach A", "user: Try approach B"]);
        assert_eq!(view.rows[0].matched, vec![(10, 18)]);
        // Two visible roots hang under pi's virtual root: no connectors.
        assert_eq!(
            view.text_lines(),
            [
                "› • user: Try approach A",
                "  user: Try approach B",
                "  (1/2)"
            ]
        );
        assert_eq!(
            (view.rows[0].connector, view.rows[1].parent_row),
            (None, None)
        );
        assert!(view.rows[0].on_active_path && !view.rows[1].on_active_path);
        assert_eq!(view.selected_id(), Some(k.id("try_a").as_str()));
        assert_eq!(view.moved(Move::Down), Some(k.id("try_b").as_str()));
        assert_eq!(
            view.moved(Move::Up),
            Some(k.id("try_b").as_str()),
            "up wraps"
        );
        assert_eq!(view.moved(Move::PageDown), Some(k.id("try_b").as_str()));

        let full = compute_rows(&k.session, &ViewState::default(), None);
        let plan = &full.rows[1];
        assert!(plan.has_children && plan.parent_row == Some(0) && plan.depth == 0);
        let continue_a = &full.rows[4];
        assert!(continue_a.is_leaf && continue_a.selected);
        assert_eq!(continue_a.label.as_deref(), Some("milestone"));
        assert_eq!(continue_a.gutter, vec![GutterCell::Line, GutterCell::Space]);
        assert_eq!(continue_a.prefix.as_deref(), Some("│     "));
    }

    /// A staircase of branch points, each with a side branch, `levels` deep.
    fn staircase(dialect: Dialect, levels: usize) -> Kit {
        const NAMES: [&str; 16] = [
            "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "s12", "s13",
            "s14", "s15",
        ];
        let mut k = Kit::new(dialect);
        k.user("root", "root");
        for name in NAMES.iter().take(levels) {
            k.assistant("side", "side branch");
            k.branch("root");
            k.user(name, "main line");
            k.ids.insert("root", k.id(name));
        }
        k
    }

    #[test]
    fn omp_compresses_deep_gutters_behind_an_ellipsis() {
        let k = staircase(Dialect::Omp, 16);
        let state = ViewState {
            width: 60,
            ..ViewState::default()
        };
        let view = compute_rows(&k.session, &state, None);
        let lines = view.text_lines();
        // (60 - max(24, 30) - 4) / 3 = 8 levels at most, older ones behind `…`.
        assert!(lines
            .iter()
            .any(|l| l.starts_with("  …") || l.starts_with("› …")));
        for l in lines {
            let body = l.trim_end_matches(['│', '█']);
            let gutter: String = body
                .chars()
                .skip(2)
                .take_while(|c| " │├└─…".contains(*c))
                .collect();
            assert!(gutter.chars().count() <= 8 * 3 + 1, "{l}");
        }
        // pi never compresses.
        let pi = staircase(Dialect::Pi, 16);
        let wide = compute_rows(&pi.session, &state, None);
        assert!(wide.text_lines().iter().all(|l| !l.contains('…')));
    }

    #[test]
    fn pi_folding() {
        let k = Kit::seed_example(Dialect::Pi);
        let model = TreeModel::new(&k.session, None);
        let state = ViewState::default();
        let view = model.rows_folded(&state, &[k.id("try_a")]);
        assert_eq!(
            view.text_lines(),
            [
                "  • user: Start task",
                "  • assistant: Plan",
                "› ├⊞ • user: Try approach A",
                "  └⊟ user: Try approach B",
                "        assistant: B result",
                "  (3/5)",
            ]
        );
        assert!(view.rows[2].folded && view.rows[3].foldable);
        let root = model.rows_folded(&state, &[k.id("start")]);
        assert_eq!(root.text_lines(), ["› ⊞ • user: Start task", "  (1/1)"]);
        // omp has no folding.
        let omp = Kit::seed_example(Dialect::Omp);
        let m = TreeModel::new(&omp.session, None);
        assert_eq!(
            m.rows_folded(&state, &[omp.id("start")]).text_lines(),
            m.rows(&state).text_lines()
        );
    }

    /// Each row's gutter cells are what its drawn prefix shows, level by level.
    #[test]
    fn gutter_cells_read_as_the_drawn_prefix() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let (mut checked, mut scrolled) = (0, 0);
        for path in crate::test_sessions::sample_sessions(dir.path()) {
            let Ok(session) = Session::open(&path, crate::session::OpenOptions::default()) else {
                continue;
            };
            let model = TreeModel::new(&session, None);
            for (filter, width) in [(FilterMode::Default, 120), (FilterMode::All, 40)] {
                let state = ViewState {
                    filter,
                    width,
                    height: 400,
                    ..ViewState::default()
                };
                for row in model.window(&state).rows {
                    let prefix = row.prefix.as_deref().unwrap_or_default();
                    assert_eq!(
                        row.gutter,
                        cells_of(prefix),
                        "{} {prefix:?}",
                        path.display()
                    );
                    checked += usize::from(!row.gutter.is_empty());
                    scrolled += usize::from(row.gutter.first() == Some(&GutterCell::Ellipsis));
                }
            }
        }
        assert!(checked > 1000 && scrolled > 100, "{checked} {scrolled}");
    }

    #[test]
    fn window_views_match_full_views() {
        for dialect in [Dialect::Pi, Dialect::Omp] {
            let k = Kit::seed_example(dialect);
            let model = TreeModel::new(&k.session, None);
            let state = ViewState {
                height: 12,
                ..ViewState::default()
            };
            let (full, win) = (model.rows(&state), model.window(&state));
            assert_eq!(full.text_lines(), win.text_lines());
            assert_eq!(&full.rows[win.window.start..win.window.end], &win.rows[..]);
            assert_eq!(
                (win.first_row, win.visible_count),
                (win.window.start, full.rows.len())
            );
            assert_eq!(full.moved(Move::Up), win.moved(Move::Up));
            assert_eq!(win.row(win.window.start), win.rows.first());
        }
    }

    #[test]
    fn small_terminals_window_the_rows() {
        let k = Kit::seed_example(Dialect::Omp);
        let state = ViewState {
            height: 12,
            ..ViewState::default()
        };
        let view = compute_rows(&k.session, &state, None);
        assert_eq!(view.window.max_rows, 4);
        let l = view.text_lines();
        assert_eq!(l.len(), 4);
        assert!(
            l.iter().all(|line| line.chars().count() == 120),
            "scrollbar column pads every row"
        );
        assert!(l.iter().any(|line| line.ends_with('█')));
    }
}
