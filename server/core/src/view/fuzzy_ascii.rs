//! omp's fuzzy filter ([`super::fuzzy`]) on ASCII texts, without a `SearchIndex`: each query
//! word is prepared once ([`AsciiWord`]); a text is matched in its normalized form (`normalize`'s
//! output, [`crate::facts::search_words::normalize_ascii_into`]: lower-case letters and digits, one space between
//! words), which the session's columns lay out ahead for every ASCII search string. The rules run
//! on those bytes from each place the word's first character is found. Answers as
//! `SearchIndex::is_match` (tests compare them).
//!
//! A query word's characters are kept as bytes, each non-ASCII character as `0xFF`: no ASCII text
//! holds that byte, and lengths stay counted in characters, as the rules count them.

use memchr::memmem::Finder;

/// The byte that stands for a non-ASCII character of a query word.
const OTHER: u8 = 0xFF;

/// One normalized query word, prepared for normalized ASCII texts.
#[derive(Debug, Clone)]
pub(crate) struct AsciiWord {
    /// The word, then its swapped letter–digit variants (in `swap_variants` order).
    forms: Vec<Form>,
    /// No ASCII text can match it: a non-ASCII character where only matched characters can be.
    impossible: bool,
    /// How many leading characters every match finds in the text (a word it extends by up to two
    /// characters matches too, so the last ones need not be there).
    required: usize,
    /// The widest span of a subsequence match.
    span: usize,
}

/// The word or one of its variants, with a vectorized finder (a word inside a text word is the
/// most common match, and every text the filter shows is searched for it).
#[derive(Debug, Clone)]
struct Form {
    bytes: Vec<u8>,
    finder: Finder<'static>,
}

impl Form {
    fn new(bytes: Vec<u8>) -> Form {
        let finder = Finder::new(&bytes).into_owned();
        Form { bytes, finder }
    }

    /// `SearchIndex::token_matches` on a normalized text: the word is inside a text word (equal
    /// to it, a prefix or a substring); or from a text word's start the compact text spells it,
    /// or that word is a prefix it extends by up to two characters; or the first text word that
    /// starts with its first character begins its initials; or its characters come in order in a
    /// text word, from that word's first occurrence of its first character, within the span.
    /// Also whether it matches once that span is lifted.
    fn verdict(&self, text: &[u8], span: usize) -> Verdict {
        let t = &self.bytes[..];
        let Some(&first) = t.first() else {
            return Verdict::BOTH;
        };
        // The word holds no space, so wherever it is found it is inside a text word.
        if self.finder.find(text).is_some() {
            return Verdict::BOTH;
        }
        if t.len() == 1 {
            return Verdict::NEITHER;
        }
        let shortest_prefix = t.len().saturating_sub(2).max(1);
        let mut initials_tried = !(2..=4).contains(&t.len());
        let mut loosely = false;
        // Where the text word of the last subsequence tried ends: a later occurrence of the first
        // character before it is not its word's first.
        let mut word_end = 0;
        for p in memchr::memchr_iter(first, text) {
            if p == 0 || text[p - 1] == b' ' {
                if spelled_from(t, text, p, shortest_prefix) {
                    return Verdict::BOTH;
                }
                if !initials_tried {
                    initials_tried = true;
                    if initials_from(t, text, p) {
                        return Verdict::BOTH;
                    }
                }
            }
            if p >= word_end {
                let (within_span, in_order, end) = subsequence_from(t, text, p, span);
                if within_span {
                    return Verdict::BOTH;
                }
                loosely |= in_order;
                word_end = end;
            }
        }
        Verdict {
            matches: false,
            loosely,
        }
    }
}

/// What a query word's rules say of a text: whether it matches, and whether it matches once the
/// subsequence rule's span is lifted ("loosely"). A word that extends another by characters of
/// which none forms a letter–digit pair with the one before it (no new swap) matches only texts
/// that the shorter word matches loosely, and matches loosely only those too, so the answers for
/// one key narrow the texts the next key tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub matches: bool,
    pub loosely: bool,
}

impl Verdict {
    pub const BOTH: Verdict = Verdict {
        matches: true,
        loosely: true,
    };
    pub const NEITHER: Verdict = Verdict {
        matches: false,
        loosely: false,
    };

