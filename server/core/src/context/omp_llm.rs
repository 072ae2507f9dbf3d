//! oh-my-pi's `convertToLlm` for one message (`src/session/messages.ts` `convertOne` + omp-core
//! `convertMessageToLlm`): summaries rendered through omp's prompt templates, custom messages sent
//! as `developer` (user-attributed skill and collab prompts as `user`), `attribution` filled in,
//! and omp's own roles (python runs, file mentions) converted.
//!
//! Not reproduced: the output notices `formatOutputNotice(meta)` appends to bash/python runs
//! (truncation, limits and LSP diagnostics carried in `meta`), the `errorId` half of
//! `isUserInterruptAbort` (only `errorMessage: "Interrupted by user"` is recognized), and the
//! per-call context symbols `copyPerCallContextMessage` carries.

use super::llm_shapes::{bash_text, message, nonzero_exit, text_block};
use super::{emit, template};
use crate::dialect::Dialect;
use crate::js;
use serde_json::{Map, Value};

pub(crate) const USER_INTERRUPT_LABEL: &str = "Interrupted by user";

/// `{...m, attribution: m.attribution ?? fallback}`.
fn with_default_attribution(obj: &Map<String, Value>, fallback: &str) -> Map<String, Value> {
    let attribution = obj
        .get("attribution")
        .filter(|a| !a.is_null())
        .cloned()
        .unwrap_or_else(|| Value::from(fallback));
    js::with_field(obj, "attribution", Some(attribution))
}

/// omp `convertOne(m, interruptedNext)`: `interrupted_next` is true for an assistant turn directly
/// followed by its interrupted-thinking note.
pub(super) fn convert_one(m: &Value, interrupted_next: bool) -> Vec<Value> {
    let Some(obj) = m.as_object() else {
        return Vec::new();
    };
    let timestamp = js::get(m, "timestamp");
    let user = Some(Value::from("user"));
    match js::str_of(obj.get("role")).unwrap_or_default() {
        "bashExecution" => {
            if js::truthy(obj.get("excludeFromContext")) {
                return Vec::new();
            }
            let mut content = vec![text_block(bash_text(m, Dialect::Omp))];
            if let Some(Value::Array(images)) = obj.get("images") {
                content.extend(images.iter().cloned());
            }
            vec![message("user", Value::Array(content), user, timestamp)]
        }
        "pythonExecution" => {
            if js::truthy(obj.get("excludeFromContext")) {
                return Vec::new();
            }
            vec![message(
                "user",
                Value::Array(vec![text_block(python_text(m))]),
                user,
                timestamp,
            )]
        }
        "fileMention" => file_mention(m),
        role @ ("custom" | "hookMessage") => {
            let content = obj.get("content");
            if !emit::is_custom_content(content) {
                return Vec::new();
            }
            if role == "custom" && js::str_of(obj.get("attribution")) == Some("user") {
                match js::str_of(obj.get("customType")) {
                    Some("collab-prompt") => return vec![steering_user_message(m)],
                    Some("skill-prompt") => {
                        return vec![message("user", custom_content(content), user, timestamp)];
                    }
                    _ => {}
                }
            }
            if let Some(split) = split_image_custom(m) {
                return split;
            }
            vec![message(
                "developer",
                custom_content(content),
                obj.get("attribution").cloned(),
                timestamp,
            )]
        }
        "assistant" => {
            let user_interrupted = js::str_of(obj.get("stopReason")) == Some("aborted")
                && js::str_of(obj.get("errorMessage")) == Some(USER_INTERRUPT_LABEL);
            let stripped = if interrupted_next || user_interrupted {
                strip_interrupted_thinking(obj)
            } else {
                None
            };
            let source = stripped.unwrap_or_else(|| obj.clone());
            let empty = source
                .get("content")
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty);
            if user_interrupted
                && !interrupted_next
                && empty
                && !obj.contains_key("requestControls")
            {
                return Vec::new();
            }
            vec![Value::Object(source)]
        }
        "branchSummary" => {
            let text = template::render(template::BRANCH_SUMMARY, "summary", obj.get("summary"));
            vec![summary_message(text, Vec::new(), None, timestamp)]
        }
        "compactionSummary" => {
            let summary = obj.get("summary");
            let payload = obj.get("providerPayload").cloned();
            if let Some(blocks) = obj.get("blocks") {
                let mut content = vec![text_block(js::to_string(summary))];
                content.extend(blocks.as_array().into_iter().flatten().cloned());
                return vec![summary_message_with(content, payload, timestamp)];
            }
            let tpl = if js::str_of(obj.get("method")) == Some("handoff") {
                template::HANDOFF_SUMMARY
            } else {
                template::COMPACTION_SUMMARY
            };
            let images = obj
                .get("images")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            vec![summary_message(
                template::render(tpl, "summary", summary),
                images,
                payload,
                timestamp,
            )]
        }
        "user" => vec![Value::Object(with_default_attribution(obj, "user"))],
        "developer" => vec![Value::Object(with_default_attribution(obj, "agent"))],
        "toolResult" => {
            let mut out = obj.clone();
            if obj.contains_key("prunedAt") {
                if let Some(Value::Array(blocks)) = obj.get("content") {
                    out =
                        js::with_field(&out, "content", Some(Value::Array(pruned_content(blocks))));
                }
            }
            vec![Value::Object(with_default_attribution(&out, "agent"))]
        }
        _ => Vec::new(),
    }
}

