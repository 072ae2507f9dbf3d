//! Reads a `message` entry's JSON text for what the context rules need of its message — the role,
//! model, stop reason, tool-call ids and the like — without building the message's value, and
//! keeps the message's text so that it can be parsed only if a consumer needs its value. Parsing
//! the values of a long kept range was most of the cost of a context; this is one scan of the
//! text that allocates only the few small fields it keeps.
//!
//! The probe must never accept a text that parsing into a value would read differently, so the
//! scan validates everything `serde_json::from_str::<Value>` checks (grammar, control characters
//! and paired surrogates in strings, numbers in range) and gives up — the caller then parses the
//! entry as before — on anything unusual: a message that is not an object, a role other than
//! `user`, `assistant` or `toolResult`, a repeated `message` or `content` key, deep nesting, very
//! long numbers or large exponents, or serde_json's private raw-value key (which its value parser
//! treats specially).

use super::canonical;
use super::text::SharedStr;
use crate::js;
use serde_json::Value;
use std::borrow::Cow;
use std::ops::Range;

/// Nesting the probe follows before it gives up (serde_json's own limit is 128).
const MAX_DEPTH: usize = 96;
/// The key serde_json's value parser treats as a raw value instead of an object key.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// The roles a probed message can have: those both agents pass to the model as they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    User,
    Assistant,
    ToolResult,
}

impl Role {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::ToolResult => "toolResult",
        }
    }
}

/// What the rules read of a probed message (`None` = the key is absent, JavaScript's `undefined`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Facts {
    pub role: Role,
    pub provider: Option<Value>,
    pub model: Option<Value>,
    pub stop_reason: Option<Value>,
    pub retry_recovery: Option<Value>,
    pub tool_call_id: Option<Value>,
    pub error_message: Option<Value>,
    pub has_pruned_at: bool,
    /// The `id` of every `toolCall` block, in order (`None` for a call without one).
    pub tool_call_ids: Vec<Option<Value>>,
    /// For a turn with `stopReason: "error"`: whether some block makes it non-empty for omp's
    /// `isEmptyErrorTurn` (false for other turns, which are never empty error turns).
    pub has_meaningful_block: bool,
}

/// A probed message: its JSON text (as in the entry, sharing the entry's text) and its facts.
#[derive(Debug, Clone)]
pub(crate) struct Probed {
    pub json: SharedStr,
    pub facts: Facts,
    /// Whether `json` is byte for byte what serde_json writes for the message's value
    /// ([`canonical`](super::canonical)).
    pub plain: bool,
    /// Where in `json` the values are whose text makes up the content's text.
    pub text_spans: Vec<Range<usize>>,
}

/// Probes the JSON text of a `message` entry; `None` when the entry must be parsed instead.
pub(crate) fn message_entry(shared: &SharedStr) -> Option<Probed> {
    let entry = shared.as_str();
    let mut scan = Scan::new(entry);
    scan.ws();
    scan.entry().ok()?;
    scan.ws();
    if scan.at != entry.len() {
        return None;
    }
    let (span, found, plain) = scan.message?;
    let text_spans = found
        .text_spans(entry)?
        .into_iter()
        .map(|r| r.start - span.start..r.end - span.start)
        .collect();
    Some(Probed {
        json: shared.slice(span)?,
        facts: found.facts(entry)?,
        plain,
        text_spans,
    })
}

/// Why the probe gave up (the caller parses the entry instead).
struct GiveUp;

type Step<T = ()> = Result<T, GiveUp>;

/// Spans of the message's fields the rules read (the last of repeated keys, as `JSON.parse` keeps).
#[derive(Default)]
struct Found {
    fields: [Option<Range<usize>>; 7],
    pruned_at: bool,
    blocks: Vec<FoundBlock>,
    /// A `content` that is a string.
    content_string: Option<Range<usize>>,
}

#[derive(Default)]
struct FoundBlock {
    object: bool,
    kind: Option<Range<usize>>,
    id: Option<Range<usize>>,
    /// `text`, `thinking`, `thinkingSignature`, `data`.
    texts: [Option<Range<usize>>; 4],
}

const MESSAGE_KEYS: [&str; 9] = [
    "role",
    "provider",
    "model",
    "stopReason",
    "retryRecovery",
    "toolCallId",
    "errorMessage",
    "prunedAt",
    "content",
];
const BLOCK_KEYS: [&str; 6] = [
    "type",
    "id",
    "text",
    "thinking",
    "thinkingSignature",
    "data",
];

