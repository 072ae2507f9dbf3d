//! One live agent, however it runs: started by us in RPC mode ([`Driver::spawn`]) or found in the
//! user's terminal through its discovery file ([`Driver::attach`]). Either way the bridge socket
//! carries the operations and the agent's events; a started agent also takes prompts and aborts
//! as RPC commands (so the prompt is the agent's own input: commands and templates expand).

use super::bridge::{BridgeClient, BridgeError};
use super::process::{self, AgentProcess, Exit, Output, SpawnSpec};
use super::{AgentKind, AgentSource};
use crate::errors::ApiError;
use serde_json::{json, Value};
use sessiontree_protocol::{DeliverAs, ErrorKind};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// What a driver reports to its owner, in order.
#[derive(Debug)]
pub enum DriverEvent {
    /// An event of the bridge (`{"event": …}`) and when it was read.
    Bridge(Value, std::time::Instant),
    /// A dialog or notice of the agent's extensions (started agents only).
    Ui(Value),
    /// The started agent's process ended.
    Exited(Exit),
}

/// What the bridge last said of the agent.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Its session file.
    pub session_file: Option<PathBuf>,
    /// Its leaf.
    pub leaf: Option<String>,
    /// Whether it is answering.
    pub busy: bool,
    /// Its model.
    pub model: Option<String>,
    /// Whether it may move its leaf for us.
    pub armed: bool,
    /// Its process.
    pub pid: Option<u32>,
    /// Whether its bridge records the rewind points itself (at the agent's own boundaries).
    pub rewind_points: bool,
}

impl Snapshot {
    fn from_state(state: &Value) -> Snapshot {
        let text = |key: &str| state.get(key).and_then(Value::as_str).map(str::to_owned);
        Snapshot {
            session_file: text("sessionFile").map(PathBuf::from),
            leaf: text("leafId"),
            busy: state.get("busy") == Some(&Value::Bool(true)),
            model: text("model"),
            armed: state.get("armed") == Some(&Value::Bool(true)),
            pid: state
                .get("pid")
                .and_then(Value::as_u64)
                .and_then(|p| u32::try_from(p).ok()),
            rewind_points: state.get("rewindPoints") == Some(&Value::Bool(true)),
        }
    }
}

/// Where a navigation left the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Navigated {
    /// A `session_before_tree` handler cancelled it.
    pub cancelled: bool,
    /// The leaf after.
    pub leaf: Option<String>,
    /// The branch summary written, if one was.
    pub summary_entry_id: Option<String>,
}

/// A live agent.
#[derive(Debug)]
pub struct Driver {
    /// Which agent.
    pub kind: AgentKind,
    /// Where it runs.
    pub source: AgentSource,
    /// The executable (started agents).
    pub executable: Option<PathBuf>,
    bridge: BridgeClient,
    process: Option<AgentProcess>,
    snapshot: Mutex<Snapshot>,
    /// Between the agent's `agentStart` and `agentEnd` events.
    answering: std::sync::atomic::AtomicBool,
}

/// The error of a bridge refusal, in the server's terms.
pub fn api_error(err: BridgeError) -> ApiError {
    let kind = match err.kind.as_str() {
        "notArmed" => ErrorKind::AgentNotArmed,
        "agentBusy" => ErrorKind::AgentBusy,
        "entryNotFound" => ErrorKind::EntryNotFound,
        "unsupported" => ErrorKind::Unsupported,
        "invalidParams" => ErrorKind::InvalidParams,
        _ => ErrorKind::AgentFailed,
    };
    ApiError::new(kind, format!("the agent: {}", err.message))
}

fn failed(message: String, tail: &[String]) -> ApiError {
    let mut text = message;
    if !tail.is_empty() {
        text.push_str("; its last output:\n");
        text.push_str(&tail.join("\n"));
    }
    ApiError::new(ErrorKind::AgentFailed, text)
}

