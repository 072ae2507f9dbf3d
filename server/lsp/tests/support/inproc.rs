//! An in-process LSP client: the server runs on one end of a `tokio::io::duplex` pipe, the test
//! talks JSON-RPC on the other. Responses are routed by id, notifications queued, and
//! server→client requests (hooks) answered by a function the test supplies — at once, or held
//! until the test releases them, so a test can act while a hook is pending and wait for the
//! events it needs instead of sleeping.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot, Mutex};

type Waiters = Arc<std::sync::Mutex<HashMap<i64, oneshot::Sender<Value>>>>;
/// Answers a server→client request: (method, params) → result.
pub type Answer = Arc<dyn Fn(&str, &Value) -> Value + Send + Sync>;

pub struct Client {
    writer: Arc<Mutex<tokio::io::WriteHalf<tokio::io::DuplexStream>>>,
    hooks: Arc<Hooks>,
    waiters: Waiters,
    notes: Mutex<mpsc::UnboundedReceiver<Value>>,
    /// Server→client requests seen (method, params).
    pub asked: Arc<std::sync::Mutex<Vec<(String, Value)>>>,
    next: std::sync::atomic::AtomicI64,
}

/// The server→client requests: how many arrived and were answered, and the gate that holds their
/// answers until the test releases them.
struct Hooks {
    gate: tokio::sync::Semaphore,
    asked: tokio::sync::watch::Sender<usize>,
    answered: tokio::sync::watch::Sender<usize>,
}

/// A session file opened by the server.
pub struct Opened {
    /// The session's URI as the server names it.
    pub uri: String,
    /// The file.
    pub file: PathBuf,
    /// The `sessionTree/open` result.
    pub open: Value,
    /// The file's bytes when it was opened.
    pub original: Vec<u8>,
}

impl Opened {
    /// Fails unless the file still holds the bytes it had when it was opened.
    pub fn assert_unwritten(&self, why: impl std::fmt::Display) {
        assert_eq!(
            std::fs::read(&self.file).ok().as_deref(),
            Some(self.original.as_slice()),
            "{why}: the session file changed"
        );
    }
}

/// Hook answers a released gate lets through (more than any test asks for).
const RELEASED: usize = 1 << 20;

async fn read_frame<R: tokio::io::AsyncBufRead + Unpin>(r: &mut R) -> Option<Value> {
    let mut len = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        if line.trim_end().is_empty() {
            break;
        }
        if let Some(announced) = super::header_length(&line) {
            len = announced;
        }
    }
    let mut body = vec![0; len?];
    r.read_exact(&mut body).await.ok()?;
    serde_json::from_slice(&body).ok()
}

async fn write_frame(w: &Mutex<tokio::io::WriteHalf<tokio::io::DuplexStream>>, value: &Value) {
    let framed = super::frame(value);
    let mut w = w.lock().await;
    let _ = w.write_all(&framed).await;
    let _ = w.flush().await;
}

impl Client {
    /// Starts a server and a client; `answer` replies to hooks.
    pub fn start(answer: Option<Answer>) -> Client {
        Client::start_with(answer, false)
    }

