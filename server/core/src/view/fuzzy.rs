//! omp's word-aware fuzzy matcher (`pi-tui src/fuzzy.ts`), rule for rule: text and query are
//! normalized (camelCase split, lower-cased, runs of non-letters/digits → one space); a token
//! matches when it starts a word in the space-less text, equals / prefixes / nearly-prefixes /
//! is contained in a word, is a tight subsequence of a word, is the initials of nearby words, or
//! does any of that after swapping one adjacent letter–digit pair. Lower score = better.
//! Positions are counted in characters (omp counts UTF-16 units; only tie-break scores differ).

/// Result of matching one query against one text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FuzzyMatch {
    /// Whether every token matched.
    pub matches: bool,
    /// Lower is better.
    pub score: f64,
}

const NO: FuzzyMatch = FuzzyMatch {
    matches: false,
    score: 0.0,
};
const ALPHANUMERIC_SWAP_PENALTY: f64 = 5.0;
const COMPACT_PHRASE_BONUS: f64 = 1200.0;
const PHRASE_BONUS: f64 = 1000.0;
const MIN_SHADOW_RESCAN_LENGTH: usize = 3;

use crate::facts::search_words::is_mark;
pub use crate::facts::search_words::normalize;

struct Word {
    text: Vec<char>,
    index: usize,
    ordinal: usize,
}

/// A text prepared for repeated matching (`FuzzyText`).
pub struct SearchIndex {
    normalized: Vec<char>,
    compact: Vec<char>,
    /// Where each word starts in `compact`, ascending (pushed in order; looked up by bisection).
    compact_word_starts: Vec<usize>,
    words: Vec<Word>,
}

impl SearchIndex {
    /// Builds the index of a text.
    pub fn new(text: &str) -> SearchIndex {
        let normalized: Vec<char> = normalize(text).chars().collect();
        let mut words = Vec::new();
        let mut compact_word_starts = Vec::new();
        let mut compact = Vec::with_capacity(normalized.len());
        if !normalized.is_empty() {
            let (mut index, mut ordinal) = (0, 0);
            for word in normalized.split(|&c| c == ' ') {
                compact_word_starts.push(compact.len());
                compact.extend_from_slice(word);
                words.push(Word {
                    text: word.to_vec(),
                    index,
                    ordinal,
                });
                index += word.len() + 1;
                ordinal += 1;
            }
        }
        SearchIndex {
            normalized,
            compact,
            compact_word_starts,
            words,
        }
    }

    /// Matches a query (space-separated tokens; all must match).
    pub fn matches(&self, query: &str) -> FuzzyMatch {
        let q = normalize(query);
        if q.is_empty() {
            return FuzzyMatch {
                matches: true,
                score: 0.0,
            };
        }
        self.match_prepared(&q)
    }

    /// Whether a query matches, without its score: the phrase bonuses are skipped and each token
    /// stops at its first match (what the tree filter needs of every text).
    pub fn is_match(&self, query: &str) -> bool {
        let q = normalize(query);
        if q.is_empty() {
            return true;
        }
        if self.words.is_empty() {
            return false;
        }
        let q: Vec<char> = q.chars().collect();
        q.split(|&c| c == ' ').all(|token| {
            self.token_matches(token)
                || swap_variants(token)
                    .into_iter()
                    .any(|variant| self.token_matches(&variant))
        })
    }

    /// Whether [`SearchIndex::score_token_direct`] would find a match.
    fn token_matches(&self, token: &[char]) -> bool {
        token.is_empty()
            || self.find_compact_word_start(token).is_some()
            || self
                .words
                .iter()
                .any(|word| score_against_word(token, word).is_some())
            || self.score_acronym(token).is_some()
    }

    fn match_prepared(&self, normalized_query: &str) -> FuzzyMatch {
        if self.words.is_empty() {
            return NO;
        }
        let q: Vec<char> = normalized_query.chars().collect();
        let compact_q: Vec<char> = q.iter().copied().filter(|&c| c != ' ').collect();
        let mut total = 0.0;
        if let Some(at) = find_word_boundary_phrase(&self.normalized, &q) {
            total -= PHRASE_BONUS;
            total += at as f64 * 0.01;
        }
        if let Some(at) = self.find_compact_word_start(&compact_q) {
            total -= COMPACT_PHRASE_BONUS;
            total += at as f64 * 0.01;
        }
        for token in q.split(|&c| c == ' ') {
            let m = self.score_token(token);
            if !m.matches {
                return NO;
            }
            total += m.score;
        }
        FuzzyMatch {
            matches: true,
            score: total,
        }
    }

