//! Real git repositories and session files for the rewind tests.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs git in `dir` and returns its trimmed output; panics on failure.
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
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

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

/// Every file under `root` except `.git`: path → (bytes, permission bits; links as "-> target").
pub fn files(root: &Path) -> BTreeMap<String, (Vec<u8>, u32)> {
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, (Vec<u8>, u32)>) {
    for entry in std::fs::read_dir(dir).expect("read_dir") {
        let entry = entry.expect("entry");
        let path = entry.path();
        let rel = path
            .strip_prefix(root)
            .expect("inside")
            .to_string_lossy()
            .into_owned();
        if rel == ".git" {
            continue;
        }
        let meta = std::fs::symlink_metadata(&path).expect("meta");
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&path).expect("link");
            out.insert(
                rel,
                (format!("-> {}", target.display()).into_bytes(), 0o120000),
            );
        } else if meta.is_dir() {
            walk(root, &path, out);
        } else {
            out.insert(
                rel,
                (
                    std::fs::read(&path).expect("read"),
                    meta.permissions().mode() & 0o777,
                ),
            );
        }
    }
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
