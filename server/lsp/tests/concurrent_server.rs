//! The real server appending while a second process appends to the same session (half of its
//! lines in two pieces under `flock`, half in one unlocked write, as the agents do): no line torn
//! or interleaved, every line of both sides present, and the server's view equal to a fresh load.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod support;

use serde_json::{json, Value};
use sessiontree_core::{OpenOptions, Session};
use sessiontree_testkit::lsp::Connection;
use std::collections::HashSet;
use std::process::{Command, Stdio};
use std::time::Duration;
use support::*;

const LINES: usize = 200;

#[test]
fn the_server_and_an_agent_appending_at_once_lose_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = copy_fixture("c06-branch-basic/pi/session.jsonl", dir.path(), "s.jsonl");
    let mut command = Command::new(env!("CARGO_BIN_EXE_sessiontree"));
    command.arg("lsp").stderr(Stdio::null());
    let mut server = Connection::spawn(command).expect("spawn");
    let wait = Duration::from_secs(60);
    server.call(
        "initialize",
        json!({"processId":null,"rootUri":null,"capabilities":{}}),
        wait,
    );
    let u = uri(&file);
    let open = server.call("sessionTree/open", json!({"uri": u}), wait);
    assert!(open.get("result").is_some(), "{open}");

    let mut writer = sessiontree_testkit::writer::spawn_writer(
        &file,
        sessiontree_testkit::writer::Pace {
            lines: LINES,
            seed: 11,
            pad: 0,
            piece_pause: 0.0005,
            line_pause: 0.002,
        },
    );
    let mut ours = Vec::new();
    let mut busy = 0;
    let mut writer_done = false;
    while ours.len() < LINES || !writer_done {
        writer_done = writer_done || writer.try_wait().expect("wait").is_some();
        let msg = server.call(
            "sessionTree/append",
            json!({"uri": u, "text": format!("server {}", ours.len())}),
            wait,
        );
        match msg["result"]["entryId"].as_str() {
            Some(id) => ours.push(id.to_owned()),
            None if kind(&msg["error"]) == "writerBusy" => busy += 1,
            None => panic!("append failed: {msg}"),
        }
    }
    assert!(writer.wait().expect("wait").success());
    // One more append reads whatever the writer added last before writing.
    let last = server.call(
        "sessionTree/append",
        json!({"uri": u, "text": "last"}),
        wait,
    );
    ours.push(last["result"]["entryId"].as_str().expect("id").to_owned());

    let text = std::fs::read_to_string(&file).expect("read");
    let mut ids = HashSet::new();
    for (n, line) in text.lines().enumerate() {
        let value: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("line {} is torn ({e}): {line}", n + 1));
        if let Some(id) = value["id"].as_str() {
            ids.insert(id.to_owned());
        }
    }
    for i in 0..LINES {
        assert!(ids.contains(&format!("w{i:07}")), "writer line {i} missing");
    }
    for id in &ours {
        assert!(ids.contains(id), "server entry {id} missing");
    }
    let fresh = Session::open(&file, OpenOptions::default()).expect("loads");
    assert!(fresh.diagnostics().is_empty(), "{:?}", fresh.diagnostics());
    let tree = server.call("sessionTree/tree", json!({"uri": u}), wait);
    let served: HashSet<String> = tree["result"]["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .filter_map(|n| n["id"].as_str().map(str::to_owned))
        .collect();
    let loaded: HashSet<String> = fresh
        .entries()
        .iter()
        .filter_map(|e| e.id().map(str::to_owned))
        .collect();
    assert_eq!(
        tree["result"]["total"].as_u64(),
        Some(fresh.entries().len() as u64)
    );
    assert!(
        served == loaded,
        "the server's view differs from a fresh load"
    );
    assert_eq!(
        tree["result"]["leaf"].as_str(),
        ours.last().map(String::as_str)
    );
    server.child().kill().ok();
    server.child().wait().ok();
    println!(
        "server + agent: server {} lines, second process {LINES} lines, {busy} writerBusy answers retried; nothing torn or lost",
        ours.len()
    );
}
