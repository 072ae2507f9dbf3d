//! The agents of the open sessions: at most one per session, started on the first prompt (or
//! found in the user's terminal), reused across prompts, stopped when the session closes or after
//! the idle time. Each agent's events are pumped in order into the session's `agentEvent` stream
//! and, where they move the leaf or write the file, into the session's actor.
//!
//! This file holds the sessions followed (one `Slot` each) and the settings; `lifecycle` starts,
//! attaches, stops and idles agents; `turns` sends prompts and moves the agent's leaf; `events`
//! pumps an agent's events out; `status` says how an agent is doing.

mod events;
mod lifecycle;
mod status;
mod turns;

use super::driver::Driver;
use super::stream::Translator;
use super::{live_writer, locate, AgentKind};
use crate::actor::SessionHandle;
use crate::errors::{ApiError, ApiResult};
use crate::Shared;
use dashmap::DashMap;
use events::send_events;
use sessiontree_core::Dialect;
use sessiontree_protocol::{self as proto, AgentEventBody, AgentState};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
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
    /// A pi handed a session not on disk yet that added its own startup entries after it: the
    /// session's leaf then and pi's leaf after them, in step until either moves.
    continued: Mutex<Option<(Option<String>, Option<String>)>>,
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
            continued: Mutex::default(),
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
}

/// An event on its way out: its turn, its body, and when the bridge's line was read.
type Outgoing = (Option<u64>, AgentEventBody, Option<Instant>);
