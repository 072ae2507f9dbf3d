//! The row renderer with arbitrary trees and view states: a session file of entries of every kind
//! both selectors draw (ids from a small pool so duplicates happen, parents that are roots, earlier
//! entries, later entries, unknown ids or missing), written in either dialect, then every view of
//! it (`compute_rows`, and `TreeModel`'s rows, window, typed search and folds) under an arbitrary
//! filter, search, selection, width and height, and every selection move. Nothing may panic, and
//! the views must agree with each other:
//! - `compute_rows` equals `TreeModel::rows` (same lines, rows and selection);
//! - `rows` holds every visible row, `window` the window's rows, both the same text lines;
//! - rows point at entries of the session with their ids, parent rows come before their children;
//! - the selection and every move land on a visible row;
//! - the first window found without the model (`first_window`), where it applies, is the model's.
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Map, Value};
use sessiontree_core::context::session_context;
use sessiontree_core::view::{
    compute_rows, first_window, first_window_cut_below, FilterMode, Move, RowsView, TreeModel, ViewState,
};
use sessiontree_core::{Dialect, OpenOptions, Session};
use std::io::Write;
use std::path::Path;

/// Ids shared by drawn entries, labels and selections, so duplicates and hits happen.
const POOL: [&str; 6] = ["a1", "b2", "c3", "d4", "e5", "f6"];

/// Entry types: messages four times as often, every type the agents write in a session's body
/// (`sessiontree_core::type_names`; the header's `session` is written at the top), and one no
/// agent writes.
fn kind(u: &mut Unstructured) -> Result<&'static str> {
    const MORE: [&str; 4] = ["message", "message", "message", "unknown_kind"];
    let i = u.choose_index(BODY_TYPES.len() + MORE.len())?;
    Ok(BODY_TYPES.get(i).copied().unwrap_or_else(|| MORE[i - BODY_TYPES.len()]))
}

static BODY_TYPES: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
    sessiontree_core::type_names::ENTRY_TYPES
        .iter()
        .copied()
        .filter(|&k| k != "session")
        .collect()
});

/// Message roles: every role the agents write, and one no agent writes.
fn role(u: &mut Unstructured) -> Result<&'static str> {
    let known = sessiontree_core::type_names::ROLES;
    let i = u.choose_index(known.len() + 1)?;
    Ok(known.get(i).copied().unwrap_or("other"))
}

const TOOLS: [&str; 8] = [
    "bash", "read", "edit", "write", "grep", "glob", "ls", "task",
];

/// Short text from a small alphabet (words that searches hit), control characters, wide and
/// combining characters, or arbitrary bytes read as UTF-8 lossily.
fn text(u: &mut Unstructured) -> Result<String> {
    const PIECES: [&str; 16] = [
        "a",
        "b ",
        "tree",
        " ",
        "\n",
        "\t",
        "\r",
        "\u{1b}[31m",
        "\u{0}",
        "\u{7f}",
        "界",
        "e\u{301}",
        "😀",
        "\u{202e}",
        "/home/me/x.rs",
        "'\"",
    ];
    if u.ratio(1, 8)? {
        let n = u.int_in_range(0..=200)?;
        let bytes = u.bytes(n.min(u.len()))?;
        return Ok(String::from_utf8_lossy(bytes).into_owned());
    }
    let n = u.int_in_range(0..=6)?;
    let mut s = String::new();
    for _ in 0..n {
        s.push_str(u.choose(&PIECES)?);
    }
    Ok(s)
}

/// An id: from the pool, a fresh one, a non-string or missing.
fn id(u: &mut Unstructured, fresh: usize) -> Result<Value> {
    Ok(match u.int_in_range(0..=9)? {
        0..=2 => json!(u.choose(&POOL)?),
        3 => Value::Null,
        4 => json!(fresh),
        _ => json!(format!("{fresh:08x}")),
    })
}

