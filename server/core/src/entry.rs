//! One session entry as the engine holds it: where its JSON text is (a byte range of the session
//! file, or the text itself for entries that exist only in memory) plus the few fields the index
//! needs (`type`, `id`, `parentId`, `timestamp`), read once when the line is scanned.
//!
//! Bodies of file entries stay on disk so that a 300 MB session costs tens of megabytes in memory;
//! [`Entry::raw`] reads one back on demand, from the file handle opened with the session (a file
//! renamed over ours later does not change what an open session reads). The view's facts of the
//! entry (row text, search text, filter facts) are computed in the same pass and kept.

use crate::dialect::Dialect;
use crate::facts::EntryFacts;
use crate::json::Field;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// What file-backed bodies are read from: the open session file, the bytes of a session read
/// whole (a small value of a store, a listing's read), or a store's value read by byte range on
/// demand ([`RangedBytes`], implemented by the session's store floor).
#[derive(Debug)]
pub struct BodySource {
    data: SourceData,
    path: PathBuf,
}

#[derive(Debug)]
enum SourceData {
    File(File),
    Bytes(Box<[u8]>),
    Store(Box<dyn RangedBytes>),
}

/// A value outside the file system read by byte range (a store's session: its bodies stay there).
pub(crate) trait RangedBytes: Send + Sync + std::fmt::Debug {
    /// Exactly `len` bytes at `offset` (an error when the value ends before).
    fn read(&self, offset: u64, len: usize) -> std::io::Result<Vec<u8>>;
    /// Up to `buf.len()` bytes at `at` (fewer where the value ends).
    fn read_at(&self, buf: &mut [u8], at: u64) -> std::io::Result<usize>;
}

impl BodySource {
    /// Wraps an open file.
    pub fn new(file: File, path: &Path) -> Arc<BodySource> {
        Arc::new(BodySource {
            data: SourceData::File(file),
            path: path.to_path_buf(),
        })
    }

    /// Wraps the bytes of a session read from a store; `path` names it in messages.
    pub fn from_bytes(bytes: Vec<u8>, path: &Path) -> Arc<BodySource> {
        Arc::new(BodySource {
            data: SourceData::Bytes(bytes.into_boxed_slice()),
            path: path.to_path_buf(),
        })
    }

    /// Reads a store's value by byte range (`path` names it in messages).
    pub(crate) fn from_store(bodies: Box<dyn RangedBytes>, path: &Path) -> Arc<BodySource> {
        Arc::new(BodySource {
            data: SourceData::Store(bodies),
            path: path.to_path_buf(),
        })
    }

    /// The file's path (for messages).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The open file, when the bodies are in one.
    pub fn file(&self) -> Option<&File> {
        match &self.data {
            SourceData::File(file) => Some(file),
            SourceData::Bytes(_) | SourceData::Store(_) => None,
        }
    }

    /// Reads `len` bytes at `offset`.
    pub fn read(&self, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
        match &self.data {
            SourceData::File(file) => read_vec_at(file, len, offset),
            SourceData::Bytes(bytes) => Ok(byte_range(bytes, offset, len)?.to_vec()),
            SourceData::Store(bodies) => bodies.read(offset, len),
        }
    }

    /// Reads up to `buf.len()` bytes at `at` (fewer at the end; 0 past it).
    pub(crate) fn read_at(&self, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
        match &self.data {
            SourceData::File(file) => read_file_at(file, buf, at),
            SourceData::Bytes(bytes) => {
                let start = usize::try_from(at).unwrap_or(usize::MAX).min(bytes.len());
                let n = buf.len().min(bytes.len() - start);
                buf[..n].copy_from_slice(&bytes[start..start + n]);
                Ok(n)
            }
            SourceData::Store(bodies) => bodies.read_at(buf, at),
        }
    }
}

/// `len` bytes at `offset` of `bytes`; past the end is the error a short file read gives.
fn byte_range(bytes: &[u8], offset: u64, len: usize) -> std::io::Result<&[u8]> {
    usize::try_from(offset)
        .ok()
        .and_then(|start| bytes.get(start..start.checked_add(len)?))
        .ok_or_else(|| std::io::ErrorKind::UnexpectedEof.into())
}

