//! The rewind store against real git repositories: points, compare, restore, undo, retention,
//! branched sessions, pi-rewind-hook's points, and what must never change (the user's index,
//! HEAD, branches, ignored files, session files).

mod support;

use sessiontree_rewind::{Action, Moment, Retention, Rewind, Snapshot, Source, Status};
use support::*;

const SID: &str = "0194aaaa-0000-7000-8000-000000000001";

/// A session with two turns whose file lies outside the work tree.
fn two_turns(repo: &Repo) -> (tempfile::TempDir, std::path::PathBuf) {
    let sessions = tempfile::tempdir().expect("tempdir");
    let path = session_file(
        &sessions.path().join("s.jsonl"),
        SID,
        repo.root(),
        &[
            ("u1000001", None, "user", "write the code"),
            ("a1000001", Some("u1000001"), "assistant", "done"),
            ("u2000002", Some("a1000001"), "user", "again"),
            ("a2000002", Some("u2000002"), "assistant", "done again"),
        ],
    );
    (sessions, path)
}

/// [`two_turns`], opened, with its rewind store.
fn two_turns_opened(repo: &Repo) -> (tempfile::TempDir, sessiontree_core::Session, Rewind) {
    let (sessions, path) = two_turns(repo);
    let session = open(&path);
    let rewind = Rewind::for_session(&session).expect("store");
    (sessions, session, rewind)
}

/// Records an exact point at `entry`, as the test's own; its snapshot.
fn record(
    rewind: &Rewind,
    session: &sessiontree_core::Session,
    entry: &str,
    moment: Moment,
) -> Snapshot {
    rewind
        .record(session, entry, moment, true, "test")
        .unwrap_or_else(|e| panic!("recording the point {moment:?} {entry}: {e}"))
}

/// What an agent's turn does to the files: changes one, adds an executable, removes one, adds a link.
fn agent_turn(root: &std::path::Path) {
    write(root, "src/lib.rs", b"pub fn one() -> u32 { 2 }\n");
    write(root, "src/new/tool.sh", b"#!/bin/sh\necho new\n");
    chmod(root, "src/new/tool.sh", 0o755);
    std::fs::remove_file(root.join("run.sh")).expect("rm");
    std::os::unix::fs::symlink("src/lib.rs", root.join("link")).expect("symlink");
}

#[test]
fn restore_gives_the_exact_bytes_and_modes_of_the_point_and_removes_what_the_agent_created() {
    let repo = Repo::new();
    let (_s, session, rewind) = two_turns_opened(&repo);
    let before = files(repo.root());
    let git_before = repo.git_state();
    record(&rewind, &session, "u1000001", Moment::Before);
    agent_turn(repo.root());
    record(&rewind, &session, "a1000001", Moment::After);
    let after = files(repo.root());

    let report = rewind
        .restore(&session, "u1000001", false)
        .expect("restore");
    assert_eq!(
        files(repo.root()),
        before,
        "the work tree is exactly the point's"
    );
    let mut actions: Vec<(String, Action)> = report
        .plan
        .actions
        .iter()
        .map(|a| (a.path.clone(), a.action))
        .collect();
    actions.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        actions,
        vec![
            ("link".to_owned(), Action::Deleted),
            ("run.sh".to_owned(), Action::Added),
            ("src/lib.rs".to_owned(), Action::Changed),
            ("src/new/tool.sh".to_owned(), Action::Deleted),
        ]
    );
    assert!(
        !repo.root().join("src/new").exists(),
        "the folder the agent made is gone"
    );
    assert_eq!(
        repo.git_state(),
        git_before,
        "index, HEAD and branches are untouched"
    );

    rewind
        .restore(&session, "a1000001", false)
        .expect("restore after");
    assert_eq!(
        files(repo.root()),
        after,
        "the turn's end comes back exactly, link and modes included"
    );
    assert_eq!(repo.git_state(), git_before);
}

