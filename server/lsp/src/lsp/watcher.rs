//! File watching (the `notify` crate): one watcher for the whole server, watching the folder of
//! every open session (so a file replaced by a rename is noticed too) and waking the session's
//! actor. It only wakes actors; reading the file is the actor's job.

use crate::actor::SessionHandle;
use dashmap::DashMap;
use notify::{RecursiveMode, Watcher as _};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Watches the folders of open sessions.
pub struct Watcher {
    inner: Option<Mutex<(notify::RecommendedWatcher, HashMap<PathBuf, usize>)>>,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher")
            .field("active", &self.inner.is_some())
            .finish()
    }
}

impl Watcher {
    /// A watcher that wakes the actors in `sessions` (keyed by file path). Without an OS watcher
    /// the actors' periodic poll still follows the files.
    pub fn new(sessions: Arc<DashMap<PathBuf, SessionHandle>>) -> Self {
        let handler = move |event: notify::Result<notify::Event>| {
            let Ok(event) = event else { return };
            if event.kind.is_access() {
                return;
            }
            for path in &event.paths {
                if let Some(handle) = sessions.get(path) {
                    handle.follow();
                }
            }
        };
        match notify::recommended_watcher(handler) {
            Ok(w) => Watcher {
                inner: Some(Mutex::new((w, HashMap::new()))),
            },
            Err(err) => {
                tracing::warn!("no file watcher ({err}); following by polling only");
                Watcher { inner: None }
            }
        }
    }

    /// Starts watching the folder of `file`.
    pub fn watch(&self, file: &Path) {
        let (Some(inner), Some(dir)) = (&self.inner, file.parent()) else {
            return;
        };
        let Ok(mut guard) = inner.lock() else { return };
        let (watcher, counts) = &mut *guard;
        let count = counts.entry(dir.to_path_buf()).or_insert(0);
        if *count == 0 {
            if let Err(err) = watcher.watch(dir, RecursiveMode::NonRecursive) {
                tracing::warn!("cannot watch {}: {err}", dir.display());
            }
        }
        *count += 1;
    }

    /// Stops watching the folder of `file` once no open session lives there.
    pub fn unwatch(&self, file: &Path) {
        let (Some(inner), Some(dir)) = (&self.inner, file.parent()) else {
            return;
        };
        let Ok(mut guard) = inner.lock() else { return };
        let (watcher, counts) = &mut *guard;
        if let Some(count) = counts.get_mut(dir) {
            *count -= 1;
            if *count == 0 {
                counts.remove(dir);
                let _ = watcher.unwatch(dir);
            }
        }
    }
}
