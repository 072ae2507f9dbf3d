//! oh-my-pi's message emission (`src/session/session-context.ts` `buildSessionContext`, model
//! context mode, i.e. not the display transcript): the plain walk and compaction replay it shares
//! with pi, plus its own rules — a later `/clear` boundary wins over the last compaction, empty
//! error turns and `retryRecovery` turns are skipped, prewalk/vibe-mode custom messages are
//! skipped, OpenAI remote compactions replay from `providerReplayThroughEntryId`, context-rollover
//! compactions re-emit the last user request, the context notebook is prepended, dangling tool
//! calls are stripped, and failed turns go with their tool results.
//!
//! Left out, because no fixture produces them and they depend on provider or tool state this
//! engine does not model:
//! - Anthropic server-compaction payloads (`getAnthropicCompactionPayload`): their
//!   `providerPayload`, `historyRewriteAt` and the `providerReplayThroughEntryId` snapshot start
//!   for an empty `firstKeptEntryId`; such compactions replay like plain ones here.
//! - snapcompact frame archives (`preserveData` archives rendered into `blocks`/`images`).
//! - the display-transcript mode (`transcript`, `collapseCompactedHistory`, cache-miss tracking),
//!   which is not what the model sees.
//! - in the LLM conversion (`omp_llm`): the `meta` output notices on bash/python runs and the
//!   `errorId` test for user interrupts.

use super::{emit, template, Emitted, Message, MessageRef, PathRef};
use crate::js;
use serde_json::Value;
use std::collections::HashSet;

const PREWALK_PLAN: &str = "prewalk-plan";
const VIBE_MODE_CONTEXT: &str = "vibe-mode-context";
pub(crate) const INTERRUPTED_THINKING: &str = "interrupted-thinking";
const CONTEXT_NOTES_TYPE: &str = "experimental_context_notes";
const MAX_CONTEXT_NOTES_BYTES: usize = 16_384;

/// The messages omp builds for `path` (root first).
#[cfg(test)]
pub(crate) fn messages(path: &[Value]) -> Vec<Value> {
    super::build_context(crate::Dialect::Omp, path)
        .messages
        .into_iter()
        .map(Message::into_value)
        .collect()
}

/// The messages omp's walk emits for `path` (root first), each entry's message by its index;
/// [`finish`] completes them.
pub(crate) fn walk(path: PathRef<'_>) -> Vec<Emitted> {
    let mut out = Vec::new();
    let values = path.values;
    let compaction = values.iter().rev().find(|e| js::is_type(e, "compaction"));
    let compaction_idx = compaction.map(|c| {
        let id = js::get(c, "id");
        values
            .iter()
            .position(|e| js::is_type(e, "compaction") && js::strict_eq(js::get(e, "id"), id))
            .unwrap_or(0)
    });
    let reset_idx = values
        .iter()
        .rposition(|e| js::is_type(e, "reset_boundary"));

    match (reset_idx, compaction, compaction_idx) {
        // A `/clear` later than the last compaction (or with no compaction) starts emission after it.
        (Some(reset), _, idx) if idx.is_none_or(|c| reset > c) => {
            (reset + 1..values.len()).for_each(|i| append(&mut out, path, i));
        }
        (_, Some(compaction), Some(idx)) => {
            replay_compaction(&mut out, path, compaction, idx, reset_idx)
        }
        _ => (0..values.len()).for_each(|i| append(&mut out, path, i)),
    }
    out
}

/// The context notebook, dangling tool calls and failed turns, after the walk.
pub(crate) fn finish(mut out: Vec<Message>, path: PathRef<'_>) -> Vec<Message> {
    prepend_context_notes(&mut out, path.values);
    strip_dangling_tool_calls(&mut out);
    drop_failed_turns(&mut out);
    out
}

/// The compaction branch: summary, then (rollover) the last user request, then the kept range or
/// the remote-compaction replay range, then everything after the compaction.
fn replay_compaction(
    out: &mut Vec<Emitted>,
    path: PathRef<'_>,
    compaction: &Value,
    idx: usize,
    reset_idx: Option<usize>,
) {
    let remote = openai_remote_payload(compaction);
    let has_remote = remote.is_some();
    out.push(Emitted::Made(emit::omp_compaction_summary(
        compaction, remote,
    )));
    let first_kept = js::get(compaction, "firstKeptEntryId");

    let details = js::get(compaction, "details");
    if is_record(details)
        && details.and_then(|d| js::str_of(js::get(d, "kind")))
            == Some("experimental-context-rollover")
    {
        let first_kept_idx = path
            .values
            .iter()
            .position(|e| js::strict_eq(js::get(e, "id"), first_kept));
        let lower = reset_idx.map_or(0, |r| r + 1);
        if let Some(i) = (lower..idx).rev().find(|&i| is_user_request_entry(path, i)) {
            if first_kept_idx.is_some_and(|k| i < k) {
                append(out, path, i);
            }
        }
    }

    if !has_remote {
        if let Some(start) = path.values[..idx]
            .iter()
            .position(|e| js::strict_eq(js::get(e, "id"), first_kept))
        {
            (start..idx).for_each(|i| append(out, path, i));
        }
    } else {
        let through = js::get(compaction, "providerReplayThroughEntryId");
        if js::truthy(through) {
            if let Some(r) = path
                .values
                .iter()
                .position(|e| js::strict_eq(js::get(e, "id"), through))
            {
                if r < idx {
                    (r + 1..idx).for_each(|i| append(out, path, i));
                }
            }
        }
    }
    (idx + 1..path.values.len()).for_each(|i| append(out, path, i));
}

