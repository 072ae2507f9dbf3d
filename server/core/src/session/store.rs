//! Sessions kept in a store outside the file system (omp's `RedisSessionStorage`): the interface
//! such a store implements, and the session's reads and writes through it.
//!
//! A session lives either in a local file (the default: `persist.rs` and `load.rs`, unchanged) or in
//! a [`SessionStore`]. Everything above this floor (index, labels, names, tree, context, view)
//! reads entries the same way for both: a store's session is scanned by byte range when it opens,
//! and its bodies stay in the store and are read back by byte range when asked for, as a file's
//! bodies stay in the file ([`super::store_bodies`]). What follows is read by byte range from where
//! the session stood; writes are whole lines appended only when the value still has the length the
//! session last saw (otherwise nothing is written and the write is refused as a conflict), new
//! sessions are created only where none exists, and omp's title is kept the store's way.
//!
//! The engine has no network client: a store is implemented where the server is (the Redis one in
//! `sessiontree-redis`), and its calls block (the engine is called off the async threads).

use super::{FileState, Session};
use crate::entry::BodySource;
use crate::error::{Error, Result};
use crate::reader::{read_file_in_parts, read_lines, ReadOptions};
use crate::title_slot::TitleSlot;
use std::path::Path;
use std::sync::Arc;

/// Where one session's bytes are kept, when not in a local file.
///
/// The session's text is one value (the JSONL bytes, as in a file); it only ever grows by whole
/// lines, except when a writer replaces it whole (then it is reloaded). Calls block; a failure to
/// reach the store is an [`std::io::Error`] naming it.
pub trait SessionStore: Send + Sync + std::fmt::Debug {
    /// The session's path as the agent names it (the part of its key after the store's prefix).
    fn path(&self) -> &Path;

    /// The session's bytes as the agent reads them, whole (omp: the value with the title it keeps
    /// beside it laid over the title slot); `None` when there is no such session.
    fn read_all(&self) -> std::io::Result<Option<Vec<u8>>>;

    /// The value's length and its first `len` bytes (fewer when it is shorter) as the agent reads
    /// them (omp: the title it keeps beside the value laid over the title slot), read in one
    /// atomic step; `None` when there is no such session.
    fn head(&self, len: u64) -> std::io::Result<Option<(u64, Vec<u8>)>>;

    /// The value's bytes in each range `(from, to)` (end excluded), as stored (no title laid
    /// over), read in one round trip; a range the value ends inside gives fewer bytes (none past
    /// its end).
    fn read_ranges(&self, ranges: &[(u64, u64)]) -> std::io::Result<Vec<Vec<u8>>>;

    /// What the value holds past its first `len` bytes, read in one atomic step with a check that
    /// the bytes just before `len` are still `tail` (so a value rewritten whole is not mistaken
    /// for one that grew).
    fn read_since(&self, len: u64, tail: &[u8]) -> std::io::Result<Since>;

    /// Appends `bytes` (whole lines) when the value is exactly `expected` bytes long, atomically.
    fn append(&self, expected: u64, bytes: &[u8]) -> std::io::Result<Written>;

    /// Creates the value holding `contents` when no value exists, atomically; `title` is the
    /// title slot the contents begin with (the store keeps it beside the value).
    fn create(&self, contents: &[u8], title: Option<&TitleSlot>) -> std::io::Result<Written>;

    /// Sets the title the store keeps beside the value (omp's rename).
    fn set_title(&self, slot: &TitleSlot) -> std::io::Result<()>;

    /// The title the store keeps beside the value now, if any.
    fn title(&self) -> std::io::Result<Option<TitleSlot>>;

    /// The same store, for another session path (a branched session's new key).
    fn sibling(&self, path: &Path) -> Arc<dyn SessionStore>;
}

/// What [`SessionStore::read_since`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Since {
    /// The value still begins with what was read; these bytes follow it (maybe none).
    Grown(Vec<u8>),
    /// The value is gone, shorter, or no longer ends its first `len` bytes with `tail`.
    Replaced,
}

