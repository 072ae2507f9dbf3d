//! Getting bytes to disk without ever losing any: whole lines appended in one write to an
//! `O_APPEND` descriptor, new files created exclusively, and the omp title slot overwritten in place
//! at exactly 256 bytes. Nothing else existing is ever rewritten.

use super::Session;
use crate::entry::Entry;
use crate::error::{Error, Result};
use crate::title_slot::{TitleSlot, SLOT_BYTES};
use std::fs::{File, OpenOptions};
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// When appended data must reach the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncPolicy {
    /// `fdatasync` before a mutation is acknowledged (the default).
    #[default]
    Data,
    /// Leave it to the operating system (faster; a power cut may lose the last lines).
    None,
}

/// Identifies a file so a replacement (rename over it) can be told from an append.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileIdentity {
    dev: u64,
    ino: u64,
}

impl FileIdentity {
    /// The identity of an open file, where the platform has one.
    pub fn of(file: &File) -> Option<FileIdentity> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            file.metadata().ok().map(|m| FileIdentity {
                dev: m.dev(),
                ino: m.ino(),
            })
        }
        #[cfg(not(unix))]
        {
            let _ = file;
            None
        }
    }
}

/// Where a session's bytes live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileState {
    /// Not backed by a file.
    Memory,
    /// A path is chosen but nothing is written yet (the agents create the file lazily).
    Deferred(PathBuf),
    /// The file exists; `len` bytes (`lines` physical lines) of complete lines are indexed.
    Written {
        /// The file.
        path: PathBuf,
        /// Bytes indexed so far (up to the last newline).
        len: u64,
        /// Physical lines indexed so far.
        lines: usize,
        /// Bytes after the last newline (another writer mid-line).
        pending: u64,
        /// Which file it was when opened.
        identity: Option<FileIdentity>,
    },
}

impl FileState {
    /// The path, when there is one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            FileState::Memory => None,
            FileState::Deferred(p) => Some(p),
            FileState::Written { path, .. } => Some(path),
        }
    }
}

impl Session {
    /// Refuses writes the file cannot take safely.
    pub(crate) fn check_writable(&self) -> Result<()> {
        if self.file_version < 3 {
            if let Some(path) = self.file.path() {
                return Err(Error::NeedsMigration {
                    path: path.to_path_buf(),
                    version: self.file_version,
                });
            }
        }
        Ok(())
    }

    /// Persists a just-recorded entry as the agent would: nothing while a deferred session has no
    /// assistant message, the whole file when it first gets one, one appended line afterwards.
    pub(crate) fn persist_entry(&mut self, line: &str) -> Result<()> {
        match &self.file {
            FileState::Memory => Ok(()),
            FileState::Deferred(_) if !self.has_assistant => Ok(()),
            FileState::Deferred(path) => {
                let path = path.clone();
                self.write_new_file(&path, Durability::BeforeAnswer)
            }
            FileState::Written { .. } => self.append_line(line),
        }
    }

    /// Creates the session's file now, whatever the lazy-creation rule says (omp's forced creation).
    pub fn ensure_on_disk(&mut self) -> Result<()> {
        self.create_file(Durability::BeforeAnswer)
    }

    /// Creates a fork's file now; its closing `fdatasync` runs after the answer (see
    /// [`DeferredSync`]).
    pub(crate) fn ensure_fork_on_disk(&mut self) -> Result<()> {
        self.create_file(Durability::AfterAnswer)
    }

    fn create_file(&mut self, durability: Durability) -> Result<()> {
        if let FileState::Deferred(path) = &self.file {
            let path = path.clone();
            self.write_new_file(&path, durability)?;
        }
        Ok(())
    }

    /// Waits for a fork's deferred `fdatasync` (if one is still running) and reports its failure.
    /// Every write to the file calls this first, so no line lands after bytes not yet on disk.
    pub fn wait_durable(&mut self) -> Result<()> {
        match self.deferred_sync.take() {
            Some(sync) => sync.wait(),
            None => Ok(()),
        }
    }

