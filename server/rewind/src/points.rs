//! Which entries of a session have a rewind point, and which point an entry uses: its own, or the
//! nearest one above it on its path (the answer names the entry whose point was used).
//!
//! Points come from our ledger (rows of this session, of the sessions it was branched from, or of
//! any session with the same entry id and timestamp — a branched session's copied entries) and,
//! read only, from pi-rewind-hook's ledger (its `rewind-turn` / `rewind-op` custom entries in the
//! session and the sessions it was branched from, whose snapshot commits `refs/pi-rewind/store`
//! keeps).

use crate::error::{Error, Result};
use crate::ledger::{Moment, Record};
use crate::workspace::Workspace;
use serde_json::Value;
use sessiontree_core::Session;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Who recorded a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// sessiontree (the bridge in the agent, or the server following the file).
    Sessiontree,
    /// The pi-rewind-hook extension (read only).
    PiRewindHook,
}

impl Source {
    /// The word used on the wire and in the CLI.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Sessiontree => "sessiontree",
            Source::PiRewindHook => "piRewindHook",
        }
    }
}

/// A rewind point of one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Point {
    /// The entry it belongs to.
    pub entry_id: String,
    /// Before the agent acted (user message) or after the turn.
    pub moment: Moment,
    /// The snapshot's tree id.
    pub tree: String,
    /// Taken exactly at the boundary.
    pub exact: bool,
    /// When it was taken, when known.
    pub taken_at: Option<String>,
    /// Who recorded it.
    pub source: Source,
    /// Who took it (`bridge`, `server`, `cli`; pi-rewind-hook's are `piRewindHook`).
    pub by: String,
    /// The snapshot is gone (pruned by retention, or its objects are missing).
    pub pruned: bool,
}

/// The point an entry uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The entry asked for.
    pub asked: String,
    /// The point (its `entry_id` is the entry whose point was used).
    pub point: Point,
}

impl Resolved {
    /// Whether the point is the entry's own (not one above it).
    pub fn is_own(&self) -> bool {
        self.asked == self.point.entry_id
    }
}

/// The points of one session, by entry id.
#[derive(Debug, Clone, Default)]
pub struct Points {
    by_entry: HashMap<String, Point>,
}

impl Points {
    /// Reads the points of `session` from the ledger records and the session's own entries.
    pub fn of(session: &Session, workspace: &Workspace, records: &[Record]) -> Result<Points> {
        let lineage = lineage(session);
        let times: HashMap<&str, Option<&str>> = session
            .entries()
            .iter()
            .filter_map(|e| Some((e.id()?, e.timestamp.as_deref())))
            .collect();
        let mut last_event: HashMap<&str, bool> = HashMap::new();
        let mut by_entry: HashMap<String, Point> = HashMap::new();
        for record in records {
            match record {
                Record::Point(p) => {
                    last_event.insert(&p.tree, true);
                    let Some(&time) = times.get(p.entry.as_str()) else {
                        continue;
                    };
                    let same_entry = p.entry_time.is_some() && p.entry_time.as_deref() == time;
                    if !lineage.contains(&p.session) && !same_entry {
                        continue;
                    }
                    // A point taken at the agent's own boundary (the bridge) is never replaced by
                    // an approximate one the server took for the same entry at about the same time.
                    if !p.exact && by_entry.get(&p.entry).is_some_and(|old| old.exact) {
                        continue;
                    }
                    by_entry.insert(
                        p.entry.clone(),
                        Point {
                            entry_id: p.entry.clone(),
                            moment: p.moment,
                            tree: p.tree.clone(),
                            exact: p.exact,
                            taken_at: Some(p.taken_at.clone()),
                            source: Source::Sessiontree,
                            by: p.by.clone(),
                            pruned: false,
                        },
                    );
                }
                Record::Undo { tree, .. } => {
                    last_event.insert(tree, true);
                }
                Record::Pruned { tree, .. } => {
                    last_event.insert(tree, false);
                }
            }
        }
        for point in by_entry.values_mut() {
            point.pruned = last_event.get(point.tree.as_str()) == Some(&false);
        }
        for point in pi_rewind_hook_points(session, workspace)? {
            by_entry.entry(point.entry_id.clone()).or_insert(point);
        }
        Ok(Points { by_entry })
    }

    /// The point of exactly this entry.
    pub fn get(&self, entry_id: &str) -> Option<&Point> {
        self.by_entry.get(entry_id)
    }

    /// How many entries have a point.
    pub fn len(&self) -> usize {
        self.by_entry.len()
    }

    /// Whether no entry has a point.
    pub fn is_empty(&self) -> bool {
        self.by_entry.is_empty()
    }

    /// Every point, in the session's entry order.
    pub fn in_order<'a>(&'a self, session: &'a Session) -> Vec<&'a Point> {
        session
            .entries()
            .iter()
            .filter_map(|e| self.by_entry.get(e.id()?))
            .collect()
    }

    /// The point `entry_id` uses: its own, or the nearest one above it on its path.
    pub fn resolve(&self, session: &Session, entry_id: &str) -> Result<Resolved> {
        if !session.contains(entry_id) {
            return Err(Error::UnknownEntry {
                entry: entry_id.to_owned(),
            });
        }
        for index in session.branch_path(Some(entry_id)).into_iter().rev() {
            let Some(id) = session.entry_at(index).and_then(|e| e.id()) else {
                continue;
            };
            if let Some(point) = self.by_entry.get(id) {
                return Ok(Resolved {
                    asked: entry_id.to_owned(),
                    point: point.clone(),
                });
            }
        }
        Err(Error::NoPoint {
            entry: entry_id.to_owned(),
        })
    }
}

