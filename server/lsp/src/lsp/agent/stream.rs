//! The bridge's events as the protocol's `agentEvent` bodies: messages are numbered in the order
//! they start, deltas carry their message's number, a finished message is rendered into display
//! blocks by the engine's transcript rules, and each event carries the turn of the prompt that
//! caused it (`None` for a terminal agent's own turns).

use serde_json::Value;
use sessiontree_core::transcript;
use sessiontree_core::Dialect;
use sessiontree_protocol::{self as proto, AgentEventBody, DeltaKind, NoticeLevel};

/// Turns one agent's bridge events into protocol events.
#[derive(Debug)]
pub struct Translator {
    dialect: Dialect,
    home: Option<String>,
    message: u64,
    /// The turn of the prompt sent last and not yet started.
    pending_turn: Option<u64>,
    /// The turn the agent is answering.
    turn: Option<u64>,
}

impl Translator {
    /// A translator for a session of `dialect` (`home` shortens paths in tool summaries).
    pub fn new(dialect: Dialect, home: Option<String>) -> Self {
        Translator {
            dialect,
            home,
            message: 0,
            pending_turn: None,
            turn: None,
        }
    }

    /// The events that follow belong to the prompt of `turn`.
    pub fn expect_turn(&mut self, turn: u64) {
        self.pending_turn = Some(turn);
    }

    /// The turn the agent is answering (or about to).
    pub fn current_turn(&self) -> Option<u64> {
        self.turn.or(self.pending_turn)
    }

    /// The protocol event for a bridge event, and its turn; `None` for events the protocol does
    /// not carry (the owner handles `session`, `armed`, `status`, `shutdown`, `closed`).
    pub fn translate(&mut self, event: &Value) -> Option<(Option<u64>, AgentEventBody)> {
        let text = |key: &str| event.get(key).and_then(Value::as_str).map(str::to_owned);
        let body = match event.get("event").and_then(Value::as_str)? {
            "agentStart" => {
                self.turn = self.pending_turn.take();
                AgentEventBody::AgentStart
            }
            "agentEnd" => {
                let turn = self.turn.take();
                return Some((turn, AgentEventBody::AgentEnd));
            }
            "messageStart" => {
                self.message += 1;
                AgentEventBody::MessageStart {
                    message: self.message,
                    role: text("role").unwrap_or_default(),
                }
            }
            "delta" => AgentEventBody::Delta {
                message: self.message,
                block: event
                    .get("index")
                    .and_then(Value::as_u64)
                    .and_then(|i| u32::try_from(i).ok())
                    .unwrap_or(0),
                delta: if text("kind").as_deref() == Some("thinking") {
                    DeltaKind::Thinking
                } else {
                    DeltaKind::Text
                },
                text: text("text").unwrap_or_default(),
            },
            "messageEnd" => {
                let message = event.get("message").cloned().unwrap_or(Value::Null);
                let item = transcript::message_item(&message, self.dialect, self.home.as_deref());
                AgentEventBody::MessageEnd {
                    message: self.message,
                    item: crate::to_proto::transcript_item(item),
                }
            }
            "toolStart" => AgentEventBody::ToolStart {
                tool_call_id: text("toolCallId").unwrap_or_default(),
                name: text("toolName").unwrap_or_default(),
            },
            "toolUpdate" => AgentEventBody::ToolUpdate {
                tool_call_id: text("toolCallId").unwrap_or_default(),
                text: result_text(event.get("partialResult")),
            },
            "toolEnd" => AgentEventBody::ToolEnd {
                tool_call_id: text("toolCallId").unwrap_or_default(),
                name: text("toolName").unwrap_or_default(),
                is_error: event.get("isError") == Some(&Value::Bool(true)),
            },
            "leaf" => AgentEventBody::Leaf {
                leaf: text("leafId"),
                summary_entry_id: text("summaryEntryId"),
            },
            "error" => AgentEventBody::Error {
                message: text("message")
                    .or_else(|| text("reason"))
                    .unwrap_or_else(|| "the agent reported an error".to_owned()),
            },
            _ => return None,
        };
        Some((self.current_turn(), body))
    }
}

/// A tool's (partial) result as text: its text content joined.
fn result_text(result: Option<&Value>) -> String {
    match result.and_then(|r| r.get("content")) {
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        Some(Value::String(s)) => s.clone(),
        _ => String::new(),
    }
}

