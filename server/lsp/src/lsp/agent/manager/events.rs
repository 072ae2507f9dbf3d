//! An agent's events on their way out: the bridge's events pumped into the session's actor and
//! translated into `agentEvent`s, extension dialogs relayed, and each session's events sent in
//! order.

use super::{Manager, Outgoing, Slot};
use crate::agent::driver::{Driver, DriverEvent};
use crate::agent::{rewind_points, stream, AgentSource};
use crate::Shared;
use serde_json::Value;
use sessiontree_protocol::{self as proto, AgentEventBody, AgentState};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

impl Manager {
    pub(super) async fn pump(
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
    pub(super) fn ui_request(&self, slot: &Arc<Slot>, driver: &Arc<Driver>, request: Value) {
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
}

/// Sends one session's events in order, numbering them.
pub(super) async fn send_events(
    shared: Arc<Shared>,
    uri: String,
    mut rx: mpsc::UnboundedReceiver<Outgoing>,
) {
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
