//! The messages `buildSessionContext` synthesizes from non-message entries — `custom_message` →
//! `custom`, `branch_summary` → `branchSummary`, `compaction` → `compactionSummary` — in each
//! agent's exact key order, with `undefined` fields left out and ISO timestamps turned into epoch
//! milliseconds the way `new Date(ts).getTime()` does. Deciding *which* entries emit is the
//! dialect modules' job, not this one's.

use crate::js;
use serde_json::Value;

/// `createBranchSummaryMessage(entry.summary, entry.fromId, entry.timestamp)` (same in both agents).
pub(crate) fn branch_summary(entry: &Value) -> Value {
    js::object([
        ("role", Some(Value::from("branchSummary"))),
        ("summary", js::get(entry, "summary").cloned()),
        ("fromId", js::get(entry, "fromId").cloned()),
        ("timestamp", Some(js::date_ms(js::get(entry, "timestamp")))),
    ])
}

/// Whether a `branch_summary` entry emits a message (`entry.summary` is truthy).
pub(crate) fn emits_branch_summary(entry: &Value) -> bool {
    js::is_type(entry, "branch_summary") && js::truthy(js::get(entry, "summary"))
}

/// pi `createCompactionSummaryMessage(summary, tokensBefore, timestamp)`.
pub(crate) fn pi_compaction_summary(entry: &Value) -> Value {
    js::object([
        ("role", Some(Value::from("compactionSummary"))),
        ("summary", js::get(entry, "summary").cloned()),
        ("tokensBefore", js::get(entry, "tokensBefore").cloned()),
        ("timestamp", Some(js::date_ms(js::get(entry, "timestamp")))),
    ])
}

/// omp-core `createCompactionSummaryMessage(summary, tokensBefore, timestamp, options)` with the
/// options `buildSessionContext` passes from the entry; `provider_payload` is the replacement
/// history of an OpenAI remote compaction, when there is one.
pub(crate) fn omp_compaction_summary(entry: &Value, provider_payload: Option<Value>) -> Value {
    let field = |key: &str| js::get(entry, key).cloned();
    js::object([
        ("role", Some(Value::from("compactionSummary"))),
        ("summary", field("summary")),
        ("shortSummary", field("shortSummary")),
        ("tokensBefore", field("tokensBefore")),
        ("tokensAfter", field("tokensAfter")),
        ("method", field("method")),
        ("providerPayload", provider_payload),
        ("warning", field("warning")),
        ("timestamp", Some(js::date_ms(js::get(entry, "timestamp")))),
    ])
}

/// pi `createCustomMessage(entry.customType, entry.content, entry.display, entry.details, entry.timestamp)`:
/// fields copied as they are.
pub(crate) fn pi_custom_message(entry: &Value) -> Value {
    let field = |key: &str| js::get(entry, key).cloned();
    js::object([
        ("role", Some(Value::from("custom"))),
        ("customType", field("customType")),
        ("content", field("content")),
        ("display", field("display")),
        ("details", field("details")),
        ("timestamp", Some(js::date_ms(js::get(entry, "timestamp")))),
    ])
}

/// Whether custom-message content is sendable (`isCustomMessageContent`): a string or an array.
pub(crate) fn is_custom_content(content: Option<&Value>) -> bool {
    matches!(content, Some(Value::String(_) | Value::Array(_)))
}

/// omp-tui `customMessageEntryMessage(entry)`: entries whose content is neither a string nor an
/// array emit nothing; the rest are normalized (default type, boolean display, attribution
/// `"user"` or `"agent"` when the entry has one) into omp-core's `createCustomMessage` shape.
pub(crate) fn omp_custom_message(entry: &Value) -> Option<Value> {
    let content = js::get(entry, "content");
    if !is_custom_content(content) {
        return None;
    }
    let custom_type = match js::str_of(js::get(entry, "customType")) {
        Some(t) if !t.is_empty() => t,
        _ => "custom-message",
    };
    let display = js::get(entry, "display")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let attribution = js::get(entry, "attribution").map(|a| {
        Value::from(if a.as_str() == Some("user") {
            "user"
        } else {
            "agent"
        })
    });
    Some(omp_custom(
        custom_type,
        content.cloned(),
        display,
        js::get(entry, "details").cloned(),
        attribution,
        js::get(entry, "timestamp"),
    ))
}

/// omp-core `createCustomMessage(customType, content, display, details, timestamp, attribution)`.
pub(crate) fn omp_custom(
    custom_type: &str,
    content: Option<Value>,
    display: bool,
    details: Option<Value>,
    attribution: Option<Value>,
    timestamp: Option<&Value>,
) -> Value {
    js::object([
        ("role", Some(Value::from("custom"))),
        ("customType", Some(Value::from(custom_type))),
        ("content", content),
        ("display", Some(Value::from(display))),
        ("details", details),
        ("attribution", attribution),
        ("timestamp", Some(js::date_ms(timestamp))),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn omp_custom_message_normalizes() {
        let entry = json!({"type":"custom_message","customType":"","content":"hi","display":"yes","attribution":null,"timestamp":"2025-01-01T00:00:01.000Z"});
        assert_eq!(
            omp_custom_message(&entry),
            Some(
                json!({"role":"custom","customType":"custom-message","content":"hi","display":false,"attribution":"agent","timestamp":1735689601000_i64})
            )
        );
        assert_eq!(
            omp_custom_message(&json!({"type":"custom_message","content":{"x":1}})),
            None
        );
    }
}
