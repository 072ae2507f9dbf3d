//! The real agents for tests: pi and omp as `scripts/install-agents.sh` installs them (a test
//! fails when they cannot be installed), a home folder of their own whose only model is the
//! tests' loopback model server (`scripts/testing/model-server.mjs`), sessions written by the
//! agents themselves, and the real `sessiontree` binary over stdio as the editor's server.

use serde_json::{json, Value};
use sessiontree_testkit::lsp::{is_response, Connection};
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub use sessiontree_testkit::agents::repo;

/// The folder with the `pi`, `omp` and `bun` launchers (installed on first use).
pub fn agent_bin() -> PathBuf {
    sessiontree_testkit::agents::agents_bin().to_path_buf()
}

/// The tests' model server: answers depend on the prompt (rules), every request is logged.
pub struct ModelServer {
    child: Child,
    /// Its OpenAI-compatible base URL (`http://127.0.0.1:N/v1`).
    pub url: String,
    /// The rules file (rewrite it to change the answers).
    pub rules: PathBuf,
    /// Every request it received, one JSON line each.
    pub log: PathBuf,
}

impl ModelServer {
    /// Starts it with `rules` (a JSON array; see the script's header).
    pub fn start(dir: &Path, rules: &Value) -> ModelServer {
        let rules_file = dir.join("model-rules.json");
        std::fs::write(&rules_file, rules.to_string()).expect("write rules");
        let log = dir.join("model-requests.jsonl");
        let mut child = Command::new("node")
            .arg(repo().join("scripts/testing/model-server.mjs"))
            .arg("--rules")
            .arg(&rules_file)
            .arg("--log")
            .arg(&log)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the model server (node)");
        let mut first = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut first)
            .expect("the model server's port");
        let hello: Value = serde_json::from_str(&first).expect("the model server's first line");
        ModelServer {
            child,
            url: hello["url"].as_str().expect("url").to_owned(),
            rules: rules_file,
            log,
        }
    }

    /// Replaces the rules.
    pub fn set_rules(&self, rules: &Value) {
        std::fs::write(&self.rules, rules.to_string()).expect("write rules");
    }

    /// The chat requests received so far (their bodies).
    pub fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .map(|v| v["body"].clone())
            .collect()
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Which agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    /// pi.
    Pi,
    /// omp.
    Omp,
}

impl Agent {
    /// Its command name.
    pub fn name(self) -> &'static str {
        match self {
            Agent::Pi => "pi",
            Agent::Omp => "omp",
        }
    }
}

/// A home folder for the agents (their settings, models and sessions) and a project folder.
pub struct Home {
    /// Keeps the folder.
    pub dir: tempfile::TempDir,
    /// `HOME`.
    pub home: PathBuf,
    /// The project the sessions work in (a git repository).
    pub project: PathBuf,
    /// The launchers.
    pub bin: PathBuf,
    /// More environment for the agents and the server (after the rest).
    pub extra_env: Vec<(String, String)>,
}

impl Home {
    /// A home whose agents' only model is `model`.
    pub fn new(model: &ModelServer) -> Home {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().join("home");
        let project = dir.path().join("project");
        std::fs::create_dir_all(home.join(".pi/agent")).expect("pi dir");
        std::fs::create_dir_all(home.join(".omp/agent")).expect("omp dir");
        std::fs::create_dir_all(&project).expect("project dir");
        let pi_models = json!({"providers": {"loop": {
            "baseUrl": model.url, "api": "openai-completions", "apiKey": "test",
            "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
            "models": [{"id": "test-model"}]
        }}});
        std::fs::write(home.join(".pi/agent/models.json"), pi_models.to_string())
            .expect("pi models");
        let omp_models = format!(
            "providers:\n  loop:\n    baseUrl: {}\n    api: openai-completions\n    apiKey: test\n    compat:\n      supportsDeveloperRole: false\n      supportsReasoningEffort: false\n    models:\n      - id: test-model\n",
            model.url
        );
        std::fs::write(home.join(".omp/agent/models.yml"), omp_models).expect("omp models");
        let git = Command::new("git")
            .args(["init", "-q"])
            .current_dir(&project)
            .status()
            .expect("git init");
        assert!(git.success());
        Home {
            dir,
            home,
            project,
            bin: agent_bin(),
            extra_env: Vec::new(),
        }
    }