impl Found {
    /// The spans of the values whose text makes up the content's text (see [`content_text`]):
    /// a string content, or the `text` of every `text` block.
    fn text_spans(&self, text: &str) -> Option<Vec<Range<usize>>> {
        if let Some(span) = &self.content_string {
            return Some(vec![span.clone()]);
        }
        let mut spans = Vec::new();
        for block in self.blocks.iter().filter(|b| b.object) {
            let (Some(kind), Some(body)) = (&block.kind, &block.texts[0]) else {
                continue;
            };
            if text[kind.clone()].starts_with('"') && string_at(text, kind.clone()).ok()? == "text"
            {
                spans.push(body.clone());
            }
        }
        Some(spans)
    }

    fn facts(self, text: &str) -> Option<Facts> {
        let value = |span: &Option<Range<usize>>| -> Option<Option<Value>> {
            match span {
                None => Some(None),
                Some(r) => value_at(text, r.clone()).map(Some),
            }
        };
        let [role, provider, model, stop_reason, retry_recovery, tool_call_id, error_message] =
            &self.fields;
        let role = match js::str_of(value(role)?.as_ref()) {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            Some("toolResult") => Role::ToolResult,
            _ => return None,
        };
        let stop_reason = value(stop_reason)?;
        // Blank blocks matter only to an error turn's emptiness.
        let error_turn = js::str_of(stop_reason.as_ref()) == Some("error");
        let mut tool_call_ids = Vec::new();
        let mut meaningful = false;
        for block in &self.blocks {
            let kind = value(&block.kind)?;
            if js::str_of(kind.as_ref()) == Some("toolCall") {
                tool_call_ids.push(value(&block.id)?);
            }
            meaningful =
                meaningful || (error_turn && block_meaningful(block, kind.as_ref(), text)?);
        }
        Some(Facts {
            role,
            provider: value(provider)?,
            model: value(model)?,
            stop_reason,
            retry_recovery: value(retry_recovery)?,
            tool_call_id: value(tool_call_id)?,
            error_message: value(error_message)?,
            has_pruned_at: self.pruned_at,
            tool_call_ids,
            has_meaningful_block: meaningful,
        })
    }
}

/// The value at `span` (validated by the scan); a string without escapes is taken as it is.
fn value_at(text: &str, span: Range<usize>) -> Option<Value> {
    let raw = &text[span];
    if let Some(inner) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        if !inner.contains('\\') {
            return Some(Value::String(inner.to_owned()));
        }
    }
    serde_json::from_str(raw).ok()
}

/// omp `isEmptyErrorTurn`'s test of one block: `None` if a field cannot be read.
fn block_meaningful(block: &FoundBlock, kind: Option<&Value>, text: &str) -> Option<bool> {
    if !block.object {
        return Some(true);
    }
    let non_blank = |i: usize| -> Option<bool> {
        let Some(r) = &block.texts[i] else {
            return Some(false);
        };
        let raw = &text[r.clone()];
        if !raw.starts_with('"') {
            // A non-string where a string belongs counts as content.
            return Some(true);
        }
        // Most texts start with a plain character; only the others need decoding.
        match raw.as_bytes().get(1) {
            Some(b) if b.is_ascii_graphic() && *b != b'\\' => Some(true),
            _ => {
                let s: String = serde_json::from_str(raw).ok()?;
                Some(!js::trim(&s).is_empty())
            }
        }
    };
    Some(match js::str_of(kind) {
        Some("text") => non_blank(0)?,
        Some("thinking") => non_blank(1)? || non_blank(2)?,
        Some("redactedThinking") => non_blank(3)?,
        Some("fallback") => false,
        _ => true,
    })
}

/// A key's text (decoded only when it has escapes); the raw-value key gives up.
fn key(text: &str, span: Range<usize>) -> Step<Cow<'_, str>> {
    let key = string_at(text, span)?;
    if key == RAW_VALUE_TOKEN {
        return Err(GiveUp);
    }
    Ok(key)
}

/// A validating scan of one entry's JSON text.
struct Scan<'a> {
    text: &'a str,
    at: usize,
    /// The span of the entry's `message`, what was found in it, and whether its text is plain.
    message: Option<(Range<usize>, Found, bool)>,
    /// While the message is scanned: whether its text is still what serde_json writes for it.
    plain: Option<bool>,
    /// The keys of the message's objects being scanned, to find repeated ones.
    keys: canonical::Keys,
}

