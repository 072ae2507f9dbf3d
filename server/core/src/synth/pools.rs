//! The generator's material: words, paths, code, labels, models and tools to draw from, and
//! the small writers of JSON text it builds lines with.

#[rustfmt::skip]
pub(super) const WORDS: &[&str] = &[
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

pub(super) const PATHS: &[&str] = &[
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

pub(super) const CODE_LINES: &[&str] = &[
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

pub(super) const LABELS: &[&str] = &[
    "checkpoint",
    "before-refactor",
    "good",
    "start",
    "bug-found",
    "works",
    "try-again",
    "wip",
];

pub(super) const MODELS: &[(&str, &str)] = &[
    ("anthropic", "claude-sonnet-4-5"),
    ("anthropic", "claude-opus-4-1"),
    ("openai", "gpt-5"),
    ("openai", "gpt-5-mini"),
    ("google", "gemini-2.5-pro"),
];

pub(super) const THINKING_LEVELS: &[&str] = &["off", "minimal", "low", "medium", "high"];

pub(super) const TOOLS: &[&str] = &["read", "bash", "edit", "write", "grep", "ls"];

/// A cost figure as the agents write it (dollars per million tokens), rounded to keep it short.
pub(super) fn cost(tokens: usize, per_million: f64) -> f64 {
    (tokens as f64 * per_million / 1_000_000.0 * 1e6).round() / 1e6
}

pub(super) fn hex_id(id: u32) -> String {
    format!("{id:08x}")
}

pub(super) fn push_hex(out: &mut Vec<u8>, id: u32) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for shift in (0..8).rev() {
        out.push(HEX[((id >> (shift * 4)) & 0xf) as usize]);
    }
}

/// Appends `text` as the inside of a JSON string, escaped as `JSON.stringify` escapes it.
pub(super) fn push_escaped(out: &mut Vec<u8>, text: &str) {
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

pub(super) fn escape(text: &str) -> String {
    let mut out = Vec::with_capacity(text.len() + 8);
    push_escaped(&mut out, text);
    String::from_utf8(out).unwrap_or_default()
}
