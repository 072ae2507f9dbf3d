//! The common `message` line read straight into its index fields and view facts, without
//! building a JSON value: one validating scan ([`crate::json_scan`]) that borrows the fields it
//! reads and skips the rest, accepting only what serde_json accepts.
//!
//! Only clean, common shapes take this path: `type: "message"`, string fields written without
//! escapes, no repeated keys, a `user` / `assistant` / `toolResult` role, content as a string or
//! an array of blocks, no retry recovery. Anything else (or any doubt: a type error, a repeated
//! key, a malformed line) returns `None`, and the line goes through the projection
//! (`entry_value.rs`) and `view::text::entry_facts`, which give the same answer for
//! every line this path takes (the tests check it over generated sessions and the fixtures).

use crate::dialect::Dialect;
use crate::facts::{PlainBlock, PlainContent, PlainMessage};
use crate::json_scan::{self, Escapes, Scanner};
use serde_json::Value;

#[cfg(test)]
mod oracle;

/// What a line gives the index and the view.
pub(crate) struct MessageLine<'a> {
    pub id: Option<&'a str>,
    /// `None`: no `parentId`; `Some(None)`: `null`.
    pub parent: Option<Option<&'a str>>,
    pub timestamp: Option<&'a str>,
    pub role: &'a str,
    pub usage_without_cost: bool,
    pub facts: Option<crate::facts::EntryFacts>,
}

/// Reads `text` (one line, no newline) when it is a common message line; the facts are made
/// for `facts_for`.
///
/// The line is read by a scanner that accepts only what serde_json accepts (same grammar, string
/// rules, escapes, white space and end of input) and reads the fields as serde's typed read did
/// (the tests compare it with that read, kept in `oracle.rs`): strings borrowed (a field written
/// with escapes, or any object key with escapes, leaves the line), `null` read as absent where an
/// `Option` was, repeated known keys leave the line.
pub(crate) fn scan(text: &str, facts_for: Option<Dialect>) -> Option<MessageLine<'_>> {
    let mut cur = Scanner::new(text);
    let mut seen = 0u8;
    let (mut id, mut parent, mut timestamp, mut message) = (None, None, None, None);
    cur.object(0, |cur, key, depth| {
        let key = key.plain()?;
        let bit = match key {
            "type" => 1,
            "id" => 2,
            "parentId" => 4,
            "timestamp" => 8,
            "message" => 16,
            _ => return cur.skip(depth),
        };
        first_time(&mut seen, bit)?;
        match key {
            "type" => (cur.plain_str()? == "message").then_some(()),
            "id" => cur.opt_str().map(|v| id = v),
            "parentId" => cur.opt_str().map(|v| parent = Some(v)),
            "timestamp" => cur.opt_str().map(|v| timestamp = v),
            _ => read_message(cur, depth).map(|m| message = Some(m)),
        }
    })?;
    cur.ws();
    if !cur.at_end() || seen & 1 == 0 {
        return None;
    }
    let message = message?;
    let usage_without_cost = message.role == "assistant" && message.usage == Some(false);
    let facts = match facts_for {
        Some(dialect) => {
            let content = match message.content {
                ScannedContent::Absent => PlainContent::Absent,
                ScannedContent::Text(text) => PlainContent::Text(text),
                ScannedContent::Blocks(blocks) => blocks_of(blocks)?,
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
        id,
        parent,
        timestamp,
        role: message.role,
        usage_without_cost,
        facts,
    })
}

/// `message` as scanned.
struct ScannedMessage<'a> {
    role: &'a str,
    content: ScannedContent<'a>,
    tool_call_id: Option<&'a str>,
    tool_name: Option<&'a str>,
    stop_reason: Option<&'a str>,
    error_message: Option<&'a str>,
    /// `usage` when it is an object: whether it has a `cost` key.
    usage: Option<bool>,
}

/// `message.content` as scanned: absent or `null`, a string (cut as the projection cuts content
/// text) or an array of blocks (anything else is left to the projection).
enum ScannedContent<'a> {
    Absent,
    Text(String),
    Blocks(Vec<ScannedBlock<'a>>),
}

