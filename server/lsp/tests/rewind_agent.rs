//! Rewind points with the real agents: pi and omp, started by the real server with the bridge,
//! run their own `write` tool (the loopback model answers with tool calls) in a real git
//! repository. The bridge records a point before the agent acts on the user message (the tools
//! wait for it, however slow the snapshot) and one after the turn; restoring the point before the turn gives back the exact bytes and modes of that
//! moment (the files the agent created removed), undo brings back what was there, the user's own
//! edit made after the turn included, and the index, HEAD, branches, ignored files and the
//! session file never change. An agent the user runs in a terminal (not started by the server)
//! records its points through its bridge too, and the server relays and lists them.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod support;

use serde_json::{json, Value};
use sessiontree_testkit::git;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::Command;
use support::agents::{entries, is_event, message_entries, Agent, Home, ModelServer, Server};
use support::tmux::Tmux;

/// What must never change: HEAD, the branches, the index (its bytes, named by their hash so a
/// failure reads), an ignored file.
fn untouchables(project: &Path) -> (String, String, String, String) {
    (
        git(project, &["rev-parse", "HEAD"]),
        git(project, &["for-each-ref", "refs/heads"]),
        git(project, &["hash-object", "--no-filters", ".git/index"]),
        String::from_utf8_lossy(
            &std::fs::read(project.join("build.log")).expect("the ignored file"),
        )
        .into_owned(),
    )
}

fn read(path: &Path) -> Option<Vec<u8>> {
    std::fs::read(path).ok()
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).expect("stat").permissions().mode() & 0o777
}

/// The files `tool_rules` has the agent write, as its own `write` tool left them.
fn assert_the_agent_wrote_its_files(project: &Path) {
    assert_eq!(
        read(&project.join("hello.txt")).as_deref(),
        Some(&b"hello from the agent\n"[..])
    );
    assert_eq!(
        read(&project.join("a.txt")).as_deref(),
        Some(&b"changed by the agent\n"[..])
    );
}

/// The turn's user message "change the files" and the last message, among `messages`.
fn prompt_and_last_message(messages: &[Value]) -> (Value, Value) {
    let asked = messages
        .iter()
        .find(|m| {
            m["message"]["role"] == "user"
                && m["message"]["content"]
                    .to_string()
                    .contains("change the files")
        })
        .expect("the prompt in the file");
    let last = messages.last().expect("the turn's last message");
    (asked.clone(), last.clone())
}

/// The agent's model answers "change the files" with two `write` calls (a new file, a committed
/// file rewritten), then plain text once the tools answered.
fn tool_rules() -> Value {
    json!([
        {"when": {"lastToolResult": "."}, "reply": {"text": "written"}},
        {"when": {"lastUser": "change the files"}, "reply": {"toolCalls": [
            {"name": "write", "arguments": {"path": "hello.txt", "content": "hello from the agent\n"}},
            {"name": "write", "arguments": {"path": "a.txt", "content": "changed by the agent\n"}}
        ]}}
    ])
}

