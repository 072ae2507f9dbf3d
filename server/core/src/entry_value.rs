//! An entry line's value as far as its readers read it (the projection): the line parsed into the
//! part of its JSON that the index, the view's facts and the open checks read, in one pass that
//! still validates every byte (so a malformed line is found exactly as `JSON.parse` would find
//! it). Every line the message-line read ([`crate::message_line`]) leaves comes here.
//!
//! Everything is kept except inside `message`: there only the keys the readers look at are kept
//! (`role`, `content`, `command`, `stopReason`, `errorMessage`, `retryRecovery`, `toolCallId`,
//! `toolName`, `customType`, `attribution`, `usage`: only its `cost` key), and of the content blocks only `type`, `text`,
//! `id`, `name` and `arguments`. Thinking text, signatures, image data and tool-result details are
//! skipped without building values, which is most of a message's bytes. Content text is cut a few
//! units past what the view reads of it (the first 200 UTF-16 units of the joined text blocks, and
//! whether a block has anything but blanks). Duplicate keys keep the last value at the first
//! position, as a full parse does.

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::fmt;

const MESSAGE_KEYS: &[&str] = &[
    "role",
    "content",
    "command",
    "stopReason",
    "errorMessage",
    "retryRecovery",
    "toolCallId",
    "toolName",
    "customType",
    "attribution",
    "usage",
];
const BLOCK_KEYS: &[&str] = &["type", "text", "id", "name", "arguments"];

/// Parses one line (without its newline) into its projected value.
pub(crate) fn parse_projected(text: &str) -> serde_json::Result<Value> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Shape::Line.deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// Which part of an entry a value is.
#[derive(Clone, Copy)]
enum Shape {
    /// The whole line.
    Line,
    /// `message`.
    Message,
    /// `message.content`.
    Content,
    /// One element of `message.content`.
    Block,
    /// Text the view reads only the start of.
    Text,
    /// `message.usage`: only whether it is an object with a `cost` is read, so only a `cost`
    /// key is kept (as `null`) and the token counts are skipped.
    Usage,
    /// A value whose presence is all that is read: validated, kept as `null`.
    Presence,
    /// Kept whole.
    Full,
}

impl Shape {
    /// The shape of the value under `key` in an object of this shape (`None`: skipped).
    fn child(self, key: &str) -> Option<Shape> {
        match self {
            Shape::Line if key == "message" => Some(Shape::Message),
            Shape::Message if key == "content" => Some(Shape::Content),
            Shape::Message if key == "usage" => Some(Shape::Usage),
            Shape::Usage if key == "cost" => Some(Shape::Presence),
            Shape::Usage => None,
            Shape::Message if !MESSAGE_KEYS.contains(&key) => None,
            Shape::Block if key == "text" => Some(Shape::Text),
            Shape::Block if !BLOCK_KEYS.contains(&key) => None,
            _ => Some(Shape::Full),
        }
    }

    /// The shape of an array element of this shape.
    fn element(self) -> Shape {
        match self {
            Shape::Content => Shape::Block,
            _ => Shape::Full,
        }
    }

    /// A string in this place, as kept.
    fn string(self, v: &str) -> String {
        match self {
            Shape::Content | Shape::Text => cut_text(v).to_owned(),
            _ => v.to_owned(),
        }
    }
}

/// UTF-16 units of content text kept: the view reads 200 (a few more keep the cut and the "is it
/// longer" test of any reader exact).
const TEXT_UNITS: usize = 208;

/// The start of a content text: at least [`TEXT_UNITS`] UTF-16 units and up to the first character
/// that is not blank in either dialect's sense (JavaScript's white space, `.` or `…`), so "has it any text"
/// reads the same on the cut.
fn cut_text(v: &str) -> &str {
    // An ASCII start with something not blank in it is cut at exactly TEXT_UNITS bytes.
    if let Some(start) = v.as_bytes().get(..TEXT_UNITS) {
        let blank = |c: &u8| matches!(c, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r' | b'.');
        if start.is_ascii() && !start.iter().all(blank) {
            return &v[..TEXT_UNITS];
        }
    }
    let mut units = 0;
    let mut seen = false;
    for (i, c) in v.char_indices() {
        if units >= TEXT_UNITS && seen {
            return &v[..i];
        }
        units += c.len_utf16();
        seen = seen || !(crate::js::is_whitespace(c) || matches!(c, '.' | '\u{2026}'));
    }
    v
}

impl<'de> DeserializeSeed<'de> for Shape {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        match self {
            Shape::Full => Value::deserialize(d),
            Shape::Presence => IgnoredAny::deserialize(d).map(|_| Value::Null),
            // Text is taken raw (validated, not decoded) and only its start is decoded: a tool
            // result's kilobytes are never copied.
            Shape::Text => {
                let raw = <&RawValue>::deserialize(d)?;
                raw_text(raw.get(), self).map_err(de::Error::custom)
            }
            shape => d.deserialize_any(ShapeVisitor(shape)),
        }
    }
}

