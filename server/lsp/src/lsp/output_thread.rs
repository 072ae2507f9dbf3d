//! The server's standard output, written by a thread of its own.
//!
//! tokio's `Stdout` goes through std's line-buffered standard output: each write was copied into
//! tokio's buffer, searched for its last newline, and handed to the blocking pool, and a context
//! answer (megabytes) paid for all three. Here a write is queued and one thread writes the queue
//! to the descriptor as it is. When the output is a pipe it is also widened (to 1 MB where the
//! system allows), so that a large answer goes out in fewer turns of writer and reader.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use tokio::io::AsyncWrite;

/// Accepting more waits while this much is queued.
const MAX_QUEUED: usize = 8 << 20;
/// The pipe size asked for (Linux allows unprivileged processes up to `fs.pipe-max-size`, 1 MB
/// by default).
#[cfg(target_os = "linux")]
const PIPE_SIZE: usize = 1 << 20;

/// An [`AsyncWrite`] whose bytes a dedicated thread writes, in order, to a blocking writer.
pub(crate) struct OutputThread {
    shared: Arc<Shared>,
}

struct Shared {
    state: Mutex<State>,
    /// Signals the thread that bytes were queued or the output closed.
    queued: Condvar,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Vec<u8>>,
    /// Bytes queued or being written.
    pending: usize,
    /// The first write error; every later call reports it.
    error: Option<(io::ErrorKind, String)>,
    closed: bool,
    /// The task waiting for room or for everything to be written.
    waiting: Option<Waker>,
}

impl OutputThread {
    /// The process's standard output (a duplicate of its descriptor, unbuffered).
    pub(crate) fn stdout() -> io::Result<OutputThread> {
        #[cfg(unix)]
        {
            use std::os::fd::AsFd;
            let fd = io::stdout().as_fd().try_clone_to_owned()?;
            widen_pipe(&fd);
            OutputThread::new(std::fs::File::from(fd))
        }
        #[cfg(not(unix))]
        {
            OutputThread::new(io::stdout())
        }
    }

    /// Writes to `out` from a new thread.
    pub(crate) fn new(out: impl Write + Send + 'static) -> io::Result<OutputThread> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            queued: Condvar::new(),
        });
        let writer = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("sessiontree-output".to_owned())
            .spawn(move || writer.write_all(out))?;
        Ok(OutputThread { shared })
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The thread: writes what is queued until the output is closed and drained, or fails.
    fn write_all(&self, mut out: impl Write) {
        loop {
            let batch = {
                let mut state = self.lock();
                while state.queue.is_empty() && !state.closed {
                    state = self.queued.wait(state).unwrap_or_else(|e| e.into_inner());
                }
                if state.queue.is_empty() {
                    return;
                }
                std::mem::take(&mut state.queue)
            };
            let bytes: usize = batch.iter().map(Vec::len).sum();
            let written = batch
                .iter()
                .try_for_each(|buf| out.write_all(buf))
                .and_then(|()| out.flush());
            let mut state = self.lock();
            state.pending -= bytes;
            if let Err(e) = written {
                state.error = Some((e.kind(), e.to_string()));
            }
            if let Some(waker) = state.waiting.take() {
                waker.wake();
            }
            if state.error.is_some() {
                return;
            }
        }
    }
}

fn failed((kind, message): &(io::ErrorKind, String)) -> io::Error {
    io::Error::new(*kind, format!("writing the output: {message}"))
}

/// A buffer is queued as it is: a megabyte answer is not copied on its way out.
impl crate::raw_reply::Output for OutputThread {
    fn take_whole(self: Pin<&mut Self>, buf: Vec<u8>) -> Result<(), Vec<u8>> {
        let mut state = self.shared.lock();
        if state.error.is_some() || state.closed || state.pending >= MAX_QUEUED {
            // The write reports the error, or waits for room.
            return Err(buf);
        }
        state.pending += buf.len();
        state.queue.push_back(buf);
        self.shared.queued.notify_one();
        Ok(())
    }
}

