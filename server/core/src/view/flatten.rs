//! The flattened tree both selectors start from, built without recursion: pre-order with the
//! leaf-containing root and child first, the active path (leaf to root), each entry's facts read
//! once, omp's structural depth / sibling data over the whole tree, and pi's visual structure
//! (indent, connectors, gutters) re-derived over the visible rows only.

use super::text::{self, EntryFacts, RowText, ToolCall};
use crate::dialect::Dialect;
use crate::session::Session;
use std::collections::HashMap;
use std::path::Path;

/// One entry of the flattened tree (positions are indices into [`Model::nodes`]).
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub entry: usize,
    pub id: Option<String>,
    /// Tree parent (position).
    pub parent: Option<usize>,
    pub kind: String,
    pub role: Option<String>,
    pub text: String,
    /// Searchable text, label first.
    pub search: String,
    pub label: Option<String>,
    pub blank_assistant: bool,
    pub user_request: bool,
    pub on_active_path: bool,
    pub is_leaf: bool,
    /// omp: display depth over the whole tree.
    pub depth: usize,
    /// omp: how many children the parent has (roots: how many roots).
    pub sibling_count: usize,
    pub is_last: bool,
    /// omp: the nearest strict ancestor that sits at a branch (several siblings, not a root).
    pub branch_up: Option<usize>,
}

/// The flattened session.
#[derive(Debug, Clone)]
pub(crate) struct Model {
    pub dialect: Dialect,
    pub nodes: Vec<Node>,
    pub pos_by_id: HashMap<String, usize>,
}

struct Pending {
    node: usize,
    parent: Option<usize>,
    depth: usize,
    sibling_index: usize,
    sibling_count: usize,
}

