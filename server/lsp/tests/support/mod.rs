//! Test support: fixture copies and LSP framing helpers shared by the server tests.
#![allow(dead_code)]

use serde_json::Value;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

/// The in-process client.
pub mod inproc;

/// The real agents, the model server and the real server over stdio.
pub mod agents;

/// The shared conformance fixtures.
pub fn fixture(rel: &str) -> PathBuf {
    let shared = std::env::var("SESSIONTREE_SHARED").unwrap_or_else(|_| "/work/shared".to_owned());
    Path::new(&shared).join("conformance").join(rel)
}

/// Copies a fixture into `dir` under `name` and returns the copy.
pub fn copy_fixture(rel: &str, dir: &Path, name: &str) -> PathBuf {
    let to = dir.join(name);
    std::fs::copy(fixture(rel), &to).unwrap_or_else(|e| panic!("copy {rel}: {e}"));
    to
}

/// `file://` URI of a path.
pub fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// One framed message.
pub fn frame(value: &Value) -> Vec<u8> {
    let body = serde_json::to_vec(value).unwrap_or_default();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend(body);
    out
}

/// Writes one framed message.
pub fn write_msg(w: &mut impl Write, value: &Value) {
    w.write_all(&frame(value)).expect("write");
    w.flush().expect("flush");
}

/// Reads one framed message (blocking).
pub fn read_msg(r: &mut impl BufRead) -> Option<Value> {
    let mut len = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
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
    r.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}
