//! `sessionTree/rows` and `sessionTree/tree`: the engine's `/tree` view (`view::compute_rows`,
//! the agents' exact rows and lines) converted to the protocol, and the whole tree as paged
//! pre-order nodes.

use crate::to_proto::{drawable, u32_of};
use sessiontree_core::view::{self, TreeModel, ViewState};
use sessiontree_core::Session;
use sessiontree_protocol::{self as proto, CharRange, FilterMode};
use std::borrow::Cow;
use std::collections::HashSet;

/// A row's gutter as a panel `width` columns wide can use it: a wider one (pi draws every level,
/// thousands in deep trees) keeps its right end, the connectors next to the text, led by `…` so
/// that it is `width` characters. Gutter characters are one column each.
pub fn gutter_tail(prefix: &str, width: usize) -> Cow<'_, str> {
    if prefix.len() <= width {
        return Cow::Borrowed(prefix);
    }
    let kept = width.saturating_sub(1);
    let mut from_end = prefix.char_indices().rev();
    let start = match kept.checked_sub(1) {
        None => prefix.len(),
        Some(last) => match from_end.nth(last) {
            Some((at, _)) => at,
            None => return Cow::Borrowed(prefix),
        },
    };
    // Cut only when more than `width` characters: two or more before the kept ones.
    if from_end.nth(1).is_none() {
        return Cow::Borrowed(prefix);
    }
    Cow::Owned(format!("…{}", &prefix[start..]))
}

/// The view state the params ask for.
pub fn view_state(session: &Session, p: &proto::RowsParams) -> ViewState {
    let height = if p.height == 0 {
        // Tall enough for every row whatever the dialect keeps for its chrome.
        session.entries().len().saturating_mul(2).saturating_add(32)
    } else {
        p.height as usize
    };
    ViewState {
        filter: filter(p.filter),
        search: p.search.clone(),
        selected: p.selection.clone(),
        width: if p.width == 0 { 120 } else { p.width as usize },
        height,
    }
}

/// The engine's branch-segment move for the wire's.
pub fn segment(way: proto::SegmentMove) -> view::Segment {
    match way {
        proto::SegmentMove::Up => view::Segment::Up,
        proto::SegmentMove::Down => view::Segment::Down,
    }
}

fn filter(f: FilterMode) -> view::FilterMode {
    match f {
        FilterMode::Default => view::FilterMode::Default,
        FilterMode::NoTools => view::FilterMode::NoTools,
        FilterMode::UserOnly => view::FilterMode::UserOnly,
        FilterMode::LabeledOnly => view::FilterMode::LabeledOnly,
        FilterMode::All => view::FilterMode::All,
    }
}

/// The rows of the `/tree` view inside the window, as the agent of the session's dialect shows
/// them, from `window` (the session's tree model, or the first window found without one).
pub fn compute_rows(
    session: &Session,
    window: impl FnOnce(&ViewState, &[String]) -> view::RowsView,
    p: &proto::RowsParams,
    revision: u64,
) -> proto::RowsResult {
    let state = view_state(session, p);
    let v = window(&state, &p.folded);
    let window = v.window.start..v.window.end;
    let rows = v
        .rows
        .iter()
        .map(|r| proto::Row {
            id: r.id.clone(),
            kind: r.kind.to_string(),
            role: r.role.as_deref().map(str::to_owned),
            depth: u32_of(r.depth),
            prefix: drawable(&gutter_tail(
                r.prefix.as_deref().unwrap_or_default(),
                state.width,
            )),
            text: drawable(&r.text),
            label: r.label.as_deref().map(drawable),
            on_active_path: r.on_active_path,
            is_leaf: r.is_leaf,
            has_children: r.has_children,
            foldable: r.foldable,
            folded: r.folded,
            selected: r.selected,
            matches: r
                .matched
                .iter()
                .map(|&(start, end)| CharRange {
                    start: u32_of(start),
                    end: u32_of(end),
                })
                .collect(),
        })
        .collect();
    proto::RowsResult {
        revision,
        leaf: session.leaf_id().map(str::to_owned),
        rows,
        lines: v.text_lines().iter().map(|l| drawable(l)).collect(),
        selection: v.selected_id().map(str::to_owned),
        window_start: u32_of(window.start),
        total_rows: u32_of(v.visible_count),
    }
}

