//! omp's fuzzy filter ([`super::fuzzy`]) for ASCII texts, without a `SearchIndex`: each query
//! word is prepared once ([`AsciiWord`]); a text first gets a quick test that can only say
//! "cannot match", then its normalized words are laid end to end in one buffer ([`Words`]) and the
//! word rules run on bytes. Answers as `SearchIndex::is_match` (tests compare them).
//!
//! A query word's characters are kept as bytes, each non-ASCII character as `0xFF`: no ASCII text
//! holds that byte, and lengths stay counted in characters, as the rules count them.

/// The byte that stands for a non-ASCII character of a query word.
const OTHER: u8 = 0xFF;

/// One normalized query word, prepared for ASCII texts.
#[derive(Debug, Clone)]
pub(crate) struct AsciiWord {
    bytes: Vec<u8>,
    /// Its swapped letter–digit variants, in `swap_variants` order.
    variants: Vec<Vec<u8>>,
    /// No ASCII text can match it: a non-ASCII character where only matched characters can be.
    impossible: bool,
    /// How many leading characters every match finds in the text (a word it extends by up to two
    /// characters matches too, so the last ones need not be there).
    required: usize,
    /// Five or more letters or digits, no letter–digit pair: the closeness test applies.
    long: bool,
    /// The widest span of a subsequence match.
    span: usize,
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
        let long = n >= 5
            && bytes.iter().all(u8::is_ascii_alphanumeric)
            && !bytes
                .windows(2)
                .any(|w| w[0].is_ascii_digit() != w[1].is_ascii_digit());
        AsciiWord {
            bytes,
            variants,
            impossible,
            required,
            long,
            span: max_span(n),
        }
    }

    /// How many of the word's first characters every match finds in the text (any text).
    pub fn required(&self) -> usize {
        self.required
    }

    /// A necessary test: `false` when no rule can match the word in this ASCII text.
    pub fn may_match(&self, text: &[u8]) -> bool {
        if self.bytes.is_empty() {
            return true;
        }
        if self.impossible {
            return false;
        }
        if self.long {
            return self.may_match_long(text);
        }
        self.bytes[..self.required]
            .iter()
            .all(|&c| (c.is_ascii_lowercase() || c.is_ascii_digit()) && find_either(c, text))
    }

    /// The test for a long word (no swaps, too long for initials). Every rule puts the word's
    /// first character somewhere `s` in the text, and from there either the word is a
    /// subsequence of one run of letters and digits within the span the subsequence rule allows
    /// (which also covers the word inside a text word), or, when `s` may start a text word, the
    /// text's letters and digits from `s` spell the whole word (across words) or its first
    /// `len - 2` or `len - 1` characters up to where a text word may end.
    fn may_match_long(&self, text: &[u8]) -> bool {
        let first = self.bytes[0];
        if first.is_ascii_lowercase() {
            let upper = first.to_ascii_uppercase();
            memchr::memchr2_iter(first, upper, text).any(|s| self.may_match_at(text, s))
        } else {
            memchr::memchr_iter(first, text).any(|s| self.may_match_at(text, s))
        }
    }

    /// [`AsciiWord::may_match_long`] from the word's first character at `s`.
    fn may_match_at(&self, text: &[u8], s: usize) -> bool {
        let t = &self.bytes;
        let n = t.len();
        // A subsequence within one run, over at most `span` characters.
        let end = text.len().min(s + self.span);
        let mut qi = 1;
        for &b in &text[s + 1..end] {
            let c = FOLD[b as usize];
            if c == 0 {
                break;
            }
            if c == t[qi] {
                qi += 1;
                if qi == n {
                    return true;
                }
            }
        }
        // Text words start after a non-alphanumeric byte or at an upper-case letter.
        if s > 0 && FOLD[text[s - 1] as usize] != 0 && !text[s].is_ascii_uppercase() {
            return false;
        }
        let (mut k, mut j, mut crossed) = (1, s + 1, false);
        loop {
            if k >= n - 2 && !crossed && may_end_word(text, j) {
                return true;
            }
            while j < text.len() && FOLD[text[j] as usize] == 0 {
                j += 1;
                crossed = true;
            }
            match text.get(j) {
                Some(&b) if FOLD[b as usize] == t[k] => {
                    k += 1;
                    j += 1;
                    if k == n {
                        return true;
                    }
                }
                _ => return false,
            }
        }
    }
}

/// Each byte's letter or digit in lower case, 0 for every other byte.
const FOLD: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        if c.is_ascii_alphanumeric() {
            table[b] = c.to_ascii_lowercase();
        }
        b += 1;
    }
    table
};

/// Whether a text word may end before byte `j` (the byte before it being a letter or digit): at
/// the end, before a non-alphanumeric byte, or before an upper-case letter.
fn may_end_word(text: &[u8], j: usize) -> bool {
    text.get(j)
        .is_none_or(|b| !b.is_ascii_alphanumeric() || b.is_ascii_uppercase())
}

/// Whether `c` (a lower-case letter or digit) is in the text, in either case.
fn find_either(c: u8, text: &[u8]) -> bool {
    match c.is_ascii_lowercase() {
        true => memchr::memchr2(c, c.to_ascii_uppercase(), text).is_some(),
        false => memchr::memchr(c, text).is_some(),
    }
}

/// The widest span the subsequence rule accepts for a word of `n` characters.
fn max_span(n: usize) -> usize {
    (n + 2).max((n as f64 * 1.8).ceil() as usize)
}

/// An ASCII text's normalized words (`normalizeForSearch` split on spaces), end to end.
#[derive(Debug, Default)]
pub(crate) struct Words {
    /// The words without separators (the compact text).
    compact: Vec<u8>,
    /// Where each word starts in `compact`, ascending.
    starts: Vec<usize>,
}

