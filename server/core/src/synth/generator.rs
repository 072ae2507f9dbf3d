//! The turn-by-turn writer of a synthetic session: user messages, assistant messages with
//! thinking, text and tool calls, tool results, and between turns model and thinking changes,
//! labels, compactions, custom entries and the step back to an earlier turn that makes a branch.

use super::pools::*;
use super::{Rng, SynthOptions, SynthStats};
use crate::dialect::Dialect;
use crate::title_slot::TitleSlot;
use std::collections::HashSet;
use std::io::{self, Write};

/// One entry on the current path from the root to the leaf.
#[derive(Debug, Clone, Copy)]
struct PathNode {
    /// Sequence number of the entry (0-based, file order).
    seq: u32,
    id: u32,
    /// An assistant message that ended a turn (a place to branch from).
    turn_end: bool,
    /// A user message (a good first kept entry for a compaction).
    user: bool,
}

/// Where a turn stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Between turns: the next entry is a user message or a side entry.
    Idle,
    /// After a user message or a round of tool results: an assistant message comes.
    Assistant,
    /// Tool results still owed to the last assistant message.
    Results(usize),
}

pub(super) struct Generator<W: Write> {
    options: SynthOptions,
    out: W,
    rng: Rng,
    line: Vec<u8>,
    text: String,
    stats: SynthStats,
    /// Entries written so far.
    seq: u32,
    /// Children per entry, by sequence number (saturating).
    child_counts: Vec<u8>,
    used_ids: HashSet<u32>,
    path: Vec<PathNode>,
    now_ms: i64,
    model: usize,
    thinking: usize,
    /// Tool calls of the last assistant message, awaiting results: (call number, tool).
    pending_calls: Vec<(u64, &'static str)>,
    call_counter: u64,
    phase: Phase,
}

impl<W: Write> Generator<W> {
    pub(super) fn new(options: SynthOptions, out: W) -> Self {
        Generator {
            options,
            out,
            rng: Rng::new(options.seed),
            line: Vec::with_capacity(16 << 10),
            text: String::with_capacity(16 << 10),
            stats: SynthStats::default(),
            seq: 0,
            child_counts: Vec::with_capacity(options.entries),
            used_ids: HashSet::with_capacity(options.entries),
            path: Vec::new(),
            // 2025-01-01T00:00:00.000Z
            now_ms: 1_735_689_600_000,
            model: 0,
            thinking: 3,
            pending_calls: Vec::new(),
            call_counter: 0,
            phase: Phase::Idle,
        }
    }

    pub(super) fn run(mut self) -> io::Result<SynthStats> {
        self.write_preamble()?;
        while (self.seq as usize) < self.options.entries {
            self.step()?;
        }
        self.stats.entries = self.seq as usize;
        self.stats.branch_points = self.child_counts.iter().filter(|&&c| c > 1).count();
        self.stats.leaf_depth = self.path.len();
        self.stats.leaf_id = self.path.last().map(|n| hex_id(n.id)).unwrap_or_default();
        self.out.flush()?;
        Ok(self.stats)
    }

    fn write_preamble(&mut self) -> io::Result<()> {
        let r = self.rng.next_u64();
        let r2 = self.rng.next_u64();
        let session_id = format!(
            "{:08x}-{:04x}-7{:03x}-{:04x}-{:012x}",
            (self.now_ms >> 16) as u32,
            (self.now_ms & 0xffff) as u16,
            r & 0xfff,
            0x8000 | ((r >> 12) & 0x3fff),
            r2 & 0xffff_ffff_ffff
        );
        let iso = crate::time::format_iso(self.now_ms);
        if self.options.dialect == Dialect::Omp {
            let slot = TitleSlot {
                title: format!("Synthetic session (seed {})", self.options.seed),
                source: Some("auto".to_owned()),
                updated_at: iso.clone(),
            };
            let line = slot.to_line();
            self.out.write_all(line.as_bytes())?;
            self.stats.bytes += line.len() as u64;
        }
        let header = format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"{session_id}\",\"timestamp\":\"{iso}\",\"cwd\":\"/home/dev/projects/sessiontree\"}}\n"
        );
        self.out.write_all(header.as_bytes())?;
        self.stats.bytes += header.len() as u64;
        self.stats.session_id = session_id;
        Ok(())
    }

