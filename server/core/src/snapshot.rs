//! A session as the conformance fixtures record it: the `reloaded` object of `expected.json`
//! (`sessionId`, `header`, `sessionName`, `leafId`, `entryIds`, `tree`, `branch`, `branchOf`,
//! `children`, `labels`, `context`, `collectForBranchSummary`), in the fixtures' shapes, so that a
//! `serde_json::Value` comparison tells whether we answer exactly as the agents do.
//!
//! The nested `tree` is built without recursion. A `serde_json::Value` is serialized, compared and
//! dropped recursively, though, and a linear conversation of N entries nests N levels deep, so
//! [`snapshot`] cuts the tree at [`MAX_TREE_DEPTH`] levels (the deepest node then says how many
//! children it lost) — safe on any thread. `sessiontree inspect --json` wants the whole tree: it
//! uses [`snapshot_with_depth`] without a limit, writes with [`write_json`] and frees with
//! [`drop_deep`], both of which walk the value with an explicit stack.

use crate::dialect::Dialect;
use crate::entry::Parent;
use crate::session::Session;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};

/// Nesting depth of `tree` nodes beyond which [`snapshot`] leaves children out (marked with
/// `"omittedChildren": <count>`): shallow enough for serde_json's recursive serializer,
/// comparison and drop on a 2 MiB thread in a debug build.
pub const MAX_TREE_DEPTH: usize = 200;

/// How many childless entries `branchOf` covers (the fixtures' harness takes the first 12).
const BRANCH_OF_LIMIT: usize = 12;

/// The text the fixtures record when `collectEntriesForBranchSummary` would never return.
pub const CYCLE_SKIP_REASON: &str =
    "parent cycle in file: collectEntriesForBranchSummary does not terminate";

/// The fixture snapshot of a session (every field of `reloaded` except `treeRender`), with the
/// tree cut at [`MAX_TREE_DEPTH`] levels.
pub fn snapshot(session: &Session) -> Value {
    snapshot_with_depth(session, MAX_TREE_DEPTH)
}

/// [`snapshot`] with another depth limit for `tree` (`usize::MAX`: none). A deeper value must be
/// written with [`write_json`] and freed with [`drop_deep`].
pub fn snapshot_with_depth(session: &Session, max_tree_depth: usize) -> Value {
    let mut out = Map::new();
    out.insert("sessionId".into(), session.session_id().into());
    out.insert("header".into(), Value::Object(session.header().clone()));
    out.insert(
        "sessionName".into(),
        session.session_name().map_or(Value::Null, Value::from),
    );
    out.insert("leafId".into(), opt(session.leaf_id()));
    out.insert(
        "entryIds".into(),
        Value::Array(session.entries().iter().map(|e| opt(e.id())).collect()),
    );
    out.insert("tree".into(), tree_json(session, max_tree_depth.max(1)));
    out.insert("branch".into(), ids_json(session.branch_ids(None)));
    let lists = session.children_lists();
    out.insert("branchOf".into(), branch_of(session, &lists));
    out.insert("children".into(), children_json(session, &lists));
    let labels: Map<String, Value> = session
        .labels()
        .map(|(target, state)| (target.to_owned(), Value::from(state.label.as_str())))
        .collect();
    out.insert("labels".into(), Value::Object(js_key_order(labels)));
    out.insert("context".into(), context_json(session));
    out.insert("collectForBranchSummary".into(), collect_json(session));
    Value::Object(out)
}

/// `buildSessionContext()` along the current branch, in the fixtures' `{state, messages,
/// rawMessages, llm}` shape.
pub fn context_json(session: &Session) -> Value {
    crate::context::session_context(session, None).to_fixture_json()
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
    if session
        .diagnostics()
        .iter()
        .any(|d| d.kind == crate::diagnostics::DiagnosticKind::ParentCycle)
    {
        return true;
    }
    session
        .entries()
        .iter()
        .any(|e| matches!((&e.parent, e.id()), (Parent::Id(p), Some(id)) if &**p == id))
}

/// Ids in file order, each once (the order a JavaScript object built from `entryIds` keeps).
fn unique_ids(session: &Session) -> Vec<&str> {
    let mut seen = HashSet::new();
    session
        .entries()
        .iter()
        .filter_map(|e| e.id())
        .filter(|id| seen.insert(*id))
        .collect()
}

