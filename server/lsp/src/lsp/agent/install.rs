//! Installing the bridge into an agent's extensions folder (`~/.pi/agent/extensions/`,
//! `~/.omp/agent/extensions/`), so an agent the user starts in a terminal can be driven from the
//! editor. Only on request; a file of the same name that is not a sessiontree bridge is never
//! replaced.

use super::paths;
use std::path::{Path, PathBuf};

/// Writes the bridge into an agent's extensions folder; `(path, written)`.
pub fn into(dir: &Path) -> Result<(PathBuf, bool), String> {
    let path = dir.join(paths::BRIDGE_FILE_NAME);
    match std::fs::read(&path) {
        Ok(bytes) if bytes == paths::BRIDGE_SOURCE.as_bytes() => return Ok((path, false)),
        Ok(bytes) if !String::from_utf8_lossy(&bytes).contains("sessiontree bridge") => {
            return Err(format!(
                "{} exists and is not a sessiontree bridge; nothing was written",
                path.display()
            ))
        }
        _ => {}
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let temp = dir.join(format!(
        ".{}.{}.tmp",
        paths::BRIDGE_FILE_NAME,
        std::process::id()
    ));
    std::fs::write(&temp, paths::BRIDGE_SOURCE)
        .and_then(|()| std::fs::rename(&temp, &path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok((path, true))
}

/// The agent's extensions folder as the agent finds it (its agent folder: `PI_CODING_AGENT_DIR`
/// or `~/.omp/agent` for omp, `~/.pi/agent` for pi).
pub fn default_dir(kind: super::AgentKind) -> Option<PathBuf> {
    let locations = crate::discovery::Locations::resolve(
        &sessiontree_protocol::InitializationOptions::default(),
    );
    let sessions = match kind {
        super::AgentKind::Omp => locations.omp_sessions,
        super::AgentKind::Pi => locations.pi_sessions,
    };
    Some(sessions?.parent()?.join("extensions"))
}
