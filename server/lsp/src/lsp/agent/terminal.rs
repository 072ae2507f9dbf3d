//! Agents the user runs in a terminal with the bridge installed: each writes a discovery file
//! (socket, token, process, session file) into the private runtime folder, named after its
//! session file. This finds the one for a session, if its process still runs.

use super::paths;
use super::AgentKind;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A terminal agent's discovery file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Which agent.
    pub kind: AgentKind,
    /// Its process.
    pub pid: u32,
    /// Its bridge's socket.
    pub socket: PathBuf,
    /// The bridge's token.
    pub token: String,
}

/// The terminal agent on `session_file`, when one announced itself and its process is alive.
pub fn find(session_file: &Path) -> Option<Found> {
    let dir = paths::runtime_dir().ok()?;
    let resolved = std::fs::canonicalize(session_file).unwrap_or_else(|_| session_file.into());
    let file = paths::discovery_file(&dir, &resolved);
    let text = std::fs::read_to_string(file).ok()?;
    let value: Value = serde_json::from_str(&text).ok()?;
    let named = value.get("sessionFile").and_then(Value::as_str)?;
    if Path::new(named) != resolved {
        return None;
    }
    let pid = u32::try_from(value.get("pid")?.as_u64()?).ok()?;
    if !alive(pid) {
        return None;
    }
    let kind = match value.get("agent").and_then(Value::as_str)? {
        "pi" => AgentKind::Pi,
        "omp" => AgentKind::Omp,
        _ => return None,
    };
    Some(Found {
        kind,
        pid,
        socket: PathBuf::from(value.get("socket")?.as_str()?),
        token: value.get("token")?.as_str()?.to_owned(),
    })
}

/// Whether a process runs (Linux: its `/proc` entry; elsewhere assumed, the socket then tells).
pub fn alive(pid: u32) -> bool {
    if Path::new("/proc/self").exists() {
        Path::new("/proc").join(pid.to_string()).exists()
    } else {
        true
    }
}