/// A content text cut as the projection cuts it.
pub(crate) fn cut_content_text(text: &str) -> &str {
    cut_text(text)
}

/// A content text given as raw JSON (a string token), cut as the projection cuts content text;
/// `None` when the raw value is not a string.
pub(crate) fn cut_raw_string(raw: &str) -> Option<String> {
    if !raw.starts_with('"') {
        return None;
    }
    match raw_text(raw, Shape::Text) {
        Ok(Value::String(s)) => Some(s),
        _ => None,
    }
}

/// Raw bytes of a JSON string decoded for the first [`TEXT_UNITS`] units: an escape takes at most
/// six of them per unit.
const RAW_PREFIX: usize = TEXT_UNITS * 6 + 8;

/// A text value from its raw JSON: strings cut as [`cut_text`] cuts them (decoding only a
/// prefix when that is enough); anything else (content blocks, odd types) parsed in full.
fn raw_text(raw: &str, shape: Shape) -> serde_json::Result<Value> {
    let bytes = raw.as_bytes();
    if bytes.first() != Some(&b'"') {
        let mut de = serde_json::Deserializer::from_str(raw);
        let value = shape_value(&mut de, shape)?;
        de.end()?;
        return Ok(value);
    }
    // Most text has few escapes: try a short prefix first, then one long enough for any text.
    for limit in [TEXT_UNITS * 2 + 8, RAW_PREFIX] {
        if raw.len() <= limit {
            break;
        }
        if let Some(cut) = decode_prefix(raw, limit) {
            return Ok(Value::String(cut));
        }
    }
    let text: String = serde_json::from_str(raw)?;
    Ok(Value::String(cut_text(&text).to_owned()))
}

/// The cut text decoded from about `limit` raw bytes of a JSON string, when they hold all the cut
/// needs.
fn decode_prefix(raw: &str, limit: usize) -> Option<String> {
    let bytes = raw.as_bytes();
    // Without escapes the prefix is the text itself (the whole string was validated as JSON).
    if !bytes[1..limit].contains(&b'\\') {
        let mut end = limit;
        while !raw.is_char_boundary(end) {
            end += 1;
        }
        let text = raw.get(1..end)?;
        let cut = cut_text(text);
        return (cut.len() < text.len()).then(|| cut.to_owned());
    }
    // Cut after a whole character or escape.
    let mut i = 1;
    while i < limit {
        match memchr::memchr(b'\\', &bytes[i..limit]) {
            None => i = limit,
            Some(k) if bytes.get(i + k + 1) == Some(&b'u') => i += k + 6,
            Some(k) => i += k + 2,
        }
    }
    while !raw.is_char_boundary(i) {
        i += 1;
    }
    // The prefix's text: `None` where serde_json would not read the prefix as a string (a
    // surrogate pair cut in two, a lone surrogate).
    let text = crate::json_scan::decode(raw.get(1..i)?)?;
    let cut = cut_text(&text);
    // Only when the prefix held everything the cut needs.
    (cut.len() < text.len()).then(|| cut.to_owned())
}

/// Parses a non-string value in a text place with the shape's rules.
fn shape_value(
    de: &mut serde_json::Deserializer<serde_json::de::StrRead<'_>>,
    shape: Shape,
) -> serde_json::Result<Value> {
    de.deserialize_any(ShapeVisitor(shape))
}

struct ShapeVisitor(Shape);

