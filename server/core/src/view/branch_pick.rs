//! The /branch (pi: /fork) decisions: only user messages can be picked; a root user message starts
//! a brand-new session whose header records `parentSession` (omp carries the title over); any other
//! user message forks the path up to its parent with `createBranchedSession`; the picked message's
//! text goes back to the editor. Also the user-message list the picker shows, plain or ranked.

use super::search;
use crate::dialect::Dialect;
use crate::error::{Error, Result};
use crate::facts;
use crate::ids::IdSource;
use crate::session::{NameSource, Session};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What /branch on a user message does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum BranchDecision {
    /// A root user message: a new empty session with `parentSession` set.
    NewSession {
        /// The picked message's text, for the editor.
        selected_text: String,
        /// omp: the title (and its source) carried into the new session.
        carry_title: Option<(String, Option<String>)>,
    },
    /// `createBranchedSession(parent of the picked message)`.
    Fork {
        /// The entry the new session's path ends at.
        leaf_id: String,
        /// The picked message's text, for the editor.
        selected_text: String,
    },
}

impl BranchDecision {
    /// The text handed back to the editor.
    pub fn selected_text(&self) -> &str {
        match self {
            BranchDecision::NewSession { selected_text, .. }
            | BranchDecision::Fork { selected_text, .. } => selected_text,
        }
    }
}

/// Decides what /branch on `entry_id` does; an error for anything but a user message.
pub fn decide_branch(session: &Session, entry_id: &str) -> Result<BranchDecision> {
    let entry = session
        .entry(entry_id)
        .ok_or_else(|| Error::EntryNotFound(entry_id.to_owned()))?;
    let value = entry.json();
    let is_user = value.get("type").and_then(Value::as_str) == Some("message")
        && value.pointer("/message/role").and_then(Value::as_str) == Some("user");
    if !is_user {
        return Err(Error::Unsupported(format!(
            "entry {entry_id} is not a user message; only user messages can be branched from"
        )));
    }
    let selected_text = facts::join_text(value.pointer("/message/content"));
    Ok(match entry.parent.id().filter(|p| !p.is_empty()) {
        None => BranchDecision::NewSession {
            selected_text,
            carry_title: match session.dialect() {
                Dialect::Omp => session
                    .session_name()
                    .map(|t| (t.to_owned(), session.title_source().map(str::to_owned))),
                Dialect::Pi => None,
            },
        },
        Some(parent) => BranchDecision::Fork {
            leaf_id: parent.to_owned(),
            selected_text,
        },
    })
}

/// Carries out a decision and returns the new session (the caller switches to it).
pub fn apply_branch(
    session: &mut Session,
    decision: &BranchDecision,
    ids: Box<dyn IdSource>,
) -> Result<Session> {
    match decision {
        BranchDecision::NewSession { carry_title, .. } => {
            let mut fresh = session.new_session_from(ids)?;
            if let Some((title, source)) = carry_title {
                let source = if source.as_deref() == Some("auto") {
                    NameSource::Auto
                } else {
                    NameSource::User
                };
                fresh.set_session_name(title, source, None)?;
            }
            Ok(fresh)
        }
        BranchDecision::Fork { leaf_id, .. } => session.create_branched_session(leaf_id, ids),
    }
}

/// One entry of the /branch picker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserMessageItem {
    /// The user message's id.
    pub entry_id: String,
    /// Its text.
    pub text: String,
}

/// The user messages with text, in file order (`getUserMessagesForForking/Branching`).
pub fn user_messages(session: &Session) -> Vec<UserMessageItem> {
    session
        .entries()
        .iter()
        .filter(|e| e.kind() == "message")
        .filter_map(|e| {
            let value = e.json();
            if value.pointer("/message/role").and_then(Value::as_str) != Some("user") {
                return None;
            }
            let text = facts::join_text(value.pointer("/message/content"));
            let id = e.id()?.to_owned();
            (!text.is_empty()).then_some(UserMessageItem { entry_id: id, text })
        })
        .collect()
}

