//! Entry and session ids, made as each dialect makes them, from an injectable source.

use crate::dialect::Dialect;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// Where new ids come from. The session retries a candidate that collides (up to 100 times).
pub trait IdSource: Send {
    /// A candidate 8-hex entry id.
    fn entry_id(&mut self, dialect: Dialect) -> String;
    /// The fallback id after 100 collisions (pi: a full UUID; omp: a longer unique id).
    fn fallback_entry_id(&mut self, dialect: Dialect) -> String;
    /// A new session id (a UUIDv7 in both agents).
    fn session_id(&mut self, now_ms: i64) -> String;
}

/// Random ids: pi takes the first 8 hex characters of a UUID, omp the last 8.
#[derive(Debug, Default, Clone, Copy)]
pub struct RandomIds;

impl IdSource for RandomIds {
    fn entry_id(&mut self, dialect: Dialect) -> String {
        let uuid = uuid::Uuid::new_v4().simple().to_string();
        match dialect {
            Dialect::Pi => uuid[..8].to_owned(),
            Dialect::Omp => uuid[uuid.len() - 8..].to_owned(),
        }
    }

    fn fallback_entry_id(&mut self, _dialect: Dialect) -> String {
        uuid::Uuid::new_v4().to_string()
    }

    fn session_id(&mut self, now_ms: i64) -> String {
        let secs = u64::try_from(now_ms.div_euclid(1000)).unwrap_or(0);
        let nanos = u32::try_from(now_ms.rem_euclid(1000) * 1_000_000).unwrap_or(0);
        let ts = uuid::Timestamp::from_unix(uuid::NoContext, secs, nanos);
        uuid::Uuid::new_v7(ts).to_string()
    }
}

/// Ids handed out from a script (tests replaying recorded sessions). Clones share the queue; when it
/// runs dry the source falls back to random ids.
#[derive(Debug, Default, Clone)]
pub struct ScriptedIds {
    entries: Arc<Mutex<VecDeque<String>>>,
    sessions: Arc<Mutex<VecDeque<String>>>,
}

impl ScriptedIds {
    /// An empty script.
    pub fn new() -> Self {
        Self::default()
    }
    /// Queues the next entry id.
    pub fn push_entry(&self, id: impl Into<String>) {
        if let Ok(mut q) = self.entries.lock() {
            q.push_back(id.into());
        }
    }
    /// Queues the next session id.
    pub fn push_session(&self, id: impl Into<String>) {
        if let Ok(mut q) = self.sessions.lock() {
            q.push_back(id.into());
        }
    }
    /// Drops every queued id.
    pub fn clear(&self) {
        if let Ok(mut q) = self.entries.lock() {
            q.clear();
        }
    }
}

impl IdSource for ScriptedIds {
    fn entry_id(&mut self, dialect: Dialect) -> String {
        let next = self.entries.lock().ok().and_then(|mut q| q.pop_front());
        next.unwrap_or_else(|| RandomIds.entry_id(dialect))
    }

    fn fallback_entry_id(&mut self, dialect: Dialect) -> String {
        RandomIds.fallback_entry_id(dialect)
    }

    fn session_id(&mut self, now_ms: i64) -> String {
        let next = self.sessions.lock().ok().and_then(|mut q| q.pop_front());
        next.unwrap_or_else(|| RandomIds.session_id(now_ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_ids_are_eight_hex() {
        for d in [Dialect::Pi, Dialect::Omp] {
            let id = RandomIds.entry_id(d);
            assert_eq!(id.len(), 8);
            assert!(id
                .chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        }
        assert_eq!(RandomIds.session_id(1735689600000).len(), 36);
    }

    #[test]
    fn scripted_ids_come_in_order() {
        let mut s = ScriptedIds::new();
        s.push_entry("aaaa0001");
        s.push_entry("aaaa0002");
        assert_eq!(s.entry_id(Dialect::Pi), "aaaa0001");
        assert_eq!(s.entry_id(Dialect::Pi), "aaaa0002");
        assert_eq!(s.entry_id(Dialect::Pi).len(), 8);
    }
}
