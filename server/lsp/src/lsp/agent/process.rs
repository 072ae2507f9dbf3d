//! An agent the server starts: `pi --mode rpc --session FILE -e BRIDGE` or
//! `omp --mode rpc --resume FILE -e BRIDGE`, in the session's working folder, with the bridge's
//! socket and token in its environment. Its standard output carries the RPC protocol: command
//! answers go to whoever sent the command, the agent's dialogs (`extension_ui_request`) to the
//! owner; its standard error is kept as a short tail for error messages. Dropping the process
//! kills it.

use super::AgentKind;
use serde_json::{json, Value};
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::process::{ChildStdin, Command};
use tokio::sync::{mpsc, oneshot, watch};

/// How many stderr lines an error message carries.
const STDERR_TAIL: usize = 20;

/// How to start an agent.
#[derive(Debug, Clone)]
pub struct SpawnSpec {
    /// Which agent.
    pub kind: AgentKind,
    /// Its executable.
    pub executable: PathBuf,
    /// Arguments before ours (from the settings).
    pub extra_args: Vec<String>,
    /// The session file it resumes.
    pub session_file: PathBuf,
    /// Its working folder (the session header's `cwd`).
    pub cwd: PathBuf,
    /// The bridge extension file.
    pub bridge: PathBuf,
    /// The socket the bridge listens on.
    pub socket: PathBuf,
    /// The token the bridge asks for.
    pub token: String,
}

impl SpawnSpec {
    /// The command line's arguments.
    pub fn args(&self) -> Vec<String> {
        let file = self.session_file.to_string_lossy().into_owned();
        let session_flag = match self.kind {
            AgentKind::Pi => "--session",
            AgentKind::Omp => "--resume",
        };
        let mut args = self.extra_args.clone();
        args.extend([
            "--mode".to_owned(),
            "rpc".to_owned(),
            session_flag.to_owned(),
            file,
            "-e".to_owned(),
            self.bridge.to_string_lossy().into_owned(),
        ]);
        args
    }
}

/// How the process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exit {
    /// Its exit code (`None`: killed by a signal).
    pub code: Option<i32>,
    /// Its last stderr lines.
    pub stderr_tail: Vec<String>,
}

/// What the agent's standard output tells its owner besides command answers.
#[derive(Debug)]
pub enum Output {
    /// A dialog or a notice of an extension (`extension_ui_request`).
    UiRequest(Value),
}

type Pending = Arc<Mutex<HashMap<String, oneshot::Sender<Value>>>>;

/// A running agent process.
#[derive(Debug)]
pub struct AgentProcess {
    /// Its process id.
    pub pid: Option<u32>,
    stdin: tokio::sync::Mutex<Option<ChildStdin>>,
    pending: Pending,
    next: AtomicU64,
    stderr: Arc<Mutex<VecDeque<String>>>,
    exit: watch::Receiver<Option<Exit>>,
    kill: Mutex<Option<oneshot::Sender<()>>>,
}

/// Starts the agent. `output` receives its dialogs and notices.
pub fn spawn(
    spec: &SpawnSpec,
    output: mpsc::UnboundedSender<Output>,
) -> std::io::Result<AgentProcess> {
    let mut command = Command::new(&spec.executable);
    command
        .args(spec.args())
        .current_dir(&spec.cwd)
        .env("SESSIONTREE_BRIDGE_SOCKET", &spec.socket)
        .env("SESSIONTREE_BRIDGE_TOKEN", &spec.token)
        .env_remove("SESSIONTREE_BRIDGE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(bin) = sessiontree_executable() {
        // The bridge records rewind points with `sessiontree rewind-point`: this very binary.
        command.env("SESSIONTREE_BIN", bin);
    }
    let mut child = command.spawn()?;
    let pid = child.id();
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr_pipe = child.stderr.take();
    let pending: Pending = Arc::default();
    let stderr: Arc<Mutex<VecDeque<String>>> = Arc::default();
    let (exit_tx, exit_rx) = watch::channel(None);
    let (kill_tx, kill_rx) = oneshot::channel::<()>();

    if let Some(stdout) = stdout {
        let pending = Arc::clone(&pending);
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout);
            let mut line = Vec::new();
            loop {
                line.clear();
                match reader.read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let Ok(message) = serde_json::from_slice::<Value>(&line) else {
                    continue;
                };
                match message.get("type").and_then(Value::as_str) {
                    Some("response") => {
                        let id = message.get("id").and_then(Value::as_str).map(str::to_owned);
                        let waiting = id.and_then(|id| pending.lock().ok()?.remove(&id));
                        if let Some(tx) = waiting {
                            let _ = tx.send(message);
                        }
                    }
                    Some("extension_ui_request") => {
                        let _ = output.send(Output::UiRequest(message));
                    }
                    // Everything else the agent says reaches us through the bridge.
                    _ => {}
                }
            }
        });
    }
    if let Some(pipe) = stderr_pipe {
        let tail = Arc::clone(&stderr);
        tokio::spawn(async move {
            let mut lines = BufReader::new(pipe).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!(target: "sessiontree::agent", "{line}");
                if let Ok(mut tail) = tail.lock() {
                    if tail.len() == STDERR_TAIL {
                        tail.pop_front();
                    }
                    tail.push_back(line);
                }
            }
        });
    }
    let tail = Arc::clone(&stderr);
    tokio::spawn(async move {
        let status = tokio::select! {
            status = child.wait() => status,
            _ = kill_rx => {
                let _ = child.start_kill();
                child.wait().await
            }
        };
        // Let the stderr reader take the last lines.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let stderr_tail = tail
            .lock()
            .map(|t| t.iter().cloned().collect())
            .unwrap_or_default();
        let code = status.ok().and_then(|s| s.code());
        let _ = exit_tx.send(Some(Exit { code, stderr_tail }));
    });
    Ok(AgentProcess {
        pid,
        stdin: tokio::sync::Mutex::new(stdin),
        pending,
        next: AtomicU64::new(1),
        stderr,
        exit: exit_rx,
        kill: Mutex::new(Some(kill_tx)),
    })
}

