//! Load: the real binary (`sessiontree lsp` over stdio) with tens of sessions open, several clients
//! pipelining thousands of requests at once over the one connection, one client appending to a
//! session through the server, and another process appending whole lines to a growing session
//! hundreds of times a second, the way the agents write.
//!
//! Checked: every request is answered (a long timeout guards against a hang; nothing is timed);
//! every answer about a session nobody writes equals the answer the idle server gave before the
//! load, which itself equals the engine's on a fresh `Session::open`; the server's appends are
//! acknowledged with growing revisions and are all in the file, chained in order; answers about
//! the growing session never go back (revisions and entry counts); once the writer stops, the
//! server's tree, rows and leaf of the growing session equal a fresh load and hold every line
//! the writer appended; the server's peak memory (VmHWM) stays under 1 GB. The figures are
//! printed (see docs/reliability.md).

mod support;

use serde_json::{json, Value};
use sessiontree_core::context::session_context;
use sessiontree_core::view::{compute_rows, FilterMode, ViewState};
use sessiontree_core::{OpenOptions, Session};
use sessiontree_testkit::lsp::{Connection, Writer};
use std::collections::{HashMap, HashSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::*;

/// Sessions generated with 2 000 entries (about 6 MB each).
const BIG: u64 = 2;
/// Sessions generated with 150 entries.
const SMALL: u64 = 16;
/// Conformance sessions opened as they are.
const FIXTURES: &[&str] = &[
    "c01-linear-basic/omp/session.jsonl",
    "c01-linear-basic/pi/session.jsonl",
    "c06-branch-basic/omp/session.jsonl",
    "c06-branch-basic/pi/session.jsonl",
    "M02-orphans-and-duplicates/input.jsonl",
    "M05-omp-title-slot-file/input.jsonl",
];
/// Concurrent clients.
const CLIENTS: usize = 4;
/// Requests each client sends.
const REQUESTS: usize = 600;
/// Requests each client keeps in flight.
const WINDOW: usize = 48;
/// Appends the first client sends through the server.
const APPENDS: usize = 150;
/// Lines the other writer appends per batch, and the pause between batches (≈ 300 lines/s).
const BATCH: usize = 5;
const PAUSE: Duration = Duration::from_millis(15);
/// The other writer stops here even if the clients are not done.
const MAX_LINES: usize = 2_000;
/// Hang guard for any one answer (never a timing assertion).
const HANG: Duration = Duration::from_secs(180);
/// Peak memory bound for the server.
const MAX_RSS_KB: u64 = 1024 * 1024;

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// The connection's two halves as the clients share them: requests are written whole by the
/// connection's [`Writer`]; the thread reading the answers hands each to the client whose id
/// range it is in.
struct Conn {
    writer: Writer,
    clients: Mutex<HashMap<u64, Sender<Value>>>,
    notifications: AtomicUsize,
}

const ID_RANGE: u64 = 1_000_000;

impl Conn {
    fn send(&self, id: u64, method: &str, params: &Value) {
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.writer.send(&msg).expect("write");
    }

    fn send_notification(&self, method: &str) {
        self.writer.notify(method, json!({})).expect("write");
    }

    fn register(&self, client: u64) -> Receiver<Value> {
        let (tx, rx) = channel();
        self.clients
            .lock()
            .expect("clients lock")
            .insert(client, tx);
        rx
    }

    /// One message from the server: a notification is counted, a request from the server is
    /// answered with nothing (the result returned), an answer goes to its client.
    fn dispatch(&self, msg: &Value) -> Option<Value> {
        match (msg.get("method"), msg.get("id")) {
            (Some(_), None) => {
                self.notifications.fetch_add(1, Ordering::Relaxed);
                None
            }
            (Some(_), Some(_)) => Some(Value::Null),
            (None, Some(id)) => {
                let id = id.as_u64().expect("numeric id");
                let clients = self.clients.lock().expect("clients lock");
                if let Some(tx) = clients.get(&(id / ID_RANGE)) {
                    let _ = tx.send(msg.clone());
                }
                None
            }
            (None, None) => panic!("a message that is neither: {msg}"),
        }
    }
}

/// A client with its id range and its answers.
struct Client {
    conn: Arc<Conn>,
    number: u64,
    next: u64,
    rx: Receiver<Value>,
}

impl Client {
    fn new(conn: &Arc<Conn>, number: u64) -> Client {
        Client {
            conn: Arc::clone(conn),
            number,
            next: 0,
            rx: conn.register(number),
        }
    }

    fn send(&mut self, method: &str, params: &Value) -> u64 {
        self.next += 1;
        let id = self.number * ID_RANGE + self.next;
        self.conn.send(id, method, params);
        id
    }

    fn receive(&self) -> Value {
        self.rx
            .recv_timeout(HANG)
            .unwrap_or_else(|_| panic!("client {}: no answer (stall)", self.number))
    }

    /// One request, answered.
    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, &params);
        let msg = self.receive();
        assert_eq!(msg["id"], json!(id), "one request at a time");
        assert!(msg.get("error").is_none(), "{method} {params}: {msg}");
        msg["result"].clone()
    }
}