fn children_of(lists: &HashMap<Parent, Vec<usize>>, parent: Parent) -> &[usize] {
    lists.get(&parent).map_or(&[], Vec::as_slice)
}

fn branch_of(session: &Session, lists: &HashMap<Parent, Vec<usize>>) -> Value {
    let mut out = Map::new();
    for id in unique_ids(session) {
        if out.len() == BRANCH_OF_LIMIT {
            break;
        }
        if children_of(lists, Parent::Id(id.into())).is_empty() {
            out.insert(id.to_owned(), ids_json(session.branch_ids(Some(id))));
        }
    }
    Value::Object(js_key_order(out))
}

fn children_json(session: &Session, lists: &HashMap<Parent, Vec<usize>>) -> Value {
    let entries = session.entries();
    let list =
        |indices: &[usize]| Value::Array(indices.iter().map(|&i| opt(entries[i].id())).collect());
    let mut out = Map::new();
    out.insert("null".into(), list(children_of(lists, Parent::Null)));
    let mut idless_done = false;
    for entry in entries {
        match entry.id() {
            Some(id) if !out.contains_key(id) => {
                out.insert(
                    id.to_owned(),
                    list(children_of(lists, Parent::Id(id.into()))),
                );
            }
            Some(_) => {}
            None if !idless_done => {
                idless_done = true;
                out.insert(
                    "undefined".into(),
                    list(children_of(lists, Parent::Missing)),
                );
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
            m.insert(
                "commonAncestorId".into(),
                opt(collected.common_ancestor.as_deref()),
            );
            m.insert(
                "entries".into(),
                Value::Array(
                    collected
                        .entries
                        .into_iter()
                        .map(|i| opt(entries[i].id()))
                        .collect(),
                ),
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
            // The scan kept string roles; anything else is read the slow way.
            let role = match entry.role() {
                Some(role) => Some(Value::from(role)),
                None => message_role(&entry.raw()),
            };
            if let Some(role) = role {
                m.insert("role".into(), role);
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

/// `message.role` of a message entry, read without building the whole entry (the tree of a large
/// session would otherwise parse every message body).
fn message_role(raw: &str) -> Option<Value> {
    #[derive(serde::Deserialize)]
    struct Outer {
        #[serde(default)]
        message: Option<Inner>,
    }
    #[derive(serde::Deserialize)]
    struct Inner {
        #[serde(default)]
        role: Option<Value>,
    }
    match serde_json::from_str::<Outer>(raw) {
        Ok(outer) => outer.message.and_then(|m| m.role).filter(|r| !r.is_null()),
        // Duplicate keys or a non-object `message`: read it the general way.
        Err(_) => serde_json::from_str::<Value>(raw)
            .ok()?
            .get("message")
            .and_then(|m| m.get("role"))
            .filter(|r| !r.is_null())
            .cloned(),
    }
}

/// `getTree()` as nested JSON, built bottom-up with an explicit stack. A node reached again on its
/// own path (possible only through duplicated ids) is emitted without children instead of looping.
fn tree_json(session: &Session, max_depth: usize) -> Value {
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
        let mut stack = vec![Frame {
            node: root,
            depth: 1,
            next: 0,
            built: Vec::new(),
        }];
        on_path.insert(root);
        while let Some(top) = stack.last_mut() {
            let kids = tree.children(top.node);
            if top.depth >= max_depth && !kids.is_empty() {
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
                    stack.push(Frame {
                        node: child,
                        depth,
                        next: 0,
                        built: Vec::new(),
                    });
                }
                continue;
            }
            let Some(done) = stack.pop() else { break };
            on_path.remove(&done.node);
            let mut head = node_head(session, done.node);
            let total = tree.children(done.node).len();
            let omitted = total.saturating_sub(done.built.len());
            head.insert("children".into(), Value::Array(done.built));
            if omitted > 0 && done.depth >= max_depth {
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

/// Writes a value as compact JSON (JavaScript number formatting, as `crate::json::to_line`)
/// without recursion, whatever its depth.
pub fn write_json<W: std::io::Write>(value: &Value, out: &mut W) -> std::io::Result<()> {
    enum Frame<'a> {
        Array(std::slice::Iter<'a, Value>, bool),
        Object(serde_json::map::Iter<'a>, bool),
    }
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut next: Option<&Value> = Some(value);
    loop {
        if let Some(v) = next.take() {
            match v {
                Value::Array(items) => {
                    out.write_all(b"[")?;
                    stack.push(Frame::Array(items.iter(), true));
                }
                Value::Object(map) => {
                    out.write_all(b"{")?;
                    stack.push(Frame::Object(map.iter(), true));
                }
                scalar => out.write_all(crate::json::to_line(scalar).as_bytes())?,
            }
        }
        let Some(top) = stack.last_mut() else {
            return Ok(());
        };
        match top {
            Frame::Array(items, first) => match items.next() {
                Some(item) => {
                    if !std::mem::replace(first, false) {
                        out.write_all(b",")?;
                    }
                    next = Some(item);
                }
                None => {
                    out.write_all(b"]")?;
                    stack.pop();
                }
            },
            Frame::Object(entries, first) => match entries.next() {
                Some((key, item)) => {
                    if !std::mem::replace(first, false) {
                        out.write_all(b",")?;
                    }
                    out.write_all(crate::json::to_line(key).as_bytes())?;
                    out.write_all(b":")?;
                    next = Some(item);
                }
                None => {
                    out.write_all(b"}")?;
                    stack.pop();
                }
            },
        }
    }
}

/// Frees a value of any depth without recursion (serde_json's own drop recurses per level).
pub fn drop_deep(value: Value) {
    let mut pending = vec![value];
    while let Some(v) = pending.pop() {
        match v {
            Value::Array(items) => pending.extend(items),
            Value::Object(map) => pending.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// Reorders keys as a JavaScript object holds them: array-index keys (canonical numbers below
/// 2³² − 1) first in ascending order, then the others in insertion order. The fixtures' objects
/// were made by JavaScript, so ids such as `"46995939"` come first there.
pub fn js_key_order(map: Map<String, Value>) -> Map<String, Value> {
    fn index_of(key: &str) -> Option<u32> {
        if key.is_empty()
            || (key.len() > 1 && key.starts_with('0'))
            || !key.bytes().all(|b| b.is_ascii_digit())
        {
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
    numeric
        .into_iter()
        .map(|(_, k, v)| (k, v))
        .chain(rest)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_100k_chain_snapshots_without_overflowing_the_stack() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chain.jsonl");
        let mut text = String::from(
            r#"{"type":"session","version":3,"id":"deep","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#,
        );
        text.push('\n');
        let n = 100_000;
        for i in 0..n {
            let parent = if i == 0 {
                "null".to_owned()
            } else {
                format!("\"{:08x}\"", i - 1)
            };
            text.push_str(&format!(
                r#"{{"type":"custom","customType":"x","id":"{i:08x}","parentId":{parent},"timestamp":"2025-01-01T00:00:01.000Z"}}"#
            ));
            text.push('\n');
        }
        std::fs::write(&path, text).unwrap();
        let session = Session::open(&path, crate::OpenOptions::with_dialect(Dialect::Pi)).unwrap();
        let snap = snapshot(&session);
        let line = crate::json::to_line(&snap);
        assert!(line.contains("\"omittedChildren\":1"));
        assert_eq!(snap["branch"].as_array().map(Vec::len), Some(n));
        assert_eq!(snap, snap.clone());
        let mut written = Vec::new();
        write_json(&snap, &mut written).unwrap();
        assert_eq!(String::from_utf8(written).unwrap(), line);
        drop(snap);
        // The whole tree, written and freed without recursion.
        let full = snapshot_with_depth(&session, usize::MAX);
        let mut written = Vec::new();
        write_json(&full, &mut written).unwrap();
        let text = String::from_utf8(written).unwrap();
        assert!(!text.contains("omittedChildren"));
        assert!(text.contains(&format!(
            "{{\"id\":\"{:08x}\",\"type\":\"custom\",\"children\":[]}}",
            n - 1
        )));
        drop_deep(full);
    }

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
