//! The one-line preview of a `message` entry read straight from its JSON text: only `role`,
//! `toolName`, `command` and the content's text blocks are decoded (borrowed where possible), so
//! outlines and symbol searches over 100 MB sessions do not build a JSON tree per entry. Gives
//! exactly what `describe::preview_value` gives, or `None` (odd shapes) so the caller falls back.

use serde::de::{self, Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow, default)]
    message: Option<Message<'a>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    role: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<Content<'a>>,
    #[serde(borrow, default, rename = "toolName")]
    tool_name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    command: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(borrow, default, rename = "type")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    thinking: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(default)]
    arguments: Option<Value>,
}

/// A message `content`: a string, blocks, or anything else (no text).
enum Content<'a> {
    Text(Cow<'a, str>),
    Blocks(Vec<Block<'a>>),
    Other,
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Content<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("message content")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Owned(v)))
            }
            fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
                let mut blocks = Vec::new();
                while let Some(block) = seq.next_element::<Block<'a>>()? {
                    blocks.push(block);
                }
                Ok(Content::Blocks(blocks))
            }
            fn visit_map<M: de::MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Content::Other)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Content::Other)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Content::Other)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Content::Other)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Content::Other)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Content::Other)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// Whether `text`, trimmed at the start, already holds a complete first line.
fn first_line_complete(text: &str) -> bool {
    crate::js::trim_start(text).contains('\n')
}

/// The text `describe::content_text` would give, cut once its first line is complete.
fn content_head(content: Option<&Content<'_>>) -> String {
    match content {
        Some(Content::Text(t)) => t.to_string(),
        Some(Content::Blocks(blocks)) => {
            let mut out = String::new();
            let mut first = true;
            for block in blocks {
                let part = match block.kind.as_deref() {
                    Some("text") => block.text.as_deref().map(str::to_owned),
                    Some("thinking") => {
                        block.thinking.as_deref().map(|t| format!("(thinking) {t}"))
                    }
                    Some("toolCall") => {
                        let args = block
                            .arguments
                            .as_ref()
                            .map(crate::json::to_line)
                            .unwrap_or_default();
                        Some(format!(
                            "{}({args})",
                            block.name.as_deref().unwrap_or("tool")
                        ))
                    }
                    Some("image") => Some("[image]".to_owned()),
                    _ => None,
                };
                let Some(part) = part else { continue };
                if !first {
                    out.push('\n');
                }
                first = false;
                out.push_str(&part);
                if first_line_complete(&out) {
                    break;
                }
            }
            out
        }
        Some(Content::Other) | None => String::new(),
    }
}

/// The preview of a `message` entry from its JSON text; `None` when the shape is unusual.
pub fn message_preview(raw: &str) -> Option<String> {
    let line: Line<'_> = serde_json::from_str(raw).ok()?;
    let message = line.message;
    let role = message
        .as_ref()
        .and_then(|m| m.role.as_deref())
        .unwrap_or("message");
    let content = message.as_ref().and_then(|m| m.content.as_ref());
    let body = match role {
        "bashExecution" => format!(
            "$ {}",
            message
                .as_ref()
                .and_then(|m| m.command.as_deref())
                .unwrap_or("")
        ),
        "toolResult" => {
            let tool = message
                .as_ref()
                .and_then(|m| m.tool_name.as_deref())
                .unwrap_or("tool");
            format!("[{tool}] {}", content_head(content))
        }
        _ => content_head(content),
    };
    Some(format!("{role}: {}", super::one_line(&body, 200)))
}

#[cfg(test)]
mod tests {
    use crate::entry::Entry;

    fn slow(raw: &str) -> String {
        let entry = Entry::parse(raw, 1).expect("entry");
        crate::describe::preview_value(&entry.json(), entry.kind())
    }

    /// Checks the fast preview against the full parse; returns whether the fast path answered.
    fn check(raw: &str) -> bool {
        match super::message_preview(raw) {
            Some(fast) => {
                assert_eq!(fast, slow(raw), "{raw}");
                true
            }
            None => false,
        }
    }

    #[test]
    fn matches_the_full_parse_on_odd_shapes() {
        let lines = [
            r#"{"type":"message","id":"a","message":{"role":"user","content":"Hi\nthere"}}"#,
            r#"{"type":"message","id":"a","message":{"role":"user","content":[{"type":"text","text":"\ufeff \n"},{"type":"text","text":"\u0085x\ny"}]}}"#,
            r#"{"type":"message","id":"a","message":{"role":"user","content":"\n\n  spaced \u00e9 \"q\"\nmore"}}"#,
            r#"{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hmm\nx"},{"type":"text","text":"ok"}]}}"#,
            r#"{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"text","text":""},{"type":"text","text":"  "},{"type":"toolCall","name":"bash","arguments":{"cmd":"ls -l","n":1.5e3,"u":"\u00e9"}}]}}"#,
            r#"{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"image","data":"xx"},{"type":"weird"},{"type":"text","text":"after"}]}}"#,
            r#"{"type":"message","id":"a","message":{"role":"toolResult","toolName":"read","content":[{"type":"text","text":"file\ncontents"}]}}"#,
            r#"{"type":"message","id":"a","message":{"role":"toolResult","content":"x"}}"#,
            r#"{"type":"message","id":"a","message":{"role":"bashExecution","command":"make test","output":"ok"}}"#,
            r#"{"type":"message","id":"a","message":{"role":"bashExecution"}}"#,
            r#"{"type":"message","id":"a","message":{"content":"no role"}}"#,
            r#"{"type":"message","id":"a","message":{"role":null,"content":null}}"#,
            r#"{"type":"message","id":"a","message":{"role":"user","content":{"odd":true}}}"#,
            r#"{"type":"message","id":"a","message":{"role":"user","content":42}}"#,
            r#"{"type":"message","id":"a","message":{"role":7,"content":"x"}}"#,
            r#"{"type":"message","id":"a","message":"not an object"}"#,
            r#"{"type":"message","id":"a"}"#,
            r#"{"type":"message","id":"a","message":{"role":"user","content":["plain string block"]}}"#,
            r#"{"type":"message","id":"a","message":{"role":"user","content":"x","role":"assistant"}}"#,
        ];
        for line in lines {
            let _ = check(line);
        }
        let long = format!(
            r#"{{"type":"message","message":{{"role":"user","content":"{}"}}}}"#,
            "é".repeat(500)
        );
        assert!(check(&long));
    }

    #[test]
    fn matches_the_full_parse_on_every_fixture() {
        let (mut checked, mut fast) = (0, 0);
        for dir in sessiontree_testkit::fixtures::all_scenarios() {
            for rel in ["omp/session.jsonl", "pi/session.jsonl", "input.jsonl"] {
                let Ok(text) = std::fs::read_to_string(dir.join(rel)) else {
                    continue;
                };
                for line in text.lines().filter(|l| l.contains(r#""type":"message""#)) {
                    if Entry::parse(line, 1).is_ok_and(|e| e.kind() == "message") {
                        fast += usize::from(check(line));
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 100, "only {checked} messages checked");
        assert!(
            fast * 10 >= checked * 9,
            "the fast path answered only {fast} of {checked}"
        );
    }
}