/// omp's `appendMessage(entry)` in model-context mode, for the entry at `i`.
fn append(out: &mut Vec<Emitted>, path: PathRef<'_>, i: usize) {
    let entry = &path.values[i];
    if js::is_type(entry, "message") {
        let Some(message) = path.message(i) else {
            return;
        };
        if message.is_role("assistant")
            && (message.retry_recovery() || message.is_empty_error_turn())
        {
            return;
        }
        out.push(Emitted::Entry(i));
    } else if js::is_type(entry, "custom_message") {
        let custom_type = js::str_of(js::get(entry, "customType"));
        if custom_type == Some(PREWALK_PLAN) || custom_type == Some(VIBE_MODE_CONTEXT) {
            return;
        }
        if let Some(message) = emit::omp_custom_message(entry) {
            out.push(Emitted::Made(message));
        }
    } else if emit::emits_branch_summary(entry) {
        out.push(Emitted::Made(emit::branch_summary(entry)));
    }
}

/// pi-utils `isRecord`: a non-null, non-array object.
fn is_record(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::Object(_)))
}

/// `isEmptyErrorTurn`: `stopReason: "error"` with no non-blank text, thinking (or signature),
/// redacted thinking, tool call, or block of an unknown kind.
pub(crate) fn is_empty_error_turn(message: &Value) -> bool {
    if js::str_of(js::get(message, "stopReason")) != Some("error") {
        return false;
    }
    let non_blank = |v: Option<&Value>| match v {
        Some(Value::String(s)) => !js::trim(s).is_empty(),
        None => false,
        // A non-string where a string belongs would throw in the agent; count it as content so
        // the turn is never silently discarded.
        Some(_) => true,
    };
    let blocks = match js::get(message, "content") {
        Some(Value::Array(blocks)) => blocks.as_slice(),
        _ => &[],
    };
    !blocks
        .iter()
        .any(|block| match js::str_of(js::get(block, "type")) {
            Some("text") => non_blank(js::get(block, "text")),
            Some("thinking") => {
                non_blank(js::get(block, "thinking"))
                    || non_blank(js::get(block, "thinkingSignature"))
            }
            Some("redactedThinking") => non_blank(js::get(block, "data")),
            Some("fallback") => false,
            _ => true,
        })
}

/// `isUserTurnInitiator`: a user-invoked skill prompt or a user-attributed collab prompt.
pub(crate) fn is_user_turn_initiator(message: &Value) -> bool {
    let custom_type = js::str_of(js::get(message, "customType"));
    js::str_of(js::get(message, "attribution")) == Some("user")
        && matches!(custom_type, Some("skill-prompt" | "collab-prompt"))
}

/// omp-tui `isUserRequestEntry`: a user message, or a custom message that starts a user turn.
fn is_user_request_entry(path: PathRef<'_>, i: usize) -> bool {
    let entry = &path.values[i];
    if js::is_type(entry, "message") {
        return match path.message(i) {
            Some(m) if m.is_role("user") => true,
            Some(MessageRef::Value(m)) if is_role(m, "custom") => is_user_turn_initiator(m),
            _ => false,
        };
    }
    if js::is_type(entry, "custom_message") && js::get(entry, "content").is_some() {
        return emit::omp_custom_message(entry).is_some_and(|m| is_user_turn_initiator(&m));
    }
    false
}

/// `getOpenAiRemoteCompactionPayload`: the validated replacement history of an OpenAI remote
/// compaction, as the summary message's `providerPayload`.
fn openai_remote_payload(compaction: &Value) -> Option<Value> {
    let candidate =
        js::get(compaction, "preserveData").and_then(|p| js::get(p, "openaiRemoteCompaction"));
    if !is_record(candidate) {
        return None;
    }
    let provider =
        js::str_of(candidate.and_then(|c| js::get(c, "provider"))).filter(|p| !p.is_empty())?;
    let items = candidate.and_then(|c| js::get(c, "replacementHistory"))?;
    let Value::Array(list) = items else {
        return None;
    };
    if !list.iter().all(|i| is_record(Some(i))) {
        return None;
    }
    Some(js::object([
        ("type", Some(Value::from("openaiResponsesHistory"))),
        ("provider", Some(Value::from(provider))),
        ("items", Some(items.clone())),
    ]))
}

