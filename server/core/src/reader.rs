//! Reading a session file: complete lines only, as leniently as the agents.
//!
//! The reader owns byte-level concerns: the omp title slot on the first physical line, blank lines,
//! unparsable lines (reported with their line number, never dropped from disk), CRLF endings, and a
//! last line without its newline (an agent mid-write), which is held back until it is complete.
//! It knows nothing of trees or dialect rules beyond the title slot.
//!
//! A whole file is read with [`read_file_in_parts`]: in large chunks with positioned reads, on the
//! threads a call may use ([`crate::parallel`]) for files over a few megabytes (segments split at
//! newlines, taken in turn), keeping only each
//! line's place in the file, its index fields and its view facts. [`read_lines`] streams from
//! any reader (appended bytes, tests).

use crate::diagnostics::{Diagnostic, DiagnosticKind};
use crate::dialect::Dialect;
use crate::entry::{BodySource, Entry, FileSlice, LineError};
use crate::title_slot::TitleSlot;
use std::io::{BufRead, BufReader, Read};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, TryLockError};

/// Everything read from a file (or from bytes appended to it).
#[derive(Debug, Default)]
pub struct ReadOutcome {
    /// The omp title slot, when the first physical line is one.
    pub title_slot: Option<TitleSlot>,
    /// Every parsed value in file order (the header, when present, is the first).
    pub values: Vec<Entry>,
    /// Problems found on the way (malformed lines, `null` lines, undecodable bytes).
    pub diagnostics: Vec<Diagnostic>,
    /// Bytes consumed: everything up to and including the last newline.
    pub consumed: u64,
    /// Number of physical lines consumed.
    pub lines: usize,
    /// Bytes after the last newline, held back until their line is complete.
    pub pending: u64,
}

/// How to read lines.
#[derive(Clone, Default)]
pub struct ReadOptions {
    /// The 1-based number of the first line read (1 for a whole file).
    pub first_line: usize,
    /// Test the first line for an omp title slot.
    pub detect_slot: bool,
    /// Compute each entry's view facts for this dialect while the line is at hand.
    pub facts: Option<Dialect>,
    /// Keep bodies as ranges of this file; the first byte read is at `.1`. `None`: keep the text.
    pub source: Option<(Arc<BodySource>, u64)>,
}

/// Collects lines into a [`ReadOutcome`].
struct Sink<'a> {
    out: ReadOutcome,
    line_no: usize,
    first_line: usize,
    options: &'a ReadOptions,
}

impl<'a> Sink<'a> {
    fn new(options: &'a ReadOptions) -> Sink<'a> {
        let first_line = options.first_line.max(1);
        Sink {
            out: ReadOutcome::default(),
            line_no: first_line,
            first_line,
            options,
        }
    }

    /// One complete line (without its newline) that starts `offset` bytes into the read.
    fn line(&mut self, bytes: &[u8], offset: u64) {
        self.out.consumed += bytes.len() as u64 + 1;
        self.out.lines += 1;
        let line_no = self.line_no;
        self.line_no += 1;
        let (text, at) = match std::str::from_utf8(bytes) {
            Ok(text) => {
                let at = self
                    .options
                    .source
                    .as_ref()
                    .map(|(source, base)| FileSlice {
                        source: source.clone(),
                        offset: base + offset,
                    });
                (std::borrow::Cow::Borrowed(text), at)
            }
            Err(_) => {
                self.out.diagnostics.push(Diagnostic::new(
                    DiagnosticKind::InvalidUtf8,
                    Some(line_no),
                    "line is not valid UTF-8; invalid bytes read as U+FFFD",
                ));
                (String::from_utf8_lossy(bytes), None)
            }
        };
        if self.options.detect_slot && line_no == self.first_line && self.out.title_slot.is_none() {
            if let Some(slot) = TitleSlot::parse(&text) {
                self.out.title_slot = Some(slot);
                return;
            }
        }
        // The agents skip a line when `line.trim()` is empty.
        if crate::js::trim(&text).is_empty() {
            return;
        }
        match Entry::scan(&text, line_no, at, self.options.facts) {
            Ok(entry) => self.out.values.push(entry),
            Err(LineError::Null) => self.out.diagnostics.push(Diagnostic::new(
                DiagnosticKind::NullLine,
                Some(line_no),
                "line is the JSON value `null`; skipped (the agents fail to open such a file)",
            )),
            Err(LineError::Invalid(message)) => self.out.diagnostics.push(Diagnostic::new(
                DiagnosticKind::MalformedLine,
                Some(line_no),
                format!("line is not valid JSON ({message}); skipped, kept on disk"),
            )),
        }
    }
}

/// Streams complete lines from `input`.
pub fn read_lines<R: Read>(input: R, options: &ReadOptions) -> std::io::Result<ReadOutcome> {
    let mut reader = BufReader::with_capacity(1 << 20, input);
    let mut sink = Sink::new(options);
    let mut buf = Vec::with_capacity(4096);
    let mut offset = 0u64;
    loop {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf)?;
        if n == 0 {
            break;
        }
        if buf.last() != Some(&b'\n') {
            sink.out.pending = n as u64;
            break;
        }
        buf.pop();
        sink.line(&buf, offset);
        offset += n as u64;
    }
    Ok(sink.out)
}