fn a_turn_that_writes_files_is_rewound_exactly(agent: Agent) {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = ModelServer::start(dir.path(), &tool_rules());
    let mut home = Home::new(&model);
    // Each snapshot the bridge takes is 2 s late (a slow disk, a huge repository): the agent's
    // tools must still wait for the one before the turn, or the point would hold their writes.
    let slow = dir.path().join("slow-sessiontree");
    std::fs::write(
        &slow,
        format!(
            "#!/bin/sh\nif [ \"$2\" = take ]; then sleep 2; fi\nexec '{}' \"$@\"\n",
            env!("CARGO_BIN_EXE_sessiontree")
        ),
    )
    .expect("the slow wrapper");
    std::fs::set_permissions(&slow, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    home.extra_env
        .push(("SESSIONTREE_BIN".into(), slow.display().to_string()));
    let project = home.project.clone();
    std::fs::write(project.join("a.txt"), "original\n").expect("a.txt");
    std::fs::write(project.join("run.sh"), "#!/bin/sh\necho run\n").expect("run.sh");
    std::fs::set_permissions(
        project.join("run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .expect("chmod");
    std::fs::write(project.join(".gitignore"), "*.log\n").expect(".gitignore");
    std::fs::write(project.join("build.log"), "ignored output\n").expect("build.log");
    git(&project, &["add", "-A"]);
    git(&project, &["commit", "-qm", "start"]);
    git(&project, &["branch", "keep"]);

    let file = home.first_session(agent, "first question");
    let (mut server, session) = Server::with_session(&home, &file);
    let turn = server.prompt_to_end(&session, "change the files", "the turn's end", 120);
    assert_eq!(turn["agent"]["source"], "spawned");
    // The agent ran its own tools.
    assert_the_agent_wrote_its_files(&project);

    // The entries of the turn: the user message, the tool-calling answer, the turn's last answer.
    let messages = message_entries(&file);
    let (asked, last) = prompt_and_last_message(&messages);
    assert_eq!(last["message"]["role"], "assistant");
    assert_eq!(last["message"]["stopReason"], "stop");
    let tool_use = messages
        .iter()
        .find(|m| m["message"]["stopReason"] == "toolUse")
        .expect("the answer that called the tools");
    let (asked_id, last_id) = (asked["id"].clone(), last["id"].clone());

    // The bridge recorded both points (the editors heard of each) ...
    for (id, moment) in [(&asked_id, "before"), (&last_id, "after")] {
        let note = server.wait_for("the point's notification", 60, |m| {
            m["method"] == "sessionTree/didRecordRewindPoint"
                && m["params"]["uri"] == session
                && m["params"]["point"]["entryId"] == *id
        });
        assert_eq!(note["params"]["point"]["moment"], moment, "{note}");
        assert_eq!(note["params"]["point"]["exact"], true, "{note}");
        assert_eq!(note["params"]["point"]["by"], "bridge", "{note}");
    }
    // ... and they are the session's only points: none for the answer that called tools, none
    // taken by the server while it followed the file.
    let points = server.ok("sessionTree/rewindPoints", json!({"uri": session}));
    assert_eq!(points["available"], true, "{points}");
    let listed = listed_points(&points);
    assert_eq!(listed, bridge_points(&asked_id, &last_id), "{points}");
    // The point before holds the files before the first tool ran; the point after, the turn's.
    let at = |server: &mut Server, entry: &Value, path: &str| {
        server.ok(
            "sessionTree/rewindFile",
            json!({"uri": session, "entryId": entry, "path": path}),
        )
    };
    assert_eq!(at(&mut server, &asked_id, "hello.txt")["exists"], false);
    assert_eq!(at(&mut server, &asked_id, "a.txt")["text"], "original\n");
    assert_eq!(
        at(&mut server, &last_id, "hello.txt")["text"],
        "hello from the agent\n"
    );
    assert_eq!(
        at(&mut server, &last_id, "a.txt")["text"],
        "changed by the agent\n"
    );
    // The tool-calling answer has no point of its own: the user message's is used, and named.
    let used = at(&mut server, &tool_use["id"], "a.txt");
    assert_eq!(used["point"]["point"]["entryId"], asked_id);

    // The user edits by hand after the turn; then goes back to before the turn.
    std::fs::write(project.join("a.txt"), "the user's own edit\n").expect("hand edit");
    std::fs::write(project.join("notes.txt"), "mine\n").expect("new file");
    let kept = untouchables(&project);
    let session_bytes = std::fs::read(&file).expect("the session");
    let compare = server.ok(
        "sessionTree/rewindCompare",
        json!({"uri": session, "entryId": asked_id}),
    );
    assert_eq!(
        compare["files"],
        json!([
            {"path": "a.txt", "status": "modified"},
            {"path": "hello.txt", "status": "added"},
            {"path": "notes.txt", "status": "added"}
        ]),
        "{compare}"
    );
    let restored = server.ok(
        "sessionTree/rewindRestore",
        json!({"uri": session, "entryId": asked_id}),
    );
    let mut actions: Vec<(String, String)> = restored["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap_or("").to_owned(),
                f["action"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    actions.sort();
    assert_eq!(
        actions,
        [
            ("a.txt".to_owned(), "changed".to_owned()),
            ("hello.txt".to_owned(), "deleted".to_owned()),
            ("notes.txt".to_owned(), "deleted".to_owned()),
        ]
    );
    assert_eq!(
        read(&project.join("a.txt")).as_deref(),
        Some(&b"original\n"[..])
    );
    assert_eq!(
        read(&project.join("hello.txt")),
        None,
        "the agent's new file is gone"
    );
    assert_eq!(read(&project.join("notes.txt")), None);
    assert_eq!(
        read(&project.join("run.sh")).as_deref(),
        Some(&b"#!/bin/sh\necho run\n"[..])
    );
    assert_eq!(mode(&project.join("run.sh")), 0o755);
    assert_eq!(
        untouchables(&project),
        kept,
        "HEAD, branches, index, ignored file"
    );
    assert_eq!(std::fs::read(&file).expect("the session"), session_bytes);

    // Undo: exactly what was there, the user's own edit included.
    server.ok("sessionTree/rewindUndo", json!({"uri": session}));
    assert_eq!(
        read(&project.join("a.txt")).as_deref(),
        Some(&b"the user's own edit\n"[..])
    );
    assert_eq!(
        read(&project.join("notes.txt")).as_deref(),
        Some(&b"mine\n"[..])
    );
    assert_eq!(
        read(&project.join("hello.txt")).as_deref(),
        Some(&b"hello from the agent\n"[..])
    );
    assert_eq!(
        untouchables(&project),
        kept,
        "HEAD, branches, index, ignored file"
    );
    assert_eq!(std::fs::read(&file).expect("the session"), session_bytes);
    server.shutdown();
}

/// `sessiontree continue` sends the prompt: the bridge of the agent it starts records the same
/// points, bound before the agent is gone, and `sessiontree rewind` restores the point before.
fn a_turn_from_the_command_line_has_its_points(agent: Agent) {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = ModelServer::start(dir.path(), &tool_rules());
    let home = Home::new(&model);
    let project = home.project.clone();
    std::fs::write(project.join("a.txt"), "original\n").expect("a.txt");
    git(&project, &["add", "-A"]);
    git(&project, &["commit", "-qm", "start"]);
    let file = home.first_session(agent, "first question");
    let answer = entries(&file)
        .into_iter()
        .rfind(|e| e["type"] == "message")
        .expect("the first answer");
    let run = |args: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_sessiontree"));
        command.args(args);
        for (k, v) in home.env() {
            command.env(k, v);
        }
        let out = command.output().expect("run sessiontree");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let path = file.to_str().expect("utf-8");
    let at = answer["id"].as_str().expect("id");
    run(&[
        "continue",
        path,
        "--at",
        at,
        "--message",
        "change the files",
    ]);
    assert_eq!(
        read(&project.join("hello.txt")).as_deref(),
        Some(&b"hello from the agent\n"[..])
    );
    let messages = message_entries(&file);
    let asked = messages
        .iter()
        .find(|m| m["parentId"] == answer["id"])
        .expect("the prompt under --at");
    let last = messages.last().expect("the turn's last answer");
    assert_eq!(last["message"]["stopReason"], "stop");
    let listed: Value = serde_json::from_str(&run(&["snapshots", path, "--json"])).expect("json");
    let points = listed_points(&listed);
    assert_eq!(points, bridge_points(&asked["id"], &last["id"]), "{listed}");
    let asked_id = asked["id"].as_str().expect("id");
    run(&["rewind", path, "--at", asked_id]);
    assert_eq!(
        read(&project.join("a.txt")).as_deref(),
        Some(&b"original\n"[..])
    );
    assert_eq!(read(&project.join("hello.txt")), None);
}

#[test]
fn pi_rewind_points_of_a_turn_sent_by_sessiontree_continue() {
    a_turn_from_the_command_line_has_its_points(Agent::Pi);
}

#[test]
fn omp_rewind_points_of_a_turn_sent_by_sessiontree_continue() {
    a_turn_from_the_command_line_has_its_points(Agent::Omp);
}

#[test]
fn pi_rewinds_a_turn_that_wrote_files_exactly() {
    a_turn_that_writes_files_is_rewound_exactly(Agent::Pi);
}

#[test]
fn omp_rewinds_a_turn_that_wrote_files_exactly() {
    a_turn_that_writes_files_is_rewound_exactly(Agent::Omp);
}

/// The two exact points the bridge records for a turn, as [`listed_points`] gives them: before
/// its prompt `asked` and after its last message `last`.
fn bridge_points(asked: &Value, last: &Value) -> [(Value, Value, Value, Value); 2] {
    [
        (asked.clone(), json!("before"), json!("bridge"), json!(true)),
        (last.clone(), json!("after"), json!("bridge"), json!(true)),
    ]
}

/// The (entry, moment, by, exact) of each point a `sessionTree/rewindPoints` answer (or
/// `sessiontree snapshots --json`) lists.
fn listed_points(points: &Value) -> Vec<(Value, Value, Value, Value)> {
    points["points"]
        .as_array()
        .expect("points")
        .iter()
        .map(|p| {
            (
                p["entryId"].clone(),
                p["moment"].clone(),
                p["by"].clone(),
                p["exact"].clone(),
            )
        })
        .collect()
}

/// An agent the user runs in a terminal, not started by the server: its TUI in a real pty
/// (tmux), the bridge installed by `sessiontree install-bridge`, and `sessiontree` found on
/// `PATH` as a user who installed it has it. The prompt is typed into the agent's own terminal;
/// the bridge records the two exact points of that turn, the editor's server (attached to the
/// terminal agent) hears of each as the agent works, and a server started afterwards (the editor
/// reopened) lists the same points from the ledger and restores the point before the turn.
fn a_terminal_agents_turn_has_its_points(agent: Agent) {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = ModelServer::start(dir.path(), &tool_rules());
    let home = Home::new(&model);
    let extensions = match agent {
        Agent::Pi => home.home.join(".pi/agent/extensions"),
        Agent::Omp => home.home.join(".omp/agent/extensions"),
    };
    let install = Command::new(env!("CARGO_BIN_EXE_sessiontree"))
        .args(["install-bridge", "--agent", agent.name(), "--dir"])
        .arg(&extensions)
        .output()
        .expect("sessiontree install-bridge");
    assert!(
        install.status.success(),
        "{}",
        String::from_utf8_lossy(&install.stderr)
    );
    let project = home.project.clone();
    std::fs::write(project.join("a.txt"), "original\n").expect("a.txt");
    git(&project, &["add", "-A"]);
    git(&project, &["commit", "-qm", "start"]);
    let file = home.first_session(agent, "first question");

    // `sessiontree` on PATH (the bridge's default when SESSIONTREE_BIN is not set). The PATH is
    // set in the command: the terminal's shell sets its own from the profile.
    let tools = dir.path().join("tools");
    std::fs::create_dir_all(&tools).expect("tools dir");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_sessiontree"), tools.join("sessiontree"))
        .expect("sessiontree on PATH");
    let resume = match agent {
        Agent::Pi => "--session",
        Agent::Omp => "--resume",
    };
    let command = format!(
        "env -u SESSIONTREE_BIN PATH='{}':\"$PATH\" '{}' {resume} '{}'",
        tools.display(),
        home.bin.join(agent.name()).display(),
        file.display()
    );
    let tui = Tmux::start(
        dir.path().join("tmux.sock"),
        &project,
        &home.env(),
        &command,
    );
    tui.wait_for("first question", 60);
    home.wait_for_bridge(60);
    let (mut server, session) = Server::with_session(&home, &file);
    let status = server.ok("sessionTree/agent", json!({"uri": session}));
    assert_eq!(status["source"], "terminal", "{status}");

    // The user types the prompt in the agent's own terminal.
    tui.keys(&["change the files", "Enter"]);
    server.wait_for("the terminal turn's end", 120, |m| {
        is_event(m, &session, "agentEnd")
    });
    tui.wait_for("written", 30);
    assert_the_agent_wrote_its_files(&project);
    let (asked, last) = prompt_and_last_message(&message_entries(&file));
    assert_eq!(last["message"]["stopReason"], "stop");
    let (asked_id, last_id) = (asked["id"].clone(), last["id"].clone());

    // The editor's server heard of each point from the terminal agent's bridge ...
    for (id, moment) in [(&asked_id, "before"), (&last_id, "after")] {
        let note = server.wait_for("the terminal agent's point", 60, |m| {
            m["method"] == "sessionTree/didRecordRewindPoint"
                && m["params"]["uri"] == session
                && m["params"]["point"]["entryId"] == *id
        });
        assert_eq!(note["params"]["point"]["moment"], moment);
        assert_eq!(note["params"]["point"]["exact"], true);
        assert_eq!(note["params"]["point"]["by"], "bridge");
    }
    // ... and they are the session's only points (none of the server's own while it followed).
    let want = bridge_points(&asked_id, &last_id);
    let points = server.ok("sessionTree/rewindPoints", json!({"uri": session}));
    assert_eq!(listed_points(&points), want, "{points}");
    let before = server.ok(
        "sessionTree/rewindFile",
        json!({"uri": session, "entryId": asked_id, "path": "a.txt"}),
    );
    assert_eq!(before["text"], "original\n");
    server.shutdown();

    // The editor reopened: a new server lists the same points and restores the one before.
    let mut server = Server::start(&home, json!({}), json!({}));
    server.ok("sessionTree/open", json!({"uri": session}));
    let points = server.ok("sessionTree/rewindPoints", json!({"uri": session}));
    assert_eq!(listed_points(&points), want, "{points}");
    server.ok(
        "sessionTree/rewindRestore",
        json!({"uri": session, "entryId": asked_id}),
    );
    assert_eq!(
        read(&project.join("a.txt")).as_deref(),
        Some(&b"original\n"[..])
    );
    assert_eq!(read(&project.join("hello.txt")), None);
    server.shutdown();
    drop(tui);
}

#[test]
fn pi_in_a_terminal_records_its_rewind_points() {
    a_terminal_agents_turn_has_its_points(Agent::Pi);
}

#[test]
fn omp_in_a_terminal_records_its_rewind_points() {
    a_terminal_agents_turn_has_its_points(Agent::Omp);
}
