//! The flattened tree both selectors start from, built without recursion: pre-order with the
//! leaf-containing root and child first, the active path (leaf to root), each entry's facts read
//! once, omp's structural depth / sibling data over the whole tree, and pi's visual structure
//! (indent, connectors, gutters) re-derived over the visible rows only.

use super::shared_text::SharedText;
use crate::dialect::Dialect;
use crate::facts::call_hash;
use crate::facts::flags::flag;
use crate::facts::{EntryFacts, RowText, ToolCall};
use crate::session::columns::{CallRecord, Chunked, ViewColumns};
use crate::session::{Session, NO_PARENT};
use crate::tree::Tree;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// One position of the flattened tree (positions are indices into [`Model::nodes`]). An entry
/// whose id is duplicated sits in the tree more than once, as in the agents, so it can have several
/// positions; what belongs to the entry itself (facts, id, label, flags) is kept once per key.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub entry: u32,
    /// Parent position in the walk.
    pub parent: Option<u32>,
    /// omp: display depth over the whole tree.
    pub depth: u32,
    /// omp: how many children the parent has (roots: how many roots).
    pub sibling_count: u32,
    pub is_last: bool,
    /// omp: the nearest strict ancestor that sits at a branch (several siblings, not a root).
    pub branch_up: Option<u32>,
    /// pi: the visual values `flattenTree` gives (kept by rows the visible re-layout skips).
    pub pi: PiRow,
}

/// Tool call id (hashed) → (key, index of the call in its facts): the call at the greatest last
/// position among the keys of one half.
pub(crate) type CallMap = HashMap<u64, (u32, u32), foldhash::fast::RandomState>;

/// No key / no entry / no row.
pub(crate) const NONE: u32 = u32::MAX;

/// The flattened session.
#[derive(Debug)]
pub(crate) struct Model {
    pub dialect: Dialect,
    pub nodes: Vec<Node>,
    /// Every position's key: the entry it shows, numbered by first position (one key for all
    /// id-less entries, like JavaScript's `undefined`, since the tree has one node for them).
    key: Vec<u32>,
    /// key → last position holding it (pi's `entryMap`, omp's `rowByKey`).
    key_last_pos: Vec<u32>,
    /// key → parent key ([`NONE`]: none): pi follows the entry's `parentId` (a missing parent
    /// ends the walk), omp the walk's parent of the last position.
    key_parent: Vec<u32>,
    /// key → its [`flag`]s.
    pub flags: Vec<u16>,
    /// key → the entry it shows.
    pub key_entry: Vec<u32>,
    /// entry → its key ([`NONE`]: not in the tree).
    key_of_entry: Vec<u32>,
    /// The session's facts and ids by entry (shared with the session, not copied).
    pub columns: ViewColumns,
    /// key → label in effect (only keys with [`flag::LABELED`]).
    labels: HashMap<usize, Arc<str>, foldhash::fast::RandomState>,
    /// The leaf's key.
    leaf_key: Option<usize>,
    /// id → key, made on the first lookup of an id other than the leaf's.
    key_by_id: OnceLock<HashMap<Arc<str>, usize, foldhash::fast::RandomState>>,
    /// Tool call id (hashed) → the last (key, call) the walk saw it at, made for the first tool
    /// result row built.
    calls: OnceLock<[CallMap; 2]>,
    home: Option<String>,
    /// pi: gutter entries of `flattenTree`.
    pub gutters: Vec<Gutter>,
    /// The answers of recent searches by entry, for the next key.
    pub search_verdicts: super::search_verdicts::SearchVerdicts,
}

struct Pending {
    node: usize,
    parent: Option<usize>,
    depth: usize,
    sibling_index: usize,
    sibling_count: usize,
    pi: PiRow,
    just_branched: bool,
    /// A root of the tree (a walk may start below one, see [`Start`]).
    root: bool,
}

enum Step {
    Enter(Pending),
    Exit(usize),
}

/// Children with the subtrees holding the leaf first, in order (a copy only when that reorders).
#[inline]
fn leaf_first<'a>(list: &'a [usize], contains: &[bool]) -> Cow<'a, [usize]> {
    if list.len() < 2 {
        return Cow::Borrowed(list);
    }
    let holders = list.iter().filter(|&&c| contains[c]).count();
    if list[..holders].iter().all(|&c| contains[c]) {
        return Cow::Borrowed(list);
    }
    let mut out: Vec<usize> = list.iter().copied().filter(|&c| contains[c]).collect();
    out.extend(list.iter().copied().filter(|&c| !contains[c]));
    Cow::Owned(out)
}

/// Which nodes' subtrees hold the leaf.
fn holds_leaf(session: &Session, tree: &Tree, leaf: Option<usize>) -> Vec<bool> {
    let n = session.entries().len();
    if let Some(parents) = session.plain_parents().filter(|p| p.len() == n) {
        let mut contains = vec![false; n];
        // One parent per node: the leaf's ancestors, unless they run into a cycle (then none of
        // them is reachable from a root, and the walk from the roots marks nothing).
        let mut cursor = leaf;
        while let Some(node) = cursor {
            if contains[node] {
                contains.iter_mut().for_each(|c| *c = false);
                break;
            }
            contains[node] = true;
            let p = parents[node];
            cursor = (p != NO_PARENT && p as usize != node).then_some(p as usize);
        }
        return contains;
    }
    holds_leaf_general(n, tree, leaf)
}

/// [`holds_leaf`] for any tree: a plain pre-order, then children before parents.
fn holds_leaf_general(n: usize, tree: &Tree, leaf: Option<usize>) -> Vec<bool> {
    let mut contains = vec![false; n];
    let order = tree.preorder();
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
    contains
}

/// The flags of the entries `keys` names, their facts made where the scan did not make them.
fn key_flags(session: &Session, columns: &ViewColumns, keys: &[u32]) -> Vec<u16> {
    let dialect = session.dialect();
    let entries = session.entries();
    keys.iter()
        .map(|&e| columns.static_flags(e as usize, &entries[e as usize], dialect))
        .collect()
}

/// The session's active path and labels as a model marks them.
pub(crate) struct Marks {
    /// The path from the root to the leaf ([`Session::branch_path`]).
    pub path: Vec<usize>,
    /// Each label in effect with the entry that holds its target id.
    pub labels: Vec<(usize, Arc<str>)>,
}

