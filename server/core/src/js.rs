//! The agents' JavaScript rules, written once: the string, value and number semantics of the
//! agents' TypeScript that the engine must reproduce exactly — white space as `trim` and `\s` see
//! it, UTF-16 lengths and slices, truthiness, `String(x)`, `Math.round`, how a number prints,
//! property access that yields `undefined`, `===`, `Set` membership (SameValueZero), `new
//! Date(x).getTime()` and object key order. Here `Option<&Value>` is a JavaScript value: `None` is
//! `undefined`. Nothing in this module knows about sessions; `tests/js_semantics.rs` checks it
//! against `node` on the edge characters and values.

use serde_json::{Map, Value};

/// `v[key]`: `undefined` unless `v` is an object that has the key.
pub(crate) fn get<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    /// Up to this many keys, comparing them is cheaper than hashing the key (the map hashes
    /// with SipHash).
    const SCAN: usize = 12;
    let object = v.as_object()?;
    if object.len() <= SCAN {
        // Keys of a map are distinct, so the first match is the only one.
        return object.iter().find(|(k, _)| *k == key).map(|(_, v)| v);
    }
    object.get(key)
}

/// `v.type === name`.
pub(crate) fn is_type(v: &Value, name: &str) -> bool {
    str_of(get(v, "type")) == Some(name)
}

/// The value when it is a string.
pub(crate) fn str_of(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_str)
}

/// `Boolean(v)`.
pub fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(_) | Value::Object(_)) => true,
    }
}

/// `v ?? fallback` for values read from JSON (`null` and `undefined` are nullish).
pub(crate) fn nullish(v: Option<&Value>) -> bool {
    matches!(v, None | Some(Value::Null))
}

/// `a || b || …` over JSON values: the first truthy one, else the last.
pub fn or<'a>(values: &[Option<&'a Value>]) -> Option<&'a Value> {
    for v in values {
        if truthy(*v) {
            return *v;
        }
    }
    values.last().copied().flatten()
}

/// `String(v)`, also what template literals and `+` with a string produce.
pub fn to_string(v: Option<&Value>) -> String {
    match v {
        None => "undefined".to_owned(),
        Some(v) => value_to_string(v),
    }
}

fn value_to_string(v: &Value) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number_value_to_string(n),
        Value::String(s) => s.clone(),
        // Array.prototype.toString joins with commas; null and undefined elements print empty.
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                Value::Null => String::new(),
                other => value_to_string(other),
            })
            .collect::<Vec<_>>()
            .join(","),
        Value::Object(_) => "[object Object]".to_owned(),
    }
}

/// A JSON number as JavaScript prints it: `JSON.parse` reads every number as a double, so an
/// integer beyond 2^53 prints rounded, as the agents would print it.
fn number_value_to_string(n: &serde_json::Number) -> String {
    match n.as_i64() {
        Some(i) if i.unsigned_abs() <= 1 << 53 => i.to_string(),
        _ => number_to_string(n.as_f64().unwrap_or(f64::NAN)),
    }
}

/// `Number.prototype.toString()` (`1` not `1.0`, `1e+21`, `1e-7`, the shortest digits that read
/// back as the same number, the even one of two equally near), except that the non-finite
/// values, which JSON cannot hold, print as `null` (as `JSON.stringify` writes them).
pub fn number_to_string(value: f64) -> String {
    if !value.is_finite() {
        return "null".to_owned();
    }
    ryu_js::Buffer::new().format_finite(value).to_owned()
}

/// `Math.round(x)`: the nearest integer, halves toward +∞ (`-0.5` gives `-0`). Not
/// `floor(x + 0.5)`, which rounds 0.49999999999999994 up: the sum rounds to 1.
pub fn round(x: f64) -> f64 {
    let floor = x.floor();
    // Exact: `x` and its floor are within one unit of each other's binade.
    let rounded = if x - floor >= 0.5 { floor + 1.0 } else { floor };
    if rounded == 0.0 && x.is_sign_negative() {
        -0.0
    } else {
        rounded
    }
}