/// One content block as scanned (`text` raw, as written).
#[derive(Default)]
struct ScannedBlock<'a> {
    kind: Option<&'a str>,
    /// With the string's escapes when it is one.
    text: Option<(&'a str, Option<Escapes>)>,
    id: Option<&'a str>,
    name: Option<&'a str>,
    arguments: Option<Value>,
}

/// The facts' view of the content blocks (`None`: leave the line to the projection).
fn blocks_of(blocks: Vec<ScannedBlock<'_>>) -> Option<PlainContent<'_>> {
    let mut out = Vec::with_capacity(blocks.len());
    for b in blocks {
        out.push(match b.kind {
            Some("text") => PlainBlock::Text(match b.text? {
                (raw, Some(escapes)) => cut_string(raw, escapes)?,
                (raw, None) => crate::entry_value::cut_raw_string(raw)?,
            }),
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

/// A string token's content text, cut as [`crate::entry_value::cut_raw_string`] cuts it.
fn cut_string(raw: &str, escapes: Escapes) -> Option<String> {
    let cut = crate::entry_value::cut_content_text;
    let inner = raw.get(1..raw.len().checked_sub(1)?)?;
    if !escapes.any {
        return Some(cut(inner).to_owned());
    }
    // A prefix of the text, decoded, tells the cut when the cut ends before the prefix does
    // (where `cut_content_text` cuts depends only on what comes before); otherwise a longer one.
    let mut limit = 512;
    loop {
        let (text, whole) = json_scan::decode_prefix(inner, limit)?;
        let cut = cut(&text);
        if whole || cut.len() < text.len() {
            return Some(cut.to_owned());
        }
        limit *= 4;
    }
}

/// Marks a known key of an object as read (`seen` holds one bit a key); `None` when it was read
/// already, since a repeated known key leaves the line to the projection.
fn first_time(seen: &mut u8, bit: u8) -> Option<()> {
    (*seen & bit == 0).then(|| *seen |= bit)
}

/// `message`: an object with a `user` / `assistant` / `toolResult` role and no
/// `retryRecovery`.
fn read_message<'a>(cur: &mut Scanner<'a>, depth: u32) -> Option<ScannedMessage<'a>> {
    let mut m = ScannedMessage {
        role: "",
        content: ScannedContent::Absent,
        tool_call_id: None,
        tool_name: None,
        stop_reason: None,
        error_message: None,
        usage: None,
    };
    let mut seen = 0u8;
    cur.object(depth, |cur, key, depth| {
        let key = key.plain()?;
        let bit = match key {
            "role" => 1,
            "content" => 2,
            "toolCallId" => 4,
            "toolName" => 8,
            "stopReason" => 16,
            "errorMessage" => 32,
            "usage" => 64,
            "retryRecovery" => return None,
            _ => return cur.skip(depth),
        };
        first_time(&mut seen, bit)?;
        match key {
            "role" => {
                m.role = cur.plain_str()?;
                matches!(m.role, "user" | "assistant" | "toolResult").then_some(())
            }
            "content" => read_content(cur, depth).map(|c| m.content = c),
            "toolCallId" => cur.opt_str().map(|v| m.tool_call_id = v),
            "toolName" => cur.opt_str().map(|v| m.tool_name = v),
            "stopReason" => cur.opt_str().map(|v| m.stop_reason = v),
            "errorMessage" => cur.opt_str().map(|v| m.error_message = v),
            _ => read_usage(cur, depth).map(|u| m.usage = u),
        }
    })?;
    (seen & 1 != 0).then_some(m)
}

/// `usage`: `null` (`None`) or an object (whether it has a `cost` key).
fn read_usage<'a>(cur: &mut Scanner<'a>, depth: u32) -> Option<Option<bool>> {
    if cur.peek() == Some(b'n') {
        return cur.literal(b"null").map(|()| None);
    }
    let mut cost = false;
    cur.object(depth, |cur, key, depth| {
        if key.plain()? == "cost" {
            if cost {
                return None;
            }
            cost = true;
        }
        cur.skip(depth)
    })?;
    Some(Some(cost))
}

/// `message.content`.
fn read_content<'a>(cur: &mut Scanner<'a>, depth: u32) -> Option<ScannedContent<'a>> {
    match cur.peek()? {
        b'n' => cur.literal(b"null").map(|()| ScannedContent::Absent),
        b'"' => {
            let (raw, escapes) = cur.string()?;
            cut_string(raw, escapes).map(ScannedContent::Text)
        }
        b'[' => {
            let mut blocks = Vec::new();
            cur.array(depth, |cur, depth| {
                blocks.push(read_block(cur, depth)?);
                Some(())
            })?;
            Some(ScannedContent::Blocks(blocks))
        }
        // A number, `true`, `false` or an object: the projection reads those (a number is
        // parsed there, and may be out of range).
        _ => None,
    }
}

