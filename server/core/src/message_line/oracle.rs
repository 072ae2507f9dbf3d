//! The typed serde read the scanner in `message_line.rs` replaced, kept as the tests' oracle: for
//! every line, the scanner answers as this read does, or leaves the line to the projection.

use super::MessageLine;
use crate::dialect::Dialect;
use crate::facts::{PlainBlock, PlainContent, PlainMessage};
use serde::de::{Deserializer, IgnoredAny};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

/// A present field, `null` included (`Option<T>` alone reads `null` as absent).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// A struct read only from a JSON object: serde's derived structs also accept an array (fields
/// by position), which the projection reads as no fields at all.
struct Object<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ObjectVisitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for ObjectVisitor<T> {
            type Value = T;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_map(ObjectVisitor(std::marker::PhantomData))
            .map(Object)
    }
}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    #[serde(default)]
    id: Option<&'a str>,
    #[serde(rename = "parentId", default, deserialize_with = "present")]
    parent: Option<Option<&'a str>>,
    #[serde(default)]
    timestamp: Option<&'a str>,
    #[serde(borrow)]
    message: Object<Message<'a>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    role: &'a str,
    #[serde(default, borrow)]
    content: Option<Content<'a>>,
    #[serde(rename = "toolCallId", default)]
    tool_call_id: Option<&'a str>,
    #[serde(rename = "toolName", default)]
    tool_name: Option<&'a str>,
    #[serde(rename = "stopReason", default)]
    stop_reason: Option<&'a str>,
    #[serde(rename = "errorMessage", default)]
    error_message: Option<&'a str>,
    #[serde(default)]
    usage: Option<Object<Usage>>,
    #[serde(rename = "retryRecovery", default, deserialize_with = "present")]
    retry_recovery: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default, deserialize_with = "present")]
    cost: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", default)]
    kind: Option<&'a str>,
    #[serde(default, borrow)]
    text: Option<&'a RawValue>,
    #[serde(default)]
    id: Option<&'a str>,
    #[serde(default)]
    name: Option<&'a str>,
    #[serde(default, deserialize_with = "present")]
    arguments: Option<Value>,
}

/// Reads `text` (one line, no newline) when it is a common message line; the facts are made
/// for `facts_for`.
pub(super) fn scan(text: &str, facts_for: Option<Dialect>) -> Option<MessageLine<'_>> {
    let mut de = serde_json::Deserializer::from_str(text);
    let line = Line::deserialize(&mut de).ok()?;
    de.end().ok()?;
    let Object(message) = line.message;
    if line.kind != "message"
        || !matches!(message.role, "user" | "assistant" | "toolResult")
        || message.retry_recovery.is_some()
    {
        return None;
    }
    let usage_without_cost = message.role == "assistant"
        && message
            .usage
            .as_ref()
            .is_some_and(|Object(u)| u.cost.is_none());
    let facts = match facts_for {
        Some(dialect) => {
            let content = match message.content {
                None => PlainContent::Absent,
                Some(Content(content)) => content_of(content)?,
            };
            Some(crate::facts::plain_message_facts(
                PlainMessage {
                    role: message.role,
                    content,
                    tool_call_id: message.tool_call_id,
                    tool_name: message.tool_name,
                    stop_reason: message.stop_reason,
                    error_message: message.error_message,
                },
                dialect,
            ))
        }
        None => None,
    };
    Some(MessageLine {
        id: line.id,
        parent: line.parent,
        timestamp: line.timestamp,
        role: message.role,
        usage_without_cost,
        facts,
    })
}

/// `message.content` as read in the one pass over the line: a string (cut as the projection
/// cuts content text), an array of blocks, or something this path leaves to the projection.
struct Content<'a>(RawContent<'a>);

enum RawContent<'a> {
    Text(String),
    Blocks(Vec<Object<Block<'a>>>),
    Other,
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ContentVisitor;
        impl<'de> serde::de::Visitor<'de> for ContentVisitor {
            type Value = RawContent<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("message content")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(RawContent::Text(
                    crate::entry_value::cut_content_text(v).to_owned(),
                ))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Self::Value, A::Error> {
                let mut blocks = Vec::new();
                while let Some(block) = seq.next_element()? {
                    blocks.push(block);
                }
                Ok(RawContent::Blocks(blocks))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(RawContent::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(RawContent::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(RawContent::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(RawContent::Other)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(RawContent::Other)
            }
        }
        d.deserialize_any(ContentVisitor).map(Content)
    }
}

/// The facts' view of `message.content` (`None`: leave the line to the projection).
fn content_of(content: RawContent<'_>) -> Option<PlainContent<'_>> {
    let blocks = match content {
        RawContent::Text(text) => return Some(PlainContent::Text(text)),
        RawContent::Blocks(blocks) => blocks,
        RawContent::Other => return None,
    };
    let mut out = Vec::with_capacity(blocks.len());
    for Object(b) in blocks {
        out.push(match b.kind {
            Some("text") => match b.text {
                Some(t) => PlainBlock::Text(crate::entry_value::cut_raw_string(t.get())?),
                None => return None,
            },
            Some("toolCall") => PlainBlock::ToolCall {
                id: b.id?,
                name: b.name?,
                arguments: b.arguments,
            },
            _ => PlainBlock::Other,
        });
    }
    Some(PlainContent::Blocks(out))
}
