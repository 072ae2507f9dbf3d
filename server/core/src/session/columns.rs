//! What the `/tree` view reads of each entry (its facts with their filter flags, and its id),
//! kept by the session in chunks that tree models share instead of copying. A model of a
//! 100k-entry session takes one reference per 4096 entries, where copying took two reference
//! counts per entry, each a cache miss on memory the open touched long before.

use crate::dialect::Dialect;
use crate::entry::Entry;
use crate::facts::search_words::normalize_ascii_into;
use crate::facts::EntryFacts;
use crate::facts::Scanned;
use std::sync::{Arc, OnceLock};

/// Entries per chunk.
const CHUNK: usize = 4096;

/// An append-only list whose chunks are shared between clones: a clone costs one reference count
/// per chunk; pushing onto a shared last chunk copies that chunk once.
#[derive(Debug, Clone)]
pub(crate) struct Chunked<T> {
    chunks: Vec<Arc<Vec<T>>>,
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Chunked { chunks: Vec::new() }
    }
}

impl<T: Clone> Chunked<T> {
    pub fn push(&mut self, value: T) {
        match self.chunks.last_mut() {
            Some(last) if last.len() < CHUNK => Arc::make_mut(last).push(value),
            _ => {
                let mut chunk = Vec::with_capacity(CHUNK);
                chunk.push(value);
                self.chunks.push(Arc::new(chunk));
            }
        }
    }
}

impl<T> Chunked<T> {
    pub fn get(&self, index: usize) -> Option<&T> {
        self.chunks.get(index / CHUNK)?.get(index % CHUNK)
    }

    /// The chunks, in order.
    pub fn chunks(&self) -> impl ExactSizeIterator<Item = &[T]> {
        self.chunks.iter().map(|c| &c[..])
    }

    pub fn len(&self) -> usize {
        match self.chunks.last() {
            Some(last) => (self.chunks.len() - 1) * CHUNK + last.len(),
            None => 0,
        }
    }
}

/// One tool call of an entry: its id's [`call_hash`], the entry, its place among the entry's calls.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CallRecord {
    pub hash: u64,
    pub entry: u32,
    pub call: u32,
}

/// The view's columns of a session, one item per entry, in entry order.
#[derive(Debug, Clone, Default)]
pub(crate) struct ViewColumns {
    /// Set from the scan when it made facts for the session's dialect, else on first use.
    facts: Chunked<OnceLock<Scanned>>,
    /// Each entry's [`Scanned::flags`] ([`FLAGS_UNKNOWN`]: its facts were not made at the push),
    /// so a model gathers them from 2 bytes an entry instead of reading every entry's facts.
    flags: Chunked<u16>,
    ids: Chunked<Option<Arc<str>>>,
    /// Every tool call of the entries, so a call is found by its id's hash without reading any
    /// entry's facts; complete unless `calls_unknown`.
    calls: Chunked<CallRecord>,
    /// Some entry came without facts, so its calls are not in `calls`.
    calls_unknown: bool,
    /// The search strings of each full chunk end to end, made on the first search.
    texts: Vec<Arc<OnceLock<Option<SearchTexts>>>>,
}

/// The search strings of one chunk's entries, laid end to end (pi's lower-cased, as its test
/// reads them; omp's normalized into its words, which its rules read, when the string is ASCII):
/// a search reads them in order instead of following two pointers per entry into memory the open
/// wrote long before, and omp's does not split every text into words again.
#[derive(Debug)]
struct SearchTexts {
    bytes: Vec<u8>,
    /// Where each entry's string ends in `bytes`, [`NOT_LAID_OUT`] set for an entry whose
    /// string is not there (omp's non-ASCII strings, read from the facts).
    ends: Vec<u32>,
}

/// Marks an entry of [`SearchTexts::ends`] whose string is not laid out.
const NOT_LAID_OUT: u32 = 1 << 31;

impl SearchTexts {
    /// The string of the chunk's entry `at`, when it is laid out.
    fn string(&self, at: usize) -> Option<&[u8]> {
        let end = *self.ends.get(at)?;
        if end & NOT_LAID_OUT != 0 {
            return None;
        }
        let start = match at {
            0 => 0,
            _ => self.ends[at - 1] & !NOT_LAID_OUT,
        };
        self.bytes.get(start as usize..end as usize)
    }
}

