//! LSP message framing for tests that talk to the server over a byte stream (`Content-Length`
//! headers, then the JSON body), blocking.

use serde_json::Value;
use std::io::{BufRead, Write};
use std::path::Path;

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

/// The body length a header block announces: reads header lines up to the blank one; `None` at
/// the end of the stream.
pub fn read_header(r: &mut impl BufRead) -> Option<usize> {
    let mut len = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            return len;
        }
        if let Some(v) = line.strip_prefix("Content-Length:") {
            len = v.trim().parse::<usize>().ok();
        }
    }
}

/// Reads one framed message; `None` at the end of the stream or on a body that is not JSON.
pub fn read_msg(r: &mut impl BufRead) -> Option<Value> {
    let len = read_header(r)?;
    let mut body = vec![0; len];
    r.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}