    fn find_compact_word_start(&self, needle: &[char]) -> Option<usize> {
        if needle.is_empty() {
            return None;
        }
        let first = find(&self.compact, needle, 0)?;
        if self.compact_word_starts.binary_search(&first).is_ok() {
            return Some(first);
        }
        if needle.len() < MIN_SHADOW_RESCAN_LENGTH {
            return None;
        }
        let mut at = find(&self.compact, needle, first + 1);
        while let Some(a) = at {
            if self.compact_word_starts.binary_search(&a).is_ok() {
                return Some(a);
            }
            at = find(&self.compact, needle, a + 1);
        }
        None
    }

    fn score_token(&self, token: &[char]) -> FuzzyMatch {
        let best = self.score_token_direct(token);
        if best.matches {
            return best;
        }
        let mut best = best;
        for variant in swap_variants(token) {
            let m = self.score_token_direct(&variant);
            if !m.matches {
                continue;
            }
            let score = m.score + ALPHANUMERIC_SWAP_PENALTY;
            if !best.matches || score < best.score {
                best = FuzzyMatch {
                    matches: true,
                    score,
                };
            }
        }
        best
    }

    fn score_token_direct(&self, token: &[char]) -> FuzzyMatch {
        if token.is_empty() {
            return FuzzyMatch {
                matches: true,
                score: 0.0,
            };
        }
        let mut best: Option<FuzzyMatch> =
            self.find_compact_word_start(token).map(|i| FuzzyMatch {
                matches: true,
                score: with_position(-140.0, i),
            });
        for word in &self.words {
            if let Some(m) = score_against_word(token, word) {
                if best.is_none_or(|b| m.score < b.score) {
                    best = Some(m);
                }
            }
        }
        if let Some(m) = self.score_acronym(token) {
            if best.is_none_or(|b| m.score < b.score) {
                best = Some(m);
            }
        }
        best.unwrap_or(NO)
    }

    fn score_acronym(&self, token: &[char]) -> Option<FuzzyMatch> {
        if token.len() < 2 || token.len() > 4 || self.words.is_empty() {
            return None;
        }
        let mut qi = 0;
        let mut first: Option<(usize, usize)> = None;
        let mut last = 0;
        for word in &self.words {
            if word.text.first() != Some(&token[qi]) {
                continue;
            }
            if first.is_none() {
                first = Some((word.ordinal, word.index));
            }
            last = word.ordinal;
            qi += 1;
            if qi == token.len() {
                break;
            }
        }
        let (first_ordinal, first_index) = first?;
        if qi < token.len() {
            return None;
        }
        let span = last - first_ordinal + 1;
        if span > token.len() + 2 {
            return None;
        }
        Some(FuzzyMatch {
            matches: true,
            score: with_position(
                -30.0 + span as f64 * 4.0 - token.len() as f64 * 2.0,
                first_index,
            ),
        })
    }
}

fn with_position(score: f64, index: usize) -> f64 {
    score + index as f64 * 0.01
}

fn find(hay: &[char], needle: &[char], from: usize) -> Option<usize> {
    if needle.is_empty() {
        return Some(from.min(hay.len()));
    }
    if needle.len() > hay.len() {
        return None;
    }
    (from..=hay.len() - needle.len()).find(|&i| hay[i..i + needle.len()] == *needle)
}

fn is_boundary_phrase(normalized: &[char], index: usize, len: usize) -> bool {
    let before = index == 0 || normalized[index - 1] == ' ';
    let after = index + len == normalized.len() || normalized.get(index + len) == Some(&' ');
    before && after
}

fn find_word_boundary_phrase(normalized: &[char], phrase: &[char]) -> Option<usize> {
    if phrase.is_empty() {
        return None;
    }
    let first = find(normalized, phrase, 0)?;
    if is_boundary_phrase(normalized, first, phrase.len()) {
        return Some(first);
    }
    if first == 0 || normalized[first - 1] == ' ' || phrase.len() < MIN_SHADOW_RESCAN_LENGTH {
        return None;
    }
    let mut at = find(normalized, phrase, first + 1);
    while let Some(a) = at {
        if is_boundary_phrase(normalized, a, phrase.len()) {
            return Some(a);
        }
        at = find(normalized, phrase, a + 1);
    }
    None
}

fn score_characters(query: &[char], text: &[char]) -> Option<(f64, usize)> {
    if query.is_empty() {
        return Some((0.0, 0));
    }
    if query.len() > text.len() {
        return None;
    }
    let (mut qi, mut score) = (0, 0.0);
    let (mut first, mut last): (Option<usize>, Option<usize>) = (None, None);
    let mut consecutive = 0.0;
    for (i, &c) in text.iter().enumerate() {
        if qi >= query.len() {
            break;
        }
        if c == query[qi] {
            if first.is_none() {
                first = Some(i);
            }
            if last.is_some() && last == i.checked_sub(1) {
                consecutive += 1.0;
                score -= consecutive * 5.0;
            } else {
                consecutive = 0.0;
                if let Some(l) = last {
                    score += (i - l - 1) as f64 * 2.0;
                }
            }
            score += i as f64 * 0.1;
            last = Some(i);
            qi += 1;
        }
    }
    if qi < query.len() {
        return None;
    }
    let span = match (first, last) {
        (Some(f), Some(l)) => l - f + 1,
        _ => 0,
    };
    Some((score, span))
}