/// One open session nobody writes, with the requests clients send about it.
struct Quiet {
    requests: Vec<(&'static str, Value)>,
}

/// The requests about a session: rows under several states, tree pages, entries, contexts.
fn requests_for(uri: &str, session: &Session) -> Vec<(&'static str, Value)> {
    let ids: Vec<&str> = session.entries().iter().filter_map(|e| e.id()).collect();
    let at = |f: usize| ids.get(ids.len() * f / 4).copied().unwrap_or("none");
    // Every row of a big session in one answer is heavy in a debug build: 50 rows there.
    let all_rows = if ids.len() > 500 { 50 } else { 0 };
    let mut out = vec![
        (
            "sessionTree/rows",
            json!({"uri": uri, "filter": "default", "width": 100, "height": 30}),
        ),
        (
            "sessionTree/rows",
            json!({"uri": uri, "filter": "all", "search": "the", "width": 80, "height": 20}),
        ),
        (
            "sessionTree/rows",
            json!({"uri": uri, "filter": "noTools", "selection": at(2), "width": 120, "height": 40}),
        ),
        (
            "sessionTree/rows",
            json!({"uri": uri, "filter": "userOnly", "selection": at(1), "width": 60, "height": all_rows}),
        ),
        (
            "sessionTree/tree",
            json!({"uri": uri, "offset": 0, "limit": 100}),
        ),
        (
            "sessionTree/tree",
            json!({"uri": uri, "offset": ids.len() / 2, "limit": 50}),
        ),
        ("sessionTree/context", json!({"uri": uri})),
    ];
    for f in [0, 1, 3] {
        if !ids.is_empty() {
            out.push(("sessionTree/entry", json!({"uri": uri, "id": at(f)})));
        }
    }
    if !ids.is_empty() {
        out.push(("sessionTree/context", json!({"uri": uri, "leaf": at(2)})));
    }
    out
}

/// The engine's answer, on a fresh load, to what the idle server answered.
fn check_against_engine(
    file: &Path,
    session: &Session,
    home: &Path,
    method: &str,
    params: &Value,
    result: &Value,
) {
    let what = format!("{method} {params} on {}", file.display());
    match method {
        "sessionTree/rows" => {
            let height = params["height"].as_u64().unwrap_or(0) as usize;
            let state = ViewState {
                filter: match params["filter"].as_str() {
                    Some("all") => FilterMode::All,
                    Some("noTools") => FilterMode::NoTools,
                    Some("userOnly") => FilterMode::UserOnly,
                    _ => FilterMode::Default,
                },
                search: params["search"].as_str().unwrap_or("").to_owned(),
                selected: params["selection"].as_str().map(str::to_owned),
                width: params["width"].as_u64().unwrap_or(120) as usize,
                height: if height == 0 {
                    session.entries().len() * 2 + 32
                } else {
                    height
                },
            };
            let view = compute_rows(session, &state, Some(home));
            assert_eq!(result["lines"], json!(view.text_lines()), "{what}: lines");
            assert_eq!(result["totalRows"], json!(view.rows.len()), "{what}");
            assert_eq!(result["selection"], json!(view.selected_id()), "{what}");
            assert_eq!(result["leaf"], json!(session.leaf_id()), "{what}");
        }
        "sessionTree/tree" => {
            let order = session.tree().preorder();
            assert_eq!(result["total"], json!(order.len()), "{what}");
            let offset = params["offset"].as_u64().unwrap_or(0) as usize;
            let limit = match params["limit"].as_u64().unwrap_or(0) as usize {
                0 => usize::MAX,
                n => n,
            };
            let expected: Vec<Option<&str>> = order
                .iter()
                .skip(offset)
                .take(limit)
                .map(|&(i, _)| session.entries()[i].id())
                .collect();
            let got: Vec<Option<&str>> = result["nodes"]
                .as_array()
                .expect("nodes")
                .iter()
                .map(|n| n["id"].as_str())
                .collect();
            assert_eq!(got, expected, "{what}: node ids");
        }
        "sessionTree/entry" => {
            let text = std::fs::read_to_string(file).expect("read");
            let line = result["line"].as_u64().expect("line") as usize;
            let written: Value = serde_json::from_str(text.lines().nth(line - 1).expect("line"))
                .expect("the line is JSON");
            assert_eq!(result["entry"], written, "{what}: the entry as written");
            assert_eq!(result["entry"]["id"], params["id"], "{what}");
        }
        "sessionTree/context" => {
            let leaf = params["leaf"].as_str().or(session.leaf_id());
            let context = session_context(session, leaf);
            assert_eq!(result["messages"], json!(context.messages), "{what}");
            assert_eq!(result["state"], context.state_json(), "{what}");
        }
        _ => unreachable!("{method}"),
    }
}

fn generate(dir: &Path, name: &str, dialect: &str, entries: &str, seed: u64) -> PathBuf {
    let out = dir.join(name);
    let status = Command::new(env!("CARGO_BIN_EXE_sessiontree"))
        .args(["generate", "--dialect", dialect, "--entries", entries])
        .args(["--seed", &seed.to_string(), "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .status()
        .expect("generate");
    assert!(status.success());
    out
}

/// The other writer: whole lines, one `write` each, chained from the session's last entry, in
/// batches until told to stop. Returns the ids it wrote and the seconds it wrote for.
fn grow(file: PathBuf, parent: String, stop: Arc<AtomicBool>) -> (Vec<String>, f64) {
    let started = Instant::now();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .expect("open for append");
    let mut parent = parent;
    let mut ids = Vec::new();
    while !stop.load(Ordering::Relaxed) && ids.len() < MAX_LINES {
        for _ in 0..BATCH {
            let n = ids.len();
            let id = format!("w{n:07x}");
            let message = if n % 2 == 0 {
                json!({"role": "user", "content": format!("line {n} from the agent"), "timestamp": 1})
            } else {
                json!({"role": "assistant", "content": [{"type": "text", "text": format!("answer {n}")}],
                       "api": "x", "provider": "p", "model": "m", "stopReason": "stop", "timestamp": 2,
                       "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                                 "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}})
            };
            let line = json!({"type": "message", "id": id, "parentId": parent,
                              "timestamp": "2026-01-01T00:00:00.000Z", "message": message});
            f.write_all(format!("{line}\n").as_bytes()).expect("append");
            parent = id.clone();
            ids.push(id);
        }
        std::thread::sleep(PAUSE);
    }
    (ids, started.elapsed().as_secs_f64())
}

/// What a client saw of the growing session and its own appends.
#[derive(Default)]
struct Seen {
    answers: usize,
    /// (request number, revision, entry count) for the growing session, by request order.
    growing: Vec<(u64, u64, u64)>,
    /// (request number, revision, entry id) of the appends, by request order.
    appends: Vec<(u64, u64, String)>,
}

enum Ask {
    Quiet(usize, usize),
    Growing(&'static str),
    Append,
}

fn run_client(
    mut client: Client,
    quiet: Arc<Vec<Quiet>>,
    baseline: Arc<HashMap<(usize, usize), Value>>,
    growing: String,
    appends_to: Option<String>,
) -> Seen {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (client.number + 1).wrapping_mul(0x2545_f491));
    let mut pending: HashMap<u64, Ask> = HashMap::new();
    let mut seen = Seen::default();
    let mut appended = 0;
    let mut sent = 0;
    let handle = |msg: Value, pending: &mut HashMap<u64, Ask>, seen: &mut Seen| {
        let id = msg["id"].as_u64().expect("id");
        let ask = pending.remove(&id).expect("an answer to a request sent");
        assert!(msg.get("error").is_none(), "an error under load: {msg}");
        let result = &msg["result"];
        seen.answers += 1;
        match ask {
            Ask::Quiet(s, r) => {
                let expected = &baseline[&(s, r)];
                assert!(
                    result == expected,
                    "{} {} answered differently under load",
                    quiet[s].requests[r].0,
                    quiet[s].requests[r].1
                );
            }
            Ask::Growing(method) => {
                let count = match method {
                    "sessionTree/open" => result["entryCount"].as_u64(),
                    "sessionTree/tree" => result["total"].as_u64(),
                    _ => result["totalRows"].as_u64(),
                };
                let revision = result["revision"].as_u64().expect("revision");
                // Rows count visible rows only, which also never shrink here (all filter).
                seen.growing.push((id, revision, count.expect("a count")));
            }
            Ask::Append => {
                let revision = result["revision"].as_u64().expect("revision");
                let entry = result["entryId"].as_str().expect("entry id").to_owned();
                seen.appends.push((id, revision, entry));
            }
        }
    };
    while sent < REQUESTS || !pending.is_empty() {
        if sent < REQUESTS && pending.len() < WINDOW {
            let roll = rng.below(100);
            let (method, params, ask) =
                if appends_to.is_some() && sent % 4 == 0 && appended < APPENDS {
                    appended += 1;
                    let uri = appends_to.as_deref().unwrap_or_default();
                    let params =
                        json!({"uri": uri, "text": format!("append {appended} under load")});
                    ("sessionTree/append", params, Ask::Append)
                } else if roll < 20 {
                    let (method, params) = match rng.below(10) {
                        0..=4 => ("sessionTree/open", json!({"uri": growing})),
                        5..=7 => (
                            "sessionTree/tree",
                            json!({"uri": growing, "offset": 0, "limit": 20}),
                        ),
                        _ => (
                            "sessionTree/rows",
                            json!({"uri": growing, "filter": "all", "width": 100, "height": 20}),
                        ),
                    };
                    (method, params, Ask::Growing(method))
                } else {
                    let s = rng.below(quiet.len());
                    let r = rng.below(quiet[s].requests.len());
                    let (method, params) = quiet[s].requests[r].clone();
                    (method, params, Ask::Quiet(s, r))
                };
            let id = client.send(method, &params);
            pending.insert(id, ask);
            sent += 1;
        } else {
            let msg = client.receive();
            handle(msg, &mut pending, &mut seen);
        }
    }
    seen
}

fn peak_rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM")
}

#[test]
fn many_clients_tens_of_sessions_and_a_fast_growing_file() {
    let started = Instant::now();
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).expect("home");

