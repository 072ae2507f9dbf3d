//! Turning entries and sessions into words for a reader: an entry as markdown (hover,
//! `sessionTree/entry`) under the one line that names it everywhere (its `/tree` row text, from
//! `view::TreeModel::entry_text`), a session as markdown, and the first line of a message's text
//! (session lists). Reads entry JSON only; knows nothing of LSP.

use crate::entry::Entry;
use crate::session::Session;
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

/// Markdown showing `text` (one line, inside a paragraph) as it is: every character a markdown
/// reader could take for syntax there is escaped with a backslash, and line breaks become spaces.
pub fn markdown_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' | '\r' => out.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '!' | '|' | '~' | '&' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// The entry as markdown: the line that names it (`name`: its `/tree` row text, as every surface
/// names it) in bold, a line with its type or role, id, time and label, then its content.
pub fn markdown(entry: &Entry, name: &str, label: Option<&str>) -> String {
    let value = entry.json();
    let kind = entry.kind();
    let role = value
        .get("message")
        .and_then(|m| m.get("role"))
        .and_then(Value::as_str);
    let mut out = String::new();
    if !name.is_empty() {
        let _ = write!(out, "**{}**\n\n", markdown_literal(name));
    }
    let title = role.unwrap_or(if kind.is_empty() { "entry" } else { kind });
    let _ = write!(out, "*{title}* · `{}`", entry.id().unwrap_or("(no id)"));
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

/// The session as markdown: name, id, dialect, cwd, size, leaf, problems.
pub fn session_markdown(session: &Session) -> String {
    let dialect = match session.dialect() {
        crate::Dialect::Omp => "omp",
        crate::Dialect::Pi => "pi",
    };
    format!(
        "**{}** · `{}` · {dialect}\n\n- cwd: `{}`\n- entries: {}\n- leaf: `{}`\n- problems: {}\n",
        session.session_name().unwrap_or("(unnamed session)"),
        session.session_id(),
        session.cwd(),
        session.entries().len(),
        session.leaf_id().unwrap_or("(none)"),
        session.diagnostics().len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The name heads the markdown as literal text: markdown syntax in it is escaped.
    #[test]
    fn the_name_heads_the_markdown_as_literal_text() {
        let e = Entry::parse(
            r#"{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"Hi *there*"}}"#,
            1,
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
        let md = markdown(&e, "user: Hi *there* `x`", Some("dest"));
        assert!(
            md.starts_with(
                "**user: Hi \\*there\\* \\`x\\`**\n\n*user* · `a` · [dest]\n\nHi *there*"
            ),
            "{md}"
        );
        assert_eq!(markdown_literal("a\nb_[c]"), "a b\\_\\[c\\]");
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
