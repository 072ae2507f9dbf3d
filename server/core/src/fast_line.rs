//! The common `message` line read straight into its index fields and view facts, without
//! building a JSON value: typed, borrowed fields, everything else skipped (still validated).
//!
//! Only clean, common shapes take this path: `type: "message"`, string fields written without
//! escapes, no repeated keys, a `user` / `assistant` / `toolResult` role, content as a string or
//! an array of blocks, no retry recovery. Anything else (or any doubt: a type error, a repeated
//! key, a malformed line) returns `None`, and the line goes through the projection
//! (`projection.rs`) and [`crate::view::text::entry_facts`], which give the same answer for
//! every line this path takes (the tests check it over generated sessions and the fixtures).

use crate::dialect::Dialect;
use crate::view::text::{PlainBlock, PlainContent, PlainMessage};
use serde::de::{Deserializer, IgnoredAny};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

/// What a line gives the index and the view.
pub(crate) struct FastLine<'a> {
    pub id: Option<&'a str>,
    /// `None`: no `parentId`; `Some(None)`: `null`.
    pub parent: Option<Option<&'a str>>,
    pub timestamp: Option<&'a str>,
    pub role: &'a str,
    pub usage_without_cost: bool,
    pub facts: Option<crate::view::text::EntryFacts>,
}

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
pub(crate) fn scan(text: &str, facts_for: Option<Dialect>) -> Option<FastLine<'_>> {
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
            Some(crate::view::text::plain_message_facts(
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
    Some(FastLine {
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
                    crate::projection::cut_content_text(v).to_owned(),
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
                Some(t) => PlainBlock::Text(crate::projection::cut_raw_string(t.get())?),
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

/// Checks that a line this path reads gives the entry and facts the projection gives (for both
/// dialects' facts); lines it leaves alone pass. For the fuzz targets and the tests.
#[doc(hidden)]
pub fn check_against_projection(line: &str) -> Result<(), String> {
    use crate::entry::Entry;
    let describe = |entry: &Entry, facts: &crate::view::text::EntryFacts| {
        format!(
            "{:?} {:?} {:?} {:?} {:?} {} {} {:?} | {facts:?}",
            entry.kind,
            entry.id,
            entry.parent,
            entry.timestamp,
            entry.role(),
            entry.is_object,
            entry.usage_without_cost,
            entry.time_ms.to_bits(),
        )
    };
    let line = line.trim_end_matches('\r');
    if !line.starts_with(r#"{"type":"message","#) {
        return Ok(());
    }
    for dialect in [Dialect::Pi, Dialect::Omp] {
        if scan(line, Some(dialect)).is_none() {
            continue;
        }
        let fast = Entry::scan(line, 0, None, Some(dialect)).map_err(|e| format!("{e:?}"))?;
        let fast_facts = fast
            .facts
            .get()
            .map(|s| s.facts.clone())
            .ok_or("no facts")?;
        let value = crate::projection::parse_projected(line).map_err(|e| e.to_string())?;
        let slow = Entry::from_value(&value);
        let slow_facts = crate::view::text::entry_facts(&value, dialect);
        let (fast, slow) = (describe(&fast, &fast_facts), describe(&slow, &slow_facts));
        if fast != slow {
            return Err(format!("{dialect:?}: typed read {fast}\nprojection {slow}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::Entry;

    /// Every line the fast path takes gives what the projection and `entry_facts` give.
    fn check_lines(text: &str, taken: &mut usize, seen: &mut usize) {
        for line in text.lines() {
            let line = line.trim_end_matches('\r');
            if line.trim().is_empty() {
                continue;
            }
            *seen += 1;
            if line.starts_with(r#"{"type":"message","#) && scan(line, Some(Dialect::Pi)).is_some()
            {
                *taken += 1;
            }
            if let Err(diff) = check_against_projection(line) {
                panic!("{line}\n{diff}");
            }
        }
    }

    #[test]
    fn the_fast_path_answers_as_the_projection_on_generated_sessions() {
        let (mut taken, mut seen) = (0, 0);
        for dialect in [Dialect::Pi, Dialect::Omp] {
            for seed in 1..=3 {
                let mut out = Vec::new();
                crate::synth::generate(
                    crate::synth::SynthOptions {
                        dialect,
                        entries: 3000,
                        seed,
                    },
                    &mut out,
                )
                .unwrap();
                check_lines(&String::from_utf8(out).unwrap(), &mut taken, &mut seen);
            }
        }
        // Nearly every line of an agent's file takes it.
        assert!(taken * 10 > seen * 8, "{taken} of {seen}");
    }

    #[test]
    fn the_fast_path_answers_as_the_projection_on_the_fixtures_and_fuzz_seeds() {
        let (mut taken, mut seen) = (0, 0);
        let mut files = 0;
        for path in crate::test_sessions::fixture_files() {
            if let Ok(bytes) = std::fs::read(&path) {
                files += 1;
                check_lines(&String::from_utf8_lossy(&bytes), &mut taken, &mut seen);
            }
        }
        assert!(
            files > 50 && taken > 100,
            "{files} files, {taken} lines taken"
        );
    }

    #[test]
    fn odd_shapes_are_left_to_the_projection() {
        for line in [
            r#"{"type":"message","id":"a","id":"b","message":{"role":"user","content":"x"}}"#,
            r#"{"type":"message","id":5,"message":{"role":"user","content":"x"}}"#,
            r#"{"type":"message","id":"a\u0062","message":{"role":"user","content":"x"}}"#,
            r#"{"type":"message","id":"a","message":{"role":"custom","content":"x"}}"#,
            r#"{"type":"message","id":"a","message":{"role":"assistant","retryRecovery":null}}"#,
            r#"{"type":"message","id":"a","message":{"role":"user","content":5}}"#,
            r#"{"type":"message","id":"a","message":{"role":"user","content":[{"type":"text","text":null}]}}"#,
            r#"{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"toolCall","name":"x"}]}}"#,
            r#"{"type":"message","id":"a","message":{"role":"user","content":"x"}} x"#,
            r#"{"type":"message","id":"a","message":{"role":"user","content":"x","content":"y"}}"#,
            r#"{"type":"message","id":"a","parentId":7,"message":{"role":"user"}}"#,
            r#"{"type":"message","id":"a","message":["user","x"]}"#,
            r#"{"type":"message","id":"a","message":{"role":"assistant","usage":[]}}"#,
            r#"{"type":"message","id":"a","message":{"role":"user","content":[["text","x"]]}}"#,
        ] {
            assert!(scan(line, Some(Dialect::Omp)).is_none(), "{line}");
        }
        let line = r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"hi"},{"type":"toolCall","id":"c","name":"read","arguments":null}],"usage":{"input":1,"cost":null},"stopReason":"toolUse"}}"#;
        let fast = scan(line, Some(Dialect::Pi)).unwrap();
        assert_eq!(fast.parent, Some(None));
        assert!(!fast.usage_without_cost, "a null cost is a cost key");
        let entry = Entry::scan(line, 1, None, Some(Dialect::Pi)).unwrap();
        assert_eq!(entry.facts.get().unwrap().facts.tool_calls.len(), 1);
        check_against_projection(line).unwrap();
    }
}