impl AgentProcess {
    /// Sends an RPC command (an object with `type`) and waits for its `response`. `None` when the
    /// process went away first.
    pub async fn rpc(&self, command: Value) -> Option<Value> {
        let id = format!("st{}", self.next.fetch_add(1, Ordering::Relaxed));
        let mut command = match command {
            Value::Object(map) => map,
            _ => return None,
        };
        command.insert("id".to_owned(), Value::from(id.clone()));
        let (tx, rx) = oneshot::channel();
        if let Ok(mut pending) = self.pending.lock() {
            pending.insert(id.clone(), tx);
        }
        if !self.send_line(&Value::Object(command)).await {
            if let Ok(mut pending) = self.pending.lock() {
                pending.remove(&id);
            }
            return None;
        }
        let mut exit = self.exit.clone();
        tokio::select! {
            answer = rx => answer.ok(),
            _ = exit.wait_for(Option::is_some) => None,
        }
    }

    /// Answers a dialog (`extension_ui_response`).
    pub async fn answer_dialog(&self, answer: Value) {
        let mut message = match answer {
            Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        message.insert("type".to_owned(), json!("extension_ui_response"));
        self.send_line(&Value::Object(message)).await;
    }

    async fn send_line(&self, value: &Value) -> bool {
        let Ok(mut line) = serde_json::to_vec(value) else {
            return false;
        };
        line.push(b'\n');
        let mut stdin = self.stdin.lock().await;
        match stdin.as_mut() {
            Some(pipe) => pipe.write_all(&line).await.is_ok() && pipe.flush().await.is_ok(),
            None => false,
        }
    }

    /// How it ended, once it has.
    pub fn exited(&self) -> Option<Exit> {
        self.exit.borrow().clone()
    }

    /// Waits until it ends.
    pub async fn wait(&self) -> Exit {
        let mut exit = self.exit.clone();
        let ended = exit
            .wait_for(Option::is_some)
            .await
            .ok()
            .and_then(|e| e.clone());
        ended.unwrap_or_else(|| Exit {
            code: None,
            stderr_tail: self.stderr_tail(),
        })
    }

    /// Its last stderr lines so far.
    pub fn stderr_tail(&self) -> Vec<String> {
        self.stderr
            .lock()
            .map(|t| t.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Ends it: its standard input is closed (the agents then shut down, writing what they hold),
    /// and it is killed if it has not ended after `grace`.
    pub async fn stop(&self, grace: std::time::Duration) -> Exit {
        self.stdin.lock().await.take();
        let mut exit = self.exit.clone();
        if tokio::time::timeout(grace, exit.wait_for(Option::is_some))
            .await
            .is_err()
        {
            self.kill_now();
        }
        self.wait().await
    }

    /// A watch of its end.
    pub fn exit_watch(&self) -> watch::Receiver<Option<Exit>> {
        self.exit.clone()
    }

    /// Kills it at once.
    pub fn kill_now(&self) {
        if let Some(kill) = self.kill.lock().ok().and_then(|mut k| k.take()) {
            let _ = kill.send(());
        }
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        self.kill_now();
    }
}

/// The `sessiontree` executable the bridge runs to record rewind points: `SESSIONTREE_BIN` when
/// set, else this process's own executable when it is `sessiontree` (a test or bench binary that
/// embeds the server is not; the bridge then looks for `sessiontree` on `PATH`).
pub fn sessiontree_executable() -> Option<PathBuf> {
    if let Some(bin) = std::env::var_os("SESSIONTREE_BIN").filter(|b| !b.is_empty()) {
        return Some(PathBuf::from(bin));
    }
    let own = std::env::current_exe().ok()?;
    (own.file_stem().and_then(|s| s.to_str()) == Some("sessiontree")).then_some(own)
}

/// Whether `path` names a file we may run.
pub fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
