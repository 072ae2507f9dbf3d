//! The agents' JavaScript rules (`sessiontree_core::js`) against JavaScript itself: `node` answers
//! the same questions on the edge characters and values — which characters `trim` and `\s` take
//! (every code point), `trim`, `split(/\s+/)`, `Boolean(v)` and `String(v)` of JSON values, how
//! numbers print (random doubles among them), `Math.round`, UTF-16 lengths and slices,
//! `charAt(0).toUpperCase()` and the order of `sort()`. `node` is a prerequisite of the project
//! (pi runs on it): without it this test fails.

use serde_json::{json, Value};
use sessiontree_core::js;
use std::io::Write;
use std::process::{Command, Stdio};

/// What `node` computes for the cases (a JSON object in, a JSON object out).
const NODE_SCRIPT: &str = r#"
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
const out = {};
// A lone half of a surrogate pair (from a slice) becomes U+FFFD, as JSON text cannot hold it.
const wf = (s) => s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");
out.whitespace = [];
for (let cp = 0; cp <= 0x10ffff; cp++) {
  if (cp >= 0xd800 && cp <= 0xdfff) continue;
  if (/^\s$/u.test(String.fromCodePoint(cp))) out.whitespace.push(cp);
}
out.strings = input.strings.map((s) => ({
  trim: s.trim(),
  trimStart: s.trimStart(),
  trimEnd: s.trimEnd(),
  words: s.split(/\s+/).filter(Boolean),
  collapsed: s.replace(/\s+/g, " ").trim(),
  oneLine: s.replace(/[\n\t]/g, " ").trim(),
  length: s.length,
  slice5: wf(s.slice(0, 5)),
  slice1: wf(s.slice(0, 1)),
  upperFirst: wf(s.charAt(0).toUpperCase() + s.slice(1)),
}));
out.sorted = input.strings.slice().sort();
out.values = JSON.parse(input.values).map((v) => ({ string: String(v), truthy: Boolean(v) }));
out.numbers = JSON.parse(input.numbers).map((n) => String(n));
out.rounded = JSON.parse(input.rounded).map((n) => {
  const r = Math.round(n);
  return Object.is(r, -0) ? "-0" : String(r);
});
process.stdout.write(JSON.stringify(out));
"#;

/// Strings with every kind of white space and line end at their ends and inside, U+0085 and
/// U+180E (white space to Rust or to old Unicode, not to JavaScript), surrogate pairs, and
/// first letters whose upper case is longer or lies outside the Basic Multilingual Plane.
fn sample_strings() -> Vec<String> {
    let specials = [
        '\t', '\n', '\u{b}', '\u{c}', '\r', ' ', '\u{85}', '\u{a0}', '\u{1680}', '\u{180e}',
        '\u{2000}', '\u{2005}', '\u{200a}', '\u{200b}', '\u{2028}', '\u{2029}', '\u{202f}',
        '\u{205f}', '\u{3000}', '\u{feff}', '\u{fffe}', '\u{1c}', '\u{1f}', '\u{0}',
    ];
    let mut out: Vec<String> = vec![
        String::new(),
        "\u{85}named".to_owned(),
        "named\u{85}".to_owned(),
        " \u{85} ".to_owned(),
        "ßx".to_owned(),
        "ǆungla".to_owned(),
        "\u{10428}\u{10429}".to_owned(),
        "😀 é\u{301}".to_owned(),
        "ab😀cd".to_owned(),
        "abcd😀".to_owned(),
        "İstanbul".to_owned(),
        "ﬁsh".to_owned(),
        "a\tb\nc\r\nd".to_owned(),
        "  many   words\there \u{3000}and\u{2028}there  ".to_owned(),
    ];
    for c in specials {
        out.push(format!("{c}x{c}"));
        out.push(format!("{c}{c}"));
        out.push(format!("a{c}b{c}{c}c"));
    }
    out
}

/// JSON values as both sides read them from the same text.
const VALUES: &str = r#"[0, -0, 0.0, 1, -1, 1.5, 0.1, 1e21, 1e-7, 123456789012345680000,
  9007199254740993, 18446744073709551615, -9223372036854775808, 5e-324, 1.7976931348623157e308,
  "", " ", "0", "false", "\u0085", [], [0], [1, null, "a"], [[1, 2], [3]], [null], [true, {"a": 1}],
  [1.5e300, -0], {}, {"a": 1}, null, true, false]"#;

/// Numbers at the format's edges, then random doubles (bit patterns from a fixed seed).
fn sample_numbers() -> Vec<f64> {
    let mut numbers = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.1,
        0.5,
        1e21,
        9.99e20,
        1e-6,
        1e-7,
        1.5e-7,
        123456.789,
        5e-324,
        f64::MAX,
        f64::MIN_POSITIVE,
        2f64.powi(53),
        2f64.powi(53) + 2.0,
        1e300,
        4.35,
        0.000001234,
    ];
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    while numbers.len() < 3000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let value = f64::from_bits(state);
        if value.is_finite() {
            numbers.push(value);
        }
        // Integers and short decimals, which sessions hold most.
        numbers.push((state % 1_000_000) as f64 / [1.0, 10.0, 1000.0][(state % 3) as usize]);
    }
    numbers
}

