//! Whether a piece of JSON text is exactly what serde_json writes for the value it parses to
//! (compact, with the map keeping key order), so that a message kept as text can be written out
//! as it is instead of being parsed and serialized again. The scan of a kept message
//! (`message_facts.rs`) asks about each escape and number of a message; whitespace between
//! tokens and repeated keys (parsing keeps one) it checks itself. The agents write their lines with `JSON.stringify`, whose output is almost
//! always that form; anything else is written through the value, as before.

use serde_json::Value;

/// Whether the `\u` escape with these four hex digits is one serde_json writes: it escapes only
/// the control characters that have no short escape, with lowercase digits.
pub(crate) fn unicode_escape(hex: &str) -> bool {
    let Ok(n) = u16::from_str_radix(hex, 16) else {
        return false;
    };
    let lowercase = hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    n < 0x20 && !matches!(n, 0x08 | 0x09 | 0x0A | 0x0C | 0x0D) && lowercase
}

/// Whether a number token (validated JSON) is written back the same: short integers and short
/// decimals always are ([`short_decimal`]); any other token is parsed and written as the value
/// path would do it (serde_json's own float parsing and formatting decide, not JavaScript's).
pub(crate) fn number(token: &str) -> bool {
    let digits = token.strip_prefix('-').unwrap_or(token);
    // Up to 18 digits fit both u64 and i64; `-0` parses to the float -0.0.
    if digits.len() <= 18 && digits.bytes().all(|b| b.is_ascii_digit()) && token != "-0" {
        return true;
    }
    if short_decimal(digits) {
        return true;
    }
    serde_json::from_str::<Value>(token)
        .ok()
        .and_then(|v| serde_json::to_string(&v).ok())
        .is_some_and(|written| written == token)
}

/// `I.F` without an exponent or a trailing zero, with at most 15 significant digits, and at most
/// four zeros after the point when `I` is `0` (costs and prices are mostly such). serde_json
/// parses those exactly (a significand below 2^53 divided by an exact power of ten rounds once),
/// no other decimal of at most 15 digits parses to the same float, so the shortest digits that
/// read back as it are these, and its formatter writes a float of that size without an exponent.
/// The tests compare this with parsing and writing such tokens.
fn short_decimal(digits: &str) -> bool {
    let Some((int, frac)) = digits.split_once('.') else {
        return false;
    };
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(int) || !all_digits(frac) || frac.ends_with('0') {
        return false;
    }
    if int == "0" {
        let zeros = frac.len() - frac.trim_start_matches('0').len();
        zeros <= 4 && frac.len() - zeros <= 15
    } else {
        !int.starts_with('0') && int.len() + frac.len() <= 15
    }
}

/// Keys of the objects being scanned (their raw text spans, quotes included), to find a
/// repeated key: parsing keeps one value, so the text would not be written back the same. Raw
/// texts compare as the keys do once every escape is the one serde_json writes (each string has
/// exactly one such spelling), which the message's texts are checked for anyway.
#[derive(Default)]
pub(crate) struct Keys {
    /// Each key's [`fingerprint`] and span.
    spans: Vec<(u64, std::ops::Range<usize>)>,
}

/// The length and first bytes of a key: keys that differ there are told apart without comparing
/// their texts.
fn fingerprint(key: &[u8]) -> u64 {
    let head = key
        .iter()
        .take(7)
        .enumerate()
        .fold(0u64, |v, (i, &b)| v | u64::from(b) << (8 * i));
    head ^ ((key.len() as u64) << 56)
}

/// Objects with more keys than this are not checked for repeats: the text is taken as not
/// written back the same (rare; it is then written through its value).
const MAX_KEYS: usize = 64;

impl Keys {
    /// Room for `n` keys of nested objects before the first allocation grows.
    pub(crate) fn with_capacity(n: usize) -> Keys {
        Keys {
            spans: Vec::with_capacity(n),
        }
    }

    /// Where an object's keys start.
    pub(crate) fn open(&self) -> usize {
        self.spans.len()
    }

    /// Adds a key of the object opened at `base`; false when it repeats one or the object has
    /// too many keys to check.
    pub(crate) fn add(&mut self, base: usize, text: &str, key: std::ops::Range<usize>) -> bool {
        let seen = &self.spans[base.min(self.spans.len())..];
        if seen.len() >= MAX_KEYS {
            return false;
        }
        let new = text.as_bytes().get(key.clone()).unwrap_or_default();
        let print = fingerprint(new);
        let repeated = seen
            .iter()
            .any(|(p, k)| *p == print && text.as_bytes().get(k.clone()) == Some(new));
        self.spans.push((print, key));
        !repeated
    }

    /// Forgets the keys of the object opened at `base`.
    pub(crate) fn close(&mut self, base: usize) {
        self.spans.truncate(base);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_plain_only_when_serde_json_writes_them_the_same() {
        for plain in [
            "0",
            "-1",
            "1735689603000",
            "123456789012345678",
            "0.25",
            "12.5",
            "-3.75",
            "1e-7",
            "1.0",
            "1e+21",
        ] {
            assert!(number(plain), "{plain}");
        }
        for other in ["-0", "1E5", "2.50", "100000000000000000000", "1e400"] {
            assert!(!number(other), "{other}");
        }
    }

    /// Short decimals of every shape the shortcut takes, with random digits, are written back
    /// the same by serde_json.
    #[test]
    fn short_decimals_are_what_serde_json_writes() {
        use proptest::test_runner::{Config, TestRunner};
        let shapes = "-?(0\\.0{0,4}[0-9]{0,14}[1-9]|[1-9][0-9]{0,13}\\.[0-9]{0,13}[1-9])";
        let mut runner = TestRunner::new(Config {
            cases: 20_000,
            ..Config::default()
        });
        let outcome = runner.run(&shapes, |token| {
            if short_decimal(token.trim_start_matches('-')) {
                let written = serde_json::from_str::<Value>(&token)
                    .ok()
                    .and_then(|v| serde_json::to_string(&v).ok());
                proptest::prop_assert_eq!(written.as_deref(), Some(token.as_str()));
            }
            Ok(())
        });
        assert!(outcome.is_ok(), "{outcome:?}");
        for token in ["0.5", "0.00001", "0.000012345678901234", "12345678901234.5"] {
            assert!(short_decimal(token), "{token}");
        }
        for token in [
            "0.000001",
            "123456789012345.5",
            "1.50",
            "01.5",
            "1.",
            ".5",
            "1e5",
        ] {
            assert!(!short_decimal(token), "{token}");
        }
    }

    #[test]
    fn only_serde_json_s_own_unicode_escapes_are_plain() {
        assert!(unicode_escape("0001"));
        assert!(unicode_escape("001f"));
        for other in ["001F", "0008", "000a", "0020", "00e9", "d83d", "zzzz"] {
            assert!(!unicode_escape(other), "{other}");
        }
    }

    #[test]
    fn repeated_keys_are_found_per_object() {
        let text = r#""a""b""a""#;
        let mut keys = Keys::default();
        let outer = keys.open();
        assert!(keys.add(outer, text, 0..3));
        let inner = keys.open();
        assert!(keys.add(inner, text, 6..9), "a key of the outer object");
        keys.close(inner);
        assert!(keys.add(outer, text, 3..6));
        assert!(!keys.add(outer, text, 6..9));
    }
}