/// Files smaller than this are read on one thread.
const PARALLEL_FROM: u64 = 4 << 20;
/// Segments a larger file is read in, by the threads taking them in turn.
const SEGMENTS: u64 = 16;
/// Bytes read at a time: small enough that a chunk is still in the core's cache when it is
/// parsed (4 MiB chunks were 5% slower to open).
const CHUNK: usize = 512 << 10;

/// [`read_file_in_parts`] gathered into one outcome (the tests' reference for a whole read).
#[cfg(test)]
pub(crate) fn read_file(
    source: &Arc<BodySource>,
    size: u64,
    facts: Option<Dialect>,
) -> std::io::Result<ReadOutcome> {
    let mut whole: Option<ReadOutcome> = None;
    read_file_in_parts(source, size, facts, |part| match &mut whole {
        None => whole = Some(part),
        Some(whole) => whole.append(part),
    })?;
    Ok(whole.unwrap_or_default())
}

impl ReadOutcome {
    /// Adds the outcome of the bytes that follow this one's (lines already numbered on).
    pub fn append(&mut self, part: ReadOutcome) {
        self.values.extend(part.values);
        self.diagnostics.extend(part.diagnostics);
        self.consumed += part.consumed;
        self.lines += part.lines;
        self.pending = part.pending;
    }
}

/// Reads the first `size` bytes of a whole session file (the rest, if it grows meanwhile, is for
/// the next follow), handing the file's parts to `take` as they are read, in file order, with
/// their lines numbered from the start of the file. The first part holds the title slot and the
/// header. Bodies stay in the file; `facts` as in [`ReadOptions`].
///
/// A large file is read on the threads a call may use, and `take` runs on whichever of them
/// finished the part that comes next, while the others read on: what the caller does with each part (indexing it)
/// overlaps the reading instead of following it. Calls never overlap.
pub fn read_file_in_parts<F: FnMut(ReadOutcome) + Send>(
    source: &Arc<BodySource>,
    size: u64,
    facts: Option<Dialect>,
    mut take: F,
) -> std::io::Result<()> {
    let options = |first_line: usize, detect_slot: bool, start: u64| ReadOptions {
        first_line,
        detect_slot,
        facts,
        source: Some((source.clone(), start)),
    };
    if size < PARALLEL_FROM {
        take(read_range(source, 0, size, size, &options(1, true, 0))?);
        return Ok(());
    }
    // Segments split at newlines, taken in turn by the threads a call may use: parts of a file
    // cost unequal time (fixed halves left one thread idle for tens of milliseconds).
    let mut bounds = vec![0u64];
    for k in 1..SEGMENTS {
        let at = newline_after(source, size * k / SEGMENTS, size)?;
        if at > *bounds.last().unwrap_or(&0) && at < size {
            bounds.push(at);
        }
    }
    bounds.push(size);
    let segments = bounds.len() - 1;
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let order = InOrder::new(segments, take);
    let work = || {
        while !stop.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(&[start, end]) = bounds.get(i..i + 2) else {
                return;
            };
            // The first segment's list takes every other segment's entries too.
            let plan_for = if i == 0 { size } else { end - start };
            let read = read_range(source, start, end, plan_for, &options(1, i == 0, start));
            if read.is_err() {
                stop.store(true, Ordering::Relaxed);
            }
            order.done(i, read);
            order.hand_over(false);
        }
    };
    if !crate::parallel::on_every_thread(work) {
        return Err(std::io::Error::other("the reading thread panicked"));
    }
    // A part finished while the other thread was handing parts over is still waiting.
    order.hand_over(true);
    order.finish()
}

