//! The handful of JavaScript value semantics the context builder needs to read entries exactly as
//! the agents' code does: property access that yields `undefined`, truthiness, `String(x)`, `===`,
//! `Set` membership (SameValueZero), `new Date(x).getTime()`, and the Unicode white space `trim`
//! uses. Here `Option<&Value>` is a JavaScript value: `None` is `undefined`. Nothing in this module
//! knows about sessions.

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
pub(crate) fn truthy(v: Option<&Value>) -> bool {
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

/// `String(v)`, also what template literals and `+` with a string produce.
pub(crate) fn to_string(v: Option<&Value>) -> String {
    match v {
        None => "undefined".to_owned(),
        Some(v) => value_to_string(v),
    }
}

fn value_to_string(v: &Value) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number_to_string(n),
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

fn number_to_string(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return crate::json::js_number(u as f64);
    }
    crate::json::js_number(n.as_f64().unwrap_or(f64::NAN))
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
        Some(Value::Number(n)) => format!(
            "n{}",
            crate::json::js_number(n.as_f64().unwrap_or(f64::NAN))
        ),
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

/// Whether `c` is white space for JavaScript's `trim` and `\s` (WhiteSpace plus LineTerminator).
pub(crate) fn is_js_ws(c: char) -> bool {
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
pub(crate) fn trim(s: &str) -> &str {
    s.trim_matches(is_js_ws)
}

/// `String.prototype.trimEnd`.
pub(crate) fn trim_end(s: &str) -> &str {
    s.trim_end_matches(is_js_ws)
}

/// `String.prototype.trimStart`.
pub(crate) fn trim_start(s: &str) -> &str {
    s.trim_start_matches(is_js_ws)
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