/// `a === b`. Objects and arrays are equal only to themselves, so identity is checked by address:
/// callers compare values borrowed from the same entries, as the agents compare the same objects.
pub(crate) fn strict_eq(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(Value::Null), Some(Value::Null)) => true,
        (Some(Value::Bool(x)), Some(Value::Bool(y))) => x == y,
        (Some(Value::Number(x)), Some(Value::Number(y))) => x.as_f64() == y.as_f64(),
        (Some(Value::String(x)), Some(Value::String(y))) => x == y,
        (Some(x @ (Value::Array(_) | Value::Object(_))), Some(y)) => std::ptr::eq(x, y),
        _ => false,
    }
}

/// A key under which `Set` (SameValueZero) would find `v`: equal keys for equal primitives, the
/// address for objects and arrays (which are only ever equal to themselves).
pub(crate) fn set_key(v: Option<&Value>) -> String {
    match v {
        None => "u".to_owned(),
        Some(Value::Null) => "z".to_owned(),
        Some(Value::Bool(b)) => format!("b{b}"),
        Some(Value::Number(n)) => format!("n{}", number_to_string(n.as_f64().unwrap_or(f64::NAN))),
        Some(Value::String(s)) => format!("s{s}"),
        Some(other) => format!("r{:p}", other as *const Value),
    }
}

/// `new Date(v).getTime()` as JSON: a number, or `null` for NaN (which `JSON.stringify` writes as null).
pub(crate) fn date_ms(v: Option<&Value>) -> Value {
    let ms = match v {
        None => None,
        Some(Value::Null) => Some(0.0),
        Some(Value::Bool(b)) => Some(if *b { 1.0 } else { 0.0 }),
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(s)) => crate::time::parse_iso_ms(s),
        // Objects and arrays go through ToPrimitive, i.e. their string form, then Date.parse.
        Some(other) => crate::time::parse_iso_ms(&value_to_string(other)),
    };
    number_value(ms.and_then(time_clip))
}

/// ECMAScript TimeClip: NaN outside ±8.64e15 ms, otherwise truncated toward zero.
fn time_clip(ms: f64) -> Option<f64> {
    if !ms.is_finite() || ms.abs() > 8.64e15 {
        return None;
    }
    Some(ms.trunc() + 0.0)
}

/// A JavaScript number as a JSON value: integers as integers (so they compare equal to parsed
/// JSON), NaN and infinities as `null`.
pub(crate) fn number_value(n: Option<f64>) -> Value {
    match n {
        Some(f) if f.is_finite() => {
            if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 {
                Value::from(f as i64)
            } else {
                serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
            }
        }
        _ => Value::Null,
    }
}

/// Whether `c` is white space for JavaScript's `trim` and `\s`: WhiteSpace (tab, vertical tab,
/// form feed, the byte order mark and every space separator) plus LineTerminator. Unlike Rust's
/// `char::is_whitespace`, U+0085 (next line) is not white space, and U+FEFF is.
pub fn is_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// `String.prototype.trim`.
pub fn trim(s: &str) -> &str {
    s.trim_matches(is_whitespace)
}

/// `String.prototype.trimEnd`.
pub fn trim_end(s: &str) -> &str {
    s.trim_end_matches(is_whitespace)
}

/// `String.prototype.trimStart`.
pub fn trim_start(s: &str) -> &str {
    s.trim_start_matches(is_whitespace)
}

/// `s.split(/\s+/).filter(Boolean)`: the runs between white space.
pub fn words(s: &str) -> impl Iterator<Item = &str> {
    s.split(is_whitespace).filter(|w| !w.is_empty())
}

/// `s.replace(/\s+/g, " ").trim()`: runs of white space become one space, none at either end.
pub fn collapse_whitespace(s: &str) -> String {
    words(s).collect::<Vec<_>>().join(" ")
}

