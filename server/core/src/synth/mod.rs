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

mod generator;
mod pools;

use crate::dialect::Dialect;
use generator::Generator;
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
        pools::push_escaped(&mut out, "a\"b\\c\nd\u{1}");
        assert_eq!(out, b"a\\\"b\\\\c\\nd\\u0001");
    }
}
