//! Property tests: random sequences of the agents' operations (appends of every kind, labels set
//! and cleared, branches, resets, branch summaries, names, branched sessions and reloads), in both
//! dialects, on a real file, against a small in-memory model. After every step: the tree is
//! acyclic, ids are unique, a reload equals the live state (raw lines, labels; the leaf after a
//! reload is the last entry), labels resolve the same, context building does not panic, and the
//! file holds whole lines only.
//!
//! `PROPTEST_CASES` sets the number of cases (default 64).

#![allow(clippy::print_stdout, clippy::print_stderr)]

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{json, Value};
use sessiontree_core::context::build_context;
use sessiontree_core::diagnostics::DiagnosticKind;
use sessiontree_core::ids::RandomIds;
use sessiontree_core::session::{CompactionArgs, CustomMessageArgs, FileState, SyncPolicy};
use sessiontree_core::view::{compute_rows, FilterMode, ViewState};
use sessiontree_core::{Dialect, OpenOptions, Session};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Debug, Clone)]
enum Op {
    Message(u8, String),
    Label(usize, Option<String>),
    Model(String),
    Thinking(Option<String>),
    Custom(String),
    CustomMessage(String, bool),
    Compaction(usize, String),
    Branch(usize),
    Reset,
    BranchWithSummary(Option<usize>, String),
    Name(String),
    Branched(usize),
    Reload,
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,12}",
        "(?s).{0,12}",
        Just("\u{1b}[31mred\u{1b}[0m\r\n\t\"\\".to_owned()),
        Just("\u{2028}\u{2029}\u{feff}😀".to_owned()),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u8..5, text()).prop_map(|(r, t)| Op::Message(r, t)),
        2 => (any::<usize>(), prop::option::of(text())).prop_map(|(i, l)| Op::Label(i, l)),
        1 => "[a-z0-9-]{1,8}".prop_map(Op::Model),
        1 => prop::option::of("(off|low|high)").prop_map(Op::Thinking),
        1 => text().prop_map(Op::Custom),
        1 => (text(), any::<bool>()).prop_map(|(t, d)| Op::CustomMessage(t, d)),
        1 => (any::<usize>(), text()).prop_map(|(i, t)| Op::Compaction(i, t)),
        2 => any::<usize>().prop_map(Op::Branch),
        1 => Just(Op::Reset),
        1 => (prop::option::of(any::<usize>()), text()).prop_map(|(i, t)| Op::BranchWithSummary(i, t)),
        1 => "[A-Za-z][A-Za-z0-9 ]{0,10}".prop_map(Op::Name),
        1 => any::<usize>().prop_map(Op::Branched),
        1 => Just(Op::Reload),
    ]
}

/// The model: entries in file order (id, parent, type), labels in the agents' map order, the leaf.
#[derive(Debug, Clone, Default)]
struct Model {
    entries: Vec<(String, Option<String>, String)>,
    labels: Vec<(String, String)>,
    leaf: Option<String>,
}

impl Model {
    fn push(&mut self, id: String, kind: &str) {
        self.entries
            .push((id.clone(), self.leaf.clone(), kind.to_owned()));
        self.leaf = Some(id);
    }
    fn pick(&self, i: usize) -> Option<String> {
        if self.entries.is_empty() {
            None
        } else {
            Some(self.entries[i % self.entries.len()].0.clone())
        }
    }
    fn set_label(&mut self, target: &str, label: Option<&str>) {
        match label.filter(|l| !l.is_empty()) {
            Some(l) => match self.labels.iter_mut().find(|(t, _)| t == target) {
                Some(slot) => slot.1 = l.to_owned(),
                None => self.labels.push((target.to_owned(), l.to_owned())),
            },
            None => self.labels.retain(|(t, _)| t != target),
        }
    }
    fn path(&self, from: &str) -> Vec<usize> {
        let mut out = Vec::new();
        let mut cursor = Some(from.to_owned());
        while let Some(id) = cursor {
            let Some(i) = self.entries.iter().position(|e| e.0 == id) else {
                break;
            };
            out.push(i);
            cursor = self.entries[i].1.clone();
        }
        out.reverse();
        out
    }
}