    /// Writes one or more entries.
    fn step(&mut self) -> io::Result<()> {
        match self.phase {
            Phase::Idle => self.idle_step(),
            Phase::Assistant => self.assistant(),
            Phase::Results(_) => self.tool_result(),
        }
    }

    fn idle_step(&mut self) -> io::Result<()> {
        // The first entries of a session: a name (pi) or a title change (omp), then the first turn.
        if self.seq == 0 {
            return self.naming();
        }
        let roll = self.rng.unit();
        if self.seq > 0 && roll < 0.42 && self.path.len() > 12 {
            return self.branch_back();
        }
        let roll = self.rng.unit();
        if roll < 0.06 && self.path.len() > 2 {
            self.label()
        } else if roll < 0.085 && self.path.len() > 40 {
            self.compaction()
        } else if roll < 0.10 {
            self.model_change()
        } else if roll < 0.115 {
            self.thinking_change()
        } else if roll < 0.125 {
            self.custom()
        } else {
            self.user_message()
        }
    }

    // ---- entry writers ----

    /// Starts a line: `{"type":"<kind>","id":…,"parentId":…,"timestamp":…` under the leaf.
    fn begin(&mut self, kind: &str) -> u32 {
        self.now_ms += self.rng.range(800, 25_000) as i64;
        let id = self.fresh_id();
        self.line.clear();
        self.line.extend_from_slice(b"{\"type\":\"");
        self.line.extend_from_slice(kind.as_bytes());
        self.line.extend_from_slice(b"\"");
        self.base_fields(id);
        id
    }

    /// Starts a line whose base fields come last (`custom`).
    fn begin_late(&mut self, kind: &str) -> u32 {
        self.now_ms += self.rng.range(800, 25_000) as i64;
        let id = self.fresh_id();
        self.line.clear();
        self.line.extend_from_slice(b"{\"type\":\"");
        self.line.extend_from_slice(kind.as_bytes());
        self.line.extend_from_slice(b"\"");
        id
    }

    fn base_fields(&mut self, id: u32) {
        self.line.extend_from_slice(b",\"id\":\"");
        push_hex(&mut self.line, id);
        self.line.extend_from_slice(b"\",\"parentId\":");
        match self.path.last() {
            Some(parent) => {
                self.line.push(b'"');
                push_hex(&mut self.line, parent.id);
                self.line.push(b'"');
            }
            None => self.line.extend_from_slice(b"null"),
        }
        self.line.extend_from_slice(b",\"timestamp\":\"");
        self.line
            .extend_from_slice(crate::time::format_iso(self.now_ms).as_bytes());
        self.line.push(b'"');
    }

    /// Ends the line, writes it, and makes the entry the leaf.
    fn finish(&mut self, id: u32, turn_end: bool, user: bool) -> io::Result<()> {
        self.line.extend_from_slice(b"}\n");
        self.out.write_all(&self.line)?;
        self.stats.bytes += self.line.len() as u64;
        if let Some(parent) = self.path.last() {
            let count = &mut self.child_counts[parent.seq as usize];
            *count = count.saturating_add(1);
        }
        self.child_counts.push(0);
        self.path.push(PathNode {
            seq: self.seq,
            id,
            turn_end,
            user,
        });
        self.seq += 1;
        Ok(())
    }

    fn fresh_id(&mut self) -> u32 {
        loop {
            let id = (self.rng.next_u64() >> 32) as u32;
            if self.used_ids.insert(id) {
                return id;
            }
        }
    }

    fn naming(&mut self) -> io::Result<()> {
        match self.options.dialect {
            Dialect::Pi => {
                let id = self.begin("session_info");
                self.line.extend_from_slice(b",\"name\":\"");
                let name = format!("Synthetic session (seed {})", self.options.seed);
                push_escaped(&mut self.line, &name);
                self.line.push(b'"');
                self.finish(id, false, false)
            }
            Dialect::Omp => {
                let id = self.begin("title_change");
                self.line.extend_from_slice(b",\"title\":\"");
                let name = format!("Synthetic session (seed {})", self.options.seed);
                push_escaped(&mut self.line, &name);
                self.line.extend_from_slice(b"\",\"source\":\"auto\"");
                self.finish(id, false, false)
            }
        }
    }

