//! The session stores the user's settings name (`initializationOptions.stores`: omp's Redis
//! storage, see `docs/redis.md`): a link to each, the URIs their sessions are known by
//! (`redis://HOST:PORT/DB/PATH[?prefix=PREFIX]`), listing a workspace's sessions in them, and one
//! watch per store that wakes the actors of its open sessions when their values change.
//!
//! A session of a store is registered under its URI (as a path that no file's canonical path can
//! be: it does not start with `/`), so the rest of the server finds it like any open session.
//! Credentials come from the settings or the environment variable they name, and are never shown:
//! every message names a store by its address without them.

use crate::actor::SessionHandle;
use crate::errors::{ApiError, ApiResult};
use dashmap::DashMap;
use sessiontree_core::{OpenOptions, Session};
use sessiontree_protocol::{Dialect, SessionInfo, StoreSettings, UnavailableStore};
use sessiontree_redis::follow::Watch;
use sessiontree_redis::{listing, Link, RedisStore, StoreAddress};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The stores of the user's settings.
#[derive(Debug, Default)]
pub struct Stores {
    stores: Vec<Arc<Store>>,
}

/// One configured store.
pub struct Store {
    address: StoreAddress,
    link: Arc<Link>,
    list_all: bool,
    /// What the listings show of the store's sessions, kept until they change.
    summaries: crate::store_summaries::Summaries,
    /// Started with the first session opened from the store.
    watch: Mutex<Option<Watch>>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("address", &self.address.to_string())
            .finish_non_exhaustive()
    }
}

/// A session of a store, as a URI names it.
#[derive(Debug, Clone)]
pub struct Located {
    /// The store.
    pub store: Arc<Store>,
    /// The session's path as omp names it.
    pub path: PathBuf,
    /// The URI in the server's spelling.
    pub uri: String,
}

impl Located {
    /// The key the session is registered under.
    pub fn key(&self) -> PathBuf {
        PathBuf::from(&self.uri)
    }
}

/// Whether a URI names a session in a store (by its scheme).
pub fn is_store_uri(uri: &str) -> bool {
    uri.starts_with("redis://") || uri.starts_with("rediss://")
}

