//! LSP message framing for tests that talk to the server over a byte stream (`Content-Length`
//! headers, then the JSON body), blocking, and a [`Connection`] to a server running as a child
//! process: the one stdio client of the tests and benchmarks (its output read leniently, or
//! strictly where the framing itself is under test), with a [`Writer`] other threads may share.

use serde_json::Value;
use std::io::{BufRead, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// `file://` URI of a path.
pub fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// One framed message.
pub fn frame(value: &Value) -> Vec<u8> {
    frame_body(&serde_json::to_vec(value).unwrap_or_default())
}

/// A body (JSON or not) in a frame.
pub fn frame_body(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// What a header line read leniently says of the body's length: `Some` for a
/// `Content-Length:` line (`Some(None)` when its value is not a number), `None` for another
/// header.
pub fn header_length(line: &str) -> Option<Option<usize>> {
    let value = line.trim_end().strip_prefix("Content-Length:")?;
    Some(value.trim().parse::<usize>().ok())
}

/// The body length a header block announces: reads header lines up to the blank one; `None` at
/// the end of the stream.
pub fn read_header(r: &mut impl BufRead) -> Option<usize> {
    let mut len = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line.trim_end().is_empty() {
            return len;
        }
        if let Some(announced) = header_length(&line) {
            len = announced;
        }
    }
}

/// A language server running as a child process, spoken to over its standard input and output:
/// a reader thread reads each message and notes when its last byte arrived (so an answer is
/// timed to its arrival, not to the end of the caller's handling of earlier ones). Dropping it
/// kills the server.
pub struct Connection {
    child: Child,
    writer: Writer,
    incoming: Receiver<Result<(Instant, Value), String>>,
    next: i64,
}

/// The writing half of a [`Connection`], for threads that send on the one connection while
/// another reads: each message is written whole under a lock.
#[derive(Clone)]
pub struct Writer {
    stdin: Arc<Mutex<Option<ChildStdin>>>,
}

impl Writer {
    /// Writes bytes as they are (frames made by the caller, or not frames at all).
    pub fn write_raw(&self, bytes: &[u8]) -> std::io::Result<()> {
        let mut stdin = self.stdin.lock().unwrap_or_else(PoisonError::into_inner);
        let stdin = stdin.as_mut().ok_or_else(|| no_pipe("stdin"))?;
        stdin.write_all(bytes)?;
        stdin.flush()
    }

    /// Writes one message.
    pub fn send(&self, message: &Value) -> std::io::Result<()> {
        self.write_raw(&frame(message))
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Value) -> std::io::Result<()> {
        self.send(&serde_json::json!({"jsonrpc": "2.0", "method": method, "params": params}))
    }

    /// Closes the server's input (end of stream).
    fn close(&self) {
        drop(
            self.stdin
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
    }
}

/// Why a response did not come.
#[derive(Debug)]
pub enum NoResponse {
    /// Nothing within the time allowed.
    Timeout,
    /// The server closed its output.
    Closed,
    /// The server's output is not frames (read strictly: see [`Connection::spawn_strict`]).
    Broken(String),
}

impl std::fmt::Display for NoResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoResponse::Timeout => f.write_str("no message in time"),
            NoResponse::Closed => f.write_str("the server closed its output"),
            NoResponse::Broken(why) => write!(f, "the server's output broke: {why}"),
        }
    }
}

impl std::error::Error for NoResponse {}

/// The `data.kind` of an LSP error object (`""` when it has none).
pub fn kind(error: &Value) -> &str {
    error["data"]["kind"].as_str().unwrap_or("")
}

/// `true` for the response to request `id`.
pub fn is_response(message: &Value, id: i64) -> bool {
    message.get("method").is_none() && message.get("id") == Some(&Value::from(id))
}

/// `true` for a request from the server (a method and an id).
pub fn is_server_request(message: &Value) -> bool {
    message.get("method").is_some() && message.get("id").is_some()
}

/// `true` for a notification (a method and no id).
pub fn is_notification(message: &Value) -> bool {
    message.get("method").is_some() && message.get("id").is_none()
}

impl Connection {
    /// Starts `command` with its standard input and output piped to this connection (its
    /// standard error goes where the command says). Its output ends at the first bytes that are
    /// not a message.
    pub fn spawn(command: Command) -> std::io::Result<Connection> {
        Connection::start(command, false)
    }

    /// [`Connection::spawn`], reading the output strictly: every frame exactly
    /// `Content-Length: N\r\n\r\n` and a JSON body, anything else (a body cut short too) is
    /// [`NoResponse::Broken`], saying how.
    pub fn spawn_strict(command: Command) -> std::io::Result<Connection> {
        Connection::start(command, true)
    }

