//! The real binary over stdio: framing, a round of requests, `shutdown` with `null` params (as
//! eglot sends it) and the `exit` code.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod support;

use serde_json::{json, Value};
use sessiontree_testkit::lsp::Connection;
use std::process::{Command, Stdio};
use std::time::Duration;
use support::*;

/// The server over stdio, with the notifications and hooks (server requests) it sent.
struct Proc {
    conn: Connection,
    notes: Vec<Value>,
    hooks: Vec<Value>,
}

/// How long a test waits for a message before it fails.
const WAIT: Duration = Duration::from_secs(60);

impl Proc {
    fn start() -> Proc {
        Proc::start_with(&[])
    }

    fn start_with(env: &[(&str, &std::path::Path)]) -> Proc {
        let mut command = Command::new(env!("CARGO_BIN_EXE_sessiontree"));
        for (k, v) in env {
            command.env(k, v);
        }
        command.arg("lsp").stderr(Stdio::piped());
        Proc {
            conn: Connection::spawn(command).expect("spawn sessiontree lsp"),
            notes: Vec::new(),
            hooks: Vec::new(),
        }
    }

    /// Sends a request and returns its response, keeping notifications and answering hooks:
    /// a summary for beforeTree, go-ahead for beforeBranch.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.conn.send_request(method, params).expect("write");
        let (notes, hooks) = (&mut self.notes, &mut self.hooks);
        let on_other = |msg: &Value| match (msg.get("method"), msg.get("id")) {
            (Some(_), None) => {
                notes.push(msg.clone());
                None
            }
            (Some(method), Some(_)) => {
                hooks.push(msg.clone());
                Some(if method == "sessionTree/beforeTree" {
                    json!({"summary": {"summary": "Summary from the client."}})
                } else {
                    json!({"cancel": false})
                })
            }
            _ => None,
        };
        let (_, msg) = self
            .conn
            .response(id, WAIT, on_other)
            .unwrap_or_else(|e| panic!("a response to {method}: {e}"));
        msg
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.conn.notify(method, params).expect("write");
    }

    /// The next message the server sends.
    fn next_message(&self) -> Value {
        self.conn.next_message(WAIT).expect("message").1
    }

    /// Closes the server's input and waits for it to exit.
    fn close(self) -> std::process::ExitStatus {
        self.conn.close().expect("wait")
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
    assert_eq!(kind(&stale["error"]), "staleRevision", "{stale}");

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
    let status = p.close();
    assert!(status.success(), "exit status {status:?}");
}

#[test]
fn stdio_exit_without_shutdown_exits_with_code_1() {
    // `exit` before `shutdown`: the server stops promptly with code 1, as LSP says.
    let mut p = Proc::start();
    let _ = p.request(
        "initialize",
        json!({"processId":null,"rootUri":null,"capabilities":{}}),
    );
    p.notify("exit", Value::Null);
    let status = p.close();
    assert_eq!(status.code(), Some(1), "exit without shutdown: {status:?}");
}

#[test]
fn stdio_framing_batched_split_and_content_type() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = copy_fixture("c06-branch-basic/pi/session.jsonl", dir.path(), "s.jsonl");
    let uri = uri(&file);
    let mut p = Proc::start();
    let init = p.request(
        "initialize",
        json!({"processId":null,"rootUri":null,"capabilities":{}}),
    );
    assert!(init.get("result").is_some());
    // Three messages in one write.
    let mut batch = frame(&json!({"jsonrpc":"2.0","method":"initialized","params":{}}));
    batch.extend(frame(
        &json!({"jsonrpc":"2.0","id":1001,"method":"sessionTree/open","params":{"uri": uri}}),
    ));
    batch.extend(frame(
        &json!({"jsonrpc":"2.0","id":1002,"method":"sessionTree/rows","params":{"uri": uri}}),
    ));
    p.conn.write_raw(&batch).expect("write");
    let mut seen = std::collections::HashMap::new();
    while seen.len() < 2 {
        let msg = p.next_message();
        if let Some(id) = msg.get("id").and_then(Value::as_i64) {
            seen.insert(id, msg);
        }
    }
    assert_eq!(
        seen[&1001]["result"]["dialect"],
        json!("pi"),
        "{:?}",
        seen[&1001]
    );
    assert!(seen[&1002].get("result").is_some(), "{:?}", seen[&1002]);
    // One message split over three writes, with a Content-Type header.
    let body = serde_json::to_vec(
        &json!({"jsonrpc":"2.0","id":3,"method":"sessionTree/tree","params":{"uri": uri}}),
    )
    .expect("json");
    let mut msg = format!(
        "Content-Length: {}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n",
        body.len()
    )
    .into_bytes();
    msg.extend(body);
    for chunk in msg.chunks(msg.len() / 3 + 1) {
        p.conn.write_raw(chunk).expect("write");
        std::thread::sleep(std::time::Duration::from_millis(30));
    }
    let tree = loop {
        let m = p.next_message();
        if m.get("id") == Some(&json!(3)) {
            break m;
        }
    };
    assert_eq!(tree["result"]["total"], json!(6), "{tree}");
    // Then a clean stop.
    let _ = p.request("shutdown", Value::Null);
    p.notify("exit", Value::Null);
    assert!(p.close().success());
}

