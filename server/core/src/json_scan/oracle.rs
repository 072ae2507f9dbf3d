//! The scanner against serde_json, its oracle: on random values written in every way JSON allows
//! (white space, escapes of either case, surrogate pairs, numbers of every form), on those texts
//! edited at random (bytes removed, punctuation, lone surrogates, bad escapes and control
//! characters put in) and on a list of adversarial texts, the scanner accepts exactly the texts
//! `serde_json::from_str::<Value>` accepts, every string it accepts decodes to serde_json's
//! text, and the sixteen-bytes-at-a-time run finder agrees with a byte-by-byte one.

use super::*;
use serde_json::Value;

/// Random choices from a seed.
struct Rng(Box<dyn FnMut(usize) -> usize>);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(Box::new(crate::test_sessions::numbers(seed)))
    }
    fn below(&mut self, n: usize) -> usize {
        (self.0)(n)
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

/// Numbers serde_json reads into a value: those whose float is finite (a number out of range is
/// the reader's concern, told by its watch).
struct InRange;

impl Watch for InRange {
    fn number(&mut self, token: &str) -> bool {
        token.parse::<f64>().is_ok_and(f64::is_finite)
    }
}

/// Whether the scanner reads `text` as one JSON document.
fn scanner_accepts(text: &str) -> bool {
    Scanner::watched(text, InRange).document().is_some()
}

/// Whether serde_json reads `text` into a value.
fn serde_accepts(text: &str) -> bool {
    serde_json::from_str::<Value>(text).is_ok()
}

/// Optional white space between tokens.
fn ws(rng: &mut Rng, out: &mut String) {
    if rng.below(4) == 0 {
        for _ in 0..1 + rng.below(3) {
            out.push(rng.pick(&[' ', '\n', '\t', '\r']));
        }
    }
}

/// A random character for a string, with JSON's hard cases often.
fn string_char(rng: &mut Rng, out: &mut String) {
    match rng.below(16) {
        0 => out.push_str(rng.pick(&["\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t"])),
        1 => {
            let unit = rng.below(0x1_0000) as u32;
            match char::from_u32(unit) {
                Some(_) if rng.below(2) == 0 => out.push_str(&format!("\\u{unit:04x}")),
                Some(_) => out.push_str(&format!("\\u{unit:04X}")),
                // A surrogate: written as a pair.
                None => {
                    let low = 0xDC00 + rng.below(0x400);
                    out.push_str(&format!("\\u{:04x}\\u{low:04X}", 0xD800 + rng.below(0x400)));
                }
            }
        }
        2 => out.push(rng.pick(&['é', '中', '😀', '\u{7f}', '\u{a0}', '\u{2028}', '\u{feff}'])),
        3 => out.push_str(rng.pick(&["\\u0000", "\\u001f", "\\u0020", "\\ud83d\\ude00"])),
        _ => out.push(char::from(b' ' + rng.below(95) as u8)),
    }
}

fn string(rng: &mut Rng, out: &mut String) {
    out.push('"');
    let len = match rng.below(10) {
        0 => 20 + rng.below(60),
        _ => rng.below(8),
    };
    for _ in 0..len {
        let before = out.len();
        string_char(rng, out);
        // A plain quote or backslash would end the string or start an escape: escape it.
        if matches!(&out[before..], "\"" | "\\") {
            out.insert(before, '\\');
        }
    }
    out.push('"');
}

fn number(rng: &mut Rng, out: &mut String) {
    if rng.below(3) == 0 {
        out.push('-');
    }
    match rng.below(4) {
        0 => out.push('0'),
        _ => {
            out.push(char::from(b'1' + rng.below(9) as u8));
            for _ in 0..rng.below(6) {
                out.push(char::from(b'0' + rng.below(10) as u8));
            }
        }
    }
    if rng.below(3) == 0 {
        out.push('.');
        for _ in 0..1 + rng.below(4) {
            out.push(char::from(b'0' + rng.below(10) as u8));
        }
    }
    if rng.below(4) == 0 {
        out.push_str(rng.pick(&["e", "E", "e+", "e-", "E-"]));
        for _ in 0..1 + rng.below(2) {
            out.push(char::from(b'0' + rng.below(10) as u8));
        }
    }
}

/// A random value `depth` deep at most, written with random white space.
fn value(rng: &mut Rng, depth: usize, out: &mut String) {
    let kinds = if depth == 0 { 5 } else { 7 };
    match rng.below(kinds) {
        0 => string(rng, out),
        1 => number(rng, out),
        2 => out.push_str(rng.pick(&["true", "false"])),
        3 => out.push_str("null"),
        4 => string(rng, out),
        5 => {
            out.push('[');
            ws(rng, out);
            for i in 0..rng.below(5) {
                if i > 0 {
                    out.push(',');
                    ws(rng, out);
                }
                value(rng, depth - 1, out);
                ws(rng, out);
            }
            out.push(']');
        }
        _ => {
            out.push('{');
            ws(rng, out);
            for i in 0..rng.below(5) {
                if i > 0 {
                    out.push(',');
                    ws(rng, out);
                }
                string(rng, out);
                ws(rng, out);
                out.push(':');
                ws(rng, out);
                value(rng, depth - 1, out);
                ws(rng, out);
            }
            out.push('}');
        }
    }
}

/// A random document: a value with white space around it.
fn document(rng: &mut Rng) -> String {
    let mut out = String::new();
    ws(rng, &mut out);
    let depth = 1 + rng.below(5);
    value(rng, depth, &mut out);
    ws(rng, &mut out);
    out
}

/// Pieces the edits put into texts: JSON's punctuation and the grammar's hard cases.
const PIECES: &[&str] = &[
    "\"",
    "\\",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    " ",
    "\u{1}",
    "\u{1f}",
    "\u{7f}",
    "0",
    "00",
    "-",
    "+",
    ".",
    "e",
    "E",
    "1e",
    "-0",
    "01",
    ".5",
    "1.",
    "null",
    "nul",
    "true",
    "tru",
    "fals",
    "\\u",
    "\\u12",
    "\\uZZZZ",
    "\\ud800",
    "\\udbff",
    "\\udc00",
    "\\ud800\\u0041",
    "\\ud800\\n",
    "\\ud83d\\ude00",
    "\\x",
    "\\'",
    "\\U0041",
    "\u{e9}",
    "\u{feff}",
    "\"\":",
    "[]",
    "{}",
];

/// `text` edited one to three times at random.
fn edited(rng: &mut Rng, text: &str) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for _ in 0..1 + rng.below(3) {
        let at = rng.below(bytes.len() + 1);
        match rng.below(3) {
            0 if at < bytes.len() => {
                bytes.remove(at);
            }
            1 if at + 2 < bytes.len() => {
                let piece = bytes[at..at + 1 + rng.below(2)].to_vec();
                bytes.splice(at..at, piece);
            }
            _ => {
                let piece = rng.pick(PIECES).as_bytes();
                bytes.splice(at..at, piece.iter().copied());
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Checks the scanner against serde_json on `text`: acceptance, and the decoding of every string
/// token in it.
fn check(text: &str) -> bool {
    let accepted = scanner_accepts(text);
    assert_eq!(
        accepted,
        serde_accepts(text),
        "acceptance differs on {text:?}"
    );
    if accepted {
        check_strings(text);
    }
    accepted
}

/// Every string token of an accepted `text` decodes to what serde_json decodes it to, in whole
/// and in prefixes.
fn check_strings(text: &str) {
    struct Strings(Vec<std::ops::Range<usize>>);
    let mut scanner = Scanner::new(text);
    scanner.ws();
    fn walk(s: &mut Scanner<'_>, depth: u32, found: &mut Strings) -> Option<()> {
        match s.peek()? {
            b'"' => {
                let start = s.at;
                s.string()?;
                found.0.push(start..s.at);
                Some(())
            }
            b'{' => s.object(depth, |s, key, depth| {
                found.0.push(key.span());
                walk(s, depth, found)
            }),
            b'[' => s.array(depth, |s, depth| walk(s, depth, found)),
            _ => s.skip(depth),
        }
    }
    let mut found = Strings(Vec::new());
    walk(&mut scanner, 0, &mut found).expect("accepted");
    for span in found.0 {
        let raw = &text[span];
        let want: String = serde_json::from_str(raw).expect("a string serde_json reads");
        let inner = &raw[1..raw.len() - 1];
        assert_eq!(decode(inner).as_deref(), Some(&*want), "{raw}");
        for limit in [0, 1, 3, 8] {
            let (prefix, whole) = decode_prefix(inner, limit).expect(raw);
            assert!(want.starts_with(&prefix), "{raw} {limit}: {prefix:?}");
            assert!(prefix.len() >= limit.min(want.len()), "{raw} {limit}");
            assert_eq!(whole, prefix == want, "{raw} {limit}");
        }
    }
}

#[test]
fn random_documents_are_read_as_serde_json_reads_them() {
    let mut rng = Rng::new(0x0a11_ce55);
    for _ in 0..20_000 {
        let text = document(&mut rng);
        assert!(check(&text), "a generated document is valid: {text:?}");
    }
}

#[test]
fn edited_documents_are_accepted_exactly_when_serde_json_accepts_them() {
    let mut rng = Rng::new(0xed17_ed17);
    let (mut accepted, mut tried) = (0, 0);
    for _ in 0..60_000 {
        let text = document(&mut rng);
        let text = edited(&mut rng, &text);
        tried += 1;
        accepted += usize::from(check(&text));
    }
    // Both kinds are met often.
    assert!(
        accepted * 10 > tried && accepted * 10 < tried * 9,
        "{accepted} of {tried}"
    );
}

#[test]
fn adversarial_texts_are_accepted_exactly_when_serde_json_accepts_them() {
    let deep = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
    let texts = [
        "",
        " ",
        "1",
        "-",
        "-0",
        "-01",
        "01",
        "1.",
        ".1",
        "1.e5",
        "1e",
        "1e+",
        "1E-7",
        "0e0",
        "+1",
        "1 2",
        "tru",
        "truex",
        "nulll",
        "\"",
        "\"\\\"",
        "\"\\u\"",
        "\"\\u00e\"",
        "\"\\u00E9\"",
        "\"\\ud83d\\ude00\"",
        "\"\\ud83d\"",
        "\"\\ude00\"",
        "\"\\ud83d\\u0041\"",
        "\"\\ud83d\\ud83d\"",
        "\"\\ud83dx\"",
        "\"\\ud83d\\n\"",
        "\"\\udbff\\udfff\"",
        "\"\\/\"",
        "\"\\a\"",
        "\"a\u{1}\"",
        "\"a\u{7f}\"",
        "\"a\tb\"",
        "[1,]",
        "[,1]",
        "[1 2]",
        "{\"a\":1,}",
        "{\"a\" 1}",
        "{\"a\"::1}",
        "{1:1}",
        "{\"a\":1 \"b\":2}",
        "{\"a\":1}}",
        "[[]",
        "\u{feff}1",
        "1\u{0}",
        "\u{c}1",
        "1e308",
        "1e309",
        "-1.8e308",
        "1e-400",
        "0e99999",
        "123456789012345678901234567890",
        &deep(99),
        &deep(100),
    ];
    for text in texts {
        check(text);
    }
    // Nesting past the scanner's limit is left to the full parse, never accepted.
    assert!(!scanner_accepts(&deep(101)));
}

/// Numbers the watch refuses give up on the text; white space and escapes are reported.
#[test]
fn the_watch_sees_numbers_white_space_and_escapes() {
    #[derive(Default)]
    struct Seen {
        whitespace: usize,
        escapes: Vec<String>,
        numbers: Vec<String>,
    }
    impl Watch for Seen {
        fn whitespace(&mut self) {
            self.whitespace += 1;
        }
        fn escape(&mut self, escape: &[u8]) {
            self.escapes
                .push(String::from_utf8_lossy(escape).into_owned());
        }
        fn number(&mut self, token: &str) -> bool {
            self.numbers.push(token.to_owned());
            token != "7"
        }
    }
    let text = r#" {"a\n" : [1, -2.5e3], "b":"\u00e9\/\ud83d\ude00"} "#;
    let mut s = Scanner::watched(text, Seen::default());
    assert!(s.document().is_some());
    assert_eq!(s.watch.whitespace, 6);
    assert_eq!(s.watch.escapes, ["n", "u00e9", "/", "ud83d", "ude00"]);
    assert_eq!(s.watch.numbers, ["1", "-2.5e3"]);
    assert!(Scanner::watched("[1,7]", Seen::default())
        .document()
        .is_none());
}

#[test]
fn strings_stop_at_quotes_escapes_and_control_characters() {
    let naive = |bytes: &[u8], at: usize| {
        (at..bytes.len())
            .find(|&i| stops_string(bytes[i]))
            .unwrap_or(bytes.len())
    };
    let fillers = [
        b'a', 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xa0, 0xdc, 0xff,
    ];
    for len in 0..40 {
        for stop in [b'"', b'\\', 0x00, 0x0a, 0x1f] {
            for filler in fillers {
                let mut bytes = vec![filler; len];
                bytes.push(stop);
                bytes.extend_from_slice(b"b\"\\\x01");
                for at in 0..=len {
                    assert_eq!(plain_run(&bytes, at), len, "{filler} {stop}");
                }
            }
        }
        for filler in fillers {
            assert_eq!(plain_run(&vec![filler; len], 0), len);
        }
    }
    let mut rng = Rng::new(0xb17e5);
    for _ in 0..20_000 {
        let bytes: Vec<u8> = (0..rng.below(40))
            .map(|_| match rng.below(4) {
                0 => rng.pick(&[b'"', b'\\', 0x00, 0x1f, 0x20, 0x21, 0x5c ^ 0x80]),
                _ => rng.below(256) as u8,
            })
            .collect();
        let at = rng.below(bytes.len() + 1);
        assert_eq!(plain_run(&bytes, at), naive(&bytes, at), "{bytes:?} {at}");
    }
}