impl Marks {
    pub fn of(session: &Session) -> Marks {
        Marks {
            path: session.branch_path(None),
            labels: session
                .labels()
                .filter_map(|(target, state)| {
                    Some((session.index_of(target)?, state.label.as_str().into()))
                })
                .collect(),
        }
    }
}

/// Where a walk stops early (see [`Model::build_prefix`]).
pub(crate) struct Stop<'a> {
    /// Whether an entry is shown.
    pub shown: &'a dyn Fn(usize) -> bool,
    /// How many shown entries to walk.
    pub rows: usize,
    /// Where the walk starts instead of the roots.
    pub from: Option<Start>,
}

/// A node down the leaf's path where a prefix walk starts, with the values the whole walk gives
/// it: the walk then holds its subtree, laid out as the whole walk lays it out (the values a
/// position takes come from its parent's only; omp's branch gutters above it must be scrolled
/// out, which the caller checks).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Start {
    pub node: usize,
    /// Its index in the leaf's path ([`Marks::path`]).
    pub path_index: usize,
    /// omp's display depth.
    pub depth: usize,
    /// How many children its parent has (roots: how many roots).
    pub sibling_count: usize,
    /// Whether it is a root of the tree.
    pub root: bool,
}

/// The subtrees a stopped walk did not enter: each one's parent position (`None`: a root) and
/// its node.
pub(crate) type Unwalked = Vec<(Option<u32>, usize)>;

impl Model {
    /// Flattens a session; `home` shortens tool-call paths.
    pub fn build(session: &Session, home: Option<&Path>) -> Model {
        Model::walk(session, &session.tree(), &Marks::of(session), home, None).0
    }

    /// The model of the walk's first positions: it stops once `stop.rows` shown entries are
    /// walked. Every value of those positions is what [`Model::build`] gives them (the walk is
    /// in pre-order and computes top-down), so the prefix's rows are the first rows of the
    /// whole view. Also returns the subtrees left unwalked.
    pub fn build_prefix(
        session: &Session,
        tree: &Tree,
        marks: &Marks,
        home: Option<&Path>,
        stop: Stop<'_>,
    ) -> (Model, Unwalked) {
        Model::walk(session, tree, marks, home, Some(stop))
    }

