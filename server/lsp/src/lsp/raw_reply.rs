//! Answers written as JSON text we already have, instead of as a `serde_json::Value`.
//!
//! `tower-lsp-server` turns every result into a `Value` (`serde_json::to_value`, which parses
//! even a `RawValue` again) and then into text. For `sessionTree/context` — megabytes of messages
//! that are JSON text already — that was most of the answer's time. So the handler writes the
//! result's text itself, leaves it here ([`RawReplies::stash`]) and answers with a short
//! placeholder string; [`Splice`], the server's output stream, finds a response whose result is
//! such a placeholder and writes the stashed text in its place (with the frame's new length).
//! The bytes on the wire are those the `Value` would have given (tests compare them).
//!
//! A placeholder names a random per-process key, so no other response can be taken for one.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{ready, Context, Poll};
use tokio::io::AsyncWrite;

use crate::checked_input::Answers;

/// How a response frame with a placeholder result starts (`Response` serializes its fields in
/// this order, and the placeholder needs no escaping).
const RESPONSE_START: &[u8] = b"{\"jsonrpc\":\"2.0\",\"result\":\"";
/// Stashed texts never taken (a response dropped on the way, e.g. a request cancelled after its
/// answer was made) are dropped once this old. Any number may wait: under load many answers are
/// made before the output writes the first (a bound by count lost live answers).
const MAX_AGE: std::time::Duration = std::time::Duration::from_secs(600);

/// What a handler whose result can be spliced answers: the result as a value, or the placeholder
/// of its stashed text.
pub(crate) enum Reply<T> {
    Value(T),
    Placeholder(String),
}

impl<T: serde::Serialize> Reply<T> {
    /// The placeholder of `result` written as JSON text when `replies` can take it (the same
    /// bytes the value gives), else the value.
    pub(crate) fn of(result: T, replies: Option<&RawReplies>) -> Reply<T> {
        match replies.map(|r| (r, serde_json::to_vec(&result))) {
            Some((replies, Ok(json))) => Reply::Placeholder(replies.stash(json)),
            _ => Reply::Value(result),
        }
    }
}

impl<T: serde::Serialize> serde::Serialize for Reply<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Reply::Value(result) => result.serialize(s),
            Reply::Placeholder(key) => key.serialize(s),
        }
    }
}

/// Result texts waiting for [`Splice`] to write them.
pub(crate) struct RawReplies {
    /// `sessiontree.raw.<random>.`: what every placeholder starts with.
    mark: String,
    next: AtomicU64,
    stashed: Mutex<HashMap<u64, (std::time::Instant, Vec<u8>)>>,
}

impl RawReplies {
    pub(crate) fn new() -> Arc<RawReplies> {
        Arc::new(RawReplies {
            mark: format!("sessiontree.raw.{:016x}{:016x}.", random(), random()),
            next: AtomicU64::new(0),
            stashed: Mutex::new(HashMap::new()),
        })
    }

    /// Keeps `json` (a whole result as JSON text) for the response; returns the placeholder to
    /// answer with.
    pub(crate) fn stash(&self, json: Vec<u8>) -> String {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut stashed) = self.stashed.lock() {
            let now = std::time::Instant::now();
            stashed.retain(|_, (at, _)| now.duration_since(*at) < MAX_AGE);
            stashed.insert(n, (now, json));
        }
        format!("{}{n}", self.mark)
    }

    /// The stashed text a response body stands for, when it is a placeholder response:
    /// the body's parts before and after the result, and the text (taken out of the stash).
    fn take<'a>(&self, body: &'a [u8]) -> Option<(&'a [u8], Vec<u8>, &'a [u8])> {
        let rest = body.strip_prefix(RESPONSE_START)?;
        let rest = rest.strip_prefix(self.mark.as_bytes())?;
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        let after = rest[digits..].strip_prefix(b"\"")?;
        let n: u64 = std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()?;
        let (_, json) = self.stashed.lock().ok()?.remove(&n)?;
        let before = &RESPONSE_START[..RESPONSE_START.len() - 1];
        Some((before, json, after))
    }
}

/// Shows how many texts wait, not the key.
impl std::fmt::Debug for RawReplies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let waiting = self.stashed.lock().map_or(0, |s| s.len());
        f.debug_struct("RawReplies")
            .field("waiting", &waiting)
            .finish()
    }
}

/// 64 bits that differ from process to process (std seeds each `RandomState` randomly).
fn random() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.finish()
}

/// Where [`Splice`] writes: an [`AsyncWrite`] that may also take a whole buffer, so that a
/// megabyte answer is handed over instead of copied.
pub(crate) trait Output: AsyncWrite {
    /// Takes `buf` whole if it can now; gives it back otherwise (it is then written).
    fn take_whole(self: Pin<&mut Self>, buf: Vec<u8>) -> Result<(), Vec<u8>> {
        Err(buf)
    }
}

/// Any [`AsyncWrite`] as an [`Output`] that takes nothing whole.
pub(crate) struct Writes<W>(Pin<Box<W>>);

impl<W> Writes<W> {
    pub(crate) fn new(inner: W) -> Writes<W> {
        Writes(Box::pin(inner))
    }
}

