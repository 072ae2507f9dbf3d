//! A branched session's new file is copied from the source file in byte ranges; it must hold
//! exactly the bytes of the whole-file text (`canonical_contents`, what was written before the
//! range copy), on generated sessions of both dialects, with `\r\n` lines, lines the engine does not
//! keep, and entries that live only in memory.

use serde_json::json;
use sessiontree_core::ids::RandomIds;
use sessiontree_core::session::FileState;
use sessiontree_core::synth::{self, SynthOptions};
use sessiontree_core::{Dialect, OpenOptions, Session};
use std::io::Write;

fn forks_match_the_whole_file_text(dialect: Dialect, seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("source.jsonl");
    let options = SynthOptions {
        dialect,
        entries: 600,
        seed,
    };
    let stats = synth::generate_file(options, &path).unwrap();
    // Lines another writer added: one ending in `\r\n`, a line that is not JSON, then two more.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    let leaf = &stats.leaf_id;
    write!(
        f,
        "{{\"type\":\"message\",\"id\":\"crlf1\",\"parentId\":\"{leaf}\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"with a carriage return\",\"timestamp\":1}}}}\r\n\
         not json\n\
         {{\"type\":\"message\",\"id\":\"after1\",\"parentId\":\"crlf1\",\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"é ünïcode ✓\"}}],\"usage\":{{\"input\":1,\"output\":1,\"cost\":{{\"total\":0}}}},\"timestamp\":2}}}}\n\
         {{\"type\":\"message\",\"id\":\"after2\",\"parentId\":\"after1\",\"timestamp\":\"2026-01-01T00:00:02.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"last\",\"timestamp\":3}}}}\n"
    )
    .unwrap();
    drop(f);

    let mut session = Session::open(&path, OpenOptions::default()).unwrap();
    // Entries written by us (held in memory) and a label carried into forks.
    session
        .append_message(json!({"role": "user", "content": "written by us", "timestamp": 4}))
        .unwrap();
    let ours = session.leaf_id().unwrap().to_owned();
    session.append_label_change("after1", Some("kept")).unwrap();
    session.branch(&ours).unwrap();
    session
        .append_message(json!({"role": "user", "content": "and again", "timestamp": 5}))
        .unwrap();

    let ids: Vec<String> = session
        .entries()
        .iter()
        .filter_map(|e| e.id().map(str::to_owned))
        .collect();
    let mut targets = vec![session.leaf_id().unwrap().to_owned(), ours, "after2".into()];
    targets.extend(ids.iter().step_by(37).cloned());
    for target in targets {
        let fork = session
            .create_branched_session(&target, Box::new(RandomIds))
            .unwrap();
        if !matches!(fork.file_state(), FileState::Written { .. }) {
            continue; // pi defers a path without an assistant message
        }
        let written = std::fs::read(fork.path().unwrap()).unwrap();
        let whole = fork.canonical_contents().unwrap();
        assert!(
            written == whole.as_bytes(),
            "{dialect:?} fork at {target}: {} bytes written, {} expected",
            written.len(),
            whole.len()
        );
        // And it reads back as the same session.
        let reread = Session::open(fork.path().unwrap(), OpenOptions::default()).unwrap();
        assert_eq!(reread.entries().len(), fork.entries().len());
        assert_eq!(reread.leaf_id(), fork.leaf_id());
        std::fs::remove_file(fork.path().unwrap()).unwrap();
    }
}

#[test]
fn pi_forks_are_the_whole_file_text() {
    for seed in [1, 7] {
        forks_match_the_whole_file_text(Dialect::Pi, seed);
    }
}

#[test]
fn omp_forks_are_the_whole_file_text() {
    for seed in [1, 7] {
        forks_match_the_whole_file_text(Dialect::Omp, seed);
    }
}

/// A fork's closing `fdatasync` runs after the fork is answered; a write to the fork right away
/// waits for it and lands after the copied lines, and waiting again has nothing left to report.
#[test]
fn a_fork_written_to_at_once_holds_the_copy_then_the_new_line() {
    for dialect in [Dialect::Pi, Dialect::Omp] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("source.jsonl");
        let options = SynthOptions {
            dialect,
            entries: 400,
            seed: 3,
        };
        let stats = synth::generate_file(options, &path).unwrap();
        let mut session = Session::open(&path, OpenOptions::default()).unwrap();
        let mut fork = session
            .create_branched_session(&stats.leaf_id, Box::new(RandomIds))
            .unwrap();
        let copied = fork.canonical_contents().unwrap();
        fork.append_message(
            json!({"role": "user", "content": "right after the fork", "timestamp": 9}),
        )
        .unwrap();
        fork.wait_durable().unwrap();
        let written = String::from_utf8(std::fs::read(fork.path().unwrap()).unwrap()).unwrap();
        let (head, last) = written.trim_end_matches('\n').rsplit_once('\n').unwrap();
        assert_eq!(
            format!("{head}\n"),
            copied,
            "{dialect:?}: the copy comes first, unchanged"
        );
        assert!(last.contains("right after the fork"), "{dialect:?}: {last}");
        assert_eq!(written, fork.canonical_contents().unwrap());
    }
}