/// The picker's list for a query, best match first (every message in order when empty).
pub fn ranked_user_messages(session: &Session, query: &str) -> Vec<UserMessageItem> {
    let items = user_messages(session);
    let texts: Vec<&str> = items.iter().map(|i| i.text.as_str()).collect();
    search::rank(&texts, query, session.dialect())
        .into_iter()
        .filter_map(|r| items.get(r.index).cloned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::RandomIds;
    use crate::view::testkit::Kit;

    #[test]
    fn only_user_messages_can_be_branched_from() {
        for dialect in [Dialect::Pi, Dialect::Omp] {
            let k = Kit::seed_example(dialect);
            for name in ["plan", "a_result", "milestone"] {
                assert!(
                    matches!(
                        decide_branch(&k.session, &k.id(name)),
                        Err(Error::Unsupported(_))
                    ),
                    "{dialect} {name}"
                );
            }
            assert!(matches!(
                decide_branch(&k.session, "nope"),
                Err(Error::EntryNotFound(_))
            ));
        }
    }

    #[test]
    fn root_user_message_starts_a_new_session() {
        for dialect in [Dialect::Pi, Dialect::Omp] {
            let mut k = Kit::seed_example(dialect);
            let decision = decide_branch(&k.session, &k.id("start"));
            let Ok(decision @ BranchDecision::NewSession { .. }) = decision else {
                panic!("{dialect}: {decision:?}")
            };
            assert_eq!(decision.selected_text(), "Start task");
            let fresh = apply_branch(&mut k.session, &decision, Box::new(RandomIds));
            let Ok(fresh) = fresh else {
                panic!("{dialect}: {:?}", fresh.err())
            };
            assert!(fresh.entries().is_empty() || dialect == Dialect::Omp);
            assert_eq!(fresh.leaf_id(), None);
        }
    }

    #[test]
    fn other_user_messages_fork_at_their_parent() {
        for dialect in [Dialect::Pi, Dialect::Omp] {
            let mut k = Kit::seed_example(dialect);
            let decision = decide_branch(&k.session, &k.id("try_b"));
            let Ok(decision) = decision else {
                panic!("{dialect}")
            };
            assert_eq!(
                decision,
                BranchDecision::Fork {
                    leaf_id: k.id("plan"),
                    selected_text: "Try approach B".into()
                },
                "{dialect}"
            );
            let fork = apply_branch(&mut k.session, &decision, Box::new(RandomIds));
            let Ok(fork) = fork else {
                panic!("{dialect}: {:?}", fork.err())
            };
            let path: Vec<Option<&str>> = fork.branch_ids(None);
            assert_eq!(
                path,
                vec![Some(k.id("start").as_str()), Some(k.id("plan").as_str())]
            );
        }
    }

    #[test]
    fn omp_carries_the_title_into_the_new_session() {
        let mut k = Kit::seed_example(Dialect::Omp);
        let _ = k.session.set_name("Seed session");
        let Ok(decision) = decide_branch(&k.session, &k.id("start")) else {
            panic!()
        };
        let BranchDecision::NewSession { carry_title, .. } = &decision else {
            panic!("{decision:?}")
        };
        assert_eq!(
            carry_title.as_ref().map(|t| t.0.as_str()),
            Some("Seed session")
        );
        let fresh = apply_branch(&mut k.session, &decision, Box::new(RandomIds));
        let Ok(fresh) = fresh else {
            panic!("{:?}", fresh.err())
        };
        assert_eq!(fresh.session_name(), Some("Seed session"));
        let pi = Kit::seed_example(Dialect::Pi);
        let Ok(BranchDecision::NewSession { carry_title, .. }) =
            decide_branch(&pi.session, &pi.id("start"))
        else {
            panic!()
        };
        assert_eq!(carry_title, None);
    }

    #[test]
    fn picker_lists_and_ranks_user_messages() {
        for dialect in [Dialect::Pi, Dialect::Omp] {
            let k = Kit::seed_example(dialect);
            let all: Vec<String> = user_messages(&k.session)
                .into_iter()
                .map(|i| i.text)
                .collect();
            assert_eq!(
                all,
                [
                    "Start task",
                    "Try approach A",
                    "Continue A",
                    "Try approach B"
                ]
            );
            let ranked = ranked_user_messages(&k.session, "approach b");
            assert_eq!(
                ranked.first().map(|i| i.entry_id.clone()),
                Some(k.id("try_b")),
                "{dialect}"
            );
        }
    }
}
