//! Running git in a test's repository, with a fixed author, failing the test with git's own
//! message when a command fails.

use std::path::Path;
use std::process::Command;

/// Runs `git -C dir args…` as author `t <t@t>` and returns its standard output, trimmed.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("git is missing: {e}"));
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}
