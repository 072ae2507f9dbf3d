//! The language server on sessions omp keeps in Redis (a real `redis-server`, the store named in
//! `initializationOptions.stores`): listed beside files, opened by their
//! `redis://HOST:PORT/DB/PATH` URI, every `sessionTree/*` method and plain LSP feature answering
//! as for the same bytes in a file, writes landing in the store as omp's own, a fork into a new
//! key, live follow woken by the store's watch, and a store killed and restarted mid-follow.

mod support;

use serde_json::{json, Value};
use sessiontree_redis::testing::RedisServer;
use std::path::Path;
use support::inproc::Client;
use support::omp_store::{append, put, store, value};
use support::*;

const OMP: &str = "c06-branch-basic/omp/session.jsonl";
// c06 omp ids: u1 2ececf0f → a1 42864a3e → (u2 c498f61c → a2 7af3bc6f | u3 6c055220 → a3 662d009f)
const U1: &str = "2ececf0f";
const U2: &str = "c498f61c";
const A2: &str = "7af3bc6f";
const A3: &str = "662d009f";

const HOME: &str = "/home/me";
const PATH: &str = "/home/me/.omp/agent/sessions/-proj/2025-01-01T00-00-00-000Z_c06.jsonl";

fn redis_uri(server: &RedisServer, path: &str) -> String {
    format!("redis://127.0.0.1:{}/0{path}", server.port())
}

async fn client_for(server: &RedisServer) -> Client {
    Client::initialized(
        false,
        json!({"home": HOME, "stores": [{"url": server.url()}]}),
        None,
    )
    .await
}

/// A label line another writer appends (whole, with its newline).
fn label_line(id: &str, target: &str) -> String {
    format!("{{\"type\":\"label\",\"id\":\"{id}\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:09.000Z\",\"targetId\":\"{target}\",\"label\":\"from omp\"}}\n")
}

