//! The Linux watcher behind [`crate::monitor`]: one inotify instance per work tree with a watch on
//! every folder (the work tree's own `.git` left out), read by a thread every few milliseconds so
//! the kernel's queue does not overflow, and to the end by [`query`] before git runs.
//!
//! A path is recorded as it is and, when a folder may be involved (created, deleted, moved), also
//! with a trailing `/`, which makes git look at everything below it. A new folder is watched at
//! once, with everything already in it (files written there before its watch are covered by the
//! folder's own path). A change inside a nested repository's `.git` records that repository's
//! folder (its gitlink). A lost event (the queue overflowed) or a moved top level starts a new
//! journal: git's token no longer matches, and it looks at every file once.

use super::{Query, HOOK, MAX_MONITORS};
use crate::workspace::Workspace;
use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
use rustix::io::Errno;
use std::collections::{BTreeSet, HashMap};
use std::fs::File;
use std::io::Write;
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

static ENABLED: AtomicBool = AtomicBool::new(false);
static MONITORS: Mutex<Vec<Arc<Monitor>>> = Mutex::new(Vec::new());
/// Work trees whose watch could not be set up, and when: not tried again for [`RETRY`].
static FAILED: Mutex<Vec<(PathBuf, Instant)>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// How often the thread reads the kernel's queue.
const TICK: Duration = Duration::from_millis(20);
/// A journal this long is started anew (git then looks at every file once).
const JOURNAL_LIMIT: u64 = 16 << 20;
/// How long a work tree whose watch failed is left unwatched.
const RETRY: Duration = Duration::from_secs(60);

pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::SeqCst);
    if !on {
        if let Ok(mut all) = MONITORS.lock() {
            all.clear();
        }
    }
}

pub fn query(workspace: &Workspace) -> Option<Query> {
    if !ENABLED.load(Ordering::SeqCst) {
        return None;
    }
    let monitor = monitor_for(workspace)?;
    let answer = monitor.sync();
    if answer.is_none() {
        // A watch that broke (too many folders for the system's limit, say) is dropped.
        if let Ok(mut all) = MONITORS.lock() {
            all.retain(|m| !Arc::ptr_eq(m, &monitor));
        }
        failed(workspace.toplevel());
    }
    answer
}

fn failed(toplevel: &Path) {
    if let Ok(mut failed) = FAILED.lock() {
        failed.retain(|(p, _)| p != toplevel);
        failed.push((toplevel.to_path_buf(), Instant::now()));
    }
}

fn monitor_for(workspace: &Workspace) -> Option<Arc<Monitor>> {
    let toplevel = workspace.toplevel();
    let mut all = MONITORS.lock().ok()?;
    if let Some(at) = all.iter().position(|m| m.toplevel == toplevel) {
        let monitor = all.remove(at);
        all.push(monitor.clone());
        return Some(monitor);
    }
    if let Ok(mut failed) = FAILED.lock() {
        failed.retain(|(_, when)| when.elapsed() < RETRY);
        if failed.iter().any(|(p, _)| p == toplevel) {
            return None;
        }
    }
    match Monitor::start(workspace) {
        Ok(monitor) => {
            let monitor = Arc::new(monitor);
            all.push(monitor.clone());
            if all.len() > MAX_MONITORS {
                all.remove(0);
            }
            Some(monitor)
        }
        Err(err) => {
            tracing::info!(
                "not watching {} ({err}); staging looks at every file",
                toplevel.display()
            );
            drop(all);
            failed(toplevel);
            None
        }
    }
}

/// One watched work tree.
struct Monitor {
    toplevel: PathBuf,
    hook: PathBuf,
    state: Arc<Mutex<State>>,
}

struct State {
    fd: OwnedFd,
    toplevel: PathBuf,
    /// Watch descriptor → folder, relative to the top level (`""` for the top level).
    folders: HashMap<i32, Vec<u8>>,
    /// Paths changed since the last [`Monitor::sync`].
    pending: BTreeSet<Vec<u8>>,
    /// Events were lost: the next sync watches every folder again and starts a new journal.
    lost: bool,
    /// The watch cannot be kept (a limit of the system): git looks at every file.
    broken: bool,
    /// Since the last sync a path was created or moved in, or a `.gitignore` changed.
    created: bool,
    journal: Journal,
}

struct Journal {
    dir: PathBuf,
    id: String,
    path: PathBuf,
    file: File,
    len: u64,
    /// A query of this journal was answered already (the first one cannot be "in place").
    queried: bool,
}