    /// The full file contents as the agent writes a new file: (omp) title slot, header, entries.
    /// Entry bodies that sit back to back in the session file are read in one go.
    pub(crate) fn full_contents(&self) -> Result<String> {
        let bodies: usize = self
            .entries
            .iter()
            .map(|e| e.file_range().map_or(256, |(_, _, len)| len as usize + 1))
            .sum();
        let mut out = String::with_capacity(bodies + 1024);
        if let Some(slot) = self.slot_for_new_file() {
            out.push_str(&slot.to_line());
        }
        out.push_str(&crate::json::to_line(&self.header));
        out.push('\n');
        let path = self.file.path().unwrap_or(Path::new(""));
        crate::entry::for_each_body(&self.entries, |_, body| {
            let bytes = body.map_err(|e| Error::io("cannot read an entry of", path, e))?;
            // A body that is no longer the text read at open is never copied into a new file.
            let text = std::str::from_utf8(bytes).map_err(|_| {
                let changed = std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "the file changed under us",
                );
                Error::io("cannot read an entry of", path, changed)
            })?;
            out.push_str(text);
            out.push('\n');
            Ok(())
        })?;
        Ok(out)
    }

    /// Writes [`Session::full_contents`] to a new file and returns its length. Lines that sit
    /// back to back in the session file are copied from it as one byte range, by the kernel where
    /// it can (`copy_file_range`), so a long path costs no reading and re-encoding of its bodies.
    fn write_contents(&self, file: &mut File, path: &Path, durability: Durability) -> Result<u64> {
        let mut pending = Vec::with_capacity(64 << 10);
        if let Some(slot) = self.slot_for_new_file() {
            pending.extend_from_slice(slot.to_line().as_bytes());
        }
        pending.extend_from_slice(crate::json::to_line(&self.header).as_bytes());
        pending.push(b'\n');
        let mut len = 0u64;
        let write_err = |e| Error::io("cannot write", path, e);
        let flush = |pending: &mut Vec<u8>, file: &mut File, len: &mut u64| {
            file.write_all(pending).map_err(write_err)?;
            *len += pending.len() as u64;
            pending.clear();
            Ok::<(), Error>(())
        };
        let mut early = EarlySync::default();
        let mut i = 0;
        while i < self.entries.len() {
            let Some((source, start, body_len)) = self.entries[i].file_range() else {
                pending.extend_from_slice(self.entries[i].raw().as_bytes());
                pending.push(b'\n');
                if pending.len() >= 1 << 20 {
                    flush(&mut pending, file, &mut len)?;
                }
                i += 1;
                continue;
            };
            // A run of lines: each next body starts one byte (its line's `\n`) after the last.
            let mut end = start + u64::from(body_len);
            let mut j = i + 1;
            while let Some((next, offset, next_len)) =
                self.entries.get(j).and_then(Entry::file_range)
            {
                if !Arc::ptr_eq(next, source) || offset != end + 1 {
                    break;
                }
                end = offset + u64::from(next_len);
                j += 1;
            }
            flush(&mut pending, file, &mut len)?;
            match source.file() {
                Some(from) => copy_range(from, start, end - start, file),
                None => source
                    .read(start, usize::try_from(end - start).unwrap_or(usize::MAX))
                    .and_then(|bytes| file.write_all(&bytes)),
            }
            .map_err(|e| Error::io("cannot read an entry of", source.path(), e))?;
            len += end - start;
            pending.push(b'\n');
            if self.sync == SyncPolicy::Data && durability == Durability::BeforeAnswer {
                early
                    .kick(file, len)
                    .map_err(|e| Error::io("cannot sync", path, e))?;
            }
            i = j;
        }
        flush(&mut pending, file, &mut len)?;
        early
            .finish()
            .map_err(|e| Error::io("cannot sync", path, e))?;
        Ok(len)
    }

    pub(super) fn slot_for_new_file(&self) -> Option<TitleSlot> {
        match self.dialect {
            crate::Dialect::Pi => None,
            crate::Dialect::Omp => Some(self.slot.clone().unwrap_or_else(|| {
                TitleSlot {
                    title: self
                        .header
                        .get("title")
                        .and_then(|t| t.as_str())
                        .unwrap_or("")
                        .to_owned(),
                    source: self
                        .header
                        .get("titleSource")
                        .and_then(|t| t.as_str())
                        .map(str::to_owned),
                    updated_at: self
                        .header
                        .get("timestamp")
                        .and_then(|t| t.as_str())
                        .unwrap_or("")
                        .to_owned(),
                }
            })),
        }
    }

    fn write_new_file(&mut self, path: &Path, durability: Durability) -> Result<()> {
        if let Some(link) = self.store.take() {
            return self.create_in_store(link, path);
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::io("cannot create the folder of", path, e))?;
        }
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| Error::io("cannot create", path, e))?;
        let sync_now = self.sync == SyncPolicy::Data && durability == Durability::BeforeAnswer;
        let written = self
            .write_contents(&mut file, path, durability)
            .and_then(|len| {
                if sync_now {
                    file.sync_data()
                        .map_err(|e| Error::io("cannot sync", path, e))?;
                }
                Ok(len)
            });
        let len = match written {
            Ok(len) => len,
            Err(err) => {
                // The file is ours (created just now): a half-written copy is not left behind.
                drop(file);
                let _ = std::fs::remove_file(path);
                return Err(err);
            }
        };
        if self.sync == SyncPolicy::Data && !sync_now {
            self.deferred_sync = Some(DeferredSync::start(&file, path));
        }
        self.now_written(path, len, FileIdentity::of(&file));
        Ok(())
    }

    /// The session's contents ([`Session::full_contents`], `len` bytes) are the start of the file
    /// at `path`: follows it from there.
    pub(crate) fn now_written(&mut self, path: &Path, len: u64, identity: Option<FileIdentity>) {
        self.slot = self.slot_for_new_file();
        // Entry texts hold no newline: the slot, the header, then one line per entry.
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
            identity,
        };
    }

    /// Appends one whole line in one write. Lines another process appended first are indexed
    /// before ours; a line another process is still writing makes us refuse rather than tear it.
    pub(crate) fn append_line(&mut self, line: &str) -> Result<()> {
        let FileState::Written { path, len, .. } = &self.file else {
            return Ok(());
        };
        if let Some(link) = self.store.take() {
            return self.append_store_line(link, line);
        }
        let (path, expected) = (path.clone(), *len);
        self.wait_durable()?;
        let mut file = OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(|e| Error::io("cannot append to", &path, e))?;
        // Writers that write a line in pieces can hold this advisory lock around the pieces; we
        // hold it from the size check to the end of our write, so no piece lands in between.
        // Held by someone else: `writerBusy` (callers retry). Released when `file` closes.
        if !try_lock(&file) {
            return Err(Error::WriterBusy { path });
        }
        let size = file
            .metadata()
            .map_err(|e| Error::io("cannot append to", &path, e))?
            .len();
        if size != expected {
            return Err(Error::WriterBusy { path });
        }
        let mut buf = String::with_capacity(line.len() + 1);
        buf.push_str(line);
        buf.push('\n');
        file.write_all(buf.as_bytes())
            .map_err(|e| Error::io("cannot append to", &path, e))?;
        if self.sync == SyncPolicy::Data {
            file.sync_data()
                .map_err(|e| Error::io("cannot sync", &path, e))?;
        }
        // O_APPEND put our line at the end of the file as it was at the write: a writer that
        // does not take the lock (the agents write each line in one write) may have appended
        // whole lines between our size check and our write. Index those first, in file order.
        let end = file
            .stream_position()
            .map_err(|e| Error::io("cannot append to", &path, e))?;
        let start = end.saturating_sub(buf.len() as u64);
        if start > expected {
            self.index_gap(&path, expected, start)?;
        }
        if let FileState::Written { len, lines, .. } = &mut self.file {
            *len = end.max(*len + buf.len() as u64);
            *lines += 1;
        }
        Ok(())
    }

    /// Indexes the bytes `from..to` another writer appended just before our own line.
    fn index_gap(&mut self, path: &Path, from: u64, to: u64) -> Result<()> {
        use std::io::{Read, Seek, SeekFrom};
        let mut file = File::open(path).map_err(|e| Error::io("cannot read", path, e))?;
        file.seek(SeekFrom::Start(from))
            .map_err(|e| Error::io("cannot read", path, e))?;
        let first_line = match &self.file {
            FileState::Written { lines, .. } => *lines + 1,
            _ => 1,
        };
        let options = crate::reader::ReadOptions {
            first_line,
            facts: Some(self.dialect),
            ..Default::default()
        };
        let outcome = crate::reader::read_lines(file.take(to - from), &options)
            .map_err(|e| Error::io("cannot read", path, e))?;
        self.diagnostics.extend(outcome.diagnostics);
        for entry in outcome.values {
            self.insert(entry);
        }
        self.settle_parents();
        if let FileState::Written { len, lines, .. } = &mut self.file {
            *len = to;
            *lines += outcome.lines + usize::from(outcome.pending > 0);
        }
        self.revision += 1;
        Ok(())
    }

    /// Before a write: index whatever complete lines other writers appended, and refuse while
    /// one of them is mid-line.
    pub(crate) fn catch_up(&mut self) -> Result<()> {
        if let FileState::Written { .. } = self.file {
            let outcome = self.follow()?;
            if outcome.pending {
                let path = self.file.path().map(Path::to_path_buf).unwrap_or_default();
                return Err(Error::WriterBusy { path });
            }
        }
        Ok(())
    }

    /// Overwrites the omp title slot in place (exactly 256 bytes at offset 0).
    pub(crate) fn rewrite_slot(&mut self, slot: TitleSlot) -> Result<()> {
        let line = slot.to_line();
        if line.len() != SLOT_BYTES {
            return Err(Error::InvalidInput(
                "title slot would not be 256 bytes".into(),
            ));
        }
        if let FileState::Written { path, .. } = &self.file {
            if self.slot.is_none() {
                // A slot-less file: inserting one would rewrite the whole file, which we never do.
                return Ok(());
            }
            if let Some(store) = self.store().cloned() {
                self.set_store_title(&store, &slot)?;
                self.slot = Some(slot);
                return Ok(());
            }
            let path = path.clone();
            self.wait_durable()?;
            let file = OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(|e| Error::io("cannot write", &path, e))?;
            write_at(&file, line.as_bytes(), 0)
                .map_err(|e| Error::io("cannot write the title slot of", &path, e))?;
            if self.sync == SyncPolicy::Data {
                file.sync_data()
                    .map_err(|e| Error::io("cannot sync", &path, e))?;
            }
        }
        self.slot = Some(slot);
        Ok(())
    }
}

