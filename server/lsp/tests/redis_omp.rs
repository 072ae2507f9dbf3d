//! The language server on a session the real omp (18.2.3 from npm, its `SessionManager` with
//! `RedisSessionStorage`, on Bun) keeps in a real `redis-server`: listed and opened by its
//! `redis://` URI as omp reloads it, omp's appends followed live in order, and the editor's writes
//! (a label, a message) reloaded by omp, which then writes on after them. Also: a store that
//! refuses its credentials is reported by `listSessions` and `open` without them, and the other
//! stores are listed all the same. The agents come from
//! `scripts/install-agents.sh` (pinned, cached) and `redis-server` from the test dependencies;
//! without them the test fails.

mod support;

use serde_json::{json, Value};
use sessiontree_redis::testing::RedisServer;
use sessiontree_testkit::fixtures::shared_conformance_dir;
use support::inproc::Client;

const HOME: &str = "/home/me";
const SESSIONS: &str = "/home/me/.omp/agent/sessions/-proj";

/// Runs `scripts/testing/omp-redis.ts <command> <url> omp:sessions: <args>` (omp's own storage
/// code under Bun) on the store at `url`; what it printed, as JSON.
fn omp(url: &str, args: &[&str]) -> Value {
    let text = sessiontree_testkit::agents::omp_redis(url, args);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("omp printed no JSON ({e}): {text}"))
}

/// omp's `append <path> <count>` (one process, one message at a time) off the async threads; the
/// ids it wrote, in order.
async fn omp_appends(server: &RedisServer, path: &str, count: usize) -> Vec<String> {
    let (url, path) = (server.url(), path.to_owned());
    let ids = tokio::task::spawn_blocking(move || {
        strings(&omp(&url, &["append", &path, &count.to_string()]))
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ids.len(), count, "omp appended {ids:?}");
    ids
}

/// The ids the `didChange` notifications of another writer bring, in order, until `ids` have all
/// come.
async fn followed(c: &Client, ids: &[String]) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    while !ids.iter().all(|id| seen.contains(id)) {
        let change = c
            .notification("sessionTree/didChange", 20)
            .await
            .unwrap_or_else(|| panic!("no didChange bringing {ids:?}; seen {seen:?}"));
        // The editor's own writes announce themselves too (reason `label`, `append`).
        if change["reason"] != json!("follow") {
            continue;
        }
        for id in change["newEntryIds"]
            .as_array()
            .cloned()
            .unwrap_or_default()
        {
            seen.push(id.as_str().unwrap_or_default().to_owned());
        }
    }
    seen
}

