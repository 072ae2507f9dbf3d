//! Branch summaries end to end: the server in-process, a real HTTP server on 127.0.0.1 started
//! by each test (just enough HTTP/1.1 and server-sent events, over plain TCP or over TLS with a
//! CA and certificate made by the test), real child processes for the command provider, hooks,
//! the no-model paths, progress and cancellation.

#[path = "../support/mod.rs"]
mod support;

use serde_json::{json, Value};
use sessiontree_core::summary::{OMP_PREAMBLE, PI_PREAMBLE};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::inproc::{Answer, Client};
use support::*;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;

const OMP: &str = "c06-branch-basic/omp/session.jsonl";
const PI: &str = "c06-branch-basic/pi/session.jsonl";
// c06 omp ids: u1 2ececf0f → a1 42864a3e → (u2 c498f61c → a2 7af3bc6f | u3 6c055220 → a3 662d009f)
const A1: &str = "42864a3e";
const U2: &str = "c498f61c";
const A3: &str = "662d009f";
// c06 pi ids: a1 b07b5c59, u2 0b579824.
const PI_A1: &str = "b07b5c59";
const PI_U2: &str = "0b579824";

fn kind(err: &Value) -> &str {
    err["data"]["kind"].as_str().unwrap_or("")
}

/// What the fake model server answers.
#[derive(Clone)]
enum Reply {
    /// 200, these content deltas as SSE events (with a pause between them), then `[DONE]`.
    Stream(Vec<&'static str>, Duration),
    /// An error status with a JSON error body.
    Status(u16, &'static str),
    /// 200 with a broken event.
    Malformed,
    /// 200, one delta, then nothing for a minute.
    Hang,
}

/// A request the fake server received.
#[derive(Debug, Clone, Default)]
struct Seen {
    head: String,
    body: Value,
}

struct ModelServer {
    base_url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    /// Set when a connection was closed by the client before the reply ended.
    closed_early: Arc<std::sync::atomic::AtomicBool>,
    got_request: Arc<tokio::sync::Notify>,
}

async fn read_request<S: AsyncRead + Unpin>(sock: &mut S) -> Option<Seen> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let n = sock.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let len = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse::<usize>().ok())
                .flatten()
        })
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let n = sock.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = serde_json::from_slice(&buf[head_end..head_end + len]).unwrap_or(Value::Null);
    Some(Seen { head, body })
}

fn event(delta: &str) -> String {
    format!(
        "data: {}\n\n",
        json!({"id": "x", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": delta}, "finish_reason": null}]})
    )
}

async fn serve<S: AsyncRead + AsyncWrite + Unpin>(
    mut sock: S,
    reply: Reply,
    server: Arc<ModelServerState>,
) {
    let Some(seen) = read_request(&mut sock).await else {
        return;
    };
    server.seen.lock().expect("seen").push(seen);
    server.got_request.notify_one();
    let sse_head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n";
    match reply {
        Reply::Stream(deltas, pause) => {
            let _ = sock.write_all(sse_head.as_bytes()).await;
            let _ = sock.write_all(b": keep-alive\n\n").await;
            for d in deltas {
                tokio::time::sleep(pause).await;
                let _ = sock.write_all(event(d).as_bytes()).await;
                let _ = sock.flush().await;
            }
            let _ = sock
                .write_all(b"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
                .await;
        }
        Reply::Status(code, message) => {
            let body = json!({"error": {"message": message, "type": "test"}}).to_string();
            let text = format!(
                "HTTP/1.1 {code} Whatever\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = sock.write_all(text.as_bytes()).await;
        }
        Reply::Malformed => {
            let _ = sock.write_all(sse_head.as_bytes()).await;
            let _ = sock.write_all(event("Half a ").as_bytes()).await;
            let _ = sock.write_all(b"data: {\"choices\": [oops\n\n").await;
        }
        Reply::Hang => {
            let _ = sock.write_all(sse_head.as_bytes()).await;
            let _ = sock.write_all(event("Starting").as_bytes()).await;
            let _ = sock.flush().await;
            // Wait for the client to go away (or a minute).
            let mut buf = [0u8; 64];
            let gone = tokio::time::timeout(Duration::from_secs(60), sock.read(&mut buf)).await;
            if matches!(gone, Ok(Ok(0)) | Ok(Err(_))) {
                server
                    .closed_early
                    .store(true, std::sync::atomic::Ordering::SeqCst);
            }
        }
    }
    let _ = sock.shutdown().await;
}

struct ModelServerState {
    seen: Arc<Mutex<Vec<Seen>>>,
    closed_early: Arc<std::sync::atomic::AtomicBool>,
    got_request: Arc<tokio::sync::Notify>,
}

impl ModelServer {
    /// A listener on a free loopback port, the server's handle and the state its connections share.
    async fn bind(scheme: &str) -> (TcpListener, ModelServer, Arc<ModelServerState>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let state = Arc::new(ModelServerState {
            seen: Arc::default(),
            closed_early: Arc::default(),
            got_request: Arc::new(tokio::sync::Notify::new()),
        });
        let server = ModelServer {
            base_url: format!("{scheme}://127.0.0.1:{port}/v1"),
            seen: Arc::clone(&state.seen),
            closed_early: Arc::clone(&state.closed_early),
            got_request: Arc::clone(&state.got_request),
        };
        (listener, server, state)
    }

    async fn start(reply: Reply) -> ModelServer {
        let (listener, server, state) = ModelServer::bind("http").await;
        tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                tokio::spawn(serve(sock, reply.clone(), Arc::clone(&state)));
            }
        });
        server
    }

    /// The same server over TLS, with a certificate for 127.0.0.1 and localhost signed by a
    /// CA made here; also returns the CA's PEM.
    async fn start_tls(reply: Reply) -> (ModelServer, String) {
        let ca_key = rcgen::KeyPair::generate().expect("ca key");
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("ca params");
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "sessiontree test CA");
        let ca = ca_params.self_signed(&ca_key).expect("ca");
        let key = rcgen::KeyPair::generate().expect("key");
        let cert =
            rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
                .expect("params")
                .signed_by(&key, &ca, &ca_key)
                .expect("cert");
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.der().clone()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
            )
            .expect("server config");
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
        let (listener, server, state) = ModelServer::bind("https").await;
        tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                let (acceptor, reply, state) =
                    (acceptor.clone(), reply.clone(), Arc::clone(&state));
                tokio::spawn(async move {
                    // A client that does not trust the certificate hangs up here.
                    if let Ok(tls) = acceptor.accept(sock).await {
                        serve(tls, reply, state).await;
                    }
                });
            }
        });
        (server, ca.pem())
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().expect("seen").clone()
    }
}

