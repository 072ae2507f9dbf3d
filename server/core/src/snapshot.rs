//! A session as the conformance fixtures record it: the `reloaded` object of `expected.json`
//! (`sessionId`, `header`, `sessionName`, `leafId`, `entryIds`, `tree`, `branch`, `branchOf`,
//! `children`, `labels`, `context`, `collectForBranchSummary`), in the fixtures' shapes, so that a
//! `serde_json::Value` comparison tells whether we answer exactly as the agents do.
//!
//! `sessiontree inspect --json` prints the same object. The nested `tree` is built without
//! recursion, and nesting deeper than [`MAX_TREE_DEPTH`] is cut (the node says how many children
//! it lost), so a 100k-long chain cannot overflow the stack when the value is serialized,
//! compared or dropped.

use crate::dialect::Dialect;
use crate::entry::Parent;
use crate::session::Session;
use serde_json::{Map, Value};
use std::collections::HashSet;

/// Nesting depth of `tree` nodes beyond which children are left out (marked with
/// `"omittedChildren": <count>`). Far deeper than any real conversation's branching, and shallow
/// enough for the recursive serializer, comparison and drop of `serde_json::Value`.
pub const MAX_TREE_DEPTH: usize = 1000;

/// How many childless entries `branchOf` covers (the fixtures' harness takes the first 12).
const BRANCH_OF_LIMIT: usize = 12;

/// The text the fixtures record when `collectEntriesForBranchSummary` would never return.
pub const CYCLE_SKIP_REASON: &str = "parent cycle in file: collectEntriesForBranchSummary does not terminate";

/// The fixture snapshot of a session (every field of `reloaded` except `treeRender`).
pub fn snapshot(session: &Session) -> Value {
    let mut out = Map::new();
    out.insert("sessionId".into(), session.session_id().into());
    out.insert("header".into(), Value::Object(session.header().clone()));
    out.insert("sessionName".into(), session.session_name().map_or(Value::Null, Value::from));
    out.insert("leafId".into(), opt(session.leaf_id()));
    out.insert("entryIds".into(), Value::Array(session.entries().iter().map(|e| opt(e.id())).collect()));
    out.insert("tree".into(), tree_json(session));
    out.insert("branch".into(), ids_json(session.branch_ids(None)));
    out.insert("branchOf".into(), branch_of(session));
    out.insert("children".into(), children_json(session));
    let labels: Map<String, Value> =
        session.labels().map(|(target, state)| (target.to_owned(), Value::from(state.label.as_str()))).collect();
    out.insert("labels".into(), Value::Object(js_key_order(labels)));
    out.insert("context".into(), context_json(session));
    out.insert("collectForBranchSummary".into(), collect_json(session));
    Value::Object(out)
}

/// `buildSessionContext()` along the current branch, in the fixtures' `{state, messages,
/// rawMessages, llm}` shape.
pub fn context_json(session: &Session) -> Value {
    let path: Vec<Value> =
        session.branch_path(None).into_iter().filter_map(|i| session.entry_at(i)).map(|e| e.json()).collect();
    crate::context::build_context(session.dialect(), &path).to_fixture_json()
}

fn opt(id: Option<&str>) -> Value {
    id.map_or(Value::Null, Value::from)
}

fn ids_json(ids: Vec<Option<&str>>) -> Value {
    Value::Array(ids.into_iter().map(opt).collect())
}

/// Whether following parent ids can come back to an entry (a self-parent counts: the agents'
/// upward walks that do not treat it as a root loop on it).
pub fn has_parent_cycle(session: &Session) -> bool {
    if session.diagnostics().iter().any(|d| d.kind == crate::diagnostics::DiagnosticKind::ParentCycle) {
        return true;
    }
    session.entries().iter().any(|e| matches!((&e.parent, e.id()), (Parent::Id(p), Some(id)) if &**p == id))
}

/// Ids in file order, each once (the order a JavaScript object built from `entryIds` keeps).
fn unique_ids(session: &Session) -> Vec<&str> {
    let mut seen = HashSet::new();
    session.entries().iter().filter_map(|e| e.id()).filter(|id| seen.insert(*id)).collect()
}

fn branch_of(session: &Session) -> Value {
    let mut out = Map::new();
    for id in unique_ids(session) {
        if out.len() == BRANCH_OF_LIMIT {
            break;
        }
        if session.children(Some(id)).is_empty() {
            out.insert(id.to_owned(), ids_json(session.branch_ids(Some(id))));
        }
    }
    Value::Object(js_key_order(out))
}

fn children_json(session: &Session) -> Value {
    let entries = session.entries();
    let list = |indices: Vec<usize>| Value::Array(indices.into_iter().map(|i| opt(entries[i].id())).collect());
    let mut out = Map::new();
    out.insert("null".into(), list(session.children(None)));
    let mut idless_done = false;
    for entry in entries {
        match entry.id() {
            Some(id) if !out.contains_key(id) => {
                out.insert(id.to_owned(), list(session.children(Some(id))));
            }
            Some(_) => {}
            None if !idless_done => {
                idless_done = true;
                out.insert("undefined".into(), list(session.children_of_undefined()));
            }
            None => {}
        }
    }
    Value::Object(js_key_order(out))
}

