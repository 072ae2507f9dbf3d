//! The rewind requests through the language server (in process), against real git repositories:
//! points, compare, a file at a point, restore (dry run and real) and undo, the errors; and the
//! server recording points for a session it follows live, at the boundaries it sees in the file.

mod support;

use serde_json::{json, Value};
use sessiontree_rewind::{Moment, Rewind};
use sessiontree_testkit::git;
use std::path::Path;
use support::inproc::Client;
use support::{kind, uri};

const SID: &str = "0194dddd-0000-7000-8000-000000000004";

fn header(cwd: &Path) -> String {
    format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"{SID}\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":{}}}\n",
        serde_json::to_string(&cwd.to_string_lossy()).expect("json")
    )
}

fn user(id: &str, parent: Option<&str>, text: &str) -> String {
    let parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
    format!("{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\",\"timestamp\":1735689601000}}}}\n")
}

fn assistant(id: &str, parent: &str, stop: &str) -> String {
    format!("{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":\"{parent}\",\"timestamp\":\"2025-01-01T00:00:02.000Z\",\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"ok\"}}],\"api\":\"x\",\"provider\":\"x\",\"model\":\"x\",\"stopReason\":\"{stop}\",\"timestamp\":1735689602000}}}}\n")
}

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    git(dir.path(), &["init", "-q", "-b", "main"]);
    std::fs::write(dir.path().join("a.txt"), "one\n").expect("w");
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "init"]);
    dir
}

/// Appends as another process would (the agent).
fn append(file: &Path, text: &str) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(file)
        .expect("open");
    f.write_all(text.as_bytes()).expect("append");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewind_requests_compare_read_restore_and_undo() {
    let repo = repo();
    let sessions = tempfile::tempdir().expect("tmp");
    let file = sessions.path().join("s.jsonl");
    std::fs::write(
        &file,
        header(repo.path())
            + &user("u1000001", None, "go")
            + &assistant("a1000001", "u1000001", "stop"),
    )
    .expect("w");
    let session = sessiontree_core::Session::open(&file, Default::default()).expect("open");
    let rewind = Rewind::for_session(&session).expect("store");
    rewind
        .record(&session, "u1000001", Moment::Before, true, "bridge")
        .expect("record");
    std::fs::write(repo.path().join("a.txt"), "two\n").expect("w");
    std::fs::write(repo.path().join("b.txt"), "agent\n").expect("w");
    let session_bytes = std::fs::read(&file).expect("r");

    let c = Client::plain().await;
    let u = uri(&file);
    c.ok("sessionTree/open", json!({"uri": u})).await;
    let points = c.ok("sessionTree/rewindPoints", json!({"uri": u})).await;
    assert_eq!(points["available"], json!(true));
    assert_eq!(points["points"].as_array().map(Vec::len), Some(1));
    assert_eq!(points["points"][0]["entryId"], json!("u1000001"));
    assert_eq!(points["points"][0]["moment"], json!("before"));
    assert_eq!(points["points"][0]["by"], json!("bridge"));

    // The assistant message has no point: the user message's is used, and named.
    let cmp = c
        .ok(
            "sessionTree/rewindCompare",
            json!({"uri": u, "entryId": "a1000001"}),
        )
        .await;
    assert_eq!(cmp["point"]["asked"], json!("a1000001"));
    assert_eq!(cmp["point"]["point"]["entryId"], json!("u1000001"));
    assert_eq!(
        cmp["files"],
        json!([{"path": "a.txt", "status": "modified"}, {"path": "b.txt", "status": "added"}])
    );
    let f = c
        .ok(
            "sessionTree/rewindFile",
            json!({"uri": u, "entryId": "u1000001", "path": "a.txt"}),
        )
        .await;
    assert_eq!(f["text"], json!("one\n"));
    assert_eq!(f["mode"], json!("100644"));
    let f = c
        .ok(
            "sessionTree/rewindFile",
            json!({"uri": u, "entryId": "u1000001", "path": "b.txt"}),
        )
        .await;
    assert_eq!(f["exists"], json!(false));

    let dry = c
        .ok(
            "sessionTree/rewindRestore",
            json!({"uri": u, "entryId": "u1000001", "dryRun": true}),
        )
        .await;
    assert_eq!(dry["dryRun"], json!(true));
    assert_eq!(
        dry["files"],
        json!([{"path": "b.txt", "action": "deleted"}, {"path": "a.txt", "action": "changed"}])
    );
    assert_eq!(
        std::fs::read_to_string(repo.path().join("a.txt")).expect("r"),
        "two\n"
    );

    let done = c
        .ok(
            "sessionTree/rewindRestore",
            json!({"uri": u, "entryId": "u1000001"}),
        )
        .await;
    assert!(done["undoSnapshot"].is_string());
    assert_eq!(
        std::fs::read_to_string(repo.path().join("a.txt")).expect("r"),
        "one\n"
    );
    assert!(!repo.path().join("b.txt").exists());
    let undo = c.ok("sessionTree/rewindUndo", json!({"uri": u})).await;
    assert_eq!(undo["point"], Value::Null);
    assert_eq!(
        std::fs::read_to_string(repo.path().join("a.txt")).expect("r"),
        "two\n"
    );
    assert_eq!(
        std::fs::read_to_string(repo.path().join("b.txt")).expect("r"),
        "agent\n"
    );
    assert_eq!(
        std::fs::read(&file).expect("r"),
        session_bytes,
        "the session file is not written"
    );

    // Errors.
    let err = c
        .err(
            "sessionTree/rewindRestore",
            json!({"uri": u, "entryId": "nothere1"}),
        )
        .await;
    assert_eq!(kind(&err), "entryNotFound");
    let err = c.err("sessionTree/rewindCompare", json!({"uri": u})).await;
    assert_eq!(kind(&err), "invalidParams");

    // A session whose workspace is not a git work tree.
    let plain = tempfile::tempdir().expect("tmp");
    let other = sessions.path().join("plain.jsonl");
    std::fs::write(
        &other,
        header(plain.path()).replace(SID, "0194dddd-0000-7000-8000-0000000000ff")
            + &user("u9000009", None, "x"),
    )
    .expect("w");
    let ou = uri(&other);
    c.ok("sessionTree/open", json!({"uri": ou})).await;
    let points = c.ok("sessionTree/rewindPoints", json!({"uri": ou})).await;
    assert_eq!(points["available"], json!(false));
    assert!(
        points["reason"]
            .as_str()
            .unwrap_or("")
            .contains("is not a git repository"),
        "{points}"
    );
    let err = c
        .err(
            "sessionTree/rewindRestore",
            json!({"uri": ou, "entryId": "u9000009"}),
        )
        .await;
    assert_eq!(kind(&err), "notARepository");
}

