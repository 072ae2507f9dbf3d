//! A parsed `workspace/symbol` query: nucleo's pattern, what the quick test needs, the best score
//! any name can get, and which atoms may be matched against a name's ASCII start only.

use super::item::{haystack, may_match, needles, Item};
use nucleo_matcher::pattern::{AtomKind, CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Matcher, Utf32Str};

/// What nucleo (with `Config::DEFAULT`) gives a matched character at most: 16, plus a bonus of
/// at most 10 (a word start after whitespace or at the start); the first character of an atom
/// counts its bonus twice. Gaps only subtract.
const SCORE_MATCH: u32 = 16;
const MAX_BONUS: u32 = 10;

/// A query, parsed once for every name.
pub struct Query {
    empty: bool,
    pattern: Pattern,
    needles: Vec<Vec<u8>>,
    /// Per atom: a positive fuzzy atom of at least two ASCII characters. nucleo scores it the
    /// same on a name and on the name's ASCII start when nothing after that start can match an
    /// ASCII character (its one-character and substring paths for non-ASCII names differ from
    /// its ASCII ones, so those atoms always see the whole name).
    on_ascii_start: Vec<bool>,
    all_on_ascii_start: bool,
    best: u32,
    /// The needle of every positive atom, when each starts with an ASCII letter or digit: a name
    /// scores [`Query::best`] only if each needle appears in it whole, at its start or after
    /// whitespace (the first character earns the top bonus only there, and every later one only
    /// right after the one before it).
    best_needles: Option<Vec<Vec<u8>>>,
}

