//! `sessionTree/rows` and `sessionTree/tree`: the session as rows and as paged pre-order nodes.
//!
//! The rows here are the server's interim rendering (indentation at branch points, connectors,
//! role prefix, `[label]`, filters, word search, a window centred on the selection); the engine's
//! `view` module, once it lands, replaces `compute_rows` with the agents' exact rendering.

use crate::render;
use crate::to_proto::u32_of;
use sessiontree_core::Session;
use sessiontree_protocol::{self as proto, CharRange, FilterMode};
use std::collections::HashSet;

/// One node of the walk: entry index, depth (branch points), prefix.
struct Walked {
    index: usize,
    depth: u32,
    prefix: String,
}

/// Pre-order walk; indentation grows only at branch points, so straight runs stay flat.
fn walk(session: &Session) -> Vec<Walked> {
    let tree = session.tree();
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    // (node, depth, indent for its own row, connector, indent for its children)
    let mut stack: Vec<(usize, u32, String, String)> = Vec::new();
    let roots = &tree.roots;
    for (i, &root) in roots.iter().enumerate().rev() {
        let multi = roots.len() > 1;
        let last = i + 1 == roots.len();
        let connector = if !multi {
            String::new()
        } else if last {
            "└─ ".to_owned()
        } else {
            "├─ ".to_owned()
        };
        let child_indent = if !multi {
            String::new()
        } else if last {
            "   ".to_owned()
        } else {
            "│  ".to_owned()
        };
        stack.push((root, 0, connector, child_indent));
    }
    while let Some((node, depth, prefix, child_indent)) = stack.pop() {
        if !seen.insert(node) {
            continue;
        }
        out.push(Walked {
            index: node,
            depth,
            prefix,
        });
        let children = tree.children(node);
        if children.len() == 1 {
            stack.push((children[0], depth, child_indent.clone(), child_indent));
        } else {
            for (i, &child) in children.iter().enumerate().rev() {
                let last = i + 1 == children.len();
                let connector = format!("{child_indent}{}", if last { "└─ " } else { "├─ " });
                let below = format!("{child_indent}{}", if last { "   " } else { "│  " });
                stack.push((child, depth + 1, connector, below));
            }
        }
    }
    out
}

fn visible(filter: FilterMode, kind: &str, role: Option<&str>, labelled: bool) -> bool {
    let settings = matches!(
        kind,
        "label"
            | "custom"
            | "model_change"
            | "thinking_level_change"
            | "session_info"
            | "title_change"
            | "service_tier_change"
            | "mode_change"
            | "ttsr_injection"
            | "session_init"
    );
    match filter {
        FilterMode::All => true,
        FilterMode::Default => !settings,
        FilterMode::NoTools => !settings && role != Some("toolResult"),
        FilterMode::UserOnly => role == Some("user"),
        FilterMode::LabeledOnly => labelled,
    }
}

/// Every word of the search (lower-cased) must occur in the text; returns the match ranges.
fn search_matches(text: &str, search: &str) -> Option<Vec<CharRange>> {
    let lower = text.to_lowercase();
    let mut ranges = Vec::new();
    for word in search.split_whitespace() {
        let word = word.to_lowercase();
        let byte = lower.find(&word)?;
        let start = lower[..byte].chars().count();
        ranges.push(CharRange {
            start: u32_of(start),
            end: u32_of(start + word.chars().count()),
        });
    }
    Some(ranges)
}

fn truncate(s: &str, width: usize) -> String {
    if width == 0 || s.chars().count() <= width {
        s.to_owned()
    } else {
        let mut cut: String = s.chars().take(width.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// The rows of the `/tree` view.
pub fn compute_rows(session: &Session, p: &proto::RowsParams, revision: u64) -> proto::RowsResult {
    let active: HashSet<usize> = session.branch_path(None).into_iter().collect();
    let leaf_index = session.leaf_id().and_then(|l| session.index_of(l));
    let mut rows = Vec::new();
    for w in walk(session) {
        let Some(entry) = session.entry_at(w.index) else {
            continue;
        };
        let value = entry.json();
        let role = value
            .get("message")
            .and_then(|m| m.get("role"))
            .and_then(|r| r.as_str())
            .map(str::to_owned);
        let label = entry
            .id()
            .and_then(|id| session.label(id))
            .map(str::to_owned);
        if !visible(p.filter, entry.kind(), role.as_deref(), label.is_some()) {
            continue;
        }
        let mut text = render::preview_value(&value, entry.kind());
        if let Some(label) = &label {
            text = format!("[{label}] {text}");
        }
        let matches = if p.search.trim().is_empty() {
            Vec::new()
        } else {
            match search_matches(&text, &p.search) {
                Some(m) => m,
                None => continue,
            }
        };
        let _ = w.depth;
        rows.push(proto::Row {
            id: entry.id().map(str::to_owned),
            kind: entry.kind().to_owned(),
            role,
            prefix: w.prefix,
            text,
            label,
            on_active_path: active.contains(&w.index),
            is_leaf: leaf_index == Some(w.index),
            selected: false,
            matches,
        });
    }
    // The selection: the asked entry, else the leaf, else the nearest visible ancestor, else the last row.
    let wanted = p
        .selection
        .clone()
        .or_else(|| session.leaf_id().map(str::to_owned));
    let mut selected = wanted
        .as_deref()
        .and_then(|id| rows.iter().position(|r| r.id.as_deref() == Some(id)));
    if selected.is_none() {
        if let Some(id) = wanted.as_deref() {
            let path = session.branch_path(Some(id));
            selected = path.iter().rev().find_map(|&i| {
                let id = session.entry_at(i).and_then(|e| e.id())?;
                rows.iter().position(|r| r.id.as_deref() == Some(id))
            });
        }
    }
    if selected.is_none() && !rows.is_empty() {
        selected = Some(rows.len() - 1);
    }
    if let Some(s) = selected {
        rows[s].selected = true;
    }
    let total = rows.len();
    let height = if p.height == 0 {
        total
    } else {
        p.height as usize
    };
    let start = match selected {
        Some(sel) if total > height => sel.saturating_sub(height / 2).min(total - height),
        _ => 0,
    };
    let window: Vec<proto::Row> = rows.into_iter().skip(start).take(height).collect();
    let width = p.width as usize;
    let lines = window
        .iter()
        .map(|r| truncate(&format!("{}{}", r.prefix, r.text), width))
        .collect();
    proto::RowsResult {
        revision,
        leaf: session.leaf_id().map(str::to_owned),
        selection: window
            .iter()
            .find(|r| r.selected)
            .and_then(|r| r.id.clone()),
        rows: window,
        lines,
        window_start: u32_of(start),
        total_rows: u32_of(total),
    }
}

/// One page of the tree in pre-order.
pub fn tree_page(session: &Session, p: &proto::TreeParams, revision: u64) -> proto::TreeResult {
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
    let nodes = order[offset..]
        .iter()
        .take(limit)
        .filter_map(|&(index, depth)| {
            let entry = session.entry_at(index)?;
            let value = entry.json();
            Some(proto::TreeNode {
                id: entry.id().map(str::to_owned),
                parent_id: entry.parent.id().map(str::to_owned),
                depth: u32_of(depth),
                kind: entry.kind().to_owned(),
                role: value
                    .get("message")
                    .and_then(|m| m.get("role"))
                    .and_then(|r| r.as_str())
                    .map(str::to_owned),
                preview: render::preview_value(&value, entry.kind()),
                label: entry
                    .id()
                    .and_then(|id| session.label(id))
                    .map(str::to_owned),
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