/// The parts of a file read out of order, handed over in order.
struct InOrder<F> {
    parts: Mutex<Vec<Option<std::io::Result<ReadOutcome>>>>,
    taker: Mutex<Taker<F>>,
}

/// Who takes the parts, and how far it got.
struct Taker<F> {
    take: F,
    /// The next part to hand over.
    next: usize,
    /// Lines in the parts handed over.
    lines: usize,
    failed: Option<std::io::Error>,
}

impl<F: FnMut(ReadOutcome)> InOrder<F> {
    fn new(segments: usize, take: F) -> InOrder<F> {
        InOrder {
            parts: Mutex::new((0..segments).map(|_| None).collect()),
            taker: Mutex::new(Taker {
                take,
                next: 0,
                lines: 0,
                failed: None,
            }),
        }
    }

    fn done(&self, i: usize, read: std::io::Result<ReadOutcome>) {
        if let Some(slot) = lock(&self.parts).get_mut(i) {
            *slot = Some(read);
        }
    }

    /// Hands over the parts that are next and read. Without `wait`, only when no other thread is
    /// handing parts over (that thread takes this one too, or the last call does).
    fn hand_over(&self, wait: bool) {
        let mut taker = match self.taker.try_lock() {
            Ok(taker) => taker,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) if wait => lock(&self.taker),
            Err(TryLockError::WouldBlock) => return,
        };
        while taker.failed.is_none() {
            let next = taker.next;
            let Some(read) = lock(&self.parts).get_mut(next).and_then(Option::take) else {
                return;
            };
            taker.next += 1;
            match read {
                Ok(mut part) => {
                    // Each segment numbered its lines from 1.
                    let shift = taker.lines;
                    if shift > 0 {
                        part.values.iter_mut().for_each(|e| e.line += shift);
                        part.diagnostics
                            .iter_mut()
                            .for_each(|d| d.line = d.line.map(|l| l + shift));
                    }
                    taker.lines += part.lines;
                    (taker.take)(part);
                }
                Err(e) => taker.failed = Some(e),
            }
        }
    }

    fn finish(self) -> std::io::Result<()> {
        let segments = lock(&self.parts).len();
        let taker = self
            .taker
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match taker.failed {
            Some(e) => Err(e),
            None if taker.next < segments => Err(std::io::Error::other("a segment was not read")),
            None => Ok(()),
        }
    }
}

/// A lock that a panic elsewhere does not make unusable (the panic is reported by the join).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The offset just after the first newline at or after `from` (`size` when there is none).
fn newline_after(source: &BodySource, from: u64, size: u64) -> std::io::Result<u64> {
    let mut buf = vec![0u8; 64 << 10];
    let mut at = from;
    while at < size {
        let n = read_some(source, &mut buf, at, size)?;
        if n == 0 {
            break;
        }
        if let Some(i) = memchr::memchr(b'\n', &buf[..n]) {
            return Ok(at + i as u64 + 1);
        }
        at += n as u64;
    }
    Ok(size)
}

