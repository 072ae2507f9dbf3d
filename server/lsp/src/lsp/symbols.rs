//! `workspace/symbol`: fuzzy search (nucleo-matcher, ranked) over every entry of the workspace's
//! sessions. Each file's entries are summarized once and cached until the file changes.

use crate::render;
use crate::to_proto;
use dashmap::DashMap;
use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};
use sessiontree_core::{OpenOptions, Session};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;
use tower_lsp_server::ls_types as lsp;

/// One searchable entry.
#[derive(Debug, Clone)]
pub struct Item {
    /// The entry's preview (what is matched and shown).
    pub name: String,
    /// The entry id.
    pub id: String,
    /// 1-based line.
    pub line: usize,
    /// Width of the line in UTF-16 units.
    pub width: u32,
    /// Bytes of `name` before its first non-ASCII byte (the part the quick test can rule on).
    pub ascii_len: u32,
    /// Every character of `name` is a grapheme of its own, so nucleo's characters of it are
    /// its `chars()` (no segmentation needed per query).
    pub plain_graphemes: bool,
    /// For the quick test, one byte per character of `name` after `ascii_len`: the ASCII
    /// character it folds to, [`ANY`] when it may fold to different ones, [`NONE`] when it never
    /// folds to ASCII.
    tail: Box<[u8]>,
}

/// A tail character that may match any ASCII needle character.
const ANY: u8 = 0x80;
/// A tail character that matches no ASCII needle character.
const NONE: u8 = 0xff;

/// How nucleo may compare a name character with an ASCII needle character (normalized or not,
/// then case-folded).
fn fold(c: char) -> u8 {
    use nucleo_matcher::chars::{normalize, to_lower_case};
    let (plain, normalized) = (to_lower_case(c), to_lower_case(normalize(c)));
    match (plain.is_ascii(), normalized.is_ascii()) {
        (false, false) => NONE,
        (true, true) if plain == normalized => plain as u8,
        _ => ANY,
    }
}

impl Item {
    fn new(name: String, id: String, line: usize, width: u32) -> Item {
        let ascii_len = name
            .bytes()
            .position(|b| !b.is_ascii())
            .unwrap_or(name.len());
        let plain_graphemes = ascii_len == name.len()
            || nucleo_matcher::chars::graphemes(&name).count() == name.chars().count();
        // Every character of the tail (a superset of nucleo's grapheme characters: more
        // characters only make the quick test pass more often).
        let tail = name[ascii_len..].chars().map(fold).collect();
        Item {
            name,
            id,
            line,
            width,
            ascii_len: to_proto::u32_of(ascii_len),
            plain_graphemes,
            tail,
        }
    }
}

/// The lower-cased ASCII characters of each positive atom of a pattern, when every character
/// of the atom is ASCII; the quick test needs them all, in order, in a name.
fn needles(pattern: &Pattern) -> Vec<Vec<u8>> {
    pattern
        .atoms
        .iter()
        .filter(|atom| !atom.negative)
        .filter_map(|atom| {
            let mut bytes = Vec::new();
            for c in atom.needle_text().chars() {
                if !c.is_ascii() {
                    return None;
                }
                bytes.push(c.to_ascii_lowercase() as u8);
            }
            Some(bytes)
        })
        .collect()
}

/// The name as nucleo matches it: what `Utf32Str::new` gives, without grapheme segmentation for
/// names whose characters are each a grapheme.
fn haystack<'a>(item: &'a Item, buf: &'a mut Vec<char>) -> Utf32Str<'a> {
    if item.ascii_len as usize == item.name.len() {
        Utf32Str::Ascii(item.name.as_bytes())
    } else if item.plain_graphemes {
        buf.clear();
        buf.extend(item.name.chars());
        Utf32Str::Unicode(buf)
    } else {
        Utf32Str::new(&item.name, buf)
    }
}

