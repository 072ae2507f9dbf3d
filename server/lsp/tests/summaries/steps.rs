//! The steps the summary tests are made of: a client set up with summary settings (the agents'
//! own settings folders kept out), a fixture copied and opened, a move that asks for a summary,
//! and what the session file and the server hold afterwards.

use super::support::inproc::{Answer, Client, Opened};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

/// Initialization options that turn summaries on through an OpenAI-compatible model at
/// `base_url`, its key read from the variable `key_env`.
pub fn openai_options(base_url: &str, key_env: Option<&str>) -> Value {
    let mut openai = json!({"baseUrl": base_url, "model": "test-model", "timeoutSeconds": 30});
    if let Some(k) = key_env {
        openai["apiKeyEnv"] = json!(k);
    }
    json!({"branchSummary": {"enabled": true, "provider": "openai", "openai": openai}})
}

/// Initialization options that turn summaries on through the command `argv`.
pub fn command_options(argv: Value) -> Value {
    json!({"branchSummary": {"enabled": true, "provider": "command", "command": {"argv": argv, "timeoutSeconds": 20}}})
}

/// Agent folders that do not exist, so the user's own settings files stay out of the tests.
pub fn isolated(mut options: Value, dir: &Path) -> Value {
    options["ompAgentDir"] = json!(dir.join("no-omp").display().to_string());
    options["piAgentDir"] = json!(dir.join("no-pi").display().to_string());
    options
}

/// Options naming the agents' settings folders: `omp_dir` and `pi_dir` where given, else
/// folders under `dir` that do not exist.
pub fn agent_dirs(dir: &Path, omp_dir: Option<&Path>, pi_dir: Option<&Path>) -> Value {
    let omp = omp_dir.map_or_else(|| dir.join("no-omp"), Path::to_path_buf);
    let pi = pi_dir.map_or_else(|| dir.join("no-pi"), Path::to_path_buf);
    json!({"ompAgentDir": omp.display().to_string(), "piAgentDir": pi.display().to_string()})
}