/// Reads up to `buf.len()` bytes at `at`, never past `end`; 0 at the end (or if the file shrank).
fn read_some(source: &BodySource, buf: &mut [u8], at: u64, end: u64) -> std::io::Result<usize> {
    let want = buf
        .len()
        .min(usize::try_from(end - at).unwrap_or(usize::MAX));
    if want == 0 {
        return Ok(0);
    }
    loop {
        match source.read_at(&mut buf[..want], at) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// Reads the lines of `start..end` in chunks. The entry list is sized, after the first chunk,
/// for the lines of `plan_for` bytes (growing it by doubling would copy it, and touch fresh
/// memory, several times over).
fn read_range(
    source: &BodySource,
    start: u64,
    end: u64,
    plan_for: u64,
    options: &ReadOptions,
) -> std::io::Result<ReadOutcome> {
    let mut sink = Sink::new(options);
    let mut planned = false;
    let mut buf = vec![
        0u8;
        CHUNK
            .min(usize::try_from(end - start).unwrap_or(CHUNK))
            .max(1)
    ];
    let mut filled = 0usize;
    // File offset of `buf[0]`, relative to `start`.
    let mut base = 0u64;
    let mut next = start;
    while next < end {
        if filled == buf.len() {
            // A line longer than the buffer.
            buf.resize(buf.len() * 2, 0);
        }
        let n = read_some(source, &mut buf[filled..], next, end)?;
        if n == 0 {
            break;
        }
        next += n as u64;
        let scan_from = filled;
        filled += n;
        let mut line_start = 0usize;
        let mut search = scan_from;
        while let Some(i) = memchr::memchr(b'\n', &buf[search..filled]) {
            let nl = search + i;
            sink.line(&buf[line_start..nl], base + line_start as u64);
            line_start = nl + 1;
            search = line_start;
        }
        buf.copy_within(line_start..filled, 0);
        filled -= line_start;
        base += line_start as u64;
        if !planned && base > 0 && next < end {
            planned = true;
            let seen = sink.out.values.len() as u64;
            // Capped (a start of tiny lines must not reserve for billions), and only a plan:
            // a failed reservation leaves the list to grow as usual.
            let expected = (seen.saturating_mul(plan_for) / base).min(plan_for / 256);
            let extra = usize::try_from(expected + expected / 16).unwrap_or(0);
            let _ = sink
                .out
                .values
                .try_reserve(extra.saturating_sub(sink.out.values.len()));
        }
    }
    sink.out.pending = filled as u64;
    Ok(sink.out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_back_an_incomplete_last_line() {
        let data = b"{\"type\":\"session\",\"id\":\"s\"}\n\n  \nnot json\n[1]\n{\"type\":\"mess";
        let out = read_lines(&data[..], &ReadOptions::default()).unwrap();
        assert_eq!(out.values.len(), 2);
        assert_eq!(out.values[1].line, 5);
        assert_eq!(out.diagnostics.len(), 1);
        assert_eq!(out.diagnostics[0].line, Some(4));
        assert_eq!(out.pending, 13);
        assert_eq!(out.consumed as usize, data.len() - 13);
        assert_eq!(out.lines, 5);
    }

    #[test]
    fn crlf_and_null_lines() {
        let data = b"{\"type\":\"session\",\"id\":\"s\"}\r\nnull\n";
        let out = read_lines(&data[..], &ReadOptions::default()).unwrap();
        assert_eq!(out.values.len(), 1);
        assert_eq!(out.values[0].raw(), "{\"type\":\"session\",\"id\":\"s\"}");
        assert_eq!(out.diagnostics[0].kind, DiagnosticKind::NullLine);
    }

    /// The two-thread chunked read gives what the streamed read gives: same entries, bodies, line
    /// numbers, diagnostics and counts, with lines longer than a chunk and a split inside a line.
    #[test]
    fn whole_file_reads_match_the_stream() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let mut data = String::from("{\"type\":\"session\",\"id\":\"s\"}\n");
        let long = "x".repeat(CHUNK + 1000);
        for i in 0..40_000 {
            match i % 997 {
                5 => data.push_str("not json\n"),
                6 => data.push('\n'),
                7 => data.push_str(&format!(
                    "{{\"type\":\"message\",\"id\":\"l{i}\",\"message\":{{\"role\":\"user\",\"content\":\"{long}\"}}}}\r\n"
                )),
                _ => data.push_str(&format!(
                    "{{\"type\":\"message\",\"id\":\"e{i}\",\"parentId\":null,\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"é{i}\"}}]}}}}\n"
                )),
            }
        }
        data.push_str("{\"type\":\"mes");
        std::fs::write(&path, &data).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let source = BodySource::new(file, &path);
        let whole = read_file(&source, data.len() as u64, Some(Dialect::Pi)).unwrap();
        let streamed = read_lines(data.as_bytes(), &ReadOptions::default()).unwrap();
        assert!(data.len() as u64 > PARALLEL_FROM);
        assert_eq!(whole.values.len(), streamed.values.len());
        for (a, b) in whole.values.iter().zip(&streamed.values) {
            assert_eq!(a, b);
        }
        assert_eq!(whole.diagnostics, streamed.diagnostics);
        assert_eq!(
            (whole.consumed, whole.lines, whole.pending),
            (streamed.consumed, streamed.lines, streamed.pending)
        );
        assert!(whole.values.iter().all(|e| e.file_range().is_some()));
    }
}