    fn user_message(&mut self) -> io::Result<()> {
        let id = self.begin("message");
        let len = if self.rng.chance(0.15) {
            self.rng.range(600, 3000)
        } else {
            self.rng.range(40, 500)
        };
        self.fill_prose(len);
        self.line
            .extend_from_slice(b",\"message\":{\"role\":\"user\",\"content\":\"");
        push_escaped(&mut self.line, &self.text);
        self.line.extend_from_slice(b"\",\"timestamp\":");
        self.line
            .extend_from_slice(self.now_ms.to_string().as_bytes());
        self.line.push(b'}');
        self.stats.messages += 1;
        self.phase = Phase::Assistant;
        self.finish(id, false, true)
    }

    fn assistant(&mut self) -> io::Result<()> {
        let id = self.begin("message");
        self.line
            .extend_from_slice(b",\"message\":{\"role\":\"assistant\",\"content\":[");
        let mut first = true;
        if THINKING_LEVELS[self.thinking] != "off" && self.rng.chance(0.6) {
            let len = self.rng.range(200, 1500);
            self.fill_prose(len);
            self.line
                .extend_from_slice(b"{\"type\":\"thinking\",\"thinking\":\"");
            push_escaped(&mut self.line, &self.text);
            self.line.extend_from_slice(b"\"}");
            self.stats.thinking_blocks += 1;
            first = false;
        }
        // Tool rounds: about three per turn on average.
        let calls = if self.rng.chance(0.7) {
            self.rng.range(1, 2)
        } else {
            0
        };
        let len = self.rng.range(1000, 2000);
        self.fill_answer(len);
        if !first {
            self.line.push(b',');
        }
        self.line
            .extend_from_slice(b"{\"type\":\"text\",\"text\":\"");
        push_escaped(&mut self.line, &self.text);
        self.line.extend_from_slice(b"\"}");
        self.pending_calls.clear();
        for _ in 0..calls {
            self.call_counter += 1;
            let tool = self.rng.pick(TOOLS);
            self.pending_calls.push((self.call_counter, tool));
            self.line
                .extend_from_slice(b",{\"type\":\"toolCall\",\"id\":\"toolu_");
            self.line.extend_from_slice(
                format!("{:016x}", self.call_counter.wrapping_mul(0x9E37_79B9)).as_bytes(),
            );
            self.line.extend_from_slice(b"\",\"name\":\"");
            self.line.extend_from_slice(tool.as_bytes());
            self.line.extend_from_slice(b"\",\"arguments\":");
            let path = self.rng.pick(PATHS);
            let args = match tool {
                "read" => format!(
                    "{{\"path\":\"{path}\",\"offset\":{},\"limit\":200}}",
                    self.rng.range(1, 400)
                ),
                "bash" => format!(
                    "{{\"command\":\"cargo test -p sessiontree-core {} 2>&1 | tail -50\"}}",
                    self.rng.pick(WORDS)
                ),
                "edit" => format!(
                    "{{\"path\":\"{path}\",\"oldText\":\"{}\",\"newText\":\"{}\"}}",
                    escape(self.rng.pick(CODE_LINES)),
                    escape(self.rng.pick(CODE_LINES))
                ),
                "write" => format!(
                    "{{\"path\":\"{path}\",\"content\":\"{}\"}}",
                    escape(self.rng.pick(CODE_LINES))
                ),
                "grep" => format!(
                    "{{\"pattern\":\"{}\",\"path\":\"src\"}}",
                    self.rng.pick(WORDS)
                ),
                _ => "{\"path\":\".\"}".to_owned(),
            };
            self.line.extend_from_slice(args.as_bytes());
            self.line.push(b'}');
            self.stats.tool_calls += 1;
        }
        let (provider, model) = MODELS[self.model];
        let api = match provider {
            "anthropic" => "anthropic-messages",
            "openai" => "openai-responses",
            _ => "google-generative-ai",
        };
        let input = self.rng.range(2_000, 150_000);
        let output = self.rng.range(50, 4_000);
        let cache_read = self.rng.range(0, input);
        let stop = if calls > 0 { "toolUse" } else { "stop" };
        let usage = format!(
            "],\"api\":\"{api}\",\"provider\":\"{provider}\",\"model\":\"{model}\",\"usage\":{{\"input\":{input},\"output\":{output},\"cacheRead\":{cache_read},\"cacheWrite\":0,\"totalTokens\":{},\"cost\":{{\"input\":{},\"output\":{},\"cacheRead\":{},\"cacheWrite\":0,\"total\":{}}}}},\"stopReason\":\"{stop}\",\"timestamp\":{}}}",
            input + output + cache_read,
            cost(input, 3.0),
            cost(output, 15.0),
            cost(cache_read, 0.3),
            cost(input, 3.0) + cost(output, 15.0) + cost(cache_read, 0.3),
            self.now_ms
        );
        self.line.extend_from_slice(usage.as_bytes());
        self.stats.messages += 1;
        if calls > 0 {
            self.phase = Phase::Results(0);
            self.finish(id, false, false)
        } else {
            self.phase = Phase::Idle;
            self.finish(id, true, false)
        }
    }