/// A session's link to its store: the store, and the last bytes indexed (checked on follow).
#[derive(Debug, Clone)]
pub(super) struct StoreLink {
    pub(super) store: Arc<dyn SessionStore>,
    tail: Vec<u8>,
}

/// How many bytes before the end of what was indexed [`SessionStore::read_since`] checks.
const TAIL: u64 = 64;
/// Offsets below this (omp's title slot) are left out of the check: the title is laid over them.
const SLOT_END: u64 = crate::title_slot::SLOT_BYTES as u64;
/// The first bytes of a value read when it opens (the title slot, the header and the dialect's
/// first clue); the rest is read by range.
const HEAD: u64 = 1024;

impl StoreLink {
    fn new(store: Arc<dyn SessionStore>) -> StoreLink {
        StoreLink {
            store,
            tail: Vec::new(),
        }
    }

    /// The value now ends at `len` with `bytes` (which end there) as its last bytes.
    fn advance(&mut self, bytes: &[u8], len: u64) {
        let from = len.saturating_sub(TAIL).max(SLOT_END.min(len));
        let keep = usize::try_from(len - from).unwrap_or(0);
        let mut joined = std::mem::take(&mut self.tail);
        joined.extend_from_slice(bytes);
        let cut = joined.len().saturating_sub(keep);
        self.tail = joined.split_off(cut);
    }
}

/// What a conditional write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// Written; the value is now this long.
    Done {
        /// The value's length after the write.
        len: u64,
    },
    /// Not written: the value was not as expected (another writer changed it).
    Conflict {
        /// Its length (`None`: no value).
        actual: Option<u64>,
    },
}

fn store_error(action: &'static str, path: &Path, err: std::io::Error) -> Error {
    Error::io(action, path, err)
}

