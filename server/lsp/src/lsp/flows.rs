//! The decisions of the `/tree` and `/branch` flows (reference semantics §6): where the leaf goes
//! when an entry is chosen, what text returns to the editor, and which entries `/branch` accepts.
//! Pure functions over a session; the actor applies them.

use crate::render;
use serde_json::Value;
use sessiontree_core::{Dialect, Session};
use sessiontree_protocol::NavigateDecision;

/// What choosing an entry in `/tree` does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NavigatePlan {
    /// Where the leaf goes.
    pub decision: NavigateDecision,
    /// The new leaf (`None` = reset: the next append starts a new root).
    pub new_leaf: Option<String>,
    /// Text for the editor (a chosen user or custom message).
    pub editor_text: Option<String>,
}

/// Whether an entry is a message the user wrote (the agents rewind to its parent).
fn is_user_request(dialect: Dialect, value: &Value) -> bool {
    match value.get("type").and_then(Value::as_str) {
        Some("message") => {
            value
                .get("message")
                .and_then(|m| m.get("role"))
                .and_then(Value::as_str)
                == Some("user")
        }
        // omp: a user-attributed custom prompt (skills, collab) counts as the user's request.
        Some("custom_message") if dialect == Dialect::Omp => {
            value.get("attribution").and_then(Value::as_str) == Some("user")
        }
        _ => false,
    }
}

/// The plan for choosing `target` (which must exist). `None` = nothing to do (already there).
pub fn plan_navigate(session: &Session, target: &str) -> Option<NavigatePlan> {
    let entry = session.entry(target)?;
    let value = entry.json();
    let dialect = session.dialect();
    let user = is_user_request(dialect, &value);
    let custom = entry.kind() == "custom_message";
    let at_leaf = session.leaf_id() == Some(target);
    // pi: the leaf is a no-op whatever it is; omp still rewinds a user message at the leaf.
    if at_leaf && !(dialect == Dialect::Omp && user) {
        return None;
    }
    if user || custom {
        let parent = entry
            .parent
            .id()
            .filter(|p| session.contains(p))
            .map(str::to_owned);
        let text = render::editor_text(&value);
        let editor_text = if user || dialect == Dialect::Pi {
            Some(text)
        } else {
            None
        };
        let decision = if parent.is_some() {
            NavigateDecision::Parent
        } else {
            NavigateDecision::Root
        };
        return Some(NavigatePlan {
            decision,
            new_leaf: parent,
            editor_text,
        });
    }
    Some(NavigatePlan {
        decision: NavigateDecision::Target,
        new_leaf: Some(target.to_owned()),
        editor_text: None,
    })
}

/// `/branch` accepts user messages only; returns the message's text.
pub fn branch_text(session: &Session, entry_id: &str) -> Option<String> {
    let entry = session.entry(entry_id)?;
    let value = entry.json();
    if is_user_request(session.dialect(), &value) {
        Some(render::editor_text(&value))
    } else {
        None
    }
}
