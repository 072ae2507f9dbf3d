//! The reduced shapes the conformance fixtures record (`context.messages` and `context.llm`), so a
//! context can be compared with a fixture by value: per role, the text (string content or text
//! blocks joined), the fields that identify the message, and the timestamp. The shapes are the
//! fixture harness's, not the agents'; nothing else depends on them.

use crate::js;
use serde_json::Value;

/// String content, or the `text` of every text block joined with nothing in between.
fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks_text(blocks, "text", "text"),
        _ => String::new(),
    }
}

fn blocks_text(blocks: &[Value], kind: &str, field: &str) -> String {
    blocks
        .iter()
        .filter(|b| js::is_type(b, kind))
        .filter_map(|b| js::get(b, field))
        .map(|v| js::to_string(Some(v)))
        .collect()
}

/// Ids of the `toolCall` blocks (`null` for a call without an id).
fn tool_call_ids(content: Option<&Value>) -> Vec<Value> {
    content
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| js::is_type(b, "toolCall"))
                .map(|b| js::get(b, "id").cloned().unwrap_or(Value::Null))
                .collect()
        })
        .unwrap_or_default()
}

/// One context message as the fixtures' `context.messages` records it.
pub(crate) fn message(m: &Value) -> Value {
    let field = |key: &str| js::get(m, key).cloned();
    let role = field("role");
    let text = || Some(Value::from(text_of(js::get(m, "content"))));
    let mut pairs: Vec<(&str, Option<Value>)> = vec![("role", role.clone())];
    match js::str_of(role.as_ref()) {
        Some("assistant") => {
            let model = format!(
                "{}/{}",
                js::to_string(js::get(m, "provider")),
                js::to_string(js::get(m, "model"))
            );
            let calls = tool_call_ids(js::get(m, "content"));
            let thinking = js::get(m, "content")
                .and_then(Value::as_array)
                .map(|blocks| blocks_text(blocks, "thinking", "thinking"))
                .unwrap_or_default();
            pairs.extend([
                ("text", text()),
                ("stopReason", field("stopReason")),
                ("model", Some(Value::from(model))),
                (
                    "toolCalls",
                    (!calls.is_empty()).then_some(Value::Array(calls)),
                ),
                (
                    "thinking",
                    (!thinking.is_empty()).then_some(Value::from(thinking)),
                ),
            ]);
        }
        Some("toolResult") => pairs.extend([
            ("toolCallId", field("toolCallId")),
            ("text", text()),
            ("isError", field("isError")),
        ]),
        Some("custom" | "hookMessage") => {
            pairs.extend([
                ("customType", field("customType")),
                ("text", text()),
                ("display", field("display")),
            ]);
        }
        Some("branchSummary") => {
            pairs.extend([("summary", field("summary")), ("fromId", field("fromId"))])
        }
        Some("compactionSummary") => pairs.extend([
            ("summary", field("summary")),
            ("tokensBefore", field("tokensBefore")),
        ]),
        Some("bashExecution") => pairs.extend([
            ("command", field("command")),
            ("excludeFromContext", field("excludeFromContext")),
        ]),
        _ => pairs.push(("text", text())),
    }
    pairs.push(("timestamp", field("timestamp")));
    js::object(pairs)
}

/// One LLM message as the fixtures' `context.llm` records it: `{role, text, toolCalls?, toolCallId?}`.
pub(crate) fn llm(m: &Value) -> Value {
    let calls = tool_call_ids(js::get(m, "content"));
    let is_result = js::str_of(js::get(m, "role")) == Some("toolResult");
    js::object([
        ("role", js::get(m, "role").cloned()),
        ("text", Some(Value::from(text_of(js::get(m, "content"))))),
        (
            "toolCalls",
            (!calls.is_empty()).then_some(Value::Array(calls)),
        ),
        (
            "toolCallId",
            if is_result {
                js::get(m, "toolCallId").cloned()
            } else {
                None
            },
        ),
    ])
}
