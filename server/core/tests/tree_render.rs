//! Conformance of the `/tree` view: for every scenario and dialect whose expected.json has a
//! `treeRender`, open the file that produced it and compare every filter mode and search, line for
//! line, with what the real agent drew (width 120, height 40, HOME=/tmp/refgen-home).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use serde_json::Value;
use sessiontree_core::view::tree_render_fixture;
use sessiontree_core::{Dialect, OpenOptions, Session};
use std::path::{Path, PathBuf};

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// The file an L*/M* render comes from: the hand-made input, except where the agent replaced it
/// on open (pi overwrites a file without a valid header with a fresh one: M03, M05) — then the
/// file as the agent left it (`migrated.jsonl`), since our engine refuses to destroy it.
fn legacy_file(scenario: &Path, dialect: Dialect, expected: &Value) -> PathBuf {
    let input = scenario.join("input.jsonl");
    let migrated = scenario.join(dialect.as_str()).join("migrated.jsonl");
    let wiped = expected
        .pointer("/reloaded/entryIds")
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty)
        && expected.get("fileAfterOpen").and_then(Value::as_str)
            != std::fs::read_to_string(&input).ok().as_deref();
    let opens = Session::open(&input, OpenOptions::with_dialect(dialect)).is_ok();
    if (wiped || !opens) && migrated.exists() {
        migrated
    } else {
        input
    }
}

/// Compares one expected `treeRender` with ours; returns the differences.
fn compare(file: &Path, dialect: Dialect, expected: &Value, searches: &[String]) -> Vec<String> {
    let session = match Session::open(file, OpenOptions::with_dialect(dialect)) {
        Ok(s) => s,
        Err(e) => return vec![format!("cannot open {}: {e}", file.display())],
    };
    let width = expected.get("width").and_then(Value::as_u64).unwrap_or(120) as usize;
    let height = expected
        .get("terminalHeight")
        .and_then(Value::as_u64)
        .unwrap_or(40) as usize;
    let ours = tree_render_fixture(
        &session,
        searches,
        width,
        height,
        Some(Path::new("/tmp/refgen-home")),
    );
    let mut diffs = Vec::new();
    for group in ["filters", "searches"] {
        let Some(want) = expected.get(group).and_then(Value::as_object) else {
            continue;
        };
        for (key, lines) in want {
            let got = ours.get(group).and_then(|g| g.get(key));
            if !lines.is_array() || !got.is_some_and(Value::is_array) {
                if got != Some(lines) {
                    diffs.push(format!(
                        "{group}.{key}:\n    want {lines}\n    got  {got:?}"
                    ));
                }
                continue;
            }
            let want_lines: Vec<&str> = lines
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let got_lines: Vec<&str> = got
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if want_lines != got_lines {
                let mut msg = format!("{group}.{key}:");
                for i in 0..want_lines.len().max(got_lines.len()) {
                    let (w, g) = (want_lines.get(i), got_lines.get(i));
                    if w != g {
                        msg.push_str(&format!(
                            "\n    line {i}\n      want {w:?}\n      got  {g:?}"
                        ));
                    }
                }
                diffs.push(msg);
            }
        }
    }
    diffs
}

#[test]
fn tree_render_matches_the_agents() {
    let scenarios = sessiontree_testkit::fixtures::all_scenarios();
    let mut failures = Vec::new();
    for dialect in [Dialect::Pi, Dialect::Omp] {
        let (mut passed, mut failed) = (0, 0);
        for scenario in &scenarios {
            let name = scenario
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let Some(expected) = read_json(&scenario.join(dialect.as_str()).join("expected.json"))
            else {
                continue;
            };
            if expected.get("skipped").is_some() {
                continue;
            }
            let searches: Vec<String> = read_json(&scenario.join("scenario.json"))
                .and_then(|s| s.get("searches").and_then(Value::as_array).cloned())
                .unwrap_or_default()
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect();
            let legacy = name.starts_with('L') || name.starts_with('M');
            let main_file = if legacy {
                legacy_file(scenario, dialect, &expected)
            } else {
                scenario.join(dialect.as_str()).join("session.jsonl")
            };
            let cases = [
                ("reloaded", main_file),
                (
                    "branchedReloaded",
                    scenario.join(dialect.as_str()).join("branched.jsonl"),
                ),
            ];
            for (snapshot, file) in cases {
                let Some(render) = expected.get(snapshot).and_then(|s| s.get("treeRender")) else {
                    continue;
                };
                if !file.exists() {
                    continue;
                }
                let diffs = compare(&file, dialect, render, &searches);
                if diffs.is_empty() {
                    passed += 1;
                } else {
                    failed += 1;
                    failures.push(format!(
                        "{name} {dialect} {snapshot}:\n  {}",
                        diffs.join("\n  ")
                    ));
                }
            }
        }
        println!("treeRender {dialect}: {passed} passed, {failed} failed");
    }
    for f in &failures {
        println!("{f}");
    }
    assert!(
        failures.is_empty(),
        "{} treeRender mismatches",
        failures.len()
    );
}

/// A 100k-entry linear chain (and a branch at its bottom) renders without recursion, quickly.
#[test]
fn deep_chain_renders() {
    use std::io::Write;
    let Ok(dir) = tempfile::tempdir() else { return };
    for dialect in [Dialect::Pi, Dialect::Omp] {
        let path = dir.path().join(format!("deep-{dialect}.jsonl"));
        let Ok(mut file) = std::fs::File::create(&path) else {
            return;
        };
        let mut text = String::from(
            "{\"type\":\"session\",\"version\":3,\"id\":\"deep\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/tmp\"}\n",
        );
        let n = 100_000;
        for i in 0..n {
            let parent = if i == 0 {
                "null".to_owned()
            } else {
                format!("\"{:08x}\"", i - 1)
            };
            let role = if i % 2 == 0 { "user" } else { "custom" };
            text.push_str(&format!(
                "{{\"type\":\"message\",\"id\":\"{i:08x}\",\"parentId\":{parent},\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"message\":{{\"role\":\"{role}\",\"content\":\"m{i}\",\"timestamp\":1}}}}\n"
            ));
        }
        text.push_str(&format!(
            "{{\"type\":\"message\",\"id\":\"side0000\",\"parentId\":\"{:08x}\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"side\",\"timestamp\":1}}}}\n",
            n - 10
        ));
        assert!(file.write_all(text.as_bytes()).is_ok());
        drop(file);
        let Ok(session) = Session::open(&path, OpenOptions::with_dialect(dialect)) else {
            panic!("open {dialect}")
        };
        let render = tree_render_fixture(&session, &["m99".to_owned()], 120, 40, None);
        let lines = render["filters"]["default"].as_array().map_or(0, Vec::len);
        assert!(lines >= 20, "{dialect}: {render}");
    }
}