    /// Like [`Client::start`]; with `hold`, hooks are answered only after
    /// [`Client::release_hooks`].
    fn start_with(answer: Option<Answer>, hold: bool) -> Client {
        let hooks = Arc::new(Hooks {
            gate: tokio::sync::Semaphore::new(if hold { 0 } else { RELEASED }),
            asked: tokio::sync::watch::Sender::new(0),
            answered: tokio::sync::watch::Sender::new(0),
        });
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(theirs);
        tokio::spawn(sessiontree_lsp::serve(server_read, server_write));
        let (read, write) = tokio::io::split(ours);
        let writer = Arc::new(Mutex::new(write));
        let waiters: Waiters = Arc::default();
        let asked: Arc<std::sync::Mutex<Vec<(String, Value)>>> = Arc::default();
        let (tx, rx) = mpsc::unbounded_channel();
        {
            let waiters = Arc::clone(&waiters);
            let writer = Arc::clone(&writer);
            let asked = Arc::clone(&asked);
            let hooks = Arc::clone(&hooks);
            tokio::spawn(async move {
                let mut reader = BufReader::new(read);
                while let Some(msg) = read_frame(&mut reader).await {
                    let method = msg.get("method").and_then(Value::as_str).map(str::to_owned);
                    match (method, msg.get("id").cloned()) {
                        (Some(method), Some(id)) => {
                            let params = msg.get("params").cloned().unwrap_or(Value::Null);
                            asked
                                .lock()
                                .expect("asked")
                                .push((method.clone(), params.clone()));
                            let result = match &answer {
                                Some(f) => f(&method, &params),
                                None => Value::Null,
                            };
                            hooks.asked.send_modify(|n| *n += 1);
                            let writer = Arc::clone(&writer);
                            let hooks = Arc::clone(&hooks);
                            tokio::spawn(async move {
                                if let Ok(permit) = hooks.gate.acquire().await {
                                    permit.forget();
                                }
                                write_frame(
                                    &writer,
                                    &json!({"jsonrpc":"2.0","id":id,"result":result}),
                                )
                                .await;
                                hooks.answered.send_modify(|n| *n += 1);
                            });
                        }
                        (Some(_), None) => {
                            let _ = tx.send(msg);
                        }
                        (None, Some(id)) => {
                            if let Some(w) = id
                                .as_i64()
                                .and_then(|id| waiters.lock().expect("waiters").remove(&id))
                            {
                                let _ = w.send(msg);
                            }
                        }
                        (None, None) => {}
                    }
                }
            });
        }
        Client {
            writer,
            hooks,
            waiters,
            notes: Mutex::new(rx),
            asked,
            next: std::sync::atomic::AtomicI64::new(1),
        }
    }

    /// Started and initialized without hooks or initialization options: what most tests need.
    pub async fn plain() -> Client {
        Client::initialized(false, Value::Null, None).await
    }

    /// A [`Client::plain`] with the fixture `rel` copied into a temporary folder of its own (it
    /// lives as long as the returned folder) and opened.
    pub async fn plain_on_copy(rel: &str) -> (tempfile::TempDir, Client, Opened) {
        let dir = tempfile::tempdir().expect("tempdir");
        let c = Client::plain().await;
        let s = c.open_copy(dir.path(), rel).await;
        (dir, c, s)
    }

    /// Opens `file` (`sessionTree/open` must succeed).
    pub async fn open(&self, file: &Path) -> Opened {
        let open = self
            .ok("sessionTree/open", json!({"uri": super::uri(file)}))
            .await;
        Opened {
            uri: open["uri"]
                .as_str()
                .expect("the open result names the session")
                .to_owned(),
            file: file.to_path_buf(),
            original: std::fs::read(file).expect("read the opened file"),
            open,
        }
    }

    /// Copies the fixture `rel` into `dir` as `s.jsonl` and opens the copy.
    pub async fn open_copy(&self, dir: &Path, rel: &str) -> Opened {
        self.open_copy_as(dir, rel, "s.jsonl").await
    }

    /// Copies the fixture `rel` into `dir` as `name` and opens the copy.
    pub async fn open_copy_as(&self, dir: &Path, rel: &str, name: &str) -> Opened {
        self.open(&super::copy_fixture(rel, dir, name)).await
    }

    /// Starts and initializes (with or without hooks, with initialization options).
    pub async fn initialized(hooks: bool, options: Value, answer: Option<Answer>) -> Client {
        Client::initialized_with(hooks, options, answer, false).await
    }

    /// [`Client::initialized`] with hook answers held until [`Client::release_hooks`].
    pub async fn initialized_holding_hooks(
        hooks: bool,
        options: Value,
        answer: Option<Answer>,
    ) -> Client {
        Client::initialized_with(hooks, options, answer, true).await
    }

