//! `sessiontree snapshots` and `sessiontree rewind` through the real binary, against real git
//! repositories: listing points, dry runs that touch nothing, restores that print each file, the
//! undo, the errors that exit non-zero and touch nothing, and restores SIGKILLed part way, which
//! leave every file whole and, once the next command has run, the old files or the new ones.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use serde_json::Value;
use sessiontree_rewind::{Moment, Rewind};
use sessiontree_testkit::git;
use sessiontree_testkit::work_tree::contents;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const SID: &str = "0194cccc-0000-7000-8000-000000000003";

fn cli(args: &[&str], file: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sessiontree"))
        .args(&args[..1])
        .arg(file)
        .args(&args[1..])
        .output()
        .expect("run sessiontree")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A repository and a pi session (outside it) whose `cwd` is the repository.
fn setup(repo: &Path, sessions: &Path) -> PathBuf {
    git(repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("a.txt"), "one\n").expect("w");
    std::fs::write(repo.join(".gitignore"), "*.log\n").expect("w");
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-qm", "init"]);
    session(sessions, repo)
}

fn session(dir: &Path, cwd: &Path) -> PathBuf {
    let path = dir.join("s.jsonl");
    let cwd = serde_json::to_string(&cwd.to_string_lossy()).expect("json");
    let text = format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"{SID}\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":{cwd}}}\n\
{{\"type\":\"message\",\"id\":\"u1000001\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"change a\",\"timestamp\":1735689601000}}}}\n\
{{\"type\":\"message\",\"id\":\"a1000001\",\"parentId\":\"u1000001\",\"timestamp\":\"2025-01-01T00:00:02.000Z\",\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"done\"}}],\"api\":\"x\",\"provider\":\"x\",\"model\":\"x\",\"stopReason\":\"stop\",\"timestamp\":1735689602000}}}}\n"
    );
    std::fs::write(&path, text).expect("session");
    path
}

fn open(path: &Path) -> sessiontree_core::Session {
    sessiontree_core::Session::open(path, Default::default()).expect("open")
}

#[test]
fn snapshots_lists_the_points_and_rewind_restores_prints_each_file_and_undoes() {
    let repo = tempfile::tempdir().expect("tmp");
    let sessions = tempfile::tempdir().expect("tmp");
    let file = setup(repo.path(), sessions.path());
    let session = open(&file);
    let rewind = Rewind::for_session(&session).expect("store");
    rewind
        .record(&session, "u1000001", Moment::Before, true, "test")
        .expect("record");
    std::fs::write(repo.path().join("a.txt"), "two\n").expect("w");
    std::fs::write(repo.path().join("new.txt"), "made by the agent\n").expect("w");
    rewind
        .record(&session, "a1000001", Moment::After, false, "test")
        .expect("record");
    let session_bytes = std::fs::read(&file).expect("r");
    let index = std::fs::read(repo.path().join(".git/index")).expect("index");

    let out = cli(&["snapshots"], &file);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].starts_with("u1000001  before  exact"), "{text}");
    assert!(lines[0].ends_with("user: change a"), "{text}");
    assert!(lines[1].starts_with("a1000001  after   approx"), "{text}");

    let out = cli(&["snapshots", "--json"], &file);
    let json: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(json["points"][0]["entryId"], "u1000001");
    assert_eq!(json["points"][0]["moment"], "before");
    assert_eq!(json["points"][1]["exact"], false);
    assert_eq!(json["points"][1]["pruned"], false);

    // A dry run prints and touches nothing.
    let out = cli(&["rewind", "--at", "u1000001", "--dry-run"], &file);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("would restore the files to the point of u1000001 (before, exact)"),
        "{text}"
    );
    assert!(
        text.contains("changed  a.txt\n") && text.contains("deleted  new.txt\n"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.path().join("a.txt")).expect("r"),
        "two\n"
    );
    assert!(!rewind.workspace().last_restore_path().exists());

    let out = cli(&["rewind", "--at", "u1000001", "--json"], &file);
    assert!(out.status.success(), "{}", stderr(&out));
    let json: Value = serde_json::from_slice(&out.stdout).expect("json");
    let files: Vec<(String, String)> = json["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap_or("").to_owned(),
                f["action"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    assert_eq!(
        files,
        vec![
            ("new.txt".to_owned(), "deleted".to_owned()),
            ("a.txt".to_owned(), "changed".to_owned())
        ]
    );
    assert_eq!(
        std::fs::read_to_string(repo.path().join("a.txt")).expect("r"),
        "one\n"
    );
    assert!(!repo.path().join("new.txt").exists());
    assert_eq!(
        std::fs::read(&file).expect("r"),
        session_bytes,
        "the session file is not changed"
    );
    assert_eq!(
        std::fs::read(repo.path().join(".git/index")).expect("i"),
        index,
        "the index is not changed"
    );

    // The nearest point above an entry without one is used, and named.
    let out = cli(&["rewind", "--undo"], &file);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("restored the files as they were before the last restore"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.path().join("a.txt")).expect("r"),
        "two\n"
    );
    assert_eq!(
        std::fs::read_to_string(repo.path().join("new.txt")).expect("r"),
        "made by the agent\n"
    );
}

