//! The conversation as the editors' chat views draw it: every message entry on a path, rendered
//! once into display blocks (plain text, markdown, thinking, tool calls and results, commands,
//! summaries, notices), so VS Code and Neovim show the same thing by the same rules. A message
//! the live agent streams is rendered by the same function when it ends.
//!
//! What a block says of a tool call is the agents' own row text for it (`view::text`); long
//! tool output is kept whole up to [`TEXT_CAP`] and cut with a note beyond. Bookkeeping entries
//! (model and thinking changes, labels, names, custom data) are not part of the conversation.

use crate::js;
use crate::{Dialect, Session};
use serde_json::Value;

/// Longest text a block carries; the rest is cut and the cut is said.
pub const TEXT_CAP: usize = 64 * 1024;

/// Who speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The user's message.
    User,
    /// The model's answer.
    Assistant,
    /// A tool's result, as the model received it.
    ToolResult,
    /// A `!command` the user ran.
    BashExecution,
    /// A message an extension or hook added.
    Custom,
    /// The summary of a branch left behind.
    BranchSummary,
    /// The summary of compacted history.
    CompactionSummary,
}

impl Role {
    /// The wire string.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::ToolResult => "toolResult",
            Role::BashExecution => "bashExecution",
            Role::Custom => "custom",
            Role::BranchSummary => "branchSummary",
            Role::CompactionSummary => "compactionSummary",
        }
    }
}

/// One piece of a message as the editors draw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    /// Text shown as written (the user's words, tool output).
    Text { text: String },
    /// Markdown (the model's answers, summaries).
    Markdown { text: String },
    /// The model's thinking (folded by default).
    Thinking { text: String },
    /// A tool call: its one-line summary, the agents' own row text, and its arguments.
    ToolCall {
        id: String,
        name: String,
        summary: String,
        arguments: String,
    },
    /// A tool's result: a one-line summary and the whole text (expandable).
    ToolResult {
        id: String,
        name: String,
        summary: String,
        text: String,
        is_error: bool,
    },
    /// An image (its data stays in the session).
    Image { mime_type: String },
    /// A command the user ran and what it printed.
    Command {
        command: String,
        output: String,
        exit_code: Option<i64>,
    },
    /// Something about the message rather than in it (an error, an abort).
    Notice { text: String, is_error: bool },
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// The entry it comes from (`None` for a message not yet in the file).
    pub entry_id: Option<String>,
    /// Who speaks.
    pub role: Role,
    /// An extension's custom type, a tool's name: what a role alone does not say.
    pub detail: Option<String>,
    /// What it says.
    pub blocks: Vec<Block>,
}

/// The conversation along a path.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Transcript {
    /// The messages, oldest first.
    pub items: Vec<Item>,
    /// Messages before the first one given (when a limit cut them).
    pub omitted: usize,
}

/// The messages on the path from the root to `leaf` (default: the session's leaf), the last
/// `limit` of them.
pub fn along_path(
    session: &Session,
    leaf: Option<&str>,
    limit: usize,
    home: Option<&str>,
) -> crate::Result<Transcript> {
    let path = session.branch_path(leaf);
    let dialect = session.dialect();
    // Walk back from the leaf so only the messages shown are parsed.
    let mut items = Vec::new();
    let mut omitted = 0;
    for &index in path.iter().rev() {
        let entry = &session.entries()[index];
        if !is_conversation(entry.kind()) {
            continue;
        }
        if items.len() == limit {
            omitted += 1;
            continue;
        }
        let raw = entry.try_raw().map_err(|e| {
            crate::Error::io(
                "cannot read",
                session.path().unwrap_or(std::path::Path::new("")),
                e,
            )
        })?;
        let value: Value = serde_json::from_str(&raw).unwrap_or(Value::Null);
        if let Some(item) = entry_item(&value, dialect, home) {
            items.push(item);
        }
    }
    items.reverse();
    Ok(Transcript { items, omitted })
}

/// Whether an entry type can hold a message of the conversation.
fn is_conversation(kind: &str) -> bool {
    matches!(
        kind,
        "message" | "custom_message" | "branch_summary" | "compaction"
    )
}

/// An entry as a message of the conversation; `None` for bookkeeping and hidden custom messages.
pub fn entry_item(entry: &Value, dialect: Dialect, home: Option<&str>) -> Option<Item> {
    let entry_id = entry.get("id").and_then(Value::as_str).map(str::to_owned);
    let item = match entry.get("type").and_then(Value::as_str)? {
        "message" => message_item(entry.get("message")?, dialect, home),
        "custom_message" => {
            if entry.get("display") == Some(&Value::Bool(false)) {
                return None;
            }
            Item {
                entry_id: None,
                role: Role::Custom,
                detail: entry
                    .get("customType")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                blocks: content_blocks(entry.get("content"), false),
            }
        }
        "branch_summary" => summary_item(Role::BranchSummary, entry),
        "compaction" => summary_item(Role::CompactionSummary, entry),
        _ => return None,
    };
    Some(Item { entry_id, ..item })
}