/// A quick test that rules out names the pattern cannot match: every atom (fuzzy, substring,
/// prefix, postfix or exact) needs its characters, in order, in the name, and an ASCII needle
/// character matches (ignoring case) only its own letter or a non-ASCII character that folds to
/// it. The ASCII start of the name is searched first, then the folded tail. Names that pass go
/// to nucleo, which decides.
fn may_match(item: &Item, needles: &[Vec<u8>]) -> bool {
    let ascii = &item.name.as_bytes()[..item.ascii_len as usize];
    needles.iter().all(|needle| {
        let (mut at, mut in_tail) = (0, false);
        for &c in needle {
            if !in_tail {
                let found = if c.is_ascii_lowercase() {
                    memchr::memchr2(c, c.to_ascii_uppercase(), &ascii[at..])
                } else {
                    memchr::memchr(c, &ascii[at..])
                };
                match found {
                    Some(i) => {
                        at += i + 1;
                        continue;
                    }
                    None => (at, in_tail) = (0, true),
                }
            }
            match memchr::memchr2(c, ANY, &item.tail[at..]) {
                Some(i) => at += i + 1,
                None => return false,
            }
        }
        true
    })
}

/// The entries of one file, with the file state they were read at.
#[derive(Debug)]
struct Indexed {
    stamp: (Option<SystemTime>, u64),
    container: String,
    items: Arc<Vec<Item>>,
}

/// Per-file cache of searchable entries, and the last answer.
#[derive(Debug, Default)]
pub struct SymbolIndex {
    files: DashMap<PathBuf, Indexed>,
    last: std::sync::Mutex<Option<LastAnswer>>,
}

/// An answer and what it was computed from: the same query over the same files, each at the same
/// indexed revision (the same `Arc` of items), has the same answer.
#[derive(Debug)]
struct LastAnswer {
    query: String,
    limit: usize,
    files: Vec<PathBuf>,
    items: Vec<Arc<Vec<Item>>>,
    answer: Vec<lsp::SymbolInformation>,
}

impl LastAnswer {
    fn answers(
        &self,
        query: &str,
        limit: usize,
        files: &[PathBuf],
        indexed: &[(lsp::Uri, String, Arc<Vec<Item>>)],
    ) -> bool {
        self.query == query
            && self.limit == limit
            && self.files == files
            && self.items.len() == indexed.len()
            && self
                .items
                .iter()
                .zip(indexed)
                .all(|(a, (_, _, b))| Arc::ptr_eq(a, b))
    }
}

fn stamp(path: &Path) -> Option<(Option<SystemTime>, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok(), meta.len()))
}

impl SymbolIndex {
    fn items(&self, path: &Path) -> Option<(String, Arc<Vec<Item>>)> {
        let now = stamp(path)?;
        if let Some(hit) = self.files.get(path) {
            if hit.stamp == now {
                return Some((hit.container.clone(), Arc::clone(&hit.items)));
            }
        }
        let options = OpenOptions {
            view_facts: false,
            ..OpenOptions::default()
        };
        let Ok(session) = Session::open(path, options) else {
            // Not a session: remember that too, so every query does not read it again.
            let empty = Arc::new(Vec::new());
            self.files.insert(
                path.to_path_buf(),
                Indexed {
                    stamp: now,
                    container: String::new(),
                    items: Arc::clone(&empty),
                },
            );
            return Some((String::new(), empty));
        };
        let mut items: Vec<Item> = Vec::with_capacity(session.entries().len());
        let entries = session.entries();
        // One sequential read of the file; an unreadable body leaves the items read so far.
        let read = session.for_each_raw(|i, raw| {
            let e = &entries[i];
            if let (true, Some(id)) = (e.line > 0, e.id()) {
                items.push(Item::new(
                    crate::rows::drawable(&render::preview_of(e, raw)),
                    id.to_owned(),
                    e.line,
                    to_proto::u32_of(raw.encode_utf16().count()),
                ));
            }
        });
        if let Err(err) = read {
            tracing::warn!("workspace symbols of {}: {err}", path.display());
        }
        let container = session
            .session_name()
            .map(str::to_owned)
            .unwrap_or_else(|| {
                path.file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default()
            });
        let items = Arc::new(items);
        self.files.insert(
            path.to_path_buf(),
            Indexed {
                stamp: now,
                container: container.clone(),
                items: Arc::clone(&items),
            },
        );
        Some((container, items))
    }

