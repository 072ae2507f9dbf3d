//! Cuts the client's byte stream into LSP frames (`Content-Length: N\r\n\r\n` + N bytes).
//!
//! Header lines are `Name: value` (names are HTTP tokens, matched without regard to case); the
//! only header read is `Content-Length` (`Content-Type` and any other header are skipped: the body
//! is checked as UTF-8 JSON whatever it says). A header that cannot be read (a line that is not
//! `Name: value`, no or a non-numeric `Content-Length`, two that differ, more than [`MAX_HEADER`]
//! bytes) is answered once with a parse error, and the bytes from the one after its first up to
//! the next `content-length` (any case) are skipped: a frame glued to junk is found again.

use crate::check::{check, Rejection};
use std::collections::VecDeque;

/// The longest header block read (a real one is about 25 bytes).
pub const MAX_HEADER: usize = 8 * 1024;
/// The largest message read. A larger one ends the stream: where it ends cannot be found
/// without reading it. (A 300 MB session opened in an editor is sent whole, escaped.)
pub const MAX_BODY: usize = 1 << 30;

/// The header name that starts every frame, lower case.
const CONTENT_LENGTH: &[u8] = b"content-length";

/// What the stream gave, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A message the LSP library decodes: its body (pass it on with [`frame`]).
    Message(Vec<u8>),
    /// A message, or a stretch of the stream, answered with an error instead.
    Rejected(Rejection),
    /// The stream cannot be followed further (why); nothing comes after this.
    End(String),
}

/// A frame around `body`, as the LSP library reads it.
pub fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// Frames from bytes pushed in any pieces; [`FrameReader::event`] gives what they made.
#[derive(Debug, Default)]
pub struct FrameReader {
    state: State,
    /// Bytes of a header (or of junk) not read yet.
    pending: Vec<u8>,
    events: VecDeque<Event>,
}

#[derive(Debug, Default)]
enum State {
    /// At the start of a header (`pending` starts there).
    #[default]
    Header,
    /// In a body of `len` bytes.
    Body {
        len: usize,
        body: Vec<u8>,
    },
    /// Skipping to the next `content-length`, searching `pending` from `from`.
    Junk {
        from: usize,
    },
    Ended,
}

/// A header block as far as it is read.
enum Header {
    /// More bytes are needed.
    Incomplete,
    /// Not a header: why, and where to look for the next one (past a `Content-Length` line that
    /// cannot be used; else one byte on, as junk may run into a frame's header).
    Bad(String, usize),
    /// A length over [`MAX_BODY`], as written.
    TooLarge(String),
    /// The block takes `len` bytes (its blank line included); the body `body` bytes.
    Complete { len: usize, body: usize },
}

impl FrameReader {
    pub fn new() -> FrameReader {
        FrameReader::default()
    }

    /// Reads `input`, the next bytes of the stream.
    pub fn push(&mut self, mut input: &[u8]) {
        while !input.is_empty() {
            match &mut self.state {
                State::Ended => return,
                State::Body { len, body } => {
                    let take = (*len - body.len()).min(input.len());
                    body.extend_from_slice(&input[..take]);
                    input = &input[take..];
                    if body.len() == *len {
                        let body = std::mem::take(body);
                        self.state = State::Header;
                        self.body(body);
                    }
                }
                State::Header | State::Junk { .. } => {
                    self.pending.extend_from_slice(input);
                    input = &[];
                    self.read_pending();
                }
            }
        }
    }

    /// The next event, in stream order.
    pub fn event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Whether the stream has ended ([`Event::End`] was made).
    pub fn ended(&self) -> bool {
        matches!(self.state, State::Ended)
    }

    /// At the end of the input: what was left unread, if anything (for the log).
    pub fn leftover(&self) -> Option<String> {
        match &self.state {
            State::Header if self.pending.is_empty() => None,
            State::Header => Some(format!(
                "the input ended inside a message header ({} bytes)",
                self.pending.len()
            )),
            State::Body { len, body } => Some(format!(
                "the input ended {} bytes before the end of a message of {len} bytes",
                len - body.len()
            )),
            State::Junk { .. } => {
                Some("the input ended in bytes that are not a message".to_owned())
            }
            State::Ended => None,
        }
    }

