//! Live follow: another process appends to the session file while a client is attached; the
//! client hears `didChange` with the new ids, a half-written line waits until it is complete, and
//! a replaced file is reloaded and announced.

mod support;

use serde_json::{json, Value};
use std::io::Write as _;
use support::inproc::{Client, Opened};
use support::*;

const PI: &str = "c06-branch-basic/pi/session.jsonl";

fn line(id: &str, parent: &str, text: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2025-01-01T00:01:00.000Z","message":{{"role":"user","content":"{text}","timestamp":1735689660000}}}}"#
    )
}

async fn next_change(c: &Client) -> Value {
    c.notification("sessionTree/didChange", 10)
        .await
        .expect("a didChange in time")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_process_appends_while_attached() {
    let dir = tempfile::tempdir().expect("tmp");
    let c = Client::plain().await;
    let Opened {
        uri: u, file, open, ..
    } = c.open_copy_as(dir.path(), PI, "live.jsonl").await;
    let rev = open["revision"].as_u64().unwrap_or_default();

    // Another process (a shell) appends two lines in one write.
    let text = format!(
        "{}\n{}\n",
        line("aaaa0001", "5bbe7da7", "from the agent"),
        line("aaaa0002", "aaaa0001", "and more")
    );
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg("printf '%s' \"$1\" >> \"$2\"")
        .arg("sh")
        .arg(&text)
        .arg(&file)
        .status()
        .expect("sh");
    assert!(status.success());
    let change = next_change(&c).await;
    assert_eq!(change["reason"], json!("follow"));
    assert_eq!(change["newEntryIds"], json!(["aaaa0001", "aaaa0002"]));
    assert_eq!(change["leaf"], json!("aaaa0002"));
    assert!(change["revision"].as_u64() > Some(rev));
    let tree = c.ok("sessionTree/tree", json!({"uri": u})).await;
    assert_eq!(tree["total"], json!(8));

    // A line written in two parts is announced only once complete.
    let third = line("aaaa0003", "aaaa0002", "slow writer");
    let (head, tail) = third.split_at(40);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .expect("open");
    f.write_all(head.as_bytes()).expect("write");
    f.flush().expect("flush");
    // Our own append reads the file first, and refuses rather than tear the other writer's line.
    let busy = c
        .err("sessionTree/append", json!({"uri": u, "text": "mine"}))
        .await;
    assert_eq!(kind(&busy), "writerBusy", "{busy}");
    // It has read the half line, and announced nothing of it.
    assert_eq!(
        c.ok("sessionTree/tree", json!({"uri": u})).await["total"],
        json!(8)
    );
    assert!(
        c.drain()
            .await
            .iter()
            .all(|n| n["method"] != json!("sessionTree/didChange")),
        "a half line was announced"
    );
    f.write_all(format!("{tail}\n").as_bytes()).expect("write");
    f.flush().expect("flush");
    let change = next_change(&c).await;
    assert_eq!(change["newEntryIds"], json!(["aaaa0003"]), "{change}");

    // Then our append lands after it, chained to it.
    let mine = c
        .ok("sessionTree/append", json!({"uri": u, "text": "mine"}))
        .await;
    let last: Value = std::fs::read_to_string(&file)
        .ok()
        .and_then(|t| t.lines().last().and_then(|l| serde_json::from_str(l).ok()))
        .expect("last line");
    assert_eq!(last["id"], mine["entryId"]);
    assert_eq!(last["parentId"], json!("aaaa0003"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replaced_file_is_reloaded_and_announced() {
    let dir = tempfile::tempdir().expect("tmp");
    let c = Client::plain().await;
    let Opened {
        uri: u, file, open, ..
    } = c.open_copy_as(dir.path(), PI, "live.jsonl").await;
    let rev = open["revision"].as_u64().unwrap_or_default();

    // Replace the file by a rename (a new inode): a shorter session.
    let short = dir.path().join("short.tmp");
    let text = std::fs::read_to_string(&file).expect("read");
    let first_three: Vec<&str> = text.lines().take(3).collect();
    std::fs::write(&short, format!("{}\n", first_three.join("\n"))).expect("write");
    std::fs::rename(&short, &file).expect("rename");
    let change = next_change(&c).await;
    assert_eq!(change["reason"], json!("reload"), "{change}");
    assert!(
        change["revision"].as_u64() > Some(rev),
        "revisions keep growing across a reload"
    );
    assert_eq!(
        c.ok("sessionTree/tree", json!({"uri": u})).await["total"],
        json!(2)
    );
}