impl Model {
    /// Flattens a session; `home` shortens tool-call paths.
    pub fn build(session: &Session, home: Option<&Path>) -> Model {
        let dialect = session.dialect();
        let tree = session.tree();
        let entries = session.entries();
        let leaf = session.leaf_id().and_then(|id| session.index_of(id));

        // Which subtrees hold the leaf: a plain pre-order, then children before parents.
        let order = tree.preorder();
        let mut contains = vec![false; entries.len()];
        for &(node, _) in order.iter().rev() {
            let has = Some(node) == leaf
                || tree
                    .children(node)
                    .iter()
                    .any(|&c| contains.get(c).copied().unwrap_or(false));
            if let Some(slot) = contains.get_mut(node) {
                *slot = has;
            }
        }
        let ordered = |list: &[usize]| -> Vec<usize> {
            let mut out: Vec<usize> = list.iter().copied().filter(|&c| contains[c]).collect();
            out.extend(list.iter().copied().filter(|&c| !contains[c]));
            out
        };

        let roots = ordered(&tree.roots);
        let multiple_roots = tree.roots.len() > 1;
        let mut nodes: Vec<Node> = Vec::with_capacity(order.len());
        let mut facts: Vec<EntryFacts> = Vec::with_capacity(order.len());
        let mut tool_calls: HashMap<String, ToolCall> = HashMap::new();
        let mut seen = vec![false; entries.len()];
        let mut stack: Vec<Pending> = roots
            .iter()
            .enumerate()
            .rev()
            .map(|(i, &node)| Pending {
                node,
                parent: None,
                depth: 0,
                sibling_index: i,
                sibling_count: roots.len(),
            })
            .collect();
        while let Some(p) = stack.pop() {
            if seen[p.node] {
                continue;
            }
            seen[p.node] = true;
            let entry = &entries[p.node];
            let value = entry.json();
            let f = text::entry_facts(&value, dialect);
            drop(value);
            for (id, call) in &f.tool_calls {
                tool_calls.insert(id.clone(), call.clone());
            }
            let pos = nodes.len();
            let children = ordered(tree.children(p.node));
            let id = entry.id().map(str::to_owned);
            let label = id
                .as_deref()
                .and_then(|i| session.label(i))
                .map(str::to_owned);
            let branch_up = p.parent.and_then(|parent: usize| {
                let pn: &Node = &nodes[parent];
                if pn.sibling_count > 1 && pn.depth > 0 {
                    Some(parent)
                } else {
                    pn.branch_up
                }
            });
            nodes.push(Node {
                entry: p.node,
                id,
                parent: p.parent,
                kind: entry.kind().to_owned(),
                role: f.role.clone(),
                text: String::new(),
                search: String::new(),
                label,
                blank_assistant: f.blank_assistant,
                user_request: f.user_request,
                on_active_path: contains[p.node],
                is_leaf: Some(p.node) == leaf,
                depth: p.depth,
                sibling_count: p.sibling_count,
                is_last: p.sibling_index + 1 == p.sibling_count,
                branch_up,
            });
            facts.push(f);
            let child_depth = if children.len() > 1 || (multiple_roots && p.parent.is_none()) {
                p.depth + 1
            } else {
                p.depth
            };
            let count = children.len();
            for (i, &child) in children.iter().enumerate().rev() {
                stack.push(Pending {
                    node: child,
                    parent: Some(pos),
                    depth: child_depth,
                    sibling_index: i,
                    sibling_count: count,
                });
            }
        }

        let home = home.map(|h| h.to_string_lossy().into_owned());
        for (node, f) in nodes.iter_mut().zip(facts) {
            node.text = match f.text {
                RowText::Ready(t) => t,
                RowText::ToolResult { call_id, tool_name } => {
                    match call_id.and_then(|c| tool_calls.get(&c)) {
                        Some(call) => text::format_tool_call(
                            &call.name,
                            &call.arguments,
                            home.as_deref(),
                            dialect,
                        ),
                        None => format!("[{tool_name}]"),
                    }
                }
            };
            let rest = f.search_parts.join(" ");
            node.search = match &node.label {
                Some(label) if f.search_parts.is_empty() => label.clone(),
                Some(label) => format!("{label} {rest}"),
                None => rest,
            };
        }
        let mut pos_by_id = HashMap::with_capacity(nodes.len());
        for (pos, node) in nodes.iter().enumerate() {
            if let Some(id) = &node.id {
                pos_by_id.insert(id.clone(), pos);
            }
        }
        Model {
            dialect,
            nodes,
            pos_by_id,
        }
    }

    /// The position of the nearest visible node at or above `id` (by tree parents); the last
    /// visible row when none (or no id); `None` when nothing is visible.
    pub fn nearest_visible(
        &self,
        id: Option<&str>,
        row_of: &HashMap<usize, usize>,
        visible_count: usize,
    ) -> Option<usize> {
        if visible_count == 0 {
            return None;
        }
        let mut cursor = id.and_then(|i| self.pos_by_id.get(i).copied());
        let mut steps = 0;
        while let Some(pos) = cursor {
            if let Some(&row) = row_of.get(&pos) {
                return Some(row);
            }
            cursor = self.nodes[pos].parent;
            steps += 1;
            if steps > self.nodes.len() {
                break;
            }
        }
        Some(visible_count - 1)
    }
}

/// One gutter entry of pi's structure: a `│` (or blank) column at `position`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Gutter {
    pub position: usize,
    pub show: bool,
    pub prev: Option<usize>,
}

/// pi's visual data for one visible row.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PiRow {
    pub indent: usize,
    pub show_connector: bool,
    pub is_last: bool,
    pub is_virtual_root_child: bool,
    /// Head of this row's gutter list in [`PiStructure::gutters`].
    pub gutters: Option<usize>,
    pub foldable: bool,
}

/// pi's structure over the visible rows (`recalculateVisualStructure`).
#[derive(Debug, Clone, Default)]
pub(crate) struct PiStructure {
    pub rows: Vec<PiRow>,
    pub gutters: Vec<Gutter>,
    pub multiple_roots: bool,
    /// Visible parent row of each row.
    pub parent_row: Vec<Option<usize>>,
    pub child_rows: Vec<usize>,
}