    /// Reads headers, junk and whole bodies out of `pending` as far as it goes.
    fn read_pending(&mut self) {
        loop {
            match self.state {
                State::Header => match header(&self.pending) {
                    Header::Incomplete => return,
                    Header::Bad(why, skip) => self.bad(why, skip),
                    Header::TooLarge(length) => {
                        let why = format!(
                            "a message of {length} bytes was announced (Content-Length), over the \
                             limit of {} MiB: the rest of the input cannot be read",
                            MAX_BODY >> 20
                        );
                        self.events
                            .push_back(Event::Rejected(Rejection::parse_error(why.clone())));
                        self.events.push_back(Event::End(why));
                        self.state = State::Ended;
                        self.pending = Vec::new();
                        return;
                    }
                    Header::Complete { len, body } => {
                        self.pending.drain(..len);
                        if self.pending.len() >= body {
                            let rest = self.pending.split_off(body);
                            let whole = std::mem::replace(&mut self.pending, rest);
                            self.body(whole);
                        } else {
                            // The body grows as it comes (a header alone does not make us
                            // reserve a gigabyte).
                            let mut whole = std::mem::take(&mut self.pending);
                            whole.reserve(body.saturating_sub(whole.len()));
                            self.state = State::Body {
                                len: body,
                                body: whole,
                            };
                            return;
                        }
                    }
                },
                State::Junk { from } => match find_content_length(&self.pending, from) {
                    Some(at) => {
                        self.pending.drain(..at);
                        self.state = State::Header;
                    }
                    None => {
                        // Keep what could be the start of the name.
                        let keep = CONTENT_LENGTH.len() - 1;
                        let cut = self.pending.len().saturating_sub(keep);
                        self.pending.drain(..cut);
                        self.state = State::Junk {
                            from: from.saturating_sub(cut),
                        };
                        return;
                    }
                },
                State::Body { .. } | State::Ended => return,
            }
        }
    }

    /// A whole body: a message, or its refusal.
    fn body(&mut self, body: Vec<u8>) {
        self.events.push_back(match check(&body) {
            Ok(()) => Event::Message(body),
            Err(rejection) => Event::Rejected(rejection),
        });
    }

    /// A header that cannot be read: answered, then skipped up to the next `content-length` at or
    /// after `skip`.
    fn bad(&mut self, why: String, skip: usize) {
        self.events
            .push_back(Event::Rejected(Rejection::parse_error(why)));
        self.state = State::Junk { from: skip };
    }
}

/// Where `content-length` (any case) starts in `bytes`, searching from `from`.
fn find_content_length(bytes: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    while let Some(found) = bytes
        .get(at..)
        .and_then(|rest| memchr::memchr2(b'c', b'C', rest))
    {
        let start = at + found;
        match bytes.get(start..start + CONTENT_LENGTH.len()) {
            Some(name) if name.eq_ignore_ascii_case(CONTENT_LENGTH) => return Some(start),
            // The name may be cut at the end: it is looked for again with the next bytes.
            None if CONTENT_LENGTH.starts_with(&bytes[start..].to_ascii_lowercase()) => {
                return None
            }
            _ => at = start + 1,
        }
    }
    None
}

/// Reads the header block at the start of `bytes`: only its first [`MAX_HEADER`] bytes, so that
/// the answer does not depend on how much has come after them.
fn header(all: &[u8]) -> Header {
    let bytes = &all[..all.len().min(MAX_HEADER)];
    let mut at = 0;
    let mut length: Option<usize> = None;
    loop {
        let rest = &bytes[at..];
        let Some(end) = memchr::memmem::find(rest, b"\r\n") else {
            // A line cut short: refused as soon as it cannot become a header line.
            return match line_problem(rest, false) {
                Some(why) => Header::Bad(why, 1),
                None if all.len() > MAX_HEADER => Header::Bad(
                    format!("a message header longer than {MAX_HEADER} bytes"),
                    1,
                ),
                None => Header::Incomplete,
            };
        };
        let line = &rest[..end];
        at += end + 2;
        if line.is_empty() {
            return match length {
                Some(body) => Header::Complete { len: at, body },
                // Looked for again from the next byte: junk may run into a frame's header
                // (`junkContent-Length: 5`).
                None if at == 2 => Header::Bad(
                    "a blank line where a message header should start".to_owned(),
                    1,
                ),
                None => Header::Bad("a message header without Content-Length".to_owned(), 1),
            };
        }
        if let Some(why) = line_problem(line, true) {
            return Header::Bad(why, 1);
        }
        let Some((name, value)) = split_line(line) else {
            return Header::Bad(format!("{} is not a message header line", shown(line)), 1);
        };
        if !name.eq_ignore_ascii_case(CONTENT_LENGTH) {
            continue;
        }
        let value = value.trim_ascii();
        if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
            return Header::Bad(
                format!(
                    "the Content-Length {} is not a number of bytes",
                    shown(value)
                ),
                at,
            );
        }
        let parsed = value.iter().try_fold(0usize, |n, d| {
            n.checked_mul(10)?
                .checked_add(usize::from(d - b'0'))
                .filter(|&n| n <= MAX_BODY)
        });
        let Some(parsed) = parsed else {
            return Header::TooLarge(String::from_utf8_lossy(value).into_owned());
        };
        match length {
            Some(earlier) if earlier != parsed => {
                return Header::Bad(
                    format!("two Content-Length headers that differ ({earlier} and {parsed})"),
                    at,
                )
            }
            _ => length = Some(parsed),
        }
    }
}

