//! The flattened tree both selectors start from, built without recursion: pre-order with the
//! leaf-containing root and child first, the active path (leaf to root), each entry's facts read
//! once, omp's structural depth / sibling data over the whole tree, and pi's visual structure
//! (indent, connectors, gutters) re-derived over the visible rows only.

pub(crate) mod pi_layout;
mod reads;
pub(crate) mod tool_results;

use crate::dialect::Dialect;
use crate::facts::flags::flag;
use crate::session::columns::ViewColumns;
use crate::session::{Session, NO_PARENT};
use crate::tree::Tree;
use pi_layout::{Gutter, PiRow};
use std::borrow::Cow;
use std::collections::HashMap;
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

pub(crate) use tool_results::CallMap;

/// No key / no entry / no row.
pub(crate) const NONE: u32 = u32::MAX;

/// The flattened session.
#[derive(Debug)]
pub(crate) struct Model {
    pub dialect: Dialect,
    pub nodes: Vec<Node>,
    /// Every position's key: the entry it shows, numbered by first position (one key for all
    /// id-less entries, like JavaScript's `undefined`, since the tree has one node for them).
    pub(super) key: Vec<u32>,
    /// key → last position holding it (pi's `entryMap`, omp's `rowByKey`).
    pub(super) key_last_pos: Vec<u32>,
    /// key → parent key ([`NONE`]: none): pi follows the entry's `parentId` (a missing parent
    /// ends the walk), omp the walk's parent of the last position.
    pub(super) key_parent: Vec<u32>,
    /// key → its [`flag`]s.
    pub flags: Vec<u16>,
    /// key → the entry it shows.
    pub key_entry: Vec<u32>,
    /// entry → its key ([`NONE`]: not in the tree).
    pub(super) key_of_entry: Vec<u32>,
    /// The session's facts and ids by entry (shared with the session, not copied).
    pub columns: ViewColumns,
    /// key → label in effect (only keys with [`flag::LABELED`]).
    pub(super) labels: HashMap<usize, Arc<str>, foldhash::fast::RandomState>,
    /// The leaf's key.
    pub(super) leaf_key: Option<usize>,
    /// id → key, made on the first lookup of an id other than the leaf's.
    pub(super) key_by_id: OnceLock<HashMap<Arc<str>, usize, foldhash::fast::RandomState>>,
    /// Tool call id (hashed) → the last (key, call) the walk saw it at, made for the first tool
    /// result row built.
    pub(super) calls: OnceLock<[CallMap; 2]>,
    pub(super) home: Option<String>,
    /// pi: gutter entries of `flattenTree`.
    pub gutters: Vec<Gutter>,
    /// The answers of recent searches by entry, for the next key.
    pub search_cache: super::search_cache::SearchCache,
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
            search_cache: Default::default(),
        };
        (model, unwalked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::RowText;
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