    fn or(self, other: Verdict) -> Verdict {
        Verdict {
            matches: self.matches || other.matches,
            loosely: self.loosely || other.loosely,
        }
    }
}

/// From a text word's start `p`: whether the compact text (the words without their spaces)
/// spells `t` from there, or the word at `p` is a prefix of `t` of at least `shortest_prefix`
/// characters (`t` extends it by up to two).
fn spelled_from(t: &[u8], text: &[u8], p: usize, shortest_prefix: usize) -> bool {
    let mut i = p;
    let mut crossed = false;
    for (k, &c) in t.iter().enumerate() {
        match text.get(i) {
            Some(b' ') => {
                if !crossed && k >= shortest_prefix {
                    return true;
                }
                crossed = true;
                i += 1;
            }
            None => return !crossed && k >= shortest_prefix,
            Some(_) => {}
        }
        if text.get(i) != Some(&c) {
            return false;
        }
        i += 1;
    }
    true
}

/// `score_acronym(t).is_some()` (two to four characters), from the first text word that starts
/// with `t[0]`, at `p`: the next characters start words taken in order (the first word of each
/// character that comes next), all within `t.len() + 2` words.
fn initials_from(t: &[u8], text: &[u8], p: usize) -> bool {
    let mut next = 1;
    let mut at = p;
    for _ordinal in 1..t.len() + 2 {
        at = word_end(text, at) + 1;
        if at >= text.len() {
            return false;
        }
        if text[at] == t[next] {
            next += 1;
            if next == t.len() {
                return true;
            }
        }
    }
    false
}

/// The subsequence rule of `score_against_word` from `p`, the first occurrence of `t[0]` in its
/// text word: `t`'s characters in order (the first occurrence of each after the last), the last
/// fewer than `span` characters after `p`. Gives whether they are within the span, whether they
/// are in order at all, and where the word ends (when not within the span).
fn subsequence_from(t: &[u8], text: &[u8], p: usize, span: usize) -> (bool, bool, usize) {
    let mut next = 1;
    let mut i = p + 1;
    while i < text.len() && text[i] != b' ' {
        if text[i] == t[next] {
            next += 1;
            if next == t.len() {
                return match i < p + span {
                    true => (true, true, i),
                    false => (false, true, word_end(text, i)),
                };
            }
        }
        i += 1;
    }
    (false, false, i)
}

/// Where the text word that goes on at `i` ends (words are short: a loop, not a call).
fn word_end(text: &[u8], mut i: usize) -> usize {
    while i < text.len() && text[i] != b' ' {
        i += 1;
    }
    i
}

impl AsciiWord {
    /// Prepares a normalized word (lower case, no spaces).
    pub fn new(word: &[char]) -> AsciiWord {
        let bytes: Vec<u8> = word
            .iter()
            .map(|&c| if c.is_ascii() { c as u8 } else { OTHER })
            .collect();
        let n = bytes.len();
        let variants = super::fuzzy::swap_variants(&bytes);
        // Only "the word extends a text word by up to two characters" matches with characters the
        // text lacks, and those are its last two (swaps move ASCII characters only).
        let impossible = bytes
            .iter()
            .enumerate()
            .any(|(i, &b)| b == OTHER && (i == 0 || i + 2 < n));
        let required = match variants.is_empty() {
            true => n.saturating_sub(2).max(1).min(n),
            // A swap may bring the third-last character forward.
            false => n.saturating_sub(3),
        };
        let forms = std::iter::once(bytes)
            .chain(variants)
            .map(Form::new)
            .collect();
        AsciiWord {
            forms,
            impossible,
            required,
            span: max_span(n),
        }
    }

    /// How many of the word's first characters every match finds in the text (any text).
    pub fn required(&self) -> usize {
        self.required
    }

    /// Whether the word matches a normalized ASCII text by one of the rules, or after swapping
    /// one letter–digit pair.
    pub fn matches(&self, text: &[u8]) -> bool {
        self.verdict(text).matches
    }

    /// [`AsciiWord::matches`], and whether the word matches loosely ([`Verdict`]).
    pub fn verdict(&self, text: &[u8]) -> Verdict {
        if self.forms[0].bytes.is_empty() {
            return Verdict::BOTH;
        }
        if self.impossible {
            return Verdict::NEITHER;
        }
        let mut verdict = Verdict::NEITHER;
        for form in &self.forms {
            verdict = verdict.or(form.verdict(text, self.span));
            if verdict.matches {
                break;
            }
        }
        verdict
    }
}

