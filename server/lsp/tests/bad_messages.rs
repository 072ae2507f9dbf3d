//! The real binary over stdio, sent messages it cannot read: each gets its JSON-RPC error
//! (`id: null`, the code, `data.kind`, a message naming the problem) and the server goes on
//! serving every later message; `$/` requests are answered MethodNotFound and `$/`
//! notifications nothing; only an input that cannot be followed (a message announced larger
//! than the limit) ends the server, after its answer and a log line saying why.
//!
//! The client here reads the server's output strictly (every frame exactly
//! `Content-Length: N\r\n\r\n` and a JSON body), so an answer written inside another message
//! fails the test. A long guard stops a hung server; nothing is timed.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use serde_json::{json, Value};
use sessiontree_testkit::lsp::{frame, frame_body, is_notification, Connection, NoResponse};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

/// How long a message may take before the server is taken for hung.
const GUARD: Duration = Duration::from_secs(120);

struct Server {
    conn: Connection,
    stderr: std::thread::JoinHandle<String>,
    dir: tempfile::TempDir,
}

impl Server {
    /// The server, initialized with a temporary folder (holding a copy of the example pi
    /// session) as its workspace.
    fn start() -> Server {
        let mut command = Command::new(env!("CARGO_BIN_EXE_sessiontree"));
        command
            .arg("lsp")
            .env("SESSIONTREE_LOG", "info")
            .stderr(Stdio::piped());
        let mut conn = Connection::spawn_strict(command).expect("spawn sessiontree lsp");
        let mut stderr = conn.child().stderr.take().expect("stderr");
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        let dir = tempfile::tempdir().expect("tempdir");
        let mut server = Server { conn, stderr, dir };
        let root = format!("file://{}", server.dir.path().display());
        let init = server.request(
            1,
            "initialize",
            json!({"processId": null, "rootUri": root, "capabilities": {}}),
        );
        assert!(init.get("result").is_some(), "{init}");
        server.send(&frame(
            &json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
        ));
        server
    }

    fn example(&self) -> PathBuf {
        let to = self.dir.path().join("example.jsonl");
        let from =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/csv-importer.pi.jsonl");
        std::fs::copy(&from, &to).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
        to
    }

    fn send(&mut self, bytes: &[u8]) {
        self.conn.write_raw(bytes).expect("write to the server");
    }

    /// The next message of the server's (failing on a hang or on output that is not frames).
    fn next(&self) -> Value {
        match self.conn.next_message(GUARD) {
            Ok((_, value)) => value,
            Err(e @ NoResponse::Broken(_)) => panic!("{e}"),
            Err(e) => panic!("no message from the server ({e}): it hangs or it ended"),
        }
    }

    /// Sends a request and returns its answer; messages before it must be notifications.
    fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(&frame(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        ));
        loop {
            let msg = self.next();
            if msg.get("id") == Some(&json!(id)) {
                return msg;
            }
            assert!(
                msg.get("method").is_some() && msg.get("id").is_none(),
                "a message before the answer to {method}: {msg}"
            );
        }
    }

    /// A request the server must serve after what the test sent: opening the example session.
    fn still_serves(&mut self, id: i64) {
        let uri = format!("file://{}", self.example().display());
        let open = self.request(id, "sessionTree/open", json!({"uri": uri}));
        assert_eq!(open["result"]["dialect"], json!("pi"), "{open}");
    }

    /// `shutdown`, `exit`, then everything the server wrote until it ended: the messages that
    /// are not notifications (there should be none), its exit status and its log.
    fn finish(mut self) -> (Vec<Value>, ExitStatus, String) {
        let shutdown = self.request(9000, "shutdown", Value::Null);
        assert_eq!(shutdown.get("result"), Some(&Value::Null), "{shutdown}");
        self.send(&frame(&json!({"jsonrpc": "2.0", "method": "exit"})));
        self.conn.close_input();
        self.end()
    }

    /// Everything until the server ends, and how it ended.
    fn end(mut self) -> (Vec<Value>, ExitStatus, String) {
        let mut rest = Vec::new();
        loop {
            match self.conn.next_message(GUARD) {
                Ok((_, msg)) if is_notification(&msg) => {}
                Ok((_, msg)) => rest.push(msg),
                Err(NoResponse::Closed) => break,
                Err(e @ NoResponse::Broken(_)) => panic!("{e}"),
                Err(e) => panic!("the server did not end ({e})"),
            }
        }
        let status = self.conn.child().wait().expect("wait");
        let log = self.stderr.join().unwrap_or_default();
        (rest, status, log)
    }
}