impl Driver {
    /// Starts an agent in RPC mode for a session, waits for its bridge (at most `timeout`) and
    /// arms it. Fails with `agentFailed` and the agent's last stderr lines.
    pub async fn spawn(
        spec: SpawnSpec,
        timeout: Duration,
    ) -> Result<(Arc<Driver>, mpsc::UnboundedReceiver<DriverEvent>), ApiError> {
        let (events_tx, events_rx) = mpsc::unbounded_channel();
        let (ui_tx, mut ui_rx) = mpsc::unbounded_channel();
        let _ = std::fs::remove_file(&spec.socket);
        let process = process::spawn(&spec, ui_tx).map_err(|e| {
            ApiError::new(
                ErrorKind::AgentFailed,
                format!("cannot start {}: {e}", spec.executable.display()),
            )
        })?;
        let (bridge_tx, mut bridge_rx) = mpsc::unbounded_channel();
        let connected = tokio::time::timeout(timeout, async {
            loop {
                if let Some(exit) = process.exited() {
                    return Err(failed(
                        format!(
                            "{} exited (code {}) before its bridge answered",
                            spec.executable.display(),
                            exit.code
                                .map_or_else(|| "none".to_owned(), |c| c.to_string())
                        ),
                        &exit.stderr_tail,
                    ));
                }
                if spec.socket.exists() {
                    match BridgeClient::connect(&spec.socket, &spec.token, bridge_tx.clone()).await
                    {
                        Ok(connected) => return Ok(connected),
                        Err(e) if e.kind == "unreachable" => {}
                        Err(e) => return Err(failed(e.message, &process.stderr_tail())),
                    }
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
        })
        .await;
        let (bridge, _hello) = match connected {
            Ok(Ok(connected)) => connected,
            Ok(Err(e)) => {
                process.kill_now();
                return Err(e);
            }
            Err(_) => {
                process.kill_now();
                return Err(failed(
                    format!(
                        "{} did not load the sessiontree bridge within {} s",
                        spec.executable.display(),
                        timeout.as_secs()
                    ),
                    &process.stderr_tail(),
                ));
            }
        };
        // Arm the bridge: its command hands it the context that moves the leaf.
        let armed = process
            .rpc(json!({"type": "prompt", "message": "/sessiontree"}))
            .await;
        if armed.as_ref().and_then(|r| r.get("success")) != Some(&Value::Bool(true)) {
            let why = armed
                .as_ref()
                .and_then(|r| r.get("error"))
                .and_then(Value::as_str)
                .unwrap_or("no answer")
                .to_owned();
            process.kill_now();
            return Err(failed(
                format!("the agent refused /sessiontree: {why}"),
                &process.stderr_tail(),
            ));
        }
        // Ready means idle: omp counts the arming command as a prompt in flight for a moment.
        let settle = tokio::time::Instant::now() + timeout;
        let state = loop {
            let state = match bridge.call("state", json!({})).await {
                Ok(now) => now,
                Err(e) => {
                    process.kill_now();
                    return Err(failed(e.message, &process.stderr_tail()));
                }
            };
            if state.get("busy") != Some(&Value::Bool(true))
                || tokio::time::Instant::now() >= settle
            {
                break state;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        let mut snapshot = Snapshot::from_state(&state);
        snapshot.armed = true;
        snapshot.pid = snapshot.pid.or(process.pid);
        let driver = Arc::new(Driver {
            kind: spec.kind,
            source: AgentSource::Spawned,
            executable: Some(spec.executable.clone()),
            bridge,
            process: Some(process),
            snapshot: Mutex::new(snapshot),
            answering: Default::default(),
        });
        // One ordered stream for the owner: bridge events, dialogs, then the exit. The loop holds
        // no reference to the driver, so dropping the driver kills a process still running.
        let (exit_tx, mut exit_rx) = tokio::sync::oneshot::channel();
        if let Some(mut watch) = driver.process.as_ref().map(AgentProcess::exit_watch) {
            tokio::spawn(async move {
                if let Ok(exit) = watch.wait_for(Option::is_some).await {
                    let _ = exit_tx.send(exit.clone());
                }
            });
        }
        tokio::spawn(async move {
            let mut bridge_open = true;
            let mut ui_open = true;
            loop {
                tokio::select! {
                    biased;
                    event = bridge_rx.recv(), if bridge_open => match event {
                        Some((event, at)) => { let _ = events_tx.send(DriverEvent::Bridge(event, at)); }
                        None => bridge_open = false,
                    },
                    ui = ui_rx.recv(), if ui_open => match ui {
                        Some(Output::UiRequest(request)) => { let _ = events_tx.send(DriverEvent::Ui(request)); }
                        None => ui_open = false,
                    },
                    exit = &mut exit_rx => {
                        // Events the bridge sent before the end go first.
                        while let Ok((event, at)) = bridge_rx.try_recv() {
                            let _ = events_tx.send(DriverEvent::Bridge(event, at));
                        }
                        if let Ok(Some(exit)) = exit {
                            let _ = events_tx.send(DriverEvent::Exited(exit));
                        }
                        break;
                    }
                }
            }
        });
        Ok((driver, events_rx))
    }

    /// Attaches to an agent in the user's terminal through its bridge socket.
    pub async fn attach(
        kind: AgentKind,
        socket: &Path,
        token: &str,
    ) -> Result<(Arc<Driver>, mpsc::UnboundedReceiver<DriverEvent>), BridgeError> {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let (bridge, state) = BridgeClient::connect(socket, token, tx).await?;
        let (events_tx, events_rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Some((event, at)) = rx.recv().await {
                if events_tx.send(DriverEvent::Bridge(event, at)).is_err() {
                    break;
                }
            }
        });
        let driver = Arc::new(Driver {
            kind,
            source: AgentSource::Terminal,
            executable: None,
            bridge,
            process: None,
            snapshot: Mutex::new(Snapshot::from_state(&state)),
            answering: Default::default(),
        });
        Ok((driver, events_rx))
    }

    /// What the bridge last said.
    pub fn snapshot(&self) -> Snapshot {
        self.snapshot.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Takes a state the bridge sent (with an event or an answer).
    pub fn note_state(&self, state: &Value) {
        if let Ok(mut s) = self.snapshot.lock() {
            let pid = s.pid;
            *s = Snapshot::from_state(state);
            s.pid = s.pid.or(pid);
        }
    }

    /// Records whether the agent is answering (from its events).
    pub fn note_busy(&self, busy: bool) {
        self.answering
            .store(busy, std::sync::atomic::Ordering::Relaxed);
        if let Ok(mut s) = self.snapshot.lock() {
            s.busy = busy;
        }
    }

    /// Whether a turn is under way (its `agentStart` came, its `agentEnd` not yet).
    pub fn answering(&self) -> bool {
        self.answering.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Asks the agent for its state now.
    pub async fn refresh(&self) -> Result<Snapshot, ApiError> {
        let state = self
            .bridge
            .call("state", json!({}))
            .await
            .map_err(api_error)?;
        self.note_state(&state);
        Ok(self.snapshot())
    }

    /// The agent's own `/tree` move (`navigateTree`), with its summarizer when `summarize`.
    pub async fn navigate(
        &self,
        target: &str,
        summarize: bool,
        custom_instructions: Option<&str>,
        label: Option<&str>,
    ) -> Result<Navigated, ApiError> {
        let mut params = json!({"targetId": target, "summarize": summarize});
        if let Some(custom) = custom_instructions {
            params["customInstructions"] = custom.into();
        }
        if let Some(label) = label {
            params["label"] = label.into();
        }
        let result = self
            .bridge
            .call("navigate", params)
            .await
            .map_err(api_error)?;
        let text = |key: &str| result.get(key).and_then(Value::as_str).map(str::to_owned);
        let navigated = Navigated {
            cancelled: result.get("cancelled") == Some(&Value::Bool(true)),
            leaf: text("leafId"),
            summary_entry_id: text("summaryEntryId"),
        };
        if let Ok(mut s) = self.snapshot.lock() {
            s.leaf = navigated.leaf.clone();
        }
        Ok(navigated)
    }

    /// Moves a pi started on a private copy of a session not written yet to the session's own
    /// path (the bridge's `relocate`), where pi writes it with its first assistant message; the
    /// copy's last entry (where pi's own startup entries, if it added any, hang).
    pub async fn relocate(&self, from: &Path, to: &Path) -> Result<Option<String>, ApiError> {
        let params = json!({"from": from.to_string_lossy(), "to": to.to_string_lossy()});
        let state = self
            .bridge
            .call("relocate", params)
            .await
            .map_err(api_error)?;
        self.note_state(&state);
        Ok(state
            .get("loadedLeafId")
            .and_then(Value::as_str)
            .map(str::to_owned))
    }

    /// Sends a prompt: the agent's own input (started agents) or `sendUserMessage` (terminal).
    pub async fn prompt(&self, text: &str, deliver_as: Option<DeliverAs>) -> Result<(), ApiError> {
        let behaviour = deliver_as.map(|d| match d {
            DeliverAs::Steer => "steer",
            DeliverAs::FollowUp => "followUp",
        });
        match &self.process {
            Some(process) => {
                let mut command = json!({"type": "prompt", "message": text});
                if let Some(b) = behaviour {
                    command["streamingBehavior"] = b.into();
                }
                let answer = process.rpc(command).await.ok_or_else(|| {
                    failed(
                        "the agent exited before it took the prompt".to_owned(),
                        &process.stderr_tail(),
                    )
                })?;
                if answer.get("success") == Some(&Value::Bool(true)) {
                    return Ok(());
                }
                let why = answer
                    .get("error")
                    .and_then(Value::as_str)
                    .unwrap_or("refused")
                    .to_owned();
                let kind = if why.contains("already processing") {
                    ErrorKind::AgentBusy
                } else {
                    ErrorKind::AgentFailed
                };
                Err(ApiError::new(
                    kind,
                    format!("the agent refused the prompt: {why}"),
                ))
            }
            None => {
                let mut params = json!({"text": text});
                if let Some(b) = behaviour {
                    params["deliverAs"] = b.into();
                }
                self.bridge
                    .call("prompt", params)
                    .await
                    .map(|_| ())
                    .map_err(api_error)
            }
        }
    }

    /// Stops the current answer; whether the agent was answering.
    pub async fn abort(&self) -> Result<bool, ApiError> {
        let result = self
            .bridge
            .call("abort", json!({}))
            .await
            .map_err(api_error)?;
        Ok(result.get("aborted") == Some(&Value::Bool(true)))
    }

    /// Sets or clears a label through the agent; the label entry's id.
    pub async fn label(
        &self,
        entry: &str,
        label: Option<&str>,
    ) -> Result<Option<String>, ApiError> {
        let result = self
            .bridge
            .call("label", json!({"entryId": entry, "label": label}))
            .await
            .map_err(api_error)?;
        Ok(result
            .get("labelEntryId")
            .and_then(Value::as_str)
            .map(str::to_owned))
    }

    /// Renames the session through the agent.
    pub async fn name(&self, name: &str) -> Result<(), ApiError> {
        self.bridge
            .call("name", json!({"name": name}))
            .await
            .map(|_| ())
            .map_err(api_error)
    }

    /// The started agent's process.
    pub fn process(&self) -> Option<&AgentProcess> {
        self.process.as_ref()
    }

    /// Ends a started agent (standard input closed, killed after `grace`); a terminal agent is
    /// left running.
    pub async fn stop(&self, grace: Duration) -> Option<Exit> {
        match &self.process {
            Some(process) => Some(process.stop(grace).await),
            None => None,
        }
    }

    /// Answers a dialog of a started agent.
    pub async fn answer_dialog(&self, answer: Value) {
        if let Some(process) = &self.process {
            process.answer_dialog(answer).await;
        }
    }
}
