//! Finding a workspace's sessions: each agent's session folder for each workspace folder (omp:
//! `<agent dir>/sessions/<encoded cwd>`, agent dir = `$PI_CODING_AGENT_DIR` or `~/.omp/agent`; pi:
//! `~/.pi/agent/sessions/--<cwd>--`), plus extra roots. What the list says of each file is the
//! engine's (`sessiontree_core::listing`); here the folders are found and its answer converted.

use crate::to_proto;
use sessiontree_core::listing;
use sessiontree_protocol::{Dialect, InitializationOptions, SessionInfo};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Where the agents keep their sessions, resolved once from options and environment.
#[derive(Debug, Clone, Default)]
pub struct Locations {
    /// The home folder.
    pub home: Option<PathBuf>,
    /// The temp folder (omp names folders under it `-tmp-…`).
    pub tmp: PathBuf,
    /// omp's `sessions` folder.
    pub omp_sessions: Option<PathBuf>,
    /// pi's `sessions` folder.
    pub pi_sessions: Option<PathBuf>,
    /// Extra folders to list.
    pub extra_roots: Vec<PathBuf>,
    /// "Live writer" window.
    pub live_writer: Duration,
}

impl Locations {
    /// From `initializationOptions` and the environment.
    pub fn resolve(options: &InitializationOptions) -> Self {
        let home = options
            .home
            .as_ref()
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(PathBuf::from));
        let omp_agent = options
            .omp_agent_dir
            .as_ref()
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("PI_CODING_AGENT_DIR")
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from)
            })
            .or_else(|| home.as_ref().map(|h| h.join(".omp").join("agent")));
        let pi_agent = options
            .pi_agent_dir
            .as_ref()
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".pi").join("agent")));
        Locations {
            home,
            tmp: std::env::temp_dir(),
            omp_sessions: omp_agent.map(|a| a.join("sessions")),
            pi_sessions: pi_agent.map(|a| a.join("sessions")),
            extra_roots: options.extra_roots.iter().map(PathBuf::from).collect(),
            live_writer: Duration::from_secs(options.live_writer_seconds.unwrap_or(10)),
        }
    }

    /// Every folder to list for a workspace folder, with the agent it belongs to.
    pub fn folders_for(&self, cwd: &Path) -> Vec<(PathBuf, Option<Dialect>)> {
        let mut out = Vec::new();
        if let Some(root) = &self.omp_sessions {
            out.push((
                root.join(omp_dir_name(cwd, self.home.as_deref(), &self.tmp)),
                Some(Dialect::Omp),
            ));
        }
        if let Some(root) = &self.pi_sessions {
            out.push((root.join(pi_dir_name(cwd)), Some(Dialect::Pi)));
        }
        out
    }
}

fn dashes(s: &str) -> String {
    s.replace(['/', '\\', ':'], "-")
}

/// pi: `--<cwd without its leading slash, "/", "\" and ":" as "-">--`.
pub fn pi_dir_name(cwd: &Path) -> String {
    let s = cwd.to_string_lossy();
    let trimmed = s.strip_prefix('/').unwrap_or(&s);
    format!("--{}--", dashes(trimmed))
}

/// omp: `-<home-relative path>` under the home folder (`-` for home itself), `-tmp-<relative>`
/// under the temp folder, else pi's `--<path>--`.
pub fn omp_dir_name(cwd: &Path, home: Option<&Path>, tmp: &Path) -> String {
    if let Some(home) = home {
        if cwd == home {
            return "-".to_owned();
        }
        if let Ok(rel) = cwd.strip_prefix(home) {
            return format!("-{}", dashes(&rel.to_string_lossy()));
        }
    }
    if let Ok(rel) = cwd.strip_prefix(tmp) {
        if !rel.as_os_str().is_empty() {
            return format!("-tmp-{}", dashes(&rel.to_string_lossy()));
        }
    }
    pi_dir_name(cwd)
}

