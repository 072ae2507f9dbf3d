//! Turning entries into words: one-line previews (outline, tree nodes, workspace symbols, session
//! lists) and markdown (hover, `sessionTree/entry`). Reads entry JSON only; knows nothing of LSP.
//! `message_fast` reads a message's preview straight from its JSON text.

mod message_fast;

use crate::entry::Entry;
use serde_json::Value;
use std::fmt::Write as _;

/// The text of a message `content`: a string, or the text of its blocks joined by newlines.
pub fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => {
            let parts: Vec<String> = blocks.iter().filter_map(block_text).collect();
            parts.join("\n")
        }
        _ => String::new(),
    }
}

fn block_text(block: &Value) -> Option<String> {
    match block.get("type").and_then(Value::as_str) {
        Some("text") => block.get("text").and_then(Value::as_str).map(str::to_owned),
        Some("thinking") => block
            .get("thinking")
            .and_then(Value::as_str)
            .map(|t| format!("(thinking) {t}")),
        Some("toolCall") => {
            let name = block.get("name").and_then(Value::as_str).unwrap_or("tool");
            let args = block
                .get("arguments")
                .map(crate::json::to_line)
                .unwrap_or_default();
            Some(format!("{name}({args})"))
        }
        Some("image") => Some("[image]".to_owned()),
        _ => None,
    }
}

/// The first line of a text, cut to `max` characters; white space is JavaScript's (as in the
/// agents' texts: U+0085 is kept, a byte order mark is not).
pub fn one_line(text: &str, max: usize) -> String {
    let line = crate::js::trim(crate::js::trim(text).split('\n').next().unwrap_or(""));
    if line.chars().count() > max {
        let mut cut: String = line.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    } else {
        line.to_owned()
    }
}

/// A one-line description of an entry: `user: Plan a trip`, `[label] start`, …
pub fn preview(entry: &Entry) -> String {
    preview_of(entry, &entry.raw())
}

/// [`preview`] from the entry's JSON text already at hand.
pub fn preview_of(entry: &Entry, raw: &str) -> String {
    if entry.kind() == "message" {
        if let Some(text) = message_fast::message_preview(raw) {
            return text;
        }
    }
    let value = serde_json::from_str(raw).unwrap_or(Value::Null);
    preview_value(&value, entry.kind())
}

/// The preview and, for messages, the role (the preview of a message starts with `role: `).
pub fn preview_and_role(entry: &Entry) -> (String, Option<String>) {
    let text = preview(entry);
    let role = (entry.kind() == "message")
        .then(|| text.split_once(": ").map(|(role, _)| role.to_owned()))
        .flatten()
        .filter(|r| r != "message");
    (text, role)
}