/// `v` with the session's names (URI and path) of both sides made one.
fn same_names(v: &Value, names: &[&str]) -> String {
    let mut text = v.to_string();
    for name in names {
        text = text.replace(name, "<session>");
    }
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_method_answers_on_a_redis_session_as_on_its_file() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().expect("tmp");
    let file = copy_fixture(OMP, dir.path(), "s.jsonl");
    let bytes = std::fs::read(&file).expect("read");
    put(&server, PATH, &bytes);
    // A session of another project: not listed for this workspace.
    put(
        &server,
        "/home/me/.omp/agent/sessions/-other/x.jsonl",
        &bytes,
    );
    let c = client_for(&server).await;
    let fu = uri(&file);
    let ru = redis_uri(&server, PATH);
    let names = [fu.as_str(), ru.as_str(), file.to_str().unwrap_or("?"), PATH];

    let listed = c
        .ok(
            "sessionTree/listSessions",
            json!({"folders": [format!("file://{HOME}/proj")]}),
        )
        .await;
    let sessions = listed["sessions"].as_array().cloned().unwrap_or_default();
    assert_eq!(sessions.len(), 1, "{listed}");
    let s = &sessions[0];
    assert_eq!(s["uri"], json!(ru));
    assert_eq!(s["path"], json!(PATH));
    assert_eq!(
        (&s["agent"], &s["dialect"], &s["entryCount"]),
        (&json!("omp"), &json!("omp"), &json!(6))
    );
    assert_eq!(
        s["sessionId"],
        json!("01941f29-7c00-7ed4-8931-786ba68ef677")
    );
    assert_eq!(s["firstUserMessage"], json!("Plan a trip"));
    assert!(listed.get("unavailable").is_none(), "{listed}");

    // Reads: the same answers as for the file, names aside.
    let reads: Vec<(&str, Value)> = vec![
        ("sessionTree/open", json!({})),
        ("sessionTree/tree", json!({})),
        ("sessionTree/rows", json!({"width": 60, "height": 10})),
        ("sessionTree/rows", json!({"filter": "userOnly"})),
        (
            "sessionTree/rows",
            json!({"search": "paris", "filter": "all"}),
        ),
        ("sessionTree/entry", json!({"id": A2})),
        ("sessionTree/context", json!({})),
        ("sessionTree/context", json!({"leaf": A2})),
        ("sessionTree/transcript", json!({})),
    ];
    for (method, params) in &reads {
        let mut on_file = params.clone();
        on_file["uri"] = json!(fu);
        let mut on_redis = params.clone();
        on_redis["uri"] = json!(ru);
        let a = c.ok(method, on_file).await;
        let b = c.ok(method, on_redis).await;
        assert_eq!(
            same_names(&a, &names),
            same_names(&b, &names),
            "{method} {params}"
        );
    }
    // Navigation without a summary moves the leaf only, on both.
    let nav = |u: &str| json!({"uri": u, "targetId": A2});
    let a = c.ok("sessionTree/navigate", nav(&fu)).await;
    let b = c.ok("sessionTree/navigate", nav(&ru)).await;
    assert_eq!(same_names(&a, &names), same_names(&b, &names));
    assert_eq!(b["newLeaf"], json!(A2));

    // Writes land in the store, whole lines after what was read, as omp's would.
    let before = value(&server, PATH).unwrap_or_default();
    let label = c
        .ok(
            "sessionTree/setLabel",
            json!({"uri": ru, "targetId": U2, "label": "dest"}),
        )
        .await;
    let appended = c
        .ok(
            "sessionTree/append",
            json!({"uri": ru, "text": "from the editor"}),
        )
        .await;
    let named = c
        .ok("sessionTree/setName", json!({"uri": ru, "name": "Trip"}))
        .await;
    assert_eq!(named["name"], json!("Trip"));
    let planned = c
        .ok(
            "sessionTree/nameFromPlanTitle",
            json!({"uri": ru, "planTitle": "fix-the_login"}),
        )
        .await;
    let after = value(&server, PATH).unwrap_or_default();
    assert!(after.starts_with(&before));
    let added = String::from_utf8_lossy(&after[before.len()..]).into_owned();
    let lines: Vec<&str> = added.lines().collect();
    let plan_lines = usize::from(planned["applied"] == json!(true));
    assert_eq!(lines.len(), 3 + plan_lines, "{added} {planned}");
    assert!(lines[0].contains(label["entryId"].as_str().unwrap_or("?")));
    assert!(lines[1].contains(appended["entryId"].as_str().unwrap_or("?")));
    assert!(lines[2].contains("\"title_change\"") || lines[2].contains("Trip"));
    let reread = sessiontree_core::Session::open_store(
        std::sync::Arc::new(store(&server, PATH)),
        sessiontree_core::OpenOptions::default(),
    )
    .expect("reread");
    assert_eq!(reread.session_name(), planned["name"].as_str());
    assert_eq!(reread.label(U2), Some("dest"));
    let path = reread.branch_ids(appended["entryId"].as_str());
    assert!(
        path.contains(&Some(A2)),
        "the message was appended below the leaf the editor moved to: {path:?}"
    );

    // /branch from a user message: a new key in the same store, opened under its URI.
    let fork = c
        .ok("sessionTree/branch", json!({"uri": ru, "entryId": U2}))
        .await;
    let new_uri = fork["newUri"].as_str().unwrap_or_default().to_owned();
    let new_path = fork["newPath"].as_str().unwrap_or_default().to_owned();
    assert_eq!(new_uri, redis_uri(&server, &new_path), "{fork}");
    assert_eq!(
        Path::new(&new_path).parent(),
        Path::new(PATH).parent(),
        "{fork}"
    );
    assert!(value(&server, &new_path).is_some(), "the fork's key exists");
    let opened = c.ok("sessionTree/open", json!({"uri": new_uri})).await;
    assert_eq!(opened["uri"], json!(new_uri));
    assert_eq!(opened["sessionId"], fork["sessionId"]);

    // The live agent keeps its sessions in files: none runs on a store's session.
    let agent = c.ok("sessionTree/agent", json!({"uri": ru})).await;
    assert_eq!(agent["state"], json!("unavailable"), "{agent}");
    let prompt = c
        .err("sessionTree/prompt", json!({"uri": ru, "text": "hi"}))
        .await;
    assert_eq!(kind(&prompt), "unsupported", "{prompt}");

    // A store the settings do not name, a missing session, a malformed URI.
    let other = c
        .err(
            "sessionTree/open",
            json!({"uri": "redis://127.0.0.1:1/0/home/me/x.jsonl"}),
        )
        .await;
    assert_eq!(kind(&other), "invalidParams");
    assert!(
        other["message"]
            .as_str()
            .is_some_and(|m| m.contains("not among the stores")),
        "{other}"
    );
    let missing = c
        .err(
            "sessionTree/open",
            json!({"uri": redis_uri(&server, "/home/me/.omp/agent/sessions/-proj/nope.jsonl")}),
        )
        .await;
    assert_eq!(kind(&missing), "fileNotFound", "{missing}");
    let malformed = c
        .err(
            "sessionTree/open",
            json!({"uri": format!("redis://127.0.0.1:{}/zero/x.jsonl", server.port())}),
        )
        .await;
    assert_eq!(kind(&malformed), "invalidParams", "{malformed}");

    assert_eq!(
        c.ok("sessionTree/close", json!({"uri": ru})).await,
        json!({"closed": true})
    );
    let gone = c.err("sessionTree/tree", json!({"uri": ru})).await;
    assert_eq!(kind(&gone), "sessionNotFound");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_lsp_features_answer_on_a_redis_session_document() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().expect("tmp");
    let file = copy_fixture(OMP, dir.path(), "s.jsonl");
    put(&server, PATH, &std::fs::read(&file).expect("read"));
    let c = client_for(&server).await;
    let fu = uri(&file);
    let ru = redis_uri(&server, PATH);
    let names = [fu.as_str(), ru.as_str(), file.to_str().unwrap_or("?"), PATH];
    for u in [&fu, &ru] {
        c.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": u, "languageId": "jsonl", "version": 1, "text": ""}}),
        )
        .await;
        let diags = c
            .notification("textDocument/publishDiagnostics", 10)
            .await
            .expect("diagnostics");
        assert_eq!(diags["uri"], json!(u));
        assert_eq!(diags["diagnostics"], json!([]));
    }
    let doc = |u: &str| json!({"textDocument": {"uri": u}});
    let at = |u: &str, line: u32| json!({"textDocument": {"uri": u}, "position": {"line": line, "character": 3}});
    let range = |u: &str| json!({"textDocument": {"uri": u}, "range": {"start": {"line": 4, "character": 0}, "end": {"line": 4, "character": 0}}, "context": {"diagnostics": []}});
    type Params = Box<dyn Fn(&str) -> Value>;
    let requests: Vec<(&str, Params)> = vec![
        ("textDocument/documentSymbol", Box::new(doc)),
        ("textDocument/hover", Box::new(move |u| at(u, 4))),
        ("textDocument/hover", Box::new(move |u| at(u, 1))),
        ("textDocument/definition", Box::new(move |u| at(u, 4))),
        ("textDocument/codeLens", Box::new(doc)),
        ("textDocument/codeAction", Box::new(range)),
    ];
    for (method, params) in &requests {
        let a = c.ok(method, params(&fu)).await;
        let b = c.ok(method, params(&ru)).await;
        assert!(
            !b.is_null(),
            "{method} answered nothing on the store's session"
        );
        assert_eq!(same_names(&a, &names), same_names(&b, &names), "{method}");
    }
    let def = c.ok("textDocument/definition", at(&ru, 4)).await;
    assert_eq!(
        def["uri"],
        json!(ru),
        "go to parent stays in the store's session"
    );

    // The code lenses' commands act on the store's session.
    let label = c
        .ok(
            "workspace/executeCommand",
            json!({"command": "sessionTree.label", "arguments": [ru, U1, "start"]}),
        )
        .await;
    assert!(label["entryId"].is_string(), "{label}");
    let nav = c
        .ok(
            "workspace/executeCommand",
            json!({"command": "sessionTree.navigate", "arguments": [ru, A3]}),
        )
        .await;
    assert_eq!(nav["newLeaf"], json!(A3));
    let written = String::from_utf8(value(&server, PATH).unwrap_or_default()).expect("utf-8");
    assert!(written
        .lines()
        .last()
        .is_some_and(|l| l.contains("\"label\":\"start\"")));

    // Closing the document stops following a session no client opened through the protocol.
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": ru}}),
    )
    .await;
    let gone = c.err("sessionTree/tree", json!({"uri": ru})).await;
    assert_eq!(kind(&gone), "sessionNotFound");
}