fn rounding_cases() -> Vec<f64> {
    vec![
        2.5,
        -2.5,
        0.5,
        -0.5,
        -0.4,
        0.49999999999999994,
        -0.49999999999999994,
        1.4999999999999998,
        4503599627370495.5,
        4503599627370497.0,
        1.5,
        -1.5,
        1e300,
        -0.0,
        0.0,
        1234.5678,
    ]
}

fn numbers_json(numbers: &[f64]) -> String {
    // `{:?}` prints the shortest text that reads back as the same double, in both languages.
    let items: Vec<String> = numbers.iter().map(|n| format!("{n:?}")).collect();
    format!("[{}]", items.join(","))
}

fn run_node(input: &Value) -> Value {
    let mut child = Command::new("node")
        .arg("-e")
        .arg(NODE_SCRIPT)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("`node` is needed to check the JavaScript rules (it runs pi): {e}")
        });
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(input.to_string().as_bytes())
        .expect("write to node");
    drop(stdin);
    let out = child.wait_with_output().expect("node");
    assert!(out.status.success(), "node failed: {:?}", out.status);
    serde_json::from_slice(&out.stdout).expect("node's answer is JSON")
}

#[test]
fn the_javascript_rules_answer_as_node_does() {
    let strings = sample_strings();
    let numbers = sample_numbers();
    let rounded = rounding_cases();
    let node = run_node(&json!({
        "strings": strings,
        "values": VALUES,
        "numbers": numbers_json(&numbers),
        "rounded": numbers_json(&rounded),
    }));

    // White space: every code point.
    let node_ws: Vec<u32> = serde_json::from_value(node["whitespace"].clone()).expect("list");
    let ours: Vec<u32> = (0..=0x10ffff_u32)
        .filter_map(char::from_u32)
        .filter(|&c| js::is_whitespace(c))
        .map(u32::from)
        .collect();
    assert_eq!(ours, node_ws, "white space for `trim` and `\\s`");
    assert!(!js::is_whitespace('\u{85}') && '\u{85}'.is_whitespace());

    for (s, want) in strings
        .iter()
        .zip(node["strings"].as_array().expect("strings"))
    {
        let words: Vec<&str> = js::words(s).collect();
        let got = json!({
            "trim": js::trim(s),
            "trimStart": js::trim_start(s),
            "trimEnd": js::trim_end(s),
            "words": words,
            "collapsed": js::collapse_whitespace(s),
            "oneLine": js::one_line(s),
            "length": js::utf16_len(s),
            "slice5": js::slice_utf16(s, 5),
            // `slice(0, 1)` of a surrogate pair is half of it, which no Rust string holds:
            // ours drops the pair whole.
            "slice1": if s.chars().next().is_some_and(|c| c.len_utf16() == 2) {
                want["slice1"].clone()
            } else {
                json!(js::slice_utf16(s, 1))
            },
            "upperFirst": js::upper_first(s),
        });
        // A half pair from `slice(0, 5)` comes back from node as U+FFFD; ours stops before it.
        let mut want = want.clone();
        if let Some(slice) = want["slice5"].as_str() {
            if let Some(whole) = slice
                .strip_suffix('\u{fffd}')
                .filter(|_| !s.contains('\u{fffd}'))
            {
                want["slice5"] = json!(whole);
            }
        }
        assert_eq!(got, want, "{s:?}");
    }

    // `sort()` orders by UTF-16 units.
    let mut sorted = strings.clone();
    js::sort_strings(&mut sorted);
    assert_eq!(json!(sorted), node["sorted"], "strings.sort()");

    let values: Vec<Value> = serde_json::from_str(VALUES).expect("values");
    for (v, want) in values
        .iter()
        .zip(node["values"].as_array().expect("values"))
    {
        assert_eq!(js::to_string(Some(v)), want["string"], "String({v})");
        assert_eq!(js::truthy(Some(v)), want["truthy"], "Boolean({v})");
    }
    assert_eq!(js::to_string(None), "undefined");
    assert!(!js::truthy(None));

    for (n, want) in numbers
        .iter()
        .zip(node["numbers"].as_array().expect("numbers"))
    {
        assert_eq!(js::number_to_string(*n), *want, "String({n:?})");
    }

    for (n, want) in rounded
        .iter()
        .zip(node["rounded"].as_array().expect("rounded"))
    {
        let r = js::round(*n);
        let got = if r == 0.0 && r.is_sign_negative() {
            "-0".to_owned()
        } else {
            js::number_to_string(r)
        };
        assert_eq!(got, *want, "Math.round({n:?})");
    }
}
