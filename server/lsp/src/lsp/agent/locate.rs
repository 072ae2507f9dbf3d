//! Which executable runs a session's agent: the path the user set (`agent.piPath` /
//! `agent.ompPath` in the initialization options, or `SESSIONTREE_PI_PATH` /
//! `SESSIONTREE_OMP_PATH`), else `pi` / `omp` on `PATH`. Only user-level settings name it: a
//! repository's workspace settings never choose what the server runs.

use super::process::is_executable;
use super::AgentKind;
use std::path::{Path, PathBuf};

/// The agent's executable, or why there is none (a sentence naming the setting).
pub fn executable(kind: AgentKind, configured: Option<&str>) -> Result<PathBuf, String> {
    let (name, setting, variable) = match kind {
        AgentKind::Pi => ("pi", "agent.piPath", "SESSIONTREE_PI_PATH"),
        AgentKind::Omp => ("omp", "agent.ompPath", "SESSIONTREE_OMP_PATH"),
    };
    let from_env = std::env::var(variable).ok().filter(|v| !v.is_empty());
    let wanted = configured
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
        .or(from_env);
    match wanted {
        Some(path) => {
            let found = if path.contains('/') {
                Some(PathBuf::from(&path)).filter(|p| is_executable(p))
            } else {
                on_path(&path)
            };
            found.ok_or_else(|| {
                format!(
                    "the {name} executable `{path}` (from {setting} or {variable}) does not exist or cannot be run"
                )
            })
        }
        None => on_path(name).ok_or_else(|| {
            format!(
                "{name} is not installed (no `{name}` on PATH); install it (npm i -g {}) or set {setting} to its executable",
                match kind {
                    AgentKind::Pi => "@mariozechner/pi-coding-agent",
                    AgentKind::Omp => "@oh-my-pi/pi-coding-agent",
                }
            )
        }),
    }
}

fn on_path(name: &str) -> Option<PathBuf> {
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(Path::new(candidate)))
}