/// `getContextNotes` + `renderContextNotes`: the latest valid notebook revision since the last
/// `/clear`, rendered and prepended as a hidden custom message stamped with its entry's time.
fn prepend_context_notes(out: &mut Vec<Message>, path: &[Value]) {
    let mut notes = None;
    for entry in path.iter().rev() {
        if js::is_type(entry, "reset_boundary") {
            break;
        }
        if js::is_type(entry, "custom")
            && js::str_of(js::get(entry, "customType")) == Some(CONTEXT_NOTES_TYPE)
        {
            if let Some(text) = notes_text(js::get(entry, "data")) {
                notes = Some((text, js::get(entry, "id")));
                break;
            }
        }
    }
    let Some((text, entry_id)) = notes else {
        return;
    };
    if text.is_empty() {
        return;
    }
    let rendered = template::render(template::CONTEXT_NOTES, "notes", Some(&Value::from(text)));
    let rendered = js::trim(&rendered);
    if rendered.is_empty() {
        return;
    }
    if let Some(source) = path
        .iter()
        .find(|e| js::strict_eq(js::get(e, "id"), entry_id))
    {
        let message = emit::omp_custom(
            CONTEXT_NOTES_TYPE,
            Some(Value::from(rendered)),
            false,
            None,
            None,
            js::get(source, "timestamp"),
        );
        out.insert(0, message.into());
    }
}

/// `isContextNotesData`: exactly `{version: 1, text}` with at most 16 KiB of UTF-8 text.
fn notes_text(data: Option<&Value>) -> Option<&str> {
    let obj = data?.as_object()?;
    let text = obj.get("text")?.as_str()?;
    let version_one = obj.get("version").and_then(Value::as_f64) == Some(1.0);
    (obj.len() == 2 && version_one && text.len() <= MAX_CONTEXT_NOTES_BYTES).then_some(text)
}

fn content_blocks(message: &Value) -> Option<&Vec<Value>> {
    js::get(message, "content").and_then(Value::as_array)
}

fn is_role(message: &Value, role: &str) -> bool {
    js::str_of(js::get(message, "role")) == Some(role)
}

/// Removes every assistant `toolCall` that no emitted `toolResult` answers; a rewritten turn also
/// loses its redacted thinking and thinking signatures, and a turn left empty is removed.
fn strip_dangling_tool_calls(out: &mut Vec<Message>) {
    let paired: HashSet<String> = out
        .iter()
        .map(Message::view)
        .filter(|m| m.is_role("toolResult"))
        .map(|m| js::set_key(m.tool_call_id()))
        .collect();
    let dangling = |block: &Value| {
        js::is_type(block, "toolCall") && !paired.contains(&js::set_key(js::get(block, "id")))
    };
    for i in (0..out.len()).rev() {
        let m = out[i].view();
        if !m.is_role("assistant")
            || m.tool_call_ids()
                .into_iter()
                .all(|id| paired.contains(&js::set_key(id)))
        {
            continue;
        }
        let message = out[i].value();
        let Some(blocks) = content_blocks(&message) else {
            continue;
        };
        let normalized: Vec<Value> = blocks
            .iter()
            .filter(|b| !dangling(b) && !js::is_type(b, "redactedThinking"))
            .map(|b| match b {
                Value::Object(obj)
                    if js::is_type(b, "thinking") && js::truthy(obj.get("thinkingSignature")) =>
                {
                    Value::Object(js::with_field(obj, "thinkingSignature", None))
                }
                other => other.clone(),
            })
            .collect();
        let rewritten = match &*message {
            _ if normalized.is_empty() => None,
            Value::Object(obj) => Some(Value::Object(js::with_field(
                obj,
                "content",
                Some(Value::Array(normalized)),
            ))),
            _ => continue,
        };
        match rewritten {
            None => {
                out.remove(i);
            }
            Some(value) => out[i] = value.into(),
        }
    }
}