    fn tool_result(&mut self) -> io::Result<()> {
        let Phase::Results(done) = self.phase else {
            return Ok(());
        };
        let (call, tool) = self.pending_calls[done];
        let id = self.begin("message");
        // 2–8 KB, skewed towards the small end (mean about 4 KB).
        let u = self.rng.unit();
        let len = 2_000 + (6_000.0 * u * u) as usize;
        self.fill_tool_output(tool, len);
        let is_error = self.rng.chance(0.05);
        self.line
            .extend_from_slice(b",\"message\":{\"role\":\"toolResult\",\"toolCallId\":\"toolu_");
        self.line
            .extend_from_slice(format!("{:016x}", call.wrapping_mul(0x9E37_79B9)).as_bytes());
        self.line.extend_from_slice(b"\",\"toolName\":\"");
        self.line.extend_from_slice(tool.as_bytes());
        self.line
            .extend_from_slice(b"\",\"content\":[{\"type\":\"text\",\"text\":\"");
        push_escaped(&mut self.line, &self.text);
        self.line.extend_from_slice(b"\"}],\"isError\":");
        self.line
            .extend_from_slice(if is_error { b"true" } else { b"false" });
        self.line.extend_from_slice(b",\"timestamp\":");
        self.line
            .extend_from_slice(self.now_ms.to_string().as_bytes());
        self.line.push(b'}');
        self.stats.messages += 1;
        self.phase = if done + 1 < self.pending_calls.len() {
            Phase::Results(done + 1)
        } else {
            Phase::Assistant
        };
        self.finish(id, false, false)
    }

    /// Moves the leaf back to an earlier turn end (1–3 turns back), sometimes with a branch
    /// summary, and starts a new turn there.
    fn branch_back(&mut self) -> io::Result<()> {
        // Candidates: the last few turn ends before the leaf (the user re-asks one of the last
        // prompts), preferring entries that are not branch points yet.
        let mut candidates = [0usize; 3];
        let mut found = 0;
        let mut at = self.path.len() - 1;
        while at > 0 && found < candidates.len() {
            at -= 1;
            if self.path[at].turn_end || at == 0 {
                candidates[found] = at;
                found += 1;
            }
        }
        let fresh: Vec<usize> = candidates[..found]
            .iter()
            .copied()
            .filter(|&i| self.child_counts[self.path[i].seq as usize] < 2)
            .collect();
        let at = match fresh.first() {
            Some(&nearest) if fresh.len() == 1 || self.rng.chance(0.7) => nearest,
            Some(_) => fresh[self.rng.below(fresh.len())],
            None => candidates[self.rng.below(found.max(1))],
        };
        self.path.truncate(at + 1);
        self.stats.branches += 1;
        if self.rng.chance(0.4) {
            let target = self.path[at].id;
            let id = self.begin("branch_summary");
            self.line.extend_from_slice(b",\"fromId\":\"");
            push_hex(&mut self.line, target);
            self.line.extend_from_slice(b"\",\"summary\":\"");
            let len = self.rng.range(300, 1500);
            self.fill_summary(len);
            push_escaped(&mut self.line, &self.text);
            self.line
                .extend_from_slice(b"\",\"details\":{\"readFiles\":[\"");
            self.line.extend_from_slice(self.rng.pick(PATHS).as_bytes());
            self.line.extend_from_slice(b"\"],\"modifiedFiles\":[]}");
            self.stats.branch_summaries += 1;
            self.finish(id, false, false)?;
            if self.seq as usize >= self.options.entries {
                return Ok(());
            }
        }
        self.user_message()
    }

