//! `convertToLlm` per dialect: the provider-facing messages made from context messages. Owns the
//! dispatch and pi's conversion
//! (`dist/core/messages.js`): bash runs, custom messages and summaries become `user` messages with
//! pi's fixed wrapper texts. omp's conversion lives in `omp_llm`, the shapes both build in
//! `llm_shapes`. Message order and content only —
//! provider-specific encoding is out of scope.

use super::llm_shapes::{bash_text, message, text_block};
use super::{omp, omp_llm, Message};
use crate::dialect::Dialect;
use crate::js;
use serde_json::Value;

const PI_COMPACTION_PREFIX: &str =
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
const PI_COMPACTION_SUFFIX: &str = "\n</summary>";
const PI_BRANCH_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
const PI_BRANCH_SUFFIX: &str = "</summary>";

/// The messages the agent would send to the model for `messages`.
pub(crate) fn convert(dialect: Dialect, messages: &[Message]) -> Vec<Value> {
    (0..messages.len())
        .flat_map(|i| convert_at(dialect, messages, i))
        .collect()
}

/// The LLM messages made from `messages[i]` (omp looks at the next message too).
pub(crate) fn convert_at(dialect: Dialect, messages: &[Message], i: usize) -> Vec<Value> {
    let m = messages[i].value();
    match dialect {
        Dialect::Pi => pi_convert(&m).into_iter().collect(),
        Dialect::Omp => omp_llm::convert_one(&m, interrupted_next(messages, i)),
    }
}

/// For a message [`convert_at`] passes on with its role and content unchanged (kept as text):
/// its role and the text of its content, read without building the message.
pub(crate) fn plain_text(
    dialect: Dialect,
    messages: &[Message],
    i: usize,
) -> Option<(&'static str, String)> {
    passed_on(dialect, messages, i).and_then(|m| m.plain_llm_text(dialect))
}

/// [`plain_text`] with the text as JSON writes it inside a string's quotes, when the message's
/// text gives it without decoding.
pub(crate) fn plain_text_json(
    dialect: Dialect,
    messages: &[Message],
    i: usize,
) -> Option<(&'static str, Vec<&str>)> {
    passed_on(dialect, messages, i).and_then(|m| m.plain_llm_text_json(dialect))
}

/// Message `i`, unless omp rewrites it (an assistant turn its interrupted-thinking note follows).
fn passed_on(dialect: Dialect, messages: &[Message], i: usize) -> Option<&Message> {
    if dialect == Dialect::Omp && interrupted_next(messages, i) {
        return None;
    }
    messages.get(i)
}

/// omp: an assistant turn directly followed by its interrupted-thinking note.
fn interrupted_next(messages: &[Message], i: usize) -> bool {
    messages[i].view().is_role("assistant")
        && messages.get(i + 1).is_some_and(|next| {
            let next = next.view();
            next.is_role("custom") && next.custom_type() == Some(omp::INTERRUPTED_THINKING)
        })
}

/// pi `convertToLlm`, one message.
fn pi_convert(m: &Value) -> Option<Value> {
    let timestamp = js::get(m, "timestamp");
    match js::str_of(js::get(m, "role"))? {
        "bashExecution" => (!js::truthy(js::get(m, "excludeFromContext"))).then(|| {
            message(
                "user",
                Value::Array(vec![text_block(bash_text(m, Dialect::Pi))]),
                None,
                timestamp,
            )
        }),
        "custom" => {
            let content = match js::get(m, "content") {
                Some(Value::String(s)) => Some(Value::Array(vec![text_block(s.clone())])),
                other => other.cloned(),
            };
            Some(js::object([
                ("role", Some(Value::from("user"))),
                ("content", content),
                ("timestamp", timestamp.cloned()),
            ]))
        }
        "branchSummary" => {
            let text = format!(
                "{PI_BRANCH_PREFIX}{}{PI_BRANCH_SUFFIX}",
                js::to_string(js::get(m, "summary"))
            );
            Some(message(
                "user",
                Value::Array(vec![text_block(text)]),
                None,
                timestamp,
            ))
        }
        "compactionSummary" => {
            let text = format!(
                "{PI_COMPACTION_PREFIX}{}{PI_COMPACTION_SUFFIX}",
                js::to_string(js::get(m, "summary"))
            );
            Some(message(
                "user",
                Value::Array(vec![text_block(text)]),
                None,
                timestamp,
            ))
        }
        "user" | "assistant" | "toolResult" => Some(m.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pi_bash_text() {
        let m = json!({"role":"bashExecution","command":"make","output":"","exitCode":2,"cancelled":false,"truncated":true,"fullOutputPath":"/tmp/o"});
        let out = convert(Dialect::Pi, &[m.into()]);
        assert_eq!(
            out[0]["content"][0]["text"],
            json!("Ran `make`\n(no output)\n\nCommand exited with code 2\n\n[Output truncated. Full output: /tmp/o]")
        );
    }
}