#[test]
fn rewind_errors_exit_non_zero_with_a_message_and_touch_nothing() {
    // Not a git repository.
    let plain = tempfile::tempdir().expect("tmp");
    let file = session(plain.path(), plain.path());
    for args in [
        &["snapshots"][..],
        &["rewind", "--at", "u1000001"],
        &["rewind", "--undo"],
    ] {
        let out = cli(args, &file);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&out).contains("is not a git repository"),
            "{args:?}: {}",
            stderr(&out)
        );
        assert!(stdout(&out).is_empty());
    }
    assert!(!plain.path().join(".git").exists());

    let repo = tempfile::tempdir().expect("tmp");
    let sessions = tempfile::tempdir().expect("tmp");
    let file = setup(repo.path(), sessions.path());
    std::fs::write(repo.path().join("a.txt"), "edited\n").expect("w");
    // No point on the entry nor above it.
    let out = cli(&["rewind", "--at", "a1000001"], &file);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("entry a1000001 has no rewind point"),
        "{}",
        stderr(&out)
    );
    // No restore to undo.
    let out = cli(&["rewind", "--undo"], &file);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("nothing to undo"), "{}", stderr(&out));
    // An unknown entry.
    let out = cli(&["rewind", "--at", "zzzz9999"], &file);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("entry zzzz9999 is not in the session"),
        "{}",
        stderr(&out)
    );
    // A pruned snapshot.
    let session = open(&file);
    let rewind = Rewind::for_session(&session).expect("store");
    rewind
        .record(&session, "u1000001", Moment::Before, true, "test")
        .expect("record");
    std::fs::write(repo.path().join("a.txt"), "later\n").expect("w");
    rewind
        .record(&session, "a1000001", Moment::After, true, "test")
        .expect("record");
    let out = cli(&["snapshots", "--prune", "--keep", "1"], &file);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("pruned 1 snapshot(s); 1 kept (0 pinned)"),
        "{}",
        stdout(&out)
    );
    assert!(stdout(&out).contains("(pruned)"), "{}", stdout(&out));
    std::fs::write(repo.path().join("a.txt"), "mine\n").expect("w");
    let out = cli(&["rewind", "--at", "u1000001"], &file);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("was pruned; nothing was touched"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(repo.path().join("a.txt")).expect("r"),
        "mine\n"
    );
    // Retention is off unless configured.
    let out = cli(&["snapshots", "--prune"], &file);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("retention is off"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_restore_killed_part_way_leaves_whole_files_and_then_the_old_state_or_the_new_one() {
    const FILES: usize = 3000;
    let repo = tempfile::tempdir().expect("tmp");
    let sessions = tempfile::tempdir().expect("tmp");
    let file = setup(repo.path(), sessions.path());
    let root = repo.path();
    for n in 0..FILES {
        let dir = root.join(format!("d{}", n / 100));
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join(format!("f{n}")), format!("point {n}\n")).expect("w");
    }
    let session = open(&file);
    let rewind = Rewind::for_session(&session).expect("store");
    rewind
        .record(&session, "u1000001", Moment::Before, true, "test")
        .expect("record");
    let new_state = contents(root);
    // The state a restore replaces: every file changed, some added.
    for n in 0..FILES {
        std::fs::write(
            root.join(format!("d{}/f{n}", n / 100)),
            format!("agent {n}\n"),
        )
        .expect("w");
    }
    for n in 0..100 {
        std::fs::write(root.join(format!("d0/extra{n}")), "agent's new file\n").expect("w");
    }
    let old_state = contents(root);
    let journal = rewind.workspace().journal_path();

    let (mut killed_mid_way, mut rolled_back, mut finished) = (0, 0, 0);
    for round in 0..8u64 {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sessiontree"))
            .args(["rewind"])
            .arg(&file)
            .args(["--at", "u1000001"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        // Wait until the restore has started changing files, then a little more each round.
        let start = std::time::Instant::now();
        while !journal.exists() && start.elapsed() < std::time::Duration::from_secs(30) {
            if child.try_wait().expect("wait").is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        std::thread::sleep(std::time::Duration::from_millis(round * round * 10));
        // The last round is not killed: a finished restore leaves the new state.
        if round < 7 {
            child.kill().ok();
        }
        let status = child.wait().expect("reaped");
        let mid_way = journal.exists();
        if mid_way {
            killed_mid_way += 1;
        }
        // Right after the kill every file is whole: its old bytes or its new ones (besides, at
        // most, the temporary file being written, which the roll-back removes).
        let now = contents(root);
        let temporary = |path: &str| {
            path.rsplit('/')
                .next()
                .is_some_and(|n| n.starts_with('.') && n.contains(".sessiontree-"))
        };
        for (path, bytes) in now.iter().filter(|(p, _)| !temporary(p)) {
            let old = old_state.get(path);
            let new = new_state.get(path);
            assert!(
                Some(bytes) == old || Some(bytes) == new,
                "round {round}: {path} is neither its old nor its new content: {:?}",
                String::from_utf8_lossy(bytes)
            );
        }
        // The next command rolls an interrupted restore back.
        let out = cli(&["snapshots"], &file);
        assert!(out.status.success(), "{}", stderr(&out));
        let after = contents(root);
        if mid_way {
            assert!(
                stderr(&out).contains("an interrupted restore was rolled back"),
                "{}",
                stderr(&out)
            );
        }
        if after == old_state {
            rolled_back += 1;
            assert!(
                mid_way || !status.success(),
                "round {round}: a finished restore was undone"
            );
        } else {
            assert!(
                after == new_state,
                "round {round}: neither the old state nor the new one"
            );
            finished += 1;
            // Back to the old state for the next round.
            let out = cli(&["rewind", "--undo"], &file);
            assert!(out.status.success(), "{}", stderr(&out));
            assert!(
                contents(root) == old_state,
                "round {round}: undo brings the old state back"
            );
        }
        assert!(!journal.exists());
    }
    println!(
        "rewind: 8 restores of {FILES} files (7 killed): {killed_mid_way} killed mid-way, {rolled_back} rolled back, {finished} finished"
    );
    assert!(
        killed_mid_way >= 1,
        "no kill landed while the restore was changing files"
    );
}

/// `sessiontree rewind-point`, as the bridge runs it inside the agent.
fn rewind_point(args: &[&str]) -> (Option<i32>, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_sessiontree"))
        .arg("rewind-point")
        .args(args)
        .output()
        .expect("run sessiontree rewind-point");
    let line = stdout(&out);
    let answer = serde_json::from_str(line.trim())
        .unwrap_or_else(|e| panic!("one JSON line ({e}): {line:?} {}", stderr(&out)));
    (out.status.code(), answer)
}

/// `take` snapshots now, `bind` records it for an entry once the agent wrote it: the point is
/// listed (by the bridge, exact), restores the files of the moment `take` ran, and an approximate
/// point for the same entry never replaces it; the errors are one JSON line with their kind.
#[test]
fn rewind_point_take_then_bind_records_the_point_of_that_moment() {
    let repo = tempfile::tempdir().expect("tmp");
    let sessions = tempfile::tempdir().expect("tmp");
    let file = setup(repo.path(), sessions.path());
    let cwd = repo.path().to_str().expect("utf-8");
    let session_file = file.to_str().expect("utf-8");
    let (code, taken) = rewind_point(&["take", "--cwd", cwd, "--session-file", session_file]);
    assert_eq!(code, Some(0), "{taken}");
    let snapshot = taken["snapshot"].as_str().expect("snapshot").to_owned();
    assert_eq!(taken["new"], true);
    // The agent acts, then writes the entry; only then is the point bound.
    std::fs::write(repo.path().join("a.txt"), "the agent's\n").expect("w");
    let bind = |snapshot: &str, extra: &[&str]| {
        let mut args = vec![
            "bind",
            "--cwd",
            cwd,
            "--session-file",
            session_file,
            "--snapshot",
            snapshot,
            "--session-id",
            SID,
            "--entry",
            "u1000001",
            "--moment",
            "before",
        ];
        args.extend_from_slice(extra);
        rewind_point(&args)
    };
    let (code, bound) = bind(&snapshot, &["--entry-time", "2025-01-01T00:00:01.000Z"]);
    assert_eq!(code, Some(0), "{bound}");
    assert_eq!(bound["exact"], true);
    // A later, approximate snapshot for the same entry is not the one used.
    let (_, later) = rewind_point(&["take", "--cwd", cwd]);
    let (code, _) = bind(
        later["snapshot"].as_str().expect("snapshot"),
        &["--approximate"],
    );
    assert_eq!(code, Some(0));
    let out = cli(&["snapshots", "--json"], &file);
    let json: Value = serde_json::from_slice(&out.stdout).expect("json");
    let points = json["points"].as_array().expect("points");
    assert_eq!(points.len(), 1, "{json}");
    assert_eq!(points[0]["entryId"], "u1000001");
    assert_eq!(points[0]["by"], "bridge");
    assert_eq!(points[0]["exact"], true);
    assert_eq!(points[0]["snapshot"], snapshot.as_str());
    let out = cli(&["rewind", "--at", "u1000001"], &file);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(repo.path().join("a.txt")).expect("r"),
        "one\n"
    );

    // A snapshot that is not a tree of the repository, and a folder that is not a repository.
    let (code, err) = bind("0123456789abcdef0123456789abcdef01234567", &[]);
    assert_eq!(code, Some(2));
    assert_eq!(err["error"]["kind"], "unknownSnapshot", "{err}");
    let (code, err) = bind("HEAD", &[]);
    assert_eq!(code, Some(2));
    assert_eq!(err["error"]["kind"], "unknownSnapshot", "{err}");
    let plain = tempfile::tempdir().expect("tmp");
    let (code, err) = rewind_point(&["take", "--cwd", plain.path().to_str().expect("utf-8")]);
    assert_eq!(code, Some(2));
    assert_eq!(err["error"]["kind"], "notARepository", "{err}");
    assert!(!plain.path().join(".git").exists());
}
