//! The flattened tree both selectors start from, built without recursion: pre-order with the
//! leaf-containing root and child first, the active path (leaf to root), each entry's facts read
//! once, omp's structural depth / sibling data over the whole tree, and pi's visual structure
//! (indent, connectors, gutters) re-derived over the visible rows only.

use super::text::{EntryFacts, RowText, ToolCall};
use crate::dialect::Dialect;
use crate::session::Session;
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// One entry of the flattened tree (positions are indices into [`Model::nodes`]). An entry whose
/// id is duplicated sits in the tree more than once, as in the agents, so it can have several
/// positions.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub entry: usize,
    /// The entry id: the key of every map the selectors keep (`None` = JavaScript `undefined`).
    pub id: Option<Arc<str>>,
    /// Parent position in the walk.
    pub parent: Option<usize>,
    /// The entry's view facts (shared with the session's entry).
    pub facts: Arc<EntryFacts>,
    /// A tool result's row text, made from its tool call once the walk has seen every call.
    pub tool_text: Option<Arc<str>>,
    /// `type` is missing or not a string (omp's row text throws on it).
    pub kind_missing: bool,
    pub label: Option<String>,
    pub on_active_path: bool,
    pub is_leaf: bool,
    /// omp: display depth over the whole tree.
    pub depth: usize,
    /// omp: how many children the parent has (roots: how many roots).
    pub sibling_count: usize,
    pub is_last: bool,
    /// omp: the nearest strict ancestor that sits at a branch (several siblings, not a root).
    pub branch_up: Option<usize>,
    /// pi: the visual values `flattenTree` gives (kept by rows the visible re-layout skips).
    pub pi: PiRow,
}

impl Node {
    /// The entry `type` (`""` when missing).
    pub fn kind(&self) -> &str {
        &self.facts.kind
    }

    /// `message.role`.
    pub fn role(&self) -> Option<&str> {
        self.facts.role.as_deref()
    }

    /// The row text after the label.
    pub fn text(&self) -> &str {
        match (&self.facts.text, &self.tool_text) {
            (RowText::Ready(text), _) => text,
            (RowText::ToolResult { .. }, Some(text)) => text,
            (RowText::ToolResult { .. }, None) => "",
        }
    }

    /// The searchable text, label first.
    pub fn search(&self) -> Cow<'_, str> {
        let rest = &*self.facts.search;
        match &self.label {
            Some(label) if rest.is_empty() => Cow::Borrowed(label),
            Some(label) => Cow::Owned(format!("{label} {rest}")),
            None => Cow::Borrowed(rest),
        }
    }

    /// The entry id.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }
}

/// The flattened session.
#[derive(Debug, Clone)]
pub(crate) struct Model {
    pub dialect: Dialect,
    pub nodes: Vec<Node>,
    /// Every position's key: its id interned (one key for all id-less entries, like
    /// JavaScript's `undefined`).
    pub key: Vec<usize>,
    /// id → key.
    pub key_by_id: HashMap<Arc<str>, usize, foldhash::fast::RandomState>,
    /// key → last position holding it (pi's `entryMap`, omp's `rowByKey`).
    pub key_last_pos: Vec<usize>,
    /// key → parent key: pi follows the entry's `parentId` (a missing parent ends the walk), omp
    /// the walk's parent of the last position.
    pub key_parent: Vec<Option<usize>>,
    /// pi: gutter entries of `flattenTree`.
    pub gutters: Vec<Gutter>,
}

struct Pending {
    node: usize,
    parent: Option<usize>,
    depth: usize,
    sibling_index: usize,
    sibling_count: usize,
    pi: PiRow,
    just_branched: bool,
}

enum Step {
    Enter(Pending),
    Exit(usize),
}

/// The entries on the path from the leaf up (pi `buildActivePath`, omp's parent map), by index.
fn active_path(session: &Session) -> Vec<bool> {
    let mut out = vec![false; session.entries().len()];
    for i in session.branch_path(None) {
        out[i] = true;
    }
    out
}

/// Children with the subtrees holding the leaf first, in order (a copy only when that reorders).
fn leaf_first<'a>(list: &'a [usize], contains: &[bool]) -> Cow<'a, [usize]> {
    let holders = list.iter().filter(|&&c| contains[c]).count();
    if list[..holders].iter().all(|&c| contains[c]) {
        return Cow::Borrowed(list);
    }
    let mut out: Vec<usize> = list.iter().copied().filter(|&c| contains[c]).collect();
    out.extend(list.iter().copied().filter(|&c| !contains[c]));
    Cow::Owned(out)
}

