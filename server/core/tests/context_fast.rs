//! `session_context` (which parses only what can matter) must equal `build_context` on the fully
//! parsed path, byte for byte: at every entry of every conformance fixture session file (both
//! dialects), and at a few dozen leaves of generated sessions of both dialects.

use serde_json::Value;
use sessiontree_core::context::{build_context, session_context};
use sessiontree_core::synth::{generate_file, SynthOptions};
use sessiontree_core::{Dialect, OpenOptions, Session};
use std::path::Path;

/// The whole context as text: state, messages and LLM messages, key order included, and the LLM
/// texts as `llm_texts` reads them (from the messages kept as text, for `session_context`).
fn text(ctx: &sessiontree_core::context::SessionContext) -> String {
    format!("{} {:?}", ctx.to_fixture_json(), ctx.llm_texts())
}

/// Checks `session_context` against `build_context` at `leaf`; returns a description on mismatch.
fn compare(session: &Session, leaf: Option<&str>) -> Option<String> {
    let path: Vec<Value> = session
        .branch_path(leaf)
        .into_iter()
        .filter_map(|i| session.entry_at(i))
        .map(|e| e.json())
        .collect();
    let expected = text(&build_context(session.dialect(), &path));
    let fast = text(&session_context(session, leaf));
    (expected != fast).then(|| format!("leaf {leaf:?}:\n  full {expected}\n  fast {fast}"))
}

/// Every leaf of a session: the default one and every entry id.
fn check_all_leaves(session: &Session, label: &str, failures: &mut Vec<String>) -> usize {
    let mut leaves: Vec<Option<&str>> = vec![None];
    leaves.extend(session.entries().iter().filter_map(|e| e.id()).map(Some));
    for &leaf in &leaves {
        if let Some(d) = compare(session, leaf) {
            failures.push(format!("{label} {d}"));
        }
    }
    leaves.len()
}

#[test]
fn fast_context_equals_full_context_on_every_fixture_leaf() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let files = sessiontree_testkit::fixtures::session_files();
    let mut failures = Vec::new();
    let (mut sessions, mut leaves) = (0, 0);
    for (n, file) in files.iter().enumerate() {
        let parent = file.parent().and_then(Path::file_name);
        let dialects: &[Dialect] = match parent.and_then(|p| p.to_str()) {
            Some("pi") => &[Dialect::Pi],
            Some("omp") => &[Dialect::Omp],
            _ => &[Dialect::Pi, Dialect::Omp],
        };
        for &dialect in dialects {
            // Opening may migrate or rewrite a file, so work on a copy.
            let copy = tmp.path().join(format!("{n}-{dialect:?}.jsonl"));
            std::fs::copy(file, &copy).expect("copy fixture");
            let Ok(session) = Session::open(&copy, OpenOptions::with_dialect(dialect)) else {
                continue;
            };
            sessions += 1;
            leaves += check_all_leaves(
                &session,
                &format!("{} {dialect:?}", file.display()),
                &mut failures,
            );
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches, first: {}",
        failures.len(),
        failures[0]
    );
    assert!(
        sessions > 50 && leaves > 500,
        "{sessions} sessions, {leaves} leaves"
    );
}

#[test]
fn fast_context_equals_full_context_on_generated_sessions() {
    let tmp = tempfile::tempdir().expect("tempdir");
    for dialect in [Dialect::Pi, Dialect::Omp] {
        for seed in [1, 7] {
            let file = tmp.path().join(format!("{dialect:?}-{seed}.jsonl"));
            let options = SynthOptions {
                dialect,
                entries: 2_000,
                seed,
            };
            generate_file(options, &file).expect("generate");
            let session = Session::open(&file, OpenOptions::with_dialect(dialect)).expect("open");
            let ids: Vec<&str> = session.entries().iter().filter_map(|e| e.id()).collect();
            let mut leaves: Vec<Option<&str>> = vec![None];
            leaves.extend(ids.iter().step_by(ids.len() / 40 + 1).map(|id| Some(*id)));
            leaves.extend(ids.iter().rev().take(10).map(|id| Some(*id)));
            for leaf in leaves {
                if let Some(d) = compare(&session, leaf) {
                    panic!("{dialect:?} seed {seed} {d}");
                }
            }
        }
    }
}

