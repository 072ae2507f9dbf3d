//! The live agent, for real: the real pi and omp (installed by `scripts/install-agents.sh`) answer
//! through the real server against the tests' loopback model server. Each test checks what the
//! user relies on: where the new messages hang in the tree, exactly what the model received,
//! the streamed answer, abort, an agent killed mid-turn, a missing agent, and the refusal to
//! write behind an agent that has no bridge.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod support;

use serde_json::{json, Value};
use std::path::Path;
use support::agents::{
    conversation, entries, first_question, is_event, message_entries, message_text, Agent, Home,
    ModelServer, Server,
};
use support::tmux::Tmux;
use support::{kind, uri};

fn text_of_entry(e: &Value) -> String {
    message_text(&e["message"])
}

/// The texts of a session file's messages, in file order.
fn message_texts(file: &Path) -> Vec<String> {
    message_entries(file).iter().map(text_of_entry).collect()
}

/// Selecting an old user message, editing it and sending makes the real agent answer from
/// exactly that point: the new user message hangs under the old one's parent, the model sees
/// only the context up to there, the answer streams in order and lands in the file.
fn prompt_from_an_earlier_point(agent: Agent) {
    let (_dir, model, home, file) = first_question(agent, &json!([]));
    // A second exchange, so there is something to go back from.
    let (mut server, session) = Server::with_session(&home, &file);
    let turn = server.prompt_to_end(&session, "second question", "the first answer's end", 90);
    assert_eq!(turn["agent"]["source"], "spawned");
    let messages = message_entries(&file);
    let texts: Vec<String> = messages.iter().map(text_of_entry).collect();
    assert_eq!(
        texts,
        [
            "first question",
            "echo: first question",
            "second question",
            "echo: second question"
        ],
        "the agent answered the second prompt after the first exchange"
    );
    // Back to the first user message: its parent becomes the leaf, its text the editor's.
    let first_user = &messages[0];
    let nav = server.ok(
        "sessionTree/navigate",
        json!({"uri": session, "targetId": first_user["id"]}),
    );
    assert_eq!(nav["editorText"], "first question");
    assert_eq!(nav["newLeaf"], first_user["parentId"]);
    let before = model.requests().len();
    let answer = server.prompt_to_end(&session, "edited question", "the edited answer's end", 90);
    let turn = answer["turn"].as_u64().expect("turn");
    // The file: the new user message is a child of the first one's parent.
    let messages = message_entries(&file);
    let edited = messages
        .iter()
        .find(|m| text_of_entry(m) == "edited question")
        .expect("the edited question in the file");
    assert_eq!(edited["parentId"], first_user["parentId"]);
    let reply = messages
        .iter()
        .find(|m| m["parentId"] == edited["id"])
        .expect("the answer under it");
    assert_eq!(text_of_entry(reply), "echo: edited question");
    // The model received exactly the context up to that point: nothing of the abandoned turns.
    let requests = model.requests();
    assert_eq!(requests.len(), before + 1, "one model call for the prompt");
    assert_eq!(
        conversation(&requests[before]),
        ["user: edited question"],
        "the model saw only the path up to the chosen point"
    );
    // The stream: in order, deltas joined equal the final text, then didChange showed the entries.
    let events = server.agent_events(&session);
    let seqs: Vec<u64> = events.iter().filter_map(|e| e["seq"].as_u64()).collect();
    assert!(
        seqs.windows(2).all(|w| w[1] == w[0] + 1),
        "seq counts up: {seqs:?}"
    );
    let ours: Vec<&Value> = events.iter().filter(|e| e["turn"] == turn).collect();
    let end = ours
        .iter()
        .find(|e| e["event"]["kind"] == "messageEnd" && e["event"]["item"]["role"] == "assistant")
        .expect("the assistant's messageEnd");
    let number = end["event"]["message"].clone();
    let streamed: String = ours
        .iter()
        .filter(|e| e["event"]["kind"] == "delta" && e["event"]["message"] == number)
        .filter_map(|e| e["event"]["text"].as_str())
        .collect();
    assert_eq!(streamed, "echo: edited question");
    assert_eq!(
        end["event"]["item"]["blocks"],
        json!([{"kind": "markdown", "text": "echo: edited question"}])
    );
    server.wait_for("didChange with the answer", 30, |m| {
        m["method"] == "sessionTree/didChange"
            && m["params"]["newEntryIds"]
                .as_array()
                .is_some_and(|ids| ids.contains(&reply["id"]))
    });
    // The transcript renders the same path.
    let roles = server.transcript_lines(&session);
    assert_eq!(
        roles,
        ["user: edited question", "assistant: echo: edited question"]
    );
    server.shutdown();
}