fn openai_options(base_url: &str, key_env: Option<&str>) -> Value {
    let mut openai = json!({"baseUrl": base_url, "model": "test-model", "timeoutSeconds": 30});
    if let Some(k) = key_env {
        openai["apiKeyEnv"] = json!(k);
    }
    json!({"branchSummary": {"enabled": true, "provider": "openai", "openai": openai}})
}

/// Agent folders that do not exist, so the user's own settings files stay out of the tests.
fn isolated(mut options: Value, dir: &Path) -> Value {
    options["ompAgentDir"] = json!(dir.join("no-omp").display().to_string());
    options["piAgentDir"] = json!(dir.join("no-pi").display().to_string());
    options
}

/// A client that shows progress, with these initialization options (and hooks when `answer`).
async fn client(options: Value, answer: Option<Answer>) -> (Client, Value) {
    let hooks = answer.is_some();
    let c = Client::start(answer);
    let mut caps = json!({"window": {"workDoneProgress": true}});
    if hooks {
        caps["experimental"] = json!({"sessionTree": {"hooks": true}});
    }
    let init = c
        .ok(
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": caps, "initializationOptions": options}),
        )
        .await;
    c.notify("initialized", json!({})).await;
    (c, init)
}

async fn open_copy(c: &Client, dir: &Path, rel: &str) -> (String, PathBuf) {
    let file = copy_fixture(rel, dir, "s.jsonl");
    let open = c.ok("sessionTree/open", json!({"uri": uri(&file)})).await;
    (open["uri"].as_str().unwrap_or_default().to_owned(), file)
}

fn last_line(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or(Value::Null)
}

/// The engine's context for the file's leaf (loaded afresh, as the agent would).
fn context_messages(path: &Path, leaf: &str) -> Vec<Value> {
    let session = sessiontree_core::Session::open(path, sessiontree_core::OpenOptions::default())
        .expect("reopen");
    let entries: Vec<Value> = session
        .branch_path(Some(leaf))
        .into_iter()
        .filter_map(|i| session.entry_at(i))
        .map(|e| e.json())
        .collect();
    sessiontree_core::context::build_context(session.dialect(), &entries)
        .messages
        .into_iter()
        .map(sessiontree_core::context::Message::into_value)
        .collect()
}

