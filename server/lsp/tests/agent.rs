//! The live agent, for real: the real pi and omp (installed by `scripts/install-agents.sh`) answer
//! through the real server against the tests' loopback model server. Each test checks what the
//! user relies on: where the new messages hang in the tree, exactly what the model received,
//! the streamed answer, abort, an agent killed mid-turn, a missing agent, and the refusal to
//! write behind an agent that has no bridge.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod support;

use serde_json::{json, Value};
use support::agents::{entries, is_event, Agent, Home, ModelServer, Server};
use support::uri;

/// The text of a user message as the model received it (content string or text parts), without
/// omp's `<system-reminder>` blocks.
fn user_text(message: &Value) -> String {
    let text = match &message["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    };
    match (
        text.find("<system-reminder>"),
        text.find("</system-reminder>"),
    ) {
        (Some(a), Some(b)) => format!("{}{}", &text[..a], &text[b + "</system-reminder>".len()..])
            .trim()
            .to_owned(),
        _ => text.trim().to_owned(),
    }
}

/// The user and assistant texts of a chat request, in order (`role: text`).
fn conversation(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "user" || m["role"] == "assistant")
        .map(|m| format!("{}: {}", m["role"].as_str().unwrap_or(""), user_text(m)))
        .collect()
}

fn message_entries(file: &std::path::Path) -> Vec<Value> {
    entries(file)
        .into_iter()
        .filter(|e| e["type"] == "message")
        .collect()
}

fn text_of_entry(e: &Value) -> String {
    user_text(&e["message"])
}

/// Selecting an old user message, editing it and sending makes the real agent answer from
/// exactly that point: the new user message hangs under the old one's parent, the model sees
/// only the context up to there, the answer streams in order and lands in the file.
fn prompt_from_an_earlier_point(agent: Agent) {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = ModelServer::start(dir.path(), &json!([]));
    let home = Home::new(&model);
    let file = home.first_session(agent, "first question");
    // A second exchange, so there is something to go back from.
    let mut server = Server::start(&home, json!({}), json!({}));
    let session = uri(&file);
    server.ok("sessionTree/open", json!({"uri": session}));
    let turn = server.ok(
        "sessionTree/prompt",
        json!({"uri": session, "text": "second question"}),
    );
    assert_eq!(turn["agent"]["source"], "spawned");
    let first_turn = turn["turn"].as_u64().expect("turn");
    server.wait_for("the first answer's end", 90, |m| {
        is_event(m, &session, "agentEnd") && m["params"]["turn"] == first_turn
    });
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
    let answer = server.ok(
        "sessionTree/prompt",
        json!({"uri": session, "text": "edited question"}),
    );
    let turn = answer["turn"].as_u64().expect("turn");
    server.wait_for("the edited answer's end", 90, |m| {
        is_event(m, &session, "agentEnd") && m["params"]["turn"] == turn
    });
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
    let transcript = server.ok("sessionTree/transcript", json!({"uri": session}));
    let roles: Vec<String> = transcript["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| {
            format!(
                "{}: {}",
                i["role"].as_str().unwrap_or(""),
                i["blocks"][0]["text"].as_str().unwrap_or("")
            )
        })
        .collect();
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
