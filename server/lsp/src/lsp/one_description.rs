//! The rule that an entry has one description: on the conformance sessions of both dialects, the
//! tree node, the outline symbol, the workspace symbol and the hover of every entry the `/tree`
//! shows name it with the text of its row in `sessionTree/rows` (the label, where the surface
//! has no field of its own for it, in brackets before it, as the agents draw it).

use crate::{plain, rows, symbols, to_proto};
use sessiontree_core::describe::markdown_literal;
use sessiontree_core::view::{self, TreeModel, ViewState};
use sessiontree_core::{Dialect, OpenOptions, Session};
use sessiontree_protocol as proto;
use std::collections::HashMap;
use tower_lsp_server::ls_types as lsp;

/// The outline's names by 0-based line, nested symbols included.
fn outline_names(symbols: &[lsp::DocumentSymbol], out: &mut HashMap<u32, String>) {
    for s in symbols {
        out.insert(s.range.start.line, s.name.clone());
        outline_names(s.children.as_deref().unwrap_or_default(), out);
    }
}

/// What a surface without a label field shows: `[label] text`.
fn with_label(text: &str, label: Option<&str>) -> String {
    match label {
        Some(label) => format!("[{label}] {text}"),
        None => text.to_owned(),
    }
}

#[test]
fn every_surface_names_an_entry_with_its_row_text() {
    let mut checked: HashMap<Dialect, usize> = HashMap::new();
    let mut labeled = 0;
    for path in sessiontree_testkit::fixtures::session_files() {
        let Ok(session) = Session::open(&path, OpenOptions::default()) else {
            continue;
        };
        let model = TreeModel::new(&session, None);
        let params = proto::RowsParams {
            uri: String::new(),
            filter: proto::FilterMode::All,
            search: String::new(),
            selection: None,
            width: 120,
            height: 0,
            folded: Vec::new(),
            segment: None,
        };
        let wire = rows::compute_rows(
            &session,
            |state, folded| model.window_folded(state, folded),
            &params,
            1,
        );
        let state = ViewState {
            filter: view::FilterMode::All,
            search: String::new(),
            selected: None,
            width: 120,
            height: session.entries().len() * 2 + 32,
        };
        let engine = model.window(&state);
        assert_eq!(wire.rows.len(), engine.rows.len(), "{}", path.display());

        let tree = rows::tree_page(
            &session,
            &model,
            &proto::TreeParams {
                uri: String::new(),
                offset: 0,
                limit: 0,
            },
            1,
        );
        let nodes: HashMap<u32, &proto::TreeNode> =
            tree.nodes.iter().map(|n| (n.line, n)).collect();
        let mut outline = HashMap::new();
        outline_names(&plain::document_symbols(&session, &model), &mut outline);
        let workspace: HashMap<usize, String> =
            symbols::searchable_items(&session, &path, None, usize::MAX)
                .into_iter()
                .map(|item| (item.line, item.name))
                .collect();

        for (row, shown) in wire.rows.iter().zip(&engine.rows) {
            let Some(entry) = session.entry_at(shown.entry_index) else {
                continue;
            };
            if entry.line == 0 {
                continue;
            }
            let at = format!("{} line {}", path.display(), entry.line);
            let (text, label) = (row.text.as_str(), row.label.as_deref());
            let node = nodes
                .get(&(entry.line as u32))
                .unwrap_or_else(|| panic!("{at}: no tree node"));
            assert_eq!(node.preview, text, "{at}: tree node");
            assert_eq!(node.label.as_deref(), label, "{at}: tree node label");
            assert_eq!(
                outline.get(&(entry.line as u32 - 1)),
                Some(&with_label(text, label)),
                "{at}: outline"
            );
            if entry.id().is_some() {
                assert_eq!(
                    workspace.get(&entry.line),
                    Some(&to_proto::symbol_name(text, label)),
                    "{at}: workspace symbol"
                );
            }
            let hover = plain::hover(&session, &model, entry.line as u32 - 1)
                .unwrap_or_else(|| panic!("{at}: no hover"));
            let lsp::HoverContents::Markup(markup) = hover.contents else {
                panic!("{at}: hover is not markup");
            };
            if !text.is_empty() {
                let head = format!("**{}**\n\n", markdown_literal(text));
                assert!(
                    markup.value.starts_with(&head),
                    "{at}: hover {:?}",
                    markup.value
                );
            }
            labeled += usize::from(label.is_some());
            *checked.entry(session.dialect()).or_default() += 1;
        }
    }
    for dialect in [Dialect::Pi, Dialect::Omp] {
        let n = checked.get(&dialect).copied().unwrap_or(0);
        assert!(n >= 100, "{dialect:?}: only {n} rows checked");
    }
    assert!(labeled > 0, "no labeled row was checked");
}