    fn walk(
        session: &Session,
        tree: &Tree,
        marks: &Marks,
        home: Option<&Path>,
        stop: Option<Stop<'_>>,
    ) -> (Model, Unwalked) {
        let dialect = session.dialect();
        let entries = session.entries();
        let leaf = session.leaf_id().and_then(|id| session.index_of(id));

        let from = stop.as_ref().and_then(|s| s.from);
        // The path below a start node is what its subtree holds of the leaf's ancestors.
        let path_below = &marks.path[from.map_or(0, |s| s.path_index)..];
        let contains = match from {
            Some(_) => {
                let mut contains = vec![false; entries.len()];
                for &i in path_below {
                    contains[i] = true;
                }
                contains
            }
            None => holds_leaf(session, tree, leaf),
        };
        let ordered = |list| leaf_first(list, &contains);

        let roots = ordered(&tree.roots);
        let multiple_roots = tree.roots.len() > 1;
        let mut nodes: Vec<Node> = Vec::with_capacity(entries.len());
        let mut key: Vec<u32> = Vec::with_capacity(entries.len());
        // entry → key, and key → entry / last position.
        let mut key_of_entry: Vec<u32> = vec![NONE; entries.len()];
        let mut key_entry: Vec<u32> = Vec::with_capacity(entries.len());
        let mut key_last_pos: Vec<u32> = Vec::with_capacity(entries.len());
        let mut gutters: Vec<Gutter> = Vec::new();
        // Duplicated ids make the agents walk a subtree once per reference, and can make a node
        // its own descendant: the path being walked is tracked then, and a cap keeps a
        // pathological file from exploding. A tree read from parent indices has neither.
        let guarded = session.plain_parents().is_none();
        // pi's `flattenTree` values (indent, connector, gutters) are read only by pi's visible
        // re-layout, and only for rows its walk does not reach: copies of a repeated id and
        // entries that name themselves as parent. A tree read from parent indices without a
        // self-parented entry has neither, and no gutter list is made for it.
        let flatten_pi = dialect == Dialect::Pi
            && session
                .plain_parents()
                .is_none_or(|parents| parents.iter().enumerate().any(|(i, &p)| p as usize == i));
        debug_assert!(
            stop.as_ref().is_none_or(|s| s.from.is_none()) || !(guarded || flatten_pi),
            "a walk starts down the path in plain trees only"
        );
        let mut on_path = vec![false; if guarded { entries.len() } else { 0 }];
        let cap = entries.len().saturating_mul(4).saturating_add(1024);
        let mut stack: Vec<Step> = Vec::new();
        if let Some(start) = from {
            // The holder of the leaf comes first among its siblings.
            stack.push(Step::Enter(Pending {
                node: start.node,
                parent: None,
                depth: start.depth,
                sibling_index: 0,
                sibling_count: start.sibling_count,
                pi: PiRow::default(),
                just_branched: false,
                root: start.root,
            }));
        }
        for (i, &node) in roots.iter().enumerate().rev().filter(|_| from.is_none()) {
            let pi = PiRow {
                indent: u32::from(multiple_roots),
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
                root: true,
            }));
        }
        // An only child is walked next without a trip through the stack (most nodes have one).
        let mut only_child: Option<Pending> = None;
        let mut shown = 0;
        let mut unwalked = Unwalked::new();
        loop {
            if let Some(stop) = &stop {
                if shown >= stop.rows {
                    let left =
                        only_child
                            .take()
                            .into_iter()
                            .chain(stack.drain(..).rev().filter_map(|step| match step {
                                Step::Enter(p) => Some(p),
                                Step::Exit(_) => None,
                            }));
                    unwalked.extend(left.map(|p| (p.parent.map(|q| q as u32), p.node)));
                    break;
                }
            }
            let p = match only_child.take() {
                Some(p) => p,
                None => match stack.pop() {
                    None => break,
                    Some(Step::Exit(node)) => {
                        on_path[node] = false;
                        continue;
                    }
                    Some(Step::Enter(p)) => p,
                },
            };
            if guarded {
                if on_path[p.node] || nodes.len() >= cap {
                    continue;
                }
                on_path[p.node] = true;
                stack.push(Step::Exit(p.node));
            }
            let pos = nodes.len();
            let k = match key_of_entry[p.node] {
                NONE => {
                    let k = key_entry.len() as u32;
                    key_of_entry[p.node] = k;
                    key_entry.push(p.node as u32);
                    key_last_pos.push(pos as u32);
                    k
                }
                k => {
                    key_last_pos[k as usize] = pos as u32;
                    k
                }
            };
            key.push(k);
            if let Some(stop) = &stop {
                if (stop.shown)(p.node) {
                    shown += 1;
                }
            }
            let children = ordered(tree.children(p.node));
            let branch_up = p.parent.and_then(|parent: usize| {
                let pn: &Node = &nodes[parent];
                if pn.sibling_count > 1 && pn.depth > 0 {
                    Some(parent as u32)
                } else {
                    pn.branch_up
                }
            });
            nodes.push(Node {
                entry: p.node as u32,
                parent: p.parent.map(|q| q as u32),
                depth: p.depth as u32,
                sibling_count: p.sibling_count as u32,
                is_last: p.sibling_index + 1 == p.sibling_count,
                branch_up,
                pi: p.pi,
            });
            let count = children.len();
            let multiple = count > 1;
            let child_depth = if multiple || (multiple_roots && p.root) {
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
            let child_gutters = if displayed && flatten_pi {
                gutters.push(Gutter {
                    position: display_indent.saturating_sub(1),
                    show: !p.pi.is_last,
                    prev: p.pi.gutters,
                });
                Some(gutters.len() as u32 - 1)
            } else {
                p.pi.gutters
            };
            let pending = |i: usize, child: usize| Pending {
                node: child,
                parent: Some(pos),
                depth: child_depth,
                sibling_index: i,
                sibling_count: count,
                pi: PiRow {
                    indent: child_indent,
                    show_connector: multiple,
                    is_last: i + 1 == count,
                    is_virtual_root_child: false,
                    gutters: child_gutters,
                    foldable: false,
                },
                just_branched: multiple,
                root: false,
            };
            if let [child] = *children {
                only_child = Some(pending(0, child));
                continue;
            }
            for (i, &child) in children.iter().enumerate().rev() {
                stack.push(Step::Enter(pending(i, child)));
            }
        }
        drop((on_path, contains, stack));

        let columns = session.view_columns().clone();
        let mut flags = key_flags(session, &columns, &key_entry);
        let has_id = |k: usize| columns.id(key_entry[k] as usize).is_some();
        let key_at = |entry: usize| match key_of_entry[entry] {
            NONE => None,
            k => Some(k as usize),
        };
        // The path from the leaf up (pi `buildActivePath`, omp's parent map).
        for &i in path_below {
            if let Some(k) = key_at(i) {
                if has_id(k) {
                    flags[k] |= flag::ACTIVE;
                }
            }
        }
        let leaf_key = leaf.and_then(key_at);
        if let Some(k) = leaf_key {
            flags[k] |= flag::LEAF;
        }
        // Labels by the entry that holds their target id.
        let mut labels: HashMap<usize, Arc<str>, foldhash::fast::RandomState> = HashMap::default();
        for (target, label) in &marks.labels {
            if let Some(k) = key_at(*target) {
                if has_id(k) {
                    labels.insert(k, label.clone());
                    flags[k] |= flag::LABELED;
                }
            }
        }
        let key_parent: Vec<u32> = key_last_pos
            .iter()
            .zip(&key_entry)
            .map(|(&pos, &entry)| match dialect {
                Dialect::Pi => session
                    .parent_index(entry as usize)
                    .map_or(NONE, |p| key_of_entry[p]),
                Dialect::Omp => nodes[pos as usize].parent.map_or(NONE, |p| key[p as usize]),
            })
            .collect();
        let model = Model {
            dialect,
            nodes,
            key,
            key_last_pos,
            key_parent,
            flags,
            key_entry,
            key_of_entry,
            columns,
            labels,
            leaf_key,
            key_by_id: OnceLock::new(),
            calls: OnceLock::new(),
            home: home.map(|h| h.to_string_lossy().into_owned()),
            gutters,
            search_verdicts: Default::default(),
        };
        (model, unwalked)
    }

    /// The key at a position.
    pub fn key_at(&self, pos: usize) -> usize {
        self.key[pos] as usize
    }

    /// How many keys (entries in the tree) there are.
    pub fn key_count(&self) -> usize {
        self.key_last_pos.len()
    }

    /// A key's parent key (see `key_parent`).
    pub fn parent_key(&self, k: usize) -> Option<usize> {
        Some(self.key_parent[k])
            .filter(|&p| p != NONE)
            .map(|p| p as usize)
    }

    /// The keys of every position, in order.
    pub fn keys(&self) -> impl Iterator<Item = usize> + '_ {
        self.key.iter().map(|&k| k as usize)
    }

    /// The flags of a position's entry.
    pub fn flags_at(&self, pos: usize) -> u16 {
        self.flags[self.key_at(pos)]
    }

    /// The facts of a position's entry.
    pub fn facts_at(&self, pos: usize) -> &EntryFacts {
        self.key_facts(self.key_at(pos))
    }

    /// The facts of a key's entry.
    fn key_facts(&self, k: usize) -> &Arc<EntryFacts> {
        self.columns.facts(self.key_entry[k] as usize)
    }

    /// The entry id.
    pub fn id(&self, pos: usize) -> Option<&str> {
        self.key_id(self.key_at(pos))
    }

    /// The id of a key's entry.
    pub fn key_id(&self, k: usize) -> Option<&str> {
        self.columns.id(self.key_entry[k] as usize).map(|id| &**id)
    }

    /// The label in effect.
    pub fn label(&self, pos: usize) -> Option<&str> {
        let k = self.key_at(pos);
        if self.flags[k] & flag::LABELED == 0 {
            return None;
        }
        self.labels.get(&k).map(|l| &**l)
    }

    /// On the path from the root to the leaf.
    pub fn on_active_path(&self, pos: usize) -> bool {
        self.flags_at(pos) & flag::ACTIVE != 0
    }

    /// The session's leaf.
    pub fn is_leaf(&self, pos: usize) -> bool {
        self.flags_at(pos) & flag::LEAF != 0
    }

    /// `type` is missing or not a string (omp's row text throws on it).
    pub fn kind_missing(&self, pos: usize) -> bool {
        self.flags_at(pos) & flag::KIND_MISSING != 0
    }

    /// Whether a position's searchable text matches a query: an unlabeled entry's string is read
    /// from the session's columns (pi's lower-cased).
    pub fn search_matches(&self, pos: usize, query: &super::search::Query) -> bool {
        if self.flags_at(pos) & flag::LABELED == 0 {
            let entry = self.key_entry[self.key_at(pos)] as usize;
            if let Some(text) = self.columns.search_text(entry, self.dialect) {
                return query.matches_column(text);
            }
        }
        query.matches(&self.search(pos))
    }

    /// The searchable text, label first.
    pub fn search(&self, pos: usize) -> Cow<'_, str> {
        let rest = &*self.facts_at(pos).search;
        match self.label(pos) {
            Some(label) if rest.is_empty() => Cow::Borrowed(label),
            Some(label) => Cow::Owned(format!("{label} {rest}")),
            None => Cow::Borrowed(rest),
        }
    }

    /// [`Model::text`] for a row, shared rather than copied.
    #[cfg(test)]
    pub fn row_text(&self, pos: usize) -> SharedText {
        self.row_text_with(pos, None)
    }

    /// [`Model::row_text`], tool calls looked up in `calls` (from [`Model::calls_for`]) when given.
    pub fn row_text_with(&self, pos: usize, calls: Option<&CallMap>) -> SharedText {
        let facts = self.key_facts(self.key_at(pos));
        match &facts.text {
            RowText::Ready(_) => SharedText::row_of(facts),
            RowText::ToolResult { call_id, tool_name } => {
                let call = call_id.as_deref().and_then(|c| match calls {
                    Some(map) => self.call_in(c, std::slice::from_ref(map)),
                    None => self.call(c),
                });
                match call {
                    Some(call) => call.row_text(self.home.as_deref(), self.dialect).into(),
                    None => format!("[{tool_name}]").into(),
                }
            }
        }
    }

    /// The entry `type` for a row.
    pub fn kind_text(&self, pos: usize) -> SharedText {
        let k = self.key_at(pos);
        match self.flags[k] & flag::CATEGORY {
            flag::USER | flag::ASSISTANT | flag::TOOL_RESULT | flag::MESSAGE => {
                SharedText::from_static("message")
            }
            _ => SharedText::kind_of(self.key_facts(k)),
        }
    }

    /// `message.role` for a row.
    pub fn role_text(&self, pos: usize) -> Option<SharedText> {
        let k = self.key_at(pos);
        match self.flags[k] & flag::CATEGORY {
            flag::USER => Some(SharedText::from_static("user")),
            flag::ASSISTANT => Some(SharedText::from_static("assistant")),
            flag::TOOL_RESULT => Some(SharedText::from_static("toolResult")),
            _ => SharedText::role_of(self.key_facts(k)),
        }
    }

    /// The label for a row.
    pub fn label_text(&self, pos: usize) -> Option<SharedText> {
        let k = self.key_at(pos);
        if self.flags[k] & flag::LABELED == 0 {
            return None;
        }
        self.labels.get(&k).map(|l| l.clone().into())
    }

    /// Makes the map of tool calls now (before rows are built on several threads).
    pub fn prepare_tool_texts(&self) {
        let _ = self.call("");
    }

    /// The tool call with this id that the walk saw last (pi and omp keep a map of every call
    /// they walk past: the last one wins). The map is made on first use, over two halves of the
    /// keys on two threads; a key's place is its last position.
    fn call(&self, id: &str) -> Option<&ToolCall> {
        let calls = self.calls.get_or_init(|| match self.columns.calls() {
            Some(records) => self.call_map_from_records(records),
            None => self.call_map_from_facts(),
        });
        self.call_in(id, calls)
    }

    /// The map of just the calls the tool results at `positions` name, from one pass over the
    /// session's call records (a window needs a handful; the whole map hashes every call). `None`
    /// when the whole map is made already or the records are incomplete.
    pub fn calls_for(&self, positions: &[usize]) -> Option<CallMap> {
        self.window_calls(positions).map(|(calls, _)| calls)
    }

    /// [`Model::calls_for`], and whether every call with one of those ids (by hash) belongs to an
    /// entry the model holds. A prefix model ([`Model::build_prefix`]) holds the walk's first
    /// positions only, and the call a result shows is the last one the whole walk passes.
    pub fn window_calls(&self, positions: &[usize]) -> Option<(CallMap, bool)> {
        if self.calls.get().is_some() {
            return None;
        }
        let records = self.columns.calls()?;
        let wanted = self.wanted_calls(positions);
        let mut calls = CallMap::default();
        let mut held = true;
        if wanted.is_empty() {
            return Some((calls, held));
        }
        for record in records.chunks().flat_map(|c| c.iter()) {
            if !wanted.contains(&record.hash) {
                continue;
            }
            match self.key_of_entry.get(record.entry as usize) {
                Some(&k) if k != NONE => {
                    self.keep_call(&mut calls, record.hash, k as usize, record.call)
                }
                _ => held = false,
            }
        }
        Some((calls, held))
    }

    /// The call id hashes the tool results at `positions` name.
    fn wanted_calls(&self, positions: &[usize]) -> HashSet<u64, foldhash::fast::RandomState> {
        positions
            .iter()
            .filter_map(|&pos| match &self.facts_at(pos).text {
                RowText::ToolResult {
                    call_id: Some(id), ..
                } => Some(call_hash(id)),
                _ => None,
            })
            .collect()
    }

    /// The call with this id in `maps` (the one at the latest place among them).
    fn call_in<'a>(&'a self, id: &str, maps: &'a [CallMap]) -> Option<&'a ToolCall> {
        let calls = maps;
        let hash = call_hash(id);
        let mut best: Option<(usize, &ToolCall)> = None;
        for map in calls {
            let Some(&(k, i)) = map.get(&hash) else {
                continue;
            };
            let (call_id, call) = &self.key_facts(k as usize).tool_calls[i as usize];
            if call_id != id {
                // Two call ids with one hash: walk every call, the last one wins.
                return self.call_by_scan(id);
            }
            let at = self.key_last_pos[k as usize] as usize;
            if best.is_none_or(|(b, _)| at > b) {
                best = Some((at, call));
            }
        }
        best.map(|(_, call)| call)
    }

    /// The map from the session's call records (hashes made in the scan): no entry's facts read.
    fn call_map_from_records(&self, records: &Chunked<CallRecord>) -> [CallMap; 2] {
        let scan = |chunks: &[&[CallRecord]]| {
            let mut calls = CallMap::default();
            for record in chunks.iter().flat_map(|c| c.iter()) {
                let k = match self.key_of_entry.get(record.entry as usize) {
                    Some(&k) if k != NONE => k as usize,
                    _ => continue,
                };
                self.keep_call(&mut calls, record.hash, k, record.call);
            }
            calls
        };
        let chunks: Vec<&[CallRecord]> = records.chunks().collect();
        if records.len() < 4096 {
            return [scan(&chunks), CallMap::default()];
        }
        let (a, b) = chunks.split_at(chunks.len() / 2);
        super::on_two_threads(a, b, scan)
    }

    /// The map made by hashing every call id of the keys (when some entry's calls are not
    /// recorded): over two halves of the keys on two threads.
    fn call_map_from_facts(&self) -> [CallMap; 2] {
        let scan = |keys: std::ops::Range<usize>| {
            let mut calls = CallMap::default();
            for k in keys {
                if self.flags[k] & flag::CALLS == 0 {
                    continue;
                }
                for (i, (call_id, _)) in self.key_facts(k).tool_calls.iter().enumerate() {
                    self.keep_call(&mut calls, call_hash(call_id), k, i as u32);
                }
            }
            calls
        };
        let n = self.key_entry.len();
        if n < 4096 {
            return [scan(0..n), CallMap::default()];
        }
        let mid = n / 2;
        super::on_two_threads((0, mid), (mid, n), |(from, to)| scan(from..to))
    }

    /// Records call `i` of key `k` unless the map holds a call with that hash at a later place
    /// (a key's place is its last position; within a key the later call wins).
    fn keep_call(&self, calls: &mut CallMap, hash: u64, k: usize, i: u32) {
        let slot = calls.entry(hash).or_insert((k as u32, i));
        let held = slot.0 as usize;
        if held == k || self.key_last_pos[k] > self.key_last_pos[held] {
            *slot = (k as u32, i);
        }
    }

    fn call_by_scan(&self, id: &str) -> Option<&ToolCall> {
        let mut found = None;
        for k in self.keys() {
            for (call_id, call) in &self.key_facts(k).tool_calls {
                if call_id == id {
                    found = Some(call);
                }
            }
        }
        found
    }

    /// The key of an entry id.
    pub fn key_of(&self, id: &str) -> Option<usize> {
        if let Some(k) = self.leaf_key {
            if self.key_id(k) == Some(id) {
                return Some(k);
            }
        }
        self.key_by_id
            .get_or_init(|| {
                let mut map: HashMap<Arc<str>, usize, foldhash::fast::RandomState> =
                    HashMap::with_capacity_and_hasher(self.key_entry.len(), Default::default());
                for (k, &e) in self.key_entry.iter().enumerate() {
                    if let Some(id) = self.columns.id(e as usize) {
                        map.insert(id.clone(), k);
                    }
                }
                map
            })
            .get(id)
            .copied()
    }

    /// The row to select for an anchor id: the anchor or its nearest visible ancestor (pi walks
    /// `parentId`s, omp the walk's parents); the last row when none is visible or there is no
    /// anchor; `None` when nothing is visible.
    pub fn nearest_visible(
        &self,
        anchor: Option<&str>,
        row_of_key: &[u32],
        visible_count: usize,
    ) -> Option<usize> {
        if visible_count == 0 {
            return None;
        }
        let mut cursor = anchor.and_then(|a| self.key_of(a));
        let mut steps = 0;
        while let Some(k) = cursor {
            if row_of_key[k] != NONE {
                return Some(row_of_key[k] as usize);
            }
            cursor = self.parent_key(k);
            steps += 1;
            if steps > self.key_count() {
                break;
            }
        }
        Some(visible_count - 1)
    }
}

