//! Folding in the `/tree` view, checked against known answers.
//!
//! pi: the installed pi (0.73.1, on Node) opens each session's `/tree` selector and folds with its
//! own key (Ctrl+←, `scripts/testing/pi-tree-fold.mjs`): from the leaf until something folds (pi
//! first moves up to the start of the leaf's branch segment, then folds it: the leaf ends inside
//! the folded branch), and on foldable rows spread over the list, one and then two at a time.
//! What the engine shows for the same folded set and selection must be pi's list, line for line,
//! with the same row selected. On rows the keys do not fold, pi moves the selection by branch
//! segments: the engine's move must end on the same entry. Sessions: generated ones and pi's conformance files (copies: pi
//! rewrites some files it opens).
//!
//! omp has no folding of its own; the engine offers pi's: a fold hides exactly the folded
//! entry's descendants in the tree, every other row is drawn as before (no marker: the rows'
//! `foldable` / `folded` say it), and the leaf inside a folded branch selects the folded row.
//!
//! The agents come from `scripts/install-agents.sh` (pinned, cached); without them the pi test
//! fails.

#![allow(clippy::print_stderr)]

use serde_json::{json, Value};
use sessiontree_core::synth::{generate_file, SynthOptions};
use sessiontree_core::view::{FilterMode, Segment, TreeModel, ViewState};
use sessiontree_core::{Dialect, OpenOptions, Session};
use sessiontree_testkit::agents::{agents_modules, repo};
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const WIDTH: usize = 120;
const HEIGHT: usize = 40;

/// Generated sessions of `dialect`, and copies of its conformance files.
fn sessions(dir: &Path, dialect: Dialect) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for seed in 1..4 {
        let path = dir.join(format!("{dialect:?}-{seed}.jsonl"));
        let options = SynthOptions {
            dialect,
            entries: 1500,
            seed,
        };
        generate_file(options, &path).unwrap_or_else(|e| panic!("{e}"));
        files.push(path);
    }
    let folder = format!("/{}/", dialect.as_str());
    for (n, file) in sessiontree_testkit::fixtures::session_files()
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(&folder))
        .enumerate()
    {
        let copy = dir.join(format!("fixture-{n}.jsonl"));
        std::fs::copy(&file, &copy).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        if Session::open(&copy, OpenOptions::with_dialect(dialect)).is_ok() {
            files.push(copy);
        }
    }
    assert!(files.len() > 20, "{} sessions", files.len());
    files
}

