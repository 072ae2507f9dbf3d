//! Checks `build_context` against every conformance fixture: for each scenario and dialect with a
//! session file, the context of the reloaded leaf must equal `expected.reloaded.context`
//! (state, reduced messages, raw messages, LLM messages), and likewise for `branched.jsonl` against
//! `branchedReloaded.context`. L*/M* scenarios are read from `migrated.jsonl` (the file as the
//! agent left it after opening) and compared only when its entry ids line up with the snapshot's.
//! The file reader here is deliberately tiny and self-contained.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use serde_json::{Map, Value};
use sessiontree_core::context::build_context;
use sessiontree_core::Dialect;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Entries of a session file: every parsable line except an omp title slot on the first line and
/// the `type:"session"` header. Non-object values stay (the agents keep them as id-less entries).
fn read_entries(path: &Path) -> Option<Vec<Value>> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut entries = Vec::new();
    for (index, line) in text.split('\n').enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let kind = value.get("type").and_then(Value::as_str);
        if (index == 0 && kind == Some("title")) || kind == Some("session") {
            continue;
        }
        entries.push(value);
    }
    Some(entries)
}

fn id_of(entry: &Value) -> Option<&str> {
    entry.get("id").and_then(Value::as_str)
}

/// Root-first path to `leaf` (`null` → empty, unknown → last entry), stopping at a repeated id.
fn path_to(entries: &[Value], leaf: &Value) -> Vec<Value> {
    let by_id: HashMap<&str, &Value> = entries
        .iter()
        .filter_map(|e| id_of(e).map(|id| (id, e)))
        .collect();
    let start = match leaf {
        Value::Null => return Vec::new(),
        Value::String(id) => by_id.get(id.as_str()).copied().or(entries.last()),
        _ => entries.last(),
    };
    let mut path = Vec::new();
    let mut seen = HashSet::new();
    let mut current = start;
    while let Some(entry) = current {
        if let Some(id) = id_of(entry) {
            if !seen.insert(id) {
                break;
            }
        }
        path.push(entry.clone());
        current = entry
            .get("parentId")
            .and_then(Value::as_str)
            .and_then(|p| by_id.get(p).copied());
    }
    path.reverse();
    path
}

/// The raw JSON text of each top-level field of the object in `text`, without parsing it: some
/// snapshots nest `tree` deeper than serde_json's recursion limit, and only a few fields are needed.
fn top_level_fields(text: &str) -> Vec<(String, &str)> {
    let bytes = text.as_bytes();
    let mut fields = Vec::new();
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let mut key: Option<String> = None;
    let mut key_start = 0;
    let mut value_start = None;
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => {
                    in_string = false;
                    if depth == 1 && value_start.is_none() {
                        key = serde_json::from_str(&text[key_start..=i]).ok();
                    }
                }
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                if depth == 1 && value_start.is_none() {
                    key_start = i;
                }
            }
            b':' if depth == 1 && value_start.is_none() => value_start = Some(i + 1),
            b'{' | b'[' => depth += 1,
            // A comma or the closing brace at the top level ends the current field's value.
            b'}' | b']' | b',' => {
                if depth == 1 {
                    if let (Some(k), Some(start)) = (key.take(), value_start.take()) {
                        fields.push((k, text[start..i].trim()));
                    }
                }
                if b != b',' {
                    depth = depth.saturating_sub(1);
                }
            }
            _ => {}
        }
    }
    fields
}

/// The fields of `text` named in `wanted`, parsed; the others are skipped unparsed.
fn parse_fields(text: &str, wanted: &[&str]) -> Option<Value> {
    let mut map = Map::new();
    for (key, raw) in top_level_fields(text) {
        if wanted.contains(&key.as_str()) {
            let value = if matches!(key.as_str(), "reloaded" | "branchedReloaded") {
                parse_fields(raw, &["context", "leafId", "entryIds"])?
            } else {
                serde_json::from_str(raw).ok()?
            };
            map.insert(key, value);
        }
    }
    Some(Value::Object(map))
}

