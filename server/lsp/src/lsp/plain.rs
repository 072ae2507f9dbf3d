//! Standard LSP for a session `.jsonl` opened as a document: the outline (branch points nest,
//! straight runs stay flat), hover, code lenses, code actions, go-to-parent and diagnostics.
//! Pure functions from a session to LSP values; the backend routes requests to the actor.

use crate::to_proto;
use serde_json::{json, Value};
use sessiontree_core::view::{EntryTexts, TreeModel};
use sessiontree_core::{describe, Entry, Session};
use sessiontree_protocol::commands;
use tower_lsp_server::ls_types as lsp;

fn utf16_len(s: &str) -> u32 {
    to_proto::u32_of(s.encode_utf16().count())
}

/// The entry on a 1-based file line.
pub fn entry_index_at_line(session: &Session, line: usize) -> Option<usize> {
    let entries = session.entries();
    let i = entries.partition_point(|e| e.line < line);
    entries.get(i).filter(|e| e.line == line).map(|_| i)
}

fn line_range(entry: &Entry) -> lsp::Range {
    let l = to_proto::u32_of(entry.line.saturating_sub(1));
    lsp::Range::new(
        lsp::Position::new(l, 0),
        lsp::Position::new(l, utf16_len(&entry.raw())),
    )
}

/// The engine's diagnostics as LSP diagnostics.
pub fn diagnostics(session: &Session) -> Vec<lsp::Diagnostic> {
    let len_of = |line: usize| {
        entry_index_at_line(session, line)
            .and_then(|i| session.entry_at(i))
            .map_or(1000, |e| utf16_len(&e.raw()))
    };
    session
        .diagnostics()
        .iter()
        .map(|d| to_proto::lsp_diagnostic(d, len_of))
        .collect()
}

#[allow(deprecated)] // `DocumentSymbol::deprecated` must still be filled in.
fn symbol(session: &Session, texts: &EntryTexts, index: usize) -> Option<lsp::DocumentSymbol> {
    let entry = session.entry_at(index)?;
    if entry.line == 0 {
        return None;
    }
    let role = texts.role(index);
    let range = line_range(entry);
    Some(lsp::DocumentSymbol {
        name: to_proto::entry_name(&texts.text(index), texts.label(index)),
        detail: Some(entry.id().unwrap_or("(no id)").to_owned()),
        kind: to_proto::symbol_kind(entry.kind(), role.as_deref()),
        tags: None,
        deprecated: None,
        range,
        selection_range: range,
        children: None,
    })
}

/// Branch points nested deeper than this are listed flat (one branch after the other): an
/// outline hundreds of levels deep helps nobody, and some clients cannot even parse it.
const MAX_NESTING: usize = 24;

/// The tree as an outline, each entry named by its row text (`model`: the session's tree model of
/// this revision). A straight run is a flat list; at a branch point each branch becomes a child
/// of the branch point (its head, holding the rest of its run), down to [`MAX_NESTING`].
pub fn document_symbols(session: &Session, model: &TreeModel) -> Vec<lsp::DocumentSymbol> {
    let tree = session.tree();
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    model.prepare_entry_texts();
    let texts = model.entry_texts(session);
    for &root in &tree.roots {
        out.extend(run(session, &texts, &tree, root, 0, &mut seen));
    }
    out
}

/// The symbols of the run starting at `start`. Runs are walked iteratively; only nesting recurses,
/// at most [`MAX_NESTING`] deep.
fn run(
    session: &Session,
    texts: &EntryTexts,
    tree: &sessiontree_core::tree::Tree,
    start: usize,
    depth: usize,
    seen: &mut std::collections::HashSet<usize>,
) -> Vec<lsp::DocumentSymbol> {
    let mut out = Vec::new();
    // Branches met past the nesting limit continue the flat list, in tree order.
    let mut flat = vec![start];
    while let Some(first) = flat.pop() {
        let mut cursor = Some(first);
        while let Some(node) = cursor.take() {
            if !seen.insert(node) {
                break;
            }
            let children = tree.children(node);
            let Some(mut sym) = symbol(session, texts, node) else {
                if children.len() == 1 {
                    cursor = Some(children[0]);
                } else {
                    flat.extend(children.iter().rev());
                }
                continue;
            };
            match children.len() {
                0 => out.push(sym),
                1 => {
                    out.push(sym);
                    cursor = Some(children[0]);
                }
                _ if depth >= MAX_NESTING => {
                    out.push(sym);
                    flat.extend(children.iter().rev());
                }
                _ => {
                    let mut branches = Vec::new();
                    for &child in children {
                        let mut branch = run(session, texts, tree, child, depth + 1, seen);
                        if branch.is_empty() {
                            continue;
                        }
                        let mut head = branch.remove(0);
                        if !branch.is_empty() {
                            let mut kids = head.children.take().unwrap_or_default();
                            kids.extend(branch);
                            head.children = Some(kids);
                        }
                        branches.push(head);
                    }
                    sym.children = Some(branches);
                    out.push(sym);
                }
            }
        }
    }
    out
}

