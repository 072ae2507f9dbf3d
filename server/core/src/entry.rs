//! One session entry as the engine holds it: the exact JSON text of its line plus the few fields the
//! index needs (`type`, `id`, `parentId`, `timestamp`), parsed once with a borrowed scan.
//!
//! Bodies stay as text so that a 300 MB session costs about its own size in memory; callers that need
//! the whole entry parse it on demand with [`Entry::json`].

use serde::Deserialize;
use serde_json::{Map, Value};

/// One parsed line of a session file (everything except the header and the omp title slot).
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The entry's JSON text, exactly as on disk (or as migrated in memory), without the newline.
    pub raw: Box<str>,
    /// 1-based physical line number in the file; 0 when the entry has not been written yet.
    pub line: usize,
    /// `type`, when the value is an object with a string `type`.
    pub kind: Option<Box<str>>,
    /// `id`, when it is a string.
    pub id: Option<Box<str>>,
    /// `parentId` as written: `Parent::Null`, a string, or absent / not a string.
    pub parent: Parent,
    /// `timestamp`, when it is a string.
    pub timestamp: Option<Box<str>>,
    /// Whether the line's JSON value is an object (non-object lines become id-less entries, as in the agents).
    pub is_object: bool,
}

/// The `parentId` field of an entry.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Parent {
    /// `"parentId": null` — a root.
    Null,
    /// `"parentId": "<id>"`.
    Id(Box<str>),
    /// No `parentId`, or one that is not a string or null (the agents treat it as an unknown parent).
    Missing,
}

impl Parent {
    /// The parent id when it is a string.
    pub fn id(&self) -> Option<&str> {
        match self {
            Parent::Id(id) => Some(id),
            _ => None,
        }
    }
}

#[derive(Deserialize)]
struct Scan<'a> {
    #[serde(default, borrow, rename = "type")]
    kind: Option<MaybeStr<'a>>,
    #[serde(default, borrow)]
    id: Option<MaybeStr<'a>>,
    #[serde(default, rename = "parentId", borrow)]
    parent_id: MaybeStr<'a>,
    #[serde(default, borrow)]
    timestamp: Option<MaybeStr<'a>>,
}

/// A field that is usually a string; anything else is remembered only as "not a string".
#[derive(Deserialize, Default)]
#[serde(untagged)]
enum MaybeStr<'a> {
    #[serde(borrow)]
    Str(std::borrow::Cow<'a, str>),
    Null(()),
    Other(serde::de::IgnoredAny),
    /// The key is absent (only produced by `#[serde(default)]`).
    #[default]
    #[serde(skip)]
    Absent,
}

impl MaybeStr<'_> {
    fn into_box(self) -> Option<Box<str>> {
        match self {
            MaybeStr::Str(s) => Some(s.into_owned().into_boxed_str()),
            _ => None,
        }
    }
}

/// Why a line could not become an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineError {
    /// Not JSON at all.
    Invalid(String),
    /// The JSON value `null` (the agents crash on it).
    Null,
}

impl Entry {
    /// Parses one line (without its newline). Non-object JSON values become id-less entries.
    pub fn parse(raw: &str, line: usize) -> Result<Entry, LineError> {
        let text = raw.trim_end_matches('\r');
        let trimmed = text.trim_start();
        if trimmed.starts_with('{') {
            match serde_json::from_str::<Scan>(text) {
                Ok(scan) => {
                    let parent = match scan.parent_id {
                        MaybeStr::Null(()) => Parent::Null,
                        MaybeStr::Str(s) => Parent::Id(s.into_owned().into_boxed_str()),
                        MaybeStr::Other(_) | MaybeStr::Absent => Parent::Missing,
                    };
                    return Ok(Entry {
                        raw: text.into(),
                        line,
                        kind: scan.kind.and_then(MaybeStr::into_box),
                        id: scan.id.and_then(MaybeStr::into_box),
                        parent,
                        timestamp: scan.timestamp.and_then(MaybeStr::into_box),
                        is_object: true,
                    });
                }
                Err(err) => {
                    // Duplicate keys or other oddities: fall back to a full parse so the rules stay the agents'.
                    return match serde_json::from_str::<Value>(text) {
                        Ok(value) => Ok(Entry::from_value_at(&value, text.into(), line)),
                        Err(_) => Err(LineError::Invalid(err.to_string())),
                    };
                }
            }
        }
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Null) => Err(LineError::Null),
            Ok(value) => Ok(Entry::from_value_at(&value, text.into(), line)),
            Err(err) => Err(LineError::Invalid(err.to_string())),
        }
    }

    /// Builds an entry from a JSON value that is about to be written (or was migrated in memory).
    pub fn from_value(value: &Value) -> Entry {
        let raw = crate::json::to_line(value);
        Entry::from_value_at(value, raw.into_boxed_str(), 0)
    }

    fn from_value_at(value: &Value, raw: Box<str>, line: usize) -> Entry {
        let obj = value.as_object();
        let str_field = |key: &str| -> Option<Box<str>> {
            obj.and_then(|o| o.get(key))
                .and_then(Value::as_str)
                .map(Into::into)
        };
        let parent = match obj.and_then(|o| o.get("parentId")) {
            Some(Value::Null) => Parent::Null,
            Some(Value::String(s)) => Parent::Id(s.as_str().into()),
            _ => Parent::Missing,
        };
        Entry {
            raw,
            line,
            kind: str_field("type"),
            id: str_field("id"),
            parent,
            timestamp: str_field("timestamp"),
            is_object: obj.is_some(),
        }
    }

    /// The whole entry as JSON (parsed on demand).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.raw).unwrap_or(Value::Null)
    }

    /// The whole entry as a JSON object, or an empty object for non-object lines.
    pub fn object(&self) -> Map<String, Value> {
        match self.json() {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    /// The entry's `type`, or `""`.
    pub fn kind(&self) -> &str {
        self.kind.as_deref().unwrap_or("")
    }

    /// The entry's id, or `None` for id-less entries.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// `message.role` for `message` entries (parsed on demand).
    pub fn role(&self) -> Option<String> {
        if self.kind() != "message" {
            return None;
        }
        self.json()
            .get("message")
            .and_then(|m| m.get("role"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    }

    /// The timestamp as epoch milliseconds, as JavaScript's `Date.parse` would read it (`None` = NaN).
    pub fn timestamp_ms(&self) -> Option<f64> {
        self.timestamp
            .as_deref()
            .and_then(crate::time::parse_iso_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scans_the_index_fields() {
        let e = Entry::parse(
            r#"{"type":"message","id":"abc","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user"}}"#,
            3,
        )
        .unwrap();
        assert_eq!(e.kind(), "message");
        assert_eq!(e.id(), Some("abc"));
        assert_eq!(e.parent, Parent::Null);
        assert_eq!(e.line, 3);
        assert_eq!(e.role().as_deref(), Some("user"));
    }

    #[test]
    fn non_objects_become_idless_entries_and_null_is_an_error() {
        let e = Entry::parse("[1,2,3]", 1).unwrap();
        assert!(!e.is_object);
        assert_eq!(e.id(), None);
        assert_eq!(Entry::parse("null", 1), Err(LineError::Null));
        assert!(matches!(
            Entry::parse("not json", 1),
            Err(LineError::Invalid(_))
        ));
    }

    #[test]
    fn odd_field_types_are_not_strings() {
        let e = Entry::parse(r#"{"type":1,"id":5,"parentId":7}"#, 1).unwrap();
        assert_eq!(e.kind, None);
        assert_eq!(e.id, None);
        assert_eq!(e.parent, Parent::Missing);
    }
}