#[test]
fn pi_answers_from_an_earlier_point() {
    prompt_from_an_earlier_point(Agent::Pi);
}

#[test]
fn omp_answers_from_an_earlier_point() {
    prompt_from_an_earlier_point(Agent::Omp);
}

/// The rules that make the model hold its answer after the first words (until the client goes).
fn holding_rules() -> Value {
    json!([{"when": {"lastUser": "^slow"}, "reply": {"text": "thinking slowly about it", "hold": true, "chunk": 4}}])
}

/// Sends the prompt the holding rules answer slowly and waits for its first words; its turn.
fn start_slow_turn(server: &mut Server, session: &str) -> Value {
    let turn = server.ok(
        "sessionTree/prompt",
        json!({"uri": session, "text": "slow please"}),
    )["turn"]
        .clone();
    server.wait_for("the first words", 90, |m| {
        is_event(m, session, "delta") && m["params"]["turn"] == turn
    });
    turn
}

/// `sessiontree check` finds no problem in `file` (a fresh engine reads every line).
fn assert_checks_clean(file: &Path) {
    let check = std::process::Command::new(env!("CARGO_BIN_EXE_sessiontree"))
        .arg("check")
        .arg(file)
        .output()
        .expect("sessiontree check");
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
}

/// Abort stops the turn: the agent ends it, the file stays loadable with the aborted answer, and
/// the next prompt is answered.
fn abort_then_continue(agent: Agent) {
    let (_dir, _model, home, file) = first_question(agent, &holding_rules());
    let (mut server, session) = Server::with_session(&home, &file);
    let turn = start_slow_turn(&mut server, &session);
    // A second prompt while it answers is refused, not queued by surprise.
    let busy = server.request(
        "sessionTree/prompt",
        json!({"uri": session, "text": "meanwhile"}),
    );
    assert_eq!(kind(&busy["error"]), "agentBusy", "{busy}");
    let aborted = server.ok("sessionTree/abort", json!({"uri": session}));
    assert_eq!(aborted["aborted"], true);
    server.wait_for("the aborted turn's end", 60, |m| {
        is_event(m, &session, "agentEnd") && m["params"]["turn"] == turn
    });
    let messages = message_entries(&file);
    let last = messages.last().expect("messages");
    assert_eq!(last["message"]["role"], "assistant");
    assert_eq!(
        last["message"]["stopReason"], "aborted",
        "the agent wrote its aborted answer"
    );
    // The file stays loadable: a fresh engine reads every line without a problem.
    assert_checks_clean(&file);
    // And the agent answers the next prompt.
    server.prompt_to_end(&session, "after the abort", "the next answer", 60);
    let texts = message_texts(&file);
    assert_eq!(
        texts.last().map(String::as_str),
        Some("echo: after the abort")
    );
    server.shutdown();
}

#[test]
fn pi_abort_then_continue() {
    abort_then_continue(Agent::Pi);
}

#[test]
fn omp_abort_then_continue() {
    abort_then_continue(Agent::Omp);
}

