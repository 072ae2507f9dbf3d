//! Emacs (eglot) against the real binary: a session file opened in Emacs shows the outline and
//! the diagnostics, a custom request works, a notification arrives, and shutdown is clean.
//! Emacs with eglot is a prerequisite (`scripts/install-test-deps.sh` installs `emacs-nox` and
//! `elpa-eglot`): without it the test fails.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod support;

use std::process::Command;
use support::*;

#[test]
fn emacs_eglot_shows_outline_and_diagnostics() {
    require(
        "emacs",
        &["--batch", "--eval", "(require 'eglot)"],
        "Emacs with eglot",
    );
    let dir = tempfile::tempdir().expect("tmp");
    // c06 has a branch point; add an orphan so there is a diagnostic to show.
    let file = copy_fixture(
        "c06-branch-basic/pi/session.jsonl",
        dir.path(),
        "session.jsonl",
    );
    let orphan = r#"{"type":"message","id":"0rphan00","parentId":"missing0","timestamp":"2025-01-01T00:09:00.000Z","message":{"role":"user","content":"lost","timestamp":1735690140000}}"#;
    let mut text = std::fs::read_to_string(&file).expect("read");
    text.push_str(orphan);
    text.push('\n');
    std::fs::write(&file, text).expect("write");
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/editors/eglot-session.el");
    let out = Command::new("timeout")
        .args(["60", "emacs", "--batch", "-Q", "-l"])
        .arg(&script)
        .env(
            "SESSIONTREE_BIN",
            std::env::var("SESSIONTREE_TEST_BIN")
                .unwrap_or_else(|_| env!("CARGO_BIN_EXE_sessiontree").to_owned()),
        )
        .env("SESSIONTREE_FILE", &file)
        .env("HOME", dir.path())
        .env(
            "SESSIONTREE_EVENTS",
            std::env::var_os("SESSIONTREE_EVENTS").unwrap_or_default(),
        )
        .current_dir(dir.path())
        .output()
        .expect("run emacs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(
        out.status.success() && stdout.contains("PASS"),
        "emacs failed ({:?}):\n{stdout}\n{stderr}",
        out.status
    );
}