/// Takes the exclusive advisory lock (`flock`) on an open file without waiting; `false` when
/// another process holds it. Filesystems without `flock` do not block writes.
#[cfg(unix)]
fn try_lock(file: &File) -> bool {
    use rustix::fs::{flock, FlockOperation};
    match flock(file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => true,
        Err(e) => e != rustix::io::Errno::WOULDBLOCK,
    }
}

#[cfg(not(unix))]
fn try_lock(_file: &File) -> bool {
    true
}

/// When a new file's closing `fdatasync` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Durability {
    /// Before the write is acknowledged: the file holds lines that exist nowhere else.
    BeforeAnswer,
    /// After it (see [`DeferredSync`]).
    AfterAnswer,
}

/// A fork's closing `fdatasync`, running on its own thread after the fork is answered. A fork
/// copies lines that stay in the file they came from (which is never written), so a machine
/// stopping before the sync ends loses no line of the user's: at worst the new file is short.
/// Its cost is the disk's (≈ 0.1 s for a 90 MB path), not ours, so the answer does not wait;
/// every later write to the new file does ([`Session::wait_durable`]), so nothing is ever
/// appended after bytes that may not be on disk, and a failed sync is reported by that write.
#[derive(Debug)]
pub(crate) struct DeferredSync {
    path: PathBuf,
    running: Option<std::thread::JoinHandle<std::io::Result<()>>>,
}

