//! A `message` entry's row and facts: user, assistant (with its no-text, aborted and error
//! cases, omp's retry notes and error presentation, its tool calls), tool result, bash and custom
//! messages — from the parsed value, or straight from the common line shapes the fast path reads
//! ([`PlainMessage`]), both giving the same facts.

use super::tool_calls::ToolCall;
use super::{extract_content, join_str, str_field, EntryFacts, RowText};
use crate::cells;
use crate::dialect::Dialect;
use crate::js;
use crate::json::Field;
use serde_json::{Map, Value};

/// omp's custom types that start a user turn when attributed to the user.
const SKILL_PROMPT: &str = "skill-prompt";
const COLLAB_PROMPT: &str = "collab-prompt";

/// Whether a text counts as no text for the dialect's "has it any text" test.
pub(super) fn is_blank(t: &str, dialect: Dialect) -> bool {
    match dialect {
        Dialect::Pi => js::trim(t).is_empty(),
        Dialect::Omp => js::trim(t)
            .chars()
            .all(|c| matches!(c, '.' | '\u{2026}' | ' ' | '\t' | '\n' | '\r')),
    }
}

pub(super) fn has_text(content: Option<&Value>, dialect: Dialect) -> bool {
    let blank = |t: &str| is_blank(t, dialect);
    match content {
        Some(Value::String(s)) => !blank(s),
        Some(Value::Array(blocks)) => blocks.iter().any(|b| {
            b.field("type").and_then(Value::as_str) == Some("text")
                && b.field("text")
                    .and_then(Value::as_str)
                    .is_some_and(|t| !t.is_empty() && !blank(t))
        }),
        _ => false,
    }
}

/// omp's `isUserTurnInitiator` over a custom message's type and attribution.
pub(super) fn omp_user_initiator(custom_type: Option<&str>, attribution: Option<&str>) -> bool {
    attribution == Some("user") && matches!(custom_type, Some(SKILL_PROMPT | COLLAB_PROMPT))
}

/// omp's `isUserRequestEntry`.
pub(crate) fn omp_is_user_request(obj: &Map<String, Value>) -> bool {
    match str_field(obj, "type") {
        Some("message") => {
            let Some(msg) = obj.field("message").and_then(Value::as_object) else {
                return false;
            };
            match str_field(msg, "role") {
                Some("user") => true,
                Some("custom") => {
                    omp_user_initiator(str_field(msg, "customType"), str_field(msg, "attribution"))
                }
                _ => false,
            }
        }
        Some("custom_message") => {
            let content_ok = matches!(
                obj.field("content"),
                Some(Value::String(_) | Value::Array(_))
            );
            let custom_type = match str_field(obj, "customType") {
                Some(t) if !t.is_empty() => Some(t),
                _ => Some("custom-message"),
            };
            content_ok && omp_user_initiator(custom_type, str_field(obj, "attribution"))
        }
        _ => false,
    }
}

/// omp's assistant error presentation: `Some((compact, text))`, `compact` for recovered retries.
pub(super) fn omp_error_presentation(msg: &Map<String, Value>) -> Option<(bool, String)> {
    let recovery = msg
        .field("retryRecovery")
        .and_then(|r| r.field("status"))
        .and_then(Value::as_str);
    if recovery == Some("superseded") {
        return None;
    }
    if recovery == Some("recovered") {
        let note = msg
            .field("retryRecovery")
            .and_then(|r| r.field("note"))
            .and_then(Value::as_str)
            .unwrap_or("");
        // `replaceTabs(note).replace(/\s+/g, " ").trim()`.
        let collapsed = js::collapse_whitespace(&note.replace('\t', "   "));
        let text = if collapsed.is_empty() {
            "retried".to_owned()
        } else {
            collapsed
        };
        return Some((true, cells::truncate_to_width(&text, 80, "\u{2026}")));
    }
    omp_stop_presentation(str_field(msg, "stopReason"), str_field(msg, "errorMessage"))
}

/// [`omp_error_presentation`] for a message without a retry recovery.
pub(super) fn omp_stop_presentation(
    stop: Option<&str>,
    error: Option<&str>,
) -> Option<(bool, String)> {
    let silent = error == Some("__omp.silent_abort__");
    let interrupt = error == Some("Interrupted by user");
    let render_reason = !silent && !interrupt;
    match stop {
        Some("aborted") => {
            if !render_reason {
                return None;
            }
            let generic = error.is_none_or(|e| e.is_empty() || e == "Request was aborted");
            Some((
                false,
                if generic {
                    "Operation aborted".to_owned()
                } else {
                    error.unwrap_or_default().to_owned()
                },
            ))
        }
        Some("error") => Some((
            false,
            error
                .filter(|e| !e.is_empty())
                .unwrap_or("Error")
                .to_owned(),
        )),
        _ => match error {
            Some(e) if !e.is_empty() && render_reason => Some((false, e.to_owned())),
            _ => None,
        },
    }
}

