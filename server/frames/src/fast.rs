//! One pass over a request or notification that keeps nothing: a shortcut for [`crate::check`].
//!
//! It accepts a JSON object whose `"jsonrpc"` is `"2.0"`, whose `"method"` (if any) is a string,
//! whose `"id"` (if any) is an integer that fits 64 signed bits, a string or `null`, with no
//! field repeated, and whose every value (`params` and any other field) serde_json reads as any
//! value (its nesting limit and number rules included). The library decodes every such text:
//! its buffer reads the same values the same way, and its request type takes those fields. Any
//! other text (responses, arrays, anything doubtful) is left to the library's own type, so this
//! never decides a refusal.

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// Whether `text` is a request or notification the library decodes, by the rules above.
pub(crate) fn plain_request(text: &str) -> bool {
    serde_json::from_str::<Plain>(text).is_ok()
}

/// Any JSON value, read as serde_json reads one for a `Value` (through `deserialize_any`), kept
/// nowhere.
struct Any;

impl<'de> de::Deserialize<'de> for Any {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Any, D::Error> {
        d.deserialize_any(AnyVisitor)
    }
}

struct AnyVisitor;

impl<'de> Visitor<'de> for AnyVisitor {
    type Value = Any;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Any, E> {
        Ok(Any)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Any, E> {
        Ok(Any)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Any, E> {
        Ok(Any)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Any, E> {
        Ok(Any)
    }
    fn visit_str<E>(self, _: &str) -> Result<Any, E> {
        Ok(Any)
    }
    fn visit_unit<E>(self) -> Result<Any, E> {
        Ok(Any)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Any, A::Error> {
        while seq.next_element::<Any>()?.is_some() {}
        Ok(Any)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Any, A::Error> {
        while map.next_entry::<Any, Any>()?.is_some() {}
        Ok(Any)
    }
}

/// A string, compared without keeping it.
struct Str<const VERSION: bool>;

impl<'de, const VERSION: bool> de::Deserialize<'de> for Str<VERSION> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Str::<VERSION>)
    }
}

impl<'de, const VERSION: bool> Visitor<'de> for Str<VERSION> {
    type Value = Str<VERSION>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if VERSION { "\"2.0\"" } else { "a string" })
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self, E> {
        match !VERSION || s == "2.0" {
            true => Ok(Str),
            false => Err(E::custom("not 2.0")),
        }
    }
}

/// An id: an integer in 64 signed bits, a string or null.
struct Id;

impl<'de> de::Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Id, D::Error> {
        d.deserialize_any(Id)
    }
}

impl<'de> Visitor<'de> for Id {
    type Value = Id;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an id")
    }
    fn visit_i64<E>(self, _: i64) -> Result<Id, E> {
        Ok(Id)
    }
    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Id, E> {
        match i64::try_from(n) {
            Ok(_) => Ok(Id),
            Err(_) => Err(E::custom("beyond 64 signed bits")),
        }
    }
    fn visit_str<E>(self, _: &str) -> Result<Id, E> {
        Ok(Id)
    }
    fn visit_unit<E>(self) -> Result<Id, E> {
        Ok(Id)
    }
}

/// A field name: the request's four, or another.
enum Field {
    Jsonrpc,
    Method,
    Params,
    Id,
    Other,
}

impl<'de> de::Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Field, D::Error> {
        d.deserialize_any(FieldVisitor)
    }
}

struct FieldVisitor;

impl<'de> Visitor<'de> for FieldVisitor {
    type Value = Field;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }
    fn visit_str<E>(self, s: &str) -> Result<Field, E> {
        Ok(match s {
            "jsonrpc" => Field::Jsonrpc,
            "method" => Field::Method,
            "params" => Field::Params,
            "id" => Field::Id,
            _ => Field::Other,
        })
    }
}

/// The message object.
struct Plain;

impl<'de> de::Deserialize<'de> for Plain {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Plain, D::Error> {
        d.deserialize_any(PlainVisitor)
    }
}

struct PlainVisitor;

impl<'de> Visitor<'de> for PlainVisitor {
    type Value = Plain;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a request object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Plain, A::Error> {
        let mut seen = [false; 4];
        while let Some(field) = map.next_key::<Field>()? {
            let slot = match field {
                Field::Jsonrpc => map.next_value::<Str<true>>().map(|_| 0)?,
                Field::Method => map.next_value::<Str<false>>().map(|_| 1)?,
                Field::Params => map.next_value::<Any>().map(|_| 2)?,
                Field::Id => map.next_value::<Id>().map(|_| 3)?,
                Field::Other => {
                    map.next_value::<Any>()?;
                    continue;
                }
            };
            if std::mem::replace(&mut seen[slot], true) {
                return Err(de::Error::custom("a repeated field"));
            }
        }
        match seen[0] {
            true => Ok(Plain),
            false => Err(de::Error::custom("no jsonrpc")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the library decodes, by its own type.
    fn library(text: &str) -> bool {
        serde_json::from_str::<crate::LibraryMessage>(text).is_ok()
    }

    #[test]
    fn what_the_shortcut_accepts_the_library_decodes() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let cases = [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"a":[1,2.5,-3,"x\n",null,true]}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","method":"initialized"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":"7","method":"m","extra":{"b":1}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":9223372036854775807,"method":"m"}"#.to_owned(),
            r#"{"\u006asonrpc":"\u0032.0","method":"m"}"#.to_owned(),
            r#"{"jsonrpc":"2.0"}"#.to_owned(),
            // Refused by the shortcut, and by the library.
            r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"m"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1.0,"method":"m"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","method":"m","method":"n"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","method":"m","extra":1e400}"#.to_owned(),
            format!(r#"{{"jsonrpc":"2.0","method":"m","extra":{}}}"#, deep(127)),
            format!(r#"{{"jsonrpc":"2.0","method":"m","extra":{}}}"#, deep(126)),
            format!(r#"{{"jsonrpc":"2.0","method":"m","params":{}}}"#, deep(127)),
            r#"{"method":"m"}"#.to_owned(),
            r#"{"jsonrpc":2,"method":"m"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","method":5}"#.to_owned(),
            r#"["2.0","m"]"#.to_owned(),
            r#"{"jsonrpc":"2.0","method":"m"} x"#.to_owned(),
        ];
        for text in &cases {
            if plain_request(text) {
                assert!(
                    library(text),
                    "the shortcut took what the library refuses: {text}"
                );
            }
        }
        let taken: Vec<bool> = cases.iter().map(|t| plain_request(t)).collect();
        let expected = [
            true, true, true, true, true, true, true, false, false, false, false, false, true,
            false, false, false, false, false, false,
        ];
        assert_eq!(taken, expected);
    }
}
