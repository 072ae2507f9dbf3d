//! The first window of the `/tree` view as the selector opens (on the leaf, no search), found
//! without walking the whole tree.
//!
//! The walk puts the subtrees holding the leaf first, so the rows before the leaf are the path
//! from the root and the window around the leaf is a prefix of the walk: a prefix model that
//! stops one shown row past the window gives the window's rows exactly as the whole model does
//! (see [`Model::build_prefix`]). The row count comes from every entry's filter flags, the
//! selected row from the path, and pi's re-layout learns from the unwalked subtrees which rows
//! have visible children past the prefix ([`Beyond`]). A tool result shows the call with its id
//! that the whole walk passes last, so a window whose results have a call past the prefix is left
//! to the whole model.
//!
//! The walk itself starts at a shown ancestor just above the window when one far enough down the
//! path qualifies, with what the rows above hand down found in one pass over the path
//! ([`first_window_start`]): so the cost does not follow the leaf's depth.
//!
//! It applies to the trees read from parent indices where every parent comes before its child
//! (no duplicated ids, no cycles, no self-parented entries: every entry is walked once); any
//! other session, search or selection takes the whole model.

use super::first_window_start;
use super::flatten::pi_layout::Beyond;
use super::flatten::{Marks, Model, Stop, Unwalked};
use super::layout::Layout;
use super::rows::compute_in;
use super::visibility::passes;
use super::{window, RowsView, ViewState};
use crate::dialect::Dialect;
use crate::facts::flags::flag;
use crate::session::{Session, NO_PARENT};
use crate::tree::Tree;
use std::path::Path;

/// The view [`super::TreeModel::window`] gives for `state`, when `state` has no search and
/// selects the leaf (or nothing) and the session's tree is plain; `None` otherwise. The view's
/// ids are known for the rows its walk holds only (down to the window's end, from the root or
/// from a row above the window): [`RowsView::moved`] outside them gives `None`.
pub fn first_window(session: &Session, home: Option<&Path>, state: &ViewState) -> Option<RowsView> {
    first_window_cut_below(session, home, state, MIN_CUT)
}

/// How far down the leaf's path the walk must be able to start for it to start there: above,
/// the rows it would skip cost less than finding what they hand down.
const MIN_CUT: usize = 256;