#[cfg(unix)]
fn read_file_at(file: &File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, at)
}

#[cfg(not(unix))]
fn read_file_at(file: &File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    read_exact_at(file, buf, at).map(|()| buf.len())
}

/// Reads exactly `len` bytes at `offset` into a new buffer, straight into its spare capacity: a
/// zero-filled buffer cost a tenth of a context's time, writing every byte once more.
#[cfg(unix)]
pub(crate) fn read_vec_at(file: &File, len: usize, offset: u64) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(len);
    while buf.len() < len {
        let at = offset.saturating_add(buf.len() as u64);
        // Reads into the uninitialized tail and sets the length to what was read.
        match rustix::io::pread(file, rustix::buffer::spare_capacity(&mut buf), at) {
            Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    // The capacity may exceed `len`; what was read beyond it is dropped.
    buf.truncate(len);
    Ok(buf)
}

#[cfg(not(unix))]
pub(crate) fn read_vec_at(file: &File, len: usize, offset: u64) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; len];
    read_exact_at(file, &mut buf, offset)?;
    Ok(buf)
}

#[cfg(unix)]
pub(crate) fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(not(unix))]
pub(crate) fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = file.try_clone()?;
    f.seek(SeekFrom::Start(offset))?;
    f.read_exact(buf)
}

/// Where an entry's JSON text lives.
#[derive(Clone)]
pub(crate) enum Body {
    /// Held in memory (entries we wrote, migrated entries, lines with undecodable bytes).
    Inline(Box<str>),
    /// A byte range of the session file (without the newline and any trailing `\r`).
    File {
        source: Arc<BodySource>,
        offset: u64,
        len: u32,
    },
}

impl std::fmt::Debug for Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Body::Inline(text) => write!(f, "Inline({} bytes)", text.len()),
            Body::File { offset, len, .. } => write!(f, "File({offset}+{len})"),
        }
    }
}

/// One parsed line of a session file (everything except the header and the omp title slot).
#[derive(Debug, Clone)]
pub struct Entry {
    pub(crate) body: Body,
    /// 1-based physical line number in the file; 0 when the entry has not been written yet.
    pub line: usize,
    /// `type`, when the value is an object with a string `type`.
    pub kind: Option<Cow<'static, str>>,
    /// `id`, when it is a string (shared with the session's id map).
    pub id: Option<Arc<str>>,
    /// `parentId` as written: `Parent::Null`, a string, or absent / not a string.
    pub parent: Parent,
    /// `timestamp`, when it is a string.
    pub timestamp: Option<Box<str>>,
    /// `timestamp` read as `Date.parse` reads it (NaN when it is not a date), once.
    pub(crate) time_ms: f64,
    /// Whether the line's JSON value is an object (non-object lines become id-less entries, as in the agents).
    pub is_object: bool,
    /// An assistant message whose `usage` has no `cost` (omp fails to open such a file).
    pub(crate) usage_without_cost: bool,
    /// `message.role`, for messages.
    pub(crate) role: Option<Cow<'static, str>>,
    /// The view's facts and their filter flags, made for one dialect in the scan; the session
    /// moves them into its view columns.
    pub(crate) facts: OnceLock<crate::facts::Scanned>,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Entry) -> bool {
        self.line == other.line
            && self.kind == other.kind
            && self.id == other.id
            && self.parent == other.parent
            && self.timestamp == other.timestamp
            && self.is_object == other.is_object
            && self.raw() == other.raw()
    }
}

/// The `parentId` field of an entry.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Parent {
    /// `"parentId": null` — a root.
    Null,
    /// `"parentId": "<id>"`.
    Id(Box<str>),
    /// No `parentId`, or one that is not a string or null (the agents treat it as an unknown parent).
    Missing,
}

impl Parent {
    /// The parent id when it is a string.
    pub fn id(&self) -> Option<&str> {
        match self {
            Parent::Id(id) => Some(id),
            _ => None,
        }
    }
}

/// Why a line could not become an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineError {
    /// Not JSON at all.
    Invalid(String),
    /// The JSON value `null` (the agents crash on it).
    Null,
}

/// Where a scanned line's text is on disk.
pub(crate) struct FileSlice {
    pub source: Arc<BodySource>,
    pub offset: u64,
}

