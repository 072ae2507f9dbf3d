//! The Redis store against a real `redis-server`: sessions read from Redis answer exactly as the
//! same bytes in a file; writes land as omp's scripts would leave them, only after the bytes the
//! session read; another writer's lines are followed in order, whole; a value rewritten is
//! reloaded; a store that goes away gives clear errors and comes back.

use redis::Commands;
use sessiontree_core::session::SessionStore;
use sessiontree_core::{snapshot, Error, OpenOptions, Session};
use sessiontree_redis::testing::RedisServer;
use sessiontree_redis::{Link, RedisStore};
use sessiontree_testkit::fixtures::shared_conformance_dir;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const PATH: &str = "/home/me/.omp/agent/sessions/-proj/2026-01-01T00-00-00-000Z_abc.jsonl";

/// Every omp session file of the conformance suite.
fn omp_fixtures() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(shared_conformance_dir())
        .unwrap_or_else(|e| panic!("conformance fixtures: {e}"))
        .filter_map(|d| d.ok())
        .flat_map(|d| {
            ["session.jsonl", "branched.jsonl", "migrated.jsonl"]
                .map(|f| d.path().join("omp").join(f))
        })
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(files.len() > 30, "too few omp fixtures: {}", files.len());
    files
}

fn store(server: &RedisServer, path: &str) -> Arc<RedisStore> {
    let link = Link::new(server.address()).unwrap_or_else(|e| panic!("{e}"));
    Arc::new(RedisStore::new(link, Path::new(path)))
}

