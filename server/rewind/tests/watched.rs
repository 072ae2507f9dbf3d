//! A compare with the work tree watched (as the server runs it: git asks the watcher which files
//! changed, `sessiontree_rewind::monitor`) answers exactly as a walk of every file does. After each
//! kind of change, the compare's lines (paths, statuses, modes, blob ids) are checked against
//! `git add -A` into an index of the test's own (seeded from the user's index, kept between steps,
//! as the store's private index is; never watched) and `git diff-index --cached` against the
//! point's tree, and against the change the test made. One test, because watching is turned on
//! for the whole process.

mod support;

use sessiontree_rewind::{Change, Moment, Rewind, Status};
use std::path::Path;
use std::process::Command;
use support::*;

const SID: &str = "0194aaaa-0000-7000-8000-0000000000b1";

/// The walk: every file looked at by `git add -A` (no watcher) in the index at `index`.
fn walked(root: &Path, index: &Path, tree: &str) -> Vec<(String, String, String, String, String)> {
    let run = |args: &[&str]| {
        let out = Command::new("git")
            .arg("-C")
            .arg(root)
            .args(["-c", "core.fsmonitor=false", "-c", "core.autocrlf=false"])
            .args(args)
            .env("GIT_INDEX_FILE", index)
            .env_remove("GIT_DIR")
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}");
        out.stdout
    };
    run(&["add", "-A", "--", "."]);
    let out = run(&[
        "diff-index",
        "--cached",
        "-z",
        "--no-renames",
        "--raw",
        tree,
    ]);
    let mut lines = Vec::new();
    let mut fields = out.split(|&b| b == 0).filter(|f| !f.is_empty());
    while let (Some(meta), Some(path)) = (fields.next(), fields.next()) {
        let meta = String::from_utf8_lossy(meta);
        let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        let blob = |s: &str| {
            if s.bytes().all(|b| b == b'0') {
                String::new()
            } else {
                s.to_owned()
            }
        };
        lines.push((
            String::from_utf8_lossy(path).into_owned(),
            parts[4][..1].to_owned(),
            format!("{:o}", u32::from_str_radix(parts[0], 8).unwrap_or(0)),
            format!("{:o}", u32::from_str_radix(parts[1], 8).unwrap_or(0)),
            format!("{}>{}", blob(parts[2]), blob(parts[3])),
        ));
    }
    lines
}

fn as_lines(changes: &[Change]) -> Vec<(String, String, String, String, String)> {
    changes
        .iter()
        .map(|c| {
            (
                c.path.clone(),
                match c.status {
                    Status::Added => "A",
                    Status::Deleted => "D",
                    Status::Modified => "M",
                }
                .to_owned(),
                format!("{:o}", c.old_mode),
                format!("{:o}", c.new_mode),
                format!("{}>{}", c.old_blob, c.new_blob),
            )
        })
        .collect()
}

/// Compares through the store and checks the answer against the walk; returns `path status` lines.
fn compare_checked(
    rewind: &Rewind,
    session: &sessiontree_core::Session,
    (root, index): (&Path, &Path),
    step: &str,
) -> Vec<String> {
    let cmp = rewind.compare(session, "u1000001", None).expect("compare");
    assert_eq!(
        as_lines(&cmp.changes),
        walked(root, index, &cmp.point.point.tree),
        "{step}: the watched compare answers as the walk does"
    );
    cmp.changes
        .iter()
        .map(|c| format!("{} {}", c.path, c.status.as_str()))
        .collect()
}

/// The private index holds the watcher's token (git asked the hook) and the journal exists.
fn assert_watched(root: &Path) {
    let state = root.join(".git/sessiontree");
    let index = std::fs::read(state.join("index")).expect("private index");
    let at = index
        .windows(4)
        .position(|w| w == b"FSMN")
        .expect("the private index has git's fsmonitor extension");
    let journals: Vec<String> = std::fs::read_dir(state.join("fsmonitor"))
        .expect("the watcher's folder")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("journal-"))
        .collect();
    assert_eq!(journals.len(), 1, "{journals:?}");
    let id = journals[0].trim_start_matches("journal-");
    let token = format!("{id}:");
    assert!(
        index[at..]
            .windows(token.len())
            .any(|w| w == token.as_bytes()),
        "the private index holds a token of the watcher's journal"
    );
}