impl ViewColumns {
    /// Adds the next entry, taking the facts its scan made (when made for `dialect`); facts it
    /// lacks are made now when `make` (one appended entry), else on first use.
    pub fn push(&mut self, entry: &mut Entry, dialect: Dialect, make: bool) {
        let index = self.ids.len() as u32;
        let scanned = match entry.facts.take().filter(|s| s.dialect == dialect) {
            Some(scanned) => Some(scanned),
            None if make => Some(self::make(entry, dialect)),
            None => None,
        };
        let slot = OnceLock::new();
        self.flags
            .push(scanned.as_ref().map_or(FLAGS_UNKNOWN, |s| s.flags));
        match scanned {
            Some(s) => {
                for (call, &hash) in s.call_hashes.iter().enumerate() {
                    self.calls.push(CallRecord {
                        hash,
                        entry: index,
                        call: call as u32,
                    });
                }
                let _ = slot.set(s);
            }
            None => self.calls_unknown = true,
        }
        self.facts.push(slot);
        self.ids.push(entry.id.clone());
        if self.ids.len() % CHUNK == 0 {
            self.texts.push(Arc::default());
        }
    }

    /// Entry `index`'s search string (without its label) — for pi lower-cased as `toLowerCase`
    /// does, for omp an ASCII string normalized (`normalize`'s words, one space between them) —
    /// when its chunk is full and every entry of it has its facts for `dialect` (else, and for
    /// omp's non-ASCII strings, the caller reads the facts).
    pub fn search_text(&self, index: usize, dialect: Dialect) -> Option<&[u8]> {
        let chunk = index / CHUNK;
        let texts = self
            .texts
            .get(chunk)?
            .get_or_init(|| self.search_texts(chunk, dialect))
            .as_ref()?;
        texts.string(index % CHUNK)
    }

    /// How many chunks are full (their search strings can be laid out).
    pub fn full_chunks(&self) -> usize {
        self.texts.len()
    }

    /// `answer` for each laid-out search string of the full chunks `chunks.0..chunks.1`, given
    /// the entry's index and string, entry by entry in file order (`not_laid_out` for an entry
    /// whose string is not laid out: the caller reads the facts). A search that tests most
    /// entries reads the strings as they lie rather than following the rows, one cache miss
    /// each.
    pub fn answers_by_entry(
        &self,
        dialect: Dialect,
        chunks: (usize, usize),
        not_laid_out: u8,
        answer: impl Fn(usize, &[u8]) -> u8,
    ) -> Vec<u8> {
        let mut out = Vec::with_capacity(chunks.1.saturating_sub(chunks.0) * CHUNK);
        for chunk in chunks.0..chunks.1 {
            let Some(slot) = self.texts.get(chunk) else {
                break;
            };
            match slot.get_or_init(|| self.search_texts(chunk, dialect)) {
                None => out.resize(out.len() + CHUNK, not_laid_out),
                Some(texts) => out.extend((0..texts.ends.len()).map(|at| match texts.string(at) {
                    Some(text) => answer(chunk * CHUNK + at, text),
                    None => not_laid_out,
                })),
            }
        }
        out
    }

    /// Lays out the search strings of every full chunk whose entries all have their facts for
    /// `dialect` (a chunk still missing some is left to the first search, which makes them).
    pub fn warm_search_texts(&self, dialect: Dialect) {
        for (chunk, (texts, slots)) in self.texts.iter().zip(self.facts.chunks()).enumerate() {
            let ready = slots
                .iter()
                .all(|slot| slot.get().is_some_and(|s| s.dialect == dialect));
            if ready {
                texts.get_or_init(|| self.search_texts(chunk, dialect));
            }
        }
    }

    fn search_texts(&self, chunk: usize, dialect: Dialect) -> Option<SearchTexts> {
        let slots = self.facts.chunks().nth(chunk)?;
        let mut bytes = Vec::new();
        let mut ends = Vec::with_capacity(slots.len());
        for slot in slots {
            let scanned = slot.get().filter(|s| s.dialect == dialect)?;
            let text = &*scanned.facts.search;
            let mut mark = 0;
            match dialect {
                Dialect::Omp if text.is_ascii() => {
                    normalize_ascii_into(text.as_bytes(), &mut bytes)
                }
                Dialect::Omp => mark = NOT_LAID_OUT,
                Dialect::Pi if text.is_ascii() => {
                    let from = bytes.len();
                    bytes.extend_from_slice(text.as_bytes());
                    bytes[from..].make_ascii_lowercase();
                }
                Dialect::Pi => bytes.extend_from_slice(text.to_lowercase().as_bytes()),
            }
            let end = u32::try_from(bytes.len())
                .ok()
                .filter(|&end| end < NOT_LAID_OUT)?;
            ends.push(end | mark);
        }
        Some(SearchTexts { bytes, ends })
    }

