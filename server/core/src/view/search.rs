//! Tree search: the query is lower-cased and split on whitespace and every token must match the
//! entry's searchable text — pi by plain substring, omp by its word-aware fuzzy rule
//! ([`super::fuzzy`]). `nucleo-matcher` supplies the matched character positions that rich clients
//! highlight, and the ranking of pickers (the /branch user-message list, session and workspace
//! search).

use super::fuzzy;
use super::fuzzy_ascii::{AsciiWord, Verdict};
use crate::dialect::Dialect;
use nucleo_matcher::pattern::{Atom, AtomKind, CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};

/// A parsed tree-search query.
#[derive(Debug, Clone)]
pub struct Query {
    dialect: Dialect,
    tokens: Vec<String>,
    /// A vectorized finder per token, made once: pi's test runs over every shown text, and
    /// highlights look for every token in each row's text.
    token_finders: Vec<memchr::memmem::Finder<'static>>,
    /// omp: each token's normalized words (what its fuzzy rule matches one by one).
    words: Vec<Vec<char>>,
    /// omp: the same words prepared for normalized ASCII texts.
    ascii_words: Vec<AsciiWord>,
    /// omp: the same words as text, when they are all ASCII lower-case letters and digits (a
    /// quick yes for a text that is not ASCII).
    plain_words: Option<Vec<memchr::memmem::Finder<'static>>>,
}

impl Query {
    /// `query.toLowerCase().split(/\s+/).filter(Boolean)`.
    pub fn new(query: &str, dialect: Dialect) -> Query {
        let lower = query.to_lowercase();
        let tokens: Vec<String> = crate::js::words(&lower).map(str::to_owned).collect();
        let words = tokens
            .iter()
            .flat_map(|t| {
                fuzzy::normalize(t)
                    .split(' ')
                    .map(|w| w.chars().collect::<Vec<char>>())
                    .collect::<Vec<_>>()
            })
            .collect();
        let words: Vec<Vec<char>> = words;
        let ascii_words = words.iter().map(|w| AsciiWord::new(w)).collect();
        let plain_words = words
            .iter()
            .all(|w| {
                w.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            })
            .then(|| {
                words
                    .iter()
                    .map(|w| {
                        let word: String = w.iter().collect();
                        memchr::memmem::Finder::new(word.as_bytes()).into_owned()
                    })
                    .collect()
            });
        let token_finders = tokens
            .iter()
            .map(|t| memchr::memmem::Finder::new(t.as_bytes()).into_owned())
            .collect();
        Query {
            dialect,
            token_finders,
            tokens,
            words,
            ascii_words,
            plain_words,
        }
    }

    /// No tokens: everything matches.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// The tokens, lower-cased.
    pub fn tokens(&self) -> &[String] {
        &self.tokens
    }

    /// Whether a search string as the session's columns keep it (pi's lower-cased, omp's
    /// normalized: an ASCII text's words, see [`super::fuzzy_ascii`]) matches every token.
    pub(crate) fn matches_column(&self, text: &[u8]) -> bool {
        match self.dialect {
            Dialect::Pi => self.token_finders.iter().all(|t| t.find(text).is_some()),
            Dialect::Omp => self.omp_matches_normalized(text),
        }
    }

    /// omp's rule on a normalized ASCII text: every word by the rules.
    fn omp_matches_normalized(&self, text: &[u8]) -> bool {
        self.tokens.is_empty() || self.ascii_words.iter().all(|w| w.matches(text))
    }

    /// The terms a column string must all match (pi's tokens, omp's normalized words): a
    /// string matches the query exactly when it matches each of them, so what a search found
    /// for some of a query's terms holds for every query that has them.
    pub(crate) fn terms(&self) -> Vec<String> {
        match self.dialect {
            Dialect::Pi => self.tokens.clone(),
            Dialect::Omp if self.tokens.is_empty() => Vec::new(),
            Dialect::Omp => self.words.iter().map(|w| w.iter().collect()).collect(),
        }
    }

    /// Whether a column string matches term `i` of [`Query::terms`], and whether it matches
    /// loosely ([`Verdict`]: pi's substring test has no looser form).
    pub(crate) fn term_verdict(&self, i: usize, text: &[u8]) -> Verdict {
        match self.dialect {
            Dialect::Pi if self.token_finders[i].find(text).is_some() => Verdict::BOTH,
            Dialect::Pi => Verdict::NEITHER,
            Dialect::Omp => self.ascii_words[i].verdict(text),
        }
    }