#[test]
fn stdio_list_sessions_honours_home_and_pi_coding_agent_dir() {
    let home = tempfile::tempdir().expect("tempdir");
    let h = home.path();
    let project = h.join("project");
    let agent = h.join("custom-agent");
    let omp = agent.join("sessions").join("-project");
    let pi = h
        .join(".pi/agent/sessions")
        .join(sessiontree_lsp::pi_dir_name(&project));
    for d in [&project, &omp, &pi] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    copy_fixture("c06-branch-basic/omp/session.jsonl", &omp, "o.jsonl");
    copy_fixture("c06-branch-basic/pi/session.jsonl", &pi, "p.jsonl");
    let mut p = Proc::start_with(&[("HOME", h), ("PI_CODING_AGENT_DIR", &agent)]);
    let _ = p.request(
        "initialize",
        json!({"processId":null,"rootUri":uri(&project),"capabilities":{}}),
    );
    p.notify("initialized", json!({}));
    let list = p.request("sessionTree/listSessions", json!({}));
    let agents: Vec<Value> = list["result"]["sessions"]
        .as_array()
        .map(|s| s.iter().map(|s| s["agent"].clone()).collect())
        .unwrap_or_default();
    assert_eq!(agents.len(), 2, "{list}");
    assert!(
        agents.contains(&json!("omp")) && agents.contains(&json!("pi")),
        "{list}"
    );
    let _ = p.request("shutdown", Value::Null);
    p.notify("exit", Value::Null);
    assert!(p.close().success());
}