/// The widest span the subsequence rule accepts for a word of `n` characters.
fn max_span(n: usize) -> usize {
    (n + 2).max((n as f64 * 1.8).ceil() as usize)
}

#[cfg(test)]
mod tests {
    use super::super::fuzzy::{normalize, SearchIndex};
    use super::*;
    use crate::facts::search_words::normalize_ascii_into;

    use crate::test_sessions::numbers;

    fn random(next: &mut impl FnMut(usize) -> usize, alphabet: &[char], len: usize) -> String {
        let len = next(len + 1);
        (0..len).map(|_| alphabet[next(alphabet.len())]).collect()
    }

    fn prepared(query: &str) -> Vec<AsciiWord> {
        normalize(query)
            .split(' ')
            .map(|w| AsciiWord::new(&w.chars().collect::<Vec<char>>()))
            .collect()
    }

    /// Whether the whole query matches: every word, on the normalized text (as `Query` runs
    /// them).
    fn fast(words: &[AsciiWord], text: &str) -> bool {
        let mut normalized = Vec::new();
        normalize_ascii_into(text.as_bytes(), &mut normalized);
        words.iter().all(|w| w.matches(&normalized))
    }

    /// The quick test and the byte rules answer as `SearchIndex::is_match`, over random ASCII
    /// texts and random queries: short and long words, letter–digit pairs (swaps), initials,
    /// camelCase, non-ASCII characters in the query.
    #[test]
    fn answers_as_the_search_index() {
        let mut next = numbers(0x2545_f491_4f6c_dd1d);
        let text_chars: Vec<char> = "abcdeABCDE12 -_/.".chars().collect();
        let query_chars: Vec<char> = "abcdeAB12 -éüß".chars().collect();
        let (mut hits, mut misses) = (0, 0);
        for _ in 0..3000 {
            let text = random(&mut next, &text_chars, 60);
            let index = SearchIndex::new(&text);
            for _ in 0..12 {
                let query = random(&mut next, &query_chars, 9);
                let expected = index.is_match(&query);
                assert_eq!(
                    fast(&prepared(&query), &text),
                    expected,
                    "{query:?} in {text:?}"
                );
                if expected {
                    hits += 1;
                } else {
                    misses += 1;
                }
            }
        }
        assert!(hits > 3000 && misses > 3000, "{hits} hits, {misses} misses");
    }

    /// A word extended by one character with no new letter–digit pair matches, even loosely,
    /// only texts the shorter word matches loosely (what lets a search's answers for one key
    /// narrow the next key's), over random texts and words; the exact answer implies the loose
    /// one. A new pair at the end (`abcd` → `abcd1`, spelled `abc1 d`) breaks the rule.
    #[test]
    fn a_longer_word_matches_only_texts_the_shorter_matches_loosely() {
        let mut next = numbers(0x0bad_cafe_f00d_1234);
        let text_chars: Vec<char> = "abcdeAB12 -".chars().collect();
        let word_chars: Vec<u8> = b"abcde12".to_vec();
        let (mut checked, mut widened) = (0, 0);
        for _ in 0..20_000 {
            // A word, and a text that holds its characters in order with gaps of up to two
            // letters (subsequences near the widest span), between random characters.
            let word: Vec<char> = (0..2 + next(6))
                .map(|_| word_chars[next(word_chars.len())] as char)
                .collect();
            let mut text = random(&mut next, &text_chars, 6);
            for &c in &word {
                text.push(match next(3) {
                    0 => c.to_ascii_uppercase(),
                    _ => c,
                });
                for _ in 0..next(3) {
                    text.push(['a', 'b', 'x', '1', ' '][next(5)]);
                }
            }
            text.push_str(&random(&mut next, &text_chars, 6));
            let mut normalized = Vec::new();
            normalize_ascii_into(text.as_bytes(), &mut normalized);
            let mut before = prepared_word(&word[..1]).verdict(&normalized);
            for end in 2..=word.len() {
                let pair = {
                    let (l, c) = (word[end - 2], word[end - 1]);
                    (l.is_ascii_lowercase() && c.is_ascii_digit())
                        || (l.is_ascii_digit() && c.is_ascii_lowercase())
                };
                let after = prepared_word(&word[..end]).verdict(&normalized);
                assert!(!after.matches || after.loosely, "{word:?} in {text:?}");
                if !pair {
                    assert!(
                        before.loosely || !after.loosely,
                        "{:?} in {text:?}: loosely {after:?}, one shorter {before:?}",
                        &word[..end]
                    );
                    checked += 1;
                    widened += usize::from(after.matches && !before.matches);
                }
                before = after;
            }
        }
        assert!(
            checked > 40_000 && widened > 50,
            "{checked} checked, {widened} widened"
        );
        let words = |w: &str| prepared_word(&w.chars().collect::<Vec<char>>());
        let mut normalized = Vec::new();
        normalize_ascii_into(b"abc1 d", &mut normalized);
        assert!(words("abcd1").verdict(&normalized).matches);
        assert!(!words("abcd").verdict(&normalized).loosely);
    }