impl<'a> Scan<'a> {
    fn new(text: &'a str) -> Scan<'a> {
        Scan {
            text,
            at: 0,
            message: None,
            plain: None,
            keys: canonical::Keys::with_capacity(32),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    /// Whether the text being scanned is checked for being plain and still is.
    fn checking(&self) -> bool {
        self.plain == Some(true)
    }

    fn not_plain(&mut self) {
        if let Some(plain) = &mut self.plain {
            *plain = false;
        }
    }

    fn ws(&mut self) {
        let start = self.at;
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.at += 1;
        }
        if self.at != start {
            self.not_plain();
        }
    }

    fn eat(&mut self, byte: u8) -> Step {
        self.ws();
        if self.peek() != Some(byte) {
            return Err(GiveUp);
        }
        self.at += 1;
        Ok(())
    }

    /// Walks an object's members, calling `member(self, key, depth)` with the scan at each value.
    fn object(
        &mut self,
        depth: usize,
        mut member: impl FnMut(&mut Self, &str, usize) -> Step,
    ) -> Step {
        if depth > MAX_DEPTH {
            return Err(GiveUp);
        }
        self.eat(b'{')?;
        self.ws();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(());
        }
        let keys = self.keys.open();
        loop {
            self.ws();
            let span = self.string()?;
            if self.checking() && !self.keys.add(keys, self.text, span.clone()) {
                self.not_plain();
            }
            let key = key(self.text, span)?;
            self.eat(b':')?;
            self.ws();
            member(self, &key, depth + 1)?;
            self.ws();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    self.keys.close(keys);
                    return Ok(());
                }
                _ => return Err(GiveUp),
            }
        }
    }

    /// Walks an array's elements, calling `element(self, depth)` with the scan at each one.
    fn array(&mut self, depth: usize, mut element: impl FnMut(&mut Self, usize) -> Step) -> Step {
        if depth > MAX_DEPTH {
            return Err(GiveUp);
        }
        self.eat(b'[')?;
        self.ws();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(());
        }
        loop {
            self.ws();
            element(self, depth + 1)?;
            self.ws();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(GiveUp),
            }
        }
    }

    /// Any value, validated; returns its span.
    fn value(&mut self, depth: usize) -> Step<Range<usize>> {
        let start = self.at;
        match self.peek().ok_or(GiveUp)? {
            b'{' => self.object(depth, |s, _, d| s.value(d).map(drop))?,
            b'[' => self.array(depth, |s, d| s.value(d).map(drop))?,
            b'"' => {
                self.string()?;
            }
            b't' => self.literal("true")?,
            b'f' => self.literal("false")?,
            b'n' => self.literal("null")?,
            _ => self.number()?,
        }
        Ok(start..self.at)
    }

    fn literal(&mut self, word: &str) -> Step {
        if !self.text[self.at..].starts_with(word) {
            return Err(GiveUp);
        }
        self.at += word.len();
        Ok(())
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, short enough and with an exponent small
    /// enough that the value parser never finds it out of range.
    fn number(&mut self) -> Step {
        let start = self.at;
        let digits = |s: &mut Self| {
            let from = s.at;
            while s.peek().is_some_and(|b| b.is_ascii_digit()) {
                s.at += 1;
            }
            s.at - from
        };
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => {
                digits(self);
            }
            _ => return Err(GiveUp),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if digits(self) == 0 {
                return Err(GiveUp);
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            if !(1..=2).contains(&digits(self)) {
                return Err(GiveUp);
            }
        }
        if self.at - start > 24 {
            return Err(GiveUp);
        }
        if self.checking() && !canonical::number(&self.text[start..self.at]) {
            self.not_plain();
        }
        Ok(())
    }

    /// A string, validated as serde_json reads it into a `String`; returns its span with quotes.
    fn string(&mut self) -> Step<Range<usize>> {
        let start = self.at;
        if self.peek() != Some(b'"') {
            return Err(GiveUp);
        }
        self.at += 1;
        loop {
            // Sixteen bytes at a time to a quote, a backslash or a control character.
            self.at = crate::fast_line::plain_run(self.text.as_bytes(), self.at);
            let stop = self.peek().ok_or(GiveUp)?;
            self.at += 1;
            match stop {
                b'"' => return Ok(start..self.at),
                b'\\' => self.escape()?,
                _ => return Err(GiveUp),
            }
        }
    }

    /// The escape after a backslash: surrogates must come in pairs.
    fn escape(&mut self) -> Step {
        match self.peek().ok_or(GiveUp)? {
            b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => {
                self.at += 1;
                Ok(())
            }
            b'/' => {
                self.not_plain();
                self.at += 1;
                Ok(())
            }
            b'u' => {
                self.at += 1;
                if self.checking() {
                    let hex = self.text.get(self.at..self.at + 4).unwrap_or_default();
                    if !canonical::unicode_escape(hex) {
                        self.not_plain();
                    }
                }
                let n = self.hex4()?;
                match n {
                    0xDC00..=0xDFFF => Err(GiveUp),
                    0xD800..=0xDBFF => {
                        if !self.text[self.at..].starts_with("\\u") {
                            return Err(GiveUp);
                        }
                        self.at += 2;
                        match self.hex4()? {
                            0xDC00..=0xDFFF => Ok(()),
                            _ => Err(GiveUp),
                        }
                    }
                    _ => Ok(()),
                }
            }
            _ => Err(GiveUp),
        }
    }

    fn hex4(&mut self) -> Step<u16> {
        let hex = self.text.get(self.at..self.at + 4).ok_or(GiveUp)?;
        if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(GiveUp);
        }
        self.at += 4;
        u16::from_str_radix(hex, 16).map_err(|_| GiveUp)
    }

    /// The entry object: its `message` read for facts, everything else validated.
    fn entry(&mut self) -> Step {
        self.object(0, |s, key, depth| {
            if key != "message" {
                return s.value(depth).map(drop);
            }
            if s.message.is_some() || s.peek() != Some(b'{') {
                return Err(GiveUp);
            }
            let start = s.at;
            s.plain = Some(true);
            let found = s.message_object(depth)?;
            let plain = s.plain.take() == Some(true);
            s.message = Some((start..s.at, found, plain));
            Ok(())
        })
    }

    fn message_object(&mut self, depth: usize) -> Step<Found> {
        let mut found = Found::default();
        let mut content = false;
        self.object(depth, |s, key, depth| {
            match MESSAGE_KEYS.iter().position(|k| *k == key) {
                Some(i @ 0..=6) => found.fields[i] = Some(s.value(depth)?),
                Some(7) => {
                    found.pruned_at = true;
                    s.value(depth)?;
                }
                Some(_) if content => return Err(GiveUp),
                Some(_) => {
                    content = true;
                    if s.peek() == Some(b'"') {
                        found.content_string = Some(s.string()?);
                    } else if s.peek() == Some(b'[') {
                        s.array(depth, |s, depth| {
                            let block = s.block(depth)?;
                            found.blocks.push(block);
                            Ok(())
                        })?;
                    } else {
                        s.value(depth)?;
                    }
                }
                None => {
                    s.value(depth)?;
                }
            }
            Ok(())
        })?;
        Ok(found)
    }

    fn block(&mut self, depth: usize) -> Step<FoundBlock> {
        let mut block = FoundBlock::default();
        if self.peek() != Some(b'{') {
            self.value(depth)?;
            return Ok(block);
        }
        block.object = true;
        self.object(depth, |s, key, depth| {
            let span = s.value(depth)?;
            match BLOCK_KEYS.iter().position(|k| *k == key) {
                Some(0) => block.kind = Some(span),
                Some(1) => block.id = Some(span),
                Some(i) => block.texts[i - 2] = Some(span),
                None => {}
            }
            Ok(())
        })?;
        Ok(block)
    }
}

