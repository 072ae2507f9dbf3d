//! The open sessions: path → actor handle. Opening reads the file off the async threads, starts
//! the actor and the watch; closing stops both. Lookups are synchronous so a request reaches its
//! actor's queue in the order the requests arrived.

use crate::actor::{self, SessionHandle};
use crate::errors::{ApiError, ApiResult};
use crate::watcher::Watcher;
use crate::{to_proto, Shared};
use dashmap::DashMap;
use sessiontree_core::{OpenOptions, Session};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Every open session.
#[derive(Debug)]
pub struct Registry {
    sessions: Arc<DashMap<PathBuf, SessionHandle>>,
    watcher: Arc<Watcher>,
    shared: Arc<Shared>,
}

/// The key a file is known by (symlinks resolved when the file exists).
pub fn key_of(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

impl Registry {
    /// An empty registry.
    pub fn new(shared: Arc<Shared>) -> Self {
        let sessions = Arc::new(DashMap::new());
        let watcher = Arc::new(Watcher::new(Arc::clone(&sessions)));
        Registry {
            sessions,
            watcher,
            shared,
        }
    }

    /// The actor of an open session, by URI.
    pub fn get(&self, uri: &str) -> ApiResult<SessionHandle> {
        let path = to_proto::path_of(uri)?;
        self.get_path(&path)
            .ok_or_else(|| ApiError::session_not_found(uri))
    }

    /// The actor of an open session, by path.
    pub fn get_path(&self, path: &Path) -> Option<SessionHandle> {
        if let Some(h) = self.sessions.get(path) {
            return Some(h.clone());
        }
        self.sessions.get(&key_of(path)).map(|h| h.clone())
    }

    /// Every open session.
    pub fn all(&self) -> Vec<SessionHandle> {
        self.sessions.iter().map(|h| h.clone()).collect()
    }

    /// Opens a session file, or returns the actor already following it. The actor is
    /// registered at once and loads the file itself, so requests sent right behind this one
    /// queue up in order; the load's outcome is the answer of the first request on it.
    pub fn open(&self, path: &Path) -> SessionHandle {
        if let Some(handle) = self.get_path(path) {
            return handle;
        }
        let key = key_of(path);
        let file = key.clone();
        self.insert(key, move || Session::open(&file, OpenOptions::default()))
    }

    /// Starts an actor for a session already in memory (a new `/branch` file).
    pub fn adopt(&self, session: Session, key: PathBuf) -> SessionHandle {
        self.insert(key, move || Ok(session))
    }

    fn insert(
        &self,
        key: PathBuf,
        load: impl FnOnce() -> Result<Session, sessiontree_core::Error> + Send + 'static,
    ) -> SessionHandle {
        match self.sessions.entry(key.clone()) {
            dashmap::Entry::Occupied(existing) => existing.get().clone(),
            dashmap::Entry::Vacant(slot) => {
                let uri = to_proto::uri_of(&key);
                let sessions = Arc::clone(&self.sessions);
                let watcher = Arc::clone(&self.watcher);
                let failed_key = key.clone();
                let on_fail = move || {
                    sessions.remove(&failed_key);
                    watcher.unwatch(&failed_key);
                };
                // Watch first: a failed load unwatches from the actor's task.
                self.watcher.watch(&key);
                let handle =
                    actor::spawn(load, uri, key.clone(), Arc::clone(&self.shared), on_fail);
                // A load failing before this insert waits on the shard lock in `on_fail`, so the
                // failed handle is removed after it is inserted, never before.
                slot.insert(handle.clone());
                handle
            }
        }
    }

    /// Stops following a session; `false` when it was not open.
    pub fn close(&self, path: &Path) -> bool {
        let key = if self.sessions.contains_key(path) {
            path.to_path_buf()
        } else {
            key_of(path)
        };
        match self.sessions.remove(&key) {
            Some((key, handle)) => {
                handle.close();
                self.watcher.unwatch(&key);
                true
            }
            None => false,
        }
    }
}