/// One page of the tree in pre-order, each entry named by its row text (`model`: the session's
/// tree model of this revision).
pub fn tree_page(
    session: &Session,
    model: &TreeModel,
    p: &proto::TreeParams,
    revision: u64,
) -> proto::TreeResult {
    let active: HashSet<usize> = session.branch_path(None).into_iter().collect();
    let leaf_index = session.leaf_id().and_then(|l| session.index_of(l));
    let tree = session.tree();
    let order = tree.preorder();
    let total = order.len();
    let offset = (p.offset as usize).min(total);
    let limit = if p.limit == 0 {
        total
    } else {
        p.limit as usize
    };
    let page = &order[offset..];
    if page.len().min(limit) > 64 {
        model.prepare_entry_texts();
    }
    let texts = model.entry_texts(session);
    let nodes = page
        .iter()
        .take(limit)
        .filter_map(|&(index, depth)| {
            let entry = session.entry_at(index)?;
            Some(proto::TreeNode {
                id: entry.id().map(str::to_owned),
                parent_id: entry.parent.id().map(str::to_owned),
                depth: u32_of(depth),
                kind: entry.kind().to_owned(),
                role: texts.role(index).map(|r| r.as_str().to_owned()),
                preview: drawable(&texts.text(index)),
                label: texts.label(index).map(drawable),
                timestamp: entry.timestamp.as_deref().map(str::to_owned),
                line: u32_of(entry.line),
                child_count: u32_of(tree.children(index).len()),
                on_active_path: active.contains(&index),
                is_leaf: leaf_index == Some(index),
            })
        })
        .collect();
    proto::TreeResult {
        revision,
        leaf: session.leaf_id().map(str::to_owned),
        total: u32_of(total),
        offset: u32_of(offset),
        nodes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_sessions::generated;
    use sessiontree_core::Dialect;

    /// A gutter wider than the panel keeps its right end, led by `…`, `width` characters in all.
    #[test]
    fn a_gutter_wider_than_the_panel_keeps_its_right_end() {
        assert_eq!(gutter_tail("│  ├─ ", 120), "│  ├─ ");
        assert_eq!(gutter_tail("abcdef", 6), "abcdef");
        assert_eq!(gutter_tail("abcdefg", 6), "…cdefg");
        assert_eq!(gutter_tail("│  │  ├─ ", 4), "…├─ ");
        // Longer in bytes than the width, not in characters.
        assert_eq!(gutter_tail("│││", 3), "│││");
        assert_eq!(gutter_tail("a", 1), "a");
        assert_eq!(gutter_tail("ab", 1), "…");
    }

    /// The rows of deep pi gutters are cut to the width asked for; the rest of each row (and the
    /// lines, cut by the agent's own rule) is the engine's.
    #[test]
    fn deep_gutters_reach_the_panel_cut_to_its_width() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let session = generated(dir.path(), Dialect::Pi, 2000, 4);
        let model = view::TreeModel::new(&session, None);
        let width = 12;
        let params = proto::RowsParams {
            uri: String::new(),
            filter: FilterMode::All,
            search: String::new(),
            selection: None,
            width,
            height: 0,
            folded: Vec::new(),
            segment: None,
        };
        let result = compute_rows(
            &session,
            |state, folded| model.window_folded(state, folded),
            &params,
            1,
        );
        let state = ViewState {
            filter: view::FilterMode::All,
            search: String::new(),
            selected: None,
            width: width as usize,
            height: session.entries().len() * 2 + 32,
        };
        let whole = model.window(&state);
        assert_eq!(result.rows.len(), whole.rows.len());
        let mut cut = 0;
        for (row, engine) in result.rows.iter().zip(&whole.rows) {
            let full = engine.prefix.as_deref().unwrap_or_default();
            assert!(
                row.prefix.chars().count() <= width as usize,
                "{:?}",
                row.prefix
            );
            match row.prefix.strip_prefix('…') {
                Some(tail) if full.chars().count() > width as usize => {
                    assert!(full.ends_with(tail), "{full:?} → {:?}", row.prefix);
                    assert_eq!(tail.chars().count(), width as usize - 1);
                    cut += 1;
                }
                _ => assert_eq!(row.prefix, full),
            }
        }
        assert!(cut > 0, "no gutter was wider than {width}");
        assert_eq!(result.lines, whole.text_lines());
    }

    /// A result written as JSON text (spliced into the output) is the bytes its value gives, on
    /// generated sessions of both dialects, in every filter, with and without a search.
    #[test]
    fn the_text_is_the_serialized_result() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let mut checked = 0;
        for dialect in [Dialect::Pi, Dialect::Omp] {
            let session = generated(dir.path(), dialect, 800, 4);
            let model = view::TreeModel::new(&session, None);
            for filter in [
                FilterMode::Default,
                FilterMode::NoTools,
                FilterMode::UserOnly,
                FilterMode::LabeledOnly,
                FilterMode::All,
            ] {
                for search in ["", "config"] {
                    let params = proto::RowsParams {
                        uri: String::new(),
                        filter,
                        search: search.to_owned(),
                        selection: None,
                        width: 100,
                        height: 30,
                        folded: Vec::new(),
                        segment: None,
                    };
                    let result = compute_rows(
                        &session,
                        |state, folded| model.window_folded(state, folded),
                        &params,
                        3,
                    );
                    let value = serde_json::to_value(&result).unwrap_or_else(|e| panic!("{e}"));
                    let expected = serde_json::to_vec(&value).unwrap_or_default();
                    let written = serde_json::to_vec(&result).unwrap_or_default();
                    assert!(written == expected, "{dialect:?} {filter:?} {search:?}");
                    checked += usize::from(!result.rows.is_empty());
                }
            }
        }
        assert!(checked >= 12, "{checked}");
    }

    /// Folding reaches the wire: a foldable row named in `folded` is folded and its descendants
    /// leave the rows, nothing else; pi draws `⊟` / `⊞`, omp (folded by pi's rule) draws no
    /// marker and its lines are otherwise unchanged.
    #[test]
    fn folded_entries_hide_their_descendants_in_both_dialects() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let rows_of = |session: &Session, folded: Vec<String>| {
            let model = view::TreeModel::new(session, None);
            let params = proto::RowsParams {
                uri: String::new(),
                filter: FilterMode::All,
                search: String::new(),
                selection: None,
                width: 100,
                height: 0,
                folded,
                segment: None,
            };
            compute_rows(
                session,
                |state, folded| model.window_folded(state, folded),
                &params,
                1,
            )
        };
        for dialect in [Dialect::Pi, Dialect::Omp] {
            let session = generated(dir.path(), dialect, 400, 6);
            let open = rows_of(&session, Vec::new());
            let at = open
                .rows
                .iter()
                .position(|r| r.foldable && r.depth > 0)
                .unwrap_or_else(|| panic!("{dialect:?}: no foldable branch row"));
            let id = open.rows[at].id.clone().unwrap_or_default();
            let folded = rows_of(&session, vec![id.clone()]);
            let row = folded
                .rows
                .iter()
                .position(|r| r.id.as_deref() == Some(id.as_str()))
                .unwrap_or_else(|| panic!("the folded row is gone"));
            assert!(folded.rows[row].folded && !open.rows[at].folded);
            match dialect {
                Dialect::Pi => {
                    assert!(open.lines[at].contains('⊟'), "{}", open.lines[at]);
                    assert!(folded.lines[row].contains('⊞'), "{}", folded.lines[row]);
                }
                Dialect::Omp => {
                    // The same line (the cursor column aside: the leaf may be inside).
                    let after_cursor = |l: &str| l.chars().skip(2).collect::<String>();
                    assert_eq!(
                        after_cursor(&folded.lines[row]),
                        after_cursor(&open.lines[at])
                    );
                    let markers =
                        |r: &proto::RowsResult| r.lines.iter().any(|l| l.contains(['⊟', '⊞']));
                    assert!(!markers(&open) && !markers(&folded));
                }
            }
            // Its descendants are hidden, nothing else.
            let tree = session.tree();
            let mut descendants = HashSet::new();
            let mut stack = vec![session
                .index_of(&id)
                .unwrap_or_else(|| panic!("no entry {id}"))];
            while let Some(index) = stack.pop() {
                for &child in tree.children(index) {
                    if let Some(child_id) = session.entry_at(child).and_then(|e| e.id()) {
                        descendants.insert(child_id.to_owned());
                    }
                    stack.push(child);
                }
            }
            let expected: Vec<_> = open
                .rows
                .iter()
                .filter(|r| !r.id.as_ref().is_some_and(|i| descendants.contains(i)))
                .map(|r| r.id.clone())
                .collect();
            let shown: Vec<_> = folded.rows.iter().map(|r| r.id.clone()).collect();
            assert!(
                expected.len() < open.rows.len(),
                "{dialect:?}: the folded row hid nothing"
            );
            assert_eq!(shown, expected, "{dialect:?}");
        }
    }
}