    async fn initialized_with(
        hooks: bool,
        options: Value,
        answer: Option<Answer>,
        hold: bool,
    ) -> Client {
        let c = Client::start_with(answer, hold);
        let caps = if hooks {
            json!({"experimental":{"sessionTree":{"hooks":true}}})
        } else {
            json!({})
        };
        let init = c
            .request("initialize", json!({"processId":null,"rootUri":null,"capabilities":caps,"initializationOptions":options}))
            .await;
        assert!(init.get("result").is_some(), "initialize failed: {init}");
        c.notify("initialized", json!({})).await;
        c
    }

    /// Waits until `n` server→client requests (hooks) have arrived.
    pub async fn hooks_asked(&self, n: usize) {
        let mut rx = self.hooks.asked.subscribe();
        tokio::time::timeout(Duration::from_secs(20), rx.wait_for(|&k| k >= n))
            .await
            .expect("the hook was asked in time")
            .expect("the client runs");
    }

    /// Lets held hook answers go, now and from now on.
    pub fn release_hooks(&self) {
        self.hooks.gate.add_permits(RELEASED);
    }

    /// Waits until `n` hook answers have been written to the server.
    pub async fn hooks_answered(&self, n: usize) {
        let mut rx = self.hooks.answered.subscribe();
        tokio::time::timeout(Duration::from_secs(20), rx.wait_for(|&k| k >= n))
            .await
            .expect("the hook was answered in time")
            .expect("the client runs");
    }

    /// The notifications from now until one of `method` arrives (that one included), within
    /// `secs`; fails when it does not arrive.
    pub async fn notifications_until(&self, method: &str, secs: u64) -> Vec<Value> {
        let mut rx = self.notes.lock().await;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
        let mut out = Vec::new();
        loop {
            let msg = tokio::time::timeout_at(deadline, rx.recv())
                .await
                .unwrap_or_else(|_| panic!("no {method} within {secs} s"))
                .expect("the client runs");
            let done = msg.get("method").and_then(Value::as_str) == Some(method);
            out.push(msg);
            if done {
                return out;
            }
        }
    }

    /// Writes a request and returns the receiver of its response (for pipelining).
    pub async fn send(&self, method: &str, params: Value) -> oneshot::Receiver<Value> {
        self.send_id(method, params).await.1
    }

    /// [`Client::send`], also returning the request id.
    pub async fn send_id(&self, method: &str, params: Value) -> (i64, oneshot::Receiver<Value>) {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let (tx, rx) = oneshot::channel();
        self.waiters.lock().expect("waiters").insert(id, tx);
        write_frame(
            &self.writer,
            &json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}),
        )
        .await;
        (id, rx)
    }

    /// A request and its whole response message.
    pub async fn request(&self, method: &str, params: Value) -> Value {
        let rx = self.send(method, params).await;
        tokio::time::timeout(Duration::from_secs(20), rx)
            .await
            .expect("response in time")
            .expect("response")
    }

    /// A request that must succeed; returns `result`.
    pub async fn ok(&self, method: &str, params: Value) -> Value {
        let msg = self.request(method, params).await;
        assert!(msg.get("error").is_none(), "{method} failed: {msg}");
        msg["result"].clone()
    }

    /// A request that must fail; returns `error`.
    pub async fn err(&self, method: &str, params: Value) -> Value {
        let msg = self.request(method, params).await;
        assert!(msg.get("error").is_some(), "{method} should fail: {msg}");
        msg["error"].clone()
    }

    pub async fn notify(&self, method: &str, params: Value) {
        write_frame(
            &self.writer,
            &json!({"jsonrpc":"2.0","method":method,"params":params}),
        )
        .await;
    }

    /// The next notification of `method` within `secs`.
    pub async fn notification(&self, method: &str, secs: u64) -> Option<Value> {
        let mut rx = self.notes.lock().await;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
        loop {
            let msg = tokio::time::timeout_at(deadline, rx.recv()).await.ok()??;
            if msg.get("method").and_then(Value::as_str) == Some(method) {
                return msg.get("params").cloned();
            }
        }
    }

    /// Every notification received so far (drains the queue).
    pub async fn drain(&self) -> Vec<Value> {
        let mut rx = self.notes.lock().await;
        let mut out = Vec::new();
        while let Ok(msg) = rx.try_recv() {
            out.push(msg);
        }
        out
    }
}