impl Entry {
    /// Parses one line (without its newline), keeping its text in memory. Non-object JSON values
    /// become id-less entries.
    pub fn parse(raw: &str, line: usize) -> Result<Entry, LineError> {
        Entry::scan(raw, line, None, None)
    }

    /// Parses one line read from a file: the body is the file range when `at` is given, the text
    /// otherwise; the view's facts are computed for `facts_for` while the line is at hand.
    pub(crate) fn scan(
        raw: &str,
        line: usize,
        at: Option<FileSlice>,
        facts_for: Option<Dialect>,
    ) -> Result<Entry, LineError> {
        let text = raw.trim_end_matches('\r');
        let body = |at: Option<FileSlice>| match at {
            Some(FileSlice { source, offset }) if u32::try_from(text.len()).is_ok() => Body::File {
                source,
                offset,
                len: text.len() as u32,
            },
            _ => Body::Inline(text.into()),
        };
        // The common message line, as agents write it, is read straight into its fields.
        if text.starts_with(r#"{"type":"message","#) {
            if let Some(fast) = crate::message_line::scan(text, facts_for) {
                let entry = Entry::from_fast(&fast, body(at), line);
                if let (Some(dialect), Some(facts)) = (facts_for, fast.facts) {
                    entry.keep_facts(facts, dialect);
                }
                return Ok(entry);
            }
        }
        let value = match crate::entry_value::parse_projected(text) {
            Ok(Value::Null) => return Err(LineError::Null),
            Ok(value) => value,
            Err(err) => return Err(LineError::Invalid(err.to_string())),
        };
        let entry = Entry::from_value_at(&value, body(at), line);
        if let Some(dialect) = facts_for {
            entry.keep_facts(crate::facts::entry_facts(&value, dialect), dialect);
        }
        Ok(entry)
    }

    /// Builds an entry from a JSON value that is about to be written (or was migrated in memory).
    pub fn from_value(value: &Value) -> Entry {
        let raw = crate::json::to_line(value);
        Entry::from_value_at(value, Body::Inline(raw.into_boxed_str()), 0)
    }

    /// An entry from a line read by [`crate::message_line`].
    fn from_fast(fast: &crate::message_line::MessageLine<'_>, body: Body, line: usize) -> Entry {
        let timestamp: Option<Box<str>> = fast.timestamp.map(Into::into);
        Entry {
            body,
            line,
            kind: Some(Cow::Borrowed("message")),
            id: fast.id.map(Arc::from),
            parent: match fast.parent {
                None => Parent::Missing,
                Some(None) => Parent::Null,
                Some(Some(p)) => Parent::Id(p.into()),
            },
            time_ms: timestamp
                .as_deref()
                .and_then(crate::time::parse_iso_ms)
                .unwrap_or(f64::NAN),
            timestamp,
            is_object: true,
            usage_without_cost: fast.usage_without_cost,
            role: Some(crate::type_names::name(fast.role)),
            facts: OnceLock::new(),
        }
    }

    fn from_value_at(value: &Value, body: Body, line: usize) -> Entry {
        let obj = value.as_object();
        let str_field = |key: &str| -> Option<Box<str>> {
            obj.and_then(|o| o.field(key))
                .and_then(Value::as_str)
                .map(Into::into)
        };
        let parent = match obj.and_then(|o| o.field("parentId")) {
            Some(Value::Null) => Parent::Null,
            Some(Value::String(s)) => Parent::Id(s.as_str().into()),
            _ => Parent::Missing,
        };
        let kind = obj
            .and_then(|o| o.field("type"))
            .and_then(Value::as_str)
            .map(crate::type_names::name);
        let message = obj
            .filter(|_| kind.as_deref() == Some("message"))
            .and_then(|o| o.field("message"));
        let role = message
            .and_then(|m| m.field("role"))
            .and_then(Value::as_str)
            .map(crate::type_names::name);
        let usage_without_cost = role.as_deref() == Some("assistant")
            && message
                .and_then(|m| m.field("usage"))
                .is_some_and(|usage| usage.is_object() && usage.field("cost").is_none());
        let timestamp = str_field("timestamp");
        let time_ms = timestamp
            .as_deref()
            .and_then(crate::time::parse_iso_ms)
            .unwrap_or(f64::NAN);
        Entry {
            body,
            line,
            kind,
            id: obj
                .and_then(|o| o.field("id"))
                .and_then(Value::as_str)
                .map(Arc::from),
            parent,
            timestamp,
            time_ms,
            is_object: obj.is_some(),
            usage_without_cost,
            role,
            facts: OnceLock::new(),
        }
    }