fn summary_item(role: Role, entry: &Value) -> Item {
    Item {
        entry_id: None,
        role,
        detail: None,
        blocks: vec![Block::Markdown {
            text: capped(&js::to_string(entry.get("summary"))),
        }],
    }
}

/// A message (`entry.message`, or one the agent streams) as a conversation item.
pub fn message_item(message: &Value, dialect: Dialect, home: Option<&str>) -> Item {
    let role = message.get("role").and_then(Value::as_str).unwrap_or("");
    let text_of = |key: &str| js::to_string(message.get(key));
    match role {
        "assistant" => Item {
            entry_id: None,
            role: Role::Assistant,
            detail: None,
            blocks: assistant_blocks(message, dialect, home),
        },
        "toolResult" => {
            let name = text_of("toolName");
            let text = plain_text(message.get("content"));
            let is_error = message.get("isError") == Some(&Value::Bool(true));
            Item {
                entry_id: None,
                role: Role::ToolResult,
                detail: Some(name.clone()),
                blocks: vec![Block::ToolResult {
                    id: text_of("toolCallId"),
                    summary: first_line_summary(&text),
                    name,
                    text: capped(&text),
                    is_error,
                }],
            }
        }
        "bashExecution" => Item {
            entry_id: None,
            role: Role::BashExecution,
            detail: None,
            blocks: vec![Block::Command {
                command: text_of("command"),
                output: capped(&text_of("output")),
                exit_code: message.get("exitCode").and_then(Value::as_i64),
            }],
        },
        "branchSummary" => Item {
            entry_id: None,
            role: Role::BranchSummary,
            detail: None,
            blocks: vec![Block::Markdown {
                text: capped(&text_of("summary")),
            }],
        },
        "compactionSummary" => Item {
            entry_id: None,
            role: Role::CompactionSummary,
            detail: None,
            blocks: vec![Block::Markdown {
                text: capped(&text_of("summary")),
            }],
        },
        "custom" | "hookMessage" => Item {
            entry_id: None,
            role: Role::Custom,
            detail: message
                .get("customType")
                .and_then(Value::as_str)
                .map(str::to_owned),
            blocks: content_blocks(message.get("content"), false),
        },
        // The user, and any role the agents may add later, speak in content blocks.
        _ => Item {
            entry_id: None,
            role: Role::User,
            detail: (role != "user" && !role.is_empty()).then(|| role.to_owned()),
            blocks: content_blocks(message.get("content"), false),
        },
    }
}

fn assistant_blocks(message: &Value, dialect: Dialect, home: Option<&str>) -> Vec<Block> {
    let mut blocks = Vec::new();
    if let Some(Value::Array(content)) = message.get("content") {
        for block in content {
            match block.get("type").and_then(Value::as_str) {
                Some("text") => {
                    let text = js::to_string(block.get("text"));
                    if !text.is_empty() {
                        blocks.push(Block::Markdown {
                            text: capped(&text),
                        });
                    }
                }
                Some("thinking") => {
                    let text = js::to_string(block.get("thinking"));
                    if !crate::js::trim(&text).is_empty() {
                        blocks.push(Block::Thinking {
                            text: capped(&text),
                        });
                    }
                }
                Some("toolCall") => blocks.push(tool_call_block(block, dialect, home)),
                Some("image") => blocks.push(image_block(block)),
                _ => {}
            }
        }
    } else if let Some(Value::String(text)) = message.get("content") {
        blocks.push(Block::Markdown { text: capped(text) });
    }
    let stop = message.get("stopReason").and_then(Value::as_str);
    let error = message.get("errorMessage").and_then(Value::as_str);
    match (stop, error) {
        (Some("aborted"), _) => blocks.push(Block::Notice {
            text: error.unwrap_or("Aborted").to_owned(),
            is_error: false,
        }),
        (Some("error"), _) | (_, Some(_)) => blocks.push(Block::Notice {
            text: error.unwrap_or("Error").to_owned(),
            is_error: true,
        }),
        _ => {}
    }
    blocks
}

/// A tool call as the agents' rows name it (`[write: hello.txt]` → `write: hello.txt`).
fn tool_call_block(block: &Value, dialect: Dialect, home: Option<&str>) -> Block {
    let name = js::to_string(block.get("name"));
    let args = block.get("arguments").cloned().unwrap_or(Value::Null);
    let row = crate::facts::format_tool_call(&name, &args, home, dialect);
    let summary = row
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .unwrap_or(&row)
        .to_owned();
    let arguments = serde_json::to_string_pretty(&args).unwrap_or_default();
    Block::ToolCall {
        id: js::to_string(block.get("id")),
        name,
        summary,
        arguments: capped(&arguments),
    }
}