impl<W: AsyncWrite> Output for Writes<W> {}

impl<W: AsyncWrite> AsyncWrite for Writes<W> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().0.as_mut().poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().0.as_mut().poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().0.as_mut().poll_shutdown(cx)
    }
}

/// The server's output: frames (`Content-Length: N\r\n\r\n` + body) pass through unchanged,
/// except a placeholder response, which goes out with its stashed result. The input's error
/// answers ([`Answers`]) go out between two whole frames.
pub(crate) struct Splice<W> {
    /// Unpin: any `AsyncWrite` is boxed once, by [`Writes`].
    inner: W,
    replies: Arc<RawReplies>,
    answers: Arc<Answers>,
    /// Bytes received that do not yet make a whole frame.
    partial: Vec<u8>,
    /// Bytes ready to go out, in order, and how much of the first is written.
    queue: VecDeque<Vec<u8>>,
    written: usize,
    /// Set if the output stops looking like frames: everything then passes through as it is.
    raw: bool,
}

/// Headers longer than this are not ours: the stream is passed through from there on.
const MAX_HEADER: usize = 1024;
/// Accepting more output waits while this much is queued.
const MAX_QUEUED: usize = 1 << 20;

impl<W: Output + Unpin> Splice<W> {
    pub(crate) fn new(inner: W, replies: Arc<RawReplies>, answers: Arc<Answers>) -> Splice<W> {
        Splice {
            inner,
            replies,
            answers,
            partial: Vec::new(),
            queue: VecDeque::new(),
            written: 0,
            raw: false,
        }
    }

    fn queued(&self) -> usize {
        self.queue.iter().map(Vec::len).sum::<usize>() - self.written
    }

    /// Writes queued bytes until none are left or the output is not ready. The input's answers
    /// are queued first: the queue holds only whole frames (the library's frame being written
    /// waits in `partial` until it is whole), so they never land inside another message. The
    /// library flushes its output whenever it has nothing to write, so an answer queued
    /// meanwhile wakes it here.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.queue.extend(self.answers.take(cx));
        while let Some(front) = self.queue.pop_front() {
            let front = match self.written {
                0 => match Pin::new(&mut self.inner).take_whole(front) {
                    Ok(()) => continue,
                    Err(front) => front,
                },
                _ => front,
            };
            let written = Pin::new(&mut self.inner).poll_write(cx, &front[self.written..]);
            match written {
                Poll::Ready(Ok(n)) if n > 0 => {
                    self.written += n;
                    if self.written < front.len() {
                        self.queue.push_front(front);
                    } else {
                        self.written = 0;
                    }
                }
                other => {
                    self.queue.push_front(front);
                    return match other {
                        Poll::Ready(Ok(_)) => Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                        Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
                        Poll::Pending => Poll::Pending,
                    };
                }
            }
        }
        Poll::Ready(Ok(()))
    }

    /// Moves every whole frame of `partial` to the queue.
    fn frames(&mut self) {
        let mut at = 0;
        while !self.raw {
            let rest = &self.partial[at..];
            let Some(end) = memchr::memmem::find(rest, b"\r\n\r\n") else {
                self.raw = rest.len() > MAX_HEADER;
                break;
            };
            let Some(len) = content_length(&rest[..end]) else {
                self.raw = true;
                break;
            };
            let body_at = end + 4;
            let Some(body) = rest.get(body_at..body_at + len) else {
                break;
            };
            match self.replies.take(body) {
                Some((before, json, after)) => {
                    let len = before.len() + json.len() + after.len();
                    let mut head = format!("Content-Length: {len}\r\n\r\n").into_bytes();
                    head.extend_from_slice(before);
                    self.queue.push_back(head);
                    self.queue.push_back(json);
                    self.queue.push_back(after.to_vec());
                }
                None => self.queue.push_back(rest[..body_at + len].to_vec()),
            }
            at += body_at + len;
        }
        if self.raw {
            self.queue.push_back(self.partial.split_off(at));
            self.partial.clear();
        } else {
            self.partial.drain(..at);
        }
    }
}

/// The `Content-Length` of a header (its lines without the blank one).
fn content_length(header: &[u8]) -> Option<usize> {
    let header = std::str::from_utf8(header).ok()?;
    header.split("\r\n").find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse().ok())?
    })
}