    fn label(&mut self) -> io::Result<()> {
        let target = self.path[self.rng.below(self.path.len())].id;
        let id = self.begin("label");
        self.line.extend_from_slice(b",\"targetId\":\"");
        push_hex(&mut self.line, target);
        self.line.push(b'"');
        if !self.rng.chance(0.1) {
            let label = format!("{}-{}", self.rng.pick(LABELS), self.rng.below(100));
            self.line.extend_from_slice(b",\"label\":\"");
            self.line.extend_from_slice(label.as_bytes());
            self.line.push(b'"');
        }
        self.stats.labels += 1;
        self.finish(id, false, false)
    }

    fn compaction(&mut self) -> io::Result<()> {
        // Keep the last few turns: the first kept entry is a user message 10–40 entries back.
        let mut at = self.path.len() - self.rng.range(10, 40).min(self.path.len() - 1);
        while at > 0 && !self.path[at].user {
            at -= 1;
        }
        let first_kept = self.path[at].id;
        let id = self.begin("compaction");
        self.line.extend_from_slice(b",\"summary\":\"");
        let len = self.rng.range(2_000, 6_000);
        self.fill_summary(len);
        push_escaped(&mut self.line, &self.text);
        self.line.push(b'"');
        if self.options.dialect == Dialect::Omp && self.rng.chance(0.5) {
            self.line.extend_from_slice(b",\"shortSummary\":\"");
            self.fill_prose(80);
            push_escaped(&mut self.line, &self.text);
            self.line.push(b'"');
        }
        self.line.extend_from_slice(b",\"firstKeptEntryId\":\"");
        push_hex(&mut self.line, first_kept);
        let before = self.rng.range(80_000, 190_000);
        self.line
            .extend_from_slice(format!("\",\"tokensBefore\":{before}").as_bytes());
        self.line
            .extend_from_slice(b",\"details\":{\"readFiles\":[\"");
        self.line.extend_from_slice(self.rng.pick(PATHS).as_bytes());
        self.line.extend_from_slice(b"\"],\"modifiedFiles\":[\"");
        self.line.extend_from_slice(self.rng.pick(PATHS).as_bytes());
        self.line.extend_from_slice(b"\"]}");
        self.stats.compactions += 1;
        self.finish(id, false, false)
    }

    fn model_change(&mut self) -> io::Result<()> {
        self.model = (self.model + 1 + self.rng.below(MODELS.len() - 1)) % MODELS.len();
        let (provider, model) = MODELS[self.model];
        let id = self.begin("model_change");
        let fields = match self.options.dialect {
            Dialect::Pi => format!(",\"provider\":\"{provider}\",\"modelId\":\"{model}\""),
            Dialect::Omp => {
                format!(",\"model\":\"{provider}/{model}\",\"resolvedModelIsFallback\":false")
            }
        };
        self.line.extend_from_slice(fields.as_bytes());
        self.stats.model_changes += 1;
        self.finish(id, false, false)
    }

