//! The store's watch against a real `redis-server`: a change of a watched session wakes its reader
//! by keyspace notifications when the server sends them and by polling lengths when it does not;
//! sessions not watched do not wake; a server killed and restarted is watched again.

use sessiontree_redis::follow::{Mode, Watch};
use sessiontree_redis::testing::RedisServer;
use sessiontree_redis::Link;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const WATCHED: &str = "/home/me/.omp/agent/sessions/-proj/a.jsonl";
const OTHER: &str = "/home/me/.omp/agent/sessions/-proj/b.jsonl";

fn append(server: &RedisServer, path: &str, text: &str) {
    let _: i64 = redis::cmd("APPEND")
        .arg(format!("omp:sessions:file:{path}"))
        .arg(text)
        .query(&mut server.connection())
        .unwrap_or_else(|e| panic!("{e}"));
}

fn watch(server: &RedisServer) -> (Watch, mpsc::Receiver<PathBuf>) {
    let link = Link::new(server.address()).unwrap_or_else(|e| panic!("{e}"));
    let (tx, rx) = mpsc::channel();
    let watch = Watch::start(link, move |path: &Path| {
        let _ = tx.send(path.to_path_buf());
    });
    watch.add(Path::new(WATCHED));
    (watch, rx)
}

/// Waits until `watch` notices changes the way `mode` says.
fn wait_for_mode(watch: &Watch, mode: Mode) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while watch.mode() != mode {
        assert!(
            Instant::now() < deadline,
            "the watch never turned to {mode:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The next wake-up; fails after 20 s.
fn woken(rx: &mpsc::Receiver<PathBuf>) -> PathBuf {
    rx.recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("no wake-up"))
}

/// Appends to the watched session until a wake-up comes (a subscription may start after the
/// first append); returns the path woken.
fn append_until_woken(server: &RedisServer, rx: &mpsc::Receiver<PathBuf>) -> PathBuf {
    for _ in 0..100 {
        append(server, WATCHED, "{}\n");
        if let Ok(path) = rx.recv_timeout(Duration::from_millis(300)) {
            return path;
        }
    }
    panic!("no wake-up after 100 appends");
}

fn drain(rx: &mpsc::Receiver<PathBuf>) {
    while rx.recv_timeout(Duration::from_millis(500)).is_ok() {}
}

#[test]
fn a_server_without_notifications_is_polled_and_each_change_wakes_its_session() {
    let server = RedisServer::start();
    append(&server, WATCHED, "{}\n");
    let (watch, rx) = watch(&server);
    assert_eq!(append_until_woken(&server, &rx), Path::new(WATCHED));
    assert_eq!(watch.mode(), Mode::Polling);
    drain(&rx);
    // Another session's change wakes nothing; the watched one's does.
    append(&server, OTHER, "{}\n");
    append(&server, WATCHED, "{}\n");
    assert_eq!(woken(&rx), Path::new(WATCHED));
    // A deleted value wakes too (its reader then finds it gone).
    drain(&rx);
    let _: i64 = redis::cmd("DEL")
        .arg(format!("omp:sessions:file:{WATCHED}"))
        .query(&mut server.connection())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(woken(&rx), Path::new(WATCHED));
    watch.remove(Path::new(WATCHED));
    drain(&rx);
    append(&server, WATCHED, "{}\n");
    assert!(
        rx.recv_timeout(Duration::from_secs(1)).is_err(),
        "a session no longer watched does not wake"
    );
}

#[test]
fn a_server_with_notifications_wakes_through_them_and_is_watched_again_after_a_restart() {
    let mut server = RedisServer::start_with(&["--notify-keyspace-events", "K$"]);
    append(&server, WATCHED, "{}\n");
    let (watch, rx) = watch(&server);
    wait_for_mode(&watch, Mode::Notifications);
    drain(&rx);
    append(&server, OTHER, "{}\n");
    append(&server, WATCHED, "{}\n");
    assert_eq!(woken(&rx), Path::new(WATCHED));
    assert_eq!(watch.mode(), Mode::Notifications);

    // Killed: the subscription ends and the watch polls a server that is not there; restarted
    // (with its notifications), it subscribes again and changes wake the session once more.
    server.kill();
    wait_for_mode(&watch, Mode::Polling);
    server.restart();
    append(&server, WATCHED, "{}\n");
    wait_for_mode(&watch, Mode::Notifications);
    drain(&rx);
    assert_eq!(append_until_woken(&server, &rx), Path::new(WATCHED));
}