/// The error answer of a message the server cannot read.
fn refusal(code: i64, kind: &str, message: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "error": {"code": code, "message": message, "data": {"kind": kind}},
        "id": null,
    })
}

/// Sends `bytes`, expects `answer` as the next message, then the server serves a request and
/// shuts down cleanly, with nothing else said and the refusal in its log.
fn answered_then_served(bytes: &[u8], answer: Value) {
    let mut server = Server::start();
    server.send(bytes);
    assert_eq!(server.next(), answer);
    server.still_serves(2);
    let (rest, status, log) = server.finish();
    assert_eq!(rest, Vec::<Value>::new(), "messages nobody asked for");
    assert!(status.success(), "exit status {status:?}; log:\n{log}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        log.contains(&format!(
            "answered a message that cannot be read ({}): {message}",
            answer["error"]["data"]["kind"].as_str().unwrap_or_default()
        )),
        "the log does not name the refusal:\n{log}"
    );
}

#[test]
fn a_body_that_is_not_json_is_answered_and_the_server_serves_on() {
    answered_then_served(
        &frame_body(br#"{"jsonrpc":"2.0","#),
        refusal(
            -32700,
            "parseError",
            "the message is not JSON: EOF while parsing a value at line 1 column 17",
        ),
    );
}

#[test]
fn a_body_that_is_not_utf8_is_answered_and_the_server_serves_on() {
    answered_then_served(
        &frame_body(b"{\"jsonrpc\":\"2.0\",\"method\":\"x\xff\"}"),
        refusal(
            -32700,
            "parseError",
            "the message is not UTF-8 (an invalid byte at offset 28)",
        ),
    );
}

#[test]
fn a_batch_is_answered_and_the_server_serves_on() {
    answered_then_served(
        &frame_body(br#"[{"jsonrpc":"2.0","id":5,"method":"shutdown"},{"jsonrpc":"2.0","method":"exit"}]"#),
        refusal(-32600, "invalidRequest", "a batch of 2 messages: LSP does not use JSON-RPC batches (send each message in a frame of its own)"),
    );
}

#[test]
fn a_bare_number_is_answered_and_the_server_serves_on() {
    answered_then_served(
        &frame_body(b"42"),
        refusal(
            -32600,
            "invalidRequest",
            "a number (42) is not a message (a message is a JSON object)",
        ),
    );
}

#[test]
fn nesting_deeper_than_the_limit_is_answered_and_the_server_serves_on() {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"sessionTree/tree","params":{}{}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    answered_then_served(
        &frame_body(body.as_bytes()),
        refusal(-32700, "parseError", "the message nests arrays and objects more than 127 levels deep (recursion limit exceeded at line 1 column 188)"),
    );
}

#[test]
fn a_fractional_id_is_answered_and_the_server_serves_on() {
    answered_then_served(
        &frame_body(br#"{"jsonrpc":"2.0","id":1.5,"method":"shutdown"}"#),
        refusal(-32600, "invalidRequest", "the id 1.5 is not an integer"),
    );
}

#[test]
fn an_id_beyond_64_bits_is_answered_and_the_server_serves_on() {
    answered_then_served(
        &frame_body(br#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"shutdown"}"#),
        refusal(
            -32600,
            "invalidRequest",
            "the id 18446744073709551616 is beyond the range of a signed 64-bit integer",
        ),
    );
}

#[test]
fn a_message_without_jsonrpc_is_answered_and_the_server_serves_on() {
    answered_then_served(
        &frame_body(br#"{"id":7,"method":"shutdown"}"#),
        refusal(
            -32600,
            "invalidRequest",
            "the message has no \"jsonrpc\": \"2.0\"",
        ),
    );
}

#[test]
fn an_empty_body_is_answered_and_the_server_serves_on() {
    answered_then_served(
        &frame_body(b""),
        refusal(-32700, "parseError", "the message is empty"),
    );
}

#[test]
fn a_header_that_cannot_be_read_is_answered_and_the_next_frame_served() {
    answered_then_served(
        b"Content-Length: twelve\r\n\r\n{\"a\":1}",
        refusal(
            -32700,
            "parseError",
            "the Content-Length `twelve` is not a number of bytes",
        ),
    );
}

#[test]
fn an_unframed_message_is_answered_once_and_a_frame_glued_to_it_served() {
    let mut server = Server::start();
    // A message sent without its header, the next one glued to it.
    let mut bytes = br#"{"jsonrpc":"2.0","id":77,"method":"shutdown"}"#.to_vec();
    let uri = format!("file://{}", server.example().display());
    bytes.extend(frame(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "sessionTree/open", "params": {"uri": uri}}),
    ));
    server.send(&bytes);
    let mut got = [server.next(), server.next()];
    got.sort_by_key(|m| m["id"].as_i64());
    assert_eq!(
        got[0],
        refusal(-32700, "parseError", "`{` is not a message header line")
    );
    assert_eq!(got[1]["result"]["dialect"], json!("pi"), "{}", got[1]);
    let (rest, status, _) = server.finish();
    assert_eq!(rest, Vec::<Value>::new());
    assert!(status.success(), "{status:?}");
}

#[test]
fn dollar_requests_are_answered_method_not_found_and_dollar_notifications_not_at_all() {
    let mut server = Server::start();
    server.send(&frame(
        &json!({"jsonrpc": "2.0", "method": "$/unknownNotification", "params": {}}),
    ));
    server.send(&frame(
        &json!({"jsonrpc": "2.0", "method": "$/setTrace", "params": {"value": "off"}}),
    ));
    let answer = server.request(5, "$/unknownRequest", json!({}));
    assert_eq!(
        answer,
        json!({
            "jsonrpc": "2.0",
            "error": {"code": -32601, "message": "Method not found", "data": "$/unknownRequest"},
            "id": 5,
        })
    );
    let answer = server.request(6, "$/cancelRequest", json!({"id": 99}));
    assert_eq!(answer["error"]["code"], json!(-32600), "{answer}");
    server.still_serves(7);
    let (rest, status, _) = server.finish();
    assert_eq!(rest, Vec::<Value>::new(), "the notifications were answered");
    assert!(status.success(), "{status:?}");
}

#[test]
fn refusals_go_out_between_whole_answers_under_pipelined_load() {
    let mut server = Server::start();
    let uri = format!("file://{}", server.example().display());
    let open = server.request(2, "sessionTree/open", json!({"uri": uri}));
    assert!(open.get("result").is_some(), "{open}");
    // Context answers are spliced into the output as text: the path that could tear.
    let mut bytes = Vec::new();
    for n in 0..40 {
        bytes.extend(frame(&json!({"jsonrpc": "2.0", "id": 100 + n, "method": "sessionTree/context", "params": {"uri": uri}})));
        bytes.extend(frame_body(b"[1]"));
        bytes.extend_from_slice(b"junk\r\n\r\n");
    }
    server.send(&bytes);
    let (mut answers, mut refusals) = (0, 0);
    while answers < 40 || refusals < 80 {
        let msg = server.next();
        if msg["id"].is_null() {
            refusals += 1;
            assert_eq!(
                msg["error"]["data"]["kind"]
                    .as_str()
                    .map(|k| k == "invalidRequest" || k == "parseError"),
                Some(true),
                "{msg}"
            );
        } else if msg.get("id").is_some() {
            answers += 1;
            assert!(msg["result"]["messages"].is_array(), "{msg}");
        }
    }
    assert_eq!((answers, refusals), (40, 80));
    let (rest, status, _) = server.finish();
    assert_eq!(rest, Vec::<Value>::new());
    assert!(status.success(), "{status:?}");
}

#[test]
fn a_message_announced_over_the_limit_is_answered_and_ends_the_server_with_a_reason() {
    let mut server = Server::start();
    server.send(b"Content-Length: 5000000000\r\n\r\n{}");
    let why = "a message of 5000000000 bytes was announced (Content-Length), over the limit of 1024 MiB: the rest of the input cannot be read";
    assert_eq!(server.next(), refusal(-32700, "parseError", why));
    // The client still holds the input open: the server ends on its own.
    let (rest, status, log) = server.end();
    assert_eq!(rest, Vec::<Value>::new());
    // No `shutdown` came: LSP's exit code 1.
    assert_eq!(status.code(), Some(1), "{status:?}; log:\n{log}");
    assert!(
        log.contains(&format!("ending the connection: {why}")),
        "{log}"
    );
}
