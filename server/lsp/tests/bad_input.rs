//! The bad input matrix: every client → server `sessionTree/*` request (from the protocol's own
//! catalog) with malformed, missing, mistyped, oversized and hostile params, plus hostile files
//! (a 10 MB line, non-UTF-8 bytes, devices, `..` and symlinks). Every refusal is a JSON-RPC error
//! with `data.kind`, a refused request leaves the session file byte-identical, the server answers
//! the next request, and what the panels draw (rows, tree, outline) carries no terminal escapes or
//! other C0 control characters.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod support;

use serde_json::{json, Value};
use sessiontree_protocol::Direction;
use sessiontree_protocol::{catalog, MethodKind};
use std::path::Path;
use support::inproc::{Client, Opened};
use support::*;

const OMP: &str = "c06-branch-basic/omp/session.jsonl";
const U1: &str = "2ececf0f";

const HOSTILE: &[&str] = &[
    "\u{1b}[31mred\u{1b}[0m",
    "\u{1b}]0;title\u{7}",
    "a\u{0}b\u{8}\u{7f}c",
    "\r\n\t\u{b}\u{c}",
    "\u{202e}reversed\u{2028}\u{2029}",
    "../../../../etc/passwd",
    "",
    "   ",
];

/// No ESC and no C0 control (nor DEL) anywhere in a string a panel draws.
fn assert_drawable(what: &str, text: &str) {
    assert!(
        !text.chars().any(|c| c < ' ' || c == '\u{7f}'),
        "{what} carries a control character: {text:?}"
    );
}

fn walk_strings<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(s) => out.push(s),
        Value::Array(a) => a.iter().for_each(|v| walk_strings(v, out)),
        Value::Object(m) => m.values().for_each(|v| walk_strings(v, out)),
        _ => {}
    }
}

/// Every variant of one method's example params.
fn variants(example: &Value, session_uri: &str) -> Vec<Value> {
    let mut out = vec![
        Value::Null,
        json!([]),
        json!({}),
        json!("params"),
        json!(42),
    ];
    let Value::Object(map) = example else {
        return out;
    };
    let mut base = map.clone();
    if base.contains_key("uri") {
        base.insert("uri".into(), session_uri.into());
    }
    for key in map.keys() {
        let mut without = base.clone();
        without.remove(key);
        out.push(Value::Object(without));
        for wrong in [
            json!(42),
            json!(-1),
            json!(1e300),
            json!(true),
            json!([]),
            json!({"a": 1}),
            Value::Null,
            json!(u64::MAX),
        ] {
            let mut broken = base.clone();
            broken.insert(key.clone(), wrong);
            out.push(Value::Object(broken));
        }
        for hostile in HOSTILE {
            let mut broken = base.clone();
            broken.insert(key.clone(), (*hostile).into());
            out.push(Value::Object(broken));
        }
    }
    for uri in [
        "not a uri",
        "http://example.invalid/s.jsonl",
        "file:///dev/zero",
        "file:///proc/self/mem",
        "file:///etc/passwd",
        "file:///tmp/../etc/shadow",
        "file:///nonexistent/s.jsonl",
        "file://",
    ] {
        if base.contains_key("uri") {
            let mut broken = base.clone();
            broken.insert("uri".into(), uri.into());
            out.push(Value::Object(broken));
        }
    }
    out
}

