//! The server's side of the bridge socket: newline-delimited JSON over a Unix socket. Requests
//! (`{"id", "op", …}`) are answered in order by `{"id", "ok", "result" | "error"}`; everything
//! else the bridge sends is an event (`{"event": …}`), handed on through a channel in the order it
//! arrived, with the moment it was read (the server's own latency is measured from there). When
//! the socket closes, pending requests fail and a last `{"event": "closed"}` is sent.

use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::unix::OwnedWriteHalf;
use tokio::net::UnixStream;
use tokio::sync::{mpsc, oneshot};

/// A request the bridge refused or could not answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BridgeError {
    /// The bridge's kind (`notArmed`, `agentBusy`, `entryNotFound`, `unsupported`, …), or
    /// `closed` when the connection went away.
    pub kind: String,
    /// Its sentence.
    pub message: String,
}

impl std::fmt::Display for BridgeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.kind)
    }
}

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Value, BridgeError>>>>>;

/// A connection to one bridge.
#[derive(Debug)]
pub struct BridgeClient {
    writer: tokio::sync::Mutex<OwnedWriteHalf>,
    pending: Pending,
    next: AtomicU64,
}

fn closed() -> BridgeError {
    BridgeError {
        kind: "closed".to_owned(),
        message: "the agent's bridge closed the connection".to_owned(),
    }
}

impl BridgeClient {
    /// Connects, says hello with `token`, and returns the client and the agent's state. Events
    /// go to `events` from then on.
    pub async fn connect(
        socket: &Path,
        token: &str,
        events: mpsc::UnboundedSender<(Value, std::time::Instant)>,
    ) -> Result<(BridgeClient, Value), BridgeError> {
        let stream = UnixStream::connect(socket).await.map_err(|e| BridgeError {
            kind: "unreachable".to_owned(),
            message: format!("cannot connect to {}: {e}", socket.display()),
        })?;
        let (read, write) = stream.into_split();
        let pending: Pending = Arc::default();
        let reader_pending = Arc::clone(&pending);
        tokio::spawn(async move {
            let mut lines = BufReader::new(read);
            let mut line = Vec::new();
            loop {
                line.clear();
                match lines.read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let Ok(message) = serde_json::from_slice::<Value>(&line) else {
                    tracing::warn!("bridge sent a line that is not JSON");
                    continue;
                };
                match message.get("id").and_then(Value::as_u64) {
                    Some(id) if message.get("ok").is_some() => {
                        let waiting = reader_pending.lock().ok().and_then(|mut p| p.remove(&id));
                        if let Some(tx) = waiting {
                            let _ = tx.send(answer_of(message));
                        }
                    }
                    _ => {
                        let _ = events.send((message, std::time::Instant::now()));
                    }
                }
            }
            let waiting: Vec<_> = reader_pending
                .lock()
                .map(|mut p| p.drain().map(|(_, tx)| tx).collect())
                .unwrap_or_default();
            for tx in waiting {
                let _ = tx.send(Err(closed()));
            }
            let _ = events.send((json!({"event": "closed"}), std::time::Instant::now()));
        });
        let client = BridgeClient {
            writer: tokio::sync::Mutex::new(write),
            pending,
            next: AtomicU64::new(1),
        };
        let state = client.call("hello", json!({ "token": token })).await?;
        Ok((client, state))
    }

    /// Sends `op` with `params` (an object) and waits for its answer.
    pub async fn call(&self, op: &str, params: Value) -> Result<Value, BridgeError> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let mut message = match params {
            Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        message.insert("id".to_owned(), id.into());
        message.insert("op".to_owned(), op.into());
        let mut line = serde_json::to_vec(&Value::Object(message)).map_err(|e| BridgeError {
            kind: "invalidParams".to_owned(),
            message: e.to_string(),
        })?;
        line.push(b'\n');
        let (tx, rx) = oneshot::channel();
        if let Ok(mut pending) = self.pending.lock() {
            pending.insert(id, tx);
        }
        let written = {
            let mut writer = self.writer.lock().await;
            writer.write_all(&line).await
        };
        if written.is_err() {
            if let Ok(mut pending) = self.pending.lock() {
                pending.remove(&id);
            }
            return Err(closed());
        }
        rx.await.unwrap_or_else(|_| Err(closed()))
    }
}

fn answer_of(message: Value) -> Result<Value, BridgeError> {
    if message.get("ok") == Some(&Value::Bool(true)) {
        return Ok(message.get("result").cloned().unwrap_or(Value::Null));
    }
    let error = message.get("error");
    let text = |key: &str, default: &str| {
        error
            .and_then(|e| e.get(key))
            .and_then(Value::as_str)
            .unwrap_or(default)
            .to_owned()
    };
    Err(BridgeError {
        kind: text("kind", "agentError"),
        message: text("message", "the bridge refused the request"),
    })
}
