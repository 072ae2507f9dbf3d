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

    /// The agent's leaf is `leaf`: reads what it wrote, then moves our leaf there (announcing the
    /// move as a navigation) when it differs.
    pub fn adopt_agent_leaf(&mut self, leaf: Option<&str>) {
        self.follow();
        if self.session.leaf_id() == leaf {
            return;
        }
        let old_leaf = self.session.leaf_id().map(str::to_owned);
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
        self.outbox
            .push(Outgoing::Navigate(proto::DidNavigateParams {
                uri: self.uri.clone(),
                revision: self.revision(),
                new_leaf: leaf.map(str::to_owned),
                old_leaf,
                summary_entry_id: None,
                from_client: false,
            }));
    }
}