/// Puts a session into Redis as omp's full write leaves it: the value, its mtime, and the title
/// its slot holds in the title hash.
fn put(conn: &mut redis::Connection, path: &str, bytes: &[u8]) {
    let _: () = conn
        .set(format!("omp:sessions:file:{path}"), bytes)
        .unwrap_or_else(|e| panic!("{e}"));
    let _: () = conn
        .hset("omp:sessions:meta", path, "1")
        .unwrap_or_else(|e| panic!("{e}"));
    let first = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
    if let Some(slot) = std::str::from_utf8(first)
        .ok()
        .and_then(sessiontree_core::title_slot::TitleSlot::parse)
    {
        let mut m = serde_json::Map::new();
        m.insert("title".into(), slot.title.into());
        if let Some(s) = slot.source {
            m.insert("source".into(), s.into());
        }
        m.insert("updatedAt".into(), slot.updated_at.into());
        let _: () = conn
            .hset(
                "omp:sessions:title",
                path,
                serde_json::Value::Object(m).to_string(),
            )
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

fn value(conn: &mut redis::Connection, path: &str) -> Vec<u8> {
    conn.get(format!("omp:sessions:file:{path}"))
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_omp_fixture_reads_from_redis_as_from_its_file() {
    let server = RedisServer::start();
    let mut conn = server.connection();
    for (n, file) in omp_fixtures().iter().enumerate() {
        let bytes = std::fs::read(file).unwrap_or_else(|e| panic!("{e}"));
        let path = format!("/sessions/{n}.jsonl");
        put(&mut conn, &path, &bytes);
        let from_file = Session::open(file, OpenOptions::default());
        let from_redis = Session::open_store(store(&server, &path), OpenOptions::default());
        match (from_file, from_redis) {
            (Ok(a), Ok(b)) => {
                let (mut a, mut b) = (snapshot::snapshot(&a), snapshot::snapshot(&b));
                // Diagnostics name the file; everything else must be equal.
                a.as_object_mut().map(|o| o.remove("diagnostics"));
                b.as_object_mut().map(|o| o.remove("diagnostics"));
                assert_eq!(a, b, "{}", file.display());
            }
            (Err(a), Err(b)) => assert_eq!(a.kind(), b.kind(), "{}", file.display()),
            (a, b) => panic!(
                "{}: file {:?} vs redis {:?}",
                file.display(),
                a.map(|_| ()),
                b.map(|_| ())
            ),
        }
    }
}

fn omp_sample() -> Vec<u8> {
    std::fs::read(shared_conformance_dir().join("c01-linear-basic/omp/session.jsonl"))
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn an_append_lands_whole_after_what_was_read_and_a_grown_value_is_refused() {
    let server = RedisServer::start();
    let mut conn = server.connection();
    put(&mut conn, PATH, &omp_sample());
    let mut session = Session::open_store(store(&server, PATH), OpenOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let before = value(&mut conn, PATH);
    let id = session
        .append_message(
            serde_json::json!({"role":"user","content":"from sessiontree","timestamp":1}),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let after = value(&mut conn, PATH);
    assert!(after.starts_with(&before));
    let line = &after[before.len()..];
    assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
    assert_eq!(line.last(), Some(&b'\n'));
    assert!(String::from_utf8_lossy(line).contains(&format!("\"id\":\"{id}\"")));
    let mtime: String = conn
        .hget("omp:sessions:meta", PATH)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_ne!(mtime, "1", "the append records its time as omp's does");

    // Another writer appends a line between our catch-up and our write: simulated by appending
    // behind the session's back and writing through the store directly with the old length.
    let other = "{\"type\":\"label\",\"id\":\"x1\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"targetId\":\"nope\",\"label\":\"l\"}\n";
    let known = after.len() as u64;
    let _: () = conn
        .append(format!("omp:sessions:file:{PATH}"), other)
        .unwrap_or_else(|e| panic!("{e}"));
    let refused = store(&server, PATH)
        .append(known, b"{\"lost\":1}\n")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        refused,
        sessiontree_core::session::Written::Conflict {
            actual: Some(known + other.len() as u64)
        }
    );
    assert_eq!(
        value(&mut conn, PATH),
        [after.clone(), other.as_bytes().to_vec()].concat(),
        "nothing written"
    );

    // Through the engine, the catch-up reads the other line first, then ours lands after it.
    let id2 = session
        .append_message(serde_json::json!({"role":"user","content":"second","timestamp":2}))
        .unwrap_or_else(|e| panic!("{e}"));
    let ids: Vec<&str> = session.entries().iter().filter_map(|e| e.id()).collect();
    assert_eq!(&ids[ids.len() - 3..], [id.as_str(), "x1", id2.as_str()]);
    let reread = Session::open_store(store(&server, PATH), OpenOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let raw = |s: &Session| {
        s.entries()
            .iter()
            .map(|e| e.raw().into_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(raw(&session), raw(&reread));
}

#[test]
fn renames_go_to_the_title_hash_and_forks_to_a_new_key() {
    let server = RedisServer::start();
    let mut conn = server.connection();
    put(&mut conn, PATH, &omp_sample());
    let mut session = Session::open_store(store(&server, PATH), OpenOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let head_before = value(&mut conn, PATH)[..256].to_vec();
    session
        .set_name("Renamed here")
        .unwrap_or_else(|e| panic!("{e}"));
    let title: String = conn
        .hget("omp:sessions:title", PATH)
        .unwrap_or_else(|e| panic!("{e}"));
    let title: serde_json::Value = serde_json::from_str(&title).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(title["title"], "Renamed here");
    assert_eq!(title["source"], "user");
    assert_eq!(
        value(&mut conn, PATH)[..256],
        head_before[..],
        "the value's slot is not rewritten"
    );
    let reread = Session::open_store(store(&server, PATH), OpenOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(reread.session_name(), Some("Renamed here"));

    let leaf = session.leaf_id().unwrap_or_default().to_owned();
    let fork = session
        .create_branched_session(&leaf, Box::new(sessiontree_core::ids::RandomIds))
        .unwrap_or_else(|e| panic!("{e}"));
    let fork_path = fork
        .path()
        .unwrap_or_else(|| panic!("no path"))
        .to_string_lossy()
        .into_owned();
    assert_eq!(Path::new(&fork_path).parent(), Path::new(PATH).parent());
    let exists: bool = conn
        .exists(format!("omp:sessions:file:{fork_path}"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(exists);
    let fork_title: String = conn
        .hget("omp:sessions:title", &fork_path)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(fork_title.contains("Renamed here"), "{fork_title}");
    let reread = Session::open_store(store(&server, &fork_path), OpenOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(reread.entries().len(), fork.entries().len());
    assert_eq!(
        reread
            .header()
            .get("parentSession")
            .and_then(|v| v.as_str()),
        Some(PATH)
    );
}

#[test]
fn follow_reads_whole_lines_in_order_and_reloads_a_rewritten_value() {
    let server = RedisServer::start();
    let mut conn = server.connection();
    put(&mut conn, PATH, &omp_sample());
    let mut session = Session::open_store(store(&server, PATH), OpenOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let n = session.entries().len();
    let key = format!("omp:sessions:file:{PATH}");
    let line = |id: &str| {
        format!("{{\"type\":\"label\",\"id\":\"{id}\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"targetId\":\"{id}\",\"label\":\"x\"}}\n")
    };
    let _: () = conn
        .append(&key, line("f1"))
        .unwrap_or_else(|e| panic!("{e}"));
    let half = line("f2");
    let _: () = conn
        .append(&key, &half[..20])
        .unwrap_or_else(|e| panic!("{e}"));
    let outcome = session.follow().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(outcome.new_entries, vec![n]);
    assert!(outcome.pending, "a torn line is held back");
    assert!(matches!(
        session.append_message(serde_json::json!({"role":"user","content":"no","timestamp":1})),
        Err(Error::WriterBusy { .. })
    ));
    let _: () = conn
        .append(&key, &half[20..])
        .unwrap_or_else(|e| panic!("{e}"));
    let outcome = session.follow().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(outcome.new_entries, vec![n + 1]);
    assert_eq!(session.entries()[n + 1].id(), Some("f2"));
    assert!(!outcome.pending);

    // A rewrite of the same length that changes what was read is not taken for growth.
    let mut rewritten = value(&mut conn, PATH);
    let at = rewritten.len() - 10;
    rewritten[at] = b'Z';
    let _: () = conn.set(&key, &rewritten).unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(session.follow(), Err(Error::FileReplaced { .. })));
    let _: () = conn.del(&key).unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(session.follow(), Err(Error::FileReplaced { .. })));
}

#[test]
fn a_store_that_goes_away_gives_clear_errors_and_is_used_again_once_back() {
    let mut server = RedisServer::start();
    let mut conn = server.connection();
    put(&mut conn, PATH, &omp_sample());
    let store = store(&server, PATH);
    let mut session = Session::open_store(store.clone(), OpenOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let bytes = value(&mut conn, PATH);
    server.kill();
    let started = std::time::Instant::now();
    let err = session
        .append_message(serde_json::json!({"role":"user","content":"while down","timestamp":1}))
        .err()
        .unwrap_or_else(|| panic!("an append with the store down must fail"));
    assert_eq!(err.kind(), "io");
    assert!(
        err.to_string()
            .contains(&format!("127.0.0.1:{}", server.port())),
        "{err}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(
        session.entries().len(),
        Session::open_store(store.clone(), OpenOptions::default())
            .map_or(session.entries().len(), |s| s.entries().len())
    );
    // Back, with the data restored (a server with persistence): the session carries on.
    server.restart();
    let mut conn = server.connection();
    put(&mut conn, PATH, &bytes);
    let mut tries = 0;
    let id = loop {
        tries += 1;
        match session
            .append_message(serde_json::json!({"role":"user","content":"after","timestamp":2}))
        {
            Ok(id) => break id,
            Err(e) if tries < 100 => {
                assert_eq!(e.kind(), "io", "{e}");
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            Err(e) => panic!("the store did not come back: {e}"),
        }
    };
    let after = value(&mut conn, PATH);
    assert!(after.starts_with(&bytes));
    assert!(String::from_utf8_lossy(&after[bytes.len()..]).contains(&id));
    assert_eq!(
        after[bytes.len()..].iter().filter(|&&b| b == b'\n').count(),
        1,
        "written once"
    );
}

#[test]
fn a_session_of_100k_entries_opens_from_redis_whole() {
    let server = RedisServer::start();
    let options = sessiontree_core::synth::SynthOptions {
        dialect: sessiontree_core::Dialect::Omp,
        entries: 100_000,
        seed: 7,
    };
    // Generated straight into memory and put as omp's full write leaves it (no file to write).
    let mut bytes = Vec::new();
    let stats =
        sessiontree_core::synth::generate(options, &mut bytes).unwrap_or_else(|e| panic!("{e}"));
    let path = "/home/me/.omp/agent/sessions/-proj/big.jsonl";
    put(&mut server.connection(), path, &bytes);
    drop(bytes);
    let from_redis = Session::open_store(store(&server, path), OpenOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(from_redis.entries().len(), stats.entries);
    assert_eq!(from_redis.leaf_id(), Some(stats.leaf_id.as_str()));
    assert_eq!(from_redis.session_id(), stats.session_id);
    assert!(
        from_redis.diagnostics().is_empty(),
        "{:?}",
        &from_redis.diagnostics()[..1]
    );
    let store: &Arc<dyn SessionStore> = from_redis.store().unwrap_or_else(|| panic!("no store"));
    assert_eq!(store.path(), Path::new(path));
}

/// A session opened from the store keeps offsets, not its text: every body reads back from the
/// store by range exactly as from the file, one at a time (through the block cache) and in one
/// pass (long runs read straight through); with the store gone, a body no longer cached is an
/// error naming the store, never a wrong text.
#[test]
fn bodies_stay_in_the_store_and_read_back_by_range_as_from_the_file() {
    let mut server = RedisServer::start();
    let options = sessiontree_core::synth::SynthOptions {
        dialect: sessiontree_core::Dialect::Omp,
        entries: 4_000,
        seed: 11,
    };
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let file = dir.path().join("s.jsonl");
    sessiontree_core::synth::generate_file(options, &file).unwrap_or_else(|e| panic!("{e}"));
    let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        bytes.len() > 8 << 20,
        "larger than the block cache: {}",
        bytes.len()
    );
    put(&mut server.connection(), PATH, &bytes);
    let from_file = Session::open(&file, OpenOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let from_redis = Session::open_store(store(&server, PATH), OpenOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let n = from_file.entries().len();
    assert_eq!(from_redis.entries().len(), n);
    for (a, b) in from_file.entries().iter().zip(from_redis.entries()) {
        let (a, b) = (a.try_raw(), b.try_raw());
        assert_eq!(
            a.as_deref().unwrap_or_else(|e| panic!("{e}")),
            b.as_deref().unwrap_or_else(|e| panic!("{e}"))
        );
    }
    let pass = |session: &Session| {
        let mut texts = Vec::with_capacity(n);
        session
            .raw_texts()
            .for_each_in(0..n, |_, raw| texts.push(raw.to_owned()))
            .unwrap_or_else(|e| panic!("{e}"));
        texts
    };
    assert_eq!(pass(&from_file), pass(&from_redis));
    assert_eq!(
        snapshot::snapshot(&from_file),
        snapshot::snapshot(&from_redis)
    );

    // A fresh open reads the value through and caches nothing of its middle.
    let fresh = Session::open_store(store(&server, PATH), OpenOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let port = server.port();
    server.kill();
    let err = fresh.entries()[n / 2]
        .try_raw()
        .err()
        .unwrap_or_else(|| panic!("a body was read without the store"));
    assert!(
        err.to_string().contains(&format!("127.0.0.1:{port}")),
        "{err}"
    );
}
