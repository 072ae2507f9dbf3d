//! omp's search words: `normalizeForSearch` (`pi-tui src/fuzzy.ts`) turns a text into its words
//! — camelCase split, lower-cased, runs of anything but letters, digits and marks → one space —
//! which omp's fuzzy rule matches one by one. The search strings of the session's entries are
//! laid out in this form once (`columns`), so a search does not split every text again.

pub(crate) fn is_mark(c: char) -> bool {
    matches!(c as u32,
        0x0300..=0x036f | 0x0483..=0x0489 | 0x0591..=0x05bd | 0x05bf | 0x05c1..=0x05c2 | 0x05c4..=0x05c5
        | 0x0610..=0x061a | 0x064b..=0x065f | 0x0670 | 0x06d6..=0x06dc | 0x0900..=0x0903 | 0x093a..=0x094f
        | 0x0e31 | 0x0e34..=0x0e3a | 0x0e47..=0x0e4e | 0x1ab0..=0x1aff | 0x1dc0..=0x1dff | 0x20d0..=0x20ff
        | 0x302a..=0x302f | 0x3099..=0x309a | 0xfe00..=0xfe0f | 0xfe20..=0xfe2f)
}

/// `normalizeForSearch`.
pub fn normalize(value: &str) -> String {
    if value.is_ascii() {
        return normalize_ascii(value.as_bytes());
    }
    normalize_chars(value)
}

/// [`normalize`] of ASCII text, byte by byte: the same steps, without a `char` buffer.
pub(crate) fn normalize_ascii(chars: &[u8]) -> String {
    let mut out = Vec::with_capacity(chars.len() + 4);
    normalize_ascii_into(chars, &mut out);
    // Only ASCII letters, digits and spaces were written.
    out.into_iter().map(char::from).collect()
}

/// Appends [`normalize`] of an ASCII text to `out` in one pass: its words (runs of letters and
/// digits, also split before an upper-case letter that follows a lower-case letter or a digit,
/// or that follows an upper-case letter and precedes a lower-case one: `HTMLParser` → `html
/// parser`), lower-cased, one space between words.
pub(crate) fn normalize_ascii_into(chars: &[u8], out: &mut Vec<u8>) {
    let from = out.len();
    let mut gap = false;
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            gap = true;
            continue;
        }
        // /([A-Z]+)([A-Z][a-z])/g and /([a-z0-9])([A-Z])/g → "$1 $2".
        let split = i > 0 && c.is_ascii_uppercase() && {
            let before = chars[i - 1];
            before.is_ascii_lowercase()
                || before.is_ascii_digit()
                || (before.is_ascii_uppercase()
                    && chars.get(i + 1).is_some_and(u8::is_ascii_lowercase))
        };
        if (gap || split) && out.len() > from {
            out.push(b' ');
        }
        gap = false;
        out.push(c.to_ascii_lowercase());
    }
}

/// [`normalize`] for any text.
pub(crate) fn normalize_chars(value: &str) -> String {
    let chars: Vec<char> = value.chars().collect();
    // /([A-Z]+)([A-Z][a-z])/g → "$1 $2"
    let mut step1: Vec<char> = Vec::with_capacity(chars.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if i > 0
            && c.is_ascii_uppercase()
            && chars[i - 1].is_ascii_uppercase()
            && chars.get(i + 1).is_some_and(char::is_ascii_lowercase)
        {
            step1.push(' ');
        }
        step1.push(c);
    }
    // /([a-z0-9])([A-Z])/g → "$1 $2"
    let mut step2 = String::with_capacity(step1.len() + 4);
    for (i, &c) in step1.iter().enumerate() {
        if i > 0
            && c.is_ascii_uppercase()
            && (step1[i - 1].is_ascii_lowercase() || step1[i - 1].is_ascii_digit())
        {
            step2.push(' ');
        }
        step2.push(c);
    }
    let lower = step2.to_lowercase();
    let mut out = String::with_capacity(lower.len());
    let mut gap = false;
    for c in lower.chars() {
        if c.is_alphanumeric() || is_mark(c) {
            if gap && !out.is_empty() {
                out.push(' ');
            }
            gap = false;
            out.push(c);
        } else {
            gap = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ASCII text normalizes byte by byte exactly as through `char`s.
    #[test]
    fn ascii_normalizing_equals_the_char_steps() {
        let mut next = crate::test_sessions::numbers(0x2545_f491_4f6c_dd1du64);
        let alphabet = b"aAbBzZ09 -_./:XYxy";
        for _ in 0..5000 {
            let len = next(32);
            let text: String = (0..len)
                .map(|_| alphabet[next(alphabet.len())] as char)
                .collect();
            assert_eq!(
                normalize_ascii(text.as_bytes()),
                normalize_chars(&text),
                "{text:?}"
            );
        }
        for text in [
            "HTTPServer",
            "parseJSONFile2Go",
            "a1B",
            "ABc",
            "  x--Y  ",
            "",
        ] {
            assert_eq!(
                normalize_ascii(text.as_bytes()),
                normalize_chars(text),
                "{text:?}"
            );
        }
    }

    #[test]
    fn normalizes_like_omp() {
        assert_eq!(normalize("HTMLParser fooBar"), "html parser foo bar");
        assert_eq!(normalize("  a--b__c  "), "a b c");
        assert_eq!(normalize("file2Name"), "file2 name");
    }
}
