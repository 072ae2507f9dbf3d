//! The real agents (pi 0.73.1 on Node, omp 18.2.3 on Bun), installed pinned and cached by
//! `scripts/install-agents.sh` into `.tools/agents`: a test that needs them installs them when
//! they are missing, and fails (never passes quietly) when that cannot be done.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The repository's root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The folder holding the `pi`, `omp` and `bun` launchers (installing the agents when missing).
pub fn agents_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let out = Command::new("bash")
            .arg(repo().join("scripts/install-agents.sh"))
            .output()
            .unwrap_or_else(|e| panic!("scripts/install-agents.sh: {e}"));
        assert!(
            out.status.success(),
            "the agents could not be installed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let bin = String::from_utf8_lossy(&out.stdout)
            .lines()
            .last()
            .unwrap_or("")
            .trim_end()
            .to_owned();
        let bin = PathBuf::from(bin);
        for launcher in ["pi", "omp", "bun"] {
            assert!(
                bin.join(launcher).exists(),
                "no {launcher} in {}",
                bin.display()
            );
        }
        bin
    })
}

/// The agents' `node_modules` (beside their launchers).
pub fn agents_modules() -> PathBuf {
    agents_bin().join("../node_modules")
}

/// Runs omp's own storage code on the Redis store at `url` (under Bun, from the installed
/// agents): `scripts/testing/omp-redis.ts <args[0]> <url> omp:sessions: <args[1..]>`; what it
/// printed. Fails the test when it fails.
pub fn omp_redis(url: &str, args: &[&str]) -> String {
    let (command, rest) = args.split_first().expect("an omp-redis command");
    let out = Command::new(agents_bin().join("bun"))
        .arg(repo().join("scripts/testing/omp-redis.ts"))
        .arg(command)
        .arg(url)
        .arg("omp:sessions:")
        .args(rest)
        .current_dir(repo())
        .output()
        .unwrap_or_else(|e| panic!("bun: {e}"));
    assert!(
        out.status.success(),
        "omp {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
