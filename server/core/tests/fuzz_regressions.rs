//! Inputs found by the fuzz targets (`server/core/fuzz/`), each with the answer it must give.
//! Found by the `rows` target: pi's parent rows must name a row above (self-parented entries,
//! nodes drawn twice through repeated ids); fixed in `view::flatten::pi_structure`.

use sessiontree_core::view::{compute_rows, FilterMode, ViewState};
use sessiontree_core::{Dialect, OpenOptions, Session};

const HEADER: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/me/p"}"#;

/// Every row's (id, parent row, has children) in `dialect`'s view with the `all` filter.
fn structure(dialect: Dialect, lines: &[&str]) -> Vec<(Option<String>, Option<usize>, bool)> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let session = Session::open(&path, OpenOptions::with_dialect(dialect)).unwrap();
    let state = ViewState {
        filter: FilterMode::All,
        ..ViewState::default()
    };
    compute_rows(&session, &state, None)
        .rows
        .into_iter()
        .map(|r| (r.id, r.parent_row, r.has_children))
        .collect()
}

/// A self-parented entry is a root (getTree), not its own parent or child.
const SELF_PARENTED: &[&str] = &[
    HEADER,
    r#"{"type":"message","id":"a1","parentId":"a1","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":0}}"#,
];

#[test]
fn a_self_parented_entry_is_a_root_without_children_omp() {
    assert_eq!(
        structure(Dialect::Omp, SELF_PARENTED),
        vec![(Some("a1".to_owned()), None, false)]
    );
}

/// Found by the `rows` target: pi's view gives the row itself as its parent row and says it has
/// children (`hasChildren` reaches the editors over the protocol).
#[test]
fn a_self_parented_entry_is_a_root_without_children_pi() {
    assert_eq!(
        structure(Dialect::Pi, SELF_PARENTED),
        vec![(Some("a1".to_owned()), None, false)]
    );
}

/// Two entries share the id `a1`: the agents' node map keeps the last one, and both root entries
/// push that node, so it is drawn twice with its child `d4` under each copy. The child's parent
/// row is the copy it is drawn under.
const DUPLICATED: &[&str] = &[
    HEADER,
    r#"{"type":"session_init","id":"a1","parentId":null}"#,
    r#"{"type":"session_init","id":"d4","parentId":"a1"}"#,
    r#"{"type":"message","id":"a1","message":{"content":"","timestamp":0}}"#,
];

fn duplicated_expected() -> Vec<(Option<String>, Option<usize>, bool)> {
    let (a1, d4) = (Some("a1".to_owned()), Some("d4".to_owned()));
    vec![
        (a1.clone(), None, true),
        (d4.clone(), Some(0), false),
        (a1, None, true),
        (d4, Some(2), false),
    ]
}

#[test]
fn rows_under_a_node_drawn_twice_name_the_copy_above_them_omp() {
    assert_eq!(structure(Dialect::Omp, DUPLICATED), duplicated_expected());
}

/// Found by the `rows` target: in pi's view the first copy's child names the second copy (a
/// later row) as its parent row.
#[test]
fn rows_under_a_node_drawn_twice_name_the_copy_above_them_pi() {
    assert_eq!(structure(Dialect::Pi, DUPLICATED), duplicated_expected());
}