    fn thinking_change(&mut self) -> io::Result<()> {
        self.thinking =
            (self.thinking + 1 + self.rng.below(THINKING_LEVELS.len() - 1)) % THINKING_LEVELS.len();
        let level = THINKING_LEVELS[self.thinking];
        let id = self.begin("thinking_level_change");
        let fields = match self.options.dialect {
            Dialect::Pi => format!(",\"thinkingLevel\":\"{level}\""),
            Dialect::Omp => format!(",\"thinkingLevel\":\"{level}\",\"configured\":null"),
        };
        self.line.extend_from_slice(fields.as_bytes());
        self.stats.thinking_changes += 1;
        self.finish(id, false, false)
    }

    fn custom(&mut self) -> io::Result<()> {
        let id = self.begin_late("custom");
        let data = format!(
            ",\"customType\":\"todo-state\",\"data\":{{\"open\":{},\"done\":{},\"current\":\"{} {}\"}}",
            self.rng.below(10),
            self.rng.below(30),
            self.rng.pick(WORDS),
            self.rng.pick(WORDS)
        );
        self.line.extend_from_slice(data.as_bytes());
        self.base_fields(id);
        self.stats.customs += 1;
        self.finish(id, false, false)
    }

    // ---- text ----

    /// Sentences of words, about `len` bytes, with paragraph breaks.
    fn fill_prose(&mut self, len: usize) {
        self.text.clear();
        let mut words_in_sentence = 0;
        let mut sentences = 0;
        let mut capital = true;
        while self.text.len() < len {
            let word = self.rng.pick(WORDS);
            if capital {
                let mut chars = word.chars();
                if let Some(c) = chars.next() {
                    self.text.push(c.to_ascii_uppercase());
                    self.text.push_str(chars.as_str());
                }
                capital = false;
            } else {
                self.text.push_str(word);
            }
            words_in_sentence += 1;
            if words_in_sentence >= 6 && self.rng.chance(0.12) {
                self.text.push('.');
                words_in_sentence = 0;
                sentences += 1;
                capital = true;
                if sentences % 4 == 0 && self.rng.chance(0.5) {
                    self.text.push_str("\n\n");
                } else {
                    self.text.push(' ');
                }
            } else {
                self.text.push(' ');
            }
        }
    }

    /// An assistant answer: prose, sometimes with a code block.
    fn fill_answer(&mut self, len: usize) {
        if self.rng.chance(0.4) {
            let prose = len * 2 / 3;
            self.fill_prose(prose);
            self.text.push_str("\n\n```rust\n");
            while self.text.len() < len {
                let code = self.rng.pick(CODE_LINES);
                self.text.push_str(code);
                self.text.push('\n');
            }
            self.text.push_str("```");
        } else {
            self.fill_prose(len);
        }
    }

    /// A summary in the agents' structured style.
    fn fill_summary(&mut self, len: usize) {
        let mut body = String::new();
        std::mem::swap(&mut body, &mut self.text);
        self.fill_prose(len.saturating_sub(60));
        body.clear();
        body.push_str("## Goal\n");
        body.push_str(&self.text);
        body.push_str("\n\n## Files\n- ");
        body.push_str(self.rng.pick(PATHS));
        self.text = body;
    }

    /// Tool output: numbered source lines (read), compiler output (bash), a file list, or matches.
    fn fill_tool_output(&mut self, tool: &str, len: usize) {
        self.text.clear();
        let mut n = self.rng.range(1, 300);
        while self.text.len() < len {
            match tool {
                "read" => {
                    let code = self.rng.pick(CODE_LINES);
                    self.text.push_str(&format!("{n:>6}\t{code}\n"));
                }
                "grep" => {
                    let path = self.rng.pick(PATHS);
                    let code = self.rng.pick(CODE_LINES);
                    self.text.push_str(&format!("{path}:{n}:{code}\n"));
                }
                "ls" => {
                    let path = self.rng.pick(PATHS);
                    self.text.push_str(path);
                    self.text.push('\n');
                }
                _ => {
                    let word = self.rng.pick(WORDS);
                    let other = self.rng.pick(WORDS);
                    self.text.push_str(&format!(
                        "test {word}::{other}_{n} ... ok\n   Compiling sessiontree-core v0.1.0 ({word} {other})\n"
                    ));
                }
            }
            n += 1;
        }
    }
}
