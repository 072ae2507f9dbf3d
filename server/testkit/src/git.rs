//! Running git in a test's repository, with a fixed author, no signing and no `GIT_DIR` /
//! `GIT_INDEX_FILE` inherited from the environment (a test run from a git hook would otherwise
//! act on the project's own repository), failing the test with git's own message when a command
//! fails.

use std::path::Path;
use std::process::Command;

/// Runs `git -C dir args…` as author `t <t@t>` and returns its standard output, trimmed.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .env_remove("GIT_DIR")
        .env_remove("GIT_INDEX_FILE")
        .output()
        .unwrap_or_else(|e| panic!("git is missing: {e}"));
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}