/// One content block: an object.
fn read_block<'a>(cur: &mut Scanner<'a>, depth: u32) -> Option<ScannedBlock<'a>> {
    let mut b = ScannedBlock::default();
    let mut seen = 0u8;
    cur.object(depth, |cur, key, depth| {
        let key = key.plain()?;
        let bit = match key {
            "type" => 1,
            "text" => 2,
            "id" => 4,
            "name" => 8,
            "arguments" => 16,
            _ => return cur.skip(depth),
        };
        first_time(&mut seen, bit)?;
        match key {
            "type" => cur.opt_str().map(|v| b.kind = v),
            "text" if cur.peek() == Some(b'n') => cur.literal(b"null"),
            "text" if cur.peek() == Some(b'"') => {
                let (raw, escapes) = cur.string()?;
                b.text = Some((raw, Some(escapes)));
                Some(())
            }
            "text" => cur.raw(depth).map(|raw| b.text = Some((raw, None))),
            "id" => cur.opt_str().map(|v| b.id = v),
            "name" => cur.opt_str().map(|v| b.name = v),
            _ => {
                let raw = cur.raw(depth)?;
                b.arguments = Some(serde_json::from_str(raw).ok()?);
                Some(())
            }
        }
    })?;
    Some(b)
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
            if let Err(diff) = crate::entry::check_against_projection(line) {
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

    /// The scanner's answer for `line` against the typed serde read it replaced: where the scanner
    /// reads a line, the typed read gave the same (`Err` otherwise). `Ok(true)` when it reads it.
    fn same_as_the_typed_read(line: &str) -> Result<bool, String> {
        let describe = |fast: &MessageLine<'_>| {
            format!(
                "{:?} {:?} {:?} {:?} {} {:?}",
                fast.id,
                fast.parent,
                fast.timestamp,
                fast.role,
                fast.usage_without_cost,
                fast.facts
            )
        };
        let mut taken = false;
        for facts in [Some(Dialect::Pi), Some(Dialect::Omp), None] {
            let Some(new) = scan(line, facts) else {
                continue;
            };
            taken = true;
            let Some(old) = oracle::scan(line, facts) else {
                return Err(format!("{facts:?}: read by the scanner only"));
            };
            let (new, old) = (describe(&new), describe(&old));
            if new != old {
                return Err(format!("{facts:?}: scanner {new}\ntyped read {old}"));
            }
            if serde_json::from_str::<serde::de::IgnoredAny>(line).is_err() {
                return Err("not JSON".to_owned());
            }
        }
        Ok(taken)
    }

    /// Message lines of generated sessions (both dialects) and of every fixture.
    fn sample_lines() -> Vec<String> {
        let mut texts = Vec::new();
        for dialect in [Dialect::Pi, Dialect::Omp] {
            let mut out = Vec::new();
            let options = crate::synth::SynthOptions {
                dialect,
                entries: 2000,
                seed: 7,
            };
            crate::synth::generate(options, &mut out).unwrap();
            texts.push(String::from_utf8(out).unwrap());
        }
        for path in crate::test_sessions::fixture_files() {
            if let Ok(bytes) = std::fs::read(&path) {
                texts.push(String::from_utf8_lossy(&bytes).into_owned());
            }
        }
        texts
            .iter()
            .flat_map(|text| text.lines())
            .map(|line| line.trim_end_matches('\r'))
            .filter(|line| line.starts_with(r#"{"type":"message","#))
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn the_scanner_reads_what_the_typed_read_read() {
        let lines = sample_lines();
        let (mut taken, mut left) = (0, Vec::new());
        for line in &lines {
            match same_as_the_typed_read(line) {
                Ok(true) => taken += 1,
                Ok(false) if oracle::scan(line, Some(Dialect::Pi)).is_some() => left.push(line),
                Ok(false) => {}
                Err(diff) => panic!("{line}\n{diff}"),
            }
        }
        // The scanner leaves only lines the typed read decoded a key or a `\u` string of.
        assert!(taken > 2000, "{taken} of {} lines", lines.len());
        for line in left {
            assert!(line.contains("\\u"), "left to the projection: {line}");
        }
    }

    /// Lines edited at random (bytes removed, JSON's punctuation and escapes put in, pieces
    /// repeated): whatever the scanner reads is valid JSON the typed read read the same.
    #[test]
    fn edited_lines_are_read_as_the_typed_read_or_left() {
        const PIECES: &[&str] = &[
            "\"",
            "\\",
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            " ",
            "\t",
            "\u{1}",
            "0",
            "-",
            "1e999",
            ".",
            "e",
            "null",
            "true",
            "\\u",
            "\\ud800",
            "\\n",
            "\\x",
            "\u{e9}",
            "\"id\":\"x\",",
            "\"cost\":1,",
            "\"type\":\"text\",",
            "\"role\":\"user\",",
            "00",
            "[]",
            "{}",
        ];
        let lines = sample_lines();
        let mut next = crate::test_sessions::numbers(0x5eed_f00d);
        let (mut taken, mut tried) = (0, 0);
        for round in 0..20_000 {
            let line = &lines[next(lines.len())];
            // Edit near the structure (the start, keys, the end) more often than inside texts.
            let mut edited = line.clone().into_bytes();
            for _ in 0..1 + round % 3 {
                let at = match next(3) {
                    0 => next(edited.len().min(300) + 1),
                    1 => edited.len() - next(edited.len().min(200) + 1),
                    _ => next(edited.len() + 1),
                };
                match next(3) {
                    0 if at < edited.len() => {
                        edited.remove(at);
                    }
                    1 if at + 8 < edited.len() => {
                        let piece = edited[at..at + 1 + next(8)].to_vec();
                        edited.splice(at..at, piece);
                    }
                    _ => {
                        let piece = PIECES[next(PIECES.len())].as_bytes();
                        edited.splice(at..at, piece.iter().copied());
                    }
                }
            }
            let Ok(edited) = String::from_utf8(edited) else {
                continue;
            };
            tried += 1;
            match same_as_the_typed_read(&edited) {
                Ok(read) => taken += usize::from(read),
                Err(diff) => panic!("{edited}\n{diff}"),
            }
        }
        assert!(taken > 1000 && taken < tried, "{taken} of {tried}");
    }

    /// Texts with escapes are cut as `cut_raw_string` and a full decode cut them.
    #[test]
    fn escaped_texts_are_cut_as_the_projection_cuts_them() {
        const PIECES: &[&str] = &[
            "word ",
            "x",
            ". ",
            "...",
            "\\n",
            "\\n\\n",
            "\\\"",
            "\\\\",
            "\\/",
            "\\b",
            "\\f",
            "\\r",
            "\\t",
            " ",
            "\u{2026}",
            "\u{e9}",
            "\u{4e2d}",
            "\u{1f600}",
            "\u{feff}",
            "\u{a0}",
            "\\u00e9",
            "\\u0020",
            "\\u2026",
            "\\ud83d\\ude00",
        ];
        let mut next = crate::test_sessions::numbers(0xc07);
        for round in 0..4000 {
            let len = [0, 3, 60, 200, 400, 2000][round % 6] + next(40);
            let mut raw = String::from("\"");
            while raw.len() < len {
                let piece = PIECES[next(PIECES.len())];
                // Long runs of one piece: blanks, escapes or wide characters before the cut.
                for _ in 0..1 + next(3) * next(60) {
                    raw.push_str(piece);
                }
            }
            raw.push('"');
            let escapes = Escapes {
                any: raw.contains('\\'),
                unicode: raw.contains("\\u"),
            };
            let text: String = serde_json::from_str(&raw).unwrap();
            let want = crate::entry_value::cut_content_text(&text).to_owned();
            assert_eq!(cut_string(&raw, escapes).as_ref(), Some(&want), "{raw}");
            assert_eq!(
                crate::entry_value::cut_raw_string(&raw),
                Some(want),
                "{raw}"
            );
        }
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
        crate::entry::check_against_projection(line).unwrap();
    }
}