impl DeferredSync {
    fn start(file: &File, path: &Path) -> DeferredSync {
        let running = file
            .try_clone()
            .map(|file| crate::parallel::background(move || file.sync_data()));
        DeferredSync {
            path: path.to_path_buf(),
            // No second descriptor (out of descriptors): the wait syncs the file itself.
            running: running.ok(),
        }
    }

    fn wait(self) -> Result<()> {
        let done = match self.running.map(std::thread::JoinHandle::join) {
            Some(Ok(done)) => done,
            Some(Err(_)) => Err(std::io::Error::other("a sync thread failed")),
            None => File::open(&self.path).and_then(|file| file.sync_data()),
        };
        done.map_err(|e| Error::io("cannot sync", &self.path, e))
    }
}

/// Writeback started while a big new file is still being written: every 16 MiB a thread syncs
/// what is written so far (one at a time), so the disk works while we copy and the final
/// `fdatasync` (still made, after the last byte) has little left to do.
#[derive(Default)]
struct EarlySync {
    running: Option<std::thread::JoinHandle<std::io::Result<()>>>,
    kicked_at: u64,
}

impl EarlySync {
    const EVERY: u64 = 16 << 20;

    fn kick(&mut self, file: &File, written: u64) -> std::io::Result<()> {
        if written - self.kicked_at < Self::EVERY {
            return Ok(());
        }
        if self.running.as_ref().is_some_and(|t| !t.is_finished()) {
            return Ok(());
        }
        self.finish()?;
        let file = file.try_clone()?;
        self.running = Some(crate::parallel::background(move || file.sync_data()));
        self.kicked_at = written;
        Ok(())
    }

