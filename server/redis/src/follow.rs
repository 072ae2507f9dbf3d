//! Noticing that sessions in a store grew, to wake their readers.
//!
//! With keyspace notifications enabled on the server (`notify-keyspace-events` holding `K` and
//! `$` or `A`), one connection subscribes to `__keyspace@<db>__:<prefix>file:*` and every append,
//! set or deletion of a watched session wakes it at once. Without them (the default of a Redis
//! server, and what a managed Redis may refuse to change), the watched values' lengths are asked
//! for (`STRLEN`, pipelined) every [`POLL`]; a change wakes the session. Either way the session
//! itself reads what changed (its follow), so ordering and whole lines are the engine's, as for a
//! file, and a missed wake-up is caught up by the next one.

use crate::link::{Link, Retry};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often watched lengths are asked for when the server sends no notifications.
pub const POLL: Duration = Duration::from_millis(200);

/// How a [`Watch`] learns of changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Keyspace notifications.
    Notifications,
    /// Polling lengths.
    Polling,
}

/// Watches the sessions of one store on a thread of its own; dropped, it stops.
pub struct Watch {
    watched: Arc<Mutex<HashMap<PathBuf, Option<u64>>>>,
    stop: Arc<AtomicBool>,
    mode: Arc<Mutex<Mode>>,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch").finish_non_exhaustive()
    }
}

impl Watch {
    /// Starts watching `link`'s store; `wake` gets the path of a session that changed.
    pub fn start(link: Arc<Link>, wake: impl Fn(&Path) + Send + Sync + 'static) -> Watch {
        let watched: Arc<Mutex<HashMap<PathBuf, Option<u64>>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let mode = Arc::new(Mutex::new(Mode::Polling));
        let (w, s, m) = (Arc::clone(&watched), Arc::clone(&stop), Arc::clone(&mode));
        let wake = Arc::new(wake);
        let spawned = std::thread::Builder::new()
            .name("redis-watch".into())
            .spawn(move || run(&link, &w, &s, &m, &*wake));
        if let Err(err) = spawned {
            tracing::warn!("cannot start the store watch: {err}");
        }
        Watch {
            watched,
            stop,
            mode,
        }
    }

    /// Watches one more session.
    pub fn add(&self, path: &Path) {
        lock(&self.watched).insert(path.to_path_buf(), None);
    }

    /// Stops watching a session.
    pub fn remove(&self, path: &Path) {
        lock(&self.watched).remove(path);
    }

    /// How changes are noticed now.
    pub fn mode(&self) -> Mode {
        *lock(&self.mode)
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn run(
    link: &Link,
    watched: &Mutex<HashMap<PathBuf, Option<u64>>>,
    stop: &AtomicBool,
    mode: &Mutex<Mode>,
    wake: &dyn Fn(&Path),
) {
    while !stop.load(Ordering::Relaxed) {
        if notifications_enabled(link) {
            *lock(mode) = Mode::Notifications;
            if let Err(err) = subscribe(link, watched, stop, wake) {
                tracing::debug!("store notifications ended: {err}");
            }
            *lock(mode) = Mode::Polling;
        }
        // Polling, until notifications are seen to be enabled (checked every few seconds).
        for _ in 0..25 {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            poll_once(link, watched, wake);
            std::thread::sleep(POLL);
        }
    }
}

/// Whether the server sends keyspace events for string commands (`K` with `$` or `A`).
pub fn notifications_enabled(link: &Link) -> bool {
    let flags: std::io::Result<Vec<String>> = link.run(Retry::Once, |conn| {
        redis::cmd("CONFIG")
            .arg("GET")
            .arg("notify-keyspace-events")
            .query(conn)
    });
    match flags {
        Ok(pair) => pair
            .get(1)
            .is_some_and(|f| f.contains('K') && (f.contains('$') || f.contains('A'))),
        Err(_) => false,
    }
}

fn poll_once(link: &Link, watched: &Mutex<HashMap<PathBuf, Option<u64>>>, wake: &dyn Fn(&Path)) {
    let paths: Vec<PathBuf> = lock(watched).keys().cloned().collect();
    if paths.is_empty() {
        return;
    }
    let prefix = &link.address().prefix;
    let lens: std::io::Result<Vec<Option<u64>>> = link.run(Retry::Once, |conn| {
        let mut pipe = redis::pipe();
        for p in &paths {
            pipe.cmd("EXISTS")
                .arg(format!("{prefix}file:{}", p.to_string_lossy()));
            pipe.cmd("STRLEN")
                .arg(format!("{prefix}file:{}", p.to_string_lossy()));
        }
        let pairs: Vec<u64> = pipe.query(conn)?;
        Ok(pairs
            .chunks(2)
            .map(|c| (c[0] == 1).then_some(c[1]))
            .collect())
    });
    let Ok(lens) = lens else { return };
    let mut changed = Vec::new();
    {
        let mut watched = lock(watched);
        for (path, len) in paths.into_iter().zip(lens) {
            if let Some(known) = watched.get_mut(&path) {
                if *known != len {
                    // The first look wakes the session too: it may have changed between the
                    // session's read and this look (the session's follow then reads nothing
                    // when it did not).
                    changed.push(path.clone());
                    *known = len;
                }
            }
        }
    }
    for path in changed {
        wake(&path);
    }
}

fn subscribe(
    link: &Link,
    watched: &Mutex<HashMap<PathBuf, Option<u64>>>,
    stop: &AtomicBool,
    wake: &dyn Fn(&Path),
) -> std::io::Result<()> {
    let address = link.address();
    let channel_prefix = format!("__keyspace@{}__:{}file:", address.db, address.prefix);
    let mut conn = link.connect()?;
    let mut pubsub = conn.as_pubsub();
    pubsub
        .psubscribe(format!("{}*", crate::listing::escape_glob(&channel_prefix)))
        .map_err(|e| link.error(&e))?;
    pubsub
        .set_read_timeout(Some(Duration::from_millis(500)))
        .map_err(|e| link.error(&e))?;
    // Anything that changed before the subscription took effect.
    poll_once(link, watched, wake);
    while !stop.load(Ordering::Relaxed) {
        match pubsub.get_message() {
            Ok(msg) => {
                let channel = msg.get_channel_name();
                if let Some(path) = channel.strip_prefix(&channel_prefix) {
                    let path = Path::new(path);
                    if lock(watched).contains_key(path) {
                        wake(path);
                    }
                }
            }
            Err(err) if err.is_timeout() => {}
            Err(err) => return Err(link.error(&err)),
        }
    }
    Ok(())
}
