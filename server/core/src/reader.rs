//! Reading a session file: complete lines only, streamed, as leniently as the agents.
//!
//! The reader owns byte-level concerns: the omp title slot on the first physical line, blank lines,
//! unparsable lines (reported with their line number, never dropped from disk), CRLF endings, and a
//! last line without its newline (an agent mid-write), which is held back until it is complete.
//! It knows nothing of trees or dialect rules beyond the title slot.

use crate::diagnostics::{Diagnostic, DiagnosticKind};
use crate::entry::{Entry, LineError};
use crate::title_slot::TitleSlot;
use std::io::{BufRead, BufReader, Read};

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

/// Streams complete lines from `input`. `first_line` is the 1-based number of the first line read
/// (1 for a whole file); `detect_slot` tests that first line for an omp title slot.
pub fn read_lines<R: Read>(
    input: R,
    first_line: usize,
    detect_slot: bool,
) -> std::io::Result<ReadOutcome> {
    let mut reader = BufReader::with_capacity(1 << 20, input);
    let mut out = ReadOutcome::default();
    let mut buf = Vec::with_capacity(4096);
    let mut line_no = first_line;
    loop {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf)?;
        if n == 0 {
            break;
        }
        if buf.last() != Some(&b'\n') {
            out.pending = n as u64;
            break;
        }
        out.consumed += n as u64;
        out.lines += 1;
        buf.pop();
        let text = match std::str::from_utf8(&buf) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => {
                out.diagnostics.push(Diagnostic::new(
                    DiagnosticKind::InvalidUtf8,
                    Some(line_no),
                    "line is not valid UTF-8; invalid bytes read as U+FFFD",
                ));
                String::from_utf8_lossy(&buf)
            }
        };
        if detect_slot && line_no == first_line && out.title_slot.is_none() {
            if let Some(slot) = TitleSlot::parse(&text) {
                out.title_slot = Some(slot);
                line_no += 1;
                continue;
            }
        }
        push_line(&mut out, &text, line_no);
        line_no += 1;
    }
    Ok(out)
}

fn push_line(out: &mut ReadOutcome, text: &str, line_no: usize) {
    if text.trim().is_empty() {
        return;
    }
    match Entry::parse(text, line_no) {
        Ok(entry) => out.values.push(entry),
        Err(LineError::Null) => out.diagnostics.push(Diagnostic::new(
            DiagnosticKind::NullLine,
            Some(line_no),
            "line is the JSON value `null`; skipped (the agents fail to open such a file)",
        )),
        Err(LineError::Invalid(message)) => out.diagnostics.push(Diagnostic::new(
            DiagnosticKind::MalformedLine,
            Some(line_no),
            format!("line is not valid JSON ({message}); skipped, kept on disk"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_back_an_incomplete_last_line() {
        let data = b"{\"type\":\"session\",\"id\":\"s\"}\n\n  \nnot json\n[1]\n{\"type\":\"mess";
        let out = read_lines(&data[..], 1, false).unwrap();
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
        let out = read_lines(&data[..], 1, false).unwrap();
        assert_eq!(out.values.len(), 1);
        assert_eq!(&*out.values[0].raw, "{\"type\":\"session\",\"id\":\"s\"}");
        assert_eq!(out.diagnostics[0].kind, DiagnosticKind::NullLine);
    }
}
