//! A pi fork with no assistant message is held in memory (pi writes it with its first answer);
//! when the agent writes it, the session follows that file from the end of what it holds: a file
//! still being written is waited for, a file with anything else is reported as replaced (reopen
//! it), never merged.

use sessiontree_core::ids::RandomIds;
use sessiontree_core::session::FileState;
use sessiontree_core::{Error, OpenOptions, Session};
use std::io::Write as _;

const SOURCE: &str = concat!(
    r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#,
    "\n",
    r#"{"type":"model_change","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","provider":"p","modelId":"m"}"#,
    "\n",
    r#"{"type":"message","id":"u1","parentId":"a1","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
    "\n",
    r#"{"type":"message","id":"r1","parentId":"u1","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"stopReason":"stop","timestamp":2}}"#,
    "\n",
);

const QUESTION: &str = r#"{"type":"message","id":"u2","parentId":"a1","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"user","content":"again","timestamp":3}}"#;

/// An unwritten fork at `a1` (no assistant message on the path) and its contents as the agent
/// writes them.
fn unwritten_fork(dir: &std::path::Path) -> (Session, String) {
    let path = dir.join("source.jsonl");
    std::fs::write(&path, SOURCE).unwrap();
    let mut source = Session::open(&path, OpenOptions::default()).unwrap();
    let fork = source
        .create_branched_session("a1", Box::new(RandomIds))
        .unwrap();
    assert!(matches!(fork.file_state(), FileState::Deferred(_)));
    let contents = fork.unwritten_contents().unwrap().expect("unwritten");
    assert_eq!(contents.lines().count(), 2, "header and model change");
    (fork, contents)
}

#[test]
fn the_agents_file_is_followed_from_the_end_of_the_held_contents() {
    let dir = tempfile::tempdir().unwrap();
    let (mut fork, contents) = unwritten_fork(dir.path());
    let path = fork.path().unwrap().to_path_buf();
    // No file yet, then the agent's first lines: nothing changes.
    assert!(fork.follow().unwrap().new_entries.is_empty());
    std::fs::write(&path, &contents[..contents.len() - 10]).unwrap();
    assert!(fork.follow().unwrap().new_entries.is_empty());
    assert!(matches!(fork.file_state(), FileState::Deferred(_)));
    // All of it and the agent's own line: followed, the new entry indexed once.
    std::fs::write(&path, format!("{contents}{QUESTION}\n")).unwrap();
    let outcome = fork.follow().unwrap();
    assert_eq!(outcome.new_entries.len(), 1);
    assert!(fork.contains("u2"));
    assert_eq!(fork.entries().len(), 2);
    assert!(matches!(fork.file_state(), FileState::Written { .. }));
    assert!(fork.unwritten_contents().unwrap().is_none());
    // Later lines are appended as to any file.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    writeln!(
        f,
        r#"{{"type":"message","id":"r2","parentId":"u2","timestamp":"2025-01-01T00:00:04.000Z","message":{{"role":"assistant","content":[],"stopReason":"stop","timestamp":4}}}}"#
    )
    .unwrap();
    assert_eq!(fork.follow().unwrap().new_entries.len(), 1);
    assert!(fork.contains("r2"));
}

#[test]
fn a_file_with_other_contents_is_reported_as_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let (mut fork, contents) = unwritten_fork(dir.path());
    let path = fork.path().unwrap().to_path_buf();
    let other = contents.replacen("model_change", "model_chang3", 1);
    std::fs::write(&path, &other).unwrap();
    assert!(matches!(fork.follow(), Err(Error::FileReplaced { .. })));
    assert!(matches!(fork.file_state(), FileState::Deferred(_)));
}