/// Hover: the entry on the line, named by its row text and rendered (`model`: the session's tree
/// model of this revision); on the header (and omp's title slot), the session.
pub fn hover(session: &Session, model: &TreeModel, line0: u32) -> Option<lsp::Hover> {
    let line = line0 as usize + 1;
    let Some(index) = entry_index_at_line(session, line) else {
        let header_line = if session.title_slot().is_some() { 2 } else { 1 };
        return (line <= header_line).then(|| lsp::Hover {
            contents: lsp::HoverContents::Markup(lsp::MarkupContent {
                kind: lsp::MarkupKind::Markdown,
                value: describe::session_markdown(session),
            }),
            range: None,
        });
    };
    let entry = session.entry_at(index)?;
    let texts = model.entry_texts(session);
    Some(lsp::Hover {
        contents: lsp::HoverContents::Markup(lsp::MarkupContent {
            kind: lsp::MarkupKind::Markdown,
            value: describe::markdown(
                entry,
                &to_proto::drawable(&texts.text(index)),
                texts.label(index),
            ),
        }),
        range: Some(line_range(entry)),
    })
}

/// Go to definition: the entry's parent line.
pub fn parent_location(session: &Session, uri: &lsp::Uri, line0: u32) -> Option<lsp::Location> {
    let index = entry_index_at_line(session, line0 as usize + 1)?;
    let parent = session.entry_at(index)?.parent.id()?;
    let parent = session.entry(parent)?;
    (parent.line > 0).then(|| lsp::Location::new(uri.clone(), line_range(parent)))
}

fn is_user(entry: &Entry) -> bool {
    entry.kind() == "message" && entry.role() == Some("user")
}

fn command(title: &str, name: &str, args: Vec<Value>) -> lsp::Command {
    lsp::Command {
        title: title.to_owned(),
        command: name.to_owned(),
        arguments: Some(args),
    }
}

/// The commands offered on an entry: navigate here, branch from here (user messages), label.
fn entry_commands(session: &Session, uri: &str, entry: &Entry) -> Vec<lsp::Command> {
    let Some(id) = entry.id() else {
        return Vec::new();
    };
    let mut out = vec![command(
        "Navigate here",
        commands::NAVIGATE,
        vec![json!(uri), json!(id)],
    )];
    if is_user(entry) {
        out.push(command(
            "Branch from here",
            commands::BRANCH,
            vec![json!(uri), json!(id)],
        ));
    }
    match session.label(id) {
        Some(_) => out.push(command(
            "Clear label",
            commands::LABEL,
            vec![json!(uri), json!(id), Value::Null],
        )),
        None => out.push(command(
            "Label “bookmark”",
            commands::LABEL,
            vec![json!(uri), json!(id), json!("bookmark")],
        )),
    }
    out
}

/// Code lenses on user messages and on the leaf.
pub fn code_lenses(session: &Session, uri: &str) -> Vec<lsp::CodeLens> {
    let leaf = session.leaf_id();
    session
        .entries()
        .iter()
        .filter(|e| e.line > 0 && (is_user(e) || (e.id().is_some() && e.id() == leaf)))
        .flat_map(|e| {
            let range = line_range(e);
            let mut cmds = entry_commands(session, uri, e);
            if e.id().is_some() && e.id() == leaf {
                cmds.retain(|c| c.command != commands::NAVIGATE);
                cmds.insert(0, command("● leaf", "", vec![]));
            }
            cmds.into_iter().map(move |c| lsp::CodeLens {
                range,
                command: Some(c),
                data: None,
            })
        })
        .collect()
}

/// Code actions on the entry under the cursor.
pub fn code_actions(session: &Session, uri: &str, line0: u32) -> Vec<lsp::CodeActionOrCommand> {
    let Some(entry) =
        entry_index_at_line(session, line0 as usize + 1).and_then(|i| session.entry_at(i))
    else {
        return Vec::new();
    };
    entry_commands(session, uri, entry)
        .into_iter()
        .map(|c| {
            lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
                title: c.title.clone(),
                kind: Some(lsp::CodeActionKind::EMPTY),
                command: Some(c),
                ..Default::default()
            })
        })
        .collect()
}