/// Custom content as LLM content: a string becomes one text block.
fn custom_content(content: Option<&Value>) -> Value {
    match content {
        Some(Value::String(s)) => Value::Array(vec![text_block(s.clone())]),
        Some(other) => other.clone(),
        None => Value::Array(Vec::new()),
    }
}

/// A summary as the `user` message omp-core sends (`attribution: "agent"`, `historyRewriteAt`).
fn summary_message(
    text: String,
    images: Vec<Value>,
    payload: Option<Value>,
    timestamp: Option<&Value>,
) -> Value {
    let mut content = vec![text_block(text)];
    content.extend(images);
    summary_message_with(content, payload, timestamp)
}

fn summary_message_with(
    content: Vec<Value>,
    payload: Option<Value>,
    timestamp: Option<&Value>,
) -> Value {
    js::object([
        ("role", Some(Value::from("user"))),
        ("content", Some(Value::Array(content))),
        ("attribution", Some(Value::from("agent"))),
        ("historyRewriteAt", timestamp.cloned()),
        ("providerPayload", payload),
        ("timestamp", timestamp.cloned()),
    ])
}

/// `pythonExecutionToText` without the output notice.
fn python_text(m: &Value) -> String {
    let mut text = format!(
        "Ran Python:\n```python\n{}\n```\n",
        js::to_string(js::get(m, "code"))
    );
    let output = js::get(m, "output");
    if js::truthy(output) {
        text += &format!("Output:\n```\n{}\n```", js::to_string(output));
    } else {
        text += "(no output)";
    }
    let exit_code = js::get(m, "exitCode");
    if js::truthy(js::get(m, "cancelled")) {
        text += "\n\n(execution cancelled)";
    } else if nonzero_exit(exit_code) {
        text += &format!(
            "\n\nExecution failed with code {}",
            js::to_string(exit_code)
        );
    }
    text
}

/// `fileMention`: text files as one `developer` message, image files as one `user` message.
fn file_mention(m: &Value) -> Vec<Value> {
    let files: &[Value] = js::get(m, "files")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    let wrap = |file: &Value| {
        let content = js::get(file, "content");
        let inner = if js::truthy(content) {
            format!("\n{}\n", js::to_string(content))
        } else {
            "\n".to_owned()
        };
        format!(
            "<file path=\"{}\">{inner}</file>",
            js::to_string(js::get(file, "path"))
        )
    };
    let (images, texts): (Vec<&Value>, Vec<&Value>) =
        files.iter().partition(|f| js::truthy(js::get(f, "image")));
    let timestamp = js::get(m, "timestamp");
    let mut out = Vec::new();
    if !texts.is_empty() {
        let text = texts.iter().map(|f| wrap(f)).collect::<Vec<_>>().join("\n");
        out.push(message(
            "developer",
            Value::Array(vec![text_block(text)]),
            Some(Value::from("user")),
            timestamp,
        ));
    }
    if !images.is_empty() {
        let mut content = vec![text_block(
            images
                .iter()
                .map(|f| wrap(f))
                .collect::<Vec<_>>()
                .join("\n"),
        )];
        content.extend(images.iter().filter_map(|f| js::get(f, "image")).cloned());
        out.push(message(
            "user",
            Value::Array(content),
            Some(Value::from("user")),
            timestamp,
        ));
    }
    out
}

/// `wrapSteeringUserMessage` + `convertMessageToLlm` for a user-attributed collab prompt.
fn steering_user_message(m: &Value) -> Value {
    let timestamp = js::get(m, "timestamp");
    let user = Some(Value::from("user"));
    let content = js::get(m, "content");
    let wrapped = match content {
        Some(Value::String(s)) if !s.is_empty() => Some(Value::from(template::render(
            template::USER_INTERJECTION,
            "message",
            content,
        ))),
        Some(Value::Array(blocks)) => {
            let texts: Vec<String> = blocks
                .iter()
                .filter(|b| js::is_type(b, "text"))
                .map(|b| js::to_string(js::get(b, "text")))
                .collect();
            let text = texts.join("\n");
            (!text.is_empty()).then(|| {
                let mut parts = vec![text_block(template::render(
                    template::USER_INTERJECTION,
                    "message",
                    Some(&Value::from(text)),
                ))];
                parts.extend(blocks.iter().filter(|b| js::is_type(b, "image")).cloned());
                Value::Array(parts)
            })
        }
        _ => None,
    };
    js::object([
        ("role", Some(Value::from("user"))),
        ("content", wrapped.or_else(|| content.cloned())),
        ("attribution", user),
        ("timestamp", timestamp.cloned()),
    ])
}