impl Words {
    /// The words of an ASCII text: runs of letters and digits, lower-cased, also split before an
    /// upper-case letter that follows a lower-case letter or a digit, or that follows an
    /// upper-case letter and precedes a lower-case one (`HTMLParser` → `html parser`).
    pub fn new(text: &[u8]) -> Words {
        let mut compact = Vec::with_capacity(text.len());
        let mut starts = Vec::new();
        let mut gap = false;
        for (i, &c) in text.iter().enumerate() {
            if !c.is_ascii_alphanumeric() {
                gap = true;
                continue;
            }
            let split = gap
                || (i > 0 && c.is_ascii_uppercase() && {
                    let before = text[i - 1];
                    before.is_ascii_lowercase()
                        || before.is_ascii_digit()
                        || (before.is_ascii_uppercase()
                            && text.get(i + 1).is_some_and(u8::is_ascii_lowercase))
                });
            if split || starts.is_empty() {
                starts.push(compact.len());
            }
            gap = false;
            compact.push(c.to_ascii_lowercase());
        }
        Words { compact, starts }
    }

    fn words(&self) -> impl Iterator<Item = &[u8]> {
        let ends = self
            .starts
            .iter()
            .skip(1)
            .copied()
            .chain([self.compact.len()]);
        self.starts
            .iter()
            .zip(ends)
            .map(|(&s, e)| &self.compact[s..e])
    }

    /// Whether the word matches by one of the rules, or after swapping one letter–digit pair.
    pub fn matches(&self, word: &AsciiWord) -> bool {
        self.token_matches(&word.bytes) || word.variants.iter().any(|v| self.token_matches(v))
    }

    /// `SearchIndex::token_matches`.
    fn token_matches(&self, t: &[u8]) -> bool {
        t.is_empty()
            || self.compact_word_start(t)
            || self.words().any(|w| against_word(t, w))
            || self.initials(t)
    }

    /// `find_compact_word_start(t).is_some()`: `t` occurs in the compact text where a word starts
    /// (for words under three characters, its first occurrence must be there).
    fn compact_word_start(&self, t: &[u8]) -> bool {
        let mut from = 0;
        while let Some(at) = find(&self.compact, t, from) {
            if self.starts.binary_search(&at).is_ok() {
                return true;
            }
            if t.len() < 3 {
                return false;
            }
            from = at + 1;
        }
        false
    }

    /// `score_acronym(t).is_some()`: two to four characters, the first letters of words taken in
    /// order (the first word of each character that comes next), over at most `len + 2` words.
    fn initials(&self, t: &[u8]) -> bool {
        if t.len() < 2 || t.len() > 4 {
            return false;
        }
        let mut qi = 0;
        let mut first: Option<usize> = None;
        let mut last = 0;
        for (ordinal, start) in self.starts.iter().enumerate() {
            if self.compact.get(*start) != Some(&t[qi]) {
                continue;
            }
            first.get_or_insert(ordinal);
            last = ordinal;
            qi += 1;
            if qi == t.len() {
                break;
            }
        }
        match first {
            Some(first) if qi == t.len() => last - first < t.len() + 2,
            _ => false,
        }
    }
}

/// Where `t` (not empty) first occurs in `hay` at or after `from` (texts are short: each place
/// its first byte is found is compared).
fn find(hay: &[u8], t: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    while let Some(i) = memchr::memchr(t[0], hay.get(at..)?) {
        let p = at + i;
        if hay[p..].starts_with(t) {
            return Some(p);
        }
        at = p + 1;
    }
    None
}

/// `score_against_word(t, w).is_some()`.
fn against_word(t: &[u8], w: &[u8]) -> bool {
    let n = t.len();
    if w.len() + 2 < n {
        return false;
    }
    // Equal to, a prefix of, or inside the word.
    if w.len() >= n && w.windows(n).any(|x| x[0] == t[0] && x == t) {
        return true;
    }
    // Extends the word by up to two characters.
    if t.starts_with(w) {
        return true;
    }
    if n > w.len() {
        return false;
    }
    // Characters in order (the first occurrence of each after the last), over a short span.
    let mut qi = 0;
    let mut first = None;
    let mut last = 0;
    for (i, &c) in w.iter().enumerate() {
        if c == t[qi] {
            first.get_or_insert(i);
            last = i;
            qi += 1;
            if qi == n {
                break;
            }
        }
    }
    match first {
        Some(first) if qi == n => last - first < max_span(n),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::fuzzy::{normalize, SearchIndex};
    use super::*;

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

    /// Whether the whole query matches: the quick test, then the words (as `Query` runs them).
    fn fast(words: &[AsciiWord], text: &str) -> bool {
        let bytes = text.as_bytes();
        if !words.iter().all(|w| w.may_match(bytes)) {
            return false;
        }
        let text_words = Words::new(bytes);
        words.iter().all(|w| text_words.matches(w))
    }

    /// The words split as `normalize` splits them.
    #[test]
    fn words_are_the_normalized_words() {
        let mut next = numbers(0x9e37_79b9_7f4a_7c15);
        let alphabet: Vec<char> = "aAbBzZ09 -_./:XYxy".chars().collect();
        for _ in 0..20_000 {
            let text = random(&mut next, &alphabet, 32);
            let words = Words::new(text.as_bytes());
            let got: Vec<String> = words
                .words()
                .map(|w| String::from_utf8_lossy(w).into_owned())
                .collect();
            let normalized = normalize(&text);
            let expected: Vec<String> = match normalized.is_empty() {
                true => Vec::new(),
                false => normalized.split(' ').map(str::to_owned).collect(),
            };
            assert_eq!(got, expected, "{text:?}");
        }
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