/// A readable description of where two JSON values first differ.
fn first_difference(path: &str, expected: &Value, actual: &Value) -> Option<String> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            let ek: Vec<&String> = e.keys().collect();
            let ak: Vec<&String> = a.keys().collect();
            for (k, ev) in e {
                match a.get(k) {
                    Some(av) => {
                        if let Some(d) = first_difference(&format!("{path}.{k}"), ev, av) {
                            return Some(d);
                        }
                    }
                    None => return Some(format!("{path}.{k}: missing (expected {ev})")),
                }
            }
            if ek != ak {
                return Some(format!("{path}: keys {ak:?}, expected {ek:?}"));
            }
            None
        }
        (Value::Array(e), Value::Array(a)) => {
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                if let Some(d) = first_difference(&format!("{path}[{i}]"), ev, av) {
                    return Some(d);
                }
            }
            (e.len() != a.len()).then(|| format!("{path}: {} items, expected {}", a.len(), e.len()))
        }
        _ => (expected != actual).then(|| format!("{path}: got {actual}, expected {expected}")),
    }
}

/// Compares one session file with one snapshot; `Ok(false)` when the case does not apply.
fn check(
    dialect: Dialect,
    file: &Path,
    snapshot: &Value,
    require_ids: bool,
) -> Result<bool, String> {
    let Some(expected) = snapshot.get("context") else {
        return Ok(false);
    };
    let entries = read_entries(file).ok_or_else(|| format!("cannot read {}", file.display()))?;
    let ids: Vec<Value> = entries
        .iter()
        .map(|e| e.get("id").cloned().unwrap_or(Value::Null))
        .collect();
    if snapshot
        .get("entryIds")
        .and_then(Value::as_array)
        .is_some_and(|want| *want != ids)
    {
        if require_ids {
            return Err(format!(
                "entry ids of {} differ from the snapshot's",
                file.display()
            ));
        }
        return Ok(false);
    }
    let path = path_to(&entries, snapshot.get("leafId").unwrap_or(&Value::Null));
    let actual = build_context(dialect, &path).to_fixture_json();
    // Compare as the fixture records it, key order included.
    let mut diffs = Vec::new();
    for key in ["state", "messages", "rawMessages", "llm"] {
        let e = expected.get(key).unwrap_or(&Value::Null);
        let a = actual.get(key).unwrap_or(&Value::Null);
        if let Some(d) = first_difference(key, e, a) {
            diffs.push(d);
        }
        if e == a && serde_json::to_string(e).ok() != serde_json::to_string(a).ok() {
            diffs.push(format!("{key}: same values, different key order"));
        }
    }
    if diffs.is_empty() {
        Ok(true)
    } else {
        Err(diffs.join("\n    "))
    }
}

#[test]
fn context_matches_every_fixture() {
    let dirs = sessiontree_testkit::conformance_dirs();
    let mut failures = Vec::new();
    for dialect in [Dialect::Pi, Dialect::Omp] {
        let (mut passed, mut failed) = (0usize, 0usize);
        for dir in &dirs {
            let Ok(read) = std::fs::read_dir(dir) else {
                continue;
            };
            let mut scenarios: Vec<PathBuf> = read
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_dir())
                .collect();
            scenarios.sort();
            for scenario in scenarios {
                let name = scenario
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let impl_dir = scenario.join(dialect.as_str());
                let Ok(text) = std::fs::read_to_string(impl_dir.join("expected.json")) else {
                    continue;
                };
                let Some(expected) =
                    parse_fields(&text, &["skipped", "reloaded", "branchedReloaded"])
                else {
                    failed += 1;
                    failures.push(format!("{name}/{dialect}: expected.json does not parse"));
                    continue;
                };
                if expected.get("skipped").is_some() {
                    continue;
                }
                let legacy = name.starts_with('L') || name.starts_with('M');
                let main_file = if legacy {
                    impl_dir.join("migrated.jsonl")
                } else {
                    impl_dir.join("session.jsonl")
                };
                let empty = Value::Object(Map::new());
                let cases = [
                    (
                        main_file,
                        expected.get("reloaded").unwrap_or(&empty),
                        "reloaded",
                    ),
                    (
                        impl_dir.join("branched.jsonl"),
                        expected.get("branchedReloaded").unwrap_or(&empty),
                        "branchedReloaded",
                    ),
                ];
                for (file, snapshot, label) in cases {
                    if !file.is_file() {
                        continue;
                    }
                    match check(dialect, &file, snapshot, !legacy) {
                        Ok(true) => passed += 1,
                        Ok(false) => {}
                        Err(diff) => {
                            failed += 1;
                            failures.push(format!("{name}/{dialect} {label}:\n    {diff}"));
                        }
                    }
                }
            }
        }
        println!("context: {dialect} {passed} passed, {failed} failed");
    }
    if !failures.is_empty() {
        for failure in failures.iter().take(12) {
            eprintln!("{failure}");
        }
        panic!("{} context fixture(s) differ", failures.len());
    }
}