fn options(dialect: Option<Dialect>) -> OpenOptions {
    OpenOptions {
        dialect,
        ids: Box::new(RandomIds),
        sync: SyncPolicy::None,
        ..OpenOptions::default()
    }
}

fn fail(msg: String) -> TestCaseError {
    TestCaseError::fail(msg)
}

fn check(session: &Session, model: &Model, dialect: Dialect) -> Result<(), TestCaseError> {
    // Ids unique, entries equal to the model.
    let ids: Vec<&str> = session.entries().iter().filter_map(|e| e.id()).collect();
    prop_assert_eq!(ids.len(), session.entries().len(), "every entry has an id");
    prop_assert_eq!(
        ids.iter().collect::<HashSet<_>>().len(),
        ids.len(),
        "ids are unique"
    );
    let model_ids: Vec<&str> = model.entries.iter().map(|e| e.0.as_str()).collect();
    prop_assert_eq!(&ids, &model_ids);
    for (entry, (_, parent, kind)) in session.entries().iter().zip(&model.entries) {
        prop_assert_eq!(entry.parent.id(), parent.as_deref());
        prop_assert_eq!(entry.kind(), kind.as_str());
    }
    prop_assert_eq!(
        session.leaf_id(),
        model.leaf.as_deref(),
        "leaf; entries {:?}",
        model.entries
    );
    // Acyclic: every parent chain ends within n steps.
    let n = session.entries().len();
    for entry in session.entries() {
        let mut steps = 0;
        let mut cursor = entry.parent.id().map(str::to_owned);
        while let Some(p) = cursor {
            steps += 1;
            if steps > n {
                return Err(fail(format!("parent cycle through {p}")));
            }
            cursor = session
                .entry(&p)
                .and_then(|e| e.parent.id().map(str::to_owned));
        }
    }
    // Labels resolve as the model says.
    let labels: Vec<(String, String)> = session
        .labels()
        .map(|(t, l)| (t.to_owned(), l.label.clone()))
        .collect();
    prop_assert_eq!(&labels, &model.labels);
    for (target, label) in &model.labels {
        prop_assert_eq!(session.label(target), Some(label.as_str()));
    }
    // Context building never panics, on the branch and from every entry.
    let path: Vec<Value> = session
        .branch_path(None)
        .into_iter()
        .map(|i| session.entries()[i].json())
        .collect();
    let _ = build_context(dialect, &path).llm_messages();
    // The row renderer never panics, whatever the filter, search, selection and size.
    let selected = model.entries.first().map(|e| e.0.clone());
    for (filter, search, width, height) in [
        (FilterMode::Default, "", 80, 0),
        (FilterMode::NoTools, "e", 1, 1),
        (FilterMode::UserOnly, "\u{1b}[", 3, 2),
        (FilterMode::LabeledOnly, "red 😀", 200, 50),
        (FilterMode::All, "\"", 40, 7),
    ] {
        let state = ViewState {
            filter,
            search: search.to_owned(),
            selected: selected.clone(),
            width,
            height,
        };
        let view = compute_rows(session, &state, None);
        let _ = view.text_lines();
    }
    // The file: whole lines only, and a reload equals the live state.
    if let FileState::Written { path, .. } = session.file_state() {
        let bytes = std::fs::read(path).map_err(|e| fail(e.to_string()))?;
        prop_assert!(bytes.ends_with(b"\n"), "the file ends with a newline");
        for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            prop_assert!(
                serde_json::from_slice::<Value>(line).is_ok(),
                "every line is JSON: {:?}",
                String::from_utf8_lossy(line)
            );
        }
        let reloaded = Session::open(path, options(None)).map_err(|e| fail(e.to_string()))?;
        prop_assert_eq!(reloaded.dialect(), dialect, "the dialect is detected again");
        let live: Vec<String> = session
            .entries()
            .iter()
            .map(|e| e.raw().into_owned())
            .collect();
        let again: Vec<String> = reloaded
            .entries()
            .iter()
            .map(|e| e.raw().into_owned())
            .collect();
        prop_assert_eq!(live, again, "a reload holds the same lines");
        prop_assert_eq!(reloaded.leaf_id(), ids.last().copied());
        let relabels: Vec<(String, String)> = reloaded
            .labels()
            .map(|(t, l)| (t.to_owned(), l.label.clone()))
            .collect();
        prop_assert_eq!(&relabels, &labels);
        prop_assert_eq!(reloaded.session_name(), session.session_name());
        // Only the orphans a branched session inherits from the agents' rule may be reported.
        for d in reloaded.diagnostics() {
            prop_assert_eq!(d.kind, DiagnosticKind::Orphan, "{:?}", d);
        }
    } else {
        return Err(fail("the session should be on disk".into()));
    }
    Ok(())
}

