//! What an entry is to the context builder's walk over the path before a compaction's kept range
//! (`context::session`): the session keeps one byte an entry, so that walk reads only the entries
//! that can set state.

/// What an entry is to the walk over the path before the kept range: the session keeps one byte
/// an entry beside its parents, so that walk reads only the entries that can set state instead
/// of every entry's `type` (a cache miss each on a long path).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StateKind {
    Other,
    /// A `message` whose `message.role` is `assistant`.
    Assistant,
    ThinkingLevel,
    ServiceTier,
    Mode,
    Model,
    /// `ttsr_injection` or `reset_boundary`.
    Marker,
    Custom,
    Compaction,
}

impl StateKind {
    /// The kind of an entry of this `type` and (for messages) `message.role`.
    pub(crate) fn of(kind: &str, role: Option<&str>) -> StateKind {
        match kind {
            "message" if role == Some("assistant") => StateKind::Assistant,
            "thinking_level_change" => StateKind::ThinkingLevel,
            "service_tier_change" => StateKind::ServiceTier,
            "mode_change" => StateKind::Mode,
            "model_change" => StateKind::Model,
            "ttsr_injection" | "reset_boundary" => StateKind::Marker,
            "custom" => StateKind::Custom,
            "compaction" => StateKind::Compaction,
            _ => StateKind::Other,
        }
    }
}
