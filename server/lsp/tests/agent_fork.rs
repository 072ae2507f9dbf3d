//! Sending into a pi fork that is not written yet, with the real pi: pi writes a forked session's
//! file only with its first assistant message, so `/branch` at a point with no assistant message
//! before it gives a session the server holds in memory. A message sent there goes to the agent
//! with exactly the fork's context, and the file that lands is the one pi's own session manager
//! writes for that fork answered in it (compared with pi forking and answering itself), written by
//! pi, once, with no duplicated header; the server then follows it.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod support;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use support::agents::{
    conversation, entries, first_question, message_entries, message_text, Agent, Server,
};

/// pi's own fork, answered in it: its session manager opens `source`, forks at `leaf` into `dir`
/// (`createBranchedSession`, deferred: no assistant on the path) and appends `messages` (the user
/// message and the answer, as pi's agent session does); the file pi wrote.
fn pi_forks_and_answers(source: &Path, leaf: &str, messages: &[Value], dir: &Path) -> PathBuf {
    let manager = support::agents::agent_bin()
        .join("../node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js");
    let manager = std::fs::canonicalize(&manager).expect("pi's session manager is installed");
    let script = r#"
const [manager, source, leaf, messages, dir] = process.argv.slice(1);
const { SessionManager } = await import(manager);
const sm = SessionManager.open(source, dir);
const file = sm.createBranchedSession(leaf);
for (const m of JSON.parse(messages)) sm.appendMessage(m);
process.stdout.write(file);
"#;
    let out = Command::new("node")
        .args(["--input-type=module", "-e", script])
        .arg(format!("file://{}", manager.display()))
        .arg(source)
        .arg(leaf)
        .arg(Value::Array(messages.to_vec()).to_string())
        .arg(dir)
        .output()
        .expect("run node");
    assert!(
        out.status.success(),
        "pi's own fork failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8(out.stdout).expect("a path"))
}

#[test]
fn pi_answers_into_a_fork_not_yet_written() {
    let (dir, model, home, source_file) = first_question(Agent::Pi, &json!([]));
    let (mut server, source) = Server::with_session(&home, &source_file);

    // A path with no assistant message: back before the first question, two questions appended
    // without an answer; /branch at the second forks the path up to the first.
    let first = message_entries(&source_file)[0].clone();
    server.ok(
        "sessionTree/navigate",
        json!({"uri": source, "targetId": first["id"]}),
    );
    let note = server.ok(
        "sessionTree/append",
        json!({"uri": source, "kind": "user", "text": "a note kept without an answer"}),
    )["entryId"]
        .clone();
    let asked = server.ok(
        "sessionTree/append",
        json!({"uri": source, "kind": "user", "text": "the question forked at"}),
    )["entryId"]
        .clone();
    let source_text = std::fs::read_to_string(&source_file).expect("read the source");
    let line_of = |id: &Value| {
        source_text
            .lines()
            .find(|l| serde_json::from_str::<Value>(l).is_ok_and(|v| v["id"] == *id))
            .unwrap_or_else(|| panic!("{id} in the source"))
            .to_owned()
    };
    let path_lines: Vec<String> = {
        let by_id: Vec<Value> = entries(&source_file);
        let mut chain = Vec::new();
        let mut at = note.clone();
        while let Some(e) = by_id.iter().find(|e| e["id"] == at) {
            chain.push(line_of(&at));
            at = e["parentId"].clone();
        }
        chain.reverse();
        chain
    };
    assert_eq!(
        path_lines.len(),
        3,
        "model change, thinking level, the note"
    );

    let branched = server.ok(
        "sessionTree/branch",
        json!({"uri": source, "entryId": asked}),
    );
    assert_eq!(
        branched["written"], false,
        "pi defers the fork's file: {branched}"
    );
    assert_eq!(branched["editorText"], "the question forked at");
    let fork_file = PathBuf::from(branched["newPath"].as_str().expect("newPath"));
    let fork = branched["newUri"].as_str().expect("newUri").to_owned();
    assert!(!fork_file.exists(), "nothing on disk yet");

    // Sent into the fork: the agent answers with exactly the fork's context.
    let before = model.requests().len();
    server.prompt_to_end(&fork, "the fork's question", "the answer in the fork", 90);
    let requests = model.requests();
    assert_eq!(requests.len(), before + 1, "one model call");
    assert_eq!(
        conversation(&requests[before]),
        [
            "user: a note kept without an answer",
            "user: the fork's question"
        ],
        "the model saw the fork's path and the new question, nothing else"
    );

    // The fork's file, written by pi: its header as the fork holds it, the path's lines byte for
    // byte, then the question and the answer under them.
    let text = std::fs::read_to_string(&fork_file).expect("pi wrote the fork's file");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.len(),
        6,
        "header, 3 path entries, question, answer:\n{text}"
    );
    let header: Value = serde_json::from_str(lines[0]).expect("header");
    let stamp = header["timestamp"].as_str().expect("timestamp");
    let cwd = header["cwd"].as_str().expect("cwd");
    assert_eq!(
        lines[0],
        format!(
            r#"{{"type":"session","version":3,"id":{},"timestamp":"{stamp}","cwd":{},"parentSession":{}}}"#,
            branched["sessionId"],
            Value::from(cwd),
            Value::from(source_file.to_string_lossy().into_owned())
        ),
        "the fork's header, as announced"
    );
    assert_eq!(lines[1..4], path_lines[..], "the path's lines, unchanged");
    let question: Value = serde_json::from_str(lines[4]).expect("question");
    let answer: Value = serde_json::from_str(lines[5]).expect("answer");
    assert_eq!(question["parentId"], note);
    assert_eq!(message_text(&question["message"]), "the fork's question");
    assert_eq!(answer["parentId"], question["id"]);
    assert_eq!(
        message_text(&answer["message"]),
        "echo: the fork's question"
    );

    // What pi's own session manager writes for the same fork answered in it: the same bytes, but
    // for the ids and times it makes up.
    let own_dir = dir.path().join("pi-own");
    let own_file = pi_forks_and_answers(
        &source_file,
        note.as_str().expect("id"),
        &[question["message"].clone(), answer["message"].clone()],
        &own_dir,
    );
    let own = std::fs::read_to_string(&own_file).expect("pi's own fork");
    let mut own_lines: Vec<String> = own.lines().map(str::to_owned).collect();
    assert_eq!(own_lines.len(), lines.len(), "pi's own fork:\n{own}");
    for (i, mine) in [(0, &header), (4, &question), (5, &answer)] {
        let theirs: Value = serde_json::from_str(&own_lines[i]).expect("json");
        for key in ["id", "parentId", "timestamp"] {
            own_lines[i] = own_lines[i].replacen(
                &format!("\"{key}\":{}", theirs[key]),
                &format!("\"{key}\":{}", mine[key]),
                1,
            );
        }
    }
    let own = own_lines
        .iter()
        .map(|l| format!("{l}\n"))
        .collect::<String>();
    assert_eq!(text, own, "byte for byte what pi writes for its own fork");

    // The server follows the file pi wrote: the answer reaches the client, the transcript has it.
    server.wait_for("didChange with the answer", 30, |m| {
        m["method"] == "sessionTree/didChange"
            && m["params"]["uri"] == fork
            && m["params"]["newEntryIds"]
                .as_array()
                .is_some_and(|ids| ids.contains(&answer["id"]))
    });
    let shown = server.transcript_lines(&fork);
    assert_eq!(
        shown,
        [
            "user: a note kept without an answer",
            "user: the fork's question",
            "assistant: echo: the fork's question"
        ]
    );

    // The next turn is appended by pi as to any file: one header, nothing written twice.
    server.prompt_to_end(&fork, "and then", "the second answer in the fork", 90);
    let text = std::fs::read_to_string(&fork_file).expect("the fork");
    let after: Vec<&str> = text.lines().collect();
    assert_eq!(after.len(), 8, "two more lines:\n{text}");
    assert_eq!(after[..6], lines[..]);
    assert_eq!(
        after
            .iter()
            .filter(|l| l.contains(r#""type":"session""#))
            .count(),
        1
    );
    assert!(
        std::fs::read_to_string(&source_file).expect("source") == source_text,
        "the source is untouched"
    );
    server.shutdown();
}

/// omp writes its forks at once: `/branch` at the same point gives a file on disk, and a message
/// sent there is appended to it as before (the fork's bytes unchanged, the model given only the
/// fork's path).
#[test]
fn omp_forks_are_written_at_once_and_answered_in_place() {
    let (_dir, model, home, source_file) = first_question(Agent::Omp, &json!([]));
    let (mut server, source) = Server::with_session(&home, &source_file);
    let first = message_entries(&source_file)[0].clone();
    let branched = server.ok(
        "sessionTree/branch",
        json!({"uri": source, "entryId": first["id"]}),
    );
    assert_eq!(
        branched["written"], true,
        "omp writes its forks: {branched}"
    );
    let fork_file = PathBuf::from(branched["newPath"].as_str().expect("newPath"));
    let fork = branched["newUri"].as_str().expect("newUri").to_owned();
    let before_text = std::fs::read_to_string(&fork_file).expect("the fork is on disk");
    let before = model.requests().len();
    server.prompt_to_end(&fork, "the fork's question", "the answer in the fork", 120);
    // (omp may also ask its model for a title: only the turn's request is looked at.)
    let turns: Vec<Vec<String>> = model.requests()[before..]
        .iter()
        .map(|r| {
            conversation(r)
                .into_iter()
                .filter(|m| m.starts_with("user: "))
                .collect::<Vec<_>>()
        })
        .filter(|users| users.iter().any(|u| u.contains("the fork's question")))
        .collect();
    assert_eq!(turns.len(), 1, "one model call for the turn: {turns:?}");
    assert_eq!(turns[0].len(), 1, "only the fork's question: {turns:?}");
    let after = std::fs::read_to_string(&fork_file).expect("the fork");
    // omp's title slot (its first line, rewritten in place) aside, the bytes are kept.
    let slot = match before_text.lines().next() {
        Some(first) if !first.contains(r#""type":"session""#) => first.len() + 1,
        _ => 0,
    };
    assert!(
        after[slot..].starts_with(&before_text[slot..]),
        "the fork's bytes are kept, the turn appended"
    );
    let answered = message_entries(&fork_file).iter().any(|m| {
        m["message"]["role"] == "assistant" && message_text(&m["message"]).contains("echo:")
    });
    assert!(answered, "the answer is in the fork:\n{after}");
    server.shutdown();
}

/// `/branch` from a pi session's first question: the fork holds only the session's model and
/// thinking level (no message). pi, loading a session without messages, records its own model
/// and thinking level after it (its startup rule), and the question hangs under those, as in a
/// session pi starts itself; the fork's own lines come first, byte for byte.
#[test]
fn pi_answers_into_a_fork_without_messages() {
    let (_dir, model, home, source_file) = first_question(Agent::Pi, &json!([]));
    let (mut server, source) = Server::with_session(&home, &source_file);
    let first = message_entries(&source_file)[0].clone();
    let branched = server.ok(
        "sessionTree/branch",
        json!({"uri": source, "entryId": first["id"]}),
    );
    assert_eq!(branched["written"], false, "{branched}");
    let fork_file = PathBuf::from(branched["newPath"].as_str().expect("newPath"));
    let fork = branched["newUri"].as_str().expect("newUri").to_owned();
    let source_lines: Vec<String> = std::fs::read_to_string(&source_file)
        .expect("source")
        .lines()
        .map(str::to_owned)
        .collect();

    let before = model.requests().len();
    server.prompt_to_end(&fork, "first question", "the answer in the fork", 90);
    let requests = model.requests();
    assert_eq!(requests.len(), before + 1, "one model call");
    assert_eq!(conversation(&requests[before]), ["user: first question"]);

    let text = std::fs::read_to_string(&fork_file).expect("pi wrote the fork");
    let lines: Vec<&str> = text.lines().collect();
    let parsed: Vec<Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    let kinds: Vec<&str> = parsed
        .iter()
        .map(|e| e["type"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        kinds,
        [
            "session",
            "model_change",
            "thinking_level_change",
            "model_change",
            "thinking_level_change",
            "message",
            "message"
        ],
        "{text}"
    );
    assert_eq!(parsed[0]["id"], branched["sessionId"]);
    assert_eq!(
        lines[1..3],
        source_lines[1..3],
        "the fork's lines, unchanged"
    );
    // pi's startup entries continue the fork's leaf; the question hangs under them.
    assert_eq!(parsed[3]["parentId"], parsed[2]["id"]);
    assert_eq!(parsed[4]["parentId"], parsed[3]["id"]);
    assert_eq!(parsed[5]["parentId"], parsed[4]["id"], "{text}");
    assert_eq!(parsed[6]["parentId"], parsed[5]["id"]);
    assert_eq!(message_text(&parsed[6]["message"]), "echo: first question");
    server.wait_for("didChange with the answer", 30, |m| {
        m["method"] == "sessionTree/didChange"
            && m["params"]["uri"] == fork
            && m["params"]["newEntryIds"]
                .as_array()
                .is_some_and(|ids| ids.contains(&parsed[6]["id"]))
    });
    server.shutdown();
}