/// An assistant row's text from its normalized content text, stop reason and error message;
/// `omp_presentation` (omp's error presentation) is asked for only in omp's dialect.
pub(super) fn assistant_row_text(
    dialect: Dialect,
    text: &str,
    stop: Option<&str>,
    error: Option<&str>,
    omp_presentation: impl FnOnce() -> Option<(bool, String)>,
) -> String {
    match dialect {
        Dialect::Pi => {
            if !text.is_empty() {
                format!("assistant: {text}")
            } else if stop == Some("aborted") {
                "assistant: (aborted)".to_owned()
            } else if let Some(e) = error.filter(|e| !e.is_empty()) {
                format!("assistant: {}", js::slice_utf16(&js::one_line(e), 80))
            } else {
                "assistant: (no content)".to_owned()
            }
        }
        Dialect::Omp => match omp_presentation() {
            Some((true, note)) => format!("assistant: {note}"),
            _ if !text.is_empty() => format!("assistant: {text}"),
            Some((false, err)) => {
                format!("assistant: {}", js::slice_utf16(&js::one_line(&err), 80))
            }
            None if stop == Some("aborted") => "assistant: (aborted)".to_owned(),
            None => "assistant: (no content)".to_owned(),
        },
    }
}

pub(super) fn message_facts(msg: &Map<String, Value>, dialect: Dialect, facts: &mut EntryFacts) {
    let role = str_field(msg, "role").map(crate::type_names::name);
    let role_str = role.as_deref().unwrap_or("");
    let content = msg.field("content");
    // The capped content, made once for the search text and the row.
    let extracted = std::cell::OnceCell::new();
    let extracted = || extracted.get_or_init(|| extract_content(content)).as_str();
    // Searchable text: role, then the capped content when present, then a bash command.
    facts.search_parts.push(join_str(msg.field("role")));
    if js::truthy(content) {
        facts.search_parts.push(extracted().to_owned());
    }
    if role_str == "bashExecution" {
        if let Some(cmd) = str_field(msg, "command").filter(|c| !c.is_empty()) {
            facts.search_parts.push(cmd.to_owned());
        }
    }
    let text = match role_str {
        "user" => {
            facts.user_request = true;
            format!("user: {}", js::one_line(extracted()))
        }
        "developer" if dialect == Dialect::Omp => {
            format!("developer: {}", js::one_line(extracted()))
        }
        "assistant" => {
            let stop = str_field(msg, "stopReason");
            let error_or_abort = msg.field("stopReason").is_some_and(|s| js::truthy(Some(s)))
                && stop != Some("stop")
                && stop != Some("toolUse");
            facts.blank_assistant = !has_text(content, dialect) && !error_or_abort;
            if let Some(Value::Array(blocks)) = content {
                for b in blocks {
                    if b.field("type").and_then(Value::as_str) == Some("toolCall") {
                        let id = js::to_string(b.field("id"));
                        let name = js::to_string(b.field("name"));
                        let empty = Value::Object(Map::new());
                        let arguments = b.field("arguments").unwrap_or(&empty);
                        let call = ToolCall::new(name, arguments, dialect);
                        facts.tool_calls.push((id, call));
                    }
                }
            }
            assistant_row_text(
                dialect,
                &js::one_line(extracted()),
                stop,
                str_field(msg, "errorMessage"),
                || omp_error_presentation(msg),
            )
        }
        "toolResult" => {
            let call_id = str_field(msg, "toolCallId")
                .filter(|s| !s.is_empty())
                .map(str::to_owned);
            let tool_name = match msg.field("toolName") {
                None | Some(Value::Null) => "tool".to_owned(),
                other => js::to_string(other),
            };
            facts.role = role;
            facts.text = RowText::ToolResult { call_id, tool_name };
            return;
        }
        "bashExecution" => {
            let cmd = match msg.field("command") {
                None | Some(Value::Null) => String::new(),
                other => js::to_string(other),
            };
            format!("[bash]: {}", js::one_line(&cmd))
        }
        "custom" if dialect == Dialect::Omp => {
            facts.user_request =
                omp_user_initiator(str_field(msg, "customType"), str_field(msg, "attribution"));
            format!("[{role_str}]")
        }
        _ => format!("[{}]", js::to_string(msg.field("role"))),
    };
    facts.role = role;
    facts.text = RowText::Ready(text);
}