/// What makes `line` (whole, or the start of one) not a header line, if anything: a name that is
/// not an HTTP token, a carriage return or line feed inside, no colon. The message quotes the
/// line up to the byte that makes it wrong, so it does not depend on how much of it has come.
fn line_problem(line: &[u8], whole: bool) -> Option<String> {
    // A cut line may end in the carriage return of its end.
    let cut = match whole {
        true => line,
        false => line.strip_suffix(b"\r").unwrap_or(line),
    };
    let name_end = cut.iter().position(|&b| b == b':').unwrap_or(cut.len());
    let wrong = if name_end == 0 && !cut.is_empty() {
        Some(0)
    } else if let Some(at) = cut[..name_end].iter().position(|&b| !is_token(b)) {
        Some(at)
    } else if let Some(at) = cut
        .get(name_end + 1..)
        .and_then(|value| value.iter().position(|&b| b == b'\r' || b == b'\n'))
    {
        Some(name_end + 1 + at)
    } else if whole && name_end == cut.len() {
        Some(cut.len())
    } else {
        None
    };
    wrong.map(|at| {
        let upto = &line[..(at + 1).min(line.len())];
        format!("{} is not a message header line", shown(upto))
    })
}

/// A whole line's name and value.
fn split_line(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let colon = line.iter().position(|&b| b == b':')?;
    Some((&line[..colon], &line[colon + 1..]))
}

