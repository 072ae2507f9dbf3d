//! Synthetic sessions for benchmarks: realistic, deterministic (by seed) session files in either
//! dialect, written line by line in exactly the shapes the agents write.
//!
//! A generated session is a sequence of turns — a user message, assistant messages with thinking,
//! text and tool calls, the tool results — interleaved with model and thinking-level changes,
//! labels, compactions and custom entries. About 5% of the entries become branch points: at the end
//! of a turn the generator sometimes moves the leaf back to an earlier turn end (optionally with a
//! branch summary), as a user navigating `/tree` would. Sizes follow real sessions: assistant text
//! 1–2 KB, tool results 2–8 KB, so 100,000 entries make a file of about 300 MB.
//!
//! Nothing here touches the session engine; output is streamed, with one reusable line buffer.

use crate::dialect::Dialect;
use crate::title_slot::TitleSlot;
use std::collections::HashSet;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SynthOptions {
    /// The dialect whose file shape to write (omp: a 256-byte title slot first).
    pub dialect: Dialect,
    /// Number of entries after the header (the header and the title slot are not counted).
    pub entries: usize,
    /// The seed; the same options always give the same bytes.
    pub seed: u64,
}

/// What was generated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SynthStats {
    /// Entries written (excluding header and slot).
    pub entries: usize,
    /// Bytes written.
    pub bytes: u64,
    /// `message` entries.
    pub messages: usize,
    /// Tool calls inside assistant messages.
    pub tool_calls: usize,
    /// Thinking blocks inside assistant messages.
    pub thinking_blocks: usize,
    /// Entries that have more than one child.
    pub branch_points: usize,
    /// Times the generator moved the leaf back (each adds a child to an earlier entry).
    pub branches: usize,
    /// `branch_summary` entries.
    pub branch_summaries: usize,
    /// `compaction` entries.
    pub compactions: usize,
    /// `label` entries (setting or clearing).
    pub labels: usize,
    /// `model_change` entries.
    pub model_changes: usize,
    /// `thinking_level_change` entries.
    pub thinking_changes: usize,
    /// `custom` entries.
    pub customs: usize,
    /// Length (in entries) of the path from the root to the last entry.
    pub leaf_depth: usize,
    /// The id of the last entry (the leaf on open).
    pub leaf_id: String,
    /// The session id written in the header.
    pub session_id: String,
}

/// Writes a synthetic session file (created or truncated).
pub fn generate_file(options: SynthOptions, path: &Path) -> io::Result<SynthStats> {
    let file = std::fs::File::create(path)?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let stats = generate(options, &mut out)?;
    out.flush()?;
    Ok(stats)
}

/// Writes a synthetic session to `out`.
pub fn generate<W: Write>(options: SynthOptions, out: W) -> io::Result<SynthStats> {
    Generator::new(options, out).run()
}

/// Parses an entry count written as `1000`, `10k`, `1.5k` or `1M`.
pub fn parse_count(text: &str) -> Option<usize> {
    let text = text.trim();
    let (number, scale) = match text.as_bytes().last()? {
        b'k' | b'K' => (&text[..text.len() - 1], 1_000.0),
        b'm' | b'M' => (&text[..text.len() - 1], 1_000_000.0),
        _ => (text, 1.0),
    };
    let value: f64 = number.parse().ok()?;
    (value.is_finite() && value >= 0.0).then(|| (value * scale).round() as usize)
}

/// Formats a count the way [`parse_count`] reads it (`1000` → `1k`).
pub fn format_count(n: usize) -> String {
    if n >= 1_000_000 && n % 1_000_000 == 0 {
        format!("{}M", n / 1_000_000)
    } else if n >= 1_000 && n % 1_000 == 0 {
        format!("{}k", n / 1_000)
    } else {
        n.to_string()
    }
}

/// splitmix64: tiny, fast, and good enough for synthetic text.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5EED_5E55_1017_7EE5)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (((self.next_u64() >> 32) * n as u64) >> 32) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// One element of a slice.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