    /// The environment the agents (and the server that starts them) run with.
    pub fn env(&self) -> Vec<(String, String)> {
        let path = format!(
            "{}:{}",
            self.bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut env: Vec<(String, String)> = vec![
            ("HOME".into(), self.home.display().to_string()),
            ("PI_OFFLINE".into(), "1".into()),
            ("PATH".into(), path),
            (
                "XDG_RUNTIME_DIR".into(),
                self.runtime_dir().display().to_string(),
            ),
            (
                "XDG_CONFIG_HOME".into(),
                self.home.join(".config").display().to_string(),
            ),
            (
                "XDG_DATA_HOME".into(),
                self.home.join(".local/share").display().to_string(),
            ),
            (
                "XDG_CACHE_HOME".into(),
                self.home.join(".cache").display().to_string(),
            ),
        ];
        env.extend(self.extra_env.iter().cloned());
        env
    }

    /// The private folder the bridge and the server share.
    pub fn runtime_dir(&self) -> PathBuf {
        let dir = self.dir.path().join("run");
        std::fs::create_dir_all(&dir).expect("run dir");
        dir
    }

    /// Waits until a bridge (an agent the user runs in a terminal) announced itself in the
    /// private folder the bridge and the server share.
    pub fn wait_for_bridge(&self, secs: u64) {
        let run = self.runtime_dir().join("sessiontree");
        let deadline = Instant::now() + Duration::from_secs(secs);
        while !std::fs::read_dir(&run)
            .map(|d| {
                d.flatten()
                    .any(|e| e.path().extension().is_some_and(|x| x == "json"))
            })
            .unwrap_or(false)
        {
            assert!(
                Instant::now() < deadline,
                "no discovery file in {}",
                run.display()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The agent's session folder.
    pub fn sessions(&self, agent: Agent) -> PathBuf {
        match agent {
            Agent::Pi => self.home.join(".pi/agent/sessions"),
            Agent::Omp => self.home.join(".omp/agent/sessions"),
        }
    }

    /// Runs the agent once in print mode with `prompt`, as a user would, and returns the session
    /// file it wrote.
    pub fn first_session(&self, agent: Agent, prompt: &str) -> PathBuf {
        let before = session_files(&self.sessions(agent));
        let mut command = Command::new(self.bin.join(agent.name()));
        command
            .args(["-p", prompt])
            .current_dir(&self.project)
            .stdin(Stdio::null());
        for (k, v) in self.env() {
            command.env(k, v);
        }
        let out = command.output().expect("run the agent");
        assert!(
            out.status.success(),
            "{} -p failed: {}{}",
            agent.name(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let after = session_files(&self.sessions(agent));
        let new: Vec<_> = after.into_iter().filter(|f| !before.contains(f)).collect();
        assert_eq!(new.len(), 1, "{} wrote one new session file", agent.name());
        new.into_iter().next().expect("the session")
    }
}

/// A model server answering by `rules`, a home whose agents' only model it is, and the session
/// `agent` wrote there for the prompt "first question". The folder (the model server's rules
/// and log) comes first, so it goes last when the caller's bindings are dropped.
pub fn first_question(
    agent: Agent,
    rules: &Value,
) -> (tempfile::TempDir, ModelServer, Home, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = ModelServer::start(dir.path(), rules);
    let home = Home::new(&model);
    let file = home.first_session(agent, "first question");
    (dir, model, home, file)
}

/// The text of a message as the model received it or a session holds it (content string or text parts), without
/// omp's `<system-reminder>` blocks.
pub fn message_text(message: &Value) -> String {
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
pub fn conversation(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "user" || m["role"] == "assistant")
        .map(|m| format!("{}: {}", m["role"].as_str().unwrap_or(""), message_text(m)))
        .collect()
}

/// Every `.jsonl` under `dir`.
pub fn session_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(read) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in read.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(session_files(&path));
        } else if path.extension().and_then(|e| e.to_str()) == Some("jsonl") {
            out.push(path);
        }
    }
    out
}

/// The entries of a session file (the omp title slot and blank lines skipped).
pub fn entries(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .expect("read the session")
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .filter(|v| v.get("type").is_some())
        .collect()
}

/// The message entries of a session file, in file order.
pub fn message_entries(file: &Path) -> Vec<Value> {
    entries(file)
        .into_iter()
        .filter(|e| e["type"] == "message")
        .collect()
}

/// How long a request waits for its answer.
const ANSWER_WITHIN: Duration = Duration::from_secs(120);

/// The real server over stdio (a [`Connection`]): requests wait for their answers, every
/// notification and server request is kept in arrival order.
pub struct Server {
    conn: Connection,
    /// Notifications and server requests seen so far, in order.
    pub seen: Vec<Value>,
    /// Answers to give to server requests by method (default `null`).
    pub answers: HashMap<String, Value>,
}

/// The answer `answers` gives to a request from the server (`null` for a method it does not
/// name); `None` for any other message.
fn server_request_answer(answers: &HashMap<String, Value>, msg: &Value) -> Option<Value> {
    let method = msg.get("method").and_then(Value::as_str)?;
    msg.get("id")?;
    Some(answers.get(method).cloned().unwrap_or(Value::Null))
}

impl Server {
    /// Starts `sessiontree lsp` in `home`'s environment and initializes it with `options`.
    pub fn start(home: &Home, options: Value, experimental: Value) -> Server {
        Server::start_logging(home, options, experimental, "info", Stdio::inherit())
    }

    /// [`Server::start`] with a log filter and where its log goes.
    pub fn start_logging(
        home: &Home,
        options: Value,
        experimental: Value,
        filter: &str,
        log: Stdio,
    ) -> Server {
        let mut command = Command::new(env!("CARGO_BIN_EXE_sessiontree"));
        command.arg("lsp").stderr(log);
        for (k, v) in home.env() {
            command.env(k, v);
        }
        command.env("SESSIONTREE_LOG", filter);
        let mut server = Server {
            conn: Connection::spawn(command).expect("spawn sessiontree lsp"),
            seen: Vec::new(),
            answers: Default::default(),
        };
        let root = format!("file://{}", home.dir.path().display());
        let init = server.request(
            "initialize",
            json!({
                "processId": null,
                "rootUri": root,
                "capabilities": {"experimental": {"sessionTree": experimental}},
                "initializationOptions": options,
            }),
        );
        assert!(init.get("result").is_some(), "initialize: {init}");
        server.notify("initialized", json!({}));
        server
    }

    /// [`Server::start`] without options, with `file` opened; the server and the session's URI.
    pub fn with_session(home: &Home, file: &Path) -> (Server, String) {
        let mut server = Server::start(home, json!({}), json!({}));
        let session = super::uri(file);
        server.ok("sessionTree/open", json!({"uri": session}));
        (server, session)
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) {
        self.conn.notify(method, params).expect("write");
    }

    /// Sends a request; its id.
    pub fn send(&mut self, method: &str, params: Value) -> i64 {
        self.conn.send_request(method, params).expect("write")
    }

    /// Waits for the answer to request `id` (two minutes at most); every other message is
    /// kept as seen.
    pub fn answer(&mut self, id: i64) -> Value {
        let (seen, answers) = (&mut self.seen, &self.answers);
        let each = |msg: &Value| {
            if !is_response(msg, id) {
                seen.push(msg.clone());
            }
            server_request_answer(answers, msg)
        };
        match self
            .conn
            .until(ANSWER_WITHIN, each, |msg| is_response(msg, id))
        {
            Ok((_, msg)) => msg,
            Err(e) => panic!("no answer to request {id} within two minutes: {e}"),
        }
    }

    /// Sends a request and waits for its answer (the whole message: `result` or `error`).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params);
        self.answer(id)
    }

    /// The session's transcript as `role: first block's text` lines, in order.
    pub fn transcript_lines(&mut self, uri: &str) -> Vec<String> {
        let transcript = self.ok("sessionTree/transcript", json!({"uri": uri}));
        transcript["items"]
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
            .collect()
    }

    /// Sends a request that must succeed; its result.
    pub fn ok(&mut self, method: &str, params: Value) -> Value {
        let answer = self.request(method, params.clone());
        assert!(
            answer.get("error").is_none(),
            "{method} {params} failed: {answer}"
        );
        answer["result"].clone()
    }

    /// Waits until a message seen (from now or before) satisfies `pred`; it and everything seen.
    pub fn wait_for(&mut self, what: &str, secs: u64, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(found) = self.seen.iter().find(|m| pred(m)) {
            return found.clone();
        }
        let (seen, answers) = (&mut self.seen, &self.answers);
        let each = |msg: &Value| {
            seen.push(msg.clone());
            server_request_answer(answers, msg)
        };
        match self.conn.until(Duration::from_secs(secs), each, &pred) {
            Ok((_, msg)) => msg,
            Err(e) => panic!(
                "{what} did not come within {secs} s ({e}); seen: {}",
                serde_json::to_string_pretty(&self.seen).unwrap_or_default()
            ),
        }
    }

    /// Sends `text` as a prompt on `uri` and waits up to `secs` for that turn's `agentEnd` (`what`
    /// names it if it does not come); the prompt's result (`turn`, `agent`, `revision`).
    pub fn prompt_to_end(&mut self, uri: &str, text: &str, what: &str, secs: u64) -> Value {
        let answer = self.ok("sessionTree/prompt", json!({"uri": uri, "text": text}));
        let turn = answer["turn"].clone();
        assert!(turn.is_u64(), "the prompt gave no turn: {answer}");
        self.wait_for(what, secs, |m| {
            is_event(m, uri, "agentEnd") && m["params"]["turn"] == turn
        });
        answer
    }

    /// The `agentEvent` bodies seen so far for `uri`, in order (with their turns).
    pub fn agent_events(&self, uri: &str) -> Vec<Value> {
        self.seen
            .iter()
            .filter(|m| m["method"] == "sessionTree/agentEvent" && m["params"]["uri"] == uri)
            .map(|m| m["params"].clone())
            .collect()
    }

    /// The next message within `timeout` (server requests answered), recorded as seen, and the
    /// moment it arrived.
    pub fn next_seen(&mut self, timeout: Duration) -> Option<(Value, Instant)> {
        let (seen, answers) = (&mut self.seen, &self.answers);
        let each = |msg: &Value| {
            seen.push(msg.clone());
            server_request_answer(answers, msg)
        };
        let (at, msg) = self.conn.until(timeout, each, |_| true).ok()?;
        Some((msg, at))
    }

    /// Shuts the server down cleanly and waits for it to exit.
    pub fn shutdown(mut self) {
        let _ = self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let _ = self.conn.child().wait();
    }
}

/// `true` for an `agentEvent` of `uri` whose body is of `kind`.
pub fn is_event(msg: &Value, uri: &str, kind: &str) -> bool {
    msg["method"] == "sessionTree/agentEvent"
        && msg["params"]["uri"] == uri
        && msg["params"]["event"]["kind"] == kind
}