fn collect_json(session: &Session) -> Value {
    if has_parent_cycle(session) {
        let mut skipped = Map::new();
        skipped.insert("skipped".into(), CYCLE_SKIP_REASON.into());
        return Value::Object(skipped);
    }
    let entries = session.entries();
    let n = entries.len();
    let mut targets: Vec<&str> = Vec::new();
    if n > 0 {
        for i in [0, n / 2, n - 1] {
            if let Some(id) = entries[i].id() {
                if !targets.contains(&id) {
                    targets.push(id);
                }
            }
        }
    }
    let leaf = session.leaf_id();
    let results = targets
        .into_iter()
        .map(|target| {
            let collected = session.collect_entries_for_branch_summary(leaf, target);
            let mut m = Map::new();
            m.insert("oldLeafId".into(), opt(leaf));
            m.insert("targetId".into(), target.into());
            m.insert("commonAncestorId".into(), opt(collected.common_ancestor.as_deref()));
            m.insert(
                "entries".into(),
                Value::Array(collected.entries.into_iter().map(|i| opt(entries[i].id())).collect()),
            );
            Value::Object(m)
        })
        .collect();
    Value::Array(results)
}

/// One `getTree()` node without its children: `{id, type, role?, label?, labelTimestamp?}`.
fn node_head(session: &Session, index: usize) -> Map<String, Value> {
    let entry = &session.entries()[index];
    let mut m = Map::new();
    if let Some(id) = entry.id() {
        m.insert("id".into(), id.into());
    }
    if entry.is_object {
        if let Some(kind) = entry.kind.as_deref() {
            m.insert("type".into(), kind.into());
        }
        if entry.kind() == "message" {
            if let Some(role) = entry.json().get("message").and_then(|msg| msg.get("role")).filter(|r| !r.is_null()) {
                m.insert("role".into(), role.clone());
            }
        }
    }
    if let Some(state) = entry.id().and_then(|id| session.label_state(id)) {
        m.insert("label".into(), state.label.as_str().into());
        if session.dialect() == Dialect::Pi {
            m.insert("labelTimestamp".into(), opt(state.timestamp.as_deref()));
        }
    }
    m
}

/// `getTree()` as nested JSON, built bottom-up with an explicit stack. A node reached again on its
/// own path (possible only through duplicated ids) is emitted without children instead of looping.
fn tree_json(session: &Session) -> Value {
    let tree = session.tree();
    // Frames: (node, depth, next child position, children built so far).
    struct Frame {
        node: usize,
        depth: usize,
        next: usize,
        built: Vec<Value>,
    }
    let mut roots_out = Vec::with_capacity(tree.roots.len());
    let mut on_path: HashSet<usize> = HashSet::new();
    for &root in &tree.roots {
        let mut stack = vec![Frame { node: root, depth: 1, next: 0, built: Vec::new() }];
        on_path.insert(root);
        while let Some(top) = stack.last_mut() {
            let kids = tree.children(top.node);
            if top.depth >= MAX_TREE_DEPTH && !kids.is_empty() {
                top.next = kids.len();
            }
            if top.next < kids.len() {
                let child = kids[top.next];
                top.next += 1;
                let depth = top.depth + 1;
                if on_path.contains(&child) {
                    let mut head = node_head(session, child);
                    head.insert("children".into(), Value::Array(Vec::new()));
                    top.built.push(Value::Object(head));
                } else {
                    on_path.insert(child);
                    stack.push(Frame { node: child, depth, next: 0, built: Vec::new() });
                }
                continue;
            }
            let Some(done) = stack.pop() else { break };
            on_path.remove(&done.node);
            let mut head = node_head(session, done.node);
            let total = tree.children(done.node).len();
            let omitted = total.saturating_sub(done.built.len());
            head.insert("children".into(), Value::Array(done.built));
            if omitted > 0 && done.depth >= MAX_TREE_DEPTH {
                head.insert("omittedChildren".into(), omitted.into());
            }
            match stack.last_mut() {
                Some(parent) => parent.built.push(Value::Object(head)),
                None => roots_out.push(Value::Object(head)),
            }
        }
    }
    Value::Array(roots_out)
}

/// Reorders keys as a JavaScript object holds them: array-index keys (canonical numbers below
/// 2³² − 1) first in ascending order, then the others in insertion order. The fixtures' objects
/// were made by JavaScript, so ids such as `"46995939"` come first there.
pub fn js_key_order(map: Map<String, Value>) -> Map<String, Value> {
    fn index_of(key: &str) -> Option<u32> {
        if key.is_empty() || (key.len() > 1 && key.starts_with('0')) || !key.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        key.parse::<u32>().ok().filter(|&n| n != u32::MAX)
    }
    if !map.keys().any(|k| index_of(k).is_some()) {
        return map;
    }
    let mut numeric: Vec<(u32, String, Value)> = Vec::new();
    let mut rest: Vec<(String, Value)> = Vec::new();
    for (k, v) in map {
        match index_of(&k) {
            Some(n) => numeric.push((n, k, v)),
            None => rest.push((k, v)),
        }
    }
    numeric.sort_by_key(|(n, _, _)| *n);
    numeric.into_iter().map(|(_, k, v)| (k, v)).chain(rest).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn javascript_key_order() {
        let mut m = Map::new();
        m.insert("b".into(), 1.into());
        m.insert("46995939".into(), 2.into());
        m.insert("007".into(), 3.into());
        m.insert("12".into(), 4.into());
        let keys: Vec<String> = js_key_order(m).keys().cloned().collect();
        assert_eq!(keys, ["12", "46995939", "b", "007"]);
    }
}