fn image_block(block: &Value) -> Block {
    Block::Image {
        mime_type: block
            .get("mimeType")
            .and_then(Value::as_str)
            .unwrap_or("image")
            .to_owned(),
    }
}

/// Content (a string, or text and image blocks) as blocks; `markdown` for text meant as markdown.
fn content_blocks(content: Option<&Value>, markdown: bool) -> Vec<Block> {
    let text_block = |text: &str| {
        let text = capped(text);
        if markdown {
            Block::Markdown { text }
        } else {
            Block::Text { text }
        }
    };
    match content {
        Some(Value::String(s)) => vec![text_block(s)],
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| match part.get("type").and_then(Value::as_str) {
                Some("text") => Some(text_block(&js::to_string(part.get("text")))),
                Some("image") => Some(image_block(part)),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The text parts of content, joined by newlines.
fn plain_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
            .map(|p| js::to_string(p.get("text")))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The first non-empty line (at most 120 characters), and how many lines there are in all.
fn first_line_summary(text: &str) -> String {
    let lines = text.lines().count();
    let first = text
        .lines()
        .find(|l| !crate::js::trim(l).is_empty())
        .unwrap_or("");
    let mut line: String = first.chars().take(120).collect();
    if first.chars().count() > 120 {
        line.push('…');
    }
    match lines {
        0 => "(no output)".to_owned(),
        1 => line,
        n => format!("{line} (+{} lines)", n - 1),
    }
}

/// `text`, cut at [`TEXT_CAP`] bytes (on a character boundary) with a note of what was left out.
fn capped(text: &str) -> String {
    if text.len() <= TEXT_CAP {
        return text.to_owned();
    }
    let mut end = TEXT_CAP;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n… ({} more bytes not shown)",
        &text[..end],
        text.len() - end
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_assistant_answer_with_thinking_a_tool_call_and_an_error() {
        let message = json!({
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Let me write it."},
                {"type": "text", "text": "Writing **now**."},
                {"type": "toolCall", "id": "call_1", "name": "write", "arguments": {"path": "hello.txt", "content": "hi\n"}}
            ],
            "stopReason": "error",
            "errorMessage": "rate limited"
        });
        let item = message_item(&message, Dialect::Pi, None);
        assert_eq!(item.role, Role::Assistant);
        assert_eq!(
            item.blocks,
            vec![
                Block::Thinking {
                    text: "Let me write it.".into()
                },
                Block::Markdown {
                    text: "Writing **now**.".into()
                },
                Block::ToolCall {
                    id: "call_1".into(),
                    name: "write".into(),
                    summary: "write: hello.txt".into(),
                    arguments: "{\n  \"path\": \"hello.txt\",\n  \"content\": \"hi\\n\"\n}".into(),
                },
                Block::Notice {
                    text: "rate limited".into(),
                    is_error: true
                },
            ]
        );
    }

    #[test]
    fn a_tool_result_keeps_its_whole_text_and_says_how_long_it_is() {
        let message = json!({
            "role": "toolResult", "toolCallId": "call_1", "toolName": "bash",
            "content": [{"type": "text", "text": "\nline one\nline two\nline three"}], "isError": false
        });
        let item = message_item(&message, Dialect::Omp, None);
        assert_eq!(item.detail.as_deref(), Some("bash"));
        assert_eq!(
            item.blocks,
            vec![Block::ToolResult {
                id: "call_1".into(),
                name: "bash".into(),
                summary: "line one (+3 lines)".into(),
                text: "\nline one\nline two\nline three".into(),
                is_error: false,
            }]
        );
    }

    #[test]
    fn long_text_is_cut_with_a_note() {
        let text = "é".repeat(TEXT_CAP);
        let cut = capped(&text);
        assert!(cut.starts_with(&"é".repeat(TEXT_CAP / 2)));
        assert!(cut.ends_with(&format!("… ({} more bytes not shown)", TEXT_CAP)));
    }

    #[test]
    fn bookkeeping_and_hidden_custom_messages_are_not_conversation() {
        let model = json!({"type": "model_change", "id": "a", "parentId": null, "provider": "p", "modelId": "m"});
        assert_eq!(entry_item(&model, Dialect::Pi, None), None);
        let hidden = json!({"type": "custom_message", "id": "b", "customType": "x", "content": "secret", "display": false});
        assert_eq!(entry_item(&hidden, Dialect::Pi, None), None);
        let shown = json!({"type": "custom_message", "id": "c", "customType": "note", "content": "hello", "display": true});
        let item = entry_item(&shown, Dialect::Pi, None).expect("shown");
        assert_eq!(item.entry_id.as_deref(), Some("c"));
        assert_eq!(item.detail.as_deref(), Some("note"));
        assert_eq!(
            item.blocks,
            vec![Block::Text {
                text: "hello".into()
            }]
        );
    }
}
