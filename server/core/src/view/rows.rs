//! One view made from a layout: the selection resolved, the window placed, the window's (or all)
//! rows built with their gutters and search hits, and the agent's text lines drawn.

use super::flatten::{self, Model};
use super::layout::Layout;
use super::{render, search, window, GutterCell, Row, RowsView, ViewState};
use crate::dialect::Dialect;

pub(super) fn compute_in(
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
                    // pi's rule on omp's drawing: it has visible children and is a root (no
                    // visible parent) or starts a branch (drawn with a connector).
                    let foldable = child_rows[at] > 0
                        && (parent_rows[at] == flatten::NONE || connector.is_some());
                    (node.depth as usize, connector, foldable)
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
                // pi draws `⊞ ` before a folded row without a connector; omp draws no marker.
                dialect == Dialect::Pi && r.folded && r.connector.is_none(),
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