    /// Whether a searchable text matches every token, by the dialect's rule.
    pub fn matches(&self, text: &str) -> bool {
        if self.tokens.is_empty() {
            return true;
        }
        match self.dialect {
            Dialect::Pi => {
                // ASCII text lower-cases byte by byte (into a buffer on the stack when it fits), and
                // holds no token with other characters.
                const STACK: usize = 1024;
                if text.is_ascii() && text.len() <= STACK {
                    let mut buf = [0u8; STACK];
                    let lower = &mut buf[..text.len()];
                    lower.copy_from_slice(text.as_bytes());
                    lower.make_ascii_lowercase();
                    let lower = &*lower;
                    return self.token_finders.iter().all(|t| t.find(lower).is_some());
                }
                let lower = text.to_lowercase();
                self.tokens.iter().all(|t| lower.contains(t.as_str()))
            }
            Dialect::Omp => {
                if text.is_ascii() {
                    let mut normalized = Vec::with_capacity(text.len());
                    crate::facts::search_words::normalize_ascii_into(
                        text.as_bytes(),
                        &mut normalized,
                    );
                    return self.omp_matches_normalized(&normalized);
                }
                // Every word of the query written as is in the text, in lower case: it sits inside
                // one word of the normalized text, so the substring rule matches it.
                if let Some(plain) = &self.plain_words {
                    if plain.iter().all(|w| w.find(text.as_bytes()).is_some()) {
                        return true;
                    }
                }
                // Every rule needs the word's first characters somewhere in the text (all but
                // the last two, which a text word it extends may lack; three with swaps), checked
                // for ASCII characters, and long words need most of theirs close together.
                let stream = fuzzy::word_stream(text);
                let mut present = [false; 128];
                for &c in &stream {
                    if let Some(slot) = present.get_mut(c as usize) {
                        *slot = true;
                    }
                }
                let possible = self.words.iter().zip(&self.ascii_words).all(|(w, a)| {
                    w[..a.required()]
                        .iter()
                        .all(|&c| !c.is_ascii() || present[c as usize])
                        && fuzzy::may_match_word(w, &stream)
                });
                if !possible {
                    return false;
                }
                let index = fuzzy::SearchIndex::new(text);
                self.tokens.iter().all(|t| index.is_match(t))
            }
        }
    }
}

/// Merges sorted character positions into half-open `[start, end)` ranges.
fn to_ranges(mut positions: Vec<u32>) -> Vec<(usize, usize)> {
    positions.sort_unstable();
    positions.dedup();
    let mut out: Vec<(usize, usize)> = Vec::new();
    for p in positions {
        let p = p as usize;
        match out.last_mut() {
            Some(last) if last.1 == p => last.1 = p + 1,
            _ => out.push((p, p + 1)),
        }
    }
    out
}

/// Finds highlight ranges; holds one `nucleo-matcher` matcher and its buffers for many texts.
pub struct Highlighter {
    matcher: Option<Matcher>,
    buf: Vec<char>,
    /// An ASCII text, lower-cased.
    lower: Vec<u8>,
}

impl Default for Highlighter {
    fn default() -> Self {
        Highlighter::new()
    }
}

impl Highlighter {
    /// A highlighter (the matcher is allocated on first fuzzy use).
    pub fn new() -> Highlighter {
        Highlighter {
            matcher: None,
            buf: Vec::new(),
            lower: Vec::new(),
        }
    }

    /// Character ranges of `text` that the query's tokens hit: substring hits (every occurrence
    /// of each token, case-insensitive), and for omp tokens that only match fuzzily the positions
    /// `nucleo-matcher` picks.
    pub fn ranges(&mut self, query: &Query, text: &str) -> Vec<(usize, usize)> {
        if query.is_empty() || text.is_empty() {
            return Vec::new();
        }
        if text.is_ascii() {
            return self.ascii_ranges(query, text);
        }
        self.char_ranges(query, text)
    }