/// An agent's notice (`extension_ui_request` `notify`) as a protocol event.
pub fn notice(request: &Value) -> Option<AgentEventBody> {
    let text = request.get("message").and_then(Value::as_str)?.to_owned();
    let level = match request.get("notifyType").and_then(Value::as_str) {
        Some("warning") => NoticeLevel::Warning,
        Some("error") => NoticeLevel::Error,
        _ => NoticeLevel::Info,
    };
    Some(AgentEventBody::Notice { level, text })
}

/// An agent's dialog (`extension_ui_request` `select`/`confirm`/`input`/`editor`) as the
/// protocol's dialog params; `None` for requests that are not dialogs.
pub fn dialog(uri: &str, request: &Value) -> Option<proto::AgentDialogParams> {
    let text = |key: &str| request.get(key).and_then(Value::as_str).map(str::to_owned);
    let dialog = match request.get("method").and_then(Value::as_str)? {
        "select" => proto::DialogKind::Select,
        "confirm" => proto::DialogKind::Confirm,
        "input" => proto::DialogKind::Input,
        "editor" => proto::DialogKind::Editor,
        _ => return None,
    };
    Some(proto::AgentDialogParams {
        uri: uri.to_owned(),
        dialog,
        title: text("title").unwrap_or_default(),
        message: text("message"),
        options: request
            .get("options")
            .and_then(Value::as_array)
            .map(|o| {
                o.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
        placeholder: text("placeholder"),
        prefill: text("prefill"),
        timeout_ms: request.get("timeout").and_then(Value::as_u64),
    })
}

/// The RPC answer to a dialog (`extension_ui_response` without its `type`).
pub fn dialog_answer(id: &str, answer: Option<&proto::AgentDialogResult>) -> Value {
    match answer {
        Some(a) if !a.cancelled => {
            let mut v = serde_json::json!({"id": id});
            match &a.value {
                Some(value) => v["value"] = value.clone().into(),
                None => v["confirmed"] = a.confirmed.into(),
            }
            v
        }
        _ => serde_json::json!({"id": id, "cancelled": true}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_are_numbered_and_events_carry_the_prompts_turn() {
        let mut t = Translator::new(Dialect::Pi, None);
        t.expect_turn(7);
        let start = t.translate(&json!({"event": "agentStart"}));
        assert_eq!(start, Some((Some(7), AgentEventBody::AgentStart)));
        let first = t.translate(&json!({"event": "messageStart", "role": "user"}));
        assert_eq!(
            first,
            Some((
                Some(7),
                AgentEventBody::MessageStart {
                    message: 1,
                    role: "user".into()
                }
            ))
        );
        t.translate(&json!({"event": "messageStart", "role": "assistant"}));
        let delta =
            t.translate(&json!({"event": "delta", "kind": "thinking", "index": 1, "text": "hmm"}));
        assert_eq!(
            delta,
            Some((
                Some(7),
                AgentEventBody::Delta {
                    message: 2,
                    block: 1,
                    delta: DeltaKind::Thinking,
                    text: "hmm".into()
                }
            ))
        );
        assert_eq!(
            t.translate(&json!({"event": "agentEnd"})),
            Some((Some(7), AgentEventBody::AgentEnd))
        );
        // A turn the agent's own user started.
        assert_eq!(
            t.translate(&json!({"event": "agentStart"})),
            Some((None, AgentEventBody::AgentStart))
        );
        assert_eq!(t.translate(&json!({"event": "session"})), None);
    }

    #[test]
    fn dialogs_and_their_answers() {
        let request = json!({"type": "extension_ui_request", "id": "u1", "method": "confirm", "title": "Sure?", "message": "Really", "timeout": 500});
        let params = dialog("file:///s.jsonl", &request).expect("a dialog");
        assert_eq!(params.dialog, proto::DialogKind::Confirm);
        assert_eq!(params.timeout_ms, Some(500));
        assert_eq!(
            dialog_answer("u1", None),
            json!({"id": "u1", "cancelled": true})
        );
        let yes = proto::AgentDialogResult {
            confirmed: true,
            ..Default::default()
        };
        assert_eq!(
            dialog_answer("u1", Some(&yes)),
            json!({"id": "u1", "confirmed": true})
        );
        let notify = json!({"type": "extension_ui_request", "id": "u2", "method": "notify", "message": "hi"});
        assert_eq!(dialog("file:///s.jsonl", &notify), None);
        assert_eq!(
            notice(&notify),
            Some(AgentEventBody::Notice {
                level: NoticeLevel::Info,
                text: "hi".into()
            })
        );
    }
}