/// A parent: the previous entry (mostly), an earlier or later one, a root, an unknown id, a
/// non-string, or the field missing.
fn parent(u: &mut Unstructured, ids: &[Value], i: usize) -> Result<Option<Value>> {
    Ok(match u.int_in_range(0..=15)? {
        0 => None,
        1 => Some(Value::Null),
        2 => Some(json!("zzzzzzzz")),
        3 => Some(json!(u.choose(&POOL)?)),
        4 => Some(json!(format!("{:08x}", i + 1 + u.int_in_range(0..=3)?))),
        5 => Some(json!(7)),
        6..=8 if !ids.is_empty() => Some(u.choose(ids)?.clone()),
        _ => Some(ids.last().cloned().unwrap_or(Value::Null)),
    })
}

fn content(u: &mut Unstructured, role: &str) -> Result<Value> {
    Ok(match u.int_in_range(0..=5)? {
        0 => json!(text(u)?),
        1 => Value::Null,
        2 => json!(3),
        _ => {
            let n = u.int_in_range(0..=3)?;
            let mut blocks = Vec::new();
            for _ in 0..n {
                blocks.push(match u.int_in_range(0..=4)? {
                    0 => json!({"type": "thinking", "thinking": text(u)?}),
                    1 if role == "assistant" => {
                        let name = u.choose(&TOOLS)?;
                        let arguments = match u.int_in_range(0..=3)? {
                            0 => json!({"command": text(u)?, "path": text(u)?}),
                            1 => json!({"path": text(u)?, "offset": u.int_in_range(0..=9)?,
                                        "limit": u.int_in_range(0..=9)?, "pattern": text(u)?}),
                            2 => json!({"paths": [text(u)?, text(u)?], "pattern": text(u)?}),
                            _ => json!(text(u)?),
                        };
                        json!({"type": "toolCall", "id": format!("call_{}", u.int_in_range(0..=3)?),
                               "name": name, "arguments": arguments})
                    }
                    2 => json!({"type": "image", "data": "", "mimeType": "image/png"}),
                    3 => json!(text(u)?),
                    _ => json!({"type": "text", "text": text(u)?}),
                });
            }
            Value::Array(blocks)
        }
    })
}

fn message(u: &mut Unstructured) -> Result<Value> {
    let role = role(u)?;
    let mut m = Map::new();
    if !u.ratio(1, 16)? {
        m.insert("role".into(), json!(role));
    }
    m.insert("content".into(), content(u, role)?);
    m.insert("timestamp".into(), json!(u.int_in_range(0..=9u64)?));
    match role {
        "assistant" => {
            let stop = *u.choose(&["stop", "toolUse", "aborted", "error", "length", ""])?;
            m.insert("stopReason".into(), json!(stop));
            if u.ratio(1, 3)? {
                let error = *u.choose(&[
                    "boom",
                    "",
                    "Request was aborted",
                    "Interrupted by user",
                    "__omp.silent_abort__",
                ])?;
                m.insert("errorMessage".into(), json!(error));
            }
            if u.ratio(1, 6)? {
                let status = *u.choose(&["recovered", "superseded", "other"])?;
                m.insert(
                    "retryRecovery".into(),
                    json!({"status": status, "note": text(u)?}),
                );
            }
        }
        "toolResult" => {
            m.insert(
                "toolCallId".into(),
                json!(format!("call_{}", u.int_in_range(0..=3)?)),
            );
            m.insert("toolName".into(), json!(u.choose(&TOOLS)?));
        }
        "bashExecution" => {
            m.insert("command".into(), json!(text(u)?));
            m.insert("output".into(), json!(text(u)?));
        }
        "custom" => {
            m.insert("customType".into(), json!(text(u)?));
            m.insert("display".into(), json!(u.arbitrary::<bool>()?));
        }
        _ => {}
    }
    Ok(Value::Object(m))
}