/// Checks the one written `branch_summary` line and the context built from it.
fn check_summary_line(
    path: &Path,
    original: &[u8],
    summary_id: &str,
    (parent, flag, from_ext): (&str, &str, bool),
) -> Value {
    let now = std::fs::read(path).expect("read");
    assert!(now.starts_with(original), "only appended");
    let added = String::from_utf8_lossy(&now[original.len()..]).into_owned();
    assert_eq!(added.lines().count(), 1, "exactly one line: {added}");
    let line = last_line(path);
    assert_eq!(line["type"], json!("branch_summary"));
    assert_eq!(line["id"], json!(summary_id));
    assert_eq!(
        line["parentId"],
        json!(parent),
        "attached at the new position"
    );
    assert_eq!(line["fromId"], json!(parent));
    assert_eq!(line[flag], json!(from_ext), "{line}");
    let messages = context_messages(path, summary_id);
    let found = messages
        .iter()
        .find(|m| m["role"] == json!("branchSummary"))
        .unwrap_or_else(|| panic!("no branchSummary in the context: {messages:?}"));
    assert_eq!(found["summary"], line["summary"]);
    line
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_announces_summaries_only_when_enabled() {
    let dir = tempfile::tempdir().expect("tmp");
    let (_c, init) = client(isolated(json!({}), dir.path()), None).await;
    let exp = &init["capabilities"]["experimental"]["sessionTree"];
    assert_eq!(
        exp["branchSummary"],
        json!({"enabled": false, "provider": null})
    );
    assert!(!exp["features"]
        .as_array()
        .is_some_and(|f| f.contains(&json!("summaries"))));
    let (_c, init) = client(
        isolated(openai_options("http://127.0.0.1:9/v1", None), dir.path()),
        None,
    )
    .await;
    let exp = &init["capabilities"]["experimental"]["sessionTree"];
    assert_eq!(
        exp["branchSummary"],
        json!({"enabled": true, "provider": "openai"})
    );
    assert!(exp["features"]
        .as_array()
        .is_some_and(|f| f.contains(&json!("summaries"))));
    assert!(exp["features"]
        .as_array()
        .is_some_and(|f| f.contains(&json!("navigate"))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_streams_a_summary_written_at_the_new_position() {
    let dir = tempfile::tempdir().expect("tmp");
    let server = ModelServer::start(Reply::Stream(
        vec!["## Goal\n", "Pick a city.", "\n## Next Steps\n1. Book."],
        Duration::from_millis(20),
    ))
    .await;
    std::env::set_var("SESSIONTREE_TEST_KEY_STREAM", "sk-test-stream-1234");
    let options = isolated(
        openai_options(&server.base_url, Some("SESSIONTREE_TEST_KEY_STREAM")),
        dir.path(),
    );
    let (c, _) = client(options, None).await;
    let (u, file) = open_copy(&c, dir.path(), OMP).await;
    let original = std::fs::read(&file).expect("read");
    let nav = c
        .ok(
            "sessionTree/navigate",
            json!({"uri": u, "targetId": U2, "summarize": "summarize"}),
        )
        .await;
    let summary_id = nav["summaryEntryId"]
        .as_str()
        .expect("summary id")
        .to_owned();
    assert_eq!(nav["newLeaf"], json!(summary_id));
    assert_eq!(nav["editorText"], json!("Paris"));
    let line = check_summary_line(&file, &original, &summary_id, (A1, "fromExtension", false));
    assert_eq!(
        line["summary"],
        json!(format!(
            "{OMP_PREAMBLE}## Goal\nPick a city.\n## Next Steps\n1. Book."
        ))
    );
    assert_eq!(
        line["details"],
        json!({"readFiles": [], "modifiedFiles": []})
    );
    // The request: streamed, the key as a bearer token, the history as data.
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    let req = &seen[0];
    assert!(
        req.head.starts_with("POST /v1/chat/completions HTTP/1.1"),
        "{}",
        req.head
    );
    assert!(
        req.head
            .to_ascii_lowercase()
            .contains("authorization: bearer sk-test-stream-1234"),
        "{}",
        req.head
    );
    assert_eq!(req.body["model"], json!("test-model"));
    assert_eq!(req.body["stream"], json!(true));
    assert_eq!(req.body["messages"][0]["role"], json!("system"));
    assert!(req.body["messages"][0]["content"]
        .as_str()
        .is_some_and(|s| s.contains("untrusted")));
    let prompt = req.body["messages"][1]["content"].as_str().unwrap_or("");
    assert!(
        prompt.starts_with("<conversation>\n[User]: Rome"),
        "{prompt}"
    );
    assert!(prompt.contains("## Goal"), "default instructions: {prompt}");
    // didNavigate carries the summary entry; progress began, reported tokens, ended.
    let mut notes = c.notifications_until("sessionTree/didNavigate", 20).await;
    let ended = |notes: &[Value]| {
        notes
            .iter()
            .any(|n| n["method"] == json!("$/progress") && n["params"]["value"]["kind"] == "end")
    };
    while !ended(&notes) {
        notes.extend(c.notifications_until("$/progress", 20).await);
    }
    let ev = notes
        .iter()
        .find(|n| n["method"] == json!("sessionTree/didNavigate"))
        .map(|n| n["params"].clone())
        .expect("didNavigate");
    assert_eq!(ev["summaryEntryId"], json!(summary_id));
    assert_eq!(
        ev["newLeaf"],
        json!(summary_id),
        "the summary entry is the new leaf"
    );
    assert_eq!(ev["fromClient"], json!(false));
    let mut kinds = Vec::new();
    let mut messages = Vec::new();
    for note in notes {
        if note["method"] == json!("$/progress") {
            kinds.push(
                note["params"]["value"]["kind"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned(),
            );
            if let Some(m) = note["params"]["value"]["message"].as_str() {
                messages.push(m.to_owned());
            }
        }
    }
    assert_eq!(
        kinds.first().map(String::as_str),
        Some("begin"),
        "{kinds:?}"
    );
    assert_eq!(kinds.last().map(String::as_str), Some("end"), "{kinds:?}");
    assert!(kinds.iter().any(|k| k == "report"), "{kinds:?}");
    assert!(
        messages.iter().any(|m| m.ends_with(" tokens")),
        "{messages:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_instructions_replace_the_default_ones() {
    let dir = tempfile::tempdir().expect("tmp");
    let server = ModelServer::start(Reply::Stream(vec!["Hotels only."], Duration::ZERO)).await;
    let (c, _) = client(
        isolated(openai_options(&server.base_url, None), dir.path()),
        None,
    )
    .await;
    let (u, _) = open_copy(&c, dir.path(), OMP).await;
    c.ok(
        "sessionTree/navigate",
        json!({"uri": u, "targetId": U2, "summarize": "custom", "customInstructions": "List the hotels."}),
    )
    .await;
    let seen = server.seen();
    let prompt = seen[0].body["messages"][1]["content"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    assert!(
        prompt.ends_with("</conversation>\n\nList the hotels."),
        "{prompt}"
    );
    assert!(!seen[0].head.to_ascii_lowercase().contains("authorization"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_mid_stream_aborts_the_model_call_and_writes_nothing() {
    let dir = tempfile::tempdir().expect("tmp");
    let server = ModelServer::start(Reply::Hang).await;
    let (c, _) = client(
        isolated(openai_options(&server.base_url, None), dir.path()),
        None,
    )
    .await;
    let (u, file) = open_copy(&c, dir.path(), OMP).await;
    let original = std::fs::read(&file).expect("read");
    let (id, nav) = c
        .send_id(
            "sessionTree/navigate",
            json!({"uri": u, "targetId": U2, "summarize": "summarize"}),
        )
        .await;
    tokio::time::timeout(Duration::from_secs(10), server.got_request.notified())
        .await
        .expect("the model was asked");
    // Reads are answered while the model writes.
    let tree = c.ok("sessionTree/tree", json!({"uri": u})).await;
    assert_eq!(tree["leaf"], json!(A3));
    c.notify("$/cancelRequest", json!({"id": id})).await;
    let nav = tokio::time::timeout(Duration::from_secs(10), nav)
        .await
        .expect("answer in time")
        .expect("answer");
    assert_eq!(nav["error"]["code"], json!(-32800), "{nav}");
    let tree = c.ok("sessionTree/tree", json!({"uri": u})).await;
    assert_eq!(tree["leaf"], json!(A3), "the leaf stays");
    assert_eq!(std::fs::read(&file).ok(), Some(original), "byte-identical");
    // Wait for it (the deadline only ends a hang).
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        if server
            .closed_early
            .load(std::sync::atomic::Ordering::SeqCst)
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        server
            .closed_early
            .load(std::sync::atomic::Ordering::SeqCst),
        "the connection to the model was closed"
    );
    // Progress ended too.
    let kinds: Vec<String> = c
        .drain()
        .await
        .iter()
        .filter(|n| n["method"] == json!("$/progress"))
        .map(|n| {
            n["params"]["value"]["kind"]
                .as_str()
                .unwrap_or("")
                .to_owned()
        })
        .collect();
    assert_eq!(kinds.last().map(String::as_str), Some("end"), "{kinds:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_progress_report_stops_the_summary_and_moves_nothing() {
    let dir = tempfile::tempdir().expect("tmp");
    let server = ModelServer::start(Reply::Hang).await;
    let (c, _) = client(
        isolated(openai_options(&server.base_url, None), dir.path()),
        None,
    )
    .await;
    let (u, file) = open_copy(&c, dir.path(), OMP).await;
    let original = std::fs::read(&file).expect("read");
    let (_, nav) = c
        .send_id(
            "sessionTree/navigate",
            json!({"uri": u, "targetId": U2, "summarize": "summarize"}),
        )
        .await;
    // The report begins with a cancel button.
    let begin = loop {
        let note = c.notification("$/progress", 10).await.expect("$/progress");
        if note["value"]["kind"] == "begin" {
            break note;
        }
    };
    assert_eq!(begin["value"]["title"], json!("Summarizing branch"));
    assert_eq!(begin["value"]["cancellable"], json!(true), "{begin}");
    tokio::time::timeout(Duration::from_secs(10), server.got_request.notified())
        .await
        .expect("the model was asked");
    // A cancel for a token that is not the report's changes nothing.
    c.notify(
        "window/workDoneProgress/cancel",
        json!({"token": "sessiontree/unknown"}),
    )
    .await;
    let tree = c.ok("sessionTree/tree", json!({"uri": u})).await;
    assert_eq!(tree["leaf"], json!(A3));
    c.notify(
        "window/workDoneProgress/cancel",
        json!({"token": begin["token"]}),
    )
    .await;
    let nav = tokio::time::timeout(Duration::from_secs(10), nav)
        .await
        .expect("answer in time")
        .expect("answer");
    assert_eq!(nav["result"]["cancelled"], json!(true), "{nav}");
    assert_eq!(nav["result"]["decision"], json!("stay"), "{nav}");
    assert_eq!(nav["result"]["newLeaf"], json!(A3), "{nav}");
    assert_eq!(nav["result"]["summaryEntryId"], Value::Null, "{nav}");
    let tree = c.ok("sessionTree/tree", json!({"uri": u})).await;
    assert_eq!(tree["leaf"], json!(A3), "the leaf stays");
    assert_eq!(std::fs::read(&file).ok(), Some(original), "byte-identical");
    // The model call was dropped (the deadline only ends a hang).
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::time::Instant::now() < deadline
        && !server
            .closed_early
            .load(std::sync::atomic::Ordering::SeqCst)
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        server
            .closed_early
            .load(std::sync::atomic::Ordering::SeqCst),
        "the connection to the model was closed"
    );
    // The report ended; the session still answers.
    let end = loop {
        let note = c
            .notification("$/progress", 10)
            .await
            .expect("$/progress end");
        if note["value"]["kind"] == "end" {
            break note;
        }
    };
    assert_eq!(end["token"], begin["token"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_statuses_are_clear_and_never_show_the_key() {
    let dir = tempfile::tempdir().expect("tmp");
    std::env::set_var("SESSIONTREE_TEST_KEY_STATUS", "sk-very-secret-9876");
    for (status, message, expect) in [
        (
            401,
            "Incorrect API key provided: sk-very-secret-9876",
            "refused the API key from SESSIONTREE_TEST_KEY_STATUS",
        ),
        (404, "model not found", "no model `test-model`"),
        (429, "quota exceeded", "rate-limiting"),
        (500, "boom", "failed (HTTP 500)"),
    ] {
        let server = ModelServer::start(Reply::Status(status, message)).await;
        let options = isolated(
            openai_options(&server.base_url, Some("SESSIONTREE_TEST_KEY_STATUS")),
            dir.path(),
        );
        let (c, _) = client(options, None).await;
        let (u, file) = open_copy(&c, dir.path(), OMP).await;
        let original = std::fs::read(&file).expect("read");
        let err = c
            .err(
                "sessionTree/navigate",
                json!({"uri": u, "targetId": U2, "summarize": "summarize"}),
            )
            .await;
        assert_eq!(kind(&err), "provider", "{err}");
        let text = err["message"].as_str().unwrap_or("");
        assert!(text.contains(expect), "{status}: {text}");
        assert!(text.contains(&format!("HTTP {status}")), "{text}");
        assert!(!text.contains("sk-very-secret"), "the key leaked: {text}");
        assert!(text.contains("nothing moved"), "{text}");
        assert_eq!(
            std::fs::read(&file).ok(),
            Some(original),
            "{status}: nothing written"
        );
        let tree = c.ok("sessionTree/tree", json!({"uri": u})).await;
        assert_eq!(tree["leaf"], json!(A3));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_stream_a_refused_connection_and_an_unset_key_fail_cleanly() {
    let dir = tempfile::tempdir().expect("tmp");
    let server = ModelServer::start(Reply::Malformed).await;
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        format!(
            "http://127.0.0.1:{}/v1",
            l.local_addr().expect("addr").port()
        )
    };
    let cases = [
        (
            openai_options(&server.base_url, None),
            "malformed stream",
            "provider",
        ),
        (
            openai_options(&closed, None),
            "connection refused",
            "provider",
        ),
        (
            openai_options(&server.base_url, Some("SESSIONTREE_TEST_KEY_UNSET")),
            "SESSIONTREE_TEST_KEY_UNSET",
            "noModel",
        ),
        (
            openai_options("ftp://api.example.invalid/v1", None),
            "is not an http:// or https:// URL",
            "noModel",
        ),
    ];
    for (options, expect, expected_kind) in cases {
        let (c, _) = client(isolated(options, dir.path()), None).await;
        let (u, file) = open_copy(&c, dir.path(), OMP).await;
        let original = std::fs::read(&file).expect("read");
        let err = c
            .err(
                "sessionTree/navigate",
                json!({"uri": u, "targetId": U2, "summarize": "summarize"}),
            )
            .await;
        assert_eq!(kind(&err), expected_kind, "{err}");
        assert!(
            err["message"].as_str().is_some_and(|m| m.contains(expect)),
            "{err}"
        );
        assert_eq!(std::fs::read(&file).ok(), Some(original));
    }
}

fn command_options(argv: Value) -> Value {
    json!({"branchSummary": {"enabled": true, "provider": "command", "command": {"argv": argv, "timeoutSeconds": 20}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_provider_reads_the_prompt_and_writes_the_summary() {
    let dir = tempfile::tempdir().expect("tmp");
    let prompt_file = dir.path().join("prompt.txt");
    let script = format!("cat > '{}'; echo summary text", prompt_file.display());
    let (c, _) = client(
        isolated(command_options(json!(["sh", "-c", script])), dir.path()),
        None,
    )
    .await;
    let (u, file) = open_copy(&c, dir.path(), PI).await;
    let original = std::fs::read(&file).expect("read");
    let nav = c
        .ok(
            "sessionTree/navigate",
            json!({"uri": u, "targetId": PI_U2, "summarize": "summarize"}),
        )
        .await;
    let summary_id = nav["summaryEntryId"].as_str().expect("summary").to_owned();
    let line = check_summary_line(&file, &original, &summary_id, (PI_A1, "fromHook", false));
    assert_eq!(line["summary"], json!(format!("{PI_PREAMBLE}summary text")));
    assert_eq!(
        line["details"],
        json!({"readFiles": [], "modifiedFiles": []})
    );
    let prompt = std::fs::read_to_string(&prompt_file).unwrap_or_default();
    assert!(
        prompt.contains("untrusted") && prompt.contains("<conversation>\n[User]: Rome"),
        "{prompt}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_command_is_reported_and_a_cancelled_one_is_killed() {
    let dir = tempfile::tempdir().expect("tmp");
    let (c, _) = client(
        isolated(
            command_options(json!([
                "sh",
                "-c",
                "cat >/dev/null; echo no model here >&2; exit 3"
            ])),
            dir.path(),
        ),
        None,
    )
    .await;
    let (u, file) = open_copy(&c, dir.path(), OMP).await;
    let original = std::fs::read(&file).expect("read");
    let err = c
        .err(
            "sessionTree/navigate",
            json!({"uri": u, "targetId": U2, "summarize": "summarize"}),
        )
        .await;
    assert_eq!(kind(&err), "provider");
    let m = err["message"].as_str().unwrap_or("");
    assert!(
        m.contains("exited with code 3") && m.contains("no model here"),
        "{m}"
    );
    assert_eq!(std::fs::read(&file).ok(), Some(original.clone()));

    let pid_file = dir.path().join("pid");
    let script = format!(
        "cat >/dev/null; echo $$ > '{}'; exec sleep 30",
        pid_file.display()
    );
    let (c, _) = client(
        isolated(command_options(json!(["sh", "-c", script])), dir.path()),
        None,
    )
    .await;
    let (u, file) = open_copy(&c, dir.path(), OMP).await;
    let (id, nav) = c
        .send_id(
            "sessionTree/navigate",
            json!({"uri": u, "targetId": U2, "summarize": "summarize"}),
        )
        .await;
    let mut pid = String::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        pid = std::fs::read_to_string(&pid_file)
            .unwrap_or_default()
            .trim()
            .to_owned();
        if !pid.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!pid.is_empty(), "the command started");
    c.notify("$/cancelRequest", json!({"id": id})).await;
    let nav = tokio::time::timeout(Duration::from_secs(10), nav)
        .await
        .expect("in time")
        .expect("answer");
    assert_eq!(nav["error"]["code"], json!(-32800), "{nav}");
    assert_eq!(std::fs::read(&file).ok(), Some(original));
    let mut alive = true;
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // Gone, or a zombie waiting to be reaped.
        if stat.is_empty() || stat.split(' ').nth(2) == Some("Z") {
            alive = false;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!alive, "the command was killed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_from_workspace_configuration_is_never_run() {
    let dir = tempfile::tempdir().expect("tmp");
    let marker = dir.path().join("ran");
    let (c, _) = client(isolated(json!({}), dir.path()), None).await;
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"sessiontree": {"branchSummary": {"enabled": true, "provider": "command",
            "command": ["sh", "-c", format!("touch '{}'; echo pwned", marker.display())]}}}}),
    )
    .await;
    let (u, file) = open_copy(&c, dir.path(), OMP).await;
    let original = std::fs::read(&file).expect("read");
    let err = c
        .err(
            "sessionTree/navigate",
            json!({"uri": u, "targetId": U2, "summarize": "summarize"}),
        )
        .await;
    assert_eq!(kind(&err), "noModel", "{err}");
    assert!(
        err["message"]
            .as_str()
            .is_some_and(|m| m.contains("never from workspace")),
        "{err}"
    );
    assert!(!marker.exists(), "the workspace's command ran");
    assert_eq!(std::fs::read(&file).ok(), Some(original));
    // Workspace configuration may still switch an openai model on.
    let server = ModelServer::start(Reply::Stream(vec!["From settings."], Duration::ZERO)).await;
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"sessiontree": {"branchSummary": {"enabled": true, "provider": "openai",
            "openai": {"baseUrl": server.base_url, "model": "m"}, "prompt": "auto"}}}}),
    )
    .await;
    let nav = c
        .ok(
            "sessionTree/navigate",
            json!({"uri": u, "targetId": U2, "summarize": "summarize"}),
        )
        .await;
    assert!(nav["summaryEntryId"].is_string(), "{nav}");
    assert_eq!(
        last_line(&file)["summary"],
        json!(format!("{OMP_PREAMBLE}From settings."))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_summary_wins_over_the_model_and_a_hook_may_cancel() {
    let dir = tempfile::tempdir().expect("tmp");
    let server = ModelServer::start(Reply::Stream(vec!["unused"], Duration::ZERO)).await;
    let answer: Answer = Arc::new(|method: &str, params: &Value| {
        if method != "sessionTree/beforeTree" {
            return Value::Null;
        }
        if params["customInstructions"] == json!("cancel") {
            json!({"cancel": true})
        } else {
            json!({"summary": {"summary": "From the editor.", "details": {"by": "test"}}})
        }
    });
    let (c, _) = client(
        isolated(openai_options(&server.base_url, None), dir.path()),
        Some(answer),
    )
    .await;
    let (u, file) = open_copy(&c, dir.path(), OMP).await;
    let original = std::fs::read(&file).expect("read");
    let cancelled = c
        .ok(
            "sessionTree/navigate",
            json!({"uri": u, "targetId": U2, "summarize": "custom", "customInstructions": "cancel"}),
        )
        .await;
    assert_eq!(cancelled["cancelled"], json!(true));
    assert_eq!(cancelled["newLeaf"], json!(A3));
    assert_eq!(std::fs::read(&file).ok(), Some(original.clone()));
    let nav = c
        .ok(
            "sessionTree/navigate",
            json!({"uri": u, "targetId": U2, "summarize": "summarize"}),
        )
        .await;
    let summary_id = nav["summaryEntryId"].as_str().expect("summary").to_owned();
    let line = check_summary_line(&file, &original, &summary_id, (A1, "fromExtension", true));
    assert_eq!(line["summary"], json!("From the editor."));
    assert_eq!(line["details"], json!({"by": "test"}));
    assert!(server.seen().is_empty(), "the model was not asked");
    let ev = c
        .notification("sessionTree/didNavigate", 5)
        .await
        .expect("didNavigate");
    assert_eq!(ev["summaryEntryId"], json!(summary_id));
    assert_eq!(ev["fromClient"], json!(true));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_model_fails_fast_and_nothing_to_summarize_just_moves() {
    let dir = tempfile::tempdir().expect("tmp");
    for options in [
        json!({}),
        json!({"branchSummary": true}),
        json!({"branchSummary": {"enabled": false, "provider": "openai", "openai": {"model": "m"}}}),
        json!({"branchSummary": {"enabled": true, "provider": "client"}}),
        json!({"branchSummary": {"enabled": true, "provider": "openai"}}),
    ] {
        let (c, _) = client(isolated(options.clone(), dir.path()), None).await;
        let (u, file) = open_copy(&c, dir.path(), OMP).await;
        let original = std::fs::read(&file).expect("read");
        let err = c
            .err(
                "sessionTree/navigate",
                json!({"uri": u, "targetId": U2, "summarize": "summarize"}),
            )
            .await;
        assert_eq!(kind(&err), "noModel", "{options}: {err}");
        assert_eq!(std::fs::read(&file).ok(), Some(original), "{options}");
        let tree = c.ok("sessionTree/tree", json!({"uri": u})).await;
        assert_eq!(tree["leaf"], json!(A3));
        // Nothing abandoned (forward to a descendant): the move goes ahead without a summary.
        c.ok("sessionTree/navigate", json!({"uri": u, "targetId": A1}))
            .await;
        let nav = c
            .ok(
                "sessionTree/navigate",
                json!({"uri": u, "targetId": A3, "summarize": "summarize"}),
            )
            .await;
        assert_eq!(nav["summarySkipped"], json!(true), "{nav}");
        assert_eq!(nav["newLeaf"], json!(A3));
        assert_eq!(nav["summaryEntryId"], Value::Null);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agents_own_settings_files_are_read() {
    let dir = tempfile::tempdir().expect("tmp");
    // omp: `branchSummary.enabled` in the agent folder's config.yml; the editor names the model.
    let omp_dir = dir.path().join("omp-agent");
    std::fs::create_dir_all(&omp_dir).expect("mkdir");
    std::fs::write(
        omp_dir.join("config.yml"),
        "theme: dark\nbranchSummary:\n  enabled: true\n",
    )
    .expect("write");
    let server = ModelServer::start(Reply::Stream(vec!["Via omp settings."], Duration::ZERO)).await;
    let options = json!({
        "ompAgentDir": omp_dir.display().to_string(),
        "piAgentDir": dir.path().join("no-pi").display().to_string(),
        "branchSummary": {"provider": "openai", "openai": {"baseUrl": server.base_url, "model": "m"}},
    });
    let (c, init) = client(options, None).await;
    assert_eq!(
        init["capabilities"]["experimental"]["sessionTree"]["branchSummary"],
        json!({"enabled": true, "provider": "openai"})
    );
    let (u, file) = open_copy(&c, dir.path(), OMP).await;
    c.ok(
        "sessionTree/navigate",
        json!({"uri": u, "targetId": U2, "summarize": "summarize"}),
    )
    .await;
    assert_eq!(
        last_line(&file)["summary"],
        json!(format!("{OMP_PREAMBLE}Via omp settings."))
    );

    // pi: settings.json is user-level, so a command there runs.
    let pi_dir = dir.path().join("pi-agent");
    std::fs::create_dir_all(&pi_dir).expect("mkdir");
    std::fs::write(
        pi_dir.join("settings.json"),
        json!({"branchSummary": {"reserveTokens": 8000, "enabled": true, "provider": "command",
            "command": ["sh", "-c", "cat >/dev/null; echo from pi settings"]}})
        .to_string(),
    )
    .expect("write");
    let options = json!({
        "ompAgentDir": dir.path().join("no-omp").display().to_string(),
        "piAgentDir": pi_dir.display().to_string(),
    });
    let (c, _) = client(options, None).await;
    let sub = dir.path().join("pi");
    std::fs::create_dir_all(&sub).expect("mkdir");
    let (u, file) = open_copy(&c, &sub, PI).await;
    c.ok(
        "sessionTree/navigate",
        json!({"uri": u, "targetId": PI_U2, "summarize": "summarize"}),
    )
    .await;
    assert_eq!(
        last_line(&file)["summary"],
        json!(format!("{PI_PREAMBLE}from pi settings"))
    );
    // pi's own `skipPrompt: true` reads as off.
    std::fs::write(
        pi_dir.join("settings.json"),
        r#"{"branchSummary": {"skipPrompt": true}}"#,
    )
    .expect("write");
    let options = json!({
        "ompAgentDir": dir.path().join("no-omp").display().to_string(),
        "piAgentDir": pi_dir.display().to_string(),
    });
    let (_c, init) = client(options, None).await;
    assert_eq!(
        init["capabilities"]["experimental"]["sessionTree"]["branchSummary"]["enabled"],
        json!(false)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_that_is_not_streamed_is_accepted() {
    let dir = tempfile::tempdir().expect("tmp");
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!(
        "http://127.0.0.1:{}/v1",
        listener.local_addr().expect("addr").port()
    );
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            if read_request(&mut sock).await.is_none() {
                continue;
            }
            let body = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "One piece."}, "finish_reason": "stop"}]}).to_string();
            let text = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            );
            let _ = sock.write_all(text.as_bytes()).await;
        }
    });
    let (c, _) = client(isolated(openai_options(&base, None), dir.path()), None).await;
    let (u, file) = open_copy(&c, dir.path(), OMP).await;
    c.ok(
        "sessionTree/navigate",
        json!({"uri": u, "targetId": U2, "summarize": "summarize"}),
    )
    .await;
    assert_eq!(
        last_line(&file)["summary"],
        json!(format!("{OMP_PREAMBLE}One piece."))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_slower_than_the_timeout_fails_and_writes_nothing() {
    let dir = tempfile::tempdir().expect("tmp");
    let server = ModelServer::start(Reply::Hang).await;
    let mut options = openai_options(&server.base_url, None);
    options["branchSummary"]["openai"]["timeoutSeconds"] = json!(1);
    let (c, _) = client(isolated(options, dir.path()), None).await;
    let (u, file) = open_copy(&c, dir.path(), OMP).await;
    let original = std::fs::read(&file).expect("read");
    let err = c
        .err(
            "sessionTree/navigate",
            json!({"uri": u, "targetId": U2, "summarize": "summarize"}),
        )
        .await;
    assert_eq!(kind(&err), "provider", "{err}");
    assert!(
        err["message"]
            .as_str()
            .is_some_and(|m| m.contains("did not finish within 1 s")),
        "{err}"
    );
    assert_eq!(std::fs::read(&file).ok(), Some(original));
    let tree = c.ok("sessionTree/tree", json!({"uri": u})).await;
    assert_eq!(tree["leaf"], json!(A3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_with_a_ca_file_streams_a_summary_and_an_unknown_certificate_fails_clearly() {
    let dir = tempfile::tempdir().expect("tmp");
    let (server, ca_pem) =
        ModelServer::start_tls(Reply::Stream(vec!["Over ", "TLS."], Duration::ZERO)).await;
    let ca_file = dir.path().join("corporate-ca.pem");
    std::fs::write(&ca_file, &ca_pem).expect("write ca");
    std::env::set_var("SESSIONTREE_TEST_KEY_TLS", "sk-tls-secret-1234");

    // Trusted through branchSummary.openai.caFile: the summary arrives over https, key included.
    let mut options = openai_options(&server.base_url, Some("SESSIONTREE_TEST_KEY_TLS"));
    options["branchSummary"]["openai"]["caFile"] = json!(ca_file.display().to_string());
    let (c, _) = client(isolated(options, dir.path()), None).await;
    let (u, file) = open_copy(&c, dir.path(), OMP).await;
    let nav = c
        .ok(
            "sessionTree/navigate",
            json!({"uri": u, "targetId": U2, "summarize": "summarize"}),
        )
        .await;
    assert!(nav["summaryEntryId"].is_string(), "{nav}");
    assert_eq!(
        last_line(&file)["summary"],
        json!(format!("{OMP_PREAMBLE}Over TLS."))
    );
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert!(
        seen[0]
            .head
            .starts_with("POST /v1/chat/completions HTTP/1.1"),
        "{}",
        seen[0].head
    );
    assert!(
        seen[0]
            .head
            .to_ascii_lowercase()
            .contains("authorization: bearer sk-tls-secret-1234"),
        "the key went over TLS"
    );

    // Not trusted (no caFile): a clear `provider` error naming the host; nothing moves.
    let (c, _) = client(
        isolated(
            openai_options(&server.base_url, Some("SESSIONTREE_TEST_KEY_TLS")),
            dir.path(),
        ),
        None,
    )
    .await;
    let sub = dir.path().join("untrusted");
    std::fs::create_dir_all(&sub).expect("mkdir");
    let (u, file) = open_copy(&c, &sub, OMP).await;
    let original = std::fs::read(&file).expect("read");
    let err = c
        .err(
            "sessionTree/navigate",
            json!({"uri": u, "targetId": U2, "summarize": "summarize"}),
        )
        .await;
    assert_eq!(kind(&err), "provider", "{err}");
    let text = err["message"].as_str().unwrap_or("");
    assert!(
        text.contains("TLS handshake with 127.0.0.1 failed")
            && text.contains("unknown issuer")
            && text.contains("caFile"),
        "{text}"
    );
    assert!(!text.contains("sk-tls-secret"), "{text}");
    assert_eq!(std::fs::read(&file).ok(), Some(original), "nothing written");
    let tree = c.ok("sessionTree/tree", json!({"uri": u})).await;
    assert_eq!(tree["leaf"], json!(A3), "the leaf stays");
    assert_eq!(
        server.seen().len(),
        1,
        "no request without a trusted handshake"
    );

    // A caFile that cannot be read is a settings problem (`noModel`); from workspace
    // configuration a caFile is ignored (a repository must not choose whom the server trusts).
    let mut options = openai_options(&server.base_url, None);
    options["branchSummary"]["openai"]["caFile"] =
        json!(dir.path().join("missing.pem").display().to_string());
    let (c, _) = client(isolated(options, dir.path()), None).await;
    let sub = dir.path().join("missing");
    std::fs::create_dir_all(&sub).expect("mkdir");
    let (u, _) = open_copy(&c, &sub, OMP).await;
    let err = c
        .err(
            "sessionTree/navigate",
            json!({"uri": u, "targetId": U2, "summarize": "summarize"}),
        )
        .await;
    assert_eq!(kind(&err), "noModel", "{err}");
    assert!(
        err["message"]
            .as_str()
            .is_some_and(|m| m.contains("caFile") && m.contains("missing.pem")),
        "{err}"
    );
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"sessiontree": {"branchSummary": {"openai": {"caFile": ca_file.display().to_string()}}}}}),
    )
    .await;
    let err = c
        .err(
            "sessionTree/navigate",
            json!({"uri": u, "targetId": U2, "summarize": "summarize"}),
        )
        .await;
    assert_eq!(
        kind(&err),
        "noModel",
        "still the user's missing file: {err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn omp_default_model_from_config_and_models_yml_writes_the_summary() {
    let dir = tempfile::tempdir().expect("tmp");
    let server = ModelServer::start(Reply::Stream(vec!["With omp's model."], Duration::ZERO)).await;
    std::env::set_var("SESSIONTREE_TEST_OMP_KEY", "sk-omp-secret-5555");
    let omp_dir = dir.path().join("omp-agent");
    std::fs::create_dir_all(&omp_dir).expect("mkdir");
    // omp's own layout: the switch in config.yml, the model role, the provider in models.yml.
    std::fs::write(
        omp_dir.join("config.yml"),
        "modelRoles:\n  default: lab/qwen2.5-7b-instruct:high\n  smol: openai/gpt-4o-mini\nbranchSummary:\n  enabled: true\n  reserveTokens: 4000\n",
    )
    .expect("write");
    std::fs::write(
        omp_dir.join("models.yml"),
        format!(
            "providers:\n  lab:\n    baseUrl: {}\n    api: openai-completions\n    apiKey: SESSIONTREE_TEST_OMP_KEY\n    models:\n      - id: qwen2.5-7b-instruct\n        contextWindow: 32768\n",
            server.base_url
        ),
    )
    .expect("write");
    let options = json!({
        "ompAgentDir": omp_dir.display().to_string(),
        "piAgentDir": dir.path().join("no-pi").display().to_string(),
    });
    let (c, init) = client(options, None).await;
    assert_eq!(
        init["capabilities"]["experimental"]["sessionTree"]["branchSummary"],
        json!({"enabled": true, "provider": "openai"})
    );
    let (u, file) = open_copy(&c, dir.path(), OMP).await;
    let nav = c
        .ok(
            "sessionTree/navigate",
            json!({"uri": u, "targetId": U2, "summarize": "summarize"}),
        )
        .await;
    assert!(nav["summaryEntryId"].is_string(), "{nav}");
    assert_eq!(
        last_line(&file)["summary"],
        json!(format!("{OMP_PREAMBLE}With omp's model."))
    );
    let seen = server.seen();
    assert_eq!(seen[0].body["model"], json!("qwen2.5-7b-instruct"));
    assert!(
        seen[0]
            .head
            .to_ascii_lowercase()
            .contains("authorization: bearer sk-omp-secret-5555"),
        "the key named in models.yml was sent"
    );

    // A literal key in models.yml is never read: the settings say so, without the key.
    std::fs::write(
        omp_dir.join("models.yml"),
        format!(
            "providers:\n  lab:\n    baseUrl: {}\n    api: openai-completions\n    apiKey: sk-literal-in-file-777\n    models: [{{id: qwen2.5-7b-instruct}}]\n",
            server.base_url
        ),
    )
    .expect("write");
    let options = json!({
        "ompAgentDir": omp_dir.display().to_string(),
        "piAgentDir": dir.path().join("no-pi").display().to_string(),
    });
    let (c, _) = client(options, None).await;
    let sub = dir.path().join("literal");
    std::fs::create_dir_all(&sub).expect("mkdir");
    let (u, file) = open_copy(&c, &sub, OMP).await;
    let original = std::fs::read(&file).expect("read");
    let err = c
        .err(
            "sessionTree/navigate",
            json!({"uri": u, "targetId": U2, "summarize": "summarize"}),
        )
        .await;
    assert_eq!(kind(&err), "noModel", "{err}");
    let text = err["message"].as_str().unwrap_or("");
    assert!(text.contains("literal or a command"), "{text}");
    assert!(!text.contains("sk-literal"), "{text}");
    assert_eq!(std::fs::read(&file).ok(), Some(original));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changed_settings_are_read_again_the_agents_files_included() {
    let dir = tempfile::tempdir().expect("tmp");
    let server = ModelServer::start(Reply::Stream(vec!["Now on."], Duration::ZERO)).await;
    let omp_dir = dir.path().join("omp-agent");
    std::fs::create_dir_all(&omp_dir).expect("mkdir");
    std::fs::write(
        omp_dir.join("config.yml"),
        "branchSummary:\n  enabled: false\n",
    )
    .expect("write");
    let options = json!({
        "ompAgentDir": omp_dir.display().to_string(),
        "piAgentDir": dir.path().join("no-pi").display().to_string(),
        "branchSummary": {"provider": "openai", "openai": {"baseUrl": server.base_url, "model": "m"}},
    });
    let (c, _) = client(options, None).await;
    let (u, file) = open_copy(&c, dir.path(), OMP).await;
    let err = c
        .err(
            "sessionTree/navigate",
            json!({"uri": u, "targetId": U2, "summarize": "summarize"}),
        )
        .await;
    assert_eq!(kind(&err), "noModel", "{err}");
    // The user turns omp's setting on; the next configuration change reads the file again.
    std::fs::write(
        omp_dir.join("config.yml"),
        "branchSummary:\n  enabled: true\n",
    )
    .expect("write");
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"sessiontree": {}}}),
    )
    .await;
    let nav = c
        .ok(
            "sessionTree/navigate",
            json!({"uri": u, "targetId": U2, "summarize": "summarize"}),
        )
        .await;
    assert!(nav["summaryEntryId"].is_string(), "{nav}");
    assert_eq!(
        last_line(&file)["summary"],
        json!(format!("{OMP_PREAMBLE}Now on."))
    );
    // The workspace layer is replaced, not merged: a change that drops a key drops its effect.
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"sessiontree": {"branchSummary": {"enabled": false}}}}),
    )
    .await;
    let err = c
        .err(
            "sessionTree/navigate",
            json!({"uri": u, "targetId": A3, "summarize": "summarize"}),
        )
        .await;
    assert_eq!(kind(&err), "noModel", "{err}");
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"sessiontree": {}}}),
    )
    .await;
    let nav = c
        .ok(
            "sessionTree/navigate",
            json!({"uri": u, "targetId": A3, "summarize": "summarize"}),
        )
        .await;
    assert!(nav["summaryEntryId"].is_string(), "{nav}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_only_signals_a_change_is_asked_for_its_settings() {
    let dir = tempfile::tempdir().expect("tmp");
    // Starts on, with a model that always fails (a `provider` error moves nothing).
    let server = ModelServer::start(Reply::Status(500, "down")).await;
    let answer: Answer = Arc::new(|method: &str, params: &Value| {
        if method == "workspace/configuration"
            && params["items"][0]["section"] == json!("sessiontree")
        {
            json!([{"branchSummary": {"enabled": false}}])
        } else {
            Value::Null
        }
    });
    let c = Client::start(Some(answer));
    let options = isolated(openai_options(&server.base_url, None), dir.path());
    c.ok(
        "initialize",
        json!({"processId": null, "rootUri": null, "initializationOptions": options,
            "capabilities": {"workspace": {"configuration": true, "didChangeConfiguration": {"dynamicRegistration": false}}}}),
    )
    .await;
    c.notify("initialized", json!({})).await;
    let (u, file) = open_copy(&c, dir.path(), OMP).await;
    let original = std::fs::read(&file).expect("read");
    let navigate = || {
        c.err(
            "sessionTree/navigate",
            json!({"uri": u, "targetId": U2, "summarize": "summarize"}),
        )
    };
    assert_eq!(kind(&navigate().await), "provider");
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": null}),
    )
    .await;
    let mut last = Value::Null;
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        last = navigate().await;
        if kind(&last) == "noModel" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        kind(&last),
        "noModel",
        "the pulled settings turned summaries off: {last}"
    );
    assert!(
        c.asked
            .lock()
            .expect("asked")
            .iter()
            .any(|(m, p)| m == "workspace/configuration"
                && p["items"][0]["section"] == json!("sessiontree")),
        "the server asked for the sessiontree section"
    );
    assert_eq!(std::fs::read(&file).ok(), Some(original), "nothing written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workspace_configuration_cannot_send_the_key_elsewhere() {
    let dir = tempfile::tempdir().expect("tmp");
    let user_server = ModelServer::start(Reply::Stream(vec!["Mine."], Duration::ZERO)).await;
    let other_server = ModelServer::start(Reply::Stream(vec!["Theirs."], Duration::ZERO)).await;
    std::env::set_var("SESSIONTREE_TEST_KEY_WS", "sk-user-ws-4242");
    std::env::set_var("SESSIONTREE_TEST_OTHER_SECRET", "other-secret-1313");
    let (c, _) = client(
        isolated(
            openai_options(&user_server.base_url, Some("SESSIONTREE_TEST_KEY_WS")),
            dir.path(),
        ),
        None,
    )
    .await;
    let (u, file) = open_copy(&c, dir.path(), OMP).await;
    let original = std::fs::read(&file).expect("read");
    // A repository's settings point the model elsewhere: the user's key is not sent there.
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"sessiontree": {"branchSummary": {"openai": {"baseUrl": other_server.base_url}}}}}),
    )
    .await;
    let err = c
        .err(
            "sessionTree/navigate",
            json!({"uri": u, "targetId": U2, "summarize": "summarize"}),
        )
        .await;
    assert_eq!(kind(&err), "noModel", "{err}");
    assert!(
        err["message"].as_str().is_some_and(
            |m| m.contains("only sent to the user's own baseUrl") && !m.contains("sk-user-ws")
        ),
        "{err}"
    );
    assert!(
        other_server.seen().is_empty(),
        "nothing went to the other server"
    );
    assert_eq!(std::fs::read(&file).ok(), Some(original));
    // Nor may it choose which variable is sent: the user's apiKeyEnv stays.
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"sessiontree": {"branchSummary": {"openai": {"apiKeyEnv": "SESSIONTREE_TEST_OTHER_SECRET"}}}}}),
    )
    .await;
    c.ok(
        "sessionTree/navigate",
        json!({"uri": u, "targetId": U2, "summarize": "summarize"}),
    )
    .await;
    assert_eq!(
        last_line(&file)["summary"],
        json!(format!("{OMP_PREAMBLE}Mine."))
    );
    let head = user_server.seen()[0].head.to_ascii_lowercase();
    assert!(
        head.contains("authorization: bearer sk-user-ws-4242"),
        "the user's key"
    );
    assert!(
        !head.contains("other-secret"),
        "not the workspace's variable"
    );
}
