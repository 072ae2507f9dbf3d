//! JSON text exactly as the agents write it: compact `JSON.stringify` output with keys in insertion
//! order (serde_json's `preserve_order`) and numbers formatted the way JavaScript formats them
//! ([`crate::js::number_to_string`]).

use serde::Serialize;
use serde_json::ser::Formatter;
use serde_json::Value;
use std::io;

/// A serde_json formatter that prints floating-point numbers as JavaScript's `Number.prototype.toString`.
struct JsFormatter;

impl Formatter for JsFormatter {
    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        writer.write_all(crate::js::number_to_string(value).as_bytes())
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f32) -> io::Result<()> {
        writer.write_all(crate::js::number_to_string(f64::from(value)).as_bytes())
    }
}

/// Serializes a value as one compact line (no newline), as `JSON.stringify` would.
pub fn to_line<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::with_capacity(128);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, JsFormatter);
    // Serializing a `Value` or our own plain structs cannot fail: no maps with non-string keys.
    if value.serialize(&mut ser).is_err() {
        return "null".to_owned();
    }
    String::from_utf8(out).unwrap_or_default()
}

/// Builds a JSON object from `(key, value)` pairs in order, leaving out `None` values (JavaScript's
/// `undefined` fields are not written).
pub fn object<I>(pairs: I) -> Value
where
    I: IntoIterator<Item = (&'static str, Option<Value>)>,
{
    let mut map = serde_json::Map::new();
    for (key, value) in pairs {
        if let Some(value) = value {
            map.insert(key.to_owned(), value);
        }
    }
    Value::Object(map)
}

/// A key looked up in an object by comparing keys when the object is small: serde_json's map
/// hashes every key looked up (with SipHash), which costs more than comparing a few short keys,
/// and reading an entry's fields at open does it a dozen times per line. Keys are unique in a
/// map, so the answer is the one `get` gives.
pub(crate) trait Field {
    /// The value under `key`, when this is an object that has it.
    fn field(&self, key: &str) -> Option<&Value>;
}

impl Field for serde_json::Map<String, Value> {
    fn field(&self, key: &str) -> Option<&Value> {
        if self.len() <= 8 {
            self.iter().find(|(k, _)| k.as_str() == key).map(|(_, v)| v)
        } else {
            self.get(key)
        }
    }
}

impl Field for Value {
    fn field(&self, key: &str) -> Option<&Value> {
        self.as_object().and_then(|map| map.field(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lines_are_compact_and_ordered() {
        let v = json!({"type":"x","b":1.0,"a":"é\u{1b}\n","n":null});
        assert_eq!(
            to_line(&v),
            "{\"type\":\"x\",\"b\":1,\"a\":\"é\\u001b\\n\",\"n\":null}"
        );
    }
}