/// Drops assistant turns that ended in `aborted` or `error` (unless followed by their
/// interrupted-thinking note), together with the tool results answering their tool calls.
fn drop_failed_turns(out: &mut Vec<Message>) {
    let mut i = out.len();
    while i > 0 {
        i -= 1;
        let message = out[i].view();
        if !message.is_role("assistant") {
            continue;
        }
        if !matches!(message.stop_reason(), Some("aborted" | "error")) {
            continue;
        }
        if out.get(i + 1).is_some_and(|next| {
            let next = next.view();
            next.is_role("custom") && next.custom_type() == Some(INTERRUPTED_THINKING)
        }) {
            continue;
        }
        let dropped: HashSet<String> = message
            .tool_call_ids()
            .into_iter()
            .map(js::set_key)
            .collect();
        out.remove(i);
        if !dropped.is_empty() {
            for j in (i..out.len()).rev() {
                let m = out[j].view();
                if m.is_role("toolResult") && dropped.contains(&js::set_key(m.tool_call_id())) {
                    out.remove(j);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn msg(id: &str, parent: Option<&str>, message: Value) -> Value {
        json!({"type":"message","id":id,"parentId":parent,"timestamp":"2025-01-01T00:00:01.000Z","message":message})
    }

    fn roles(messages: &[Value]) -> Vec<String> {
        messages
            .iter()
            .map(|m| js::to_string(js::get(m, "role")))
            .collect()
    }

    #[test]
    fn dangling_tool_calls_are_stripped() {
        let path = vec![
            msg("a", None, json!({"role":"user","content":"go"})),
            msg(
                "b",
                Some("a"),
                json!({"role":"assistant","stopReason":"toolUse","content":[
                    {"type":"thinking","thinking":"t","thinkingSignature":"sig"},
                    {"type":"redactedThinking","data":"x"},
                    {"type":"toolCall","id":"c1","name":"ls","arguments":{}},
                    {"type":"toolCall","id":"c2","name":"ls","arguments":{}}
                ]}),
            ),
            msg(
                "c",
                Some("b"),
                json!({"role":"toolResult","toolCallId":"c1","content":[]}),
            ),
            msg(
                "d",
                Some("c"),
                json!({"role":"assistant","stopReason":"toolUse","content":[{"type":"toolCall","id":"c3"}]}),
            ),
        ];
        let out = messages(&path);
        assert_eq!(roles(&out), ["user", "assistant", "toolResult"]);
        assert_eq!(
            out[1]["content"],
            json!([{"type":"thinking","thinking":"t"},{"type":"toolCall","id":"c1","name":"ls","arguments":{}}])
        );
    }

    #[test]
    fn retry_recovery_and_empty_errors_are_skipped() {
        let path = vec![
            msg("a", None, json!({"role":"user","content":"go"})),
            msg(
                "b",
                Some("a"),
                json!({"role":"assistant","stopReason":"stop","retryRecovery":true,"content":[{"type":"text","text":"x"}]}),
            ),
            msg(
                "c",
                Some("b"),
                json!({"role":"assistant","stopReason":"error","content":[{"type":"text","text":"  "}]}),
            ),
            msg(
                "d",
                Some("c"),
                json!({"role":"assistant","stopReason":"error","content":[{"type":"text","text":"partial"}]}),
            ),
            msg(
                "e",
                Some("d"),
                json!({"role":"custom","customType":INTERRUPTED_THINKING,"content":"note"}),
            ),
        ];
        assert_eq!(roles(&messages(&path)), ["user", "assistant", "custom"]);
    }

    #[test]
    fn remote_compaction_replays_after_the_provider_boundary() {
        let path = vec![
            msg("a", None, json!({"role":"user","content":"one"})),
            msg("b", Some("a"), json!({"role":"user","content":"two"})),
            msg("c", Some("b"), json!({"role":"user","content":"three"})),
            json!({"type":"compaction","id":"k","parentId":"c","timestamp":"2025-01-01T00:00:02.000Z","summary":"S",
                   "firstKeptEntryId":"a","tokensBefore":5,"providerReplayThroughEntryId":"b",
                   "preserveData":{"openaiRemoteCompaction":{"provider":"openai","replacementHistory":[{"x":1}]}}}),
        ];
        let out = messages(&path);
        assert_eq!(out.len(), 2);
        assert_eq!(
            out[0]["providerPayload"],
            json!({"type":"openaiResponsesHistory","provider":"openai","items":[{"x":1}]})
        );
        assert_eq!(out[1]["content"], json!("three"));
    }

    #[test]
    fn context_notes_are_prepended() {
        let path = vec![
            json!({"type":"custom","customType":CONTEXT_NOTES_TYPE,"data":{"version":1,"text":"- task A"},"id":"n","parentId":null,"timestamp":"2025-01-01T00:00:03.000Z"}),
            msg("a", Some("n"), json!({"role":"user","content":"hi"})),
        ];
        let out = messages(&path);
        assert_eq!(roles(&out), ["custom", "user"]);
        assert_eq!(out[0]["customType"], json!(CONTEXT_NOTES_TYPE));
        assert_eq!(out[0]["display"], json!(false));
        assert_eq!(out[0]["timestamp"], json!(1735689603000_i64));
        let text = out[0]["content"].as_str().unwrap_or_default();
        assert!(
            text.starts_with("<experimental-context-notes>\n")
                && text.ends_with("revision:\n- task A\n</experimental-context-notes>")
        );
    }
}
