//! Entry types and message roles as shared strings: a session holds a type (and a role, for
//! messages) per entry, twice over (index and view facts), and nearly all of them are one of a
//! few dozen names. Known names are borrowed from this table; anything else is owned.

use std::borrow::Cow;

/// Entry `type`s and message `role`s the agents write.
const KNOWN: &[&str] = &[
    "message",
    "user",
    "assistant",
    "toolResult",
    "bashExecution",
    "custom",
    "developer",
    "branchSummary",
    "compactionSummary",
    "hookMessage",
    "compaction",
    "branch_summary",
    "label",
    "custom_message",
    "model_change",
    "thinking_level_change",
    "session_info",
    "session",
    "title_change",
    "mode_change",
    "ttsr_injection",
    "model_usage",
];

/// `name` as a shared string: borrowed when it is a known type or role, owned otherwise.
pub(crate) fn name(name: &str) -> Cow<'static, str> {
    match KNOWN.iter().find(|&&k| k == name) {
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
        assert_eq!(name(""), "");
    }
}
