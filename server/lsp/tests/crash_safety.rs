//! Crash safety through the real binary: `sessiontree lsp` is SIGKILLed in the middle of a stream
//! of pipelined appends, many times over the same files (both dialects). After every kill the file
//! loads, holds every entry the server acknowledged, and has at most one incomplete last line,
//! which the reader holds back. Then `sessiontree migrate` is killed at varying points: the file
//! is always either the old bytes or the migrated ones, and the backup is whole once the rename
//! happened.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod support;

use serde_json::{json, Value};
use sessiontree_core::session::FileState;
use sessiontree_core::{OpenOptions, Session};
use sessiontree_testkit::lsp::{Connection, NoResponse};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;
use support::*;

const ROUNDS: usize = 30;
const APPENDS_PER_ROUND: usize = 40;

/// Checks the file after a kill; returns the number of complete entries.
fn check_file(path: &Path, acknowledged: &[String]) -> usize {
    let bytes = std::fs::read(path).expect("read");
    let session = Session::open(path, OpenOptions::default())
        .unwrap_or_else(|e| panic!("{} does not load after a kill: {e}", path.display()));
    for id in acknowledged {
        assert!(
            session.contains(id),
            "acknowledged entry {id} is missing from {}",
            path.display()
        );
    }
    // At most one incomplete line, the last, and it is held back.
    let tail = bytes
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(bytes.len(), |i| bytes.len() - i - 1);
    let FileState::Written { pending, .. } = session.file_state() else {
        panic!("a loaded file is written");
    };
    assert_eq!(*pending as usize, tail, "the incomplete tail is held back");
    for (n, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let complete = n < bytes.split(|&b| b == b'\n').count() - 1;
        if complete {
            assert!(
                serde_json::from_slice::<Value>(line).is_ok(),
                "line {} is torn: {:?}",
                n + 1,
                String::from_utf8_lossy(line)
            );
        }
    }
    assert!(
        session.diagnostics().is_empty(),
        "{:?}",
        session.diagnostics()
    );
    session.entries().len()
}

/// How long a message may take before the server is taken for hung (a guard, not a timing).
const GUARD: Duration = Duration::from_secs(120);

/// One round: start the server, open the session, pipeline appends, kill it after `after` acks.
fn round(path: &Path, round: usize, after: usize) -> Vec<String> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sessiontree"));
    command.arg("lsp").stderr(Stdio::null());
    let mut server = Connection::spawn(command).expect("spawn sessiontree lsp");
    server.call(
        "initialize",
        json!({"processId":null,"rootUri":null,"capabilities":{}}),
        GUARD,
    );
    server.notify("initialized", json!({})).expect("write");
    let uri = uri(path);
    let open = server.call("sessionTree/open", json!({"uri": uri}), GUARD);
    assert!(open.get("result").is_some(), "{open}");
    // Every append goes out at once; the pipe holds them all.
    let mut batch = Vec::new();
    for i in 0..APPENDS_PER_ROUND {
        batch.extend(frame(&json!({
            "jsonrpc":"2.0","id": 100 + i,"method":"sessionTree/append",
            "params":{"uri": uri, "text": format!("round {round} append {i} {}", "x".repeat(i * 37))}
        })));
    }
    server.write_raw(&batch).expect("write appends");
    let mut acknowledged = Vec::new();
    let mut killed = false;
    loop {
        let msg = match server.next_message(GUARD) {
            Ok((_, msg)) => msg,
            Err(NoResponse::Closed) => break,
            Err(e) => panic!("the server neither answered nor ended ({e})"),
        };
        if let Some(id) = msg["result"]["entryId"].as_str() {
            acknowledged.push(id.to_owned());
        } else if msg.get("error").is_some() {
            panic!("an append failed: {msg}");
        }
        if !killed && acknowledged.len() >= after {
            server.child().kill().expect("SIGKILL");
            killed = true;
        }
    }
    // Responses already in the pipe when the kill landed were read above: they count too.
    if !killed {
        server.child().kill().ok();
    }
    server.child().wait().expect("reaped");
    acknowledged
}