/// `s.replace(/[\n\t]/g, " ").trim()`, the agents' tree selectors' `normalize`: a text on one
/// line.
pub fn one_line(s: &str) -> String {
    if !s.bytes().any(|b| b == b'\n' || b == b'\t') {
        return trim(s).to_owned();
    }
    let mut replaced = String::with_capacity(s.len());
    let mut from = 0;
    for at in memchr::memchr2_iter(b'\n', b'\t', s.as_bytes()) {
        replaced.push_str(&s[from..at]);
        replaced.push(' ');
        from = at + 1;
    }
    replaced.push_str(&s[from..]);
    let trimmed = trim(&replaced);
    if trimmed.len() == replaced.len() {
        replaced
    } else {
        trimmed.to_owned()
    }
}

/// `s.charAt(0).toUpperCase() + s.slice(1)`: `charAt` takes one UTF-16 unit, so a first
/// character outside the Basic Multilingual Plane (half of a surrogate pair) is left as it is.
pub fn upper_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        None => String::new(),
        Some(first) if first.len_utf16() == 2 => s.to_owned(),
        Some(first) => first.to_uppercase().chain(chars).collect(),
    }
}

/// The order of `Array.prototype.sort()` without a comparator on strings: by UTF-16 code units
/// (a character outside the Basic Multilingual Plane sorts before U+E000..U+FFFF, unlike Rust's
/// order by code point).
pub fn cmp_utf16(a: &str, b: &str) -> std::cmp::Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// `strings.sort()`.
pub fn sort_strings(strings: &mut [String]) {
    strings.sort_by(|a, b| cmp_utf16(a, b));
}

/// `s.length` in UTF-16 code units.
pub fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// `s.slice(0, n)` in UTF-16 code units (a surrogate pair that would be split is dropped whole).
pub fn slice_utf16(s: &str, n: usize) -> &str {
    // A character takes at least as many UTF-8 bytes as UTF-16 units: short strings are whole,
    // and an ASCII start is cut at `n` bytes.
    if s.len() <= n {
        return s;
    }
    if s.as_bytes()[..n].is_ascii() {
        return &s[..n];
    }
    let mut units = 0;
    for (i, c) in s.char_indices() {
        units += c.len_utf16();
        if units > n {
            return &s[..i];
        }
    }
    s
}

/// Whether `key` is an array index, which JavaScript objects enumerate first, in numeric order.
fn array_index(key: &str) -> Option<u32> {
    if key.is_empty()
        || (key.len() > 1 && key.starts_with('0'))
        || !key.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    key.parse::<u32>().ok().filter(|&n| n != u32::MAX)
}

/// `obj[key] = value` keeping JavaScript's property order: an existing key keeps its place,
/// integer-like keys sort first in numeric order, other new keys go last.
pub(crate) fn object_set(obj: &mut Map<String, Value>, key: String, value: Value) {
    if let Some(slot) = obj.get_mut(&key) {
        *slot = value;
        return;
    }
    match array_index(&key) {
        None => {
            obj.insert(key, value);
        }
        Some(n) => {
            let at = obj
                .keys()
                .take_while(|k| array_index(k).is_some_and(|m| m < n))
                .count();
            obj.shift_insert(at, key, value);
        }
    }
}

/// `{...obj, key: value}` with `undefined` (None) dropping the key: an existing key keeps its place.
pub(crate) fn with_field(
    obj: &Map<String, Value>,
    key: &str,
    value: Option<Value>,
) -> Map<String, Value> {
    let mut out = obj.clone();
    match value {
        Some(v) => {
            if let Some(slot) = out.get_mut(key) {
                *slot = v;
            } else {
                out.insert(key.to_owned(), v);
            }
        }
        None => {
            out.shift_remove(key);
        }
    }
    out
}

