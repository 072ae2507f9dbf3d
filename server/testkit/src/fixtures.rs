//! Where the conformance fixtures are: `$SESSIONTREE_SHARED/conformance` (default: `shared/`
//! next to the repository), plus `$SESSIONTREE_CONFORMANCE_DIR` when it is set. The fixtures are a
//! prerequisite of the tests: when they are missing, asking for them fails the test.

use std::path::{Path, PathBuf};

/// The shared folder: `$SESSIONTREE_SHARED`, else `shared/` next to the repository.
fn shared() -> PathBuf {
    match std::env::var_os("SESSIONTREE_SHARED") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    }
}

/// The conformance folders, each once: the shared one, then `$SESSIONTREE_CONFORMANCE_DIR`.
/// Fails when the shared one is missing or an extra one named is not a folder.
pub fn conformance_dirs() -> Vec<PathBuf> {
    let main = shared().join("conformance");
    assert!(
        main.is_dir(),
        "the conformance fixtures are missing: {} is not a folder (set SESSIONTREE_SHARED to the folder that holds conformance/)",
        main.display()
    );
    let mut dirs = vec![main];
    if let Some(extra) = std::env::var_os("SESSIONTREE_CONFORMANCE_DIR") {
        let extra = PathBuf::from(extra);
        assert!(
            extra.is_dir(),
            "SESSIONTREE_CONFORMANCE_DIR={} is not a folder",
            extra.display()
        );
        let same = |d: &PathBuf| d.canonicalize().ok() == extra.canonicalize().ok();
        if !dirs.iter().any(same) {
            dirs.push(extra);
        }
    }
    dirs
}

/// The shared conformance folder alone (the first of [`conformance_dirs`]): where a test finds a
/// scenario by its name (`c01-linear-basic`, …). Fails when it is missing.
pub fn shared_conformance_dir() -> PathBuf {
    conformance_dirs().swap_remove(0)
}

/// The scenario folders (those with a `scenario.json`) of one conformance folder, sorted.
pub fn scenarios(root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.join("scenario.json").is_file())
        .collect();
    out.sort();
    out
}

/// Every scenario of every conformance folder; fails when there is none.
pub fn all_scenarios() -> Vec<PathBuf> {
    let all: Vec<PathBuf> = conformance_dirs()
        .iter()
        .flat_map(|d| scenarios(d))
        .collect();
    assert!(!all.is_empty(), "no conformance scenarios found");
    all
}

/// A file of the shared conformance fixtures, by its path under `conformance/`; fails when it
/// is not there.
pub fn fixture(rel: &str) -> PathBuf {
    let path = shared().join("conformance").join(rel);
    assert!(path.is_file(), "fixture {} is missing", path.display());
    path
}

/// Copies a fixture into `dir` under `name` and returns the copy.
pub fn copy_fixture(rel: &str, dir: &Path, name: &str) -> PathBuf {
    let to = dir.join(name);
    std::fs::copy(fixture(rel), &to).unwrap_or_else(|e| panic!("copy {rel}: {e}"));
    to
}

/// Every file under the conformance folders and under `more` (recursively), sorted.
pub fn fixture_files(more: &[&Path]) -> Vec<PathBuf> {
    let mut dirs = conformance_dirs();
    dirs.extend(more.iter().map(|d| d.to_path_buf()));
    let mut files = Vec::new();
    while let Some(dir) = dirs.pop() {
        let read = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for item in read.flatten() {
            let path = item.path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The session files (`.jsonl`) among [`fixture_files`] of the conformance folders.
pub fn session_files() -> Vec<PathBuf> {
    fixture_files(&[])
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect()
}