/// One gutter entry of pi's structure: a `│` (or blank) column at `position`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Gutter {
    pub position: u32,
    pub show: bool,
    pub prev: Option<u32>,
}

/// pi's visual data for one visible row.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PiRow {
    pub indent: u32,
    pub show_connector: bool,
    pub is_last: bool,
    pub is_virtual_root_child: bool,
    /// Head of this row's gutter list in [`PiStructure::gutters`].
    pub gutters: Option<u32>,
    pub foldable: bool,
}

/// pi's structure over the visible rows (`recalculateVisualStructure`).
#[derive(Debug, Clone, Default)]
pub(crate) struct PiStructure {
    pub rows: Vec<PiRow>,
    pub gutters: Vec<Gutter>,
    pub multiple_roots: bool,
    /// Visible parent row of each row ([`NONE`]: none; taken by the layout).
    pub parent_row: Vec<u32>,
    /// How many visible children each row has (taken by the layout).
    pub child_rows: Vec<u32>,
}

impl PiStructure {
    /// The gutters drawn at levels `0..levels` of a row, in one walk of its gutter list: pi takes
    /// the first (oldest) entry at each position.
    pub fn gutters_of(&self, row: usize, levels: usize) -> Vec<Option<bool>> {
        let mut out = vec![None; levels];
        let mut cursor = self.rows[row].gutters;
        while let Some(g) = cursor {
            let gutter = self.gutters[g as usize];
            if let Some(cell) = out.get_mut(gutter.position as usize) {
                // The walk goes newest to oldest: the last write is the oldest.
                *cell = Some(gutter.show);
            }
            cursor = gutter.prev;
        }
        out
    }
}