/// Before a compaction's kept range the fast build reads only the entries that can set state.
/// Here each kind of such entry stands there and changes omp's context (dropping it from the path
/// gives another one), so a kind the fast build skipped would fail the comparison.
#[test]
fn every_kind_of_state_entry_before_the_kept_range_is_read() {
    let json = |text: &str| serde_json::from_str::<Value>(text).expect("json");
    let assistant = |provider: &str, model: &str| {
        json(&format!(
            r#"{{"type":"message","message":{{"role":"assistant","provider":"{provider}","model":"{model}","stopReason":"stop","content":[{{"type":"text","text":"a"}}],"timestamp":1}}}}"#
        ))
    };
    let notes = json(
        r#"{"type":"custom","customType":"experimental_context_notes","data":{"version":1,"text":"- the plan"}}"#,
    );
    let reset = json(r#"{"type":"reset_boundary"}"#);
    let state = vec![
        assistant("early", "first"),
        json(r#"{"type":"thinking_level_change","thinkingLevel":"high"}"#),
        json(r#"{"type":"service_tier_change","serviceTier":"priority"}"#),
        json(r#"{"type":"mode_change","mode":"plan","data":{"step":1}}"#),
        json(r#"{"type":"model_change","model":"small/one","role":"smol"}"#),
        json(r#"{"type":"ttsr_injection","injectedRules":["rule"]}"#),
        // A `/clear` hides the notes before it.
        notes.clone(),
        reset.clone(),
    ];
    let tmp = tempfile::tempdir().expect("tempdir");
    check_state_entries(tmp.path(), "all", &state, 0..state.len() - 2);
    check_state_entries(tmp.path(), "reset", &state, state.len() - 1..state.len());
    check_state_entries(tmp.path(), "notes", &[reset, notes], 1..2);
}

/// Writes a session whose path holds `state` before a compaction's kept range, checks the fast
/// build against the full one at every leaf in both dialects, and that dropping any of
/// `state[must_matter]` changes omp's context at the leaf.
fn check_state_entries(
    dir: &Path,
    name: &str,
    state: &[Value],
    must_matter: std::ops::Range<usize>,
) {
    let user = serde_json::json!({"type": "message",
        "message": {"role": "user", "content": "a request", "timestamp": 1}});
    let assistant = serde_json::json!({"type": "message", "message": {"role": "assistant",
        "provider": "late", "model": "second", "stopReason": "stop",
        "content": [{"type": "text", "text": "an answer"}], "timestamp": 2}});
    let mut body = vec![user.clone()];
    body.extend(state.iter().cloned());
    let first_kept = body.len() + 2;
    body.extend([assistant, user.clone(), user.clone()]);
    body.push(serde_json::json!({"type": "compaction", "summary": "s",
        "firstKeptEntryId": format!("e{first_kept}"), "tokensBefore": 10}));
    body.push(user);
    let mut lines = vec![
        serde_json::json!({"type": "session", "version": 3, "id": "s",
        "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/"}),
    ];
    for (n, mut entry) in body.into_iter().enumerate() {
        if let Some(entry) = entry.as_object_mut() {
            let parent = n.checked_sub(1).map(|p| Value::from(format!("e{p}")));
            entry.insert("id".into(), Value::from(format!("e{n}")));
            entry.insert("parentId".into(), parent.unwrap_or(Value::Null));
            entry.insert(
                "timestamp".into(),
                Value::from(format!("2026-01-01T00:00:{:02}.000Z", n + 1)),
            );
        }
        lines.push(entry);
    }
    let file = dir.join(format!("{name}.jsonl"));
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, text).expect("write");
    for dialect in [Dialect::Pi, Dialect::Omp] {
        let session = Session::open(&file, OpenOptions::with_dialect(dialect)).expect("open");
        let mut failures = Vec::new();
        check_all_leaves(&session, &format!("{name} {dialect:?}"), &mut failures);
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
    let path = &lines[1..];
    let full = self::text(&build_context(Dialect::Omp, path));
    for k in must_matter {
        let mut without = path.to_vec();
        without.remove(k + 1);
        assert_ne!(
            self::text(&build_context(Dialect::Omp, &without)),
            full,
            "{name}: dropping {} leaves omp's context as it was",
            state[k]
        );
    }
}