fn score_against_word(token: &[char], word: &Word) -> Option<FuzzyMatch> {
    let w = &word.text;
    let hit = |score: f64| {
        Some(FuzzyMatch {
            matches: true,
            score: with_position(score, word.index),
        })
    };
    if w.as_slice() == token {
        return hit(-200.0);
    }
    if w.starts_with(token) {
        return hit(-170.0 + (w.len() - token.len()) as f64 * 0.5);
    }
    if token.starts_with(w) && token.len() - w.len() <= 2 {
        return hit(-150.0 + (token.len() - w.len()) as f64);
    }
    if let Some(i) = find(w, token, 0) {
        return hit(-20.0 + i as f64);
    }
    let (score, span) = score_characters(token, w)?;
    let max_span = (token.len() + 2).max((token.len() as f64 * 1.8).ceil() as usize);
    if span > max_span {
        return None;
    }
    hit(-40.0 + score)
}

/// A character or a byte, as the swap rule reads it.
pub(super) trait SwapUnit: Copy + PartialEq {
    fn lower(self) -> bool;
    fn digit(self) -> bool;
}

impl SwapUnit for char {
    fn lower(self) -> bool {
        self.is_ascii_lowercase()
    }
    fn digit(self) -> bool {
        self.is_ascii_digit()
    }
}

impl SwapUnit for u8 {
    fn lower(self) -> bool {
        self.is_ascii_lowercase()
    }
    fn digit(self) -> bool {
        self.is_ascii_digit()
    }
}

/// `swap_variants`: each adjacent letter–digit pair swapped, without repeats.
pub(super) fn swap_variants<T: SwapUnit>(token: &[T]) -> Vec<Vec<T>> {
    let mut out: Vec<Vec<T>> = Vec::new();
    for i in 0..token.len().saturating_sub(1) {
        let (a, b) = (token[i], token[i + 1]);
        let swap = (a.lower() && b.digit()) || (a.digit() && b.lower());
        if !swap {
            continue;
        }
        let mut v = token.to_vec();
        v.swap(i, i + 1);
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// Whether [`may_match_word`]'s closeness rule applies to a token: five or more ASCII letters or
/// digits, with no letter–digit pair.
fn closeness_test_applies(token: &[char]) -> bool {
    token.len() >= 5
        && token.iter().all(char::is_ascii_alphanumeric)
        && !token
            .windows(2)
            .any(|w| w[0].is_ascii_digit() != w[1].is_ascii_digit())
}

/// A quick test that can only say "cannot match": for a normalized token word of five or more
/// ASCII letters or digits (no letter–digit pair, so no swapped variants; too long for an acronym)
/// every rule that can match it — the word itself, a prefix, a word it extends by up to two
/// characters, a substring, characters in order within a word over a span of at most
/// `max(len + 2, ⌈1.8·len⌉)`, or a run across words of the compact text — puts all but its last two
/// characters, in order, inside `2·len + 2` consecutive characters of the normalized text (fewer
/// once separators are dropped, as here). `true` when the rule does not apply.
pub fn may_match_word(token: &[char], stream: &[char]) -> bool {
    let n = token.len();
    if !closeness_test_applies(token) {
        return true;
    }
    let needle = &token[..n - 2];
    let window = 2 * n + 2;
    (0..stream.len()).any(|start| {
        if stream[start] != needle[0] {
            return false;
        }
        let end = (start + window).min(stream.len());
        let mut qi = 0;
        for &c in &stream[start..end] {
            if c == needle[qi] {
                qi += 1;
                if qi == needle.len() {
                    return true;
                }
            }
        }
        false
    })
}

/// A text's characters as [`may_match_word`] reads them: lower-cased, letters, digits and marks
/// only (the normalized text without its separators).
pub fn word_stream(text: &str) -> Vec<char> {
    let mut out = Vec::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            if c.is_ascii_alphanumeric() {
                out.push(c.to_ascii_lowercase());
            }
        } else {
            out.extend(
                c.to_lowercase()
                    .filter(|&l| l.is_alphanumeric() || is_mark(l)),
            );
        }
    }
    out
}

