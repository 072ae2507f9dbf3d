//! One searchable entry of `workspace/symbol`, and the quick test that rules out names a query
//! cannot match before nucleo scores them.

use crate::to_proto;
use nucleo_matcher::pattern::Pattern;
use nucleo_matcher::Utf32Str;

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
    /// Nothing after the ASCII start can match an ASCII character and nucleo's characters of the
    /// name are its `chars()`: an ASCII needle's matches all lie in the ASCII start.
    pub ascii_core: bool,
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
    pub(super) fn new(name: String, id: String, line: usize, width: u32) -> Item {
        let ascii_len = name
            .bytes()
            .position(|b| !b.is_ascii())
            .unwrap_or(name.len());
        let plain_graphemes = ascii_len == name.len() || plain_graphemes_after(&name, ascii_len);
        // Every character of the tail (a superset of nucleo's grapheme characters: more
        // characters only make the quick test pass more often).
        let tail: Box<[u8]> = name[ascii_len..].chars().map(fold).collect();
        let ascii_core = plain_graphemes && tail.iter().all(|&b| b == NONE);
        Item {
            name,
            id,
            line,
            width,
            ascii_len: to_proto::u32_of(ascii_len),
            plain_graphemes,
            ascii_core,
            tail,
        }
    }
}

/// Whether every character of a name with a non-ASCII byte at `ascii_len` is a grapheme of its
/// own. Between two ASCII characters there is always a grapheme boundary except inside CR LF,
/// so only the last ASCII character and what follows it need segmenting (most names are a long
/// ASCII text with an ellipsis).
fn plain_graphemes_after(name: &str, ascii_len: usize) -> bool {
    let ascii = &name.as_bytes()[..ascii_len];
    if ascii.windows(2).any(|w| w == b"\r\n") {
        return nucleo_matcher::chars::graphemes(name).count() == name.chars().count();
    }
    let rest = &name[ascii_len.saturating_sub(1)..];
    nucleo_matcher::chars::graphemes(rest).count() == rest.chars().count()
}

/// The length of a text in UTF-16 units (what LSP positions count): one per character, two for
/// a character outside the Basic Multilingual Plane (four UTF-8 bytes).
pub(super) fn utf16_len(text: &str) -> usize {
    if text.is_ascii() {
        return text.len();
    }
    text.bytes()
        .map(|b| usize::from(b & 0xc0 != 0x80) + usize::from(b >= 0xf0))
        .sum()
}

/// The lower-cased ASCII characters of each positive atom of a pattern, when every character
/// of the atom is ASCII; the quick test needs them all, in order, in a name.
pub(super) fn needles(pattern: &Pattern) -> Vec<Vec<u8>> {
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
pub(super) fn haystack<'a>(item: &'a Item, buf: &'a mut Vec<char>) -> Utf32Str<'a> {
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
pub(super) fn may_match(item: &Item, needles: &[Vec<u8>]) -> bool {
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

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use nucleo_matcher::pattern::{CaseMatching, Normalization};
    use nucleo_matcher::{Config, Matcher};

    pub(in crate::symbols) const NAMES: &[&str] = &[
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

    pub(in crate::symbols) const QUERIES: &[&str] = &[
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

    pub(in crate::symbols) fn items() -> Vec<Item> {
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
    fn graphemes_and_utf16_lengths_are_those_of_the_whole_text() {
        let mut texts: Vec<String> = NAMES.iter().map(|n| (*n).to_owned()).collect();
        texts.extend(
            [
                "abc\r\nd…",
                "ab\r…",
                "e\u{301}",
                "xe\u{301}\u{301}…",
                "1\u{fe0f}\u{20e3} key",
                "a🇫🇷🇫b",
                "a\u{200d}b…",
                "user: 😀 face 𝄞",
                "\u{1100}\u{1161}\u{11a8}",
                "ab\u{0915}\u{094d}\u{0937}",
            ]
            .map(str::to_owned),
        );
        for text in &texts {
            let item = Item::new(text.clone(), "i".into(), 1, 1);
            let whole = nucleo_matcher::chars::graphemes(text).count() == text.chars().count();
            assert_eq!(item.plain_graphemes, whole, "{text:?}");
            assert_eq!(utf16_len(text), text.encode_utf16().count(), "{text:?}");
        }
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
}
