//! Test support for the Rust tests and benchmarks, written once: where the conformance fixtures
//! are ([`fixtures`]), prerequisites that fail a test when they are missing instead of letting it
//! pass without running ([`require`]), a second process writing to a session file as an agent
//! does ([`writer`]), LSP message framing and a connection to a server process ([`lsp`]), git in a test's repository ([`git`]), the
//! files of a work tree ([`work_tree`]) and the real agents installed, omp's Redis storage run
//! among them ([`agents`]).
//! It knows nothing of the engine, so the engine's own unit tests can use it too.

pub mod agents;
pub mod fixtures;
pub mod git;
pub mod lsp;
pub mod work_tree;
pub mod writer;

pub use fixtures::{conformance_dirs, copy_fixture, fixture, fixture_files, scenarios};
pub use git::git;

/// Fails the calling test, naming the prerequisite, unless `program args…` runs: a test that
/// needs a program never passes without it (CI installs them; see `scripts/test.sh`).
pub fn require(program: &str, args: &[&str], why: &str) {
    let ran = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    match ran {
        Ok(status) if status.success() => {}
        Ok(status) => panic!("prerequisite `{program}` ({why}) does not work here: `{program} {}` exited with {status}", args.join(" ")),
        Err(e) => panic!("prerequisite `{program}` ({why}) is missing: {e}; scripts/test.sh installs it"),
    }
}