    // The sessions.
    let mut files = Vec::new();
    for seed in 0..BIG {
        let dialect = if seed % 2 == 0 { "omp" } else { "pi" };
        files.push(generate(
            dir.path(),
            &format!("big{seed}.jsonl"),
            dialect,
            "2k",
            seed + 1,
        ));
    }
    for seed in 0..SMALL {
        let dialect = if seed % 2 == 0 { "pi" } else { "omp" };
        files.push(generate(
            dir.path(),
            &format!("small{seed}.jsonl"),
            dialect,
            "150",
            seed + 100,
        ));
    }
    for (i, rel) in FIXTURES.iter().enumerate() {
        files.push(copy_fixture(rel, dir.path(), &format!("fixture{i}.jsonl")));
    }
    let growing_file = generate(dir.path(), "growing.jsonl", "omp", "150", 7);
    let appended_file = generate(dir.path(), "appended.jsonl", "pi", "150", 8);

    // The server and the connection.
    let mut command = Command::new(env!("CARGO_BIN_EXE_sessiontree"));
    command.arg("lsp").stderr(Stdio::null());
    let mut server = Connection::spawn(command).expect("spawn sessiontree lsp");
    let pid = server.pid();
    let conn = Arc::new(Conn {
        writer: server.writer(),
        clients: Mutex::new(HashMap::new()),
        notifications: AtomicUsize::new(0),
    });
    let reader = {
        let conn = Arc::clone(&conn);
        std::thread::spawn(move || {
            server
                .until_closed(|msg| conn.dispatch(msg))
                .expect("answer the server");
            server
        })
    };
    let mut setup = Client::new(&conn, 99);
    setup.call(
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {},
               "initializationOptions": {"home": home}}),
    );
    conn.send_notification("initialized");

    // Open everything; the idle server's answers are the baseline, checked against the engine.
    let mut quiet = Vec::new();
    let mut baseline = HashMap::new();
    for (s, file) in files.iter().enumerate() {
        let open = setup.call("sessionTree/open", json!({"uri": uri(file)}));
        let u = open["uri"].as_str().expect("uri").to_owned();
        let session = Session::open(file, OpenOptions::default()).expect("loads");
        assert_eq!(open["entryCount"], json!(session.entries().len()));
        let requests = requests_for(&u, &session);
        for (r, (method, params)) in requests.iter().enumerate() {
            let result = setup.call(method, params.clone());
            check_against_engine(file, &session, &home, method, params, &result);
            baseline.insert((s, r), result);
        }
        quiet.push(Quiet { requests });
    }
    let growing = setup.call("sessionTree/open", json!({"uri": uri(&growing_file)}));
    let growing_uri = growing["uri"].as_str().expect("uri").to_owned();
    let growing_leaf = growing["leaf"].as_str().expect("leaf").to_owned();
    let appended = setup.call("sessionTree/open", json!({"uri": uri(&appended_file)}));
    let appended_uri = appended["uri"].as_str().expect("uri").to_owned();
    let appended_leaf = appended["leaf"].as_str().expect("leaf").to_owned();
    let sessions = quiet.len() + 2;
    let baseline_requests = baseline.len();

    let mut err = std::io::stderr().lock();
    writeln!(
        err,
        "load: set up and baseline in {:.1} s",
        started.elapsed().as_secs_f64()
    )
    .ok();
    drop(err);
    // The load.
    let load_started = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (file, stop) = (growing_file.clone(), Arc::clone(&stop));
        std::thread::spawn(move || grow(file, growing_leaf, stop))
    };
    let quiet = Arc::new(quiet);
    let baseline = Arc::new(baseline);
    let clients: Vec<_> = (0..CLIENTS as u64)
        .map(|n| {
            let client = Client::new(&conn, n + 1);
            let (quiet, baseline) = (Arc::clone(&quiet), Arc::clone(&baseline));
            let growing = growing_uri.clone();
            let appends_to = (n == 0).then(|| appended_uri.clone());
            std::thread::spawn(move || run_client(client, quiet, baseline, growing, appends_to))
        })
        .collect();
    let seen: Vec<Seen> = clients
        .into_iter()
        .map(|c| c.join().expect("a client failed"))
        .collect();
    stop.store(true, Ordering::Relaxed);
    let (written, writer_seconds) = writer.join().expect("writer");
    let load_seconds = load_started.elapsed().as_secs_f64();

    // Answers about the growing session never went back, for any client.
    for s in &seen {
        let mut by_request = s.growing.clone();
        by_request.sort();
        for w in by_request.windows(2) {
            assert!(w[0].1 <= w[1].1, "revision went back: {w:?}");
            assert!(w[0].2 <= w[1].2, "the growing session shrank: {w:?}");
        }
    }
    // The appends: acknowledged with growing revisions, all in the file, chained in order.
    let mut appends = seen[0].appends.clone();
    appends.sort();
    assert_eq!(appends.len(), APPENDS);
    assert!(
        appends.windows(2).all(|w| w[0].1 < w[1].1),
        "revisions grow"
    );
    let fresh = Session::open(&appended_file, OpenOptions::default()).expect("loads");
    let path: Vec<&str> = fresh
        .branch_path(None)
        .iter()
        .filter_map(|&i| fresh.entries()[i].id())
        .collect();
    let ours: Vec<&str> = appends.iter().map(|a| a.2.as_str()).collect();
    assert_eq!(
        path[path.len() - APPENDS..],
        ours[..],
        "appends chained in order"
    );
    assert_eq!(path[path.len() - APPENDS - 1], appended_leaf);

    // The growing session, once the writer stopped: the server catches up (hang guard only) and
    // then equals a fresh load.
    let fresh = Session::open(&growing_file, OpenOptions::default()).expect("loads");
    let deadline = Instant::now() + HANG;
    loop {
        let open = setup.call("sessionTree/open", json!({"uri": growing_uri}));
        if open["entryCount"] == json!(fresh.entries().len()) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the server never caught up: {open}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let tree = setup.call(
        "sessionTree/tree",
        json!({"uri": growing_uri, "offset": 0, "limit": 0}),
    );
    check_against_engine(
        &growing_file,
        &fresh,
        &home,
        "sessionTree/tree",
        &json!({"offset": 0, "limit": 0}),
        &tree,
    );
    let served: HashSet<&str> = tree["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .filter_map(|n| n["id"].as_str())
        .collect();
    for id in &written {
        assert!(served.contains(id.as_str()), "appended line {id} missing");
    }
    assert_eq!(
        tree["leaf"],
        json!(written.last()),
        "the leaf follows the writer"
    );
    let rows_params = json!({"uri": growing_uri, "filter": "default", "width": 100, "height": 30});
    let rows = setup.call("sessionTree/rows", rows_params.clone());
    check_against_engine(
        &growing_file,
        &fresh,
        &home,
        "sessionTree/rows",
        &rows_params,
        &rows,
    );

    let peak_kb = peak_rss_kb(pid);
    let requests: usize = seen.iter().map(|s| s.answers).sum();
    let growing_answers: usize = seen.iter().map(|s| s.growing.len()).sum();
    setup.call("shutdown", Value::Null);
    conn.send_notification("exit");
    let mut server = reader.join().expect("reader");
    let status = server.child().wait().expect("wait");
    assert!(status.success(), "exit: {status:?}");
    assert!(
        peak_kb < MAX_RSS_KB,
        "the server's peak memory is {peak_kb} kB"
    );
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "load: {CLIENTS} clients, {sessions} sessions open, {requests} pipelined requests answered \
         ({growing_answers} about the growing session, {APPENDS} appends through the server) in \
         {load_seconds:.1} s, {baseline_requests} baseline requests checked against the engine; \
         the other writer appended {} lines ({:.0} lines/s); {} notifications; server peak RSS \
         {} MB; whole test {:.1} s",
        written.len(),
        written.len() as f64 / writer_seconds,
        conn.notifications.load(Ordering::Relaxed),
        peak_kb / 1024,
        started.elapsed().as_secs_f64()
    )
    .expect("stdout");
}