    fn finish(&mut self) -> std::io::Result<()> {
        match self.running.take().map(std::thread::JoinHandle::join) {
            Some(Ok(done)) => done,
            Some(Err(_)) => Err(std::io::Error::other("a sync thread failed")),
            None => Ok(()),
        }
    }
}

/// Appends `len` bytes of `from` at `offset` to `to` (at its position): in the kernel where the
/// platform can copy between files, through a buffer otherwise. Fewer bytes than asked (the file
/// shrank under us) is an error.
fn copy_range(from: &File, offset: u64, len: u64, to: &mut File) -> std::io::Result<()> {
    let (mut offset, mut left) = (offset, len);
    #[cfg(any(target_os = "linux", target_os = "android"))]
    while left > 0 {
        let chunk = usize::try_from(left.min(1 << 30)).unwrap_or(1 << 30);
        match rustix::fs::copy_file_range(from, Some(&mut offset), &*to, None, chunk) {
            Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => left -= n as u64,
            Err(rustix::io::Errno::INTR) => {}
            // Not between these files (another file system, an old kernel): copy by hand.
            Err(_) if left == len => break,
            Err(e) => return Err(e.into()),
        }
    }
    let mut buf = vec![0u8; usize::try_from(left.min(8 << 20)).unwrap_or(8 << 20)];
    while left > 0 {
        let n = usize::try_from(left.min(buf.len() as u64)).unwrap_or(buf.len());
        crate::entry::read_exact_at(from, &mut buf[..n], offset)?;
        to.write_all(&buf[..n])?;
        offset += n as u64;
        left -= n as u64;
    }
    Ok(())
}

#[cfg(unix)]
fn write_at(file: &File, bytes: &[u8], offset: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.write_all_at(bytes, offset)
}

#[cfg(not(unix))]
fn write_at(mut file: &File, bytes: &[u8], offset: u64) -> std::io::Result<()> {
    use std::io::{Seek, SeekFrom};
    file.seek(SeekFrom::Start(offset))?;
    file.write_all(bytes)
}

impl Session {
    /// The file as the agent would write it in full (migrated, without malformed lines, omp with
    /// its title slot): what an explicit migrate writes.
    pub fn canonical_contents(&self) -> Result<String> {
        self.full_contents()
    }
}
