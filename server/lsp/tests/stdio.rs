//! The real binary over stdio: framing, a round of requests, `shutdown` with `null` params (as
//! eglot sends it) and the `exit` code.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod support;

use serde_json::{json, Value};
use std::io::BufReader;
use std::process::{Command, Stdio};
use support::*;

struct Proc {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    next: i64,
}

impl Proc {
    fn start() -> Proc {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sessiontree"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn sessiontree lsp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Proc {
            child,
            stdin,
            stdout,
            next: 1,
        }
    }

    /// Sends a request and returns its response, skipping notifications and answering nothing.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        write_msg(
            &mut self.stdin,
            &json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}),
        );
        loop {
            let msg = read_msg(&mut self.stdout).expect("a response before EOF");
            if msg.get("id") == Some(&json!(id)) && msg.get("method").is_none() {
                return msg;
            }
        }
    }

    fn notify(&mut self, method: &str, params: Value) {
        write_msg(
            &mut self.stdin,
            &json!({"jsonrpc":"2.0","method":method,"params":params}),
        );
    }
}

#[test]
fn stdio_round_trip_shutdown_with_null_params_and_exit_code() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = copy_fixture("c06-branch-basic/omp/session.jsonl", dir.path(), "s.jsonl");
    let uri = uri(&file);
    let mut p = Proc::start();
    let init = p.request(
        "initialize",
        json!({"processId":null,"rootUri":null,"capabilities":{}}),
    );
    assert_eq!(
        init["result"]["capabilities"]["experimental"]["sessionTree"]["version"],
        json!(1),
        "{init}"
    );
    p.notify("initialized", json!({}));

    let open = p.request("sessionTree/open", json!({"uri": uri}));
    assert_eq!(open["result"]["dialect"], json!("omp"), "{open}");
    let rev = open["result"]["revision"].as_u64().expect("revision");

    let tree = p.request("sessionTree/tree", json!({"uri": uri}));
    assert_eq!(tree["result"]["total"], json!(6), "{tree}");

    let label = p.request(
        "sessionTree/setLabel",
        json!({"uri": uri, "targetId": "2ececf0f", "label": "start", "baseRevision": rev}),
    );
    assert!(label["result"]["entryId"].is_string(), "{label}");
    let append = p.request(
        "sessionTree/append",
        json!({"uri": uri, "text": "Hello from stdio"}),
    );
    assert!(
        append["result"]["revision"].as_u64() > label["result"]["revision"].as_u64(),
        "{append}"
    );

    let stale = p.request(
        "sessionTree/append",
        json!({"uri": uri, "text": "x", "baseRevision": rev}),
    );
    assert_eq!(
        stale["error"]["data"]["kind"],
        json!("staleRevision"),
        "{stale}"
    );

    let text = std::fs::read_to_string(&file).expect("read");
    assert!(text
        .lines()
        .last()
        .is_some_and(|l| l.contains("Hello from stdio")));

    // eglot sends `"params": null` for shutdown.
    let shutdown = p.request("shutdown", Value::Null);
    assert_eq!(shutdown.get("error"), None, "{shutdown}");
    assert_eq!(shutdown["result"], Value::Null);
    p.notify("exit", Value::Null);
    drop(p.stdin);
    let status = p.child.wait().expect("wait");
    assert!(status.success(), "exit status {status:?}");
}

#[test]
fn stdio_exit_without_shutdown_is_an_error_exit_or_clean() {
    // `exit` before `shutdown`: the server must stop promptly either way (LSP says code 1).
    let mut p = Proc::start();
    let _ = p.request(
        "initialize",
        json!({"processId":null,"rootUri":null,"capabilities":{}}),
    );
    p.notify("exit", Value::Null);
    drop(p.stdin);
    let status = p.child.wait().expect("wait");
    println!("exit without shutdown: {status:?}");
}