/// Nearest visible ancestor (row) of every visible row, by the walk's parents.
/// ([`NONE`]: none; `row_of` gives each position's row, [`NONE`] when hidden).
pub(crate) fn visible_parents(model: &Model, visible: &[usize], row_of: &[u32]) -> Vec<u32> {
    // A parent's position is always before its child's, so one pass in order finds them all.
    let mut nearest: Vec<u32> = Vec::with_capacity(model.nodes.len());
    for node in &model.nodes {
        let found = match node.parent {
            None => NONE,
            Some(p) => match row_of[p as usize] {
                NONE => nearest[p as usize],
                row => row,
            },
        };
        nearest.push(found);
    }
    visible.iter().map(|&pos| nearest[pos]).collect()
}

/// What lies past the end of a prefix model ([`Model::build_prefix`]), for pi's re-layout of its
/// rows: how many visible children (0, 1 or 2 for "several") each key has among the unwalked
/// subtrees, how many visible roots, and which rows will be built. Ids are not repeated there, so
/// each key has one row.
#[derive(Debug, Default)]
pub(crate) struct Beyond {
    pub kids: Vec<u8>,
    pub roots: u8,
    /// The rows that will be built (the window).
    pub built: std::ops::Range<usize>,
    /// The frame of the model's one root, when the walk started down the leaf's path
    /// ([`Start`]): what the rows above it give it.
    pub top: Option<PiTop>,
}

