//! Another process writing to a session file as an agent does: lines appended whole in one
//! unlocked `write`, or in two pieces under the advisory `flock` (as a piecewise writer must),
//! and a process that holds the lock until told to let go. The process is Python's (a
//! prerequisite of these tests: [`crate::require`]), so it is really another process.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// Appends `n` `custom` entries with ids `w0000000`…: every other one in two pieces under
/// `flock`, the rest in one write; random pauses between lines.
const WRITER: &str = r#"
import fcntl, os, random, sys, time
path, n, seed, pad, piece_pause, line_pause = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
fd = os.open(path, os.O_WRONLY | os.O_APPEND)
rng = random.Random(seed)
for i in range(n):
    padding = ',"pad":"%s"' % ("p" * rng.randrange(0, pad)) if pad > 0 else ""
    line = ('{"type":"custom","customType":"agent","data":{"n":%d%s},'
            '"id":"w%07d","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"}\n'
            % (i, padding, i)).encode()
    if i % 2 == 0:
        cut = rng.randrange(1, len(line))
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, line[:cut])
        time.sleep(piece_pause)
        os.write(fd, line[cut:])
        fcntl.flock(fd, fcntl.LOCK_UN)
    else:
        os.write(fd, line)
    time.sleep(rng.random() * line_pause)
os.close(fd)
"#;

/// How the second writer writes.
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    /// Lines to append.
    pub lines: usize,
    /// Seed of its random choices.
    pub seed: u64,
    /// Padding of up to this many bytes in each line (0: none).
    pub pad: usize,
    /// Seconds between the two pieces of a line.
    pub piece_pause: f64,
    /// Up to this many seconds between lines.
    pub line_pause: f64,
}

/// Starts the second writer on `path`.
pub fn spawn_writer(path: &Path, pace: Pace) -> Child {
    crate::require("python3", &["-c", "0"], "the second writer process");
    Command::new("python3")
        .arg("-c")
        .arg(WRITER)
        .arg(path)
        .args([
            pace.lines.to_string(),
            pace.seed.to_string(),
            pace.pad.to_string(),
            pace.piece_pause.to_string(),
            pace.line_pause.to_string(),
        ])
        .stdout(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("start the second writer: {e}"))
}

/// A process holding the file's `flock` until dropped.
pub struct LockHolder(Child);

impl LockHolder {
    /// Starts a process that takes the lock on `path`; returns once it holds it.
    pub fn take(path: &Path) -> LockHolder {
        crate::require("python3", &["-c", "0"], "the process holding the lock");
        let mut child = Command::new("python3")
            .arg("-c")
            .arg("import fcntl,os,sys\nfd=os.open(sys.argv[1],os.O_WRONLY|os.O_APPEND)\nfcntl.flock(fd,fcntl.LOCK_EX)\nprint('locked',flush=True)\nsys.stdin.read()")
            .arg(path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start the lock holder: {e}"));
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("the lock holder's answer");
        assert_eq!(line.trim(), "locked");
        LockHolder(child)
    }
}

impl Drop for LockHolder {
    fn drop(&mut self) {
        drop(self.0.stdin.take());
        let _ = self.0.wait();
    }
}