/// `fuzzyMatch(query, text)`.
pub fn fuzzy_match(query: &str, text: &str) -> FuzzyMatch {
    let q = normalize(query);
    if q.is_empty() {
        return FuzzyMatch {
            matches: true,
            score: 0.0,
        };
    }
    SearchIndex::new(text).match_prepared(&q)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic xorshift stream: each call gives a number below `n`.
    fn numbers() -> impl FnMut(usize) -> usize {
        crate::test_sessions::numbers(0x2545_f491_4f6c_dd1du64)
    }

    /// The match test without scores answers as the scored match, over random texts and
    /// queries from a small alphabet (so prefixes, subsequences, acronyms and swaps all occur).
    #[test]
    fn the_boolean_match_equals_the_scored_match() {
        let mut next = numbers();
        let alphabet: Vec<char> = "abcdeé1 -_/.".chars().collect();
        let word = |len: usize, next: &mut dyn FnMut(usize) -> usize| -> String {
            (0..1 + next(len))
                .map(|_| alphabet[next(alphabet.len())])
                .collect()
        };
        let (mut hits, mut misses) = (0, 0);
        for _ in 0..400 {
            let text = word(60, &mut next);
            let index = SearchIndex::new(&text);
            for _ in 0..8 {
                let query = word(7, &mut next);
                let scored = index.matches(&query).matches;
                assert_eq!(index.is_match(&query), scored, "{text:?} / {query:?}");
                if scored {
                    hits += 1;
                } else {
                    misses += 1;
                }
            }
        }
        assert!(hits > 100 && misses > 100, "{hits} hits, {misses} misses");
    }

    /// Whenever the full matcher matches a token, the quick test lets it through (texts and tokens
    /// cut from each other: substrings, subsequences, prefixes, tokens longer than a word).
    #[test]
    fn the_quick_test_never_refuses_a_match() {
        let texts = [
            "user: The CSV importer drops rows with quoted commas. Can you find out why?",
            "assistant: Let me look at the parser-config and configParser modules, then HTMLParser.",
            "toolResult read src/reader.rs: fn parse_line(text: &str) -> Result<Entry, LineError>",
            "[branch summary]: we tried refactoring the tokenizer; abandoned after benchmarks",
            "a -- b __ c conf ig urat ion configuration reconfigure CONFIGURATION",
        ];
        let mut checked = 0;
        for text in texts {
            let index = SearchIndex::new(text);
            let norm: Vec<char> = normalize(text).chars().collect();
            let mut tokens: Vec<Vec<char>> = Vec::new();
            for start in 0..norm.len() {
                for len in 5..12 {
                    if start + len <= norm.len() {
                        let sub: Vec<char> = norm[start..start + len].to_vec();
                        tokens.push(sub.iter().copied().filter(|&c| c != ' ').collect());
                        // every other character, a subsequence
                        tokens.push(
                            sub.iter()
                                .copied()
                                .step_by(2)
                                .filter(|&c| c != ' ')
                                .collect(),
                        );
                        let mut longer = sub.clone();
                        longer.extend(['x', 'q']);
                        tokens.push(longer.into_iter().filter(|&c| c != ' ').collect());
                    }
                }
            }
            for token in tokens {
                let as_str: String = token.iter().collect();
                if index.matches(&as_str).matches {
                    checked += 1;
                    assert!(
                        may_match_word(&token, &word_stream(text)),
                        "{as_str:?} in {text:?}"
                    );
                }
            }
        }
        assert!(checked > 1000, "{checked}");
    }

    /// A query word written as is (lower case) in the text always matches: the shortcut
    /// `Query::matches` takes before building the index.
    #[test]
    fn a_word_written_as_is_always_matches() {
        let texts = [
            "configParser HTMLParser parse_config reconfigure x2y a0b",
            "user: The CSV importer drops rows with quoted commas. Can you find out why?",
        ];
        let mut checked = 0;
        for text in texts {
            let index = SearchIndex::new(text);
            let chars: Vec<char> = text.chars().collect();
            for start in 0..chars.len() {
                for len in 1..10 {
                    let Some(word) = chars.get(start..start + len) else {
                        continue;
                    };
                    let word: String = word.iter().collect();
                    if !word
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
                    {
                        continue;
                    }
                    checked += 1;
                    assert!(index.matches(&word).matches, "{word:?} in {text:?}");
                }
            }
        }
        assert!(checked > 200, "{checked}");
    }

    #[test]
    fn word_rules() {
        assert!(fuzzy_match("numb", "question number 3").matches);
        assert!(fuzzy_match("3", "question number 3").matches);
        assert!(fuzzy_match("3", "question number 13").matches);
        assert!(fuzzy_match("qn", "question number").matches); // initials
        assert!(fuzzy_match("numbr", "number").matches); // tight subsequence
        assert!(fuzzy_match("!!!", "anything").matches);
        assert!(!fuzzy_match("a", "...").matches);
        assert!(fuzzy_match("a1", "1a").matches); // swapped letter/digit
        assert!(!fuzzy_match("zzz", "question").matches);
    }
}
