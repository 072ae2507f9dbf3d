//! Running the `git` command for one work tree. Every command runs at the work tree's top level
//! with the caller's git environment removed (a `GIT_DIR` or `GIT_INDEX_FILE` inherited from a hook
//! must never redirect us to the user's index), and with the settings that make a snapshot hold the
//! files' exact bytes: no end-of-line conversion and no attribute filters (`GIT_ATTR_SOURCE` is the
//! empty tree, so `.gitattributes` in the work tree are not read).
//!
//! The git command was measured against libgit2 (docs/performance.md, "Rewind snapshots"): git's
//! own `add -A` with a kept private index (stat cache, parallel preload) is the faster of the two.

use crate::error::{Error, Result};
use crate::monitor::Query;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// Variables that would point git somewhere else than the work tree we name.
const FOREIGN_ENV: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_ATTR_SOURCE",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
];

/// Settings for every command: exact bytes in and out, no prompts, no pager.
const CONFIG: &[&str] = &[
    "-c",
    "core.autocrlf=false",
    "-c",
    "core.safecrlf=false",
    "-c",
    "core.attributesFile=/dev/null",
    "-c",
    "core.quotePath=off",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "advice.addEmbeddedRepo=false",
    "-c",
    "gc.auto=0",
];

/// The git command bound to one work tree.
#[derive(Debug, Clone)]
pub struct Git {
    toplevel: PathBuf,
    /// The private index, when commands should use it instead of none.
    index: Option<PathBuf>,
    /// The empty tree of the repository's object format (for `GIT_ATTR_SOURCE`).
    empty_tree: Option<String>,
    /// The work tree's watcher, asked through git's fsmonitor hook (see [`crate::monitor`]).
    fsmonitor: Option<Query>,
}

impl Git {
    /// Commands run in `dir` (before the top level is known).
    pub fn at(dir: &Path) -> Git {
        Git {
            toplevel: dir.to_path_buf(),
            index: None,
            empty_tree: None,
            fsmonitor: None,
        }
    }

    /// The same work tree, with commands reading and writing `index` as their index.
    pub fn with_index(&self, index: &Path) -> Git {
        Git {
            index: Some(index.to_path_buf()),
            ..self.clone()
        }
    }

    /// Reads attributes from `tree` (the empty tree) instead of the work tree.
    pub fn with_attr_source(mut self, empty_tree: &str) -> Git {
        self.empty_tree = Some(empty_tree.to_owned());
        self
    }

    /// Lets git ask the work tree's watcher which files changed instead of looking at every one.
    pub fn with_fsmonitor(mut self, query: Option<Query>) -> Git {
        self.fsmonitor = query;
        self
    }

    /// The directory commands run in.
    pub fn dir(&self) -> &Path {
        &self.toplevel
    }