impl<W: Output + Unpin> AsyncWrite for Splice<W> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.drain(cx)?.is_pending() && this.queued() >= MAX_QUEUED {
            return Poll::Pending;
        }
        if this.raw {
            this.queue.push_back(buf.to_vec());
        } else {
            this.partial.extend_from_slice(buf);
            this.frames();
        }
        // Start writing now; what is left goes out on the next write or flush.
        let _ = this.drain(cx)?;
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.drain(cx))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.drain(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    fn frame(body: &str) -> Vec<u8> {
        format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
    }

    #[tokio::test]
    async fn placeholder_responses_carry_their_stashed_text_and_the_rest_pass_through() {
        let replies = RawReplies::new();
        let placeholder = replies.stash(br#"{"a":[1,"x"]}"#.to_vec());
        let mut out = Vec::new();
        let mut splice = Splice::new(Writes::new(&mut out), Arc::clone(&replies), Answers::new());
        let other = r#"{"jsonrpc":"2.0","method":"x","params":{"s":"sessiontree.raw.0.0"}}"#;
        let mut input = frame(other);
        input.extend(frame(&format!(
            r#"{{"jsonrpc":"2.0","result":"{placeholder}","id":7}}"#
        )));
        let unknown = format!(r#"{{"jsonrpc":"2.0","result":"{placeholder}","id":8}}"#);
        input.extend(frame(&unknown));
        // In pieces that cut headers and bodies.
        for piece in input.chunks(5) {
            splice.write_all(piece).await.expect("write");
        }
        splice.flush().await.expect("flush");
        drop(splice);
        let mut expected = frame(other);
        expected.extend(frame(r#"{"jsonrpc":"2.0","result":{"a":[1,"x"]},"id":7}"#));
        // Taken once: a second response naming it passes through.
        expected.extend(frame(&unknown));
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&expected)
        );
    }

    /// However many answers wait for the output, each goes out with its own text.
    #[tokio::test]
    async fn every_waiting_answer_is_spliced() {
        let replies = RawReplies::new();
        let placeholders: Vec<String> = (0..100)
            .map(|n| replies.stash(format!("[{n}]").into_bytes()))
            .collect();
        let mut out = Vec::new();
        let mut splice = Splice::new(Writes::new(&mut out), Arc::clone(&replies), Answers::new());
        let mut expected = Vec::new();
        for (n, placeholder) in placeholders.iter().enumerate() {
            let body = format!(r#"{{"jsonrpc":"2.0","result":"{placeholder}","id":{n}}}"#);
            splice.write_all(&frame(&body)).await.expect("write");
            expected.extend(frame(&format!(
                r#"{{"jsonrpc":"2.0","result":[{n}],"id":{n}}}"#
            )));
        }
        splice.flush().await.expect("flush");
        drop(splice);
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&expected)
        );
    }

    /// An output that takes whole buffers (keeping where each one's bytes lie) or copies.
    #[derive(Default)]
    struct TakesWhole {
        parts: Vec<Vec<u8>>,
        taken: Vec<usize>,
    }

    impl Output for TakesWhole {
        fn take_whole(self: Pin<&mut Self>, buf: Vec<u8>) -> Result<(), Vec<u8>> {
            let this = self.get_mut();
            this.taken.push(buf.as_ptr() as usize);
            this.parts.push(buf);
            Ok(())
        }
    }

    impl AsyncWrite for TakesWhole {
        fn poll_write(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            self.get_mut().parts.push(buf.to_vec());
            Poll::Ready(Ok(buf.len()))
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    /// A stashed text goes to an output that takes whole buffers as it is, not copied.
    #[tokio::test]
    async fn a_stashed_text_is_handed_over_whole() {
        let replies = RawReplies::new();
        let text = br#"{"big":"answer"}"#.to_vec();
        let place = text.as_ptr() as usize;
        let placeholder = replies.stash(text);
        let mut splice = Splice::new(TakesWhole::default(), Arc::clone(&replies), Answers::new());
        let body = format!(r#"{{"jsonrpc":"2.0","result":"{placeholder}","id":1}}"#);
        splice.write_all(&frame(&body)).await.expect("write");
        splice.flush().await.expect("flush");
        let out = &splice.inner;
        assert_eq!(
            String::from_utf8_lossy(&out.parts.concat()),
            String::from_utf8_lossy(&frame(
                r#"{"jsonrpc":"2.0","result":{"big":"answer"},"id":1}"#
            ))
        );
        assert!(out.taken.contains(&place), "the text was copied");
    }

    /// An answer of the input's, queued while a frame is half written, goes out whole beside it.
    #[tokio::test]
    async fn the_inputs_answers_go_out_between_whole_frames() {
        let replies = RawReplies::new();
        let answers = Answers::new();
        let mut out = Vec::new();
        let mut splice = Splice::new(Writes::new(&mut out), replies, Arc::clone(&answers));
        let first = frame(r#"{"jsonrpc":"2.0","method":"a"}"#);
        let answer = frame(r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"x"},"id":null}"#);
        let (head, tail) = first.split_at(25);
        splice.write_all(head).await.expect("write");
        answers.push(answer.clone());
        splice.write_all(tail).await.expect("write");
        answers.push(answer.clone());
        splice.flush().await.expect("flush");
        drop(splice);
        let mut expected = answer.clone();
        expected.extend(&first);
        expected.extend(&answer);
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&expected)
        );
    }

    #[tokio::test]
    async fn output_that_is_not_frames_passes_through() {
        let replies = RawReplies::new();
        let mut out = Vec::new();
        let mut splice = Splice::new(Writes::new(&mut out), replies, Answers::new());
        let junk = vec![b'x'; 3000];
        splice.write_all(&junk).await.expect("write");
        splice.write_all(b"\r\n\r\nmore").await.expect("write");
        splice.flush().await.expect("flush");
        drop(splice);
        assert_eq!(out.len(), 3008);
    }
}