    /// [`Highlighter::ranges`] of any text, character by character.
    fn char_ranges(&mut self, query: &Query, text: &str) -> Vec<(usize, usize)> {
        let lower: Vec<char> = text
            .chars()
            .map(|c| c.to_lowercase().next().unwrap_or(c))
            .collect();
        let mut positions: Vec<u32> = Vec::new();
        for token in &query.tokens {
            let needle: Vec<char> = token.chars().collect();
            let mut found = false;
            if !needle.is_empty() && needle.len() <= lower.len() {
                for start in 0..=lower.len() - needle.len() {
                    if lower[start..start + needle.len()] == needle[..] {
                        found = true;
                        positions.extend((start..start + needle.len()).map(|p| p as u32));
                    }
                }
            }
            if !found && query.dialect == Dialect::Omp {
                self.fuzzy_positions(token, text, &mut positions);
            }
        }
        to_ranges(positions)
    }

    /// [`Highlighter::ranges`] of an ASCII text: characters are bytes, and a token with other
    /// characters is not in it.
    fn ascii_ranges(&mut self, query: &Query, text: &str) -> Vec<(usize, usize)> {
        self.lower.clear();
        self.lower.extend_from_slice(text.as_bytes());
        self.lower.make_ascii_lowercase();
        let mut positions: Vec<u32> = Vec::new();
        for (token, finder) in query.tokens.iter().zip(&query.token_finders) {
            let mut found = false;
            if token.is_ascii() {
                let mut from = 0;
                while let Some(at) = finder.find(&self.lower[from..]) {
                    let start = from + at;
                    found = true;
                    positions.extend((start..start + token.len()).map(|p| p as u32));
                    from = start + 1;
                }
            }
            if !found && query.dialect == Dialect::Omp {
                self.fuzzy_positions(token, text, &mut positions);
            }
        }
        to_ranges(positions)
    }

    /// The character positions `nucleo-matcher` picks for a token that is not in the text as is.
    fn fuzzy_positions(&mut self, token: &str, text: &str, positions: &mut Vec<u32>) {
        let matcher = self
            .matcher
            .get_or_insert_with(|| Matcher::new(Config::DEFAULT));
        let atom = Atom::new(
            token,
            CaseMatching::Ignore,
            Normalization::Smart,
            AtomKind::Fuzzy,
            false,
        );
        let mut hits = Vec::new();
        if atom
            .indices(Utf32Str::new(text, &mut self.buf), matcher, &mut hits)
            .is_some()
        {
            positions.extend(hits);
        }
    }
}

/// [`Highlighter::ranges`] for one text.
pub fn match_ranges(query: &Query, text: &str) -> Vec<(usize, usize)> {
    Highlighter::new().ranges(query, text)
}

/// One ranked item: its position in the input and its score (higher is better).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked {
    /// Index into the items given.
    pub index: usize,
    /// Higher is better.
    pub score: f64,
}