/// Whether a registry key is a store session's (its URI).
pub fn is_store_key(key: &Path) -> bool {
    key.to_str().is_some_and(is_store_uri)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Stores {
    /// The stores of `settings`; a store whose settings are unusable is left out, with the
    /// reason among the problems returned.
    pub fn configure(settings: &[StoreSettings]) -> (Stores, Vec<String>) {
        let mut stores = Vec::new();
        let mut problems = Vec::new();
        for s in settings {
            let address = match StoreAddress::parse(&s.url) {
                Ok(address) => address,
                Err(err) => {
                    problems.push(err);
                    continue;
                }
            };
            let password = match (&s.password, &s.password_env) {
                (Some(p), _) => Some(p.clone()),
                (None, Some(var)) => match std::env::var(var) {
                    Ok(p) => Some(p),
                    Err(_) => {
                        problems.push(format!(
                            "store {address}: the environment variable {var} (passwordEnv) is not set; connecting without a password"
                        ));
                        None
                    }
                },
                (None, None) => None,
            };
            let address = address
                .with_credentials(s.user.clone(), password)
                .with_ca_file(s.ca_file.as_ref().map(PathBuf::from));
            match Link::new(address.clone()) {
                Ok(link) => stores.push(Arc::new(Store {
                    address,
                    link,
                    list_all: s.list_all,
                    summaries: Default::default(),
                    watch: Mutex::new(None),
                })),
                Err(err) => problems.push(err.to_string()),
            }
        }
        (Stores { stores }, problems)
    }

    /// The configured stores.
    pub fn all(&self) -> &[Arc<Store>] {
        &self.stores
    }

    /// The store and path a session URI names; refused when the URI is malformed or its store is
    /// not among the configured ones.
    pub fn locate(&self, uri: &str) -> ApiResult<Located> {
        let (address, path) =
            StoreAddress::parse_session_uri(uri).map_err(ApiError::invalid_params)?;
        let store = self
            .stores
            .iter()
            .find(|s| s.address.same_store(&address))
            .ok_or_else(|| {
                ApiError::invalid_params(format!(
                    "store {address} is not among the stores of the user settings (sessiontree.stores); nothing was read"
                ))
            })?;
        store
            .locate(&path)
            .ok_or_else(|| ApiError::invalid_params(format!("`{uri}` names no absolute path")))
    }
}

impl Store {
    /// The store's address (without credentials when shown).
    pub fn address(&self) -> &StoreAddress {
        &self.address
    }

    /// The session `path` of this store.
    pub fn locate(self: &Arc<Self>, path: &Path) -> Option<Located> {
        Some(Located {
            uri: self.address.session_uri(path)?,
            path: path.to_path_buf(),
            store: Arc::clone(self),
        })
    }

    /// Opens the session `path` from the store.
    pub fn open(&self, path: &Path) -> Result<Session, sessiontree_core::Error> {
        let store = Arc::new(RedisStore::new(Arc::clone(&self.link), path));
        Session::open_store(store, OpenOptions::default())
    }

    /// Watches the session `path`: a change wakes its actor in `sessions` (keyed by URI).
    pub fn watch(self: &Arc<Self>, path: &Path, sessions: &Arc<DashMap<PathBuf, SessionHandle>>) {
        let mut watch = lock(&self.watch);
        let watch = watch.get_or_insert_with(|| {
            let sessions = Arc::clone(sessions);
            let address = self.address.clone();
            Watch::start(Arc::clone(&self.link), move |path: &Path| {
                let Some(uri) = address.session_uri(path) else {
                    return;
                };
                if let Some(handle) = sessions.get(Path::new(&uri)) {
                    handle.follow();
                }
            })
        });
        watch.add(path);
    }

    /// Stops watching the session `path`.
    pub fn unwatch(&self, path: &Path) {
        if let Some(watch) = lock(&self.watch).as_ref() {
            watch.remove(path);
        }
    }

    /// Whether the listing shows `listed` for the folders omp names `folder_names` (see
    /// [`Store::list`]).
    fn shows(&self, listed: &listing::Listed, folder_names: &[String]) -> bool {
        self.list_all
            || folder_names.is_empty()
            || listed
                .path
                .parent()
                .and_then(Path::file_name)
                .and_then(|n| n.to_str())
                .is_some_and(|n| folder_names.iter().any(|f| f == n))
    }

    /// The sessions `workspace/symbol` reads from this store: those [`Store::list`] shows for
    /// `folder_names` (by length and `meta` time, without reading their values), but for those
    /// open under a URI among `open` (searched where they are open). Blocks.
    pub fn searched(
        self: &Arc<Self>,
        folder_names: &[String],
        open: &[PathBuf],
    ) -> std::io::Result<Vec<crate::symbols::Searched>> {
        let mut out = Vec::new();
        for listed in listing::list(&self.link)? {
            let Some(located) = self.locate(&listed.path) else {
                continue;
            };
            if !self.shows(&listed, folder_names) || open.contains(&located.key()) {
                continue;
            }
            let mtime = listed.mtime_ms.and_then(|ms| {
                UNIX_EPOCH.checked_add(Duration::from_millis(u64::try_from(ms).ok()?))
            });
            let store = Arc::clone(self);
            let path = listed.path;
            out.push(crate::symbols::Searched::Store(
                crate::symbols::StoreSession {
                    uri: located.uri,
                    stamp: crate::symbols::Stamp::Stored(mtime, listed.size),
                    open: Box::new(move || match store.open(&path) {
                        Ok(session) => Some(session),
                        Err(err) => {
                            tracing::warn!("workspace symbols of {}: {err}", path.display());
                            None
                        }
                    }),
                },
            ));
        }
        Ok(out)
    }

    /// The store's sessions in the folders omp names after `folder_names` (each workspace
    /// folder's `-<home-relative path>`, whoever's home the session was written under), or all of
    /// them when the settings say `listAll` or no folder is given; summarized from their text as
    /// files are (each summarized once and kept until it changes: see
    /// [`crate::store_summaries`]). Blocks.
    pub fn list(
        self: &Arc<Self>,
        folder_names: &[String],
        live_writer: Duration,
    ) -> std::io::Result<Vec<SessionInfo>> {
        let all = listing::list(&self.link)?;
        let listed: Vec<&listing::Listed> =
            all.iter().filter(|l| self.shows(l, folder_names)).collect();
        let summaries = self.summaries.of(&self.link, &listed, &all)?;
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        let mut out = Vec::new();
        for (item, summary) in listed.into_iter().zip(summaries) {
            let (Some(summary), Some(located)) = (summary, self.locate(&item.path)) else {
                continue;
            };
            let modified_ms = item.mtime_ms.unwrap_or(0);
            let live = now_ms.saturating_sub(modified_ms)
                <= i64::try_from(live_writer.as_millis()).unwrap_or(i64::MAX);
            let summary = sessiontree_core::listing::Listing {
                modified_ms: u64::try_from(modified_ms).unwrap_or(0),
                ..summary
            };
            out.push(crate::to_proto::session_info(
                located.uri,
                &item.path,
                Some(Dialect::Omp),
                &summary,
                live,
            ));
        }
        Ok(out)
    }
}

/// Lists the sessions of every store for the workspace folders `folder_names`; a store that
/// cannot be listed is reported, not fatal. Blocks.
pub fn list_all(
    stores: &Stores,
    folder_names: &[String],
    live_writer: Duration,
) -> (Vec<SessionInfo>, Vec<UnavailableStore>) {
    let mut sessions = Vec::new();
    let mut unavailable = Vec::new();
    for store in stores.all() {
        match store.list(folder_names, live_writer) {
            Ok(found) => sessions.extend(found),
            Err(err) => {
                tracing::warn!("{err}");
                unavailable.push(UnavailableStore {
                    store: store.address.to_string(),
                    message: err.to_string(),
                });
            }
        }
    }
    (sessions, unavailable)
}