/// The session's id and the ids of the sessions it was branched from (its header's
/// `parentSession`: a file path, or for omp's `fork()` a session id), nearest first.
pub fn lineage(session: &Session) -> HashSet<String> {
    let mut out = HashSet::new();
    out.insert(session.session_id().to_owned());
    let mut parent = session
        .header()
        .get("parentSession")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut depth = 0;
    while let Some(reference) = parent.take() {
        depth += 1;
        if depth > 64 {
            break;
        }
        let path = Path::new(&reference);
        if path.is_file() {
            if let Some(header) = read_header(path) {
                if let Some(id) = header.get("id").and_then(Value::as_str) {
                    if !out.insert(id.to_owned()) {
                        break;
                    }
                }
                parent = header
                    .get("parentSession")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
            }
        } else {
            out.insert(reference);
        }
    }
    out
}

/// The header of a session file (the first line, or the second after an omp title slot).
fn read_header(path: &Path) -> Option<serde_json::Map<String, Value>> {
    use std::io::{BufRead, BufReader};
    let file = std::fs::File::open(path).ok()?;
    for line in BufReader::new(file).lines().take(2) {
        let line = line.ok()?;
        if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(&line) {
            if map.get("type").and_then(Value::as_str) == Some("session") {
                return Some(map);
            }
        }
    }
    None
}

/// The session files a session was branched from (those still on disk), nearest first.
fn parent_files(session: &Session) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut parent = session
        .header()
        .get("parentSession")
        .and_then(Value::as_str)
        .map(PathBuf::from);
    while let Some(path) = parent.take() {
        if out.len() >= 64 || out.contains(&path) || !path.is_file() {
            break;
        }
        parent = read_header(&path).and_then(|h| {
            h.get("parentSession")
                .and_then(Value::as_str)
                .map(PathBuf::from)
        });
        out.push(path);
    }
    out
}

/// pi-rewind-hook's points: its `rewind-turn` and `rewind-op` entries bind entry ids to snapshot
/// commits (`{"v":2,"snapshots":[commit…],"bindings":[[entryId, index]…]}`).
fn pi_rewind_hook_points(session: &Session, workspace: &Workspace) -> Result<Vec<Point>> {
    let mut bindings: Vec<(String, String, Option<String>)> = Vec::new();
    let mut collect = |entries: &mut dyn Iterator<Item = Value>| {
        for value in entries {
            let custom_type = value.get("customType").and_then(Value::as_str);
            if !matches!(custom_type, Some("rewind-turn" | "rewind-op")) {
                continue;
            }
            let Some(data) = value.get("data") else {
                continue;
            };
            let snapshots: Vec<&str> = data
                .get("snapshots")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let time = value
                .get("timestamp")
                .and_then(Value::as_str)
                .map(str::to_owned);
            for binding in data
                .get("bindings")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let entry = binding.get(0).and_then(Value::as_str);
                let index = binding.get(1).and_then(Value::as_u64);
                if let (Some(entry), Some(index)) = (entry, index) {
                    if let Some(commit) = usize::try_from(index).ok().and_then(|i| snapshots.get(i))
                    {
                        bindings.push((entry.to_owned(), (*commit).to_owned(), time.clone()));
                    }
                }
            }
        }
    };
    for path in parent_files(session).iter().rev() {
        if let Ok(parent) = Session::open(path, Default::default()) {
            collect(&mut custom_values(&parent).into_iter());
        }
    }
    collect(&mut custom_values(session).into_iter());
    if bindings.is_empty() {
        return Ok(Vec::new());
    }
    let mut reader = workspace.git().objects()?;
    let mut trees: HashMap<String, Option<String>> = HashMap::new();
    let mut out: HashMap<String, Point> = HashMap::new();
    for (entry, commit, time) in bindings {
        let Some(index) = session.index_of(&entry) else {
            continue;
        };
        let tree = match trees.get(&commit) {
            Some(tree) => tree.clone(),
            None => {
                let tree = reader
                    .read_with_id(&format!("{commit}^{{tree}}"))?
                    .map(|(id, _)| id);
                trees.insert(commit.clone(), tree.clone());
                tree
            }
        };
        let is_user = session
            .entry_at(index)
            .is_some_and(|e| e.kind() == "message" && e.role() == Some("user"));
        out.insert(
            entry.clone(),
            Point {
                entry_id: entry,
                moment: if is_user {
                    Moment::Before
                } else {
                    Moment::After
                },
                pruned: tree.is_none(),
                tree: tree.unwrap_or(commit),
                exact: true,
                taken_at: time,
                source: Source::PiRewindHook,
                by: "piRewindHook".to_owned(),
            },
        );
    }
    Ok(out.into_values().collect())
}

/// The `custom` entries of a session, as JSON.
fn custom_values(session: &Session) -> Vec<Value> {
    session
        .entries()
        .iter()
        .filter(|e| e.kind() == "custom")
        .map(|e| e.json())
        .collect()
}