impl Journal {
    fn create(dir: &Path) -> std::io::Result<Journal> {
        let id = format!(
            "{:x}-{:x}-{:x}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
            NEXT_ID.fetch_add(1, Ordering::SeqCst)
        );
        let path = dir.join(format!("journal-{id}"));
        let file = File::create(&path)?;
        Ok(Journal {
            dir: dir.to_path_buf(),
            id,
            path,
            file,
            len: 0,
            queried: false,
        })
    }

    fn renew(&mut self) -> std::io::Result<()> {
        // The old journal's file is removed when it is dropped here.
        *self = Journal::create(&self.dir)?;
        Ok(())
    }

    fn append(&mut self, paths: &BTreeSet<Vec<u8>>) -> std::io::Result<()> {
        let mut bytes = Vec::new();
        for path in paths {
            bytes.extend_from_slice(path);
            bytes.push(0);
        }
        self.file.write_all(&bytes)?;
        self.len += bytes.len() as u64;
        Ok(())
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

const WATCH: WatchFlags = WatchFlags::CREATE
    .union(WatchFlags::DELETE)
    .union(WatchFlags::MODIFY)
    .union(WatchFlags::ATTRIB)
    .union(WatchFlags::CLOSE_WRITE)
    .union(WatchFlags::MOVED_FROM)
    .union(WatchFlags::MOVED_TO)
    .union(WatchFlags::DELETE_SELF)
    .union(WatchFlags::MOVE_SELF)
    .union(WatchFlags::ONLYDIR)
    .union(WatchFlags::DONT_FOLLOW)
    .union(WatchFlags::EXCL_UNLINK);

impl Monitor {
    fn start(workspace: &Workspace) -> std::io::Result<Monitor> {
        let dir = workspace.state_dir().join("fsmonitor");
        std::fs::create_dir_all(&dir)?;
        let hook = dir.join("hook");
        if std::fs::read(&hook).ok().as_deref() != Some(HOOK.as_bytes()) {
            let tmp = dir.join("hook.tmp");
            std::fs::write(&tmp, HOOK)?;
            std::fs::rename(&tmp, &hook)?;
        }
        remove_orphaned_journals(&dir);
        let fd = inotify::init(CreateFlags::NONBLOCK | CreateFlags::CLOEXEC)?;
        let mut state = State {
            fd,
            toplevel: workspace.toplevel().to_path_buf(),
            folders: HashMap::new(),
            pending: BTreeSet::new(),
            lost: false,
            broken: false,
            created: false,
            journal: Journal::create(&dir)?,
        };
        state.watch_tree(b"")?;
        let state = Arc::new(Mutex::new(state));
        let weak = Arc::downgrade(&state);
        std::thread::Builder::new()
            .name("rewind-watch".to_owned())
            .spawn(move || read_on(weak))?;
        Ok(Monitor {
            toplevel: workspace.toplevel().to_path_buf(),
            hook,
            state,
        })
    }

    /// Reads the kernel's queue to the end and appends what changed to the journal.
    fn sync(&self) -> Option<Query> {
        let mut state = self.state.lock().ok()?;
        state.read_events();
        if state.lost && !state.broken {
            state.lost = false;
            state.pending.clear();
            if state.watch_tree(b"").is_err() || state.journal.renew().is_err() {
                state.broken = true;
            }
        }
        if state.broken {
            return None;
        }
        if state.journal.len > JOURNAL_LIMIT && state.journal.renew().is_err() {
            return None;
        }
        let pending = std::mem::take(&mut state.pending);
        if state.journal.append(&pending).is_err() {
            state.broken = true;
            return None;
        }
        let only_in_place = state.journal.queried && !state.created;
        state.journal.queried = true;
        state.created = false;
        Some(Query {
            hook: self.hook.clone(),
            token: format!("{}:{}", state.journal.id, state.journal.len),
            journal: state.journal.path.clone(),
            only_in_place,
        })
    }
}

/// Removes the journals of processes that have ended (a server's own is removed when its watch
/// is dropped, but not when the process exits). A journal is named `journal-PID-TIME-N`.
fn remove_orphaned_journals(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(id) = name.to_str().and_then(|n| n.strip_prefix("journal-")) else {
            continue;
        };
        let Some(pid) = id
            .split('-')
            .next()
            .and_then(|p| u32::from_str_radix(p, 16).ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The thread that keeps the kernel's queue short; it ends when the monitor is dropped.
fn read_on(state: Weak<Mutex<State>>) {
    loop {
        std::thread::sleep(TICK);
        let Some(state) = state.upgrade() else { return };
        let Ok(mut state) = state.lock() else { return };
        state.read_events();
    }
}

impl State {
    /// Watches the folder `rel` (relative to the top level) and every folder below it.
    fn watch_tree(&mut self, rel: &[u8]) -> std::io::Result<()> {
        let mut stack = vec![rel.to_vec()];
        while let Some(folder) = stack.pop() {
            let abs = if folder.is_empty() {
                self.toplevel.clone()
            } else {
                self.toplevel.join(std::ffi::OsStr::from_bytes(&folder))
            };
            let wd = match inotify::add_watch(&self.fd, &abs, WATCH) {
                Ok(wd) => wd,
                // Gone, or no longer a folder: its parent's event says so.
                Err(Errno::NOENT | Errno::NOTDIR) => continue,
                Err(err) => return Err(err.into()),
            };
            self.folders.insert(wd, folder.clone());
            let Ok(entries) = std::fs::read_dir(&abs) else {
                continue;
            };
            for entry in entries.flatten() {
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if !kind.is_dir() {
                    continue;
                }
                let name = entry.file_name();
                if folder.is_empty() && name.as_bytes() == b".git" {
                    continue;
                }
                stack.push(join(&folder, name.as_bytes()));
            }
        }
        Ok(())
    }

    /// Reads every event the kernel holds for us now.
    fn read_events(&mut self) {
        let mut buf = [MaybeUninit::<u8>::uninit(); 16 * 1024];
        loop {
            let mut events = Vec::new();
            {
                let mut reader = inotify::Reader::new(&self.fd, &mut buf);
                loop {
                    match reader.next() {
                        Ok(event) => events.push((
                            event.wd(),
                            event.events(),
                            event.file_name().map(|n| n.to_bytes().to_vec()),
                        )),
                        Err(Errno::AGAIN) => break,
                        Err(Errno::INTR) => continue,
                        Err(_) => {
                            self.lost = true;
                            break;
                        }
                    }
                    if reader.is_buffer_empty() {
                        break;
                    }
                }
            }
            if events.is_empty() {
                return;
            }
            for (wd, flags, name) in events {
                self.record(wd, flags, name.as_deref());
            }
        }
    }

    fn record(&mut self, wd: i32, flags: ReadFlags, name: Option<&[u8]>) {
        if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
            self.lost = true;
            return;
        }
        if flags.contains(ReadFlags::IGNORED) {
            self.folders.remove(&wd);
            return;
        }
        let Some(folder) = self.folders.get(&wd) else {
            return;
        };
        let rel = match name {
            Some(name) => join(folder, name),
            None => folder.clone(),
        };
        if rel.is_empty() {
            // The top level itself was deleted or moved.
            if flags.intersects(ReadFlags::DELETE_SELF | ReadFlags::MOVE_SELF) {
                self.lost = true;
            }
            return;
        }
        if rel == b".git" || rel.starts_with(b".git/") {
            return;
        }
        let folder_event = flags.contains(ReadFlags::ISDIR)
            || flags.intersects(
                ReadFlags::CREATE
                    | ReadFlags::DELETE
                    | ReadFlags::MOVED_FROM
                    | ReadFlags::MOVED_TO
                    | ReadFlags::DELETE_SELF
                    | ReadFlags::MOVE_SELF,
            );
        if folder_event {
            let mut dir = rel.clone();
            dir.push(b'/');
            self.pending.insert(dir);
        }
        // A change in a nested repository's `.git` changes that repository's gitlink.
        if let Some(at) =
            find(&rel, b"/.git/").or_else(|| rel.strip_suffix(b"/.git").map(|r| r.len()))
        {
            self.pending.insert(rel[..at].to_vec());
        }
        let name_of = rel.rsplit(|&b| b == b'/').next().unwrap_or_default();
        if flags.intersects(ReadFlags::CREATE | ReadFlags::MOVED_TO) || name_of == b".gitignore" {
            self.created = true;
        }
        let new_folder = flags.contains(ReadFlags::ISDIR)
            && flags.intersects(ReadFlags::CREATE | ReadFlags::MOVED_TO);
        self.pending.insert(rel.clone());
        if new_folder && self.watch_tree(&rel).is_err() {
            self.broken = true;
        }
    }
}

fn join(folder: &[u8], name: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(folder.len() + 1 + name.len());
    if !folder.is_empty() {
        out.extend_from_slice(folder);
        out.push(b'/');
    }
    out.extend_from_slice(name);
    out
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
