//! The agents of the open sessions: at most one per session, started on the first prompt (or
//! found in the user's terminal), reused across prompts, stopped when the session closes or after
//! the idle time. Each agent's events are pumped in order into the session's `agentEvent` stream
//! and, where they move the leaf or write the file, into the session's actor.

use super::driver::{Driver, DriverEvent, Navigated};
use super::process::SpawnSpec;
use super::stream::{self, Translator};
use super::{live_writer, locate, paths, rewind_points, terminal, AgentKind, AgentSource};
use crate::actor::SessionHandle;
use crate::errors::{ApiError, ApiResult};
use crate::Shared;
use dashmap::DashMap;
use serde_json::Value;
use sessiontree_core::Dialect;
use sessiontree_protocol::{self as proto, AgentEventBody, AgentState, ErrorKind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// How long a started agent may take to load its bridge.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a stopped agent may take to end after its input closed.
const STOP_GRACE: Duration = Duration::from_secs(5);
/// How often terminal agents are looked for and idle agents stopped.
const TICK: Duration = Duration::from_secs(2);
/// The default idle time before a started agent is stopped.
const DEFAULT_IDLE: Duration = Duration::from_secs(600);
/// How long a prompt waits for an agent that has ended its turn to become idle.
const SETTLE: Duration = Duration::from_secs(30);
/// How long a write the agent made may take to show in the file.
const WRITE_VISIBLE: Duration = Duration::from_secs(5);

/// Why no agent runs, as the status says it.
#[derive(Debug, Clone, Default)]
struct Last {
    state: Option<AgentState>,
    message: Option<String>,
    stderr_tail: Vec<String>,
    executable: Option<String>,
}

/// One open session's agent.
struct Slot {
    uri: String,
    path: PathBuf,
    kind: AgentKind,
    dialect: Dialect,
    /// The session's working folder (where an agent without the bridge would run).
    cwd: PathBuf,
    /// An agent without the bridge found working there at the last look (see `live_writer`).
    live_writer: Mutex<Option<live_writer::Writer>>,
    handle: SessionHandle,
    driver: RwLock<Option<Arc<Driver>>>,
    /// Starting or stopping: one at a time.
    lifecycle: tokio::sync::Mutex<()>,
    translator: Mutex<Translator>,
    turns: AtomicU64,
    out: mpsc::UnboundedSender<Outgoing>,
    last: Mutex<Last>,
    active: Mutex<Instant>,
}

impl Slot {
    fn driver(&self) -> Option<Arc<Driver>> {
        self.driver.read().ok().and_then(|d| d.clone())
    }

    fn emit(&self, turn: Option<u64>, event: AgentEventBody) {
        let _ = self.out.send((turn, event, None));
    }

    /// Emits what the bridge said at `read` (its relay time is logged).
    fn relay(&self, turn: Option<u64>, event: AgentEventBody, read: Instant) {
        let _ = self.out.send((turn, event, Some(read)));
    }

    fn touch(&self) {
        if let Ok(mut a) = self.active.lock() {
            *a = Instant::now();
        }
    }
}

/// The live agents of the server.
pub struct Manager {
    shared: Arc<Shared>,
    settings: RwLock<proto::AgentSettings>,
    home: RwLock<Option<String>>,
    slots: DashMap<PathBuf, Arc<Slot>>,
    sockets: AtomicU64,
    ticking: std::sync::Once,
}

impl std::fmt::Debug for Manager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Manager")
            .field("sessions", &self.slots.len())
            .finish_non_exhaustive()
    }
}

/// The agent of a dialect.
pub fn kind_of(dialect: Dialect) -> AgentKind {
    match dialect {
        Dialect::Pi => AgentKind::Pi,
        Dialect::Omp => AgentKind::Omp,
    }
}

impl Manager {
    /// No agents yet.
    pub fn new(shared: Arc<Shared>) -> Arc<Manager> {
        Arc::new(Manager {
            shared,
            settings: RwLock::default(),
            home: RwLock::default(),
            slots: DashMap::new(),
            sockets: AtomicU64::new(0),
            ticking: std::sync::Once::new(),
        })
    }