impl PiStructure {
    /// The gutter positions of a row, oldest first (pi takes the first match per level).
    pub fn gutter_at(&self, row: usize, level: usize) -> Option<bool> {
        let mut found = None;
        let mut cursor = self.rows[row].gutters;
        while let Some(g) = cursor {
            let gutter = self.gutters[g];
            if gutter.position == level {
                found = Some(gutter.show);
            }
            cursor = gutter.prev;
        }
        found
    }
}

/// Nearest visible ancestor (row) of every visible row, computed in pre-order.
pub(crate) fn visible_parents(
    model: &Model,
    visible: &[usize],
    row_of: &HashMap<usize, usize>,
) -> Vec<Option<usize>> {
    // For every node: the nearest visible strict ancestor (as a row).
    let mut nearest: Vec<Option<usize>> = vec![None; model.nodes.len()];
    for (pos, node) in model.nodes.iter().enumerate() {
        nearest[pos] = node
            .parent
            .and_then(|p| row_of.get(&p).copied().or(nearest[p]));
    }
    visible.iter().map(|&pos| nearest[pos]).collect()
}

/// A pending row of pi's walk: (row, indent, just branched, shows a connector, is last, gutters,
/// child of the virtual root).
type Frame = (usize, usize, bool, bool, bool, Option<usize>, bool);

/// pi's `recalculateVisualStructure` over the visible rows.
pub(crate) fn pi_structure(
    model: &Model,
    visible: &[usize],
    row_of: &HashMap<usize, usize>,
) -> PiStructure {
    let parent_row = visible_parents(model, visible, row_of);
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); visible.len()];
    let mut roots = Vec::new();
    for (row, parent) in parent_row.iter().enumerate() {
        match parent {
            Some(p) => children[*p].push(row),
            None => roots.push(row),
        }
    }
    let multiple_roots = roots.len() > 1;
    let mut out = PiStructure {
        rows: vec![PiRow::default(); visible.len()],
        gutters: Vec::new(),
        multiple_roots,
        parent_row,
        child_rows: children.iter().map(Vec::len).collect(),
    };
    // (row, indent, just_branched, show_connector, is_last, gutters, virtual_root_child)
    let mut stack: Vec<Frame> = Vec::new();
    let start = usize::from(multiple_roots);
    for (i, &r) in roots.iter().enumerate().rev() {
        stack.push((
            r,
            start,
            multiple_roots,
            multiple_roots,
            i + 1 == roots.len(),
            None,
            multiple_roots,
        ));
    }
    while let Some((row, indent, just_branched, show_connector, is_last, gutters, virtual_child)) =
        stack.pop()
    {
        out.rows[row] = PiRow {
            indent,
            show_connector,
            is_last,
            is_virtual_root_child: virtual_child,
            gutters,
            foldable: false,
        };
        let kids = &children[row];
        let multiple = kids.len() > 1;
        let child_indent = if multiple || (just_branched && indent > 0) {
            indent + 1
        } else {
            indent
        };
        let displayed = show_connector && !virtual_child;
        let display_indent = if multiple_roots {
            indent.saturating_sub(1)
        } else {
            indent
        };
        let child_gutters = if displayed {
            out.gutters.push(Gutter {
                position: display_indent.saturating_sub(1),
                show: !is_last,
                prev: gutters,
            });
            Some(out.gutters.len() - 1)
        } else {
            gutters
        };
        for (i, &k) in kids.iter().enumerate().rev() {
            stack.push((
                k,
                child_indent,
                multiple,
                multiple,
                i + 1 == kids.len(),
                child_gutters,
                false,
            ));
        }
    }
    for row in 0..visible.len() {
        let has_children = out.child_rows[row] > 0;
        out.rows[row].foldable = has_children
            && match out.parent_row[row] {
                None => true,
                Some(p) => out.child_rows[p] > 1,
            };
    }
    out
}