/// One entry line; `odd` is set when it is junk (an entry without an id), its id is missing, not
/// a string or a duplicate, or its parent is missing, not a string or its own id.
fn entry(u: &mut Unstructured, ids: &mut Vec<Value>, i: usize, odd: &mut bool) -> Result<Vec<u8>> {
    if u.ratio(1, 40)? {
        // Junk: a non-object, a torn line, bytes.
        *odd = true;
        return Ok(match u.int_in_range(0..=2)? {
            0 => b"null".to_vec(),
            1 => br#"{"type":"mess"#.to_vec(),
            _ => {
                let n = u.int_in_range(0..=20)?;
                u.bytes(n.min(u.len()))?.to_vec()
            }
        });
    }
    let kind = kind(u)?;
    let mut e = Map::new();
    if !kind.is_empty() {
        e.insert("type".into(), json!(kind));
    }
    let own = id(u, i)?;
    if !own.is_null() {
        e.insert("id".into(), own.clone());
    }
    match parent(u, ids, i)? {
        Some(p) => {
            *odd |= (p.is_string() && p == own) || !(p.is_string() || p.is_null());
            e.insert("parentId".into(), p);
        }
        None => *odd = true,
    }
    if !u.ratio(1, 16)? {
        e.insert(
            "timestamp".into(),
            json!(format!("2026-01-01T00:00:{:02}.000Z", i % 60)),
        );
    }
    let target = || -> Value { ids.last().cloned().unwrap_or(Value::Null) };
    match kind {
        "message" => {
            e.insert("message".into(), message(u)?);
        }
        "label" => {
            let t = if u.ratio(1, 2)? {
                target()
            } else {
                json!(u.choose(&POOL)?)
            };
            e.insert("targetId".into(), t);
            if !u.ratio(1, 4)? {
                e.insert("label".into(), json!(text(u)?));
            }
        }
        "compaction" => {
            e.insert("summary".into(), json!(text(u)?));
            e.insert("firstKeptEntryId".into(), json!(u.choose(&POOL)?));
            e.insert(
                "tokensBefore".into(),
                json!(u.int_in_range(0..=200_000u32)?),
            );
        }
        "branch_summary" => {
            e.insert("summary".into(), json!(text(u)?));
            e.insert("fromId".into(), target());
        }
        "model_change" => {
            e.insert("provider".into(), json!("p"));
            e.insert("model".into(), json!(text(u)?));
            e.insert("modelId".into(), json!(text(u)?));
        }
        "thinking_level_change" => {
            if u.arbitrary::<bool>()? {
                e.insert("thinkingLevel".into(), json!(text(u)?));
            }
        }
        "custom" | "custom_message" => {
            let custom_type = *u.choose(&["note", "advisor", "", "x_y"])?;
            e.insert("customType".into(), json!(custom_type));
            e.insert("content".into(), content(u, "custom")?);
            e.insert("display".into(), json!(u.arbitrary::<bool>()?));
            if u.arbitrary::<bool>()? {
                e.insert(
                    "details".into(),
                    json!({"qualifier": text(u)?, "note": text(u)?}),
                );
            }
        }
        "session_info" | "title_change" => {
            e.insert("name".into(), json!(text(u)?));
            e.insert("title".into(), json!(text(u)?));
        }
        "model_usage" => {
            for k in ["purpose", "role", "provider", "model"] {
                e.insert(k.into(), json!(text(u)?));
            }
        }
        "service_tier_change" => {
            let tier = if u.arbitrary::<bool>()? {
                json!({"anthropic": text(u)?, "openai": null})
            } else {
                Value::Null
            };
            e.insert("serviceTier".into(), tier);
        }
        "mode_change" => {
            e.insert("mode".into(), json!(text(u)?));
        }
        "credential_pin" => {
            e.insert("provider".into(), json!(text(u)?));
        }
        "ttsr_injection" => {
            e.insert("injectedRules".into(), json!([text(u)?, 1]));
        }
        _ => {}
    }
    *odd |= !own.is_string() || ids.contains(&own);
    if !own.is_null() {
        ids.push(own);
    }
    Ok(serde_json::to_vec(&Value::Object(e)).unwrap())
}