impl AsyncWrite for OutputThread {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let mut state = self.shared.lock();
        if let Some(error) = &state.error {
            return Poll::Ready(Err(failed(error)));
        }
        if state.closed {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        }
        if state.pending >= MAX_QUEUED {
            state.waiting = Some(cx.waker().clone());
            return Poll::Pending;
        }
        state.queue.push_back(buf.to_vec());
        state.pending += buf.len();
        self.shared.queued.notify_one();
        Poll::Ready(Ok(buf.len()))
    }

    /// Ready once everything queued is written.
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut state = self.shared.lock();
        if let Some(error) = &state.error {
            return Poll::Ready(Err(failed(error)));
        }
        if state.pending == 0 {
            return Poll::Ready(Ok(()));
        }
        state.waiting = Some(cx.waker().clone());
        Poll::Pending
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let flushed = self.as_mut().poll_flush(cx);
        if flushed.is_ready() {
            self.shared.lock().closed = true;
            self.shared.queued.notify_one();
        }
        flushed
    }
}

/// The thread writes what is queued, then ends.
impl Drop for OutputThread {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.queued.notify_one();
    }
}

/// Asks for a wider pipe when the output is one; a failure only leaves the pipe as it is.
#[cfg(unix)]
fn widen_pipe(fd: &std::os::fd::OwnedFd) {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{fstat, FileType};
        let is_pipe =
            fstat(fd).is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Fifo);
        if is_pipe {
            match rustix::pipe::fcntl_setpipe_size(fd, PIPE_SIZE) {
                Ok(size) => tracing::debug!("output pipe widened to {size} bytes"),
                Err(e) => tracing::debug!("output pipe left as it is: {e}"),
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = fd;
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    /// A writer that keeps what it is given, failing once it holds `fail_after` bytes.
    #[derive(Clone)]
    struct Keep {
        bytes: Arc<Mutex<Vec<u8>>>,
        fail_after: usize,
    }

    impl Write for Keep {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let mut bytes = self.bytes.lock().unwrap_or_else(|e| e.into_inner());
            if bytes.len() >= self.fail_after {
                return Err(io::ErrorKind::BrokenPipe.into());
            }
            bytes.extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn keep(fail_after: usize) -> Keep {
        Keep {
            bytes: Arc::default(),
            fail_after,
        }
    }

    #[tokio::test]
    async fn writes_everything_in_order_before_a_flush_returns() {
        let out = keep(usize::MAX);
        let mut thread = OutputThread::new(out.clone()).unwrap_or_else(|e| panic!("{e}"));
        let mut expected = Vec::new();
        // More than the queue holds, so writes also wait for room.
        for n in 0..40u32 {
            let chunk = vec![n as u8; 1 << 20];
            thread
                .write_all(&chunk)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            expected.extend_from_slice(&chunk);
        }
        thread.flush().await.unwrap_or_else(|e| panic!("{e}"));
        let written = out.bytes.lock().unwrap_or_else(|e| e.into_inner()).clone();
        assert_eq!(written.len(), expected.len());
        assert!(written == expected, "the bytes came out of order");
    }

    /// Buffers handed over whole and bytes written go out in the order they came.
    #[tokio::test]
    async fn whole_buffers_and_writes_keep_their_order() {
        use crate::raw_reply::Output;
        let out = keep(usize::MAX);
        let mut thread = OutputThread::new(out.clone()).unwrap_or_else(|e| panic!("{e}"));
        for n in 0..50u8 {
            let part = vec![n; 1000];
            if n % 2 == 0 {
                let taken = Pin::new(&mut thread).take_whole(part);
                assert!(taken.is_ok(), "an empty queue refused a buffer");
            } else {
                thread
                    .write_all(&part)
                    .await
                    .unwrap_or_else(|e| panic!("{e}"));
            }
        }
        thread.flush().await.unwrap_or_else(|e| panic!("{e}"));
        let written = out.bytes.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let expected: Vec<u8> = (0..50u8).flat_map(|n| vec![n; 1000]).collect();
        assert!(written == expected, "the bytes came out of order");
    }

    #[tokio::test]
    async fn a_write_error_reaches_the_writer() {
        let mut thread = OutputThread::new(keep(10)).unwrap_or_else(|e| panic!("{e}"));
        thread
            .write_all(b"0123456789ab")
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        thread.flush().await.unwrap_or_else(|e| panic!("{e}"));
        // Queued now, failing on the thread.
        thread
            .write_all(b"more")
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let error = thread.flush().await.err();
        let error = error.unwrap_or_else(|| panic!("the failed write was flushed"));
        assert_eq!(error.kind(), io::ErrorKind::BrokenPipe);
        assert!(error.to_string().contains("writing the output"), "{error}");
        let again = thread.write_all(b"more").await.err();
        assert_eq!(again.map(|e| e.kind()), Some(io::ErrorKind::BrokenPipe));
    }
}