#[test]
fn sigkill_in_the_middle_of_appends_loses_nothing_acknowledged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let files = [
        copy_fixture(
            "c06-branch-basic/omp/session.jsonl",
            dir.path(),
            "omp.jsonl",
        ),
        copy_fixture("c06-branch-basic/pi/session.jsonl", dir.path(), "pi.jsonl"),
    ];
    let mut acknowledged: [Vec<String>; 2] = Default::default();
    let mut kills = 0;
    for r in 0..ROUNDS {
        let which = r % 2;
        // Kill after 1..=12 acknowledgements, varying per round.
        let after = 1 + (r * 7) % 12;
        let acked = round(&files[which], r, after);
        assert!(acked.len() >= after, "round {r}: {} acks", acked.len());
        acknowledged[which].extend(acked);
        kills += 1;
        check_file(&files[which], &acknowledged[which]);
    }
    let entries: Vec<usize> = files
        .iter()
        .zip(&acknowledged)
        .map(|(f, a)| check_file(f, a))
        .collect();
    println!(
        "crash safety: {kills} SIGKILLs survived, {} acknowledged appends all present (entries now: omp {}, pi {})",
        acknowledged[0].len() + acknowledged[1].len(),
        entries[0],
        entries[1]
    );
}

#[test]
fn the_reader_holds_back_an_incomplete_last_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = copy_fixture("c06-branch-basic/pi/session.jsonl", dir.path(), "s.jsonl");
    let before = Session::open(&file, OpenOptions::default()).expect("open");
    let mut bytes = std::fs::read(&file).expect("read");
    bytes.extend_from_slice(br#"{"type":"message","id":"torn0001","parentId":null,"timest"#);
    std::fs::write(&file, &bytes).expect("write");
    let n = check_file(&file, &[]);
    assert_eq!(n, before.entries().len());
}

#[test]
fn a_killed_migrate_leaves_the_old_file_or_the_new_one_with_its_backup() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = fixture("L01-v1-linear-with-compaction/input.jsonl");
    let original = std::fs::read(&input).expect("fixture");
    // The migrated bytes: ids are derived from the session id, so every run writes the same file.
    let reference = dir.path().join("reference.jsonl");
    std::fs::write(&reference, &original).expect("write");
    let status = Command::new(env!("CARGO_BIN_EXE_sessiontree"))
        .arg("migrate")
        .arg(&reference)
        .stdout(Stdio::null())
        .status()
        .expect("migrate");
    assert!(status.success());
    let migrated = std::fs::read(&reference).expect("read");
    assert_ne!(migrated, original);

    let (mut old, mut new, mut finished) = (0, 0, 0);
    for i in 0..30u64 {
        let sub = dir.path().join(format!("run{i}"));
        std::fs::create_dir(&sub).expect("mkdir");
        let file = sub.join("s.jsonl");
        std::fs::write(&file, &original).expect("write");
        let mut child = Command::new(env!("CARGO_BIN_EXE_sessiontree"))
            .arg("migrate")
            .arg(&file)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn migrate");
        // Kill at a different point each time (from before it starts to after it is done).
        std::thread::sleep(std::time::Duration::from_micros(i * i * 20));
        child.kill().ok();
        let status = child.wait().expect("reaped");
        if status.success() {
            finished += 1;
        }
        let now = std::fs::read(&file).expect("the file is still there");
        let backup = sub.join("s.jsonl.bak");
        if now == original {
            old += 1;
        } else {
            assert_eq!(
                now, migrated,
                "run {i}: neither the old file nor the new one"
            );
            new += 1;
            assert_eq!(
                std::fs::read(&backup).expect("a backup once the rename happened"),
                original,
                "run {i}: the backup holds the original bytes"
            );
        }
        // Either way the file loads.
        Session::open(&file, OpenOptions::default()).expect("loads");
        // A later migrate finishes the job, whatever the kill left behind.
        let status = Command::new(env!("CARGO_BIN_EXE_sessiontree"))
            .arg("migrate")
            .arg(&file)
            .stdout(Stdio::null())
            .status()
            .expect("migrate again");
        assert!(status.success());
        assert_eq!(std::fs::read(&file).expect("read"), migrated);
    }
    println!(
        "migrate: 30 runs killed at varying points: {old} left the old file, {new} the new one with its backup ({finished} had finished)"
    );
}