    /// The entry's JSON text, exactly as on disk (or as migrated in memory), without the newline.
    /// A body that can no longer be read (the file was truncated under us) reads as `""`; use
    /// [`Entry::try_raw`] where that must be an error.
    pub fn raw(&self) -> Cow<'_, str> {
        self.try_raw().unwrap_or(Cow::Borrowed(""))
    }

    /// [`Entry::raw`], with read failures reported.
    pub fn try_raw(&self) -> std::io::Result<Cow<'_, str>> {
        match &self.body {
            Body::Inline(text) => Ok(Cow::Borrowed(text)),
            Body::File {
                source,
                offset,
                len,
            } => {
                let bytes = source.read(*offset, *len as usize)?;
                Ok(Cow::Owned(match String::from_utf8(bytes) {
                    Ok(text) => text,
                    Err(err) => String::from_utf8_lossy(err.as_bytes()).into_owned(),
                }))
            }
        }
    }

    /// Where the body is in the file (`offset`, `len`), for file-backed entries.
    pub(crate) fn file_range(&self) -> Option<(&Arc<BodySource>, u64, u32)> {
        match &self.body {
            Body::File {
                source,
                offset,
                len,
            } => Some((source, *offset, *len)),
            Body::Inline(_) => None,
        }
    }

    /// The whole entry as JSON (parsed on demand).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.raw()).unwrap_or(Value::Null)
    }

    /// The whole entry as a JSON object, or an empty object for non-object lines.
    pub fn object(&self) -> Map<String, Value> {
        match self.json() {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    /// The entry's `type`, or `""`.
    pub fn kind(&self) -> &str {
        self.kind.as_deref().unwrap_or("")
    }

    /// The entry's id, or `None` for id-less entries.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// `message.role` for `message` entries.
    pub fn role(&self) -> Option<&str> {
        self.role.as_deref()
    }

    /// Keeps the view's facts made in the scan, with their filter flags.
    fn keep_facts(&self, facts: EntryFacts, dialect: Dialect) {
        let scanned = crate::facts::Scanned::new(facts, self.kind.is_none(), dialect);
        let _ = self.facts.set(scanned);
    }

    /// The timestamp as epoch milliseconds, as JavaScript's `Date.parse` would read it (`None` = NaN).
    pub fn timestamp_ms(&self) -> Option<f64> {
        (!self.time_ms.is_nan()).then_some(self.time_ms)
    }
}

/// Calls `f(k, body)` with the bytes of each entry's JSON text, in order. Bodies that sit close
/// together in the same file (ascending, at most 64 KiB apart, runs of up to 8 MiB) are read in one
/// read, so a pass over a whole session or a long path costs a few reads, not one per entry. A
/// failed read is handed to `f` for every entry of its run; `f` returning an error stops the pass.
pub(crate) fn for_each_body<T, E>(
    entries: &[T],
    mut f: impl FnMut(usize, std::io::Result<&[u8]>) -> Result<(), E>,
) -> Result<(), E>
where
    T: std::borrow::Borrow<Entry>,
{
    for_each_run(entries, |run| match run {
        Run::Inline(k, text) => f(k, Ok(text.as_bytes())),
        Run::File(run, Ok(block)) => {
            for (k, at) in run.spans(entries) {
                f(k, Ok(at.and_then(|at| block.get(at)).unwrap_or_default()))?;
            }
            Ok(())
        }
        Run::File(run, Err(err)) => {
            for k in run.entries.clone() {
                let message = format!("{}: {err}", run.source.path().display());
                f(k, Err(std::io::Error::new(err.kind(), message)))?;
            }
            Ok(())
        }
    })
}

/// What [`for_each_run`] hands over: an entry held in memory (its index and text), or a run of
/// neighbouring file bodies with the bytes read for them.
pub(crate) enum Run<'a> {
    Inline(usize, &'a str),
    File(FileRun<'a>, std::io::Result<Vec<u8>>),
}

/// Entries whose bodies were read together, from `start` in `source`.
pub(crate) struct FileRun<'a> {
    pub(crate) entries: std::ops::Range<usize>,
    pub(crate) source: &'a Arc<BodySource>,
    start: u64,
}

impl FileRun<'_> {
    /// Each entry of the run with where its body lies in the block read for the run.
    pub(crate) fn spans<'e, T: std::borrow::Borrow<Entry>>(
        &self,
        entries: &'e [T],
    ) -> impl Iterator<Item = (usize, Option<std::ops::Range<usize>>)> + 'e {
        let start = self.start;
        self.entries.clone().map(move |k| {
            let at = entries.get(k).and_then(|e| {
                let (_, offset, len) = e.borrow().file_range()?;
                let at = usize::try_from(offset.checked_sub(start)?).ok()?;
                Some(at..at.checked_add(len as usize)?)
            });
            (k, at)
        })
    }
}

