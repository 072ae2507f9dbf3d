//! A running `sessiontree lsp` driven over stdio (the test support's [`Connection`]: a reader
//! thread timestamps each message as its last byte arrives, so an answer is timed to its
//! arrival, not to the end of this client's parse, which grows with the answer's size).

use crate::AnyResult;
use serde_json::{json, Value};
use sessiontree_testkit::lsp::Connection;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A running `sessiontree lsp`; requests from the server are answered with `null`,
/// notifications dropped.
pub struct Server {
    conn: Connection,
}

/// Answers every request from the server with `null`.
fn null_answer(_: &Value) -> Option<Value> {
    Some(Value::Null)
}

impl Server {
    /// Starts the server in `home` and initializes it with `root` as its extra session root.
    pub fn start(root: &Path, home: &Path) -> AnyResult<Server> {
        let mut command = Command::new(env!("CARGO_BIN_EXE_sessiontree"));
        command
            .arg("lsp")
            .env("HOME", home)
            .env("SESSIONTREE_LOG", "warn")
            .stderr(Stdio::null());
        let mut server = Server {
            conn: Connection::spawn(command)?,
        };
        let empty = home.join("agents");
        std::fs::create_dir_all(&empty)?;
        server.request(
            "initialize",
            json!({
                "processId": null, "rootUri": null, "capabilities": {},
                "initializationOptions": {
                    "extraRoots": [root.display().to_string()],
                    "piAgentDir": empty.display().to_string(),
                    "ompAgentDir": empty.display().to_string(),
                    "home": home.display().to_string(),
                },
            }),
        )?;
        server.notify("initialized", json!({}))?;
        Ok(server)
    }

    pub fn notify(&mut self, method: &str, params: Value) -> AnyResult<()> {
        Ok(self.conn.notify(method, params)?)
    }

    /// Sends a request; returns the result and the time to its response.
    pub fn request(&mut self, method: &str, params: Value) -> AnyResult<(Value, Duration)> {
        let started = Instant::now();
        let id = self.conn.send_request(method, params)?;
        let (at, msg) = self
            .conn
            .response(id, Duration::from_secs(120), null_answer)?;
        if let Some(err) = msg.get("error") {
            return Err(format!("{method}: {err}").into());
        }
        Ok((msg["result"].clone(), at.duration_since(started)))
    }

    /// Waits for a notification `method`; the time from `since` to its arrival.
    pub fn wait_for(&mut self, method: &str, since: Instant) -> AnyResult<Duration> {
        let (at, _) = self
            .conn
            .notification(method, Duration::from_secs(30), null_answer)?;
        Ok(at.duration_since(since))
    }

    pub fn peak_rss_mb(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.conn.pid()))
            .unwrap_or_default();
        status
            .lines()
            .find(|l| l.starts_with("VmHWM:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<f64>().ok())
            .map_or(f64::NAN, |kb| kb / 1024.0)
    }

    pub fn stop(self) {
        self.conn.stop();
    }
}
