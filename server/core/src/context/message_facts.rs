//! Reads a `message` entry's JSON text for what the context rules need of its message — the role,
//! model, stop reason, tool-call ids and the like — without building the message's value, and
//! keeps the message's text so that it can be parsed only if a consumer needs its value. Parsing
//! the values of a long kept range was most of the cost of a context; this is one scan of the
//! text that allocates only the few small fields it keeps.
//!
//! The probe must never accept a text that parsing into a value would read differently, so the
//! scan ([`crate::json_scan`]) validates everything `serde_json::from_str::<Value>` checks
//! (grammar, control characters and paired surrogates in strings, numbers in range) and gives up — the caller then parses the
//! entry as before — on anything unusual: a message that is not an object, a role other than
//! `user`, `assistant` or `toolResult`, a repeated `message` or `content` key, deep nesting, very
//! long numbers or large exponents, or serde_json's private raw-value key (which its value parser
//! treats specially).

use super::canonical;
use super::text::SharedStr;
use crate::js;
use crate::json_scan::{self, Scanner, Watch};
use serde_json::Value;
use std::borrow::Cow;
use std::ops::Range;

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
    let mut scan = Scanner::watched(entry, Watched::default());
    let mut message = None;
    scan.ws();
    read_entry(&mut scan, &mut message)?;
    scan.ws();
    if !scan.at_end() {
        return None;
    }
    let (span, found, plain) = message?;
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

/// A step of the scan; `None` gives up (the caller parses the entry instead).
type Step<T = ()> = Option<T>;