/// What pi's re-layout of the rows above a start row ([`Start`]) gives it.
#[derive(Debug, Clone)]
pub(crate) struct PiTop {
    pub frame: PiFrame,
    /// The gutter entries its list holds (the frame's head indexes them).
    pub gutters: Vec<Gutter>,
    pub multiple_roots: bool,
}

/// A row's place in pi's re-layout: indent, gutter list head ([`NONE`]: none), [`frame`] bits.
pub(crate) type PiFrame = (u32, u32, u8);

/// The frame pi's re-layout gives visible root `index` of `roots` (several roots are drawn as
/// children of a virtual one).
pub(crate) fn pi_root_frame(roots: usize, index: usize) -> PiFrame {
    let multiple_roots = roots > 1;
    let mut bits = if multiple_roots {
        frame::JUST_BRANCHED | frame::SHOW_CONNECTOR | frame::VIRTUAL_CHILD
    } else {
        0
    };
    if index + 1 == roots {
        bits |= frame::IS_LAST;
    }
    (u32::from(multiple_roots), NONE, bits)
}

/// The frame pi's re-layout gives the children of a row laid out in `row` that has `multiple`
/// visible children (`IS_LAST` left for the caller to add to the last one). A row drawn with a
/// connector adds its gutter entry to `gutters`.
pub(crate) fn pi_child_frame(
    row: PiFrame,
    multiple: bool,
    multiple_roots: bool,
    gutters: &mut Vec<Gutter>,
) -> PiFrame {
    let (indent, row_gutters, bits) = row;
    let child_indent = if multiple || (bits & frame::JUST_BRANCHED != 0 && indent > 0) {
        indent + 1
    } else {
        indent
    };
    let displayed = bits & frame::SHOW_CONNECTOR != 0 && bits & frame::VIRTUAL_CHILD == 0;
    let display_indent = if multiple_roots {
        indent.saturating_sub(1)
    } else {
        indent
    };
    let child_gutters = if displayed {
        gutters.push(Gutter {
            position: display_indent.saturating_sub(1),
            show: bits & frame::IS_LAST == 0,
            prev: (row_gutters != NONE).then_some(row_gutters),
        });
        gutters.len() as u32 - 1
    } else {
        row_gutters
    };
    let child_bits = if multiple {
        frame::JUST_BRANCHED | frame::SHOW_CONNECTOR
    } else {
        0
    };
    (child_indent, child_gutters, child_bits)
}

/// A pending row of pi's walk: key, indent, gutter list head ([`NONE`]: none) and [`frame`] bits.
type Frame = (u32, u32, u32, u8);

/// The bits of a [`Frame`].
pub(crate) mod frame {
    pub const JUST_BRANCHED: u8 = 1;
    pub const SHOW_CONNECTOR: u8 = 2;
    pub const IS_LAST: u8 = 4;
    pub const VIRTUAL_CHILD: u8 = 8;
}

/// No parent found (a root of the visible tree), in [`pi_structure`]'s memo.
const NULL: u32 = u32::MAX - 1;

