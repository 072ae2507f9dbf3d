//! Concurrent writers: a real second process appends to the session file while the engine
//! appends. The second writer writes half of its lines in two pieces (holding the advisory
//! `flock` around the pieces, as a piecewise writer must) and the other half in one write without
//! any lock (as the agents write: one `write` per line). Afterwards no line is torn or
//! interleaved, every line of both sides is there, and the engine's live view equals a fresh load.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use sessiontree_core::session::SyncPolicy;
use sessiontree_core::{Error, OpenOptions, Session};
use sessiontree_testkit::fixture;
use sessiontree_testkit::writer::{spawn_writer, LockHolder, Pace};
use std::collections::HashSet;

const LINES: usize = 300;
const FIXTURE: &str = "c06-branch-basic/pi/session.jsonl";

#[test]
fn a_second_process_appending_in_pieces_never_tears_a_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::copy(fixture(FIXTURE), &path).unwrap();
    let mut session = Session::open(
        &path,
        OpenOptions {
            sync: SyncPolicy::None,
            ..OpenOptions::default()
        },
    )
    .unwrap();

    let mut writer = spawn_writer(
        &path,
        Pace {
            lines: LINES,
            seed: 7,
            pad: 300,
            piece_pause: 0.0003,
            line_pause: 0.0005,
        },
    );

    // Start once the writer is writing, and keep pace with it, so the two really overlap.
    let initial = std::fs::metadata(&path).unwrap().len();
    while std::fs::metadata(&path).unwrap().len() == initial && writer.try_wait().unwrap().is_none()
    {
        std::thread::sleep(std::time::Duration::from_micros(100));
    }
    let mut ours = Vec::new();
    let mut busy = 0usize;
    // At least LINES appends, and more for as long as the writer runs.
    let mut writer_done = false;
    let mut i = 0;
    while i < LINES || !writer_done {
        std::thread::sleep(std::time::Duration::from_micros(150));
        writer_done = writer_done || writer.try_wait().unwrap().is_some();
        let message =
            serde_json::json!({"role": "user", "content": format!("engine {i}"), "timestamp": i});
        loop {
            match session.append_message(message.clone()) {
                Ok(id) => {
                    ours.push(id);
                    i += 1;
                    break;
                }
                Err(Error::WriterBusy { .. }) => {
                    busy += 1;
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
                Err(e) => panic!("append {i}: {e}"),
            }
        }
    }
    assert!(writer.wait().unwrap().success(), "the second writer failed");
    session.follow().unwrap();

    // Every line whole and every line of both sides present.
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.ends_with('\n'));
    let mut ids = HashSet::new();
    for (n, line) in text.lines().enumerate() {
        let value: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("line {} is torn ({e}): {line}", n + 1));
        if let Some(id) = value.get("id").and_then(|v| v.as_str()) {
            ids.insert(id.to_owned());
        }
    }
    for i in 0..LINES {
        assert!(ids.contains(&format!("w{i:07}")), "writer line {i} missing");
    }
    for id in &ours {
        assert!(ids.contains(id), "engine entry {id} missing");
    }

    // The live view equals a fresh load.
    let fresh = Session::open(&path, OpenOptions::default()).unwrap();
    assert!(fresh.diagnostics().is_empty(), "{:?}", fresh.diagnostics());
    assert!(
        session.diagnostics().is_empty(),
        "{:?}",
        session.diagnostics()
    );
    let live: Vec<String> = session
        .entries()
        .iter()
        .map(|e| e.raw().into_owned())
        .collect();
    let again: Vec<String> = fresh
        .entries()
        .iter()
        .map(|e| e.raw().into_owned())
        .collect();
    assert_eq!(live.len(), again.len());
    assert!(live == again, "the live view differs from a fresh load");
    // How often the file switches between the two writers: the overlap the run achieved.
    let switches = fresh
        .entries()
        .windows(2)
        .filter(|w| w[0].id().map(|i| i.starts_with('w')) != w[1].id().map(|i| i.starts_with('w')))
        .count();
    let live_lines: Vec<usize> = session.entries().iter().map(|e| e.line).collect();
    let fresh_lines: Vec<usize> = fresh.entries().iter().map(|e| e.line).collect();
    assert_eq!(live_lines, fresh_lines, "line numbers agree");
    println!(
        "concurrent writers: engine {} lines, second process {LINES} lines ({} in two pieces under flock, {} in one unlocked write); {busy} writerBusy retries, {switches} switches between the writers in the file; nothing torn or lost",
        ours.len(),
        LINES.div_ceil(2),
        LINES / 2
    );
}

#[test]
fn a_writer_holding_the_lock_makes_appends_wait() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::copy(fixture(FIXTURE), &path).unwrap();
    let before = std::fs::read(&path).unwrap();
    let mut session = Session::open(&path, OpenOptions::default()).unwrap();
    let holder = LockHolder::take(&path);
    let message = serde_json::json!({"role": "user", "content": "hi", "timestamp": 1});
    assert!(matches!(
        session.append_message(message.clone()),
        Err(Error::WriterBusy { .. })
    ));
    assert_eq!(std::fs::read(&path).unwrap(), before, "nothing written");
    drop(holder);
    session.append_message(message).unwrap();
    assert_eq!(
        Session::open(&path, OpenOptions::default())
            .unwrap()
            .entries()
            .len(),
        session.entries().len()
    );
}
