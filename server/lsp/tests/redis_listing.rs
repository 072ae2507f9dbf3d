//! `sessionTree/listSessions` on a store (a real `redis-server`): each session of the store is
//! listed exactly as the file of the same bytes (every conformance session, both dialects), and
//! a listing reads each value at most once: the next listings read none of an unchanged session
//! (weighed by the bytes the Redis server sent, its `total_net_output_bytes`), and a session that
//! changed (renamed, appended to) is read again and listed as it is now.

mod support;

use serde_json::{json, Value};
use sessiontree_core::session::SessionStore;
use sessiontree_core::title_slot::TitleSlot;
use sessiontree_redis::testing::RedisServer;
use std::collections::BTreeMap;
use std::path::Path;
use support::inproc::Client;
use support::omp_store::{append, put, set_mtime, store};

const HOME: &str = "/home/me";
/// omp's folder for `/home/me/proj`.
const DIR: &str = "/home/me/.omp/agent/sessions/-proj";

/// Bytes the Redis server has sent to its clients so far.
fn sent(server: &RedisServer) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("stats")
        .query(&mut server.connection())
        .unwrap_or_else(|e| panic!("{e}"));
    info.lines()
        .find_map(|l| l.strip_prefix("total_net_output_bytes:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no total_net_output_bytes in INFO stats: {info}"))
}

fn mtime_ms(path: &Path) -> u64 {
    let modified = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let since = modified
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(0)
}

/// The listing's sessions by file name, each without its names (URI, path) and live mark.
fn by_name(listed: &Value, store: bool) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for s in listed["sessions"].as_array().cloned().unwrap_or_default() {
        let uri = s["uri"].as_str().unwrap_or("");
        if uri.starts_with("redis://") != store {
            continue;
        }
        let name = Path::new(s["path"].as_str().unwrap_or(""))
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut s = s.clone();
        for key in ["uri", "path", "liveWriter"] {
            s.as_object_mut().map(|o| o.remove(key));
        }
        out.insert(name, s);
    }
    out
}

async fn client(server: &RedisServer, agents: &Path) -> Client {
    Client::initialized(
        false,
        json!({
            "home": HOME,
            "ompAgentDir": agents.join("omp"),
            "piAgentDir": agents.join("pi"),
            "stores": [{"url": server.url()}],
        }),
        None,
    )
    .await
}

fn folders() -> Value {
    json!({"folders": [format!("file://{HOME}/proj")]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_conformance_session_is_listed_from_the_store_as_its_file() {
    let server = RedisServer::start();
    let agents = tempfile::tempdir().expect("tmp");
    let files = agents.path().join("omp/sessions/-proj");
    std::fs::create_dir_all(&files).expect("mkdir");
    let mut put_count = 0;
    for scenario in sessiontree_testkit::fixtures::all_scenarios() {
        let scenario_name = scenario
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for dialect in ["omp", "pi"] {
            let source = scenario.join(dialect).join("session.jsonl");
            let Ok(bytes) = std::fs::read(&source) else {
                continue;
            };
            let name = format!("{scenario_name}-{dialect}.jsonl");
            let file = files.join(&name);
            std::fs::write(&file, &bytes).expect("write");
            let path = format!("{DIR}/{name}");
            put(&server, &path, &bytes);
            set_mtime(&server, &path, mtime_ms(&file));
            put_count += 1;
        }
    }
    assert!(put_count >= 20, "only {put_count} conformance sessions");
    let c = client(&server, agents.path()).await;
    let listed = c.ok("sessionTree/listSessions", folders()).await;
    assert!(listed.get("unavailable").is_none(), "{listed}");
    let (from_files, from_store) = (by_name(&listed, false), by_name(&listed, true));
    assert!(from_files.len() >= 20, "{listed}");
    assert_eq!(
        from_store.keys().collect::<Vec<_>>(),
        from_files.keys().collect::<Vec<_>>()
    );
    for (name, file) in &from_files {
        assert_eq!(&from_store[name], file, "{name}");
    }
    // Listed again from what was kept: the same.
    let again = c.ok("sessionTree/listSessions", folders()).await;
    assert_eq!(by_name(&again, true), from_store);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listing_reads_a_large_session_once_and_then_only_what_changed() {
    let server = RedisServer::start();
    let agents = tempfile::tempdir().expect("tmp");
    let files = agents.path().join("omp/sessions/-proj");
    std::fs::create_dir_all(&files).expect("mkdir");
    let file = files.join("big.jsonl");
    sessiontree_core::synth::generate_file(
        sessiontree_core::synth::SynthOptions {
            dialect: sessiontree_core::Dialect::Omp,
            entries: 5000,
            seed: 7,
        },
        &file,
    )
    .expect("generate");
    let bytes = std::fs::read(&file).expect("read");
    let size = bytes.len() as u64;
    assert!(size > 10 << 20, "{size} bytes");
    let path = format!("{DIR}/big-in-store.jsonl");
    put(&server, &path, &bytes);
    set_mtime(&server, &path, mtime_ms(&file));
    let c = client(&server, agents.path()).await;

    let before = sent(&server);
    let first = c.ok("sessionTree/listSessions", folders()).await;
    let read_first = sent(&server) - before;
    let store_side = by_name(&first, true);
    let mut file_side = by_name(&first, false)["big.jsonl"].clone();
    file_side["modified"] = store_side["big-in-store.jsonl"]["modified"].clone();
    file_side["modifiedMs"] = store_side["big-in-store.jsonl"]["modifiedMs"].clone();
    assert_eq!(store_side["big-in-store.jsonl"], file_side);
    // The value is scanned once by range (never held whole): each byte once, plus the blocks
    // read around the boundaries of the parallel scan's segments.
    assert!(
        read_first <= size + size / 4,
        "the first listing read {read_first} bytes of a {size}-byte session"
    );

    // Unchanged: listed from what was kept, reading none of the value.
    let before = sent(&server);
    let second = c.ok("sessionTree/listSessions", folders()).await;
    let read_second = sent(&server) - before;
    assert_eq!(by_name(&second, true), store_side);
    assert!(
        read_second < 16 << 10 && read_second * 100 < size,
        "an unchanged listing read {read_second} bytes of a {size}-byte session"
    );

    // Renamed by omp (its title row and mtime): read again, listed with the new name.
    store(&server, &path)
        .set_title(&TitleSlot {
            title: "Renamed in the store".to_owned(),
            source: Some("user".to_owned()),
            updated_at: "2026-01-01T00:00:00.000Z".to_owned(),
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let renamed = by_name(&c.ok("sessionTree/listSessions", folders()).await, true);
    assert_eq!(
        renamed["big-in-store.jsonl"]["name"],
        json!("Renamed in the store")
    );

    // Another writer's line: counted.
    let count = store_side["big-in-store.jsonl"]["entryCount"]
        .as_u64()
        .unwrap_or(0);
    let line = "{\"type\":\"message\",\"id\":\"zz000001\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"late\",\"timestamp\":1}}\n";
    append(&server, &path, line, 1_767_225_601_000);
    let appended = by_name(&c.ok("sessionTree/listSessions", folders()).await, true);
    assert_eq!(
        appended["big-in-store.jsonl"]["entryCount"],
        json!(count + 1)
    );
}