/// Polls `rewindPoints` until `entry` has a point (the server records on a blocking thread).
async fn point_of(c: &Client, u: &str, entry: &str) -> Value {
    for _ in 0..200 {
        let points = c.ok("sessionTree/rewindPoints", json!({"uri": u})).await;
        if let Some(p) = points["points"]
            .as_array()
            .and_then(|ps| ps.iter().find(|p| p["entryId"] == json!(entry)))
        {
            return p.clone();
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("no point for {entry} in time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_followed_session_gets_points_at_the_boundaries_it_sees_in_the_file() {
    let repo = repo();
    let sessions = tempfile::tempdir().expect("tmp");
    let file = sessions.path().join("live.jsonl");
    std::fs::write(&file, header(repo.path())).expect("w");
    let c = Client::plain().await;
    let u = uri(&file);
    c.ok("sessionTree/open", json!({"uri": u})).await;

    // A prompt: its line reaches the file before the agent acts.
    append(&file, &user("u1000001", None, "change a"));
    let p = point_of(&c, &u, "u1000001").await;
    assert_eq!(p["moment"], json!("before"));
    assert_eq!(p["by"], json!("server"));
    assert_eq!(p["exact"], json!(true));
    // The agent works (a tool call: not a boundary), then ends its turn.
    append(&file, &assistant("a1000001", "u1000001", "toolUse"));
    std::fs::write(repo.path().join("a.txt"), "changed by the agent\n").expect("w");
    append(&file, &assistant("a2000002", "a1000001", "stop"));
    let p = point_of(&c, &u, "a2000002").await;
    assert_eq!(p["moment"], json!("after"));
    let points = c.ok("sessionTree/rewindPoints", json!({"uri": u})).await;
    assert!(
        !points["points"]
            .as_array()
            .expect("points")
            .iter()
            .any(|p| p["entryId"] == json!("a1000001")),
        "a tool-call message is not a boundary: {points}"
    );
    // Restoring the prompt's point gives back the files before the agent acted.
    c.ok(
        "sessionTree/rewindRestore",
        json!({"uri": u, "entryId": "u1000001"}),
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(repo.path().join("a.txt")).expect("r"),
        "one\n"
    );

    // A user message and the agent's first line read together: the agent may have acted
    // already, so the point says it is not exact.
    append(
        &file,
        &(user("u3000003", Some("a2000002"), "more")
            + &assistant("a3000003", "u3000003", "toolUse")),
    );
    let p = point_of(&c, &u, "u3000003").await;
    assert_eq!(p["exact"], json!(false));
}
