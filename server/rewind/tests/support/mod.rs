//! Real git repositories and session files for the rewind tests.
#![allow(dead_code, unused_imports)]

pub use sessiontree_testkit::git;
pub use sessiontree_testkit::work_tree::files;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// A repository with a commit, an ignored file, a staged change and an executable.
pub struct Repo {
    pub dir: tempfile::TempDir,
}

impl Repo {
    pub fn new() -> Repo {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        git(root, &["init", "-q", "-b", "main"]);
        write(root, ".gitignore", b"build/\n*.log\n");
        write(root, "src/lib.rs", b"pub fn one() -> u32 { 1 }\n");
        write(root, "README.md", b"# demo\n");
        write(root, "run.sh", b"#!/bin/sh\necho run\n");
        chmod(root, "run.sh", 0o755);
        git(root, &["add", "-A"]);
        git(root, &["commit", "-qm", "init"]);
        write(root, "build/out.bin", b"ignored bytes");
        write(root, "debug.log", b"ignored log\n");
        // A staged change and an untracked file: the user's index differs from HEAD.
        write(root, "README.md", b"# demo\n\nstaged\n");
        git(root, &["add", "README.md"]);
        write(root, "notes.txt", b"untracked notes\n");
        Repo { dir }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// The git state a rewind must never change: the index file, HEAD, refs other than ours,
    /// the stash.
    pub fn git_state(&self) -> GitState {
        let root = self.root();
        let refs = git(root, &["for-each-ref", "--format=%(refname) %(objectname)"])
            .lines()
            .filter(|l| !l.starts_with("refs/sessiontree/"))
            .map(str::to_owned)
            .collect();
        GitState {
            index: std::fs::read(root.join(".git/index")).expect("index"),
            head: std::fs::read_to_string(root.join(".git/HEAD")).expect("HEAD"),
            refs,
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
pub struct GitState {
    pub index: Vec<u8>,
    pub head: String,
    pub refs: Vec<String>,
}

pub fn write(root: &Path, rel: &str, bytes: &[u8]) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, bytes).expect("write");
}

pub fn chmod(root: &Path, rel: &str, mode: u32) {
    std::fs::set_permissions(root.join(rel), std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// Writes a pi session file whose `cwd` is `cwd`: a header and the given entries
/// (`(id, parent, role, text)`; assistant entries end their turn).
pub fn session_file(
    path: &Path,
    session_id: &str,
    cwd: &Path,
    entries: &[(&str, Option<&str>, &str, &str)],
) -> PathBuf {
    let mut text = format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"{session_id}\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":{}}}\n",
        serde_json::to_string(&cwd.to_string_lossy()).expect("json")
    );
    for (n, (id, parent, role, body)) in entries.iter().enumerate() {
        text.push_str(&entry_line(id, *parent, role, body, n));
    }
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write session");
    path.to_path_buf()
}

/// One message line.
pub fn entry_line(id: &str, parent: Option<&str>, role: &str, body: &str, n: usize) -> String {
    let parent = match parent {
        Some(p) => format!("\"{p}\""),
        None => "null".to_owned(),
    };
    let ts = format!("2025-01-01T00:00:{:02}.000Z", n + 1);
    let message = if role == "assistant" {
        format!("{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":{}}}],\"api\":\"openai-completions\",\"provider\":\"test\",\"model\":\"m\",\"stopReason\":\"stop\",\"timestamp\":1735689601000}}", serde_json::to_string(body).expect("json"))
    } else {
        format!(
            "{{\"role\":\"user\",\"content\":{},\"timestamp\":1735689601000}}",
            serde_json::to_string(body).expect("json")
        )
    };
    format!("{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"{ts}\",\"message\":{message}}}\n")
}

pub fn open(path: &Path) -> sessiontree_core::Session {
    sessiontree_core::Session::open(path, Default::default()).expect("open session")
}