#[test]
fn undo_brings_back_the_users_own_edits_made_after_the_turn() {
    let repo = Repo::new();
    let (_s, session, rewind) = two_turns_opened(&repo);
    record(&rewind, &session, "u1000001", Moment::Before);
    agent_turn(repo.root());
    record(&rewind, &session, "a1000001", Moment::After);
    // The user edits by hand after the turn, and chmods a file.
    write(
        repo.root(),
        "src/lib.rs",
        b"pub fn one() -> u32 { 42 } // mine\n",
    );
    write(repo.root(), "scratch/mine.txt", b"my own file\n");
    chmod(repo.root(), "README.md", 0o600);
    let mine = files(repo.root());

    let report = rewind
        .restore(&session, "u1000001", false)
        .expect("restore");
    assert!(report.undo.is_some());
    assert_ne!(files(repo.root()), mine);
    let undo = Rewind::for_session(&session)
        .expect("reopen")
        .undo(false)
        .expect("undo");
    assert!(!undo.plan.actions.is_empty());
    assert_eq!(
        files(repo.root()),
        mine,
        "every byte of the user's edits is back"
    );
}

#[test]
fn an_unchanged_work_tree_makes_no_new_snapshot() {
    let repo = Repo::new();
    let (_s, session, rewind) = two_turns_opened(&repo);
    let first = record(&rewind, &session, "u1000001", Moment::Before);
    let second = record(&rewind, &session, "a1000001", Moment::After);
    assert!(first.new);
    assert!(!second.new, "same files, same snapshot");
    assert_eq!(first.tree, second.tree);
    let kept = sessiontree_rewind::store::kept(rewind.workspace()).expect("kept");
    assert_eq!(
        kept.into_iter().collect::<Vec<_>>(),
        vec![first.tree.clone()]
    );
    // The ref holds a tree, so the user's history never shows it.
    assert_eq!(
        git(
            repo.root(),
            &["cat-file", "-t", "refs/sessiontree/snapshots"]
        ),
        "tree"
    );
    assert_eq!(git(repo.root(), &["log", "--all", "--format=%s"]), "init");
}

#[test]
fn ignored_files_are_neither_snapshotted_nor_touched() {
    let repo = Repo::new();
    let (_s, session, rewind) = two_turns_opened(&repo);
    let snap = record(&rewind, &session, "u1000001", Moment::Before);
    let listing = git(repo.root(), &["ls-tree", "-r", "--name-only", &snap.tree]);
    assert!(
        !listing.contains("build/") && !listing.contains("debug.log"),
        "{listing}"
    );
    assert!(
        listing.contains("notes.txt"),
        "untracked, not ignored files are in: {listing}"
    );
    write(repo.root(), "build/out.bin", b"changed ignored bytes");
    write(repo.root(), "debug.log", b"new log\n");
    rewind
        .restore(&session, "u1000001", false)
        .expect("restore");
    assert_eq!(
        std::fs::read(repo.root().join("build/out.bin")).expect("r"),
        b"changed ignored bytes"
    );
    assert_eq!(
        std::fs::read(repo.root().join("debug.log")).expect("r"),
        b"new log\n"
    );
}

#[test]
fn a_session_file_inside_the_work_tree_is_never_in_a_snapshot_nor_restored() {
    let repo = Repo::new();
    let path = session_file(
        &repo.root().join(".sessions/s.jsonl"),
        SID,
        repo.root(),
        &[
            ("u1000001", None, "user", "go"),
            ("a1000001", Some("u1000001"), "assistant", "ok"),
        ],
    );
    std::fs::write(
        repo.root().join(".sessions/other.jsonl"),
        b"{\"type\":\"session\"}\n",
    )
    .expect("w");
    let session = open(&path);
    let rewind = Rewind::for_session(&session).expect("store");
    let snap = record(&rewind, &session, "u1000001", Moment::Before);
    let listing = git(repo.root(), &["ls-tree", "-r", "--name-only", &snap.tree]);
    assert!(!listing.contains(".sessions/"), "{listing}");
    // The session grows; a restore leaves it exactly as it is.
    let mut bytes = std::fs::read(&path).expect("r");
    bytes.extend_from_slice(entry_line("u2000002", Some("a1000001"), "user", "more", 9).as_bytes());
    std::fs::write(&path, &bytes).expect("w");
    write(repo.root(), "src/lib.rs", b"changed\n");
    rewind
        .restore(&session, "u1000001", false)
        .expect("restore");
    assert_eq!(
        std::fs::read(&path).expect("r"),
        bytes,
        "the session file is untouched"
    );
    assert!(repo.root().join(".sessions/other.jsonl").exists());
    assert_eq!(
        std::fs::read(repo.root().join("src/lib.rs")).expect("r"),
        b"pub fn one() -> u32 { 1 }\n"
    );
}