/// What the real pi shows for each fold case (see `scripts/testing/pi-tree-fold.mjs`).
fn pi_cases(files: &[PathBuf], filters: &[FilterMode], home: &Path) -> Vec<Value> {
    let input = json!({
        "files": files,
        "filters": filters.iter().map(|f| f.as_str()).collect::<Vec<_>>(),
        "width": WIDTH,
        "height": HEIGHT,
        "picks": 12,
    });
    let mut child = Command::new("node")
        .arg(repo().join("scripts/testing/pi-tree-fold.mjs"))
        .env("AGENTS_DIR", agents_modules().join(".."))
        .env("HOME", home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("node: {e}"));
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&serde_json::to_vec(&input).expect("input"))
        .expect("write the cases");
    let out = child.wait_with_output().expect("pi's tree selector");
    assert!(
        out.status.success(),
        "pi's tree selector failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("pi's answer is JSON")
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn folded_views_are_pis_line_for_line() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap_or_else(|e| panic!("{e}"));
    let files = sessions(dir.path(), Dialect::Pi);
    let filters = [FilterMode::Default, FilterMode::NoTools, FilterMode::All];
    let cases = pi_cases(&files, &filters, &home);
    let mut models = std::collections::HashMap::new();
    let (mut checked, mut leaf_cases, mut pairs, mut hidden, mut moves) = (0, 0, 0, 0, 0);
    let mut diffs = Vec::new();
    for case in &cases {
        let file = PathBuf::from(case["file"].as_str().unwrap_or_default());
        let (model, repeated_ids) = models.entry(file.clone()).or_insert_with(|| {
            let session = Session::open(&file, OpenOptions::with_dialect(Dialect::Pi))
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let ids: Vec<_> = session.entries().iter().filter_map(|e| e.id()).collect();
            let repeated = ids.len() != ids.iter().collect::<HashSet<_>>().len();
            (TreeModel::new(&session, Some(&home)), repeated)
        });
        let filter = filters
            .into_iter()
            .find(|f| Some(f.as_str()) == case["filter"].as_str())
            .unwrap_or_else(|| panic!("filter of {case}"));
        let mut state = ViewState {
            filter,
            search: String::new(),
            selected: case["select"].as_str().map(str::to_owned),
            width: WIDTH,
            height: HEIGHT,
        };
        let folded = strings(&case["folded"]);
        let kind = case["kind"].as_str().unwrap_or_default();
        // A key that did not fold moved the selection: where to, then the view there.
        let way = match kind {
            "up" => Some(Segment::Up),
            "down" => Some(Segment::Down),
            _ => None,
        };
        // Where ids repeat, pi's moves follow its maps by id (a row's parent or position can be
        // another copy's); the engine moves on the rows as drawn, so those are not compared.
        if way.is_some() && *repeated_ids {
            continue;
        }
        if let Some(way) = way {
            let to = model.segment_start(&state, &folded, way);
            assert_eq!(
                to.as_deref(),
                case["selected"].as_str(),
                "{} {filter:?} {kind} from {:?}",
                file.display(),
                state.selected
            );
            state.selected = to;
            moves += 1;
        }
        let view = model.rows_folded(&state, &folded);
        let at = format!("{} {filter:?} {kind} folded {folded:?}", file.display());
        let want = strings(&case["lines"]);
        if view.text_lines() != want.as_slice() {
            diffs.push(format!(
                "{at}\n  pi:   {want:?}\n  ours: {:?}",
                view.text_lines()
            ));
        }
        assert_eq!(
            view.selected_id(),
            case["selected"].as_str(),
            "{at}: the selected row"
        );
        // The folded rows say so; what they hid is gone from the view.
        for id in &folded {
            let row = view
                .rows
                .iter()
                .find(|r| r.id.as_deref() == Some(id.as_str()));
            assert!(row.is_none_or(|r| r.folded && !r.foldable), "{at}: {id}");
        }
        let open = model.rows(&ViewState {
            selected: None,
            ..state.clone()
        });
        hidden += open.visible_count - view.visible_count;
        checked += 1;
        leaf_cases += usize::from(kind == "leaf");
        pairs += usize::from(kind == "pick2");
    }
    eprintln!("{checked} views ({leaf_cases} from the leaf, {pairs} with two folds, {moves} moves), {hidden} rows hidden");
    assert!(
        diffs.is_empty(),
        "{} of {checked} differ:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
    // Enough of each kind, and folds that hid rows.
    assert!(
        checked > 300 && leaf_cases > 30 && pairs > 60 && hidden > 1000 && moves > 300,
        "{checked} {leaf_cases} {pairs} {hidden} {moves}"
    );
}

/// The entries below `id` in the session's tree.
fn descendants(session: &Session, id: &str) -> HashSet<String> {
    let tree = session.tree();
    let mut out = HashSet::new();
    let mut stack = vec![session
        .index_of(id)
        .unwrap_or_else(|| panic!("no entry {id}"))];
    while let Some(index) = stack.pop() {
        for &child in tree.children(index) {
            if let Some(child_id) = session.entry_at(child).and_then(|e| e.id()) {
                if out.insert(child_id.to_owned()) {
                    stack.push(child);
                }
            }
        }
    }
    out
}

#[test]
fn omp_folds_by_pis_rule_and_draws_as_omp() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (mut folds, mut leaf_folds) = (0, 0);
    for file in sessions(dir.path(), Dialect::Omp) {
        let session = Session::open(&file, OpenOptions::with_dialect(Dialect::Omp))
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        // Ids drawn more than once: folding one copy hides both copies' rows (by id, as the
        // selection marks them); the row-by-row check below is for plain trees.
        let ids: Vec<_> = session.entries().iter().filter_map(|e| e.id()).collect();
        if ids.len() != ids.iter().collect::<HashSet<_>>().len() {
            continue;
        }
        let model = TreeModel::new(&session, None);
        for filter in [FilterMode::Default, FilterMode::All] {
            let state = ViewState {
                filter,
                height: 100_000,
                ..ViewState::default()
            };
            let open = model.rows(&state);
            // Nothing folded: omp's rows and lines, unchanged.
            let none = model.rows_folded(&state, &[]);
            assert_eq!(none.text_lines(), open.text_lines());
            assert!(none.rows.iter().all(|r| !r.folded));
            let foldable: Vec<_> = open.rows.iter().filter(|r| r.foldable).collect();
            let step = (foldable.len() / 8).max(1);
            for row in foldable.iter().step_by(step) {
                let id = row.id.clone().unwrap_or_default();
                let at = format!("{} {filter:?} {id}", file.display());
                // pi's rule on omp's drawing: visible children, and a root or a connector.
                assert!(
                    row.has_children && (row.parent_row.is_none() || row.connector.is_some()),
                    "{at}"
                );
                let below = descendants(&session, &id);
                let view = model.rows_folded(
                    &ViewState {
                        selected: Some(id.clone()),
                        ..state.clone()
                    },
                    std::slice::from_ref(&id),
                );
                let kept: Vec<_> = open
                    .rows
                    .iter()
                    .filter(|r| !r.id.as_ref().is_some_and(|i| below.contains(i)))
                    .collect();
                assert!(kept.len() < open.rows.len(), "{at}: the fold hid nothing");
                assert_eq!(view.rows.len(), kept.len(), "{at}");
                for (ours, before) in view.rows.iter().zip(&kept) {
                    assert_eq!(ours.id, before.id, "{at}");
                    assert_eq!(
                        (&ours.text, &ours.label, ours.depth, ours.connector),
                        (&before.text, &before.label, before.depth, before.connector),
                        "{at}"
                    );
                    assert_eq!(ours.folded, ours.id == row.id, "{at}");
                }
                let folded = view
                    .rows
                    .iter()
                    .find(|r| r.folded)
                    .unwrap_or_else(|| panic!("{at}: no folded row"));
                assert!(folded.selected && !folded.has_children && !folded.foldable);
                // omp draws no marker.
                assert!(
                    view.text_lines().iter().all(|l| !l.contains(['⊞', '⊟'])),
                    "{at}"
                );
                folds += 1;

                // The leaf inside the folded branch: the selector on the leaf selects the
                // folded row (its nearest shown ancestor, as pi does).
                if session.leaf_id().is_some_and(|leaf| below.contains(leaf)) {
                    let on_leaf = model.rows_folded(&state, std::slice::from_ref(&id));
                    assert_eq!(on_leaf.selected_id(), Some(id.as_str()), "{at}");
                    assert!(folded.on_active_path, "{at}");
                    leaf_folds += 1;
                }
            }
        }
    }
    eprintln!("{folds} folds, {leaf_folds} with the leaf inside");
    assert!(folds > 100 && leaf_folds > 10, "{folds} {leaf_folds}");
}