/// The text of a probed message's content as the fixtures' reduced shape reads it: string content,
/// or the `text` of every `text` block joined (`String(text)` for non-strings). `None` only if the
/// text cannot be read at all (the probe read it before).
pub(crate) fn content_text(probed: &Probed) -> Option<String> {
    let message = probed.json.as_str();
    let mut out = String::new();
    for span in &probed.text_spans {
        out.push_str(&js_string_at(message, span.clone()).ok()?);
    }
    Some(out)
}

/// [`content_text`] as JSON writes it inside a string's quotes, in pieces (one per text value),
/// for a message whose text is what serde_json writes (then each piece's text between its quotes
/// is exactly that); `None` when a piece is not a string.
pub(crate) fn content_text_json(probed: &Probed) -> Option<Vec<&str>> {
    let message = probed.json.as_str();
    probed
        .text_spans
        .iter()
        .map(|span| {
            message
                .get(span.clone())?
                .strip_prefix('"')?
                .strip_suffix('"')
        })
        .collect()
}

/// The string at `span` (with its quotes, validated by the scan), decoded only when it has escapes.
fn string_at(text: &str, span: Range<usize>) -> Step<Cow<'_, str>> {
    let inner = &text[span.start + 1..span.end - 1];
    if !inner.contains('\\') {
        return Ok(Cow::Borrowed(inner));
    }
    unescape(inner).map(Cow::Owned).ok_or(GiveUp)
}

