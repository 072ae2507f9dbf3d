//! The client's input, read through the frame checker (`sessiontree-frames`) before the LSP
//! library sees it.
//!
//! `tower-lsp-server` ends the whole server on the first message it cannot decode. Here every
//! frame is checked first: a message the library decodes is passed on (in a canonical frame);
//! any other message, and any stretch of bytes that is not a frame, is answered with a JSON-RPC
//! error (`id: null`) through [`Answers`], which the server's output writes between two whole
//! messages, and the library never sees it. The input ends (and with it the server, as on a
//! closed input) only when the client closes it, when reading it fails, or when a frame
//! announces a message too large to read: each is logged with the reason.

use sessiontree_frames::{Event, FrameReader};
use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use tokio::io::{AsyncRead, ReadBuf};

/// Reading waits while this many answers wait for the output.
const MAX_WAITING: usize = 64;
/// How much is read from the client at a time.
const CHUNK: usize = 64 * 1024;

/// Error answers on their way from the input to the output.
#[derive(Debug, Default)]
pub(crate) struct Answers {
    state: Mutex<Waiting>,
}

#[derive(Debug, Default)]
struct Waiting {
    frames: VecDeque<Vec<u8>>,
    /// The output's task, woken when an answer is queued.
    output: Option<Waker>,
    /// The input's task, woken when the output took the answers.
    input: Option<Waker>,
}

impl Answers {
    pub(crate) fn new() -> Arc<Answers> {
        Arc::default()
    }

    fn lock(&self) -> MutexGuard<'_, Waiting> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues a framed answer and wakes the output.
    pub(crate) fn push(&self, frame: Vec<u8>) {
        let mut state = self.lock();
        state.frames.push_back(frame);
        if let Some(output) = state.output.take() {
            output.wake();
        }
    }

    /// Whether the input may read on; if not, it is woken once the output took the answers.
    fn room(&self, cx: &Context<'_>) -> bool {
        let mut state = self.lock();
        let room = state.frames.len() < MAX_WAITING;
        if !room {
            state.input = Some(cx.waker().clone());
        }
        room
    }

    /// For the output: every answer waiting (whole frames, in order). The output's task is woken
    /// when the next one comes.
    pub(crate) fn take(&self, cx: &Context<'_>) -> VecDeque<Vec<u8>> {
        let mut state = self.lock();
        state.output = Some(cx.waker().clone());
        let frames = std::mem::take(&mut state.frames);
        if !frames.is_empty() {
            if let Some(input) = state.input.take() {
                input.wake();
            }
        }
        frames
    }
}

/// An input whose frames are checked: what it gives the library is only canonical frames of
/// messages the library decodes.
pub(crate) struct CheckedInput<R> {
    inner: R,
    reader: FrameReader,
    answers: Arc<Answers>,
    /// Bytes for the library, in order, and how much of the first it has read.
    ready: VecDeque<Vec<u8>>,
    taken: usize,
    chunk: Box<[u8]>,
    /// The input has ended (for the library, after `ready`).
    ended: bool,
}

impl<R> CheckedInput<R> {
    pub(crate) fn new(inner: R, answers: Arc<Answers>) -> CheckedInput<R> {
        CheckedInput {
            inner,
            reader: FrameReader::new(),
            answers,
            ready: VecDeque::new(),
            taken: 0,
            chunk: vec![0; CHUNK].into_boxed_slice(),
            ended: false,
        }
    }

    /// Turns the reader's events into bytes for the library, answers and the end; whether there
    /// were any.
    fn events(&mut self) -> bool {
        let mut any = false;
        while let Some(event) = self.reader.event() {
            any = true;
            match event {
                Event::Message(body) => {
                    let head = format!("Content-Length: {}\r\n\r\n", body.len());
                    self.ready.push_back(head.into_bytes());
                    self.ready.push_back(body);
                }
                Event::Rejected(rejection) => {
                    tracing::warn!(
                        "answered a message that cannot be read ({}): {}",
                        rejection.code.kind().as_str(),
                        rejection.message
                    );
                    self.answers.push(rejection.answer());
                }
                Event::End(why) => {
                    tracing::error!("ending the connection: {why}");
                    self.ended = true;
                }
            }
        }
        any
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for CheckedInput<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if let Some(front) = this.ready.front() {
                let n = buf.remaining().min(front.len() - this.taken);
                buf.put_slice(&front[this.taken..this.taken + n]);
                this.taken += n;
                if this.taken == front.len() {
                    this.ready.pop_front();
                    this.taken = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.ended {
                return Poll::Ready(Ok(()));
            }
            if this.events() {
                continue;
            }
            if !this.answers.room(cx) {
                return Poll::Pending;
            }
            let mut read = ReadBuf::new(&mut this.chunk);
            match Pin::new(&mut this.inner).poll_read(cx, &mut read) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => {
                    tracing::error!("ending the connection: reading the input failed: {e}");
                    this.ended = true;
                }
                Poll::Ready(Ok(())) if read.filled().is_empty() => {
                    if let Some(left) = this.reader.leftover() {
                        tracing::warn!("{left}");
                    }
                    this.ended = true;
                }
                Poll::Ready(Ok(())) => this.reader.push(read.filled()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    fn frame(body: &str) -> Vec<u8> {
        format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
    }

    /// What the library reads and what is answered, for `input` read in one go.
    async fn through(input: &[u8]) -> (Vec<u8>, Vec<Vec<u8>>) {
        let answers = Answers::new();
        let mut checked = CheckedInput::new(input, Arc::clone(&answers));
        let mut passed = Vec::new();
        checked.read_to_end(&mut passed).await.expect("read");
        let taken = answers.take(&Context::from_waker(Waker::noop()));
        (passed, taken.into_iter().collect())
    }

    #[tokio::test]
    async fn good_frames_pass_in_canonical_form_and_bad_ones_are_answered() {
        let good = r#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#;
        let mut input =
            format!("content-length:  {}\r\nContent-Type: x\r\n\r\n", good.len()).into_bytes();
        input.extend_from_slice(good.as_bytes());
        input.extend(frame("[]"));
        input.extend(frame(good));
        let (passed, answers) = through(&input).await;
        let mut expected = frame(good);
        expected.extend(frame(good));
        assert_eq!(
            String::from_utf8_lossy(&passed),
            String::from_utf8_lossy(&expected)
        );
        assert_eq!(answers.len(), 1);
        let answer = String::from_utf8_lossy(&answers[0]).into_owned();
        assert!(answer.ends_with(r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"an empty array is not a message","data":{"kind":"invalidRequest"}},"id":null}"#), "{answer}");
    }

    #[tokio::test]
    async fn a_length_over_the_limit_ends_the_input_after_the_frames_before_it() {
        let good = r#"{"jsonrpc":"2.0","method":"initialized"}"#;
        let mut input = frame(good);
        input.extend_from_slice(b"Content-Length: 99999999999\r\n\r\n");
        input.extend(frame(good));
        let (passed, answers) = through(&input).await;
        assert_eq!(
            String::from_utf8_lossy(&passed),
            String::from_utf8_lossy(&frame(good))
        );
        assert_eq!(answers.len(), 1);
    }
}