async fn alive(c: &Client, uri: &str) {
    let tree = c.request("sessionTree/tree", json!({"uri": uri})).await;
    assert!(
        tree.get("result").is_some(),
        "the server stopped answering: {tree}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_with_malformed_params_is_refused_cleanly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let c = Client::plain().await;
    let Opened {
        uri: session_uri,
        file,
        ..
    } = c.open_copy(dir.path(), OMP).await;
    let (mut tried, mut refused, mut answered) = (0usize, 0usize, 0usize);
    let mut methods = 0;
    for doc in catalog() {
        if doc.direction != Direction::ClientToServer || doc.kind != MethodKind::Request {
            continue;
        }
        methods += 1;
        for params in variants(&doc.params, &session_uri) {
            let before = std::fs::read(&file).expect("read");
            let msg = c.request(doc.method, params.clone()).await;
            tried += 1;
            if msg.get("error").is_some() {
                refused += 1;
                assert!(
                    !kind(&msg["error"]).is_empty(),
                    "{} {params}: an error without data.kind: {msg}",
                    doc.method
                );
                assert!(
                    msg["error"]["message"]
                        .as_str()
                        .is_some_and(|m| !m.is_empty()),
                    "{msg}"
                );
                assert_eq!(
                    std::fs::read(&file).expect("read"),
                    before,
                    "{} {params}: a refused request wrote to the file",
                    doc.method
                );
            } else {
                answered += 1;
                assert!(msg.get("result").is_some(), "{msg}");
            }
            // A hostile value that was accepted must still draw safely.
            if doc.method == "sessionTree/rows" {
                for line in msg["result"]["lines"].as_array().into_iter().flatten() {
                    assert_drawable("a rows line", line.as_str().unwrap_or(""));
                }
            }
            alive(&c, &session_uri).await;
        }
        // Sessions opened or forked by accepted variants stay open; the session's own file must
        // still load, whole.
        let text = std::fs::read_to_string(&file).expect("read");
        assert!(text.ends_with('\n'));
    }
    println!(
        "bad input matrix: {methods} methods, {tried} malformed/hostile requests ({refused} refused with data.kind and nothing written, {answered} answered safely); the server answered after every one"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_and_escape_characters_never_reach_a_panel() {
    let dir = tempfile::tempdir().expect("tempdir");
    let c = Client::plain().await;
    let Opened { uri: u, file, .. } = c.open_copy(dir.path(), OMP).await;
    for hostile in HOSTILE {
        let label = c
            .request(
                "sessionTree/setLabel",
                json!({"uri": u, "targetId": U1, "label": hostile}),
            )
            .await;
        assert!(
            label.get("result").is_some() || !kind(&label["error"]).is_empty(),
            "{label}"
        );
        let text = format!("x{hostile}y");
        c.ok("sessionTree/append", json!({"uri": u, "text": text}))
            .await;
        c.ok(
            "sessionTree/append",
            json!({"uri": u, "kind": "custom", "text": text, "customType": hostile, "display": true}),
        )
        .await;
        let name = c
            .request("sessionTree/setName", json!({"uri": u, "name": hostile}))
            .await;
        assert!(
            name.get("result").is_some() || !kind(&name["error"]).is_empty(),
            "{name}"
        );
    }
    for filter in ["default", "noTools", "userOnly", "labeledOnly", "all"] {
        for search in ["", "red", "\u{1b}"] {
            let rows = c
                .ok(
                    "sessionTree/rows",
                    json!({"uri": u, "filter": filter, "search": search, "width": 80, "height": 200}),
                )
                .await;
            for line in rows["lines"].as_array().expect("lines") {
                assert_drawable("a rows line", line.as_str().expect("str"));
            }
            for row in rows["rows"].as_array().expect("rows") {
                for key in ["prefix", "text", "label"] {
                    assert_drawable(key, row[key].as_str().unwrap_or(""));
                }
            }
        }
    }
    let tree = c.ok("sessionTree/tree", json!({"uri": u})).await;
    let mut strings = Vec::new();
    for node in tree["nodes"].as_array().expect("nodes") {
        for key in ["text", "label", "preview", "title"] {
            if let Some(s) = node[key].as_str() {
                strings.push(s.to_owned());
            }
        }
    }
    for s in &strings {
        assert_drawable("a tree node", s);
    }
    let symbols = c
        .ok(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": u}}),
        )
        .await;
    let mut names = Vec::new();
    walk_strings(&symbols, &mut names);
    for s in names {
        assert_drawable("an outline string", s);
    }
    // The session still loads as written, in full.
    sessiontree_core::Session::open(&file, sessiontree_core::OpenOptions::default())
        .expect("loads");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_values_are_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let c = Client::plain().await;
    let Opened { uri: u, file, .. } = c.open_copy(dir.path(), OMP).await;
    let before = std::fs::read(&file).expect("read");
    let huge = "L".repeat(100 << 20);
    // Names and plan titles are refused at the same check; 1 MB keeps the test quick.
    let big = "N".repeat(1 << 20);
    let over_label = "l".repeat(10_001);
    let cases = [
        (
            "sessionTree/setLabel",
            json!({"uri": u, "targetId": U1, "label": huge}),
            "the label has 104857600 characters, more than the 10000 allowed",
        ),
        (
            "sessionTree/setLabel",
            json!({"uri": u, "targetId": U1, "label": over_label}),
            "the label has 10001 characters, more than the 10000 allowed",
        ),
        (
            "sessionTree/append",
            json!({"uri": u, "text": huge}),
            "the text has 104857600 characters, more than the 500000 allowed",
        ),
        (
            "sessionTree/append",
            json!({"uri": u, "kind": "custom", "text": "t", "customType": over_label}),
            "the custom type has 10001 characters, more than the 10000 allowed",
        ),
        (
            "sessionTree/setName",
            json!({"uri": u, "name": big}),
            "the name has 1048576 characters, more than the 10000 allowed",
        ),
        (
            "sessionTree/nameFromPlanTitle",
            json!({"uri": u, "planTitle": big}),
            "the plan title has 1048576 characters, more than the 10000 allowed",
        ),
    ];
    for (method, params, names) in cases {
        let msg = c.request(method, params).await;
        assert_eq!(
            kind(&msg["error"]),
            "invalidParams",
            "{method}: {}",
            &msg.to_string()[..200.min(msg.to_string().len())]
        );
        let message = msg["error"]["message"].as_str().unwrap_or("");
        assert!(message.len() < 1000, "the error does not echo the value");
        assert!(
            message.starts_with(names),
            "{method}: the error names the field and the limit: {message}"
        );
        assert_eq!(
            std::fs::read(&file).expect("read"),
            before,
            "{method} wrote"
        );
        alive(&c, &u).await;
    }
    // At the limits, the values are taken (counted in characters, not bytes).
    let label = "é".repeat(10_000);
    c.ok(
        "sessionTree/setLabel",
        json!({"uri": u, "targetId": U1, "label": label}),
    )
    .await;
    let text = "é".repeat(500_000);
    c.ok("sessionTree/append", json!({"uri": u, "text": text}))
        .await;
    assert_ne!(std::fs::read(&file).expect("read"), before, "written");
}

fn write_session(dir: &Path, name: &str, extra: &[u8]) -> std::path::PathBuf {
    let mut bytes = std::fs::read(fixture("c06-branch-basic/pi/session.jsonl")).expect("fixture");
    bytes.extend_from_slice(extra);
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write");
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_files_load_and_render_safely() {
    let dir = tempfile::tempdir().expect("tempdir");
    let c = Client::plain().await;

    // A 10 MB line (an assistant message with a huge text, ESC included).
    let big = serde_json::to_string(&json!({
        "type": "message", "id": "b1gb1g00", "parentId": "5bd8e4c8", "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": format!("\u{1b}[2J{}", "z".repeat(10 << 20)), "timestamp": 1}
    }))
    .expect("json");
    let mut extra = big.into_bytes();
    extra.push(b'\n');
    // Non-UTF-8 bytes inside a line, and a line that is not JSON at all.
    extra.extend_from_slice(b"{\"type\":\"custom\",\"customType\":\"x\xff\xfe\",\"id\":\"ba5e0001\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:00.000Z\"}\n");
    extra.extend_from_slice(b"\x00\x01\x1b[31m not json\n");
    let file = write_session(dir.path(), "hostile.jsonl", &extra);
    let before = std::fs::read(&file).expect("read");
    let open = c.ok("sessionTree/open", json!({"uri": uri(&file)})).await;
    let u = open["uri"].as_str().expect("uri").to_owned();
    let kinds: Vec<&str> = open["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter_map(|d| d["kind"].as_str())
        .collect();
    assert!(kinds.contains(&"invalidUtf8"), "{kinds:?}");
    assert!(kinds.contains(&"malformedLine"), "{kinds:?}");
    for d in open["diagnostics"].as_array().expect("diagnostics") {
        assert_drawable("a diagnostic", d["message"].as_str().unwrap_or(""));
    }
    let rows = c
        .ok(
            "sessionTree/rows",
            json!({"uri": u, "filter": "all", "width": 120, "height": 100}),
        )
        .await;
    for line in rows["lines"].as_array().expect("lines") {
        let line = line.as_str().expect("str");
        assert_drawable("a rows line", line);
        assert!(line.len() < 10_000, "a row is cut, not 10 MB long");
    }
    let entry = c
        .ok("sessionTree/entry", json!({"uri": u, "id": "b1gb1g00"}))
        .await;
    assert!(entry["entry"].is_object());
    c.ok("sessionTree/context", json!({"uri": u})).await;
    c.ok("sessionTree/context", json!({"uri": u, "leaf": "b1gb1g00"}))
        .await;
    assert_eq!(std::fs::read(&file).expect("read"), before, "reading wrote");

    // Devices, folders, `..` and symlinks: refused with a kind, nothing created or written.
    let folder = dir.path().join("folder.jsonl");
    std::fs::create_dir(&folder).expect("mkdir");
    let link_out = dir.path().join("passwd.jsonl");
    std::os::unix::fs::symlink("/etc/passwd", &link_out).expect("symlink");
    let dotdot = format!(
        "file://{}/sub/../../{}/hostile.jsonl",
        dir.path().display(),
        dir.path().file_name().expect("name").to_string_lossy()
    );
    std::fs::create_dir(dir.path().join("sub")).expect("mkdir");
    for bad in [
        "file:///dev/zero".to_owned(),
        "file:///dev/null".to_owned(),
        uri(&folder),
        uri(&link_out),
        uri(&dir.path().join("missing.jsonl")),
    ] {
        let msg = c.request("sessionTree/open", json!({"uri": bad})).await;
        assert!(!kind(&msg["error"]).is_empty(), "{bad}: {msg}");
        let msg = c
            .request("sessionTree/append", json!({"uri": bad, "text": "x"}))
            .await;
        assert!(!kind(&msg["error"]).is_empty(), "{bad}: {msg}");
    }
    assert!(!dir.path().join("missing.jsonl").exists());
    // `..` resolves to the same session, not a second copy.
    let again = c.ok("sessionTree/open", json!({"uri": dotdot})).await;
    assert_eq!(again["sessionId"], open["sessionId"]);
    // A symlink to a session is the same session (one actor, one writer).
    let link_in = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(&file, &link_in).expect("symlink");
    let via_link = c
        .ok("sessionTree/open", json!({"uri": uri(&link_in)}))
        .await;
    assert_eq!(via_link["uri"], open["uri"]);
    assert_eq!(std::fs::read(&file).expect("read"), before);
    alive(&c, &u).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_is_refused_outside_the_workspace_and_the_session_roots() {
    let home = tempfile::tempdir().expect("tempdir");
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let h = home.path();
    let workspace = h.join("project");
    let agent_sessions = h.join(".omp/agent/sessions/-project");
    let extra = h.join("extra");
    for d in [&workspace, &agent_sessions, &extra] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    let inside = copy_fixture(OMP, &workspace, "w.jsonl");
    let in_agent = copy_fixture(OMP, &agent_sessions, "a.jsonl");
    let in_extra = copy_fixture(OMP, &extra, "e.jsonl");
    let outside = copy_fixture(OMP, elsewhere.path(), "o.jsonl");
    let before = std::fs::read(&outside).expect("read");
    let link = workspace.join("link.jsonl");
    std::os::unix::fs::symlink(&outside, &link).expect("symlink");
    let c = Client::start(None);
    let options = json!({"home": h, "ompAgentDir": h.join(".omp/agent"), "piAgentDir": h.join(".pi/agent"),
                         "extraRoots": [extra]});
    c.ok(
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {}, "initializationOptions": options,
               "workspaceFolders": [{"uri": uri(&workspace), "name": "project"}]}),
    )
    .await;
    c.notify("initialized", json!({})).await;
    for ok in [&inside, &in_agent, &in_extra] {
        c.ok("sessionTree/open", json!({"uri": uri(ok)})).await;
    }
    let escapes = [
        uri(&outside),
        uri(&link),
        format!(
            "file://{}/../../{}",
            workspace.display(),
            outside.strip_prefix("/").expect("absolute").display()
        ),
        "file:///etc/passwd".to_owned(),
    ];
    for bad in &escapes {
        let msg = c.request("sessionTree/open", json!({"uri": bad})).await;
        assert_eq!(kind(&msg["error"]), "invalidParams", "{bad}: {msg}");
        assert!(
            msg["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("outside")),
            "{msg}"
        );
        let msg = c
            .request("sessionTree/append", json!({"uri": bad, "text": "x"}))
            .await;
        assert_eq!(kind(&msg["error"]), "sessionNotFound", "{bad}: {msg}");
    }
    assert_eq!(std::fs::read(&outside).expect("read"), before);
    println!(
        "roots: 3 files inside the workspace / agent folder / extra root opened, {} escapes refused",
        escapes.len()
    );
}