    /// Every tool call, when every entry's calls are known.
    pub fn calls(&self) -> Option<&Chunked<CallRecord>> {
        (!self.calls_unknown).then_some(&self.calls)
    }

    /// The facts of entry `index`, made now from `entry` (and kept) when the scan did not make them.
    pub fn facts_or_make(&self, index: usize, entry: &Entry, dialect: Dialect) -> &Scanned {
        match self.facts.get(index) {
            Some(slot) => slot.get_or_init(|| make(entry, dialect)),
            None => empty(),
        }
    }

    /// Entry `index`'s [`Scanned::flags`], its facts made now (and kept) when the scan did not.
    pub fn static_flags(&self, index: usize, entry: &Entry, dialect: Dialect) -> u16 {
        match self.flags.get(index) {
            Some(&flags) if flags != FLAGS_UNKNOWN => flags,
            _ => self.facts_or_make(index, entry, dialect).flags,
        }
    }

    /// How many of `entries` have static flags that `pass` accepts, read from the flags column
    /// (facts made for the entries the scan did not make them for).
    pub fn count_static(
        &self,
        entries: &[Entry],
        dialect: Dialect,
        pass: impl Fn(u16) -> bool,
    ) -> usize {
        let mut count = 0;
        let mut index = 0;
        for chunk in self.flags.chunks() {
            for &flags in chunk {
                let flags = match flags {
                    FLAGS_UNKNOWN => match entries.get(index) {
                        Some(entry) => self.static_flags(index, entry, dialect),
                        None => flags,
                    },
                    f => f,
                };
                count += usize::from(pass(flags));
                index += 1;
            }
        }
        count
            + entries[index.min(entries.len())..]
                .iter()
                .enumerate()
                .filter(|(i, e)| pass(self.static_flags(index + i, e, dialect)))
                .count()
    }

    /// The facts of entry `index`, as made so far (a model makes those of every entry it holds
    /// while it is built).
    pub fn facts(&self, index: usize) -> &Arc<EntryFacts> {
        match self.facts.get(index).and_then(OnceLock::get) {
            Some(scanned) => &scanned.facts,
            None => &empty().facts,
        }
    }

    /// The facts of entry `index` when they are made (to carry into a new session's entry).
    pub fn scanned(&self, index: usize) -> Option<&Scanned> {
        self.facts.get(index).and_then(OnceLock::get)
    }

    /// The id of entry `index`.
    pub fn id(&self, index: usize) -> Option<&Arc<str>> {
        self.ids.get(index).and_then(Option::as_ref)
    }
}

/// A [`ViewColumns::flags`] item whose entry's facts are not made yet (no flag set is all ones:
/// the category takes values up to 5).
const FLAGS_UNKNOWN: u16 = u16::MAX;

/// The facts of an entry, made from its JSON.
fn make(entry: &Entry, dialect: Dialect) -> Scanned {
    let facts = crate::facts::entry_facts(&entry.json(), dialect);
    Scanned::new(facts, entry.kind.is_none(), dialect)
}

