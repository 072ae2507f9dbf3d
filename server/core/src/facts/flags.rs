//! What the filters read of an entry, one small integer each: its category (user, assistant,
//! tool result, bookkeeping, …) and the facts that follow from its JSON alone, set when its
//! facts are made; a tree model adds the bits that follow from the session (on the active path,
//! the leaf, labeled). Filtering never reads the facts themselves.

use super::EntryFacts;
use crate::dialect::Dialect;

/// What the filters read of a key, one small integer each (so filtering never reads the facts).
pub(crate) mod flag {
    /// The entry's category (low three bits).
    pub const CATEGORY: u16 = 0b111;
    pub const OTHER: u16 = 0;
    /// A bookkeeping type the dialect hides outside `all`.
    pub const SETTINGS: u16 = 1;
    pub const USER: u16 = 2;
    pub const ASSISTANT: u16 = 3;
    pub const TOOL_RESULT: u16 = 4;
    /// Another `message` (other role or none).
    pub const MESSAGE: u16 = 5;
    /// An assistant message with no text that did not end in error/aborted/length.
    pub const BLANK: u16 = 1 << 3;
    /// omp: shown by `user-only`.
    pub const USER_REQUEST: u16 = 1 << 4;
    /// Has an id and lies on the path from the root to the leaf.
    pub const ACTIVE: u16 = 1 << 5;
    /// The session's leaf.
    pub const LEAF: u16 = 1 << 6;
    /// `type` is missing or not a string.
    pub const KIND_MISSING: u16 = 1 << 7;
    /// Carries a label.
    pub const LABELED: u16 = 1 << 8;
    /// An assistant message with tool calls.
    pub const CALLS: u16 = 1 << 9;
}

/// The flags that follow from an entry's facts alone (kept with the facts; a model adds the
/// active path, the leaf and labels).
pub(crate) fn static_flags(kind_missing: bool, facts: &EntryFacts, dialect: Dialect) -> u16 {
    let kind = &*facts.kind;
    let mut f = if kind == "message" {
        match facts.role.as_deref() {
            Some("user") => flag::USER,
            Some("assistant") => flag::ASSISTANT,
            Some("toolResult") => flag::TOOL_RESULT,
            _ => flag::MESSAGE,
        }
    } else if super::is_settings(kind, dialect) {
        flag::SETTINGS
    } else {
        flag::OTHER
    };
    if facts.blank_assistant {
        f |= flag::BLANK;
    }
    if facts.user_request {
        f |= flag::USER_REQUEST;
    }
    if kind_missing {
        f |= flag::KIND_MISSING;
    }
    if !facts.tool_calls.is_empty() {
        f |= flag::CALLS;
    }
    f
}