/// Decodes the escapes of a string the scan validated (serde_json's own decoding is several times
/// slower on text with many line breaks).
fn unescape(inner: &str) -> Option<String> {
    let mut out = String::with_capacity(inner.len());
    let mut rest = inner;
    while let Some(i) = memchr::memchr(b'\\', rest.as_bytes()) {
        out.push_str(&rest[..i]);
        let escape = *rest.as_bytes().get(i + 1)?;
        rest = &rest[i + 2..];
        let c = match escape {
            b'u' => {
                let hex = |s: &str| u32::from_str_radix(s.get(..4)?, 16).ok();
                let n = hex(rest)?;
                rest = &rest[4..];
                if (0xD800..0xDC00).contains(&n) {
                    let low = hex(rest.strip_prefix("\\u")?)?;
                    rest = &rest[6..];
                    char::from_u32(0x10000 + ((n - 0xD800) << 10) + (low.checked_sub(0xDC00)?))?
                } else {
                    char::from_u32(n)?
                }
            }
            other => crate::json::simple_escape(other)?,
        };
        out.push(c);
    }
    out.push_str(rest);
    Some(out)
}

/// `String(v)` of the value at `span`.
fn js_string_at(text: &str, span: Range<usize>) -> Step<Cow<'_, str>> {
    if text[span.clone()].starts_with('"') {
        return string_at(text, span);
    }
    let value: Value = serde_json::from_str(&text[span]).map_err(|_| GiveUp)?;
    Ok(Cow::Owned(js::to_string(Some(&value))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message_entry(entry: &str) -> Option<Probed> {
        super::message_entry(&SharedStr::new(entry.to_owned()))
    }

    fn probe(entry: &str) -> Option<Facts> {
        message_entry(entry).map(|p| p.facts)
    }

    #[test]
    fn reads_what_the_rules_need() {
        let entry = r#"{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"thinking","thinking":"  "},{"type":"toolCall","id":"t1","name":"x","arguments":{"a":[1,2.5]}}],"provider":"p","model":"m","stopReason":"error","usage":{"cost":{"total":0.25}}}}"#;
        let facts = probe(entry).expect("probed");
        assert_eq!(facts.role, Role::Assistant);
        assert_eq!(facts.provider, Some(Value::from("p")));
        assert_eq!(facts.tool_call_ids, vec![Some(Value::from("t1"))]);
        assert!(facts.has_meaningful_block, "a tool call is content");
        let blank = r#"{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":" \n"},{"type":"fallback"}],"stopReason":"error"}}"#;
        assert!(!probe(blank).expect("probed").has_meaningful_block);
    }

    #[test]
    fn gives_up_on_what_the_value_parser_reads_differently() {
        for entry in [
            // A lone surrogate: the value parser rejects the whole line.
            r#"{"type":"message","message":{"role":"user","content":"\ud800"}}"#,
            r#"{"type":"message","message":{"role":"user","content":"x"},"label":"\udc00"}"#,
            // Out of range.
            r#"{"type":"message","message":{"role":"user","content":[{"n":1e400}]}}"#,
            // The raw-value key.
            r#"{"type":"message","message":{"role":"user","content":[{"$serde_json::private::RawValue":"1"}]}}"#,
            // Roles the probe leaves to the value path, and non-objects.
            r#"{"type":"message","message":{"role":"custom","content":"x"}}"#,
            r#"{"type":"message","message":["role","user"]}"#,
            r#"{"type":"message","message":{"role":"user"},"message":{"role":"user"}}"#,
            r#"{"type":"message","message":{"role":"user"}} x"#,
            // Grammar the value parser rejects.
            "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"a\u{1}b\"}}",
            r#"{"type":"message","message":{"role":"user","content":[01]}}"#,
            r#"{"type":"message","message":{"role":"user","content":"\ud800x"}}"#,
            r#"{"type":"message","message":{"role":"user","content":"\x"}}"#,
            r#"{"type":"message","message":{"role":"user","content":[1,]}}"#,
            r#"{"type":"message","message":{"role":"user" "content":"x"}}"#,
            r#"{"type":"message","message":{"role":"user","content":[1 2]}}"#,
            r#"{"type":"message","message":{"role":"user","content""x"}}"#,
        ] {
            assert!(probe(entry).is_none(), "{entry}");
        }
        let deep = format!(
            r#"{{"type":"message","message":{{"role":"user","content":{}1{}}}}}"#,
            "[".repeat(120),
            "]".repeat(120)
        );
        assert!(probe(&deep).is_none());
    }

    #[test]
    fn accepted_texts_parse_to_the_entry_s_message() {
        let spaced = r#" { "type" : "message" , "message" : { "role" : "user" , "content" : "a\u00e9\ud83d\ude00\/" , "n" : [ -0 , 1.50 , 2E+5 , 1e-7, true, null ] } } "#;
        let repeated = r#"{"type":"message","mess\u0061ge":{"role":"assistant","content":[{"type":"toolCall","id":"x"},{"type":"toolCall","id":"y","id":"z"}],"role":"assistant"}}"#;
        for entry in [spaced, repeated] {
            let probed = message_entry(entry).expect(entry);
            let full: Value = serde_json::from_str(entry).expect("json");
            let message: Value = serde_json::from_str(probed.json.as_str()).expect("message");
            assert_eq!(message, full["message"], "{entry}");
        }
        let ids = message_entry(repeated).expect("probed").facts.tool_call_ids;
        assert_eq!(ids, [Some(Value::from("x")), Some(Value::from("z"))]);
    }

    /// A message taken as plain is written back the same by serde_json; the agents' own lines
    /// are plain.
    #[test]
    fn plain_messages_are_what_serde_json_writes() {
        let plain = |message: &str| {
            let entry = format!(r#"{{"type":"message","id":"a","message":{message}}}"#);
            let probed = message_entry(&entry).expect(message);
            let value: Value = serde_json::from_str(probed.json.as_str()).expect("json");
            let written = serde_json::to_string(&value).expect("written");
            assert_eq!(probed.plain, written == message, "{message} → {written}");
            probed.plain
        };
        let agents = r#"{"role":"assistant","content":[{"type":"text","text":"a\"b\\c\nd\te\u0001é "},{"type":"toolCall","id":"t","name":"x","arguments":{"a":[1,-2,0.5,1e-7,null,true,{}],"b":{"a":1}}}],"usage":{"cost":{"total":0.0123}},"timestamp":1735689603000}"#;
        assert!(plain(agents));
        for other in [
            r#"{"role":"user", "content":"x"}"#,
            r#"{"role":"user","content":"a\/b"}"#,
            r#"{"role":"user","content":"\u00e9"}"#,
            r#"{"role":"user","content":"\u001F"}"#,
            r#"{"role":"user","content":"\ud83d\ude00"}"#,
            r#"{"role":"user","content":[{"type":"text","type":"text"}]}"#,
            r#"{"role":"user","content":"x","n":-0}"#,
            r#"{"role":"user","content":"x","n":2.50}"#,
            r#"{"role":"user","content":"x","n":1E5}"#,
            r#"{"role":"user","content":"x","n":0.000001}"#,
        ] {
            assert!(!plain(other), "{other}");
        }
    }

    #[test]
    fn unescapes_as_serde_json_does() {
        for json in [r#""a\nb\t\"\\\/\u00e9\ud83d\ude00\u0001x""#, r#""\b\f\r""#] {
            let expected: String = serde_json::from_str(json).expect("json");
            assert_eq!(
                unescape(&json[1..json.len() - 1]).as_deref(),
                Some(&*expected)
            );
        }
    }

    #[test]
    fn content_text_joins_text_blocks() {
        let raw = r#"{"role":"user","content":[{"type":"text","text":"a"},{"type":"image"},{"text":"b","type":"text"},{"type":"text","text":7},"c",{"type":"t\u0065xt","text":"\n"}]}"#;
        let probed = message_entry(&format!(r#"{{"type":"message","message":{raw}}}"#));
        let probed = probed.expect("probed");
        assert_eq!(content_text(&probed).as_deref(), Some("ab7\n"));
        assert_eq!(content_text_json(&probed), None, "7 is not a string");
        let plain = r#"{"type":"message","message":{"role":"user","content":"a\"b"}}"#;
        let probed = message_entry(plain).expect("probed");
        assert_eq!(content_text(&probed).as_deref(), Some("a\"b"));
        assert_eq!(content_text_json(&probed), Some(vec!["a\\\"b"]));
    }
}