/// What an index outside the columns reads (a session's columns hold every entry, so this only
/// turns a mismatch into an empty row rather than a panic).
fn empty() -> &'static Scanned {
    static EMPTY: OnceLock<Scanned> = OnceLock::new();
    EMPTY.get_or_init(|| Scanned::new(EntryFacts::empty(), false, Dialect::Pi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_shared_until_a_clone_pushes() {
        let mut list: Chunked<u32> = Chunked::default();
        for i in 0..(CHUNK as u32 * 2 + 5) {
            list.push(i);
        }
        let snapshot = list.clone();
        assert!(Arc::ptr_eq(&list.chunks[0], &snapshot.chunks[0]));
        list.push(7);
        // Full chunks stay shared; the last one was copied before the push.
        assert!(Arc::ptr_eq(&list.chunks[1], &snapshot.chunks[1]));
        assert!(!Arc::ptr_eq(&list.chunks[2], &snapshot.chunks[2]));
        assert_eq!(snapshot.len(), CHUNK * 2 + 5);
        assert_eq!(list.len(), CHUNK * 2 + 6);
        assert_eq!(snapshot.get(CHUNK * 2 + 5), None);
        assert_eq!(list.get(CHUNK * 2 + 5), Some(&7));
        assert_eq!(list.get(CHUNK + 3), Some(&(CHUNK as u32 + 3)));
    }

    /// Each laid-out string is the entry's search string in the form the dialect's test reads:
    /// pi's lower-cased, omp's normalized into words when it is ASCII and not laid out (read
    /// from the facts) when it is not, including the strings after one that is not.
    #[test]
    fn laid_out_strings_are_the_search_strings_in_the_dialects_form() {
        let dir = tempfile::tempdir().unwrap();
        for dialect in [Dialect::Pi, Dialect::Omp] {
            let mut session =
                crate::test_sessions::generated_session(dir.path(), dialect, CHUNK - 300, 5);
            crate::test_sessions::append_labeled(&mut session, CHUNK + 10, |n| match n % 4 {
                0 => format!("İSTANBUL Straße {n} parseConfig"),
                1 => format!("HTMLParser--the  PAR {n}"),
                2 => format!("naïve {n}"),
                _ => format!("plain_words {n} utf8"),
            });
            let columns = session.view_columns();
            let (mut ascii, mut other) = (0, 0);
            for (i, entry) in session.entries()[..CHUNK].iter().enumerate() {
                let text = &*columns.facts_or_make(i, entry, dialect).facts.search;
                let expected = match dialect {
                    Dialect::Pi => Some(text.to_lowercase()),
                    Dialect::Omp if text.is_ascii() => {
                        Some(crate::facts::search_words::normalize(text))
                    }
                    Dialect::Omp => None,
                };
                ascii += usize::from(text.is_ascii());
                other += usize::from(!text.is_ascii());
                let laid_out = columns.search_text(i, dialect);
                assert_eq!(
                    laid_out.map(|b| String::from_utf8_lossy(b).into_owned()),
                    expected,
                    "{dialect:?} entry {i}: {text:?}"
                );
            }
            assert!(ascii > 3000 && other > 100, "{ascii} ASCII, {other} not");
        }
    }

    /// The warm-up lays out exactly what a first search would (and the search answers the
    /// same), and leaves a chunk whose facts are not all made to that search.
    #[test]
    fn search_strings_laid_out_ahead_are_those_a_search_makes() {
        use crate::view::{compute_rows, SearchWarmUp, ViewState};
        let dir = tempfile::tempdir().unwrap();
        for dialect in [Dialect::Pi, Dialect::Omp] {
            let session =
                crate::test_sessions::generated_session(dir.path(), dialect, CHUNK + 500, 5);
            let texts = |s: &crate::session::Session| -> Vec<Option<Vec<u8>>> {
                (0..CHUNK + 500)
                    .map(|i| s.view_columns().search_text(i, dialect).map(<[u8]>::to_vec))
                    .collect()
            };
            let search = |s: &crate::session::Session| {
                let state = ViewState {
                    search: "cache entry".to_owned(),
                    ..ViewState::default()
                };
                serde_json::to_value(compute_rows(s, &state, None)).unwrap()
            };
            let cold =
                crate::session::Session::open(session.path().unwrap(), Default::default()).unwrap();
            let (cold_search, cold_texts) = (search(&cold), texts(&cold));
            SearchWarmUp::new(&session).run();
            let columns = session.view_columns();
            assert_eq!(columns.texts.len(), 1);
            assert!(columns.texts[0].get().is_some_and(Option::is_some));
            assert_eq!(texts(&session), cold_texts);
            assert!(cold_texts[..CHUNK].iter().all(Option::is_some));
            assert_eq!(search(&session), cold_search);

            // Facts not made at the open: the warm-up leaves the chunk alone.
            let options = crate::session::OpenOptions {
                view_facts: false,
                ..Default::default()
            };
            let lazy = crate::session::Session::open(session.path().unwrap(), options).unwrap();
            SearchWarmUp::new(&lazy).run();
            assert!(lazy.view_columns().texts[0].get().is_none());
            assert_eq!(search(&lazy), cold_search);
        }
    }
}
