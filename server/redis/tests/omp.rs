//! The real omp (18.2.3 from npm, its `SessionManager` with `RedisSessionStorage`, on Bun) and
//! sessiontree on one real `redis-server`: what omp writes we read as omp reloads it (conformance
//! scenarios replayed through Redis), what we write omp reloads (messages, labels, a rename,
//! navigation with a summary, a fork into a new key), and both writing one session at once lose
//! nothing. The agents come from `scripts/install-agents.sh` (pinned, cached); without them the
//! tests fail.

use serde_json::Value;
use sessiontree_core::{Error, OpenOptions, Session};
use sessiontree_redis::testing::RedisServer;
use sessiontree_redis::{Link, RedisStore};
use sessiontree_testkit::agents::omp_redis;
use sessiontree_testkit::fixtures::shared_conformance_dir;
use std::path::Path;
use std::sync::Arc;

/// Runs `scripts/testing/omp-redis.ts` (omp's own storage code) on `server`; what it printed.
fn omp(server: &RedisServer, args: &[&str]) -> String {
    omp_redis(&server.url(), args)
}

/// Runs several commands in one Bun process (omp starts once); what each printed.
fn omp_batch(server: &RedisServer, commands: &[Vec<String>]) -> Vec<String> {
    let list = serde_json::to_string(commands).unwrap_or_default();
    let text = omp(server, &["batch", &list]);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("batch printed no list ({e}): {text}"))
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("omp printed no JSON ({e}): {text}"))
}

fn cmd(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|p| (*p).to_owned()).collect()
}

fn omp_json(server: &RedisServer, args: &[&str]) -> Value {
    let text = omp(server, args);
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("omp {args:?} printed no JSON ({e}): {text}"))
}