/// An HTTP token character (RFC 9110 `tchar`).
fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Bytes for a message: escaped, at most 40 of them.
fn shown(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(40)];
    let more = if bytes.len() > cut.len() { "…" } else { "" };
    format!("`{}{more}`", cut.escape_ascii())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Code;

    const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
    const NOTE: &str = r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#;

    /// Every event of `input`, pushed in pieces of `piece` bytes.
    fn events(input: &[u8], piece: usize) -> Vec<Event> {
        let mut reader = FrameReader::new();
        let mut out = Vec::new();
        for chunk in input.chunks(piece.max(1)) {
            reader.push(chunk);
            out.extend(std::iter::from_fn(|| reader.event()));
        }
        out
    }

    /// The events, the same whatever the pieces.
    fn read(input: &[u8]) -> Vec<Event> {
        let whole = events(input, input.len());
        for piece in [1, 2, 3, 7, 64] {
            assert_eq!(events(input, piece), whole, "in pieces of {piece}");
        }
        whole
    }

    fn message(body: &str) -> Event {
        Event::Message(body.as_bytes().to_vec())
    }

    fn rejected(code: Code, why: &str) -> Event {
        Event::Rejected(Rejection {
            code,
            message: why.to_owned(),
        })
    }

    fn cat(parts: &[&[u8]]) -> Vec<u8> {
        parts.concat()
    }

    #[test]
    fn frames_come_out_as_messages_whatever_their_headers() {
        let input = cat(&[
            &frame(INIT.as_bytes()),
            format!(
                "content-length:{}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\nX-Other: 1\r\n\r\n{NOTE}",
                NOTE.len()
            )
            .as_bytes(),
        ]);
        assert_eq!(read(&input), vec![message(INIT), message(NOTE)]);
    }

    #[test]
    fn a_bad_body_is_answered_and_the_next_frame_read() {
        let input = cat(&[
            &frame(b"[1,2]"),
            &frame(b"{\"jsonrpc\""),
            &frame(INIT.as_bytes()),
        ]);
        assert_eq!(
            read(&input),
            vec![
                rejected(Code::InvalidRequest, "a batch of 2 messages: LSP does not use JSON-RPC batches (send each message in a frame of its own)"),
                rejected(Code::ParseError, "the message is not JSON: EOF while parsing an object at line 1 column 10"),
                message(INIT),
            ]
        );
    }

    #[test]
    fn junk_is_answered_once_and_a_frame_glued_to_it_is_found() {
        let input = cat(&[
            b"{\"jsonrpc\":\"2.0\",\"method\":\"unframed\"}\n garbage \r\n\r\n",
            &frame(INIT.as_bytes()),
            b"\r\n",
            &frame(NOTE.as_bytes()),
        ]);
        assert_eq!(
            read(&input),
            vec![
                rejected(Code::ParseError, "`{` is not a message header line"),
                message(INIT),
                rejected(
                    Code::ParseError,
                    "a blank line where a message header should start"
                ),
                message(NOTE),
            ]
        );
    }

    #[test]
    fn headers_that_cannot_be_read_are_answered_and_skipped() {
        let cases: &[(&str, &str)] = &[
            (
                "Content-Length: abc\r\n\r\n",
                "the Content-Length `abc` is not a number of bytes",
            ),
            (
                "Content-Length: +5\r\n\r\n",
                "the Content-Length `+5` is not a number of bytes",
            ),
            (
                "Content-Type: x\r\n\r\n",
                "a message header without Content-Length",
            ),
            (
                "Content-Length: 5\r\nContent-Length: 6\r\n\r\n",
                "two Content-Length headers that differ (5 and 6)",
            ),
            (
                "Content Length: 5\r\n\r\n",
                "`Content ` is not a message header line",
            ),
            (": 5\r\n\r\n", "`:` is not a message header line"),
            (
                "Content-Length: 5\rX\r\n\r\n",
                "`Content-Length: 5\\r` is not a message header line",
            ),
            ("NoColon\r\n\r\n", "`NoColon` is not a message header line"),
        ];
        for (head, why) in cases {
            let input = cat(&[head.as_bytes(), b"{}", &frame(INIT.as_bytes())]);
            assert_eq!(
                read(&input),
                vec![rejected(Code::ParseError, why), message(INIT)],
                "{head:?}"
            );
        }
        let long = cat(&[
            b"X: ",
            &vec![b'a'; MAX_HEADER],
            b"\r\n\r\n",
            &frame(INIT.as_bytes()),
        ]);
        assert_eq!(
            read(&long),
            vec![
                rejected(Code::ParseError, "a message header longer than 8192 bytes"),
                message(INIT)
            ]
        );
    }

    #[test]
    fn a_length_over_the_limit_ends_the_stream() {
        for length in [
            (MAX_BODY + 1).to_string(),
            "99999999999999999999999999".to_owned(),
        ] {
            let input = cat(&[
                format!("Content-Length: {length}\r\n\r\n").as_bytes(),
                &frame(INIT.as_bytes()),
            ]);
            let why = format!(
                "a message of {length} bytes was announced (Content-Length), over the limit of 1024 MiB: the rest of the input cannot be read"
            );
            assert_eq!(
                read(&input),
                vec![rejected(Code::ParseError, &why), Event::End(why.clone())]
            );
        }
        let mut reader = FrameReader::new();
        reader.push(format!("Content-Length: {MAX_BODY}\r\n\r\n").as_bytes());
        assert!(!reader.ended());
        assert_eq!(
            reader.leftover().as_deref(),
            Some(
                "the input ended 1073741824 bytes before the end of a message of 1073741824 bytes"
            )
        );
    }

    #[test]
    fn what_is_left_at_the_end_is_described() {
        let mut reader = FrameReader::new();
        assert_eq!(reader.leftover(), None);
        reader.push(&frame(INIT.as_bytes()));
        assert_eq!(reader.leftover(), None);
        reader.push(b"Content-Len");
        assert_eq!(
            reader.leftover().as_deref(),
            Some("the input ended inside a message header (11 bytes)")
        );
    }

    #[test]
    fn a_name_cut_at_the_end_of_junk_is_found_with_the_next_bytes() {
        let body = frame(INIT.as_bytes());
        let input = cat(&[b"@@@@", &body]);
        // Cut inside "Content-Length" of the frame after the junk.
        for cut in 4..12 {
            let mut reader = FrameReader::new();
            reader.push(&input[..cut]);
            reader.push(&input[cut..]);
            let got: Vec<Event> = std::iter::from_fn(|| reader.event()).collect();
            assert_eq!(
                got,
                vec![
                    rejected(Code::ParseError, "`@` is not a message header line"),
                    message(INIT)
                ],
                "cut at {cut}"
            );
        }
    }
}