fn strings(v: &Value) -> Vec<String> {
    serde_json::from_value(v.clone()).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_omp_keeps_in_redis_opens_follows_omp_and_omp_reloads_our_writes() {
    let server = RedisServer::start();
    let scenario = shared_conformance_dir().join("c06-branch-basic/scenario.json");
    let written = omp(
        &server.url(),
        &[
            "write",
            &scenario.to_string_lossy(),
            SESSIONS,
            "/home/me/proj",
        ],
    );
    let path = written["sessionFile"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(path.starts_with(SESSIONS), "{written}");
    let reloaded = omp(&server.url(), &["reload", &path]);
    let omp_ids = strings(&reloaded["entryIds"]);

    let c = Client::initialized(
        false,
        json!({"home": HOME, "stores": [{"url": server.url()}]}),
        None,
    )
    .await;
    let ru = format!("redis://127.0.0.1:{}/0{path}", server.port());

    // Listed for the workspace and opened as omp reloads it.
    let listed = c
        .ok(
            "sessionTree/listSessions",
            json!({"folders": [format!("file://{HOME}/proj")]}),
        )
        .await;
    let uris: Vec<&Value> = listed["sessions"]
        .as_array()
        .map(|s| s.iter().map(|s| &s["uri"]).collect())
        .unwrap_or_default();
    assert_eq!(uris, vec![&json!(ru)], "{listed}");
    let open = c.ok("sessionTree/open", json!({"uri": ru})).await;
    assert_eq!(open["sessionId"], reloaded["header"]["id"], "{open}");
    assert_eq!(open["cwd"], reloaded["header"]["cwd"], "{open}");
    assert_eq!(open["entryCount"], json!(omp_ids.len()), "{open}");
    assert_eq!(open["leaf"], reloaded["leafId"], "{open}");
    assert_eq!(open["diagnostics"], json!([]), "{open}");

    // omp appends (one process, one message at a time): every line reaches the editor, in order.
    let appended = omp_appends(&server, &path, 3).await;
    assert_eq!(followed(&c, &appended).await, appended);
    let tree = c.ok("sessionTree/tree", json!({"uri": ru})).await;
    assert_eq!(tree["total"], json!(omp_ids.len() + 3), "{tree}");

    // The editor writes: omp reloads a label and a message below omp's last one.
    let label = c
        .ok(
            "sessionTree/setLabel",
            json!({"uri": ru, "targetId": appended[0], "label": "from the editor"}),
        )
        .await;
    let ours = c
        .ok(
            "sessionTree/append",
            json!({"uri": ru, "text": "written by sessiontree"}),
        )
        .await;
    let ours_id = ours["entryId"].as_str().unwrap_or_default().to_owned();
    let reloaded = omp(&server.url(), &["reload", &path]);
    assert_eq!(
        reloaded["labels"][appended[0].as_str()],
        json!("from the editor"),
        "{reloaded}"
    );
    let ids = strings(&reloaded["entryIds"]);
    assert_eq!(
        ids[ids.len() - 2..],
        [
            label["entryId"].as_str().unwrap_or("?").to_owned(),
            ours_id.clone()
        ],
        "{reloaded}"
    );
    assert_eq!(reloaded["leafId"], json!(ours_id));
    // A label line is an entry on the branch too (as omp writes it), between omp's message and ours.
    let branch = strings(&reloaded["branch"]);
    assert_eq!(
        branch[branch.len() - 3..],
        [
            appended[2].clone(),
            label["entryId"].as_str().unwrap_or("?").to_owned(),
            ours_id.clone()
        ],
        "our message continues omp's branch"
    );

    // omp writes on after our lines, and the editor follows again.
    let more = omp_appends(&server, &path, 1).await;
    assert_eq!(followed(&c, &more).await, more);
    let entry = c
        .ok("sessionTree/entry", json!({"uri": ru, "id": more[0]}))
        .await;
    assert_eq!(entry["entry"]["parentId"], json!(ours_id), "{entry}");
    let tree = c.ok("sessionTree/tree", json!({"uri": ru})).await;
    assert_eq!(tree["total"], json!(omp_ids.len() + 6), "{tree}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_refusing_its_credentials_is_reported_without_them_and_the_others_are_listed() {
    let good = RedisServer::start();
    let refusing = RedisServer::start();
    let path = format!("{SESSIONS}/2025-01-01T00-00-00-000Z_c01.jsonl");
    let bytes = std::fs::read(sessiontree_testkit::fixture(
        "c01-linear-basic/omp/session.jsonl",
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    for server in [&good, &refusing] {
        let _: () = redis::cmd("SET")
            .arg(format!("omp:sessions:file:{path}"))
            .arg(&bytes)
            .query(&mut server.connection())
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let secret = "hunter2-secret";
    // The refusing server has no ACL user `alice`: every connection is refused at AUTH.
    let c = Client::initialized(
        false,
        json!({"home": HOME, "stores": [
            {"url": good.url()},
            {"url": refusing.url(), "user": "alice", "password": secret},
        ]}),
        None,
    )
    .await;
    let listed = c
        .ok(
            "sessionTree/listSessions",
            json!({"folders": [format!("file://{HOME}/proj")]}),
        )
        .await;
    let text = listed.to_string();
    assert!(!text.contains(secret), "{text}");
    let uris: Vec<&Value> = listed["sessions"]
        .as_array()
        .map(|s| s.iter().map(|s| &s["uri"]).collect())
        .unwrap_or_default();
    let good_uri = format!("redis://127.0.0.1:{}/0{path}", good.port());
    assert_eq!(uris, vec![&json!(good_uri)], "{listed}");
    let unavailable = listed["unavailable"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(unavailable.len(), 1, "{listed}");
    let store = unavailable[0]["store"].as_str().unwrap_or_default();
    assert!(
        store.contains(&format!("127.0.0.1:{}", refusing.port())) && !store.contains("alice"),
        "{listed}"
    );
    assert!(
        !unavailable[0]["message"]
            .as_str()
            .unwrap_or_default()
            .is_empty(),
        "{listed}"
    );

    // Opening a session there fails with the store named, the password never shown.
    let refused_uri = format!("redis://127.0.0.1:{}/0{path}", refusing.port());
    let err = c.err("sessionTree/open", json!({"uri": refused_uri})).await;
    assert!(!err.to_string().contains(secret), "{err}");
    assert_eq!(support::kind(&err), "io", "{err}");
    assert!(
        err["message"]
            .as_str()
            .is_some_and(|m| m.contains(&format!("127.0.0.1:{}", refusing.port()))),
        "{err}"
    );
    let opened = c.ok("sessionTree/open", json!({"uri": good_uri})).await;
    assert_eq!(opened["diagnostics"], json!([]), "{opened}");
}