/// A session file, and whether an entry in it has an odd id (see [`entry`]).
fn file(u: &mut Unstructured, dialect: Dialect) -> Result<(Vec<u8>, bool)> {
    let mut bytes = Vec::new();
    if dialect == Dialect::Omp && u.arbitrary::<bool>()? {
        let title = format!(
            r#"{{"type":"title","v":1,"title":"t","updatedAt":"2026-01-01T00:00:00.000Z","pad":"{}"}}"#,
            " ".repeat(160)
        );
        bytes.extend_from_slice(title.as_bytes());
        bytes.push(b'\n');
    }
    let version = *u.choose(&[3, 3, 3, 2])?;
    bytes.extend_from_slice(
        format!(
            r#"{{"type":"session","version":{version},"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/me/p"}}"#
        )
        .as_bytes(),
    );
    bytes.push(b'\n');
    let n = u.int_in_range(0..=48)?;
    let mut ids = Vec::new();
    let mut odd = false;
    for i in 0..n {
        bytes.extend(entry(u, &mut ids, i, &mut odd)?);
        bytes.push(b'\n');
    }
    if u.ratio(1, 8)? {
        bytes.extend_from_slice(br#"{"type":"message","id":"tt"#);
    }
    Ok((bytes, odd))
}

fn state(u: &mut Unstructured, session: &Session) -> Result<ViewState> {
    let filter = *u.choose(&[
        FilterMode::Default,
        FilterMode::NoTools,
        FilterMode::UserOnly,
        FilterMode::LabeledOnly,
        FilterMode::All,
    ])?;
    let search = match u.int_in_range(0..=5)? {
        0..=2 => String::new(),
        3 => u
            .choose(&["a", "tree", "user", "bash", "label", "'b", "!a", "a b"])?
            .to_string(),
        _ => text(u)?,
    };
    let selected = match u.int_in_range(0..=4)? {
        0 => None,
        1 => Some(u.choose(&POOL)?.to_string()),
        2 => Some(text(u)?),
        _ => {
            let n = session.entries().len();
            if n == 0 {
                None
            } else {
                let i = u.int_in_range(0..=n - 1)?;
                session.entries()[i].id().map(str::to_owned)
            }
        }
    };
    let width = match u.int_in_range(0..=3)? {
        0 => u.int_in_range(0..=12)?,
        1 => u.int_in_range(0..=1000)?,
        _ => u.int_in_range(20..=200)?,
    };
    let height = match u.int_in_range(0..=3)? {
        0 => u.int_in_range(0..=4)?,
        1 => u.int_in_range(0..=500)?,
        _ => u.int_in_range(5..=60)?,
    };
    Ok(ViewState {
        filter,
        search,
        selected,
        width,
        height,
    })
}

fn check_rows(session: &Session, view: &RowsView, all: bool) {
    if all {
        assert_eq!(
            view.rows.len(),
            view.visible_count,
            "rows() holds every row"
        );
        assert_eq!(view.first_row, 0);
    } else {
        assert_eq!(view.first_row, view.window.start);
        assert_eq!(view.rows.len(), view.window.end - view.window.start);
    }
    assert!(view.window.start <= view.window.end && view.window.end <= view.visible_count);
    if let Some(s) = view.selected {
        assert!(
            s < view.visible_count,
            "selection {s} of {}",
            view.visible_count
        );
    } else {
        assert!(view.selected_id().is_none());
    }
    for (i, row) in view.rows.iter().enumerate() {
        let number = view.first_row + i;
        let entry = &session.entries()[row.entry_index];
        assert_eq!(
            row.id.as_deref(),
            entry.id(),
            "row {number} names its entry"
        );
        if let Some(p) = row.parent_row {
            assert!(p < number, "parent row {p} after row {number}");
        }
        assert_eq!(view.row(number), Some(row));
    }
    for how in [
        Move::Up,
        Move::Down,
        Move::PageUp,
        Move::PageDown,
        Move::First,
        Move::Last,
    ] {
        if let Some(id) = view.moved(how) {
            assert!(session.contains(id), "move {how:?} to unknown {id}");
        } else if all {
            assert!(
                view.visible_count == 0 || view.rows.iter().any(|r| r.id.is_none()),
                "move {how:?} went nowhere among {} rows",
                view.visible_count
            );
        }
    }
}

fn run(u: &mut Unstructured, path: &Path) -> Result<()> {
    let dialect = if u.arbitrary::<bool>()? {
        Dialect::Omp
    } else {
        Dialect::Pi
    };
    let (bytes, _odd) = file(u, dialect)?;
    std::fs::File::create(path)
        .and_then(|mut f| f.write_all(&bytes))
        .unwrap();
    if let Some(dump) = std::env::var_os("FUZZ_ROWS_DUMP") {
        // Debugging a crash: keep the drawn file.
        std::fs::write(dump, &bytes).unwrap();
    }
    let Ok(session) = Session::open(path, OpenOptions::with_dialect(dialect)) else {
        return Ok(());
    };
    let home = u.arbitrary::<bool>()?.then(|| Path::new("/home/me"));
    let model = TreeModel::new(&session, home);
    for _ in 0..u.int_in_range(1..=3)? {
        let state = state(u, &session)?;
        let all = model.rows(&state);
        let direct = compute_rows(&session, &state, home);
        assert_eq!(direct.text_lines(), all.text_lines());
        assert_eq!(direct.rows, all.rows);
        assert_eq!(direct.selected, all.selected);
        check_rows(&session, &all, true);
        let window = model.window(&state);
        check_rows(&session, &window, false);
        assert_eq!(window.text_lines(), all.text_lines(), "window lines");
        assert_eq!(window.visible_count, all.visible_count);
        assert_eq!(window.selected, all.selected);
        assert_eq!(window.window, all.window);
        assert_eq!(
            &window.rows[..],
            &all.rows[window.window.start..window.window.end],
            "window rows"
        );
        // The first window found without the model, where it applies, is the model's window:
        // as it is used, and with its walk started down the leaf's path wherever it can.
        let quick_views = [
            first_window(&session, home, &state),
            first_window_cut_below(&session, home, &state, 0),
        ];
        for quick in quick_views.into_iter().flatten() {
            assert_eq!(quick.text_lines(), window.text_lines(), "first window lines");
            assert_eq!(quick.rows, window.rows, "first window rows");
            assert_eq!(
                (quick.visible_count, quick.selected, quick.window, quick.total),
                (window.visible_count, window.selected, window.window, window.total),
                "first window placement"
            );
            assert_eq!(quick.selected_id(), window.selected_id());
        }
        // Typing recomputes the view per character: short queries only, to keep the pace.
        if state.search.chars().count() <= 16 {
            let typed = model.typed(&state);
            check_rows(&session, &typed, true);
        }
        let mut folded = Vec::new();
        for _ in 0..u.int_in_range(0..=3)? {
            folded.push(match u.int_in_range(0..=2)? {
                0 => u.choose(&POOL)?.to_string(),
                _ => all
                    .rows
                    .get(u.int_in_range(0..=all.rows.len())?)
                    .and_then(|r| r.id.clone())
                    .unwrap_or_default(),
            });
        }
        let folds = model.rows_folded(&state, &folded);
        check_rows(&session, &folds, true);
        let _ = session_context(&session, state.selected.as_deref()).llm_messages();
    }
    assert_eq!(std::fs::read(path).unwrap(), bytes, "reading wrote");
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let path = temp_path();
    let _cleanup = Cleanup(path.clone());
    let _ = run(&mut Unstructured::new(data), &path);
});

/// Removes the file when dropped (also when an assertion fails).
struct Cleanup(std::path::PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A fresh path in a RAM-backed folder when there is one.
fn temp_path() -> std::path::PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = if Path::new("/dev/shm").is_dir() {
        std::path::PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    dir.join(format!(
        "sessiontree-fuzz-rows-{}-{}.jsonl",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ))
}