    fn prepared_word(word: &[char]) -> AsciiWord {
        AsciiWord::new(word)
    }

    /// Long words cut from the text (substrings, subsequences, prefixes across words, words
    /// extended by one to three characters, near misses) answer as the index: these are what
    /// the closeness test must never refuse when they match.
    #[test]
    fn long_words_cut_from_the_text_answer_as_the_index() {
        let mut next = numbers(0x1234_5678_9abc_def1);
        let text_chars: Vec<char> = "abcdefgABCDEFG0 --_".chars().collect();
        let mut checked = 0;
        let mut matched = 0;
        for _ in 0..1500 {
            let text = random(&mut next, &text_chars, 48);
            let index = SearchIndex::new(&text);
            let norm: Vec<char> = normalize(&text).chars().collect();
            for _ in 0..12 {
                if norm.len() < 4 {
                    break;
                }
                let start = next(norm.len() - 3);
                let len = 3 + next(10);
                let cut: Vec<char> = norm[start..(start + len).min(norm.len())].to_vec();
                let mut word: String = match next(3) {
                    0 => cut.iter().filter(|&&c| c != ' ').collect(),
                    1 => cut.iter().step_by(2).filter(|&&c| c != ' ').collect(),
                    _ => cut.iter().take_while(|&&c| c != ' ').collect(),
                };
                for _ in 0..next(4) {
                    word.push(['a', 'x', 'g', '0'][next(4)]);
                }
                if word.len() >= 5 && next(4) == 0 {
                    let at = next(word.len());
                    word.remove(at);
                }
                let expected = index.is_match(&word);
                assert_eq!(
                    fast(&prepared(&word), &text),
                    expected,
                    "{word:?} in {text:?}"
                );
                checked += 1;
                matched += usize::from(expected);
            }
        }
        assert!(
            checked > 10_000 && matched > 3000,
            "{checked} checked, {matched} matched"
        );
    }

    /// Edges of the rules: a word extended by two characters, subsequences at and just over
    /// the widest span, across camelCase and separators, non-ASCII query characters.
    #[test]
    fn edges_of_the_rules() {
        for (query, text, expected) in [
            ("parse", "the par thing", true),
            ("parxy", "par", true),
            ("parxyz", "par", false),
            ("ab", "a", true),
            ("config", "a CONFig file", true),
            ("parse", "pxxxxarse", true),
            ("parse", "pxxxxxarse", false),
            ("parse", "the pxxxx-arse", false),
            ("parse", "xPxxxxarse", true),
            ("config", "cxxxxxonfig", true),
            ("config", "cxxxxxxonfig", false),
            ("parse", "Par-Se", true),
            ("parse", "xpar-se", false),
            ("parse", "HTTPars", true),
            ("parse", "HTTParsx", false),
            ("ü", "u", false),
            ("aü", "a b", true),
            ("abcü", "abc", true),
            ("abüc", "abc", false),
        ] {
            assert_eq!(
                SearchIndex::new(text).is_match(query),
                expected,
                "{query:?} in {text:?}"
            );
            assert_eq!(
                fast(&prepared(query), text),
                expected,
                "{query:?} in {text:?}"
            );
        }
    }
}