#[test]
fn a_workspace_that_is_not_a_git_repository_is_a_clear_error() {
    let plain = tempfile::tempdir().expect("tempdir");
    let path = session_file(
        &plain.path().join("s.jsonl"),
        SID,
        plain.path(),
        &[("u1000001", None, "user", "go")],
    );
    let session = open(&path);
    let err = Rewind::for_session(&session).expect_err("not a repository");
    assert_eq!(err.kind(), "notARepository");
    assert!(err.to_string().contains("is not a git repository"), "{err}");
    assert!(!plain.path().join(".git").exists());
}

#[test]
fn compare_lists_added_modified_and_deleted_files_and_reads_a_file_at_the_point() {
    let repo = Repo::new();
    let (_s, session, rewind) = two_turns_opened(&repo);
    record(&rewind, &session, "u1000001", Moment::Before);
    agent_turn(repo.root());
    let cmp = rewind.compare(&session, "u1000001", None).expect("compare");
    let got: Vec<(String, Status)> = cmp
        .changes
        .iter()
        .map(|c| (c.path.clone(), c.status))
        .collect();
    assert_eq!(
        got,
        vec![
            ("link".to_owned(), Status::Added),
            ("run.sh".to_owned(), Status::Deleted),
            ("src/lib.rs".to_owned(), Status::Modified),
            ("src/new/tool.sh".to_owned(), Status::Added),
        ]
    );
    let (_, file) = rewind
        .file_at(&session, "u1000001", "run.sh")
        .expect("file");
    let file = file.expect("in the point");
    assert_eq!(file.content, b"#!/bin/sh\necho run\n");
    assert_eq!(file.mode, 0o100755);
    assert!(rewind
        .file_at(&session, "u1000001", "src/new/tool.sh")
        .expect("q")
        .1
        .is_none());
    // Between two points: the work tree compared in the private index (no snapshot written)
    // and its snapshot compared as a tree give the same lines, modes and blobs included.
    record(&rewind, &session, "a1000001", Moment::After);
    let between = rewind
        .compare(&session, "u1000001", Some("a1000001"))
        .expect("between");
    assert_eq!(between.changes.len(), 4);
    assert_eq!(between.changes, cmp.changes);
    // A mode change alone, and a file that became a link: the same both ways too.
    chmod(repo.root(), "src/lib.rs", 0o755);
    std::fs::remove_file(repo.root().join("src/new/tool.sh")).expect("rm");
    std::os::unix::fs::symlink("../lib.rs", repo.root().join("src/new/tool.sh")).expect("link");
    let now = rewind.compare(&session, "a1000001", None).expect("compare");
    let got: Vec<(String, Status, u32, u32)> = now
        .changes
        .iter()
        .map(|c| (c.path.clone(), c.status, c.old_mode, c.new_mode))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "src/lib.rs".to_owned(),
                Status::Modified,
                0o100644,
                0o100755
            ),
            (
                "src/new/tool.sh".to_owned(),
                Status::Modified,
                0o100755,
                0o120000
            ),
        ]
    );
    record(&rewind, &session, "a2000002", Moment::After);
    let as_trees = rewind
        .compare(&session, "a1000001", Some("a2000002"))
        .expect("between");
    assert_eq!(as_trees.changes, now.changes);
    chmod(repo.root(), "src/lib.rs", 0o644);
    std::fs::remove_file(repo.root().join("src/new/tool.sh")).expect("rm");
    write(repo.root(), "src/new/tool.sh", b"#!/bin/sh\necho new\n");
    chmod(repo.root(), "src/new/tool.sh", 0o755);
    assert!(rewind
        .compare(&session, "a1000001", None)
        .expect("c")
        .changes
        .is_empty());
}

#[test]
fn an_entry_without_a_point_uses_the_nearest_one_above_it_and_says_which() {
    let repo = Repo::new();
    let (_s, session, rewind) = two_turns_opened(&repo);
    record(&rewind, &session, "a1000001", Moment::After);
    let cmp = rewind.compare(&session, "a2000002", None).expect("compare");
    assert_eq!(cmp.point.asked, "a2000002");
    assert_eq!(cmp.point.point.entry_id, "a1000001");
    assert!(!cmp.point.is_own());
    let err = rewind
        .restore(&session, "u1000001", false)
        .expect_err("none above the first");
    assert_eq!(err.kind(), "noRewindPoint");
    let err = rewind
        .restore(&session, "nothere1", false)
        .expect_err("unknown");
    assert_eq!(err.kind(), "unknownEntry");
}