    fn start(mut command: Command, strict: bool) -> std::io::Result<Connection> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let stdin = child.stdin.take().ok_or_else(|| no_pipe("stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| no_pipe("stdout"))?;
        let (tx, incoming) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut r = std::io::BufReader::with_capacity(1 << 20, stdout);
            loop {
                let message = if strict {
                    read_strict(&mut r)
                } else {
                    read_timed(&mut r).map(Ok)
                };
                let Some(message) = message else { break };
                let broken = message.is_err();
                if tx.send(message).is_err() || broken {
                    break;
                }
            }
        });
        Ok(Connection {
            child,
            writer: Writer {
                stdin: Arc::new(Mutex::new(Some(stdin))),
            },
            incoming,
            next: 1,
        })
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The server's process.
    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// A writer on this connection for other threads.
    pub fn writer(&self) -> Writer {
        self.writer.clone()
    }

    /// Writes bytes as they are (frames made by the caller, or not frames at all).
    pub fn write_raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.writer.write_raw(bytes)
    }

    /// Writes one message.
    pub fn send(&mut self, message: &Value) -> std::io::Result<()> {
        self.writer.send(message)
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) -> std::io::Result<()> {
        self.writer.notify(method, params)
    }

    /// Sends a request; returns its id.
    pub fn send_request(&mut self, method: &str, params: Value) -> std::io::Result<i64> {
        let id = self.next;
        self.next += 1;
        self.send(
            &serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        )?;
        Ok(id)
    }

    /// Sends a request and waits up to `timeout` for its response (the whole message: `result`
    /// or `error`), leaving requests from the server unanswered; fails the calling test when
    /// none comes.
    pub fn call(&mut self, method: &str, params: Value, timeout: Duration) -> Value {
        let id = self.send_request(method, params).expect("write");
        match self.response(id, timeout, |_| None) {
            Ok((_, message)) => message,
            Err(e) => panic!("no response to {method}: {e}"),
        }
    }

    /// The next message and when it arrived.
    pub fn next_message(&self, timeout: Duration) -> Result<(Instant, Value), NoResponse> {
        match self.incoming.recv_timeout(timeout) {
            Ok(Ok(message)) => Ok(message),
            Ok(Err(why)) => Err(NoResponse::Broken(why)),
            Err(RecvTimeoutError::Timeout) => Err(NoResponse::Timeout),
            Err(RecvTimeoutError::Disconnected) => Err(NoResponse::Closed),
        }
    }

    /// Reads messages until one is `wanted`, within `timeout` in all; returns it and when it
    /// arrived. Every message, the wanted one too, first goes to `each`: a request from the
    /// server is answered with the result `each` gives for it (when it gives one).
    pub fn until(
        &mut self,
        timeout: Duration,
        mut each: impl FnMut(&Value) -> Option<Value>,
        mut wanted: impl FnMut(&Value) -> bool,
    ) -> Result<(Instant, Value), Box<dyn std::error::Error>> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let (at, message) = self.next_message(left)?;
            self.answer(&message, &mut each)?;
            if wanted(&message) {
                return Ok((at, message));
            }
        }
    }

    /// Gives every message to `each` (answering requests from the server as in
    /// [`Connection::until`]) until the server closes its output; waits as long as that takes.
    pub fn until_closed(
        &mut self,
        mut each: impl FnMut(&Value) -> Option<Value>,
    ) -> Result<(), Box<dyn std::error::Error>> {
        while let Ok(message) = self.incoming.recv() {
            let (_, message) = message.map_err(NoResponse::Broken)?;
            self.answer(&message, &mut each)?;
        }
        Ok(())
    }

    /// Waits for the response to request `id` (the whole message) and when it arrived, within
    /// `timeout` in all; each message goes to `other` as in [`Connection::until`].
    pub fn response(
        &mut self,
        id: i64,
        timeout: Duration,
        other: impl FnMut(&Value) -> Option<Value>,
    ) -> Result<(Instant, Value), Box<dyn std::error::Error>> {
        self.until(timeout, other, |message| is_response(message, id))
    }

    /// Waits for the next notification `method` and when it arrived, within `timeout` in all;
    /// each message goes to `other` as in [`Connection::until`].
    pub fn notification(
        &mut self,
        method: &str,
        timeout: Duration,
        other: impl FnMut(&Value) -> Option<Value>,
    ) -> Result<(Instant, Value), Box<dyn std::error::Error>> {
        self.until(timeout, other, |message| {
            is_notification(message)
                && message.get("method").and_then(Value::as_str) == Some(method)
        })
    }

    /// Gives `message` to `other`, and answers it when it is a request from the server and
    /// `other` gives a result.
    fn answer(
        &mut self,
        message: &Value,
        other: &mut impl FnMut(&Value) -> Option<Value>,
    ) -> std::io::Result<()> {
        let result = other(message);
        match (message.get("method"), message.get("id"), result) {
            (Some(_), Some(id), Some(result)) => {
                let id = id.clone();
                self.send(&serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}))
            }
            _ => Ok(()),
        }
    }

    /// Closes the server's input (end of stream).
    pub fn close_input(&mut self) {
        self.writer.close();
    }

    /// Closes the server's input (end of stream) and waits for it to exit.
    pub fn close(mut self) -> std::io::Result<ExitStatus> {
        self.writer.close();
        self.child.wait()
    }

    /// Asks the server to shut down and exit, and kills it if it has not exited within a
    /// second.
    pub fn stop(mut self) {
        if let Ok(id) = self.send_request("shutdown", Value::Null) {
            let _ = self.response(id, Duration::from_secs(120), |_| Some(Value::Null));
        }
        let _ = self.notify("exit", Value::Null);
        for _ in 0..50 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

fn no_pipe(which: &str) -> std::io::Error {
    std::io::Error::other(format!("the server's {which} is not piped"))
}

/// The next message and when its last byte arrived.
fn read_timed(r: &mut impl BufRead) -> Option<(Instant, Value)> {
    let len = read_header(r)?;
    let mut body = vec![0; len];
    r.read_exact(&mut body).ok()?;
    let at = Instant::now();
    Some((at, serde_json::from_slice(&body).ok()?))
}

/// The next frame read strictly and when its last byte arrived: `None` at the end of the stream
/// before a frame, `Err` saying how the bytes are not a frame.
fn read_strict(r: &mut impl BufRead) -> Option<Result<(Instant, Value), String>> {
    let mut line = String::new();
    match r.read_line(&mut line) {
        Ok(0) => return None,
        Ok(_) => {}
        Err(e) => return Some(Err(format!("reading the output: {e}"))),
    }
    let Some(length) = line
        .strip_prefix("Content-Length: ")
        .and_then(|l| l.strip_suffix("\r\n"))
        .and_then(|n| n.parse::<usize>().ok())
    else {
        return Some(Err(format!("not a frame header: {line:?}")));
    };
    let mut blank = String::new();
    if r.read_line(&mut blank).is_err() || blank != "\r\n" {
        return Some(Err(format!("no blank line after the header: {blank:?}")));
    }
    let mut body = vec![0; length];
    if let Err(e) = r.read_exact(&mut body) {
        return Some(Err(format!("a body cut short: {e}")));
    }
    let at = Instant::now();
    Some(
        serde_json::from_slice(&body)
            .map(|message| (at, message))
            .map_err(|e| {
                format!(
                    "a body that is not JSON ({e}): {}",
                    String::from_utf8_lossy(&body)
                )
            }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strict(bytes: &[u8]) -> Vec<Result<Value, String>> {
        let mut r = std::io::Cursor::new(bytes.to_vec());
        let mut out = Vec::new();
        while let Some(frame) = read_strict(&mut r) {
            let broken = frame.is_err();
            out.push(frame.map(|(_, v)| v));
            if broken {
                break;
            }
        }
        out
    }

    #[test]
    fn a_header_line_read_leniently_says_the_length_it_announces() {
        assert_eq!(header_length("Content-Length: 12\r\n"), Some(Some(12)));
        assert_eq!(header_length("Content-Length:7"), Some(Some(7)));
        assert_eq!(header_length("Content-Length: twelve\r\n"), Some(None));
        assert_eq!(header_length("Content-Type: x\r\n"), None);
        let mut r = std::io::Cursor::new(b"Content-Type: x\r\nContent-Length: 2\r\n\r\n".to_vec());
        assert_eq!(read_header(&mut r), Some(2));
    }

    #[test]
    fn strict_reading_takes_exact_frames_and_says_how_others_are_not() {
        let two = [frame(&serde_json::json!({"id": 1})), frame(&Value::Null)].concat();
        assert_eq!(
            strict(&two),
            [Ok(serde_json::json!({"id": 1})), Ok(Value::Null)]
        );
        let lenient_only = b"Content-Length: 2\r\nContent-Type: x\r\n\r\n{}";
        assert_eq!(
            strict(lenient_only),
            [Err(
                "no blank line after the header: \"Content-Type: x\\r\\n\"".to_owned()
            )]
        );
        let mut lenient = std::io::Cursor::new(lenient_only.to_vec());
        assert_eq!(
            read_timed(&mut lenient).map(|(_, v)| v),
            Some(serde_json::json!({}))
        );
        assert_eq!(
            strict(b"Content-Length:2\r\n\r\n{}"),
            [Err(
                "not a frame header: \"Content-Length:2\\r\\n\"".to_owned()
            )]
        );
        let cut = strict(b"Content-Length: 9\r\n\r\n{}");
        assert!(
            matches!(&cut[..], [Err(e)] if e.starts_with("a body cut short")),
            "{cut:?}"
        );
        let glued = [&b"Content-Length: 3\r\n\r\n{}{"[..], &frame(&Value::Null)].concat();
        assert!(
            matches!(&strict(&glued)[..], [Err(e)] if e.starts_with("a body that is not JSON")),
            "{:?}",
            strict(&glued)
        );
    }
}
