//! The agents' entry types and message roles, written once: the names both dialects write, as
//! shared strings. A session holds a type (and a role, for messages) per entry, twice over
//! (index and view facts), and nearly all of them are one of these names: known names are
//! borrowed from these tables (so the view can share them as static texts too); anything else
//! is owned.

use std::borrow::Cow;

/// The entry `type`s pi and omp write (`""`: an entry without a string `type`).
pub const ENTRY_TYPES: &[&str] = &[
    "message",
    "compaction",
    "branch_summary",
    "custom_message",
    "custom",
    "label",
    "model_change",
    "thinking_level_change",
    "session_info",
    "session",
    "title_change",
    "mode_change",
    "ttsr_injection",
    "model_usage",
    "service_tier_change",
    "credential_pin",
    "session_init",
    "reset_boundary",
    "",
];

/// The `message.role`s pi and omp write.
pub const ROLES: &[&str] = &[
    "user",
    "assistant",
    "toolResult",
    "bashExecution",
    "custom",
    "developer",
    "branchSummary",
    "compactionSummary",
    "hookMessage",
];

/// `name` as a shared string: borrowed when it is a known type or role, owned otherwise.
pub(crate) fn name(name: &str) -> Cow<'static, str> {
    match ENTRY_TYPES.iter().chain(ROLES).find(|&&k| k == name) {
        Some(&known) => Cow::Borrowed(known),
        None => Cow::Owned(name.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_names_are_borrowed_and_others_owned() {
        assert!(matches!(name("message"), Cow::Borrowed("message")));
        assert!(matches!(name("toolResult"), Cow::Borrowed("toolResult")));
        let other = name("my_type");
        assert!(matches!(other, Cow::Owned(_)));
        assert_eq!(other, "my_type");
        assert!(matches!(name(""), Cow::Borrowed("")));
    }
}