/// The `*.jsonl` files in the session folders of the workspace folders and in the extra roots,
/// with the agent whose folder each was found in (unread: callers decide what to read).
pub fn files(locations: &Locations, folders: &[PathBuf]) -> Vec<(PathBuf, Option<Dialect>)> {
    let mut dirs: Vec<(PathBuf, Option<Dialect>)> = Vec::new();
    for folder in folders {
        dirs.extend(locations.folders_for(folder));
    }
    for root in &locations.extra_roots {
        dirs.push((root.clone(), None));
        if let Ok(read) = std::fs::read_dir(root) {
            for sub in read.flatten() {
                if sub.file_type().is_ok_and(|t| t.is_dir()) {
                    dirs.push((sub.path(), None));
                }
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for (dir, agent) in dirs {
        let Ok(read) = std::fs::read_dir(&dir) else {
            continue;
        };
        for file in read.flatten() {
            let path = file.path();
            if path.extension().and_then(|e| e.to_str()) == Some("jsonl")
                && seen.insert(path.clone())
            {
                out.push((path, agent));
            }
        }
    }
    out
}

/// Lists the sessions for the given workspace folders, newest first.
pub fn list(locations: &Locations, folders: &[PathBuf]) -> Vec<SessionInfo> {
    let mut out: Vec<SessionInfo> = files(locations, folders)
        .into_iter()
        .filter_map(|(path, agent)| summarize(&path, agent, locations.live_writer))
        .collect();
    sort_newest_first(&mut out);
    out
}

/// Newest first; equal times by path.
pub fn sort_newest_first(sessions: &mut [SessionInfo]) {
    sessions.sort_by(|a, b| {
        b.modified_ms
            .cmp(&a.modified_ms)
            .then_with(|| a.path.cmp(&b.path))
    });
}

/// A session file as the list shows it (the engine's [`listing::read`]); `None` when it is not a
/// session file.
pub fn summarize(
    path: &Path,
    agent: Option<Dialect>,
    live_writer: Duration,
) -> Option<SessionInfo> {
    let listing = listing::read(path)?;
    let modified = UNIX_EPOCH + Duration::from_millis(listing.modified_ms);
    let live = SystemTime::now()
        .duration_since(modified)
        .map(|age| age <= live_writer)
        .unwrap_or(true);
    Some(to_proto::session_info(
        to_proto::uri_of(path),
        path,
        agent,
        &listing,
        live,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_names_follow_each_agent() {
        let home = Path::new("/home/me");
        let tmp = Path::new("/tmp");
        assert_eq!(
            pi_dir_name(Path::new("/home/me/project")),
            "--home-me-project--"
        );
        assert_eq!(
            omp_dir_name(Path::new("/home/me/project"), Some(home), tmp),
            "-project"
        );
        assert_eq!(
            omp_dir_name(Path::new("/home/me/a/b"), Some(home), tmp),
            "-a-b"
        );
        assert_eq!(omp_dir_name(home, Some(home), tmp), "-");
        assert_eq!(
            omp_dir_name(Path::new("/tmp/x/y"), Some(home), tmp),
            "-tmp-x-y"
        );
        assert_eq!(
            omp_dir_name(Path::new("/srv/p"), Some(home), tmp),
            "--srv-p--"
        );
    }

    #[test]
    fn a_fork_names_its_source_session() {
        let dir = tempfile::tempdir().expect("tmp");
        let fork = dir.path().join("fork.jsonl");
        let header = r#"{"type":"session","version":3,"id":"f1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p","parentSession":"/s/source.jsonl"}"#;
        let user = r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#;
        std::fs::write(&fork, format!("{header}\n{user}\n")).expect("write");
        let info = summarize(&fork, None, Duration::from_secs(1)).expect("a session");
        assert_eq!(info.parent_session.as_deref(), Some("/s/source.jsonl"));
        assert_eq!(info.entry_count, 1);
        let plain = dir.path().join("plain.jsonl");
        std::fs::write(
            &plain,
            format!(
                "{}\n",
                header.replace(r#","parentSession":"/s/source.jsonl""#, "")
            ),
        )
        .expect("write");
        let info = summarize(&plain, None, Duration::from_secs(1)).expect("a session");
        assert_eq!(info.parent_session, None);
    }

    /// A name with a tab and a bell (pi takes whatever the user typed) is drawn as rows are.
    #[test]
    fn names_are_drawn_as_rows_are() {
        let dir = tempfile::tempdir().expect("tmp");
        let file = dir.path().join("named.jsonl");
        let header = r#"{"type":"session","version":3,"id":"n1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;
        let user = r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"a\u001bb","timestamp":1}}"#;
        let name = r#"{"type":"session_info","id":"a2","parentId":"a1","timestamp":"2025-01-01T00:00:02.000Z","name":"Quoted\tcommas\u0007 in pi"}"#;
        std::fs::write(&file, format!("{header}\n{user}\n{name}\n")).expect("write");
        let info = summarize(&file, None, Duration::from_secs(1)).expect("a session");
        assert_eq!(
            info.name.as_deref(),
            Some("Quoted\u{2409}commas\u{2407} in pi")
        );
        assert_eq!(info.first_user_message.as_deref(), Some("a\u{241b}b"));
    }
}