/// Ranks texts against a query with `nucleo-matcher` (fuzzy, smart case), best first; ties keep
/// input order. An empty query keeps every item in order.
pub fn rank_nucleo<S: AsRef<str>>(texts: &[S], query: &str) -> Vec<Ranked> {
    if crate::js::trim(query).is_empty() {
        return (0..texts.len())
            .map(|index| Ranked { index, score: 0.0 })
            .collect();
    }
    let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
    let mut matcher = Matcher::new(Config::DEFAULT);
    let mut buf = Vec::new();
    let mut out: Vec<Ranked> = texts
        .iter()
        .enumerate()
        .filter_map(|(index, t)| {
            pattern
                .score(Utf32Str::new(t.as_ref(), &mut buf), &mut matcher)
                .map(|s| Ranked {
                    index,
                    score: f64::from(s),
                })
        })
        .collect();
    out.sort_by(|a, b| {
        b.score
            .partial_cmp(&a.score)
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    out
}

/// Ranks texts as the dialect's pickers do: omp's `fuzzyRank` (lower omp score first, reported
/// negated so higher is better), nucleo for pi.
pub fn rank<S: AsRef<str>>(texts: &[S], query: &str, dialect: Dialect) -> Vec<Ranked> {
    match dialect {
        Dialect::Pi => rank_nucleo(texts, query),
        Dialect::Omp => {
            if crate::js::trim(query).is_empty() {
                return (0..texts.len())
                    .map(|index| Ranked { index, score: 0.0 })
                    .collect();
            }
            let mut out: Vec<Ranked> = texts
                .iter()
                .enumerate()
                .filter_map(|(index, t)| {
                    let m = fuzzy::fuzzy_match(query, t.as_ref());
                    m.matches.then_some(Ranked {
                        index,
                        score: -m.score,
                    })
                })
                .collect();
            out.sort_by(|a, b| {
                b.score
                    .partial_cmp(&a.score)
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
            out
        }
    }
}

/// The part of a first search that does not depend on the query, done ahead: each full chunk's
/// search strings laid out end to end (60–80% of a first search at 100k and 1M entries).
/// Made from a session and run on any thread (a background one, once the session is open); a
/// search that comes first does the work itself, and the other waits for it.
pub struct SearchWarmUp {
    columns: crate::session::columns::ViewColumns,
    dialect: Dialect,
}

impl SearchWarmUp {
    /// Shares the session's view columns (one reference per 4096 entries).
    pub fn new(session: &crate::session::Session) -> SearchWarmUp {
        SearchWarmUp {
            columns: session.view_columns().clone(),
            dialect: session.dialect(),
        }
    }

    /// Lays the search strings out.
    pub fn run(self) {
        self.columns.warm_search_texts(self.dialect);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pi_is_substring_and_omp_is_fuzzy() {
        let pi = Query::new("Number  3", Dialect::Pi);
        assert_eq!(pi.tokens(), ["number", "3"]);
        assert!(pi.matches("question number 13"));
        assert!(!pi.matches("question numbr 3"));
        let omp = Query::new("numbr 3", Dialect::Omp);
        assert!(omp.matches("question number 3"));
        assert!(Query::new("   ", Dialect::Pi).matches("anything"));
    }

    #[test]
    fn pi_ascii_matching_equals_the_unicode_lower_casing() {
        let texts = [
            "User: Parse the CONFIG file",
            "assistant: naïve Straße",
            "İstanbul DOTTED",
            "plain ascii text with Parse",
            "",
        ];
        for query in ["parse config", "straße", "i̇stanbul", "DOTTED", "t w", "zz"] {
            let q = Query::new(query, Dialect::Pi);
            for text in texts {
                let lower = text.to_lowercase();
                let expected = q.tokens().iter().all(|t| lower.contains(t.as_str()));
                assert_eq!(q.matches(text), expected, "{query:?} in {text:?}");
                let long = format!("{} {text}", "x".repeat(2000));
                let lower = long.to_lowercase();
                let expected = q.tokens().iter().all(|t| lower.contains(t.as_str()));
                assert_eq!(q.matches(&long), expected, "{query:?} in a long {text:?}");
            }
        }
    }

    /// A deterministic xorshift stream: each call gives a number below `n`.
    fn numbers() -> impl FnMut(usize) -> usize {
        crate::test_sessions::numbers(0x5851_f42d_4c95_7f2du64)
    }

    /// Queries for the omp comparisons: words of the generated sessions, typos, one and two
    /// letters, initials, letter–digit swaps, camelCase, paths, punctuation only, non-ASCII.
    const ODD_QUERIES: [&str; 34] = [
        "parse config",
        "error",
        "fn main",
        "a b c",
        "p",
        "pa",
        "par",
        "parxy",
        "confg",
        "cnfig",
        "PaRsE CONFIG",
        "tool result",
        "brnch smmry",
        "qn",
        "x2",
        "ut8f",
        "utf8",
        "ftu8",
        "parseConfig",
        "HTMLParser",
        "src/reader.rs",
        "\"quoted phrase\"",
        "-",
        "  ",
        "a-b",
        "ü",
        "é",
        "naïve",
        "İstanbul",
        "straße",
        "σοφια",
        "日本",
        "abcü",
        "e\u{301}",
    ];

    /// omp's filter answers as the fuzzy rule run token by token, over the searchable texts of
    /// the generated sessions and the fixtures, and over random texts with non-ASCII letters.
    #[test]
    fn omp_matching_equals_the_fuzzy_rule() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        // Every text of the fixtures, every fifth of the generated sessions.
        let mut texts = super::super::testkit::sample_texts(dir.path(), 5, |model, pos| {
            model.search(pos).into_owned()
        });
        let mut next = numbers();
        let alphabet: Vec<char> = "aeioprscfgnPCÜüéİß日σ2 -_./".chars().collect();
        for _ in 0..500 {
            let len = next(60);
            texts.push((0..len).map(|_| alphabet[next(alphabet.len())]).collect());
        }
        assert!(texts.len() > 2000, "{}", texts.len());
        let mut matched = 0;
        for text in &texts {
            let index = fuzzy::SearchIndex::new(text);
            for q in ODD_QUERIES {
                let query = Query::new(q, Dialect::Omp);
                let expected = query.tokens().iter().all(|t| index.matches(t).matches);
                assert_eq!(query.matches(text), expected, "{q:?} in {text:?}");
                matched += usize::from(expected);
            }
        }
        assert!(matched > 1000, "{matched}");
    }

    /// omp's filter over the search strings its columns keep end to end answers as the fuzzy
    /// rule on each text, with labels (which stay on the per-text path), non-ASCII texts,
    /// camelCase and appended entries.
    #[test]
    fn omp_column_strings_answer_as_the_fuzzy_rule() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let mut session =
            crate::test_sessions::generated_session(dir.path(), Dialect::Omp, 4000, 5);
        crate::test_sessions::append_labeled(&mut session, 4300, |n| match n % 3 {
            0 => format!("İSTANBUL ΣΟΦΙΑ Straße {n} parseConfig"),
            1 => format!("HTMLParser the par {n} cnfg"),
            _ => format!("plain words {n} utf8 ftu8"),
        });
        let model = super::super::flatten::Model::build(&session, None);
        let mut from_columns = 0;
        for q in ODD_QUERIES {
            let query = Query::new(q, Dialect::Omp);
            for pos in (0..model.nodes.len()).step_by(7) {
                let entry = model.key_entry[model.key_at(pos)] as usize;
                from_columns +=
                    usize::from(model.columns.search_text(entry, Dialect::Omp).is_some());
                let text = model.search(pos);
                let expected = query
                    .tokens()
                    .iter()
                    .all(|t| fuzzy::fuzzy_match(t, &text).matches);
                assert_eq!(
                    model.search_matches(pos, &query),
                    expected,
                    "{q:?} at {pos}"
                );
            }
        }
        assert!(from_columns > 15_000, "{from_columns}");
    }

    /// Highlights of ASCII texts, read as bytes, are those found character by character, over the
    /// row texts of the generated sessions and the fixtures and over random texts.
    #[test]
    fn ascii_highlights_equal_the_character_ones() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let mut texts = super::super::testkit::sample_texts(dir.path(), 10, |model, pos| {
            model.row_text(pos).as_str().to_owned()
        });
        let mut next = numbers();
        let alphabet: Vec<char> = "aAeEpPrscfgn2 -_./".chars().collect();
        for _ in 0..500 {
            let len = next(60);
            texts.push((0..len).map(|_| alphabet[next(alphabet.len())]).collect());
        }
        let mut highlighter = Highlighter::new();
        let mut hits = 0;
        for dialect in [Dialect::Pi, Dialect::Omp] {
            for q in ODD_QUERIES.iter().chain(&["aa", "pe", "e e", "user", "SE"]) {
                let query = Query::new(q, dialect);
                for text in texts.iter().filter(|t| t.is_ascii()) {
                    let expected = highlighter.char_ranges(&query, text);
                    hits += usize::from(!expected.is_empty());
                    assert_eq!(
                        highlighter.ranges(&query, text),
                        expected,
                        "{q:?} in {text:?}"
                    );
                }
            }
        }
        assert!(hits > 1000, "{hits}");
    }

    #[test]
    fn ranges_and_ranking() {
        let q = Query::new("num", Dialect::Pi);
        assert_eq!(
            match_ranges(&q, "a number, a Numeral"),
            vec![(2, 5), (12, 15)]
        );
        let q = Query::new("nbr", Dialect::Omp);
        assert!(!match_ranges(&q, "number").is_empty());
        let ranked = rank_nucleo(&["fix the parser", "unrelated", "parser"], "parser");
        assert_eq!(ranked.len(), 2);
        let ranked = rank(&["alpha beta", "beta"], "beta", Dialect::Omp);
        assert_eq!(ranked.first().map(|r| r.index), Some(1));
    }
}