#[test]
fn points_survive_reopening_and_branch_into_a_new_session() {
    let repo = Repo::new();
    let (sessions, path) = two_turns(&repo);
    let session = open(&path);
    let rewind = Rewind::for_session(&session).expect("store");
    record(&rewind, &session, "u1000001", Moment::Before);
    agent_turn(repo.root());
    record(&rewind, &session, "a1000001", Moment::After);
    drop(rewind);

    // Reopened.
    let again = open(&path);
    let points = Rewind::for_session(&again)
        .expect("store")
        .points(&again)
        .expect("points");
    assert_eq!(points.len(), 2);

    // A branched session (as /branch writes it: a new id, parentSession, the path's entries).
    let original = std::fs::read_to_string(&path).expect("read");
    let mut lines: Vec<String> = original.lines().map(str::to_owned).collect();
    lines[0] = lines[0]
        .replace(SID, "0194bbbb-0000-7000-8000-000000000002")
        .replace(
            "\"cwd\"",
            &format!(
                "\"parentSession\":{},\"cwd\"",
                serde_json::to_string(&path.to_string_lossy()).expect("j")
            ),
        );
    lines.truncate(3);
    let branched = sessions.path().join("branched.jsonl");
    std::fs::write(&branched, lines.join("\n") + "\n").expect("write");
    let b = open(&branched);
    let rewind = Rewind::for_session(&b).expect("store");
    let points = rewind.points(&b).expect("points");
    assert_eq!(
        points.len(),
        2,
        "the branched session keeps the points it inherited"
    );
    rewind
        .restore(&b, "u1000001", false)
        .expect("restore through the branch");
    assert_eq!(
        std::fs::read(repo.root().join("src/lib.rs")).expect("r"),
        b"pub fn one() -> u32 { 1 }\n"
    );

    // Even when the parent file has gone (matched by entry id and timestamp).
    std::fs::remove_file(&path).expect("rm parent");
    let b = open(&branched);
    assert_eq!(
        Rewind::for_session(&b)
            .expect("s")
            .points(&b)
            .expect("p")
            .len(),
        2
    );
}

#[test]
fn a_pruned_snapshot_is_reported_and_nothing_is_touched() {
    let repo = Repo::new();
    let (_s, session, rewind) = two_turns_opened(&repo);
    record(&rewind, &session, "u1000001", Moment::Before);
    write(repo.root(), "a.txt", b"1");
    record(&rewind, &session, "a1000001", Moment::After);
    write(repo.root(), "a.txt", b"2");
    record(&rewind, &session, "u2000002", Moment::Before);
    write(repo.root(), "a.txt", b"3");
    let report = rewind
        .prune(
            &Retention {
                max_snapshots: Some(1),
                max_age_days: None,
            },
            &[&session],
        )
        .expect("prune");
    assert_eq!(report.pruned.len(), 2);
    assert_eq!(report.kept, 1);
    let state = files(repo.root());
    let err = rewind
        .restore(&session, "u1000001", false)
        .expect_err("pruned");
    assert_eq!(err.kind(), "snapshotPruned");
    assert!(err.to_string().contains("was pruned"), "{err}");
    assert_eq!(files(repo.root()), state, "nothing touched");
    let points = rewind.points(&session).expect("points");
    assert!(points.get("u1000001").expect("listed").pruned);
    assert!(!points.get("u2000002").expect("listed").pruned);
    rewind
        .restore(&session, "u2000002", false)
        .expect("the kept one restores");
    assert_eq!(std::fs::read(repo.root().join("a.txt")).expect("r"), b"2");
}