fn open(server: &RedisServer, path: &str) -> Session {
    let link = Link::new(server.address()).unwrap_or_else(|e| panic!("{e}"));
    Session::open_store(
        Arc::new(RedisStore::new(link, Path::new(path))),
        OpenOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// What omp's reload prints, computed from our session.
fn ours(session: &Session) -> Value {
    let entries = session.entries();
    let mut labels = serde_json::Map::new();
    for entry in entries {
        if let Some(label) = entry.id().and_then(|id| session.label(id)) {
            labels.insert(entry.id().unwrap_or_default().to_owned(), label.into());
        }
    }
    serde_json::json!({
        "sessionFile": session.path().map(|p| p.to_string_lossy().into_owned()),
        "header": Value::Object(session.header().clone()),
        "sessionName": session.session_name(),
        "leafId": session.leaf_id(),
        "entryIds": entries.iter().map(|e| e.id()).collect::<Vec<_>>(),
        "entryTypes": entries.iter().map(|e| e.kind()).collect::<Vec<_>>(),
        "branch": session.branch_ids(None),
        "labels": labels,
    })
}

const SESSIONS: &str = "/home/me/.omp/agent/sessions/-proj";

/// The session omp writes into the store for a conformance `scenario` (in `/home/me/proj`); its
/// path.
fn written_by_omp(server: &RedisServer, scenario: &Path) -> String {
    let written = omp_json(
        server,
        &[
            "write",
            &scenario.to_string_lossy(),
            SESSIONS,
            "/home/me/proj",
        ],
    );
    written["sessionFile"]
        .as_str()
        .unwrap_or_else(|| panic!("{written}"))
        .to_owned()
}

#[test]
fn sessions_omp_writes_into_redis_read_as_omp_reloads_them() {
    let server = RedisServer::start();
    let scenarios = [
        "c01-linear-basic",
        "c02-tool-calls",
        "c05-labels",
        "c06-branch-basic",
        "c08-reset-leaf-multiroot",
        "c09-branch-with-summary",
        "c16-session-name",
        "c17-create-branched-session",
        "c22-label-moves-leaf",
        "c28-labels-carried-into-branched",
        "c29-name-then-branched-session",
    ];
    // Every scenario written in one omp process, every session reloaded in another.
    let writes: Vec<Vec<String>> = scenarios
        .iter()
        .map(|name| {
            let scenario = shared_conformance_dir().join(name).join("scenario.json");
            cmd(&[
                "write",
                &scenario.to_string_lossy(),
                SESSIONS,
                "/home/me/proj",
            ])
        })
        .collect();
    let mut sessions = Vec::new();
    for (name, written) in scenarios.iter().zip(omp_batch(&server, &writes)) {
        let written = json_of(&written);
        for key in ["sessionFile", "branchedFile"] {
            if let Some(path) = written[key].as_str() {
                sessions.push((format!("{name} {key}"), path.to_owned()));
            }
        }
    }
    let reloads: Vec<Vec<String>> = sessions.iter().map(|(_, p)| cmd(&["reload", p])).collect();
    let reloaded = omp_batch(&server, &reloads);
    for ((what, path), reloaded) in sessions.iter().zip(&reloaded) {
        assert_eq!(ours(&open(&server, path)), json_of(reloaded), "{what}");
    }
    assert!(
        sessions.len() >= scenarios.len() + 3,
        "{} sessions checked",
        sessions.len()
    );
}

#[test]
fn omp_reloads_what_we_write_into_redis() {
    let server = RedisServer::start();
    let scenario = shared_conformance_dir().join("c06-branch-basic/scenario.json");
    let path = written_by_omp(&server, &scenario);
    let mut session = open(&server, &path);
    let first = session.entries()[0].id().unwrap_or_default().to_owned();
    session
        .append_message(serde_json::json!({"role":"user","content":"written by sessiontree","timestamp":1_735_689_700_000_i64}))
        .unwrap_or_else(|e| panic!("{e}"));
    session
        .append_label_change(&first, Some("start here"))
        .unwrap_or_else(|e| panic!("{e}"));
    session
        .set_name("Named by sessiontree")
        .unwrap_or_else(|e| panic!("{e}"));
    // Navigate to the first entry, summarizing the branch left (the /tree flow's write).
    session
        .branch_with_summary(Some(&first), "The branch left tried Paris.", None, None)
        .unwrap_or_else(|e| panic!("{e}"));
    // /branch: a fork into a new key, which omp reloads as we hold it.
    let leaf = session.leaf_id().unwrap_or_default().to_owned();
    let fork = session
        .create_branched_session(&leaf, Box::new(sessiontree_core::ids::RandomIds))
        .unwrap_or_else(|e| panic!("{e}"));
    let fork_path = fork
        .path()
        .unwrap_or_else(|| panic!("no path"))
        .to_string_lossy()
        .into_owned();
    assert_ne!(fork_path, path);
    let answers = omp_batch(
        &server,
        &[
            cmd(&["reload", &path]),
            cmd(&["reload", &fork_path]),
            cmd(&["list", SESSIONS]),
            cmd(&["read", &path]),
        ],
    );
    let reloaded = json_of(&answers[0]);
    assert_eq!(reloaded, ours(&session), "omp reloads our writes");
    assert_eq!(reloaded["sessionName"], "Named by sessiontree");
    assert_eq!(json_of(&answers[1]), ours(&fork));
    let listed: Vec<String> = serde_json::from_value(json_of(&answers[2])).unwrap_or_default();
    assert!(
        listed.contains(&fork_path) && listed.contains(&path),
        "{listed:?}"
    );
    // And omp's text of the session is ours, byte for byte (its title laid over the slot).
    let mut text = Vec::new();
    session
        .for_each_raw(|_, raw| text.push(raw.to_owned()))
        .unwrap_or_else(|e| panic!("{e}"));
    let omp_text = &answers[3];
    assert_eq!(
        omp_text.lines().skip(2).collect::<Vec<_>>(),
        text,
        "entry lines"
    );
    assert!(omp_text.starts_with("{\"type\":\"title\",\"v\":1,\"title\":\"Named by sessiontree\""));
}

#[test]
fn omp_and_sessiontree_writing_one_session_at_once_lose_nothing() {
    let server = RedisServer::start();
    let scenario = shared_conformance_dir().join("c01-linear-basic/scenario.json");
    let path = written_by_omp(&server, &scenario);
    let mut session = open(&server, &path);
    let omp_count = 40;
    let (url, p) = (server.url(), path.clone());
    let writer =
        std::thread::spawn(move || omp_redis(&url, &["append", &p, &omp_count.to_string()]));
    let mut ours_ids = Vec::new();
    for i in 0..40 {
        loop {
            match session.append_message(
                serde_json::json!({"role":"user","content":format!("ours {i}"),"timestamp":i}),
            ) {
                Ok(id) => {
                    ours_ids.push(id);
                    break;
                }
                // Refused with nothing written: the next try reads the other writer's lines first.
                Err(Error::StoreConflict { .. }) => {}
                Err(e) => panic!("{e}"),
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = writer.join().unwrap_or_else(|_| panic!("omp append"));
    let omp_ids: Vec<String> = serde_json::from_str(&out).unwrap_or_default();
    assert_eq!(omp_ids.len(), omp_count);
    session.follow().unwrap_or_else(|e| panic!("{e}"));
    let fresh = open(&server, &path);
    let reloaded = omp_json(&server, &["reload", &path]);
    assert_eq!(ours(&fresh)["entryIds"], reloaded["entryIds"]);
    assert_eq!(
        ours(&session)["entryIds"],
        reloaded["entryIds"],
        "the live view equals a reload"
    );
    let all: Vec<&str> = fresh.entries().iter().filter_map(|e| e.id()).collect();
    for id in ours_ids.iter().chain(&omp_ids) {
        assert_eq!(
            all.iter().filter(|x| **x == id.as_str()).count(),
            1,
            "{id} once"
        );
    }
    assert!(fresh.diagnostics().is_empty(), "{:?}", fresh.diagnostics());
}
