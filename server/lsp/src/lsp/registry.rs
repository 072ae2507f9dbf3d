//! The open sessions: path → actor handle. Opening reads the file off the async threads, starts
//! the actor and the watch; closing stops both. Lookups are synchronous so a request reaches its
//! actor's queue in the order the requests arrived. A session of a store (see [`crate::stores`])
//! is registered under its URI and watched by its store instead of the file watcher.

use crate::actor::{self, SessionHandle};
use crate::errors::{ApiError, ApiResult};
use crate::stores::{self, Located, Stores};
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
    stores: std::sync::RwLock<Arc<Stores>>,
}

/// The key a file is known by (symlinks resolved when the file exists); a store session's key
/// (its URI) as it is.
pub fn key_of(path: &Path) -> PathBuf {
    if stores::is_store_key(path) {
        return path.to_path_buf();
    }
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Where a URI's session is kept.
#[derive(Debug, Clone)]
pub enum Location {
    /// A local file.
    File(PathBuf),
    /// A store's session.
    Store(Located),
}

impl Location {
    /// The key the session is (or would be) registered under.
    pub fn key(&self) -> PathBuf {
        match self {
            Location::File(path) => key_of(path),
            Location::Store(located) => located.key(),
        }
    }
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
            stores: std::sync::RwLock::default(),
        }
    }

    /// Sets the stores of the user's settings.
    pub fn set_stores(&self, stores: Stores) {
        if let Ok(mut slot) = self.stores.write() {
            *slot = Arc::new(stores);
        }
    }

    /// The stores of the user's settings.
    pub fn stores(&self) -> Arc<Stores> {
        self.stores
            .read()
            .map(|s| Arc::clone(&s))
            .unwrap_or_default()
    }

    /// Where the session a URI names is kept (a `file://` URI or a configured store's).
    pub fn locate(&self, uri: &str) -> ApiResult<Location> {
        if stores::is_store_uri(uri) {
            return self.stores().locate(uri).map(Location::Store);
        }
        to_proto::path_of(uri).map(Location::File)
    }

    /// The actor of an open session, by URI.
    pub fn get(&self, uri: &str) -> ApiResult<SessionHandle> {
        match self.locate(uri)? {
            Location::File(path) => self.get_path(&path),
            Location::Store(located) => self.get_path(&located.key()),
        }
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
        self.insert(key, None, move || {
            Session::open(&file, OpenOptions::default())
        })
    }

    /// Opens the session at `location` (a file or a store's), or returns its actor.
    pub fn open_at(&self, location: &Location) -> SessionHandle {
        match location {
            Location::File(path) => self.open(path),
            Location::Store(located) => {
                if let Some(handle) = self.get_path(&located.key()) {
                    return handle;
                }
                let (store, path) = (Arc::clone(&located.store), located.path.clone());
                self.insert(located.key(), Some(located.clone()), move || {
                    store.open(&path)
                })
            }
        }
    }

    /// Starts an actor for a session already in memory (a new `/branch` file, or a store's new
    /// session when `located` names it).
    pub fn adopt(&self, session: Session, location: &Location) -> SessionHandle {
        let located = match location {
            Location::Store(located) => Some(located.clone()),
            Location::File(_) => None,
        };
        self.insert(location.key(), located, move || Ok(session))
    }

    fn insert(
        &self,
        key: PathBuf,
        located: Option<Located>,
        load: impl FnOnce() -> Result<Session, sessiontree_core::Error> + Send + 'static,
    ) -> SessionHandle {
        match self.sessions.entry(key.clone()) {
            dashmap::Entry::Occupied(existing) => existing.get().clone(),
            dashmap::Entry::Vacant(slot) => {
                let uri = match &located {
                    Some(located) => located.uri.clone(),
                    None => to_proto::uri_of(&key),
                };
                let sessions = Arc::clone(&self.sessions);
                let watcher = Arc::clone(&self.watcher);
                let failed_key = key.clone();
                let failed_store = located.clone();
                let on_fail = move || {
                    sessions.remove(&failed_key);
                    match failed_store {
                        Some(located) => located.store.unwatch(&located.path),
                        None => watcher.unwatch(&failed_key),
                    }
                };
                // Watch first: a failed load unwatches from the actor's task.
                match &located {
                    Some(located) => located.store.watch(&located.path, &self.sessions),
                    None => self.watcher.watch(&key),
                }
                let handle = actor::spawn(
                    load,
                    uri,
                    key.clone(),
                    located,
                    Arc::clone(&self.shared),
                    on_fail,
                );
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
                match &handle.store {
                    Some(located) => located.store.unwatch(&located.path),
                    None => self.watcher.unwatch(&key),
                }
                true
            }
            None => false,
        }
    }
}