/// Waits for the `didChange` that brings entry `id`; returns its reason.
async fn change_bringing(c: &Client, id: &str) -> String {
    loop {
        let change = c
            .notification("sessionTree/didChange", 20)
            .await
            .unwrap_or_else(|| panic!("no didChange bringing {id}"));
        let ids = change["newEntryIds"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if ids.contains(&json!(id)) {
            return change["reason"].as_str().unwrap_or_default().to_owned();
        }
    }
}

async fn follows_another_writer(server: &RedisServer) {
    let bytes = std::fs::read(fixture(OMP)).expect("read");
    put(server, PATH, &bytes);
    let c = client_for(server).await;
    let ru = redis_uri(server, PATH);
    let open = c.ok("sessionTree/open", json!({"uri": ru})).await;
    assert_eq!(open["entryCount"], json!(6));
    append(server, PATH, &label_line("f1", U1), 1);
    assert_eq!(change_bringing(&c, "f1").await, "follow");
    // A line written in two pieces is read once whole.
    let line = label_line("f2", A2);
    append(server, PATH, &line[..30], 1);
    append(server, PATH, &line[30..], 1);
    assert_eq!(change_bringing(&c, "f2").await, "follow");
    let tree = c.ok("sessionTree/tree", json!({"uri": ru})).await;
    assert_eq!(tree["total"], json!(8), "{tree}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_writers_lines_reach_the_client_by_polling() {
    follows_another_writer(&RedisServer::start()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_writers_lines_reach_the_client_by_keyspace_notifications() {
    follows_another_writer(&RedisServer::start_with(&[
        "--notify-keyspace-events",
        "K$",
    ]))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_killed_and_restarted_mid_follow_is_followed_again_and_loses_nothing() {
    let mut server = RedisServer::start();
    let bytes = std::fs::read(fixture(OMP)).expect("read");
    put(&server, PATH, &bytes);
    let c = client_for(&server).await;
    let ru = redis_uri(&server, PATH);
    c.ok("sessionTree/open", json!({"uri": ru})).await;
    append(&server, PATH, &label_line("k1", U1), 1);
    assert_eq!(change_bringing(&c, "k1").await, "follow");
    let kept = value(&server, PATH).unwrap_or_default();

    server.kill();
    let started = std::time::Instant::now();
    let down = c
        .err(
            "sessionTree/append",
            json!({"uri": ru, "text": "while the store is down"}),
        )
        .await;
    assert_eq!(kind(&down), "io", "{down}");
    let message = down["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("127.0.0.1:{}", server.port())),
        "{down}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    // Reads of what was read keep answering.
    let tree = c.ok("sessionTree/tree", json!({"uri": ru})).await;
    assert_eq!(tree["total"], json!(7), "{tree}");

    // Back with its data (a server with persistence), and an agent writing on: followed again.
    server.restart();
    put(&server, PATH, &kept);
    append(&server, PATH, &label_line("k2", A2), 1);
    assert_eq!(change_bringing(&c, "k2").await, "follow");
    let ours = loop {
        let answer = c
            .request(
                "sessionTree/append",
                json!({"uri": ru, "text": "after the restart"}),
            )
            .await;
        match answer.get("error") {
            None => {
                break answer["result"]["entryId"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned()
            }
            // The link may still be pausing after the failed connects.
            Some(e) if kind(e) == "io" => {
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
            Some(e) => panic!("{e}"),
        }
    };
    let now = String::from_utf8(value(&server, PATH).unwrap_or_default()).expect("utf-8");
    assert!(now.as_bytes().starts_with(&kept));
    assert_eq!(
        now.matches(&format!("\"id\":\"{ours}\"")).count(),
        1,
        "written once"
    );
    assert!(
        !now.contains("while the store is down"),
        "nothing of the failed write"
    );

    // Restarted without its data: nothing is written in place of the lost value.
    server.restart();
    let lost = loop {
        let answer = c
            .request(
                "sessionTree/append",
                json!({"uri": ru, "text": "into the void"}),
            )
            .await;
        match answer.get("error") {
            Some(e) if kind(e) == "io" => {
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
            Some(e) => break e.clone(),
            None => panic!("an append into a lost value must be refused: {answer}"),
        }
    };
    assert_eq!(kind(&lost), "fileReplaced", "{lost}");
    assert_eq!(value(&server, PATH), None, "nothing written in its place");
}

/// Rewind is refused on a store's session even when its `cwd` names a git work tree here (the
/// agent may have run on another machine): the points answer `available: false` with the reason,
/// compare, restore and undo fail with `unsupported`, and the folder is left as it was. The same
/// bytes in a file rewind there as usual.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewind_is_refused_on_a_store_session_and_touches_nothing() {
    use sessiontree_testkit::git::git;
    let server = RedisServer::start();
    let dir = tempfile::tempdir().expect("tmp");
    let work = dir.path().join("work");
    std::fs::create_dir(&work).expect("mkdir");
    git(&work, &["init", "-q"]);
    std::fs::write(work.join("a.txt"), "mine\n").expect("write");
    git(&work, &["add", "."]);
    git(&work, &["commit", "-qm", "one"]);
    let fixture = std::fs::read_to_string(fixture(OMP)).expect("read");
    let bytes = fixture.replace(
        "\"cwd\":\"/tmp/refgen-home/project\"",
        &format!("\"cwd\":{}", json!(work.to_string_lossy())),
    );
    assert_ne!(bytes, fixture, "the fixture's cwd was replaced");
    let file = dir.path().join("s.jsonl");
    std::fs::write(&file, &bytes).expect("write");
    put(&server, PATH, bytes.as_bytes());
    let c = client_for(&server).await;
    let (fu, ru) = (uri(&file), redis_uri(&server, PATH));
    c.ok("sessionTree/open", json!({"uri": fu})).await;
    c.ok("sessionTree/open", json!({"uri": ru})).await;

    let on_file = c.ok("sessionTree/rewindPoints", json!({"uri": fu})).await;
    assert_eq!(on_file["available"], json!(true), "{on_file}");
    let on_store = c.ok("sessionTree/rewindPoints", json!({"uri": ru})).await;
    assert_eq!(on_store["available"], json!(false), "{on_store}");
    assert_eq!(on_store["points"], json!([]));
    let reason = on_store["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("kept in a store") && reason.contains(&*work.to_string_lossy()),
        "{on_store}"
    );
    for (method, params) in [
        (
            "sessionTree/rewindCompare",
            json!({"uri": ru, "entryId": A2}),
        ),
        (
            "sessionTree/rewindFile",
            json!({"uri": ru, "entryId": A2, "path": "a.txt"}),
        ),
        (
            "sessionTree/rewindRestore",
            json!({"uri": ru, "entryId": A2}),
        ),
        ("sessionTree/rewindUndo", json!({"uri": ru})),
    ] {
        let err = c.err(method, params).await;
        assert_eq!(kind(&err), "unsupported", "{method}: {err}");
        assert!(
            err["message"]
                .as_str()
                .is_some_and(|m| m.contains("nothing was read or written")),
            "{method}: {err}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(work.join("a.txt")).expect("read"),
        "mine\n"
    );
    assert_eq!(git(&work, &["status", "--porcelain"]), "");
}

/// `workspace/symbol` searches the stores' sessions as it searches files: the same names, lines
/// and containers for a store's session as for its bytes in a file, and a line another writer
/// appends is found at its line once the store's value has grown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workspace_symbols_cover_the_stores_sessions() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().expect("tmp");
    // Named as the store's session is, so that the containers (the file name) are the same.
    let name = Path::new(PATH)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("?");
    let file = copy_fixture(OMP, dir.path(), name);
    let bytes = std::fs::read(&file).expect("read");
    put(&server, PATH, &bytes);
    let c = client_for(&server).await;
    let (fu, ru) = (uri(&file), redis_uri(&server, PATH));
    c.ok("sessionTree/open", json!({"uri": fu})).await;

    let hits = |found: &Value, u: &str| -> Vec<String> {
        found
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .filter(|s| s["location"]["uri"] == json!(u))
            .map(|s| {
                let mut s = s.clone();
                s["location"]["uri"] = json!("<session>");
                s.to_string()
            })
            .collect()
    };
    let found = c.ok("workspace/symbol", json!({"query": "trip"})).await;
    let (on_file, on_store) = (hits(&found, &fu), hits(&found, &ru));
    assert!(!on_store.is_empty(), "{found}");
    assert_eq!(on_file, on_store, "{found}");
    // Open, the store's session is named from what its actor holds: the same symbols.
    c.ok("sessionTree/open", json!({"uri": ru})).await;
    let found = c.ok("workspace/symbol", json!({"query": "trip"})).await;
    assert_eq!(hits(&found, &ru), on_store, "{found}");
    assert_eq!(hits(&found, &fu), on_file, "{found}");
    c.ok("sessionTree/close", json!({"uri": ru})).await;

    let lines_before = bytes.iter().filter(|&&b| b == b'\n').count();
    append(
        &server,
        PATH,
        &format!("{{\"type\":\"message\",\"id\":\"zz000001\",\"parentId\":\"{A3}\",\"timestamp\":\"2025-01-01T00:00:10.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"zebra crossing\",\"timestamp\":1735689610000}}}}\n"),
        1,
    );
    let found = c
        .ok("workspace/symbol", json!({"query": "zebra crossing"}))
        .await;
    let first = &found[0];
    assert_eq!(first["location"]["uri"], json!(ru), "{found}");
    assert_eq!(
        first["location"]["range"]["start"]["line"],
        json!(lines_before),
        "{found}"
    );
    assert!(
        first["containerName"]
            .as_str()
            .is_some_and(|c| c.ends_with("· zz000001")),
        "{found}"
    );
}

/// A `rediss://` store named with its CA's certificate (`caFile`) lists and opens its sessions
/// as a plain store does; without `caFile` the listing reports the store unavailable with the
/// certificate error and the way out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tls_store_is_served_with_its_ca_file() {
    let dir = tempfile::tempdir().expect("tmp");
    let tls = support::tls_store::TlsStore::start(dir.path());
    let bytes = std::fs::read(fixture(OMP)).expect("read");
    put(&tls.server, PATH, &bytes);
    let folders = json!({"folders": [format!("file://{HOME}/proj")]});

    let c = Client::initialized(
        false,
        json!({"home": HOME, "stores": [{"url": tls.url(), "caFile": tls.ca_file}]}),
        None,
    )
    .await;
    let listed = c.ok("sessionTree/listSessions", folders.clone()).await;
    let ru = format!("rediss://127.0.0.1:{}/0{PATH}", tls.tls_port);
    assert_eq!(listed["sessions"][0]["uri"], json!(ru), "{listed}");
    let opened = c.ok("sessionTree/open", json!({"uri": ru})).await;
    assert_eq!(
        opened["sessionId"],
        json!("01941f29-7c00-7ed4-8931-786ba68ef677")
    );

    let without = Client::initialized(
        false,
        json!({"home": HOME, "stores": [{"url": tls.url()}]}),
        None,
    )
    .await;
    let listed = without.ok("sessionTree/listSessions", folders).await;
    assert_eq!(listed["sessions"], json!([]), "{listed}");
    let message = listed["unavailable"][0]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        message.contains("invalid peer certificate") && message.contains("caFile"),
        "{listed}"
    );
}
