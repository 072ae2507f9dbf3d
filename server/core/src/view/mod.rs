//! The `/tree` view: what each agent's tree selector shows for a session and a view state (filter,
//! search, selection, size), as structured rows for rich clients and as the exact text lines of the
//! agent's `/tree`; plus the navigation and /branch decisions taken when a row is picked.
//!
//! `flatten` orders the tree, `visibility` filters it, `layout` lays a filter, search and folding
//! out, `rows` builds a window's rows and `render` draws their lines, `search` and `fuzzy` match
//! queries, `window` sizes and moves the window, `tree_model` keeps a flattened session to ask
//! many views of, `fixture` writes the fixtures' `treeRender`, `navigate` and `branch_pick`
//! decide what picking a row does.

pub mod branch_pick;
mod entry_text;
mod first_window;
mod first_window_start;
mod fixture;
mod flatten;
pub mod fuzzy;
mod fuzzy_ascii;
mod layout;
pub mod navigate;
mod render;
mod rows;
pub mod search;
mod search_cache;
mod segment;
mod shared_text;
#[cfg(test)]
mod testkit;
mod tree_model;
mod visibility;
pub mod window;

pub use entry_text::EntryTexts;
pub use first_window::{first_window, first_window_cut_below};
pub use fixture::{tree_render_fixture, tree_render_for_inspect};
pub use search::SearchWarmUp;
pub use segment::Segment;
pub use shared_text::SharedText;
pub use tree_model::TreeModel;
pub use visibility::FilterMode;
pub use window::{Move, Window};

use crate::dialect::Dialect;
use crate::session::Session;
use layout::RowIds;
use serde::{Deserialize, Serialize};
use std::path::Path;

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
    /// Can be folded: has visible children and is a root (no visible parent) or starts a branch
    /// (pi: its visible parent has more than one visible child, and pi draws `⊟` in its
    /// connector; omp: it is drawn with a connector, and omp draws no marker).
    pub foldable: bool,
    /// Folded: its descendants are hidden (pi draws `⊞`; omp draws no marker).
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
    }

    /// omp has no folding of its own: pi's rule on omp's drawing, with no marker; the leaf inside
    /// the folded branch selects the folded row.
    #[test]
    fn omp_folding() {
        let k = Kit::seed_example(Dialect::Omp);
        let model = TreeModel::new(&k.session, None);
        let state = ViewState::default();
        let open = model.rows(&state);
        let foldable: Vec<_> = open
            .rows
            .iter()
            .filter(|r| r.foldable)
            .map(|r| r.text.as_str())
            .collect();
        assert_eq!(
            foldable,
            [
                "user: Start task",
                "user: Try approach A",
                "user: Try approach B"
            ]
        );
        let view = model.rows_folded(&state, &[k.id("try_a")]);
        assert_eq!(
            view.text_lines(),
            [
                "  • user: Start task",
                "  • assistant: Plan",
                "› ├─ • user: Try approach A",
                "  └─ user: Try approach B",
                "     assistant: B result",
            ]
        );
        assert!(view.rows[2].folded && !view.rows[2].foldable && view.rows[3].foldable);
        assert_eq!(view.selected_id(), Some(k.id("try_a").as_str()));
        let root = model.rows_folded(&state, &[k.id("start")]);
        assert_eq!(root.text_lines(), ["› • user: Start task"]);
        assert_eq!(
            model.rows_folded(&state, &[]).text_lines(),
            open.text_lines()
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