/// The reads behind [`for_each_body`]: one [`Run`] per read (or per entry held in memory), in
/// order; `f` returning an error stops the pass.
pub(crate) fn for_each_run<T, E>(
    entries: &[T],
    mut f: impl FnMut(Run<'_>) -> Result<(), E>,
) -> Result<(), E>
where
    T: std::borrow::Borrow<Entry>,
{
    const GAP: u64 = 64 << 10;
    const SPAN: u64 = 8 << 20;
    let range = |k: usize| entries.get(k).and_then(|e| e.borrow().file_range());
    let mut i = 0;
    while i < entries.len() {
        let Some((source, start, len)) = range(i) else {
            if let Body::Inline(text) = &entries[i].borrow().body {
                f(Run::Inline(i, text))?;
            }
            i += 1;
            continue;
        };
        let mut end = start + u64::from(len);
        let mut j = i + 1;
        while let Some((next, offset, len)) = range(j) {
            let next_end = offset + u64::from(len);
            if !Arc::ptr_eq(next, source)
                || offset < end
                || offset - end > GAP
                || next_end - start > SPAN
            {
                break;
            }
            end = next_end;
            j += 1;
        }
        let block = source.read(start, usize::try_from(end - start).unwrap_or(usize::MAX));
        let run = FileRun {
            entries: i..j,
            source,
            start,
        };
        f(Run::File(run, block))?;
        i = j;
    }
    Ok(())
}

/// The JSON of several entries, as [`Entry::json`] gives each (`null` for a body that cannot be
/// read or parsed), reading neighbouring bodies together ([`for_each_body`]). Bodies are parsed
/// from their bytes (serde checks the UTF-8 of the strings it reads); only a body that is not
/// UTF-8 is decoded lossily first, as [`Entry::raw`] decodes it.
pub(crate) fn json_of_all(entries: &[&Entry]) -> Vec<Value> {
    let mut out = Vec::with_capacity(entries.len());
    let _ = for_each_body(entries, |_, body| {
        let value = body
            .ok()
            .and_then(|bytes| match serde_json::from_slice(bytes) {
                Ok(value) => Some(value),
                Err(_) if std::str::from_utf8(bytes).is_ok() => None,
                Err(_) => serde_json::from_str(&String::from_utf8_lossy(bytes)).ok(),
            });
        out.push(value.unwrap_or(Value::Null));
        Ok::<(), ()>(())
    });
    out
}

/// Checks that a message line the fast path (`message_line`) reads gives the entry and facts the projection gives (for both
/// dialects' facts); lines it leaves alone pass. For the fuzz targets and the tests.
#[doc(hidden)]
pub fn check_against_projection(line: &str) -> Result<(), String> {
    let describe = |entry: &Entry, facts: &crate::facts::EntryFacts| {
        format!(
            "{:?} {:?} {:?} {:?} {:?} {} {} {:?} | {facts:?}",
            entry.kind,
            entry.id,
            entry.parent,
            entry.timestamp,
            entry.role(),
            entry.is_object,
            entry.usage_without_cost,
            entry.time_ms.to_bits(),
        )
    };
    let line = line.trim_end_matches('\r');
    if !line.starts_with(r#"{"type":"message","#) {
        return Ok(());
    }
    for dialect in [Dialect::Pi, Dialect::Omp] {
        if crate::message_line::scan(line, Some(dialect)).is_none() {
            continue;
        }
        let fast = Entry::scan(line, 0, None, Some(dialect)).map_err(|e| format!("{e:?}"))?;
        let fast_facts = fast
            .facts
            .get()
            .map(|s| s.facts.clone())
            .ok_or("no facts")?;
        let value = crate::entry_value::parse_projected(line).map_err(|e| e.to_string())?;
        let slow = Entry::from_value(&value);
        let slow_facts = crate::facts::entry_facts(&value, dialect);
        let (fast, slow) = (describe(&fast, &fast_facts), describe(&slow, &slow_facts));
        if fast != slow {
            return Err(format!("{dialect:?}: typed read {fast}\nprojection {slow}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_exactly_the_bytes_asked_for_or_fails_at_the_end_of_the_file() {
        let mut file = tempfile::tempfile().expect("temp file");
        std::io::Write::write_all(&mut file, b"0123456789").expect("write");
        assert_eq!(read_vec_at(&file, 4, 3).expect("read"), b"3456");
        assert_eq!(read_vec_at(&file, 0, 10).expect("read"), b"");
        assert_eq!(read_vec_at(&file, 10, 0).expect("read"), b"0123456789");
        let past = read_vec_at(&file, 4, 8).expect_err("past the end");
        assert_eq!(past.kind(), std::io::ErrorKind::UnexpectedEof);
    }

    #[test]
    fn scans_the_index_fields() {
        let e = Entry::parse(
            r#"{"type":"message","id":"abc","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user"}}"#,
            3,
        )
        .unwrap();
        assert_eq!(e.kind(), "message");
        assert_eq!(e.id(), Some("abc"));
        assert_eq!(e.parent, Parent::Null);
        assert_eq!(e.line, 3);
        assert_eq!(e.role(), Some("user"));
    }

    #[test]
    fn non_objects_become_idless_entries_and_null_is_an_error() {
        let e = Entry::parse("[1,2,3]", 1).unwrap();
        assert!(!e.is_object);
        assert_eq!(e.id(), None);
        assert_eq!(Entry::parse("null", 1), Err(LineError::Null));
        assert!(matches!(
            Entry::parse("not json", 1),
            Err(LineError::Invalid(_))
        ));
    }

    #[test]
    fn odd_field_types_are_not_strings() {
        let e = Entry::parse(r#"{"type":1,"id":5,"parentId":7}"#, 1).unwrap();
        assert_eq!(e.kind, None);
        assert_eq!(e.id, None);
        assert_eq!(e.parent, Parent::Missing);
    }

    #[test]
    fn duplicate_keys_keep_the_last_value() {
        let e = Entry::parse(r#"{"type":"message","id":"a","id":"b","parentId":null}"#, 1).unwrap();
        assert_eq!(e.id(), Some("b"));
    }

    #[test]
    fn finds_usage_without_cost() {
        let cases = [
            (
                r#"{"type":"message","message":{"role":"assistant","usage":{"input":1}}}"#,
                true,
            ),
            (
                r#"{"type":"message","message":{"role":"assistant","usage":{"input":1,"cost":{"total":0}}}}"#,
                false,
            ),
            (
                r#"{"type":"message","message":{"role":"assistant","usage":{"cost":null}}}"#,
                false,
            ),
            (
                r#"{"type":"message","message":{"role":"assistant","usage":null}}"#,
                false,
            ),
            (
                r#"{"type":"message","message":{"role":"assistant","usage":5}}"#,
                false,
            ),
            (
                r#"{"type":"message","message":{"role":"user","usage":{}}}"#,
                false,
            ),
            (
                r#"{"type":"message","message":{"role":"assistant","usage":{},"usage":{"cost":1}}}"#,
                false,
            ),
            (r#"{"type":"message","message":"text \"usage\""}"#, false),
        ];
        for (raw, want) in cases {
            assert_eq!(
                Entry::parse(raw, 1).unwrap().usage_without_cost,
                want,
                "{raw}"
            );
        }
    }
}