/// A message of the common shapes, read straight from its line (`crate::message_line`): a `user`,
/// `assistant` or `toolResult` role, string fields as strings, no retry recovery. Anything else
/// goes through [`entry_facts`]; both give the same facts (checked by `message_line`'s tests).
pub(crate) struct PlainMessage<'a> {
    pub role: &'a str,
    pub content: PlainContent<'a>,
    pub tool_call_id: Option<&'a str>,
    pub tool_name: Option<&'a str>,
    pub stop_reason: Option<&'a str>,
    pub error_message: Option<&'a str>,
}

/// `message.content` of a [`PlainMessage`], texts already cut as the projection cuts them.
pub(crate) enum PlainContent<'a> {
    /// Absent or `null`.
    Absent,
    Text(String),
    Blocks(Vec<PlainBlock<'a>>),
}

/// One content block of a [`PlainMessage`].
pub(crate) enum PlainBlock<'a> {
    /// `type: "text"` with a string `text`.
    Text(String),
    /// `type: "toolCall"` with string `id` and `name`; `arguments` as written (absent: `None`).
    ToolCall {
        id: &'a str,
        name: &'a str,
        arguments: Option<Value>,
    },
    /// Any other block (thinking, images, ...): no text.
    Other,
}

/// The view facts of a [`PlainMessage`] entry: what [`entry_facts`] makes of the same line.
pub(crate) fn plain_message_facts(m: PlainMessage<'_>, dialect: Dialect) -> EntryFacts {
    let joined: std::borrow::Cow<'_, str> = match &m.content {
        PlainContent::Absent => "".into(),
        PlainContent::Text(s) => s.as_str().into(),
        PlainContent::Blocks(blocks) => {
            let mut out = String::new();
            for b in blocks {
                if let PlainBlock::Text(t) = b {
                    out.push_str(t);
                }
            }
            out.into()
        }
    };
    let extracted = js::slice_utf16(&joined, 200);
    let truthy = match &m.content {
        PlainContent::Absent => false,
        PlainContent::Text(s) => !s.is_empty(),
        PlainContent::Blocks(_) => true,
    };
    let mut search = String::with_capacity(m.role.len() + 1 + extracted.len());
    search.push_str(m.role);
    if truthy {
        search.push(' ');
        search.push_str(extracted);
    }
    let mut facts = EntryFacts {
        kind: crate::type_names::name("message"),
        role: Some(crate::type_names::name(m.role)),
        text: RowText::Ready(String::new()),
        search_parts: Vec::new(),
        search: search.into_boxed_str(),
        blank_assistant: false,
        user_request: false,
        tool_calls: Vec::new(),
    };
    let text = match m.role {
        "user" => {
            facts.user_request = true;
            format!("user: {}", js::one_line(extracted))
        }
        "assistant" => {
            let stop = m.stop_reason;
            let error_or_abort = stop.is_some_and(|s| !s.is_empty())
                && stop != Some("stop")
                && stop != Some("toolUse");
            let has_text = match &m.content {
                PlainContent::Absent => false,
                PlainContent::Text(s) => !is_blank(s, dialect),
                PlainContent::Blocks(blocks) => blocks.iter().any(
                    |b| matches!(b, PlainBlock::Text(t) if !t.is_empty() && !is_blank(t, dialect)),
                ),
            };
            facts.blank_assistant = !has_text && !error_or_abort;
            let text = js::one_line(extracted);
            if let PlainContent::Blocks(blocks) = m.content {
                for b in blocks {
                    if let PlainBlock::ToolCall {
                        id,
                        name,
                        arguments,
                    } = b
                    {
                        let arguments = arguments.unwrap_or_else(|| Value::Object(Map::new()));
                        let call = ToolCall::new(name.to_owned(), &arguments, dialect);
                        facts.tool_calls.push((id.to_owned(), call));
                    }
                }
            }
            assistant_row_text(dialect, &text, stop, m.error_message, || {
                omp_stop_presentation(stop, m.error_message)
            })
        }
        _ => {
            facts.text = RowText::ToolResult {
                call_id: m.tool_call_id.filter(|s| !s.is_empty()).map(str::to_owned),
                tool_name: m.tool_name.unwrap_or("tool").to_owned(),
            };
            facts.tool_calls.shrink_to_fit();
            return facts;
        }
    };
    facts.text = RowText::Ready(text);
    facts.tool_calls.shrink_to_fit();
    facts
}