    fn command<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = Command::new("git");
        for var in FOREIGN_ENV {
            cmd.env_remove(var);
        }
        cmd.env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("GIT_PAGER", "cat")
            .env("GIT_AUTHOR_NAME", "sessiontree")
            .env("GIT_AUTHOR_EMAIL", "sessiontree@localhost")
            .env("GIT_COMMITTER_NAME", "sessiontree")
            .env("GIT_COMMITTER_EMAIL", "sessiontree@localhost");
        if let Some(index) = &self.index {
            cmd.env("GIT_INDEX_FILE", index);
        }
        if let Some(tree) = &self.empty_tree {
            cmd.env("GIT_ATTR_SOURCE", tree);
        }
        cmd.arg("-C").arg(&self.toplevel).args(CONFIG);
        if let Some(query) = &self.fsmonitor {
            // Later settings win over CONFIG's `core.fsmonitor=false`. The hook's path goes
            // through the environment, so a work tree path with spaces stays one word.
            cmd.env("SESSIONTREE_FSMONITOR_HOOK", &query.hook)
                .env("SESSIONTREE_FSMONITOR_TOKEN", &query.token)
                .env("SESSIONTREE_FSMONITOR_JOURNAL", &query.journal)
                .args([
                    "-c",
                    "core.fsmonitor=sh \"$SESSIONTREE_FSMONITOR_HOOK\"",
                    "-c",
                    "core.fsmonitorHookVersion=2",
                ]);
        }
        cmd.args(args);
        cmd
    }

    /// Runs a command and returns its standard output; a non-zero exit is an error.
    pub fn run<I, S>(&self, args: I) -> Result<Vec<u8>>
    where
        I: IntoIterator<Item = S> + Clone,
        S: AsRef<OsStr>,
    {
        self.run_with_input(args, None)
    }

    /// Runs a command with `input` on its standard input.
    pub fn run_with_input<I, S>(&self, args: I, input: Option<&[u8]>) -> Result<Vec<u8>>
    where
        I: IntoIterator<Item = S> + Clone,
        S: AsRef<OsStr>,
    {
        let mut cmd = self.command(args.clone());
        cmd.stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(Error::GitMissing)?;
        // The input is written on a thread so that a large output cannot block it.
        let writer = match (input, child.stdin.take()) {
            (Some(bytes), Some(mut stdin)) => {
                let bytes = bytes.to_vec();
                Some(std::thread::spawn(move || stdin.write_all(&bytes)))
            }
            _ => None,
        };
        let output = child.wait_with_output().map_err(Error::GitMissing)?;
        if let Some(writer) = writer {
            // A command that exits before reading everything is reported by its status below.
            let _ = writer.join();
        }
        if !output.status.success() {
            return Err(Error::Git {
                command: describe(args),
                status: output.status.to_string(),
                stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
            });
        }
        Ok(output.stdout)
    }

    /// Runs a command and returns its output as one trimmed line of text.
    pub fn line<I, S>(&self, args: I) -> Result<String>
    where
        I: IntoIterator<Item = S> + Clone,
        S: AsRef<OsStr>,
    {
        let out = self.run(args)?;
        Ok(String::from_utf8_lossy(&out).trim().to_owned())
    }

    /// Starts `git cat-file --batch` for reading many objects through one process.
    pub fn objects(&self) -> Result<ObjectReader> {
        let mut child = self
            .command(["cat-file", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(Error::GitMissing)?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().map(BufReader::new);
        match (stdin, stdout) {
            (Some(stdin), Some(stdout)) => Ok(ObjectReader {
                child,
                stdin,
                stdout,
            }),
            _ => Err(Error::GitMissing(std::io::Error::other(
                "git cat-file has no pipes",
            ))),
        }
    }
}

fn describe<I, S>(args: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    args.into_iter()
        .map(|a| a.as_ref().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// One `git cat-file --batch` process: asks for one object at a time.
pub struct ObjectReader {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl ObjectReader {
    /// The content of the object named `name` (an id, a ref or `tree:path`), or `None` when it is
    /// missing.
    pub fn read(&mut self, name: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.read_with_id(name)?.map(|(_, content)| content))
    }

    /// The id and content of the object named `name`, or `None` when it is missing.
    pub fn read_with_id(&mut self, name: &str) -> Result<Option<(String, Vec<u8>)>> {
        let fail = |e: std::io::Error| Error::Git {
            command: "cat-file --batch".to_owned(),
            status: "pipe".to_owned(),
            stderr: e.to_string(),
        };
        writeln!(self.stdin, "{name}").map_err(fail)?;
        self.stdin.flush().map_err(fail)?;
        let mut header = String::new();
        self.stdout.read_line(&mut header).map_err(fail)?;
        let header = header.trim_end();
        if header.ends_with(" missing") || header.ends_with(" ambiguous") || header.is_empty() {
            return Ok(None);
        }
        let size: usize = header
            .rsplit(' ')
            .next()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| fail(std::io::Error::other(format!("bad header {header:?}"))))?;
        let mut content = vec![0u8; size + 1];
        self.stdout.read_exact(&mut content).map_err(fail)?;
        content.truncate(size);
        let id = header.split(' ').next().unwrap_or_default().to_owned();
        Ok(Some((id, content)))
    }
}

impl Drop for ObjectReader {
    fn drop(&mut self) {
        // Closing stdin ends the process; wait so no zombie is left.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