/// Builds an object from `(key, value)` pairs in order, leaving out `undefined` (None) values.
pub(crate) fn object<'a, I>(pairs: I) -> Value
where
    I: IntoIterator<Item = (&'a str, Option<Value>)>,
{
    let mut map = Map::new();
    for (key, value) in pairs {
        if let Some(value) = value {
            map.insert(key.to_owned(), value);
        }
    }
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_like_javascript() {
        assert_eq!(to_string(None), "undefined");
        assert_eq!(to_string(Some(&json!(null))), "null");
        assert_eq!(to_string(Some(&json!(1.5))), "1.5");
        assert_eq!(to_string(Some(&json!([1, null, "a"]))), "1,,a");
        assert_eq!(to_string(Some(&json!({"a": 1}))), "[object Object]");
    }

    #[test]
    fn slicing_and_one_line_match_their_char_by_char_definitions() {
        fn slice_ref(s: &str, n: usize) -> &str {
            let mut units = 0;
            for (i, c) in s.char_indices() {
                units += c.len_utf16();
                if units > n {
                    return &s[..i];
                }
            }
            s
        }
        fn one_line_ref(s: &str) -> String {
            let replaced: String = s
                .chars()
                .map(|c| if c == '\n' || c == '\t' { ' ' } else { c })
                .collect();
            trim(&replaced).to_owned()
        }
        let samples = [
            "",
            "abc",
            &"a".repeat(200),
            &"b".repeat(201),
            &format!("{}é", "a".repeat(199)),
            &format!("{}😀x", "a".repeat(199)),
            &format!("{}😀", "a".repeat(198)),
            &"é😀\u{feff}".repeat(90),
            "\n\tline\none\t\n",
            "\u{feff} x \u{a0}",
            " \t",
        ]
        .map(str::to_owned);
        for s in &samples {
            for n in [0, 1, 3, 80, 199, 200, 201] {
                assert_eq!(slice_utf16(s, n), slice_ref(s, n), "{s:?} {n}");
            }
            assert_eq!(one_line(s), one_line_ref(s), "{s:?}");
        }
    }

    #[test]
    fn utf16_slicing_and_lengths() {
        assert_eq!(utf16_len("a😀"), 3);
        assert_eq!(slice_utf16("a😀b", 2), "a");
        assert_eq!(slice_utf16("abc", 5), "abc");
    }

    #[test]
    fn js_conversions() {
        assert_eq!(to_string(None), "undefined");
        assert_eq!(to_string(Some(&json!(5))), "5");
        assert_eq!(to_string(Some(&json!([1, null, "a"]))), "1,,a");
        assert!(!truthy(Some(&json!(""))));
        assert!(truthy(Some(&json!([]))));
        assert_eq!(round(2.5), 3.0);
        assert_eq!(round(-2.5), -2.0);
    }

    #[test]
    fn numbers_print_like_javascript() {
        assert_eq!(number_to_string(1.0), "1");
        assert_eq!(number_to_string(-0.0), "0");
        assert_eq!(number_to_string(0.1), "0.1");
        assert_eq!(number_to_string(1735689601000.0), "1735689601000");
        assert_eq!(number_to_string(1e21), "1e+21");
        assert_eq!(number_to_string(1e-7), "1e-7");
        assert_eq!(number_to_string(0.000001), "0.000001");
        assert_eq!(number_to_string(f64::NAN), "null");
    }

    #[test]
    fn dates_like_javascript() {
        assert_eq!(
            date_ms(Some(&json!("2025-01-01T00:00:01.000Z"))),
            json!(1735689601000_i64)
        );
        assert_eq!(date_ms(None), Value::Null);
        assert_eq!(date_ms(Some(&json!(null))), json!(0));
        assert_eq!(date_ms(Some(&json!("nope"))), Value::Null);
    }

    #[test]
    fn object_key_order_like_javascript() {
        let mut m = Map::new();
        object_set(&mut m, "default".into(), json!(1));
        object_set(&mut m, "7".into(), json!(2));
        object_set(&mut m, "3".into(), json!(3));
        object_set(&mut m, "default".into(), json!(4));
        assert_eq!(m.keys().collect::<Vec<_>>(), ["3", "7", "default"]);
        assert_eq!(m["default"], json!(4));
    }
}