/// [`first_window`], with the walk starting down the leaf's path when it can start `min_cut` or
/// more steps down (public for the fuzz target, which starts it wherever it can).
#[doc(hidden)]
pub fn first_window_cut_below(
    session: &Session,
    home: Option<&Path>,
    state: &ViewState,
    min_cut: usize,
) -> Option<RowsView> {
    if !state.search.is_empty() {
        return None;
    }
    let leaf_id = session.leaf_id()?;
    if state.selected.as_deref().is_some_and(|s| s != leaf_id) {
        return None;
    }
    let leaf = session.index_of(leaf_id)?;
    let entries = session.entries();
    let n = entries.len();
    let parents = session.plain_parents().filter(|p| p.len() == n)?;
    if !parents
        .iter()
        .enumerate()
        .all(|(i, &p)| p == NO_PARENT || (p as usize) < i)
    {
        return None;
    }
    let dialect = session.dialect();
    let filter = state.filter;
    let columns = session.view_columns();
    // The session's tree, when it still has to be built, is built from the parent indices on a
    // second thread meanwhile (and kept by the session).
    let (marks, tree) = match session.built_tree() {
        Some(tree) => (Marks::of(session), tree),
        None => {
            let times = session.times();
            let (marks, tree) =
                crate::parallel::join(|| Marks::of(session), || Tree::from_parents(parents, times));
            (marks, session.keep_tree(tree))
        }
    };
    let mut labeled = vec![false; n];
    for &(i, _) in &marks.labels {
        labeled[i] = true;
    }
    // An entry's flags as a model has them (the active-path flag aside: no filter reads it).
    let flags = |e: usize| {
        let mut f = columns.static_flags(e, &entries[e], dialect);
        if e == leaf {
            f |= flag::LEAF;
        }
        if labeled[e] {
            f |= flag::LABELED;
        }
        f
    };
    // Of static flags a filter reads five bits: one table lookup decides.
    let table: [bool; 32] = std::array::from_fn(|f| passes(f as u16, filter, dialect));
    let by_table =
        |f: u16| table[usize::from(f & (flag::CATEGORY | flag::BLANK | flag::USER_REQUEST))];
    let shown = |e: usize| {
        if e == leaf || labeled[e] {
            passes(flags(e), filter, dialect)
        } else {
            by_table(columns.static_flags(e, &entries[e], dialect))
        }
    };

    // Every entry is walked once: count the shown ones from their static flags, then correct the
    // leaf and the labeled entries.
    let mut visible_count = columns.count_static(entries, dialect, by_table);
    // (Ids are unique here: each labeled entry is listed once.)
    let corrected = marks.labels.iter().map(|&(e, _)| e);
    for e in corrected.chain((!labeled[leaf]).then_some(leaf)) {
        let plain = passes(
            columns.static_flags(e, &entries[e], dialect),
            filter,
            dialect,
        );
        visible_count = visible_count + usize::from(shown(e)) - usize::from(plain);
    }
    // The rows before the leaf are its shown ancestors; the selection is the nearest shown one.
    let shown_at: Vec<usize> = (0..marks.path.len())
        .filter(|&i| shown(marks.path[i]))
        .collect();
    let selected = shown_at.len().checked_sub(1)?;
    let max_rows = window::window_size(dialect, state.height);
    let win = window::centered(Some(selected), visible_count, max_rows);
    let plan = Plan {
        session,
        home,
        state,
        tree: &tree,
        marks: &marks,
        shown: &shown,
        visible_count,
        selected,
        win,
        // One shown row past the window.
        rows: (win.end + 1).min(visible_count),
    };
    // The walk starts down the path when it can (see `first_window_start`), else at the roots.
    let need = first_window_start::Need {
        tree: &tree,
        path: &marks.path,
        shown_at: &shown_at,
        shown: &shown,
        dialect,
        width: state.width,
        selected,
        window_start: win.start,
        rows: plan.rows,
    };
    if let Some(cut) = first_window_start::plan(&need, min_cut) {
        if let Some(view) = plan.window(Some(cut)) {
            #[cfg(test)]
            tests::CUT_VIEWS.with(|c| c.set(c.get() + 1));
            return Some(view);
        }
    }
    plan.window(None)
}

/// What the first window's prefix walk is asked for.
struct Plan<'a> {
    session: &'a Session,
    home: Option<&'a Path>,
    state: &'a ViewState,
    tree: &'a Tree,
    marks: &'a Marks,
    shown: &'a dyn Fn(usize) -> bool,
    visible_count: usize,
    selected: usize,
    win: window::Window,
    /// How many visible rows the walk holds, from the first.
    rows: usize,
}

impl Plan<'_> {
    /// The window from a prefix walk that starts at the roots, or down the path at `cut`;
    /// `None` when the walk's rows cannot show it exactly.
    fn window(&self, cut: Option<first_window_start::Cut>) -> Option<RowsView> {
        let (session, win, filter) = (self.session, self.win, self.state.filter);
        let (offset, from, top) = match cut {
            Some(cut) => (cut.row, Some(cut.start), cut.pi),
            None => (0, None, None),
        };
        let stop = Stop {
            shown: self.shown,
            rows: self.rows - offset,
            from,
        };
        let (model, unwalked) =
            Model::build_prefix(session, self.tree, self.marks, self.home, stop);
        let built = win.start - offset..win.end - offset;
        let mut beyond = match session.dialect() {
            Dialect::Pi => beyond(
                &model,
                self.tree,
                &unwalked,
                self.shown,
                filter,
                built.clone(),
            ),
            Dialect::Omp => Beyond::default(),
        };
        beyond.top = top;
        let n = session.entries().len();
        let layout = Layout::of_prefix(&model, filter, &beyond, self.visible_count, n, offset);
        if layout.visible.len() < built.end {
            debug_assert!(
                false,
                "the prefix holds {} of the window's {} rows",
                offset + layout.visible.len(),
                win.end
            );
            return None;
        }
        // A tool result shows the call with its id that the whole walk passes last: when one is
        // held by an entry outside the prefix (or the calls are not all recorded), the whole
        // model decides.
        let (calls, held) = model.window_calls(&layout.visible[built])?;
        if !held {
            return None;
        }
        let leaf_id = session.leaf_id();
        let view = compute_in(&model, &layout, self.state, leaf_id, false, Some(calls));
        (view.selected == Some(self.selected)).then_some(view)
    }
}