#[test]
fn retention_is_off_by_default_and_pins_labelled_entries() {
    let repo = Repo::new();
    let (_s, path) = two_turns(&repo);
    let session = open(&path);
    let rewind = Rewind::for_session(&session).expect("store");
    assert!(Retention::from_git_config(rewind.workspace()).is_off());
    git(
        repo.root(),
        &["config", "sessiontree.rewind.maxSnapshots", "1"],
    );
    assert_eq!(
        Retention::from_git_config(rewind.workspace()).max_snapshots,
        Some(1)
    );
    record(&rewind, &session, "u1000001", Moment::Before);
    write(repo.root(), "a.txt", b"1");
    record(&rewind, &session, "a1000001", Moment::After);
    write(repo.root(), "a.txt", b"2");
    record(&rewind, &session, "u2000002", Moment::Before);
    // Label the first user message.
    let mut bytes = std::fs::read(&path).expect("r");
    bytes.extend_from_slice(b"{\"type\":\"label\",\"id\":\"1abe1000\",\"parentId\":\"a2000002\",\"timestamp\":\"2025-01-01T00:00:30.000Z\",\"targetId\":\"u1000001\",\"label\":\"keep\"}\n");
    std::fs::write(&path, bytes).expect("w");
    let session = open(&path);
    let retention = Retention::from_git_config(rewind.workspace());
    let report = rewind.prune(&retention, &[&session]).expect("prune");
    assert_eq!(report.pruned.len(), 1, "{report:?}");
    let points = rewind.points(&session).expect("points");
    assert!(
        !points.get("u1000001").expect("p").pruned,
        "labelled: pinned"
    );
    assert!(points.get("a1000001").expect("p").pruned);
    assert!(
        !points.get("u2000002").expect("p").pruned,
        "the newest is kept"
    );
}

#[test]
fn a_restore_that_fails_part_way_puts_the_files_back_and_says_so() {
    let repo = Repo::new();
    let (_s, session, rewind) = two_turns_opened(&repo);
    write(repo.root(), "zzz", b"a file the point has\n");
    record(&rewind, &session, "u1000001", Moment::Before);
    agent_turn(repo.root());
    // `zzz` becomes an ignored, non-empty folder: the restore cannot put the file there.
    std::fs::remove_file(repo.root().join("zzz")).expect("rm");
    write(repo.root(), "zzz/x.log", b"ignored\n");
    let state = files(repo.root());
    let err = rewind
        .restore(&session, "u1000001", false)
        .expect_err("fails at zzz");
    assert_eq!(err.kind(), "restoreRolledBack", "{err}");
    assert!(err.to_string().contains("zzz"), "{err}");
    assert_eq!(
        files(repo.root()),
        state,
        "everything is as it was before the restore"
    );
    assert!(!rewind.workspace().journal_path().exists());
}

#[test]
fn pi_rewind_hook_points_are_shown_and_restored_read_only() {
    let repo = Repo::new();
    let root = repo.root();
    // What pi-rewind-hook does: a tree through a temporary index, a commit, kept by its ref.
    let index = root.join(".git/tmp-index");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("git add -A && git write-tree")
        .current_dir(root)
        .env("GIT_INDEX_FILE", &index)
        .output()
        .expect("sh");
    let tree = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let commit = git(root, &["commit-tree", &tree, "-m", "pi rewind snapshot"]);
    git(root, &["update-ref", "refs/pi-rewind/store", &commit]);
    let sessions = tempfile::tempdir().expect("tempdir");
    let path = session_file(
        &sessions.path().join("s.jsonl"),
        SID,
        root,
        &[
            ("u1000001", None, "user", "go"),
            ("a1000001", Some("u1000001"), "assistant", "ok"),
        ],
    );
    let mut text = std::fs::read_to_string(&path).expect("r");
    text.push_str(&format!(
        "{{\"type\":\"custom\",\"customType\":\"rewind-turn\",\"data\":{{\"v\":2,\"snapshots\":[\"{commit}\"],\"bindings\":[[\"u1000001\",0]]}},\"id\":\"c0000001\",\"parentId\":\"a1000001\",\"timestamp\":\"2025-01-01T00:00:09.000Z\"}}\n"
    ));
    std::fs::write(&path, &text).expect("w");
    let before = files(root);
    let session = open(&path);
    let rewind = Rewind::for_session(&session).expect("store");
    let points = rewind.points(&session).expect("points");
    let point = points.get("u1000001").expect("pi-rewind-hook's point");
    assert_eq!(point.source, Source::PiRewindHook);
    assert_eq!(point.tree, tree);
    agent_turn(root);
    rewind
        .restore(&session, "u1000001", false)
        .expect("restore");
    assert_eq!(files(root), before);
    assert_eq!(
        git(root, &["rev-parse", "refs/pi-rewind/store"]),
        commit,
        "its ref is read only"
    );
    assert_eq!(
        std::fs::read_to_string(&path).expect("r"),
        text,
        "its session is not written"
    );
}