#[rustfmt::skip]
const WORDS: &[&str] = &[
    "the", "a", "to", "of", "and", "in", "is", "for", "that", "this", "with", "on", "it", "we", "be", "as", "not",
    "function", "parser", "session", "entry", "tree", "branch", "leaf", "index", "buffer", "config", "module",
    "error", "result", "value", "string", "number", "object", "array", "test", "fixture", "file", "line", "path",
    "cache", "request", "response", "server", "client", "handler", "thread", "lock", "queue", "stream", "reader",
    "writer", "token", "context", "compaction", "summary", "label", "model", "thinking", "message", "assistant",
    "user", "tool", "call", "output", "input", "timestamp", "parent", "child", "root", "node", "walk", "sort",
    "filter", "search", "query", "window", "row", "render", "preview", "offset", "length", "memory", "allocation",
    "latency", "throughput", "benchmark", "profile", "hot", "loop", "iterator", "closure", "trait", "struct", "enum",
    "match", "option", "vector", "map", "hash", "key", "schema", "migration", "version", "header", "slot", "title",
    "append", "write", "read", "flush", "sync", "disk", "bytes", "utf8", "json", "serde", "borrow", "lifetime",
    "generic", "refactor", "rename", "extract", "inline", "because", "should", "could", "would", "then", "when",
    "after", "before", "first", "next", "last", "every", "each", "only", "also", "still", "already", "instead",
    "probably", "exactly", "simply", "carefully", "quickly", "fix", "check", "update", "remove", "add", "change",
    "keep", "move", "split", "merge", "return", "build", "run", "fail", "pass", "works", "breaks", "handles",
    "ignores", "expects", "missing", "unused", "duplicate", "invalid", "empty",
];

const PATHS: &[&str] = &[
    "src/main.rs",
    "src/lib.rs",
    "src/session/mod.rs",
    "src/session/load.rs",
    "src/reader.rs",
    "src/tree.rs",
    "src/config.rs",
    "src/server/handler.rs",
    "src/view/rows.rs",
    "tests/integration.rs",
    "package.json",
    "README.md",
    "docs/design.md",
    "scripts/build.sh",
    "web/src/app.ts",
    "web/src/components/TreeView.tsx",
];

const CODE_LINES: &[&str] = &[
    "fn parse_line(text: &str, line: usize) -> Result<Entry, LineError> {",
    "    let mut reader = BufReader::with_capacity(1 << 20, input);",
    "    for (i, entry) in entries.iter().enumerate() {",
    "        if entry.kind() == \"label\" {",
    "            self.apply_label(&entry);",
    "        }",
    "    }",
    "    Ok(session)",
    "}",
    "impl Session {",
    "    /// The path from the root to the leaf.",
    "    pub fn branch_path(&self, from: Option<&str>) -> Vec<usize> {",
    "export function buildSessionContext(entries, leafId) {",
    "  const byId = new Map(entries.map((e) => [e.id, e]));",
    "  return { messages, thinkingLevel, model };",
    "const config = JSON.parse(await readFile(path, \"utf8\"));",
    "#[derive(Debug, Clone, PartialEq)]",
    "use std::collections::HashMap;",
    "    assert_eq!(tree.roots.len(), 1);",
    "    // TODO: handle the pending partial line",
    "let rows = compute_rows(&session, Filter::Default);",
    "  if (!entry) throw new Error(`Entry ${id} not found`);",
];

const LABELS: &[&str] = &[
    "checkpoint",
    "before-refactor",
    "good",
    "start",
    "bug-found",
    "works",
    "try-again",
    "wip",
];

const MODELS: &[(&str, &str)] = &[
    ("anthropic", "claude-sonnet-4-5"),
    ("anthropic", "claude-opus-4-1"),
    ("openai", "gpt-5"),
    ("openai", "gpt-5-mini"),
    ("google", "gemini-2.5-pro"),
];

const THINKING_LEVELS: &[&str] = &["off", "minimal", "low", "medium", "high"];

const TOOLS: &[&str] = &["read", "bash", "edit", "write", "grep", "ls"];

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