impl Session {
    /// Opens the session a store keeps (`SessionManager.open` with the agent's store), without
    /// modifying it. Read as a file of the same bytes is read: the same entries, diagnostics and
    /// answers. The value is scanned by byte range and its bodies stay in the store (read on
    /// demand); a value no longer than the title slot is read whole (the agent's title may
    /// change its length).
    pub fn open_store(
        store: Arc<dyn SessionStore>,
        options: super::OpenOptions,
    ) -> Result<Session> {
        let path = store.path().to_path_buf();
        let (size, head) = store
            .head(HEAD)
            .map_err(|e| store_error("cannot read", &path, e))?
            .ok_or_else(|| {
                Error::io(
                    "cannot read",
                    &path,
                    std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        "no such session in the store",
                    ),
                )
            })?;
        let mut session = Session::scan_store(&store, size, head, options)?;
        let mut link = StoreLink::new(store);
        if let (FileState::Written { len, .. }, Some(source)) = (&session.file, &session.source) {
            let from = len.saturating_sub(TAIL);
            let tail = source
                .read(from, usize::try_from(len - from).unwrap_or(0))
                .map_err(|e| Error::io("cannot read", &path, e))?;
            link.advance(&tail, *len);
        }
        session.store = Some(link);
        Ok(session)
    }

    /// Reads a store's session whose first `size` bytes begin with `head` (read as
    /// [`SessionStore::head`] reads it, the title laid over the slot), without linking the
    /// session to the store for follows and writes: what a listing reads. A value no longer than
    /// the title slot is read whole (the agent's title may change its length); one no longer than
    /// `head` is read from it alone.
    pub(crate) fn scan_store(
        store: &Arc<dyn SessionStore>,
        size: u64,
        head: Vec<u8>,
        options: super::OpenOptions,
    ) -> Result<Session> {
        let path = store.path().to_path_buf();
        if size <= SLOT_END {
            let bytes = store
                .read_all()
                .map_err(|e| store_error("cannot read", &path, e))?
                .unwrap_or_default();
            return Session::open_bytes(&path, bytes, options);
        }
        let source = BodySource::from_store(
            Box::new(super::StoreBodies::new(Arc::clone(store), head.clone())),
            &path,
        );
        Session::open_source(&path, source, size, &head, options)
    }

    /// Opens a session from the whole text of its file (a store's value), without a store to
    /// write to: read as a file of the same bytes is read. `path` names it in errors.
    pub fn open_bytes(path: &Path, bytes: Vec<u8>, options: super::OpenOptions) -> Result<Session> {
        let size = bytes.len() as u64;
        let head = bytes[..bytes.len().min(HEAD as usize)].to_vec();
        let source = BodySource::from_bytes(bytes, path);
        Session::open_source(path, source, size, &head, options)
    }

    /// Reads the first `size` bytes of `source` (which begin with `head`) as a file's.
    fn open_source(
        path: &Path,
        source: Arc<BodySource>,
        size: u64,
        head: &[u8],
        options: super::OpenOptions,
    ) -> Result<Session> {
        let guess = match options.dialect {
            Some(dialect) => dialect,
            None if starts_with_slot(head) => crate::Dialect::Omp,
            None => crate::Dialect::Pi,
        };
        let facts = options.view_facts.then_some(guess);
        let mut building = super::building::Building::new(path.to_path_buf(), options, guess);
        read_file_in_parts(&source, size, facts, |part| building.take(part))
            .map_err(|e| Error::io("cannot read", path, e))?;
        let mut session = building.finish(None)?;
        session.source = Some(source);
        Ok(session)
    }

    /// The store the session is kept in, when it is not a local file.
    pub fn store(&self) -> Option<&Arc<dyn SessionStore>> {
        self.store.as_ref().map(|link| &link.store)
    }

    /// A session made from this one (a fork) is kept in the same store, under its own path.
    pub(super) fn sibling_store(&self, fork: &Session) -> Option<StoreLink> {
        let link = self.store.as_ref()?;
        Some(StoreLink::new(link.store.sibling(fork.file.path()?)))
    }

    /// [`Session::follow`] for a store: the bytes past what is indexed, read in one step with
    /// the check that what was indexed is still there; their complete lines are indexed (an
    /// incomplete last line is held back, as in a file). A value that vanished, shrank or was
    /// rewritten is [`Error::FileReplaced`].
    pub(super) fn follow_store(&mut self, mut link: StoreLink) -> Result<super::FollowOutcome> {
        let outcome = self.follow_store_with(&mut link);
        self.store = Some(link);
        outcome
    }

    fn follow_store_with(&mut self, link: &mut StoreLink) -> Result<super::FollowOutcome> {
        let FileState::Written {
            path, len, lines, ..
        } = &self.file
        else {
            return Ok(super::FollowOutcome::default());
        };
        let (path, len, lines) = (path.clone(), *len, *lines);
        let since = link
            .store
            .read_since(len, &link.tail)
            .map_err(|e| store_error("cannot read", &path, e))?;
        let Since::Grown(bytes) = since else {
            return Err(Error::FileReplaced { path });
        };
        self.follow_title(&link.store, &path)?;
        let start = self.entries.len();
        let consumed = self.index_store_bytes(&bytes, lines);
        let taken = usize::try_from(consumed).unwrap_or(bytes.len());
        link.advance(&bytes[..taken], len + consumed);
        if let FileState::Written { len, pending, .. } = &mut self.file {
            *len += consumed;
            *pending = bytes.len() as u64 - consumed;
        }
        let new_entries: Vec<usize> = (start..self.entries.len()).collect();
        if !new_entries.is_empty() {
            self.revision += 1;
        }
        Ok(super::FollowOutcome {
            new_entries,
            pending: bytes.len() as u64 > consumed,
        })
    }

    /// Indexes the complete lines of `bytes` (which follow physical line `lines`); returns the
    /// bytes consumed. Their bodies are kept as text.
    fn index_store_bytes(&mut self, bytes: &[u8], lines: usize) -> u64 {
        let options = ReadOptions {
            first_line: lines + 1,
            detect_slot: false,
            facts: Some(self.dialect),
            source: None,
        };
        // Reading from memory cannot fail.
        let outcome = read_lines(bytes, &options).unwrap_or_default();
        self.diagnostics.extend(outcome.diagnostics);
        for entry in outcome.values {
            self.insert(entry);
        }
        self.settle_parents();
        if let FileState::Written { lines, .. } = &mut self.file {
            *lines += outcome.lines;
        }
        outcome.consumed
    }

    /// omp keeps a Redis session's title beside the value; another writer's rename changes it
    /// there (and appends its `title_change` line), so the title is read again on follow.
    fn follow_title(&mut self, store: &Arc<dyn SessionStore>, path: &Path) -> Result<()> {
        if self.dialect != crate::Dialect::Omp || self.slot.is_none() {
            return Ok(());
        }
        let Some(slot) = store
            .title()
            .map_err(|e| store_error("cannot read", path, e))?
        else {
            return Ok(());
        };
        if self.slot.as_ref() != Some(&slot) {
            super::header::fold_slot_into_header(&mut self.header, &slot);
            self.slot = Some(slot);
            self.revision += 1;
        }
        Ok(())
    }

    /// Appends one whole line to the store's value, only if it still has the length this session
    /// indexed (checked and appended atomically by the store). A value another writer grew first
    /// is refused as [`Error::StoreConflict`] with nothing written: the caller reads the new
    /// lines (the next write's catch-up does) and decides again.
    pub(super) fn append_store_line(&mut self, mut link: StoreLink, line: &str) -> Result<()> {
        let outcome = self.append_store_line_with(&mut link, line);
        self.store = Some(link);
        outcome
    }

    fn append_store_line_with(&mut self, link: &mut StoreLink, line: &str) -> Result<()> {
        let FileState::Written { path, len, .. } = &self.file else {
            return Ok(());
        };
        let (path, expected) = (path.clone(), *len);
        let mut buf = String::with_capacity(line.len() + 1);
        buf.push_str(line);
        buf.push('\n');
        match link
            .store
            .append(expected, buf.as_bytes())
            .map_err(|e| store_error("cannot append to", &path, e))?
        {
            Written::Done { len: now } => {
                // The store appended at `expected` exactly, so `now` is `expected` + our line.
                link.advance(buf.as_bytes(), now);
                if let FileState::Written { len, lines, .. } = &mut self.file {
                    *len = now;
                    *lines += 1;
                }
                Ok(())
            }
            Written::Conflict { actual } => Err(Error::StoreConflict {
                path,
                expected: Some(expected),
                actual,
            }),
        }
    }

    /// Creates the session's value in the store with the contents the agent writes for a new
    /// file; refused ([`Error::StoreConflict`]) when a value exists already.
    pub(super) fn create_in_store(&mut self, mut link: StoreLink, path: &Path) -> Result<()> {
        let contents = self.full_contents()?;
        let slot = self.slot_for_new_file();
        let written = link
            .store
            .create(contents.as_bytes(), slot.as_ref())
            .map_err(|e| store_error("cannot create", path, e));
        if let Ok(Written::Done { len }) = written {
            link.advance(contents.as_bytes(), len);
        }
        self.store = Some(link);
        match written? {
            Written::Done { len } => {
                self.slot = slot;
                let lines = usize::from(self.slot.is_some()) + 1 + self.entries.len();
                let mut line_no = lines - self.entries.len();
                for entry in &mut self.entries {
                    line_no += 1;
                    entry.line = line_no;
                }
                self.file = FileState::Written {
                    path: path.to_path_buf(),
                    len,
                    lines,
                    pending: 0,
                    identity: None,
                };
                Ok(())
            }
            Written::Conflict { actual } => Err(Error::StoreConflict {
                path: path.to_path_buf(),
                expected: None,
                actual,
            }),
        }
    }

    /// Sets the title the store keeps (omp's `updateSessionTitle`); the value is not rewritten.
    pub(super) fn set_store_title(
        &mut self,
        store: &Arc<dyn SessionStore>,
        slot: &TitleSlot,
    ) -> Result<()> {
        let path = self.file.path().map(Path::to_path_buf).unwrap_or_default();
        store
            .set_title(slot)
            .map_err(|e| store_error("cannot set the title of", &path, e))
    }
}

/// Whether the bytes begin with an omp title slot.
fn starts_with_slot(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(HEAD as usize)];
    let line = head.split(|&b| b == b'\n').next().unwrap_or(&[]);
    std::str::from_utf8(line)
        .ok()
        .and_then(TitleSlot::parse)
        .is_some()
}