/// pi's `recalculateVisualStructure` over the visible rows. Like pi it keys everything by entry
/// id: with duplicated ids only the last visible copy is re-laid out, the others keep their
/// `flattenTree` values. Kept in `u32`s: it runs over every visible row of a 100k-entry session.
pub(crate) fn pi_structure(
    model: &Model,
    visible: &[usize],
    row_of: &[u32],
    beyond: Option<&Beyond>,
) -> PiStructure {
    let keys = model.key_count();
    // Visible children past a prefix model's end (see [`Beyond`]).
    let more = |k: usize| beyond.map_or(0, |b| b.kids.get(k).map_or(0, |&n| n as usize));
    let more_roots = beyond.map_or(0, |b| b.roots as usize);
    // key → its last visible position (NONE: hidden).
    let mut filtered: Vec<u32> = vec![NONE; keys];
    for &pos in visible {
        filtered[model.key_at(pos)] = pos as u32;
    }
    // Nearest visible ancestor key of every hidden key walked (NULL: none; NONE: not known yet).
    let mut memo: Vec<u32> = vec![NONE; keys];
    // Each visible row's parent key (as found when the row was met, NULL: none), then the
    // children of every key in row order as flat lists.
    let mut found_of: Vec<u32> = Vec::with_capacity(visible.len());
    let mut roots: Vec<u32> = Vec::new();
    let mut walked: Vec<usize> = Vec::new();
    for &pos in visible {
        let k = model.key_at(pos);
        walked.clear();
        let mut cursor = model.parent_key(k);
        let found = loop {
            let Some(cur) = cursor else { break NULL };
            if filtered[cur] != NONE {
                break cur as u32;
            }
            if memo[cur] != NONE {
                break memo[cur];
            }
            // A parent cycle among hidden entries (pi would spin forever): give up after a lap.
            if walked.len() > keys {
                break NULL;
            }
            walked.push(cur);
            cursor = model.parent_key(cur);
        };
        for &w in &walked {
            memo[w] = found;
        }
        found_of.push(found);
        if found == NULL {
            roots.push(k as u32);
        }
    }
    drop((memo, walked));
    let mut child_start = vec![0u32; keys + 1];
    for &p in found_of.iter().filter(|&&p| p != NULL) {
        child_start[p as usize + 1] += 1;
    }
    for i in 0..keys {
        child_start[i + 1] += child_start[i];
    }
    let mut fill = child_start.clone();
    let mut child_list = vec![0u32; child_start[keys] as usize];
    for (&pos, &found) in visible.iter().zip(&found_of) {
        if found != NULL {
            let p = found as usize;
            child_list[fill[p] as usize] = model.key_at(pos) as u32;
            fill[p] += 1;
        }
    }
    drop(fill);
    let children = |k: usize| &child_list[child_start[k] as usize..child_start[k + 1] as usize];
    let top = beyond.and_then(|b| b.top.as_ref());
    let multiple_roots = match top {
        Some(top) => top.multiple_roots,
        None => roots.len() + more_roots > 1,
    };
    // The walk lays rows out; their parents and child counts need only the child lists, so
    // they are found at the same time on a second thread. Rows keep their `flattenTree` values
    // unless the walk reaches their key's last copy.
    let walk = || {
        let mut rows: Vec<PiRow> = visible.iter().map(|&pos| model.nodes[pos].pi).collect();
        let mut stack: Vec<Frame> = Vec::new();
        let mut gutters = match top {
            // A model that starts down the path has one root, laid out as the rows above lay
            // it out.
            Some(top) => {
                debug_assert!(model.gutters.is_empty() && roots.len() == 1);
                for &r in roots.iter().rev() {
                    stack.push((r, top.frame.0, top.frame.1, top.frame.2));
                }
                top.gutters.clone()
            }
            None => {
                for (i, &r) in roots.iter().enumerate().rev() {
                    let (indent, head, bits) = pi_root_frame(roots.len() + more_roots, i);
                    stack.push((r, indent, head, bits));
                }
                model.gutters.clone()
            }
        };
        let cap = visible.len().saturating_mul(4).saturating_add(1024);
        let mut steps = 0;
        // An only child is walked next without a trip through the stack.
        let mut only_child: Option<Frame> = None;
        while let Some((k, indent, row_gutters, bits)) = only_child.take().or_else(|| stack.pop()) {
            steps += 1;
            if steps > cap {
                break;
            }
            let k = k as usize;
            let Some(row) = Some(filtered[k])
                .filter(|&p| p != NONE)
                .map(|p| row_of[p as usize])
                .filter(|&r| r != NONE)
                .map(|r| r as usize)
            else {
                continue;
            };
            let row_gutters = (row_gutters != NONE).then_some(row_gutters);
            let show_connector = bits & frame::SHOW_CONNECTOR != 0;
            let is_last = bits & frame::IS_LAST != 0;
            let virtual_child = bits & frame::VIRTUAL_CHILD != 0;
            rows[row] = PiRow {
                indent,
                show_connector,
                is_last,
                is_virtual_root_child: virtual_child,
                gutters: row_gutters,
                foldable: false,
            };
            let kids = children(k);
            let later = more(k);
            let multiple = kids.len() + later > 1;
            let frame = (indent, row_gutters.unwrap_or(NONE), bits);
            let (child_indent, child_gutters, child_bits) =
                pi_child_frame(frame, multiple, multiple_roots, &mut gutters);
            if let ([c], 0) = (kids, later) {
                only_child = Some((*c, child_indent, child_gutters, child_bits | frame::IS_LAST));
                continue;
            }
            for (i, &c) in kids.iter().enumerate().rev() {
                let last = if i + 1 == kids.len() && later == 0 {
                    frame::IS_LAST
                } else {
                    0
                };
                stack.push((c, child_indent, child_gutters, child_bits | last));
            }
        }
        (rows, gutters)
    };
    let parents = || {
        let mut parent_row = Vec::with_capacity(visible.len());
        let mut foldable = Vec::with_capacity(visible.len());
        for (own, &found) in found_of.iter().enumerate() {
            let k = model.key_at(visible[own]);
            let kids = children(k).len() + more(k);
            // Drawn as pi draws it (a self-parented entry counts itself as a child there).
            foldable.push(
                kids > 0
                    && match found {
                        NULL => true,
                        p => children(p as usize).len() + more(p as usize) > 1,
                    },
            );
            parent_row.push(
                Some(found)
                    .filter(|&p| p != NULL)
                    .map(|p| filtered[p as usize])
                    .filter(|&pp| pp != NONE)
                    .map(|pp| row_of[pp as usize])
                    .filter(|&r| r != NONE && r as usize != own)
                    .unwrap_or(NONE),
            );
        }
        // For clients the parent row is a row above: where ids repeat, pi's by-id parent can name a
        // later copy; those rows take their nearest visible ancestor in the walk instead.
        let later = |own: usize, p: u32| p != NONE && p as usize > own;
        if parent_row.iter().enumerate().any(|(own, &p)| later(own, p)) {
            let walked = visible_parents(model, visible, row_of);
            for (own, p) in parent_row.iter_mut().enumerate() {
                if later(own, *p) {
                    *p = walked[own];
                }
            }
        }
        let mut child_rows = vec![0u32; visible.len()];
        for &p in parent_row.iter().filter(|&&p| p != NONE) {
            child_rows[p as usize] += 1;
        }
        (parent_row, child_rows, foldable)
    };
    // A prefix model builds only the window's rows: their parents and child counts (a row's
    // children are its key's visible children, with those past the prefix) are all it reads.
    let parents_of_built = |built: std::ops::Range<usize>| {
        let n = visible.len();
        let (mut parent_row, mut child_rows, mut foldable) =
            (vec![NONE; n], vec![0u32; n], vec![false; n]);
        for own in built.start.min(n)..built.end.min(n) {
            let found = found_of[own];
            let k = model.key_at(visible[own]);
            let kids = children(k).len() + more(k);
            foldable[own] = kids > 0
                && match found {
                    NULL => true,
                    p => children(p as usize).len() + more(p as usize) > 1,
                };
            parent_row[own] = Some(found)
                .filter(|&p| p != NULL)
                .map(|p| filtered[p as usize])
                .filter(|&pp| pp != NONE)
                .map(|pp| row_of[pp as usize])
                .filter(|&r| r != NONE && r as usize != own)
                .unwrap_or(NONE);
            child_rows[own] = kids as u32;
        }
        (parent_row, child_rows, foldable)
    };
    let ((mut rows, gutters), (parent_row, child_rows, foldable)) = match beyond {
        Some(b) => (walk(), parents_of_built(b.built.clone())),
        None if visible.len() < 4096 => (walk(), parents()),
        None => super::join(walk, parents),
    };
    for (row, foldable) in rows.iter_mut().zip(foldable) {
        row.foldable = foldable;
    }
    PiStructure {
        rows,
        gutters,
        multiple_roots,
        parent_row,
        child_rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::OpenOptions;
    use crate::synth::{self, SynthOptions};
    use crate::view::FilterMode;

    /// The filters as they read an entry's facts directly.
    fn passes_by_facts(model: &Model, pos: usize, mode: FilterMode) -> bool {
        let f = model.facts_at(pos);
        let (kind, role) = (&*f.kind, f.role.as_deref());
        if kind == "message"
            && role == Some("assistant")
            && !model.is_leaf(pos)
            && f.blank_assistant
        {
            return false;
        }
        let settings = crate::facts::is_settings(kind, model.dialect);
        match mode {
            FilterMode::UserOnly => match model.dialect {
                Dialect::Pi => kind == "message" && role == Some("user"),
                Dialect::Omp => f.user_request,
            },
            FilterMode::NoTools => !(settings || (kind == "message" && role == Some("toolResult"))),
            FilterMode::LabeledOnly => model.label(pos).is_some(),
            FilterMode::All => true,
            FilterMode::Default => !settings,
        }
    }

    /// A window's tool results name the same calls through the records of just their calls as
    /// through the map of every call (duplicated ids included: the call at the latest place wins).
    #[test]
    fn window_call_lookups_equal_the_whole_map() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let mut checked = 0;
        for path in crate::test_sessions::sample_sessions(dir.path()) {
            let Ok(session) = Session::open(&path, OpenOptions::default()) else {
                continue;
            };
            let model = Model::build(&session, None);
            let full = Model::build(&session, None);
            let positions: Vec<usize> = (0..model.nodes.len()).collect();
            for window in positions.chunks(37) {
                // Files whose entries came without facts (legacy versions) use the whole map.
                let Some(calls) = model.calls_for(window) else {
                    continue;
                };
                for &pos in window {
                    if !matches!(model.facts_at(pos).text, RowText::ToolResult { .. }) {
                        continue;
                    }
                    assert_eq!(
                        model.row_text_with(pos, Some(&calls)).as_str(),
                        full.row_text(pos).as_str(),
                        "{} at {pos}",
                        path.display()
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 100, "{checked}");
    }

    /// pi's search over the lower-cased strings of full chunks answers as the per-text test, with
    /// labels (which stay on the per-text path), non-ASCII texts and appended entries.
    #[test]
    fn lower_cased_search_strings_answer_as_the_texts() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let mut session = crate::test_sessions::generated_session(dir.path(), Dialect::Pi, 4000, 3);
        // Appended entries fill the first chunk: non-ASCII texts whose lower case changes length,
        // and labels (which put an entry's label before its text).
        crate::test_sessions::append_labeled(&mut session, 4300, |n| {
            format!("İSTANBUL ΣΟΦΙΑ Straße {n} Parse CONFIG")
        });
        let model = Model::build(&session, None);
        let mut fast = 0;
        for q in [
            "parse config",
            "user",
            "i̇stanbul",
            "σοφια",
            "straße",
            "a",
            "zzz",
            "config parse",
        ] {
            let query = super::super::search::Query::new(q, Dialect::Pi);
            for pos in 0..model.nodes.len() {
                let entry = model.key_entry[model.key_at(pos)] as usize;
                if model.columns.search_text(entry, Dialect::Pi).is_some() {
                    fast += 1;
                }
                assert_eq!(
                    model.search_matches(pos, &query),
                    query.matches(&model.search(pos)),
                    "{q:?} at {pos}"
                );
            }
        }
        assert!(fast > 8 * 4000, "{fast}");
    }

    /// Walking up from the leaf marks the subtrees that hold it exactly as the general walk does,
    /// for the leaf and for other entries taken as the leaf.
    #[test]
    fn the_leaf_holders_from_parent_indices_equal_the_general_walk() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let mut checked = 0;
        for path in crate::test_sessions::sample_sessions(dir.path()) {
            let Ok(session) = Session::open(&path, OpenOptions::default()) else {
                continue;
            };
            let n = session.entries().len();
            if session.plain_parents().is_none() || n == 0 {
                continue;
            }
            let tree = session.tree();
            let leaf = session.leaf_id().and_then(|id| session.index_of(id));
            for at in [leaf, Some(0), Some(n / 2), Some(n - 1), None] {
                assert_eq!(
                    holds_leaf(&session, &tree, at),
                    holds_leaf_general(n, &tree, at),
                    "{} at {at:?}",
                    path.display()
                );
            }
            checked += 1;
        }
        assert!(checked >= 20, "{checked}");
    }

    /// Flags, tool-result texts, ids and parents kept per key equal what each position's entry
    /// says, on generated sessions of both dialects (duplicated references included).
    #[test]
    fn per_key_facts_equal_the_entries() {
        for dialect in [Dialect::Pi, Dialect::Omp] {
            for (entries, seed) in [(300, 1), (2500, 7)] {
                let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
                let path = dir.path().join("s.jsonl");
                let options = SynthOptions {
                    dialect,
                    entries,
                    seed,
                };
                synth::generate_file(options, &path).unwrap_or_else(|e| panic!("{e}"));
                let session = Session::open(&path, OpenOptions::with_dialect(dialect))
                    .unwrap_or_else(|e| panic!("{e}"));
                let model = Model::build(&session, Some(Path::new("/home/me")));
                let active: std::collections::HashSet<usize> =
                    session.branch_path(None).into_iter().collect();
                let leaf = session.leaf_id().and_then(|id| session.index_of(id));
                for pos in 0..model.nodes.len() {
                    let entry = &session.entries()[model.nodes[pos].entry as usize];
                    assert_eq!(model.id(pos), entry.id());
                    assert_eq!(
                        model.label(pos),
                        entry.id().and_then(|id| session.label(id))
                    );
                    assert_eq!(
                        model.on_active_path(pos),
                        entry.id().is_some() && active.contains(&(model.nodes[pos].entry as usize))
                    );
                    assert_eq!(
                        model.is_leaf(pos),
                        Some(model.nodes[pos].entry as usize) == leaf
                    );
                    for mode in FilterMode::ALL {
                        assert_eq!(
                            crate::view::visibility::passes(model.flags_at(pos), mode, dialect),
                            passes_by_facts(&model, pos, mode),
                            "{dialect:?} {mode:?} at {pos}"
                        );
                    }
                    if let Some(id) = entry.id() {
                        assert_eq!(model.key_of(id), Some(model.key_at(pos)));
                    }
                    assert_eq!(model.kind_text(pos).as_str(), &*model.facts_at(pos).kind);
                    assert_eq!(
                        model.role_text(pos).as_deref(),
                        model.facts_at(pos).role.as_deref()
                    );
                    let text = model.row_text(pos);
                    if let RowText::ToolResult { call_id, tool_name } = &model.facts_at(pos).text {
                        let expected = match call_id.as_deref().and_then(|c| model.call_by_scan(c))
                        {
                            Some(call) => call.row_text(model.home.as_deref(), dialect).to_string(),
                            None => format!("[{tool_name}]"),
                        };
                        assert_eq!(text.as_str(), expected);
                    }
                }
                for (k, &pos) in model.key_last_pos.iter().enumerate() {
                    let pos = pos as usize;
                    let expected = match dialect {
                        Dialect::Pi => session.entries()[model.nodes[pos].entry as usize]
                            .parent
                            .id()
                            .and_then(|p| model.key_of(p)),
                        Dialect::Omp => model.nodes[pos].parent.map(|p| model.key_at(p as usize)),
                    };
                    assert_eq!(model.parent_key(k), expected);
                }
            }
        }
    }
}