struct Generator<W: Write> {
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
    fn new(options: SynthOptions, out: W) -> Self {
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

    fn run(mut self) -> io::Result<SynthStats> {
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

/// A cost figure as the agents write it (dollars per million tokens), rounded to keep it short.
fn cost(tokens: usize, per_million: f64) -> f64 {
    (tokens as f64 * per_million / 1_000_000.0 * 1e6).round() / 1e6
}

fn hex_id(id: u32) -> String {
    format!("{id:08x}")
}

fn push_hex(out: &mut Vec<u8>, id: u32) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for shift in (0..8).rev() {
        out.push(HEX[((id >> (shift * 4)) & 0xf) as usize]);
    }
}

/// Appends `text` as the inside of a JSON string, escaped as `JSON.stringify` escapes it.
fn push_escaped(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\t' => b"\\t",
            b'\r' => b"\\r",
            0..=0x1f => {
                out.extend_from_slice(&bytes[start..i]);
                out.extend_from_slice(format!("\\u{b:04x}").as_bytes());
                start = i + 1;
                continue;
            }
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        out.extend_from_slice(escape);
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
}

fn escape(text: &str) -> String {
    let mut out = Vec::with_capacity(text.len() + 8);
    push_escaped(&mut out, text);
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::{OpenOptions, Session};

    fn generate_to_vec(dialect: Dialect, entries: usize, seed: u64) -> (Vec<u8>, SynthStats) {
        let mut out = Vec::new();
        let stats = generate(
            SynthOptions {
                dialect,
                entries,
                seed,
            },
            &mut out,
        )
        .unwrap();
        (out, stats)
    }

    #[test]
    fn same_seed_same_bytes() {
        let (a, _) = generate_to_vec(Dialect::Pi, 300, 7);
        let (b, _) = generate_to_vec(Dialect::Pi, 300, 7);
        let (c, _) = generate_to_vec(Dialect::Pi, 300, 8);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn every_line_is_json_with_the_requested_count() {
        for dialect in [Dialect::Pi, Dialect::Omp] {
            let (bytes, stats) = generate_to_vec(dialect, 500, 3);
            let text = String::from_utf8(bytes).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            let extra = if dialect == Dialect::Omp { 2 } else { 1 };
            assert_eq!(lines.len(), 500 + extra);
            assert_eq!(stats.entries, 500);
            assert_eq!(stats.bytes as usize, text.len());
            for line in &lines {
                let _: serde_json::Value = serde_json::from_str(line).unwrap();
            }
            if dialect == Dialect::Omp {
                assert_eq!(lines[0].len() + 1, crate::title_slot::SLOT_BYTES);
            }
        }
    }

    #[test]
    fn opens_without_diagnostics_and_has_the_requested_shape() {
        for dialect in [Dialect::Pi, Dialect::Omp] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("synthetic.jsonl");
            let stats = generate_file(
                SynthOptions {
                    dialect,
                    entries: 3_000,
                    seed: 42,
                },
                &path,
            )
            .unwrap();
            let session = Session::open(&path, OpenOptions::default()).unwrap();
            assert_eq!(session.dialect(), dialect);
            assert!(
                session.diagnostics().is_empty(),
                "{:?}",
                &session.diagnostics()[..3.min(session.diagnostics().len())]
            );
            assert_eq!(session.entries().len(), 3_000);
            assert_eq!(session.leaf_id(), Some(stats.leaf_id.as_str()));
            assert_eq!(session.branch_path(None).len(), stats.leaf_depth);
            let count = |kind: &str| {
                session
                    .entries()
                    .iter()
                    .filter(|e| e.kind() == kind)
                    .count()
            };
            assert_eq!(count("compaction"), stats.compactions);
            assert_eq!(count("label"), stats.labels);
            assert_eq!(count("branch_summary"), stats.branch_summaries);
            assert!(stats.compactions > 0 && stats.labels > 0 && stats.branch_summaries > 0);
            assert!(
                stats.model_changes > 0 && stats.thinking_changes > 0 && stats.thinking_blocks > 0
            );
            // Branch points as the tree sees them, about 5% of the entries.
            let tree = session.tree();
            let branch_points = (0..session.entries().len())
                .filter(|&i| tree.children(i).len() > 1)
                .count();
            assert_eq!(branch_points, stats.branch_points);
            let share = branch_points as f64 / 3_000.0;
            assert!((0.03..=0.08).contains(&share), "branch points: {share}");
            assert_eq!(tree.roots.len(), 1);
            // Realistic sizes: about 3 KB an entry.
            let per_entry = stats.bytes as f64 / 3_000.0;
            assert!(
                (2_000.0..=4_500.0).contains(&per_entry),
                "bytes per entry: {per_entry}"
            );
        }
    }

    #[test]
    fn counts_parse_and_format() {
        assert_eq!(parse_count("10k"), Some(10_000));
        assert_eq!(parse_count("1M"), Some(1_000_000));
        assert_eq!(parse_count("1.5k"), Some(1_500));
        assert_eq!(parse_count("250"), Some(250));
        assert_eq!(parse_count("x"), None);
        assert_eq!(format_count(100_000), "100k");
        assert_eq!(format_count(1_000_000), "1M");
        assert_eq!(format_count(1_234), "1234");
    }

    #[test]
    fn escapes_like_json_stringify() {
        let mut out = Vec::new();
        push_escaped(&mut out, "a\"b\\c\nd\u{1}");
        assert_eq!(out, b"a\\\"b\\\\c\\nd\\u0001");
    }
}
