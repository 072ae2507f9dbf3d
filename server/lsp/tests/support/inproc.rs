//! An in-process LSP client: the server runs on one end of a `tokio::io::duplex` pipe, the test
//! talks JSON-RPC on the other. Responses are routed by id, notifications queued, and
//! server→client requests (hooks) answered by a function the test supplies.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot, Mutex};

type Waiters = Arc<std::sync::Mutex<HashMap<i64, oneshot::Sender<Value>>>>;
/// Answers a server→client request: (method, params) → result.
pub type Answer = Arc<dyn Fn(&str, &Value) -> Value + Send + Sync>;

pub struct Client {
    writer: Arc<Mutex<tokio::io::WriteHalf<tokio::io::DuplexStream>>>,
    waiters: Waiters,
    notes: Mutex<mpsc::UnboundedReceiver<Value>>,
    /// Server→client requests seen (method, params).
    pub asked: Arc<std::sync::Mutex<Vec<(String, Value)>>>,
    next: std::sync::atomic::AtomicI64,
}

async fn read_frame<R: tokio::io::AsyncBufRead + Unpin>(r: &mut R) -> Option<Value> {
    let mut len = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length:") {
            len = v.trim().parse::<usize>().ok();
        }
    }
    let mut body = vec![0; len?];
    r.read_exact(&mut body).await.ok()?;
    serde_json::from_slice(&body).ok()
}

async fn write_frame(w: &Mutex<tokio::io::WriteHalf<tokio::io::DuplexStream>>, value: &Value) {
    let body = serde_json::to_vec(value).unwrap_or_default();
    let mut w = w.lock().await;
    let _ = w
        .write_all(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes())
        .await;
    let _ = w.write_all(&body).await;
    let _ = w.flush().await;
}

impl Client {
    /// Starts a server and a client; `answer` replies to hooks.
    pub fn start(answer: Option<Answer>) -> Client {
        Client::start_delayed(answer, Duration::ZERO)
    }

    /// Like [`Client::start`], answering hooks only after `delay`.
    pub fn start_delayed(answer: Option<Answer>, delay: Duration) -> Client {
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
                            let writer = Arc::clone(&writer);
                            tokio::spawn(async move {
                                tokio::time::sleep(delay).await;
                                write_frame(
                                    &writer,
                                    &json!({"jsonrpc":"2.0","id":id,"result":result}),
                                )
                                .await;
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
            waiters,
            notes: Mutex::new(rx),
            asked,
            next: std::sync::atomic::AtomicI64::new(1),
        }
    }

    /// Starts and initializes (with or without hooks, with initialization options).
    pub async fn initialized(hooks: bool, options: Value, answer: Option<Answer>) -> Client {
        Client::initialized_delayed(hooks, options, answer, Duration::ZERO).await
    }

    /// [`Client::initialized`] with hooks answered after `delay`.
    pub async fn initialized_delayed(
        hooks: bool,
        options: Value,
        answer: Option<Answer>,
        delay: Duration,
    ) -> Client {
        let c = Client::start_delayed(answer, delay);
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