#[test]
fn a_watched_compare_answers_as_a_walk_of_every_file() {
    sessiontree_rewind::watch_work_trees(true);
    let repo = Repo::new();
    let root = repo.root();
    write(root, "src/sub/a.rs", b"a\n");
    write(root, "src/sub/deep/b.rs", b"b\n");
    write(root, "src/other.rs", b"aaaa\n");
    let sessions = tempfile::tempdir().expect("tempdir");
    let path = session_file(
        &sessions.path().join("s.jsonl"),
        SID,
        root,
        &[("u1000001", None, "user", "go")],
    );
    let session = open(&path);
    // The journal of a server that has ended (no process has this id) is removed when the watch
    // starts; assert_watched finds only the new one.
    let orphan = root.join(".git/sessiontree/fsmonitor/journal-7fffffff-1-0");
    std::fs::create_dir_all(orphan.parent().expect("folder")).expect("mkdir");
    std::fs::write(&orphan, b"old\0").expect("orphan");
    let rewind = Rewind::for_session(&session).expect("store");
    rewind
        .record(&session, "u1000001", Moment::Before, true, "test")
        .expect("record");
    assert!(!orphan.exists(), "the ended server's journal is removed");
    let scratch = tempfile::tempdir().expect("tempdir");
    let index = scratch.path().join("index");
    std::fs::copy(root.join(".git/index"), &index).expect("seed the walk's index");
    let at = (root, index.as_path());
    // The first staging of a watched work tree looks at every file (no token yet).
    assert!(compare_checked(&rewind, &session, at, "unchanged").is_empty());
    assert!(compare_checked(&rewind, &session, at, "unchanged again").is_empty());
    assert_watched(root);

    // The same size, in the same second, with the modification time put back to the nanosecond.
    let other = root.join("src/other.rs");
    let mtime = std::fs::metadata(&other)
        .and_then(|m| m.modified())
        .expect("mtime");
    std::fs::write(&other, b"bbbb\n").expect("write");
    std::fs::File::options()
        .write(true)
        .open(&other)
        .and_then(|f| f.set_modified(mtime))
        .expect("set mtime");
    assert_eq!(
        compare_checked(&rewind, &session, at, "same size and time"),
        ["src/other.rs modified"]
    );

    // A new untracked file in a folder that did not change otherwise.
    write(root, "src/sub/deep/c.rs", b"c\n");
    assert_eq!(
        compare_checked(&rewind, &session, at, "new untracked file"),
        ["src/other.rs modified", "src/sub/deep/c.rs added"]
    );

    // New ignored files (a pattern, and a new ignored folder) are not part of it.
    write(root, "src/sub/trace.log", b"ignored\n");
    write(root, "build/more/out.o", b"ignored\n");
    assert_eq!(
        compare_checked(&rewind, &session, at, "new ignored files"),
        ["src/other.rs modified", "src/sub/deep/c.rs added"]
    );

    // A changed .gitignore: the log files are no longer ignored.
    write(root, ".gitignore", b"build/\n");
    assert_eq!(
        compare_checked(&rewind, &session, at, "changed .gitignore"),
        [
            ".gitignore modified",
            "debug.log added",
            "src/other.rs modified",
            "src/sub/deep/c.rs added",
            "src/sub/trace.log added",
        ]
    );
    write(root, ".gitignore", b"build/\n*.log\n");
    // Files once staged stay in the private index when they are ignored again (as before).
    assert_eq!(
        compare_checked(&rewind, &session, at, ".gitignore put back"),
        [
            "debug.log added",
            "src/other.rs modified",
            "src/sub/deep/c.rs added",
            "src/sub/trace.log added",
        ]
    );

    // A rule of .git/info/exclude (outside the watched files) that goes away.
    write(root, "scratch.tmp", b"excluded\n");
    std::fs::write(root.join(".git/info/exclude"), b"*.tmp\n").expect("exclude");
    let lines = compare_checked(&rewind, &session, at, "excluded file");
    assert!(
        !lines.contains(&"scratch.tmp added".to_owned()),
        "{lines:?}"
    );
    std::fs::write(root.join(".git/info/exclude"), b"").expect("exclude");
    let lines = compare_checked(&rewind, &session, at, "exclude rule removed");
    assert!(lines.contains(&"scratch.tmp added".to_owned()), "{lines:?}");
    std::fs::remove_file(root.join("scratch.tmp")).expect("rm");

    // A deleted folder, with a folder inside it.
    std::fs::remove_dir_all(root.join("src/sub")).expect("rm -r");
    let lines = compare_checked(&rewind, &session, at, "deleted folder");
    for gone in ["src/sub/a.rs deleted", "src/sub/deep/b.rs deleted"] {
        assert!(lines.contains(&gone.to_owned()), "{lines:?}");
    }
    assert!(
        !lines.iter().any(|l| l.starts_with("src/sub/deep/c.rs")),
        "{lines:?}"
    );

    // A folder created since the watch began, then a file in it changed in place.
    write(root, "gen/x/y.rs", b"one\n");
    let lines = compare_checked(&rewind, &session, at, "new folder");
    assert!(lines.contains(&"gen/x/y.rs added".to_owned()), "{lines:?}");
    write(root, "gen/x/y.rs", b"two\n");
    chmod(root, "gen/x/y.rs", 0o755);
    let lines = compare_checked(&rewind, &session, at, "file in the new folder changed");
    assert!(lines.contains(&"gen/x/y.rs added".to_owned()), "{lines:?}");

    // A folder moved: its files are deleted at the old place and added at the new one.
    std::fs::rename(root.join("gen"), root.join("moved")).expect("mv");
    write(root, "moved/x/y.rs", b"three\n");
    let lines = compare_checked(&rewind, &session, at, "moved folder");
    assert!(
        lines.contains(&"moved/x/y.rs added".to_owned()),
        "{lines:?}"
    );
    assert!(!lines.iter().any(|l| l.starts_with("gen/")), "{lines:?}");

    // Only changes in place (no file created): the tracked files are the only ones looked at.
    write(root, "src/other.rs", b"cccc\n");
    write(root, "src/lib.rs", b"pub fn one() -> u32 { 3 }\n");
    std::fs::remove_file(root.join("run.sh")).expect("rm");
    let lines = compare_checked(&rewind, &session, at, "changes in place");
    for changed in [
        "run.sh deleted",
        "src/lib.rs modified",
        "src/other.rs modified",
    ] {
        assert!(lines.contains(&changed.to_owned()), "{lines:?}");
    }

    assert_watched(root);
    // A snapshot through the watch holds what the walk sees.
    let snap = rewind.snapshot().expect("snapshot");
    assert!(
        walked(root, &index, &snap.tree).is_empty(),
        "the snapshot is the work tree"
    );
    sessiontree_rewind::watch_work_trees(false);
}