    /// Starts the ticker that attaches terminal agents and stops idle ones (once, on the first
    /// session followed: it needs the runtime).
    fn start_ticking(self: &Arc<Self>) {
        self.ticking.call_once(|| {
            let weak = Arc::downgrade(self);
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(TICK);
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    tick.tick().await;
                    let Some(manager) = weak.upgrade() else { break };
                    manager.tick().await;
                }
            });
        });
    }

    /// Takes the user-level settings (initialization options).
    pub fn configure(&self, settings: proto::AgentSettings, home: Option<String>) {
        if let Ok(mut s) = self.settings.write() {
            *s = settings;
        }
        if let Ok(mut h) = self.home.write() {
            *h = home;
        }
    }

    fn settings(&self) -> proto::AgentSettings {
        self.settings.read().map(|s| s.clone()).unwrap_or_default()
    }

    /// Whether branch summaries should be written by the session's agent.
    pub fn agent_summarizes(&self, dialect: Dialect) -> bool {
        let s = self.settings();
        !s.disabled && !s.own_summaries && self.executable(kind_of(dialect)).is_ok()
    }

    fn executable(&self, kind: AgentKind) -> Result<PathBuf, String> {
        let s = self.settings();
        if s.disabled {
            return Err("the live agent is turned off (agent.disabled)".to_owned());
        }
        let configured = match kind {
            AgentKind::Pi => s.pi_path.as_deref(),
            AgentKind::Omp => s.omp_path.as_deref(),
        };
        locate::executable(kind, configured)
    }

    /// Follows an open session's agent from now on: attaches to a terminal agent on it at once
    /// and whenever one appears.
    pub fn watch(self: &Arc<Self>, handle: SessionHandle, dialect: Dialect, cwd: PathBuf) {
        let path = handle.path.clone();
        if self.slots.contains_key(&path) {
            return;
        }
        self.start_ticking();
        let (out_tx, out_rx) = mpsc::unbounded_channel();
        let slot = Arc::new(Slot {
            uri: handle.uri.clone(),
            path: path.clone(),
            kind: kind_of(dialect),
            dialect,
            live_writer: Mutex::new(live_writer::find(&cwd, &self.own_pids())),
            cwd,
            handle,
            driver: RwLock::default(),
            lifecycle: tokio::sync::Mutex::new(()),
            translator: Mutex::new(Translator::new(
                dialect,
                self.home.read().ok().and_then(|h| h.clone()),
            )),
            turns: AtomicU64::new(0),
            out: out_tx,
            last: Mutex::default(),
            active: Mutex::new(Instant::now()),
        });
        // One sender per session keeps `seq` in the order the events happened.
        let shared = Arc::clone(&self.shared);
        let uri = slot.uri.clone();
        tokio::spawn(send_events(shared, uri, out_rx));
        self.slots.insert(path, Arc::clone(&slot));
        let manager = Arc::clone(self);
        tokio::spawn(async move { manager.attach_terminal(&slot).await });
    }

    /// Stops following a session: its started agent is stopped, a terminal agent let go.
    pub async fn forget(&self, path: &Path) {
        if let Some((_, slot)) = self.slots.remove(path) {
            let driver = slot.driver.write().ok().and_then(|mut d| d.take());
            if let Some(driver) = driver {
                driver.stop(STOP_GRACE).await;
            }
        }
    }

    /// Stops every agent the server started (at shutdown).
    pub async fn stop_all(&self) {
        let slots: Vec<Arc<Slot>> = self.slots.iter().map(|s| Arc::clone(s.value())).collect();
        for slot in slots {
            let driver = slot.driver.write().ok().and_then(|mut d| d.take());
            if let Some(driver) = driver {
                driver.stop(STOP_GRACE).await;
            }
        }
    }

    fn slot(&self, path: &Path) -> ApiResult<Arc<Slot>> {
        self.slots
            .get(path)
            .map(|s| Arc::clone(s.value()))
            .ok_or_else(|| ApiError::session_not_found(&crate::to_proto::uri_of(path)))
    }

    /// The agent attached to a session (started by us or in a terminal), if any.
    pub fn attached(&self, path: &Path) -> Option<Arc<Driver>> {
        self.slots.get(path).and_then(|s| s.driver())
    }

    /// The pids of every agent we drive (a live-writer check ignores them).
    fn own_pids(&self) -> Vec<u32> {
        self.slots
            .iter()
            .filter_map(|s| s.driver())
            .filter_map(|d| d.snapshot().pid)
            .collect()
    }

    /// The session's dialect, when the session is followed.
    pub fn dialect_of(&self, path: &Path) -> Option<Dialect> {
        self.slots.get(path).map(|s| s.dialect)
    }

    /// An agent without the bridge working in the session's folder (as the last look, at most
    /// [`TICK`] ago, found it): refuses a write unless `force` (see [`live_writer`]). Reads no
    /// process table itself, so a write costs nothing for it.
    pub fn check_no_live_writer(&self, path: &Path, force: bool) -> ApiResult<()> {
        let Some(slot) = self.slots.get(path).map(|s| Arc::clone(s.value())) else {
            return Ok(());
        };
        if force || slot.driver().is_some() {
            return Ok(());
        }
        let writer = slot.live_writer.lock().ok().and_then(|w| w.clone());
        match writer {
            Some(writer) => Err(ApiError::new(
                ErrorKind::AgentRunning,
                format!(
                    "an {} process (pid {}) works in {} without the sessiontree bridge and may be writing this session; \
                     writing behind its back would fork its tree at its next turn, so nothing was written. \
                     Install the bridge (sessionTree/installBridge or `sessiontree install-bridge`) and restart that agent, \
                     or repeat the request with force",
                    writer.agent,
                    writer.pid,
                    slot.cwd.display()
                ),
            )),
            None => Ok(()),
        }
    }

    /// The agent's state (`start`: start it when none runs).
    pub async fn status(
        self: &Arc<Self>,
        path: &Path,
        start: bool,
    ) -> ApiResult<proto::AgentStatus> {
        let slot = self.slot(path)?;
        if slot.driver().is_none() {
            self.attach_terminal(&slot).await;
        }
        if start {
            self.ensure(&slot).await?;
        } else if let Some(driver) = slot.driver() {
            let _ = driver.refresh().await;
        }
        Ok(self.status_of(&slot))
    }

    fn status_of(&self, slot: &Slot) -> proto::AgentStatus {
        let mut status = proto::AgentStatus {
            uri: slot.uri.clone(),
            agent: slot.kind,
            state: AgentState::None,
            source: None,
            pid: None,
            model: None,
            armed: false,
            executable: None,
            message: None,
            stderr_tail: Vec::new(),
        };
        match slot.driver() {
            Some(driver) => {
                let snap = driver.snapshot();
                status.state = if snap.busy {
                    AgentState::Running
                } else {
                    AgentState::Idle
                };
                status.source = Some(driver.source);
                status.pid = snap.pid;
                status.model = snap.model;
                status.armed = snap.armed;
                status.executable = driver
                    .executable
                    .as_ref()
                    .map(|e| e.to_string_lossy().into_owned());
            }
            None => {
                let last = slot.last.lock().map(|l| l.clone()).unwrap_or_default();
                match self.executable(slot.kind) {
                    Err(why) => {
                        status.state = AgentState::Unavailable;
                        status.message = Some(why);
                    }
                    Ok(exe) => {
                        status.executable = Some(exe.to_string_lossy().into_owned());
                        status.state = last.state.unwrap_or(AgentState::None);
                        status.message = last.message;
                        status.stderr_tail = last.stderr_tail;
                    }
                }
                if last.executable.is_some() && status.executable.is_none() {
                    status.executable = last.executable;
                }
            }
        }
        status
    }

    fn emit_status(&self, slot: &Slot) {
        rewind_points::note(&self.shared, &slot.path, slot.driver().as_deref());
        slot.emit(
            None,
            AgentEventBody::Status {
                status: self.status_of(slot),
            },
        );
    }

    /// Attaches a terminal agent that announced itself on the session, if there is one.
    async fn attach_terminal(self: &Arc<Self>, slot: &Arc<Slot>) {
        if slot.driver().is_some() {
            return;
        }
        let Some(found) = terminal::find(&slot.path) else {
            return;
        };
        let _guard = slot.lifecycle.lock().await;
        if slot.driver().is_some() {
            return;
        }
        match Driver::attach(found.kind, &found.socket, &found.token).await {
            Ok((driver, events)) => {
                tracing::info!(uri = %slot.uri, pid = found.pid, "attached the agent running in a terminal");
                self.install(slot, driver, events);
            }
            Err(e) => tracing::debug!(uri = %slot.uri, "terminal agent not reachable: {e}"),
        }
    }

    /// The session's agent, started when none runs.
    async fn ensure(self: &Arc<Self>, slot: &Arc<Slot>) -> ApiResult<Arc<Driver>> {
        if let Some(driver) = slot.driver() {
            return Ok(driver);
        }
        self.attach_terminal(slot).await;
        let _guard = slot.lifecycle.lock().await;
        if let Some(driver) = slot.driver() {
            return Ok(driver);
        }
        let executable = self
            .executable(slot.kind)
            .map_err(|why| ApiError::new(ErrorKind::AgentNotInstalled, why))?;
        let cwd = slot.handle.read(|a| Ok(a.session.cwd().to_owned())).await?;
        let cwd = PathBuf::from(cwd);
        if !cwd.is_dir() {
            return Err(ApiError::new(
                ErrorKind::AgentFailed,
                format!(
                    "the session's working folder {} does not exist, so its agent cannot run there",
                    cwd.display()
                ),
            ));
        }
        let dir = paths::runtime_dir().map_err(|e| {
            ApiError::new(
                ErrorKind::AgentFailed,
                format!("no private folder for the agent's socket: {e}"),
            )
        })?;
        let bridge = paths::bridge_file(&dir).map_err(|e| {
            ApiError::new(
                ErrorKind::AgentFailed,
                format!("cannot write the bridge extension: {e}"),
            )
        })?;
        let settings = self.settings();
        let spec = SpawnSpec {
            kind: slot.kind,
            executable: executable.clone(),
            extra_args: match slot.kind {
                AgentKind::Pi => settings.pi_args.clone(),
                AgentKind::Omp => settings.omp_args.clone(),
            },
            session_file: slot.path.clone(),
            cwd,
            bridge,
            socket: paths::spawn_socket(&dir, self.sockets.fetch_add(1, Ordering::Relaxed)),
            token: uuid::Uuid::new_v4().simple().to_string(),
        };
        if let Ok(mut last) = slot.last.lock() {
            *last = Last {
                state: Some(AgentState::Starting),
                executable: Some(executable.to_string_lossy().into_owned()),
                ..Last::default()
            };
        }
        self.emit_status(slot);
        let started = Instant::now();
        match Driver::spawn(spec, START_TIMEOUT).await {
            Ok((driver, events)) => {
                tracing::info!(uri = %slot.uri, ms = started.elapsed().as_millis() as u64, "agent started");
                self.install(slot, Arc::clone(&driver), events);
                Ok(driver)
            }
            Err(err) => {
                if let Ok(mut last) = slot.last.lock() {
                    last.state = Some(AgentState::Exited);
                    last.message = Some(err.message.clone());
                }
                self.emit_status(slot);
                Err(err)
            }
        }
    }

    /// Makes `driver` the session's agent and starts pumping its events.
    fn install(
        self: &Arc<Self>,
        slot: &Arc<Slot>,
        driver: Arc<Driver>,
        events: mpsc::UnboundedReceiver<DriverEvent>,
    ) {
        if let Ok(mut d) = slot.driver.write() {
            *d = Some(Arc::clone(&driver));
        }
        if let Ok(mut last) = slot.last.lock() {
            *last = Last::default();
        }
        slot.touch();
        self.emit_status(slot);
        let manager = Arc::clone(self);
        let slot = Arc::clone(slot);
        tokio::spawn(async move { manager.pump(slot, driver, events).await });
    }

    /// Forgets `driver` as the session's agent (when it still is).
    fn detach(&self, slot: &Slot, driver: &Arc<Driver>) -> bool {
        let Ok(mut current) = slot.driver.write() else {
            return false;
        };
        if current.as_ref().is_some_and(|d| Arc::ptr_eq(d, driver)) {
            *current = None;
            true
        } else {
            false
        }
    }

    async fn pump(
        self: Arc<Self>,
        slot: Arc<Slot>,
        driver: Arc<Driver>,
        mut events: mpsc::UnboundedReceiver<DriverEvent>,
    ) {
        while let Some(event) = events.recv().await {
            match event {
                DriverEvent::Bridge(event, read) => {
                    let name = event.get("event").and_then(Value::as_str).unwrap_or("");
                    match name {
                        "session" | "armed" | "status" => {
                            if let Some(state) = event.get("state") {
                                driver.note_state(state);
                            }
                            self.emit_status(&slot);
                        }
                        "shutdown" | "closed" if driver.source == AgentSource::Terminal => {
                            if self.detach(&slot, &driver) {
                                tracing::info!(uri = %slot.uri, "the terminal agent went away");
                                self.emit_status(&slot);
                            }
                            break;
                        }
                        "agentStart" => {
                            driver.note_busy(true);
                            slot.touch();
                        }
                        "agentEnd" => {
                            driver.note_busy(false);
                            slot.touch();
                            // What the turn wrote is in the file: show it now.
                            slot.handle.follow();
                        }
                        "messageEnd" => slot.handle.follow(),
                        "rewindPoint" => {
                            rewind_points::relay(&self.shared, &slot.uri, &slot.path, &event).await
                        }
                        "leaf" => {
                            let text = |key: &str| {
                                event.get(key).and_then(Value::as_str).map(str::to_owned)
                            };
                            let (leaf, old, summary) =
                                (text("leafId"), text("oldLeafId"), text("summaryEntryId"));
                            let _ = slot
                                .handle
                                .run(move |a| {
                                    a.agent_moved(
                                        leaf.as_deref(),
                                        old.as_deref(),
                                        summary.as_deref(),
                                    );
                                    Ok(())
                                })
                                .await;
                        }
                        _ => {}
                    }
                    let translated = slot
                        .translator
                        .lock()
                        .ok()
                        .and_then(|mut t| t.translate(&event));
                    if let Some((turn, body)) = translated {
                        let status_change =
                            matches!(body, AgentEventBody::AgentStart | AgentEventBody::AgentEnd);
                        slot.relay(turn, body, read);
                        if status_change {
                            self.emit_status(&slot);
                        }
                    }
                }
                DriverEvent::Ui(request) => self.ui_request(&slot, &driver, request),
                DriverEvent::Exited(exit) => {
                    let ours = self.detach(&slot, &driver);
                    let code = exit
                        .code
                        .map_or_else(|| "a signal".to_owned(), |c| format!("code {c}"));
                    if let Ok(mut last) = slot.last.lock() {
                        last.state = Some(if ours {
                            AgentState::Exited
                        } else {
                            AgentState::None
                        });
                        last.message = ours.then(|| format!("the agent exited ({code})"));
                        last.stderr_tail = exit.stderr_tail.clone();
                        last.executable = driver
                            .executable
                            .as_ref()
                            .map(|e| e.to_string_lossy().into_owned());
                    }
                    let turn = slot.translator.lock().ok().and_then(|t| t.current_turn());
                    slot.emit(
                        turn,
                        AgentEventBody::Exited {
                            code: exit.code,
                            stderr_tail: exit.stderr_tail,
                        },
                    );
                    self.emit_status(&slot);
                    // Whatever the agent wrote before it ended.
                    slot.handle.follow();
                    break;
                }
            }
        }
    }

    /// An extension's notice or dialog inside a started agent: notices go to the stream;
    /// dialogs to a client that shows them, or are cancelled at once so the agent never waits.
    fn ui_request(&self, slot: &Arc<Slot>, driver: &Arc<Driver>, request: Value) {
        let method = request.get("method").and_then(Value::as_str).unwrap_or("");
        if method == "notify" {
            if let Some(body) = stream::notice(&request) {
                slot.emit(None, body);
            }
            return;
        }
        let Some(params) = stream::dialog(&slot.uri, &request) else {
            return;
        };
        let id = request
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let shared = Arc::clone(&self.shared);
        let driver = Arc::clone(driver);
        tokio::spawn(async move {
            let answer = if shared.agent_dialogs_enabled() {
                let timeout = params.timeout_ms.map(Duration::from_millis);
                shared.ask_for::<proto::AgentDialog>(params, timeout).await
            } else {
                None
            };
            driver
                .answer_dialog(stream::dialog_answer(&id, answer.as_ref()))
                .await;
        });
    }

    /// Sends the chat text to the session's agent (starting it, moving its leaf to ours first).
    pub async fn prompt(
        self: &Arc<Self>,
        p: proto::PromptParams,
    ) -> ApiResult<proto::PromptResult> {
        let path = crate::to_proto::path_of(&p.uri)?;
        let path = crate::registry::key_of(&path);
        let slot = self.slot(&path)?;
        let base = p.base_revision;
        slot.handle.read(move |a| a.check_base(base)).await?;
        let driver = self.ensure(&slot).await?;
        let snapshot = settled(&driver).await?;
        if snapshot.busy && p.deliver_as.is_none() {
            return Err(ApiError::new(
                ErrorKind::AgentBusy,
                "the agent is answering; wait for it to finish, abort it, or queue the prompt (deliverAs)",
            ));
        }
        if !snapshot.busy {
            self.sync_leaf(&slot, &driver, snapshot.leaf.as_deref())
                .await?;
        }
        let turn = slot.turns.fetch_add(1, Ordering::Relaxed) + 1;
        if let Ok(mut t) = slot.translator.lock() {
            t.expect_turn(turn);
        }
        slot.touch();
        driver.prompt(&p.text, p.deliver_as).await?;
        let revision = slot.handle.read(|a| Ok(a.revision())).await?;
        Ok(proto::PromptResult {
            revision,
            turn,
            agent: self.status_of(&slot),
        })
    }

    /// Moves the agent's leaf to the session's leaf, by the agent's own `/tree` rule.
    async fn sync_leaf(
        &self,
        slot: &Slot,
        driver: &Driver,
        agent_leaf: Option<&str>,
    ) -> ApiResult<()> {
        let (leaf, target) = slot
            .handle
            .read(|a| {
                // What the agent has not read yet cannot be its leaf: read it first.
                Ok(a.agent_target())
            })
            .await?;
        if leaf.as_deref() == agent_leaf {
            return Ok(());
        }
        let Some(target) = target else {
            return Ok(());
        };
        let navigated = driver.navigate(&target, false, None, None).await?;
        let now = navigated.leaf.clone();
        slot.handle
            .run(move |a| {
                a.adopt_agent_leaf(now.as_deref());
                Ok(())
            })
            .await
    }

    /// The agent's own `/tree` move for `sessionTree/navigate` (with its summarizer).
    pub async fn navigate(
        self: &Arc<Self>,
        path: &Path,
        target: &str,
        summarize: bool,
        custom_instructions: Option<&str>,
        label: Option<&str>,
    ) -> ApiResult<(Navigated, Arc<Driver>)> {
        let slot = self.slot(path)?;
        let driver = self.ensure(&slot).await?;
        settled(&driver).await?;
        let navigated = driver
            .navigate(target, summarize, custom_instructions, label)
            .await?;
        slot.touch();
        let leaf = navigated.leaf.clone();
        let summary = navigated.summary_entry_id.clone();
        // The summary entry is written by the agent: wait until the file shows it.
        if let Some(id) = summary {
            self.await_entry(&slot.handle, &id).await;
        }
        slot.handle
            .run(move |a| {
                a.adopt_agent_leaf(leaf.as_deref());
                Ok(())
            })
            .await?;
        Ok((navigated, driver))
    }

    /// Waits (a little) until the session's file shows an entry the agent wrote.
    pub async fn await_entry(&self, handle: &SessionHandle, id: &str) {
        let deadline = Instant::now() + WRITE_VISIBLE;
        loop {
            let wanted = id.to_owned();
            let seen = handle
                .run(move |a| {
                    a.follow_now();
                    Ok(a.session.contains(&wanted))
                })
                .await
                .unwrap_or(true);
            if seen || Instant::now() >= deadline {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Stops the current answer.
    pub async fn abort(&self, path: &Path) -> ApiResult<proto::AbortResult> {
        let slot = self.slot(path)?;
        let aborted = match slot.driver() {
            Some(driver) => driver.abort().await?,
            None => false,
        };
        Ok(proto::AbortResult { aborted })
    }

    /// Stops the agent we started for a session (lets a terminal agent go).
    pub async fn stop(&self, path: &Path) -> ApiResult<proto::AgentStatus> {
        let slot = self.slot(path)?;
        let _guard = slot.lifecycle.lock().await;
        let driver = slot.driver.write().ok().and_then(|mut d| d.take());
        if let Some(driver) = driver {
            driver.stop(STOP_GRACE).await;
        }
        if let Ok(mut last) = slot.last.lock() {
            *last = Last::default();
        }
        self.emit_status(&slot);
        Ok(self.status_of(&slot))
    }

    /// Before a bare write to a session whose agent we started: the agent holds its leaf in memory,
    /// so it is stopped first (it reloads the file when the next prompt starts it again). A
    /// terminal agent cannot be stopped: the write is refused unless forced.
    pub async fn before_bare_write(&self, path: &Path, force: bool) -> ApiResult<()> {
        let Ok(slot) = self.slot(path) else {
            return Ok(());
        };
        let Some(driver) = slot.driver() else {
            return Ok(());
        };
        match driver.source {
            AgentSource::Spawned => {
                if driver.snapshot().busy {
                    return Err(ApiError::new(
                        ErrorKind::AgentBusy,
                        "the agent is answering; wait for it to finish or abort it before writing without it",
                    ));
                }
                self.stop(path).await.map(|_| ())
            }
            AgentSource::Terminal if force => Ok(()),
            AgentSource::Terminal => Err(ApiError::new(
                ErrorKind::AgentRunning,
                "the agent in your terminal drives this session; send through it (sessionTree/prompt) or repeat with force",
            )),
        }
    }

    async fn tick(self: &Arc<Self>) {
        let idle = self
            .settings()
            .idle_seconds
            .map_or(DEFAULT_IDLE, Duration::from_secs);
        let slots: Vec<Arc<Slot>> = self.slots.iter().map(|s| Arc::clone(s.value())).collect();
        let except = self.own_pids();
        let cwds: Vec<PathBuf> = slots.iter().map(|s| s.cwd.clone()).collect();
        let found = tokio::task::spawn_blocking(move || live_writer::find_all(&cwds, &except))
            .await
            .unwrap_or_default();
        for (slot, writer) in slots.iter().zip(found) {
            if let Ok(mut w) = slot.live_writer.lock() {
                *w = writer;
            }
        }
        for slot in slots {
            match slot.driver() {
                None => self.attach_terminal(&slot).await,
                Some(driver) if driver.source == AgentSource::Spawned && !idle.is_zero() => {
                    let quiet = slot.active.lock().map(|a| a.elapsed()).unwrap_or_default();
                    if quiet >= idle && !driver.snapshot().busy {
                        tracing::info!(uri = %slot.uri, "stopping an idle agent");
                        let _ = self.stop(&slot.path).await;
                    }
                }
                Some(_) => {}
            }
        }
    }
}

/// The agent's state once it has settled: when its turn has ended but it still finishes up after
/// it (omp completes its prompt's work after `agent_end`), a request sent right after waits a
/// moment rather than being refused as busy. A turn under way is not waited for.
async fn settled(driver: &Driver) -> ApiResult<super::driver::Snapshot> {
    let mut snapshot = driver.refresh().await?;
    let deadline = Instant::now() + SETTLE;
    while snapshot.busy && !driver.answering() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(25)).await;
        snapshot = driver.refresh().await?;
    }
    Ok(snapshot)
}

/// Sends one session's events in order, numbering them.
async fn send_events(shared: Arc<Shared>, uri: String, mut rx: mpsc::UnboundedReceiver<Outgoing>) {
    let mut seq = 0;
    while let Some((turn, event, read)) = rx.recv().await {
        seq += 1;
        shared
            .notify::<proto::AgentEvent>(proto::AgentEventParams {
                uri: uri.clone(),
                seq,
                turn,
                event,
            })
            .await;
        if let Some(read) = read {
            // The server's own part of an event's way: from the bridge's line read to the
            // notification handed to the output (the agent bench reads these lines).
            tracing::debug!(target: "sessiontree::agent::relay", us = read.elapsed().as_micros() as u64, "relayed");
        }
    }
}

/// An event on its way out: its turn, its body, and when the bridge's line was read.
type Outgoing = (Option<u64>, AgentEventBody, Option<Instant>);