/// Stop at once, then at once back to an earlier question, edited and sent (what the editors' Stop
/// and `<CR>` on an old question do): the abort answers only once the agent has wound its turn down,
/// so the move right after it is not refused as busy; the edited question hangs under the chosen
/// point, the model is asked exactly once more, with only the context up to there, and nothing
/// is added under the aborted answer.
fn abort_then_prompt_from_an_earlier_point(agent: Agent) {
    let (_dir, model, home, file) = first_question(agent, &holding_rules());
    let (mut server, session) = Server::with_session(&home, &file);
    // Stop as soon as the agent took the prompt (whether or not the model was asked yet).
    server.ok(
        "sessionTree/prompt",
        json!({"uri": session, "text": "slow please"}),
    );
    let aborted = server.ok("sessionTree/abort", json!({"uri": session}));
    assert_eq!(aborted["aborted"], true);
    let status = server.ok("sessionTree/agent", json!({"uri": session}));
    assert_eq!(
        status["state"], "idle",
        "the abort answers once the turn is over: {status}"
    );
    // The last message the aborted turn left: its aborted answer once the model was asked (an
    // agent stopped before that may have written no answer at all); nothing may hang under it.
    let aborted_tail = message_entries(&file)
        .last()
        .cloned()
        .expect("the messages before the move");
    let stop = &aborted_tail["message"]["stopReason"];
    assert!(
        stop.is_null()
            || stop == "aborted"
            || aborted_tail["id"] == message_entries(&file)[1]["id"],
        "the turn ends aborted, or before any answer: {aborted_tail}"
    );
    let first_user = message_entries(&file)[0].clone();
    let nav = server.request(
        "sessionTree/navigate",
        json!({"uri": session, "targetId": first_user["id"]}),
    );
    assert!(
        nav.get("error").is_none(),
        "the move right after the abort is taken: {nav}"
    );
    let before = model.requests().len();
    server.prompt_to_end(&session, "edited question", "the edited answer's end", 90);
    // Once the agent is idle again, look at what the model was asked and what the file holds.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while server.ok("sessionTree/agent", json!({"uri": session}))["state"] != "idle" {
        assert!(
            std::time::Instant::now() < deadline,
            "the agent is idle again after the answer"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let requests = model.requests();
    let asked: Vec<Vec<String>> = requests[before..].iter().map(conversation).collect();
    assert_eq!(
        asked,
        [vec!["user: edited question".to_owned()]],
        "one model call, with only the path up to the chosen point"
    );
    let messages = message_entries(&file);
    let edited = messages
        .iter()
        .find(|m| text_of_entry(m) == "edited question")
        .expect("the edited question in the file");
    assert_eq!(edited["parentId"], first_user["parentId"]);
    assert!(
        !messages.iter().any(|m| m["parentId"] == aborted_tail["id"]),
        "nothing hangs under what the aborted turn left: {messages:?}"
    );
    let texts: Vec<String> = messages.iter().map(text_of_entry).collect();
    assert_eq!(
        texts.iter().filter(|t| *t == "edited question").count(),
        1,
        "the edited question is written once: {texts:?}"
    );
    server.shutdown();
}

#[test]
fn pi_abort_then_prompt_from_an_earlier_point() {
    abort_then_prompt_from_an_earlier_point(Agent::Pi);
}

#[test]
fn omp_abort_then_prompt_from_an_earlier_point() {
    abort_then_prompt_from_an_earlier_point(Agent::Omp);
}

/// An agent killed mid-turn: the client gets a clear `exited` event and state, nothing written
/// is lost or torn, and the next prompt starts a new agent that answers.
fn killed_mid_turn(agent: Agent) {
    let (_dir, _model, home, file) = first_question(agent, &holding_rules());
    let (mut server, session) = Server::with_session(&home, &file);
    let turn = start_slow_turn(&mut server, &session);
    let status = server.ok("sessionTree/agent", json!({"uri": session}));
    assert_eq!(status["state"], "running");
    let pid = status["pid"].as_u64().expect("the agent's pid");
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let exited = server.wait_for("the exit event", 30, |m| is_event(m, &session, "exited"));
    assert_eq!(
        exited["params"]["turn"], turn,
        "the exit is reported on the turn it broke"
    );
    let status = server.ok("sessionTree/agent", json!({"uri": session}));
    assert_eq!(status["state"], "exited", "{status}");
    assert!(
        status["message"]
            .as_str()
            .is_some_and(|m| m.contains("exited")),
        "{status}"
    );
    // Every line is whole: the file loads without a problem, the user's prompt is kept.
    assert_checks_clean(&file);
    let texts = message_texts(&file);
    assert!(texts.contains(&"slow please".to_owned()), "{texts:?}");
    // The next prompt starts a new agent.
    let next = server.prompt_to_end(&session, "are you back", "the new agent's answer", 90);
    assert_ne!(next["agent"]["pid"].as_u64(), Some(pid));
    let texts = message_texts(&file);
    assert_eq!(texts.last().map(String::as_str), Some("echo: are you back"));
    server.shutdown();
}

#[test]
fn pi_killed_mid_turn() {
    killed_mid_turn(Agent::Pi);
}

#[test]
fn omp_killed_mid_turn() {
    killed_mid_turn(Agent::Omp);
}

/// No agent installed: the prompt fails with a clear error naming the setting, and the state
/// says so; nothing is written.
#[test]
fn a_missing_agent_is_a_clear_error() {
    let (_dir, _model, home, file) = first_question(Agent::Pi, &json!([]));
    let before = std::fs::read(&file).expect("read");
    let mut server = Server::start(
        &home,
        json!({"agent": {"piPath": "/nonexistent/bin/pi"}}),
        json!({}),
    );
    let session = uri(&file);
    server.ok("sessionTree/open", json!({"uri": session}));
    let refused = server.request(
        "sessionTree/prompt",
        json!({"uri": session, "text": "hello"}),
    );
    assert_eq!(kind(&refused["error"]), "agentNotInstalled", "{refused}");
    let message = refused["error"]["message"].as_str().unwrap_or("");
    assert!(
        message.contains("/nonexistent/bin/pi") && message.contains("agent.piPath"),
        "{message}"
    );
    let status = server.ok("sessionTree/agent", json!({"uri": session}));
    assert_eq!(status["state"], "unavailable");
    assert_eq!(
        std::fs::read(&file).expect("read"),
        before,
        "nothing was written"
    );
    server.shutdown();
}

/// An agent without the bridge works in the session's folder: a label is refused with
/// `agentRunning` (nothing written) unless the client forces it.
#[test]
fn no_write_behind_an_agent_without_the_bridge() {
    let (_dir, _model, home, file) = first_question(Agent::Pi, &json!([]));
    // The user's agent, running without the bridge (RPC mode keeps it alive and quiet).
    let mut command = std::process::Command::new(home.bin.join("pi"));
    command
        .args(["--mode", "rpc", "--session"])
        .arg(&file)
        .current_dir(&home.project)
        .env("SESSIONTREE_BRIDGE", "off")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    for (k, v) in home.env() {
        command.env(k, v);
    }
    let mut theirs = command.spawn().expect("start the user's agent");
    let (mut server, session) = Server::with_session(&home, &file);
    let first = message_entries(&file)[0]["id"].clone();
    let before = std::fs::read(&file).expect("read");
    let refused = server.request(
        "sessionTree/setLabel",
        json!({"uri": session, "targetId": first, "label": "start"}),
    );
    assert_eq!(kind(&refused["error"]), "agentRunning", "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains(&theirs.id().to_string()) || m.contains("pi process")),
        "{refused}"
    );
    assert_eq!(
        std::fs::read(&file).expect("read"),
        before,
        "nothing was written"
    );
    let forced = server.ok(
        "sessionTree/setLabel",
        json!({"uri": session, "targetId": first, "label": "start", "force": true}),
    );
    assert!(forced["entryId"].is_string());
    let _ = theirs.kill();
    let _ = theirs.wait();
    server.shutdown();
}

/// While the agent drives the session, a label goes through it (its own label entry, under its
/// leaf), and a summary of the branch left behind is the agent's own, with its preamble.
fn writes_go_through_the_agent(agent: Agent) {
    let (_dir, _model, home, file) = first_question(
        agent,
        &json!([{"when": {"system": "[Ss]ummar"}, "reply": {"text": "SUMMARY OF THE LEFT BRANCH"}}]),
    );
    let (mut server, session) = Server::with_session(&home, &file);
    server.prompt_to_end(&session, "second question", "the answer", 90);
    let first = message_entries(&file)[0].clone();
    let labelled = server.ok(
        "sessionTree/setLabel",
        json!({"uri": session, "targetId": first["id"], "label": "start"}),
    );
    let label_id = labelled["entryId"].clone();
    let label_entry = entries(&file)
        .into_iter()
        .find(|e| e["id"] == label_id)
        .expect("the agent's label entry in the file");
    assert_eq!(label_entry["type"], "label");
    assert_eq!(label_entry["targetId"], first["id"]);
    assert_eq!(
        labelled["leaf"], label_id,
        "the label entry is the leaf, in the agent and here"
    );
    // Back to the first answer, with the agent's own summary of what is left behind.
    let first_answer = message_entries(&file)[1].clone();
    let nav = server.ok(
        "sessionTree/navigate",
        json!({"uri": session, "targetId": first_answer["id"], "summarize": "summarize"}),
    );
    let summary_id = nav["summaryEntryId"].clone();
    assert!(summary_id.is_string(), "{nav}");
    assert_eq!(nav["newLeaf"], summary_id);
    let summary = entries(&file)
        .into_iter()
        .find(|e| e["id"] == summary_id)
        .expect("the summary entry in the file");
    assert_eq!(summary["type"], "branch_summary");
    assert_eq!(summary["parentId"], first_answer["id"]);
    let text = summary["summary"].as_str().unwrap_or("");
    assert!(text.contains("SUMMARY OF THE LEFT BRANCH"), "{text}");
    let announced = server.wait_for("didNavigate with the summary", 10, |m| {
        m["method"] == "sessionTree/didNavigate" && m["params"]["summaryEntryId"] == summary_id
    });
    assert_eq!(announced["params"]["newLeaf"], summary_id);
    server.shutdown();
}

#[test]
fn pi_writes_go_through_the_agent() {
    writes_go_through_the_agent(Agent::Pi);
}

#[test]
fn omp_writes_go_through_the_agent() {
    writes_go_through_the_agent(Agent::Omp);
}

/// `sessiontree continue`: the real agent answers from the entry given, the answer is printed as
/// it streams (JSON events with `--json`), the file is left as the agent left it.
fn continue_from_the_command_line(agent: Agent) {
    let (_dir, _model, home, file) = first_question(agent, &json!([]));
    let answer = message_entries(&file)[1].clone();
    let run = |args: &[&str]| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_sessiontree"));
        command.arg("continue").arg(&file).args(args);
        for (k, v) in home.env() {
            command.env(k, v);
        }
        command.output().expect("sessiontree continue")
    };
    let at = answer["id"].as_str().expect("id");
    let out = run(&["--at", at, "--message", "and then"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "echo: and then\n");
    let messages = message_entries(&file);
    let asked = messages
        .iter()
        .find(|m| text_of_entry(m) == "and then")
        .expect("the prompt in the file");
    assert_eq!(
        asked["parentId"], answer["id"],
        "the new message is a child of --at"
    );
    // JSON events, from the same entry again: a sibling of the first continuation.
    let out = run(&["--at", at, "--message", "or else", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON event per line"))
        .collect();
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|e| e["event"]["kind"].as_str())
        .collect();
    // The agent's leaf moved to --at first, then the turn.
    assert_eq!(kinds[..2], ["leaf", "agentStart"], "{kinds:?}");
    assert_eq!(events[0]["event"]["leaf"], answer["id"]);
    assert_eq!(kinds.last(), Some(&"agentEnd"));
    let text: String = events
        .iter()
        .filter(|e| e["event"]["kind"] == "delta")
        .filter_map(|e| e["event"]["text"].as_str())
        .collect();
    assert_eq!(text, "echo: or else");
    let messages = message_entries(&file);
    let other = messages
        .iter()
        .find(|m| text_of_entry(m) == "or else")
        .expect("the second prompt");
    assert_eq!(other["parentId"], answer["id"]);
    // An entry that is not there, and a missing agent: clear errors, nothing written.
    let before = std::fs::read(&file).expect("read");
    let out = run(&["--at", "nosuchid", "--message", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("entry nosuchid is not in"));
    let out = run(&[
        "--at",
        at,
        "--message",
        "x",
        "--executable",
        "/nonexistent/agent",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/agent"));
    assert_eq!(std::fs::read(&file).expect("read"), before);
}

#[test]
fn pi_continue_from_the_command_line() {
    continue_from_the_command_line(Agent::Pi);
}

#[test]
fn omp_continue_from_the_command_line() {
    continue_from_the_command_line(Agent::Omp);
}

/// The agent the user runs in a terminal (the real omp TUI in a pty, with the bridge installed
/// by `sessiontree install-bridge`): the editor prompts it, moves its leaf once the user allowed
/// it, and the agent's own `/tree` move reaches the editor.
#[test]
fn omp_in_a_terminal_is_driven_from_the_editor() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = ModelServer::start(dir.path(), &json!([]));
    let home = Home::new(&model);
    let install = std::process::Command::new(env!("CARGO_BIN_EXE_sessiontree"))
        .args(["install-bridge", "--agent", "omp", "--dir"])
        .arg(home.home.join(".omp/agent/extensions"))
        .output()
        .expect("sessiontree install-bridge");
    assert!(
        install.status.success(),
        "{}",
        String::from_utf8_lossy(&install.stderr)
    );
    assert!(String::from_utf8_lossy(&install.stdout).starts_with("installed "));
    let file = home.first_session(Agent::Omp, "first question");
    let command = format!(
        "{} --resume {}",
        home.bin.join("omp").display(),
        file.display()
    );
    let tui = Tmux::start(
        dir.path().join("tmux.sock"),
        &home.project,
        &home.env(),
        &command,
    );
    tui.wait_for("first question", 60);
    home.wait_for_bridge(60);
    let (mut server, session) = Server::with_session(&home, &file);
    let status = server.ok("sessionTree/agent", json!({"uri": session}));
    assert_eq!(status["source"], "terminal", "{status}");
    assert_eq!(status["armed"], false);
    // A prompt from the editor: the terminal agent answers it (and shows it).
    server.prompt_to_end(
        &session,
        "from the editor",
        "the terminal agent's answer",
        90,
    );
    tui.wait_for("echo: from the editor", 30);
    let messages = message_entries(&file);
    let texts: Vec<String> = messages.iter().map(text_of_entry).collect();
    assert_eq!(texts[2..], ["from the editor", "echo: from the editor"]);
    // Moving its leaf needs the user's leave once: the bridge types /sessiontree into its input.
    let first = messages[0].clone();
    let refused = server.request(
        "sessionTree/navigate",
        json!({"uri": session, "targetId": first["id"]}),
    );
    assert_eq!(kind(&refused["error"]), "agentNotArmed", "{refused}");
    tui.wait_for("/sessiontree", 10);
    tui.keys(&["Enter"]);
    server.wait_for("the bridge armed", 30, |m| {
        is_event(m, &session, "status") && m["params"]["event"]["status"]["armed"] == true
    });
    let nav = server.ok(
        "sessionTree/navigate",
        json!({"uri": session, "targetId": first["id"]}),
    );
    assert_eq!(nav["newLeaf"], first["parentId"]);
    assert_eq!(nav["editorText"], "first question");
    // The agent's own /tree: the user picks the first answer in the terminal.
    let first_answer = messages[1].clone();
    server.seen.clear();
    // Its input holds the text the navigation put back: clear the line first.
    tui.keys(&["C-u", "/tree", "Enter"]);
    tui.wait_for("Session Tree", 15);
    tui.keys(&["Home", "Down", "Enter"]);
    // The editor's own move above is echoed too (a didNavigate and the agent's leaf event to
    // `first`'s parent), and under load the echo can come after `seen` was cleared: the terminal's
    // move is the first one to another leaf.
    let editors_leaf = first["parentId"].clone();
    let moved = server.wait_for("didNavigate from the terminal", 30, |m| {
        m["method"] == "sessionTree/didNavigate"
            && m["params"]["uri"] == session
            && m["params"]["newLeaf"] != editors_leaf
    });
    assert_eq!(moved["params"]["newLeaf"], first_answer["id"], "{moved}");
    let leaf = server.wait_for("the agent's leaf event", 10, |m| {
        is_event(m, &session, "leaf") && m["params"]["event"]["leaf"] != editors_leaf
    });
    assert_eq!(leaf["params"]["event"]["leaf"], first_answer["id"]);
    server.shutdown();
}

/// An extension inside the agent opens a dialog: a client that shows dialogs gets it and its
/// answer reaches the extension; for a client that does not, the dialog is cancelled at once, so
/// the agent never waits on a question nobody sees.
fn dialog_answered(answer: Option<Value>) -> Value {
    let (_dir, _model, home, file) = first_question(Agent::Pi, &json!([]));
    let extension = support::agents::repo().join("server/lsp/tests/fixtures/ask-user-extension.ts");
    let options = json!({"agent": {"piArgs": ["-e", extension]}});
    let dialogs = answer.is_some();
    let mut server = Server::start(&home, options, json!({"agentDialogs": dialogs}));
    if let Some(answer) = answer {
        server
            .answers
            .insert("sessionTree/agentDialog".into(), answer);
    }
    let session = uri(&file);
    server.ok("sessionTree/open", json!({"uri": session}));
    server.ok(
        "sessionTree/prompt",
        json!({"uri": session, "text": "/ask-user"}),
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let recorded = loop {
        if let Some(e) = entries(&file)
            .into_iter()
            .find(|e| e["customType"] == "dialog-answer")
        {
            break e;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the extension never recorded an answer"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    if dialogs {
        let asked = server.wait_for("the dialog", 5, |m| {
            m["method"] == "sessionTree/agentDialog"
        });
        assert_eq!(asked["params"]["dialog"], "select");
        assert_eq!(asked["params"]["title"], "Pick a colour");
        assert_eq!(asked["params"]["options"], json!(["red", "blue"]));
    } else {
        assert!(
            !server
                .seen
                .iter()
                .any(|m| m["method"] == "sessionTree/agentDialog"),
            "a client that did not declare agentDialogs is never asked"
        );
    }
    server.shutdown();
    recorded["data"].clone()
}

#[test]
fn an_agents_dialog_reaches_a_client_that_shows_dialogs() {
    assert_eq!(
        dialog_answered(Some(json!({"value": "blue"}))),
        json!({"value": "blue"})
    );
}

#[test]
fn an_agents_dialog_is_cancelled_for_a_client_that_does_not() {
    assert_eq!(dialog_answered(None), json!({"value": null}));
}
