//! The fixtures' `treeRender`: the agent's `/tree` lines for every filter mode and for each
//! query typed into the default mode, as the conformance fixtures record them (and `inspect
//! --json` prints).

use super::flatten::Model;
use super::tree_model::{compute_with, typed_search};
use super::{FilterMode, RowsView, ViewState};
use crate::session::Session;
use std::path::Path;

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