#[test]
fn stdio_every_method_end_to_end() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = copy_fixture("c06-branch-basic/omp/session.jsonl", dir.path(), "s.jsonl");
    let mut p = Proc::start();
    let init = p.request(
        "initialize",
        json!({"processId":null,"rootUri":null,"capabilities":{"experimental":{"sessionTree":{"hooks":true}}},
               "initializationOptions":{"extraRoots":[dir.path()]}}),
    );
    assert!(init.get("result").is_some());
    p.notify("initialized", json!({}));
    let ok = |p: &mut Proc, method: &str, params: Value| -> Value {
        let msg = p.request(method, params);
        assert!(msg.get("error").is_none(), "{method}: {msg}");
        msg["result"].clone()
    };
    let list = ok(&mut p, "sessionTree/listSessions", json!({}));
    assert_eq!(list["sessions"].as_array().map(Vec::len), Some(1), "{list}");
    let u = ok(&mut p, "sessionTree/open", json!({"uri": uri(&file)}))["uri"].clone();
    assert!(
        !ok(&mut p, "sessionTree/rows", json!({"uri": u, "height": 40}))["lines"]
            .as_array()
            .is_some_and(Vec::is_empty)
    );
    assert_eq!(
        ok(&mut p, "sessionTree/tree", json!({"uri": u}))["total"],
        json!(6)
    );
    assert!(ok(
        &mut p,
        "sessionTree/entry",
        json!({"uri": u, "id": "c498f61c"})
    )["markdown"]
        .is_string());
    let ctx = ok(&mut p, "sessionTree/context", json!({"uri": u}));
    assert!(ctx["text"].as_str().is_some_and(|t| t.contains("Rome")));
    // Without the text (the answer written as text by the server's output): the rest is the same.
    let messages_only = ok(
        &mut p,
        "sessionTree/context",
        json!({"uri": u, "withText": false}),
    );
    let mut without_text = ctx.clone();
    if let Some(fields) = without_text.as_object_mut() {
        fields.remove("text");
    }
    assert_eq!(messages_only, without_text);
    let nav = ok(
        &mut p,
        "sessionTree/navigate",
        json!({"uri": u, "targetId": "c498f61c", "summarize": "summarize"}),
    );
    assert!(nav["summaryEntryId"].is_string(), "{nav}");
    assert_eq!(
        p.hooks.first().map(|h| h["method"].clone()),
        Some(json!("sessionTree/beforeTree"))
    );
    let branch = ok(
        &mut p,
        "sessionTree/branch",
        json!({"uri": u, "entryId": "c498f61c"}),
    );
    assert_eq!(branch["editorText"], json!("Paris"));
    assert!(ok(
        &mut p,
        "sessionTree/setLabel",
        json!({"uri": u, "targetId": "2ececf0f", "label": "start"})
    )["entryId"]
        .is_string());
    assert!(ok(
        &mut p,
        "sessionTree/append",
        json!({"uri": u, "text": "Lyon?"})
    )["entryId"]
        .is_string());
    assert_eq!(
        ok(
            &mut p,
            "sessionTree/setName",
            json!({"uri": u, "name": "Trips"})
        )["name"],
        json!("Trips")
    );
    assert_eq!(
        ok(
            &mut p,
            "sessionTree/nameFromPlanTitle",
            json!({"uri": u, "planTitle": "x-y"})
        )["applied"],
        json!(false)
    );
    let symbols = ok(
        &mut p,
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": u}}),
    );
    assert!(symbols.as_array().is_some_and(|s| !s.is_empty()));
    assert_eq!(
        ok(&mut p, "sessionTree/close", json!({"uri": u}))["closed"],
        json!(true)
    );
    let methods: Vec<String> = p
        .notes
        .iter()
        .filter_map(|n| n["method"].as_str().map(str::to_owned))
        .collect();
    for want in [
        "sessionTree/didChange",
        "sessionTree/didNavigate",
        "sessionTree/didBranch",
    ] {
        assert!(
            methods.iter().any(|m| m == want),
            "{want} missing in {methods:?}"
        );
    }
    let _ = p.request("shutdown", Value::Null);
    p.notify("exit", Value::Null);
    assert!(p.close().success());
}

#[test]
fn stdio_live_follow_while_another_process_appends() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = copy_fixture("c06-branch-basic/pi/session.jsonl", dir.path(), "s.jsonl");
    let mut p = Proc::start();
    let _ = p.request(
        "initialize",
        json!({"processId":null,"rootUri":null,"capabilities":{}}),
    );
    p.notify("initialized", json!({}));
    let u = p.request("sessionTree/open", json!({"uri": uri(&file)}))["result"]["uri"].clone();
    let line = r#"{"type":"message","id":"feed0001","parentId":"5bbe7da7","timestamp":"2025-01-01T00:01:00.000Z","message":{"role":"user","content":"from another process","timestamp":1735689660000}}"#;
    let status = Command::new("sh")
        .arg("-c")
        .arg("printf '%s\\n' \"$1\" >> \"$2\"")
        .arg("sh")
        .arg(line)
        .arg(&file)
        .status()
        .expect("sh");
    assert!(status.success());
    // The notification arrives on its own (watcher or poll); read until it does.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let change = loop {
        assert!(std::time::Instant::now() < deadline, "no didChange");
        let msg = p.next_message();
        if msg["method"] == json!("sessionTree/didChange") {
            break msg["params"].clone();
        }
    };
    assert_eq!(change["uri"], u);
    assert_eq!(change["reason"], json!("follow"));
    assert_eq!(change["newEntryIds"], json!(["feed0001"]));
    let _ = p.request("shutdown", Value::Null);
    p.notify("exit", Value::Null);
    assert!(p.close().success());
}