/// How many shown children (up to 2) each key of a prefix model has in the unwalked subtrees,
/// and how many shown roots are there.
fn beyond(
    model: &Model,
    tree: &Tree,
    unwalked: &Unwalked,
    shown: &dyn Fn(usize) -> bool,
    filter: super::FilterMode,
    built: std::ops::Range<usize>,
) -> Beyond {
    let mut out = Beyond {
        kids: vec![0; model.key_count()],
        roots: 0,
        built,
        top: None,
    };
    let mut stack = Vec::new();
    for &(parent, node) in unwalked {
        let tops = first_window_start::shown_tops(tree, node, shown, &mut stack);
        if tops == 0 {
            continue;
        }
        // The nearest shown ancestor of the subtree (pi follows `parentId`s, which are the
        // walk's parents here).
        let mut cursor = parent.map(|pos| model.key_at(pos as usize));
        while let Some(k) = cursor {
            if passes(model.flags[k], filter, model.dialect) {
                break;
            }
            cursor = model.parent_key(k);
        }
        let slot = match cursor {
            Some(k) => &mut out.kids[k],
            None => &mut out.roots,
        };
        *slot = (*slot + tops).min(2);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// How many views this thread's calls found with the walk started down the path.
        pub(super) static CUT_VIEWS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// A tool result shows the call the whole walk passes last: when a later branch holds a call
    /// with the same id, past the prefix, the quick path leaves the window to the model.
    #[test]
    fn a_call_past_the_prefix_leaves_the_window_to_the_model() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("calls.jsonl");
        let line = |id: &str, parent: &str, second: u32, message: &str| {
            format!(
                "{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"2026-01-01T00:00:{second:02}.000Z\",\"message\":{message}}}\n"
            )
        };
        let call = |name: &str, args: &str, at: u32| {
            format!(
                "{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"on it\"}},{{\"type\":\"toolCall\",\"id\":\"c1\",\"name\":\"{name}\",\"arguments\":{args}}}],\"timestamp\":{at},\"stopReason\":\"toolUse\"}}"
            )
        };
        let mut text = String::from(
            "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n",
        );
        text += &line(
            "u1",
            "null",
            1,
            r#"{"role":"user","content":"go","timestamp":1}"#,
        );
        text += &line("a1", "\"u1\"", 2, &call("read", r#"{"path":"/p/a.rs"}"#, 2));
        // A later branch whose call reuses the id: the walk passes it after the leaf's subtree.
        text += &line("a2", "\"u1\"", 3, &call("bash", r#"{"command":"ls"}"#, 3));
        text += &line(
            "r1",
            "\"a1\"",
            4,
            r#"{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"x"}],"timestamp":4}"#,
        );
        let mut parent = "r1".to_owned();
        for n in 0..8 {
            let id = format!("x{n}");
            let user = format!(r#"{{"role":"user","content":"more {n}","timestamp":{n}}}"#);
            text += &line(&id, &format!("\"{parent}\""), 10 + n, &user);
            parent = id;
        }
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
        for dialect in [Dialect::Pi, Dialect::Omp] {
            let mut session = Session::open(&path, OpenOptions::with_dialect(dialect))
                .unwrap_or_else(|e| panic!("{e}"));
            session.branch("r1").unwrap_or_else(|e| panic!("{e}"));
            let model = TreeModel::new(&session, None);
            for filter in FilterMode::ALL {
                for height in [10, 400] {
                    let state = ViewState {
                        filter,
                        height,
                        ..ViewState::default()
                    };
                    let whole = model.window(&state);
                    let quick = first_window(&session, None, &state);
                    let at = format!("{dialect:?} {filter:?} {height}");
                    if let Some(view) = &quick {
                        assert_eq!(view.text_lines(), whole.text_lines(), "{at}");
                    }
                    if filter == FilterMode::Default {
                        // A short window ends among `x…`, before `a2`; a tall one holds it.
                        assert_eq!(quick.is_some(), height == 400, "{at}");
                    }
                }
            }
        }
    }

    /// The five bits the count reads decide the filter for any static flags (the leaf and label
    /// bits are never among them).
    #[test]
    fn five_bits_decide_the_filter_for_static_flags() {
        let read = flag::CATEGORY | flag::BLANK | flag::USER_REQUEST;
        assert_eq!(read, 31);
        for dialect in [Dialect::Pi, Dialect::Omp] {
            for filter in FilterMode::ALL {
                for f in 0..=u16::MAX {
                    if f & (flag::LEAF | flag::LABELED) == 0 {
                        assert_eq!(
                            passes(f, filter, dialect),
                            passes(f & read, filter, dialect)
                        );
                    }
                }
            }
        }
    }
    use crate::session::OpenOptions;
    use crate::view::{FilterMode, Move, TreeModel};

    /// Every view the quick path gives is the whole model's window, field for field and line for
    /// line: on generated sessions and fixtures, with the leaf where the file leaves it and moved
    /// to other entries (so it has descendants and siblings after it), in every filter, at
    /// several heights and widths.
    #[test]
    fn the_first_window_is_the_whole_models_window() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let (mut quick, mut all) = (0, 0);
        for path in crate::test_sessions::sample_sessions(dir.path()) {
            let Ok(mut session) = Session::open(&path, OpenOptions::default()) else {
                continue;
            };
            let mut pick = crate::test_sessions::numbers(path.as_os_str().len() as u64 + 7);
            let ids: Vec<String> = session
                .entries()
                .iter()
                .filter_map(|e| e.id().map(str::to_owned))
                .collect();
            let mut leaves = vec![session.leaf_id().map(str::to_owned)];
            if !ids.is_empty() {
                leaves.extend((0..4).map(|_| Some(ids[pick(ids.len())].clone())));
            }
            for leaf in leaves {
                if let Some(id) = &leaf {
                    session.branch(id).unwrap_or_else(|e| panic!("{e}"));
                }
                let model = TreeModel::new(&session, Some(Path::new("/home/me")));
                for filter in FilterMode::ALL {
                    for (height, width) in [(3, 120), (12, 120), (40, 120), (40, 50)] {
                        let state = ViewState {
                            filter,
                            height,
                            width,
                            ..ViewState::default()
                        };
                        all += 1;
                        let home = Some(Path::new("/home/me"));
                        // The walk started down the path wherever it can, and as it is used.
                        let views = [
                            first_window_cut_below(&session, home, &state, 0),
                            first_window(&session, home, &state),
                        ];
                        let whole = model.window(&state);
                        for (cut, view) in views.into_iter().enumerate() {
                            let Some(view) = view else {
                                continue;
                            };
                            quick += 1;
                            let at = format!("{} leaf {leaf:?} {state:?} {cut}", path.display());
                            let json = |v: &RowsView| serde_json::to_value(v).unwrap_or_default();
                            assert_eq!(json(&view), json(&whole), "{at}");
                            assert_eq!(view.text_lines(), whole.text_lines(), "{at}");
                            assert_eq!(view.selected_id(), whole.selected_id(), "{at}");
                            for how in [Move::Up, Move::Down] {
                                if let Some(id) = view.moved(how) {
                                    assert_eq!(Some(id), whole.moved(how), "{at} {how:?}");
                                }
                            }
                        }
                    }
                }
            }
        }
        // The generated sessions are plain: the quick path takes all of their views. Asked to,
        // it starts the walk down the path for many of those with rows above the window.
        assert!(quick >= 2 * 6 * 5 * 5 * 4, "{quick} of {all}");
        let cut = CUT_VIEWS.with(std::cell::Cell::get);
        assert!(
            cut >= 6 * 5 * 5 * 2,
            "{cut} views started down the path, of {all}"
        );
    }
}