/// [`preview`] from an already parsed entry.
pub fn preview_value(value: &Value, kind: &str) -> String {
    let s = |key: &str| {
        value
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let text = match kind {
        "message" => {
            let message = value.get("message");
            let role = message
                .and_then(|m| m.get("role"))
                .and_then(Value::as_str)
                .unwrap_or("message");
            let body = match role {
                "bashExecution" => {
                    format!(
                        "$ {}",
                        message
                            .and_then(|m| m.get("command"))
                            .and_then(Value::as_str)
                            .unwrap_or("")
                    )
                }
                "toolResult" => {
                    let tool = message
                        .and_then(|m| m.get("toolName"))
                        .and_then(Value::as_str)
                        .unwrap_or("tool");
                    format!(
                        "[{tool}] {}",
                        content_text(message.and_then(|m| m.get("content")))
                    )
                }
                _ => content_text(message.and_then(|m| m.get("content"))),
            };
            format!("{role}: {}", one_line(&body, 200))
        }
        "custom_message" => format!(
            "[{}] {}",
            s("customType"),
            one_line(&content_text(value.get("content")), 200)
        ),
        "branch_summary" => format!("[branch summary] {}", one_line(&s("summary"), 200)),
        "compaction" => format!("[compaction] {}", one_line(&s("summary"), 200)),
        "model_change" => {
            let model = match value.get("model").and_then(Value::as_str) {
                Some(m) => m.to_owned(),
                None => format!("{}/{}", s("provider"), s("modelId")),
            };
            format!("[model] {model}")
        }
        "thinking_level_change" => format!(
            "[thinking] {}",
            value
                .get("thinkingLevel")
                .and_then(Value::as_str)
                .unwrap_or("off")
        ),
        "label" => match value
            .get("label")
            .and_then(Value::as_str)
            .filter(|l| !l.is_empty())
        {
            Some(label) => format!("[label] {} → {label}", s("targetId")),
            None => format!("[label] {} cleared", s("targetId")),
        },
        "session_info" => format!("[name] {}", s("name")),
        "title_change" => format!("[title] {}", s("title")),
        "custom" => format!("[custom] {}", s("customType")),
        "mode_change" => format!("[mode] {}", s("mode")),
        "" => "(entry without a type)".to_owned(),
        other => format!("[{other}]"),
    };
    if crate::js::trim(&text).is_empty() {
        format!("[{kind}]")
    } else {
        text
    }
}

/// The entry as markdown: a heading line (role, id, time, label) and its content.
pub fn markdown(entry: &Entry, label: Option<&str>) -> String {
    let value = entry.json();
    let kind = entry.kind();
    let role = value
        .get("message")
        .and_then(|m| m.get("role"))
        .and_then(Value::as_str);
    let mut out = String::new();
    let title = role.unwrap_or(if kind.is_empty() { "entry" } else { kind });
    let _ = write!(out, "**{title}** · `{}`", entry.id().unwrap_or("(no id)"));
    if let Some(ts) = entry.timestamp.as_deref() {
        let _ = write!(out, " · {ts}");
    }
    if let Some(label) = label {
        let _ = write!(out, " · [{label}]");
    }
    out.push_str("\n\n");
    let body = match kind {
        "message" => {
            let message = value.get("message");
            let mut body = String::new();
            if let Some(Value::Array(blocks)) = message.and_then(|m| m.get("content")) {
                for block in blocks {
                    match block.get("type").and_then(Value::as_str) {
                        Some("toolCall") => {
                            let name = block.get("name").and_then(Value::as_str).unwrap_or("tool");
                            let args = block
                                .get("arguments")
                                .and_then(|a| serde_json::to_string_pretty(a).ok())
                                .unwrap_or_default();
                            let _ = write!(body, "`{name}`\n```json\n{args}\n```\n\n");
                        }
                        Some("thinking") => {
                            let text = block.get("thinking").and_then(Value::as_str).unwrap_or("");
                            let quoted: Vec<String> =
                                text.lines().map(|l| format!("> {l}")).collect();
                            let _ = write!(body, "{}\n\n", quoted.join("\n"));
                        }
                        _ => {
                            if let Some(text) = block_text(block) {
                                let _ = write!(body, "{text}\n\n");
                            }
                        }
                    }
                }
            } else {
                body = content_text(message.and_then(|m| m.get("content")));
                body.push('\n');
            }
            if let Some(cmd) = message
                .and_then(|m| m.get("command"))
                .and_then(Value::as_str)
            {
                let output = message
                    .and_then(|m| m.get("output"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                body = format!("```sh\n$ {cmd}\n{output}\n```\n");
            }
            body
        }
        "custom_message" => format!("{}\n", content_text(value.get("content"))),
        "branch_summary" | "compaction" => {
            format!(
                "{}\n",
                value.get("summary").and_then(Value::as_str).unwrap_or("")
            )
        }
        _ => {
            let pretty = serde_json::to_string_pretty(&value).unwrap_or_default();
            format!("```json\n{pretty}\n```\n")
        }
    };
    out.push_str(&body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn previews_name_the_role() {
        let e = Entry::parse(
            r#"{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"Hi\nthere"}}"#,
            1,
        );
        assert_eq!(e.map(|e| preview(&e)).ok().as_deref(), Some("user: Hi"));
    }

    /// White space is JavaScript's: U+0085 is text, a byte order mark and `\r` are not.
    #[test]
    fn one_line_trims_as_javascript_does() {
        assert_eq!(one_line("\u{85}named\r\nmore", 100), "\u{85}named");
        assert_eq!(
            one_line("\u{feff} \n\tfirst \u{feff}\nsecond", 100),
            "first"
        );
        assert_eq!(one_line("abcdef", 4), "abc…");
    }
}
