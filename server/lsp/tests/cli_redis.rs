//! The CLI on sessions omp keeps in Redis (`--store`), against a real `redis-server`: `inspect
//! --json`, `tree` and `check` print exactly what they print for the same bytes in a file; a bad
//! address, a store that does not answer and a missing session are clear errors, and no error
//! shows the password.

mod support;

use sessiontree_redis::testing::RedisServer;
use sessiontree_testkit::fixtures::shared_conformance_dir;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::omp_store;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sessiontree"))
}

fn run(args: &[&str]) -> Output {
    bin()
        .args(args)
        .env_remove("SESSIONTREE_REDIS_PASSWORD")
        .output()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Every omp session file of the suite (and pi's: a Redis store may hold either layout).
fn fixtures() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(shared_conformance_dir())
        .unwrap_or_else(|e| panic!("conformance fixtures: {e}"))
        .filter_map(|d| d.ok())
        .flat_map(|d| {
            [
                "omp/session.jsonl",
                "omp/branched.jsonl",
                "pi/session.jsonl",
                "omp/migrated.jsonl",
            ]
            .map(|f| d.path().join(f))
        })
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(files.len() > 40, "too few fixtures: {}", files.len());
    files
}

/// Puts `file` into the store at `path` as omp's own storage writes it.
fn put(server: &RedisServer, path: &str, file: &Path) {
    omp_store::put(
        server,
        path,
        &std::fs::read(file).unwrap_or_else(|e| panic!("{e}")),
    );
}

#[test]
fn inspect_tree_and_check_print_for_a_redis_session_what_they_print_for_its_file() {
    let server = RedisServer::start();
    let url = format!("{}/0?prefix=team%3Aone%3A", server.url());
    let address = sessiontree_redis::StoreAddress::parse(&url).unwrap_or_else(|e| panic!("{e}"));
    for (n, file) in fixtures().iter().enumerate() {
        let path = format!("/home/me/.omp/agent/sessions/-proj/{n}.jsonl");
        let bytes = std::fs::read(file).unwrap_or_else(|e| panic!("{e}"));
        omp_store::put_at(&address, &path, &bytes);
        let f = file.to_string_lossy();
        for args in [
            vec!["inspect", "--json", "--search", "e"],
            vec!["inspect"],
            vec!["tree", "--filter", "all"],
            vec!["check"],
        ] {
            let local = run(&[args.as_slice(), &[&f]].concat());
            let remote = run(&[args.as_slice(), &["--store", &url, &path]].concat());
            let text = |o: &Output| {
                String::from_utf8_lossy(&o.stdout)
                    .replace(&*f, "<session>")
                    .replace(&path, "<session>")
            };
            assert_eq!(
                local.status.code(),
                remote.status.code(),
                "{f} {args:?}: {}",
                String::from_utf8_lossy(&remote.stderr)
            );
            assert_eq!(text(&local), text(&remote), "{f} {args:?}");
            if args[0] == "inspect" && args.len() > 1 && local.status.success() {
                assert_eq!(
                    local.stdout, remote.stdout,
                    "{f}: inspect --json byte for byte"
                );
            }
        }
    }
}

#[test]
fn store_errors_are_clear_and_never_show_the_password() {
    let server = RedisServer::start();
    let path = "/s/a.jsonl";
    put(
        &server,
        path,
        &shared_conformance_dir().join("c01-linear-basic/omp/session.jsonl"),
    );
    let secret = "hunter2-secret";
    let go = |url: &str, session: &str| {
        bin()
            .args(["inspect", "--store", url, session, "--store-user", "alice"])
            .env("SESSIONTREE_REDIS_PASSWORD", secret)
            .output()
            .unwrap_or_else(|e| panic!("{e}"))
    };
    // A server without ACL users refuses the credentials: an authentication error.
    let out = go(&server.url(), path);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains(secret) && !String::from_utf8_lossy(&out.stdout).contains(secret));
    assert!(
        err.contains(&format!("127.0.0.1:{}", server.port())),
        "{err}"
    );

    for (url, session, want) in [
        (
            "redis://u:p@127.0.0.1:1",
            path,
            "credentials do not go into the address",
        ),
        ("http://127.0.0.1:1", path, "redis://"),
        (&server.url(), "/s/missing.jsonl", "no such session"),
    ] {
        let out = run(&["inspect", "--store", url, session]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{url}: {err}");
        assert!(err.contains(want), "{url}: {err}");
    }
    // Nothing listens on the port: the error names the store, quickly.
    let mut down = RedisServer::start();
    let url = down.url();
    down.kill();
    let started = std::time::Instant::now();
    let out = run(&["check", "--store", &url, path]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&url.replace("redis://", "")), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

/// `continue --store` is refused with the reason (the agent's RPC mode keeps its session in
/// files), before anything is read or started; the store's value is left as it was, and an
/// address with credentials is refused without showing them.
#[test]
fn continue_on_a_store_session_is_refused_with_the_reason() {
    let server = RedisServer::start();
    let path = "/s/a.jsonl";
    put(
        &server,
        path,
        &shared_conformance_dir().join("c01-linear-basic/omp/session.jsonl"),
    );
    let before = omp_store::value(&server, path);
    let url = server.url();
    let out = run(&[
        "continue",
        "--store",
        &url,
        path,
        "--at",
        "x",
        "--message",
        "hi",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cannot continue a session kept in a store")
            && err.contains("keeps its session in local files")
            && err.contains(&format!("127.0.0.1:{}", server.port())),
        "{err}"
    );
    assert!(before.is_some());
    assert_eq!(omp_store::value(&server, path), before);
    let out = run(&[
        "continue",
        "--store",
        "redis://u:hunter2@127.0.0.1:1",
        path,
        "--at",
        "x",
        "--message",
        "hi",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("credentials do not go into the address") && !err.contains("hunter2"),
        "{err}"
    );
}

/// A `rediss://` store (Debian's redis-server serving TLS, its certificate signed by a CA made
/// here): without that CA the certificate is refused with an error naming the store and the way
/// out; with `--store-ca-file` the session reads exactly as its file; a CA file for a plain
/// `redis://` store, or one that cannot be read, is refused.
#[test]
fn a_tls_store_reads_with_its_ca_file_and_is_refused_clearly_without() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let tls = support::tls_store::TlsStore::start(dir.path());
    let (server, tls_port) = (&tls.server, tls.tls_port);
    let ca_file = tls.ca_file.to_string_lossy().into_owned();
    let fixture = shared_conformance_dir().join("c06-branch-basic/omp/session.jsonl");
    let path = "/home/me/.omp/agent/sessions/-proj/tls.jsonl";
    put(server, path, &fixture);
    let url = tls.url();

    let refused = run(&["inspect", "--json", "--store", &url, path]);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("store rediss://127.0.0.1:{tls_port}/0"))
            && err.contains("invalid peer certificate")
            && err.contains("--store-ca-file"),
        "{err}"
    );

    let f = fixture.to_string_lossy();
    let local = run(&["inspect", "--json", &f]);
    let remote = run(&[
        "inspect",
        "--json",
        "--store",
        &url,
        path,
        "--store-ca-file",
        &ca_file,
    ]);
    assert!(
        remote.status.success(),
        "{}",
        String::from_utf8_lossy(&remote.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&local.stdout).replace(&*f, "<session>"),
        String::from_utf8_lossy(&remote.stdout).replace(path, "<session>")
    );

    for (url, ca, want) in [
        (
            server.url(),
            ca_file.clone(),
            "only for TLS stores (rediss://)",
        ),
        (
            url.clone(),
            dir.path().join("none.pem").to_string_lossy().into_owned(),
            "cannot read the CA certificate file",
        ),
    ] {
        let out = run(&["check", "--store", &url, path, "--store-ca-file", &ca]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(want), "{err}");
    }
}