    /// The best matches for `query` over the files, best first, at most `limit`.
    #[allow(deprecated)] // `SymbolInformation::deprecated` must still be filled in.
    pub fn search(
        &self,
        files: &[PathBuf],
        query: &str,
        limit: usize,
    ) -> Vec<lsp::SymbolInformation> {
        let pattern = Pattern::parse(query, CaseMatching::Ignore, Normalization::Smart);
        let needles = needles(&pattern);
        // Score everything (two threads, each over half of every file), then build answers for
        // the best `limit` only.
        let indexed: Vec<(lsp::Uri, String, Arc<Vec<Item>>)> = files
            .iter()
            .filter_map(|path| {
                let uri = to_proto::lsp_uri(path)?;
                let (container, items) = self.items(path)?;
                Some((uri, container, items))
            })
            .collect();
        if let Ok(last) = self.last.lock() {
            if let Some(last) = last
                .as_ref()
                .filter(|l| l.answers(query, limit, files, &indexed))
            {
                return last.answer.clone();
            }
        }
        let score_half = |second: bool| -> Vec<(u32, usize, usize)> {
            let mut matcher = Matcher::new(Config::DEFAULT);
            let mut buf = Vec::new();
            let mut out = Vec::new();
            for (f, (_, _, items)) in indexed.iter().enumerate() {
                let mid = items.len() / 2;
                let range = if second { mid..items.len() } else { 0..mid };
                for i in range {
                    let score = if query.is_empty() {
                        Some(0)
                    } else if !may_match(&items[i], &needles) {
                        None
                    } else {
                        pattern.score(haystack(&items[i], &mut buf), &mut matcher)
                    };
                    if let Some(score) = score {
                        out.push((score, f, i));
                    }
                }
            }
            out
        };
        let mut scored = std::thread::scope(|scope| {
            let second = scope.spawn(|| score_half(true));
            let mut first = score_half(false);
            match second.join() {
                Ok(rest) => first.extend(rest),
                Err(_) => first.extend(score_half(true)),
            }
            first
        });
        // Best first; ties keep file and entry order (a stable sort, as before).
        let rank = |a: &(u32, usize, usize), b: &(u32, usize, usize)| {
            b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2))
        };
        if scored.len() > limit && limit > 0 {
            scored.select_nth_unstable_by(limit - 1, rank);
            scored.truncate(limit);
        }
        scored.sort_by(rank);
        scored.truncate(limit);
        let answer: Vec<lsp::SymbolInformation> = scored
            .into_iter()
            .map(|(_, f, i)| {
                let (uri, container, items) = &indexed[f];
                let item = &items[i];
                let l = to_proto::u32_of(item.line - 1);
                lsp::SymbolInformation {
                    name: item.name.clone(),
                    kind: lsp::SymbolKind::EVENT,
                    tags: None,
                    deprecated: None,
                    location: lsp::Location::new(
                        uri.clone(),
                        lsp::Range::new(
                            lsp::Position::new(l, 0),
                            lsp::Position::new(l, item.width),
                        ),
                    ),
                    container_name: Some(format!("{container} · {}", item.id)),
                }
            })
            .collect();
        if let Ok(mut last) = self.last.lock() {
            *last = Some(LastAnswer {
                query: query.to_owned(),
                limit,
                files: files.to_vec(),
                items: indexed
                    .iter()
                    .map(|(_, _, items)| Arc::clone(items))
                    .collect(),
                answer: answer.clone(),
            });
        }
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: &[&str] = &[
        "user: Parse the config file",
        "assistant: PARSE CONFIG now",
        "user: parse configuration…",
        "toolResult: [read] café config parsé",
        "user: Ｐａｒｓｅ ｃｏｎｆｉｇ (full width)",
        "user: pa\u{301}rse co\u{308}nfig",
        "user: e\u{301}\u{301}x",
        "user: 東京 parse 設定 config",
        "user: ǅ ǆ Ǆ İstanbul K Å",
        "[label] abc → done",
        "user: p-a_r/s.e c:o;n f i g",
        "user: no match here",
        "",
        "…",
        "user: Ａ ａ ß ẞ ﬁ ﬂ",
    ];

    const QUERIES: &[&str] = &[
        "parse config",
        "PARSE",
        "pars conf",
        "e",
        "x",
        "cafe",
        "parse",
        "fi",
        "ss",
        "k",
        "a",
        "istanbul",
        "東京",
        "é",
        "!config",
        "^user",
        "config$",
        "'parse",
        "p-a_r",
        "f i",
        "\\ x",
        "zzz",
        "  ",
    ];

    fn items() -> Vec<Item> {
        NAMES
            .iter()
            .map(|n| Item::new((*n).to_owned(), "id".into(), 1, 1))
            .collect()
    }

    #[test]
    fn the_quick_test_never_rules_out_a_match_and_the_haystack_is_nucleos() {
        let mut matcher = Matcher::new(Config::DEFAULT);
        let (mut buf, mut ours) = (Vec::new(), Vec::new());
        let mut ruled_out = 0;
        for query in QUERIES {
            let pattern = Pattern::parse(query, CaseMatching::Ignore, Normalization::Smart);
            let needles = needles(&pattern);
            for item in items() {
                let want = pattern.score(Utf32Str::new(&item.name, &mut buf), &mut matcher);
                let got = pattern.score(haystack(&item, &mut ours), &mut matcher);
                assert_eq!(got, want, "{query:?} on {:?}", item.name);
                if !may_match(&item, &needles) {
                    ruled_out += 1;
                    assert_eq!(want, None, "{query:?} ruled out {:?}", item.name);
                }
            }
        }
        assert!(
            ruled_out > 100,
            "the quick test rules out most names ({ruled_out})"
        );
    }

    #[test]
    fn the_quick_test_rules_out_names_lacking_a_character() {
        let pattern = Pattern::parse("parse config", CaseMatching::Ignore, Normalization::Smart);
        let needles = needles(&pattern);
        let pass = |name: &str| may_match(&Item::new(name.into(), "i".into(), 1, 1), &needles);
        assert!(pass("PARSE the CONFIG"));
        assert!(pass("parsé config…"));
        assert!(!pass("parse confi"));
        assert!(!pass("parse only"));
        assert!(!pass("parse 設定…"));
    }

    #[test]
    fn a_repeated_query_over_unchanged_files_gets_the_same_answer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let mut lines = vec![
            r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#.to_owned(),
        ];
        let mut parent = "null".to_owned();
        for (i, name) in NAMES.iter().enumerate() {
            lines.push(format!(
                r#"{{"type":"message","id":"e{i}","parentId":{parent},"timestamp":"2025-01-01T00:00:01.000Z","message":{{"role":"user","content":{}}}}}"#,
                serde_json::to_string(name).unwrap()
            ));
            parent = format!("\"e{i}\"");
        }
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let files = vec![path.clone()];
        let index = SymbolIndex::default();
        let first = index.search(&files, "parse config", 200);
        assert!(!first.is_empty());
        assert_eq!(index.search(&files, "parse config", 200), first);
        let fresh = SymbolIndex::default().search(&files, "parse config", 200);
        assert_eq!(fresh, first);
        // A changed file is read again.
        let mut more = lines.join("\n") + "\n";
        more.push_str(&format!(
            r#"{{"type":"message","id":"z","parentId":{parent},"timestamp":"2025-01-01T00:00:02.000Z","message":{{"role":"user","content":"parse config again"}}}}"#
        ));
        more.push('\n');
        std::fs::write(&path, more).unwrap();
        let after = index.search(&files, "parse config", 200);
        assert_eq!(after.len(), first.len() + 1);
        assert_eq!(
            after,
            SymbolIndex::default().search(&files, "parse config", 200)
        );
    }
}