/// The scanner as the probe runs it.
type Scan<'a> = Scanner<'a, Watched>;

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
            if text[kind.clone()].starts_with('"') && string_at(text, kind.clone())? == "text" {
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

/// What the probe watches while it scans: numbers the value parser reads without going out of
/// range, and while the message is scanned whether its text is still what serde_json writes.
struct Watched {
    /// `Some` while the message is scanned: whether its text is still plain.
    plain: Option<bool>,
    /// The keys of the message's objects being scanned, to find repeated ones.
    keys: canonical::Keys,
}

impl Default for Watched {
    fn default() -> Self {
        Watched {
            plain: None,
            keys: canonical::Keys::with_capacity(32),
        }
    }
}

impl Watched {
    /// Whether the text being scanned is checked for being plain and still is.
    fn checking(&self) -> bool {
        self.plain == Some(true)
    }

    fn not_plain(&mut self) {
        if let Some(plain) = &mut self.plain {
            *plain = false;
        }
    }
}

impl Watch for Watched {
    fn whitespace(&mut self) {
        self.not_plain();
    }

    fn escape(&mut self, escape: &[u8]) {
        if !self.checking() {
            return;
        }
        let written = match escape {
            [b'/'] => false,
            [b'u', hex @ ..] => canonical::unicode_escape(std::str::from_utf8(hex).unwrap_or("")),
            _ => true,
        };
        if !written {
            self.not_plain();
        }
    }

    /// Short enough and with an exponent small enough that the value parser never finds it out
    /// of range.
    fn number(&mut self, token: &str) -> bool {
        let exponent = token.find(['e', 'E']).map_or("", |i| &token[i + 1..]);
        if token.len() > 24 || exponent.trim_start_matches(['+', '-']).len() > 2 {
            return false;
        }
        if self.checking() && !canonical::number(token) {
            self.not_plain();
        }
        true
    }
}

/// Walks an object's members, calling `member(scan, key, depth)` with the scan at each value; a
/// repeated key makes the text not plain, serde_json's raw-value key gives up.
fn object(
    s: &mut Scan<'_>,
    depth: u32,
    mut member: impl FnMut(&mut Scan<'_>, &str, u32) -> Step,
) -> Step {
    let keys = s.watch.keys.open();
    s.object(depth, |s, key, depth| {
        if s.watch.checking() && !s.watch.keys.add(keys, s.text, key.span()) {
            s.watch.not_plain();
        }
        let key = key.text()?;
        if key == RAW_VALUE_TOKEN {
            return None;
        }
        member(s, &key, depth)
    })?;
    s.watch.keys.close(keys);
    Some(())
}

/// Any value, validated (objects by [`object`]); returns its span.
fn value(s: &mut Scan<'_>, depth: u32) -> Step<Range<usize>> {
    let start = s.at;
    match s.peek()? {
        b'{' => object(s, depth, |s, _, depth| value(s, depth).map(drop))?,
        b'[' => s.array(depth, |s, depth| value(s, depth).map(drop))?,
        _ => s.skip(depth)?,
    }
    Some(start..s.at)
}

/// A string; returns its span with quotes.
fn string(s: &mut Scan<'_>) -> Step<Range<usize>> {
    let start = s.at;
    s.string()?;
    Some(start..s.at)
}

/// The entry object: its `message` read for facts, everything else validated.
fn read_entry(s: &mut Scan<'_>, message: &mut Option<(Range<usize>, Found, bool)>) -> Step {
    object(s, 0, |s, key, depth| {
        if key != "message" {
            return value(s, depth).map(drop);
        }
        if message.is_some() || s.peek() != Some(b'{') {
            return None;
        }
        let start = s.at;
        s.watch.plain = Some(true);
        let found = message_object(s, depth)?;
        let plain = s.watch.plain.take() == Some(true);
        *message = Some((start..s.at, found, plain));
        Some(())
    })
}

fn message_object(s: &mut Scan<'_>, depth: u32) -> Step<Found> {
    let mut found = Found::default();
    let mut content = false;
    object(s, depth, |s, key, depth| {
        match MESSAGE_KEYS.iter().position(|k| *k == key) {
            Some(i @ 0..=6) => found.fields[i] = Some(value(s, depth)?),
            Some(7) => {
                found.pruned_at = true;
                value(s, depth)?;
            }
            Some(_) if content => return None,
            Some(_) => {
                content = true;
                if s.peek() == Some(b'"') {
                    found.content_string = Some(string(s)?);
                } else if s.peek() == Some(b'[') {
                    s.array(depth, |s, depth| {
                        let block = block(s, depth)?;
                        found.blocks.push(block);
                        Some(())
                    })?;
                } else {
                    value(s, depth)?;
                }
            }
            None => {
                value(s, depth)?;
            }
        }
        Some(())
    })?;
    Some(found)
}

fn block(s: &mut Scan<'_>, depth: u32) -> Step<FoundBlock> {
    let mut block = FoundBlock::default();
    if s.peek() != Some(b'{') {
        value(s, depth)?;
        return Some(block);
    }
    block.object = true;
    object(s, depth, |s, key, depth| {
        let span = value(s, depth)?;
        match BLOCK_KEYS.iter().position(|k| *k == key) {
            Some(0) => block.kind = Some(span),
            Some(1) => block.id = Some(span),
            Some(i) => block.texts[i - 2] = Some(span),
            None => {}
        }
        Some(())
    })?;
    Some(block)
}

/// The text of a probed message's content as the fixtures' reduced shape reads it: string content,
/// or the `text` of every `text` block joined (`String(text)` for non-strings). `None` only if the
/// text cannot be read at all (the probe read it before).
pub(crate) fn content_text(probed: &Probed) -> Option<String> {
    let message = probed.json.as_str();
    let mut out = String::new();
    for span in &probed.text_spans {
        out.push_str(&js_string_at(message, span.clone())?);
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
        return Some(Cow::Borrowed(inner));
    }
    json_scan::decode(inner).map(Cow::Owned)
}

/// `String(v)` of the value at `span`.
fn js_string_at(text: &str, span: Range<usize>) -> Step<Cow<'_, str>> {
    if text[span.clone()].starts_with('"') {
        return string_at(text, span);
    }
    let value: Value = serde_json::from_str(&text[span]).ok()?;
    Some(Cow::Owned(js::to_string(Some(&value))))
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
                json_scan::decode(&json[1..json.len() - 1]).as_deref(),
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