/// `convertImageBearingCustomMessage`: array content with images becomes a `developer` message
/// with the text blocks (if any) and a `user` message carrying the images.
fn split_image_custom(m: &Value) -> Option<Vec<Value>> {
    let blocks = js::get(m, "content")?.as_array()?;
    let images: Vec<Value> = blocks
        .iter()
        .filter(|b| js::is_type(b, "image"))
        .cloned()
        .collect();
    if images.is_empty() {
        return None;
    }
    let texts: Vec<Value> = blocks
        .iter()
        .filter(|b| js::is_type(b, "text"))
        .cloned()
        .collect();
    let attribution = js::get(m, "attribution").cloned();
    let timestamp = js::get(m, "timestamp");
    let mut out = Vec::new();
    if !texts.is_empty() {
        out.push(message(
            "developer",
            Value::Array(texts),
            attribution.clone(),
            timestamp,
        ));
    }
    let label = format!(
        "Images attached to {}.",
        js::to_string(js::get(m, "customType"))
    );
    let mut content = vec![text_block(label)];
    content.extend(images);
    out.push(message(
        "user",
        Value::Array(content),
        attribution,
        timestamp,
    ));
    Some(out)
}

/// `getPrunedToolResultContent` for a pruned tool result: the text blocks merged into the first
/// one (or `"[Output truncated]"` when they are empty), other blocks kept.
fn pruned_content(blocks: &[Value]) -> Vec<Value> {
    let texts: String = blocks
        .iter()
        .filter(|b| js::is_type(b, "text"))
        .map(|b| js::to_string(js::get(b, "text")))
        .collect();
    let text = if texts.is_empty() {
        "[Output truncated]".to_owned()
    } else {
        texts
    };
    let Some(first) = blocks.iter().position(|b| js::is_type(b, "text")) else {
        let mut out = vec![text_block(text)];
        out.extend(blocks.iter().cloned());
        return out;
    };
    blocks
        .iter()
        .enumerate()
        .filter_map(|(i, b)| {
            if !js::is_type(b, "text") {
                Some(b.clone())
            } else if i == first {
                Some(text_block(text.clone()))
            } else {
                None
            }
        })
        .collect()
}

/// `stripDemotedThinkingForLlm`: drops a trailing run of unsigned, non-blank thinking blocks
/// (ignoring trailing blank text blocks after it). `None` when there is nothing to drop.
fn strip_interrupted_thinking(obj: &Map<String, Value>) -> Option<Map<String, Value>> {
    let blocks = obj.get("content")?.as_array()?;
    let mut scan_end = blocks.len();
    while scan_end > 0 {
        let b = &blocks[scan_end - 1];
        let blank_text = js::is_type(b, "text")
            && js::str_of(js::get(b, "text")).is_some_and(|t| js::trim(t).is_empty());
        if !blank_text {
            break;
        }
        scan_end -= 1;
    }
    let mut run_start = scan_end;
    while run_start > 0 {
        let b = &blocks[run_start - 1];
        let unsigned_thinking = js::is_type(b, "thinking")
            && js::str_of(js::get(b, "thinking")).is_some_and(|t| !js::trim(t).is_empty())
            && !js::truthy(js::get(b, "thinkingSignature"));
        if !unsigned_thinking {
            break;
        }
        run_start -= 1;
    }
    if run_start == scan_end {
        return None;
    }
    Some(js::with_field(
        obj,
        "content",
        Some(Value::Array(blocks[..run_start].to_vec())),
    ))
}

#[cfg(test)]
mod tests {
    use super::super::llm::convert;
    use super::*;
    use serde_json::json;

    #[test]
    fn omp_roles_and_attribution() {
        let msgs = [
            json!({"role":"user","content":"u","timestamp":1}),
            json!({"role":"custom","customType":"x","content":"c","display":true,"timestamp":2}),
            json!({"role":"custom","customType":"skill-prompt","content":"s","attribution":"user","timestamp":3}),
            json!({"role":"custom","customType":"collab-prompt","content":"hey","attribution":"user","timestamp":4}),
        ];
        let out = convert(Dialect::Omp, &msgs.map(Into::into));
        assert_eq!(
            out[0],
            json!({"role":"user","content":"u","timestamp":1,"attribution":"user"})
        );
        assert_eq!(
            out[1],
            json!({"role":"developer","content":[{"type":"text","text":"c"}],"timestamp":2})
        );
        assert_eq!(out[2]["role"], json!("user"));
        assert_eq!(
            out[3]["content"],
            json!("<system-notice>\nUser interjection during work: priority; supersedes conflicting prior instructions. Re-read; ensure current work reflects user intent.\n</system-notice>\nhey")
        );
    }

    #[test]
    fn omp_interrupted_thinking_is_dropped_for_the_model() {
        let msgs = [
            json!({"role":"assistant","stopReason":"aborted","errorMessage":"Interrupted by user","content":[
                {"type":"text","text":"a"},{"type":"thinking","thinking":"half"},{"type":"text","text":" "}
            ]}),
        ];
        let out = convert(Dialect::Omp, &msgs.map(Into::into));
        assert_eq!(out[0]["content"], json!([{"type":"text","text":"a"}]));
    }
}
