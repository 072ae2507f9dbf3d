//! [`SharedText`]: a row's text fields without a copy per row — the texts are shared with the
//! session's view facts (or the tool call's cached row text), and the agents' kinds and roles
//! (`type_names`, borrowed by the facts) are static.

use crate::facts::{EntryFacts, RowText};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// An immutable string shared with the view model: it reads as a `&str` (deref), compares and
/// serializes as one.
#[derive(Clone)]
pub struct SharedText(Repr);

#[derive(Clone)]
enum Repr {
    Static(&'static str),
    Shared(Arc<str>),
    /// The row text of an entry's facts (a ready text).
    Row(Arc<EntryFacts>),
    /// The entry `type` of an entry's facts.
    Kind(Arc<EntryFacts>),
    /// The `message.role` of an entry's facts.
    Role(Arc<EntryFacts>),
}

impl SharedText {
    /// The text.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Static(s) => s,
            Repr::Shared(s) => s,
            Repr::Row(f) => match &f.text {
                RowText::Ready(t) => t,
                RowText::ToolResult { .. } => "",
            },
            Repr::Kind(f) => &f.kind,
            Repr::Role(f) => f.role.as_deref().unwrap_or(""),
        }
    }

    /// A static text.
    pub(crate) fn from_static(text: &'static str) -> SharedText {
        SharedText(Repr::Static(text))
    }

    /// A ready row text of some facts (the facts are shared, the text is not copied).
    pub(crate) fn row_of(facts: &Arc<EntryFacts>) -> SharedText {
        SharedText(Repr::Row(facts.clone()))
    }

    /// The entry `type` of some facts.
    pub(crate) fn kind_of(facts: &Arc<EntryFacts>) -> SharedText {
        match facts.kind {
            Cow::Borrowed(known) => SharedText(Repr::Static(known)),
            Cow::Owned(_) => SharedText(Repr::Kind(facts.clone())),
        }
    }

    /// The `message.role` of some facts.
    pub(crate) fn role_of(facts: &Arc<EntryFacts>) -> Option<SharedText> {
        Some(match facts.role.as_ref()? {
            Cow::Borrowed(known) => SharedText(Repr::Static(known)),
            Cow::Owned(_) => SharedText(Repr::Role(facts.clone())),
        })
    }
}

impl Default for SharedText {
    fn default() -> Self {
        SharedText(Repr::Static(""))
    }
}

impl std::ops::Deref for SharedText {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for SharedText {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl std::borrow::Borrow<str> for SharedText {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl From<Arc<str>> for SharedText {
    fn from(s: Arc<str>) -> Self {
        SharedText(Repr::Shared(s))
    }
}

impl From<String> for SharedText {
    fn from(s: String) -> Self {
        SharedText(Repr::Shared(s.into()))
    }
}

impl From<&str> for SharedText {
    fn from(s: &str) -> Self {
        SharedText(Repr::Shared(s.into()))
    }
}

impl PartialEq for SharedText {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for SharedText {}

impl PartialEq<str> for SharedText {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for SharedText {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for SharedText {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other.as_str()
    }
}

impl std::hash::Hash for SharedText {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for SharedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for SharedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for SharedText {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for SharedText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(SharedText::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_compares_and_serializes_as_a_string() {
        let a = SharedText::from("user: hi");
        assert_eq!(a, "user: hi");
        assert_eq!(a.len(), 8);
        assert_eq!(format!("{a} {a:?}"), "user: hi \"user: hi\"");
        let json = serde_json::to_string(&a).unwrap_or_default();
        assert_eq!(json, "\"user: hi\"");
        let back: SharedText = serde_json::from_str(&json).unwrap_or_default();
        assert_eq!(back, a);
        assert_eq!(SharedText::default(), "");
    }
}
