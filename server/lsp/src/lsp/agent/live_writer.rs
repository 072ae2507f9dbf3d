//! An agent writing a session behind our back: a running `pi` or `omp` (one we neither started nor
//! attached through the bridge) whose working folder is the session's. Such an agent keeps its
//! leaf in memory and never re-reads the file, so a line we append would fork its tree at its
//! next turn: writes are refused (`agentRunning`) unless the client forces them. Linux only (it
//! reads `/proc`); elsewhere no agent is seen.

use std::path::Path;

/// A running agent process found in the session's folder: its pid and its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Writer {
    /// Its process.
    pub pid: u32,
    /// `pi` or `omp`.
    pub agent: &'static str,
}

/// The first agent process working in `cwd`, other than the processes in `except`.
pub fn find(cwd: &Path, except: &[u32]) -> Option<Writer> {
    find_all(&[cwd.to_path_buf()], except).pop().flatten()
}

/// For each folder of `cwds`, the first agent process working there (one pass over the process
/// table for all of them).
pub fn find_all(cwds: &[std::path::PathBuf], except: &[u32]) -> Vec<Option<Writer>> {
    let mut found: Vec<Option<Writer>> = vec![None; cwds.len()];
    let wanted: Vec<Option<std::path::PathBuf>> =
        cwds.iter().map(|c| std::fs::canonicalize(c).ok()).collect();
    if wanted.iter().all(Option::is_none) {
        return found;
    }
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return found;
    };
    let me = std::process::id();
    for entry in procs.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me || except.contains(&pid) {
            continue;
        }
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let Some(agent) = agent_of(&cmdline) else {
            continue;
        };
        let Ok(dir) = std::fs::read_link(entry.path().join("cwd")) else {
            continue;
        };
        for (slot, want) in found.iter_mut().zip(&wanted) {
            if slot.is_none() && want.as_ref() == Some(&dir) {
                *slot = Some(Writer { pid, agent });
            }
        }
    }
    found
}

/// `pi` or `omp` when a command line runs one of the agents (directly, through Node or Bun, or
/// their packages' entry points).
fn agent_of(cmdline: &[u8]) -> Option<&'static str> {
    let args: Vec<&str> = cmdline
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .filter_map(|a| std::str::from_utf8(a).ok())
        .collect();
    let base = |a: &str| a.rsplit('/').next().unwrap_or(a).to_owned();
    let runs = |i: usize| args.get(i).map(|a| base(a));
    let named = |name: Option<String>| match name.as_deref() {
        Some("pi") => Some("pi"),
        Some("omp") => Some("omp"),
        _ => None,
    };
    if let Some(agent) = named(runs(0)) {
        return Some(agent);
    }
    let launcher = runs(0)?;
    if !matches!(launcher.as_str(), "node" | "bun" | "bun.exe" | "nodejs") {
        return None;
    }
    let script = args.get(1)?;
    if let Some(agent) = named(Some(base(script))) {
        return Some(agent);
    }
    if script.contains("@oh-my-pi/pi-coding-agent") {
        Some("omp")
    } else if script.contains("@mariozechner/pi-coding-agent") {
        Some("pi")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_command_lines() {
        let line = |args: &[&str]| args.join("\0").into_bytes();
        assert_eq!(agent_of(&line(&["/usr/bin/omp"])), Some("omp"));
        assert_eq!(
            agent_of(&line(&[
                "node",
                "/usr/lib/node_modules/.bin/pi",
                "--continue"
            ])),
            Some("pi")
        );
        assert_eq!(
            agent_of(&line(&[
                "/x/bun.exe",
                "/x/node_modules/@oh-my-pi/pi-coding-agent/dist/cli.js"
            ])),
            Some("omp")
        );
        assert_eq!(
            agent_of(&line(&[
                "node",
                "/x/node_modules/@mariozechner/pi-coding-agent/dist/cli.js",
                "--mode",
                "rpc"
            ])),
            Some("pi")
        );
        assert_eq!(agent_of(&line(&["node", "server.js"])), None);
        assert_eq!(agent_of(&line(&["/usr/bin/pip"])), None);
    }
}
