//! An entry's facts with what follows from them alone — its filter flags and the hash of each of
//! its tool calls' ids — made for one dialect when its line is scanned, and kept by the session.

use super::EntryFacts;
use crate::dialect::Dialect;
use std::sync::Arc;

/// The view's facts of an entry, with what follows from them alone.
#[derive(Debug, Clone)]
pub(crate) struct Scanned {
    pub dialect: Dialect,
    pub facts: Arc<EntryFacts>,
    /// The filter flags that follow from the facts (a model adds the path, leaf and labels).
    pub flags: u16,
    /// [`call_hash`] of each tool call id, in order.
    pub call_hashes: Box<[u64]>,
}

impl Scanned {
    pub fn new(facts: EntryFacts, kind_missing: bool, dialect: Dialect) -> Scanned {
        Scanned {
            dialect,
            flags: super::flags::static_flags(kind_missing, &facts, dialect),
            call_hashes: facts
                .tool_calls
                .iter()
                .map(|(id, _)| call_hash(id))
                .collect(),
            facts: Arc::new(facts),
        }
    }
}

/// The hash tool call ids are looked up by.
pub(crate) fn call_hash(id: &str) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::with_seed(0x5eed).hash_one(id)
}
