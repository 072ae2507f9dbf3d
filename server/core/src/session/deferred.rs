//! A session whose file is not written yet (pi defers a new or forked session's file until its
//! first assistant message) handed to the agent, and the file the agent then writes taken over:
//! the agent writes the session's header and entries exactly as held here, then its own lines, so
//! the session follows that file from the end of what it already holds.

use super::persist::FileIdentity;
use super::{FileState, Session};
use crate::error::{Error, Result};
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// Whether the file the agent writes holds what the session holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AgentsFile {
    /// No file yet, or the agent is still writing what the session holds.
    NotYet,
    /// The file starts with exactly the session's contents: the session now follows it.
    Taken,
}

impl Session {
    /// The header and entries of a session whose file is not written yet, as the agent writes
    /// them (one JSON text per line, the header first); `None` once there is a file (or none is
    /// ever written).
    pub fn unwritten_contents(&self) -> Result<Option<String>> {
        if !matches!(self.file, FileState::Deferred(_)) || self.store.is_some() {
            return Ok(None);
        }
        self.full_contents().map(Some)
    }

    /// For a deferred session: takes over the file the agent wrote at `path` when it starts with
    /// exactly the session's contents. A file with anything else is reported as replaced (the
    /// caller reopens it: the file is the truth, and nothing of ours was in it).
    pub(crate) fn take_agents_file(&mut self, path: &Path) -> Result<AgentsFile> {
        let mut file = match File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(AgentsFile::NotYet),
            Err(e) => return Err(Error::io("cannot read", path, e)),
        };
        let expected = self.full_contents()?;
        let mut found = Vec::with_capacity(expected.len());
        (&mut file)
            .take(expected.len() as u64)
            .read_to_end(&mut found)
            .map_err(|e| Error::io("cannot read", path, e))?;
        if found.len() < expected.len() && expected.as_bytes().starts_with(&found) {
            return Ok(AgentsFile::NotYet);
        }
        if found != expected.as_bytes() {
            return Err(Error::FileReplaced {
                path: path.to_path_buf(),
            });
        }
        self.now_written(path, expected.len() as u64, FileIdentity::of(&file));
        Ok(AgentsFile::Taken)
    }
}