/// An object key, borrowed when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(self.0.string(v)))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(self.0.string(&v)))
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        self.0.deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let element = self.0.element();
        let mut out = Vec::new();
        while let Some(value) = seq.next_element_seed(element)? {
            out.push(value);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        // Room for the keys usually kept, so the map is not grown key by key.
        let mut out = Map::with_capacity(match self.0 {
            Shape::Line | Shape::Message => 6,
            Shape::Block => 4,
            _ => 0,
        });
        while let Some(Key(key)) = map.next_key::<Key>()? {
            match self.0.child(&key) {
                Some(shape) => {
                    let value = map.next_value_seed(shape)?;
                    out.insert(key.into_owned(), value);
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_prefix_decoding_cuts_like_a_full_decode() {
        let cases = [
            "plain ".repeat(400),
            "\\n\\t\\\"q\\u00e9\\ud83d\\ude00 ".repeat(300),
            format!("{}x{}", " ".repeat(2000), "y".repeat(50)),
            "é😀".repeat(700),
        ];
        for raw_body in cases {
            let raw = format!("\"{raw_body}\"");
            let full: String = serde_json::from_str(&raw).unwrap();
            let want = Value::String(cut_text(&full).to_owned());
            assert_eq!(raw_text(&raw, Shape::Text).unwrap(), want, "{raw_body:.40}");
        }
        assert_eq!(
            raw_text("[{\"type\":\"text\",\"text\":\"a\"}]", Shape::Content).unwrap(),
            serde_json::json!([{"type":"text","text":"a"}])
        );
        assert_eq!(raw_text("5", Shape::Text).unwrap(), serde_json::json!(5));
    }

    #[test]
    fn the_ascii_cut_matches_the_char_by_char_cut() {
        fn reference(v: &str) -> &str {
            let mut units = 0;
            let mut seen = false;
            for (i, c) in v.char_indices() {
                if units >= TEXT_UNITS && seen {
                    return &v[..i];
                }
                units += c.len_utf16();
                seen = seen || !(crate::js::is_whitespace(c) || matches!(c, '.' | '\u{2026}'));
            }
            v
        }
        let cases = [
            "x".repeat(TEXT_UNITS),
            "x".repeat(TEXT_UNITS + 1),
            "x".repeat(TEXT_UNITS - 1),
            format!("{}y{}", " \x0b\x0c\r\n\t.".repeat(40), "z".repeat(300)),
            format!("{}{}", " ".repeat(TEXT_UNITS), "w".repeat(10)),
            format!("{}é{}", "a".repeat(100), "b".repeat(300)),
            format!("{}é", "a".repeat(TEXT_UNITS)),
            ".".repeat(400),
        ];
        for v in &cases {
            assert_eq!(cut_text(v), reference(v), "{v:?}");
        }
    }

    #[test]
    fn content_text_is_cut_past_what_the_view_reads() {
        let long = "é".repeat(500);
        assert_eq!(cut_text(&long).chars().count(), TEXT_UNITS);
        let blank_then_text = format!("{}x{}", " .\u{2026}\n".repeat(100), "y".repeat(500));
        let cut = cut_text(&blank_then_text);
        assert!(cut.contains('x') && cut.len() < blank_then_text.len());
        let all_blank = " ".repeat(1000);
        assert_eq!(cut_text(&all_blank), all_blank);
        let line = format!(
            r#"{{"type":"message","message":{{"role":"user","content":[{{"type":"text","text":"{long}"}}]}}}}"#
        );
        let value = parse_projected(&line).unwrap();
        assert_eq!(
            value["message"]["content"][0]["text"]
                .as_str()
                .map(|t| t.chars().count()),
            Some(TEXT_UNITS)
        );
    }

    #[test]
    fn keeps_what_readers_read_and_skips_the_rest() {
        let line = r#"{"type":"message","id":"a","parentId":null,"message":{"role":"assistant","content":[{"type":"thinking","thinking":"long","thinkingSignature":"sig"},{"type":"text","text":"hi"},{"type":"toolCall","id":"c","name":"read","arguments":{"path":"x"}}],"usage":{"input":1},"details":{"big":[1,2,3]},"provider":"p"}}"#;
        let value = parse_projected(line).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"type":"message","id":"a","parentId":null,"message":{"role":"assistant","content":[{"type":"thinking"},{"type":"text","text":"hi"},{"type":"toolCall","id":"c","name":"read","arguments":{"path":"x"}}],"usage":{}}})
        );
        let with_cost = r#"{"type":"message","message":{"role":"assistant","usage":{"input":1,"cost":{"total":0.5},"output":2}}}"#;
        assert_eq!(
            parse_projected(with_cost).unwrap()["message"]["usage"],
            serde_json::json!({"cost": null})
        );
        let odd_usage =
            r#"{"type":"message","message":{"role":"assistant","usage":[1,{"cost":2}]}}"#;
        assert_eq!(
            parse_projected(odd_usage).unwrap()["message"]["usage"],
            serde_json::json!([1, {"cost": 2}])
        );
    }

    #[test]
    fn non_message_entries_and_odd_shapes_are_kept_whole() {
        for line in [
            r#"{"type":"compaction","summary":"s","details":{"readFiles":["a"]}}"#,
            r#"[1,"two",{"three":3.5}]"#,
            r#"{"type":"message","message":"just text"}"#,
            r#"{"type":"message","message":{"role":"user","content":"plain"}}"#,
            r#"{"a\"b":1,"n":-5,"f":1.5e300}"#,
        ] {
            let full: Value = serde_json::from_str(line).unwrap();
            assert_eq!(parse_projected(line).unwrap(), full, "{line}");
        }
    }

    #[test]
    fn malformed_lines_fail_like_a_full_parse() {
        for line in [
            r#"{"type":"message","message":{"role":"user","thinking":"unterminated}}"#,
            r#"{"type":"message"} trailing"#,
            r#"{"type":"message","message":{"details":[1,}}"#,
            "",
        ] {
            assert!(parse_projected(line).is_err(), "{line}");
            assert!(serde_json::from_str::<Value>(line).is_err(), "{line}");
        }
    }

    #[test]
    fn duplicate_keys_keep_the_last_value_at_the_first_position() {
        let line = r#"{"id":"a","type":"x","id":"b"}"#;
        let full: Value = serde_json::from_str(line).unwrap();
        let projected = parse_projected(line).unwrap();
        assert_eq!(projected, full);
        assert_eq!(
            crate::json::to_line(&projected),
            crate::json::to_line(&full)
        );
    }
}
