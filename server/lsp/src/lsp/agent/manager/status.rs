//! How a session's agent is doing, as `sessionTree/agentStatus` and the `status` events say it;
//! and the guard against writing behind an agent that runs without the bridge.

use super::{Manager, Slot};
use crate::agent::rewind_points;
use crate::errors::{ApiError, ApiResult};
use sessiontree_protocol::{self as proto, AgentEventBody, AgentState, ErrorKind};
use std::path::Path;
use std::sync::Arc;

impl Manager {
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

    pub(super) fn status_of(&self, slot: &Slot) -> proto::AgentStatus {
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

    pub(super) fn emit_status(&self, slot: &Slot) {
        rewind_points::note(&self.shared, &slot.path, slot.driver().as_deref());
        slot.emit(
            None,
            AgentEventBody::Status {
                status: self.status_of(slot),
            },
        );
    }

    /// An agent without the bridge working in the session's folder (as the last look, at most
    /// `TICK` ago, found it): refuses a write unless `force` (see `live_writer`). Reads no
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
}