/// Writes an agent's settings file, its folder made when missing.
pub fn write_settings(path: &Path, text: impl AsRef<[u8]>) {
    std::fs::create_dir_all(path.parent().expect("a folder")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// A client that shows progress, with these initialization options (and hooks when `answer`).
pub async fn client(options: Value, answer: Option<Answer>) -> (Client, Value) {
    let hooks = answer.is_some();
    let c = Client::start(answer);
    let mut caps = json!({"window": {"workDoneProgress": true}});
    if hooks {
        caps["experimental"] = json!({"sessionTree": {"hooks": true}});
    }
    let init = c
        .ok(
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": caps, "initializationOptions": options}),
        )
        .await;
    c.notify("initialized", json!({})).await;
    (c, init)
}

/// A client summarizing with the model at `base_url` (no key), isolated under `dir`.
pub async fn openai_client(base_url: &str, dir: &Path) -> Client {
    client(isolated(openai_options(base_url, None), dir), None)
        .await
        .0
}

/// A client summarizing with the command `argv`, isolated under `dir`.
pub async fn command_client(argv: Value, dir: &Path) -> Client {
    client(isolated(command_options(argv), dir), None).await.0
}

/// The params of a move to `target` in `s` that asks for a summary.
pub fn summary_move(s: &Opened, target: &str) -> Value {
    json!({"uri": s.uri, "targetId": target, "summarize": "summarize"})
}

/// The summary written last in `s`'s file.
pub fn last_summary(s: &Opened) -> Value {
    last_line(&s.file)["summary"].clone()
}

/// Copies the fixture `rel` into a new folder `name` under `dir` (beside a first copy) and opens
/// it.
pub async fn open_copy_in(c: &Client, dir: &Path, name: &str, rel: &str) -> Opened {
    let sub = dir.join(name);
    std::fs::create_dir_all(&sub).expect("mkdir");
    c.open_copy(&sub, rel).await
}

/// The requests of a summary test, as the client's own steps.
pub trait Steps {
    /// Moves to `target` asking for a summary; the result (fails when the move fails).
    async fn summarize(&self, s: &Opened, target: &str) -> Value;
    /// Moves to `target` asking for a summary; the error (fails when the move succeeds).
    async fn summarize_fails(&self, s: &Opened, target: &str) -> Value;
    /// The session's leaf as `sessionTree/tree` tells it.
    async fn leaf(&self, s: &Opened) -> Value;
    /// Sends `workspace/didChangeConfiguration` with these `sessiontree` settings.
    async fn configure(&self, sessiontree: Value);
    /// The next `$/progress` notification of this `kind` (`begin`, `report`, `end`) within 10 s
    /// each, those before it skipped; its params.
    async fn progress(&self, kind: &str) -> Value;
}

impl Steps for Client {
    async fn summarize(&self, s: &Opened, target: &str) -> Value {
        self.ok("sessionTree/navigate", summary_move(s, target))
            .await
    }

    async fn summarize_fails(&self, s: &Opened, target: &str) -> Value {
        self.err("sessionTree/navigate", summary_move(s, target))
            .await
    }

    async fn leaf(&self, s: &Opened) -> Value {
        self.ok("sessionTree/tree", json!({"uri": s.uri})).await["leaf"].clone()
    }

    async fn configure(&self, sessiontree: Value) {
        self.notify(
            "workspace/didChangeConfiguration",
            json!({"settings": {"sessiontree": sessiontree}}),
        )
        .await;
    }

    async fn progress(&self, kind: &str) -> Value {
        loop {
            let note = self
                .notification("$/progress", 10)
                .await
                .unwrap_or_else(|| panic!("no $/progress {kind}"));
            if note["value"]["kind"] == kind {
                return note;
            }
        }
    }
}

/// The response a pending request gets within 10 s.
pub async fn answer(pending: tokio::sync::oneshot::Receiver<Value>) -> Value {
    tokio::time::timeout(Duration::from_secs(10), pending)
        .await
        .expect("answer in time")
        .expect("answer")
}

/// The `kind` of each `$/progress` notification among `notes`, in order.
pub fn progress_kinds(notes: &[Value]) -> Vec<String> {
    progress(notes)
        .map(|v| v["kind"].as_str().unwrap_or("").to_owned())
        .collect()
}

/// The `message` of each `$/progress` notification among `notes` that has one, in order.
pub fn progress_messages(notes: &[Value]) -> Vec<String> {
    progress(notes)
        .filter_map(|v| v["message"].as_str().map(str::to_owned))
        .collect()
}

/// The `value` of each `$/progress` notification among `notes`.
fn progress(notes: &[Value]) -> impl Iterator<Item = &Value> {
    notes
        .iter()
        .filter(|n| n["method"] == json!("$/progress"))
        .map(|n| &n["params"]["value"])
}

/// Checks `done` every 50 ms until it holds (true) or a minute has passed (false): the deadline
/// only ends a hang.
pub async fn eventually(mut done: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        if done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// The last line of a session file, parsed.
pub fn last_line(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or(Value::Null)
}

/// The engine's context for the file's leaf (loaded afresh, as the agent would).
pub fn context_messages(path: &Path, leaf: &str) -> Vec<Value> {
    let session = sessiontree_core::Session::open(path, sessiontree_core::OpenOptions::default())
        .expect("reopen");
    let entries: Vec<Value> = session
        .branch_path(Some(leaf))
        .into_iter()
        .filter_map(|i| session.entry_at(i))
        .map(|e| e.json())
        .collect();
    sessiontree_core::context::build_context(session.dialect(), &entries)
        .messages
        .into_iter()
        .map(sessiontree_core::context::Message::into_value)
        .collect()
}

/// Checks the one written `branch_summary` line and the context built from it.
pub fn check_summary_line(
    path: &Path,
    original: &[u8],
    summary_id: &str,
    (parent, flag, from_ext): (&str, &str, bool),
) -> Value {
    let now = std::fs::read(path).expect("read");
    assert!(now.starts_with(original), "only appended");
    let added = String::from_utf8_lossy(&now[original.len()..]).into_owned();
    assert_eq!(added.lines().count(), 1, "exactly one line: {added}");
    let line = last_line(path);
    assert_eq!(line["type"], json!("branch_summary"));
    assert_eq!(line["id"], json!(summary_id));
    assert_eq!(
        line["parentId"],
        json!(parent),
        "attached at the new position"
    );
    assert_eq!(line["fromId"], json!(parent));
    assert_eq!(line[flag], json!(from_ext), "{line}");
    let messages = context_messages(path, summary_id);
    let found = messages
        .iter()
        .find(|m| m["role"] == json!("branchSummary"))
        .unwrap_or_else(|| panic!("no branchSummary in the context: {messages:?}"));
    assert_eq!(found["summary"], line["summary"]);
    line
}