impl Query {
    /// Parses the query as nucleo does (case ignored, smart normalization).
    pub fn new(query: &str) -> Query {
        let pattern = Pattern::parse(query, CaseMatching::Ignore, Normalization::Smart);
        let on_ascii_start: Vec<bool> = pattern
            .atoms
            .iter()
            .map(|atom| {
                !atom.negative
                    && atom.kind == AtomKind::Fuzzy
                    && matches!(atom.needle_text(), Utf32Str::Ascii(n) if n.len() >= 2)
            })
            .collect();
        let best = pattern
            .atoms
            .iter()
            .filter(|atom| !atom.negative)
            .map(|atom| match u32::try_from(atom.needle_text().len()) {
                Ok(0) => 0,
                Ok(n) => (SCORE_MATCH + 2 * MAX_BONUS) + (n - 1) * (SCORE_MATCH + MAX_BONUS),
                Err(_) => u32::MAX,
            })
            .fold(0u32, u32::saturating_add);
        let best_needles = pattern
            .atoms
            .iter()
            .filter(|atom| !atom.negative)
            .map(|atom| match atom.needle_text() {
                Utf32Str::Ascii(n) if n.first().is_some_and(u8::is_ascii_alphanumeric) => {
                    Some(n.to_ascii_lowercase())
                }
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .filter(|n| !n.is_empty());
        Query {
            empty: query.is_empty(),
            best_needles,
            needles: needles(&pattern),
            all_on_ascii_start: on_ascii_start.iter().all(|&a| a),
            on_ascii_start,
            pattern,
            best,
        }
    }

    /// No name scores above this; the answer's order puts names scoring it in file order first.
    pub fn best(&self) -> u32 {
        self.best
    }

    /// Whether a quick look can tell names that may score [`Query::best`] from those that cannot.
    pub fn sees_best(&self) -> bool {
        !self.empty && self.best_needles.is_some()
    }

    /// `false` when the name cannot score [`Query::best`] (names whose end may match an ASCII
    /// character are not looked at).
    pub fn may_score_best(&self, item: &Item) -> bool {
        let Some(needles) = &self.best_needles else {
            return true;
        };
        if !item.ascii_core {
            return true;
        }
        let start = &item.name.as_bytes()[..item.ascii_len as usize];
        needles.iter().all(|needle| {
            let first = needle[0];
            memchr::memchr2_iter(first, first.to_ascii_uppercase(), start).any(|at| {
                (at == 0 || start[at - 1].is_ascii_whitespace())
                    && start
                        .get(at..at + needle.len())
                        .is_some_and(|word| word.eq_ignore_ascii_case(needle))
            })
        })
    }

    /// nucleo's score of the pattern on the name (`Pattern::score`), `None` when it does not
    /// match. The empty query matches every name with 0.
    pub fn score(&self, item: &Item, matcher: &mut Matcher, buf: &mut Vec<char>) -> Option<u32> {
        if self.empty {
            return Some(0);
        }
        if !may_match(item, &self.needles) {
            return None;
        }
        if self.pattern.atoms.is_empty() {
            return Some(0);
        }
        let start = item
            .ascii_core
            .then(|| Utf32Str::Ascii(&item.name.as_bytes()[..item.ascii_len as usize]));
        let whole = match start {
            Some(start) if self.all_on_ascii_start => start,
            _ => haystack(item, buf),
        };
        let mut total = 0;
        for (atom, &on_start) in self.pattern.atoms.iter().zip(&self.on_ascii_start) {
            let name = match start {
                Some(start) if on_start => start,
                _ => whole,
            };
            total += u32::from(atom.score(name, matcher)?);
        }
        Some(total)
    }
}

#[cfg(test)]
mod tests {
    use super::super::item::tests::{items, QUERIES};
    use super::*;
    use nucleo_matcher::Config;

    /// Queries whose atoms take the ASCII-start path, and names with ASCII starts and tails that
    /// never match (an ellipsis, pictures of control characters, CJK), or that may (accents).
    const MORE_QUERIES: &[&str] = &[
        "writer client",
        "wrtr clnt",
        "ab",
        "ab cd",
        "cd$ ab",
        "!xy ab",
        "ab 'cd",
        "ab ^us",
        "uc",
        "xyz…",
        "user",
        "WRITER",
        "ab\\ cd",
        "e ab",
        "1 ab",
    ];

    const MORE_NAMES: &[&str] = &[
        "user: Each writer thread client module string expe…",
        "user: a b c d ab cd abcd␉…",
        "assistant: ab 東京 cd…",
        "user: xab…",
        "ab…",
        "abc cd€",
        "user: a\u{301}b cd…",
        "user: ab cd café…",
        "user: cd ab ABCD xyz…",
        "user: client writer W r I t E r…",
        "user:ab\tcd e…",
        "writer\nWRITER…",
        "user: 1ab ab1 cd…",
        "user: ab cd…",
        "user: xab cd…",
    ];

    #[test]
    fn scores_are_nucleos_pattern_scores_and_never_above_the_best() {
        let mut matcher = Matcher::new(Config::DEFAULT);
        let (mut buf, mut ours) = (Vec::new(), Vec::new());
        let mut names = items();
        names.extend(
            MORE_NAMES
                .iter()
                .map(|n| Item::new((*n).to_owned(), "id".into(), 1, 1)),
        );
        let (mut took_ascii_start, mut reached_best, mut ruled_out_best) = (0, 0, 0);
        for query in QUERIES.iter().chain(MORE_QUERIES) {
            let parsed = Query::new(query);
            let pattern = Pattern::parse(query, CaseMatching::Ignore, Normalization::Smart);
            for item in &names {
                let want = if query.is_empty() {
                    Some(0)
                } else {
                    pattern.score(Utf32Str::new(&item.name, &mut buf), &mut matcher)
                };
                let got = parsed.score(item, &mut matcher, &mut ours);
                assert_eq!(got, want, "{query:?} on {:?}", item.name);
                if let Some(score) = got {
                    assert!(score <= parsed.best(), "{query:?} on {:?}", item.name);
                    reached_best += usize::from(score == parsed.best());
                }
                if !parsed.may_score_best(item) {
                    ruled_out_best += 1;
                    assert!(parsed.sees_best());
                    assert_ne!(got, Some(parsed.best()), "{query:?} on {:?}", item.name);
                }
                took_ascii_start += usize::from(
                    item.ascii_core
                        && item.ascii_len as usize != item.name.len()
                        && parsed.on_ascii_start.iter().any(|&a| a),
                );
            }
        }
        assert!(took_ascii_start > 20, "{took_ascii_start}");
        assert!(ruled_out_best > 20, "{ruled_out_best}");
        assert!(reached_best > 20, "{reached_best}");
    }

    #[test]
    fn the_best_score_is_reached_by_a_word_after_whitespace() {
        let mut matcher = Matcher::new(Config::DEFAULT);
        let mut buf = Vec::new();
        let name = Item::new("user: parse the config…".into(), "i".into(), 1, 1);
        for query in ["parse config", "p", "config", "'parse", "!zz parse"] {
            let q = Query::new(query);
            assert_eq!(q.score(&name, &mut matcher, &mut buf), Some(q.best()));
        }
        assert_eq!(Query::new("").best(), 0);
        assert_eq!(Query::new("!parse").best(), 0);
        assert_eq!(Query::new("ab").best(), 36 + 26);
    }
}