impl Model {
    /// Flattens a session; `home` shortens tool-call paths.
    pub fn build(session: &Session, home: Option<&Path>) -> Model {
        let dialect = session.dialect();
        let tree = session.tree();
        let entries = session.entries();
        let leaf = session.leaf_id().and_then(|id| session.index_of(id));
        let active = active_path(session);

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
        let ordered = |list| leaf_first(list, &contains);
        // Labels by the entry that holds their target id.
        let labels: HashMap<usize, &str, foldhash::fast::RandomState> = session
            .labels()
            .filter_map(|(target, state)| {
                session.index_of(target).map(|i| (i, state.label.as_str()))
            })
            .collect();

        let roots = ordered(&tree.roots);
        let multiple_roots = tree.roots.len() > 1;
        let mut nodes: Vec<Node> = Vec::with_capacity(order.len());
        let mut gutters: Vec<Gutter> = Vec::new();
        let mut on_path = vec![false; entries.len()];
        // Duplicated ids make the agents walk a subtree once per reference; a cap keeps a
        // pathological file from exploding.
        let cap = entries.len().saturating_mul(4).saturating_add(1024);
        let mut stack: Vec<Step> = Vec::new();
        for (i, &node) in roots.iter().enumerate().rev() {
            let pi = PiRow {
                indent: usize::from(multiple_roots),
                show_connector: multiple_roots,
                is_last: i + 1 == roots.len(),
                is_virtual_root_child: multiple_roots,
                gutters: None,
                foldable: false,
            };
            stack.push(Step::Enter(Pending {
                node,
                parent: None,
                depth: 0,
                sibling_index: i,
                sibling_count: roots.len(),
                pi,
                just_branched: multiple_roots,
            }));
        }
        while let Some(step) = stack.pop() {
            let p = match step {
                Step::Exit(node) => {
                    on_path[node] = false;
                    continue;
                }
                Step::Enter(p) => p,
            };
            if on_path[p.node] || nodes.len() >= cap {
                continue;
            }
            on_path[p.node] = true;
            stack.push(Step::Exit(p.node));
            let entry = &entries[p.node];
            let pos = nodes.len();
            let children = ordered(tree.children(p.node));
            let id: Option<Arc<str>> = entry.id.clone();
            let label = id
                .as_ref()
                .and_then(|_| labels.get(&p.node))
                .map(|l| (*l).to_owned());
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
                on_active_path: id.is_some() && active[p.node],
                id,
                parent: p.parent,
                facts: entry.facts(dialect),
                tool_text: None,
                kind_missing: entry.kind.is_none(),
                label,
                is_leaf: Some(p.node) == leaf,
                depth: p.depth,
                sibling_count: p.sibling_count,
                is_last: p.sibling_index + 1 == p.sibling_count,
                branch_up,
                pi: p.pi,
            });
            let count = children.len();
            let multiple = count > 1;
            let child_depth = if multiple || (multiple_roots && p.parent.is_none()) {
                p.depth + 1
            } else {
                p.depth
            };
            // pi's flattenTree layout.
            let indent = p.pi.indent;
            let child_indent = if multiple || (p.just_branched && indent > 0) {
                indent + 1
            } else {
                indent
            };
            let displayed = p.pi.show_connector && !p.pi.is_virtual_root_child;
            let display_indent = if multiple_roots {
                indent.saturating_sub(1)
            } else {
                indent
            };
            let child_gutters = if displayed {
                gutters.push(Gutter {
                    position: display_indent.saturating_sub(1),
                    show: !p.pi.is_last,
                    prev: p.pi.gutters,
                });
                Some(gutters.len() - 1)
            } else {
                p.pi.gutters
            };
            for (i, &child) in children.iter().enumerate().rev() {
                let pi = PiRow {
                    indent: child_indent,
                    show_connector: multiple,
                    is_last: i + 1 == count,
                    is_virtual_root_child: false,
                    gutters: child_gutters,
                    foldable: false,
                };
                stack.push(Step::Enter(Pending {
                    node: child,
                    parent: Some(pos),
                    depth: child_depth,
                    sibling_index: i,
                    sibling_count: count,
                    pi,
                    just_branched: multiple,
                }));
            }
        }

        // A tool result shows its call as the walk last saw it.
        let home = home.map(|h| h.to_string_lossy().into_owned());
        let tool_texts: Vec<(usize, Arc<str>)> = {
            let mut calls: HashMap<&str, &ToolCall, foldhash::fast::RandomState> =
                HashMap::default();
            for node in &nodes {
                for (id, call) in &node.facts.tool_calls {
                    calls.insert(id, call);
                }
            }
            nodes
                .iter()
                .enumerate()
                .filter_map(|(pos, node)| match &node.facts.text {
                    RowText::ToolResult { call_id, tool_name } => {
                        let text = match call_id.as_deref().and_then(|c| calls.get(c)) {
                            Some(call) => call.row_text(home.as_deref(), dialect),
                            None => format!("[{tool_name}]").into(),
                        };
                        Some((pos, text))
                    }
                    RowText::Ready(_) => None,
                })
                .collect()
        };
        for (pos, text) in tool_texts {
            nodes[pos].tool_text = Some(text);
        }
        let mut key_by_id: HashMap<Arc<str>, usize, foldhash::fast::RandomState> =
            HashMap::with_capacity_and_hasher(nodes.len(), Default::default());
        let mut undefined_key: Option<usize> = None;
        let mut key = Vec::with_capacity(nodes.len());
        let mut key_last_pos: Vec<usize> = Vec::new();
        for (pos, node) in nodes.iter().enumerate() {
            let next = key_last_pos.len();
            let k = match &node.id {
                Some(id) => *key_by_id.entry(id.clone()).or_insert(next),
                None => *undefined_key.get_or_insert(next),
            };
            if k == next {
                key_last_pos.push(pos);
            } else {
                key_last_pos[k] = pos;
            }
            key.push(k);
        }
        let key_parent: Vec<Option<usize>> = key_last_pos
            .iter()
            .map(|&pos| match dialect {
                Dialect::Pi => session
                    .entry_at(nodes[pos].entry)
                    .and_then(|e| e.parent.id())
                    .and_then(|p| key_by_id.get(p).copied()),
                Dialect::Omp => nodes[pos].parent.map(|p| key[p]),
            })
            .collect();
        Model {
            dialect,
            nodes,
            key,
            key_by_id,
            key_last_pos,
            key_parent,
            gutters,
        }
    }

    /// The row to select for an anchor id: the anchor or its nearest visible ancestor (pi walks
    /// `parentId`s, omp the walk's parents); the last row when none is visible or there is no
    /// anchor; `None` when nothing is visible.
    pub fn nearest_visible(
        &self,
        anchor: Option<&str>,
        row_of_key: &[Option<usize>],
        visible_count: usize,
    ) -> Option<usize> {
        if visible_count == 0 {
            return None;
        }
        let mut cursor = anchor.and_then(|a| self.key_by_id.get(a).copied());
        let mut steps = 0;
        while let Some(k) = cursor {
            if let Some(row) = row_of_key[k] {
                return Some(row);
            }
            cursor = self.key_parent[k];
            steps += 1;
            if steps > self.key_last_pos.len() {
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
    /// How many visible children each row has.
    pub child_rows: Vec<usize>,
}

impl PiStructure {
    /// The gutters drawn at levels `0..levels` of a row, in one walk of its gutter list: pi takes
    /// the first (oldest) entry at each position.
    pub fn gutters_of(&self, row: usize, levels: usize) -> Vec<Option<bool>> {
        let mut out = vec![None; levels];
        let mut cursor = self.rows[row].gutters;
        while let Some(g) = cursor {
            let gutter = self.gutters[g];
            if let Some(cell) = out.get_mut(gutter.position) {
                // The walk goes newest to oldest: the last write is the oldest.
                *cell = Some(gutter.show);
            }
            cursor = gutter.prev;
        }
        out
    }
}

/// Nearest visible ancestor (row) of every visible row, by the walk's parents.
pub(crate) fn visible_parents(
    model: &Model,
    visible: &[usize],
    row_of: &[Option<usize>],
) -> Vec<Option<usize>> {
    let mut nearest: Vec<Option<usize>> = vec![None; model.nodes.len()];
    for (pos, node) in model.nodes.iter().enumerate() {
        nearest[pos] = node.parent.and_then(|p| row_of[p].or(nearest[p]));
    }
    visible.iter().map(|&pos| nearest[pos]).collect()
}

/// A pending row of pi's walk: (key, indent, just branched, shows a connector, is last, gutters,
/// child of the virtual root).
type Frame = (usize, usize, bool, bool, bool, Option<usize>, bool);

/// pi's `recalculateVisualStructure` over the visible rows. Like pi it keys everything by entry
/// id: with duplicated ids only the last visible copy is re-laid out, the others keep their
/// `flattenTree` values.
pub(crate) fn pi_structure(
    model: &Model,
    visible: &[usize],
    row_of: &[Option<usize>],
) -> PiStructure {
    let keys = model.key_last_pos.len();
    let mut visible_key = vec![false; keys];
    let mut filtered: Vec<Option<usize>> = vec![None; keys];
    for &pos in visible {
        let k = model.key[pos];
        visible_key[k] = true;
        filtered[k] = Some(pos);
    }
    // Nearest visible ancestor key of every hidden key walked (None = null), memoized.
    let mut memo: Vec<Option<Option<usize>>> = vec![None; keys];
    let mut visible_parent: Vec<Option<usize>> = vec![None; keys];
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); keys];
    let mut roots: Vec<usize> = Vec::new();
    let mut walked: Vec<usize> = Vec::new();
    for &pos in visible {
        let k = model.key[pos];
        walked.clear();
        let mut cursor = model.key_parent[k];
        let found = loop {
            let Some(cur) = cursor else { break None };
            if visible_key[cur] {
                break Some(cur);
            }
            if let Some(hit) = memo[cur] {
                break hit;
            }
            // A parent cycle among hidden entries (pi would spin forever): give up after a lap.
            if walked.len() > keys {
                break None;
            }
            walked.push(cur);
            cursor = model.key_parent[cur];
        };
        for &w in &walked {
            memo[w] = Some(found);
        }
        visible_parent[k] = found;
        match found {
            Some(p) => children[p].push(k),
            None => roots.push(k),
        }
    }
    let multiple_roots = roots.len() > 1;
    let mut updated: Vec<Option<PiRow>> = vec![None; model.nodes.len()];
    let mut gutters = model.gutters.clone();
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
    let cap = visible.len().saturating_mul(4).saturating_add(1024);
    let mut steps = 0;
    while let Some((
        k,
        indent,
        just_branched,
        show_connector,
        is_last,
        row_gutters,
        virtual_child,
    )) = stack.pop()
    {
        steps += 1;
        if steps > cap {
            break;
        }
        let Some(pos) = filtered[k] else { continue };
        updated[pos] = Some(PiRow {
            indent,
            show_connector,
            is_last,
            is_virtual_root_child: virtual_child,
            gutters: row_gutters,
            foldable: false,
        });
        let kids = &children[k];
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
            gutters.push(Gutter {
                position: display_indent.saturating_sub(1),
                show: !is_last,
                prev: row_gutters,
            });
            Some(gutters.len() - 1)
        } else {
            row_gutters
        };
        for (i, &c) in kids.iter().enumerate().rev() {
            stack.push((
                c,
                child_indent,
                multiple,
                multiple,
                i + 1 == kids.len(),
                child_gutters,
                false,
            ));
        }
    }
    let mut rows = Vec::with_capacity(visible.len());
    let mut parent_row = Vec::with_capacity(visible.len());
    for (own, &pos) in visible.iter().enumerate() {
        let k = model.key[pos];
        let mut row = updated[pos].unwrap_or(model.nodes[pos].pi);
        let parent = visible_parent[k];
        let kids = children[k].len();
        // Drawn as pi draws it (a self-parented entry counts itself as a child there).
        row.foldable = kids > 0
            && match parent {
                None => true,
                Some(p) => children[p].len() > 1,
            };
        rows.push(row);
        parent_row.push(
            parent
                .and_then(|p| filtered[p])
                .and_then(|pp| row_of[pp])
                .filter(|&r| r != own),
        );
    }
    // For clients the parent row is a row above: where ids repeat, pi's by-id parent can name a
    // later copy; those rows take their nearest visible ancestor in the walk instead.
    if parent_row
        .iter()
        .enumerate()
        .any(|(own, p)| p.is_some_and(|r| r > own))
    {
        let walked = visible_parents(model, visible, row_of);
        for (own, p) in parent_row.iter_mut().enumerate() {
            if p.is_some_and(|r| r > own) {
                *p = walked[own];
            }
        }
    }
    let mut child_rows = vec![0usize; visible.len()];
    for p in parent_row.iter().flatten() {
        child_rows[*p] += 1;
    }
    PiStructure {
        rows,
        gutters,
        multiple_roots,
        parent_row,
        child_rows,
    }
}