fn message(role: u8, text: &str) -> Value {
    match role {
        0 => json!({"role": "user", "content": text, "timestamp": 1}),
        1 => json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": text},
            {"type": "text", "text": text},
            {"type": "toolCall", "id": "call_1", "name": "bash", "arguments": {"command": text}}
        ], "api": "x", "provider": "p", "model": "m", "stopReason": "toolUse", "timestamp": 2,
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}}),
        2 => json!({"role": "toolResult", "toolCallId": "call_1", "toolName": "bash",
                    "content": [{"type": "text", "text": text}], "isError": false, "timestamp": 3}),
        3 => json!({"role": "bashExecution", "command": text, "output": text, "exitCode": 0,
                    "cancelled": false, "truncated": false, "timestamp": 4}),
        _ => json!({"role": "custom", "customType": "note", "content": text, "display": true,
                    "timestamp": 5}),
    }
}

static FILES: AtomicUsize = AtomicUsize::new(0);

fn run(dialect: Dialect, dir: &Path, ops: &[Op]) -> Result<(), TestCaseError> {
    let sub: PathBuf = dir.join(format!("case{}", FILES.fetch_add(1, Ordering::Relaxed)));
    let mut session = Session::create(dialect, "/work", Some(&sub), options(Some(dialect)));
    let mut model = Model::default();
    // The agents write the file with the first assistant message.
    for role in [0, 1] {
        let id = session
            .append_message(message(role, "hello"))
            .map_err(|e| fail(e.to_string()))?;
        model.push(id, "message");
    }
    check(&session, &model, dialect)?;
    for op in ops {
        // A branched session from a root label entry holds no entries: nothing to pick then.
        let needs_pick = matches!(
            op,
            Op::Label(..) | Op::Compaction(..) | Op::Branch(_) | Op::Branched(_)
        );
        if needs_pick && model.entries.is_empty() {
            continue;
        }
        let err = |e: sessiontree_core::Error| fail(format!("{op:?}: {e}"));
        match op {
            Op::Message(role, t) => {
                let id = session.append_message(message(*role, t)).map_err(err)?;
                model.push(id, "message");
            }
            Op::Label(i, label) => {
                let target = model.pick(*i).unwrap();
                let id = session
                    .append_label_change(&target, label.as_deref())
                    .map_err(err)?;
                model.push(id, "label");
                model.set_label(&target, label.as_deref());
            }
            Op::Model(m) => {
                let id = session
                    .append_model_change("prov", m, Some("default"), false)
                    .map_err(err)?;
                model.push(id, "model_change");
            }
            Op::Thinking(level) => {
                let id = session
                    .append_thinking_level_change(level.as_deref(), None)
                    .map_err(err)?;
                model.push(id, "thinking_level_change");
            }
            Op::Custom(t) => {
                let id = session
                    .append_custom("ext", Some(json!({ "t": t })))
                    .map_err(err)?;
                model.push(id, "custom");
            }
            Op::CustomMessage(t, display) => {
                let id = session
                    .append_custom_message(CustomMessageArgs {
                        custom_type: Some("ext".into()),
                        content: Some(t.as_str().into()),
                        display: Some((*display).into()),
                        ..CustomMessageArgs::default()
                    })
                    .map_err(err)?;
                model.push(id, "custom_message");
            }
            Op::Compaction(i, t) => {
                let kept = model.pick(*i).unwrap();
                let id = session
                    .append_compaction(CompactionArgs {
                        summary: t.clone(),
                        first_kept_entry_id: kept,
                        tokens_before: 1000.into(),
                        ..CompactionArgs::default()
                    })
                    .map_err(err)?;
                model.push(id, "compaction");
            }
            Op::Branch(i) => {
                let target = model.pick(*i).unwrap();
                session.branch(&target).map_err(err)?;
                model.leaf = Some(target);
            }
            Op::Reset => {
                session.reset_leaf();
                model.leaf = None;
            }
            Op::BranchWithSummary(i, t) => {
                let target = i.and_then(|i| model.pick(i));
                let id = session
                    .branch_with_summary(target.as_deref(), t, None, Some(false))
                    .map_err(err)?;
                model.leaf = target;
                model.push(id, "branch_summary");
            }
            Op::Name(name) => {
                if let Some(id) = session.set_name(name).map_err(err)? {
                    let kind = match dialect {
                        Dialect::Pi => "session_info",
                        Dialect::Omp => "title_change",
                    };
                    model.push(id, kind);
                }
            }
            Op::Branched(i) => {
                let target = model.pick(*i).unwrap();
                let mut fork = session
                    .create_branched_session(&target, Box::new(RandomIds))
                    .map_err(err)?;
                fork.ensure_on_disk().map_err(err)?;
                let mut next = Model::default();
                // The entries keep their lines as written (as the agents copy them): one whose
                // parent was a dropped label entry points at an id the fork lacks.
                for i in model.path(&target) {
                    let (id, parent, kind) = &model.entries[i];
                    if kind != "label" {
                        next.entries
                            .push((id.clone(), parent.clone(), kind.clone()));
                        next.leaf = Some(id.clone());
                    }
                }
                let kept: HashSet<&str> = next.entries.iter().map(|e| e.0.as_str()).collect();
                let carried: Vec<(String, String)> = model
                    .labels
                    .iter()
                    .filter(|(t, _)| kept.contains(t.as_str()))
                    .cloned()
                    .collect();
                let fork_entries = fork.entries();
                let base = next.entries.len();
                prop_assert_eq!(fork_entries.len(), base + carried.len());
                for (j, (target, label)) in carried.into_iter().enumerate() {
                    let id = fork_entries[base + j].id().unwrap().to_owned();
                    next.push(id, "label");
                    next.set_label(&target, Some(&label));
                }
                prop_assert_ne!(fork.path(), session.path());
                session = fork;
                model = next;
            }
            Op::Reload => {
                let path = session.path().unwrap().to_path_buf();
                session = Session::open(&path, options(None)).map_err(err)?;
                model.leaf = model.entries.last().map(|e| e.0.clone());
            }
        }
        check(&session, &model, dialect)?;
    }
    Ok(())
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

fn property(dialect: Dialect) {
    let dir = tempfile::tempdir().unwrap();
    let cases = cases();
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let steps = std::sync::atomic::AtomicUsize::new(0);
    runner
        .run(&prop::collection::vec(op(), 1..40), |ops| {
            steps.fetch_add(ops.len(), Ordering::Relaxed);
            run(dialect, dir.path(), &ops)
        })
        .unwrap();
    println!(
        "properties ({dialect:?}): {cases} cases, {} operations, all checks held after every step",
        steps.load(Ordering::Relaxed)
    );
}

#[test]
fn random_operations_pi() {
    property(Dialect::Pi);
}

#[test]
fn random_operations_omp() {
    property(Dialect::Omp);
}

/// One line of a generated file: valid entries (ids and parents from a small pool, so duplicates,
/// orphans and cycles happen), headers of every version, and junk.
fn piece() -> impl Strategy<Value = Vec<u8>> {
    let id = || prop::sample::select(vec!["a1", "b2", "c3", "d4", "e5"]);
    prop_oneof![
        4 => (id(), prop::option::of(id()), 0u8..4, text()).prop_map(|(id, parent, kind, t)| {
            let kind = ["message", "label", "compaction", "branch_summary"][kind as usize];
            serde_json::to_vec(&json!({
                "type": kind, "id": id, "parentId": parent, "timestamp": "2026-01-01T00:00:00.000Z",
                "message": {"role": if t.len() % 2 == 0 { "user" } else { "assistant" }, "content": t},
                "targetId": parent, "label": t, "summary": t, "firstKeptEntryId": parent, "fromId": parent
            }))
            .unwrap()
        }),
        1 => (0u8..4).prop_map(|v| format!(
            r#"{{"type":"session","version":{v},"id":"s{v}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}}"#
        ).into_bytes()),
        1 => Just(br#"{"type":"message","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"v1"}}"#.to_vec()),
        1 => prop::collection::vec(any::<u8>(), 0..40),
        1 => prop::sample::select(vec![
            b"null".to_vec(), b"[1]".to_vec(), b"\"s\"".to_vec(), b"{".to_vec(), b"\r".to_vec(),
            b"{\"type\":\"message\",\"id\":\"x\xff\"}".to_vec(), Vec::new(),
        ]),
    ]
}

#[test]
fn arbitrary_files_load_migrate_and_render_without_panicking() {
    let dir = tempfile::tempdir().unwrap();
    let cases = cases() * 4;
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let header = br#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
    let (loaded, migrated) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let strategy = (
        any::<bool>(),
        prop::collection::vec(piece(), 0..12),
        any::<bool>(),
    );
    runner
        .run(&strategy, |(with_header, lines, torn_tail)| {
            let mut bytes = Vec::new();
            if with_header {
                bytes.extend_from_slice(header);
                bytes.push(b'\n');
            }
            for line in &lines {
                bytes.extend_from_slice(line);
                bytes.push(b'\n');
            }
            if torn_tail {
                bytes.extend_from_slice(br#"{"type":"mess"#);
            }
            let n = FILES.fetch_add(1, Ordering::Relaxed);
            let path = dir.path().join(format!("f{n}.jsonl"));
            std::fs::write(&path, &bytes).unwrap();
            if let Ok(session) = Session::open(&path, options(None)) {
                loaded.fetch_add(1, Ordering::Relaxed);
                let again = Session::open(&path, options(None)).unwrap();
                let a: Vec<String> = session
                    .entries()
                    .iter()
                    .map(|e| e.raw().into_owned())
                    .collect();
                let b: Vec<String> = again
                    .entries()
                    .iter()
                    .map(|e| e.raw().into_owned())
                    .collect();
                prop_assert_eq!(a, b, "two loads agree");
                let path_values: Vec<Value> = session
                    .branch_path(None)
                    .into_iter()
                    .map(|i| session.entries()[i].json())
                    .collect();
                let _ = build_context(session.dialect(), &path_values).llm_messages();
                let _ = session.tree();
                for filter in [FilterMode::Default, FilterMode::All] {
                    let state = ViewState {
                        filter,
                        search: "a".into(),
                        selected: None,
                        width: 60,
                        height: 10,
                    };
                    let _ = compute_rows(&session, &state, None);
                }
            }
            prop_assert_eq!(
                std::fs::read(&path).unwrap(),
                bytes.clone(),
                "reading wrote"
            );
            match sessiontree_core::migrate::migrate_file(&path, None) {
                Ok(report) if report.rewritten => {
                    migrated.fetch_add(1, Ordering::Relaxed);
                    let backup = report.backup.unwrap();
                    prop_assert_eq!(std::fs::read(&backup).unwrap(), bytes.clone(), "the backup");
                    let now = Session::open(&path, options(None));
                    prop_assert!(now.is_ok(), "the migrated file loads: {:?}", now.err());
                }
                _ => prop_assert_eq!(std::fs::read(&path).unwrap(), bytes, "untouched"),
            }
            Ok(())
        })
        .unwrap();
    println!(
        "arbitrary files: {cases} cases, {} loaded, {} migrated; no panic, reads wrote nothing, every migrate kept a backup",
        loaded.load(Ordering::Relaxed),
        migrated.load(Ordering::Relaxed)
    );
}
