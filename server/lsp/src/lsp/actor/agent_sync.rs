//! Keeping the session's leaf and its live agent's leaf one: the agent's moves (its own `/tree`,
//! or ours through it) are adopted here, and the entry the agent must be moved to so that its
//! leaf becomes ours is worked out here.

use super::{Actor, Outgoing};
use sessiontree_protocol::{self as proto, ChangeReason};

/// The `/tree` target that produced the current leaf (so the agent can be moved by the same
/// choice: choosing a user message leaves the leaf on its parent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NavigationMark {
    /// The entry chosen.
    pub target: String,
    /// The leaf it left.
    pub leaf: Option<String>,
}

impl Actor {
    /// Reads what other processes appended, now.
    pub fn follow_now(&mut self) {
        self.follow();
    }

    /// The session's leaf, and the entry to navigate the agent to so its leaf becomes it (`None`
    /// when no choice can: an empty session).
    pub fn agent_target(&self) -> (Option<String>, Option<String>) {
        let leaf = self.session.leaf_id().map(str::to_owned);
        let target = match &self.last_navigation {
            Some(mark) if mark.leaf == leaf => Some(mark.target.clone()),
            _ => leaf.clone(),
        };
        (leaf, target)
    }

    /// Records the navigation that produced the current leaf.
    pub(super) fn mark_navigation(&mut self, target: &str) {
        self.last_navigation = Some(NavigationMark {
            target: target.to_owned(),
            leaf: self.session.leaf_id().map(str::to_owned),
        });
    }

    /// The agent's leaf is `leaf`: reads what it wrote, then moves our leaf there when it differs
    /// (announced as a change; the move itself is announced by [`Actor::agent_moved`]).
    pub fn adopt_agent_leaf(&mut self, leaf: Option<&str>) {
        // What the agent wrote first (a summary entry then is already the leaf).
        self.follow();
        if self.session.leaf_id() == leaf {
            return;
        }
        let before_len = self.session.entries().len();
        match leaf {
            Some(id) => {
                if self.session.branch(id).is_err() {
                    tracing::warn!(uri = %self.uri, "the agent's leaf {id} is not in the file");
                    return;
                }
            }
            None => self.session.reset_leaf(),
        }
        self.announce(ChangeReason::Navigate, before_len);
    }

    /// The agent moved its leaf from `old_leaf` to `leaf` (its `session_tree` event: its own
    /// `/tree`, or ours through it), writing the branch summary `summary`: adopted, and announced
    /// as a navigation.
    pub fn agent_moved(
        &mut self,
        leaf: Option<&str>,
        old_leaf: Option<&str>,
        summary: Option<&str>,
    ) {
        self.adopt_agent_leaf(leaf);
        self.outbox
            .push(Outgoing::Navigate(proto::DidNavigateParams {
                uri: self.uri.clone(),
                revision: self.revision(),
                new_leaf: leaf.map(str::to_owned),
                old_leaf: old_leaf.map(str::to_owned),
                summary_entry_id: summary.map(str::to_owned),
                from_client: false,
            }));
    }
}
