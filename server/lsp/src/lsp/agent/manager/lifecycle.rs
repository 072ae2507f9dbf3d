//! Starting, attaching, stopping and idling a session's agent: one at a time per session (its
//! `lifecycle` lock), with the reason kept when none runs.

use super::{Last, Manager, Slot, DEFAULT_IDLE, START_TIMEOUT, STOP_GRACE};
use crate::agent::driver::{Driver, DriverEvent};
use crate::agent::process::SpawnSpec;
use crate::agent::{live_writer, paths, terminal, AgentKind, AgentSource};
use crate::errors::{ApiError, ApiResult};
use sessiontree_protocol::{self as proto, AgentState, ErrorKind};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

impl Manager {
    /// Attaches a terminal agent that announced itself on the session, if there is one.
    pub(super) async fn attach_terminal(self: &Arc<Self>, slot: &Arc<Slot>) {
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
    pub(super) async fn ensure(self: &Arc<Self>, slot: &Arc<Slot>) -> ApiResult<Arc<Driver>> {
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
        // pi writes a new or forked session's file only with its first assistant message. A
        // session whose file is not written yet starts pi on a private copy of its header and
        // entries, which pi loads as any session (its context, model and thinking level as the
        // session has them); the bridge then moves pi to the session's own path, where pi writes
        // it itself, byte for byte, with its first assistant message. Nothing is written to the
        // session's path here, and pi writes nothing before that answer.
        // (omp writes its new sessions and forks at once: it never meets one.)
        let unwritten = match slot.kind {
            AgentKind::Pi => {
                slot.handle
                    .read(|a| {
                        let contents = a.session.unwritten_contents().map_err(ApiError::from)?;
                        Ok(contents.map(|c| (c, a.session.leaf_id().map(str::to_owned))))
                    })
                    .await?
            }
            AgentKind::Omp => None,
        };
        let held_leaf = unwritten.as_ref().and_then(|(_, leaf)| leaf.clone());
        let copy = match unwritten.map(|(contents, _)| contents) {
            Some(contents) => Some(
                paths::UnwrittenCopy::write(
                    &dir,
                    self.sockets.fetch_add(1, Ordering::Relaxed),
                    &contents,
                )
                .map_err(|e| {
                    ApiError::new(
                        ErrorKind::AgentFailed,
                        format!("cannot write the private copy of this unwritten session: {e}"),
                    )
                })?,
            ),
            None => None,
        };
        let settings = self.settings();
        let spec = SpawnSpec {
            kind: slot.kind,
            executable: executable.clone(),
            extra_args: match slot.kind {
                AgentKind::Pi => settings.pi_args.clone(),
                AgentKind::Omp => settings.omp_args.clone(),
            },
            session_file: copy
                .as_ref()
                .map_or_else(|| slot.path.clone(), |c| c.path().to_path_buf()),
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
                let relocated = match &copy {
                    Some(copy) => driver.relocate(copy.path(), &slot.path).await.map_err(|e| {
                        ApiError::new(
                            e.kind,
                            format!(
                                "this session is not on disk yet and the agent, which writes it with its first answer, could not take it: {}",
                                e.message
                            ),
                        )
                    }),
                    None => Ok(None),
                };
                drop(copy);
                // pi's startup entries continue the copy from its last entry: when that is the
                // session's leaf, pi's leaf after them is in step with it (not moved back).
                let agent_leaf = driver.snapshot().leaf;
                let continued = match &relocated {
                    Ok(Some(loaded))
                        if held_leaf.as_deref() == Some(loaded.as_str())
                            && agent_leaf.as_deref() != Some(loaded.as_str()) =>
                    {
                        Some((held_leaf.clone(), agent_leaf))
                    }
                    _ => None,
                };
                if let Ok(mut c) = slot.continued.lock() {
                    *c = continued;
                }
                if let Err(err) = relocated {
                    driver.stop(STOP_GRACE).await;
                    if let Ok(mut last) = slot.last.lock() {
                        last.state = Some(AgentState::Exited);
                        last.message = Some(err.message.clone());
                    }
                    self.emit_status(slot);
                    return Err(err);
                }
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
    pub(super) fn install(
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
    pub(super) fn detach(&self, slot: &Slot, driver: &Arc<Driver>) -> bool {
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

    pub(super) async fn tick(self: &Arc<Self>) {
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
